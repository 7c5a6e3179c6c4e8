//! The desired GPU workloads: rendered objects in, report section out.
//!
//! Each app's objects go through the same workload model as the live cluster's, so a Dynamo graph
//! in Git and one in the cluster get the same shape by the same code. Desired workloads have no pods:
//! their figure is the declared shape. Tenants resolve as every command resolves them
//! ([`Resolver::of_run`]): the cluster's Namespace labels when a live state is at hand, else the
//! repository's own Namespace objects, else the tenancy rules.

use std::collections::{BTreeMap, BTreeSet};

use crate::config::Config;
use crate::desired::Rendered;
use crate::k8s::object::{Kind, Object};
use crate::report::{
    AppRow, AppStatus, ClusterOnlyTenant, ClusterRow, Desired, DesiredTenantRow,
    DesiredWorkloadRow, DuplicateRow, FetchedRow, WithoutGpus, WorkloadRow,
};
use crate::util::sum::{self, Named, Overflow, TooLarge};
use crate::workload::claims::Dra;
use crate::workload::kinds::declared_shape_with;
use crate::workload::{WorkloadId, owners};

use super::inventory::workload_row;
use super::tenancy::Resolver;

/// Tenants resolve as the inventory resolves them: the workloads' own labels, then the cluster's
/// Namespace labels when `live` holds the namespace, else the repository's Namespace objects, else
/// the namespace name — so a workload has the same tenant in every command run on the same inputs.
/// [`Desired::tenancy`] lists where the cluster knows more than the repository alone (offline and
/// live differ there), [`Desired::tenant_sources`] where each namespace's tenant came from.
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
    let tenants = Resolver::of_run(&cfg.tenancy, live, &namespaces);

    let mut workloads = Vec::new();
    let mut apps = Vec::new();
    // Objects by cluster and identity, with the apps that render them: two apps rendering one
    // object in one cluster is a conflict; the same object in two clusters is two objects.
    let mut seen: BTreeMap<(Option<String>, String), BTreeSet<String>> = BTreeMap::new();
    let mut without_gpus = Vec::new();
    let mut routing = Vec::new();
    let mut queues = Vec::new();
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
            objects: None,
            gpu_workloads: None,
            gpus_declared: None,
            error: None,
            notes: u.notes.clone(),
            cluster: u.cluster.clone(),
            applied_by: u.lineage.last().cloned(),
            lineage: u.lineage.clone(),
            fetched: u
                .prepared
                .iter()
                .flat_map(|p| &p.resolved)
                .map(|r| FetchedRow {
                    what: r.what.clone(),
                    source: r.source.clone(),
                    wanted: r.wanted.clone(),
                    version: r.version.clone(),
                    digest: r.digest.clone(),
                })
                .collect(),
            fingerprint: u.fingerprint,
            prune: u.prune,
            other_repository: None,
        };
        match &out.result {
            // gpuledger chose not to fetch what it needs (offline, a new source host): unknown,
            // with the reason, rather than broken.
            Err(e) if e.is_refusal() => {
                row.status = AppStatus::NotRendered;
                row.error = Some(e.to_string());
            }
            Err(e) => {
                row.status = AppStatus::Error;
                row.error = Some(e.to_string());
            }
            Ok(objs) => {
                row.objects = Some(sum::count(objs.len()));
                routing.extend(
                    objs.iter()
                        .filter(|o| super::routes_change::routing(o))
                        .cloned(),
                );
                queues.extend(
                    objs.iter()
                        .filter(|o| crate::queues::is_queue_object(o))
                        .cloned(),
                );
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
                        row.gpu_workloads = Some(sum::count(rows.len()));
                        row.gpus_declared = gpus;
                        without_gpus.extend(cpu_only);
                        // The GPU models each workload's root object names.
                        let roots: std::collections::HashMap<_, _> = objs
                            .iter()
                            .filter(|o| o.meta.owner_references.is_empty())
                            .map(|o| ((o.namespace(), o.kind.as_str(), o.meta.name.as_str()), o))
                            .collect();
                        let root = |r: &WorkloadRow| {
                            roots
                                .get(&(r.namespace.as_str(), r.kind.as_str(), r.name.as_str()))
                                .copied()
                        };
                        workloads.extend(rows.into_iter().map(|r| DesiredWorkloadRow {
                            gpu_models: root(&r).map(super::pins::of_object).unwrap_or_default(),
                            ask: root(&r).map(|o| {
                                let id = format!("{}/{}/{}", r.namespace, r.kind, r.name);
                                crate::queues::Ask::of(o, id, &r.roles)
                            }),
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
                        row.objects = None;
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
            objects: None,
            gpu_workloads: None,
            gpus_declared: None,
            error: Some(s.reason.clone()),
            notes: vec![],
            cluster: s.cluster.clone(),
            applied_by: None,
            lineage: Vec::new(),
            fetched: Vec::new(),
            fingerprint: s.fingerprint,
            prune: None,
            other_repository: s.repository.clone(),
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

    let duplicates: Vec<DuplicateRow> = seen
        .into_iter()
        .filter(|(_, a)| a.len() > 1)
        .map(|((cluster, object), a)| DuplicateRow {
            object,
            apps: a.into_iter().collect(),
            cluster,
        })
        .collect();
    if cfg.render.roots.is_empty() {
        name_the_roots(rendered, &duplicates, &mut apps);
    }

    let tenant_rows = tenant_rows(workloads.iter())?;

    let git_alone = Resolver::new(&cfg.tenancy, &namespaces);
    let tenancy = cluster_only_tenants(&workloads, &git_alone, &tenants);
    let tenant_sources = workloads
        .iter()
        .map(|w| {
            let ns = w.workload.namespace.as_str();
            (ns.to_string(), tenants.source(ns))
        })
        .collect();
    let clusters = cluster_rows(&workloads, &apps)?;
    let (rendered_total, uncounted) = declared_sum(workloads.iter().map(|w| &w.workload)).named(
        format_args!("the repository at {}", rendered.label),
        "GPUs declared",
    )?;
    let mut unknown = BTreeMap::new();
    if let Some(why) = not_rendered(&apps) {
        unknown.insert("gpus_declared".to_string(), why);
    } else if !uncounted.is_empty() {
        unknown.insert("gpus_declared".to_string(), uncounted_why(&uncounted));
    }
    Ok(Desired {
        gpus_declared: unknown.is_empty().then_some(rendered_total),
        gpus_declared_rendered: rendered_total,
        unknown,
        intent_coverage: super::inventory::intent_coverage(
            workloads.iter().map(|w| &w.workload),
            |r| r.gpus,
        ),
        clusters,
        cluster: rendered.cluster.clone(),
        tenancy,
        tenant_sources,
        at: rendered.label.clone(),
        workloads,
        tenants: tenant_rows,
        apps,
        not_deployed: rendered.not_deployed.clone(),
        duplicates,
        problems: rendered.problems.clone(),
        without_gpus,
        source_hosts: Default::default(),
        routing,
        queues,
    })
}

/// Roots found without apps (no app object names them, no `render.roots`) that render the same
/// objects cannot both be what the cluster applies — two overlays of one base, say — and gpuledger
/// cannot tell which is: each gets a note naming the others and the `render.roots` that would say.
fn name_the_roots(rendered: &Rendered, duplicates: &[DuplicateRow], apps: &mut [AppRow]) {
    let discovered: BTreeSet<&str> = rendered
        .outcomes
        .iter()
        .filter(|o| o.unit.lineage.is_empty() && o.unit.fingerprint == 0)
        .map(|o| o.unit.app.as_str())
        .collect();
    // Root → the other roots it shares objects with, and how many.
    let mut shared: BTreeMap<&str, BTreeMap<&str, usize>> = BTreeMap::new();
    for d in duplicates {
        let roots: Vec<&str> = d
            .apps
            .iter()
            .map(String::as_str)
            .filter(|a| discovered.contains(a))
            .collect();
        for a in &roots {
            for b in roots.iter().filter(|b| *b != a) {
                *shared.entry(a).or_default().entry(b).or_default() += 1;
            }
        }
    }
    for row in apps.iter_mut().filter(|r| r.applied_by.is_none()) {
        let Some(others) = shared.get(row.name.as_str()) else {
            continue;
        };
        let objects: usize = others.values().max().copied().unwrap_or_default();
        let names: Vec<&str> = others.keys().copied().collect();
        row.notes.push(format!(
            "shares {objects} object(s) with {}: gpuledger cannot tell which of these roots the \
             cluster applies; `render.roots: [{}]` in .gpuledger.yaml renders only this one",
            names.join(", "),
            row.path
        ));
    }
}

/// Why the GPUs declared are unknown: `140 of 257 apps not rendered: Application chat (not
/// fetched: --offline); …` (the first few named), or `None` when every app rendered.
pub fn not_rendered(apps: &[AppRow]) -> Option<String> {
    let counted: Vec<&AppRow> = apps
        .iter()
        .filter(|a| a.status != AppStatus::NotApplied)
        .collect();
    let missing: Vec<&&AppRow> = counted.iter().filter(|a| a.unknown()).collect();
    if missing.is_empty() {
        return None;
    }
    const NAMED: usize = 3;
    // Apps whose source is another repository, said once per URL (with the flag that says the
    // URL is this repository, when it is) rather than once per app.
    let mut by_url: BTreeMap<&str, usize> = BTreeMap::new();
    for u in missing.iter().filter_map(|a| a.other_repository.as_deref()) {
        *by_url.entry(u).or_default() += 1;
    }
    by_url.retain(|_, n| *n > 1);
    // A value that is no URL is a placeholder an overlay is meant to patch, not a repository.
    let grouped = by_url.iter().map(|(u, n)| {
        if u.contains("://") || u.starts_with("git@") {
            format!("{n} apps name {u}, which is not this repository (if it is, pass --repo-url {u})")
        } else {
            format!("{n} apps name {u:?} as their repository, which is no URL (a placeholder an overlay patches?)")
        }
    });
    let alone: Vec<&&&AppRow> = missing
        .iter()
        .filter(|a| {
            a.other_repository
                .as_deref()
                .is_none_or(|u| !by_url.contains_key(u))
        })
        .collect();
    let hidden = alone.len().saturating_sub(NAMED);
    let named: Vec<String> = grouped
        .chain(alone.iter().take(NAMED).map(|a| {
            format!(
                "{} {} ({})",
                a.kind,
                a.name,
                crate::util::text::line(a.error.as_deref().unwrap_or("not rendered"), 160)
            )
        }))
        .collect();
    let more = match hidden {
        0 => String::new(),
        n => format!("; and {n} more"),
    };
    Some(format!(
        "{} of {} apps not rendered: {}{more}",
        missing.len(),
        counted.len(),
        named.join("; ")
    ))
}

/// Σ of the workloads' declared GPUs that are known, and the workloads whose are not (a DRA claim
/// that cannot be counted): with any of those, the sum is a floor, never the figure.
fn declared_sum<'a>(
    rows: impl Iterator<Item = &'a WorkloadRow>,
) -> Result<(u64, Vec<String>), TooLarge> {
    let (mut total, mut uncounted) = (0, Vec::new());
    for w in rows {
        match w.gpus_declared {
            Some(n) => sum::add_to(&mut total, n)?,
            None => uncounted.push(format!(
                "{}/{}/{} {}",
                w.namespace,
                w.kind,
                w.name,
                w.dra
                    .as_ref()
                    .and_then(|d| d.uncounted.first())
                    .map_or("has a DRA claim that cannot be counted", String::as_str)
            )),
        }
    }
    Ok((total, uncounted))
}

/// Why a sum of declared GPUs is unknown: the workloads whose claims cannot be counted.
fn uncounted_why(uncounted: &[String]) -> String {
    format!("GPUs that cannot be counted: {}", uncounted.join("; "))
}

/// GPUs declared per tenant, largest first.
fn tenant_rows<'a>(
    workloads: impl Iterator<Item = &'a DesiredWorkloadRow>,
) -> Result<Vec<DesiredTenantRow>, Overflow> {
    let mut by_tenant: BTreeMap<&str, (Option<u64>, u64, BTreeSet<&str>)> = BTreeMap::new();
    for w in workloads {
        let t = by_tenant.entry(&w.workload.tenant).or_default();
        if t.1 == 0 {
            t.0 = Some(0);
        }
        // One workload's GPUs unknown: the tenant's too, never the smaller sum.
        t.0 = match (t.0, w.workload.gpus_declared) {
            (Some(a), Some(b)) => Some(sum::add(a, b).named(
                format_args!("tenant {}", w.workload.tenant),
                "GPUs declared in Git",
            )?),
            _ => None,
        };
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
            let (total, uncounted) = declared_sum(mine.iter().map(|w| &w.workload))
                .named(format_args!("cluster {name}"), "GPUs declared")?;
            let of = |status: AppStatus| {
                sum::count(
                    apps.iter()
                        .filter(|a| a.cluster.as_ref() == Some(name) && a.status == status)
                        .count(),
                )
            };
            let (failed, skipped) = (of(AppStatus::Error), of(AppStatus::NotRendered));
            Ok(ClusterRow {
                name: name.clone(),
                gpus_declared: (failed + skipped == 0 && uncounted.is_empty()).then_some(total),
                gpus_declared_rendered: total,
                not_rendered_apps: skipped,
                workloads: sum::count(mine.len()),
                apps: sum::count(
                    apps.iter()
                        .filter(|a| a.cluster.as_ref() == Some(name))
                        .count(),
                ),
                failed_apps: failed,
                tenants: tenant_rows(mine.iter().copied())?,
            })
        })
        .collect()
}

/// Namespaces of desired workloads where the run's tenant (the cluster's labels) differs from what
/// the repository alone would say: offline and live differ there because the cluster knows more.
fn cluster_only_tenants(
    workloads: &[DesiredWorkloadRow],
    git_alone: &Resolver<'_>,
    run: &Resolver<'_>,
) -> Vec<ClusterOnlyTenant> {
    let no_labels = Default::default();
    let mut out = BTreeSet::new();
    for w in workloads {
        let ns = w.workload.namespace.as_str();
        let (git, live) = (git_alone.tenant(&no_labels, ns), run.tenant(&no_labels, ns));
        // Only where the workload's tenant came from its namespace, not from its own labels.
        if w.workload.tenant == live && git != live {
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
/// workloads declared without GPUs, and its GPUs declared in total (`None` when a claim's cannot
/// be counted).
type AppWorkloads = (Vec<WorkloadRow>, Vec<WithoutGpus>, Option<u64>);

/// [`AppWorkloads`] of one app.
fn app_workloads(
    objs: &[Object],
    tenants: &Resolver<'_>,
    app: &str,
    intent_rules: &[crate::config::IntentRule],
) -> Result<AppWorkloads, Overflow> {
    let mut cpu_only = Vec::new();
    let dra = Dra::new(objs);
    // The pods that use a shared claim hold its GPUs through it: not workloads without GPUs.
    let consumers: std::collections::HashSet<(&str, &str)> = objs
        .iter()
        .filter_map(|o| match &o.body {
            crate::k8s::object::Body::Pod(p) if !p.spec.resource_claims.is_empty() => {
                Some((o.namespace(), o.meta.name.as_str()))
            }
            _ => None,
        })
        .collect();
    for o in objs.iter().filter(|o| o.meta.owner_references.is_empty()) {
        if consumers.contains(&(o.namespace(), o.meta.name.as_str())) {
            continue;
        }
        if declared_shape_with(o, &|_, _, _| None, &dra)?.is_some_and(|s| !s.declares_gpus()) {
            cpu_only.push(WithoutGpus {
                id: WorkloadId::new(o.namespace(), o.group(), &o.kind, &o.meta.name),
                app: app.to_string(),
            });
        }
    }
    let mut rows = Vec::new();
    for wl in &owners::build(objs)?.list {
        let about = super::live::about(wl, tenants, intent_rules, 0, None);
        let mut r = workload_row(wl, &about)?;
        // No pods in Git: the desired figure is the declared shape (what can be counted of it
        // when a claim cannot be: `gpus_declared` is then null).
        r.gpus = wl.shape.total().named(&wl.id, "the GPUs it declares")?;
        r.gpus_pending = 0;
        if let Some(d) = &mut r.dra {
            d.gpus_from_claims = d.gpus_declared_from_claims;
            d.gpus_pending_from_claims = 0;
        }
        r.pods_bound = 0;
        r.pods_pending = 0;
        rows.push(r);
    }
    let (total, uncounted) =
        declared_sum(rows.iter()).named(format_args!("app {app}"), "GPUs declared")?;
    Ok((rows, cpu_only, uncounted.is_empty().then_some(total)))
}
