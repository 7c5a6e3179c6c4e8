//! OpenCost's allocations, attributed: each pod's cost to the live workload it belongs to (the
//! fleet model's owner walk), pods of no live workload to their namespace, shared namespaces set
//! aside to be spread; then the idle and shared costs spread by the stated rules and the costs
//! outside OpenCost added once.

use std::collections::{BTreeMap, HashMap};

use super::inputs::plus;
use crate::analysis::live::LiveFleet;
use crate::config::Config;
use crate::k8s::types::Labels;
use crate::live::opencost::{Allocation, Costs, sanitize_label};
use crate::report::cost::{Breakdown, CostRow, UnassignedCost};

/// Where one allocation's cost goes.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) enum Target {
    /// A live workload (its index in the fleet model).
    Workload(usize),
    /// A namespace's pods of no live workload.
    Other(String),
    /// A shared namespace's pods, spread later.
    Shared,
}

/// Costs summed for one target; a figure unknown in any part is unknown.
#[derive(Debug, Clone)]
pub(super) struct Acc {
    pub(super) costs: Costs,
    pub(super) gpu_hours: Option<f64>,
    pub(super) idle: Option<f64>,
    pub(super) shared: Option<f64>,
    pub(super) external: Option<f64>,
    /// Why the total is unknown.
    pub(super) why: Option<String>,
    /// OpenCost gave at least one allocation for it (an outside cost alone makes an entry too).
    pub(super) seen: bool,
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

impl Acc {
    pub(super) fn add(&mut self, a: &Allocation) {
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
    pub(super) fn total(&self) -> Option<f64> {
        let t = plus(self.costs.total, self.idle)?;
        plus(plus(Some(t), self.shared), self.external)
    }
}

/// The index from OpenCost's pod and controller names to the fleet's live workloads.
pub(super) struct Index {
    /// (namespace, lower-case kind, name) → the workload's index in the fleet.
    by_object: HashMap<(String, String, String), usize>,
}

impl Index {
    pub(super) fn new(fleet: &LiveFleet<'_>) -> Index {
        let mut by_object = HashMap::new();
        for (o, w) in fleet.objects.iter().zip(&fleet.owner_of) {
            if let Some(w) = w {
                by_object.insert(
                    (
                        o.namespace().to_string(),
                        o.kind.to_lowercase(),
                        o.meta.name.clone(),
                    ),
                    *w,
                );
            }
        }
        // A root that OpenCost names as the controller itself (a Deployment, a Job).
        for (i, w, _) in fleet.each() {
            by_object
                .entry((
                    w.id.namespace.clone(),
                    w.id.kind.to_lowercase(),
                    w.id.name.clone(),
                ))
                .or_insert(i);
        }
        Index { by_object }
    }

