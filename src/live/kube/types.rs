//! What a cluster read is about and what it hands over: the resources gpuledger lists, where the
//! cluster is and how patient to be with it, the progress shown while reading, and the read
//! itself (its objects, its origin without credentials, and the resources it could not read).

use std::path::PathBuf;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use crate::k8s::object::Object;
use crate::util::date::Timestamp;

/// A resource gpuledger lists: API group (`""` for core) and plural name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resource {
    pub group: &'static str,
    pub plural: &'static str,
    /// Core and built-in resources are always served; the others only where their CRD is installed.
    pub builtin: bool,
}

const fn r(group: &'static str, plural: &'static str, builtin: bool) -> Resource {
    Resource {
        group,
        plural,
        builtin,
    }
}

/// Everything the tool reads from a cluster, and nothing else. `deploy/rbac.yaml` grants exactly
/// `get`, `list` and `watch` (for `serve`) on these (a test keeps the two in step).
pub const RESOURCES: &[Resource] = &[
    r("", "nodes", true),
    r("", "namespaces", true),
    r("", "pods", true),
    r("", "services", true),
    r("apps", "replicasets", true),
    r("apps", "deployments", true),
    r("apps", "statefulsets", true),
    r("batch", "jobs", true),
    r("batch", "cronjobs", true),
    r("networking.k8s.io", "ingresses", true),
    r("networking.k8s.io", "ingressclasses", true),
    r("autoscaling", "horizontalpodautoscalers", true),
    r("nvidia.com", "dynamographdeployments", false),
    r("nvidia.com", "dynamocomponentdeployments", false),
    r("leaderworkerset.x-k8s.io", "leaderworkersets", false),
    r("serving.kserve.io", "inferenceservices", false),
    r("gateway.networking.k8s.io", "gateways", false),
    r("gateway.networking.k8s.io", "httproutes", false),
    r("argoproj.io", "applications", false),
    r("kueue.x-k8s.io", "clusterqueues", false),
    r("kueue.x-k8s.io", "localqueues", false),
    r("kueue.x-k8s.io", "workloads", false),
    r("kueue.x-k8s.io", "cohorts", false),
    r("kueue.x-k8s.io", "resourceflavors", false),
    // KAI Scheduler (NVIDIA's, with Dynamo and Grove): queues and the pod groups it schedules.
    r("scheduling.run.ai", "queues", false),
    r("scheduling.run.ai", "podgroups", false),
    // Dynamic Resource Allocation: GA (v1) since 1.34, beta (v1beta1/v1beta2) before and off by
    // default there, so not always served; discovery picks the preferred served version.
    r("resource.k8s.io", "resourceclaims", false),
    r("resource.k8s.io", "resourceclaimtemplates", false),
    r("resource.k8s.io", "resourceslices", false),
    r("resource.k8s.io", "deviceclasses", false),
];

impl Resource {
    pub fn label(&self) -> String {
        if self.group.is_empty() {
            self.plural.to_string()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }
}

/// Where the cluster is and how patient to be with it.
#[derive(Debug, Clone)]
pub struct ClusterSource {
    /// A kubeconfig file; otherwise `KUBECONFIG`, `~/.kube/config`, or the in-cluster config.
    pub kubeconfig: Option<PathBuf>,
    pub context: Option<String>,
    /// Per request.
    pub request_timeout: Duration,
    /// For the whole read.
    pub timeout: Duration,
    pub page_size: u32,
}

/// Progress of a read, shared with whoever shows it.
#[derive(Debug, Default)]
pub struct Progress {
    pub resources_total: AtomicU64,
    pub resources_done: AtomicU64,
    pub objects: AtomicU64,
}

/// A resource that could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Missing {
    /// `pods`, `dynamographdeployments.nvidia.com`
    pub resource: String,
    pub reason: String,
}

/// Where a read went: the kubeconfig context and the API server, without credentials.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// The context named or current in the kubeconfig; `in-cluster` inside a pod; `None` when the
    /// kubeconfig names none.
    pub context: Option<String>,
    /// `https://10.0.0.1:6443`: scheme, host, port and path, never user info or a query.
    pub server: String,
}

/// What was read from one cluster.
#[derive(Debug)]
pub struct ClusterRead {
    /// The context (or `in-cluster`) and the server.
    pub name: String,
    pub origin: Origin,
    /// When the read started (the clock of the machine that read it).
    pub read_at: Timestamp,
    pub objects: Vec<Object>,
    /// Resources that were not read (forbidden): the report is incomplete without them.
    pub missing: Vec<Missing>,
}
