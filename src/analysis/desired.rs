//! The desired GPU workloads: rendered objects in, report section out.
//!
//! Each app's objects go through the same workload model as the live cluster's, so a Dynamo graph
//! in Git and one in the cluster get the same shape by the same code. Desired workloads have no pods:
//! their figure is the declared shape. Tenants resolve with the repository's own Namespace objects.

use std::collections::{BTreeMap, BTreeSet};

use crate::config::Config;
use crate::desired::Rendered;
use crate::k8s::object::{Kind, Object};
use crate::report::{
    AppRow, AppStatus, ClusterOnlyTenant, ClusterRow, Desired, DesiredTenantRow,
    DesiredWorkloadRow, DuplicateRow, WithoutGpus, WorkloadRow,
};
use crate::util::sum::{self, Named, Overflow};
use crate::workload::kinds::declared_shape;
use crate::workload::{WorkloadId, owners};

use super::inventory::workload_row;
use super::tenancy::Resolver;

/// Tenants resolve from the repository alone — the workloads' own labels, the repository's
/// Namespace objects, the namespace name — so a change is attributed the same way offline and with
/// a snapshot. `live` objects (when a cluster is at hand) only tell where the cluster's own
/// Namespace labels would name another tenant: [`Desired::tenancy`] says so, and Git can declare
/// the Namespace (or label the workloads) to agree.
///
/// A GPU total that overflows within one app makes that app an error (the others still count); a
/// total over apps that overflows is an [`Overflow`].
pub fn desired(rendered: &Rendered, cfg: &Config, live: &[Object]) -> Result<Desired, Overflow> {
    let namespaces: Vec<Object> = rendered
        .outcomes
        .iter()
        .filter_map(|o| o.result.as_ref().ok())
        .flatten()
        .filter(|o| o.typed_kind() == Kind::Namespace)
        .cloned()
        .collect();
    let tenants = Resolver::new(&cfg.tenancy, &namespaces);

    let mut workloads = Vec::new();
    let mut apps = Vec::new();
    // Objects by cluster and identity, with the apps that render them: two apps rendering one
    // object in one cluster is a conflict; the same object in two clusters is two objects.
    let mut seen: BTreeMap<(Option<String>, String), BTreeSet<String>> = BTreeMap::new();
    let mut without_gpus = Vec::new();
    for out in &rendered.outcomes {
        let u = &out.unit;
        let mut row = AppRow {
            name: u.app.clone(),
            kind: u.app_kind.clone(),
            defined_at: u.defined_at.clone(),
            path: if u.path.is_empty() {
                ".".into()
            } else {
                u.path.clone()
            },
            status: AppStatus::Rendered,
            objects: 0,
            gpu_workloads: 0,
            gpus_declared: 0,
            error: None,
            notes: u.notes.clone(),
            cluster: u.cluster.clone(),
            applied_by: u.lineage.last().cloned(),
            lineage: u.lineage.clone(),
            prune: u.prune,
        };
        match &out.result {
            Err(e) => {
                row.status = AppStatus::Error;
                row.error = Some(e.to_string());
            }
            Ok(objs) => {
                row.objects = sum::count(objs.len());
                for o in objs {
                    let key = format!(
                        "{}/{}/{}",
                        if o.namespace().is_empty() {
                            "-"
                        } else {
                            o.namespace()
                        },
                        o.kind,
                        o.meta.name
                    );
                    seen.entry((u.cluster.clone(), key))
                        .or_default()
                        .insert(u.app.clone());
                }
                match app_workloads(objs, &tenants, &u.app, &cfg.intent) {
                    Ok((rows, cpu_only, gpus)) => {
                        row.gpu_workloads = sum::count(rows.len());
                        row.gpus_declared = gpus;
                        without_gpus.extend(cpu_only);
                        workloads.extend(rows.into_iter().map(|r| DesiredWorkloadRow {
                            workload: r,
                            app: u.app.clone(),
                            app_kind: u.app_kind.clone(),
                            cluster: u.cluster.clone(),
                            lineage: u.lineage.clone(),
                        }));
                    }
                    Err(e) => {
                        row.status = AppStatus::Error;
                        row.error = Some(e.to_string());
                    }
                }
            }
        }
        apps.push(row);
    }
    for s in &rendered.skipped {
        apps.push(AppRow {
            name: s.app.clone(),
            kind: s.app_kind.clone(),
            defined_at: s.defined_at.clone(),
            path: String::new(),
            status: if s.error {
                AppStatus::Error
            } else if s.not_applied {
                AppStatus::NotApplied
            } else {
                AppStatus::NotRendered
            },
            objects: 0,
            gpu_workloads: 0,
            gpus_declared: 0,
            error: Some(s.reason.clone()),
            notes: vec![],
            cluster: s.cluster.clone(),
            applied_by: None,
            lineage: Vec::new(),
            prune: None,
        });
    }
    apps.sort_by(|a, b| {
        (&a.cluster, &a.name, &a.kind, &a.path).cmp(&(&b.cluster, &b.name, &b.kind, &b.path))
    });
    workloads.sort_by(|a, b| {
        let (x, y) = (&a.workload, &b.workload);
        y.gpus_declared.cmp(&x.gpus_declared).then_with(|| {
            (&x.namespace, &x.kind, &x.name, &a.app).cmp(&(&y.namespace, &y.kind, &y.name, &b.app))
        })
    });

    let tenant_rows = tenant_rows(workloads.iter())?;

    let tenancy = cluster_only_tenants(&workloads, &namespaces, &tenants, cfg, live);
    let clusters = cluster_rows(&workloads, &apps)?;
    Ok(Desired {
        intent_coverage: super::inventory::intent_coverage(
            workloads.iter().map(|w| &w.workload),
            |r| r.gpus_declared,
        ),
        clusters,
        cluster: rendered.cluster.clone(),
        tenancy,
        at: rendered.label.clone(),
        gpus_declared: sum::sum(workloads.iter().map(|w| w.workload.gpus_declared)).named(
            format_args!("the repository at {}", rendered.label),
            "GPUs declared",
        )?,
        workloads,
        tenants: tenant_rows,
        apps,
        not_deployed: rendered.not_deployed.clone(),
        duplicates: seen
            .into_iter()
            .filter(|(_, a)| a.len() > 1)
            .map(|((cluster, object), a)| DuplicateRow {
                object,
                apps: a.into_iter().collect(),
                cluster,
            })
            .collect(),
        problems: rendered.problems.clone(),
        without_gpus,
    })
}

