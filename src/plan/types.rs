//! What the planner takes: jobs and a pool, and settings for how to plan. The plan it gives (starts,
//! peaks, the smallest pool, misses) is a report (`crate::report::plan`), re-exported here. Plain
//! data that any source of jobs can build; the planning itself is the parent module's.

pub use crate::report::plan::{Bound, Missed, Objective, Plan, PlannedJob};

/// Steps of each search (the plan's, then the smallest pool's): a fraction of a second each in a
/// release build.
pub const DEFAULT_BUDGET: u64 = 400_000;

/// One batch job to plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    pub namespace: String,
    pub kind: String,
    pub name: String,
    pub gpus_per_pod: u64,
    pub pods: u64,
    /// Expected run time on the declared GPUs, in seconds.
    pub runtime_s: u64,
    /// Not before this instant (unix seconds); before `now` means "ready now".
    pub earliest_start: i64,
    /// Results are needed by this instant (unix seconds).
    pub deadline: Option<i64>,
    /// May be stopped and resumed (planned in pieces of whole slots).
    pub interruptible: bool,
    /// Where the job was declared (`jobs.yaml:12`), for people.
    pub source: Option<String>,
}

impl Job {
    /// GPUs the job holds while it runs (saturating: an absurd figure stays absurd, never wraps).
    pub fn gpus(&self) -> u64 {
        self.gpus_per_pod.saturating_mul(self.pods)
    }

    /// `Job ml/train`, as gpuledger names objects.
    pub fn label(&self) -> String {
        format!("{} {}/{}", self.kind, self.namespace, self.name)
    }
}

/// The GPUs the plan may use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pool {
    /// GPUs in total.
    pub gpus: u64,
    /// GPUs of each placeable node; a pod must fit on one. Empty: the pool is one node.
    pub node_sizes: Vec<u64>,
}

/// How to plan: the objective, the time grid and the clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    pub objective: Objective,
    /// Slot length in seconds (at least 1).
    pub slot_s: u64,
    /// Unix seconds; slot 0 starts here.
    pub now: i64,
    /// Branch-and-bound nodes the exact search may visit before it settles for the heuristic's
    /// plan and its proven bound.
    pub budget: u64,
}

impl Settings {
    pub fn new(objective: Objective, slot_s: u64, now: i64) -> Settings {
        Settings {
            objective,
            slot_s,
            now,
            budget: DEFAULT_BUDGET,
        }
    }
}
