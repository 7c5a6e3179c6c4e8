//! `gpuledger drift`: live GPU workloads against Git, both directions, with coverage.

use std::path::Path;
use std::sync::Arc;

use tokio::runtime::Runtime;

use super::{Exit, Note, Outcome, deliver};
use crate::cli::{DriftArgs, LiveArgs, RepoArgs};
use gpuledger::analysis::drift::{drift, suggest_accept};
use gpuledger::analysis::inventory::{inventory_with_metrics, live_workloads};
use gpuledger::analysis::usage::Metrics;
use gpuledger::input;
use gpuledger::live::kube::Progress;
use gpuledger::render::render_drift;
use gpuledger::report::{Provenance, Report};
use gpuledger::util::date::{Date, Timestamp};

/// The fleet's inventory with drift against Git, and what the caller should say about it.
pub struct Computed {
    pub report: Report,
    pub notes: Vec<Note>,
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
/// `scope` names the report (GitHub's `--scope`); the live state's context otherwise; `cost`, the
/// cost inputs of the drift issue.
// The inputs of one computation, each from its own flags: a struct would only rename them.
#[allow(clippy::too_many_arguments)]
pub fn compute(
    repo_args: &RepoArgs,
    live_args: &LiveArgs,
    config: Option<&Path>,
    now: Option<Timestamp>,
    scope: Option<String>,
    cost: Option<&crate::cli::CostInputArgs>,
    rt: &Runtime,
    progress: &Arc<Progress>,
) -> anyhow::Result<Computed> {
    let mut spec = repo_args.spec();
    spec.cluster_hint = scope.clone();
    let (cfg, cfg_path) = input::config(config, Some(&spec.path))?;
    let mut live_spec = live_args.spec();
    input::cluster_live(&mut spec, &mut live_spec, &cfg);
    let repo: &Path = &spec.path;
    let (live, live_sources) = rt
        .block_on(input::live(&live_spec, progress))?
        .single("drift")?;
    let objects = live.objects;
    let desired = input::desired_state(&spec, &cfg, &objects)?;
    input::ensure_rendered(&desired, &spec)?;
    let now = now.unwrap_or_else(Timestamp::now);
    let today = now.date();
    let actions = super::check::actions_env();
    let git = input::git_side(
        repo,
        "desired",
        spec.git_ref.as_deref(),
        super::check::checkout(&actions),
    );

    let mut sources = live_sources;
    sources.push(format!("{} ({})", repo.display(), desired.at));
    let mut notes = Vec::new();
    if let Some(p) = &cfg_path {
        sources.push(p.display().to_string());
        notes.push(Note::ConfigUsed(p.display().to_string()));
    }
    let metrics = rt.block_on(input::metrics(live_args.metrics().as_ref(), &cfg));
    if let Metrics::Failed(reason) = &metrics {
        notes.push(Note::MetricsUnknown(reason.clone()));
    }
    let mut report = inventory_with_metrics(&objects, &cfg, sources, &metrics)?;
    report.complete = live.incomplete.is_empty();
    report.incomplete = live.incomplete;
    // Cost per verified outcome beside the inventory, where its inputs were given (the drift
    // issue); what failed is in the notes and the report, and drift stays what it is.
    if let Some(c) = cost.filter(|c| c.given()) {
        super::cost::attach(
            &mut report,
            &objects,
            &cfg,
            c,
            live_args,
            now,
            rt,
            &mut notes,
        )?;
    }
    let started = std::time::Instant::now();
    let mut d = drift(&live_workloads(&objects)?, &objects, &desired, &cfg, today)?;
    d.desired_at = git.describe.clone();
    tracing::debug!(
        elapsed_ms = started.elapsed().as_secs_f64() * 1000.0,
        live = report.workloads.len(),
        desired = desired.workloads.len(),
        "drift join"
    );
    let drifting = !(d.unmanaged.is_empty() && d.missing.is_empty() && d.changed.is_empty());
    report.drift = Some(d);
    report.provenance = Some(Provenance::new(
        scope,
        live.provenance,
        vec![git],
        now,
        cfg.snapshot.stale_after,
    ));
    super::trend::column(&mut report, live_args, &cfg.tenancy, now, rt, &mut notes);
    let failed = input::render_failures(&desired);
    for m in &report.incomplete {
        notes.push(Note::Incomplete {
            what: "report",
            resource: m.resource.clone(),
            reason: m.reason.clone(),
        });
    }
    if !failed.is_empty() {
        notes.push(Note::RenderFailed(failed.clone()));
    }
    Ok(Computed {
        report,
        notes,
        failed,
        drifting,
        today,
    })
}

pub fn run(args: &DriftArgs, rt: &Runtime, progress: &Arc<Progress>) -> anyhow::Result<Outcome> {
    let computed = compute(
        &args.repo,
        &args.live,
        args.output.config.as_deref(),
        args.now,
        None,
        None,
        rt,
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
        _ => render_drift(&report, args.output.format, &args.output.style()),
    };
    let stdout = deliver(text, args.output.output.as_deref(), &mut notes)?;
    let exit = if !complete {
        Exit::Error
    } else if drifting && !args.no_fail && !args.suggest_accept {
        Exit::Findings
    } else {
        Exit::Clean
    };
    Ok(Outcome {
        commands: Vec::new(),
        stdout,
        notes,
        exit,
    })
}