/// GPUs declared per tenant, largest first.
fn tenant_rows<'a>(
    workloads: impl Iterator<Item = &'a DesiredWorkloadRow>,
) -> Result<Vec<DesiredTenantRow>, Overflow> {
    let mut by_tenant: BTreeMap<&str, (u64, u64, BTreeSet<&str>)> = BTreeMap::new();
    for w in workloads {
        let t = by_tenant.entry(&w.workload.tenant).or_default();
        sum::add_to(&mut t.0, w.workload.gpus_declared).named(
            format_args!("tenant {}", w.workload.tenant),
            "GPUs declared in Git",
        )?;
        t.1 += 1;
        t.2.insert(&w.app);
    }
    let mut rows: Vec<DesiredTenantRow> = by_tenant
        .into_iter()
        .map(|(name, (gpus, n, apps))| DesiredTenantRow {
            name: name.to_string(),
            gpus_declared: gpus,
            workloads: n,
            apps: apps.into_iter().map(str::to_string).collect(),
        })
        .collect();
    rows.sort_by(|a, b| {
        b.gpus_declared
            .cmp(&a.gpus_declared)
            .then_with(|| a.name.cmp(&b.name))
    });
    Ok(rows)
}

/// What Git declares per cluster, when the repository names its clusters.
fn cluster_rows(
    workloads: &[DesiredWorkloadRow],
    apps: &[AppRow],
) -> Result<Vec<ClusterRow>, Overflow> {
    let names: BTreeSet<&String> = apps.iter().filter_map(|a| a.cluster.as_ref()).collect();
    names
        .into_iter()
        .map(|name| {
            let mine: Vec<&DesiredWorkloadRow> = workloads
                .iter()
                .filter(|w| w.cluster.as_ref() == Some(name))
                .collect();
            Ok(ClusterRow {
                name: name.clone(),
                gpus_declared: sum::sum(mine.iter().map(|w| w.workload.gpus_declared))
                    .named(format_args!("cluster {name}"), "GPUs declared")?,
                workloads: sum::count(mine.len()),
                apps: sum::count(
                    apps.iter()
                        .filter(|a| a.cluster.as_ref() == Some(name))
                        .count(),
                ),
                failed_apps: sum::count(
                    apps.iter()
                        .filter(|a| {
                            a.cluster.as_ref() == Some(name) && a.status == AppStatus::Error
                        })
                        .count(),
                ),
                tenants: tenant_rows(mine.iter().copied())?,
            })
        })
        .collect()
}

