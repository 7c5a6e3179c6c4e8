//! `inventory` (and every refresh of `serve`): read the fleet and compute its report — with drift
//! when a repository is given, cost when cost inputs are, serving headroom when a load test or
//! serving series exist, and the trend column with a Prometheus. Several contexts are read as one
//! fleet: the report is their total, with a row per cluster and each workload named with its
//! cluster. With `--by node` the report also holds the per-node view (one cluster only).

use super::fleet::{self, FleetSpec};
use super::input::{self, LivePart};
use super::{Context, Error, Note, Outcome, Result, Run};
use crate::analysis::drift::drift;
use crate::analysis::fleets::combine;
use crate::analysis::inventory::{self, nearly_full};
use crate::analysis::live::LiveFleet;
use crate::analysis::placement::node_view;
use crate::report::{Kind, Report};
use crate::util::date::Timestamp;

pub fn run(spec: &FleetSpec, cx: &Context<'_>) -> Result<Run<Report>> {
    let mut notes = Vec::new();
    let repo = spec.repo.as_ref();
    let (cfg, cfg_path) = fleet::config(
        spec.config.as_deref(),
        repo.map(|r| r.path.as_path()),
        &mut notes,
    )?;
    let mut repo_spec = repo.cloned();
    let mut live_spec = spec.live.clone();
    if let Some(r) = &mut repo_spec {
        input::cluster_live(r, &mut live_spec, &cfg);
    }
    let live = cx.rt.block_on(input::live(&live_spec, &cx.progress))?;
    let several = live.parts.len() > 1;
    let one = |what: &str| Error::Usage(format!("{what}: give a single --context"));
    if several && repo.is_some() {
        return Err(one("drift (--repo) compares one cluster at a time"));
    }
    if several && spec.signals.metrics.is_some() {
        return Err(one("--prometheus belongs to one cluster"));
    }
    if several && spec.signals.cost.is_some() {
        return Err(one("--opencost and --outcomes belong to one cluster"));
    }
    if several && spec.by_node {
        return Err(one("--by node shows one cluster's nodes"));
    }
    let mut sources = live.sources.clone();
    sources.extend(cfg_path);
    let metrics = fleet::metrics(spec.signals.metrics.as_ref(), &cfg, cx, &mut notes);
    let now = spec.now.unwrap_or_else(Timestamp::now);
    let live_provenance: Vec<_> = live
        .parts
        .iter()
        .flat_map(|p| p.provenance.iter().cloned())
        .collect();
    let mut git = Vec::new();
    let mut outcome = Outcome::Clean;
    let mut report = if several {
        let reports = live
            .parts
            .into_iter()
            .map(|p| {
                let model = LiveFleet::read(&p.objects, &cfg, &metrics)?.unread(p.unread());
                let mut r = inventory::report(&model, &cfg, vec![])?;
                r.incomplete.extend(p.fleet_incomplete());
                r.complete = r.incomplete.is_empty();
                Ok((p.name.unwrap_or_default(), r))
            })
            .collect::<Result<_>>()?;
        let mut r = combine(reports, sources)?;
        r.fleet.nearly_full =
            nearly_full(r.fleet.utilisation, &r.tenants, cfg.tenancy.contacts_above);
        r
    } else {
        let (part, _) = live.single("inventory")?;
        one_cluster(
            part,
            spec,
            repo_spec.as_ref(),
            &cfg,
            (sources, &metrics, now),
            &mut git,
            &mut notes,
            &mut outcome,
            cx,
        )?
    };
    fleet::finish(
        &mut report,
        Kind::Inventory,
        spec.scope.clone(),
        live_provenance,
        git,
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
    let outcome = fleet::ending(&report, &mut notes, outcome);
    Ok(Run {
        report,
        notes,
        outcome,
    })
}

/// One cluster's report: the inventory, and drift, cost and headroom where their inputs are.
#[allow(clippy::too_many_arguments)]
fn one_cluster(
    part: LivePart,
    spec: &FleetSpec,
    repo: Option<&input::RepoSpec>,
    cfg: &crate::config::Config,
    (mut sources, metrics, now): (Vec<String>, &crate::analysis::usage::Metrics, Timestamp),
    git: &mut Vec<crate::report::GitProvenance>,
    notes: &mut Vec<Note>,
    outcome: &mut Outcome,
    cx: &Context<'_>,
) -> Result<Report> {
    let desired = match repo {
        Some(r) => {
            let (d, side, failed) = fleet::desired(r, cfg, &part.objects, "desired", cx)?;
            sources.push(format!("{} ({})", r.path.display(), d.at));
            if !failed.is_empty() {
                notes.push(Note::RenderFailed(failed));
                *outcome = Outcome::Incomplete;
            }
            git.push(side);
            Some(d)
        }
        None => None,
    };
    let live = LiveFleet::read(&part.objects, cfg, metrics)?.unread(part.unread());
    let mut report = inventory::report(&live, cfg, sources)?;
    if spec.by_node {
        // Free GPUs per node need both the nodes and the pods on them: without either, the view
        // is not made (never a node "all free" because its pods were not read), and the
        // inventory below says what is unknown.
        match live.unread.nodes.as_ref().or(live.unread.pods.as_ref()) {
            Some(why) => notes.push(Note::Say(format!(
                "--by node: free GPUs per node unknown: {why}"
            ))),
            None => report.nodes = Some(node_view(&live)),
        }
    }
    report.incomplete.extend(part.fleet_incomplete());
    if spec.signals.cost.is_some() {
        // An outcome record that does not read is an input error, as an unreadable snapshot is;
        // an OpenCost that fails leaves cost unknown, as a failing Prometheus leaves `used`
        // unknown.
        let failed = fleet::attach_cost(&mut report, &live, cfg, &spec.signals, now, cx, notes)?;
        if failed.records {
            *outcome = Outcome::Incomplete;
        }
    }
    // Serving headroom, when a load test or serving request series exist.
    let repo_dir = repo.map(|r| r.path.as_path());
    let production = fleet::production(spec.signals.metrics.as_ref(), cx);
    if fleet::has_headroom_inputs(&live, repo_dir, &production) {
        let (h, errors) = fleet::headroom_section(&live, repo_dir, &production, cfg)?;
        report.headroom = Some(h);
        for e in errors {
            notes.push(Note::Say(format!("load test unreadable: {e}")));
            *outcome = Outcome::Incomplete;
        }
    }
    if let Some(d) = &desired {
        let mut x = drift(
            &live.workloads.list,
            &part.objects,
            &live.tenancy,
            d,
            cfg,
            now.date(),
        )?;
        if let Some(g) = git.first() {
            x.desired_at = g.describe.clone();
        }
        report.drift = Some(x);
    }
    Ok(report)
}
