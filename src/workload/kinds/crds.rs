//! The GPU shapes of the custom kinds common on GPU fleets, read from their specs as JSON.
//!
//! These kinds keep their spec as JSON ([`Body::Raw`](crate::k8s::object::Body)) rather than a
//! typed body: each is read here field by field, leniently, the way its upstream CRD defines it
//! (the file each follows is cited beside it). A field of the wrong type counts as absent, so its
//! API default applies; a pod template that does not parse is skipped. Every product and sum is
//! checked ([`crate::util::sum`]).

use serde::Deserialize;
use serde_json::Value;

use crate::k8s::gpus::{GpuResource, Gpus};
use crate::k8s::types::{Container, PodSpec, PodTemplate, Resources};
use crate::util::sum::{self, TooLarge};

use super::super::pods::{PodGpus, PodRule, container_request, pod_request_parts};
use super::super::types::{GpuShape, Role};

/// `v[key]` as a non-negative integer.
pub(super) fn int(v: &Value, key: &str) -> Option<u64> {
    v.get(key).and_then(Value::as_u64)
}

/// `v[key]` as a boolean; YAML 1.1 spellings (`True`) arrive as strings.
fn flag(v: &Value, key: &str) -> bool {
    match v.get(key) {
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) => s.eq_ignore_ascii_case("true"),
        _ => false,
    }
}

/// A pod template (`metadata` + `spec`), or `None` when absent or unreadable.
pub(super) fn template(v: Option<&Value>) -> Option<PodTemplate> {
    v.and_then(|t| crate::k8s::read::pod_template(t).ok())
}

/// A bare pod spec (LLMInferenceService's `template` is a PodSpec, not a template).
fn pod_spec(v: Option<&Value>) -> Option<PodSpec> {
    v.and_then(|t| crate::k8s::read::pod_spec(t).ok())
}

fn template_gpus(t: Option<&PodTemplate>, rule: PodRule<'_, '_>) -> Result<PodGpus, TooLarge> {
    t.map_or(Ok(PodGpus::default()), |t| rule.gpus(&t.spec))
}

fn role(name: &str, replicas: u64, gpus: PodGpus, nodes: u64, autoscaled: bool) -> Role {
    Role {
        name: name.to_string(),
        replicas,
        gpus_per_replica: gpus.whole,
        nodes_per_replica: nodes,
        autoscaled,
        devices: gpus.detail,
    }
}

/// KubeRay's default `maxReplicas` (`math.MaxInt32`).
const RAY_MAX_REPLICAS: u64 = 2_147_483_647;

/// KubeRay `RayCluster` spec (also `RayService.spec.rayClusterConfig`, `RayJob.spec.rayClusterSpec`),
/// following ray-project/kuberay `ray-operator/apis/ray/v1/raycluster_types.go` and
/// `GetWorkerGroupDesiredReplicas` in `ray-operator/controllers/ray/utils/util.go`: the head is one
/// pod; a worker group runs `clamp(replicas, minReplicas ?? 0, maxReplicas ?? ∞)` replicas (`maxReplicas`
/// when `minReplicas > maxReplicas`, 0 when `suspend`), each `numOfHosts` pods (default 1). With
/// `enableInTreeAutoscaling` the Ray autoscaler owns the worker replicas.
pub(super) fn ray_cluster(spec: &Value, rule: PodRule<'_, '_>) -> Result<GpuShape, TooLarge> {
    let autoscaled = flag(spec, "enableInTreeAutoscaling");
    let mut roles = Vec::new();
    if let Some(head) = spec.get("headGroupSpec") {
        let t = template(head.get("template"));
        roles.push(role("head", 1, template_gpus(t.as_ref(), rule)?, 1, false));
    }
    for g in spec
        .get("workerGroupSpecs")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let t = template(g.get("template"));
        let pod = template_gpus(t.as_ref(), rule)?;
        let hosts = int(g, "numOfHosts").unwrap_or(1).max(1);
        let min = int(g, "minReplicas").unwrap_or(0);
        let max = int(g, "maxReplicas").unwrap_or(RAY_MAX_REPLICAS);
        let replicas = if flag(g, "suspend") {
            0
        } else if min > max {
            max
        } else {
            int(g, "replicas").unwrap_or(min).clamp(min, max)
        };
        let name = g
            .get("groupName")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .unwrap_or("worker");
        roles.push(role(name, replicas, pod.scaled(hosts)?, hosts, autoscaled));
    }
    Ok(GpuShape::new(roles))
}