/// Namespaces of desired workloads that the repository does not declare, whose tenant the
/// cluster's Namespace labels would name differently.
fn cluster_only_tenants(
    workloads: &[DesiredWorkloadRow],
    declared: &[Object],
    tenants: &Resolver<'_>,
    cfg: &Config,
    live: &[Object],
) -> Vec<ClusterOnlyTenant> {
    let live_namespaces: Vec<Object> = live
        .iter()
        .filter(|o| o.typed_kind() == Kind::Namespace)
        .cloned()
        .collect();
    if live_namespaces.is_empty() {
        return Vec::new();
    }
    let cluster = Resolver::new(&cfg.tenancy, &live_namespaces);
    let no_labels = Default::default();
    let mut out = BTreeSet::new();
    for w in workloads {
        let ns = w.workload.namespace.as_str();
        if declared.iter().any(|o| o.meta.name == ns) {
            continue;
        }
        let (git, live) = (
            tenants.tenant(&no_labels, ns),
            cluster.tenant(&no_labels, ns),
        );
        // Only where the workload's tenant came from its namespace, not from its own labels.
        if w.workload.tenant == git && git != live {
            out.insert(ClusterOnlyTenant {
                namespace: ns.to_string(),
                git,
                cluster: live,
            });
        }
    }
    out.into_iter().collect()
}

/// One app's GPU workloads (as rows with the declared figure as the desired one), its root
/// workloads declared without GPUs, and its GPUs declared in total.
fn app_workloads(
    objs: &[Object],
    tenants: &Resolver<'_>,
    app: &str,
    intent_rules: &[crate::config::IntentRule],
) -> Result<(Vec<WorkloadRow>, Vec<WithoutGpus>, u64), Overflow> {
    let mut cpu_only = Vec::new();
    for o in objs.iter().filter(|o| o.meta.owner_references.is_empty()) {
        if declared_shape(o)?.is_some_and(|s| !s.declares_gpus()) {
            cpu_only.push(WithoutGpus {
                id: WorkloadId::new(o.namespace(), o.group(), &o.kind, &o.meta.name),
                app: app.to_string(),
            });
        }
    }
    let mut rows = Vec::new();
    let mut total = 0;
    for wl in &owners::build(objs)?.list {
        let about = super::live::about(wl, tenants, intent_rules, 0, None);
        let mut r = workload_row(wl, &about)?;
        // No pods in Git: the desired figure is the declared shape.
        r.gpus = r.gpus_declared;
        r.gpus_pending = 0;
        r.pods_bound = 0;
        r.pods_pending = 0;
        sum::add_to(&mut total, r.gpus_declared)
            .named(format_args!("app {app}"), "GPUs declared")?;
        rows.push(r);
    }
    Ok((rows, cpu_only, total))
}
