//! What the admission queues hold, from the live fleet and its [`Admission`]: one row per queue
//! and GPU flavor, the queue each live workload waits in (and the GPU model its queued GPUs are
//! for), each tenant's quota, admitted and borrowed GPUs, and who runs beyond their quota.
//!
//! The queued GPUs themselves are counted by the owner walk (`workload::owners`: pods held by
//! admission, else the pod sets of Kueue Workloads waiting for quota), so that every GPU is in
//! exactly one of pending and queued; this module says where they wait. A queue whose figures
//! could not be read ([`crate::queues::Problem`]) has them unknown in its rows, never 0.
//!
//! [`tree`] is Kueue's quota arithmetic, [`admit`] its admission of one more workload (a pull
//! request's verdict), [`change`] what a change to queues or quotas moves.

pub mod admit;
pub mod change;
pub mod diagnose;
mod flavors;
pub mod pool;

pub use flavors::{allows, first_flavor};
pub mod tree;

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::k8s::object::Object;
use crate::queues::{
    Admission, ClusterQueue, KAI_QUEUE_LABEL, KaiQueue, PodSetGpus, QUEUE_LABEL, QueueWorkload,
    Reclaim, ResourceFlavor,
};
use crate::report::queues::{Amount, BorrowingRow, QueueKind, QueueRow, QueueState, TenantQueues};
use crate::report::{Known, Unknown};
use crate::workload::Workload;

use super::tenancy::Resolver;

/// Where one live workload's queued GPUs wait.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Waits {
    /// The ClusterQueue (or KAI queue).
    pub queue: Option<String>,
    pub kind: Option<QueueKind>,
    /// The flavor (the first of its queue's whose node labels its pods allow).
    pub flavor: Option<String>,
    /// The GPU model: the flavor's, else its own node selector's, else `None` (any).
    pub model: Option<String>,
    /// Where its Kueue Workload stands: waiting, evicted or preempted (and waiting again).
    pub state: Option<QueueState>,
    /// Kueue says it can never be admitted as the queues are: its reason.
    pub never: Option<String>,
}

/// Where a Kueue Workload stands in its queue, as a drift or workload row says it.
fn queue_state(w: &QueueWorkload) -> Option<QueueState> {
    if w.preempted.is_some() {
        Some(QueueState::Preempted)
    } else if w.evicted.is_some() {
        Some(QueueState::Evicted)
    } else if w.is_queued() {
        Some(QueueState::Queued)
    } else {
        None
    }
}

/// A tenant's standing in the queues.
#[derive(Debug, Clone, PartialEq)]
pub struct TenantQuota {
    /// Nominal GPU quota of the queues its namespaces submit to.
    pub quota: Amount,
    pub admitted: Amount,
    pub borrowed: Known<Amount>,
}

/// The queues' figures of one fleet.
#[derive(Debug, Clone, Default)]
pub struct QueueFigures {
    pub rows: Vec<QueueRow>,
    /// By live workload index.
    pub waits: HashMap<usize, Waits>,
    pub tenants: BTreeMap<String, TenantQuota>,
    pub borrowing: Vec<BorrowingRow>,
    /// The live workloads whose Kueue Workload holds quota (admitted, or about to start).
    pub reserved: BTreeSet<usize>,
    /// Problems of objects that are not a queue row's own.
    pub problems: Vec<String>,
}

/// The live workload each Kueue Workload belongs to: its owner chain's, or (a Workload of pods)
/// its first pod's.
fn owner_workload(
    w: &QueueWorkload,
    objects: &[Object],
    owner_of: &[Option<usize>],
    pods: &HashMap<(&str, &str), usize>,
) -> Option<usize> {
    if w.owned_by_pod {
        let o = objects.get(w.object)?;
        return o
            .meta
            .owner_references
            .iter()
            .filter(|r| r.kind.as_str() == "Pod")
            .find_map(|r| pods.get(&(o.namespace(), r.name.as_str())))
            .and_then(|&p| owner_of.get(p).copied().flatten());
    }
    owner_of.get(w.object).copied().flatten()
}

