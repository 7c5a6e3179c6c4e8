//! `cost`: the fleet (as `inventory` reads it, DCGM activity included), OpenCost over the window
//! ending at the report's clock, and the outcomes (a records file, or the counters workloads name
//! in their intent): cost per verified outcome. Either cost input failing is an incomplete run,
//! with the report still written.

use super::fleet::{self, FleetSpec};
use super::input;
use super::{Context, Error, Outcome, Result, Run};
use crate::analysis::inventory;
use crate::analysis::live::LiveFleet;
use crate::report::{Kind, Report};
use crate::util::date::Timestamp;

pub fn run(spec: &FleetSpec, cx: &Context<'_>) -> Result<Run<Report>> {
    let mut notes = Vec::new();
    let (cfg, cfg_path) = fleet::config(spec.config.as_deref(), None, &mut notes)?;
    let live = cx.rt.block_on(input::live(&spec.live, &cx.progress))?;
    if live.parts.len() > 1 {
        return Err(Error::Usage(
            "cost belongs to one cluster (one OpenCost): give a single --context".into(),
        ));
    }
    let (part, mut sources) = live.single("cost")?;
    sources.extend(cfg_path);
    let metrics = fleet::metrics(spec.signals.metrics.as_ref(), &cfg, cx, &mut notes);
    let now = spec.now.unwrap_or_else(Timestamp::now);
    let live = LiveFleet::read(&part.objects, &cfg, &metrics)?.unread(part.unread());
    let mut report = inventory::report(&live, &cfg, sources)?;
    report.incomplete = part.incomplete.clone();
    let failed = fleet::attach_cost(&mut report, &live, &cfg, &spec.signals, now, cx, &mut notes)?;
    report.deadlines = super::deadlines::section(
        &live,
        &cfg,
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
        part.provenance,
        Vec::new(),
        now,
        &cfg,
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
