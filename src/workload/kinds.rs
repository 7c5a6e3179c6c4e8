//! The declared GPU shape of each workload kind, read from its spec.
//!
//! | kind | shape |
//! |---|---|
//! | Deployment, StatefulSet, ReplicaSet | one role: `replicas × pod GPUs` |
//! | Job | `parallelism × pod GPUs`; CronJob: its job template |
//! | Pod | one role: `1 × pod GPUs` |
//! | LeaderWorkerSet | `replicas × (leader GPUs + (size − 1) × worker GPUs)` |
//! | DynamoGraphDeployment | one role per service/component: `replicas × nodeCount × GPUs per pod` |
//! | InferenceService | predictor `minReplicas × GPUs` (`model` or any framework key, plus `containers`); multi-node `pipelineParallelSize × tensorParallelSize` |
//! | LLMInferenceService | `replicas × (template GPUs + (size − 1) × worker GPUs)`, and the same for `prefill` |
//! | RayCluster, RayService, RayJob | `head 1×GPUs` + per worker group `replicas × numOfHosts × GPUs` |
//! | PyTorchJob (and the other Kubeflow v1 jobs) | per replica type `replicas × pod GPUs` |
//! | TrainJob | `numNodes × resourcesPerNode`, else from the runtime it references (`node` job) |
//! | JobSet | per replicated job `replicas × parallelism × pod GPUs` |
//! | SparkApplication | `driver 1×GPUs` + `executor instances×GPUs` (`gpu.quantity` plus pod-template GPUs) |
//! | ResourceClaim (standalone, shared) | one role `claim 1×devices`, counted once for all its consumers |
//! | any other kind | each pod template under `spec` requesting GPUs, else every GPU figure its spec names, a **guess** ([`guess`]) |
//!
//! A pod's GPUs are its device-plugin request plus the devices of its own DRA claims (its
//! ResourceClaimTemplates, looked up in the object's namespace; [`super::claims`]), so a shape
//! read with the input's DRA objects at hand ([`declared_shape_with`]) counts them; a shared
//! ResourceClaim is its own workload, never a pod's.
//!
//! API defaults apply where a field is absent (replicas 1, parallelism 1, size 1, nodeCount 1,
//! minReplicas 1). Dynamo role names follow the sub-component type, then the worker's command line
//! (`--disaggregation-mode decode`, `--is-prefill-worker`, legacy files have nothing else), then the
//! component type, then the service name. Every product and sum is checked ([`crate::util::sum`]):
//! a shape whose numbers do not fit in 64 bits is an [`Overflow`] naming the object.

use crate::k8s::gpus::{GpuResource, Gpus};
use crate::k8s::object::{Body, Kind, Object};
use crate::k8s::types::{
    DynamoComponent, DynamoContainer, DynamoService, LabelMap, LwsSpec, PodResourceClaim, PodSpec,
    PodTemplate, Predictor, Text,
};
use crate::util::sum::{self, Named, Overflow, TooLarge};

use super::claims::{Dra, is_shared_claim};
use super::labels;
use super::pods::{PodGpus, PodRule, container_request, pod_request_parts};
use super::types::{DeviceDetail, GpuShape, Role};

mod crds;
mod guess;

/// The custom kinds modelled from their specs as JSON (see [`crds`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Crd {
    RayCluster,
    RayService,
    RayJob,
    KubeflowJob,
    TrainJob,
    JobSet,
    LlmInferenceService,
    SparkApplication,
}

fn crd_of(obj: &Object) -> Option<Crd> {
    Some(match (obj.group(), obj.kind.as_str()) {
        ("ray.io", "RayCluster") => Crd::RayCluster,
        ("ray.io", "RayService") => Crd::RayService,
        ("ray.io", "RayJob") => Crd::RayJob,
        ("kubeflow.org", k) if k.ends_with("Job") => Crd::KubeflowJob,
        ("trainer.kubeflow.org", "TrainJob") => Crd::TrainJob,
        ("jobset.x-k8s.io", "JobSet") => Crd::JobSet,
        ("serving.kserve.io", "LLMInferenceService") => Crd::LlmInferenceService,
        ("sparkoperator.k8s.io", "SparkApplication") => Crd::SparkApplication,
        _ => return None,
    })
}

/// True when the object's shape, if it has one, is a guess: a kind gpuledger does not model,
/// whose GPUs were found by looking for pod templates in its spec.
pub fn shape_is_guess(obj: &Object) -> bool {
    obj.typed_kind() == Kind::Other
        // Every core kind that runs pods is modelled; the others name GPUs as quotas and limits.
        && !obj.group().is_empty()
        && crd_of(obj).is_none()
        && !guess::not_demand(&obj.kind)
}

/// The declared shape of a workload object, or `None` for kinds that are not workloads. Read
/// alone: a pod template's DRA claim templates are not at hand, so its claims are unknown
/// ([`declared_shape_with`] reads them).
pub fn declared_shape(obj: &Object) -> Result<Option<GpuShape>, Overflow> {
    declared_shape_with(obj, &|_, _, _| None, &Dra::default())
}

/// Finds an object of the input by kind, namespace and name (a TrainJob's runtime).
pub type Lookup<'a> = dyn Fn(&str, &str, &str) -> Option<&'a Object> + 'a;

/// [`declared_shape`], with the other objects of the input at hand: a TrainJob's shape may live in
/// the runtime it references, and a pod template's claims in the ResourceClaimTemplates and
/// DeviceClasses of `dra`.
pub fn declared_shape_with<'a>(
    obj: &Object,
    lookup: &Lookup<'a>,
    dra: &Dra<'_>,
) -> Result<Option<GpuShape>, Overflow> {
    shape_of(obj, lookup, dra).named(obj, "a GPU count of its spec")
}

/// The spec of the TrainingRuntime or ClusterTrainingRuntime a TrainJob references
/// (`runtimeRef.kind` defaults to ClusterTrainingRuntime, which is cluster-scoped).
fn train_job_runtime<'a>(
    obj: &Object,
    spec: &serde_json::Value,
    lookup: &Lookup<'a>,
) -> Option<&'a serde_json::Value> {
    let r = spec.get("runtimeRef")?;
    let name = r.get("name")?.as_str()?;
    let kind = r
        .get("kind")
        .and_then(serde_json::Value::as_str)
        .unwrap_or("ClusterTrainingRuntime");
    let ns = if kind == "TrainingRuntime" {
        obj.namespace()
    } else {
        ""
    };
    match &lookup(kind, ns, name)?.body {
        Body::Raw(v) => Some(v),
        _ => None,
    }
}