/// The GPU pod set that decides a workload's flavor: its first with GPUs.
fn gpu_pod_set(w: &QueueWorkload) -> Option<&PodSetGpus> {
    w.pod_sets.iter().find(|p| p.gpus_per_pod > 0)
}

/// The figures of the queues of a fleet.
pub fn figures(
    a: &Admission,
    objects: &[Object],
    workloads: &[Workload],
    tenants_of: &[String],
    owner_of: &[Option<usize>],
    tenancy: &Resolver<'_>,
) -> QueueFigures {
    let mut out = QueueFigures::default();
    if a.is_empty() {
        return out;
    }
    let pods: HashMap<(&str, &str), usize> = objects
        .iter()
        .enumerate()
        .filter(|(_, o)| matches!(o.body, crate::k8s::object::Body::Pod(_)))
        .map(|(i, o)| ((o.namespace(), o.meta.name.as_str()), i))
        .collect();
    // Each Kueue Workload's ClusterQueue: its admission's, else its LocalQueue's.
    let cq_of = |w: &QueueWorkload| -> Option<String> {
        w.admission
            .as_ref()
            .map(|x| x.cluster_queue.clone())
            .or_else(|| {
                a.cluster_queue_of(&w.namespace, w.local_queue.as_deref())
                    .map(str::to_string)
            })
    };
    // Queued GPUs per (queue, flavor) and the live workload each Kueue Workload waits for.
    let mut queued: BTreeMap<(String, Option<String>), (u64, u64)> = BTreeMap::new();
    for w in &a.workloads {
        let owner = owner_workload(w, objects, owner_of, &pods);
        let Some(cq_name) = cq_of(w) else { continue };
        let cq = a.cluster_queue(&cq_name);
        let ps = gpu_pod_set(w);
        let (flavor, model) = match (cq, ps) {
            (Some(cq), Some(ps)) => first_flavor(a, cq, ps)
                .map(|(f, m)| (Some(f.to_string()), m.map(str::to_string)))
                .unwrap_or_default(),
            _ => (None, None),
        };
        if w.is_queued() && w.gpus() > 0 {
            let e = queued.entry((cq_name.clone(), flavor.clone())).or_default();
            e.0 = e.0.saturating_add(w.gpus());
            e.1 += 1;
        }
        if let Some(i) = owner
            && w.state == crate::queues::WorkloadState::Reserved
        {
            out.reserved.insert(i);
        }
        if let Some(i) = owner {
            let model = model.or_else(|| {
                ps.and_then(|p| p.models.as_ref())
                    .filter(|m| m.len() == 1)
                    .and_then(|m| m.first().cloned())
            });
            let waits = out.waits.entry(i).or_default();
            // A workload's queue is its waiting Workload's when it has one.
            if waits.queue.is_none() || w.is_queued() {
                *waits = Waits {
                    queue: Some(cq_name),
                    kind: Some(QueueKind::ClusterQueue),
                    flavor,
                    model,
                    state: queue_state(w),
                    never: match &w.state {
                        crate::queues::WorkloadState::Queued { reason, .. } if w.never_fits() => {
                            Some(if reason.is_empty() {
                                "Pending".into()
                            } else {
                                reason.clone()
                            })
                        }
                        _ => None,
                    },
                };
            }
        }
    }
    // A live workload that names a queue but has no Workload read (its pods gated, or a job
    // Kueue has not seen yet).
    for (i, w) in workloads.iter().enumerate() {
        if out.waits.contains_key(&i) {
            continue;
        }
        let ns = &w.id.namespace;
        // A live job Kueue manages carries the label (the default LocalQueue is applied when a
        // job is created, as the label).
        let kueue = w.labels.get(QUEUE_LABEL).map(|l| l.as_str());
        if let Some(cq) = kueue.and_then(|l| a.cluster_queue_of(ns, Some(l))) {
            out.waits.insert(
                i,
                Waits {
                    queue: Some(cq.to_string()),
                    kind: Some(QueueKind::ClusterQueue),
                    ..Waits::default()
                },
            );
        } else if let Some(q) = w.labels.get(KAI_QUEUE_LABEL) {
            out.waits.insert(
                i,
                Waits {
                    queue: Some(q.to_string()),
                    kind: Some(QueueKind::KaiQueue),
                    ..Waits::default()
                },
            );
        }
    }
    kai_waits(a, objects, owner_of, &mut out);

    for cq in &a.cluster_queues {
        out.rows.extend(cluster_queue_rows(a, cq, &queued, tenancy));
    }
    // Work waiting in a ClusterQueue that was not read.
    for ((q, _), (gpus, n)) in &queued {
        if a.cluster_queue(q).is_none() {
            let mut unknown = Unknown::default();
            unknown.set("nominal", format!("no ClusterQueue {q} was read"));
            out.rows.push(QueueRow {
                queue: q.clone(),
                kind: QueueKind::ClusterQueue,
                cohort: None,
                flavor: None,
                models: Vec::new(),
                nominal: None,
                borrowing_limit: None,
                lending_limit: None,
                admitted: None,
                borrowed: None,
                queued: Some(Amount::whole(*gpus)),
                workloads_queued: Some(*n),
                tenants: Vec::new(),
                unknown,
            });
        }
    }
    let kai_queued = kai_queued(a, objects);
    let mut kai_tenants: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (i, w) in &out.waits {
        if let (Some(QueueKind::KaiQueue), Some(q), Some(t)) =
            (w.kind, &w.queue, tenants_of.get(*i))
        {
            kai_tenants.entry(q.clone()).or_default().insert(t.clone());
        }
    }
    for q in &a.kai_queues {
        out.rows.push(kai_row(a, q, &kai_queued, &kai_tenants));
    }
    out.tenants = tenant_quota(a, tenants_of, owner_of, objects, &pods, tenancy);
    kai_tenant_quota(
        a,
        workloads,
        tenants_of,
        &out.waits,
        &kai_tenants,
        &mut out.tenants,
    );
    out.borrowing = borrowing(a, tenancy);
    out.problems = a.problems.iter().map(ToString::to_string).collect();
    out
}

