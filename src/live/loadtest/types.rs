//! The one shape every load-test format is read into: what was tested, and one run per offered
//! load. Latencies are kept in milliseconds under `<metric>_p<percentile>` (`ttft_p95`), with the
//! metrics of the latency objective: `ttft`, `itl`, `tpot`, `e2e`.

use std::collections::BTreeMap;

use serde::Serialize;

/// Which tool wrote the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// `vllm bench serve --save-result` (and `bench sweep serve_sla`).
    VllmBench,
    /// AIPerf's `profile_export_aiperf.json` or GenAI-Perf's `profile_export_genai_perf.json`.
    Aiperf,
    /// GuideLLM's `benchmarks.json`.
    Guidellm,
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Format::VllmBench => "vLLM bench serve",
            Format::Aiperf => "AIPerf/GenAI-Perf",
            Format::Guidellm => "GuideLLM",
        })
    }
}

/// The load a run offered.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind", content = "value")]
pub enum Offered {
    /// Requests per second (open loop).
    Rate(f64),
    /// Concurrent requests (closed loop).
    Concurrency(u64),
    /// As fast as possible (`request_rate: "inf"`, GuideLLM `throughput`).
    Unbounded,
    Unknown,
}

impl std::fmt::Display for Offered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Offered::Rate(r) => write!(f, "rate {r} req/s"),
            Offered::Concurrency(c) => write!(f, "concurrency {c}"),
            Offered::Unbounded => f.write_str("unbounded rate"),
            Offered::Unknown => f.write_str("offered load not recorded"),
        }
    }
}

/// One run at one offered load.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Run {
    pub offered: Offered,
    /// Completed requests per second over the run: the sustained rate.
    pub achieved_rps: Option<f64>,
    pub completed: Option<f64>,
    /// Failed requests; `None` when the file does not say.
    pub failed: Option<f64>,
    /// `ttft_p95` → milliseconds (see [`key`]).
    pub latency_ms: BTreeMap<String, f64>,
}

impl Run {
    /// Failed / (completed + failed); `None` when either is unknown or nothing ran.
    pub fn error_share(&self) -> Option<f64> {
        let (c, f) = (self.completed?, self.failed?);
        let total = c + f;
        (total > 0.0).then(|| f / total)
    }
}

/// What the load test ran against, where the file records it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Tested {
    pub model: Option<String>,
    pub gpu_type: Option<String>,
    pub gpus_per_replica: Option<u64>,
    pub replicas: Option<u64>,
    /// Serving settings the file records (`tensor_parallel_size`, `max_num_seqs`, …).
    pub settings: BTreeMap<String, String>,
}

/// A load-test result: the file, its format, what was tested and its runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoadTest {
    pub file: String,
    pub format: Format,
    pub tested: Tested,
    pub runs: Vec<Run>,
}

/// vLLM `--metadata` keys (and the same names elsewhere) that are serving settings: a change in
/// any of them changes what one replica can serve.
pub const SETTINGS: [&str; 10] = [
    "tensor_parallel_size",
    "pipeline_parallel_size",
    "data_parallel_size",
    "max_num_seqs",
    "max_num_batched_tokens",
    "max_model_len",
    "quantization",
    "dtype",
    "kv_cache_dtype",
    "enable_prefix_caching",
];

/// The key of [`Run::latency_ms`]: `ttft_p95`, `ttft_p99.9`.
pub(super) fn key(metric: &str, percentile: f64) -> String {
    format!("{metric}_p{percentile}")
}
