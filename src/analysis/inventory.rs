//! The inventory: the four fleet counts, tenants, workloads, graphs and routes, as one [`Report`]
//! built from the live fleet's model ([`super::live::LiveFleet`]).
//!
//! Pure: the model and config in, report out. Every pod is looked at once; nodes, namespaces and
//! workloads are indexed once; nothing here reads a clock or the network. The GPUs requested by
//! workloads add up to the fleet's `requested` by construction: both are sums over the same bound,
//! non-terminal GPU pods, and every such pod belongs to exactly one workload. Every sum is checked
//! ([`crate::util::sum`]): a total that does not fit in 64 bits is an [`Overflow`] naming what was
//! being added up, never a wrapped number.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::config::Config;
use crate::k8s::gpus::{GpuResource, Gpus};
use crate::k8s::object::Object;
use crate::report::*;
use crate::util::sum::{self, Named, Overflow};
use crate::workload::Workload;
use crate::workload::owners::{self, PodState};

use super::live::{About, LiveFleet};
use super::nodes::{self, GpuNode};
use super::tenancy::Resolver;
use super::usage::Metrics;

pub use super::live::NO_METRICS;

pub fn inventory(
    objects: &[Object],
    cfg: &Config,
    sources: Vec<String>,
) -> Result<Report, Overflow> {
    inventory_with_metrics(objects, cfg, sources, &Metrics::NotConfigured)
}

/// The inventory with GPU activity from a metrics source (or the reason it is unknown).
pub fn inventory_with_metrics(
    objects: &[Object],
    cfg: &Config,
    sources: Vec<String>,
    metrics: &Metrics,
) -> Result<Report, Overflow> {
    report(&LiveFleet::read(objects, cfg, metrics)?, cfg, sources)
}

