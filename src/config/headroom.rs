//! `headroom:` of `.gpuledger.yaml`: when a load-test run counts, what is near capacity, and which
//! workloads' tested capacity may be scaled by their live replicas.

use serde::{Deserialize, Serialize};

use super::rules::MatchSpec;

/// `headroom:`. A load test's capacity is never scaled unless a `scale` rule says so.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct HeadroomConfig {
    /// A run counts only when at most this share of its requests failed (0–1).
    pub error_limit: f64,
    /// Headroom below this share of the tested capacity is "near capacity" (0–1).
    pub near_capacity: f64,
    /// Workloads whose tested capacity scales with their replicas: the first matching rule wins.
    pub scale: Vec<ScaleRule>,
}

impl Default for HeadroomConfig {
    fn default() -> Self {
        HeadroomConfig {
            error_limit: 0.01,
            near_capacity: 0.2,
            scale: Vec::new(),
        }
    }
}

/// `headroom.scale[]`: `scale: per-replica` lets the capacity a load test measured at N replicas be
/// taken as N-th per replica and multiplied by the live replicas. The report says when it did.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ScaleRule {
    #[serde(rename = "match")]
    pub matches: MatchSpec,
    pub scale: Scale,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scale {
    PerReplica,
}
