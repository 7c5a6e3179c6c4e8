//! Where the free GPUs are, and what would let the pods that fit nowhere run.
//!
//! [`node_view`] is `inventory --by node`: per GPU node its allocatable, requested and free whole
//! GPUs and its GPU pods, and per GPU model the free GPUs of its placeable nodes, the largest
//! block and how the free GPUs are split (`12×4 + 9×2`: twelve nodes with four free, nine with
//! two) — fragmentation at a glance, as `kubectl-view-allocations -g node` shows allocations.
//!
//! [`next_step`] answers a placement problem ("5 pending pods fit on no single node") with what
//! to do about it, three ways: the *fragmented* nodes — placeable, with free GPUs, but fewer than
//! any stuck pod that may run there needs; the *empty nodes needed* — each stuck pod on the
//! smallest node size the fleet has for it (a size is a GPU node's capacity; a node selector
//! narrows the nodes, e.g. to a GPU model), packed largest first; and a *drain* — nodes to empty
//! so that every stuck pod fits in the fleet as it is, the fewest GPUs moved first, each moved
//! pod re-placed on another placeable node's free GPUs. Pending pods that fit are placed first,
//! as the shortage diagnosis places them (largest first, best fit), so none of this counts on
//! room they will take.
//!
//! Pure: the live fleet's model in, report rows out; every list sorted.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::k8s::object::Body;
use crate::k8s::types::{LabelMap, Text};
use crate::report::{
    Drain, FreeBlock, FreeNode, NodeModelRow, NodeRow, NodeView, NodesNeeded, PendingPod,
    PlacementStep,
};
use crate::workload::owners::PodState;

use super::live::LiveFleet;
use super::nodes::{GPU_PRODUCT_LABEL, GpuNode};

/// A non-terminal GPU pod as placement sees it.
struct Pod<'a> {
    key: Key<'a>,
    /// Its node, when bound.
    node: Option<&'a str>,
    gpus: u64,
    selector: &'a LabelMap,
}

/// A pod's `namespace/name`, ordered as that text is, without making it (placement holds every
/// GPU pod of the fleet).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Key<'a> {
    namespace: &'a str,
    name: &'a str,
}

impl Key<'_> {
    fn bytes(&self) -> impl Iterator<Item = u8> + '_ {
        let slash: &[u8] = b"/";
        self.namespace
            .bytes()
            .chain(slash.iter().copied())
            .chain(self.name.bytes())
    }
}

impl Ord for Key<'_> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.bytes().cmp(other.bytes())
    }
}

impl PartialOrd for Key<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl std::fmt::Display for Key<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

/// The GPU model a node is counted under.
fn model<'a>(n: &GpuNode<'a>) -> &'a str {
    n.labels
        .get(GPU_PRODUCT_LABEL)
        .map(Text::as_str)
        .filter(|m| !m.trim().is_empty())
        .unwrap_or("unknown")
}

fn matches(n: &GpuNode<'_>, selector: &LabelMap) -> bool {
    selector.iter().all(|(k, v)| n.labels.get(k) == Some(v))
}

/// The fleet's non-terminal pods that ask for whole GPUs, bound or pending.
fn pods<'a>(fleet: &LiveFleet<'a>) -> Vec<Pod<'a>> {
    fleet
        .workloads
        .pods
        .iter()
        .filter(|p| p.state != PodState::Terminal && p.gpus.whole > 0)
        .filter_map(|p| {
            let o = fleet.objects.get(p.object)?;
            let Body::Pod(b) = &o.body else { return None };
            Some(Pod {
                key: Key {
                    namespace: o.namespace(),
                    name: &o.meta.name,
                },
                node: if p.state == PodState::Bound {
                    b.spec.node_name.as_deref()
                } else {
                    None
                },
                gpus: p.gpus.whole,
                selector: &b.spec.node_selector,
            })
        })
        .collect()
}

/// Whole GPUs requested and GPU pods per node.
fn on_nodes<'a>(pods: &[Pod<'a>]) -> BTreeMap<&'a str, (u64, u64)> {
    let mut by: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    for p in pods {
        if let Some(n) = p.node {
            let e = by.entry(n).or_default();
            e.0 = e.0.saturating_add(p.gpus);
            e.1 += 1;
        }
    }
    by
}

