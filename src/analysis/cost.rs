//! Cost per verified outcome: what each workload, tenant and product line cost over a window,
//! what it produced, and whether it is fit for its purpose at all.
//!
//! **Cost** comes from OpenCost's allocations, one per pod. A pod's cost goes to the workload
//! gpuledger finds it belongs to (the same owner walk as the inventory, so a LeaderWorkerSet's
//! StatefulSet pods are the LeaderWorkerSet's); a pod OpenCost saw that belongs to no live
//! workload (a finished job, a pod without GPUs) stays with its namespace and that namespace's
//! tenant. Three costs are not any one workload's, and the report states the rule each followed:
//! OpenCost's idle cost (spread in proportion to each allocation's cost of the same resource, as
//! OpenCost's own `shareIdle` does, or kept separate), the cost of the shared namespaces of
//! `.gpuledger.yaml` (spread over everything else by GPU-hours; OpenCost's HTTP API cannot share
//! namespaces), and costs outside OpenCost from the configuration (each added once, to the one
//! workload or tenant it names). GPU cost is OpenCost's: billed on allocation, not on use.
//!
//! **Outcomes** come from the application: an outcome-records file, prorated by each record's
//! overlap with the window, or the counter a workload names in `gpuledger.io/outcomes-metric`.
//! A verified outcome met the quality threshold and the deadline; retries, failures, start-up
//! and idle time are in the cost and never in the outcomes. When correctness comes from a
//! reviewed sample, the pass rate has a Wilson 95% interval, and so have the verified outcomes
//! and the cost per 1,000 of them; below the minimum sample (`cost.min_sample`, default 30) only
//! the interval is given. A workload whose pass rate is below its quality threshold is
//! unsuitable whatever it costs.
//!
//! Pure: the window, OpenCost's answer, the records and the counters' values are passed in.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::analysis::tenancy::Resolver;
use crate::config::{Config, IdleRule};
use crate::k8s::object::{Kind, Object};
use crate::k8s::types::{LabelMap, Labels};
use crate::live::opencost::{Allocation, CostData, Costs, OpenCostError, Window, sanitize_label};
use crate::live::outcomes::{CounterError, OutcomeFile, Verified};
use crate::report::Report;
use crate::report::cost::{Breakdown, Cost, CostRow, InferenceRow, OtherCost};
use crate::util::number::money;
use crate::util::sum::Overflow;
use crate::workload::owners;

mod coverage;
pub use coverage::{Covered, SLACK_S, covered};

/// z for a two-sided 95% interval.
const Z95: f64 = 1.959_963_984_540_054;

/// What the cost section is computed from.
#[derive(Debug, Clone)]
pub struct CostInputs<'a> {
    pub window: Window,
    /// OpenCost's answer; `None` when no OpenCost was given.
    pub opencost: Option<&'a Result<CostData, OpenCostError>>,
    pub records: Option<&'a OutcomeFile>,
    /// The increase of each `gpuledger.io/outcomes-metric` selector over the window.
    pub counters: &'a BTreeMap<String, Result<f64, CounterError>>,
    /// Where the counters were read (the Prometheus URL); `None` without one.
    pub counter_source: Option<&'a str>,
}

/// The Wilson score interval of `passed` of `n` at 95%; `None` for an empty sample.
pub fn wilson(passed: u64, n: u64) -> Option<(f64, f64)> {
    if n == 0 || passed > n {
        return None;
    }
    let (x, n) = (passed as f64, n as f64);
    let p = x / n;
    let z2 = Z95 * Z95;
    let centre = (x + z2 / 2.0) / (n + z2);
    let half = Z95 * n.sqrt() / (n + z2) * (p * (1.0 - p) + z2 / (4.0 * n)).sqrt();
    Some(((centre - half).max(0.0), (centre + half).min(1.0)))
}

/// Where one allocation's cost goes.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Target {
    /// A row of `report.workloads`.
    Workload(usize),
    /// A namespace's pods of no live workload.
    Other(String),
    /// A shared namespace's pods, spread later.
    Shared,
}

/// Costs summed for one target; a figure unknown in any part is unknown.
#[derive(Debug, Clone)]
struct Acc {
    costs: Costs,
    gpu_hours: Option<f64>,
    idle: Option<f64>,
    shared: Option<f64>,
    external: Option<f64>,
    /// Why the total is unknown.
    why: Option<String>,
    /// OpenCost gave at least one allocation for it (an outside cost alone makes an entry too).
    seen: bool,
}

impl Default for Acc {
    fn default() -> Self {
        let zero = Some(0.0);
        Acc {
            costs: Costs {
                gpu: zero,
                cpu: zero,
                ram: zero,
                pv: zero,
                network: zero,
                load_balancer: zero,
                shared: zero,
                external: zero,
                total: zero,
            },
            gpu_hours: zero,
            idle: zero,
            shared: zero,
            external: zero,
            why: None,
            seen: false,
        }
    }
}

fn plus(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    Some(a? + b?)
}

impl Acc {
    fn add(&mut self, a: &Allocation) {
        self.seen = true;
        let (x, y) = (&mut self.costs, &a.costs);
        x.gpu = plus(x.gpu, y.gpu);
        x.cpu = plus(x.cpu, y.cpu);
        x.ram = plus(x.ram, y.ram);
        x.pv = plus(x.pv, y.pv);
        x.network = plus(x.network, y.network);
        x.load_balancer = plus(x.load_balancer, y.load_balancer);
        x.shared = plus(x.shared, y.shared);
        x.external = plus(x.external, y.external);
        x.total = plus(x.total, y.total);
        self.gpu_hours = plus(self.gpu_hours, a.gpu_hours);
        if y.total.is_none() && self.why.is_none() {
            self.why = Some(format!("OpenCost gave no total cost (NaN) for {}", a.key));
        }
    }

