//! The steps every fleet job shares, each written once: which configuration applies, reading the
//! live state, GPU activity, the desired state with the commit it was read at, cost, serving
//! headroom, the trend column, and how a report is finished (its kind, provenance, completeness and
//! the notes and outcome that follow from them). The trend column is [`super::trend::column`].
//!
//! `inventory`, `drift`, `cost`, `headroom` and the documents' facts are these steps in different
//! combinations; the same inputs therefore give the same figures, sources and notes in each.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::commits::Checkout;
use super::input::{self, CostSpec, LiveSpec, MetricsSpec, RepoSpec, TrendSpec};
use super::{Context, Error, Note, Outcome, Result};
use crate::analysis::cost::{CostInputs, cost};
use crate::analysis::headroom::headroom;
use crate::analysis::live::LiveFleet;
use crate::analysis::usage::Metrics;
use crate::config::Config;
use crate::github::event::Runtime as Actions;
use crate::k8s::object::Object;
use crate::live::loadtest::read_load_tests;
use crate::live::opencost::{self, OpenCostSource, Window};
use crate::live::outcomes::{self, CounterSource, OutcomeFile};
use crate::live::prometheus::PromSource;
use crate::live::serving::Production;
use crate::report::{Desired, GitProvenance, Headroom, Kind, LiveProvenance, Provenance, Report};
use crate::util::date::Timestamp;

/// What a fleet job reads.
#[derive(Debug, Clone)]
pub struct FleetSpec {
    pub live: LiveSpec,
    /// The GitOps repository, for drift (and the load tests of headroom).
    pub repo: Option<RepoSpec>,
    /// What the fleet's other systems say: Prometheus and OpenCost.
    pub signals: Signals,
    /// `--config`.
    pub config: Option<PathBuf>,
    /// The report's clock; the system's when `None`.
    pub now: Option<Timestamp>,
    /// What the report is about (GitHub's `--scope`); the live state's context otherwise.
    pub scope: Option<String>,
    /// The per-node view too (`inventory --by node`): free GPUs per node and per GPU model.
    pub by_node: bool,
}

impl FleetSpec {
    /// A spec that reads `live` and nothing else.
    pub fn new(live: LiveSpec) -> FleetSpec {
        FleetSpec {
            live,
            repo: None,
            signals: Signals::default(),
            config: None,
            now: None,
            scope: None,
            by_node: false,
        }
    }
}

/// What the fleet's other systems say, besides the cluster: Prometheus (GPU activity, serving
/// rates, outcome counters, history) and OpenCost (with outcome records).
#[derive(Debug, Clone)]
pub struct Signals {
    /// Prometheus: GPUs used, serving rates, outcome counters, the trend column.
    pub metrics: Option<MetricsSpec>,
    /// The trend column's window and step (with `metrics`).
    pub trend: Option<TrendSpec>,
    /// OpenCost and outcome records.
    pub cost: Option<CostSpec>,
    /// The window cost and outcomes are counted over (`--window`).
    pub window: Duration,
    /// How long one request to OpenCost or Prometheus may take.
    pub request_timeout: Duration,
}

impl Default for Signals {
    fn default() -> Signals {
        Signals {
            metrics: None,
            trend: None,
            cost: None,
            window: Duration::from_secs(3600),
            request_timeout: Duration::from_secs(input::DEFAULT_REQUEST_TIMEOUT_S),
        }
    }
}

/// The configuration that applies (`explicit`, else `.gpuledger.yaml` at the root of `repo` or in
/// the current directory, else the defaults), with a note and a source naming the file read.
pub fn config(
    explicit: Option<&Path>,
    repo: Option<&Path>,
    notes: &mut Vec<Note>,
) -> Result<(Config, Option<String>)> {
    let (cfg, path) = input::config(explicit, repo)?;
    let used = path.map(|p| p.display().to_string());
    if let Some(p) = &used {
        notes.push(Note::ConfigUsed(p.clone()));
    }
    Ok((cfg, used))
}

