//! The admission model: plain values, no objects. What `super::kueue` and `super::kai` read, and
//! what the analyses read.

use std::collections::{BTreeMap, BTreeSet};

use super::selector::NamespaceSelector;
use crate::k8s::types::{LabelMap, Text};
use crate::util::date::Timestamp;

/// The resource whose quota gpuledger reads: whole GPUs.
pub const GPU: &str = crate::k8s::gpus::GPU;

/// The label a Kueue-managed job (or pod) names its LocalQueue with
/// (kueue `pkg/controller/constants/constants.go`: `QueueLabel`).
pub const QUEUE_LABEL: &str = "kueue.x-k8s.io/queue-name";
/// The LocalQueue Kueue submits a job without a queue name to, where it exists in the job's
/// namespace (the `LocalQueueDefaulting` feature).
pub const DEFAULT_LOCAL_QUEUE: &str = "default";
/// The label a KAI-scheduled pod (or its owner) names its queue with.
pub const KAI_QUEUE_LABEL: &str = "kai.scheduler/queue";
/// Kueue's partial admission: the fewest pods of a Job's parallelism it may be admitted with.
pub const MIN_PARALLELISM: &str = "kueue.x-k8s.io/job-min-parallelism";
/// The WorkloadPriorityClass a job names.
pub const PRIORITY_CLASS_LABEL: &str = "kueue.x-k8s.io/priority-class";

/// A figure of an admission object that could not be read: that object's figures are unknown.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Problem {
    /// `ClusterQueue cq-a`, `LocalQueue team-a/default`.
    pub object: String,
    /// `spec.resourceGroups[0].flavors[1].resources[0].nominalQuota`.
    pub field: String,
    pub why: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.field.is_empty() {
            write!(f, "{}: {}", self.object, self.why)
        } else {
            write!(f, "{} {}: {}", self.object, self.field, self.why)
        }
    }
}

/// Everything the input says about admission.
#[derive(Debug, Clone, Default)]
pub struct Admission {
    /// By name.
    pub cluster_queues: Vec<ClusterQueue>,
    pub cohorts: Vec<Cohort>,
    /// By namespace, then name.
    pub local_queues: Vec<LocalQueue>,
    pub flavors: Vec<ResourceFlavor>,
    /// In the order read.
    pub workloads: Vec<QueueWorkload>,
    pub kai_queues: Vec<KaiQueue>,
    pub pod_groups: Vec<PodGroup>,
    /// Problems of objects that are not themselves a queue, as read (a LocalQueue naming no
    /// ClusterQueue).
    pub problems: Vec<Problem>,
    /// What one object names that the input does not hold (a LocalQueue's ClusterQueue), found
    /// when the whole admission is checked ([`Admission::validate`]).
    pub reference_problems: Vec<Problem>,
    /// Each Namespace's labels, for the ClusterQueues' namespace selectors; `None` when the input
    /// holds no Namespace (whom a selector with terms selects is then unknown).
    pub namespaces: Option<BTreeMap<String, LabelMap>>,
}

impl Admission {
    /// Whether ClusterQueue `cq`'s namespace selector selects `namespace`: `Err` says why that is
    /// unknown (the namespace's labels were not read).
    pub fn selects(&self, cq: &ClusterQueue, namespace: &str) -> Result<bool, String> {
        match &cq.namespace_selector {
            NamespaceSelector::Nothing => Ok(false),
            NamespaceSelector::Everything => Ok(true),
            NamespaceSelector::Match(_) => match &self.namespaces {
                None => Err(format!(
                    "no Namespace was read: whether ClusterQueue {}'s namespaceSelector selects {namespace} is unknown",
                    cq.name
                )),
                Some(n) => match n.get(namespace) {
                    Some(labels) => Ok(cq.namespace_selector.selects(namespace, labels)),
                    None => Err(format!(
                        "Namespace {namespace} was not read: whether ClusterQueue {}'s namespaceSelector selects it is unknown",
                        cq.name
                    )),
                },
            },
        }
    }

    /// Kueue is present: a ClusterQueue, LocalQueue, Cohort, ResourceFlavor or Workload was read.
    pub fn kueue(&self) -> bool {
        !(self.cluster_queues.is_empty()
            && self.local_queues.is_empty()
            && self.cohorts.is_empty()
            && self.flavors.is_empty()
            && self.workloads.is_empty())
    }

