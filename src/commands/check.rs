//! `gpuledger check`: base against head, with the live state when given.

use std::sync::Arc;

use tokio::runtime::Runtime;

use super::{Exit, Note, Outcome, deliver};
use crate::cli::CheckArgs;
use gpuledger::analysis::drift::drift;
use gpuledger::analysis::impact::impact;
use gpuledger::analysis::inventory::{inventory, live_workloads};
use gpuledger::github::event::Runtime as Actions;
use gpuledger::input;
use gpuledger::live::kube::Progress;
use gpuledger::render::render_check;
use gpuledger::report::{CheckReport, SCHEMA};
use gpuledger::util::date::Date;

pub fn run(args: &CheckArgs, rt: &Runtime, progress: &Arc<Progress>) -> anyhow::Result<Outcome> {
    let actions = Actions::from_env(|k| std::env::var(k).ok()).map_err(anyhow::Error::msg)?;
    let (report, mut notes, exit) = compute(args, &actions, rt, progress)?;
    let text = render_check(&report, args.output.format);
    let stdout = deliver(text, args.output.output.as_deref(), &mut notes)?;
    Ok(Outcome {
        stdout,
        notes,
        exit,
    })
}

/// Renders base and head (and reads the live state when asked) and computes the check: the report,
/// notes for standard error, and the exit its gates ask for. `--base` defaults to the pull
/// request's base commit when Actions runs it on a pull request.
pub fn compute(
    args: &CheckArgs,
    actions: &Actions,
    rt: &Runtime,
    progress: &Arc<Progress>,
) -> anyhow::Result<(CheckReport, Vec<Note>, Exit)> {
    let base_ref = match (&args.base, &actions.event.pull_request) {
        (Some(b), _) => b.clone(),
        (None, Some(pr)) => pr.base.sha.clone(),
        (None, None) => anyhow::bail!(
            "--base is required: the ref the change starts from, e.g. --base origin/main (it defaults to the pull request's base only on a pull_request event)"
        ),
    };
    let head_spec = args.repo();
    let repo = head_spec.path.as_path();
    let (cfg, cfg_path) = input::config(args.output.config.as_deref(), Some(repo))?;
    let mut notes = Vec::new();
    let mut sources = Vec::new();
    if let Some(p) = &cfg_path {
        sources.push(p.display().to_string());
        notes.push(Note::ConfigUsed(p.clone()));
    }
    let live = match args.live() {
        Some(spec) => {
            let (part, live_sources) =
                rt.block_on(input::live(&spec, progress))?.single("check")?;
            sources.extend(live_sources);
            Some(part)
        }
        None => None,
    };
    let objects = live
        .as_ref()
        .map(|p| p.objects.as_slice())
        .unwrap_or_default();
    let base = input::desired_state(&head_spec.at(Some(base_ref)), &cfg, objects)?;
    let head = input::desired_state(&head_spec, &cfg, objects)?;
    sources.push(format!(
        "{} (base {}, head {})",
        repo.display(),
        base.at,
        head.at
    ));

    let today = args.now.unwrap_or_else(Date::today);
    let live_view = live
        .as_ref()
        .map(|p| -> anyhow::Result<_> {
            let report = inventory(&p.objects, &cfg, vec![])?;
            let workloads = live_workloads(&p.objects)?;
            let base_drift = drift(&workloads, &p.objects, &base, &cfg, today)?;
            let head_drift = drift(&workloads, &p.objects, &head, &cfg, today)?;
            Ok((report, base_drift, head_drift))
        })
        .transpose()?;
    let check = impact(
        &base,
        &head,
        live_view.as_ref().map(|(r, b, h)| (r, b, h)),
        &cfg,
        &args.fail_on,
    );
    if let Some(p) = &live {
        for m in &p.incomplete {
            notes.push(Note::Incomplete {
                what: "live state",
                resource: m.resource.clone(),
                reason: m.reason.clone(),
            });
        }
    }
    let failed: Vec<String> = check
        .gates
        .iter()
        .filter(|g| g.failed)
        .map(|g| g.name.clone())
        .collect();
    let exit = if failed.is_empty() {
        Exit::Clean
    } else {
        notes.push(Note::GatesFailed(failed));
        Exit::Findings
    };
    let report = CheckReport {
        schema: SCHEMA,
        sources,
        check,
    };
    Ok((report, notes, exit))
}
