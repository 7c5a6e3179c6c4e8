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
mod model;
pub mod pool;
mod rows;
mod tenants;

pub use flavors::{allows, first_flavor};
pub use model::{QueueFigures, TenantQuota, Waits};
use model::{owner_workload, queue_state};
pub use tenants::{merge_tenant, tenant_columns};
pub mod tree;

#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::k8s::object::Object;
use crate::queues::{Admission, KAI_QUEUE_LABEL, PodSetGpus, QUEUE_LABEL, QueueWorkload};
use crate::report::Unknown;
use crate::report::queues::{Amount, QueueKind, QueueRow, QueueState};
use crate::workload::Workload;

use super::tenancy::Resolver;

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
    let queued = kueue_waits(a, objects, owner_of, &pods, &mut out);
    labelled_waits(a, workloads, &mut out);
    kai_waits(a, objects, owner_of, &mut out);

    for cq in &a.cluster_queues {
        out.rows
            .extend(rows::cluster_queue_rows(a, cq, &queued, tenancy));
    }
    out.rows.extend(unread_queue_rows(a, &queued));
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
        out.rows
            .push(rows::kai_row(a, q, &kai_queued, &kai_tenants));
    }
    out.tenants = tenants::tenant_quota(a, tenants_of, owner_of, objects, &pods, tenancy);
    tenants::kai_tenant_quota(
        a,
        workloads,
        tenants_of,
        &out.waits,
        &kai_tenants,
        &mut out.tenants,
    );
    out.borrowing = tenants::borrowing(a, tenancy);
    out.problems = a
        .problems
        .iter()
        .chain(&a.reference_problems)
        .map(ToString::to_string)
        .collect();
    out
}

/// Each Kueue Workload's queue, flavor and state, on the live workload it belongs to; and the
/// GPUs queued per (ClusterQueue, flavor) with how many workloads wait.
fn kueue_waits(
    a: &Admission,
    objects: &[Object],
    owner_of: &[Option<usize>],
    pods: &HashMap<(&str, &str), usize>,
    out: &mut QueueFigures,
) -> BTreeMap<(String, Option<String>), (u64, u64)> {
    // Each Kueue Workload's ClusterQueue: its admission's, else its LocalQueue's.
    let cq_of = |w: &QueueWorkload| -> Option<String> {
        w.admission
            .as_ref()
            .map(|x| x.cluster_queue.to_string())
            .or_else(|| {
                a.cluster_queue_of(&w.namespace, w.local_queue.as_deref())
                    .map(str::to_string)
            })
    };
    // Queued GPUs per (queue, flavor) and the live workload each Kueue Workload waits for.
    let mut queued: BTreeMap<(String, Option<String>), (u64, u64)> = BTreeMap::new();
    for w in &a.workloads {
        let owner = owner_workload(w, objects, owner_of, pods);
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
    queued
}

/// A live workload that names a queue but whose Workload was not read (its pods gated, a job
/// Kueue has not seen yet), or a KAI workload by its label.
fn labelled_waits(a: &Admission, workloads: &[Workload], out: &mut QueueFigures) {
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
}

/// Rows for work waiting in a ClusterQueue that was not read: its quota is unknown.
fn unread_queue_rows(
    a: &Admission,
    queued: &BTreeMap<(String, Option<String>), (u64, u64)>,
) -> Vec<QueueRow> {
    let mut rows = Vec::new();
    // Work waiting in a ClusterQueue that was not read.
    for ((q, _), (gpus, n)) in queued {
        if a.cluster_queue(q).is_none() {
            let mut unknown = Unknown::default();
            unknown.set("nominal", format!("no ClusterQueue {q} was read"));
            rows.push(QueueRow {
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
    rows
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

/// GPUs queued per KAI queue (pods in pod groups their queue holds: whole GPUs and, as the GPUs
/// they add up to, KAI GPU shares), and how many groups.
fn kai_queued(a: &Admission, objects: &[Object]) -> HashMap<String, (f64, u64)> {
    let mut out: HashMap<String, (f64, u64)> = HashMap::new();
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
        let share = crate::k8s::queue::kai_share(&o.meta.annotations);
        #[allow(clippy::cast_precision_loss)]
        let gpus = crate::workload::pods::pod_request(&p.spec).map_or(0, |g| g.whole) as f64
            + share.fraction_centi as f64 / 100.0;
        let e = out.entry(q.to_string()).or_default();
        e.0 += gpus;
        if groups.insert(key) {
            e.1 += 1;
        }
    }
    out
}

/// The admission objects whose figures could not be read, as the report's incomplete inputs
/// (`ClusterQueue cq-a spec.resourceGroups[0]…nominalQuota: "lots" is not a quantity`).
pub fn incomplete(a: &Admission) -> Vec<crate::report::IncompleteInput> {
    a.all_problems()
        .map(|p| crate::report::IncompleteInput {
            resource: p.object.clone(),
            reason: if p.field.is_empty() {
                p.why.clone()
            } else {
                format!("{}: {}", p.field, p.why)
            },
        })
        .collect()
}

/// Where each job's Kueue Workload stands when it waits (`namespace/Kind/name` of the job).
pub fn job_states(a: &Admission) -> HashMap<String, QueueState> {
    a.workloads
        .iter()
        .filter(|w| w.is_queued())
        .filter_map(|w| Some((w.owner.clone()?, queue_state(w)?)))
        .collect()
}