/// KAI: a live workload's queue is its pods' pod group's (or the label on its pods).
fn kai_waits(
    a: &Admission,
    objects: &[Object],
    owner_of: &[Option<usize>],
    out: &mut QueueFigures,
) {
    if !a.kai() {
        return;
    }
    let groups: HashMap<(&str, &str), &str> = a
        .pod_groups
        .iter()
        .map(|g| ((g.namespace.as_str(), g.name.as_str()), g.queue.as_str()))
        .collect();
    for (i, o) in objects.iter().enumerate() {
        let crate::k8s::object::Body::Pod(_) = &o.body else {
            continue;
        };
        let Some(w) = owner_of.get(i).copied().flatten() else {
            continue;
        };
        let queue = o
            .meta
            .annotations
            .get(crate::queues::POD_GROUP_ANNOTATION)
            .and_then(|g| groups.get(&(o.namespace(), g.as_str())).copied())
            .or_else(|| o.meta.labels.get(KAI_QUEUE_LABEL).map(|l| l.as_str()));
        if let Some(q) = queue {
            out.waits.entry(w).or_insert_with(|| Waits {
                queue: Some(q.to_string()),
                kind: Some(QueueKind::KaiQueue),
                ..Waits::default()
            });
        }
    }
}

/// GPUs queued per KAI queue (pods in pod groups their queue holds), and the groups.
fn kai_queued(a: &Admission, objects: &[Object]) -> HashMap<String, (u64, u64)> {
    let mut out: HashMap<String, (u64, u64)> = HashMap::new();
    let held: HashMap<(&str, &str), &str> = a
        .pod_groups
        .iter()
        .filter(|g| g.held_by_queue.is_some())
        .map(|g| ((g.namespace.as_str(), g.name.as_str()), g.queue.as_str()))
        .collect();
    let mut groups: BTreeSet<(&str, &str)> = BTreeSet::new();
    for o in objects {
        let crate::k8s::object::Body::Pod(p) = &o.body else {
            continue;
        };
        if crate::workload::owners::PodState::of(o) != crate::workload::owners::PodState::Pending {
            continue;
        }
        let Some(g) = o.meta.annotations.get(crate::queues::POD_GROUP_ANNOTATION) else {
            continue;
        };
        let key = (o.namespace(), g.as_str());
        let Some(q) = held.get(&key) else { continue };
        let gpus = crate::workload::pods::pod_request(&p.spec).map_or(0, |g| g.whole);
        let e = out.entry(q.to_string()).or_default();
        e.0 = e.0.saturating_add(gpus);
        if groups.insert(key) {
            e.1 += 1;
        }
    }
    out
}

