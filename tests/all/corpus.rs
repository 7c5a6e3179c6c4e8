//! The upstream manifests in `../shared/corpus` (KServe, KubeRay, Kubeflow, JobSet samples): the
//! shape gpuledger derives for each GPU object must be the one read off the manifest by hand. The
//! corpus lives beside the repository, not in it; without it the test says so and passes.

use std::path::PathBuf;

use gpuledger::k8s::read::read_str;
use gpuledger::workload::kinds::{declared_shape, shape_is_guess};

use super::support::root;

/// (file under the corpus, the GPU objects in it as `Kind/name: shape`; why).
const CASES: &[(&str, &[&str], &str)] = &[
    (
        "kserve/docs/samples/v1beta1/torchserve/v1/bloom/bloom-560m.yaml",
        &["InferenceService/torchserve-bloom-560m: predictor 1×1 = 1"],
        "pytorch predictor with a 1-GPU limit, minReplicas defaults to 1",
    ),
    (
        "website/docs/modelserving/v1beta1/llm/vllm/vllm.yaml",
        &["InferenceService/llama-2-7b: predictor 1×1 = 1"],
        "containers form (kserve-container) with one GPU",
    ),
    (
        "website/docs/modelserving/v1beta1/llm/huggingface/vllm_runtime.yaml",
        &["InferenceService/huggingface-llama2: predictor 1×1 = 1"],
        "model form, huggingface format, one GPU",
    ),
    (
        "website/docs/modelserving/v1beta1/triton/huggingface/triton_runtime.yaml",
        &["InferenceService/huggingface-triton: predictor 1×1 = 1"],
        "triton model, one GPU (the transformer has none)",
    ),
    (
        "kserve/docs/samples/llmisvc/dp-ep/deepseek-r1-gpu-rdma-roce/llm-inference-service-dp-ep-deepseek-r1-pd-gpu-p-deepep-ht-d-deepep-ht.yaml",
        &[
            "LLMInferenceService/deepseek-r1-0528-pd: decode 1×16 (2 nodes each) + prefill 1×16 (2 nodes each) = 32",
        ],
        "data 16 / dataLocal 8 = 2 pods per group (leader template + 1 worker, 8 GPUs each), for decode and prefill",
    ),
    (
        "kserve/docs/samples/llmisvc/kv-cache-offloading/llm-inference-service-kv-cache-offloading.yaml",
        &["LLMInferenceService/qwen2-7b-kv-cache-offloading: main 1×1 = 1"],
        "one replica of a template with one GPU, no worker",
    ),
    (
        "ray/doc/source/cluster/kubernetes/configs/ray-cluster.gpu.yaml",
        &["RayCluster/raycluster: small-group 1×1 = 1"],
        "head without GPUs, small-group replicas 1 within [1, 300], one GPU per pod",
    ),
    (
        "kuberay/ray-operator/config/samples/ray-cluster.verl.yaml",
        &["RayCluster/verl-cluster: head 1×4 = 4"],
        "only the head, with 4 GPUs",
    ),
    (
        "kuberay/ray-operator/config/samples/ray-cluster.kai-gpu-sharing.yaml",
        &[],
        "GPU fractions through a KAI annotation, no whole GPUs requested",
    ),
    (
        "kuberay/ray-operator/config/samples/ray-job.batch-inference.yaml",
        &["RayJob/rayjob-sample: head 1×4 = 4"],
        "rayClusterSpec with a 4-GPU head and no worker groups",
    ),
    (
        "kuberay/ray-operator/config/samples/pytorch-resnet-image-classifier/ray-job.pytorch-image-classifier.yaml",
        &["RayJob/pytorch-image-classifier-: gpu-group 4×1 = 4"],
        "gpu-group 4 replicas × 1 GPU, head without GPUs",
    ),
    (
        "kuberay/ray-operator/config/samples/ray-service.deepseek.yaml",
        &["RayService/deepseek-r1: gpu-group 2×8 = 16"],
        "rayClusterConfig: gpu-group 2 replicas (min = max = 2) × 8 GPUs",
    ),
    (
        "kuberay/ray-operator/config/samples/ray-service.high-throughput-llm.yaml",
        &["RayService/qwen-35-4b: gpu-group 4×1 = 4"],
        "rayClusterConfig: gpu-group 4 replicas × 1 GPU",
    ),
    (
        "training-operator/examples/pytorch/deepspeed-demo/pytorch_deepspeed_demo.yaml",
        &["PyTorchJob/pytorch-deepspeed-demo: master 1×1 + worker 1×1 = 2"],
        "Master 1 and Worker 1 replicas, one GPU each",
    ),
    (
        "trainer/examples/flux/lammps-train-gpus.yaml",
        &["TrainJob/lammps-flux: node 2×1 = 2"],
        "numNodes 2 × resourcesPerNode one GPU",
    ),
    (
        "jobset/site/static/examples/tpu-multislice/v6e-jax-workload.yaml",
        &[],
        "TPUs, not GPUs",
    ),
];

/// The upstream corpus beside the repository (the workplace's `shared/corpus`, or
/// `GPULEDGER_CORPUS`). A missing corpus fails the test: a check that silently passes is no check.
fn corpus() -> PathBuf {
    let dir = std::env::var_os("GPULEDGER_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("../shared/corpus"));
    assert!(
        dir.is_dir(),
        "no upstream corpus at {}: set GPULEDGER_CORPUS to the shared/corpus folder",
        dir.display()
    );
    dir
}

#[test]
fn gpu_kinds_agree_with_shapes_read_by_hand() {
    let dir = corpus();
    for (file, want, why) in CASES {
        let path = dir.join(file);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
        let objs = read_str(&text, file).unwrap_or_else(|e| panic!("{file}: {e}"));
        let got: Vec<String> = objs
            .iter()
            .filter(|o| o.meta.owner_references.is_empty())
            .filter_map(|o| {
                let s = declared_shape(o).unwrap()?;
                assert!(!shape_is_guess(o), "{file}: {} is modelled", o.kind);
                s.declares_gpus()
                    .then(|| format!("{}/{}: {s}", o.kind, o.meta.name))
            })
            .collect();
        assert_eq!(&got, want, "{file} ({why})");
    }
}