    pub(super) fn find(&self, a: &Allocation) -> Option<usize> {
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

pub(super) type Get = fn(&Costs) -> Option<f64>;

/// The resources OpenCost's idle cost is split by.
pub(super) const RESOURCES: [(&str, Get); 3] =
    [("GPU", |c| c.gpu), ("CPU", |c| c.cpu), ("RAM", |c| c.ram)];

/// The tenancy labels of an allocation of no live workload, from OpenCost's sanitised pod and
/// namespace labels, under the keys the configuration names (a workload label wins over a
/// namespace label).
pub(super) fn tenancy_labels(cfg: &Config, a: &Allocation) -> Labels {
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

/// A row's cost from what was summed for it.
pub(super) fn fill_cost(row: &mut CostRow, a: &Acc) {
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

/// What OpenCost's allocations came to: per target, and the idle cost, with the tenancy labels
/// OpenCost gave for the namespaces of no live workload.
#[derive(Default)]
pub(super) struct Allocated {
    pub(super) accs: BTreeMap<Target, Acc>,
    pub(super) idle: Acc,
    pub(super) other_labels: BTreeMap<String, Labels>,
}

/// Each allocation of `allocations` to its target.
pub(super) fn attribute(
    fleet: &LiveFleet<'_>,
    cfg: &Config,
    allocations: &[Allocation],
    shared_ns: &std::collections::BTreeSet<&str>,
) -> Allocated {
    let index = Index::new(fleet);
    let mut out = Allocated::default();
    for a in allocations {
        if a.is_idle() {
            out.idle.add(a);
            continue;
        }
        let ns = a.namespace.clone().unwrap_or_else(|| a.key.clone());
        let target = if shared_ns.contains(ns.as_str()) {
            Target::Shared
        } else {
            match index.find(a) {
                Some(i) => Target::Workload(i),
                None => {
                    out.other_labels
                        .entry(ns.clone())
                        .or_insert_with(|| tenancy_labels(cfg, a));
                    Target::Other(ns)
                }
            }
        };
        out.accs.entry(target).or_default().add(a);
    }
    out
}

/// Spreads the idle cost over the allocations (`cost.idle: spread`) or keeps it apart, and states
/// the rule; what goes to nobody is pushed to `unassigned`.
pub(super) fn spread_idle(
    accs: &mut BTreeMap<Target, Acc>,
    idle: &Acc,
    rule: crate::config::IdleRule,
    rules: &mut Vec<String>,
    unassigned: &mut Vec<UnassignedCost>,
) {
    use crate::config::IdleRule;
    use crate::util::number::money;
    let idle_total = idle.costs.total;
    match rule {
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
            if let Some(u) = unspread.filter(|u| *u > 0.0) {
                unassigned.push(UnassignedCost {
                    what: "idle with no allocation of its resource".into(),
                    cost: Some(u),
                });
            }
        }
        IdleRule::Separate => {
            rules.push(format!(
                "Idle cost ({}) is kept as its own line, not assigned to anyone (cost.idle: separate).",
                money(idle_total)
            ));
            if idle_total != Some(0.0) {
                unassigned.push(UnassignedCost {
                    what: "idle (cost.idle: separate)".into(),
                    cost: idle_total,
                });
            }
        }
    }
}

/// Spreads the cost of the shared namespaces (`names`, costing `shared_total`) over the other
/// targets by GPU-hours, and states the rule; what goes to nobody is pushed to `unassigned`.
pub(super) fn spread_shared(
    accs: &mut BTreeMap<Target, Acc>,
    names: &str,
    shared_total: Option<f64>,
    rules: &mut Vec<String>,
    unassigned: &mut Vec<UnassignedCost>,
) {
    use crate::util::number::money;
    let hours_total: Option<f64> = accs
        .values()
        .map(|a| a.gpu_hours)
        .try_fold(0.0, |s, h| Some(s + h?));
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
        (Some(s), Some(_)) => {
            rules.push(format!(
                "The cost of the shared namespaces {names} ({}) could not be spread: nothing else used GPU-hours; it is counted in the total only.",
                money(Some(s))
            ));
            unassigned.push(UnassignedCost {
                what: format!("shared namespaces {names}: nothing to spread over"),
                cost: Some(s),
            });
        }
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

/// Adds the costs outside OpenCost (`cost.external`) over `hours`, each once, to the workload or
/// tenant it names, and states each; one that names no live workload and no tenant is pushed to
/// `unassigned`. Returns what went to tenants and the total.
pub(super) fn add_external(
    accs: &mut BTreeMap<Target, Acc>,
    fleet: &LiveFleet<'_>,
    external: &[crate::config::ExternalCost],
    hours: f64,
    rules: &mut Vec<String>,
    unassigned: &mut Vec<UnassignedCost>,
) -> (BTreeMap<String, f64>, f64) {
    use crate::util::number::money;
    let mut tenant_external: BTreeMap<String, f64> = BTreeMap::new();
    let mut external_total = 0.0;
    for e in external {
        let amount = e.per_hour * hours;
        external_total += amount;
        let live = e.workload.as_ref().and_then(|w| {
            fleet
                .workloads
                .list
                .iter()
                .position(|x| &x.id.to_string() == w)
        });
        let whom = match (&e.workload, live, &e.tenant) {
            (Some(_), Some(i), _) => {
                let a = accs.entry(Target::Workload(i)).or_default();
                a.external = plus(a.external, Some(amount));
                e.workload.clone().unwrap_or_default()
            }
            (Some(w), None, _) => {
                unassigned.push(UnassignedCost {
                    what: format!("{} ({w} is not live)", e.name),
                    cost: Some(amount),
                });
                format!("{w} (not a live workload: in the total only)")
            }
            (None, _, Some(t)) => {
                *tenant_external.entry(t.clone()).or_default() += amount;
                format!("tenant {t}")
            }
            (None, _, None) => {
                unassigned.push(UnassignedCost {
                    what: format!("{} (names no one)", e.name),
                    cost: Some(amount),
                });
                "nobody".into()
            }
        };
        rules.push(format!(
            "Outside OpenCost: {} at {}/h ({} over the window) to {whom}, counted once.",
            e.name,
            money(Some(e.per_hour)),
            money(Some(amount))
        ));
    }
    (tenant_external, external_total)
}