    /// KAI Scheduler is present: a Queue or PodGroup was read.
    pub fn kai(&self) -> bool {
        !(self.kai_queues.is_empty() && self.pod_groups.is_empty())
    }

    pub fn is_empty(&self) -> bool {
        !self.kueue() && !self.kai()
    }

    pub fn cluster_queue(&self, name: &str) -> Option<&ClusterQueue> {
        self.cluster_queues
            .binary_search_by(|q| q.name.as_str().cmp(name))
            .ok()
            .and_then(|i| self.cluster_queues.get(i))
    }

    pub fn cohort(&self, name: &str) -> Option<&Cohort> {
        self.cohorts
            .binary_search_by(|c| c.name.as_str().cmp(name))
            .ok()
            .and_then(|i| self.cohorts.get(i))
    }

    pub fn flavor(&self, name: &str) -> Option<&ResourceFlavor> {
        self.flavors
            .binary_search_by(|f| f.name.as_str().cmp(name))
            .ok()
            .and_then(|i| self.flavors.get(i))
    }

    pub fn local_queue(&self, namespace: &str, name: &str) -> Option<&LocalQueue> {
        self.local_queues
            .binary_search_by(|q| (q.namespace.as_str(), q.name.as_str()).cmp(&(namespace, name)))
            .ok()
            .and_then(|i| self.local_queues.get(i))
    }

    pub fn kai_queue(&self, name: &str) -> Option<&KaiQueue> {
        self.kai_queues
            .binary_search_by(|q| q.name.as_str().cmp(name))
            .ok()
            .and_then(|i| self.kai_queues.get(i))
    }

    /// The ClusterQueue a job in `namespace` naming LocalQueue `local` (or none: the namespace's
    /// `default` LocalQueue) is submitted to.
    pub fn cluster_queue_of(&self, namespace: &str, local: Option<&str>) -> Option<&str> {
        let local = local.unwrap_or(DEFAULT_LOCAL_QUEUE);
        self.local_queue(namespace, local)
            .map(|l| l.cluster_queue.as_str())
    }

    /// The namespaces that submit to ClusterQueue `name` through a LocalQueue (one its selector
    /// leaves out submits nothing to it; one whose labels were not read is kept).
    pub fn namespaces_of(&self, name: &str) -> BTreeSet<&str> {
        let cq = self.cluster_queue(name);
        self.local_queues
            .iter()
            .filter(|l| l.cluster_queue == name)
            .filter(|l| cq.is_none_or(|q| self.selects(q, &l.namespace).unwrap_or(true)))
            .map(|l| l.namespace.as_str())
            .collect()
    }
}

/// A quota of one resource in one flavor (`ResourceQuota` in Kueue's types).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Quota {
    pub nominal: u64,
    /// `None`: no limit (up to what the cohort has unused).
    pub borrowing_limit: Option<u64>,
    /// `None`: all of its unused nominal quota may be lent.
    pub lending_limit: Option<u64>,
}

/// The GPU quota of one flavor of a queue or cohort.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlavorQuota {
    pub flavor: String,
    pub quota: Quota,
}

/// `spec.queueingStrategy` (default `BestEffortFIFO`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Strategy {
    /// A workload that does not fit does not block those behind it.
    #[default]
    BestEffortFifo,
    /// The head blocks the queue until it is admitted.
    StrictFifo,
}

/// `preemption.withinClusterQueue` (default `Never`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum WithinQueue {
    #[default]
    Never,
    LowerPriority,
    LowerOrNewerEqualPriority,
}

/// `preemption.reclaimWithinCohort` (default `Never`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Reclaim {
    #[default]
    Never,
    LowerPriority,
    Any,
}

/// `preemption.borrowWithinCohort.policy` (default `Never`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum BorrowWithinCohort {
    #[default]
    Never,
    /// Preempt lower-priority workloads of other queues while borrowing, those below
    /// `maxPriorityThreshold` when it is set.
    LowerPriority { max_priority_threshold: Option<i64> },
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Preemption {
    pub within_cluster_queue: WithinQueue,
    pub reclaim_within_cohort: Reclaim,
    pub borrow_within_cohort: BorrowWithinCohort,
}

