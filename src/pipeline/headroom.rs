//! `headroom`: the fleet, the load tests its serving workloads name in the repository, and
//! production's request rates from Prometheus: each serving workload's headroom. A load test that
//! cannot be read is an incomplete run; a workload over its tested capacity is a finding when
//! asked (`fail_on_over`).

use std::path::Path;

use super::fleet::{self, FleetSpec, Headline};
use super::{Context, Note, Outcome, Result, Run};
use crate::report::{HeadroomVerdict, Kind, Report};

/// `repo` is where the load-test paths are relative to (its working tree).
pub fn run(
    spec: &FleetSpec,
    repo: Option<&Path>,
    fail_on_over: bool,
    cx: &Context<'_>,
) -> Result<Run<Report>> {
    let mut notes = Vec::new();
    let mut one = fleet::one_cluster(spec, "headroom", repo, false, cx, &mut notes)?;
    if let Some(r) = repo {
        one.sources.push(format!("{} (working tree)", r.display()));
    }
    let cfg = &one.cfg;
    let (live, mut report) = one.read(Headline::Workloads)?;
    let production = fleet::production(spec.signals.metrics.as_ref(), cx);
    let (h, errors) = fleet::headroom_section(&live, repo, &production, cfg)?;
    let over = h
        .workloads
        .iter()
        .any(|w| w.verdict == HeadroomVerdict::Over);
    report.headroom = Some(h);
    fleet::finish(
        &mut report,
        Kind::Headroom,
        spec.scope.clone(),
        one.part.provenance.clone(),
        Vec::new(),
        one.now,
        cfg,
    );
    let mut outcome = Outcome::Clean;
    if over && fail_on_over {
        notes.push(Note::Say(
            "a serving workload's production p95 is above its tested capacity".into(),
        ));
        outcome = Outcome::Findings;
    }
    for e in errors {
        notes.push(Note::Say(format!("load test unreadable: {e}")));
        outcome = Outcome::Incomplete;
    }
    let outcome = fleet::ending(&report, &mut notes, outcome);
    Ok(Run {
        report,
        notes,
        outcome,
    })
}