fn amount_or(
    unknown: &mut Unknown,
    field: &str,
    problems: &[String],
    v: Option<u64>,
) -> Option<Amount> {
    if let Some(p) = problems.first() {
        unknown.set(field, p.clone());
        return None;
    }
    v.map(Amount::whole)
}

fn cluster_queue_rows(
    a: &Admission,
    cq: &ClusterQueue,
    queued: &BTreeMap<(String, Option<String>), (u64, u64)>,
    tenancy: &Resolver<'_>,
) -> Vec<QueueRow> {
    let problems: Vec<String> = cq.problems.iter().map(ToString::to_string).collect();
    let tenants: Vec<String> = a
        .namespaces_of(&cq.name)
        .into_iter()
        .map(|ns| tenancy.tenant(&Default::default(), ns))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut flavors: Vec<Option<String>> =
        cq.flavors.iter().map(|f| Some(f.flavor.clone())).collect();
    // Work that waits in this queue with no GPU flavor its pods allow.
    if queued.contains_key(&(cq.name.clone(), None)) {
        flavors.push(None);
    }
    flavors
        .into_iter()
        .map(|flavor| {
            let mut unknown = Unknown::default();
            let quota = flavor.as_deref().and_then(|f| cq.quota(f)).copied();
            let usage = match (&cq.usage, &flavor) {
                (Some(u), Some(f)) => Known::Value(u.get(f).copied().unwrap_or_default()),
                (None, Some(_)) => Known::Unknown(format!(
                    "ClusterQueue {} reports no status.flavorsUsage (not reconciled yet, or not read from the cluster)",
                    cq.name
                )),
                (_, None) => Known::Value(Default::default()),
            };
            let (admitted, borrowed) = if problems.is_empty() {
                match usage {
                    Known::Value(u) => (Some(Amount::whole(u.total)), Some(Amount::whole(u.borrowed))),
                    Known::Unknown(why) => {
                        unknown.set("admitted", why.clone());
                        unknown.set("borrowed", why);
                        (None, None)
                    }
                }
            } else {
                for f in ["admitted", "borrowed"] {
                    unknown.set(f, problems.join("; "));
                }
                (None, None)
            };
            let (q, n) = queued
                .get(&(cq.name.clone(), flavor.clone()))
                .copied()
                .unwrap_or_default();
            let nominal = amount_or(&mut unknown, "nominal", &problems, Some(quota.map_or(0, |q| q.nominal)));
            let limit = |v: Option<u64>| if problems.is_empty() { v.map(Amount::whole) } else { None };
            if flavor.is_none() {
                unknown.set(
                    "flavor",
                    "queued work whose pods allow none of this queue's GPU flavors (Kueue: NoMatchingFlavor)",
                );
            }
            QueueRow {
                queue: cq.name.clone(),
                kind: QueueKind::ClusterQueue,
                cohort: cq.cohort.clone(),
                models: flavor
                    .as_deref()
                    .and_then(|f| a.flavor(f))
                    .and_then(ResourceFlavor::model)
                    .map(str::to_string)
                    .into_iter()
                    .collect(),
                flavor,
                nominal,
                borrowing_limit: limit(quota.and_then(|q| q.borrowing_limit)),
                lending_limit: limit(quota.and_then(|q| q.lending_limit)),
                admitted,
                borrowed,
                queued: Some(Amount::whole(q)),
                workloads_queued: Some(n),
                tenants: tenants.clone(),
                unknown,
            }
        })
        .collect()
}

