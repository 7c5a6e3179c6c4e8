//! The fleet report: the four counts (GPU tiers, requested against used, namespaces, public routes),
//! tenants, product lines, workloads, Dynamo graphs and routes — with the optional sections that
//! other commands add to it (drift, cost, headroom). `inventory`, `drift`, `cost` and `headroom`
//! all write this shape; its `kind` says which command made it.

use std::collections::BTreeMap;

use serde::Serialize;

use super::cost;
use super::dra::{FleetDra, WorkloadDra};
use super::drift::Drift;
use super::envelope::{Column, IncompleteInput, Kind, Unknown};
use super::headroom::Headroom;
use super::provenance::Provenance;
use crate::workload::{Role, WorkloadId};

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub schema: &'static str,
    /// `inventory`, `drift`, `cost` or `headroom`: the command that made it.
    pub kind: Kind,
    /// The inputs the report was computed from (snapshot files, cluster, config).
    pub sources: Vec<String>,
    /// False when part of the input could not be read (a resource the cluster forbids): the
    /// figures then under-count and `incomplete` says what is missing.
    pub complete: bool,
    pub incomplete: Vec<IncompleteInput>,
    /// Why figures of the rows below are `null`, by path from here (`tenants.gpus_requested`:
    /// that figure of every tenant), when the input did not hold what they need.
    #[serde(skip_serializing_if = "Unknown::is_empty")]
    pub unknown: Unknown,
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
    /// Requested-but-idle GPUs per tenant, largest gap first (empty when `used` is unknown).
    pub idle: Vec<IdleRow>,
    /// The admission queues (Kueue ClusterQueues, KAI Queues): one row per queue and GPU flavor.
    pub queues: Vec<super::queues::QueueRow>,
    /// One section per cluster when several were read (`--context` repeated); the rest of the
    /// report is then their total.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub clusters: Vec<ClusterSection>,
    /// Drift against Git, when a repository was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drift: Option<Drift>,
    /// Cost per verified outcome, when cost or outcome inputs were given (`--opencost`,
    /// `--outcomes`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<cost::Cost>,
    /// What, where and when: the scope, where and when the live state was read, the commits.
    /// Filled by the command that made the report; `null` from the bare analysis.
    pub provenance: Option<Provenance>,
    /// Serving headroom per serving workload, when a load test or a Prometheus was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub headroom: Option<Headroom>,
    /// Deadline attainment of batch work that declares a deadline (`cost`, `drift`), when any
    /// does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deadlines: Option<super::deadlines::Deadlines>,
    /// Two configurations side by side (`cost --compare A B`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compare: Option<super::compare::Compare>,
    /// Free GPUs per node and per GPU model, when asked (`inventory --by node`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nodes: Option<super::nodes::NodeView>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ClusterSection {
    pub name: String,
    pub complete: bool,
    pub fleet: Fleet,
}

#[derive(Debug, Clone, Serialize)]
pub struct Fleet {
    pub gpu_nodes: u64,
    pub gpus: FleetGpus,
    /// Why a figure is `null`, keyed by its path (`gpus.used`).
    pub unknown: Unknown,
    /// Why a figure is a lower bound rather than the count, keyed as `unknown` is
    /// (`gpus.used`: a GPU node without metrics, unreadable samples, a partial Prometheus answer).
    #[serde(skip_serializing_if = "Unknown::is_empty")]
    pub partial: Unknown,
    /// requested / placeable; `null` when nothing is placeable.
    pub utilisation: Option<f64>,
    /// At or above `tenancy.contacts_above`: the largest tenants and who to call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nearly_full: Option<NearlyFull>,
    pub shortage: Shortage,
    /// Every GPU node that contributes fewer GPUs to `placeable` than to `capacity`.
    pub excluded_nodes: Vec<ExcludedNode>,
    pub gpu_namespaces: u64,
    /// Share of requested + pending GPUs held by the three largest namespaces.
    pub top3_namespace_share: Option<f64>,
    pub public_routes: u64,
    /// MIG slices and shared (time-sliced) GPUs, never mixed into whole GPUs.
    pub other_gpus: Vec<OtherGpuRow>,
    /// Whole GPUs by model (the GFD label `nvidia.com/gpu.product`): an H100 and an L4 are not one
    /// pool. Largest capacity first.
    pub models: Vec<ModelRow>,
    /// Where `used` came from (Prometheus URL, window, busy threshold), when a source is set.
    pub metrics_source: Option<String>,
    /// Which cluster's DCGM series `used` was read from, and how that was decided
    /// (`metrics.cluster_selector`, or detected by node names), when the question arose.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metrics_scope: Option<String>,
    /// GPU nodes with no DCGM series in the window: their GPUs are unknown, not idle.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub no_metrics_nodes: Vec<NoMetricsNode>,
    /// GPUs whose DCGM samples cannot be read as activity: unknown, not idle.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown_gpus: Vec<UnknownGpuRow>,
    /// Σ average activity of whole GPUs: a GPU at 40% counts 0.4. `null` when unknown.
    pub gpu_equivalents_used: Option<f64>,
    /// Busy GPUs no pod of the fleet accounts for.
    /// Requested GPUs of workloads that declare intent / all requested GPUs (`null` when nothing
    /// is requested).
    pub intent_coverage: Option<f64>,
    pub unattributed_busy: Vec<UnattributedRow>,
    /// The figures through Dynamic Resource Allocation (ResourceSlices, claims), when the input
    /// has DRA objects.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dra: Option<FleetDra>,
}

