//! The stagger plan as a report: which job starts when within the pool, the peak against starting
//! everything as soon as it may, the smallest pool that meets every deadline, and what misses. The
//! planner (`crate::plan`) fills it; field names are fixed by the product spec.

use serde::Serialize;

use super::envelope::Kind;
use crate::util::date::Timestamp;

/// What `gpuledger plan --format json` writes.
#[derive(Debug, Clone, Serialize)]
pub struct PlanReport {
    pub schema: &'static str,
    /// Always [`Kind::Plan`].
    pub kind: Kind,
    pub sources: Vec<String>,
    pub plan: Plan,
    /// How the last runs of the cluster's batch work with a deadline did (`plan --pending`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deadlines: Option<super::deadlines::Deadlines>,
}

/// What the plan optimises after meeting every deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
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
    /// Most GPUs in use at once if every job started as soon as it may (its earliest start, or
    /// now) and ran its runtime: the seed's "starting all four jobs immediately".
    pub peak_all_at_once: u64,
    /// The smallest pool (GPUs, on nodes at their real size) that meets every deadline; `null`
    /// when no pool can (a job cannot finish in time even started at its earliest, or has a pod
    /// larger than every node).
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

impl Plan {
    /// Jobs given: planned, and missed because they cannot run at all.
    pub fn job_count(&self) -> usize {
        self.jobs.len() + self.missed.iter().filter(|m| m.late_s.is_none()).count()
    }

    /// The one-line verdict: fits staggered, or how many miss and what pool would meet every
    /// deadline. No job, and one job, read as plain sentences.
    pub fn verdict(&self) -> String {
        let p = self;
        if p.job_count() == 0 {
            return "Nothing to plan: no batch job was given.".into();
        }
        if p.job_count() == 1 {
            return self.one_job();
        }
        let finish = p
            .finish
            .map_or_else(|| "nothing to run".to_string(), Timestamp::human);
        if p.feasible {
            return format!(
                "Fits the pool staggered: peak {} of {} GPUs, done {finish}; started as soon as each may, it needs {}.",
                p.peak, p.pool, p.peak_all_at_once
            );
        }
        let n = p.missed.len();
        let jobs = if n == 1 {
            "1 job still misses its deadline".to_string()
        } else {
            format!("{n} jobs still miss their deadline")
        };
        match p.min_pool {
            Some(m) => format!(
                "Staggered, {jobs} on {} GPUs; {m} GPUs would meet all: buying is needed.",
                p.pool
            ),
            None => format!(
                "Staggered, {jobs} on {} GPUs, and no pool meets all: {}.",
                p.pool,
                p.min_pool_why
                    .as_deref()
                    .unwrap_or("more GPUs would not help")
            ),
        }
    }
}

impl Plan {
    /// The verdict on a plan of one job: whether it fits, when it runs, or what it would need.
    fn one_job(&self) -> String {
        let p = self;
        let buy = |what: &str| match p.min_pool {
            Some(m) => format!("{m} GPUs would meet {what}: buying is needed."),
            None => format!(
                "no pool meets {what}: {}.",
                p.min_pool_why
                    .as_deref()
                    .unwrap_or("more GPUs would not help")
            ),
        };
        if let Some(m) = p.missed.iter().find(|m| m.late_s.is_none()) {
            return format!(
                "{} {}/{} cannot run on the pool's {} GPUs: {}; {}",
                m.kind,
                m.namespace,
                m.name,
                p.pool,
                m.reason.as_deref().unwrap_or("it does not fit"),
                buy("its deadline")
            );
        }
        let Some(j) = p.jobs.first() else {
            return "Nothing to plan: no batch job was given.".into();
        };
        let name = format!("{} {}/{}", j.kind, j.namespace, j.name);
        let when = format!(
            "{} of {} GPUs from {} to {}",
            j.gpus,
            p.pool,
            j.start.human(),
            j.end.human()
        );
        match j.slack_s {
            Some(s) if s < 0 => format!(
                "{name} misses its deadline by {} on {when}; {}",
                span(-s),
                buy("it")
            ),
            Some(s) => format!(
                "{name} fits the pool: {when}, {} before its deadline.",
                span(s)
            ),
            None => format!("{name} fits the pool: {when} (no deadline)."),
        }
    }
}

/// `2h`, `45m`, `1d3h`.
fn span(secs: i64) -> String {
    let s = secs.unsigned_abs();
    let (d, h, m) = (s / 86_400, s % 86_400 / 3600, s % 3600 / 60);
    match (d, h, m) {
        (0, 0, m) => format!("{m}m"),
        (0, h, 0) => format!("{h}h"),
        (0, h, m) => format!("{h}h{m}m"),
        (d, h, _) => format!("{d}d{h}h"),
    }
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
