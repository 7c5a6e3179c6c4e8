//! `drift` (and the drift issue): the live GPU workloads against Git, both directions, with the
//! coverage — on top of the fleet's inventory, with cost beside it when the issue is given cost
//! inputs. Unaccepted drift is a finding; an app that failed to render or a resource that could
//! not be read leaves drift unknown, which is never a clean run.

use super::fleet::{self, FleetSpec};
use super::input;
use super::{Context, Error, Note, Outcome, Result, Run};
use crate::analysis::drift::drift;
use crate::analysis::inventory;
use crate::analysis::live::LiveFleet;
use crate::report::{Kind, Report};
use crate::util::date::Timestamp;

/// Reads the live state and the repository (`.` by default) and computes inventory and drift.
/// The outcome: incomplete when an app failed to render or a resource could not be read, findings
/// when there is unaccepted drift (unless `no_fail`), else clean.
pub fn run(spec: &FleetSpec, no_fail: bool, cx: &Context<'_>) -> Result<Run<Report>> {
    let mut notes = Vec::new();
    let mut repo = spec
        .repo
        .clone()
        .ok_or_else(|| Error::Usage("drift needs a repository (--repo)".into()))?;
    repo.cluster_hint = spec.scope.clone();
    let (cfg, cfg_path) = fleet::config(spec.config.as_deref(), Some(&repo.path), &mut notes)?;
    let mut live_spec = spec.live.clone();
    input::cluster_live(&mut repo, &mut live_spec, &cfg);
    let (live, mut sources) = cx
        .rt
        .block_on(input::live(&live_spec, &cx.progress))?
        .single("drift")?;
    let unread = live.unread();
    let objects = live.objects;
    let (desired, git, failed) = fleet::desired(&repo, &cfg, &objects, "desired", cx)?;
    let now = spec.now.unwrap_or_else(Timestamp::now);
    sources.push(format!("{} ({})", repo.path.display(), desired.at));
    sources.extend(cfg_path);
    let metrics = fleet::metrics(spec.signals.metrics.as_ref(), &cfg, cx, &mut notes);
    let model = LiveFleet::read(&objects, &cfg, &metrics)?.unread(unread);
    let mut report = inventory::report(&model, &cfg, sources)?;
    report.incomplete.extend(live.incomplete);
    // Cost per verified outcome beside the inventory, where its inputs were given (the drift
    // issue); what failed is in the notes and the report, and drift stays what it is.
    if spec.signals.cost.is_some() {
        fleet::attach_cost(
            &mut report,
            &model,
            &cfg,
            &spec.signals,
            now,
            cx,
            &mut notes,
        )?;
    }
    report.deadlines = super::deadlines::section(
        &model,
        &cfg,
        super::deadlines::DeadlineInputs {
            metrics: spec.signals.metrics.as_ref(),
            ksm_window: spec
                .signals
                .metrics
                .as_ref()
                .map_or(spec.signals.window, |m| m.window),
            end: now,
            only: None,
            now,
        },
        cx,
        &mut notes,
    );
    let started = std::time::Instant::now();
    let mut d = drift(
        &model.workloads.list,
        &objects,
        &model.tenancy,
        &desired,
        &cfg,
        now.date(),
    )?;
    d.desired_at = git.describe.clone();
    tracing::debug!(
        elapsed_ms = started.elapsed().as_secs_f64() * 1000.0,
        desired = desired.workloads.len(),
        "drift join"
    );
    let drifting = d.drifting();
    report.drift = Some(d);
    fleet::finish(
        &mut report,
        Kind::Drift,
        spec.scope.clone(),
        live.provenance,
        vec![git],
        now,
        &cfg,
    );
    super::trend::column(
        &mut report,
        &spec.signals,
        &cfg.tenancy,
        now,
        cx,
        &mut notes,
    );
    let outcome = if drifting && !no_fail {
        Outcome::Findings
    } else {
        Outcome::Clean
    };
    let mut outcome = fleet::ending(&report, &mut notes, outcome);
    if !failed.is_empty() {
        notes.push(Note::RenderFailed(failed));
        outcome = Outcome::Incomplete;
    }
    Ok(Run {
        report,
        notes,
        outcome,
    })
}