/// GPU activity from Prometheus, or why it is unknown (a note says so; never an error).
pub fn metrics(
    spec: Option<&MetricsSpec>,
    cfg: &Config,
    cx: &Context<'_>,
    notes: &mut Vec<Note>,
) -> Metrics {
    let m = cx.rt.block_on(input::metrics(spec, cfg));
    if let Metrics::Failed(reason) = &m {
        notes.push(Note::MetricsUnknown(reason.clone()));
    }
    m
}

/// How the working tree was checked out, to name its commit (see [`Checkout`]).
pub fn checkout(actions: &Actions) -> Checkout<'_> {
    if actions.in_actions {
        Checkout::Actions {
            pr_head: actions
                .event
                .pull_request
                .as_ref()
                .map(|p| p.head.sha.as_str()),
        }
    } else {
        Checkout::Local
    }
}

/// The desired state of `repo` (its Namespace labels lent by `live`), which must have rendered
/// something, with the side of Git it was read at (`side`: `desired`, `base`, `head`) and the apps
/// that failed to render.
pub fn desired(
    repo: &RepoSpec,
    cfg: &Config,
    live: &[Object],
    side: &str,
    cx: &Context<'_>,
) -> Result<(Desired, GitProvenance, Vec<String>)> {
    let d = input::desired_state(repo, cfg, live)?;
    input::ensure_rendered(&d, repo)?;
    let git = super::commits::git_side(
        &repo.path,
        side,
        repo.git_ref.as_deref(),
        checkout(&cx.actions),
    );
    let failed = input::render_failures(&d);
    Ok((d, git, failed))
}

/// What failed among the cost inputs: the report says what is unknown and why, and the notes
/// repeat it.
#[derive(Debug, Clone, Copy, Default)]
pub struct CostFailed {
    /// OpenCost could not be read.
    pub opencost: bool,
    /// A line of the outcome records does not read.
    pub records: bool,
}

/// Reads the cost inputs and puts the cost section into `report` (without any, every cost is
/// unknown with why): OpenCost over the window ending
/// `now`, the outcome records, and the outcome counters (from Prometheus) of the workloads the
/// records do not cover.
pub fn attach_cost(
    report: &mut Report,
    fleet: &LiveFleet<'_>,
    cfg: &Config,
    spec: &Signals,
    now: Timestamp,
    cx: &Context<'_>,
    notes: &mut Vec<Note>,
) -> Result<CostFailed> {
    let (c, failed) = cost_over(
        fleet,
        cfg,
        spec,
        Window::ending(now, spec.window),
        cx,
        notes,
    )?;
    report.cost = Some(c);
    Ok(failed)
}