fn shape_of(
    obj: &Object,
    lookup: &Lookup<'_>,
    dra: &Dra<'_>,
) -> Result<Option<GpuShape>, TooLarge> {
    let rule = PodRule {
        dra,
        ns: obj.namespace(),
    };
    let role = |name: &str, replicas: Option<u64>, template: &PodTemplate| {
        let g = rule.gpus(&template.spec)?;
        Ok::<_, TooLarge>(GpuShape::new(vec![Role {
            name: template_role(&template.metadata.labels)
                .unwrap_or(name)
                .to_string(),
            replicas: replicas.unwrap_or(1),
            gpus_per_replica: g.whole,
            nodes_per_replica: 1,
            autoscaled: false,
            devices: g.detail,
        }]))
    };
    Ok(Some(match &obj.body {
        Body::Replicated(s) => role("main", s.replicas, &s.template)?,
        Body::Job(j) => role("worker", j.spec.parallelism, &j.spec.template)?,
        Body::CronJob(c) => role(
            "worker",
            c.job_template.spec.parallelism,
            &c.job_template.spec.template,
        )?,
        Body::Pod(p) => {
            // A live pod holds what its claims were allocated (`allocationMode: All`, the
            // alternative `firstAvailable` chose), not what their templates ask.
            let g = rule.pod(&p.spec, &p.status, obj.meta.uid.as_deref())?;
            GpuShape::new(vec![Role {
                name: "pod".into(),
                replicas: 1,
                gpus_per_replica: g.whole,
                nodes_per_replica: 1,
                autoscaled: false,
                devices: g.detail,
            }])
        }
        Body::Claim(c) if is_shared_claim(obj) => {
            // What the claim asks for: one allocation, however many pods share it.
            let what = format!(
                "ResourceClaim {}/{}",
                super::claims::placed(obj.namespace()),
                obj.meta.name
            );
            let d = dra.spec(&c.spec, &what)?;
            let g = PodGpus {
                whole: d.gpus.whole,
                detail: super::pods::detail(&d.gpus, &d),
            };
            GpuShape::new(vec![Role {
                name: "claim".into(),
                replicas: 1,
                gpus_per_replica: g.whole,
                nodes_per_replica: 1,
                autoscaled: false,
                devices: g.detail,
            }])
        }
        Body::LeaderWorkerSet(s) => lws_shape(s, rule)?,
        Body::DynamoGraph(s) => {
            // A Planner scales the graph's workers: their replicas belong to it, not to Git.
            let planner = s
                .services
                .iter()
                .flatten()
                .any(|(_, svc)| svc.component_type.as_deref() == Some("planner"))
                || s.components
                    .iter()
                    .flatten()
                    .any(|c| c.type_.as_deref() == Some("planner"));
            let mut roles = Vec::new();
            if let Some(services) = &s.services {
                for (name, svc) in services {
                    let mut r = dynamo_service_role(name, svc, rule)?;
                    r.autoscaled = planner || svc.scaled_by_adapter();
                    roles.push(r);
                }
            }
            if let Some(components) = &s.components {
                for c in components {
                    let mut r = dynamo_component_role(c, rule)?;
                    r.autoscaled = planner || c.scaling_adapter.as_ref().is_some_and(|a| a.enabled);
                    roles.push(r);
                }
            }
            GpuShape::new(roles)
        }
        Body::InferenceService(s) => GpuShape::new(vec![predictor_role(&s.predictor, rule)?]),
        Body::Raw(spec) if obj.typed_kind() == Kind::Other => {
            return match crd_of(obj) {
                Some(Crd::RayCluster) => crds::ray_cluster(spec, rule).map(Some),
                Some(Crd::RayService) => spec
                    .get("rayClusterConfig")
                    .map(|s| crds::ray_cluster(s, rule))
                    .transpose(),
                // A RayJob without `rayClusterSpec` submits to an existing cluster
                // (`clusterSelector`): it holds no GPUs of its own.
                Some(Crd::RayJob) => spec
                    .get("rayClusterSpec")
                    .map(|s| crds::ray_cluster(s, rule))
                    .transpose(),
                Some(Crd::KubeflowJob) => crds::kubeflow_job(spec, rule),
                Some(Crd::TrainJob) => {
                    crds::train_job(spec, train_job_runtime(obj, spec, lookup), rule)
                }
                Some(Crd::JobSet) => crds::jobset(spec, rule).map(Some),
                Some(Crd::LlmInferenceService) => crds::llm_inference_service(spec, rule).map(Some),
                Some(Crd::SparkApplication) => crds::spark_application(spec, rule).map(Some),
                None if shape_is_guess(obj) => guess::guess(spec, rule),
                None => Ok(None),
            };
        }
        _ => return Ok(None),
    }))
}

/// A role name carried by a pod template's labels (llm-d, Dynamo), if any.
pub fn template_role(labels: &LabelMap) -> Option<&str> {
    [labels::LLMD_ROLE, labels::DYNAMO_SUB_COMPONENT_TYPE]
        .iter()
        .find_map(|k| labels.get(k))
        .map(Text::as_str)
        .filter(|s| !s.is_empty())
}

fn lws_shape(s: &LwsSpec, rule: PodRule<'_, '_>) -> Result<GpuShape, TooLarge> {
    let t = &s.leader_worker_template;
    let size = t.size.unwrap_or(1).max(1);
    let worker = rule.gpus(&t.worker_template.spec)?;
    let leader = match &t.leader_template {
        Some(l) => rule.gpus(&l.spec)?,
        None => worker.clone(),
    };
    let name = t
        .leader_template
        .as_ref()
        .and_then(|l| template_role(&l.metadata.labels))
        .or_else(|| template_role(&t.worker_template.metadata.labels))
        .unwrap_or("group");
    // size ≥ 1, so `size - 1` cannot underflow.
    let group = leader.plus(&worker, size.saturating_sub(1))?;
    Ok(GpuShape::new(vec![Role {
        name: name.to_string(),
        replicas: s.replicas.unwrap_or(1),
        gpus_per_replica: group.whole,
        nodes_per_replica: size,
        autoscaled: false,
        devices: group.detail,
    }]))
}

