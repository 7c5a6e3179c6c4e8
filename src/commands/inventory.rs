//! `gpuledger inventory`: read the fleet (snapshots or clusters), compute the inventory (and, with
//! `--repo`, drift against Git), render it. Several `--context`s are read as one fleet: the report
//! is their total, with a row per cluster in its clusters table and each workload named with its
//! cluster.

use std::path::Path;
use std::sync::Arc;

use tokio::runtime::Runtime;

use super::{Exit, Note, Outcome, deliver};
use crate::cli::{CostInputArgs, InventoryArgs, LiveArgs, RepoArgs};
use gpuledger::analysis::drift::drift;
use gpuledger::analysis::fleets::combine;
use gpuledger::analysis::inventory::{inventory_with_metrics, live_workloads};
use gpuledger::analysis::usage::Metrics;
use gpuledger::input;
use gpuledger::live::kube::Progress;
use gpuledger::render::prometheus::{Options, exposition};
use gpuledger::render::{Format, render};
use gpuledger::report::{Provenance, Report};
use gpuledger::util::date::Timestamp;

/// The fleet's report and what to say about it, as `run` and `serve` compute it.
pub struct Computed {
    pub report: Report,
    pub notes: Vec<Note>,
    /// Apps that failed to render (with `--repo`).
    pub failed: Vec<String>,
    /// An outcome record did not read (an input error; the rest were counted).
    pub outcome_records_failed: bool,
    /// Load tests that could not be read (each names its file).
    pub load_test_errors: Vec<String>,
}

pub fn run(
    args: &InventoryArgs,
    rt: &Runtime,
    progress: &Arc<Progress>,
) -> anyhow::Result<Outcome> {
    let Computed {
        report,
        mut notes,
        failed,
        outcome_records_failed,
        load_test_errors,
    } = compute(
        &args.live,
        &args.repo,
        Some(&args.cost),
        args.output.config.as_deref(),
        args.now,
        rt,
        progress,
    )?;
    let text = match args.output.format {
        Format::Prometheus => exposition(
            &report,
            Options {
                workloads: args.workload_series,
            },
        ),
        format => render(&report, format, &args.output.style()),
    };
    let stdout = deliver(text, args.output.output.as_deref(), &mut notes)?;
    // An outcome record that does not read is an input error, as an unreadable snapshot is; an
    // OpenCost that fails leaves cost unknown, as a failing Prometheus leaves `used` unknown.
    let mut exit = if outcome_records_failed {
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
    Ok(super::report_outcome(
        &report.incomplete,
        stdout,
        notes,
        exit,
    ))
}

/// Reads the fleet (and, with `--repo`, the repository) and computes the inventory, with drift
/// when a repository is given, cost when `cost` names its inputs, and serving headroom when a load
/// test or serving series exist. `now` is the report's clock (the system's when `None`).
pub fn compute(
    live_args: &LiveArgs,
    repo_args: &RepoArgs,
    cost: Option<&CostInputArgs>,
    config: Option<&Path>,
    now: Option<Timestamp>,
    rt: &Runtime,
    progress: &Arc<Progress>,
) -> anyhow::Result<Computed> {
    let repo = repo_args.repo.as_deref();
    let (cfg, cfg_path) = input::config(config, repo)?;
    let mut repo_spec = repo_args.spec();
    let mut live_spec = live_args.spec();
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
        !(several && live_args.prometheus.is_some()),
        "--prometheus belongs to one cluster: give a single --context"
    );
    anyhow::ensure!(
        !(several && cost.is_some_and(CostInputArgs::given)),
        "--opencost and --outcomes belong to one cluster: give a single --context"
    );
    let mut sources = live.sources.clone();
    let mut notes = Vec::new();
    if let Some(p) = &cfg_path {
        sources.push(p.display().to_string());
        notes.push(Note::ConfigUsed(p.display().to_string()));
    }
    let metrics = rt.block_on(input::metrics(live_args.metrics().as_ref(), &cfg));
    if let Metrics::Failed(reason) = &metrics {
        notes.push(Note::MetricsUnknown(reason.clone()));
    }
    let mut failed = Vec::new();
    let now = now.unwrap_or_else(Timestamp::now);
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
        let mut r = combine(reports, sources)?;
        r.fleet.nearly_full = gpuledger::analysis::inventory::nearly_full(
            r.fleet.utilisation,
            &r.tenants,
            cfg.tenancy.contacts_above,
        );
        r
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
        if let Some(cost) = cost.filter(|c| c.given()) {
            cost_failed = super::cost::attach(
                &mut report,
                &part.objects,
                &cfg,
                cost,
                live_args,
                now,
                rt,
                &mut notes,
            )?;
        }
        // Serving headroom, when a load test or serving request series exist.
        let production = rt.block_on(gpuledger::live::serving::production(
            super::headroom::prom_source(live_args.metrics().as_ref()).as_ref(),
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
    super::trend::column(&mut report, live_args, &cfg.tenancy, now, rt, &mut notes);
    Ok(Computed {
        report,
        notes,
        failed,
        outcome_records_failed: cost_failed.records,
        load_test_errors,
    })
}
