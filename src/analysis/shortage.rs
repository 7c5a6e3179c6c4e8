//! Capacity or placement? The inventory's diagnosis of its pending pods: placed largest first on
//! the placeable node with the least free room that fits them, what cannot be placed is a
//! placement problem when the fleet has enough free GPUs in total, else a capacity problem.

use std::collections::{BTreeMap, HashMap};

use crate::k8s::object::{Body, Object};
use crate::k8s::types::LabelMap;
use crate::report::*;
use crate::util::sum::{self, Named, Overflow};
use crate::workload::Workload;
use crate::workload::owners::{GpuPod, PodState};

use super::nodes::GpuNode;

/// Capacity or placement? Places pending pods, largest first, on the placeable node with the least
/// free room that fits them (best fit) and matches their node selector; what cannot be placed is a
/// placement problem if the fleet has enough free GPUs in total, else a capacity problem.
pub(super) fn shortage(
    objects: &[Object],
    nodes: &BTreeMap<&str, GpuNode<'_>>,
    on_node: &HashMap<&str, u64>,
    pods: &[GpuPod],
    workloads: &[Workload],
) -> Result<Shortage, Overflow> {
    const FLEET: &str = "the fleet";
    let mut free: Vec<(&GpuNode<'_>, u64)> = nodes
        .values()
        .filter(|n| n.placeable)
        .map(|n| {
            (
                n,
                n.allocatable
                    .saturating_sub(on_node.get(n.name).copied().unwrap_or(0)),
            )
        })
        .collect();
    let free_total = sum::sum(free.iter().map(|(_, f)| *f)).named(FLEET, "free GPUs")?;
    let largest = free.iter().map(|(_, f)| *f).max().unwrap_or(0);
    let mut pending: Vec<&GpuPod> = pods
        .iter()
        .filter(|p| p.state == PodState::Pending && p.gpus.whole > 0)
        .collect();
    pending.sort_by(|a, b| {
        b.gpus.whole.cmp(&a.gpus.whole).then_with(|| {
            let key = |p: &GpuPod| objects.get(p.object).map(|x| (x.namespace(), &x.meta.name));
            key(a).cmp(&key(b))
        })
    });
    let pending_total =
        sum::sum(pending.iter().map(|p| p.gpus.whole)).named(FLEET, "GPUs pending")?;

    let mut unplaceable = Vec::new();
    // A shared claim waits for a node of its own: it names none.
    let none = LabelMap::new();
    // The fewest GPUs a pod of each node selector found no room for: room only shrinks here, so a
    // pod of that selector asking as many finds none either (tens of thousands of pending pods on
    // a full fleet are not each tried on every node).
    let mut no_room: HashMap<&LabelMap, u64> = HashMap::new();
    for p in &pending {
        let Some(o) = objects.get(p.object) else {
            continue;
        };
        let selector = match &o.body {
            Body::Pod(b) => &b.spec.node_selector,
            _ => &none,
        };
        let need = p.gpus.whole;
        let best = match no_room.get(selector) {
            Some(&n) if need >= n => None,
            _ => free
                .iter_mut()
                .filter(|(n, f)| {
                    *f >= need && selector.iter().all(|(k, v)| n.labels.get(k) == Some(v))
                })
                .min_by_key(|(_, f)| *f),
        };
        if best.is_none() {
            let n = no_room.entry(selector).or_insert(need);
            *n = (*n).min(need);
        }
        match best {
            // `best` has at least `need` free.
            Some((_, f)) => *f = f.saturating_sub(need),
            None => unplaceable.push(PendingPod {
                namespace: o.namespace().to_string(),
                name: o.meta.name.clone(),
                gpus: need,
                workload: p
                    .workload
                    .and_then(|w| workloads.get(w))
                    .map(|w| w.id.to_string())
                    .unwrap_or_default(),
            }),
        }
    }
    let (kind, summary) = if pending_total == 0 {
        (ShortageKind::None, "no GPU pods are pending".to_string())
    } else if unplaceable.is_empty() {
        (
            ShortageKind::Fits,
            format!("{pending_total} pending GPUs fit in the {free_total} free on placeable nodes"),
        )
    } else if free_total < pending_total {
        (
            ShortageKind::Capacity,
            format!(
                "capacity problem: {pending_total} GPUs pending but only {free_total} free on placeable nodes (short by {})",
                pending_total.saturating_sub(free_total)
            ),
        )
    } else {
        // A subset of the pending pods, whose total was checked above.
        let stuck = sum::sum(unplaceable.iter().map(|p| p.gpus)).named(FLEET, "GPUs pending")?;
        (
            ShortageKind::Placement,
            format!(
                "placement problem: {free_total} GPUs free on placeable nodes cover the {pending_total} pending, but {} pending pods ({stuck} GPUs) fit on no single node (largest free block: {largest})",
                unplaceable.len()
            ),
        )
    };
    Ok(Shortage {
        kind,
        free_placeable: free_total,
        pending: pending_total,
        largest_free_block: largest,
        unplaceable,
        summary,
        next_step: None,
        quota: None,
    })
}
