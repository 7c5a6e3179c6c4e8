//! The report: one serializable struct that every renderer reads.
//!
//! Its JSON form (`--format json`) is a public, versioned interface: `"schema":
//! "gpuledger.report/v1"`. Field names fixed by the product spec are kept as they are; fields are only
//! ever added. A figure that could not be computed is `null` and its reason is in `fleet.unknown`:
//! unknown is never written as zero. Every list is sorted, so the same input gives the same bytes.

pub mod cost;

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};

use crate::config::Age;
use crate::util::date::Timestamp;
use crate::workload::{Role, WorkloadId};

pub const SCHEMA: &str = "gpuledger.report/v1";

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub schema: &'static str,
    /// The inputs the report was computed from (snapshot files, cluster, config).
    pub sources: Vec<String>,
    /// False when part of the input could not be read (a resource the cluster forbids): the
    /// figures then under-count and `incomplete` says what is missing.
    pub complete: bool,
    pub incomplete: Vec<IncompleteInput>,
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
}

/// What a report is about, where its inputs came from and when they were read: the scope (cluster)
/// its title names, each live source with its read time and age, and each side of Git compared.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Provenance {
    /// The cluster or scope (`gpu-east`): GitHub's `--scope`, else the live state's context;
    /// `null` when neither is known.
    pub scope: Option<String>,
    /// The report's clock (`--now`, else the system clock), RFC 3339 UTC.
    pub reported_at: Option<Timestamp>,
    /// One entry per snapshot file or cluster read; empty without live state.
    pub live: Vec<LiveProvenance>,
    /// `desired` (drift, inventory), or `base` and `head` (check).
    pub git: Vec<GitProvenance>,
}

impl Provenance {
    /// Ages every live source against `now`: past `stale_after` it is stale. Pure: the clock is
    /// passed in.
    pub fn new(
        scope: Option<String>,
        live: Vec<LiveProvenance>,
        git: Vec<GitProvenance>,
        now: Timestamp,
        stale_after: Age,
    ) -> Provenance {
        let scope = scope.or_else(|| {
            let contexts: std::collections::BTreeSet<&str> =
                live.iter().filter_map(|l| l.context.as_deref()).collect();
            (!contexts.is_empty()).then(|| contexts.into_iter().collect::<Vec<_>>().join(", "))
        });
        let live = live
            .into_iter()
            .map(|mut l| {
                l.stale_after = stale_after.to_string();
                l.age_seconds = l.read_at.map(|t| now.seconds_since(t));
                l.stale = l
                    .age_seconds
                    .is_some_and(|a| u64::try_from(a).is_ok_and(|a| a > stale_after.0));
                l
            })
            .collect();
        Provenance {
            scope,
            reported_at: Some(now),
            live,
            git,
        }
    }
}

/// Whether the live state came from a snapshot file or from the cluster itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LiveSourceKind {
    Snapshot,
    Cluster,
}

/// Where and when one live source was read.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LiveProvenance {
    pub source: LiveSourceKind,
    /// The snapshot file as given, or the cluster (`context (server)`).
    pub name: String,
    pub context: Option<String>,
    /// The API server URL, without credentials.
    pub server: Option<String>,
    /// When the read started, RFC 3339 UTC; `null` when unknown (`read_at_unknown` says why).
    pub read_at: Option<Timestamp>,
    pub read_at_unknown: Option<String>,
    /// Seconds from `read_at` to the report's clock; `null` when `read_at` is unknown.
    pub age_seconds: Option<i64>,
    /// Older than `stale_after` at report time.
    pub stale: bool,
    /// The threshold (`snapshot.stale_after` in the config), as written (`24h`).
    pub stale_after: String,
    /// The gpuledger version that wrote the snapshot.
    pub gpuledger_version: Option<String>,
}

