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
    /// How long the free placeable GPUs last at the measured growth, for the fleet and per tenant.
    pub runway: Runway,
}

/// When the free placeable GPUs run out at the growth measured over the window: for the fleet
/// (every tenant's change together) and per tenant (as if that tenant alone kept growing at its
/// rate). Linear on purpose: it says what the window's growth implies, not a forecast.
#[derive(Debug, Clone, Serialize)]
pub struct Runway {
    /// Free GPUs on placeable nodes now (allocatable minus requested, per node); `null` when
    /// unknown ([`Runway::unknown`] says why).
    pub free: Option<u64>,
    /// Where `free` came from: the live state, or gpuledger's own series in Prometheus.
    pub free_source: Option<String>,
    /// Why the runway is unknown: no free figure, or no trend.
    pub unknown: Option<String>,
    pub fleet: RunwayRow,
    /// Per tenant, in the order of [`Trend::tenants`].
    pub tenants: Vec<RunwayRow>,
}

/// One runway: the growth it is measured at and when the free GPUs run out at that growth.
#[derive(Debug, Clone, Serialize)]
pub struct RunwayRow {
    /// The tenant, or `fleet`.
    pub name: String,
    /// GPUs a week over the window; `null` when the trend is unknown.
    pub per_week: Option<f64>,
    pub verdict: RunwayVerdict,
    /// Weeks until the free GPUs are gone at `per_week` (0 when none are free); `null` unless the
    /// verdict is `runs-out`.
    pub weeks: Option<f64>,
    /// When that is (unix seconds: the window's end plus `weeks`); `null` unless `runs-out`.
    pub runs_out: Option<i64>,
}

/// What the growth means for the free GPUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunwayVerdict {
    /// Growing: the free GPUs run out after `weeks`.
    RunsOut,
    /// Not growing over the window (flat or shrinking): the free GPUs do not run out at this rate.
    NotGrowing,
    /// The growth or the free GPUs are unknown.
    Unknown,
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
