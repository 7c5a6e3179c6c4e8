//! GPU nodes in three tiers — capacity, allocatable, placeable — and why a node falls out.
//!
//! `capacity` is the GPUs bought: the larger of the node's `nvidia.com/gpu` capacity and the GFD
//! label `nvidia.com/gpu.count` (a broken device plugin reports 0 while the label still says 8).
//! `allocatable` is what the kubelet offers. `placeable` is allocatable on nodes that accept new GPU
//! work: Ready, not cordoned, and without `NoSchedule`/`NoExecute` taints other than the tolerated GPU
//! taint keys. A node that contributes fewer GPUs to placeable than to capacity is listed with every
//! reason.

use std::collections::BTreeMap;

use crate::config::Config;
use crate::k8s::gpus::{GpuResource, Gpus};
use crate::k8s::object::{Body, Object};
use crate::k8s::types::{LabelMap, Text};
use crate::report::ModelRow;
use crate::util::sum::{self, Named, Overflow};

pub const GPU_COUNT_LABEL: &str = "nvidia.com/gpu.count";
/// The GPU model GFD labels a node with (`NVIDIA-H100-80GB-HBM3`).
pub const GPU_PRODUCT_LABEL: &str = "nvidia.com/gpu.product";
const UNSCHEDULABLE_TAINT: &str = "node.kubernetes.io/unschedulable";
const NOT_READY_TAINTS: [&str; 2] = [
    "node.kubernetes.io/not-ready",
    "node.kubernetes.io/unreachable",
];

/// What one GPU node contributes to each tier.
#[derive(Debug, Clone)]
pub struct GpuNode<'a> {
    pub name: &'a str,
    pub labels: &'a LabelMap,
    pub capacity: u64,
    pub allocatable: u64,
    pub placeable: bool,
    pub reasons: Vec<String>,
    /// MIG and shared capacity/allocatable (whole GPUs are zero here).
    pub other_capacity: Gpus,
    pub other_allocatable: Gpus,
}

impl GpuNode<'_> {
    pub fn placeable_gpus(&self) -> u64 {
        if self.placeable { self.allocatable } else { 0 }
    }
}

fn without_whole(mut g: Gpus) -> Gpus {
    g.whole = 0;
    g
}

/// Whole GPUs by model: each GPU node with whole GPUs counts under its GFD product label (or
/// `unknown`), with what bound pods on it request (`on_node`).
pub fn models(
    nodes: &BTreeMap<&str, GpuNode<'_>>,
    on_node: &std::collections::HashMap<&str, u64>,
) -> Result<Vec<ModelRow>, Overflow> {
    let mut by: BTreeMap<&str, ModelRow> = BTreeMap::new();
    for n in nodes.values().filter(|n| n.capacity > 0) {
        let model = n
            .labels
            .get(GPU_PRODUCT_LABEL)
            .map(Text::as_str)
            .filter(|m| !m.trim().is_empty())
            .unwrap_or("unknown");
        let e = by.entry(model).or_insert_with(|| ModelRow {
            model: model.to_string(),
            nodes: 0,
            capacity: 0,
            allocatable: 0,
            placeable: 0,
            requested: 0,
        });
        let named = format_args!("GPU model {model}");
        e.nodes = sum::add(e.nodes, 1).named(named, "GPU nodes")?;
        sum::add_to(&mut e.capacity, n.capacity).named(named, "GPU capacity")?;
        sum::add_to(&mut e.allocatable, n.allocatable).named(named, "allocatable GPUs")?;
        sum::add_to(&mut e.placeable, n.placeable_gpus()).named(named, "placeable GPUs")?;
        sum::add_to(&mut e.requested, on_node.get(n.name).copied().unwrap_or(0))
            .named(named, "GPUs requested")?;
    }
    Ok(by_capacity(by.into_values().collect()))
}

/// Largest capacity first, then by name.
pub fn by_capacity(mut rows: Vec<ModelRow>) -> Vec<ModelRow> {
    rows.sort_by(|a, b| {
        b.capacity
            .cmp(&a.capacity)
            .then_with(|| a.model.cmp(&b.model))
    });
    rows
}

