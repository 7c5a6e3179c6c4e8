//! Where the free GPUs are: the per-node view of `inventory --by node` (free GPUs per node and
//! per GPU model, as `kubectl-view-allocations -g node` shows them), and for pending pods that fit
//! on no node the next step — which nodes hold free GPUs too few to use, how many empty nodes of
//! which size the pods need, and which nodes to drain to make room.

use serde::Serialize;

/// The per-node view: every GPU node, and their totals per GPU model.
#[derive(Debug, Clone, Serialize)]
pub struct NodeView {
    /// Per GPU model (GFD's `nvidia.com/gpu.product`, `unknown` without it), largest first.
    pub models: Vec<NodeModelRow>,
    /// Every GPU node, by name.
    pub nodes: Vec<NodeRow>,
}

/// One GPU node's whole GPUs.
#[derive(Debug, Clone, Serialize)]
pub struct NodeRow {
    pub node: String,
    pub model: String,
    pub capacity: u64,
    pub allocatable: u64,
    /// GPUs requested by the non-terminal pods bound to it.
    pub requested: u64,
    /// Allocatable minus requested: room for new GPU work when the node is placeable.
    pub free: u64,
    /// GPU pods bound to it.
    pub pods: u64,
    /// Whether the scheduler can place new GPU work on it (Ready, not cordoned, no other taint).
    pub placeable: bool,
    /// Why it is not fully placeable (the inventory's excluded-node reasons); empty when it is.
    pub reasons: Vec<String>,
}

/// One GPU model's nodes together.
#[derive(Debug, Clone, Serialize)]
pub struct NodeModelRow {
    pub model: String,
    pub nodes: u64,
    pub allocatable: u64,
    pub requested: u64,
    /// Free GPUs on its placeable nodes.
    pub free: u64,
    /// The most free GPUs on one of its placeable nodes.
    pub largest_free_block: u64,
    /// Its placeable nodes with allocatable GPUs and nothing requested.
    pub empty_nodes: u64,
    /// How its placeable nodes' free GPUs are split: so many nodes with so many free, most free
    /// first (nodes with none free left out).
    pub free_blocks: Vec<FreeBlock>,
}

/// `nodes` placeable nodes with `free` free GPUs each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct FreeBlock {
    pub free: u64,
    pub nodes: u64,
}

/// What would let the pending pods that fit nowhere run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct PlacementStep {
    /// Placeable nodes whose free GPUs are fewer than the smallest stuck pod needs: free, but
    /// usable by none of them. Most free first.
    pub fragmented: Vec<FreeNode>,
    /// Their free GPUs together.
    pub fragmented_free: u64,
    /// Empty nodes the stuck pods need, per node size: each pod on a node of the smallest size
    /// that exists in the fleet for it (its GPU model, when its node selector names one) and
    /// holds it, packed largest first.
    pub nodes_needed: Vec<NodesNeeded>,
    /// Stuck pods that ask for more GPUs than any node of the fleet has: no node frees them.
    pub too_large: Vec<String>,
    /// Or make room in the fleet as it is: the nodes to drain so that every stuck pod fits, and
    /// the pods to move off them (which the other placeable nodes' free GPUs hold); `null` when no
    /// such drain exists.
    pub drain: Option<Drain>,
}

/// A placeable node with free GPUs.
#[derive(Debug, Clone, Serialize)]
pub struct FreeNode {
    pub node: String,
    pub model: String,
    pub free: u64,
}

/// So many empty nodes of one size.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NodesNeeded {
    pub model: String,
    pub gpus_per_node: u64,
    pub nodes: u64,
    /// The stuck pods they hold, and their GPUs.
    pub pods: u64,
    pub gpus: u64,
}

/// Nodes to drain and what moves off them.
#[derive(Debug, Clone, Serialize)]
pub struct Drain {
    pub nodes: Vec<String>,
    /// Pods moved to other nodes (`namespace/name`), and their GPUs.
    pub pods: Vec<String>,
    pub gpus: u64,
}
