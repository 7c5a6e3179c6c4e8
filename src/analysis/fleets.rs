//! Several clusters, one report: each cluster's fleet section, and their total.
//!
//! Clusters are analysed one by one (a pod cannot be scheduled across clusters, and names repeat
//! between them), then added up: GPU tiers and counts are summed, tenants and product lines merge
//! by name, workloads, namespaces, routes and excluded nodes are listed with their cluster. The
//! total's shortage is the worst of the clusters' (capacity before placement before fits).

use std::collections::BTreeMap;

use crate::report::*;
use crate::util::sum::{self, Named, Overflow};

use super::inventory::{idle_rows, order_namespaces, ratio};

fn worst(a: ShortageKind, b: ShortageKind) -> ShortageKind {
    let rank = |k: ShortageKind| match k {
        ShortageKind::Unknown => 4,
        ShortageKind::Capacity => 3,
        ShortageKind::Placement => 2,
        ShortageKind::Quota => 2,
        ShortageKind::Fits => 1,
        ShortageKind::None => 0,
    };
    if rank(b) > rank(a) { b } else { a }
}

/// Adds per-cluster reports up; `sources` describes the whole input.
/// Every sum is checked: a total over clusters that overflows is an [`Overflow`].
pub fn combine(reports: Vec<(String, Report)>, sources: Vec<String>) -> Result<Report, Overflow> {
    const ALL: &str = "the clusters together";
    // `acc += n`, checked, naming the figure.
    let add = |acc: &mut u64, n: u64, what: &str| sum::add_to(acc, n).named(ALL, what);
    let add_opt = |acc: Option<u64>, n: Option<u64>, what: &str| {
        acc.zip(n)
            .map(|(a, b)| sum::add(a, b).named(ALL, what))
            .transpose()
    };
    let mut gpus = FleetGpus {
        used: Some(0),
        ..FleetGpus::default()
    };
    let mut unknown = BTreeMap::new();
    let mut rows_unknown = BTreeMap::new();
    let (mut gpu_nodes, mut public_routes) = (0, 0);
    let mut excluded = Vec::new();
    let mut other: BTreeMap<String, OtherGpuRow> = BTreeMap::new();
    let mut shortage = Shortage {
        kind: ShortageKind::None,
        free_placeable: 0,
        pending: 0,
        largest_free_block: 0,
        unplaceable: Vec::new(),
        summary: String::new(),
        next_step: None,
        quota: None,
    };
    let mut summaries = Vec::new();
    let (mut namespaces, mut workloads, mut graphs, mut routes, mut unattributed) =
        (vec![], vec![], vec![], vec![], vec![]);
    let mut equivalents = Some(0.0);
    let mut tenants: BTreeMap<String, TenantRow> = BTreeMap::new();
    let mut lines: BTreeMap<Option<String>, ProductLineRow> = BTreeMap::new();
    let mut clusters = Vec::new();
    let mut incomplete = Vec::new();
    let mut metrics_source = None;
    let mut partial: BTreeMap<String, String> = BTreeMap::new();
    let mut no_metrics_nodes = Vec::new();
    let mut unknown_gpus = Vec::new();
    let mut models: BTreeMap<String, ModelRow> = BTreeMap::new();
    let mut dra = None;
    let mut queues = Vec::new();

    for (name, r) in reports {
        let f = &r.fleet;
        super::dra::merge(&mut dra, f.dra.as_ref(), &name)?;
        add(&mut gpu_nodes, f.gpu_nodes, "GPU nodes")?;
        add(&mut public_routes, f.public_routes, "public routes")?;
        add(&mut gpus.capacity, f.gpus.capacity, "GPU capacity")?;
        add(
            &mut gpus.allocatable,
            f.gpus.allocatable,
            "allocatable GPUs",
        )?;
        add(&mut gpus.placeable, f.gpus.placeable, "placeable GPUs")?;
        add(&mut gpus.requested, f.gpus.requested, "GPUs requested")?;
        add(&mut gpus.pending, f.gpus.pending, "GPUs pending")?;
        add(&mut gpus.queued, f.gpus.queued, "GPUs queued")?;
        gpus.used = add_opt(gpus.used, f.gpus.used, "GPUs used")?;
        equivalents = equivalents.zip(f.gpu_equivalents_used).map(|(a, b)| a + b);
        // Every cluster's reason, not the last one's.
        for (map, from) in [(&mut unknown, &f.unknown), (&mut rows_unknown, &r.unknown)] {
            for (k, why) in from {
                let e: &mut String = map.entry(k.clone()).or_default();
                if !e.is_empty() {
                    e.push_str("; ");
                }
                e.push_str(&format!("{name}: {why}"));
            }
        }
        for (k, why) in &f.partial {
            let e = partial.entry(k.clone()).or_default();
            if !e.is_empty() {
                e.push_str("; ");
            }
            e.push_str(&format!("{name}: {why}"));
        }
        no_metrics_nodes.extend(f.no_metrics_nodes.iter().cloned().map(|mut n| {
            n.node = format!("{name}/{}", n.node);
            n
        }));
        unknown_gpus.extend(f.unknown_gpus.iter().cloned().map(|mut g| {
            g.node = format!("{name}/{}", g.node);
            g
        }));
        metrics_source = metrics_source.or(f.metrics_source.clone());
        excluded.extend(f.excluded_nodes.iter().cloned().map(|mut n| {
            n.node = format!("{name}/{}", n.node);
            n
        }));
        for m in &f.models {
            let e = models.entry(m.model.clone()).or_insert(ModelRow {
                model: m.model.clone(),
                nodes: 0,
                capacity: 0,
                allocatable: 0,
                placeable: 0,
                requested: 0,
                pending: 0,
                queued: 0,
            });
            add(&mut e.queued, m.queued, "GPUs queued")?;
            add(&mut e.nodes, m.nodes, "GPU nodes")?;
            add(&mut e.capacity, m.capacity, "GPU capacity")?;
            add(&mut e.allocatable, m.allocatable, "allocatable GPUs")?;
            add(&mut e.placeable, m.placeable, "placeable GPUs")?;
            add(&mut e.requested, m.requested, "GPUs requested")?;
            add(&mut e.pending, m.pending, "GPUs pending")?;
        }
        for o in &f.other_gpus {
            let e = other.entry(o.resource.clone()).or_insert(OtherGpuRow {
                resource: o.resource.clone(),
                capacity: 0,
                allocatable: 0,
                requested: 0,
                pending: 0,
                queued: 0,
                used: o.used.map(|_| 0),
                gpu_equivalents: o.gpu_equivalents.map(|_| Some(0.0)),
                note: o.note.clone(),
            });
            if let (Some(e), Some(add)) = (&mut e.gpu_equivalents, o.gpu_equivalents) {
                *e = e.zip(add).map(|(a, b)| a + b);
            }
            add(&mut e.capacity, o.capacity, "GPU capacity")?;
            add(&mut e.allocatable, o.allocatable, "allocatable GPUs")?;
            add(&mut e.requested, o.requested, "GPUs requested")?;
            add(&mut e.pending, o.pending, "GPUs pending")?;
            add(&mut e.queued, o.queued, "GPUs queued")?;
            e.used = add_opt(e.used, o.used, "GPUs used")?;
        }
        shortage.kind = worst(shortage.kind, f.shortage.kind);
        add(
            &mut shortage.free_placeable,
            f.shortage.free_placeable,
            "free placeable GPUs",
        )?;
        add(&mut shortage.pending, f.shortage.pending, "GPUs pending")?;
        shortage.largest_free_block = shortage
            .largest_free_block
            .max(f.shortage.largest_free_block);
        shortage
            .unplaceable
            .extend(f.shortage.unplaceable.iter().cloned().map(|mut p| {
                p.namespace = format!("{name}/{}", p.namespace);
                p
            }));
        summaries.push(format!("{name}: {}", f.shortage.summary));
        unattributed.extend(f.unattributed_busy.iter().cloned().map(|mut u| {
            u.node = format!("{name}/{}", u.node);
            u
        }));
        namespaces.extend(r.namespaces.iter().cloned().map(|mut n| {
            n.name = format!("{name}/{}", n.name);
            n
        }));
        for mut w in r.workloads.iter().cloned() {
            w.cluster = Some(name.clone());
            workloads.push(w);
        }
        for mut g in r.graphs.iter().cloned() {
            g.cluster = Some(name.clone());
            graphs.push(g);
        }
        queues.extend(r.queues.iter().cloned().map(|mut q| {
            q.queue = format!("{name}/{}", q.queue);
            q
        }));
        routes.extend(r.routes.iter().cloned().map(|mut x| {
            x.objects = x.objects.iter().map(|o| format!("{name}/{o}")).collect();
            x
        }));
        for t in &r.tenants {
            let e = tenants.entry(t.name.clone()).or_insert_with(|| TenantRow {
                name: t.name.clone(),
                gpus_requested: 0,
                gpus_pending: 0,
                gpus_queued: 0,
                queues: None,
                gpus_used: Some(0),
                gpu_equivalents_used: Some(0.0),
                gpus_declared: Some(0),
                share: None,
                product_lines: vec![],
                namespaces: vec![],
                workloads: 0,
                public_routes: 0,
                contacts: vec![],
                gpus_per_week: Column::NotAsked,
            });
            add(&mut e.gpus_requested, t.gpus_requested, "GPUs requested")?;
            add(&mut e.gpus_pending, t.gpus_pending, "GPUs pending")?;
            add(&mut e.gpus_queued, t.gpus_queued, "GPUs queued")?;
            e.queues = super::queues::merge_tenant(e.queues.take(), t.queues.as_ref(), &name);
            e.gpus_used = add_opt(e.gpus_used, t.gpus_used, "GPUs used")?;
            e.gpu_equivalents_used = e
                .gpu_equivalents_used
                .zip(t.gpu_equivalents_used)
                .map(|(a, b)| a + b);
            e.gpus_declared = add_opt(e.gpus_declared, t.gpus_declared, "GPUs declared")?;
            e.product_lines.extend(t.product_lines.iter().cloned());
            e.namespaces
                .extend(t.namespaces.iter().map(|n| format!("{name}/{n}")));
            add(&mut e.workloads, t.workloads, "workloads")?;
            add(&mut e.public_routes, t.public_routes, "public routes")?;
            e.contacts.extend(t.contacts.iter().cloned());
            e.contacts.sort();
            e.contacts.dedup();
        }
        for p in &r.product_lines {
            let e = lines
                .entry(p.name.clone())
                .or_insert_with(|| ProductLineRow {
                    name: p.name.clone(),
                    gpus_requested: 0,
                    gpus_pending: 0,
                    share: None,
                    tenants: vec![],
                    workloads: 0,
                });
            add(&mut e.gpus_requested, p.gpus_requested, "GPUs requested")?;
            add(&mut e.gpus_pending, p.gpus_pending, "GPUs pending")?;
            e.tenants.extend(p.tenants.iter().cloned());
            add(&mut e.workloads, p.workloads, "workloads")?;
        }
        incomplete.extend(r.incomplete.iter().cloned().map(|mut i| {
            i.resource = format!("{name}: {}", i.resource);
            i
        }));
        clusters.push(ClusterSection {
            name,
            complete: r.complete,
            fleet: r.fleet,
        });
    }
    if gpus.used.is_none() || unknown.contains_key("gpus.used") {
        gpus.used = None;
        equivalents = None;
    }
    shortage.summary = summaries.join("; ");

    let mut tenants: Vec<TenantRow> = tenants
        .into_values()
        .map(|mut t| {
            t.share = ratio(t.gpus_requested, gpus.requested);
            t.product_lines.sort();
            t.product_lines.dedup();
            if gpus.used.is_none() {
                t.gpus_used = None;
                t.gpu_equivalents_used = None;
            }
            t
        })
        .collect();
    tenants.sort_by(|a, b| {
        b.gpus_requested
            .cmp(&a.gpus_requested)
            .then_with(|| a.name.cmp(&b.name))
    });
    let mut product_lines: Vec<ProductLineRow> = lines
        .into_values()
        .map(|mut p| {
            p.share = ratio(p.gpus_requested, gpus.requested);
            p.tenants.sort();
            p.tenants.dedup();
            p
        })
        .collect();
    product_lines.sort_by(|a, b| {
        b.gpus_requested
            .cmp(&a.gpus_requested)
            .then_with(|| a.name.cmp(&b.name))
    });
    let by_gpus = |a: &WorkloadRow, b: &WorkloadRow| {
        b.gpus
            .cmp(&a.gpus)
            .then(b.gpus_pending.cmp(&a.gpus_pending))
            .then_with(|| {
                (&a.cluster, &a.namespace, &a.kind, &a.name).cmp(&(
                    &b.cluster,
                    &b.namespace,
                    &b.kind,
                    &b.name,
                ))
            })
    };
    workloads.sort_by(by_gpus);
    graphs.sort_by(by_gpus);
    let top3_share = order_namespaces(&mut namespaces)?;
    let idle = idle_rows(&tenants);
    Ok(Report {
        schema: SCHEMA,
        kind: Kind::Inventory,
        sources,
        complete: incomplete.is_empty(),
        incomplete,
        unknown: rows_unknown.into(),
        fleet: Fleet {
            intent_coverage: super::inventory::intent_coverage(workloads.iter(), |r| r.gpus),
            gpu_nodes,
            utilisation: ratio(gpus.requested, gpus.placeable),
            // Set by the caller, which has the threshold (the tenants are merged below).
            nearly_full: None,
            gpus,
            unknown: unknown.into(),
            partial: partial.into(),
            shortage,
            excluded_nodes: excluded,
            gpu_namespaces: sum::count(namespaces.len()),
            top3_namespace_share: top3_share,
            public_routes,
            other_gpus: other.into_values().collect(),
            models: super::nodes::by_capacity(models.into_values().collect()),
            metrics_source,
            // Several clusters are read without a metrics source (`--prometheus` is one cluster's).
            metrics_scope: None,
            no_metrics_nodes,
            unknown_gpus,
            gpu_equivalents_used: equivalents,
            unattributed_busy: unattributed,
            dra,
        },
        namespaces,
        tenants,
        product_lines,
        workloads,
        graphs,
        routes,
        idle,
        queues,
        clusters,
        drift: None,
        cost: None,
        provenance: None,
        headroom: None,
        deadlines: None,
        compare: None,
        nodes: None,
    })
}