    /// Own cost + idle share + shared share + outside costs.
    fn total(&self) -> Option<f64> {
        let t = plus(self.costs.total, self.idle)?;
        plus(plus(Some(t), self.shared), self.external)
    }
}

/// The index from OpenCost's pod and controller names to report workloads.
struct Index {
    /// (namespace, lower-case kind, name) → `report.workloads` index.
    by_object: HashMap<(String, String, String), usize>,
}

impl Index {
    fn new(report: &Report, objects: &[Object]) -> Result<Index, Overflow> {
        let rows: HashMap<String, usize> = report
            .workloads
            .iter()
            .enumerate()
            .map(|(i, w)| (w.id().to_string(), i))
            .collect();
        let mut workloads = owners::build(objects)?;
        let mut by_object = HashMap::new();
        for (i, o) in objects.iter().enumerate() {
            if o.meta.namespace.is_none() || o.typed_kind() == Kind::Namespace {
                continue;
            }
            let Some(w) = workloads.workload_of_object(i) else {
                continue;
            };
            let Some(id) = workloads.list.get(w).map(|w| w.id.to_string()) else {
                continue;
            };
            if let Some(row) = rows.get(&id) {
                by_object.insert(
                    (
                        o.namespace().to_string(),
                        o.kind.to_lowercase(),
                        o.meta.name.clone(),
                    ),
                    *row,
                );
            }
        }
        // A root that OpenCost names as the controller itself (a Deployment, a Job).
        for (i, w) in report.workloads.iter().enumerate() {
            by_object
                .entry((w.namespace.clone(), w.kind.to_lowercase(), w.name.clone()))
                .or_insert(i);
        }
        Ok(Index { by_object })
    }

    fn find(&self, a: &Allocation) -> Option<usize> {
        let ns = a.namespace.clone()?;
        let look = |kind: &str, name: &Option<String>| {
            let name = name.clone()?;
            self.by_object
                .get(&(ns.clone(), kind.to_string(), name))
                .copied()
        };
        look("pod", &a.pod).or_else(|| {
            a.controller_kind
                .as_deref()
                .and_then(|k| look(k, &a.controller))
        })
    }
}