/// The inventory report of a fleet: its figures, and the rows of its tenants, namespaces, product
/// lines, workloads, graphs and routes, built once from the model.
pub fn report(
    fleet: &LiveFleet<'_>,
    cfg: &Config,
    sources: Vec<String>,
) -> Result<Report, Overflow> {
    const FLEET: &str = "the fleet";
    let (objects, nodes, workloads) = (fleet.objects, &fleet.nodes, &fleet.workloads);
    let (usage, tenants, routes) = (&fleet.usage, &fleet.tenancy, &fleet.routes);

    // Fleet tiers.
    let mut gpus = FleetGpus::default();
    let mut excluded = Vec::new();
    for n in nodes.values() {
        sum::add_to(&mut gpus.capacity, n.capacity).named(FLEET, "GPU capacity")?;
        sum::add_to(&mut gpus.allocatable, n.allocatable).named(FLEET, "allocatable GPUs")?;
        sum::add_to(&mut gpus.placeable, n.placeable_gpus()).named(FLEET, "placeable GPUs")?;
        if n.placeable_gpus() < n.capacity {
            excluded.push(ExcludedNode {
                node: n.name.to_string(),
                reason: n.reasons.join(", "),
                reasons: n.reasons.clone(),
                capacity: n.capacity,
                placeable: n.placeable_gpus(),
            });
        }
    }

    // Requested and pending, per node and per namespace.
    let mut on_node: HashMap<&str, u64> = HashMap::new();
    let mut per_ns: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    let mut other_req = Gpus::default();
    let mut other_pend = Gpus::default();
    let mut other_queued = Gpus::default();
    let mut pending_by_model: BTreeMap<String, u64> = BTreeMap::new();
    for p in &workloads.pods {
        let Some(o) = objects.get(p.object) else {
            continue;
        };
        let ns = o.namespace();
        match p.state {
            PodState::Bound => {
                sum::add_to(&mut gpus.requested, p.gpus.whole).named(FLEET, "GPUs requested")?;
                other_req.add(&p.gpus).named(FLEET, "GPUs requested")?;
                if let Some(n) = p.node(objects) {
                    sum::add_to(on_node.entry(n).or_default(), p.gpus.whole)
                        .named(format_args!("node {n}"), "GPUs requested")?;
                }
                sum::add_to(&mut per_ns.entry(ns).or_default().0, p.gpus.whole)
                    .named(format_args!("namespace {ns}"), "GPUs requested")?;
            }
            PodState::Pending => {
                sum::add_to(&mut gpus.pending, p.gpus.whole).named(FLEET, "GPUs pending")?;
                other_pend.add(&p.gpus).named(FLEET, "GPUs pending")?;
                sum::add_to(&mut per_ns.entry(ns).or_default().1, p.gpus.whole)
                    .named(format_args!("namespace {ns}"), "GPUs pending")?;
                if let [model] = super::pins::of_object(o).as_slice() {
                    sum::add_to(
                        pending_by_model.entry(model.clone()).or_default(),
                        p.gpus.whole,
                    )
                    .named(format_args!("GPU model {model}"), "GPUs pending")?;
                }
            }
            // Queued whole GPUs are counted per workload below (a job waiting for quota has no
            // pod); a queued pod's shares and slices are counted here, on their own lines.
            PodState::Queued => {
                other_queued.add(&p.gpus).named(FLEET, "GPUs queued")?;
            }
            PodState::Terminal => {}
        }
    }
    for w in &workloads.list {
        sum::add_to(&mut gpus.queued, w.queued.whole).named(FLEET, "GPUs queued")?;
    }

    let mut shortage =
        super::shortage::shortage(objects, nodes, &on_node, &workloads.pods, &workloads.list)?;
    shortage.next_step = super::placement::next_step(fleet, &shortage.unplaceable);
    let mut models = nodes::models(nodes, &on_node, &pending_by_model)?;
    let queued_by_model =
        super::queues::diagnose::queued_by_model(objects, workloads, &fleet.queues);
    for m in &mut models {
        m.queued = queued_by_model.get(&m.model).copied().unwrap_or(0);
    }
    super::queues::diagnose::diagnose(
        &fleet.admission,
        &fleet.queues,
        &workloads.list,
        &mut shortage,
        &models,
        &queued_by_model,
        gpus.queued,
    );

    // Workload rows.
    let rows: Vec<WorkloadRow> = fleet
        .each()
        .map(|(i, w, a)| {
            let mut row = workload_row(w, a)?;
            if let Some(q) = fleet.queues.waits.get(&i) {
                row.queue = q.queue.clone();
                row.queue_state = q.state;
                row.queue_never = q.never.clone();
            }
            Ok(row)
        })
        .collect::<Result<_, Overflow>>()?;

    // Namespaces.
    let mut namespaces: Vec<NamespaceRow> = per_ns
        .iter()
        .map(|(ns, (req, pend))| NamespaceRow {
            name: ns.to_string(),
            tenant: tenants.tenant(&Default::default(), ns),
            gpus_requested: *req,
            gpus_pending: *pend,
        })
        .collect();
    let top3_share = order_namespaces(&mut namespaces)?;

    let mut tenant_rows = tenant_rows(&rows, gpus.requested, &routes.per_tenant, tenants)?;
    super::queues::tenant_columns(&mut tenant_rows, &fleet.queues, &fleet.admission);
    let product_lines = product_line_rows(&rows, gpus.requested)?;

    // A row is large: the order is found on references, and each row moves once.
    let mut order: Vec<(usize, &WorkloadRow)> = rows.iter().enumerate().collect();
    order.sort_by(|(_, a), (_, b)| {
        b.gpus
            .cmp(&a.gpus)
            .then(b.gpus_pending.cmp(&a.gpus_pending))
            .then(b.gpus_declared.cmp(&a.gpus_declared))
            .then_with(|| (&a.namespace, &a.kind, &a.name).cmp(&(&b.namespace, &b.kind, &b.name)))
    });
    let order: Vec<usize> = order.into_iter().map(|(i, _)| i).collect();
    let mut slots: Vec<Option<WorkloadRow>> = rows.into_iter().map(Some).collect();
    let workload_rows: Vec<WorkloadRow> = order
        .into_iter()
        .filter_map(|i| slots.get_mut(i).and_then(Option::take))
        .collect();
    let graphs = workload_rows
        .iter()
        .filter(|w| w.kind == "DynamoGraphDeployment")
        .cloned()
        .collect();

    let mut unknown = Unknown::default();
    let mut partial = Unknown::default();
    if let Some(why) = &fleet.used_unknown {
        unknown.set("gpus.used", why.clone());
    }
    if let Some(u) = usage {
        u.note(&mut unknown, &mut partial);
    }
    let metrics_source = fleet.metrics_source.clone();
    gpus.used = usage.as_ref().map(|u| u.fleet.busy);
    let mut other_gpus = other_gpu_rows(nodes, &other_req, &other_pend, &other_queued)?;
    if let Some(u) = &usage {
        for row in &mut other_gpus {
            if let Some(profile) = row.resource.strip_prefix(crate::k8s::gpus::MIG_PREFIX) {
                row.used = Some(u.mig_busy.get(profile).copied().unwrap_or(0));
            }
        }
    }
    let idle = idle_rows(&tenant_rows);
    let (no_metrics_nodes, unknown_gpus) = usage
        .as_ref()
        .map(|u| (u.no_metrics.clone(), u.unknown_gpus.clone()))
        .unwrap_or_default();
    let dra = super::dra::fleet(objects, nodes, workloads, &mut unknown)?;
    let utilisation = ratio(gpus.requested, gpus.placeable);
    let mut nearly_full = nearly_full(utilisation, &tenant_rows, cfg.tenancy.contacts_above);
    if let Some(n) = &mut nearly_full {
        n.borrowing = fleet.queues.borrowing.clone();
    }

    let mut report = Report {
        schema: SCHEMA,
        kind: Kind::Inventory,
        sources,
        complete: true,
        // A queue whose figures could not be read: the report is incomplete, named by object and
        // field.
        incomplete: super::queues::incomplete(&fleet.admission),
        unknown: Unknown::default(),
        fleet: Fleet {
            intent_coverage: intent_coverage(workload_rows.iter(), |r| r.gpus),
            gpu_nodes: sum::count(nodes.len()),
            utilisation,
            nearly_full,
            gpus,
            unknown,
            partial,
            shortage,
            excluded_nodes: excluded,
            gpu_namespaces: sum::count(per_ns.len()),
            top3_namespace_share: top3_share,
            public_routes: sum::count(routes.rows.len()),
            other_gpus,
            models,
            metrics_source,
            metrics_scope: usage.as_ref().and_then(|u| u.scope.clone()),
            no_metrics_nodes,
            unknown_gpus,
            gpu_equivalents_used: usage.as_ref().map(|u| u.fleet.equivalents),
            unattributed_busy: usage
                .as_ref()
                .map(|u| u.unattributed.clone())
                .unwrap_or_default(),
            dra,
        },
        namespaces,
        tenants: tenant_rows,
        product_lines,
        workloads: workload_rows,
        graphs,
        routes: routes.rows.clone(),
        idle,
        queues: fleet.queues.rows.clone(),
        clusters: Vec::new(),
        drift: None,
        cost: None,
        provenance: None,
        headroom: None,
        deadlines: None,
        compare: None,
        nodes: None,
    };
    super::unread::apply(&mut report, &fleet.unread);
    Ok(report)
}