/// Kubeflow training-operator v1 jobs (`PyTorchJob.spec.pytorchReplicaSpecs`, and the same
/// `<framework>ReplicaSpecs` map of TFJob, MPIJob, XGBoostJob, PaddleJob, JAXJob), following
/// kubeflow/training-operator `pkg/apis/kubeflow.org/v1/common_types.go` (`ReplicaSpec`: `replicas`,
/// default 1, and `template`). One role per replica type, named in lower case (`master`, `worker`).
pub(super) fn kubeflow_job(
    spec: &Value,
    rule: PodRule<'_, '_>,
) -> Result<Option<GpuShape>, TooLarge> {
    let Some(specs) = spec.as_object().and_then(|m| {
        m.iter()
            .find(|(k, _)| k.ends_with("ReplicaSpecs"))
            .and_then(|(_, v)| v.as_object())
    }) else {
        return Ok(None);
    };
    let mut roles = Vec::new();
    for (name, rs) in specs {
        let t = template(rs.get("template"));
        let name = name.to_ascii_lowercase();
        let r = role(
            &name,
            int(rs, "replicas").unwrap_or(1),
            template_gpus(t.as_ref(), rule)?,
            1,
            false,
        );
        roles.push(r);
    }
    Ok(Some(GpuShape::new(roles)))
}

/// Kubeflow Trainer `TrainJob` (`trainer.kubeflow.org/v1alpha1`), following kubeflow/trainer
/// `pkg/apis/trainer/v1alpha1/trainjob_types.go` and `trainingruntime_types.go`: the job is the
/// referenced runtime's JobSet template (`runtime`: the spec of the TrainingRuntime or
/// ClusterTrainingRuntime named by `spec.runtimeRef`, when it is in the input), whose `node` job
/// (`constants.Node` in `pkg/constants/constants.go`) runs `spec.trainer.numNodes` (else the
/// runtime's `mlPolicy.numNodes`) pods, each with `spec.trainer.resourcesPerNode` when set. Without
/// the runtime, both must be in the TrainJob; otherwise the shape is not in the input and `None`
/// says so.
pub(super) fn train_job(
    spec: &Value,
    runtime: Option<&Value>,
    rule: PodRule<'_, '_>,
) -> Result<Option<GpuShape>, TooLarge> {
    let trainer = spec.get("trainer").unwrap_or(&Value::Null);
    let num_nodes = int(trainer, "numNodes");
    let per_node = trainer
        .get("resourcesPerNode")
        .and_then(|r| Resources::deserialize(r).ok())
        .map(|r| container_request(&r).whole);
    let whole = |g: u64| PodGpus {
        whole: g,
        ..PodGpus::default()
    };
    let Some(runtime) = runtime else {
        return Ok(match (num_nodes, per_node) {
            (Some(n), Some(g)) => Some(GpuShape::new(vec![role(NODE, n, whole(g), 1, false)])),
            _ => None,
        });
    };
    let template = runtime.get("template").and_then(|t| t.get("spec"));
    let mut roles = match template {
        Some(t) => jobset_roles(t, rule)?,
        None => Vec::new(),
    };
    let policy_nodes = runtime.get("mlPolicy").and_then(|p| int(p, "numNodes"));
    if !roles.iter().any(|r| r.name == NODE) {
        roles.push(role(NODE, 1, PodGpus::default(), 1, false));
    }
    for r in roles.iter_mut().filter(|r| r.name == NODE) {
        if let Some(n) = num_nodes.or(policy_nodes) {
            r.replicas = n;
        }
        if let Some(g) = per_node {
            r.gpus_per_replica = g;
        }
    }
    Ok(Some(GpuShape::new(roles)))
}

/// The trainer's job and container in a Kubeflow Trainer runtime.
const NODE: &str = "node";

/// `JobSet` (`jobset.x-k8s.io/v1alpha2`), following kubernetes-sigs/jobset
/// `api/jobset/v1alpha2/jobset_types.go`: each `replicatedJobs[]` runs `replicas` (default 1) Jobs,
/// each `parallelism` (default 1) pods of its pod template. One role per replicated job, by name.
pub(super) fn jobset(spec: &Value, rule: PodRule<'_, '_>) -> Result<GpuShape, TooLarge> {
    Ok(GpuShape::new(jobset_roles(spec, rule)?))
}

/// The roles of a JobSet spec, those without GPUs included (a TrainJob overrides one of them).
fn jobset_roles(spec: &Value, rule: PodRule<'_, '_>) -> Result<Vec<Role>, TooLarge> {
    let mut roles = Vec::new();
    for rj in spec
        .get("replicatedJobs")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let job = rj.get("template").and_then(|t| t.get("spec"));
        let parallelism = job.and_then(|j| int(j, "parallelism")).unwrap_or(1);
        let t = template(job.and_then(|j| j.get("template")));
        let pods = sum::mul(int(rj, "replicas").unwrap_or(1), parallelism)?;
        let name = rj
            .get("name")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .unwrap_or("job");
        roles.push(role(name, pods, template_gpus(t.as_ref(), rule)?, 1, false));
    }
    Ok(roles)
}

