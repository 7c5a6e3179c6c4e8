//! GPU nodes in three tiers — capacity, allocatable, placeable — and why a node falls out.
//!
//! `capacity` is the GPUs bought: the larger of the node's `nvidia.com/gpu` capacity and the GFD
//! label `nvidia.com/gpu.count` (a broken device plugin reports 0 while the label still says 8).
//! `allocatable` is what the kubelet offers. `placeable` is allocatable on nodes that accept new GPU
//! work: Ready, not cordoned, and without `NoSchedule`/`NoExecute` taints other than the tolerated GPU
//! taint keys. A node that contributes fewer GPUs to placeable than to capacity is listed with every
//! reason.
//!
//! A node without device-plugin `nvidia.com/gpu` capacity whose GPUs the NVIDIA DRA driver
//! publishes in ResourceSlices ([`SliceSupply`]) has GPUs all the same: its capacity is its
//! distinct physical GPUs (each GPU's `uuid`, each MIG device's `parentUUID`: with dynamic MIG a
//! slice advertises every possible partition, so counting slice entries would over-count), its
//! allocatable the distinct GPUs published whole (`type` `gpu` or `vfio`), its MIG capacity the
//! static MIG devices by profile, and the same tier rules apply. A node with device-plugin
//! capacity keeps it: the slices of such a node publish the same GPUs again.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::config::Config;
use crate::k8s::gpus::{GpuResource, Gpus};
use crate::k8s::object::{Body, Object};
use crate::k8s::types::{LabelMap, Text};
use crate::report::ModelRow;
use crate::util::sum::{self, Named, Overflow};
use crate::workload::claims::{GPU_DRIVER, SliceDevices};

pub const GPU_COUNT_LABEL: &str = "nvidia.com/gpu.count";
pub use crate::k8s::gpus::GPU_PRODUCT_LABEL;
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
    /// Its GPUs were read from ResourceSlices (DRA), not from the device plugin.
    pub from_slices: bool,
    /// Its slices advertise MIG partitions that share counters (dynamic MIG): its MIG capacity by
    /// profile is not a fixed number.
    pub dynamic_mig: bool,
    /// The GPU model its slices name (`productName`), for a node without the GFD label.
    pub product: Option<&'a str>,
}

/// What the GPU driver's ResourceSlices publish for one node.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SliceSupply<'a> {
    /// Distinct physical GPUs: GPUs by `uuid`, MIG devices by `parentUUID`.
    pub physical: u64,
    /// Distinct GPUs published whole (`gpu`, or `vfio` passthrough).
    pub whole: u64,
    /// Static MIG devices by profile.
    pub mig: BTreeMap<String, u64>,
    /// MIG partitions that consume shared counters are advertised (dynamic MIG).
    pub dynamic_mig: bool,
    pub product: Option<&'a str>,
}

