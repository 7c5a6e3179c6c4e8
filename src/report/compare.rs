//! Two configurations side by side (`gpuledger cost --compare A B`): two workloads serving the same
//! traffic, or two windows of one workload around a change. Each side's cost, verified outcomes,
//! cost per 1,000 verified with its interval, latency against the objective and deadline
//! attainment, and a one-line verdict on whether the difference is real at this sample size.
//!
//! Additive to schema v1: `compare` appears in the `cost` report of a comparison. Every figure that
//! cannot be known is `null` with its reason under `unknown`, keyed by the field's name.

use serde::Serialize;

use super::deadlines::Attainment;
use super::envelope::Unknown;
use super::headroom::LatencyNow;

#[derive(Debug, Clone, Serialize)]
pub struct Compare {
    pub a: Side,
    pub b: Side,
    /// One line: which keeps outcomes at less cost and whether the intervals overlap, or why the
    /// two cannot be told apart (yet).
    pub verdict: String,
    /// Whether the difference in cost per 1,000 verified outcomes is real at this sample size;
    /// `null` when either side's figure is unknown or a side is unsuitable.
    pub distinguishable: Option<bool>,
    /// The label of the side that keeps outcomes at less cost, when that is known.
    pub cheaper: Option<String>,
    /// 1 − cheaper / dearer cost per 1,000 verified outcomes (0–1), when both are known.
    pub saving: Option<f64>,
}

/// One configuration over its window.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Side {
    /// `A`, `B`, or the label given (`before=…`).
    pub label: String,
    /// `namespace/Kind/name`.
    pub workload: String,
    pub window_start: String,
    pub window_end: String,
    pub window_hours: f64,
    pub total_cost: Option<f64>,
    pub cost_per_hour: Option<f64>,
    pub results: Option<f64>,
    pub verified_outcomes: Option<f64>,
    pub pass_rate: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sample: Option<u64>,
    pub quality_threshold: Option<f64>,
    pub suitable: Option<bool>,
    pub cost_per_1000: Option<f64>,
    /// The Wilson 95% interval of `cost_per_1000` when correctness was sampled.
    pub cost_per_1000_interval: Option<[f64; 2]>,
    /// Each bound of the latency objective against the workload's histograms over the window.
    pub latency: Vec<LatencyNow>,
    /// Runs with a deadline in the window; `null` for work that declares none.
    pub deadline_attainment: Option<Attainment>,
    pub unknown: Unknown,
    /// Why a figure covers less than its window (`total_cost`: OpenCost's answer covers part of
    /// it), as the cost section says.
    #[serde(default, skip_serializing_if = "Unknown::is_empty")]
    pub partial: Unknown,
}
