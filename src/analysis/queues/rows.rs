//! The queue rows: one per Kueue ClusterQueue and GPU flavor, one per KAI Queue — quota, limits,
//! what the status says is admitted and borrowed, and what waits.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::queues::{Admission, ClusterQueue, KaiQueue, ResourceFlavor};
use crate::report::queues::{Amount, QueueKind, QueueRow};
use crate::report::{Known, Unknown};

use super::super::tenancy::Resolver;

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

pub(super) fn cluster_queue_rows(
    a: &Admission,
    cq: &ClusterQueue,
    queued: &BTreeMap<(String, Option<String>), (u64, u64)>,
    tenancy: &Resolver<'_>,
) -> Vec<QueueRow> {
    let problems: Vec<String> = cq.all_problems().map(ToString::to_string).collect();
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
            // A queue whose figures did not read has its limits unknown, not "no limit".
            if !problems.is_empty() {
                for f in ["borrowing_limit", "lending_limit"] {
                    unknown.set(f, problems.join("; "));
                }
            }
            let limit = |v: Option<u64>| {
                if problems.is_empty() {
                    v.map(Amount::whole)
                } else {
                    None
                }
            };
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

pub(super) fn kai_row(
    a: &Admission,
    q: &KaiQueue,
    queued: &HashMap<String, (f64, u64)>,
    tenants_by_queue: &BTreeMap<String, BTreeSet<String>>,
) -> QueueRow {
    let mut unknown = Unknown::default();
    let problem = q.all_problems().next().map(ToString::to_string);
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
        queued: Some(Amount(gpus)),
        workloads_queued: Some(groups),
        tenants: tenants.into_iter().collect(),
        unknown,
    }
}
