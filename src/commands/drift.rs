//! `gpuledger drift`: live GPU workloads against Git, both directions, with coverage.

use std::path::Path;
use std::sync::Arc;

use super::{Outcome, deliver, load};
use crate::analysis::drift::{drift, suggest_accept};
use crate::analysis::inventory::{inventory_with_metrics, live_workloads};
use crate::analysis::usage::Metrics;
use crate::cli::{DriftArgs, LiveArgs, RepoArgs};
use crate::live::kube::Progress;
use crate::render::render_drift;
use crate::report::Report;
use crate::util::date::Date;

/// The fleet's inventory with drift against Git, and what the caller should say about it.
pub struct Computed {
    pub report: Report,
    pub notes: Vec<String>,
    /// Apps that failed to render: drift is then overstated or unknown.
    pub failed: Vec<String>,
    /// Unaccepted drift exists.
    pub drifting: bool,
    pub today: Date,
}

impl Computed {
    /// Every input was read: the live state completely and every app rendered.
    pub fn complete(&self) -> bool {
        self.failed.is_empty() && self.report.complete
    }
}

/// Reads the live state and the repository (`.` by default) and computes inventory and drift.
pub fn compute(
    repo_args: &RepoArgs,
    live_args: &LiveArgs,
    config: Option<&Path>,
    now: Option<Date>,
    progress: &Arc<Progress>,
) -> anyhow::Result<Computed> {
    let repo = repo_args.repo.as_deref().unwrap_or(Path::new("."));
    let (cfg, cfg_path) = load::config(config, Some(repo))?;
    let (live, live_sources) = load::live(live_args, progress)?.single("drift")?;
    let objects = live.objects;
    let desired = load::desired_state(repo_args, repo, &cfg, &objects)?;
    let today = now.unwrap_or_else(Date::today);

    let mut sources = live_sources;
    sources.push(format!("{} ({})", repo.display(), desired.at));
    let mut notes = Vec::new();
    if let Some(p) = &cfg_path {
        sources.push(p.display().to_string());
        notes.push(format!("using config {}", p.display()));
    }
    let metrics = load::metrics(live_args, &cfg);
    if let Metrics::Failed(reason) = &metrics {
        notes.push(format!("GPUs used are unknown: {reason}"));
    }
    let mut report = inventory_with_metrics(&objects, &cfg, sources, &metrics);
    report.complete = live.incomplete.is_empty();
    report.incomplete = live.incomplete;
    let started = std::time::Instant::now();
    let d = drift(&live_workloads(&objects), &objects, &desired, &cfg, today);
    tracing::debug!(
        elapsed_ms = started.elapsed().as_secs_f64() * 1000.0,
        live = report.workloads.len(),
        desired = desired.workloads.len(),
        "drift join"
    );
    let drifting = !(d.unmanaged.is_empty() && d.missing.is_empty() && d.changed.is_empty());
    report.drift = Some(d);
    let failed = load::render_failures(&desired);
    for m in &report.incomplete {
        notes.push(format!("report incomplete: {}: {}", m.resource, m.reason));
    }
    if !failed.is_empty() {
        notes.push(format!(
            "{} failed to render: {}",
            failed.len(),
            failed.join("; ")
        ));
    }
    Ok(Computed {
        report,
        notes,
        failed,
        drifting,
        today,
    })
}

pub fn run(args: &DriftArgs, progress: &Arc<Progress>) -> anyhow::Result<Outcome> {
    let computed = compute(
        &args.repo,
        &args.live,
        args.output.config.as_deref(),
        args.now,
        progress,
    )?;
    let complete = computed.complete();
    let Computed {
        report,
        mut notes,
        drifting,
        today,
        ..
    } = computed;
    let text = match (&report.drift, args.suggest_accept) {
        (Some(d), true) => suggest_accept(d, today),
        _ => render_drift(&report, args.output.format),
    };
    let stdout = deliver(text, args.output.output.as_deref(), &mut notes)?;
    let exit_code = if !complete {
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
