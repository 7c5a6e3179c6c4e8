//! Lean typed views of the admission objects a fleet can hold by the thousand: Kueue `Workload`s
//! (one per job, admitted or waiting) and KAI Scheduler `PodGroup`s (one per job KAI schedules).
//!
//! Field names follow Kueue `apis/kueue/v1beta2/workload_types.go` (v1beta1 is the same but for
//! the priority class, `spec.priorityClassName` there, `spec.priorityClassRef.name` in v1beta2) and
//! KAI `pkg/apis/scheduling/v2alpha2/podgroup_types.go`. Queues, cohorts and flavors are few and
//! stay JSON (`Body::WithStatus`): their quantities are read by `crate::queues`, which names the
//! object and field of one that does not parse instead of refusing the whole read.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::Deserialize;

use super::exact::exact;
use super::gpus::Gpus;
use super::text::Text;
use super::types::{PodSpec, or_default};

/// `spec` and `status` of a Kueue Workload.
#[derive(Debug, Clone, Default)]
pub struct KueueWorkloadBody {
    pub spec: KueueWorkloadSpec,
    pub status: KueueWorkloadStatus,
}

impl KueueWorkloadBody {
    pub fn condition(&self, t: &str) -> Option<&QueueCondition> {
        self.status.conditions.iter().find(|c| c.type_ == t)
    }

    pub fn is_true(&self, t: &str) -> bool {
        self.condition(t).is_some_and(|c| c.status == "True")
    }

    /// Active, not finished, and holding no quota: waiting for its queue (kueue
    /// `pkg/workload/workload.go`: `IsActive`, `IsFinished`, `HasQuotaReservation`).
    pub fn waits_for_quota(&self) -> bool {
        self.spec.active != Some(false)
            && !self.is_true("Finished")
            && !self.is_true("QuotaReserved")
    }
}

/// The annotation KAI's pod-grouper puts on each pod: the PodGroup it belongs to
/// (`pkg/podgrouper/pod_controller.go`).
pub const POD_GROUP_ANNOTATION: &str = "pod-group-name";

/// The reasons KAI gives when a queue, not a node, holds a pod group (`podgroup_types.go`;
/// checked before any node is tried: `pkg/scheduler/actions/common/allocate.go`);
/// `PodSchedulingErrors` is the nodes.
const QUEUE_REASONS: [&str; 3] = ["OverLimit", "NonPreemptibleOverQuota", "QueueDoesNotExist"];

