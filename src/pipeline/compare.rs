//! `cost --compare A B`: two configurations side by side. The fleet is read once; each side's
//! window (its own, or the report's `--window` ending now) gets the cost section over it (OpenCost,
//! outcome records, counters: the same step as `cost`), the latency of its serving histograms over
//! it (as `headroom` reads them) and the deadline attainment of its runs due in it. The comparison
//! and its verdict are [`crate::analysis::compare`]. A side naming no live workload is a usage
//! error; either cost input failing is an incomplete run, with the report still written.

use super::fleet::{self, FleetSpec, Headline};
use super::{Context, Error, Outcome, Result, Run};
use crate::analysis::compare::{self, SideSpec};
use crate::analysis::headroom::headroom;
use crate::analysis::live::LiveFleet;
use crate::live::loadtest::LoadTests;
use crate::live::opencost::Window;
use crate::live::serving::{self, Production};
use crate::report::compare::Side;
use crate::report::{Kind, Report};

/// What `cost --compare` reads: the fleet and signals of `cost`, and the two sides.
#[derive(Debug, Clone)]
pub struct CompareSpec {
    pub fleet: FleetSpec,
    pub a: SideSpec,
    pub b: SideSpec,
}

pub fn run(spec: &CompareSpec, cx: &Context<'_>) -> Result<Run<Report>> {
    let fs = &spec.fleet;
    let mut notes = Vec::new();
    let one = fleet::one_cluster(fs, super::cost::ONE_OPENCOST, None, true, cx, &mut notes)?;
    let (cfg, now) = (&one.cfg, one.now);
    let (model, mut report) = one.read(Headline::Workloads)?;
    for s in [&spec.a, &spec.b] {
        if !model.each().any(|(_, w, _)| w.id.to_string() == s.workload) {
            return Err(Error::Usage(format!(
                "cost --compare: {} is not a live GPU workload (give namespace/Kind/name, as `gpuledger inventory` prints it)",
                s.workload
            )));
        }
    }
    let mut failed_any = false;
    let mut sides: Vec<Side> = Vec::new();
    for (default, s) in [("A", &spec.a), ("B", &spec.b)] {
        let window = match s.window {
            Some((from, to)) => Window {
                start: from,
                end: to,
            },
            None => Window::ending(now, fs.signals.window),
        };
        let (cost, failed) = fleet::cost_over(&model, cfg, &fs.signals, window, cx, &mut notes)?;
        failed_any |= failed.opencost || failed.records;
        let Some(row) = cost.workloads.iter().find(|r| r.name == s.workload) else {
            continue;
        };
        let latency = latency(&model, cfg, fs, window, &s.workload, cx)?;
        let deadlines = super::deadlines::section(
            &model,
            cfg,
            super::deadlines::DeadlineInputs {
                metrics: fs.signals.metrics.as_ref(),
                ksm_window: std::time::Duration::from_secs(
                    u64::try_from(window.seconds()).unwrap_or(0),
                ),
                end: window.end,
                only: Some((window.start, window.end)),
                now,
            },
            cx,
            &mut notes,
        );
        let attainment =
            deadlines.and_then(|d| d.workloads.into_iter().find(|a| a.name == s.workload));
        let label = s.label.clone().unwrap_or_else(|| default.to_string());
        let hours = cost.covered_hours.unwrap_or(cost.window_hours);
        let mut side = compare::side(
            label,
            row,
            (window.start, window.end),
            hours,
            latency.0,
            attainment,
        );
        for (field, why) in cost.partial.iter() {
            side.partial.set(field, why.clone());
        }
        if let Some(why) = latency.1 {
            side.unknown.set("latency", why);
        }
        sides.push(side);
    }
    let (Some(b), Some(a)) = (sides.pop(), sides.pop()) else {
        return Err(Error::Usage(
            "cost --compare: a side names no workload of the cost section".into(),
        ));
    };
    report.compare = Some(compare::compare(a, b));
    fleet::finish(
        &mut report,
        Kind::Cost,
        fs.scope.clone(),
        one.part.provenance.clone(),
        Vec::new(),
        now,
        cfg,
    );
    let outcome = if failed_any {
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

/// The latency objective's bounds against the workload's histograms over `window`, or why they
/// are unknown.
fn latency(
    model: &LiveFleet<'_>,
    cfg: &crate::config::Config,
    fs: &FleetSpec,
    window: Window,
    workload: &str,
    cx: &Context<'_>,
) -> Result<(Vec<crate::report::headroom::LatencyNow>, Option<String>)> {
    let production = match fleet::prom_source(fs.signals.metrics.as_ref()) {
        None => Production::NotConfigured,
        Some(mut src) => {
            src.window =
                std::time::Duration::from_secs(u64::try_from(window.seconds()).unwrap_or(0));
            match cx
                .rt
                .block_on(serving::serving(&src, Some(window.end.unix())))
            {
                Ok(m) => Production::Read(m),
                Err(e) => Production::Failed(e.to_string()),
            }
        }
    };
    let h = headroom(model, &LoadTests::new(), &production, &cfg.headroom)?;
    let Some(row) = h.workloads.iter().find(|r| r.id().to_string() == workload) else {
        return Ok((
            Vec::new(),
            Some("not a serving workload and no latency objective in its intent".into()),
        ));
    };
    if row.objective.is_none() {
        return Ok((
            Vec::new(),
            Some("no latency objective in its intent (gpuledger.io/latency-objective)".into()),
        ));
    }
    let why = (row.latency.iter().all(|l| l.now_ms.is_none()))
        .then(|| row.unknown.get("production_p95_rps").cloned())
        .flatten();
    Ok((row.latency.clone(), why))
}
