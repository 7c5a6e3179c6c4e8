//! What a change to the GitOps repository does: base against head, like a cost diff for GPUs.
//!
//! Both refs go through the same rendering and workload model. The delta is per tenant and product
//! line; workloads are added, removed or reshaped (their GPU shape differs). With live state, the
//! drift of each side against the cluster tells which drift the change resolves and which it
//! introduces, and the cluster after the change syncs ([`super::projection`]) is held against the
//! placeable capacity; the head's desired GPUs per tenant against the configured tenant limits.

use std::collections::{BTreeMap, BTreeSet};

use crate::config::Config;
use crate::report::{
    AppStatus, CapacityFit, ChangeRow, Check, Column, ConfigReview, DeltaRow, Desired,
    DesiredWorkloadRow, Drift, DriftRow, Gate, GateName, IntentFinding, Report, TenantLimit,
    Unknown,
};
use crate::util::sum::{self, Named, Overflow};
use crate::workload::{WorkloadId, describe_change};

use super::unrendered::{failed_apps, render_errors};

fn drifting(d: &Drift) -> BTreeSet<WorkloadId> {
    d.unmanaged
        .iter()
        .chain(&d.missing)
        .chain(&d.changed)
        .map(DriftRow::workload_id)
        .collect()
}

/// Whether a workload that drifts at head and not at base still drifts once the head syncs. A
/// workload the change adds or reshapes is the change itself — missing or changed only until it
/// syncs — never drift. What remains: a live workload the head stops declaring whose app does not
/// prune it (Argo CD without automated prune, a Flux Kustomization with `prune: false`, a directory
/// no app applies), and a shape Git and the cluster disagree on that the change does not touch.
fn remains<'a, K: Ord>(
    id: &WorkloadId,
    head_drift: &Drift,
    base: &Desired,
    b: &BTreeMap<(K, WorkloadId), &'a DesiredWorkloadRow>,
    h: &BTreeMap<(K, WorkloadId), &'a DesiredWorkloadRow>,
) -> bool {
    fn row<'a, K>(
        m: &BTreeMap<(K, WorkloadId), &'a DesiredWorkloadRow>,
        id: &WorkloadId,
    ) -> Option<&'a DesiredWorkloadRow> {
        m.iter().find(|(k, _)| &k.1 == id).map(|(_, w)| *w)
    }
    let row = |m| row(m, id);
    let is = |rows: &[DriftRow]| rows.iter().any(|r| &r.workload_id() == id);
    if is(&head_drift.missing) {
        return false;
    }
    if is(&head_drift.changed) {
        return match (row(b), row(h)) {
            (Some(bw), Some(hw)) => bw.workload.roles == hw.workload.roles,
            _ => false,
        };
    }
    if is(&head_drift.unmanaged)
        && let Some(bw) = row(b)
    {
        let prunes = base
            .apps
            .iter()
            .find(|a| a.name == bw.app && a.kind == bw.app_kind)
            .and_then(|a| a.prune);
        return prunes != Some(true);
    }
    true
}

/// Workloads as the report names them, sorted and without repeats.
fn names<'a>(ids: impl Iterator<Item = &'a WorkloadId>) -> Vec<String> {
    let names: BTreeSet<String> = ids.map(ToString::to_string).collect();
    names.into_iter().collect()
}

fn deltas(
    base: &BTreeMap<String, u64>,
    head: &BTreeMap<String, u64>,
) -> Result<Vec<DeltaRow>, Overflow> {
    let names: BTreeSet<&String> = base.keys().chain(head.keys()).collect();
    let mut rows: Vec<DeltaRow> = names
        .into_iter()
        .map(|n| {
            let (b, h) = (
                base.get(n).copied().unwrap_or(0),
                head.get(n).copied().unwrap_or(0),
            );
            Ok(DeltaRow {
                name: n.clone(),
                gpus_base: b,
                gpus_head: h,
                delta: sum::delta(h, b).named(n, "the change in GPUs declared")?,
                contacts: Vec::new(),
                gpus_per_week: Column::NotAsked,
            })
        })
        .collect::<Result<_, Overflow>>()?;
    rows.sort_by(|a, b| {
        b.delta
            .abs()
            .cmp(&a.delta.abs())
            .then_with(|| a.name.cmp(&b.name))
    });
    Ok(rows)
}