pub(crate) use crate::util::sum::ratio;

/// How many of the largest tenants the "who to call" line names.
const CALL_TENANTS: usize = 3;

/// When the fleet is at or above `threshold` utilisation: the largest tenants by GPUs requested
/// (`tenants` is sorted so), with their share and contacts — who to call when it is full.
pub fn nearly_full(
    utilisation: Option<f64>,
    tenants: &[TenantRow],
    threshold: f64,
) -> Option<NearlyFull> {
    let u = utilisation.filter(|u| *u >= threshold)?;
    Some(NearlyFull {
        utilisation: u,
        threshold,
        tenants: tenants
            .iter()
            .filter(|t| t.gpus_requested > 0)
            .take(CALL_TENANTS)
            .map(|t| CallRow {
                tenant: t.name.clone(),
                share: t.share,
                contacts: t.contacts.clone(),
            })
            .collect(),
        borrowing: Vec::new(),
    })
}

/// GPUs (as `gpus` counts them: requested live, declared in Git) of the workloads that declare
/// intent, over all of theirs.
pub(crate) fn intent_coverage<'a>(
    rows: impl Iterator<Item = &'a WorkloadRow> + Clone,
    gpus: impl Fn(&WorkloadRow) -> u64,
) -> Option<f64> {
    let all: u64 = rows.clone().map(&gpus).fold(0, u64::saturating_add);
    let declared: u64 = rows
        .filter(|r| r.intent.is_some())
        .map(&gpus)
        .fold(0, u64::saturating_add);
    ratio(declared, all)
}