/// Every GPU node with its free GPUs, and the totals per GPU model.
pub fn node_view(fleet: &LiveFleet<'_>) -> NodeView {
    let pods = pods(fleet);
    let on = on_nodes(&pods);
    let nodes: Vec<NodeRow> = fleet
        .nodes
        .values()
        .map(|n| {
            let (requested, pods) = on.get(n.name).copied().unwrap_or_default();
            NodeRow {
                node: n.name.to_string(),
                model: model(n).to_string(),
                capacity: n.capacity,
                allocatable: n.allocatable,
                requested,
                free: n.allocatable.saturating_sub(requested),
                pods,
                placeable: n.placeable,
                reasons: n.reasons.clone(),
            }
        })
        .collect();
    let mut by: BTreeMap<&str, (NodeModelRow, BTreeMap<u64, u64>)> = BTreeMap::new();
    for r in &nodes {
        let (m, blocks) = by.entry(r.model.as_str()).or_insert_with(|| {
            (
                NodeModelRow {
                    model: r.model.clone(),
                    nodes: 0,
                    allocatable: 0,
                    requested: 0,
                    free: 0,
                    largest_free_block: 0,
                    empty_nodes: 0,
                    free_blocks: Vec::new(),
                },
                BTreeMap::new(),
            )
        });
        m.nodes += 1;
        m.allocatable = m.allocatable.saturating_add(r.allocatable);
        m.requested = m.requested.saturating_add(r.requested);
        if r.placeable && r.allocatable > 0 {
            m.free = m.free.saturating_add(r.free);
            m.largest_free_block = m.largest_free_block.max(r.free);
            if r.requested == 0 {
                m.empty_nodes += 1;
            }
            if r.free > 0 {
                *blocks.entry(r.free).or_default() += 1;
            }
        }
    }
    let mut models: Vec<NodeModelRow> = by
        .into_values()
        .map(|(mut m, blocks)| {
            m.free_blocks = blocks
                .into_iter()
                .rev()
                .map(|(free, nodes)| FreeBlock { free, nodes })
                .collect();
            m
        })
        .collect();
    models.sort_by(|a, b| {
        b.allocatable
            .cmp(&a.allocatable)
            .then_with(|| b.nodes.cmp(&a.nodes))
            .then_with(|| a.model.cmp(&b.model))
    });
    NodeView { models, nodes }
}

/// What would let the `stuck` pods (pending, fitting on no placeable node) run; `None` when there
/// are none.
///
/// Nodes are taken by their position among the placeable nodes (in name order, so the first of
/// equals is the first by name), their free GPUs a vector beside them: a fleet of thousands of
/// nodes with hundreds of pending pods tries every node for every pod, and a drain tries a copy
/// of the free room per candidate node.
pub fn next_step(fleet: &LiveFleet<'_>, stuck: &[PendingPod]) -> Option<PlacementStep> {
    if stuck.is_empty() {
        return None;
    }
    let pods = pods(fleet);
    let on = on_nodes(&pods);
    let stuck_keys: HashSet<Key<'_>> = stuck
        .iter()
        .map(|p| Key {
            namespace: &p.namespace,
            name: &p.name,
        })
        .collect();
    // Stuck pods in the diagnosis' order (largest first), with their node selectors: the first
    // pending pod of each name.
    let mut pending: HashMap<Key<'_>, &Pod<'_>> = HashMap::new();
    for p in pods.iter().filter(|p| p.node.is_none()) {
        pending.entry(p.key).or_insert(p);
    }
    let stuck: Vec<&Pod<'_>> = stuck
        .iter()
        .filter_map(|s| {
            let key = Key {
                namespace: &s.namespace,
                name: &s.name,
            };
            pending.get(&key).copied()
        })
        .collect();
    let placeable: Vec<&GpuNode<'_>> = fleet.nodes.values().filter(|n| n.placeable).collect();
    let mut free: Free = placeable
        .iter()
        .map(|n| {
            let used = on.get(n.name).map_or(0, |x| x.0);
            n.allocatable.saturating_sub(used)
        })
        .collect();
    // The pending pods that fit take their room first, as the diagnosis placed them.
    let mut fitting: Vec<&Pod<'_>> = pods
        .iter()
        .filter(|p| p.node.is_none() && !stuck_keys.contains(&p.key))
        .collect();
    fitting.sort_by(|a, b| b.gpus.cmp(&a.gpus).then_with(|| a.key.cmp(&b.key)));
    for p in fitting {
        place(p, &placeable, &mut free, None);
    }

    let fragmented = fragmented(&placeable, &free, &stuck);
    let fragmented_free = fragmented.iter().map(|n| n.free).sum();
    let (nodes_needed, too_large) = nodes_needed(fleet, &stuck);
    let drain = drain(&placeable, &pods, free, &stuck);
    Some(PlacementStep {
        fragmented,
        fragmented_free,
        nodes_needed,
        too_large,
        drain,
    })
}