/// The cost section; see the module documentation.
pub fn cost(
    report: &Report,
    objects: &[Object],
    cfg: &Config,
    inputs: &CostInputs<'_>,
) -> Result<Cost, Overflow> {
    let c = &cfg.cost;
    let window = inputs.window;
    // What cost and outcomes are counted over: the window, or the part OpenCost covers.
    let covered = covered(window, inputs.opencost);
    let hours = covered.hours;
    let mut unknown = BTreeMap::new();
    if let Some(why) = report.fleet.unknown.get("gpus.used") {
        unknown.insert("gpus_busy".to_string(), why.clone());
    }
    let mut rules = vec![
        "Each pod's cost goes to the workload it belongs to; pods of no live workload (finished jobs, pods without GPUs) stay with their namespace's tenant. GPU cost is OpenCost's: billed on allocation (requested GPU-hours), not on use.".to_string(),
    ];
    let resolver = Resolver::new(&cfg.tenancy, objects);
    let shared_ns: BTreeSet<&str> = c.shared_namespaces.iter().map(String::as_str).collect();

    // Where the cost is unknown for everyone, and why.
    let cost_unknown: Option<String> = match inputs.opencost {
        None => Some("no cost source: give --opencost URL (the OpenCost API)".into()),
        Some(Err(e)) => Some(e.to_string()),
        Some(Ok(_)) => None,
    };
    let mut accs: BTreeMap<Target, Acc> = BTreeMap::new();
    let mut idle = Acc::default();
    let mut other_labels: BTreeMap<String, Labels> = BTreeMap::new();
    if let Some(Ok(data)) = inputs.opencost {
        let index = Index::new(report, objects)?;
        for a in &data.allocations {
            if a.is_idle() {
                idle.add(a);
                continue;
            }
            let ns = a.namespace.clone().unwrap_or_else(|| a.key.clone());
            let target = if shared_ns.contains(ns.as_str()) {
                Target::Shared
            } else {
                match index.find(a) {
                    Some(i) => Target::Workload(i),
                    None => {
                        other_labels
                            .entry(ns.clone())
                            .or_insert_with(|| tenancy_labels(cfg, a));
                        Target::Other(ns)
                    }
                }
            };
            accs.entry(target).or_default().add(a);
        }
    }

    // Idle.
    let idle_total = idle.costs.total;
    if cost_unknown.is_none() {
        match c.idle {
            IdleRule::Spread => {
                let mut unspread = Some(0.0);
                for (part, get) in RESOURCES {
                    let pool = get(&idle.costs);
                    // An allocation whose cost of the resource is unknown has an unknown share;
                    // the others share the idle cost among themselves.
                    let weight: f64 = accs.values().filter_map(|a| get(&a.costs)).sum();
                    match pool {
                        Some(0.0) => {}
                        Some(p) if weight > 0.0 => {
                            for a in accs.values_mut() {
                                let share = get(&a.costs).map(|x| p * x / weight);
                                if share.is_none() {
                                    a.why.get_or_insert_with(|| {
                                        format!("its {part} cost is unknown (NaN), so its share of the idle {part} cost is too")
                                    });
                                }
                                a.idle = plus(a.idle, share);
                            }
                        }
                        Some(p) => unspread = plus(unspread, Some(p)),
                        None => {
                            for a in accs.values_mut() {
                                a.idle = None;
                                a.why.get_or_insert_with(|| {
                                    format!("OpenCost's idle {part} cost is unknown (NaN), so every share of it is")
                                });
                            }
                        }
                    }
                }
                rules.push(format!(
                    "Idle cost ({}) is spread over the allocations in proportion to their cost of each resource (GPU idle by GPU cost, CPU by CPU, RAM by RAM), as OpenCost's shareIdle does{}.",
                    money(idle_total),
                    match unspread {
                        Some(u) if u > 0.0 => format!("; {} of it had no allocation of its resource to go to and is counted in the total only", money(Some(u))),
                        _ => String::new(),
                    }
                ));
            }
            IdleRule::Separate => rules.push(format!(
                "Idle cost ({}) is kept as its own line, not assigned to anyone (cost.idle: separate).",
                money(idle_total)
            )),
        }
    }

    // Shared namespaces, by GPU-hours.
    let shared = accs.remove(&Target::Shared);
    let shared_total = shared.as_ref().map_or(Some(0.0), Acc::total);
    if cost_unknown.is_none() {
        if shared_ns.is_empty() {
            rules.push("No shared namespaces (cost.shared_namespaces): each namespace's cost stays with its tenant.".into());
        } else {
            let hours_total: Option<f64> = accs
                .values()
                .map(|a| a.gpu_hours)
                .try_fold(0.0, |s, h| Some(s + h?));
            let names = c.shared_namespaces.join(", ");
            match (shared_total, hours_total) {
                (Some(0.0), _) => rules.push(format!(
                    "The shared namespaces ({names}) cost nothing in the window."
                )),
                (Some(s), Some(h)) if h > 0.0 => {
                    for a in accs.values_mut() {
                        a.shared = plus(a.shared, a.gpu_hours.map(|g| s * g / h));
                    }
                    rules.push(format!(
                        "The cost of the shared namespaces {names} ({}) is spread over the other workloads and namespaces in proportion to their GPU-hours.",
                        money(Some(s))
                    ));
                }
                (Some(s), Some(_)) => rules.push(format!(
                    "The cost of the shared namespaces {names} ({}) could not be spread: nothing else used GPU-hours; it is counted in the total only.",
                    money(Some(s))
                )),
                _ => {
                    for a in accs.values_mut() {
                        a.shared = None;
                        a.why.get_or_insert_with(|| {
                            format!("the cost or GPU-hours of the shared namespaces ({names}) is unknown (NaN), so every share of it is")
                        });
                    }
                    rules.push(format!("The shared namespaces' ({names}) cost is unknown."));
                }
            }
        }
    }

    // Costs outside OpenCost, each counted once where it is assigned.
    let mut tenant_external: BTreeMap<String, f64> = BTreeMap::new();
    let mut external_total = 0.0;
    for e in &c.external {
        let amount = e.per_hour * hours;
        external_total += amount;
        let row = e.workload.as_ref().and_then(|w| {
            report
                .workloads
                .iter()
                .position(|r| &r.id().to_string() == w)
        });
        let whom = match (&e.workload, row, &e.tenant) {
            (Some(_), Some(i), _) => {
                let a = accs.entry(Target::Workload(i)).or_default();
                a.external = plus(a.external, Some(amount));
                e.workload.clone().unwrap_or_default()
            }
            (Some(w), None, _) => format!("{w} (not a live workload: in the total only)"),
            (None, _, Some(t)) => {
                *tenant_external.entry(t.clone()).or_default() += amount;
                format!("tenant {t}")
            }
            (None, _, None) => "nobody".into(),
        };
        rules.push(format!(
            "Outside OpenCost: {} at {}/h ({} over the window) to {whom}, counted once.",
            e.name,
            money(Some(e.per_hour)),
            money(Some(amount))
        ));
    }

    // Totals.
    let total_cost = match &cost_unknown {
        Some(_) => None,
        None => {
            // Shares of idle and shared cost move money between rows: the total is every
            // allocation's own cost once, idle included, plus the outside costs.
            let shared_own = shared.as_ref().map_or(Some(0.0), |s| s.costs.total);
            let own = accs
                .values()
                .map(|a| a.costs.total)
                .chain([idle_total, shared_own])
                .try_fold(0.0, |s, t| Some(s + t?));
            plus(own, Some(external_total))
        }
    };
    if let Some(why) = &cost_unknown {
        unknown.insert("total_cost".to_string(), why.clone());
    } else if total_cost.is_none() {
        unknown.insert(
            "total_cost".to_string(),
            "OpenCost gave NaN for part of the window's cost".into(),
        );
    }

    // Outcomes per workload.
    let outcomes = Outcomes::new(inputs, covered.spans.clone());
    let mut outcome_sources = Vec::new();
    if let Some(f) = inputs.records {
        outcome_sources.push(format!("records {}", f.path));
    }
    if let Some(p) = inputs.counter_source
        && !inputs.counters.is_empty()
    {
        outcome_sources.push(format!("counters in {p}"));
    }

    let workloads: Vec<CostRow> = report
        .workloads
        .iter()
        .enumerate()
        .map(|(i, w)| {
            let mut row = CostRow {
                name: w.id().to_string(),
                tenant: Some(w.tenant.clone()),
                product_line: w.product_line.clone(),
                gpus_requested: w.gpus,
                gpus_busy: w.gpus_used,
                quality_threshold: w.intent.as_ref().and_then(|x| x.quality_threshold),
                ..CostRow::default()
            };
            match (&cost_unknown, accs.get(&Target::Workload(i))) {
                (Some(why), _) => {
                    row.unknown.insert("total_cost".into(), why.clone());
                }
                // An outside cost alone is not its cost: what OpenCost would say is unknown.
                (None, None) => {
                    row.unknown.insert(
                        "total_cost".into(),
                        "OpenCost has no allocation for its pods in the window".into(),
                    );
                }
                (None, Some(a)) if !a.seen => {
                    row.breakdown.external = a.external;
                    row.unknown.insert(
                        "total_cost".into(),
                        "OpenCost has no allocation for its pods in the window (only its outside cost is known)".into(),
                    );
                }
                (None, Some(a)) => fill_cost(&mut row, a),
            }
            let selector = w.intent.as_ref().and_then(|x| x.outcomes_metric.as_deref());
            outcomes.fill(&mut row, selector, c.min_sample, hours);
            row
        })
        .collect();

    // Pods of no live workload, per namespace.
    let mut other = Vec::new();
    let mut other_rows: Vec<CostRow> = Vec::new();
    for (t, a) in &accs {
        let Target::Other(ns) = t else { continue };
        let labels: LabelMap = other_labels.get(ns).map(LabelMap::from).unwrap_or_default();
        let tenant = resolver.tenant(&labels, ns);
        let mut row = CostRow {
            name: ns.clone(),
            tenant: Some(tenant.clone()),
            product_line: resolver.product_line(&labels, ns),
            ..CostRow::default()
        };
        fill_cost(&mut row, a);
        other.push(OtherCost {
            namespace: ns.clone(),
            tenant,
            total_cost: row.total_cost,
        });
        other_rows.push(row);
    }
    other.sort_by(|a, b| {
        by_cost(a.total_cost, b.total_cost).then_with(|| a.namespace.cmp(&b.namespace))
    });

    let group = |key: &dyn Fn(&CostRow) -> String| -> Vec<CostRow> {
        let mut groups: BTreeMap<String, (Vec<&CostRow>, Vec<&CostRow>)> = BTreeMap::new();
        for r in &workloads {
            groups.entry(key(r)).or_default().0.push(r);
        }
        for r in &other_rows {
            groups.entry(key(r)).or_default().1.push(r);
        }
        groups
            .into_iter()
            .map(|(name, (ws, others))| {
                aggregate(name, &ws, &others, cost_unknown.as_deref(), hours)
            })
            .collect()
    };
    let mut tenants = group(&|r| r.tenant.clone().unwrap_or_else(|| "(none)".into()));
    for t in &mut tenants {
        if let Some(tr) = report.tenants.iter().find(|x| x.name == t.name) {
            t.gpus_requested = tr.gpus_requested;
            t.gpus_busy = tr.gpus_used;
        }
        if let Some(e) = tenant_external.get(&t.name) {
            t.breakdown.external = plus(t.breakdown.external, Some(*e));
            t.total_cost = plus(t.total_cost, Some(*e));
        }
    }
    for (t, e) in &tenant_external {
        if !tenants.iter().any(|r| &r.name == t) {
            tenants.push(CostRow {
                name: t.clone(),
                total_cost: Some(*e),
                breakdown: Breakdown {
                    external: Some(*e),
                    ..Breakdown::default()
                },
                ..CostRow::default()
            });
        }
    }
    let mut product_lines = group(&|r| r.product_line.clone().unwrap_or_else(|| "(none)".into()));
    for p in &mut product_lines {
        p.gpus_requested = report
            .product_lines
            .iter()
            .find(|x| x.name.as_deref().unwrap_or("(none)") == p.name)
            .map_or(p.gpus_requested, |x| x.gpus_requested);
    }
    let mut workloads = workloads;
    for rows in [&mut workloads, &mut tenants, &mut product_lines] {
        rows.sort_by(|a, b| by_cost(a.total_cost, b.total_cost).then_with(|| a.name.cmp(&b.name)));
    }

    let (inference, inference_unknown) = match inputs.opencost {
        Some(Ok(d)) => match &d.inference {
            Ok(Some(v)) => (
                v.iter()
                    .map(|x| InferenceRow {
                        model: x.model.clone(),
                        namespace: x.namespace.clone(),
                        cost_basis: x.cost_basis.clone(),
                        total_cost: x.total_cost,
                        total_tokens: x.total_tokens,
                        cost_per_million_tokens: x.cost_per_million_tokens,
                    })
                    .collect(),
                None,
            ),
            Ok(None) => (
                Vec::new(),
                Some("OpenCost does not serve /inferenceCost (1.121 or later with INFERENCE_COST_ENABLED=true)".to_string()),
            ),
            Err(e) => (Vec::new(), Some(e.to_string())),
        },
        _ => (Vec::new(), None),
    };

    Ok(Cost {
        window_start: window.start.to_string(),
        window_end: window.end.to_string(),
        window_hours: window.hours(),
        covered_hours: covered.partial.as_ref().map(|_| covered.hours),
        covered_share: covered.partial.as_ref().map(|(share, _)| *share),
        partial: covered
            .partial
            .iter()
            .map(|(_, why)| ("total_cost".to_string(), why.clone()))
            .collect(),
        source: match inputs.opencost {
            Some(Ok(d)) => Some(d.source.clone()),
            _ => None,
        },
        outcome_sources,
        rules: if cost_unknown.is_some() {
            Vec::new()
        } else {
            rules
        },
        total_cost,
        idle_cost: if cost_unknown.is_some() {
            None
        } else {
            idle_total
        },
        shared_cost: if cost_unknown.is_some() || shared_ns.is_empty() {
            None
        } else {
            shared_total
        },
        external_cost: external_total,
        min_sample: c.min_sample,
        unknown: {
            let mut u: crate::report::Unknown = unknown.into();
            if let Some(why) = &inference_unknown {
                u.set("inference", why.clone());
            }
            u
        },
        problems: inputs
            .records
            .map(|f| f.problems.iter().map(ToString::to_string).collect())
            .unwrap_or_default(),
        workloads,
        tenants,
        product_lines,
        other,
        inference,
        inference_unknown,
    })
}

