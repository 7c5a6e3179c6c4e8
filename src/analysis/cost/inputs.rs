//! What the cost section is computed from (the window, OpenCost's answer, outcome records,
//! counters), and the arithmetic every part shares: sums where any unknown part makes the whole
//! unknown, and the order rows are shown in.

use std::collections::BTreeMap;

use crate::live::opencost::{CostData, OpenCostError, Window};
use crate::live::outcomes::{CounterError, OutcomeFile};

/// What the cost section is computed from.
#[derive(Debug, Clone)]
pub struct CostInputs<'a> {
    pub window: Window,
    /// OpenCost's answer; `None` when no OpenCost was given.
    pub opencost: Option<&'a Result<CostData, OpenCostError>>,
    pub records: Option<&'a OutcomeFile>,
    /// The increase of each `gpuledger.io/outcomes-metric` selector over the window.
    pub counters: &'a BTreeMap<String, Result<f64, CounterError>>,
    /// Where the counters were read (the Prometheus URL); `None` without one.
    pub counter_source: Option<&'a str>,
}

/// `a + b`, unknown when either is.
pub(super) fn plus(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    Some(a? + b?)
}

/// Largest first; unknown last.
pub(super) fn by_cost(a: Option<f64>, b: Option<f64>) -> std::cmp::Ordering {
    match (a, b) {
        (Some(x), Some(y)) => y.total_cmp(&x),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    }
}