/// The free whole GPUs of each placeable node, by its position among them.
type Free = Vec<u64>;

/// Places `p` on the matching node (other than `not`) with the least free room that holds it,
/// the first by name among equals: that node's position, or `None` when none holds it.
fn place(
    p: &Pod<'_>,
    nodes: &[&GpuNode<'_>],
    free: &mut Free,
    not: Option<usize>,
) -> Option<usize> {
    let best = nodes
        .iter()
        .zip(free.iter())
        .enumerate()
        .filter(|&(i, (n, f))| Some(i) != not && *f >= p.gpus && matches(n, p.selector))
        .min_by_key(|&(i, (_, f))| (*f, i))
        .map(|(i, _)| i)?;
    let f = free.get_mut(best)?;
    *f -= p.gpus;
    Some(best)
}

/// Placeable nodes with free GPUs that no stuck pod allowed there can use, most free first.
fn fragmented(placeable: &[&GpuNode<'_>], free: &Free, stuck: &[&Pod<'_>]) -> Vec<FreeNode> {
    // The fewest GPUs a stuck pod of each node selector asks for: a node is fragmented when the
    // pods it allows all need more than it has free.
    let mut fewest: Vec<(&LabelMap, u64)> = Vec::new();
    for p in stuck {
        match fewest.iter_mut().find(|(s, _)| *s == p.selector) {
            Some((_, n)) => *n = (*n).min(p.gpus),
            None => fewest.push((p.selector, p.gpus)),
        }
    }
    let mut out: Vec<FreeNode> = placeable
        .iter()
        .zip(free.iter())
        .filter_map(|(n, &f)| {
            let least = fewest
                .iter()
                .filter(|(s, _)| matches(n, s))
                .map(|&(_, g)| g)
                .min()?;
            (f > 0 && least > f).then(|| FreeNode {
                node: n.name.to_string(),
                model: model(n).to_string(),
                free: f,
            })
        })
        .collect();
    out.sort_by(|a, b| b.free.cmp(&a.free).then_with(|| a.node.cmp(&b.node)));
    out
}

/// Nodes by size: (capacity, GPU model) → how many.
type Sizes<'a> = BTreeMap<(u64, &'a str), u64>;