/// Role from a Dynamo worker's command line: `--disaggregation-mode prefill|decode` (SGLang, newer
/// vLLM), `--is-prefill-worker` / `--is-decode-worker` (vLLM, legacy). Arguments may be one shell
/// string, so every whitespace-separated token is looked at.
fn role_from_args(c: &DynamoContainer) -> Option<&'static str> {
    let mut tokens = c
        .command
        .iter()
        .chain(&c.args)
        .flat_map(|s| s.split_whitespace());
    while let Some(t) = tokens.next() {
        let t = t.trim_matches(|c| c == '"' || c == '\'');
        match t {
            "--is-prefill-worker" => return Some("prefill"),
            "--is-decode-worker" => return Some("decode"),
            "--disaggregation-mode" => match tokens.next() {
                Some("prefill") => return Some("prefill"),
                Some("decode") => return Some("decode"),
                _ => {}
            },
            "--disaggregation-mode=prefill" => return Some("prefill"),
            "--disaggregation-mode=decode" => return Some("decode"),
            _ => {}
        }
    }
    None
}

fn dynamo_role_name(
    sub_type: Option<&str>,
    main: Option<&DynamoContainer>,
    component_type: Option<&str>,
    service: &str,
) -> String {
    fn non_empty(s: Option<&str>) -> Option<&str> {
        s.filter(|s| !s.is_empty())
    }
    non_empty(sub_type)
        .or_else(|| main.and_then(role_from_args))
        .or_else(|| non_empty(component_type).filter(|t| *t != "main"))
        .unwrap_or(service)
        .to_string()
}

/// A pod spec holding only `claims`: the DRA claims of a CRD's pod fields that embed a PodSpec
/// inline (Dynamo's `extraPodSpec` and component pod templates, KServe's predictor), for
/// [`PodRule::with`] to add to the GPUs the CRD's own fields declare.
fn claims_only(claims: &[PodResourceClaim]) -> PodSpec {
    PodSpec {
        resource_claims: claims.to_vec(),
        ..PodSpec::default()
    }
}

fn dynamo_service_role(
    name: &str,
    svc: &DynamoService,
    rule: PodRule<'_, '_>,
) -> Result<Role, TooLarge> {
    let res = &svc.resources;
    // `resources.gpu` is a count of `gpuType` (default nvidia.com/gpu); MIG or shared types are not
    // whole GPUs. Without it, the main container's own resources are the fallback.
    let whole_type = |t: &Option<String>| {
        t.as_deref()
            .is_none_or(|t| GpuResource::classify(t) == Some(GpuResource::Whole))
    };
    let declared = res
        .requests
        .gpu
        .filter(|_| whole_type(&res.requests.gpu_type))
        .or(res.limits.gpu.filter(|_| whole_type(&res.limits.gpu_type)))
        .map(|g| g.0);
    let request = match (declared, &svc.extra_pod_spec.main_container) {
        (Some(g), _) => Gpus::whole(g),
        (None, Some(c)) => container_request(&c.resources),
        (None, None) => Gpus::default(),
    };
    let pod = rule.with(request, &claims_only(&svc.extra_pod_spec.resource_claims))?;
    let nodes = svc
        .multinode
        .as_ref()
        .and_then(|m| m.node_count)
        .unwrap_or(1)
        .max(1);
    Ok(Role {
        name: dynamo_role_name(
            svc.sub_component_type.as_deref(),
            svc.extra_pod_spec.main_container.as_ref(),
            svc.component_type.as_deref(),
            name,
        ),
        replicas: svc.replicas.unwrap_or(1),
        // A multi-node replica is a pod per node, each with its own claims.
        gpus_per_replica: sum::mul(pod.whole, nodes)?,
        nodes_per_replica: nodes,
        autoscaled: false,
        devices: pod.detail.scaled(nodes)?,
    })
}

fn dynamo_component_role(c: &DynamoComponent, rule: PodRule<'_, '_>) -> Result<Role, TooLarge> {
    let spec = &c.pod_template.spec;
    let gpus: Gpus = pod_request_parts(
        spec.containers
            .iter()
            .map(|c| container_request(&c.resources)),
        &spec.init_containers,
        &Default::default(),
    )?;
    let pod = rule.with(gpus, &claims_only(&spec.resource_claims))?;
    let main = spec.containers.iter().find(|c| c.name == "main");
    let nodes = c
        .multinode
        .as_ref()
        .and_then(|m| m.node_count)
        .unwrap_or(1)
        .max(1);
    let type_ = c.type_.as_deref();
    let sub = type_.filter(|t| matches!(*t, "prefill" | "decode"));
    Ok(Role {
        name: dynamo_role_name(sub, main, type_, &c.name),
        replicas: c.replicas.unwrap_or(1),
        gpus_per_replica: sum::mul(pod.whole, nodes)?,
        nodes_per_replica: nodes,
        autoscaled: false,
        devices: pod.detail.scaled(nodes)?,
    })
}

