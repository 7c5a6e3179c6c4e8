//! Serving headroom: per serving workload, the capacity a load test measured at its latency objective
//! against the request rate production asks of it.

use serde::{Deserialize, Serialize};

use super::envelope::Unknown;
use crate::workload::WorkloadId;

/// Serving headroom: per serving workload, the capacity a load test measured at its latency
/// objective against the request rate production asks of it.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Headroom {
    /// Where the production rate came from (Prometheus URL, window and step); `null` without one.
    pub production_source: Option<String>,
    /// Why production is unknown for every workload (no Prometheus, or it failed).
    pub production_unknown: Option<String>,
    /// vLLM and Dynamo count a request when it finishes: the rate is a completion rate, which under
    /// overload understates what was asked for.
    pub rate_kind: String,
    /// The rules the verdicts used: a run's error limit and the near-capacity share (0–1).
    pub error_limit: f64,
    pub near_capacity: f64,
    /// By verdict (over first), then namespace, kind and name.
    pub workloads: Vec<HeadroomRow>,
}

/// One serving workload's headroom. `id()` is the key other sections join on.
#[derive(Debug, Clone, Default, Serialize)]
pub struct HeadroomRow {
    pub namespace: String,
    pub api_group: String,
    pub kind: String,
    pub name: String,
    pub tenant: String,
    /// `ttft_p95<=500ms,itl_p95<=50ms`, as the intent declares it.
    pub objective: Option<String>,
    /// `gpuledger.io/load-test`, as written, and the format it was read as.
    pub load_test: Option<String>,
    pub load_test_format: Option<String>,
    /// Requests per second at the objective; `null` when unknown (`unknown.tested_rps` says why).
    pub tested_rps: Option<f64>,
    /// The run it came from (`rate 8 req/s`).
    pub tested_run: Option<String>,
    /// Set when the capacity was scaled by live replicas (`headroom.scale: per-replica`): how.
    pub scaled: Option<String>,
    /// What the load test does not record, or gpuledger does not read, so it could not be checked
    /// against the live workload (`GPU type`, `serving settings`).
    pub unverified: Vec<String>,
    /// The model the live pods serve (from the metrics' model label), when known.
    pub live_model: Option<String>,
    /// `vllm` or `dynamo-frontend`: which counter gave the rate.
    pub production_metric: Option<String>,
    pub production_p95_rps: Option<f64>,
    pub production_peak_rps: Option<f64>,
    /// 1 − production p95 / tested capacity; negative when over.
    pub headroom: Option<f64>,
    pub verdict: HeadroomVerdict,
    /// Why a figure is `null`, keyed by its field (`tested_rps`, `production_p95_rps`, `headroom`).
    pub unknown: Unknown,
    /// Each bound of the objective against production's latency over the window.
    pub latency: Vec<LatencyNow>,
    pub context: ServingContext,
}

impl HeadroomRow {
    pub fn id(&self) -> WorkloadId {
        WorkloadId::new(&self.namespace, &self.api_group, &self.kind, &self.name)
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HeadroomVerdict {
    /// Production p95 above the tested capacity.
    Over,
    /// Headroom below `near_capacity`, or the peak above the capacity.
    NearCapacity,
    Fits,
    /// Capacity or production unknown: `unknown` says why.
    #[default]
    Unknown,
}

impl std::fmt::Display for HeadroomVerdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            HeadroomVerdict::Over => "over",
            HeadroomVerdict::NearCapacity => "near capacity",
            HeadroomVerdict::Fits => "fits",
            HeadroomVerdict::Unknown => "unknown",
        })
    }
}

/// One bound of the latency objective against production over the window.
#[derive(Debug, Clone, Serialize)]
pub struct LatencyNow {
    /// `ttft_p95<=500ms`
    pub bound: String,
    /// From the workload's latency histograms; `null` when it has none.
    pub now_ms: Option<f64>,
    pub met: Option<bool>,
}

/// Context, never capacity: what production looked like over the window.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ServingContext {
    /// Share of the window with requests waiting in vLLM's queue (0–1).
    pub queue_share: Option<f64>,
    /// p95 over the window of the fullest pod's KV-cache use (0–1).
    pub kv_cache_p95: Option<f64>,
    pub preemptions_per_min: Option<f64>,
    pub ttft_p95_ms: Option<f64>,
    pub itl_p95_ms: Option<f64>,
}

/// Serving headroom at a change's head (`check.headroom[]`): a serving workload the change
/// reshapes (replicas, GPUs per replica, GPU model, engine flags), the capacity of the load test
/// the head names, held against the head's configuration, against production's rate now. Field
/// names as in [`HeadroomRow`].
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct HeadroomChange {
    /// `namespace/Kind/name`.
    pub workload: String,
    pub namespace: String,
    pub kind: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<String>,
    pub tenant: String,
    /// The head's shape (`main 2×8 = 16`), and the base's.
    pub shape: String,
    pub shape_base: Option<String>,
    /// `gpuledger.io/load-test` at the head, as written, and the format it was read as.
    pub load_test: Option<String>,
    pub load_test_format: Option<String>,
    /// Requests per second at the objective, for the head's configuration; `null` when unknown
    /// (`unknown.tested_rps` says why: no load test, or a stale one).
    pub tested_rps: Option<f64>,
    pub tested_run: Option<String>,
    pub scaled: Option<String>,
    /// What the load test does not record, or the head does not say, so it could not be checked.
    #[serde(default)]
    pub unverified: Vec<String>,
    /// Production's rate now, as `gpuledger headroom` computes it.
    pub production_metric: Option<String>,
    pub production_p95_rps: Option<f64>,
    pub production_peak_rps: Option<f64>,
    /// 1 − production p95 / tested capacity at the head; negative when over.
    pub headroom: Option<f64>,
    pub verdict: HeadroomVerdict,
    /// Why a figure is `null`, keyed by its field (`tested_rps`, `production_p95_rps`, `headroom`).
    #[serde(default)]
    pub unknown: Unknown,
    /// `serve/Deployment/chat: tested 11.9 req/s at the head's main 2×8 = 16, production p95 9.2 —
    /// fits with 23%`.
    pub summary: String,
}