/// `flavorFungibility`: whether the search stops at a flavor where the workload would borrow
/// (or preempt), or tries the next flavor first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fungibility {
    /// `Borrow` / `MayStopSearch` (default): stop at a flavor that fits by borrowing.
    pub stop_when_borrowing: bool,
    /// `Preempt` / `MayStopSearch`: stop at a flavor that fits by preempting; `TryNextFlavor`
    /// (the default) tries the next flavor first.
    pub stop_when_preempting: bool,
}

impl Default for Fungibility {
    fn default() -> Fungibility {
        Fungibility {
            stop_when_borrowing: true,
            stop_when_preempting: false,
        }
    }
}

/// One ClusterQueue: its GPU quota per flavor, how it queues, preempts and borrows, and what its
/// status says it holds.
#[derive(Debug, Clone, Default)]
pub struct ClusterQueue {
    pub name: String,
    /// `v1beta1`, `v1beta2`.
    pub api_version: String,
    pub cohort: Option<String>,
    /// The namespaces whose workloads it admits.
    pub namespace_selector: NamespaceSelector,
    pub strategy: Strategy,
    pub preemption: Preemption,
    pub fungibility: Fungibility,
    /// GPU quota of each flavor, in the queue's order (resource groups, then flavors).
    pub flavors: Vec<FlavorQuota>,
    /// `status.flavorsUsage`: GPUs of admitted workloads per flavor (`total`, `borrowed`);
    /// `None` when the status says nothing (a queue from Git, or not yet reconciled).
    pub usage: Option<BTreeMap<String, Usage>>,
    /// `status.flavorsReservation`: GPUs of workloads holding quota (admitted or waiting for
    /// admission checks), what Kueue's scheduler counts; `None` when not reported.
    pub reserved: Option<BTreeMap<String, Usage>>,
    /// `status.pendingWorkloads`.
    pub pending_workloads: Option<u64>,
    /// `spec.stopPolicy` other than `None`: the queue admits nothing new.
    pub stopped: bool,
    /// Why Kueue holds the queue inactive (a flavor it names does not exist: `FlavorNotFound`):
    /// it admits nothing until that is mended.
    pub inactive: Option<String>,
    /// What could not be read: the queue's figures are unknown.
    pub problems: Vec<Problem>,
    /// What it (or a Workload admitted to it) names that the input does not hold: its figures are
    /// unknown too ([`Admission::validate`]).
    pub reference_problems: Vec<Problem>,
}

impl ClusterQueue {
    /// Everything that leaves its figures unknown.
    pub fn all_problems(&self) -> impl Iterator<Item = &Problem> {
        self.problems.iter().chain(&self.reference_problems)
    }

    pub fn known(&self) -> bool {
        self.all_problems().next().is_none()
    }

    pub fn quota(&self, flavor: &str) -> Option<&Quota> {
        self.flavors
            .iter()
            .find(|f| f.flavor == flavor)
            .map(|f| &f.quota)
    }

    /// The object as the report names it.
    pub fn object(&self) -> String {
        format!("ClusterQueue {}", self.name)
    }
}

/// GPUs a queue's admitted workloads use in one flavor.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub total: u64,
    /// Above the queue's nominal quota: lent by the cohort, preemptible where the lender
    /// reclaims.
    pub borrowed: u64,
}

/// A Kueue Cohort (v1beta2): a node of the cohort tree, with quota of its own.
#[derive(Debug, Clone, Default)]
pub struct Cohort {
    pub name: String,
    pub parent: Option<String>,
    pub flavors: Vec<FlavorQuota>,
    pub problems: Vec<Problem>,
    /// A cycle of parents ([`Admission::validate`]).
    pub reference_problems: Vec<Problem>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LocalQueue {
    pub namespace: String,
    pub name: String,
    pub cluster_queue: String,
}

#[derive(Debug, Clone, Default)]
pub struct ResourceFlavor {
    pub name: String,
    pub node_labels: BTreeMap<String, String>,
}

impl ResourceFlavor {
    /// The GPU model its nodes carry (GFD's `nvidia.com/gpu.product`), when it names one.
    pub fn model(&self) -> Option<&str> {
        self.node_labels
            .get(crate::k8s::gpus::GPU_PRODUCT_LABEL)
            .map(String::as_str)
    }
}

/// One pod set of a Kueue Workload: `count` pods of `gpus_per_pod` whole GPUs each.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PodSetGpus {
    pub name: Text,
    pub count: u64,
    /// With partial admission, the fewest pods it may be admitted with.
    pub min_count: Option<u64>,
    pub gpus_per_pod: u64,
    /// Its pods' node selector: which flavors' node labels it allows.
    pub node_selector: LabelMap,
    /// The GPU models its node selector or required node affinity names; `None`: any.
    pub models: Option<BTreeSet<String>>,
}