fn predictor_role(p: &Predictor, rule: PodRule<'_, '_>) -> Result<Role, TooLarge> {
    let replicas = p.min_replicas.unwrap_or(1);
    if let Some(w) = &p.worker_spec {
        let pp = w.pipeline_parallel_size.unwrap_or(1).max(1);
        let tp = w.tensor_parallel_size.unwrap_or(1).max(1);
        return Ok(Role {
            name: "predictor".into(),
            replicas,
            gpus_per_replica: sum::mul(pp, tp)?,
            nodes_per_replica: pp,
            autoscaled: false,
            devices: DeviceDetail::default(),
        });
    }
    // `model` and the framework forms are alternatives upstream (one is set); each is a container,
    // and `containers` adds the inline pod spec's containers (kserve-container, sidecars).
    let mut gpus = Gpus::default();
    for m in [
        p.model.as_ref(),
        p.tensorflow.as_deref(),
        p.pytorch.as_deref(),
        p.sklearn.as_deref(),
        p.xgboost.as_deref(),
        p.onnx.as_deref(),
        p.triton.as_deref(),
        p.huggingface.as_deref(),
        p.lightgbm.as_deref(),
        p.paddle.as_deref(),
        p.pmml.as_deref(),
    ]
    .into_iter()
    .flatten()
    {
        gpus.add(&container_request(&m.resources))?;
    }
    for c in &p.containers {
        gpus.add(&container_request(&c.resources))?;
    }
    let pod = rule.with(gpus, &claims_only(&p.resource_claims))?;
    Ok(Role {
        name: "predictor".into(),
        replicas,
        gpus_per_replica: pod.whole,
        nodes_per_replica: 1,
        autoscaled: false,
        devices: pod.detail,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::k8s::read::read_str;

    fn shape(yaml: &str) -> String {
        let objs = read_str(yaml, "t.yaml").unwrap();
        declared_shape(&objs[0]).unwrap().unwrap().to_string()
    }

    #[test]
    fn replicated_kinds() {
        let d = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  replicas: 3\n  template:\n    spec:\n      containers:\n      - resources: {limits: {nvidia.com/gpu: 2}}\n";
        assert_eq!(shape(d), "main 3×2 = 6");
        let s = "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: s}\nspec:\n  template:\n    spec:\n      containers:\n      - resources: {limits: {nvidia.com/gpu: 4}}\n";
        assert_eq!(shape(s), "main 1×4 = 4", "replicas default to 1");
    }

    #[test]
    fn jobs_and_cronjobs() {
        let j = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  parallelism: 4\n  completions: 100\n  template:\n    spec:\n      containers:\n      - resources: {limits: {nvidia.com/gpu: 2}}\n";
        assert_eq!(shape(j), "worker 4×2 = 8");
        let c = "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: c}\nspec:\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          containers:\n          - resources: {limits: {nvidia.com/gpu: 1}}\n";
        assert_eq!(shape(c), "worker 1×1 = 1");
    }

    #[test]
    fn leaderworkerset_with_and_without_leader_template() {
        let with = "apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata: {name: l}\nspec:\n  replicas: 2\n  leaderWorkerTemplate:\n    size: 4\n    leaderTemplate:\n      spec:\n        containers: [{resources: {limits: {nvidia.com/gpu: 2}}}]\n    workerTemplate:\n      spec:\n        containers: [{resources: {limits: {nvidia.com/gpu: 8}}}]\n";
        assert_eq!(shape(with), "group 2×26 (4 nodes each) = 52");
        let without = "apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata: {name: l}\nspec:\n  replicas: 4\n  leaderWorkerTemplate:\n    size: 2\n    workerTemplate:\n      metadata: {labels: {llm-d.ai/role: decode}}\n      spec:\n        containers: [{resources: {limits: {nvidia.com/gpu: 8}}}]\n";
        assert_eq!(shape(without), "decode 4×16 (2 nodes each) = 64");
    }

    #[test]
    fn dynamo_v1alpha1_services() {
        let g = r#"apiVersion: nvidia.com/v1alpha1
kind: DynamoGraphDeployment
metadata: {name: llama-prod}
spec:
  services:
    Frontend:
      componentType: frontend
      replicas: 2
    VllmDecodeWorker:
      componentType: worker
      subComponentType: decode
      replicas: 10
      resources: {limits: {gpu: "8"}}
    VllmPrefillWorker:
      componentType: worker
      subComponentType: prefill
      replicas: 10
      resources: {limits: {gpu: "8"}}
"#;
        assert_eq!(shape(g), "decode 10×8 + prefill 10×8 = 160");
    }

    #[test]
    fn dynamo_multinode_and_args_heuristic() {
        let g = r#"apiVersion: nvidia.com/v1alpha1
kind: DynamoGraphDeployment
metadata: {name: g}
spec:
  services:
    decode:
      componentType: worker
      replicas: 1
      multinode: {nodeCount: 2}
      resources: {limits: {gpu: "4"}}
      extraPodSpec:
        mainContainer:
          args: [--disaggregation-mode, decode]
    prefill:
      componentType: worker
      replicas: 2
      multinode: {nodeCount: 2}
      resources: {limits: {gpu: "4"}}
      extraPodSpec:
        mainContainer:
          args: ["python3 -m dynamo.sglang --disaggregation-mode prefill --tp 8"]
"#;
        assert_eq!(
            shape(g),
            "decode 1×8 (2 nodes each) + prefill 2×8 (2 nodes each) = 24"
        );
    }

    #[test]
    fn dynamo_legacy_file() {
        // ≤0.3: frontend is `main`, no subComponentType, prefill only visible in args, GPUs only in
        // the main container's limits.
        let g = r#"apiVersion: nvidia.com/v1alpha1
kind: DynamoGraphDeployment
metadata: {name: legacy}
spec:
  services:
    Frontend:
      dynamoNamespace: legacy
      componentType: main
      replicas: 1
    VllmWorker:
      dynamoNamespace: legacy
      componentType: worker
      replicas: 2
      extraPodSpec:
        mainContainer:
          args: ["python3 -m dynamo.vllm --model m"]
          resources: {limits: {nvidia.com/gpu: "1"}}
    PrefillWorker:
      dynamoNamespace: legacy
      componentType: worker
      replicas: 1
      resources: {limits: {gpu: "1"}}
      extraPodSpec:
        mainContainer:
          args: ["python3 -m dynamo.vllm --model m --is-prefill-worker"]
"#;
        assert_eq!(shape(g), "prefill 1×1 + worker 2×1 = 3");
    }

    #[test]
    fn dynamo_v1beta1_components() {
        let g = r#"apiVersion: nvidia.com/v1beta1
kind: DynamoGraphDeployment
metadata: {name: beta}
spec:
  components:
  - name: Frontend
    type: frontend
    podTemplate: {spec: {containers: [{name: main}]}}
  - name: decode
    type: decode
    replicas: 3
    multinode: {nodeCount: 2}
    podTemplate:
      spec:
        containers:
        - name: main
          resources: {limits: {nvidia.com/gpu: "8"}}
        - name: helper
          resources: {limits: {nvidia.com/gpu: "1"}}
  - name: worker
    type: worker
    podTemplate:
      spec:
        containers:
        - name: main
          resources: {limits: {nvidia.com/gpu: 2}}
"#;
        assert_eq!(shape(g), "decode 3×18 (2 nodes each) + worker 1×2 = 56");
    }

    #[test]
    fn same_role_twice_is_numbered() {
        let g = r#"apiVersion: nvidia.com/v1alpha1
kind: DynamoGraphDeployment
metadata: {name: g}
spec:
  services:
    a: {componentType: worker, resources: {limits: {gpu: "1"}}}
    b: {componentType: worker, replicas: 2, resources: {limits: {gpu: "2"}}}
"#;
        assert_eq!(shape(g), "worker-1 1×1 + worker-2 2×2 = 5");
    }

    #[test]
    fn scaled_to_zero_still_declares_gpus() {
        let g = "apiVersion: nvidia.com/v1alpha1\nkind: DynamoGraphDeployment\nmetadata: {name: g}\nspec:\n  services:\n    w: {componentType: worker, subComponentType: decode, replicas: 0, resources: {limits: {gpu: \"8\"}}}\n";
        let objs = read_str(g, "t").unwrap();
        let s = declared_shape(&objs[0]).unwrap().unwrap();
        assert_eq!(s.total(), Ok(0));
        assert!(s.declares_gpus());
    }

    #[test]
    fn dynamo_autoscaled_roles() {
        let g = r#"apiVersion: nvidia.com/v1alpha1
kind: DynamoGraphDeployment
metadata: {name: g}
spec:
  services:
    decode: {componentType: worker, subComponentType: decode, replicas: 2, resources: {limits: {gpu: "8"}}, scalingAdapter: {enabled: true}}
    prefill: {componentType: worker, subComponentType: prefill, replicas: 2, resources: {limits: {gpu: "8"}}}
"#;
        assert_eq!(shape(g), "decode 2×8 (autoscaled) + prefill 2×8 = 32");
        let with_planner = g.replace("scalingAdapter: {enabled: true}", "").replace(
            "    prefill:",
            "    Planner: {componentType: planner}\n    prefill:",
        );
        assert_eq!(
            shape(&with_planner),
            "decode 2×8 (autoscaled) + prefill 2×8 (autoscaled) = 32"
        );
    }

    #[test]
    fn kserve_single_and_multi_node() {
        let single = "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata: {name: i}\nspec:\n  predictor:\n    minReplicas: 2\n    model:\n      modelFormat: {name: huggingface}\n      resources: {limits: {nvidia.com/gpu: \"1\"}}\n";
        assert_eq!(shape(single), "predictor 2×1 = 2");
        let zero = "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata: {name: i}\nspec:\n  predictor:\n    minReplicas: 0\n    model:\n      resources: {limits: {nvidia.com/gpu: \"4\"}}\n";
        assert_eq!(shape(zero), "predictor 0×4 = 0");
        let multi = "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata: {name: i}\nspec:\n  predictor:\n    model:\n      resources: {limits: {nvidia.com/gpu: \"4\"}}\n    workerSpec:\n      pipelineParallelSize: 2\n      tensorParallelSize: 4\n";
        assert_eq!(shape(multi), "predictor 1×8 (2 nodes each) = 8");
    }

    #[test]
    fn kserve_framework_predictors() {
        for key in [
            "tensorflow",
            "pytorch",
            "sklearn",
            "xgboost",
            "onnx",
            "triton",
            "huggingface",
            "lightgbm",
            "paddle",
            "pmml",
            "model",
        ] {
            let y = format!(
                "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata: {{name: i}}\nspec:\n  predictor:\n    {key}:\n      storageUri: gs://m\n      resources: {{limits: {{nvidia.com/gpu: \"2\"}}}}\n"
            );
            assert_eq!(
                shape(&y),
                "predictor 1×2 = 2",
                "{key}; minReplicas defaults to 1"
            );
        }
        let inline = "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata: {name: i}\nspec:\n  predictor:\n    minReplicas: 3\n    containers:\n    - name: kserve-container\n      resources: {limits: {nvidia.com/gpu: 4}}\n";
        assert_eq!(shape(inline), "predictor 3×4 = 12");
    }

    #[test]
    fn llm_inference_service() {
        let single = "apiVersion: serving.kserve.io/v1alpha1\nkind: LLMInferenceService\nmetadata: {name: l}\nspec:\n  replicas: 3\n  template:\n    containers:\n    - name: main\n      resources: {limits: {nvidia.com/gpu: \"2\"}}\n";
        assert_eq!(shape(single), "main 3×2 = 6");
        // data 16 / dataLocal 8 = 2 pods per group: leader 8 + one worker 8.
        let pd = r#"apiVersion: serving.kserve.io/v1alpha1
kind: LLMInferenceService
metadata: {name: l}
spec:
  parallelism: {data: 16, dataLocal: 8}
  template: {containers: [{name: main, resources: {limits: {nvidia.com/gpu: "8"}}}]}
  worker: {containers: [{name: main, resources: {limits: {nvidia.com/gpu: "8"}}}]}
  prefill:
    replicas: 2
    parallelism: {pipeline: 4}
    template: {containers: [{name: main, resources: {limits: {nvidia.com/gpu: "4"}}}]}
    worker: {containers: [{name: main, resources: {limits: {nvidia.com/gpu: "4"}}}]}
"#;
        assert_eq!(
            shape(pd),
            "decode 1×16 (2 nodes each) + prefill 2×16 (4 nodes each) = 48"
        );
    }

    const RAY_GROUPS: &str = r#"  headGroupSpec:
    rayStartParams: {}
    template:
      spec:
        containers: [{name: ray-head, resources: {limits: {nvidia.com/gpu: 1}}}]
  workerGroupSpecs:
  - groupName: gpu
    replicas: 2
    minReplicas: 1
    maxReplicas: 4
    numOfHosts: 2
    template:
      spec:
        containers: [{name: w, resources: {limits: {nvidia.com/gpu: 8}}}]
  - groupName: clamped
    replicas: 9
    maxReplicas: 3
    template:
      spec:
        containers: [{name: w, resources: {limits: {nvidia.com/gpu: 1}}}]
  - groupName: below-min
    minReplicas: 2
    template:
      spec:
        containers: [{name: w, resources: {limits: {nvidia.com/gpu: 1}}}]
  - groupName: parked
    replicas: 5
    suspend: true
    template:
      spec:
        containers: [{name: w, resources: {limits: {nvidia.com/gpu: 1}}}]
  - groupName: cpu
    replicas: 10
    template:
      spec:
        containers: [{name: w}]
"#;

    #[test]
    fn ray_cluster_service_and_job() {
        let c = format!(
            "apiVersion: ray.io/v1\nkind: RayCluster\nmetadata: {{name: r}}\nspec:\n{RAY_GROUPS}"
        );
        // head 1; gpu 2 replicas × 2 hosts × 8; clamped to max 3; below-min raised to 2; parked 0.
        let want =
            "below-min 2×1 + clamped 3×1 + gpu 2×16 (2 nodes each) + head 1×1 + parked 0×1 = 38";
        assert_eq!(shape(&c), want);
        let indent = |s: &str| s.lines().map(|l| format!("  {l}\n")).collect::<String>();
        let svc = format!(
            "apiVersion: ray.io/v1\nkind: RayService\nmetadata: {{name: r}}\nspec:\n  serveConfigV2: x\n  rayClusterConfig:\n{}",
            indent(RAY_GROUPS)
        );
        assert_eq!(shape(&svc), want);
        let job = format!(
            "apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {{name: r}}\nspec:\n  entrypoint: python x.py\n  rayClusterSpec:\n{}",
            indent(RAY_GROUPS)
        );
        assert_eq!(shape(&job), want);
        let auto = c.replace(
            "spec:\n  headGroupSpec",
            "spec:\n  enableInTreeAutoscaling: true\n  headGroupSpec",
        );
        assert!(shape(&auto).contains("gpu 2×16 (2 nodes each) (autoscaled)"));
        // A job on an existing cluster holds no GPUs of its own.
        let selector = "apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: r}\nspec:\n  clusterSelector: {ray.io/cluster: c}\n";
        let objs = read_str(selector, "t").unwrap();
        assert!(declared_shape(&objs[0]).unwrap().is_none());
        assert!(!shape_is_guess(&objs[0]));
    }

    #[test]
    fn kubeflow_training_jobs() {
        let p = r#"apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: p}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template: {spec: {containers: [{name: pytorch, resources: {limits: {nvidia.com/gpu: 8}}}]}}
    Worker:
      replicas: 3
      template: {spec: {containers: [{name: pytorch, resources: {limits: {nvidia.com/gpu: 8}}}]}}
"#;
        assert_eq!(shape(p), "master 1×8 + worker 3×8 = 32");
        let t = "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: t}\nspec:\n  runtimeRef: {name: torch-distributed}\n  trainer:\n    numNodes: 4\n    resourcesPerNode: {limits: {nvidia.com/gpu: 2}}\n";
        assert_eq!(shape(t), "node 4×2 = 8");
        // GPUs only in the referenced runtime: not in the object, no shape to read.
        let runtime_only = "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: t}\nspec:\n  runtimeRef: {name: torch-distributed}\n";
        let objs = read_str(runtime_only, "t").unwrap();
        assert!(declared_shape(&objs[0]).unwrap().is_none());
    }

    #[test]
    fn trainjob_shape_from_its_runtime() {
        let runtime = r#"apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: torch-distributed}
spec:
  mlPolicy: {numNodes: 2, torch: {numProcPerNode: auto}}
  template:
    spec:
      replicatedJobs:
      - name: dataset-initializer
        template: {spec: {template: {spec: {containers: [{name: dataset-initializer}]}}}}
      - name: node
        template:
          spec:
            template:
              spec:
                containers: [{name: node, resources: {limits: {nvidia.com/gpu: 4}}}]
"#;
        let objs = read_str(runtime, "r").unwrap();
        let rt = &objs[0];
        let lookup = |kind: &str, _: &str, name: &str| {
            (kind == "ClusterTrainingRuntime" && name == rt.meta.name).then_some(rt)
        };
        let shape = |y: &str| {
            let o = read_str(y, "t").unwrap();
            declared_shape_with(&o[0], &lookup, &Dra::default())
                .unwrap()
                .map(|s| s.to_string())
        };
        let job = "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: t, namespace: ml}\nspec:\n  runtimeRef: {name: torch-distributed}\n";
        // The runtime's numNodes 2 × its node template's 4 GPUs.
        assert_eq!(shape(job).as_deref(), Some("node 2×4 = 8"));
        let nodes = format!("{job}  trainer: {{numNodes: 3}}\n");
        assert_eq!(shape(&nodes).as_deref(), Some("node 3×4 = 12"));
        let both = format!(
            "{job}  trainer: {{numNodes: 3, resourcesPerNode: {{limits: {{nvidia.com/gpu: 8}}}}}}\n"
        );
        assert_eq!(shape(&both).as_deref(), Some("node 3×8 = 24"));
        // Another runtime, not in the input: the shape is not known.
        let other = job.replace("torch-distributed", "deepspeed");
        assert_eq!(shape(&other), None);
    }

    #[test]
    fn jobset_replicated_jobs() {
        let j = r#"apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: j}
spec:
  replicatedJobs:
  - name: driver
    template:
      spec:
        template: {spec: {containers: [{name: d}]}}
  - name: workers
    replicas: 2
    template:
      spec:
        parallelism: 4
        completions: 4
        template: {spec: {containers: [{name: w, resources: {limits: {nvidia.com/gpu: 8}}}]}}
"#;
        assert_eq!(shape(j), "workers 8×8 = 64");
    }

    #[test]
    fn unmodelled_kinds_are_guessed_from_their_pod_templates() {
        let g = r#"apiVersion: example.com/v1
kind: Trainer
metadata: {name: made-up}
spec:
  workers:
    replicas: 2
    template:
      spec:
        containers: [{name: w, resources: {limits: {nvidia.com/gpu: 4}}}]
  sidecar:
    containers: [{name: s, resources: {limits: {nvidia.com/gpu: 1}}}]
  cpu:
    template: {spec: {containers: [{name: c}]}}
  tasks:
  - name: ps
    template: {spec: {containers: [{name: c}]}}
  - replicas: 3
    template: {spec: {containers: [{name: w, resources: {limits: {nvidia.com/gpu: 2}}}]}}
"#;
        let objs = read_str(g, "t").unwrap();
        assert!(shape_is_guess(&objs[0]));
        assert_eq!(
            declared_shape(&objs[0]).unwrap().unwrap().to_string(),
            "spec.sidecar 1×1 + spec.tasks[1].template 3×2 + spec.workers.template 2×4 = 15"
        );
        // Without GPUs it is no workload; runtimes and templates for others are never workloads.
        let cpu = "apiVersion: example.com/v1\nkind: Thing\nmetadata: {name: t}\nspec:\n  template: {spec: {containers: [{name: c}]}}\n";
        assert!(
            declared_shape(&read_str(cpu, "t").unwrap()[0])
                .unwrap()
                .is_none()
        );
        let runtime = g.replace("kind: Trainer", "kind: ClusterTrainingRuntime");
        let objs = read_str(&runtime, "t").unwrap();
        assert!(declared_shape(&objs[0]).unwrap().is_none());
        assert!(!shape_is_guess(&objs[0]));
        // Quotas and capacity name GPUs as a ceiling, not as work.
        for quota in [
            "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: q}\nspec:\n  capability: {nvidia.com/gpu: 64}\n",
            "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: p}\nspec:\n  limits: {nvidia.com/gpu: 100}\n",
            "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q}\nspec:\n  hard: {requests.nvidia.com/gpu: 8}\n",
            "apiVersion: v1\nkind: LimitRange\nmetadata: {name: l}\nspec:\n  limits: [{type: Container, max: {nvidia.com/gpu: 8}}]\n",
            // OpenShift's autoscaler ceiling and its machines, the GPU Operator's policy, NFD's
            // rules, OpenShift AI's profiles, Kueue's queues: supply and limits, not work.
            "apiVersion: autoscaling.openshift.io/v1\nkind: ClusterAutoscaler\nmetadata: {name: default}\nspec:\n  resourceLimits:\n    gpus: [{type: nvidia.com/gpu, min: 0, max: 16}]\n",
            "apiVersion: autoscaling.openshift.io/v1beta1\nkind: MachineAutoscaler\nmetadata: {name: m}\nspec: {minReplicas: 0, maxReplicas: 4}\n",
            "apiVersion: machine.openshift.io/v1beta1\nkind: MachineSet\nmetadata: {name: gpu}\nspec:\n  replicas: 2\n  template:\n    metadata: {labels: {nvidia.com/gpu: \"8\"}}\n    spec: {providerSpec: {value: {instanceType: p5.48xlarge, gpus: 8, gpu: {type: nvidia.com/gpu, count: 8}}}}\n",
            "apiVersion: nvidia.com/v1\nkind: ClusterPolicy\nmetadata: {name: p}\nspec:\n  devicePlugin: {config: {name: nvidia.com/gpu}}\n",
            "apiVersion: nfd.k8s-sigs.io/v1alpha1\nkind: NodeFeatureRule\nmetadata: {name: r}\nspec:\n  rules: [{name: gpu, extendedResources: {nvidia.com/gpu: \"8\"}}]\n",
            "apiVersion: infrastructure.opendatahub.io/v1\nkind: HardwareProfile\nmetadata: {name: h}\nspec:\n  identifiers: [{identifier: nvidia.com/gpu, defaultCount: 1, maxCount: 8}]\n",
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: q}\nspec:\n  resourceGroups: [{coveredResources: [nvidia.com/gpu], flavors: [{name: h, resources: [{name: nvidia.com/gpu, nominalQuota: 8}]}]}]\n",
        ] {
            assert!(
                declared_shape(&read_str(quota, "t").unwrap()[0])
                    .unwrap()
                    .is_none(),
                "{quota}"
            );
        }
    }

    #[test]
    fn the_guess_walk_is_bounded() {
        // A template nested deeper than the walk looks is not found; a wide spec is cut off by
        // the budget, not walked in full.
        let mut deep =
            String::from("apiVersion: example.com/v1\nkind: Deep\nmetadata: {name: d}\nspec:\n");
        let mut indent = String::from("  ");
        for i in 0..12 {
            deep.push_str(&format!("{indent}l{i}:\n"));
            indent.push_str("  ");
        }
        deep.push_str(&format!(
            "{indent}template: {{spec: {{containers: [{{resources: {{limits: {{nvidia.com/gpu: 1}}}}}}]}}}}\n"
        ));
        assert!(
            declared_shape(&read_str(&deep, "t").unwrap()[0])
                .unwrap()
                .is_none()
        );
        let mut wide = String::from(
            "apiVersion: example.com/v1\nkind: Wide\nmetadata: {name: w}\nspec:\n  items:\n",
        );
        for _ in 0..10_000 {
            wide.push_str("  - {template: {spec: {containers: [{resources: {limits: {nvidia.com/gpu: 1}}}]}}}\n");
        }
        let s = declared_shape(&read_str(&wide, "t").unwrap()[0])
            .unwrap()
            .unwrap();
        assert!(s.roles.len() < 4096, "{} roles", s.roles.len());
    }

    #[test]
    fn non_workloads_have_no_shape() {
        let objs = read_str("apiVersion: v1\nkind: Service\nmetadata: {name: s}\n", "t").unwrap();
        assert!(declared_shape(&objs[0]).unwrap().is_none());
    }

    /// The shape of the first object of `yaml` read with the rest of it as context.
    fn with_context(yaml: &str) -> GpuShape {
        let objs = read_str(yaml, "t.yaml").unwrap();
        let dra = Dra::new(&objs);
        declared_shape_with(&objs[0], &|_, _, _| None, &dra)
            .unwrap()
            .unwrap()
    }

    const TEMPLATES: &str = "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: two-gpus}\nspec:\n  spec:\n    devices:\n      requests:\n      - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com, count: 2}}\n---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: migs}\nspec:\n  spec:\n    devices:\n      requests:\n      - {name: a, exactly: {deviceClassName: mig.nvidia.com, count: 2, selectors: [{cel: {expression: \"device.attributes['gpu.nvidia.com'].profile == '1g.5gb'\"}}]}}\n      - {name: b, exactly: {deviceClassName: mig.nvidia.com, selectors: [{cel: {expression: \"device.attributes['gpu.nvidia.com'].profile == '3g.20gb'\"}}]}}\n";

    #[test]
    fn a_template_claim_per_pod_counts_per_replica() {
        let d = format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: d}}\nspec:\n  replicas: 3\n  template:\n    spec:\n      containers: [{{name: c, resources: {{claims: [{{name: gpu}}]}}}}]\n      resourceClaims: [{{name: gpu, resourceClaimTemplateName: two-gpus}}]\n{TEMPLATES}"
        );
        let s = with_context(&d);
        assert_eq!(s.to_string(), "main 3×2 = 6");
        assert_eq!(s.devices.gpus_from_claims, 6);
        // Read alone, the template is not at hand: unknown, never zero.
        let alone = read_str(&d, "t").unwrap();
        let s = declared_shape(&alone[0]).unwrap().unwrap();
        assert!(s.roles.is_empty() && s.declares_gpus());
        assert_eq!(
            s.devices.unknown,
            ["ResourceClaimTemplate default/two-gpus is not in the input"]
        );
        // MIG slices by profile, never whole GPUs; a Job's parallelism multiplies them.
        let j = format!(
            "apiVersion: batch/v1\nkind: Job\nmetadata: {{name: j}}\nspec:\n  parallelism: 4\n  template:\n    spec:\n      containers: [{{name: c}}]\n      resourceClaims: [{{name: m, resourceClaimTemplateName: migs}}]\n{TEMPLATES}"
        );
        let s = with_context(&j);
        assert_eq!(s.total(), Ok(0));
        assert_eq!(
            s.devices.other,
            std::collections::BTreeMap::from([
                ("nvidia.com/mig-1g.5gb".to_string(), 8),
                ("nvidia.com/mig-3g.20gb".to_string(), 4)
            ])
        );
    }

    #[test]
    fn claims_in_dynamo_graphs_and_inference_services_count() {
        // v1alpha1: `extraPodSpec` embeds a PodSpec; a two-node replica is two pods, two claims.
        let g = format!(
            "apiVersion: nvidia.com/v1alpha1\nkind: DynamoGraphDeployment\nmetadata: {{name: g}}\nspec:\n  services:\n    decode:\n      componentType: worker\n      subComponentType: decode\n      replicas: 3\n      multinode: {{nodeCount: 2}}\n      extraPodSpec:\n        mainContainer: {{name: main, resources: {{claims: [{{name: gpu}}]}}}}\n        resourceClaims: [{{name: gpu, resourceClaimTemplateName: two-gpus}}]\n{TEMPLATES}"
        );
        let s = with_context(&g);
        assert_eq!(s.to_string(), "decode 3×4 (2 nodes each) = 12");
        assert_eq!(s.devices.gpus_from_claims, 12);
        // v1beta1: a component's pod template; MIG slices by profile, never whole GPUs.
        let c = format!(
            "apiVersion: nvidia.com/v1beta1\nkind: DynamoGraphDeployment\nmetadata: {{name: g}}\nspec:\n  components:\n  - name: worker\n    type: decode\n    replicas: 2\n    podTemplate:\n      spec:\n        containers: [{{name: main, resources: {{limits: {{nvidia.com/gpu: 1}}}}}}]\n        resourceClaims: [{{name: m, resourceClaimTemplateName: migs}}]\n{TEMPLATES}"
        );
        let s = with_context(&c);
        assert_eq!(s.total(), Ok(2));
        assert_eq!(s.devices.gpus_from_claims, 0);
        assert_eq!(s.devices.other.get("nvidia.com/mig-1g.5gb"), Some(&4));
        // KServe: the predictor embeds a PodSpec inline.
        let i = format!(
            "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata: {{name: i}}\nspec:\n  predictor:\n    minReplicas: 2\n    model:\n      modelFormat: {{name: huggingface}}\n      resources: {{claims: [{{name: gpu}}]}}\n    resourceClaims: [{{name: gpu, resourceClaimTemplateName: two-gpus}}]\n{TEMPLATES}"
        );
        let s = with_context(&i);
        assert_eq!(s.total(), Ok(4));
        assert_eq!(s.devices.gpus_from_claims, 4);
        // The template not in the input: unknown, never zero.
        let alone = read_str(&i, "t").unwrap();
        let s = declared_shape(&alone[0]).unwrap().unwrap();
        assert!(s.declares_gpus() && !s.devices.unknown.is_empty());
    }

    #[test]
    fn a_shared_claim_is_one_allocation() {
        let c = "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: shared, namespace: ml}\nspec:\n  devices:\n    requests:\n    - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com, count: 4}}\n";
        assert_eq!(shape(c), "claim 1×4 = 4");
        // A claim made for a pod is the pod's, not a workload.
        let made = c.replace(
            "namespace: ml}",
            "namespace: ml, ownerReferences: [{apiVersion: v1, kind: Pod, name: p, uid: u, controller: true}]}",
        );
        assert!(
            declared_shape(&read_str(&made, "t").unwrap()[0])
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn spark_applications() {
        let app = r#"apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata: {name: etl}
spec:
  type: Python
  driver:
    cores: 1
  executor:
    instances: 4
    gpu: {name: nvidia.com/gpu, quantity: 1}
"#;
        assert_eq!(shape(app), "executor 4×1 = 4");
        let both = app.replace(
            "  driver:\n    cores: 1\n",
            "  driver:\n    gpu: {name: nvidia.com/gpu, quantity: 1}\n    template:\n      spec:\n        containers: [{name: sidecar, resources: {limits: {nvidia.com/gpu: 1}}}]\n",
        );
        assert_eq!(shape(&both), "driver 1×2 + executor 4×1 = 6");
        // Instances default to 1, from sparkConf when the field is absent.
        let conf = app.replace("    instances: 4\n", "").replace(
            "  type: Python\n",
            "  type: Python\n  sparkConf: {spark.executor.instances: \"3\"}\n",
        );
        assert_eq!(shape(&conf), "executor 3×1 = 3");
        assert_eq!(
            shape(&app.replace("    instances: 4\n", "")),
            "executor 1×1 = 1"
        );
        // Dynamic allocation: Spark owns the executors, which start at initialExecutors.
        let dynamic = app.replace(
            "  type: Python\n",
            "  type: Python\n  dynamicAllocation: {enabled: true, initialExecutors: 6, maxExecutors: 10}\n",
        );
        assert_eq!(shape(&dynamic), "executor 6×1 (autoscaled) = 6");
        // An AMD GPU is not an NVIDIA GPU; MIG slices are not whole GPUs.
        let mig = app.replace("nvidia.com/gpu,", "nvidia.com/mig-1g.10gb,");
        let s = declared_shape(&read_str(&mig, "t").unwrap()[0])
            .unwrap()
            .unwrap();
        assert_eq!(s.total(), Ok(0));
        assert_eq!(s.devices.other["nvidia.com/mig-1g.10gb"], 4);
    }

    #[test]
    fn gpu_figures_outside_pod_templates_are_guessed() {
        let g = r#"apiVersion: example.com/v1
kind: Scheduled
metadata: {name: s}
spec:
  template:
    executor: {instances: 3, gpu: {name: nvidia.com/gpu, quantity: 2}}
    resources: {nvidia.com/gpu: "1"}
    devices: [{name: d, deviceClassName: gpu.nvidia.com, count: 2}]
    mystery: {resourceName: nvidia.com/gpu}
"#;
        let objs = read_str(g, "t").unwrap();
        assert!(shape_is_guess(&objs[0]));
        let s = declared_shape(&objs[0]).unwrap().unwrap();
        assert_eq!(
            s.to_string(),
            "spec.template.devices[d] 1×2 + spec.template.executor.gpu 3×2 + spec.template.resources.nvidia.com/gpu 1×1 = 9"
        );
        assert_eq!(
            s.devices.unknown,
            ["spec.template.mystery names nvidia.com/gpu without a count gpuledger can read"]
        );
        // A GPU named without any count is still a GPU workload, of unknown size.
        let only = "apiVersion: example.com/v1\nkind: Thing\nmetadata: {name: t}\nspec:\n  accelerator: {type: nvidia.com/gpu}\n";
        let s = declared_shape(&read_str(only, "t").unwrap()[0])
            .unwrap()
            .unwrap();
        assert!(s.roles.is_empty() && s.declares_gpus());
    }
}