/// The queues above KAI queue `name`, nearest first.
fn kai_ancestors<'a>(a: &'a Admission, name: &str) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut at = a.kai_queue(name).and_then(|q| q.parent.as_deref());
    while let Some(p) = at {
        if out.contains(&p) || out.len() > a.kai_queues.len() {
            break;
        }
        out.push(p);
        at = a.kai_queue(p).and_then(|q| q.parent.as_deref());
    }
    out
}

fn kai_row(
    a: &Admission,
    q: &KaiQueue,
    queued: &HashMap<String, (u64, u64)>,
    tenants_by_queue: &BTreeMap<String, BTreeSet<String>>,
) -> QueueRow {
    let mut unknown = Unknown::default();
    let problem = q.problems.first().map(ToString::to_string);
    let mut known = |field: &str, v: Option<f64>, why_none: Option<&str>| -> Option<Amount> {
        if let Some(p) = &problem {
            unknown.set(field, p.clone());
            return None;
        }
        if v.is_none()
            && let Some(why) = why_none
        {
            unknown.set(field, why);
        }
        v.map(Amount)
    };
    let quota = q.quota.filter(|n| *n >= 0.0);
    let nominal = known("nominal", quota, Some(crate::report::queues::KAI_NO_QUOTA));
    let borrowing_limit = known(
        "borrowing_limit",
        q.limit.map(|l| (l - quota.unwrap_or(0.0)).max(0.0)),
        None,
    );
    let admitted = known(
        "admitted",
        q.allocated,
        Some("the queue reports no status.allocated"),
    );
    let borrowed = admitted.zip(quota).map(|(a, n)| Amount((a.0 - n).max(0.0)));
    let (gpus, groups) = queued.get(&q.name).copied().unwrap_or_default();
    // A parent queue serves the tenants of the queues under it.
    let tenants: BTreeSet<String> = a
        .kai_queues
        .iter()
        .filter(|x| x.name == q.name || kai_ancestors(a, &x.name).contains(&q.name.as_str()))
        .filter_map(|x| tenants_by_queue.get(&x.name))
        .flatten()
        .cloned()
        .collect();
    QueueRow {
        queue: q.name.clone(),
        kind: QueueKind::KaiQueue,
        cohort: q.parent.clone(),
        flavor: None,
        models: Vec::new(),
        nominal,
        borrowing_limit,
        lending_limit: None,
        admitted,
        borrowed,
        queued: Some(Amount::whole(gpus)),
        workloads_queued: Some(groups),
        tenants: tenants.into_iter().collect(),
        unknown,
    }
}