/// A workload's row: its figures and shape as the report shows them.
pub(crate) fn workload_row(w: &Workload, a: &About) -> Result<WorkloadRow, Overflow> {
    let mut other = BTreeMap::new();
    let mut held = w.requested.clone();
    held.add(&w.pending)
        .named(&w.id, "the GPUs its pods request and wait for")?;
    held.add(&w.queued)
        .named(&w.id, "the GPUs its pods request and wait for")?;
    if held.shared > 0 {
        other.insert(GpuResource::Shared.to_string(), held.shared);
    }
    if held.fraction > 0 {
        other.insert(GpuResource::Fraction.to_string(), held.fraction);
    }
    for (p, n) in &held.mig {
        other.insert(GpuResource::Mig(p.clone()).to_string(), *n);
    }
    Ok(WorkloadRow {
        cluster: None,
        namespace: w.id.namespace.clone(),
        api_group: w.id.group.clone(),
        kind: w.id.kind.clone(),
        name: w.id.name.clone(),
        tenant: a.tenant.clone(),
        product_line: a.product_line.clone(),
        gpus: w.requested.whole,
        gpus_pending: w.pending.whole,
        gpus_queued: w.queued.whole,
        queue: None,
        queue_state: None,
        queue_never: None,
        gpus_declared: w.shape.declared().named(&w.id, "the GPUs it declares")?,
        roles: w.shape.roles.clone(),
        shape: super::shape_text::shape_text(&w.shape),
        shape_source: if w.shape_guessed {
            ShapeSource::Guess
        } else if w.shape_from_spec {
            ShapeSource::Spec
        } else {
            ShapeSource::Pods
        },
        gpus_used: a.used.map(|u| u.busy),
        gpu_equivalents_used: a.used.map(|u| u.equivalents),
        pods_bound: w.pods.bound,
        pods_pending: w.pods.pending,
        other_gpus: other,
        other_gpus_declared: w.shape.devices.other.clone(),
        dra: super::dra::workload(w),
        public_routes: a.public_routes,
        source: w.source.as_ref().map(ToString::to_string),
        intent: a.intent.clone(),
        intent_problems: a.intent_problems.clone(),
        intent_facts: w.intent_facts.clone(),
    })
}

/// The live GPU workloads of `objects`, as the inventory and drift see them.
pub fn live_workloads(objects: &[Object]) -> Result<Vec<Workload>, Overflow> {
    Ok(owners::build(objects)?.list)
}

fn tenant_rows(
    rows: &[WorkloadRow],
    fleet_requested: u64,
    routes: &HashMap<String, u64>,
    resolver: &Resolver<'_>,
) -> Result<Vec<TenantRow>, Overflow> {
    #[derive(Default)]
    struct Acc {
        used: Option<u64>,
        equivalents: Option<f64>,
        /// A workload's use is unknown: so is the tenant's, never a smaller sum.
        used_unknown: bool,
        req: u64,
        pend: u64,
        queued: u64,
        declared: u64,
        /// A workload's declared GPUs are unknown: so are the tenant's.
        declared_unknown: bool,
        lines: BTreeSet<String>,
        namespaces: BTreeSet<String>,
        workloads: u64,
    }
    let mut by: BTreeMap<&str, Acc> = BTreeMap::new();
    for w in rows {
        let a = by.entry(&w.tenant).or_default();
        let tenant = format_args!("tenant {}", w.tenant);
        sum::add_to(&mut a.req, w.gpus).named(tenant, "GPUs requested")?;
        sum::add_to(&mut a.pend, w.gpus_pending).named(tenant, "GPUs pending")?;
        sum::add_to(&mut a.queued, w.gpus_queued).named(tenant, "GPUs queued")?;
        match w.gpus_declared {
            Some(d) => sum::add_to(&mut a.declared, d).named(tenant, "GPUs declared")?,
            None => a.declared_unknown = true,
        }
        a.used_unknown |= w.gpus_used.is_none() || w.gpu_equivalents_used.is_none();
        if let Some(u) = w.gpus_used {
            sum::add_to(a.used.get_or_insert(0), u).named(tenant, "GPUs used")?;
        }
        *a.equivalents.get_or_insert(0.0) += w.gpu_equivalents_used.unwrap_or(0.0);
        a.lines.extend(w.product_line.clone());
        a.namespaces.insert(w.namespace.clone());
        a.workloads += 1;
    }
    let mut out: Vec<TenantRow> = by
        .into_iter()
        .map(|(name, a)| TenantRow {
            contacts: resolver.contacts(name, a.namespaces.iter().map(String::as_str)),
            name: name.to_string(),
            gpus_requested: a.req,
            gpus_pending: a.pend,
            gpus_queued: a.queued,
            queues: None,
            gpus_used: a.used.filter(|_| !a.used_unknown),
            gpu_equivalents_used: a.equivalents.filter(|_| !a.used_unknown),
            gpus_declared: Some(a.declared).filter(|_| !a.declared_unknown),
            share: ratio(a.req, fleet_requested),
            product_lines: a.lines.into_iter().collect(),
            namespaces: a.namespaces.into_iter().collect(),
            workloads: a.workloads,
            public_routes: routes.get(name).copied().unwrap_or(0),
            gpus_per_week: Column::NotAsked,
        })
        .collect();
    out.sort_by(|a, b| {
        largest_first(
            (a.gpus_requested, a.gpus_pending, &a.name),
            (b.gpus_requested, b.gpus_pending, &b.name),
        )
    });
    Ok(out)
}

