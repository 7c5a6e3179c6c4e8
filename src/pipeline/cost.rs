//! `cost`: the fleet (as `inventory` reads it, DCGM activity included), OpenCost over the window
//! ending at the report's clock, and the outcomes (a records file, or the counters workloads name
//! in their intent): cost per verified outcome. Either cost input failing is an incomplete run,
//! with the report still written.

use super::fleet::{self, FleetSpec, Headline};
use super::{Context, Outcome, Result, Run};
use crate::report::{Kind, Report};

/// Cost belongs to one cluster: one OpenCost answers for it.
pub const ONE_OPENCOST: &str = "cost (one OpenCost)";

pub fn run(spec: &FleetSpec, cx: &Context<'_>) -> Result<Run<Report>> {
    let mut notes = Vec::new();
    let one = fleet::one_cluster(spec, ONE_OPENCOST, None, true, cx, &mut notes)?;
    let (cfg, now) = (&one.cfg, one.now);
    let (live, mut report) = one.read(Headline::Workloads)?;
    let failed = fleet::attach_cost(&mut report, &live, cfg, &spec.signals, now, cx, &mut notes)?;
    report.deadlines = super::deadlines::section(
        &live,
        cfg,
        super::deadlines::DeadlineInputs {
            metrics: spec.signals.metrics.as_ref(),
            ksm_window: spec.signals.window,
            end: now,
            only: None,
            now,
        },
        cx,
        &mut notes,
    );
    fleet::finish(
        &mut report,
        Kind::Cost,
        spec.scope.clone(),
        one.part.provenance.clone(),
        Vec::new(),
        now,
        cfg,
    );
    // The command's own inputs: either failing is an error, with the report still written.
    let outcome = if failed.opencost || failed.records {
        Outcome::Incomplete
    } else {
        Outcome::Clean
    };
    let outcome = fleet::ending(&report, &mut notes, outcome);
    Ok(Run {
        report,
        notes,
        outcome,
    })
}