/// Per tenant: the nominal GPU quota of the queues its namespaces submit to, the GPUs of its
/// admitted Kueue Workloads (KAI: its bound pods in queues), and what it borrows.
fn tenant_quota(
    a: &Admission,
    tenants_of: &[String],
    owner_of: &[Option<usize>],
    objects: &[Object],
    pods: &HashMap<(&str, &str), usize>,
    tenancy: &Resolver<'_>,
) -> BTreeMap<String, TenantQuota> {
    let mut out: BTreeMap<String, TenantQuota> = BTreeMap::new();
    let mut queues_of: BTreeMap<String, BTreeSet<&str>> = BTreeMap::new();
    for l in &a.local_queues {
        let t = tenancy.tenant(&Default::default(), &l.namespace);
        queues_of
            .entry(t)
            .or_default()
            .insert(l.cluster_queue.as_str());
    }
    // Tenants of each ClusterQueue: a queue's borrowing is a tenant's only when it serves one.
    let mut tenants_of_queue: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (t, qs) in &queues_of {
        for q in qs {
            tenants_of_queue.entry(q).or_default().insert(t.as_str());
        }
    }
    for (t, qs) in &queues_of {
        let mut quota = 0u64;
        let mut borrowed: Known<Amount> = Known::Value(Amount::default());
        for q in qs {
            let Some(cq) = a.cluster_queue(q) else {
                continue;
            };
            quota = cq
                .flavors
                .iter()
                .map(|f| f.quota.nominal)
                .fold(quota, u64::saturating_add);
            let b: u64 = cq
                .usage
                .as_ref()
                .map(|u| u.values().map(|u| u.borrowed).sum())
                .unwrap_or(0);
            if b > 0 {
                let sole = tenants_of_queue.get(q).is_some_and(|s| s.len() == 1);
                borrowed = match borrowed {
                    Known::Value(n) if sole => Known::Value(Amount(n.0 + Amount::whole(b).0)),
                    Known::Value(_) => Known::Unknown(format!(
                        "ClusterQueue {q} borrows {b} GPUs for several tenants: borrowing is the queue's, not a tenant's"
                    )),
                    u => u,
                };
            }
        }
        out.insert(
            t.clone(),
            TenantQuota {
                quota: Amount::whole(quota),
                admitted: Amount::default(),
                borrowed,
            },
        );
    }
    // Admitted GPUs of each tenant's Kueue Workloads.
    for w in &a.workloads {
        if w.state != crate::queues::WorkloadState::Reserved {
            continue;
        }
        let tenant = owner_workload(w, objects, owner_of, pods)
            .and_then(|i| tenants_of.get(i).cloned())
            .unwrap_or_else(|| tenancy.tenant(&Default::default(), &w.namespace));
        let gpus: u64 = w
            .pod_sets
            .iter()
            .map(|p| {
                let admitted = w
                    .admission
                    .as_ref()
                    .and_then(|x| x.pod_sets.iter().find(|s| s.name == p.name))
                    .and_then(|s| s.count)
                    .unwrap_or(p.count);
                admitted.saturating_mul(p.gpus_per_pod)
            })
            .sum();
        let e = out.entry(tenant).or_insert(TenantQuota {
            quota: Amount::default(),
            admitted: Amount::default(),
            borrowed: Known::Value(Amount::default()),
        });
        e.admitted = Amount(e.admitted.0 + Amount::whole(gpus).0);
    }
    out
}

/// KAI: a tenant's quota is that of the leaf queues its workloads are in; admitted, their bound
/// GPUs (shares as the GPUs they add up to); borrowed, what those queues hold above their quota
/// when the tenant is their only one.
fn kai_tenant_quota(
    a: &Admission,
    workloads: &[Workload],
    tenants_of: &[String],
    waits: &HashMap<usize, Waits>,
    tenants_by_queue: &BTreeMap<String, BTreeSet<String>>,
    out: &mut BTreeMap<String, TenantQuota>,
) {
    let mut queues: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (i, w) in workloads.iter().enumerate() {
        let Some(q) = waits
            .get(&i)
            .filter(|w| w.kind == Some(QueueKind::KaiQueue))
            .and_then(|w| w.queue.as_deref())
        else {
            continue;
        };
        let Some(t) = tenants_of.get(i) else { continue };
        queues.entry(t.as_str()).or_default().insert(q);
        let e = out.entry(t.clone()).or_insert(TenantQuota {
            quota: Amount::default(),
            admitted: Amount::default(),
            borrowed: Known::Value(Amount::default()),
        });
        #[allow(clippy::cast_precision_loss)]
        let held = w.requested.whole as f64 + w.requested.fraction_centi as f64 / 100.0;
        e.admitted = Amount(e.admitted.0 + held);
    }
    for (t, qs) in queues {
        let Some(e) = out.get_mut(t) else { continue };
        for q in qs.iter().filter_map(|q| a.kai_queue(q)) {
            let quota = q.quota.filter(|n| *n >= 0.0);
            e.quota = Amount(e.quota.0 + quota.unwrap_or(0.0));
            let over = q
                .allocated
                .zip(quota)
                .map_or(0.0, |(a, n)| (a - n).max(0.0));
            if over > 0.0 {
                let sole = tenants_by_queue.get(&q.name).is_some_and(|s| s.len() == 1);
                e.borrowed = match &e.borrowed {
                    Known::Value(n) if sole => Known::Value(Amount(n.0 + over)),
                    Known::Value(_) => Known::Unknown(format!(
                        "KAI Queue {} is over its quota for several tenants: that is the queue's, not a tenant's",
                        q.name
                    )),
                    u => u.clone(),
                };
            }
        }
    }
}