/// Empty nodes the stuck pods need, per (model, size), and the pods no node size holds.
fn nodes_needed(fleet: &LiveFleet<'_>, stuck: &[&Pod<'_>]) -> (Vec<NodesNeeded>, Vec<String>) {
    // Node sizes: GPU nodes that offer whole GPUs (or would, with a working device plugin); a
    // MIG or time-sliced node offers its GPUs otherwise.
    let sized: Vec<&GpuNode<'_>> = fleet
        .nodes
        .values()
        .filter(|n| n.capacity > 0 && (n.allocatable > 0 || n.other_allocatable.is_zero()))
        .collect();
    let mut bins: BTreeMap<(String, u64), FirstFit> = BTreeMap::new();
    let mut counts: BTreeMap<(String, u64), (u64, u64)> = BTreeMap::new();
    let mut too_large = Vec::new();
    // The node sizes (capacity, model) a node selector allows and how many nodes of each, once
    // per selector.
    let mut sizes_of: Vec<(&LabelMap, Sizes<'_>)> = Vec::new();
    for p in stuck {
        // The smallest size that holds the pod; among equal sizes, the model with most nodes.
        let at = match sizes_of.iter().position(|(s, _)| *s == p.selector) {
            Some(i) => i,
            None => {
                let mut sizes = Sizes::new();
                for n in sized.iter().filter(|n| matches(n, p.selector)) {
                    *sizes.entry((n.capacity, model(n))).or_default() += 1;
                }
                sizes_of.push((p.selector, sizes));
                sizes_of.len() - 1
            }
        };
        let Some((_, sizes)) = sizes_of.get(at) else {
            continue;
        };
        let pick = sizes
            .iter()
            .filter(|((size, _), _)| *size >= p.gpus)
            .min_by(|((sa, ma), ca), ((sb, mb), cb)| sa.cmp(sb).then(cb.cmp(ca)).then(ma.cmp(mb)));
        let Some(((size, m), _)) = pick else {
            too_large.push(p.key.to_string());
            continue;
        };
        let key = (m.to_string(), *size);
        // First fit, largest pods first (the stuck pods come largest first).
        bins.entry(key.clone()).or_default().put(*size, p.gpus);
        let c = counts.entry(key).or_default();
        c.0 += 1;
        c.1 = c.1.saturating_add(p.gpus);
    }
    let needed = bins
        .into_iter()
        .map(|((model, gpus_per_node), open)| {
            let (pods, gpus) = counts
                .get(&(model.clone(), gpus_per_node))
                .copied()
                .unwrap_or_default();
            NodesNeeded {
                model,
                gpus_per_node,
                nodes: open.rooms.len() as u64,
                pods,
                gpus,
            }
        })
        .collect();
    (needed, too_large)
}

/// Nodes of one size filled first fit: each pod goes on the first with room enough, else on a new
/// one. The most room of each run of [`RUN`] nodes is kept beside them, so the search skips full
/// runs whole: tens of thousands of stuck pods would otherwise each try every node opened before.
#[derive(Default)]
struct FirstFit {
    rooms: Vec<u64>,
    /// The most room among `rooms[k * RUN..(k + 1) * RUN]`.
    most: Vec<u64>,
}

/// Nodes per run of [`FirstFit`].
const RUN: usize = 64;

impl FirstFit {
    /// Puts a pod of `gpus` on the first node with that much room, or on a new one of `size`
    /// (at least `gpus`).
    fn put(&mut self, size: u64, gpus: u64) {
        let found = self.most.iter().position(|&m| m >= gpus).and_then(|k| {
            let run = self.rooms.get_mut(k * RUN..)?;
            let run = run.get_mut(..RUN.min(run.len()))?;
            let room = run.iter_mut().find(|r| **r >= gpus)?;
            *room -= gpus;
            Some((k, run.iter().copied().max().unwrap_or(0)))
        });
        match found {
            Some((k, most)) => {
                if let Some(m) = self.most.get_mut(k) {
                    *m = most;
                }
            }
            None => {
                let room = size - gpus;
                if self.rooms.len().is_multiple_of(RUN) {
                    self.most.push(room);
                } else if let Some(m) = self.most.last_mut() {
                    *m = (*m).max(room);
                }
                self.rooms.push(room);
            }
        }
    }
}

/// Nodes to empty so that every stuck pod fits: for each stuck pod (largest first) that still
/// fits nowhere, the matching placeable node that frees its room by moving the fewest GPUs
/// (its largest pods first), each moved pod re-placed on another node's free GPUs. A node that
/// received a moved pod is not drained after; a pod larger than every node it may run on is
/// left out (it is too large). `None` when some stuck pod cannot be helped so.
fn drain<'a>(
    placeable: &[&GpuNode<'a>],
    pods: &[Pod<'a>],
    mut free: Free,
    stuck: &[&Pod<'_>],
) -> Option<Drain> {
    // The pods on each placeable node, largest first.
    let at: HashMap<&str, usize> = placeable
        .iter()
        .enumerate()
        .map(|(i, n)| (n.name, i))
        .collect();
    let mut on: Vec<Vec<&Pod<'a>>> = vec![Vec::new(); placeable.len()];
    for p in pods {
        if let Some(v) = p.node.and_then(|n| at.get(n)).and_then(|&i| on.get_mut(i)) {
            v.push(p);
        }
    }
    for v in &mut on {
        v.sort_by(|a, b| b.gpus.cmp(&a.gpus).then_with(|| a.key.cmp(&b.key)));
    }
    let mut touched = vec![false; placeable.len()];
    let (mut drained, mut moved, mut gpus) = (Vec::new(), Vec::new(), 0u64);
    for p in stuck {
        // A pod larger than every node it may run on is too large, not a reason to drain.
        let fits_a_node = placeable
            .iter()
            .any(|n| n.allocatable >= p.gpus && matches(n, p.selector));
        if !fits_a_node || place(p, placeable, &mut free, None).is_some() {
            continue;
        }
        // Candidates by GPUs to move, then most free, then name (position).
        let mut candidates: Vec<(u64, u64, usize, Vec<&Pod<'a>>)> = placeable
            .iter()
            .enumerate()
            .filter(|&(i, n)| {
                !touched.get(i).copied().unwrap_or(true)
                    && n.allocatable >= p.gpus
                    && matches(n, p.selector)
            })
            .filter_map(|(i, _)| {
                let f = free.get(i).copied().unwrap_or(0);
                let mut out = Vec::new();
                let mut room = f;
                for q in on.get(i).map(Vec::as_slice).unwrap_or(&[]) {
                    if room >= p.gpus {
                        break;
                    }
                    room = room.saturating_add(q.gpus);
                    out.push(*q);
                }
                (room >= p.gpus).then(|| (out.iter().map(|q| q.gpus).sum(), f, i, out))
            })
            .collect();
        candidates.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)).then(a.2.cmp(&b.2)));
        let mut done = false;
        for (cost, _, i, out) in candidates {
            // The moved pods go straight into `free`, and come out again when one fits nowhere.
            let mut placed: Vec<(usize, u64)> = Vec::with_capacity(out.len());
            let fits = out.iter().all(|q| {
                place(q, placeable, &mut free, Some(i))
                    .map(|j| placed.push((j, q.gpus)))
                    .is_some()
            });
            if !fits {
                for (j, g) in placed {
                    if let Some(f) = free.get_mut(j) {
                        *f += g;
                    }
                }
                continue;
            }
            if let Some(f) = free.get_mut(i) {
                *f = f.saturating_add(cost).saturating_sub(p.gpus);
            }
            // Where the moved pods went, and the drained node, take no more changes.
            for j in placed.iter().map(|&(j, _)| j).chain([i]) {
                if let Some(x) = touched.get_mut(j) {
                    *x = true;
                }
            }
            if let Some(n) = placeable.get(i) {
                drained.push(n.name.to_string());
            }
            moved.extend(out.iter().map(|q| q.key.to_string()));
            gpus = gpus.saturating_add(cost);
            done = true;
            break;
        }
        if !done {
            return None;
        }
    }
    (!drained.is_empty()).then_some(Drain {
        nodes: drained,
        pods: moved,
        gpus,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::k8s::read::read_str;
    use crate::report::{FreeBlock, NodesNeeded};

    const H100: &str = "NVIDIA-H100-80GB-HBM3";

    fn node(name: &str, model: &str, gpus: u64, cordoned: bool) -> String {
        format!(
            "apiVersion: v1\nkind: Node\nmetadata: {{name: {name}, labels: {{nvidia.com/gpu.product: {model}}}}}\nspec: {{unschedulable: {cordoned}}}\nstatus:\n  capacity: {{nvidia.com/gpu: {gpus}}}\n  allocatable: {{nvidia.com/gpu: {gpus}}}\n  conditions: [{{type: Ready, status: \"True\"}}]\n---\n"
        )
    }

    fn pod(name: &str, node: Option<&str>, gpus: u64, h100_only: bool) -> String {
        let node = node
            .map(|n| format!("  nodeName: {n}\n"))
            .unwrap_or_default();
        let selector = if h100_only {
            format!("  nodeSelector: {{nvidia.com/gpu.product: {H100}}}\n")
        } else {
            String::new()
        };
        let phase = if node.is_empty() {
            "Pending"
        } else {
            "Running"
        };
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: ml}}\nspec:\n{node}{selector}  containers: [{{resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}}}]\nstatus: {{phase: {phase}}}\n---\n"
        )
    }

    /// Five H100 nodes of 8 (one cordoned) and an L4 node of 4; free 4, 4, 6, 4 on the H100s
    /// and 3 on the L4. Two 8-GPU pods wait (one only for H100s), and a 1-GPU pod that fits.
    fn fleet() -> Vec<crate::k8s::object::Object> {
        let mut y = String::new();
        for (n, cordoned) in [
            ("a", false),
            ("b", false),
            ("c", false),
            ("d", false),
            ("e", true),
        ] {
            y += &node(n, H100, 8, cordoned);
        }
        y += &node("l", "NVIDIA-L4", 4, false);
        for (name, on, gpus) in [
            ("a-0", "a", 4),
            ("b-0", "b", 4),
            ("c-0", "c", 2),
            ("d-0", "d", 2),
            ("d-1", "d", 2),
            ("e-0", "e", 8),
            ("l-0", "l", 1),
        ] {
            y += &pod(name, Some(on), gpus, false);
        }
        y += &pod("p1", None, 8, true);
        y += &pod("p2", None, 8, false);
        y += &pod("p3", None, 1, false);
        read_str(&y, "fleet.yaml").unwrap()
    }

    #[test]
    fn free_gpus_per_node_and_per_model() {
        let objects = fleet();
        let cfg = Config::default();
        let live = LiveFleet::read(
            &objects,
            &cfg,
            &crate::analysis::usage::Metrics::NotConfigured,
        )
        .unwrap();
        let v = node_view(&live);
        let free: Vec<(&str, u64, u64, u64, bool)> = v
            .nodes
            .iter()
            .map(|n| (n.node.as_str(), n.requested, n.free, n.pods, n.placeable))
            .collect();
        assert_eq!(
            free,
            [
                ("a", 4, 4, 1, true),
                ("b", 4, 4, 1, true),
                ("c", 2, 6, 1, true),
                ("d", 4, 4, 2, true),
                ("e", 8, 0, 1, false),
                ("l", 1, 3, 1, true),
            ]
        );
        assert_eq!(v.nodes[4].reasons, ["cordoned"]);
        let h100 = &v.models[0];
        assert_eq!(
            (
                h100.model.as_str(),
                h100.nodes,
                h100.allocatable,
                h100.requested,
                h100.free
            ),
            (H100, 5, 40, 22, 18)
        );
        assert_eq!((h100.largest_free_block, h100.empty_nodes), (6, 0));
        assert_eq!(
            h100.free_blocks,
            [
                FreeBlock { free: 6, nodes: 1 },
                FreeBlock { free: 4, nodes: 3 }
            ]
        );
        assert_eq!(
            (v.models[1].model.as_str(), v.models[1].free),
            ("NVIDIA-L4", 3)
        );
    }

    #[test]
    fn a_placement_problem_names_the_fragmented_nodes_the_nodes_to_buy_and_to_drain() {
        let objects = fleet();
        let r =
            crate::analysis::inventory::inventory(&objects, &Config::default(), vec![]).unwrap();
        let s = &r.fleet.shortage;
        assert_eq!(s.kind, crate::report::ShortageKind::Placement);
        let stuck: Vec<&str> = s.unplaceable.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(stuck, ["p1", "p2"]);
        let step = s.next_step.as_ref().unwrap();
        // The 1-GPU pod takes the L4's smallest fitting room first (3 → 2).
        let frag: Vec<(&str, u64)> = step
            .fragmented
            .iter()
            .map(|n| (n.node.as_str(), n.free))
            .collect();
        assert_eq!(frag, [("c", 6), ("a", 4), ("b", 4), ("d", 4), ("l", 2)]);
        assert_eq!(step.fragmented_free, 20);
        assert_eq!(
            step.nodes_needed,
            [NodesNeeded {
                model: H100.into(),
                gpus_per_node: 8,
                nodes: 2,
                pods: 2,
                gpus: 16
            }]
        );
        assert!(step.too_large.is_empty());
        // c frees 8 by moving its 2-GPU pod (to the L4); then a frees 8 by moving 4 (to b).
        let drain = step.drain.as_ref().unwrap();
        assert_eq!(drain.nodes, ["c", "a"]);
        assert_eq!(drain.pods, ["ml/c-0", "ml/a-0"]);
        assert_eq!(drain.gpus, 6);
    }

    /// Pods are ordered by their `namespace/name` text, as when it was a string: a namespace that
    /// is a prefix of another sorts by the character after it.
    #[test]
    fn pod_keys_order_as_their_text() {
        let keys = [
            ("a", "x"),
            ("a-b", "y"),
            ("a", "x-1"),
            ("ab", "a"),
            ("a.b", "c"),
        ];
        let mut by_key: Vec<Key<'_>> = keys
            .iter()
            .map(|&(namespace, name)| Key { namespace, name })
            .collect();
        by_key.sort();
        let mut by_text: Vec<String> = keys.iter().map(|(n, p)| format!("{n}/{p}")).collect();
        by_text.sort();
        let got: Vec<String> = by_key.iter().map(Key::to_string).collect();
        assert_eq!(got, by_text);
    }

    #[test]
    fn too_large_pods_are_named_and_no_drain_when_the_moved_pods_fit_nowhere() {
        let mut y = node("a", H100, 8, false) + &node("b", H100, 8, false);
        y += &pod("a-0", Some("a"), 4, false);
        y += &pod("b-0", Some("b"), 4, false);
        y += &pod("big", None, 16, false);
        y += &pod("p", None, 8, false);
        let objects = read_str(&y, "f.yaml").unwrap();
        let r =
            crate::analysis::inventory::inventory(&objects, &Config::default(), vec![]).unwrap();
        let step = r.fleet.shortage.next_step.as_ref().unwrap();
        assert_eq!(step.too_large, ["ml/big"]);
        assert_eq!(step.nodes_needed.len(), 1);
        assert_eq!(step.nodes_needed[0].nodes, 1);
        // Emptying a node moves 4 GPUs onto the other node's 4 free: room for the 8-GPU pod;
        // the 16-GPU pod fits on no node however many are drained, and is left out.
        let drain = step.drain.as_ref().unwrap();
        assert_eq!(
            (drain.nodes.as_slice(), drain.gpus),
            (["a".to_string()].as_slice(), 4)
        );
        // Two 8-GPU pods on two half-full nodes: the first drain takes the only free room the
        // moved pod could use, so the second pod cannot be helped: no drain at all.
        let mut y = node("a", H100, 8, false) + &node("b", H100, 8, false);
        y += &pod("a-0", Some("a"), 4, false);
        y += &pod("b-0", Some("b"), 4, false);
        y += &pod("p", None, 8, false);
        y += &pod("q", None, 8, false);
        let objects = read_str(&y, "f.yaml").unwrap();
        let r =
            crate::analysis::inventory::inventory(&objects, &Config::default(), vec![]).unwrap();
        let step = r.fleet.shortage.next_step.as_ref().unwrap();
        assert!(step.drain.is_none(), "{:?}", step.drain);
        assert_eq!(step.nodes_needed[0].nodes, 2);
        // Nothing pending: no next step.
        let idle = read_str(&node("a", H100, 8, false), "f.yaml").unwrap();
        let r = crate::analysis::inventory::inventory(&idle, &Config::default(), vec![]).unwrap();
        assert!(r.fleet.shortage.next_step.is_none());
    }

    /// First fit with the most room of each run kept beside the nodes puts every pod where a
    /// search of every node would (over many runs, rooms left scattered by mixed sizes).
    #[test]
    fn first_fit_by_runs_puts_pods_where_a_plain_first_fit_does() {
        let mut seed = 7u64;
        for size in [1u64, 3, 8, 16] {
            let (mut fast, mut plain) = (FirstFit::default(), Vec::<u64>::new());
            for _ in 0..3000 {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let gpus = (seed >> 33) % size + 1;
                fast.put(size, gpus);
                match plain.iter_mut().find(|r| **r >= gpus) {
                    Some(r) => *r -= gpus,
                    None => plain.push(size - gpus),
                }
                assert_eq!(fast.rooms, plain);
            }
            assert!(plain.len() > 2 * RUN, "{size}: {} nodes", plain.len());
            let most: Vec<u64> = plain
                .chunks(RUN)
                .map(|c| *c.iter().max().unwrap())
                .collect();
            assert_eq!(fast.most, most);
        }
    }
}
