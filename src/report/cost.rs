//! The cost section of a report: what the GPUs cost over a window, per workload, tenant and
//! product line, and what they produced: verified outcomes, cost per 1,000 of them with the
//! uncertainty of a sampled review, and whether the work meets its quality threshold at all.
//!
//! Additive to schema v1 (`cost` is absent from reports made without cost inputs). Money is in
//! the currency OpenCost is configured with. Every figure that cannot be known is `null`, with the
//! reason under `unknown` beside it, keyed by the field's name.

use serde::{Deserialize, Serialize};

use super::envelope::Unknown;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Cost {
    /// The window costs and outcomes are counted over, RFC 3339 UTC.
    pub window_start: String,
    pub window_end: String,
    pub window_hours: f64,
    /// When OpenCost's answer covers less of the window than asked (a store that holds only the
    /// last hours, a missing step): the hours it covers and their share of the window. Cost,
    /// outcomes and rates are then all counted over those hours; `partial.total_cost` says so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub covered_hours: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub covered_share: Option<f64>,
    /// Why a figure covers less than it says (`total_cost`: only part of the window).
    #[serde(default, skip_serializing_if = "Unknown::is_empty")]
    pub partial: Unknown,
    /// Where the cost came from (the OpenCost URL), when it was asked.
    pub source: Option<String>,
    /// Where the outcomes came from: the records file, the Prometheus of the counters.
    pub outcome_sources: Vec<String>,
    /// How idle, shared and outside costs were assigned, one sentence each: every report states
    /// its rule.
    pub rules: Vec<String>,
    /// Σ cost over the window (attributed, idle, shared and outside costs), `null` when unknown.
    pub total_cost: Option<f64>,
    /// OpenCost's `__idle__` cost over the window.
    pub idle_cost: Option<f64>,
    /// The cost of the shared namespaces, spread over the rest.
    pub shared_cost: Option<f64>,
    /// Costs outside OpenCost from the configuration, each counted once.
    pub external_cost: f64,
    /// The part of `external_cost` that names a tenant rather than a workload: in its tenant's row
    /// (and "no product line"), in no workload's.
    #[serde(default)]
    pub tenant_external_cost: f64,
    /// Cost in the total that went to no tenant, product line or workload, each part with why
    /// (idle kept apart, a cost with nothing to spread over, an outside cost naming nobody live).
    /// Σ tenants + Σ unassigned = total, and so for product lines.
    #[serde(default)]
    pub unassigned: Vec<UnassignedCost>,
    /// Σ `unassigned`; `null` when the cost is unknown.
    #[serde(default)]
    pub unassigned_cost: Option<f64>,
    /// What the figures decide: the cheapest and dearest verified outcome, the unsuitable work.
    #[serde(default)]
    pub decision: Decision,
    /// Minimum reviewed sample for a point estimate (below it, only the interval).
    pub min_sample: u64,
    /// Why a figure of the whole section is `null` (`total_cost`: OpenCost failed).
    pub unknown: Unknown,
    /// Lines of the outcome-records file that did not read (`file:line: why`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
    /// Per workload (`namespace/Kind/name`), by total cost.
    pub workloads: Vec<CostRow>,
    /// Per tenant, by total cost.
    pub tenants: Vec<CostRow>,
    /// Per product line (`(none)` for none), by total cost.
    pub product_lines: Vec<CostRow>,
    /// Cost OpenCost gave for pods of no live workload (finished jobs, pods without GPUs),
    /// per namespace; counted in their tenants.
    pub other: Vec<OtherCost>,
    /// OpenCost's cost per model (`/inferenceCost`), when it serves it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inference: Vec<InferenceRow>,
    /// Why there is no inference cost: not served, or failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inference_unknown: Option<String>,
}

/// One workload, tenant or product line.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CostRow {
    /// `namespace/Kind/name`, the tenant, or the product line.
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub product_line: Option<String>,
    /// GPUs requested now, and busy over the window (DCGM); `null` when unknown.
    pub gpus_requested: u64,
    pub gpus_busy: Option<u64>,
    /// Everything assigned to it over the window: its own cost, its share of idle and shared
    /// costs, and outside costs.
    pub total_cost: Option<f64>,
    pub breakdown: Breakdown,
    pub gpu_hours: Option<f64>,
    /// Final results delivered in the window (records only).
    pub results: Option<f64>,
    /// Results that met the quality threshold and the deadline, in the window: 0 for a workload
    /// below its quality threshold (unsuitable), whatever its results passed.
    pub verified_outcomes: Option<f64>,
    /// Results that passed evaluation by the deadline (records only), before the workload's
    /// quality threshold is applied: equal to `verified_outcomes` unless it is unsuitable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passing: Option<f64>,
    /// The 95% interval of `verified_outcomes` when correctness was sampled.
    pub verified_interval: Option<[f64; 2]>,
    pub verified_per_hour: Option<f64>,
    /// Cost per 1,000 verified outcomes; `null` below the minimum sample (the interval stays).
    pub cost_per_1000: Option<f64>,
    /// Its Wilson 95% interval, `[low, high]`, when correctness was sampled.
    pub cost_per_1000_interval: Option<[f64; 2]>,
    /// Share of results that passed: verified / results, or passed / reviewed for a sample.
    pub pass_rate: Option<f64>,
    /// The reviewed sample behind the pass rate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sample: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sample_passed: Option<u64>,
    /// The workload's quality threshold (intent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quality_threshold: Option<f64>,
    /// False when the pass rate is below the quality threshold, whatever the cost.
    pub suitable: Option<bool>,
    /// Where its outcomes came from (`records`, `counter`), workloads only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome_source: Option<String>,
    /// Why a figure is `null`, by field.
    pub unknown: Unknown,
}

/// A cost by where it came from; `null` when OpenCost did not give it.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
pub struct Breakdown {
    pub gpu: Option<f64>,
    pub cpu: Option<f64>,
    pub ram: Option<f64>,
    pub pv: Option<f64>,
    pub network: Option<f64>,
    pub load_balancer: Option<f64>,
    /// Its share of OpenCost's idle cost.
    pub idle: Option<f64>,
    /// Its share of the shared namespaces' cost.
    pub shared: Option<f64>,
    /// Costs outside OpenCost (the configuration), and OpenCost's own external cost.
    pub external: Option<f64>,
}

/// OpenCost's cost of a namespace's pods that belong to no live workload.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OtherCost {
    pub namespace: String,
    pub tenant: String,
    pub total_cost: Option<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct InferenceRow {
    pub model: String,
    pub namespace: Option<String>,
    pub cost_basis: Option<String>,
    pub total_cost: Option<f64>,
    pub total_tokens: Option<f64>,
    pub cost_per_million_tokens: Option<f64>,
}

/// Cost in the total that no row carries, and why.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct UnassignedCost {
    pub what: String,
    pub cost: Option<f64>,
}

/// The headline's decision over the workloads shown: which verified outcome is cheapest and
/// dearest (suitable work with a known cost per 1,000), which work is unsuitable whatever it costs,
/// and which has no known cost per verified outcome.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Decision {
    pub cheapest: Option<Priced>,
    pub dearest: Option<Priced>,
    /// Workloads below their quality threshold.
    pub unsuitable: Vec<String>,
    /// Workloads, not unsuitable, whose cost per 1,000 verified outcomes is unknown.
    pub unpriced: Vec<String>,
}

/// A workload and its cost per 1,000 verified outcomes.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Priced {
    pub workload: String,
    pub cost_per_1000: f64,
}