/// By GPUs requested, then pending, largest first; then by name.
fn largest_first<N: Ord>(a: (u64, u64, N), b: (u64, u64, N)) -> std::cmp::Ordering {
    (b.0, b.1).cmp(&(a.0, a.1)).then_with(|| a.2.cmp(&b.2))
}

/// Sorts namespaces by GPUs requested + pending, and returns the share the top three hold.
pub(crate) fn order_namespaces(namespaces: &mut [NamespaceRow]) -> Result<Option<f64>, Overflow> {
    let demand = |n: &NamespaceRow| {
        sum::add(n.gpus_requested, n.gpus_pending).named(
            format_args!("namespace {}", n.name),
            "GPUs requested and pending",
        )
    };
    for n in namespaces.iter() {
        demand(n)?;
    }
    // Every demand was just checked, so the sort key cannot fail.
    let key = |n: &NamespaceRow| n.gpus_requested.saturating_add(n.gpus_pending);
    namespaces.sort_by(|a, b| key(b).cmp(&key(a)).then_with(|| a.name.cmp(&b.name)));
    let total = sum::sum(namespaces.iter().map(key)).named("the fleet", "GPU demand")?;
    let top = sum::sum(namespaces.iter().take(3).map(key)).named("the fleet", "GPU demand")?;
    Ok(ratio(top, total))
}

pub(crate) fn idle_rows(tenants: &[TenantRow]) -> Vec<IdleRow> {
    let mut rows: Vec<IdleRow> = tenants
        .iter()
        .filter_map(|t| {
            let used = t.gpus_used?;
            Some(IdleRow {
                tenant: t.name.clone(),
                gpus_requested: t.gpus_requested,
                gpus_used: used,
                gpus_idle: t.gpus_requested.saturating_sub(used),
            })
        })
        .collect();
    rows.sort_by(|a, b| {
        b.gpus_idle
            .cmp(&a.gpus_idle)
            .then_with(|| a.tenant.cmp(&b.tenant))
    });
    rows
}

fn product_line_rows(
    rows: &[WorkloadRow],
    fleet_requested: u64,
) -> Result<Vec<ProductLineRow>, Overflow> {
    let mut by: BTreeMap<Option<&str>, (u64, u64, BTreeSet<&str>, u64)> = BTreeMap::new();
    for w in rows {
        let a = by.entry(w.product_line.as_deref()).or_default();
        let line = format_args!(
            "product line {}",
            w.product_line.as_deref().unwrap_or("(none)")
        );
        sum::add_to(&mut a.0, w.gpus).named(line, "GPUs requested")?;
        sum::add_to(&mut a.1, w.gpus_pending).named(line, "GPUs pending")?;
        a.2.insert(&w.tenant);
        a.3 += 1;
    }
    let mut out: Vec<ProductLineRow> = by
        .into_iter()
        .map(|(name, (req, pend, tenants, n))| ProductLineRow {
            name: name.map(str::to_string),
            gpus_requested: req,
            gpus_pending: pend,
            share: ratio(req, fleet_requested),
            tenants: tenants.into_iter().map(str::to_string).collect(),
            workloads: n,
        })
        .collect();
    out.sort_by(|a, b| {
        largest_first(
            (a.gpus_requested, a.gpus_pending, &a.name),
            (b.gpus_requested, b.gpus_pending, &b.name),
        )
    });
    Ok(out)
}