fn change(
    id: &WorkloadId,
    w: &DesiredWorkloadRow,
    base: Option<&DesiredWorkloadRow>,
    head: Option<&DesiredWorkloadRow>,
) -> ChangeRow {
    let x = &w.workload;
    ChangeRow {
        workload_id: id.clone(),
        namespace: x.namespace.clone(),
        kind: x.kind.clone(),
        name: x.name.clone(),
        tenant: x.tenant.clone(),
        app: w.app.clone(),
        cluster: w.cluster.clone(),
        // What can be counted of the declared GPUs (a desired row's `gpus`): when a DRA claim
        // cannot be, its shape says "+ unknown GPUs" and the change's delta is unknown
        // (`uncounted` below), never this floor.
        gpus_base: base.map_or(0, |b| b.workload.gpus),
        gpus_head: head.map_or(0, |h| h.workload.gpus),
        shape_base: base.map(|b| b.workload.shape.clone()),
        shape_head: head.map(|h| h.workload.shape.clone()),
        change: base
            .zip(head)
            .map(|(b, h)| describe_change(&b.workload.roles, &h.workload.roles))
            .filter(|c| !c.is_empty()),
        source: x.source.clone(),
        touched: Vec::new(),
    }
}

/// Points each reshaped workload at the files of its app (at the head) that the change touched,
/// besides its own manifest: a kustomize overlay or a values file reshapes a workload whose base
/// manifest never changed. `changed` holds repository paths.
pub fn mark_touched(check: &mut Check, head: &Desired, changed: &BTreeSet<String>) {
    for r in &mut check.reshaped {
        let Some(app) = head.apps.iter().find(|a| a.name == r.app) else {
            continue;
        };
        let dir = app.path.trim_end_matches('/');
        let own = r
            .source
            .as_deref()
            .map(|s| s.split(':').next().unwrap_or(s));
        r.touched = changed
            .iter()
            .filter(|p| {
                dir.is_empty()
                    || dir == "."
                    || p.strip_prefix(dir)
                        .is_some_and(|rest| rest.starts_with('/'))
            })
            .filter(|p| Some(p.as_str()) != own)
            .cloned()
            .collect();
    }
}

/// The cluster as a check sees it: its inventory, the drift of base and of head against it, and
/// the resources that could not be read (then drift and capacity are unknown, never zero).
pub struct LiveView<'a> {
    pub report: &'a Report,
    pub base_drift: &'a Drift,
    pub head_drift: &'a Drift,
    /// `pods: list forbidden`, one per resource that was not read.
    pub incomplete: Vec<String>,
}

