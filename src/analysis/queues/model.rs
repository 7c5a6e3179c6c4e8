//! What the queues' analysis hands over: where each live workload waits, each tenant's standing,
//! and the rows — and how a Kueue Workload is tied to the live workload it belongs to.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::k8s::object::Object;
use crate::queues::QueueWorkload;
use crate::report::Known;
use crate::report::queues::{Amount, BorrowingRow, QueueKind, QueueRow, QueueState};

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
pub(super) fn queue_state(w: &QueueWorkload) -> Option<QueueState> {
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
pub(super) fn owner_workload(
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