/// One side of Git a report compares.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GitProvenance {
    /// `base`, `head` or `desired`.
    pub side: String,
    /// The ref as given (`origin/main`, a sha); `null` for the working tree.
    #[serde(rename = "ref")]
    pub git_ref: Option<String>,
    /// The commit's short sha (the commit the working tree is on, for the working tree).
    pub commit: Option<String>,
    /// Its subject line.
    pub subject: Option<String>,
    /// The working tree was rendered (uncommitted changes included, outside Actions).
    pub working_tree: bool,
    /// How people read it: `origin/main (abc1234 "Fix x")`, `working tree on top of abc1234
    /// "Fix x"`, `merge of def5678 "Add y" into abc1234`.
    pub describe: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct ClusterSection {
    pub name: String,
    pub complete: bool,
    pub fleet: Fleet,
}

#[derive(Debug, Clone, Serialize)]
pub struct IncompleteInput {
    pub resource: String,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Fleet {
    pub gpu_nodes: u64,
    pub gpus: FleetGpus,
    /// Why a figure is `null`, keyed by its path (`gpus.used`).
    pub unknown: BTreeMap<String, String>,
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
    /// Σ average activity of whole GPUs: a GPU at 40% counts 0.4. `null` when unknown.
    pub gpu_equivalents_used: Option<f64>,
    /// Busy GPUs no pod of the fleet accounts for.
    /// Requested GPUs of workloads that declare intent / all requested GPUs (`null` when nothing
    /// is requested).
    pub intent_coverage: Option<f64>,
    pub unattributed_busy: Vec<UnattributedRow>,
}

#[derive(Debug, Clone, Serialize)]
pub struct UnattributedRow {
    pub node: String,
    pub gpu: String,
    pub activity: f64,
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
}

#[derive(Debug, Clone, Serialize)]
pub struct OtherGpuRow {
    /// `nvidia.com/mig-1g.10gb` or `nvidia.com/gpu.shared`.
    pub resource: String,
    pub capacity: u64,
    pub allocatable: u64,
    pub requested: u64,
    pub pending: u64,
    /// Busy MIG instances (MIG only; `null` when unknown or not applicable).
    pub used: Option<u64>,
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
    pub gpu_equivalents_used: Option<f64>,
    /// GPUs declared by the tenant's workload specs (what they ask for at full scale).
    pub gpus_declared: u64,
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
    /// figure); absent when no Prometheus was given or the trend is unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpus_per_week: Option<f64>,
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
    /// Whole GPUs the shape declares: Σ replicas × GPUs per replica.
    pub gpus_declared: u64,
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
    /// Declared GPUs of the workloads that declare intent / all declared GPUs (`null` when none
    /// are declared).
    pub intent_coverage: Option<f64>,
    /// Desired GPU workloads, by declared GPUs.
    pub workloads: Vec<DesiredWorkloadRow>,
    pub tenants: Vec<DesiredTenantRow>,
    /// Every app (or root) and what became of it.
    pub apps: Vec<AppRow>,
    /// The clusters the repository drives, when it names them (Flux `clusters/<name>`, Argo CD
    /// destinations, `clusters:` in the configuration), with what each declares.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub clusters: Vec<ClusterRow>,
    /// The one cluster this desired state is for (`--cluster`, or the repository's only one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster: Option<String>,
    /// Manifest files that no app renders (only when the repository declares apps).
    pub not_deployed: Vec<String>,
    /// Objects rendered by more than one app.
    pub duplicates: Vec<DuplicateRow>,
    /// Problems with the repository as a whole.
    pub problems: Vec<String>,
    /// Where the cluster's Namespace labels would name another tenant than Git's manifests do
    /// (tenants resolve from the repository alone, offline or not).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tenancy: Vec<ClusterOnlyTenant>,
    /// Workload objects Git declares without GPUs: a live GPU workload that matches one has
    /// changed shape, it is not unmanaged.
    #[serde(skip)]
    pub without_gpus: Vec<WithoutGpus>,
}

/// A namespace whose tenant only the cluster's Namespace labels name: Git's workloads there count
/// for `git` (the namespace's name, or what the repository says), the cluster would say `cluster`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ClusterOnlyTenant {
    pub namespace: String,
    pub git: String,
    pub cluster: String,
}

