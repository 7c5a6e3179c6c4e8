//! Deadline attainment: for batch work with a declared deadline (`gpuledger.io/deadline`), the share
//! of its runs that finished by it, per workload and per tenant, with the runs behind each figure.
//!
//! Additive to schema v1: `deadlines` appears in the reports of `cost`, `drift` and `plan` when
//! any workload declares a deadline or a run with one was read. A workload that declares a deadline
//! but has no run read has `attainment: null` with why under `unknown`: never 0%.

use serde::Serialize;

use super::envelope::Unknown;

/// Deadline attainment of the batch work that declares a deadline.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Deadlines {
    /// Where runs were read: the live state's Jobs, kube-state-metrics over a window.
    pub sources: Vec<String>,
    /// Runs are counted when their deadline falls in this window (RFC 3339 UTC), when one applies
    /// (`cost --compare`); without one, every run read is counted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window_start: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window_end: Option<String>,
    /// Per workload (`namespace/Kind/name`; a CronJob's runs are the CronJob's), worst first.
    pub workloads: Vec<Attainment>,
    /// Per tenant, worst first.
    pub tenants: Vec<Attainment>,
    /// Why a source of runs is unknown (`kube_state_metrics`: the query failed).
    pub unknown: Unknown,
}

/// The runs of one workload or tenant against their deadlines.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Attainment {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// Runs whose outcome is known: finished (or failed), or still running past the deadline.
    pub runs: u64,
    /// Finished successfully by the deadline.
    pub met: u64,
    /// Finished after it, failed, or still running past it.
    pub missed: u64,
    /// met / runs; `null` when no run was read (`unknown.attainment` says why).
    pub attainment: Option<f64>,
    /// The Wilson 95% interval of `attainment`, `[low, high]`.
    pub interval: Option<[f64; 2]>,
    /// The last runs, newest deadline first (at most [`LAST_RUNS`]).
    pub last: Vec<RunRow>,
    pub unknown: Unknown,
}

/// How many of a workload's runs are listed.
pub const LAST_RUNS: usize = 5;

/// One run of a batch workload against its deadline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunRow {
    /// `namespace/name` of the Job.
    pub job: String,
    /// RFC 3339 UTC.
    pub deadline: String,
    /// When it finished successfully; `null` when it failed or is still running.
    pub finished: Option<String>,
    pub outcome: RunOutcome,
    /// Seconds after the deadline it finished (or until now, still running); `null` when met or
    /// failed.
    pub late_s: Option<i64>,
    /// `live` (a Job in the live state) or `kube-state-metrics`.
    pub source: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunOutcome {
    /// Finished after its deadline.
    Late,
    /// Failed: no result, whenever it ended.
    Failed,
    /// Still running, its deadline passed.
    RunningLate,
    /// Finished by its deadline.
    Met,
}

impl std::fmt::Display for RunOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RunOutcome::Late => "late",
            RunOutcome::Failed => "failed",
            RunOutcome::RunningLate => "running past its deadline",
            RunOutcome::Met => "met",
        })
    }
}