impl PodSetGpus {
    pub fn gpus(&self) -> u64 {
        self.count.saturating_mul(self.gpus_per_pod)
    }
}

/// Where a Kueue Workload stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WorkloadState {
    /// `spec.active: false`: neither queued nor admitted.
    Inactive,
    /// `Finished=True`: history.
    Finished,
    /// `QuotaReserved=True`: it holds quota (admitted, or waiting only for admission checks).
    Reserved,
    /// Waiting for quota: the `QuotaReserved=False` reason and message, when there is one.
    Queued { reason: String, message: String },
}

/// A Kueue Workload: a job's claim on quota.
#[derive(Debug, Clone)]
pub struct QueueWorkload {
    /// Index of the object in the input.
    pub object: usize,
    pub namespace: Text,
    pub name: String,
    /// `spec.queueName`.
    pub local_queue: Option<Text>,
    pub priority: i64,
    pub priority_class: Option<Text>,
    pub created: Option<Timestamp>,
    pub pod_sets: Vec<PodSetGpus>,
    pub state: WorkloadState,
    /// `status.admission`: the ClusterQueue and each pod set's GPU flavor and admitted pods.
    pub admission: Option<Admitted>,
    /// `Evicted=True` (its reason), `Preempted=True` (its reason).
    pub evicted: Option<String>,
    pub preempted: Option<String>,
    /// Owned by a Pod (Kueue's pod integration): its pods, gated, count themselves.
    pub owned_by_pod: bool,
    /// The job it is the Workload of (`namespace/Kind/name`, its controller owner).
    pub owner: Option<String>,
}

impl QueueWorkload {
    /// Whole GPUs of all pod sets at full count.
    pub fn gpus(&self) -> u64 {
        self.pod_sets
            .iter()
            .map(PodSetGpus::gpus)
            .fold(0, u64::saturating_add)
    }

    pub fn is_queued(&self) -> bool {
        matches!(self.state, WorkloadState::Queued { .. })
    }

    /// Kueue says it can never fit its queue as it is (`NoFit` in every flavor).
    pub fn never_fits(&self) -> bool {
        match &self.state {
            WorkloadState::Queued { reason, message } => never_fits(reason, message),
            _ => false,
        }
    }

    pub fn id(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }
}

/// Whether a `QuotaReserved=False` reason or message says the workload can never fit as the
/// queues are: `ExceedsMaxQuota` (more than the queue can ever reach in every flavor) or
/// `NoMatchingFlavor` (no flavor its pods may use), the reasons Kueue writes by default
/// (`UnadmittedWorkloadsObservability`, `apis/kueue/v1beta2/workload_types.go`); with that gate
/// off the reason is `Pending` and only the message tells (`pkg/scheduler/flavorassigner/
/// flavorassigner.go`: "> maximum capacity", "unavailable in ClusterQueue", "doesn't match node
/// affinity").
pub fn never_fits(reason: &str, message: &str) -> bool {
    matches!(reason, "ExceedsMaxQuota" | "NoMatchingFlavor")
        || (reason == "Pending"
            && (message.contains("> maximum capacity")
                || message.contains("unavailable in ClusterQueue")
                || message.contains("doesn't match node affinity")))
}

/// Where an admitted Workload's GPUs went.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Admitted {
    pub cluster_queue: Text,
    /// Per pod set: the flavor of its GPUs (when it has any) and the pods admitted.
    pub pod_sets: Vec<AdmittedPodSet>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AdmittedPodSet {
    pub name: Text,
    pub flavor: Option<Text>,
    pub count: Option<u64>,
}

