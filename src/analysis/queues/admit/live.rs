//! The live queues as admission sees them: the tree, what each queue holds per flavor, and the
//! admitted Workloads that preemption may evict.

use std::collections::HashMap;

use super::super::tree::{Tree, UsageMap};
use crate::queues::{Admission, QueueWorkload, WorkloadState};

/// An admitted Workload as a preemption candidate.
#[derive(Debug, Clone)]
pub(super) struct Held<'a> {
    pub(super) w: &'a QueueWorkload,
    /// The ClusterQueue that admitted it.
    pub(super) queue: &'a str,
    /// GPUs per flavor.
    pub(super) gpus: Vec<(&'a str, u64)>,
    /// When it was created (a proxy for when it reserved quota: newest is evicted first).
    pub(super) created: i64,
}

impl Held<'_> {
    /// The job it is the Workload of (`namespace/Kind/name`).
    pub(super) fn owner(&self) -> Option<&str> {
        self.w.owner.as_deref()
    }

    pub(super) fn gpus_in(&self, flavor: &str) -> u64 {
        self.gpus
            .iter()
            .filter(|(f, _)| *f == flavor)
            .map(|(_, n)| *n)
            .fold(0, u64::saturating_add)
    }
}

/// The live queues, ready to admit against.
#[derive(Clone)]
pub struct Live<'a> {
    pub admission: &'a Admission,
    pub tree: Tree,
    /// GPUs reserved per (queue, flavor).
    leaf: HashMap<(String, String), u64>,
    pub(super) held: Vec<Held<'a>>,
}

/// GPUs a reserved Workload holds per flavor (its admission's count of each pod set; a flavor
/// twice when two pod sets use it).
fn held_gpus(w: &QueueWorkload) -> Vec<(&str, u64)> {
    let Some(adm) = &w.admission else {
        return Vec::new();
    };
    w.pod_sets
        .iter()
        .filter_map(|p| {
            let a = adm.pod_sets.iter().find(|s| s.name == p.name)?;
            let f = a.flavor.as_deref()?;
            Some((f, a.count.unwrap_or(p.count).saturating_mul(p.gpus_per_pod)))
        })
        .collect()
}

impl<'a> Live<'a> {
    pub fn new(admission: &'a Admission) -> Live<'a> {
        let tree = Tree::new(admission);
        // What each queue holds: its own status where Kueue reports it (the reservation the
        // scheduler counts, else the admitted usage), else the sum of its reserved Workloads.
        let mut leaf: HashMap<(String, String), u64> = HashMap::new();
        let mut held = Vec::new();
        let reported = |q: &str| {
            admission
                .cluster_queue(q)
                .and_then(|q| q.reserved.as_ref().or(q.usage.as_ref()))
        };
        for q in &admission.cluster_queues {
            for (f, u) in reported(&q.name).into_iter().flatten() {
                leaf.insert((q.name.clone(), f.clone()), u.total);
            }
        }
        for w in &admission.workloads {
            if w.state != WorkloadState::Reserved {
                continue;
            }
            let Some(adm) = &w.admission else { continue };
            let gpus = held_gpus(w);
            if reported(&adm.cluster_queue).is_none() {
                for (f, n) in &gpus {
                    let e = leaf
                        .entry((adm.cluster_queue.to_string(), f.to_string()))
                        .or_insert(0);
                    *e = e.saturating_add(*n);
                }
            }
            held.push(Held {
                w,
                queue: &adm.cluster_queue,
                gpus,
                created: w.created.map_or(0, |t| t.unix()),
            });
        }
        Live {
            admission,
            tree,
            leaf,
            held,
        }
    }

    pub(super) fn usage(&self, leaf: &HashMap<(String, String), u64>) -> UsageMap {
        self.tree.usage(leaf)
    }

    /// The queues without what the job `owner` holds: a job a change reshapes is admitted
    /// anew (Kueue makes a new Workload for the new spec), its old reservation released.
    pub fn without(&self, owner: &str) -> Live<'a> {
        let mut out = self.clone();
        for h in self.held.iter().filter(|h| h.owner() == Some(owner)) {
            for (f, n) in &h.gpus {
                if let Some(v) = out.leaf.get_mut(&(h.queue.to_string(), f.to_string())) {
                    *v = v.saturating_sub(*n);
                }
            }
        }
        out.held.retain(|h| h.owner() != Some(owner));
        out
    }

    /// GPUs reserved per (queue, flavor).
    pub(super) fn leaf(&self) -> &HashMap<(String, String), u64> {
        &self.leaf
    }

    /// Every node's usage now.
    pub fn usage_now(&self) -> UsageMap {
        self.usage(&self.leaf)
    }

    /// GPUs reserved in `queue`'s `flavor`.
    pub fn reserved(&self, queue: &str, flavor: &str) -> u64 {
        self.leaf
            .get(&(queue.to_string(), flavor.to_string()))
            .copied()
            .unwrap_or(0)
    }

    /// The priority a WorkloadPriorityClass (or PriorityClass) resolves to, as the live Workloads
    /// that name it say (Kueue writes the resolved value into `spec.priority`); 0 otherwise.
    pub(super) fn priority_of(&self, class: Option<&str>) -> (i64, Option<String>) {
        let Some(c) = class else { return (0, None) };
        match self
            .admission
            .workloads
            .iter()
            .find(|w| w.priority_class.as_deref() == Some(c))
        {
            Some(w) => (w.priority, None),
            None => (
                0,
                Some(format!(
                    "priority class {c} is named by no live Workload: read as priority 0"
                )),
            ),
        }
    }
}
