//! `cost:` of `.gpuledger.yaml`: how OpenCost's idle cost and the shared namespaces are spread,
//! the costs OpenCost does not see, and how many reviewed results a cost per outcome needs. The
//! figures are checked when the file is read (the `load` module): an outside cost is counted once,
//! and never below zero.

use serde::{Deserialize, Serialize};

/// `cost:`: the rules for idle, shared and outside costs, and the sample a point estimate needs.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct CostConfig {
    /// Namespaces whose cost serves everyone (`kube-system`, `dynamo-system`): spread over the
    /// other workloads and namespaces in proportion to their GPU-hours.
    pub shared_namespaces: Vec<String>,
    /// OpenCost's idle cost: `spread` over the allocations in proportion to their cost of each
    /// resource (GPU idle by GPU cost, CPU by CPU, RAM by RAM: OpenCost's own `shareIdle`
    /// weighting), or kept `separate` as its own line.
    pub idle: IdleRule,
    /// Below this many reviewed results a cost per outcome is given as its interval only.
    pub min_sample: u64,
    /// Costs OpenCost does not see (a hosted model API, a labelling vendor), per hour, each
    /// assigned to one workload or one tenant and counted there once.
    pub external: Vec<ExternalCost>,
}

impl Default for CostConfig {
    fn default() -> Self {
        CostConfig {
            shared_namespaces: Vec::new(),
            idle: IdleRule::Spread,
            min_sample: 30,
            external: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum IdleRule {
    Spread,
    Separate,
}

/// A cost outside OpenCost: `name`, `per_hour`, and `workload` (`namespace/Kind/name`) or
/// `tenant`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ExternalCost {
    pub name: String,
    pub per_hour: f64,
    #[serde(default)]
    pub workload: Option<String>,
    #[serde(default)]
    pub tenant: Option<String>,
}