fn other_gpu_rows(
    nodes: &BTreeMap<&str, GpuNode<'_>>,
    req: &Gpus,
    pend: &Gpus,
    queued: &Gpus,
) -> Result<Vec<OtherGpuRow>, Overflow> {
    let mut resources: BTreeSet<GpuResource> = BTreeSet::new();
    let mut cap = Gpus::default();
    let mut alloc = Gpus::default();
    for n in nodes.values() {
        cap.add(&n.other_capacity)
            .named("the fleet", "MIG and shared GPU capacity")?;
        alloc
            .add(&n.other_allocatable)
            .named("the fleet", "allocatable MIG and shared GPUs")?;
    }
    for g in [&cap, &alloc, req, pend, queued] {
        if g.shared > 0 {
            resources.insert(GpuResource::Shared);
        }
        if g.fraction > 0 {
            resources.insert(GpuResource::Fraction);
        }
        resources.extend(
            g.mig
                .iter()
                .filter(|(_, n)| **n > 0)
                .map(|(p, _)| GpuResource::Mig(p.clone())),
        );
    }
    Ok(resources
        .into_iter()
        .map(|r| OtherGpuRow {
            resource: r.to_string(),
            capacity: cap.get(&r),
            allocatable: alloc.get(&r),
            requested: req.get(&r),
            pending: pend.get(&r),
            queued: queued.get(&r),
            used: None,
            gpu_equivalents: (r == GpuResource::Fraction).then(|| {
                #[allow(clippy::cast_precision_loss)]
                let centi = req
                    .fraction_centi
                    .saturating_add(pend.fraction_centi)
                    .saturating_add(queued.fraction_centi) as f64;
                (req.fraction_memory == 0 && pend.fraction_memory == 0 && queued.fraction_memory == 0)
                    .then_some(centi / 100.0)
            }),
            note: (r == GpuResource::Fraction)
                .then(|| {
                    let by_memory = req
                        .fraction_memory
                        .saturating_add(pend.fraction_memory)
                        .saturating_add(queued.fraction_memory);
                    (by_memory > 0).then(|| {
                        format!(
                            "KAI GPU shares; {by_memory} given by memory (gpu-memory): their part of a GPU is known once placed"
                        )
                    })
                })
                .flatten()
                .or_else(|| (r == GpuResource::Fraction).then(|| "KAI GPU shares".to_string())),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::k8s::read::read_str;

    fn node(name: &str, gpus: u64) -> String {
        format!(
            "apiVersion: v1\nkind: Node\nmetadata: {{name: {name}, labels: {{pool: {name}}}}}\nstatus:\n  capacity: {{nvidia.com/gpu: {gpus}}}\n  allocatable: {{nvidia.com/gpu: {gpus}}}\n  conditions: [{{type: Ready, status: \"True\"}}]\n---\n"
        )
    }

    fn pod(name: &str, node: Option<&str>, gpus: u64, extra_spec: &str) -> String {
        let node = node
            .map(|n| format!("  nodeName: {n}\n"))
            .unwrap_or_default();
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: ml}}\nspec:\n{node}{extra_spec}  containers: [{{resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}}}]\n---\n"
        )
    }

    fn report(docs: &str) -> Report {
        let objs = read_str(docs, "t.yaml").unwrap();
        inventory(&objs, &Config::default(), vec![]).unwrap()
    }

    #[test]
    fn no_pending_pods_is_no_shortage() {
        let r = report(&(node("a", 8) + &pod("p", Some("a"), 4, "")));
        assert_eq!(r.fleet.shortage.kind, ShortageKind::None);
        assert_eq!(r.fleet.shortage.free_placeable, 4);
        assert_eq!(r.fleet.utilisation, Some(0.5));
    }

    #[test]
    fn pending_pods_that_fit() {
        let r = report(&(node("a", 8) + &pod("p", Some("a"), 4, "") + &pod("q", None, 4, "")));
        assert_eq!(r.fleet.shortage.kind, ShortageKind::Fits);
        assert_eq!(r.fleet.gpus.pending, 4);
    }

    #[test]
    fn capacity_problem_when_free_gpus_fall_short() {
        let r = report(&(node("a", 8) + &pod("p", Some("a"), 6, "") + &pod("q", None, 4, "")));
        assert_eq!(r.fleet.shortage.kind, ShortageKind::Capacity);
        assert!(
            r.fleet.shortage.summary.contains("short by 2"),
            "{}",
            r.fleet.shortage.summary
        );
    }

    #[test]
    fn placement_problem_from_fragmentation_and_node_selectors() {
        // 4 + 4 free, an 8-GPU pod pending: enough in total, no single node.
        let frag = node("a", 8)
            + &node("b", 8)
            + &pod("p", Some("a"), 4, "")
            + &pod("q", Some("b"), 4, "")
            + &pod("big", None, 8, "");
        let r = report(&frag);
        assert_eq!(r.fleet.shortage.kind, ShortageKind::Placement);
        assert_eq!(r.fleet.shortage.unplaceable[0].name, "big");
        assert_eq!(r.fleet.shortage.largest_free_block, 4);
        // Free room exists but only on a node the pod's selector rules out.
        let sel = node("a", 8)
            + &node("b", 8)
            + &pod("p", Some("a"), 8, "")
            + &pod("q", None, 8, "  nodeSelector: {pool: a}\n");
        assert_eq!(report(&sel).fleet.shortage.kind, ShortageKind::Placement);
        // Best fit: the 4-GPU pod goes to the 4-free node, leaving 8 free for the 8-GPU pod.
        let fit = node("a", 8)
            + &node("b", 8)
            + &pod("p", Some("a"), 4, "")
            + &pod("x", None, 8, "")
            + &pod("y", None, 4, "");
        assert_eq!(report(&fit).fleet.shortage.kind, ShortageKind::Fits);
    }

    #[test]
    fn owners_are_walked_to_the_root_and_requests_add_up() {
        let docs = r#"apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: ml, uid: d1, labels: {tenant: acme}}
spec:
  replicas: 3
  template:
    spec:
      containers: [{resources: {limits: {nvidia.com/gpu: 2}}}]
---
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: web-abc
  namespace: ml
  uid: r1
  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: web, uid: d1, controller: true}]