/// The cost section over `window` (and what failed among its inputs): OpenCost over the window,
/// the outcome records, and the outcome counters of the workloads the records do not cover.
pub fn cost_over(
    fleet: &LiveFleet<'_>,
    cfg: &Config,
    spec: &Signals,
    window: Window,
    cx: &Context<'_>,
    notes: &mut Vec<Note>,
) -> Result<(crate::report::cost::Cost, CostFailed)> {
    let none = CostSpec::default();
    let costs = spec.cost.as_ref().unwrap_or(&none);
    let timeout = spec.request_timeout;
    let records: Option<OutcomeFile> = match &costs.outcomes {
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|source| Error::OutcomeRecords {
                path: path.clone(),
                source,
            })?;
            Some(outcomes::parse(&text, &path.display().to_string()))
        }
        None => None,
    };
    let opencost = costs.opencost.as_ref().map(|o| {
        let src = OpenCostSource {
            url: o.url.clone(),
            bearer_token: o.token.clone(),
            timeout,
        };
        cx.rt.block_on(opencost::read(&src, window))
    });
    // Counters for the workloads the records do not cover.
    let recorded: BTreeSet<&str> = records
        .iter()
        .flat_map(|f| f.records.iter().map(|r| r.workload.as_str()))
        .collect();
    let selectors: Vec<String> = fleet
        .each()
        .filter(|(_, w, _)| !recorded.contains(w.id.to_string().as_str()))
        .filter_map(|(_, _, a)| a.intent.as_ref()?.outcomes_metric.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    // Counted over what the cost covers: the window, or the spans OpenCost's answer holds.
    let spans = crate::analysis::cost::covered(window, opencost.as_ref()).spans;
    let counters = match (&spec.metrics, selectors.is_empty()) {
        (Some(_), false) if spans.is_empty() => selectors
            .iter()
            .map(|s| (s.clone(), Err(outcomes::CounterError::NoPeriod)))
            .collect(),
        (Some(m), false) => {
            let src = CounterSource {
                url: m.url.clone(),
                bearer_token: m.token.clone(),
                timeout,
            };
            let mut sum: BTreeMap<String, std::result::Result<f64, outcomes::CounterError>> =
                BTreeMap::new();
            for (from, to) in spans {
                let part = cx.rt.block_on(outcomes::counters(
                    &src,
                    &selectors,
                    Timestamp::from_unix(to),
                    u64::try_from(to - from).unwrap_or(0),
                ));
                for (sel, v) in part {
                    match (sum.remove(&sel), v) {
                        (Some(Ok(a)), Ok(b)) => sum.insert(sel, Ok(a + b)),
                        (Some(Err(e)), _) | (None | Some(Ok(_)), Err(e)) => sum.insert(sel, Err(e)),
                        (None, Ok(b)) => sum.insert(sel, Ok(b)),
                    };
                }
            }
            sum
        }
        _ => BTreeMap::new(),
    };
    let inputs = CostInputs {
        window,
        opencost: opencost.as_ref(),
        records: records.as_ref(),
        counters: &counters,
        counter_source: spec.metrics.as_ref().map(|m| m.url.as_str()),
    };
    let section = cost(fleet, cfg, &inputs)?;
    let mut failed = CostFailed::default();
    if let Some(Err(e)) = &opencost {
        notes.push(Note::Say(format!("cost is unknown: {e}")));
        failed.opencost = true;
    }
    if let Some(f) = &records {
        for p in &f.problems {
            notes.push(Note::Say(format!("outcome record does not read: {p}")));
            failed.records = true;
        }
    }
    Ok((section, failed))
}

/// The Prometheus of `--prometheus`, as the serving reader takes it.
pub fn prom_source(spec: Option<&MetricsSpec>) -> Option<PromSource> {
    spec.map(|m| PromSource {
        url: m.url.clone(),
        bearer_token: m.token.clone(),
        window: m.window,
        timeout: m.timeout,
        // The serving series are read by pod name, the DCGM scope does not apply to them.
        cluster_selector: None,
    })
}

/// What production asks of the serving workloads (vLLM, Dynamo), or why it is unknown.
pub fn production(spec: Option<&MetricsSpec>, cx: &Context<'_>) -> Production {
    cx.rt
        .block_on(crate::live::serving::production(prom_source(spec).as_ref()))
}

/// One cluster's live state as the one-cluster jobs (`cost`, `cost --compare`, `headroom`, the
/// documents' facts) read it: the configuration, the cluster (a usage error naming `what` when
/// several are given), GPU activity when `with_metrics`, and the report's clock. [`OneCluster::read`]
/// then gives its fleet model and inventory report, the same way for each of them.
pub struct OneCluster {
    pub cfg: Config,
    pub part: input::LivePart,
    pub sources: Vec<String>,
    pub metrics: Metrics,
    pub now: Timestamp,
}

