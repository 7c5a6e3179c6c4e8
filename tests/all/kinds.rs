//! The GPU kinds beyond the built-ins, rendered from a repository: one of each (KServe
//! InferenceService and LLMInferenceService, RayCluster, RayService, RayJob, PyTorchJob, TrainJob,
//! JobSet) and a made-up CRD whose shape is a guess, with the exact GPU totals.

use std::collections::BTreeMap;

use super::support::{Repo, desired_gpus, render};

const ISVC: &str = "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata: {name: isvc, namespace: ml}\nspec:\n  predictor:\n    minReplicas: 2\n    pytorch:\n      storageUri: gs://m\n      resources: {limits: {nvidia.com/gpu: \"1\"}}\n";
const LLMISVC: &str = "apiVersion: serving.kserve.io/v1alpha1\nkind: LLMInferenceService\nmetadata: {name: llm, namespace: ml}\nspec:\n  replicas: 2\n  template:\n    containers: [{name: main, resources: {limits: {nvidia.com/gpu: \"4\"}}}]\n";
const RAY_SPEC: &str = "  headGroupSpec:\n    template: {spec: {containers: [{name: head}]}}\n  workerGroupSpecs:\n  - groupName: gpu\n    replicas: 3\n    template: {spec: {containers: [{name: w, resources: {limits: {nvidia.com/gpu: 2}}}]}}\n";
const PYTORCH: &str = "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: pt, namespace: ml}\nspec:\n  pytorchReplicaSpecs:\n    Master:\n      replicas: 1\n      template: {spec: {containers: [{name: pytorch, resources: {limits: {nvidia.com/gpu: 8}}}]}}\n    Worker:\n      replicas: 1\n      template: {spec: {containers: [{name: pytorch, resources: {limits: {nvidia.com/gpu: 8}}}]}}\n";
const TRAINJOB: &str = "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: tj, namespace: ml}\nspec:\n  runtimeRef: {name: torch-distributed}\n  trainer:\n    numNodes: 2\n    resourcesPerNode: {limits: {nvidia.com/gpu: 4}}\n";
/// A ClusterTrainingRuntime and a TrainJob that leaves its shape to it.
const RUNTIME: &str = "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: ClusterTrainingRuntime\nmetadata: {name: torch}\nspec:\n  mlPolicy: {numNodes: 3}\n  template:\n    spec:\n      replicatedJobs:\n      - name: node\n        template: {spec: {template: {spec: {containers: [{name: node, resources: {limits: {nvidia.com/gpu: 2}}}]}}}}\n---\napiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: tj-rt, namespace: ml}\nspec:\n  runtimeRef: {name: torch}\n";
const JOBSET: &str = "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: js, namespace: ml}\nspec:\n  replicatedJobs:\n  - name: workers\n    replicas: 2\n    template:\n      spec:\n        parallelism: 2\n        template: {spec: {containers: [{name: w, resources: {limits: {nvidia.com/gpu: 1}}}]}}\n";
const MADE_UP: &str = "apiVersion: example.com/v1\nkind: GpuThing\nmetadata: {name: thing, namespace: ml}\nspec:\n  workers:\n    template:\n      spec:\n        containers: [{name: w, resources: {limits: {nvidia.com/gpu: 4}}}]\n";