---
apiVersion: v1
kind: Pod
metadata:
  name: web-abc-1
  namespace: ml
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web-abc, uid: r1, controller: true}]
spec:
  nodeName: a
  containers: [{resources: {limits: {nvidia.com/gpu: 2}}}]
---
apiVersion: v1
kind: Pod
metadata:
  name: web-abc-2
  namespace: ml
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web-abc, uid: r1, controller: true}]
spec:
  containers: [{resources: {limits: {nvidia.com/gpu: 2}}}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: done, namespace: ml}
spec:
  template:
    spec:
      containers: [{resources: {limits: {nvidia.com/gpu: 8}}}]
status:
  conditions: [{type: Complete, status: "True"}]
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly, namespace: ml}
spec:
  jobTemplate:
    spec:
      parallelism: 2
      template:
        spec:
          containers: [{resources: {limits: {nvidia.com/gpu: 1}}}]
"#;
        let r = report(docs);
        let ids: Vec<(String, u64, u64, Option<u64>)> = r
            .workloads
            .iter()
            .map(|w| {
                (
                    format!("{}/{}", w.kind, w.name),
                    w.gpus,
                    w.gpus_pending,
                    w.gpus_declared,
                )
            })
            .collect();
        // The finished Job is history; the CronJob declares GPUs between runs.
        assert_eq!(
            ids,
            [
                ("Deployment/web".to_string(), 2, 2, Some(6)),
                ("CronJob/nightly".to_string(), 0, 0, Some(2))
            ]
        );
        assert_eq!(r.workloads[0].tenant, "acme");
        assert_eq!(r.workloads[0].pods_bound, 1);
        assert_eq!(
            r.tenants.iter().map(|t| t.gpus_requested).sum::<u64>(),
            r.fleet.gpus.requested
        );
    }
}