/// Compares base with head (and both with the cluster when `live` is given) and evaluates the
/// gates in `fail_on`. A gate that cannot be evaluated fails: an unknown is never a pass.
pub fn impact(
    base: &Desired,
    head: &Desired,
    live: Option<&LiveView<'_>>,
    cfg: &Config,
    fail_on: &[GateName],
    config: ConfigReview,
) -> Result<Check, Overflow> {
    // An app that failed to render on either side says nothing about its workloads: they are
    // neither added nor removed, and the GPU delta is unknown rather than a fall to zero. So
    // does an app not rendered on purpose (a remote source offline or from a host the base does
    // not use, a plugin) that the change adds, removes or changes; one the change leaves as it is
    // declares the same unknown GPUs on both sides, and the delta stays known.
    // An app below a failed one (its parent never rendered it on that side) is as unknown.
    let failed = failed_apps(base, head);
    let known = |w: &&DesiredWorkloadRow| {
        !failed.contains_key(&(w.app_kind.clone(), w.app.clone()))
            && !w.lineage.iter().any(|a| {
                a.split_once('/')
                    .is_some_and(|(k, n)| failed.contains_key(&(k.to_string(), n.to_string())))
            })
    };
    // The same object in two clusters is two workloads.
    type Key = (Option<String>, WorkloadId);
    fn index(
        d: &Desired,
        known: impl Fn(&&DesiredWorkloadRow) -> bool,
    ) -> BTreeMap<Key, &DesiredWorkloadRow> {
        d.workloads
            .iter()
            .filter(known)
            .map(|w| ((w.cluster.clone(), w.workload.id()), w))
            .collect()
    }
    let (b, h) = (index(base, known), index(head, known));
    let (mut added, mut removed, mut reshaped) = (vec![], vec![], vec![]);
    for (k, hw) in &h {
        match b.get(k) {
            None => added.push(change(&k.1, hw, None, Some(hw))),
            Some(bw) if bw.workload.roles != hw.workload.roles => {
                reshaped.push(change(&k.1, hw, Some(bw), Some(hw)))
            }
            Some(_) => {}
        }
    }
    for (k, bw) in &b {
        if !h.contains_key(k) {
            removed.push(change(&k.1, bw, Some(bw), None));
        }
    }
    // GPUs that cannot be counted (a DRA claim with `allocationMode: All`, a share of a device):
    // a change to such a workload changes the GPUs by an unknown amount, and a head that holds
    // such a workload needs an unknown number of them.
    let uncounted = |w: &DesiredWorkloadRow| {
        w.workload
            .dra
            .as_ref()
            .and_then(|d| d.uncounted.first())
            .map(|why| format!("{} {}", w.workload.id(), why))
    };
    let changed_uncounted: Vec<String> = added
        .iter()
        .chain(&removed)
        .chain(&reshaped)
        .filter_map(|c| {
            let k = (c.cluster.clone(), c.workload_id.clone());
            [b.get(&k), h.get(&k)]
                .into_iter()
                .flatten()
                .find_map(|w| uncounted(w))
        })
        .collect();
    let head_uncounted: Vec<String> = h.values().filter_map(|w| uncounted(w)).collect();
    let by = |d: &Desired, f: &dyn Fn(&DesiredWorkloadRow) -> String| {
        let mut m: BTreeMap<String, u64> = BTreeMap::new();
        for w in d.workloads.iter().filter(known) {
            let k = f(w);
            sum::add_to(m.entry(k.clone()).or_default(), w.workload.gpus)
                .named(&k, "the GPUs declared")?;
        }
        Ok::<_, Overflow>(m)
    };
    let tenant = |w: &DesiredWorkloadRow| w.workload.tenant.clone();
    let line = |w: &DesiredWorkloadRow| {
        w.workload
            .product_line
            .clone()
            .unwrap_or_else(|| "(none)".into())
    };
    let head_tenants = by(head, &tenant)?;
    let mut tenants = deltas(&by(base, &tenant)?, &head_tenants)?;
    // Who to call for the tenants the change moves: the config's contact, else what the
    // cluster's namespaces say (with live state).
    for t in tenants.iter_mut().filter(|t| t.delta != 0) {
        t.contacts = match cfg.tenancy.contacts.get(&t.name) {
            Some(c) if !c.trim().is_empty() => vec![c.trim().to_string()],
            _ => live
                .and_then(|l| l.report.tenants.iter().find(|x| x.name == t.name))
                .map(|x| x.contacts.clone())
                .unwrap_or_default(),
        };
    }
    let product_lines = deltas(&by(base, &line)?, &by(head, &line)?)?;

    let render_errors = render_errors(base, head, &config, &failed);
    // Capacity compares what both sides need: it is unknown when either did not render, an
    // unchanged app that did not render included (what it needs is unknown on both sides).
    let incomplete_render = !failed.is_empty()
        || !head.problems.is_empty()
        || base.gpus_declared.is_none()
        || head.gpus_declared.is_none();
    let live_gap = match live {
        None => Some("no live state given".to_string()),
        Some(v) if !v.incomplete.is_empty() => Some(format!(
            "the live state is incomplete ({})",
            v.incomplete.join("; ")
        )),
        Some(_) => None,
    };
    let (mut resolved, mut introduced, mut capacity) = (None, None, None);
    let mut projection_unknown = None;
    if let (Some(v), None) = (live, &live_gap) {
        let (bd, hd) = (drifting(v.base_drift), drifting(v.head_drift));
        resolved = Some(names(bd.difference(&hd)));
        introduced = Some(names(
            hd.difference(&bd)
                .filter(|id| remains(id, v.head_drift, base, &b, &h)),
        ));
        if !incomplete_render && head_uncounted.is_empty() {
            let unmanaged = sum::sum(v.head_drift.unmanaged.iter().map(|r| r.gpus))
                .named("the cluster", "GPUs held by unmanaged workloads")?;
            match super::projection::project(v.report, base, &b, &h, unmanaged)? {
                Ok(fit) => capacity = Some(fit),
                Err(why) => projection_unknown = Some(why),
            }
        }
    }
    // Drift of a workload whose app did not render is unknown too.
    let drift_unknown = match (&live_gap, incomplete_render) {
        (Some(why), _) => Some(why.clone()),
        (None, true) => Some("an app did not render, so what it declares is unknown".to_string()),
        (None, false) => None,
    };
    if drift_unknown.is_some() {
        (resolved, introduced) = (None, None);
    }
    let capacity_unknown = match (&live_gap, incomplete_render) {
        (_, true) => Some(match head.unknown.get("gpus_declared") {
            Some(why) if failed.is_empty() => format!("what the head needs is unknown: {why}"),
            _ => "an app did not render, so what it needs is unknown".to_string(),
        }),
        (Some(why), false) => Some(why.clone()),
        (None, false) if !head_uncounted.is_empty() => Some(format!(
            "the head declares GPUs that cannot be counted: {}",
            head_uncounted.join("; ")
        )),
        (None, false) => projection_unknown,
    };
    let tenant_limits: Vec<TenantLimit> = cfg
        .limits
        .tenants
        .iter()
        .map(|(t, limit)| {
            let gpus = head_tenants.get(t).copied().unwrap_or(0);
            TenantLimit {
                tenant: t.clone(),
                limit: *limit,
                gpus_head: gpus,
                over: gpus > *limit,
            }
        })
        .collect();
    // Intent is linted where the change touches: the workloads it adds or reshapes, at the head.
    let intent: Vec<IntentFinding> = added
        .iter()
        .chain(&reshaped)
        .filter_map(|c| h.get(&(c.cluster.clone(), c.workload_id.clone())))
        .flat_map(|w| {
            let x = &w.workload;
            let empty = crate::intent::Intent::default();
            crate::intent::lint::lint(
                x.intent.as_ref().unwrap_or(&empty),
                &x.intent_problems,
                &x.intent_facts,
            )
            .into_iter()
            .map(move |f| IntentFinding {
                namespace: x.namespace.clone(),
                kind: x.kind.clone(),
                name: x.name.clone(),
                cluster: w.cluster.clone(),
                source: x.source.clone(),
                rule: f.rule.to_string(),
                message: f.message,
            })
        })
        .collect();
    let gates = fail_on
        .iter()
        .map(|g| {
            let cannot = |why: &str| Gate {
                name: g.to_string(),
                failed: true,
                unknown: true,
                why: format!("cannot check {g}: {why}"),
            };
            let (failed, why) = match g {
                GateName::Capacity => match &capacity_unknown {
                    Some(why) => {
                        let mut gate = cannot(why);
                        gate.why.push_str(&over_limits(&tenant_limits));
                        return gate;
                    }
                    None => capacity_gate(capacity.as_ref(), &tenant_limits),
                },
                GateName::DriftIntroduced => match (&drift_unknown, &introduced) {
                    (None, Some(i)) => (!i.is_empty(), format!("{} drift introduced", i.len())),
                    (Some(why), _) => return cannot(why),
                    (None, None) => return cannot("drift was not computed"),
                },
                GateName::Intent => (
                    !intent.is_empty(),
                    match intent.len() {
                        1 => "1 intent finding".to_string(),
                        n => format!("{n} intent findings"),
                    },
                ),
                GateName::RenderError => (
                    !render_errors.is_empty(),
                    match render_errors.len() {
                        1 => "1 render error".to_string(),
                        n => format!("{n} render errors"),
                    },
                ),
                // Documents are read beside the check, which fills this gate in.
                GateName::StaleDocs => return cannot("the documents were not checked"),
                // Serving headroom is read beside the check, which fills this gate in.
                GateName::Headroom => return cannot("serving headroom was not computed"),
                // The queues are read beside the check, which fills this gate in.
                GateName::Quota => return cannot("the queues were not read"),
            };
            Gate {
                name: g.to_string(),
                failed,
                unknown: false,
                why,
            }
        })
        .collect();

    let delta_unknown = if !failed.is_empty() {
        let apps: Vec<String> = failed
            .iter()
            .map(|((kind, name), (side, error))| {
                let error = crate::util::text::line(error, 300);
                let d = if *side == "head" { head } else { base };
                let skipped = d.apps.iter().any(|a| {
                    a.kind == *kind && a.name == *name && a.status == AppStatus::NotRendered
                });
                let verb = if skipped {
                    "is not rendered"
                } else {
                    "failed to render"
                };
                format!("{kind} {name} {verb} at the {side} — {error}")
            })
            .collect();
        Some(apps.join("; "))
    } else if !changed_uncounted.is_empty() {
        Some(format!(
            "the GPUs of a changed workload cannot all be counted: {}",
            changed_uncounted.join("; ")
        ))
    } else {
        None
    };
    let delta = match &delta_unknown {
        Some(_) => None,
        None => Some(
            sum::delta(head.gpus_declared_rendered, base.gpus_declared_rendered)
                .named("the change", "GPUs declared")?,
        ),
    };
    // A side whose total is unknown (an app the change leaves alone did not render) shows what
    // rendered, as a floor.
    let total = |d: &Desired| match d.gpus_declared {
        Some(n) => n.to_string(),
        None => format!("≥{}", d.gpus_declared_rendered),
    };
    let mut summary = match (&delta, &delta_unknown) {
        (Some(delta), _) => {
            let mut s = format!("{delta:+} GPUs ({} → {})", total(base), total(head));
            if let Some(why) = head.unknown.get("gpus_declared") {
                s.push_str(&format!(
                    " (unchanged by this change, and unknown: {})",
                    crate::util::text::line(why, 200)
                ));
            }
            s
        }
        (None, why) => format!("GPU delta unknown: {}", why.as_deref().unwrap_or("")),
    };
    let moved: Vec<String> = tenants
        .iter()
        .filter(|t| t.delta != 0)
        .take(3)
        .map(|t| format!("{} {:+}", t.name, t.delta))
        .collect();
    if !moved.is_empty() {
        summary.push_str(&format!("; {}", moved.join(", ")));
    }
    summary.push_str(&format!(
        "; {} added, {} removed, {} reshaped",
        added.len(),
        removed.len(),
        reshaped.len()
    ));
    match (&resolved, &introduced, &drift_unknown) {
        (Some(r), Some(i), _) => summary.push_str(&format!(
            "; resolves {} drift, introduces {}",
            r.len(),
            i.len()
        )),
        (_, _, Some(why)) if live.is_some() => summary.push_str(&format!("; drift unknown: {why}")),
        _ => {}
    }
    match (&capacity, &capacity_unknown) {
        // A verdict only where the capacity gate is enabled; else a note, never a bold "does NOT".
        (Some(c), _) => summary.push_str(&c.clause(fail_on.contains(&GateName::Capacity))),
        (None, Some(why)) if live.is_some() => {
            summary.push_str(&format!("; capacity unknown: {why}"))
        }
        _ => {}
    }
    let mut unknown = Unknown::default();
    if let Some(why) = &delta_unknown {
        unknown.set("gpu_delta", why.clone());
    }
    if let Some(why) = &drift_unknown {
        for field in ["drift_resolved", "drift_introduced", "coverage_head"] {
            unknown.set(field, why.clone());
        }
    }
    if let Some(why) = &capacity_unknown {
        unknown.set("capacity", why.clone());
    }
    Ok(Check {
        tenancy: head.tenancy.clone(),
        tenant_sources: head.tenant_sources.clone(),
        summary,
        unknown,
        base_at: base.at.clone(),
        head_at: head.at.clone(),
        gpus_base: base.gpus_declared_rendered,
        gpus_head: head.gpus_declared_rendered,
        gpus_base_floor: base.gpus_declared.is_none(),
        gpus_head_floor: head.gpus_declared.is_none(),
        gpu_delta: delta,
        delta_unknown,
        tenants,
        product_lines,
        added,
        removed,
        reshaped,
        drift_resolved: resolved,
        drift_introduced: introduced,
        drift_unknown,
        live: live.is_some(),
        coverage_head: live
            .filter(|_| live_gap.is_none())
            .and_then(|v| v.head_drift.coverage),
        capacity,
        capacity_unknown,
        tenant_limits,
        render_errors,
        intent,
        stagger: None,
        routes: Vec::new(),
        headroom: Vec::new(),
        admission: Vec::new(),
        quota: Vec::new(),
        gates,
        docs: None,
        valuable: None,
        config,
    })
}

/// The capacity gate: the fleet's placeable GPUs, and every configured tenant limit.
fn capacity_gate(capacity: Option<&CapacityFit>, limits: &[TenantLimit]) -> (bool, String) {
    let (mut failed, mut why) = match capacity {
        // It judges the change: a head that does not fit fails only when it needs more than base.
        Some(c) => (!c.fits && c.worse(), c.verdict()),
        None => (true, "fleet capacity was not computed".to_string()),
    };
    let over = over_limits(limits);
    if !over.is_empty() {
        failed = true;
        why.push_str(&over);
    }
    (failed, why)
}

/// `; tenant research declares 16 GPUs, over its limit of 10` for each tenant over its limit.
fn over_limits(limits: &[TenantLimit]) -> String {
    limits
        .iter()
        .filter(|l| l.over)
        .map(|l| {
            format!(
                "; tenant {} declares {} GPUs, over its limit of {}",
                l.tenant, l.gpus_head, l.limit
            )
        })
        .collect()
}