/// Reads [`OneCluster`]; `dir` is where a `.gpuledger.yaml` is looked for besides `--config`.
pub fn one_cluster(
    spec: &FleetSpec,
    what: &str,
    dir: Option<&Path>,
    with_metrics: bool,
    cx: &Context<'_>,
    notes: &mut Vec<Note>,
) -> Result<OneCluster> {
    let (cfg, cfg_path) = config(spec.config.as_deref(), dir, notes)?;
    let live = cx.rt.block_on(input::live(&spec.live, &cx.progress))?;
    let (part, mut sources) = live.single(what)?;
    sources.extend(cfg_path);
    let metrics = if with_metrics {
        self::metrics(spec.signals.metrics.as_ref(), &cfg, cx, notes)
    } else {
        Metrics::NotConfigured
    };
    let now = spec.now.unwrap_or_else(Timestamp::now);
    Ok(OneCluster {
        cfg,
        part,
        sources,
        metrics,
        now,
    })
}

impl OneCluster {
    /// The fleet model and its inventory report, with what the input did not hold: the resources
    /// not listed, and the pods a dump lacks (every per-workload figure needs them); the nodes a
    /// dump lacks too when `headline` is the fleet's figures (as `inventory`'s is), since a report
    /// about workloads (cost, headroom) needs no node.
    pub fn read(&self, headline: Headline) -> Result<(LiveFleet<'_>, Report)> {
        let model = LiveFleet::read(&self.part.objects, &self.cfg, &self.metrics)?
            .unread(self.part.unread());
        let mut report =
            crate::analysis::inventory::report(&model, &self.cfg, self.sources.clone())?;
        report.incomplete.extend(match headline {
            Headline::Fleet => self.part.fleet_incomplete(),
            Headline::Workloads => self.part.workloads_incomplete(),
        });
        Ok((model, report))
    }
}

/// What a one-cluster report leads with, which decides whether a dump without nodes is complete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Headline {
    /// The fleet's figures (capacity, placeable, …): nodes are needed.
    Fleet,
    /// Per-workload figures (cost, headroom): pods are needed, nodes are not.
    Workloads,
}

/// The headroom section of `report`'s workloads, and the load tests that could not be read (each
/// names its file).
pub fn headroom_section(
    fleet: &LiveFleet<'_>,
    repo: Option<&Path>,
    production: &Production,
    cfg: &Config,
) -> Result<(Headroom, Vec<String>)> {
    let paths = fleet
        .about
        .iter()
        .filter_map(|a| a.intent.as_ref()?.load_test.as_deref());
    let (load_tests, errors) = read_load_tests(repo, paths);
    let h = headroom(fleet, &load_tests, production, &cfg.headroom)?;
    Ok((h, errors.iter().map(ToString::to_string).collect()))
}

/// Whether there is anything to judge headroom by: a load test the repository may hold, or serving
/// request series.
pub fn has_headroom_inputs(
    fleet: &LiveFleet<'_>,
    repo: Option<&Path>,
    production: &Production,
) -> bool {
    let load_test = repo.is_some()
        && fleet
            .about
            .iter()
            .any(|a| a.intent.as_ref().is_some_and(|i| i.load_test.is_some()));
    let series = matches!(production, Production::Read(m) if !m.completions.is_empty());
    load_test || series
}

/// Finishes a fleet report: its kind, its provenance (scope, live sources aged against `now`, the
/// sides of Git), and whether it is complete.
pub fn finish(
    report: &mut Report,
    kind: Kind,
    scope: Option<String>,
    live: Vec<LiveProvenance>,
    git: Vec<GitProvenance>,
    now: Timestamp,
    cfg: &Config,
) {
    report.kind = kind;
    report.provenance = Some(Provenance::new(
        scope,
        live,
        git,
        now,
        cfg.snapshot.stale_after,
    ));
    report.complete = report.incomplete.is_empty();
}

/// How a report job ends: a note per resource the report is missing and, if any, an incomplete
/// outcome (an incomplete report under-counts; it is never a clean run), else `outcome`.
pub fn ending(report: &Report, notes: &mut Vec<Note>, outcome: Outcome) -> Outcome {
    let mut outcome = outcome;
    for m in &report.incomplete {
        notes.push(Note::Incomplete {
            what: "report",
            resource: m.resource.clone(),
            reason: m.reason.clone(),
        });
        outcome = Outcome::Incomplete;
    }
    outcome
}