/// The node's view, or `None` when the object is not a node with any GPU signal.
pub fn gpu_node<'a>(o: &'a Object, cfg: &Config) -> Option<GpuNode<'a>> {
    let Body::Node(n) = &o.body else { return None };
    let cap_key = n.status.capacity.get(&GpuResource::Whole);
    let label = o
        .meta
        .labels
        .get(GPU_COUNT_LABEL)
        .and_then(|v| v.trim().parse::<u64>().ok());
    let other_capacity = without_whole(n.status.capacity.to_gpus());
    if cap_key.is_none() && label.is_none() && other_capacity.is_zero() {
        return None;
    }
    let capacity = cap_key.unwrap_or(0).max(label.unwrap_or(0));
    let allocatable = n.status.allocatable.get(&GpuResource::Whole).unwrap_or(0);

    let mut reasons = Vec::new();
    if n.spec.unschedulable {
        reasons.push("cordoned".to_string());
    }
    let ready = n
        .status
        .conditions
        .iter()
        .find(|c| c.type_ == "Ready")
        .is_some_and(|c| c.status == "True");
    if !ready {
        reasons.push("not-ready".to_string());
    }
    for t in &n.spec.taints {
        if !matches!(t.effect.as_str(), "NoSchedule" | "NoExecute") {
            continue;
        }
        let key = t.key.as_str();
        // The cordon and readiness taints repeat what the reasons above already say.
        if (key == UNSCHEDULABLE_TAINT && n.spec.unschedulable)
            || (NOT_READY_TAINTS.contains(&key) && !ready)
            || cfg.nodes.tolerated_taints.iter().any(|k| k == key)
        {
            continue;
        }
        let r = format!("taint:{key}");
        if !reasons.contains(&r) {
            reasons.push(r);
        }
    }
    let placeable = reasons.is_empty();
    let other_allocatable = without_whole(n.status.allocatable.to_gpus());
    if allocatable < capacity {
        // A MIG or time-sliced node offers its GPUs under another resource name: not a broken
        // plugin, but still no whole GPUs for new work.
        reasons.push(if allocatable == 0 && !other_allocatable.mig.is_empty() {
            format!("offered as MIG slices: {capacity} GPUs, 0 whole allocatable")
        } else if allocatable == 0 && other_allocatable.shared > 0 {
            format!("offered as shared GPUs (nvidia.com/gpu.shared): {capacity} GPUs, 0 whole allocatable")
        } else {
            format!("device-plugin: capacity {capacity}, allocatable {allocatable}")
        });
    }
    Some(GpuNode {
        name: &o.meta.name,
        labels: &o.meta.labels,
        capacity,
        allocatable,
        placeable,
        reasons,
        other_capacity,
        other_allocatable,
    })
}