impl PodGroupBody {
    /// Its queue holds it: the reason KAI gave (with its message).
    pub fn held_by_queue(&self) -> Option<String> {
        self.status
            .scheduling_conditions
            .iter()
            .flat_map(|c| &c.reasons)
            .find(|r| QUEUE_REASONS.contains(&r.reason.as_str()))
            .map(|r| {
                if r.message.is_empty() {
                    r.reason.clone()
                } else {
                    format!("{}: {}", r.reason, r.message)
                }
            })
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct KueueWorkloadSpec {
    /// The LocalQueue (in the Workload's namespace) it is submitted to; shared across the read.
    pub queue_name: Option<Text>,
    #[serde(deserialize_with = "exact")]
    pub pod_sets: Vec<PodSet>,
    /// The resolved priority (`spec.priority`); `None` reads as 0, as Kueue's
    /// `pkg/util/priority` does for a workload without one.
    pub priority: Option<i64>,
    /// v1beta1's priority class name.
    pub priority_class_name: Option<Text>,
    /// v1beta2's priority class reference.
    pub priority_class_ref: Option<PriorityClassRef>,
    /// `false` deactivates the Workload: it is neither queued nor admitted (default `true`).
    pub active: Option<bool>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct PriorityClassRef {
    pub name: Text,
}

/// One pod set: `count` pods of `template` (at least `minCount` with partial admission). Only the
/// template's spec is read (its GPUs and where its pods may run); its labels are the job's.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct PodSet {
    pub name: Text,
    /// Required by the API; a Workload written without it is read as one pod.
    pub count: Option<u64>,
    pub min_count: Option<u64>,
    pub template: PodSetTemplate,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct PodSetTemplate {
    #[serde(deserialize_with = "or_default")]
    pub spec: PodSpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct KueueWorkloadStatus {
    #[serde(deserialize_with = "conditions")]
    pub conditions: Vec<QueueCondition>,
    pub admission: Option<Admission>,
}

/// The `metav1.Condition`s of a Workload that say where it stands: `QuotaReserved` (with, when
/// false, why it waits), `Finished`, `Evicted`, `Preempted`. Type, status and reason are shared
/// across the read (a few words each); the rest of a condition is not kept.
#[derive(Debug, Clone, Default)]
pub struct QueueCondition {
    pub type_: Text,
    pub status: Text,
    pub reason: Text,
    /// Kept for `QuotaReserved=False` only: why the Workload waits.
    pub message: Box<str>,
}

/// The condition types [`QueueCondition`] keeps.
const KEPT_CONDITIONS: [&str; 4] = ["QuotaReserved", "Finished", "Evicted", "Preempted"];

/// Reads `status.conditions` keeping [`KEPT_CONDITIONS`] only, their message only when it says
/// why a Workload waits: a Workload carries several conditions, each with a message of its own,
/// and a fleet has them by the hundred thousand. Fields are borrowed from the input while read.
fn conditions<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<QueueCondition>, D::Error> {
    #[derive(Deserialize, Default)]
    #[serde(default)]
    struct Raw<'a> {
        #[serde(rename = "type", borrow)]
        type_: Cow<'a, str>,
        #[serde(borrow)]
        status: Cow<'a, str>,
        #[serde(borrow)]
        reason: Cow<'a, str>,
        #[serde(borrow)]
        message: Cow<'a, str>,
    }
    let raw: Option<Vec<Raw<'de>>> = Option::deserialize(d)?;
    let mut out: Vec<QueueCondition> = raw
        .into_iter()
        .flatten()
        .filter(|c| KEPT_CONDITIONS.contains(&c.type_.as_ref()))
        .map(|c| {
            let waits = c.type_ == "QuotaReserved" && c.status != "True";
            QueueCondition {
                type_: Text::shared(&c.type_),
                status: Text::shared(&c.status),
                reason: Text::shared(&c.reason),
                message: if waits {
                    c.message.into()
                } else {
                    Box::default()
                },
            }
        })
        .collect();
    out.shrink_to_fit();
    Ok(out)
}

/// `status.admission`: the ClusterQueue that reserved quota, and each pod set's GPU flavor.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Admission {
    pub cluster_queue: Text,
    #[serde(deserialize_with = "exact")]
    pub pod_set_assignments: Vec<PodSetAssignment>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct PodSetAssignment {
    pub name: Text,
    /// The flavor of its GPUs (`flavors["nvidia.com/gpu"]`); the flavors of its other resources
    /// are not kept.
    #[serde(rename = "flavors", deserialize_with = "gpu_flavor")]
    pub gpu_flavor: Option<Text>,
    /// The pods admitted (fewer than the pod set's count under partial admission).
    pub count: Option<u64>,
}

/// The GPU entry of a pod set assignment's `flavors` (resource name → flavor name).
fn gpu_flavor<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Text>, D::Error> {
    let flavors: Option<BTreeMap<Cow<'de, str>, Cow<'de, str>>> = Option::deserialize(d)?;
    Ok(flavors
        .unwrap_or_default()
        .get(super::gpus::GPU)
        .map(|f| Text::shared(f)))
}

/// KAI Scheduler's GPU-sharing annotations (`pkg/common/constants/constants.go`): a fraction of a
/// device (`0 < v ≤ 1`), or device memory in MiB, on `gpu-fraction-num-devices` devices (default
/// 1). The scheduler ignores a fraction outside (0, 1] (`pkg/scheduler/api/pod_info/pod_info.go`).
pub fn kai_share(annotations: &super::types::LabelMap) -> Gpus {
    let devices = annotations
        .get("gpu-fraction-num-devices")
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|n| *n > 0)
        .unwrap_or(1);
    let fraction = annotations
        .get("gpu-fraction")
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|v| *v > 0.0 && *v <= 1.0);
    let memory = annotations
        .get("gpu-memory")
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|v| *v > 0);
    match (fraction, memory) {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        (Some(f), _) => Gpus {
            fraction: devices,
            fraction_centi: ((f * 100.0).round() as u64).saturating_mul(devices),
            ..Gpus::default()
        },
        (None, Some(_)) => Gpus {
            fraction: devices,
            fraction_memory: devices,
            ..Gpus::default()
        },
        (None, None) => Gpus::default(),
    }
}

/// `spec` and `status` of a KAI PodGroup.
#[derive(Debug, Clone, Default)]
pub struct PodGroupBody {
    pub spec: PodGroupSpec,
    pub status: PodGroupStatus,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct PodGroupSpec {
    /// The KAI Queue it is scheduled from.
    pub queue: String,
    pub min_member: Option<u64>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct PodGroupStatus {
    #[serde(deserialize_with = "exact")]
    pub scheduling_conditions: Vec<SchedulingCondition>,
}

/// One of KAI's scheduling conditions (`UnschedulableOnNodePool`), with the reasons the scheduler
/// gave (`podgroup_types.go` `SchedulingCondition`, `UnschedulableExplanation`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct SchedulingCondition {
    #[serde(rename = "type")]
    pub type_: String,
    pub status: String,
    pub reason: String,
    pub message: String,
    #[serde(deserialize_with = "exact")]
    pub reasons: Vec<UnschedulableReason>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct UnschedulableReason {
    /// `OverLimit`, `NonPreemptibleOverQuota`, `QueueDoesNotExist` (the queue);
    /// `PodSchedulingErrors` (the nodes).
    pub reason: String,
    pub message: String,
}
