//! The report: one serializable struct that every renderer reads.
//!
//! Its JSON form (`--format json`) is a public, versioned interface: `"schema":
//! "gpuledger.report/v1"`. Field names fixed by the product spec are kept as they are; fields are only
//! ever added. A figure that could not be computed is `null` and its reason is in `fleet.unknown`:
//! unknown is never written as zero. Every list is sorted, so the same input gives the same bytes.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::workload::Role;

pub const SCHEMA: &str = "gpuledger.report/v1";

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub schema: &'static str,
    /// The inputs the report was computed from (snapshot files, config).
    pub sources: Vec<String>,
    pub fleet: Fleet,
    /// Namespaces holding GPU pods, by GPUs requested + pending.
    pub namespaces: Vec<NamespaceRow>,
    /// By GPUs requested, then pending, then name.
    pub tenants: Vec<TenantRow>,
    pub product_lines: Vec<ProductLineRow>,
    /// Every live GPU workload, by GPUs requested.
    pub workloads: Vec<WorkloadRow>,
    /// The Dynamo graphs among the workloads, with each role's shape.
    pub graphs: Vec<WorkloadRow>,
    /// Public routes, each traced to its workloads and tenants.
    pub routes: Vec<RouteRow>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Fleet {
    pub gpu_nodes: u64,
    pub gpus: FleetGpus,
    /// Why a figure is `null`, keyed by its path (`gpus.used`).
    pub unknown: BTreeMap<String, String>,
    /// requested / placeable; `null` when nothing is placeable.
    pub utilisation: Option<f64>,
    pub shortage: Shortage,
    /// Every GPU node that contributes fewer GPUs to `placeable` than to `capacity`.
    pub excluded_nodes: Vec<ExcludedNode>,
    pub gpu_namespaces: u64,
    /// Share of requested + pending GPUs held by the three largest namespaces.
    pub top3_namespace_share: Option<f64>,
    pub public_routes: u64,
    /// MIG slices and shared (time-sliced) GPUs, never mixed into whole GPUs.
    pub other_gpus: Vec<OtherGpuRow>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct FleetGpus {
    pub capacity: u64,
    pub allocatable: u64,
    pub placeable: u64,
    pub requested: u64,
    pub pending: u64,
    pub used: Option<u64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ExcludedNode {
    pub node: String,
    /// All reasons, joined with `, ` (e.g. `cordoned, taint:maintenance`).
    pub reason: String,
    pub reasons: Vec<String>,
    pub capacity: u64,
    pub placeable: u64,
}

/// Whether pending GPU pods can run: nothing pending, they fit, the fleet is short of free GPUs in
/// total (capacity), or there are enough free GPUs but no single node can take a pending pod
/// (placement: fragmentation, taints, cordons, node selectors).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ShortageKind {
    None,
    Fits,
    Capacity,
    Placement,
}

#[derive(Debug, Clone, Serialize)]
pub struct Shortage {
    pub kind: ShortageKind,
    /// Free GPUs on placeable nodes (allocatable minus requested, per node).
    pub free_placeable: u64,
    pub pending: u64,
    /// The largest free block on any one placeable node.
    pub largest_free_block: u64,
    /// Pending pods that fit on no placeable node once the others are placed, largest first.
    pub unplaceable: Vec<PendingPod>,
    pub summary: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct PendingPod {
    pub namespace: String,
    pub name: String,
    pub gpus: u64,
    pub workload: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct OtherGpuRow {
    /// `nvidia.com/mig-1g.10gb` or `nvidia.com/gpu.shared`.
    pub resource: String,
    pub capacity: u64,
    pub allocatable: u64,
    pub requested: u64,
    pub pending: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct NamespaceRow {
    pub name: String,
    pub tenant: String,
    pub gpus_requested: u64,
    pub gpus_pending: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct TenantRow {
    pub name: String,
    pub gpus_requested: u64,
    pub gpus_pending: u64,
    pub gpus_used: Option<u64>,
    /// GPUs declared by the tenant's workload specs (what they ask for at full scale).
    pub gpus_declared: u64,
    /// Share of the fleet's requested GPUs.
    pub share: Option<f64>,
    pub product_lines: Vec<String>,
    pub namespaces: Vec<String>,
    pub workloads: u64,
    pub public_routes: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct ProductLineRow {
    /// `null` for workloads without a product line.
    pub name: Option<String>,
    pub gpus_requested: u64,
    pub gpus_pending: u64,
    pub share: Option<f64>,
    pub tenants: Vec<String>,
    pub workloads: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct WorkloadRow {
    pub namespace: String,
    pub api_group: String,
    pub kind: String,
    pub name: String,
    pub tenant: String,
    pub product_line: Option<String>,
    /// Whole GPUs requested by the workload's bound pods.
    pub gpus: u64,
    pub gpus_pending: u64,
    /// Whole GPUs the shape declares: Σ replicas × GPUs per replica.
    pub gpus_declared: u64,
    pub roles: Vec<Role>,
    /// `decode 10×8 + prefill 10×8 = 160`
    pub shape: String,
    /// `spec` when the shape was read from the root object, `pods` when it was inferred from pods
    /// because the root object is not in the input.
    pub shape_source: &'static str,
    pub pods_bound: u64,
    pub pods_pending: u64,
    /// MIG slices and shared GPUs the workload's pods request, by resource.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub other_gpus: BTreeMap<String, u64>,
    pub public_routes: u64,
    /// Where the root object was read (file:line).
    pub source: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RouteRow {
    /// `Ingress`, `Service` or `HTTPRoute`.
    pub kind: String,
    pub host: String,
    /// The path (Ingress), the match (HTTPRoute), or empty (Service).
    pub path: String,
    /// The objects that declare this route, as `namespace/name`.
    pub objects: Vec<String>,
    /// Why it counts as public.
    pub public_because: String,
    pub services: Vec<String>,
    pub workloads: Vec<String>,
    pub tenants: Vec<String>,
    /// Whole GPUs requested by the GPU workloads behind the route.
    pub gpus: u64,
}

/// The report of `gpuledger render`: what Git says should run.
#[derive(Debug, Clone, Serialize)]
pub struct RenderReport {
    pub schema: &'static str,
    pub sources: Vec<String>,
    pub desired: Desired,
}

#[derive(Debug, Clone, Serialize)]
pub struct Desired {
    /// What was rendered: `working tree` or `ref <name>`.
    pub at: String,
    /// Σ declared GPUs of the desired workloads.
    pub gpus_declared: u64,
    /// Desired GPU workloads, by declared GPUs.
    pub workloads: Vec<DesiredWorkloadRow>,
    pub tenants: Vec<DesiredTenantRow>,
    /// Every app (or root) and what became of it.
    pub apps: Vec<AppRow>,
    /// Manifest files that no app renders (only when the repository declares apps).
    pub not_deployed: Vec<String>,
    /// Objects rendered by more than one app.
    pub duplicates: Vec<DuplicateRow>,
    /// Problems with the repository as a whole.
    pub problems: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct DesiredWorkloadRow {
    #[serde(flatten)]
    pub workload: WorkloadRow,
    /// The app that renders it.
    pub app: String,
    pub app_kind: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct DesiredTenantRow {
    pub name: String,
    pub gpus_declared: u64,
    pub workloads: u64,
    pub apps: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct AppRow {
    pub name: String,
    pub kind: String,
    pub defined_at: String,
    pub path: String,
    /// `rendered`, `error` or `not-rendered`.
    pub status: &'static str,
    pub objects: u64,
    pub gpu_workloads: u64,
    pub gpus_declared: u64,
    pub error: Option<String>,
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct DuplicateRow {
    pub object: String,
    pub apps: Vec<String>,
}