/// A workload object Git declares without GPUs, and the app that renders it.
#[derive(Debug, Clone)]
pub struct WithoutGpus {
    pub id: WorkloadId,
    pub app: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct DesiredWorkloadRow {
    #[serde(flatten)]
    pub workload: WorkloadRow,
    /// The app that renders it.
    pub app: String,
    pub app_kind: String,
    /// The cluster it is applied to, when the repository drives named clusters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster: Option<String>,
    /// The apps that applied its app, root first (`Kind/name`).
    #[serde(skip)]
    pub lineage: Vec<String>,
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
    pub status: AppStatus,
    pub objects: u64,
    pub gpu_workloads: u64,
    pub gpus_declared: u64,
    pub error: Option<String>,
    pub notes: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster: Option<String>,
    /// The app whose output holds this app (`Kind/name`); none for a root.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub applied_by: Option<String>,
    /// Every app above it, root first (`Kind/name`).
    #[serde(skip)]
    pub lineage: Vec<String>,
}

/// One cluster the repository drives, and what Git declares for it.
#[derive(Debug, Clone, Serialize)]
pub struct ClusterRow {
    pub name: String,
    pub gpus_declared: u64,
    pub workloads: u64,
    pub apps: u64,
    /// Its apps that failed to render: its figures are then a floor, the rest unknown.
    pub failed_apps: u64,
    /// Its tenants, by GPUs declared.
    pub tenants: Vec<DesiredTenantRow>,
}

/// What became of an app (or root) when the repository was rendered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AppStatus {
    Rendered,
    /// It failed to render (or its source could not be read).
    Error,
    /// Skipped on purpose (e.g. it targets another cluster).
    NotRendered,
    /// An app object in the repository that no root applies: listed, never rendered.
    NotApplied,
}

impl AppStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            AppStatus::Rendered => "rendered",
            AppStatus::Error => "error",
            AppStatus::NotRendered => "not-rendered",
            AppStatus::NotApplied => "not-applied",
        }
    }
}

impl std::fmt::Display for AppStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct DuplicateRow {
    pub object: String,
    pub apps: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster: Option<String>,
}