/// A workload to admit: what a change adds or reshapes, at the head's shape — the queue it names
/// and its pod sets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ask {
    /// `namespace/Kind/name`.
    pub id: String,
    pub namespace: String,
    /// The LocalQueue it names (`kueue.x-k8s.io/queue-name`); `None`: the namespace's `default`,
    /// where one exists.
    pub local_queue: Option<String>,
    /// The KAI queue it (or its pod template) names (`kai.scheduler/queue`).
    pub kai_queue: Option<String>,
    /// The WorkloadPriorityClass it names (`kueue.x-k8s.io/priority-class`).
    pub priority_class: Option<String>,
    pub pod_sets: Vec<PodSetGpus>,
}

impl Ask {
    pub fn gpus(&self) -> u64 {
        self.pod_sets
            .iter()
            .map(PodSetGpus::gpus)
            .fold(0, u64::saturating_add)
    }

    /// It names a queue (without the live state, the namespace's default cannot be known).
    pub fn names_queue(&self) -> bool {
        self.local_queue.is_some() || self.kai_queue.is_some()
    }

    /// What a root object asks of its queue, with its pod sets from `roles` (`replicas ×
    /// nodes_per_replica` pods of `gpus_per_replica / nodes_per_replica` GPUs each, as Kueue
    /// makes a pod set of each role); the first pod template's node selector and GPU models decide
    /// its flavor, and a Job's `kueue.x-k8s.io/job-min-parallelism` its partial admission.
    pub fn of(o: &crate::k8s::object::Object, id: String, roles: &[crate::workload::Role]) -> Ask {
        let templates = o.pod_templates();
        let label = |k: &str| {
            o.meta
                .labels
                .get(k)
                .or_else(|| templates.iter().find_map(|(l, _)| l.get(k)))
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        let spec = templates.first().map(|(_, s)| *s);
        let node_selector: BTreeMap<String, String> = spec
            .map(|s| {
                s.node_selector
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect()
            })
            .unwrap_or_default();
        let models = spec.and_then(|s| s.gpu_models());
        let min = o
            .meta
            .annotations
            .get(MIN_PARALLELISM)
            .and_then(|v| v.trim().parse::<u64>().ok());
        let pod_sets = roles
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let per_node = r.nodes_per_replica.max(1);
                PodSetGpus {
                    name: r.name.as_str().into(),
                    count: r.replicas.saturating_mul(per_node),
                    min_count: min.filter(|_| i == 0),
                    gpus_per_pod: r.gpus_per_replica.div_ceil(per_node),
                    node_selector: node_selector.clone().into(),
                    models: models.clone(),
                }
            })
            .collect();
        Ask {
            id,
            namespace: o.namespace().to_string(),
            // Kueue reads only the label (the annotation was removed: kueue #7271).
            local_queue: o
                .meta
                .labels
                .get(QUEUE_LABEL)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty()),
            kai_queue: label(KAI_QUEUE_LABEL),
            priority_class: label(PRIORITY_CLASS_LABEL),
            pod_sets,
        }
    }
}

/// A KAI Scheduler Queue: its GPU quota and limit, and what its status says it holds.
#[derive(Debug, Clone, Default)]
pub struct KaiQueue {
    pub name: String,
    pub parent: Option<String>,
    /// `spec.resources.gpu.quota` (GPUs, fractions allowed); `None` when unset.
    pub quota: Option<f64>,
    /// `spec.resources.gpu.limit`; `None` for −1 (unlimited) or unset.
    pub limit: Option<f64>,
    pub over_quota_weight: Option<f64>,
    /// `status.allocated` GPUs (a parent's includes its children's).
    pub allocated: Option<f64>,
    pub problems: Vec<Problem>,
    /// A parent not read, a cycle of parents ([`Admission::validate`]).
    pub reference_problems: Vec<Problem>,
}

impl KaiQueue {
    /// Everything that leaves its figures unknown.
    pub fn all_problems(&self) -> impl Iterator<Item = &Problem> {
        self.problems.iter().chain(&self.reference_problems)
    }

    pub fn object(&self) -> String {
        format!("Queue {}", self.name)
    }
}

/// A KAI PodGroup: a job's pods as KAI schedules them.
#[derive(Debug, Clone, Default)]
pub struct PodGroup {
    pub object: usize,
    pub namespace: String,
    pub name: String,
    pub queue: String,
    /// KAI reports it unschedulable because of its queue (its quota or limit): the reason.
    pub held_by_queue: Option<String>,
}