/// Where each job's Kueue Workload stands when it waits (`namespace/Kind/name` of the job).
pub fn job_states(a: &Admission) -> HashMap<String, QueueState> {
    a.workloads
        .iter()
        .filter(|w| w.is_queued())
        .filter_map(|w| Some((w.owner.clone()?, queue_state(w)?)))
        .collect()
}

/// Two clusters' standing of one tenant, added up (a borrowed figure unknown in either is
/// unknown, with the cluster named).
pub fn merge_tenant(
    acc: Option<TenantQueues>,
    more: Option<&TenantQueues>,
    cluster: &str,
) -> Option<TenantQueues> {
    let Some(m) = more else { return acc };
    let mut out = acc.unwrap_or(TenantQueues {
        gpus_quota: Amount::default(),
        gpus_admitted: Amount::default(),
        gpus_borrowed: Some(Amount::default()),
        queues_unknown: Unknown::default(),
    });
    out.gpus_quota = Amount(out.gpus_quota.0 + m.gpus_quota.0);
    out.gpus_admitted = Amount(out.gpus_admitted.0 + m.gpus_admitted.0);
    out.gpus_borrowed = out
        .gpus_borrowed
        .zip(m.gpus_borrowed)
        .map(|(a, b)| Amount(a.0 + b.0));
    for (k, why) in m.queues_unknown.iter() {
        out.queues_unknown.set(k, format!("{cluster}: {why}"));
    }
    Some(out)
}

/// Who runs beyond their quota: each ClusterQueue that borrows, with its tenants, and whether the
/// lenders reclaim (a queue of the same cohort with `reclaimWithinCohort` other than `Never`).
fn borrowing(a: &Admission, tenancy: &Resolver<'_>) -> Vec<BorrowingRow> {
    let mut rows = Vec::new();
    for cq in &a.cluster_queues {
        let b: u64 = cq
            .usage
            .as_ref()
            .map(|u| u.values().map(|u| u.borrowed).sum())
            .unwrap_or(0);
        if b == 0 {
            continue;
        }
        let preemptible = a.cluster_queues.iter().any(|o| {
            o.name != cq.name
                && o.cohort.is_some()
                && o.cohort == cq.cohort
                && o.preemption.reclaim_within_cohort != Reclaim::Never
        });
        let namespaces = a.namespaces_of(&cq.name);
        let tenants: BTreeSet<String> = namespaces
            .iter()
            .map(|ns| tenancy.tenant(&Default::default(), ns))
            .collect();
        for t in tenants {
            rows.push(BorrowingRow {
                contacts: tenancy.contacts(&t, namespaces.iter().copied()),
                tenant: t,
                queue: cq.name.clone(),
                borrowed: b,
                preemptible,
            });
        }
    }
    rows.sort_by(|x, y| {
        y.borrowed
            .cmp(&x.borrowed)
            .then_with(|| x.tenant.cmp(&y.tenant))
    });
    rows
}

/// Each tenant row's standing in the queues, when the fleet has admission queues.
pub fn tenant_columns(
    rows: &mut [crate::report::TenantRow],
    figures: &QueueFigures,
    a: &Admission,
) {
    if a.is_empty() {
        return;
    }
    for r in rows {
        let t = figures.tenants.get(&r.name);
        let mut queues_unknown = Unknown::default();
        let borrowed = match t.map(|t| &t.borrowed) {
            Some(Known::Unknown(why)) => {
                queues_unknown.set("gpus_borrowed", why.clone());
                None
            }
            Some(Known::Value(n)) => Some(*n),
            None => Some(Amount::default()),
        };
        r.queues = Some(TenantQueues {
            gpus_quota: t.map_or(Amount::default(), |t| t.quota),
            gpus_admitted: t.map_or(Amount::default(), |t| t.admitted),
            gpus_borrowed: borrowed,
            queues_unknown,
        });
    }
}
