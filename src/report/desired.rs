//! The desired state: what Git says should run — the GPU workloads each app renders, per tenant and
//! cluster, and what became of every app. `gpuledger render` writes it; drift and the check read it.

use serde::{Deserialize, Serialize};

use super::envelope::Kind;
use super::inventory::WorkloadRow;
use crate::workload::WorkloadId;

/// The report of `gpuledger render`: what Git says should run.
#[derive(Debug, Clone, Serialize)]
pub struct RenderReport {
    pub schema: &'static str,
    /// Always [`Kind::Render`].
    pub kind: Kind,
    pub sources: Vec<String>,
    pub desired: Desired,
}

#[derive(Debug, Clone, Serialize)]
pub struct Desired {
    /// What was rendered: `working tree` or `ref <name>`.
    pub at: String,
    /// Σ declared GPUs of the desired workloads; `null` when an app did not render (then what it
    /// declares is unknown: [`Desired::unknown`] says which and why).
    pub gpus_declared: Option<u64>,
    /// Σ declared GPUs of the apps that rendered: all of it when `gpus_declared` is known, a floor
    /// when it is not.
    pub gpus_declared_rendered: u64,
    /// Why a figure is `null`, by its field (`gpus_declared`).
    pub unknown: std::collections::BTreeMap<String, String>,
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
    /// Where the cluster's Namespace labels name another tenant than Git's manifests alone would
    /// (with a live state, the cluster's labels decide; offline, Git's).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tenancy: Vec<ClusterOnlyTenant>,
    /// Where each namespace of the desired workloads got its tenant: the cluster's Namespace
    /// labels when the live state holds the namespace, else Git's Namespace object, else the
    /// tenancy rules (a workload's own labels still come first).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub tenant_sources: std::collections::BTreeMap<String, TenantSource>,
    /// Workload objects Git declares without GPUs: a live GPU workload that matches one has
    /// changed shape, it is not unmanaged.
    #[serde(skip)]
    pub without_gpus: Vec<WithoutGpus>,
    /// The remote source hosts this ref's apps name (charts, registries, kustomize bases): what a
    /// check's head may fetch from.
    #[serde(skip)]
    pub source_hosts: std::collections::BTreeSet<String>,
    /// The rendered objects a route is made of and traced through (Services, Ingresses, Gateways,
    /// HTTPRoutes, Namespaces, and the objects with pod templates a Service selects): what a
    /// check's routing blast radius compares; with the Dynamo graphs, whose workers' main
    /// containers the headroom at the head's shape reads (model, serving flags).
    #[serde(skip)]
    pub routing: Vec<crate::k8s::object::Object>,
    /// The rendered admission objects (Kueue ClusterQueues, Cohorts, LocalQueues,
    /// ResourceFlavors; KAI Queues): what a check's quota change compares.
    #[serde(skip)]
    pub queues: Vec<crate::k8s::object::Object>,
}

/// Where a namespace's labels (and so its tenant, unless a workload names its own) come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TenantSource {
    /// The live cluster's Namespace object.
    Cluster,
    /// The repository's Namespace object (no live state, or the cluster does not have it yet).
    Git,
    /// Neither: the tenancy rules' fallback (the namespace's name by default).
    Rules,
}

/// A namespace where the cluster knows more than the repository: Git alone (offline) would name
/// tenant `git`, the cluster's Namespace labels name `cluster` — the tenant its workloads count for
/// whenever the live state is read.
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
    /// The GPU models its pod templates may run on (node selector or required node affinity on
    /// `nvidia.com/gpu.product`); empty when they name none (any model).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub gpu_models: Vec<String>,
    /// What it asks of an admission queue (the queue it names, its pod sets): what a check
    /// judges against the queue it joins.
    #[serde(skip)]
    pub ask: Option<crate::queues::Ask>,
}

#[derive(Debug, Clone, Serialize)]
pub struct DesiredTenantRow {
    pub name: String,
    /// `null` when a workload's GPUs cannot be counted (a DRA claim: its `dra.uncounted` says why).
    pub gpus_declared: Option<u64>,
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
    /// `null` (with `error` saying why) unless the app rendered.
    pub objects: Option<u64>,
    pub gpu_workloads: Option<u64>,
    pub gpus_declared: Option<u64>,
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
    /// What was fetched for it from outside the repository, and what each request resolved to
    /// (`chart llm ^1.2 → 1.2.3 @ sha256:…`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fetched: Vec<FetchedRow>,
    /// The app object's hash: whether an app that did not render changed between two refs.
    #[serde(skip)]
    pub fingerprint: u64,
    /// Whether syncing it deletes what it stops declaring (`None`: no app applies it).
    #[serde(skip)]
    pub prune: Option<bool>,
    /// Not rendered because its source is this other repository: said once per repository.
    #[serde(skip)]
    pub other_repository: Option<String>,
}

impl AppRow {
    /// It did not render (it failed, or it was not rendered on purpose): what it declares is
    /// unknown. An app object no root applies is not deployed, and declares nothing.
    pub fn unknown(&self) -> bool {
        matches!(self.status, AppStatus::Error | AppStatus::NotRendered)
    }
}

/// One thing fetched for an app.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FetchedRow {
    /// `chart`, `dependency redis`, `kustomize resource`.
    pub what: String,
    /// Where from: a URL, `oci://…`.
    pub source: String,
    /// What the app asked for (a version, a range, a tag); empty for the latest.
    pub wanted: String,
    /// What it resolved to.
    pub version: String,
    /// `sha256:…` of the chart archive or OCI manifest, or the git commit.
    pub digest: String,
}

/// One cluster the repository drives, and what Git declares for it.
#[derive(Debug, Clone, Serialize)]
pub struct ClusterRow {
    pub name: String,
    /// `null` when one of its apps did not render.
    pub gpus_declared: Option<u64>,
    /// Σ declared GPUs of its apps that rendered.
    pub gpus_declared_rendered: u64,
    pub workloads: u64,
    pub apps: u64,
    /// Its apps that failed to render: its figures are then a floor, the rest unknown.
    pub failed_apps: u64,
    /// Its apps not rendered on purpose (a remote source offline, a plugin): unknown as well.
    pub not_rendered_apps: u64,
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