/// What the `gpu.nvidia.com` slices publish, per node.
pub fn slice_supply<'a>(slices: &SliceDevices<'a>) -> HashMap<&'a str, SliceSupply<'a>> {
    #[derive(Default)]
    struct Acc<'a> {
        physical: BTreeSet<&'a str>,
        whole: BTreeSet<&'a str>,
        supply: SliceSupply<'a>,
    }
    let mut by: HashMap<&str, Acc<'_>> = HashMap::new();
    for d in slices.iter().filter(|d| d.driver == GPU_DRIVER) {
        let Some(node) = d.node else { continue };
        let a = by.entry(node).or_default();
        let attrs = d.device.attrs();
        a.supply.product = a.supply.product.or(attrs.product_name.as_deref());
        // A device without a uuid is its own GPU: its name is unique in its pool.
        let own = attrs.uuid.as_deref().unwrap_or(d.device.name.as_str());
        match attrs.type_.as_deref() {
            Some("gpu" | "vfio") => {
                a.physical.insert(own);
                a.whole.insert(own);
            }
            Some("mig") => {
                a.physical
                    .insert(attrs.parent_uuid.as_deref().unwrap_or(own));
                if d.device.consumes_counters() {
                    a.supply.dynamic_mig = true;
                } else if let Some(p) = &attrs.profile {
                    *a.supply.mig.entry(p.clone()).or_insert(0) += 1;
                }
            }
            _ => {}
        }
    }
    by.into_iter()
        .map(|(node, a)| {
            let mut s = a.supply;
            s.physical = sum::count(a.physical.len());
            s.whole = sum::count(a.whole.len());
            (node, s)
        })
        .collect()
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
/// `unknown`), with what bound pods on it request (`on_node`) and what pending pods that can only
/// run on that model ask for (`pending`, by model).
pub fn models(
    nodes: &BTreeMap<&str, GpuNode<'_>>,
    on_node: &std::collections::HashMap<&str, u64>,
    pending: &BTreeMap<String, u64>,
) -> Result<Vec<ModelRow>, Overflow> {
    let mut by: BTreeMap<&str, ModelRow> = BTreeMap::new();
    for n in nodes.values().filter(|n| n.capacity > 0) {
        let model = n
            .labels
            .get(GPU_PRODUCT_LABEL)
            .map(Text::as_str)
            .or(n.product)
            .filter(|m| !m.trim().is_empty())
            .unwrap_or("unknown");
        let e = by.entry(model).or_insert_with(|| ModelRow {
            model: model.to_string(),
            nodes: 0,
            capacity: 0,
            allocatable: 0,
            placeable: 0,
            requested: 0,
            pending: pending.get(model).copied().unwrap_or(0),
            queued: 0,
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

/// The node's view, or `None` when the object is not a node with any GPU signal. `slices` is
/// what the DRA driver publishes for it, if anything.
pub fn gpu_node<'a>(
    o: &'a Object,
    cfg: &Config,
    slices: Option<&SliceSupply<'a>>,
) -> Option<GpuNode<'a>> {
    let Body::Node(n) = &o.body else { return None };
    let cap_key = n.status.capacity.get(&GpuResource::Whole);
    let label = o
        .meta
        .labels
        .get(GPU_COUNT_LABEL)
        .and_then(|v| v.trim().parse::<u64>().ok());
    let mut other_capacity = without_whole(n.status.capacity.to_gpus());
    let mut other_allocatable = without_whole(n.status.allocatable.to_gpus());
    // The device plugin's figures win: a node's slices publish the same GPUs again.
    let slices = slices.filter(|s| cap_key.unwrap_or(0) == 0 && s.physical > 0);
    if cap_key.is_none() && label.is_none() && other_capacity.is_zero() && slices.is_none() {
        return None;
    }
    let mut capacity = cap_key.unwrap_or(0).max(label.unwrap_or(0));
    let mut allocatable = n.status.allocatable.get(&GpuResource::Whole).unwrap_or(0);
    if let Some(s) = slices {
        capacity = capacity.max(s.physical);
        allocatable = s.whole;
        for (p, c) in &s.mig {
            let r = GpuResource::Mig(p.clone());
            other_capacity.set(&r, other_capacity.get(&r).max(*c));
            other_allocatable.set(&r, other_allocatable.get(&r).max(*c));
        }
    }

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
    let dynamic_mig = slices.is_some_and(|s| s.dynamic_mig);
    if allocatable < capacity {
        // A MIG or time-sliced node offers its GPUs under another resource name: not a broken
        // plugin, but still no whole GPUs for new work.
        reasons.push(if allocatable == 0 && (!other_allocatable.mig.is_empty() || dynamic_mig) {
            format!("offered as MIG slices: {capacity} GPUs, 0 whole allocatable")
        } else if allocatable == 0 && other_allocatable.shared > 0 {
            format!("offered as shared GPUs (nvidia.com/gpu.shared): {capacity} GPUs, 0 whole allocatable")
        } else if slices.is_some() {
            format!("DRA: {capacity} GPUs, {allocatable} published whole")
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
        from_slices: slices.is_some(),
        dynamic_mig,
        product: slices.and_then(|s| s.product),
    })
}

/// Every GPU node of the input, by name, with what the DRA driver's slices publish for it.
pub fn gpu_nodes<'a>(objects: &'a [Object], cfg: &Config) -> BTreeMap<&'a str, GpuNode<'a>> {
    let slices = SliceDevices::new(objects);
    let supply = slice_supply(&slices);
    objects
        .iter()
        .filter_map(|o| gpu_node(o, cfg, supply.get(o.meta.name.as_str())))
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
        let n = gpu_node(&objs[0], &Config::default(), None).expect("a GPU node");
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
        assert!(gpu_node(&objs[0], &Config::default(), None).is_none());
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
        let n = gpu_node(&objs[0], &cfg, None).unwrap();
        assert_eq!(n.reasons, ["taint:nvidia.com/gpu"]);
    }

    /// A node of the DRA driver's fixture shape: no device plugin, its GPUs in one slice.
    fn dra_node(devices: &str, check: impl FnOnce(&GpuNode<'_>)) {
        let yaml = format!(
            "apiVersion: v1\nkind: Node\nmetadata: {{name: n1}}\nstatus:\n  conditions: [{{type: Ready, status: \"True\"}}]\n---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {{name: n1-gpu}}\nspec:\n  driver: gpu.nvidia.com\n  nodeName: n1\n  pool: {{name: n1, generation: 2, resourceSliceCount: 1}}\n  devices:\n{devices}---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {{name: n1-old}}\nspec:\n  driver: gpu.nvidia.com\n  nodeName: n1\n  pool: {{name: n1, generation: 1, resourceSliceCount: 1}}\n  devices:\n  - {{name: gpu-9, attributes: {{type: {{string: gpu}}, uuid: {{string: GPU-9}}}}}}\n"
        );
        let objs = read_str(&yaml, "t").unwrap();
        let nodes = gpu_nodes(&objs, &Config::default());
        check(nodes.get("n1").expect("a GPU node"));
    }

    fn gpu(i: u32) -> String {
        format!(
            "  - {{name: gpu-{i}, attributes: {{type: {{string: gpu}}, uuid: {{string: GPU-{i}}}, productName: {{string: NVIDIA A100-SXM4-40GB}}}}}}\n"
        )
    }

    fn mig(parent: u32, profile: &str, k: u32, dynamic: bool) -> String {
        let counters = if dynamic {
            format!(", consumesCounters: [{{counterSet: gpu-{parent}-counters}}]")
        } else {
            String::new()
        };
        format!(
            "  - {{name: gpu-{parent}-mig-{profile}-{k}, attributes: {{type: {{string: mig}}, uuid: {{string: MIG-{parent}-{k}}}, parentUUID: {{string: GPU-{parent}}}, profile: {{string: {profile}}}}}{counters}}}\n"
        )
    }

    #[test]
    fn slices_of_whole_gpus_give_a_node_its_gpus() {
        // The older generation of the pool (gpu-9) is ignored.
        dra_node(&(gpu(0) + &gpu(1)), |n| {
            assert_eq!((n.capacity, n.allocatable, n.placeable_gpus()), (2, 2, 2));
            assert!(n.from_slices && !n.dynamic_mig);
            assert_eq!(n.product, Some("NVIDIA A100-SXM4-40GB"));
        });
    }

    #[test]
    fn dynamic_mig_counts_physical_gpus_not_partitions() {
        // Two GPUs, each advertised whole and as every possible partition.
        let mut devices = gpu(0) + &gpu(1);
        for p in 0..2 {
            for k in 0..7 {
                devices.push_str(&mig(p, "1g.5gb", k, true));
            }
            devices.push_str(&mig(p, "3g.20gb", 0, true));
        }
        dra_node(&devices, |n| {
            assert_eq!((n.capacity, n.allocatable), (2, 2));
            assert!(n.dynamic_mig);
            assert!(n.other_capacity.mig.is_empty(), "no fixed MIG capacity");
        });
    }

    #[test]
    fn static_mig_gpus_are_capacity_and_mig_slices_by_profile() {
        let mut devices = gpu(0);
        for k in 0..3 {
            devices.push_str(&mig(1, "1g.10gb", k, false));
        }
        devices.push_str(&mig(1, "3g.40gb", 0, false));
        dra_node(&devices, |n| {
            assert_eq!((n.capacity, n.allocatable), (2, 1));
            assert_eq!(n.other_capacity.mig["1g.10gb"], 3);
            assert_eq!(n.other_allocatable.mig["3g.40gb"], 1);
            assert_eq!(n.reasons, ["DRA: 2 GPUs, 1 published whole"]);
        });
    }
}