/// Every GPU node of the input, by name.
pub fn gpu_nodes<'a>(objects: &'a [Object], cfg: &Config) -> BTreeMap<&'a str, GpuNode<'a>> {
    objects
        .iter()
        .filter_map(|o| gpu_node(o, cfg))
        .map(|n| (n.name, n))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::k8s::read::read_str;

    fn node(extra_meta: &str, spec: &str, status: &str) -> (u64, u64, u64, Vec<String>) {
        let yaml = format!(
            "apiVersion: v1\nkind: Node\nmetadata:\n  name: n\n{extra_meta}spec:\n{spec}status:\n{status}"
        );
        let objs = read_str(&yaml, "t").unwrap();
        let n = gpu_node(&objs[0], &Config::default()).expect("a GPU node");
        (n.capacity, n.allocatable, n.placeable_gpus(), n.reasons)
    }

    const READY: &str = "  conditions: [{type: Ready, status: \"True\"}]\n";

    #[test]
    fn healthy_node_with_tolerated_gpu_taint() {
        let r = node(
            "",
            "  taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]\n",
            &format!(
                "  capacity: {{nvidia.com/gpu: \"8\"}}\n  allocatable: {{nvidia.com/gpu: \"8\"}}\n{READY}"
            ),
        );
        assert_eq!(r, (8, 8, 8, vec![]));
    }

    #[test]
    fn broken_device_plugin_uses_the_gfd_label() {
        let r = node(
            "  labels: {nvidia.com/gpu.count: \"8\"}\n",
            "  {}\n",
            &format!(
                "  capacity: {{nvidia.com/gpu: \"0\"}}\n  allocatable: {{nvidia.com/gpu: \"0\"}}\n{READY}"
            ),
        );
        assert_eq!(r.0, 8);
        assert_eq!(r.2, 0);
        assert_eq!(r.3, ["device-plugin: capacity 8, allocatable 0"]);
        // The plugin never ran: no nvidia.com/gpu key at all, only the label.
        let r = node("  labels: {nvidia.com/gpu.count: \"4\"}\n", "  {}\n", READY);
        assert_eq!((r.0, r.1, r.2), (4, 0, 0));
    }

    #[test]
    fn unhealthy_device_keeps_the_node_placeable() {
        let r = node(
            "",
            "  {}\n",
            &format!(
                "  capacity: {{nvidia.com/gpu: 8}}\n  allocatable: {{nvidia.com/gpu: 7}}\n{READY}"
            ),
        );
        assert_eq!(
            r,
            (
                8,
                7,
                7,
                vec!["device-plugin: capacity 8, allocatable 7".to_string()]
            )
        );
    }

    #[test]
    fn cordoned_not_ready_and_tainted() {
        let cap = "  capacity: {nvidia.com/gpu: 8}\n  allocatable: {nvidia.com/gpu: 8}\n";
        let r = node(
            "",
            "  unschedulable: true\n  taints: [{key: node.kubernetes.io/unschedulable, effect: NoSchedule}]\n",
            &format!("{cap}{READY}"),
        );
        assert_eq!((r.2, r.3), (0, vec!["cordoned".to_string()]));
        let r = node(
            "",
            "  taints: [{key: node.kubernetes.io/not-ready, effect: NoExecute}]\n",
            &format!("{cap}  conditions: [{{type: Ready, status: \"False\"}}]\n"),
        );
        assert_eq!((r.2, r.3), (0, vec!["not-ready".to_string()]));
        let r = node(
            "",
            "  taints: [{key: maintenance, effect: NoSchedule}, {key: soft, effect: PreferNoSchedule}]\n",
            &format!("{cap}{READY}"),
        );
        assert_eq!((r.2, r.3), (0, vec!["taint:maintenance".to_string()]));
        // No Ready condition at all is not ready.
        let r = node("", "  {}\n", cap);
        assert_eq!(r.3, ["not-ready"]);
    }

    #[test]
    fn mig_and_time_sliced_nodes_say_so() {
        let r = node(
            "  labels: {nvidia.com/gpu.count: \"2\"}\n",
            "  {}\n",
            &format!(
                "  capacity: {{nvidia.com/mig-1g.10gb: 14}}\n  allocatable: {{nvidia.com/mig-1g.10gb: 14}}\n{READY}"
            ),
        );
        assert_eq!((r.0, r.2), (2, 0));
        assert_eq!(r.3, ["offered as MIG slices: 2 GPUs, 0 whole allocatable"]);
        let r = node(
            "  labels: {nvidia.com/gpu.count: \"8\"}\n",
            "  {}\n",
            &format!(
                "  capacity: {{nvidia.com/gpu.shared: 32}}\n  allocatable: {{nvidia.com/gpu.shared: 32}}\n{READY}"
            ),
        );
        assert!(r.3[0].starts_with("offered as shared GPUs"), "{:?}", r.3);
    }

    #[test]
    fn cpu_nodes_are_not_gpu_nodes() {
        let objs = read_str(
            "apiVersion: v1\nkind: Node\nmetadata: {name: cpu}\nstatus:\n  capacity: {cpu: \"64\"}\n",
            "t",
        )
        .unwrap();
        assert!(gpu_node(&objs[0], &Config::default()).is_none());
    }

    #[test]
    fn tolerated_taint_keys_are_configurable() {
        let mut cfg = Config::default();
        cfg.nodes.tolerated_taints = vec!["dedicated".into()];
        let objs = read_str(
            "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nspec:\n  taints: [{key: dedicated, effect: NoSchedule}, {key: nvidia.com/gpu, effect: NoSchedule}]\nstatus:\n  capacity: {nvidia.com/gpu: 8}\n  allocatable: {nvidia.com/gpu: 8}\n  conditions: [{type: Ready, status: \"True\"}]\n",
            "t",
        )
        .unwrap();
        let n = gpu_node(&objs[0], &cfg).unwrap();
        assert_eq!(n.reasons, ["taint:nvidia.com/gpu"]);
    }
}
