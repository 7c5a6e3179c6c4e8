//! What the planner takes and gives: jobs and a pool in, settings for how to plan, and the plan
//! out (starts, peaks, the smallest pool, misses). Plain data that any source of jobs can build
//! and the renderers read; the planning itself is the parent module's.

use serde::Serialize;

use crate::util::date::Timestamp;

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

/// What the plan optimises after meeting every deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Objective {
    /// Finish all work as early as possible (slack for retries).
    Earliest,
    /// The lowest peak of GPUs in use, then as early as possible.
    MinPeak,
}

impl Objective {
    pub fn name(self) -> &'static str {
        match self {
            Objective::Earliest => "earliest",
            Objective::MinPeak => "min-peak",
        }
    }
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

/// The plan: the JSON `plan` object (field names fixed by the product spec).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    pub objective: Objective,
    /// GPUs in the pool.
    pub pool: u64,
    /// Every deadline is met within the pool.
    pub feasible: bool,
    /// Most GPUs in use at once in this plan.
    pub peak: u64,
    /// GPUs in use if every job started now (or at its earliest start) at once.
    pub peak_all_at_once: u64,
    /// The smallest pool (GPUs, nodes as large as the largest given) that meets every deadline;
    /// `null` when no pool can (a job cannot finish in time even started at its earliest).
    pub min_pool: Option<u64>,
    pub gpu_hours: f64,
    /// When the last job ends; `null` without jobs.
    pub finish: Option<Timestamp>,
    /// A proven bound on the objective: the earliest possible finish (`earliest`) or the lowest
    /// possible peak in GPUs (`min-peak`).
    pub lower_bound: Option<Bound>,
    /// How far the plan may be from the best one: (value − bound) / value, 0 when optimal. The
    /// value of `earliest` is the time from now to the finish.
    pub gap: f64,
    /// Every planned job, by start, then name.
    pub jobs: Vec<PlannedJob>,
    /// Jobs that miss their deadline in this plan, latest first.
    pub missed: Vec<Missed>,
    /// The plan is proven optimal (the search completed).
    #[serde(skip)]
    pub exact: bool,
    /// Slot length in seconds.
    #[serde(skip)]
    pub slot_s: u64,
    #[serde(skip)]
    pub now: Option<Timestamp>,
    /// GPUs in use per slot from `now` to the finish.
    #[serde(skip)]
    pub profile: Vec<u64>,
    /// Why `min_pool` is unknown.
    #[serde(skip)]
    pub min_pool_why: Option<String>,
}

/// A bound in the objective's unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Bound {
    /// No plan finishes before this.
    Finish(Timestamp),
    /// No plan meeting every deadline uses fewer GPUs at once.
    Gpus(u64),
}

/// One job's place in the plan.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlannedJob {
    pub namespace: String,
    pub kind: String,
    pub name: String,
    /// GPUs it holds while it runs.
    pub gpus: u64,
    pub start: Timestamp,
    pub end: Timestamp,
    pub deadline: Option<Timestamp>,
    /// Seconds between its end and its deadline (negative: late); `null` without a deadline.
    pub slack_s: Option<i64>,
    #[serde(skip)]
    pub source: Option<String>,
    /// The slots it runs in, as (first slot, slots) runs: one run unless it was interrupted.
    #[serde(skip)]
    pub runs: Vec<(u64, u64)>,
}

/// A job that misses its deadline.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Missed {
    pub namespace: String,
    pub kind: String,
    pub name: String,
    /// Seconds late; `null` when it cannot run at all in the pool (see the reason).
    pub late_s: Option<i64>,
    #[serde(skip)]
    pub reason: Option<String>,
}
