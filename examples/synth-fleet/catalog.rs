//! The catalogues the fleet is drawn from: tenants, product lines, zones, GPU products, models
//! and the applications that run on them.

pub(crate) const TENANTS: &[&str] = &[
    "assistant",
    "enterprise",
    "reasoning",
    "code-assist",
    "search",
    "ads",
    "speech",
    "research",
    "vision",
    "safety",
    "translate",
    "recsys",
    "fraud",
    "maps",
    "photos",
    "video",
    "music",
    "docs",
    "mail",
    "calendar",
    "health",
    "finance",
    "retail",
    "travel",
    "games",
    "robotics",
    "biology",
    "climate",
    "legal",
    "support",
    "marketing",
    "sales",
    "people",
    "security",
    "infra",
    "data",
    "analytics",
    "edge",
    "mobile",
    "devices",
];
pub(crate) const PRODUCT_LINES: &[&str] = &[
    "chat",
    "chat-enterprise",
    "developer-tools",
    "search",
    "ads",
    "voice",
    "research",
    "media",
    "productivity",
    "commerce",
    "platform",
    "science",
];
pub(crate) const NS_SUFFIXES: &[&str] = &["prod", "staging", "dev", "batch", "eval"];
pub(crate) const ZONES: &[&str] = &["us-west-2a", "us-west-2b", "us-west-2c", "us-west-2d"];
/// (product label, instance type, GPU memory MiB, cpu, memory Ki, weight %)
pub(crate) const GPU_PRODUCTS: &[(&str, &str, u32, u32, u64, usize)] = &[
    (
        "NVIDIA-H100-80GB-HBM3",
        "p5.48xlarge",
        81_559,
        192,
        2_097_152_000,
        50,
    ),
    (
        "NVIDIA-H200",
        "p5en.48xlarge",
        143_771,
        192,
        2_097_152_000,
        25,
    ),
    (
        "NVIDIA-A100-SXM4-80GB",
        "p4de.24xlarge",
        81_920,
        96,
        1_207_959_552,
        15,
    ),
    (
        "NVIDIA-B200",
        "p6-b200.48xlarge",
        183_359,
        192,
        2_097_152_000,
        10,
    ),
];
pub(crate) const MODELS: &[(&str, &str)] = &[
    ("llama-70b", "meta-llama/Llama-3.3-70B-Instruct"),
    ("llama-8b", "meta-llama/Llama-3.1-8B-Instruct"),
    ("qwen3-32b", "Qwen/Qwen3-32B"),
    ("deepseek-r1", "deepseek-ai/DeepSeek-R1"),
    (
        "mistral-24b",
        "mistralai/Mistral-Small-3.1-24B-Instruct-2503",
    ),
    ("gemma-27b", "google/gemma-3-27b-it"),
];
/// (app, image, component)
pub(crate) const GPU_APPS: &[(&str, &str, &str)] = &[
    ("vllm", "vllm/vllm-openai:v0.9.1", "inference"),
    (
        "triton",
        "nvcr.io/nvidia/tritonserver:25.05-trtllm-python-py3",
        "inference",
    ),
    ("sglang", "lmsysorg/sglang:v0.4.7-cu126", "inference"),
    (
        "tei",
        "ghcr.io/huggingface/text-embeddings-inference:1.7",
        "embedding",
    ),
    ("trainer", "nvcr.io/nvidia/pytorch:25.05-py3", "training"),
    ("finetune", "nvcr.io/nvidia/nemo:25.04", "training"),
];
pub(crate) const CPU_APPS: &[(&str, &str, &str)] = &[
    ("gateway", "envoyproxy/envoy:v1.34.1", "gateway"),
    (
        "api",
        "registry.internal/platform/api-server:2025.05.3",
        "api",
    ),
    ("redis", "redis:7.4.3", "cache"),
    ("etl", "apache/spark:3.5.5", "batch"),
    ("web", "nginx:1.27.5", "web"),
    (
        "worker",
        "registry.internal/platform/queue-worker:1.18.0",
        "worker",
    ),
];
pub(crate) const WORDS: &[&str] = &[
    "chat",
    "search",
    "rank",
    "embed",
    "summarize",
    "moderation",
    "voice",
    "vision",
    "code",
    "agent",
    "eval",
    "batch",
    "rerank",
    "ingest",
    "router",
    "tutor",
];
pub(crate) const GPU_COUNTS: &[u32] = &[1, 1, 1, 1, 1, 2, 2, 4, 8, 8];
pub(crate) const DYNAMO_IMAGE: &str = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.4.1";
pub(crate) const DYNAMO_API: &str = "nvidia.com/v1alpha1";