#[test]
fn one_of_each_gpu_kind_renders_exact_totals() {
    let r = Repo::new();
    r.write("ml/isvc.yaml", ISVC)
        .write("ml/llmisvc.yaml", LLMISVC)
        .write(
            "ml/ray.yaml",
            &format!(
                "apiVersion: ray.io/v1\nkind: RayCluster\nmetadata: {{name: rc, namespace: ml}}\nspec:\n{RAY_SPEC}---\napiVersion: ray.io/v1\nkind: RayService\nmetadata: {{name: rs, namespace: ml}}\nspec:\n  rayClusterConfig:\n{}---\napiVersion: ray.io/v1\nkind: RayJob\nmetadata: {{name: rj, namespace: ml}}\nspec:\n  entrypoint: python x.py\n  rayClusterSpec:\n{}",
                indent(RAY_SPEC),
                indent(RAY_SPEC)
            ),
        )
        .write("ml/pytorch.yaml", PYTORCH)
        .write("ml/trainjob.yaml", TRAINJOB)
        .write("ml/jobset.yaml", JOBSET)
        .write("ml/runtime.yaml", RUNTIME)
        .write("ml/thing.yaml", MADE_UP)
        .commit("gpu kinds");
    let (code, json, stderr) = render(r.path(), &[]);
    assert_eq!(code, 0, "{stderr}");
    let want: BTreeMap<String, u64> = [
        ("ml/InferenceService/isvc", 2), // minReplicas 2 × 1 (pytorch predictor)
        ("ml/LLMInferenceService/llm", 8), // replicas 2 × 4
        ("ml/RayCluster/rc", 6),         // 3 workers × 2, a head without GPUs
        ("ml/RayService/rs", 6),         // the same cluster config
        ("ml/RayJob/rj", 6),             // the same cluster spec
        ("ml/PyTorchJob/pt", 16),        // master 1×8 + worker 1×8
        ("ml/TrainJob/tj", 8),           // 2 nodes × 4
        ("ml/TrainJob/tj-rt", 6),        // its runtime's 3 nodes × the node pod's 2 GPUs
        ("ml/JobSet/js", 4),             // 2 jobs × parallelism 2 × 1
        ("ml/GpuThing/thing", 4),        // a guess: its one pod template
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    assert_eq!(desired_gpus(&json), want);
    let sources: BTreeMap<&str, &str> = json["desired"]["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            (
                w["name"].as_str().unwrap(),
                w["shape_source"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(sources["thing"], "guess");
    assert_eq!(sources["rc"], "spec");
    assert_eq!(
        json["desired"]["gpus_declared"].as_u64(),
        Some(66),
        "{json:#}"
    );
}

fn indent(s: &str) -> String {
    s.lines().map(|l| format!("  {l}\n")).collect()
}

/// An unmodelled GPU workload counts in drift like any other, and both of its shapes say they
/// are guesses.
#[test]
fn an_unmodelled_workload_drifts_with_its_guess_shown() {
    let r = Repo::new();
    r.write("ml/thing.yaml", MADE_UP)
        .commit("a made-up GPU kind");
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("live.yaml");
    let pod = |i: u32| {
        format!(
            "- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: thing-{i}\n    namespace: ml\n    ownerReferences: [{{apiVersion: example.com/v1, kind: GpuThing, name: thing, uid: u1, controller: true}}]\n  spec:\n    nodeName: n1\n    containers: [{{name: w, resources: {{limits: {{nvidia.com/gpu: 4}}}}}}]\n  status: {{phase: Running}}\n"
        )
    };
    let thing = "- apiVersion: example.com/v1\n  kind: GpuThing\n  metadata: {name: thing, namespace: ml, uid: u1}\n  spec:\n    workers:\n      replicas: 2\n      template:\n        spec:\n          containers: [{name: w, resources: {limits: {nvidia.com/gpu: 4}}}]\n";
    std::fs::write(
        &live,
        format!(
            "apiVersion: v1\nkind: List\nitems:\n{thing}{}{}",
            pod(0),
            pod(1)
        ),
    )
    .unwrap();
    let out = super::support::gpuledger(r.path())
        .args(["drift", "--repo", ".", "--now", "2026-11-30", "--no-fail"])
        .arg("--snapshot")
        .arg(&live)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let changed = &json["drift"]["changed"];
    assert_eq!(changed.as_array().map(Vec::len), Some(1), "{json:#}");
    let row = &changed[0];
    assert_eq!(row["name"], "thing");
    assert_eq!(
        (row["gpus"].as_u64(), row["gpus_git"].as_u64()),
        (Some(8), Some(4))
    );
    assert_eq!(
        row["git_shape"],
        "spec.workers.template 1×4 = 4 (shape is a guess: unmodelled kind)"
    );
    assert_eq!(
        row["live_shape"],
        "spec.workers.template 2×4 = 8 (shape is a guess: unmodelled kind)"
    );
}
