//! The trend as a report: GPUs per tenant and product line over a window, read back from
//! Prometheus — start, end, change, rate per week, peak — and where the history came from.

use serde::Serialize;

use super::envelope::Kind;

/// What `gpuledger trend --format json` writes.
#[derive(Debug, Clone, Serialize)]
pub struct TrendReport {
    pub schema: &'static str,
    /// Always [`Kind::Trend`].
    pub kind: Kind,
    pub sources: Vec<String>,
    pub trend: Trend,
}

/// Where the history came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    /// `gpuledger serve`'s own series.
    Gpuledger,
    /// kube-state-metrics' pod requests, joined with its namespace labels.
    KubeStateMetrics,
}

/// The trend over one window.
#[derive(Debug, Clone, Serialize)]
pub struct Trend {
    pub source: Source,
    /// How the source was read, in a sentence.
    pub source_note: String,
    /// The steps asked for: `start + k × step` up to `end` (unix seconds).
    pub start: i64,
    pub end: i64,
    pub step_s: u64,
    /// The steps with data (see the module's note), oldest first.
    pub covered: Vec<i64>,
    pub tenants: Vec<TrendRow>,
    pub product_lines: Vec<TrendRow>,
    /// The tenant whose GPUs grew fastest per week, when any grew.
    pub fastest: Option<String>,
    /// Why there is no trend (no history, a single step); `None` when there is one.
    pub unknown: Option<String>,
    /// Why the tenants' busy GPUs are unknown (no GPU activity in the source); `None` when known.
    /// Product lines carry no busy figures: gpuledger exports busy GPUs per tenant.
    pub busy_unknown: Option<String>,
}

/// One tenant's or product line's GPUs over the window.
#[derive(Debug, Clone, Serialize)]
pub struct TrendRow {
    pub name: String,
    /// GPUs at the first and last covered step.
    pub start: Option<f64>,
    pub end: Option<f64>,
    pub change: Option<f64>,
    /// `change` over the covered span, per 7 days.
    pub per_week: Option<f64>,
    pub peak: Option<f64>,
    /// Busy GPUs (DCGM, as gpuledger exported them) at the first and last step with busy data;
    /// `null` when unknown ([`Trend::busy_unknown`] says why).
    pub busy_start: Option<f64>,
    pub busy_end: Option<f64>,
    /// GPUs at each covered step (parallel to [`Trend::covered`]).
    pub points: Vec<f64>,
}
