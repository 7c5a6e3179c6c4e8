//! `gpuledger drift`: live GPU workloads against Git, both directions, with coverage.

use std::path::Path;
use std::sync::Arc;

use super::{Outcome, deliver, load};
use crate::analysis::drift::{drift, suggest_accept};
use crate::analysis::inventory::inventory_with_metrics;
use crate::analysis::usage::Metrics;
use crate::cli::DriftArgs;
use crate::live::kube::Progress;
use crate::render::render_drift;
use crate::util::date::Date;

pub fn run(args: &DriftArgs, progress: &Arc<Progress>) -> anyhow::Result<Outcome> {
    let repo = args.repo.repo.as_deref().unwrap_or(Path::new("."));
    let (cfg, cfg_path) = load::config(args.output.config.as_deref(), Some(repo))?;
    let (live, live_sources) = load::live(&args.live, progress)?.single("drift")?;
    let objects = live.objects;
    let desired = load::desired_state(&args.repo, repo, &cfg, &objects)?;
    let today = args.now.unwrap_or_else(Date::today);

    let mut sources = live_sources;
    sources.push(format!("{} ({})", repo.display(), desired.at));
    let mut notes = Vec::new();
    if let Some(p) = &cfg_path {
        sources.push(p.display().to_string());
        notes.push(format!("using config {}", p.display()));
    }
    let metrics = load::metrics(&args.live, &cfg);
    if let Metrics::Failed(reason) = &metrics {
        notes.push(format!("GPUs used are unknown: {reason}"));
    }
    let mut report = inventory_with_metrics(&objects, &cfg, sources, &metrics);
    report.complete = live.incomplete.is_empty();
    report.incomplete = live.incomplete;
    let started = std::time::Instant::now();
    let d = drift(&report.workloads, &objects, &desired, &cfg, today);
    tracing::debug!(
        elapsed_ms = started.elapsed().as_secs_f64() * 1000.0,
        live = report.workloads.len(),
        desired = desired.workloads.len(),
        "drift join"
    );
    let drifting = !(d.unmanaged.is_empty() && d.missing.is_empty() && d.changed.is_empty());
    let text = if args.suggest_accept {
        suggest_accept(&d, today)
    } else {
        String::new()
    };
    report.drift = Some(d);
    let text = if args.suggest_accept {
        text
    } else {
        render_drift(&report, args.output.format)
    };
    let stdout = deliver(text, args.output.output.as_deref(), &mut notes)?;

    let failed = load::render_failures(&desired);
    for m in &report.incomplete {
        notes.push(format!("report incomplete: {}: {}", m.resource, m.reason));
    }
    let exit_code = if !failed.is_empty() || !report.complete {
        if !failed.is_empty() {
            notes.push(format!(
                "{} failed to render: {}",
                failed.len(),
                failed.join("; ")
            ));
        }
        2
    } else if drifting && !args.no_fail && !args.suggest_accept {
        1
    } else {
        0
    };
    Ok(Outcome {
        stdout,
        notes,
        exit_code,
    })
}