/// Drift between Git (desired) and the cluster (live), both directions.
#[derive(Debug, Clone, Serialize)]
pub struct Drift {
    /// `GitOps covers 30% of requested GPUs; 9 unmanaged workloads hold 212 GPUs; 2 missing; 1 changed`
    pub summary: String,
    /// GPUs requested by workloads that match Git / all GPUs requested; `null` when nothing is
    /// requested.
    pub coverage: Option<f64>,
    pub coverage_by_tenant: Vec<TenantCoverage>,
    /// Live GPU workloads with no match in Git.
    pub unmanaged: Vec<DriftRow>,
    /// In Git, not live.
    pub missing: Vec<DriftRow>,
    /// In both, with a different GPU shape.
    pub changed: Vec<DriftRow>,
    pub in_sync: Vec<DriftRow>,
    /// Drift hidden by an accepted-drift rule that has not expired.
    pub accepted: Vec<DriftRow>,
    /// Live workloads whose tracking names an app that failed to render: neither unmanaged nor in
    /// sync, since what Git says of them could not be read (`app` names the failed app).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown: Vec<DriftRow>,
    /// Accepted-drift rules past their date: they hide nothing.
    pub expired: Vec<ExpiredRule>,
    /// The ref the desired state was rendered at.
    pub desired_at: String,
    /// True when some app failed to render: `missing` and `unmanaged` may then be overstated.
    pub desired_incomplete: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct TenantCoverage {
    pub tenant: String,
    pub gpus_requested: u64,
    pub gpus_managed: u64,
    pub coverage: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct DriftRow {
    pub namespace: String,
    pub api_group: String,
    pub kind: String,
    pub name: String,
    pub tenant: String,
    /// GPUs requested live (0 when missing).
    pub gpus: u64,
    /// GPUs declared in Git (0 when unmanaged).
    pub gpus_git: u64,
    /// The app that renders it from Git.
    pub app: Option<String>,
    /// The GitOps app the live object names in its tracking metadata (Argo CD, Flux).
    pub tracked_by: Option<String>,
    pub git: Option<Vec<Role>>,
    pub live: Option<Vec<Role>>,
    pub git_shape: Option<String>,
    pub live_shape: Option<String>,
    /// Replicas are owned by an autoscaler: only GPUs per replica and nodes are compared.
    pub autoscaled: bool,
    /// Unified diff of the GPU-relevant spec (changed only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// What differs from Git to live, role by role (`decode replicas 8 → 4, -32 GPUs`; changed
    /// only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub change: Option<String>,
    /// When the live object was created (RFC 3339), and its age in whole days at the report's
    /// date: how long an unmanaged workload has run outside Git.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub age_days: Option<i64>,
    /// For accepted rows: the category it would have had, and the rule.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accepted_as: Option<DriftCategory>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<AcceptedBy>,
    /// The manifest in Git (file:line).
    pub git_source: Option<String>,
    /// More than one app in this cluster applies the object: Git's side is ambiguous, and the
    /// row compares with the first of these apps only.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ambiguous: Vec<String>,
}

impl DriftRow {
    pub fn workload_id(&self) -> WorkloadId {
        WorkloadId::new(&self.namespace, &self.api_group, &self.kind, &self.name)
    }

    /// How drift names a workload in text: the [`WorkloadId`]'s display.
    pub fn id(&self) -> String {
        self.workload_id().to_string()
    }
}

/// Where drift puts a workload. Accepted drift keeps the category it would have had
/// ([`DriftRow::accepted_as`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DriftCategory {
    /// Live, with no match in Git.
    Unmanaged,
    /// In Git, not live.
    Missing,
    /// In both, with a different GPU shape.
    Changed,
    InSync,
}

impl DriftCategory {
    pub fn as_str(self) -> &'static str {
        match self {
            DriftCategory::Unmanaged => "unmanaged",
            DriftCategory::Missing => "missing",
            DriftCategory::Changed => "changed",
            DriftCategory::InSync => "in_sync",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct AcceptedBy {
    pub reason: String,
    pub owner: Option<String>,
    pub expires: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ExpiredRule {
    pub rule: String,
    pub reason: String,
    pub owner: Option<String>,
    pub expired: String,
    /// Workloads it would hide if it were still valid.
    pub would_match: Vec<String>,
}

/// The report of `gpuledger check`: what a change to the GitOps repository does to the GPUs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CheckReport {
    /// [`SCHEMA`]; a relayed report (`github comment --from-report`) naming another is refused.
    #[serde(deserialize_with = "this_schema")]
    pub schema: SchemaName,
    pub sources: Vec<String>,
    pub check: Check,
    /// The scope, the commits compared and when the live state was read.
    pub provenance: Provenance,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Check {
    /// `+32 GPUs (448 → 480); chat +32; 1 added, 0 removed, 1 reshaped; introduces no drift`
    pub summary: String,
    pub base_at: String,
    pub head_at: String,
    /// Declared GPUs of what rendered on each side.
    pub gpus_base: u64,
    pub gpus_head: u64,
    /// `null` when an app failed to render on either side ([`Check::delta_unknown`] says which).
    pub gpu_delta: Option<i64>,
    /// Why the delta is unknown: the apps that failed to render, where, and the error.
    pub delta_unknown: Option<String>,
    /// Per tenant and product line, largest change first.
    pub tenants: Vec<DeltaRow>,
    pub product_lines: Vec<DeltaRow>,
    pub added: Vec<ChangeRow>,
    pub removed: Vec<ChangeRow>,
    pub reshaped: Vec<ChangeRow>,
    /// Drift against the live state that the change resolves and introduces (with live state).
    /// `null` when drift could not be computed ([`Check::drift_unknown`] says why).
    pub drift_resolved: Option<Vec<String>>,
    pub drift_introduced: Option<Vec<String>>,
    /// Why drift is unknown: no live state given, or the live state is incomplete.
    pub drift_unknown: Option<String>,
    pub live: bool,
    /// The GitOps coverage of the live GPUs once the head is merged (`null` without live state).
    pub coverage_head: Option<f64>,
    /// Whether the head's desired GPUs fit the fleet; `null` without live state.
    pub capacity: Option<CapacityFit>,
    /// Why capacity (and the tenant limits) could not be checked.
    pub capacity_unknown: Option<String>,
    pub tenant_limits: Vec<TenantLimit>,
    pub render_errors: Vec<String>,
    /// Intent lints on the workloads the change adds or reshapes.
    #[serde(default)]
    pub intent: Vec<IntentFinding>,
    /// Whether the batch work the change adds fits the cluster's batch pool by staggering (a
    /// plan's verdict), when the change adds batch work with a runtime and a live state is given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stagger: Option<String>,
    /// Where the cluster would name another tenant than Git's manifests (the head's; tenants are
    /// attributed from the repository alone).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tenancy: Vec<ClusterOnlyTenant>,
    pub gates: Vec<Gate>,
    /// The marked facts of the head's markdown documents against the live state (`docs --check`
    /// for the change), when there is a live state and a document marks a fact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub docs: Option<crate::docs::DocsStatus>,
    /// Allocated → busy → valuable of the tenants the change moves (and their workloads), when
    /// cost inputs were given with a live state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valuable: Option<crate::report::cost::Cost>,
    /// The configuration the check applied, and what the change does to it.
    pub config: ConfigReview,
}

/// A check applies the base's `.gpuledger.yaml` (or the explicit `--config`), never the head's:
/// a change cannot relax its own gates. The head's changes to it are listed for a reviewer.
/// An intent lint on one workload the change adds or reshapes.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IntentFinding {
    pub namespace: String,
    pub kind: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster: Option<String>,
    /// The manifest (file:line) to fix.
    pub source: Option<String>,
    /// `missing`, `unparsable`, `infeasible`, `contradiction`, `incomplete`.
    pub rule: String,
    pub message: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ConfigReview {
    /// The file the gates and accepted drift came from (`origin/main:.gpuledger.yaml`,
    /// `--config ci.yaml`), or `defaults`.
    pub applied: String,
    /// Whether `--config` named it (then the head's file is not compared).
    pub explicit: bool,
    /// How the head's configuration differs from the applied one, one sentence each.
    pub changes: Vec<String>,
    /// The head's configuration does not parse (it would break every run once merged).
    pub head_error: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DeltaRow {
    pub name: String,
    pub gpus_base: u64,
    pub gpus_head: u64,
    pub delta: i64,
    /// Who to call, for a tenant the change moves (`tenancy.contacts`, else the live
    /// namespaces' contact keys); empty when unknown or unmoved.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub contacts: Vec<String>,
    /// With a Prometheus, a tenant's change in GPUs per week over the trend window (`gpuledger
    /// trend`); absent without one or when the trend is unknown (a note says why).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpus_per_week: Option<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ChangeRow {
    /// The key the change was matched on; the fields below are its serialised form (read back,
    /// it is rebuilt from them by [`ChangeRow::rekey`]).
    #[serde(skip)]
    pub workload_id: WorkloadId,
    pub namespace: String,
    pub kind: String,
    pub name: String,
    pub tenant: String,
    pub app: String,
    /// The cluster it is applied to, when the repository drives named clusters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster: Option<String>,
    pub gpus_base: u64,
    pub gpus_head: u64,
    pub shape_base: Option<String>,
    pub shape_head: Option<String>,
    /// What the change does to the shape, role by role (reshaped only):
    /// `decode replicas 8 → 10, +16 GPUs`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub change: Option<String>,
    pub source: Option<String>,
    /// The files under its app that the change touched, besides `source` (reshaped only): the
    /// overlay or values file a reviewer should read, when the manifest itself did not change.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub touched: Vec<String>,
}

impl ChangeRow {
    /// Rebuilds the key of a row read back from JSON, where it is not written: its display, the
    /// only use a read-back report has for it, leaves out the API group.
    pub fn rekey(&mut self) {
        self.workload_id = WorkloadId::new(&self.namespace, "", &self.kind, &self.name);
    }

    /// The same name [`DriftRow::id`] gives: the [`WorkloadId`]'s display.
    pub fn id(&self) -> String {
        self.workload_id.to_string()
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CapacityFit {
    pub placeable: u64,
    /// The head's desired GPUs plus what unmanaged live workloads hold (they keep running).
    pub projected: u64,
    pub unmanaged_live: u64,
    pub fits: bool,
    /// The same for the base: what the fleet needed before the change.
    pub base_projected: u64,
    pub base_fits: bool,
}

impl CapacityFit {
    /// `already over by 48 before this change; this change frees 16` — the fit before and after.
    pub fn verdict(&self) -> String {
        let change = match self.projected.cmp(&self.base_projected) {
            std::cmp::Ordering::Greater => {
                format!(
                    "this change needs {} more",
                    self.projected - self.base_projected
                )
            }
            std::cmp::Ordering::Less => {
                format!("this change frees {}", self.base_projected - self.projected)
            }
            std::cmp::Ordering::Equal => "this change needs no more".to_string(),
        };
        let fit = |need: u64| {
            if need <= self.placeable {
                format!("fits with {} spare", self.placeable - need)
            } else {
                format!("over by {}", need - self.placeable)
            }
        };
        format!(
            "{} of {} placeable GPUs needed (before this change {}, {}); {change}",
            self.projected,
            self.placeable,
            self.base_projected,
            if self.base_fits {
                fit(self.base_projected)
            } else {
                format!("already {}", fit(self.base_projected))
            }
        )
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TenantLimit {
    pub tenant: String,
    pub limit: u64,
    pub gpus_head: u64,
    pub over: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Gate {
    /// `capacity`, `drift-introduced`, `render-error`
    pub name: String,
    /// True when it failed, or could not be evaluated (then `unknown` is true too).
    pub failed: bool,
    /// The gate could not be evaluated: a missing or incomplete input. It fails closed.
    pub unknown: bool,
    pub why: String,
}

/// `&'static str` under another name: serde's derive takes a field written `&'static str` as
/// borrowed from the input (so the report could only be read from a `'static` buffer), even with
/// `deserialize_with`; through this alias it is read as [`this_schema`] says.
pub type SchemaName = &'static str;

/// Reads a report's `schema` back: only [`SCHEMA`], so an older or foreign document is refused by
/// name rather than half understood.
fn this_schema<'de, D: Deserializer<'de>>(d: D) -> Result<&'static str, D::Error> {
    let s = String::deserialize(d)?;
    if s == SCHEMA {
        Ok(SCHEMA)
    } else {
        Err(serde::de::Error::custom(format!(
            "schema {s:?} is not {SCHEMA:?}"
        )))
    }
}

/// Serving headroom: per serving workload, the capacity a load test measured at its latency
/// objective against the request rate production asks of it.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Headroom {
    /// Where the production rate came from (Prometheus URL, window and step); `null` without one.
    pub production_source: Option<String>,
    /// Why production is unknown for every workload (no Prometheus, or it failed).
    pub production_unknown: Option<String>,
    /// vLLM and Dynamo count a request when it finishes: the rate is a completion rate, which under
    /// overload understates what was asked for.
    pub rate_kind: String,
    /// The rules the verdicts used: a run's error limit and the near-capacity share (0–1).
    pub error_limit: f64,
    pub near_capacity: f64,
    /// By verdict (over first), then namespace, kind and name.
    pub workloads: Vec<HeadroomRow>,
}

/// One serving workload's headroom. `id()` is the key other sections join on.
#[derive(Debug, Clone, Default, Serialize)]
pub struct HeadroomRow {
    pub namespace: String,
    pub api_group: String,
    pub kind: String,
    pub name: String,
    pub tenant: String,
    /// `ttft_p95<=500ms,itl_p95<=50ms`, as the intent declares it.
    pub objective: Option<String>,
    /// `gpuledger.io/load-test`, as written, and the format it was read as.
    pub load_test: Option<String>,
    pub load_test_format: Option<String>,
    /// Requests per second at the objective; `null` when unknown (`unknown.tested_rps` says why).
    pub tested_rps: Option<f64>,
    /// The run it came from (`rate 8 req/s`).
    pub tested_run: Option<String>,
    /// Set when the capacity was scaled by live replicas (`headroom.scale: per-replica`): how.
    pub scaled: Option<String>,
    /// What the load test does not record, or gpuledger does not read, so it could not be checked
    /// against the live workload (`GPU type`, `serving settings`).
    pub unverified: Vec<String>,
    /// The model the live pods serve (from the metrics' model label), when known.
    pub live_model: Option<String>,
    /// `vllm` or `dynamo-frontend`: which counter gave the rate.
    pub production_metric: Option<String>,
    pub production_p95_rps: Option<f64>,
    pub production_peak_rps: Option<f64>,
    /// 1 − production p95 / tested capacity; negative when over.
    pub headroom: Option<f64>,
    pub verdict: HeadroomVerdict,
    /// Why a figure is `null`, keyed by its field (`tested_rps`, `production_p95_rps`, `headroom`).
    pub unknown: BTreeMap<String, String>,
    /// Each bound of the objective against production's latency over the window.
    pub latency: Vec<LatencyNow>,
    pub context: ServingContext,
}

impl HeadroomRow {
    pub fn id(&self) -> WorkloadId {
        WorkloadId::new(&self.namespace, &self.api_group, &self.kind, &self.name)
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum HeadroomVerdict {
    /// Production p95 above the tested capacity.
    Over,
    /// Headroom below `near_capacity`, or the peak above the capacity.
    NearCapacity,
    Fits,
    /// Capacity or production unknown: `unknown` says why.
    #[default]
    Unknown,
}

impl std::fmt::Display for HeadroomVerdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            HeadroomVerdict::Over => "over",
            HeadroomVerdict::NearCapacity => "near capacity",
            HeadroomVerdict::Fits => "fits",
            HeadroomVerdict::Unknown => "unknown",
        })
    }
}

/// One bound of the latency objective against production over the window.
#[derive(Debug, Clone, Serialize)]
pub struct LatencyNow {
    /// `ttft_p95<=500ms`
    pub bound: String,
    /// From the workload's latency histograms; `null` when it has none.
    pub now_ms: Option<f64>,
    pub met: Option<bool>,
}

/// Context, never capacity: what production looked like over the window.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ServingContext {
    /// Share of the window with requests waiting in vLLM's queue (0–1).
    pub queue_share: Option<f64>,
    /// p95 over the window of the fullest pod's KV-cache use (0–1).
    pub kv_cache_p95: Option<f64>,
    pub preemptions_per_min: Option<f64>,
    pub ttft_p95_ms: Option<f64>,
    pub itl_p95_ms: Option<f64>,
}
