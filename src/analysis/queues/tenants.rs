//! Each tenant's standing in the queues: the quota of the queues its namespaces submit to, the
//! GPUs of its admitted work, what its queues borrow — and who runs beyond their quota.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::model::{QueueFigures, TenantQuota, Waits, owner_workload};
use crate::k8s::object::Object;
use crate::queues::{Admission, Reclaim};
use crate::report::queues::{Amount, BorrowingRow, QueueKind, TenantQueues};
use crate::report::{Known, Unknown};
use crate::workload::Workload;

use super::super::tenancy::Resolver;

/// Per tenant: the nominal GPU quota of the queues its namespaces submit to, the GPUs of its
/// admitted Kueue Workloads (KAI: its bound pods in queues), and what it borrows.
pub(super) fn tenant_quota(
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
                .map(|u| u.values().fold(0u64, |a, u| a.saturating_add(u.borrowed)))
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
            .fold(0, u64::saturating_add);
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
pub(super) fn kai_tenant_quota(
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
pub(super) fn borrowing(a: &Admission, tenancy: &Resolver<'_>) -> Vec<BorrowingRow> {
    let mut rows = Vec::new();
    for cq in &a.cluster_queues {
        let b: u64 = cq
            .usage
            .as_ref()
            .map(|u| u.values().fold(0u64, |a, u| a.saturating_add(u.borrowed)))
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