#[derive(Debug, Clone, Serialize)]
pub struct UnattributedRow {
    pub node: String,
    pub gpu: String,
    pub activity: f64,
    pub reason: String,
}

/// A GPU node without DCGM series in the window.
#[derive(Debug, Clone, Serialize)]
pub struct NoMetricsNode {
    pub node: String,
    /// Its whole GPUs, whose activity is unknown.
    pub gpus: u64,
}

/// A GPU whose DCGM samples cannot be read as activity.
#[derive(Debug, Clone, Serialize)]
pub struct UnknownGpuRow {
    pub node: String,
    pub gpu: String,
    pub reason: String,
}

/// The fleet is nearly full: who holds it, and who to call.
#[derive(Debug, Clone, Serialize)]
pub struct NearlyFull {
    pub utilisation: f64,
    /// `tenancy.contacts_above`.
    pub threshold: f64,
    /// The largest tenants, by GPUs requested.
    pub tenants: Vec<CallRow>,
    /// Who runs beyond their quota: tenants whose queues borrow from their cohort.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub borrowing: Vec<super::queues::BorrowingRow>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CallRow {
    pub tenant: String,
    pub share: Option<f64>,
    /// Empty when no contact is known.
    pub contacts: Vec<String>,
}

/// Requested but idle, per tenant: requested − busy.
#[derive(Debug, Clone, Serialize)]
pub struct IdleRow {
    pub tenant: String,
    pub gpus_requested: u64,
    pub gpus_used: u64,
    pub gpus_idle: u64,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct FleetGpus {
    pub capacity: u64,
    pub allocatable: u64,
    pub placeable: u64,
    pub requested: u64,
    pub pending: u64,
    /// GPUs of admission-managed work waiting for its queue's quota (Kueue Workloads without
    /// quota, pods held by Kueue's scheduling gate, KAI pod groups their queue holds): never also
    /// pending. 0 when the fleet has no admission system; `null` when queues exist but what waits
    /// in them was not read.
    pub queued: u64,
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
    /// The input did not hold the nodes (or the pods) the diagnosis needs.
    Unknown,
    None,
    Fits,
    Capacity,
    Placement,
    /// Work waits for queue quota while placeable GPUs it could use are free: the queues are at
    /// their quota, the nodes are not.
    Quota,
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
    /// With `unplaceable` pods: what would let them run (fragmented nodes, empty nodes needed,
    /// nodes to drain); `null` when every pending pod fits.
    pub next_step: Option<super::nodes::PlacementStep>,
    /// When work waits for queue quota: the queues, what they could borrow, and the placeable
    /// GPUs no quota covers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quota: Option<super::queues::QuotaShortage>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PendingPod {
    pub namespace: String,
    pub name: String,
    pub gpus: u64,
    pub workload: String,
}

/// The whole GPUs of one model across the fleet's GPU nodes.
#[derive(Debug, Clone, Serialize)]
pub struct ModelRow {
    /// `NVIDIA-H100-80GB-HBM3`, or `unknown` for nodes without the GFD label.
    pub model: String,
    pub nodes: u64,
    pub capacity: u64,
    pub allocatable: u64,
    pub placeable: u64,
    /// GPUs requested by bound pods on nodes of this model.
    pub requested: u64,
    /// GPUs pending pods ask for that can only run on this model (their node selector or
    /// required node affinity names it alone); pending pods that name no model, or several,
    /// count in the fleet's `pending` only.
    pub pending: u64,
    /// GPUs queued for this model: the first flavor of their queue whose node labels their pods
    /// allow names it, else their own node selector does; work for any model counts in the
    /// fleet's `queued` only.
    pub queued: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[derive(Debug, Clone, Serialize)]
pub struct OtherGpuRow {
    /// `nvidia.com/mig-1g.10gb` or `nvidia.com/gpu.shared`.
    pub resource: String,
    pub capacity: u64,
    pub allocatable: u64,
    pub requested: u64,
    pub pending: u64,
    /// Held by admission (KAI GPU shares of a pod group its queue holds); absent when none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub queued: u64,
    /// Busy MIG instances (MIG only; `null` when unknown or not applicable).
    pub used: Option<u64>,
    /// KAI GPU shares (`gpu-fraction`): the GPUs the requested and pending shares add up to;
    /// `null` when a share is given by memory (`gpu-memory`: its part of a GPU depends on the
    /// node), with `note` saying so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_equivalents: Option<Option<f64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
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
    /// GPUs of its work waiting for queue quota.
    pub gpus_queued: u64,
    /// Its standing in the admission queues (`gpus_quota`, `gpus_admitted`, `gpus_borrowed`);
    /// absent when the fleet has no admission queues.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub queues: Option<super::queues::TenantQueues>,
    pub gpus_used: Option<u64>,
    pub gpu_equivalents_used: Option<f64>,
    /// GPUs declared by the tenant's workload specs (what they ask for at full scale); `null` when
    /// one of its workloads' is (a DRA claim that cannot be counted: its `dra.uncounted` says why).
    pub gpus_declared: Option<u64>,
    /// Share of the fleet's requested GPUs.
    pub share: Option<f64>,
    pub product_lines: Vec<String>,
    pub namespaces: Vec<String>,
    pub workloads: u64,
    pub public_routes: u64,
    /// Who to call: `tenancy.contacts` in the config, else the namespaces' contact annotations
    /// or labels (`gpuledger.io/contact`, `owner`, `team`); empty when none is known.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub contacts: Vec<String>,
    /// GPUs requested, change per week over the trend window (`--prometheus`; `gpuledger trend`'s
    /// figure); absent when no Prometheus was given, `null` when the trend is unknown (why:
    /// `fleet.unknown["tenants.gpus_per_week"]`).
    #[serde(default, skip_serializing_if = "Column::not_asked")]
    pub gpus_per_week: Column<f64>,
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
    /// The cluster, when several were read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster: Option<String>,
    pub namespace: String,
    pub api_group: String,
    pub kind: String,
    pub name: String,
    pub tenant: String,
    pub product_line: Option<String>,
    /// Whole GPUs requested by the workload's bound pods.
    pub gpus: u64,
    pub gpus_pending: u64,
    /// Whole GPUs waiting for its queue's quota.
    pub gpus_queued: u64,
    /// The admission queue it is submitted to (a Kueue ClusterQueue, a KAI queue), when it names
    /// one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue: Option<String>,
    /// Where its Kueue Workload stands when it is not simply admitted: `queued`, `evicted`,
    /// `preempted`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_state: Option<super::queues::QueueState>,
    /// Kueue's reason when it can never be admitted as the queues are (`ExceedsMaxQuota`,
    /// `NoMatchingFlavor`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_never: Option<String>,
    /// Whole GPUs the shape declares: Σ replicas × GPUs per replica; `null` when a DRA claim's
    /// GPUs cannot be counted (`dra.uncounted` says why).
    pub gpus_declared: Option<u64>,
    /// Busy GPUs of its pods, and their activity-weighted GPU-equivalents (`null` when unknown).
    pub gpus_used: Option<u64>,
    pub gpu_equivalents_used: Option<f64>,
    pub roles: Vec<Role>,
    /// `decode 10×8 + prefill 10×8 = 160`
    pub shape: String,
    /// `spec` when the shape was read from the root object, `pods` when it was inferred from pods
    /// because the root object is not in the input, `guess` when the root object is of a kind
    /// gpuledger does not model (its pod templates' GPUs).
    pub shape_source: ShapeSource,
    pub pods_bound: u64,
    pub pods_pending: u64,
    /// MIG slices and shared GPUs the workload's pods request, by resource.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub other_gpus: BTreeMap<String, u64>,
    /// MIG slices, shared GPUs and DRA devices of other classes its shape declares (Σ replicas ×
    /// per replica), by resource or device class; never whole GPUs.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub other_gpus_declared: BTreeMap<String, u64>,
    /// What it holds or declares through DRA claims; absent for device-plugin resources only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dra: Option<WorkloadDra>,
    pub public_routes: u64,
    /// Where the root object was read (file:line).
    pub source: Option<String>,
    /// What the workload says it needs (`gpuledger.io/*` annotations, `intent:` rules).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub intent: Option<crate::intent::Intent>,
    /// Intent values that do not parse (the rest of its intent is kept).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub intent_problems: Vec<crate::intent::Problem>,
    #[serde(skip)]
    pub intent_facts: crate::intent::Facts,
}

impl WorkloadRow {
    pub fn id(&self) -> WorkloadId {
        WorkloadId::new(&self.namespace, &self.api_group, &self.kind, &self.name)
    }
}

/// Where a workload's shape was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ShapeSource {
    /// The root object's spec.
    Spec,
    /// Its pods, because the root object is not in the input.
    Pods,
    /// The root object's spec, of a kind gpuledger does not model: the GPUs its pod templates
    /// request, a guess at its shape.
    Guess,
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