type Get = fn(&Costs) -> Option<f64>;

/// The resources OpenCost's idle cost is split by.
const RESOURCES: [(&str, Get); 3] = [("GPU", |c| c.gpu), ("CPU", |c| c.cpu), ("RAM", |c| c.ram)];

/// Largest first; unknown last.
fn by_cost(a: Option<f64>, b: Option<f64>) -> std::cmp::Ordering {
    match (a, b) {
        (Some(x), Some(y)) => y.total_cmp(&x),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    }
}

/// The tenancy labels of an allocation of no live workload, from OpenCost's sanitised pod and
/// namespace labels, under the keys the configuration names (a workload label wins over a
/// namespace label).
fn tenancy_labels(cfg: &Config, a: &Allocation) -> Labels {
    let t = &cfg.tenancy;
    let mut out = Labels::new();
    for (keys, from) in [
        (&t.tenant.namespace_labels, &a.namespace_labels),
        (&t.product_line.namespace_labels, &a.namespace_labels),
        (&t.tenant.workload_labels, &a.labels),
        (&t.product_line.workload_labels, &a.labels),
    ] {
        for k in keys {
            if let Some(v) = from.get(&sanitize_label(k)).filter(|v| !v.is_empty()) {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    out
}

fn fill_cost(row: &mut CostRow, a: &Acc) {
    row.breakdown = Breakdown {
        gpu: a.costs.gpu,
        cpu: a.costs.cpu,
        ram: a.costs.ram,
        pv: a.costs.pv,
        network: a.costs.network,
        load_balancer: a.costs.load_balancer,
        idle: a.idle,
        shared: plus(a.shared, a.costs.shared),
        external: plus(a.external, a.costs.external),
    };
    row.gpu_hours = a.gpu_hours;
    row.total_cost = a.total();
    if row.total_cost.is_none() {
        row.unknown.insert(
            "total_cost".into(),
            a.why
                .clone()
                .unwrap_or_else(|| "OpenCost gave NaN for part of it".into()),
        );
    }
}

/// The records and counters, by workload.
struct Outcomes<'a> {
    inputs: &'a CostInputs<'a>,
    /// What outcomes are counted over ([`Covered::spans`]).
    spans: Vec<(i64, i64)>,
}

/// What the records of one workload add up to in the window.
#[derive(Default)]
struct Tally {
    records: usize,
    overlapping: usize,
    results: f64,
    counted: f64,
    counted_results: f64,
    on_time: f64,
    sample: u64,
    passed: u64,
}

impl<'a> Outcomes<'a> {
    fn new(inputs: &'a CostInputs<'a>, spans: Vec<(i64, i64)>) -> Outcomes<'a> {
        Outcomes { inputs, spans }
    }

    fn tally(&self, id: &str) -> Tally {
        let mut t = Tally::default();
        let Some(f) = self.inputs.records else {
            return t;
        };
        for r in f.records.iter().filter(|r| r.workload == id) {
            t.records += 1;
            let span = r.end.seconds_since(r.start) as f64;
            let inside = coverage::overlap(&self.spans, r.start.unix(), r.end.unix());
            if inside <= 0 || span <= 0.0 {
                continue;
            }
            t.overlapping += 1;
            // A record is prorated by the share of its period inside the window (or the part of
            // it the cost covers).
            let share = inside as f64 / span;
            t.results += r.results * share;
            match r.verified {
                Verified::Counted(v) => {
                    t.counted += v * share;
                    t.counted_results += r.results * share;
                }
                Verified::Sampled {
                    on_time,
                    sample,
                    passed,
                } => {
                    t.on_time += on_time * share;
                    t.sample = t.sample.saturating_add(sample);
                    t.passed = t.passed.saturating_add(passed);
                }
            }
        }
        t
    }

    /// Fills the outcome figures of a workload row whose cost is already set.
    fn fill(&self, row: &mut CostRow, selector: Option<&str>, min_sample: u64, hours: f64) {
        let id = row.name.clone();
        let bad: Vec<String> = self
            .inputs
            .records
            .map(|f| {
                f.problems
                    .iter()
                    .filter(|p| p.workload.as_deref() == Some(id.as_str()))
                    .map(ToString::to_string)
                    .collect()
            })
            .unwrap_or_default();
        if !bad.is_empty() {
            row.unknown.insert(
                "verified_outcomes".into(),
                format!("a record of it does not read: {}", bad.join("; ")),
            );
            return;
        }
        let t = self.tally(&id);
        if t.records > 0 {
            row.outcome_source = Some("records".into());
            if t.overlapping == 0 {
                row.unknown.insert(
                    "verified_outcomes".into(),
                    "none of its records overlaps the window".into(),
                );
                return;
            }
            row.results = Some(t.results);
            let interval = (t.sample > 0).then(|| wilson(t.passed, t.sample)).flatten();
            let p_hat = (t.sample > 0).then(|| t.passed as f64 / t.sample as f64);
            let sampled = t.on_time > 0.0 || t.sample > 0;
            let point = t.counted + t.on_time * p_hat.unwrap_or(0.0);
            if sampled {
                row.sample = Some(t.sample);
                row.sample_passed = Some(t.passed);
                match interval {
                    Some((lo, hi)) => {
                        row.verified_interval =
                            Some([t.counted + t.on_time * lo, t.counted + t.on_time * hi]);
                    }
                    None => {
                        row.unknown.insert(
                            "verified_outcomes".into(),
                            "its on-time results were reviewed in a sample of 0".into(),
                        );
                        return;
                    }
                }
            }
            let enough = !sampled || t.sample >= min_sample;
            if enough {
                row.verified_outcomes = Some(point);
                row.pass_rate = if t.counted_results > 0.0 && !sampled {
                    Some(t.counted / t.counted_results)
                } else if sampled && t.counted_results == 0.0 {
                    p_hat
                } else if t.results > 0.0 {
                    Some(point / t.results)
                } else {
                    None
                };
            } else {
                let why = format!(
                    "a reviewed sample of {} is below the minimum of {min_sample} (cost.min_sample): only the interval is given",
                    t.sample
                );
                row.unknown.insert("verified_outcomes".into(), why.clone());
                row.unknown.insert("pass_rate".into(), why);
            }
            self.suitability(row, interval, sampled, enough);
        } else if let Some(sel) = selector {
            row.outcome_source = Some("counter".into());
            match self.inputs.counters.get(sel) {
                Some(Ok(v)) => row.verified_outcomes = Some(*v),
                Some(Err(e)) => {
                    row.unknown
                        .insert("verified_outcomes".into(), e.to_string());
                }
                None => {
                    row.unknown.insert(
                        "verified_outcomes".into(),
                        format!("its counter {sel} was not read: give --prometheus URL"),
                    );
                }
            }
            row.unknown.insert(
                "pass_rate".into(),
                "a counter gives verified outcomes only, not the results they were judged among"
                    .into(),
            );
            row.unknown.insert(
                "suitable".into(),
                "no pass rate to hold against the quality threshold".into(),
            );
        } else {
            row.unknown.insert(
                "verified_outcomes".into(),
                "no outcome source: no record in --outcomes and no gpuledger.io/outcomes-metric"
                    .into(),
            );
        }
        per_hour_and_cost(row, hours);
    }

    fn suitability(
        &self,
        row: &mut CostRow,
        interval: Option<(f64, f64)>,
        sampled: bool,
        enough: bool,
    ) {
        let Some(threshold) = row.quality_threshold else {
            row.unknown.insert(
                "suitable".into(),
                "no quality threshold in its intent (gpuledger.io/quality-threshold)".into(),
            );
            return;
        };
        row.suitable = match (row.pass_rate, interval) {
            (Some(p), _) if enough => Some(p >= threshold),
            (_, Some((lo, hi))) if sampled => {
                if hi < threshold {
                    Some(false)
                } else if lo >= threshold {
                    Some(true)
                } else {
                    None
                }
            }
            _ => None,
        };
        if row.suitable.is_none() {
            row.unknown.insert(
                "suitable".into(),
                format!("the pass rate's interval straddles the quality threshold {threshold}"),
            );
        }
    }
}

/// Verified outcomes per hour, and cost per 1,000 of them with its interval.
fn per_hour_and_cost(row: &mut CostRow, hours: f64) {
    if hours > 0.0 {
        row.verified_per_hour = row.verified_outcomes.map(|v| v / hours);
    }
    let Some(cost) = row.total_cost else {
        if row.verified_outcomes.is_some() || row.verified_interval.is_some() {
            row.unknown
                .insert("cost_per_1000".into(), "its cost is unknown".into());
        }
        return;
    };
    match row.verified_outcomes {
        Some(v) if v > 0.0 => row.cost_per_1000 = Some(cost / v * 1000.0),
        Some(_) => {
            row.unknown.insert(
                "cost_per_1000".into(),
                "no verified outcome in the window: all of its cost bought nothing that counts"
                    .into(),
            );
        }
        None => {}
    }
    if let Some([lo, hi]) = row.verified_interval {
        if lo > 0.0 {
            row.cost_per_1000_interval = Some([cost / hi * 1000.0, cost / lo * 1000.0]);
        } else {
            row.unknown.insert(
                "cost_per_1000_interval".into(),
                "the interval's low end has no verified outcome: the cost per outcome is unbounded above".into(),
            );
        }
    }
}

/// A tenant's or product line's row from its workloads and its pods of no live workload.
fn aggregate(
    name: String,
    workloads: &[&CostRow],
    others: &[&CostRow],
    cost_unknown: Option<&str>,
    hours: f64,
) -> CostRow {
    let all = || workloads.iter().chain(others.iter());
    let sum = |f: &dyn Fn(&CostRow) -> Option<f64>| -> Option<f64> {
        all().map(|r| f(r)).try_fold(0.0, |s, x| Some(s + x?))
    };
    let mut row = CostRow {
        name,
        gpus_requested: workloads.iter().map(|w| w.gpus_requested).sum(),
        total_cost: sum(&|r| r.total_cost),
        gpu_hours: sum(&|r| r.gpu_hours),
        breakdown: Breakdown {
            gpu: sum(&|r| r.breakdown.gpu),
            cpu: sum(&|r| r.breakdown.cpu),
            ram: sum(&|r| r.breakdown.ram),
            pv: sum(&|r| r.breakdown.pv),
            network: sum(&|r| r.breakdown.network),
            load_balancer: sum(&|r| r.breakdown.load_balancer),
            idle: sum(&|r| r.breakdown.idle),
            shared: sum(&|r| r.breakdown.shared),
            external: sum(&|r| r.breakdown.external),
        },
        ..CostRow::default()
    };
    if row.total_cost.is_none() {
        let why = cost_unknown.map(str::to_string).unwrap_or_else(|| {
            let names: Vec<&str> = all()
                .filter(|r| r.total_cost.is_none())
                .map(|r| r.name.as_str())
                .collect();
            format!("the cost of {} is unknown", names.join(", "))
        });
        row.unknown.insert("total_cost".into(), why);
    }
    // Outcomes: over the workloads that report them; the cost per 1,000 over the same ones.
    let known: Vec<&&CostRow> = workloads
        .iter()
        .filter(|w| w.verified_outcomes.is_some() || w.verified_interval.is_some())
        .collect();
    let silent = workloads.len() - known.len();
    if known.is_empty() {
        row.unknown.insert(
            "verified_outcomes".into(),
            "none of its workloads reports outcomes".into(),
        );
    } else {
        let point: Option<f64> = known
            .iter()
            .map(|w| w.verified_outcomes)
            .try_fold(0.0, |s, v| Some(s + v?));
        let bounds = |i: usize| -> f64 {
            known
                .iter()
                .map(|w| match (w.verified_interval, w.verified_outcomes) {
                    (Some(b), _) => b.get(i).copied().unwrap_or(0.0),
                    (None, Some(v)) => v,
                    (None, None) => 0.0,
                })
                .sum()
        };
        let sampled = known.iter().any(|w| w.verified_interval.is_some());
        row.verified_outcomes = point;
        if sampled {
            row.verified_interval = Some([bounds(0), bounds(1)]);
        }
        if point.is_none() {
            row.unknown.insert(
                "verified_outcomes".into(),
                "a workload's reviewed sample is below the minimum: only the interval is given"
                    .into(),
            );
        }
        let cost_of_known: Option<f64> = known
            .iter()
            .map(|w| w.total_cost)
            .try_fold(0.0, |s, c| Some(s + c?));
        if silent > 0 {
            row.unknown.insert(
                "cost_per_1000".into(),
                format!(
                    "over the {} of its {} workloads that report outcomes, and their cost only",
                    known.len(),
                    workloads.len()
                ),
            );
        }
        // With every workload reporting, the whole cost buys the outcomes (idle, finished jobs
        // and outside costs included); otherwise only the reporting workloads' cost is comparable.
        let basis = if silent == 0 {
            row.total_cost
        } else {
            cost_of_known
        };
        let mut scratch = CostRow {
            total_cost: basis,
            verified_outcomes: row.verified_outcomes,
            verified_interval: row.verified_interval,
            ..CostRow::default()
        };
        per_hour_and_cost(&mut scratch, hours);
        row.verified_per_hour = scratch.verified_per_hour;
        row.cost_per_1000 = scratch.cost_per_1000;
        row.cost_per_1000_interval = scratch.cost_per_1000_interval;
        for (k, v) in scratch.unknown {
            row.unknown.entry(k).or_insert(v);
        }
    }
    row.unknown.insert(
        "pass_rate".into(),
        "judged per workload, against each one's own threshold".into(),
    );
    row.suitable = if workloads.iter().any(|w| w.suitable == Some(false)) {
        Some(false)
    } else if !workloads.is_empty() && workloads.iter().all(|w| w.suitable == Some(true)) {
        Some(true)
    } else {
        None
    };
    if row.suitable.is_none() {
        row.unknown.insert(
            "suitable".into(),
            "not every workload's suitability is known".into(),
        );
    }
    row
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::inventory::inventory;
    use crate::k8s::read::read_str;
    use crate::live::opencost::Costs;
    use crate::live::outcomes::parse;
    use crate::util::date::Timestamp;

    /// A running Job of one 1-GPU pod with a 98% quality threshold.
    fn job(name: &str) -> String {
        format!(
            "apiVersion: batch/v1\nkind: Job\nmetadata: {{name: {name}, namespace: eval, uid: u-{name}, annotations: {{gpuledger.io/quality-threshold: \"0.98\"}}}}\nspec:\n  parallelism: 1\n  template:\n    spec:\n      containers: [{{name: c, resources: {{limits: {{nvidia.com/gpu: 1}}}}}}]\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}-p\n  namespace: eval\n  ownerReferences: [{{apiVersion: batch/v1, kind: Job, name: {name}, uid: u-{name}, controller: true}}]\nspec:\n  nodeName: n\n  containers: [{{name: c, resources: {{limits: {{nvidia.com/gpu: 1}}}}}}]\nstatus: {{phase: Running}}\n---\n"
        )
    }

    fn allocation(pod: &str, total: f64) -> Allocation {
        Allocation {
            key: format!("eval/job/x/{pod}"),
            namespace: Some("eval".into()),
            controller_kind: Some("job".into()),
            pod: Some(pod.into()),
            gpu_hours: Some(1.0),
            costs: Costs {
                gpu: Some(total),
                cpu: Some(0.0),
                ram: Some(0.0),
                pv: Some(0.0),
                network: Some(0.0),
                load_balancer: Some(0.0),
                shared: Some(0.0),
                external: Some(0.0),
                total: Some(total),
            },
            ..Allocation::default()
        }
    }

    /// The seed's worked example: 1,000 tasks an hour at a 98% requirement. A model at 90% is
    /// unsuitable however cheap; 990 correct and timely results for $2/h are about $2.02 per
    /// 1,000 qualifying outcomes, and the same for $1.50/h about $1.52.
    #[test]
    fn the_seeds_worked_example() {
        let text = [job("big"), job("cheap"), job("small")].concat();
        let objects = read_str(&text, "fleet.yaml").unwrap();
        let cfg = Config::default();
        let report = inventory(&objects, &cfg, vec![]).unwrap();
        let window = Window::ending(
            Timestamp::parse("2026-12-02T12:00:00Z").unwrap(),
            std::time::Duration::from_secs(3600),
        );
        let data = Ok(CostData {
            coverage: crate::live::opencost::Coverage {
                spans: vec![(window.start, window.end)],
                undated: 0,
            },
            source: "http://opencost".into(),
            allocations: vec![
                allocation("big-p", 2.0),
                allocation("cheap-p", 1.5),
                allocation("small-p", 0.5),
            ],
            inference: Ok(None),
        });
        let records = parse(
            "workload,start,end,results,verified\n\
eval/Job/big,2026-12-02T11:00:00Z,2026-12-02T12:00:00Z,1000,990\n\
eval/Job/cheap,2026-12-02T11:00:00Z,2026-12-02T12:00:00Z,1000,990\n\
eval/Job/small,2026-12-02T11:00:00Z,2026-12-02T12:00:00Z,1000,900\n",
            "outcomes.csv",
        );
        let counters = BTreeMap::new();
        let inputs = CostInputs {
            window,
            opencost: Some(&data),
            records: Some(&records),
            counters: &counters,
            counter_source: None,
        };
        let c = cost(&report, &objects, &cfg, &inputs).unwrap();
        let w = |n: &str| {
            c.workloads
                .iter()
                .find(|r| r.name == format!("eval/Job/{n}"))
                .unwrap()
        };
        let big = w("big");
        assert_eq!(format!("{:.2}", big.cost_per_1000.unwrap()), "2.02");
        assert_eq!(big.verified_per_hour, Some(990.0));
        assert_eq!(big.suitable, Some(true));
        let cheap = w("cheap");
        assert_eq!(format!("{:.2}", cheap.cost_per_1000.unwrap()), "1.52");
        assert_eq!(cheap.suitable, Some(true));
        let small = w("small");
        assert_eq!(small.pass_rate, Some(0.9));
        assert_eq!(small.suitable, Some(false), "unsuitable however cheap");
        assert!(small.cost_per_1000.unwrap() < cheap.cost_per_1000.unwrap());
        assert_eq!(c.total_cost, Some(4.0));
    }

    #[test]
    fn an_outside_cost_alone_does_not_make_a_cost_known() {
        let text = [job("seen"), job("unseen")].concat();
        let objects = read_str(&text, "fleet.yaml").unwrap();
        let cfg = Config::parse(
            "cost:\n  external:\n  - {name: api, per_hour: 2, workload: eval/Job/unseen}\n",
            "c",
        )
        .unwrap();
        let report = inventory(&objects, &cfg, vec![]).unwrap();
        let window = Window::ending(
            Timestamp::parse("2026-12-02T12:00:00Z").unwrap(),
            std::time::Duration::from_secs(3600),
        );
        let data = Ok(CostData {
            coverage: crate::live::opencost::Coverage {
                spans: vec![(window.start, window.end)],
                undated: 0,
            },
            source: "x".into(),
            allocations: vec![allocation("seen-p", 1.0)],
            inference: Ok(None),
        });
        let counters = BTreeMap::new();
        let inputs = CostInputs {
            window,
            opencost: Some(&data),
            records: None,
            counters: &counters,
            counter_source: None,
        };
        let c = cost(&report, &objects, &cfg, &inputs).unwrap();
        let unseen = c
            .workloads
            .iter()
            .find(|r| r.name == "eval/Job/unseen")
            .unwrap();
        assert_eq!(unseen.total_cost, None, "{unseen:?}");
        assert_eq!(unseen.breakdown.external, Some(2.0));
        assert!(unseen.unknown["total_cost"].contains("only its outside cost"));
        assert_eq!(c.total_cost, Some(3.0));
    }

    #[test]
    fn below_the_minimum_sample_only_the_interval() {
        let text = job("tiny");
        let objects = read_str(&text, "fleet.yaml").unwrap();
        let cfg = Config::default();
        let report = inventory(&objects, &cfg, vec![]).unwrap();
        let window = Window::ending(
            Timestamp::parse("2026-12-02T12:00:00Z").unwrap(),
            std::time::Duration::from_secs(3600),
        );
        let data = Ok(CostData {
            coverage: crate::live::opencost::Coverage {
                spans: vec![(window.start, window.end)],
                undated: 0,
            },
            source: "x".into(),
            allocations: vec![allocation("tiny-p", 1.0)],
            inference: Ok(None),
        });
        // 10 of 10 reviewed: below the minimum sample of 30.
        let records = parse(
            "{\"workload\":\"eval/Job/tiny\",\"start\":\"2026-12-02T11:00:00Z\",\"end\":\"2026-12-02T12:00:00Z\",\"results\":100,\"on_time\":100,\"sample\":10,\"sample_passed\":10}\n",
            "o.jsonl",
        );
        let counters = BTreeMap::new();
        let inputs = CostInputs {
            window,
            opencost: Some(&data),
            records: Some(&records),
            counters: &counters,
            counter_source: None,
        };
        let c = cost(&report, &objects, &cfg, &inputs).unwrap();
        let r = &c.workloads[0];
        assert_eq!(r.verified_outcomes, None);
        assert_eq!(r.cost_per_1000, None);
        assert!(r.cost_per_1000_interval.is_some());
        assert!(r.unknown["verified_outcomes"].contains("below the minimum of 30"));
        assert_eq!(r.sample, Some(10));
        // 10 of 10, but the interval's low end (0.72) is below 0.98: not known to be suitable.
        assert_eq!(r.suitable, None);
    }

    #[test]
    fn wilson_matches_the_reference() {
        let (lo, hi) = wilson(188, 200).unwrap();
        assert!(
            (lo - 0.898).abs() < 0.0005 && (hi - 0.965).abs() < 0.0005,
            "{lo} {hi}"
        );
        assert_eq!(wilson(0, 0), None);
        let (lo, hi) = wilson(0, 10).unwrap();
        assert_eq!(lo, 0.0);
        assert!(hi > 0.2 && hi < 0.35, "{hi}");
        let (lo, hi) = wilson(10, 10).unwrap();
        assert!(lo > 0.65 && hi == 1.0, "{lo}");
    }

    #[test]
    fn cost_per_outcome_interval_from_the_reference() {
        // $1000 for 10,000 on-time outcomes at 188/200: $0.106, [$0.104, $0.111] per outcome.
        let mut row = CostRow {
            total_cost: Some(1000.0),
            verified_outcomes: Some(10_000.0 * 0.94),
            verified_interval: {
                let (lo, hi) = wilson(188, 200).unwrap();
                Some([10_000.0 * lo, 10_000.0 * hi])
            },
            ..CostRow::default()
        };
        per_hour_and_cost(&mut row, 1.0);
        let per = row.cost_per_1000.unwrap() / 1000.0;
        let [lo, hi] = row.cost_per_1000_interval.unwrap();
        assert!((per - 0.106).abs() < 0.0005, "{per}");
        assert!((lo / 1000.0 - 0.104).abs() < 0.0005, "{lo}");
        assert!((hi / 1000.0 - 0.111).abs() < 0.0005, "{hi}");
    }
}
