//! `gpuledger check`: base against head, with the live state when given.

use std::sync::Arc;

use super::{Outcome, deliver, load};
use crate::analysis::drift::drift;
use crate::analysis::impact::impact;
use crate::analysis::inventory::{inventory, live_workloads};
use crate::cli::{CheckArgs, LiveArgs, RepoArgs};
use crate::github::event::Runtime;
use crate::live::kube::Progress;
use crate::render::render_check;
use crate::report::{CheckReport, SCHEMA};
use crate::util::date::Date;

pub fn run(args: &CheckArgs, progress: &Arc<Progress>) -> anyhow::Result<Outcome> {
    let runtime = Runtime::from_env(|k| std::env::var(k).ok()).map_err(anyhow::Error::msg)?;
    let (report, mut notes, exit_code) = compute(args, &runtime, progress)?;
    let text = render_check(&report, args.output.format);
    let stdout = deliver(text, args.output.output.as_deref(), &mut notes)?;
    Ok(Outcome {
        stdout,
        notes,
        exit_code,
    })
}

/// Renders base and head (and reads the live state when asked) and computes the check: the report,
/// notes for standard error, and the exit code its gates ask for. `--base` defaults to the pull
/// request's base commit when Actions runs it on a pull request.
pub fn compute(
    args: &CheckArgs,
    runtime: &Runtime,
    progress: &Arc<Progress>,
) -> anyhow::Result<(CheckReport, Vec<String>, i32)> {
    let base_ref = match (&args.base, &runtime.event.pull_request) {
        (Some(b), _) => b.clone(),
        (None, Some(pr)) => pr.base.sha.clone(),
        (None, None) => anyhow::bail!(
            "--base is required: the ref the change starts from, e.g. --base origin/main (it defaults to the pull request's base only on a pull_request event)"
        ),
    };
    let repo = args.repo.as_path();
    let (cfg, cfg_path) = load::config(args.output.config.as_deref(), Some(repo))?;
    let mut notes = Vec::new();
    let mut sources = Vec::new();
    if let Some(p) = &cfg_path {
        sources.push(p.display().to_string());
        notes.push(format!("using config {}", p.display()));
    }
    // Live state only when asked for: a laptop check without a cluster stays offline.
    let wants_live =
        !args.snapshot.is_empty() || args.kubeconfig.is_some() || args.context.is_some();
    let live = if wants_live {
        let live_args = LiveArgs {
            snapshot: args.snapshot.clone(),
            kubeconfig: args.kubeconfig.clone(),
            context: args.context.iter().cloned().collect(),
            timeout: 120,
            request_timeout: 30,
            quiet: true,
            prometheus: None,
            prometheus_token_env: String::new(),
            window: std::time::Duration::from_secs(3600),
        };
        let (part, live_sources) = load::live(&live_args, progress)?.single("check")?;
        sources.extend(live_sources);
        Some(part)
    } else {
        None
    };
    let objects = live
        .as_ref()
        .map(|p| p.objects.as_slice())
        .unwrap_or_default();
    let side = |git_ref: Option<String>| RepoArgs {
        repo: Some(args.repo.clone()),
        git_ref,
        repo_url: args.repo_url.clone(),
        render_timeout: args.render_timeout,
    };
    let base = load::desired_state(&side(Some(base_ref)), repo, &cfg, objects)?;
    let head = load::desired_state(&side(args.head.clone()), repo, &cfg, objects)?;
    sources.push(format!(
        "{} (base {}, head {})",
        repo.display(),
        base.at,
        head.at
    ));

    let today = args.now.unwrap_or_else(Date::today);
    let live_view = live.as_ref().map(|p| {
        let report = inventory(&p.objects, &cfg, vec![]);
        let workloads = live_workloads(&p.objects);
        let base_drift = drift(&workloads, &p.objects, &base, &cfg, today);
        let head_drift = drift(&workloads, &p.objects, &head, &cfg, today);
        (report, base_drift, head_drift)
    });
    let check = impact(
        &base,
        &head,
        live_view.as_ref().map(|(r, b, h)| (r, b, h)),
        &cfg,
        &args.fail_on,
    );
    if let Some(p) = &live {
        for m in &p.incomplete {
            notes.push(format!(
                "live state incomplete: {}: {}",
                m.resource, m.reason
            ));
        }
    }
    let failed: Vec<&str> = check
        .gates
        .iter()
        .filter(|g| g.failed)
        .map(|g| g.name.as_str())
        .collect();
    let exit_code = if failed.is_empty() {
        0
    } else {
        notes.push(format!("failed gates: {}", failed.join(", ")));
        1
    };
    let report = CheckReport {
        schema: SCHEMA,
        sources,
        check,
    };
    Ok((report, notes, exit_code))
}
