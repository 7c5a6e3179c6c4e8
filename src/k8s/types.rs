//! Lean typed views of the Kubernetes objects gpuledger reads.
//!
//! Each struct carries only the fields an analysis uses; serde skips everything else without building
//! it, so a 100,000-pod snapshot costs a fraction of its size in memory. Field names follow the API
//! (camelCase on the wire). Every field has a default, because snapshots and manifests omit defaults
//! freely; where the API's default is not the type's default (replicas: 1), the field is an `Option`
//! and the consumer applies the API default. Parsing makes plain values; the reader then cuts each
//! object to the API's limits and shares its strings (`super::admit`, which names every field of
//! [`LabelMap`] or [`Text`] here).

use std::collections::BTreeMap;

use serde::Deserialize;

use super::gpus::{GpuCount, GpuList};

pub use super::affinity::{
    Affinity, NodeAffinity, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm,
};
pub use super::text::{LabelMap, Labels, Text};

/// A value, or its default when written as `null` (as the API server's own decoder takes it).
pub(super) fn or_default<'de, D: serde::Deserializer<'de>, T: Deserialize<'de> + Default>(
    d: D,
) -> Result<T, D::Error> {
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

pub(super) use super::exact::exact;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct OwnerRef {
    /// Shared across the read, as labels are: every pod of a ReplicaSet names the same two.
    pub api_version: Text,
    pub kind: Text,
    /// The owner's name and uid, shared too: every pod of a ReplicaSet repeats them.
    #[serde(deserialize_with = "or_default")]
    pub name: Text,
    pub uid: Text,
    pub controller: Option<bool>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ObjectMeta {
    #[serde(deserialize_with = "or_default")]
    pub name: String,
    /// Objects created with a generated name (Argo CD and Helm hook Jobs) have only this in Git.
    /// The reader names such an object after it and then drops it: an object read keeps `None`.
    pub generate_name: Option<Box<str>>,
    /// Shared across the read: a fleet has few namespaces and many objects in each.
    pub namespace: Option<Text>,
    pub uid: Option<Box<str>>,
    #[serde(deserialize_with = "or_default")]
    pub labels: LabelMap,
    #[serde(deserialize_with = "or_default")]
    pub annotations: LabelMap,
    #[serde(deserialize_with = "exact")]
    pub owner_references: Vec<OwnerRef>,
    /// When the object was created (RFC 3339), as the API server wrote it; `None` in Git.
    pub creation_timestamp: Option<Box<str>>,
    /// `metadata.continue` of a list page (ListMeta shares the `metadata` key with ObjectMeta).
    #[serde(rename = "continue")]
    pub list_continue: Option<Box<str>>,
}

// ---------------------------------------------------------------------------------------------
// Pods and pod templates

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Resources {
    pub requests: GpuList,
    pub limits: GpuList,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Container {
    /// Shared across the read, as its flags are.
    pub name: Text,
    pub resources: Resources,
    /// `Always` on an init container marks a restartable sidecar.
    pub restart_policy: Option<Text>,
    /// The serving engine's flags (`--max-num-seqs 256`) live here: serving headroom compares them
    /// with what a load test recorded. Shared: every pod of a workload repeats them.
    #[serde(deserialize_with = "exact")]
    pub command: Vec<Text>,
    #[serde(deserialize_with = "exact")]
    pub args: Vec<Text>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct PodSpec {
    /// Shared across the read: a node runs many pods.
    pub node_name: Option<Text>,
    #[serde(deserialize_with = "exact")]
    pub containers: Vec<Container>,
    #[serde(deserialize_with = "exact")]
    pub init_containers: Vec<Container>,
    pub overhead: GpuList,
    #[serde(deserialize_with = "or_default")]
    pub node_selector: LabelMap,
    /// The DRA claims of the pod: each container only picks among them, and each is allocated
    /// whether a container names it or not.
    #[serde(deserialize_with = "exact")]
    pub resource_claims: Vec<PodResourceClaim>,
    /// Where the pod may run: only the required node affinity is read (which GPU model a
    /// workload names, [`crate::analysis::pins`]).
    pub affinity: Option<Affinity>,
    /// Held by Kueue's scheduling gate (`spec.schedulingGates` naming
    /// [`ADMISSION_GATE`]): the pod waits for its queue's quota, not for a node.
    #[serde(rename = "schedulingGates", deserialize_with = "admission_gated")]
    pub admission_gated: bool,
}

impl PodSpec {
    /// The GPU models this pod may run on; `None` when it names none (any model).
    pub fn gpu_models(&self) -> Option<std::collections::BTreeSet<String>> {
        super::affinity::gpu_models(&self.node_selector, self.affinity.as_ref())
    }
}

/// The scheduling gate Kueue puts on the pods it manages until their workload is admitted
/// (kueue `pkg/controller/jobs/pod/constants`: `SchedulingGateName`).
pub const ADMISSION_GATE: &str = "kueue.x-k8s.io/admission";

/// Whether `spec.schedulingGates` names Kueue's admission gate; the list is not kept (a pod
/// carries one byte for it, not a list).
fn admission_gated<'de, D: serde::Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    #[derive(Deserialize)]
    struct Gate {
        #[serde(default)]
        name: String,
    }
    let gates: Option<Vec<Gate>> = Option::deserialize(d)?;
    Ok(gates
        .unwrap_or_default()
        .iter()
        .any(|g| g.name == ADMISSION_GATE))
}

/// `spec.resourceClaims[]` of a pod: a shared ResourceClaim by name, or a ResourceClaimTemplate
/// that gives the pod a claim of its own (`core/v1/types.go`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct PodResourceClaim {
    pub name: String,
    pub resource_claim_name: Option<String>,
    pub resource_claim_template_name: Option<String>,
}

/// `status.resourceClaimStatuses[]`: the claim made for a template claim; no claim name means
/// none was needed.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct PodClaimStatus {
    pub name: String,
    pub resource_claim_name: Option<String>,
}

/// `status.extendedResourceClaimStatus`: the claim through which DRA serves the pod's extended
/// resources (its `nvidia.com/gpu` limit on a node without a device plugin).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ExtendedResourceClaimStatus {
    pub resource_claim_name: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct TemplateMeta {
    #[serde(deserialize_with = "or_default")]
    pub labels: LabelMap,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct PodTemplate {
    /// `metadata: null` is written by kustomize for a template whose metadata was emptied (the
    /// API server reads it as none): read as empty, as every struct field below that may be null.
    #[serde(deserialize_with = "or_default")]
    pub metadata: TemplateMeta,
    #[serde(deserialize_with = "or_default")]
    pub spec: PodSpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct PodStatus {
    /// Shared across the read (`Running`, `Pending`, ...).
    pub phase: Option<Text>,
    #[serde(rename = "resourceClaimStatuses", deserialize_with = "exact")]
    pub resource_claim_statuses: Vec<PodClaimStatus>,
    #[serde(rename = "extendedResourceClaimStatus")]
    pub extended_resource_claim_status: Option<Box<ExtendedResourceClaimStatus>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Condition {
    #[serde(rename = "type")]
    pub type_: String,
    pub status: String,
}

// ---------------------------------------------------------------------------------------------
// Nodes

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Taint {
    pub key: String,
    pub effect: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct NodeSpec {
    pub unschedulable: bool,
    #[serde(deserialize_with = "exact")]
    pub taints: Vec<Taint>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct NodeStatus {
    pub capacity: GpuList,
    pub allocatable: GpuList,
    #[serde(deserialize_with = "exact")]
    pub conditions: Vec<Condition>,
}

// ---------------------------------------------------------------------------------------------
// Workload controllers

/// Deployment, ReplicaSet and StatefulSet share the fields gpuledger reads.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ReplicatedSpec {
    pub replicas: Option<u64>,
    #[serde(deserialize_with = "or_default")]
    pub template: PodTemplate,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct JobSpec {
    pub parallelism: Option<u64>,
    /// A suspended Job has no pods: Kueue keeps a job suspended until its queue admits it.
    pub suspend: Option<bool>,
    #[serde(deserialize_with = "or_default")]
    pub template: PodTemplate,
    /// Kills the Job after this long: a runtime above it is a contradiction ([`crate::intent`]).
    #[serde(rename = "activeDeadlineSeconds")]
    pub active_deadline_seconds: Option<u64>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct JobStatus {
    #[serde(deserialize_with = "exact")]
    pub conditions: Vec<Condition>,
    /// When the Job finished successfully (RFC 3339); set only for a Job that succeeded: deadline
    /// attainment ([`crate::analysis::deadlines`]).
    pub completion_time: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct JobTemplate {
    #[serde(deserialize_with = "or_default")]
    pub spec: JobSpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct CronJobSpec {
    #[serde(deserialize_with = "or_default")]
    pub job_template: JobTemplate,
    pub suspend: bool,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct LeaderWorkerTemplate {
    pub size: Option<u64>,
    pub leader_template: Option<PodTemplate>,
    pub worker_template: PodTemplate,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct LwsSpec {
    pub replicas: Option<u64>,
    pub leader_worker_template: LeaderWorkerTemplate,
}

// ---------------------------------------------------------------------------------------------
// NVIDIA Dynamo

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Multinode {
    pub node_count: Option<u64>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct DynamoResourceItem {
    pub gpu: Option<GpuCount>,
    pub gpu_type: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct DynamoResources {
    pub requests: DynamoResourceItem,
    pub limits: DynamoResourceItem,
}

/// A container in a Dynamo spec: the role heuristic needs its command line.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct DynamoContainer {
    pub name: String,
    #[serde(deserialize_with = "exact")]
    pub command: Vec<String>,
    #[serde(deserialize_with = "exact")]
    pub args: Vec<String>,
    pub resources: Resources,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ExtraPodSpec {
    pub main_container: Option<DynamoContainer>,
    /// `extraPodSpec` embeds a PodSpec inline (ai-dynamo/dynamo
    /// `deploy/operator/api/dynamo/common/common.go`, `ExtraPodSpec`): its DRA claims.
    #[serde(deserialize_with = "exact")]
    pub resource_claims: Vec<PodResourceClaim>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Enabled {
    pub enabled: bool,
}

/// One entry of `spec.services` in `nvidia.com/v1alpha1`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct DynamoService {
    pub component_type: Option<String>,
    pub sub_component_type: Option<String>,
    pub replicas: Option<u64>,
    pub multinode: Option<Multinode>,
    pub resources: DynamoResources,
    pub extra_pod_spec: ExtraPodSpec,
    pub scaling_adapter: Option<Enabled>,
}

impl DynamoService {
    pub fn scaled_by_adapter(&self) -> bool {
        self.scaling_adapter.as_ref().is_some_and(|a| a.enabled)
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct DynamoPodTemplateSpec {
    #[serde(deserialize_with = "exact")]
    pub containers: Vec<DynamoContainer>,
    #[serde(rename = "initContainers", deserialize_with = "exact")]
    pub init_containers: Vec<Container>,
    #[serde(rename = "resourceClaims", deserialize_with = "exact")]
    pub resource_claims: Vec<PodResourceClaim>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct DynamoPodTemplate {
    pub spec: DynamoPodTemplateSpec,
}

/// One entry of `spec.components` in `nvidia.com/v1beta1`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct DynamoComponent {
    pub name: String,
    #[serde(rename = "type")]
    pub type_: Option<String>,
    pub replicas: Option<u64>,
    pub multinode: Option<Multinode>,
    pub pod_template: DynamoPodTemplate,
    pub scaling_adapter: Option<Enabled>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct DynamoGraphSpec {
    pub services: Option<BTreeMap<String, DynamoService>>,
    pub components: Option<Vec<DynamoComponent>>,
}

// ---------------------------------------------------------------------------------------------
// KServe

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct WorkerSpec {
    pub pipeline_parallel_size: Option<u64>,
    pub tensor_parallel_size: Option<u64>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct PredictorModel {
    pub resources: Resources,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Predictor {
    pub min_replicas: Option<u64>,
    pub model: Option<PredictorModel>,
    // The framework forms of upstream's PredictorSpec (kserve/kserve
    // pkg/apis/serving/v1beta1/predictor.go): each embeds a container, so its resources sit
    // right under the framework key, like `model`'s. Boxed: they are rarely set and keep `Body` small.
    pub tensorflow: Option<Box<PredictorModel>>,
    pub pytorch: Option<Box<PredictorModel>>,
    pub sklearn: Option<Box<PredictorModel>>,
    pub xgboost: Option<Box<PredictorModel>>,
    pub onnx: Option<Box<PredictorModel>>,
    pub triton: Option<Box<PredictorModel>>,
    pub huggingface: Option<Box<PredictorModel>>,
    pub lightgbm: Option<Box<PredictorModel>>,
    pub paddle: Option<Box<PredictorModel>>,
    pub pmml: Option<Box<PredictorModel>>,
    #[serde(deserialize_with = "exact")]
    pub containers: Vec<Container>,
    /// The predictor embeds a PodSpec inline (kserve `pkg/apis/serving/v1beta1/predictor.go`,
    /// `PredictorSpec`): its DRA claims.
    #[serde(deserialize_with = "exact")]
    pub resource_claims: Vec<PodResourceClaim>,
    pub worker_spec: Option<WorkerSpec>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct InferenceServiceSpec {
    pub predictor: Predictor,
}

// ---------------------------------------------------------------------------------------------
// Exposure: Ingress, Service, Gateway API

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ServiceBackend {
    pub name: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct IngressBackend {
    pub service: Option<ServiceBackend>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct IngressPath {
    pub path: Option<String>,
    pub backend: IngressBackend,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct IngressHttp {
    #[serde(deserialize_with = "exact")]
    pub paths: Vec<IngressPath>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct IngressRule {
    pub host: Option<String>,
    pub http: Option<IngressHttp>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct IngressSpec {
    pub ingress_class_name: Option<String>,
    #[serde(deserialize_with = "exact")]
    pub rules: Vec<IngressRule>,
    pub default_backend: Option<IngressBackend>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ServiceSpec {
    #[serde(rename = "type")]
    pub type_: Option<String>,
    #[serde(deserialize_with = "or_default")]
    pub selector: LabelMap,
    pub load_balancer_class: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct RouteRef {
    pub group: Option<String>,
    pub kind: Option<String>,
    pub namespace: Option<String>,
    pub name: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct PathMatch {
    #[serde(rename = "type")]
    pub type_: Option<String>,
    pub value: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct HttpRouteMatch {
    pub path: Option<PathMatch>,
    pub method: Option<String>,
    pub headers: Vec<serde::de::IgnoredAny>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct HttpRouteRule {
    #[serde(deserialize_with = "exact")]
    pub matches: Vec<HttpRouteMatch>,
    #[serde(deserialize_with = "exact")]
    pub backend_refs: Vec<RouteRef>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct HttpRouteSpec {
    #[serde(deserialize_with = "exact")]
    pub parent_refs: Vec<RouteRef>,
    #[serde(deserialize_with = "exact")]
    pub hostnames: Vec<String>,
    #[serde(deserialize_with = "exact")]
    pub rules: Vec<HttpRouteRule>,
}

// ---------------------------------------------------------------------------------------------
// Autoscaling

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ScaleTargetRef {
    pub api_version: String,
    pub kind: String,
    pub name: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct HpaSpec {
    pub scale_target_ref: ScaleTargetRef,
}
