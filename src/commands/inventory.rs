//! `gpuledger inventory`: read the fleet (snapshots or clusters), compute the inventory (and, with
//! `--repo`, drift against Git), render it. Several `--context`s are read as one fleet: the report
//! is their total, with a row per cluster in its clusters table and each workload named with its
//! cluster.

use std::sync::Arc;

use tokio::runtime::Runtime;

use super::{Exit, Note, Outcome, deliver};
use crate::cli::InventoryArgs;
use gpuledger::analysis::drift::drift;
use gpuledger::analysis::fleets::combine;
use gpuledger::analysis::inventory::{inventory_with_metrics, live_workloads};
use gpuledger::analysis::usage::Metrics;
use gpuledger::input;
use gpuledger::live::kube::Progress;
use gpuledger::render::render;
use gpuledger::report::Provenance;
use gpuledger::util::date::Timestamp;

pub fn run(
    args: &InventoryArgs,
    rt: &Runtime,
    progress: &Arc<Progress>,
) -> anyhow::Result<Outcome> {
    let repo = args.repo.repo.as_deref();
    let (cfg, cfg_path) = input::config(args.output.config.as_deref(), repo)?;
    let mut repo_spec = args.repo.spec();
    let mut live_spec = args.live.spec();
    if repo.is_some() {
        input::cluster_live(&mut repo_spec, &mut live_spec, &cfg);
    }
    let live = rt.block_on(input::live(&live_spec, progress))?;
    let several = live.parts.len() > 1;
    anyhow::ensure!(
        !(several && repo.is_some()),
        "drift (--repo) compares one cluster at a time: give a single --context"
    );
    anyhow::ensure!(
        !(several && args.live.prometheus.is_some()),
        "--prometheus belongs to one cluster: give a single --context"
    );
    anyhow::ensure!(
        !(several && args.cost.given()),
        "--opencost and --outcomes belong to one cluster: give a single --context"
    );
    let mut sources = live.sources.clone();
    let mut notes = Vec::new();
    if let Some(p) = &cfg_path {
        sources.push(p.display().to_string());
        notes.push(Note::ConfigUsed(p.display().to_string()));
    }
    let metrics = rt.block_on(input::metrics(args.live.metrics().as_ref(), &cfg));
    if let Metrics::Failed(reason) = &metrics {
        notes.push(Note::MetricsUnknown(reason.clone()));
    }
    let mut failed = Vec::new();
    let now = args.now.unwrap_or_else(Timestamp::now);
    let actions = super::check::actions_env();
    let checkout = super::check::checkout(&actions);
    let live_provenance: Vec<_> = live
        .parts
        .iter()
        .flat_map(|p| p.provenance.iter().cloned())
        .collect();
    let mut git = Vec::new();
    let mut cost_failed = super::cost::Failed::default();
    let mut load_test_errors = Vec::new();
    let mut report = if several {
        let reports = live
            .parts
            .into_iter()
            .map(|p| {
                let mut r = inventory_with_metrics(&p.objects, &cfg, vec![], &metrics)?;
                r.complete = p.incomplete.is_empty();
                r.incomplete = p.incomplete;
                Ok((p.name.unwrap_or_default(), r))
            })
            .collect::<anyhow::Result<_>>()?;
        combine(reports, sources)?
    } else {
        let (part, _) = live.single("inventory")?;
        let desired = match repo {
            Some(r) => {
                let d = input::desired_state(&repo_spec, &cfg, &part.objects)?;
                input::ensure_rendered(&d, &repo_spec)?;
                sources.push(format!("{} ({})", r.display(), d.at));
                failed = input::render_failures(&d);
                git.push(input::git_side(
                    r,
                    "desired",
                    repo_spec.git_ref.as_deref(),
                    checkout,
                ));
                Some(d)
            }
            None => None,
        };
        let mut report = inventory_with_metrics(&part.objects, &cfg, sources, &metrics)?;
        report.complete = part.incomplete.is_empty();
        report.incomplete = part.incomplete;
        if args.cost.given() {
            cost_failed = super::cost::attach(
                &mut report,
                &part.objects,
                &cfg,
                &args.cost,
                &args.live,
                now,
                rt,
                &mut notes,
            )?;
        }
        // Serving headroom, when a load test or serving request series exist.
        let production = rt.block_on(gpuledger::headroom::production(
            super::headroom::prom_source(args.live.metrics().as_ref()).as_ref(),
        ));
        if super::headroom::has_inputs(&report, repo, &production) {
            let (h, errors) =
                super::headroom::section(&part.objects, &report, repo, &production, &cfg)?;
            report.headroom = Some(h);
            load_test_errors = errors;
        }
        if let Some(d) = &desired {
            let workloads = live_workloads(&part.objects)?;
            let mut x = drift(&workloads, &part.objects, d, &cfg, now.date())?;
            if let Some(g) = git.first() {
                x.desired_at = g.describe.clone();
            }
            report.drift = Some(x);
        }
        report
    };
    report.provenance = Some(Provenance::new(
        None,
        live_provenance,
        git,
        now,
        cfg.snapshot.stale_after,
    ));
    report.complete = report.incomplete.is_empty();
    let text = render(&report, args.output.format, &args.output.style());
    let stdout = deliver(text, args.output.output.as_deref(), &mut notes)?;
    // An outcome record that does not read is an input error, as an unreadable snapshot is; an
    // OpenCost that fails leaves cost unknown, as a failing Prometheus leaves `used` unknown.
    let mut exit = if cost_failed.records {
        Exit::Error
    } else {
        Exit::Clean
    };
    if !failed.is_empty() {
        notes.push(Note::RenderFailed(failed));
        exit = Exit::Error;
    }
    for e in load_test_errors {
        notes.push(Note::Say(format!("load test unreadable: {e}")));
        exit = Exit::Error;
    }
    for m in &report.incomplete {
        notes.push(Note::Incomplete {
            what: "report",
            resource: m.resource.clone(),
            reason: m.reason.clone(),
        });
        exit = Exit::Error;
    }
    Ok(Outcome {
        commands: Vec::new(),
        stdout,
        notes,
        exit,
    })
}
