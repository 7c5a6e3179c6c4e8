//! Work waiting for admission, in the owner walk: KAI pod groups their queue holds (their pods
//! wait for quota, not for a node), and Kueue Workloads waiting for quota (a suspended job has no
//! pod: its Workload's pod sets are its demand).

use std::collections::HashSet;

use crate::k8s::gpus::Gpus;
use crate::k8s::object::{Body, Object};
use crate::util::sum::{Named, Overflow};
use crate::workload::pods::pod_request;

/// The KAI pod groups (namespace, name) that their queue holds.
pub(super) fn held_pod_groups(objects: &[Object]) -> HashSet<(&str, &str)> {
    objects
        .iter()
        .filter(|o| match &o.body {
            Body::PodGroup(g) => g.held_by_queue().is_some(),
            _ => false,
        })
        .map(|o| (o.namespace(), o.meta.name.as_str()))
        .collect()
}

/// Whether pod `o` belongs to one of the pod groups `held` (the pod-grouper's annotation).
pub(super) fn in_held_group(o: &Object, held: &HashSet<(&str, &str)>) -> bool {
    !held.is_empty()
        && o.meta
            .annotations
            .get(crate::k8s::queue::POD_GROUP_ANNOTATION)
            .is_some_and(|g| held.contains(&(o.namespace(), g.as_str())))
}

/// One Kueue pod set waiting for quota: its name, each pod's GPUs, and its pods.
pub(super) struct WaitingPodSet {
    pub name: crate::k8s::types::Text,
    pub per_pod: Gpus,
    pub count: u64,
}

/// Each Kueue Workload waiting for quota (by object index) with its pod sets. A Workload of pods
/// (Kueue's pod integration) is left out: its gated pods count themselves.
pub(super) fn waiting_workloads(
    objects: &[Object],
) -> Result<Vec<(usize, Vec<WaitingPodSet>)>, Overflow> {
    let mut out = Vec::new();
    for (i, o) in objects.iter().enumerate() {
        let Body::KueueWorkload(w) = &o.body else {
            continue;
        };
        let of_pods = o
            .meta
            .owner_references
            .iter()
            .any(|r| r.kind.as_str() == "Pod");
        if !w.waits_for_quota() || of_pods {
            continue;
        }
        let sets = w
            .spec
            .pod_sets
            .iter()
            .map(|ps| {
                Ok(WaitingPodSet {
                    name: ps.name.clone(),
                    per_pod: pod_request(&ps.template.spec)
                        .named(o, "the GPUs of its Kueue pod set")?,
                    // A Workload written without a count is one pod (the API requires it).
                    count: ps.count.unwrap_or(1),
                })
            })
            .collect::<Result<_, Overflow>>()?;
        out.push((i, sets));
    }
    Ok(out)
}