/// KServe `LLMInferenceService` (`serving.kserve.io/v1alpha1`), following kserve/kserve
/// `pkg/apis/serving/v1alpha1/llm_inference_service_types.go`: `replicas` (default 1) of
/// `template` (a pod spec); with `worker`, each replica is a LeaderWorkerSet group of
/// `parallelism.GetSize()` pods (data / dataLocal when data-parallel, else pipeline, else 1): the
/// leader runs `template`, the others `worker`. `prefill` has the same fields and is its own role.
pub(super) fn llm_inference_service(
    spec: &Value,
    rule: PodRule<'_, '_>,
) -> Result<GpuShape, TooLarge> {
    let part = |name: &str, s: &Value| -> Result<Role, TooLarge> {
        let leader =
            pod_spec(s.get("template")).map_or(Ok(PodGpus::default()), |p| rule.gpus(&p))?;
        let worker = pod_spec(s.get("worker"));
        let (nodes, gpus) = match &worker {
            Some(w) => {
                let p = s.get("parallelism");
                let data = p.and_then(|p| int(p, "data")).filter(|n| *n > 0);
                let local = p.and_then(|p| int(p, "dataLocal")).filter(|n| *n > 0);
                let pipeline = p.and_then(|p| int(p, "pipeline")).filter(|n| *n > 0);
                let size = if data.is_some() || local.is_some() {
                    (data.unwrap_or(1) / local.unwrap_or(1)).max(1)
                } else {
                    pipeline.unwrap_or(1)
                };
                (size, leader.plus(&rule.gpus(w)?, size.saturating_sub(1))?)
            }
            None => (1, leader),
        };
        Ok(role(
            name,
            int(s, "replicas").unwrap_or(1),
            gpus,
            nodes,
            false,
        ))
    };
    let prefill = spec.get("prefill");
    let mut roles = vec![part(
        if prefill.is_some() { "decode" } else { "main" },
        spec,
    )?];
    if let Some(p) = prefill {
        roles.push(part("prefill", p)?);
    }
    Ok(GpuShape::new(roles))
}

/// The GPUs of one Spark pod: `gpu.quantity` of `gpu.name` when that is a GPU resource, with its
/// sidecars, init containers and pod template (`template.spec`, Spark ≥ 3.0) as the pod rule
/// reads them.
fn spark_pod(s: &Value, rule: PodRule<'_, '_>) -> Result<PodGpus, TooLarge> {
    let mut app = Vec::new();
    if let Some(g) = s.get("gpu")
        && let Some(r) = g
            .get("name")
            .and_then(Value::as_str)
            .and_then(GpuResource::classify)
    {
        let mut gpus = Gpus::default();
        gpus.set(&r, int(g, "quantity").unwrap_or(0));
        app.push(gpus);
    }
    let containers = |key: &str| -> Vec<Container> {
        s.get(key)
            .and_then(|v| Vec::<Container>::deserialize(v).ok())
            .unwrap_or_default()
    };
    app.extend(
        containers("sidecars")
            .iter()
            .map(|c| container_request(&c.resources)),
    );
    let template = template(s.get("template")).unwrap_or_default();
    let spec = &template.spec;
    let mut init = containers("initContainers");
    init.extend(spec.init_containers.iter().cloned());
    app.extend(
        spec.containers
            .iter()
            .map(|c| container_request(&c.resources)),
    );
    let request = pod_request_parts(app.into_iter(), &init, &spec.overhead)?;
    rule.with(request, spec)
}

/// Spark `SparkApplication` (`sparkoperator.k8s.io/v1beta2`), following kubeflow/spark-operator
/// `api/v1beta2/sparkapplication_types.go` (`SparkPodSpec.gpu` is `{name, quantity}`;
/// `ExecutorSpec.instances`) and `api/v1beta2/defaults.go` (instances default to 1 unless dynamic
/// allocation is on): one driver pod, and `executor.instances` executor pods (`sparkConf`'s
/// `spark.executor.instances` when the field is absent). With dynamic allocation (`dynamicAllocation.enabled`
/// or `spark.dynamicAllocation.enabled`), executors start at the larger of `instances` and
/// `initialExecutors` (else `minExecutors`, else 0) and are scaled by Spark: the role is autoscaled.
pub(super) fn spark_application(spec: &Value, rule: PodRule<'_, '_>) -> Result<GpuShape, TooLarge> {
    let conf = |key: &str| {
        spec.get("sparkConf")
            .and_then(|c| c.get(key))
            .and_then(Value::as_str)
    };
    let null = Value::Null;
    let driver = spec.get("driver").unwrap_or(&null);
    let executor = spec.get("executor").unwrap_or(&null);
    let dynamic = spec.get("dynamicAllocation");
    let autoscaled = dynamic.is_some_and(|d| flag(d, "enabled"))
        || conf("spark.dynamicAllocation.enabled").is_some_and(|v| v.eq_ignore_ascii_case("true"));
    let instances = int(executor, "instances")
        .or_else(|| conf("spark.executor.instances").and_then(|v| v.trim().parse().ok()));
    let executors = if autoscaled {
        let d = dynamic.unwrap_or(&null);
        let start = int(d, "initialExecutors").or_else(|| int(d, "minExecutors"));
        instances.unwrap_or(0).max(start.unwrap_or(0))
    } else {
        instances.unwrap_or(1)
    };
    Ok(GpuShape::new(vec![
        role("driver", 1, spark_pod(driver, rule)?, 1, false),
        role(
            "executor",
            executors,
            spark_pod(executor, rule)?,
            1,
            autoscaled,
        ),
    ]))
}
