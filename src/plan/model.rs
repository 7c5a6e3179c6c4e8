//! The planner's discrete model: jobs become tasks on a grid of slots, and a [`Grid`] keeps the
//! free GPUs of every node in every slot while a schedule is built.
//!
//! A task's times are slot indices from `now`. Its last slot is the latest one it may occupy and
//! still end by its deadline; it ends `rem` seconds into that slot (its runtime need not be a
//! whole number of slots). The grid places a task's pods first-fit on the nodes, and a pod stays
//! on its node for the whole run: that is what "a pod must fit on one node" means for work that
//! runs for hours. Everything the search does is place and unplace, so both are exact inverses.

use super::types::{Bound, Job, Missed, Objective, Plan, PlannedJob, Pool, Settings};
use crate::util::date::Timestamp;

/// Grid cells (slots × nodes) the planner may allocate: far more than any real plan needs, and a
/// limit on what a far-future date in the input can cost.
const MAX_CELLS: usize = 20_000_000;

/// One job on the slot grid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Task {
    /// Index into the jobs given.
    pub job: usize,
    /// GPUs per pod.
    pub g: u64,
    pub pods: u64,
    /// GPUs while it runs.
    pub demand: u64,
    /// First slot it may use.
    pub release: usize,
    /// Last slot it may use and still meet its deadline (negative: never); `None` without one.
    pub last: Option<i64>,
    /// Slots it runs.
    pub p: usize,
    pub interruptible: bool,
}

impl Task {
    /// GPU-slots of work.
    pub fn work(&self) -> u128 {
        u128::from(self.demand) * self.p as u128
    }

    /// The last slot it may use when the plan must also end by slot `limit` (exclusive).
    pub fn last_within(&self, limit: usize) -> i64 {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX) - 1;
        self.last.map_or(limit, |l| l.min(limit))
    }

    /// It can meet its deadline at all (started at its release, alone).
    pub fn can_meet(&self) -> bool {
        self.last
            .is_none_or(|l| i64::try_from(self.release + self.p).unwrap_or(i64::MAX) - 1 <= l)
    }
}

/// The GPUs a schedule may use: a total and the nodes' sizes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Shape {
    pub cap: u64,
    pub nodes: Vec<u64>,
    /// The largest node at its real size, before the pool capped it: what a pod must fit on.
    pub largest: u64,
}

/// The jobs on the grid, and the pool.
#[derive(Debug, Clone)]
pub(crate) struct Problem {
    /// Jobs that can run in the pool, in the order given.
    pub tasks: Vec<Task>,
    /// Jobs that cannot run in the pool at all, with why.
    pub unplaced: Vec<(usize, Unplaced)>,
    pub shape: Shape,
    /// Slots the grid holds: enough to run every task one after the other after the last
    /// release.
    pub horizon: usize,
}

impl Problem {
    pub fn new(jobs: &[Job], pool: &Pool, settings: &Settings) -> Problem {
        let slot = settings.slot_s.max(1);
        let slot_i = i64::try_from(slot).unwrap_or(i64::MAX);
        let nodes: Vec<u64> = if pool.node_sizes.is_empty() {
            vec![pool.gpus]
        } else {
            pool.node_sizes
                .iter()
                .map(|n| (*n).min(pool.gpus))
                .filter(|n| *n > 0)
                .collect()
        };
        // Without node sizes only the pool limits a pod.
        let largest = pool.node_sizes.iter().copied().max().unwrap_or(u64::MAX);
        let shape = Shape {
            cap: pool.gpus,
            nodes,
            largest,
        };
        let mut tasks = Vec::new();
        let mut unplaced = Vec::new();
        for (i, j) in jobs.iter().enumerate() {
            let p = usize::try_from(j.runtime_s.div_ceil(slot).max(1)).unwrap_or(usize::MAX);
            let wait = j.earliest_start.saturating_sub(settings.now).max(0);
            let release = usize::try_from(wait.div_euclid(slot_i) + i64::from(wait % slot_i != 0))
                .unwrap_or(usize::MAX);
            // The job ends `rem` seconds into its last slot.
            let rem = i64::try_from(j.runtime_s).unwrap_or(i64::MAX)
                - i64::try_from(p.saturating_sub(1))
                    .unwrap_or(i64::MAX)
                    .saturating_mul(slot_i);
            let last = j.deadline.map(|d| {
                d.saturating_sub(settings.now)
                    .saturating_sub(rem.max(0))
                    .div_euclid(slot_i)
            });
            let task = Task {
                job: i,
                g: j.gpus_per_pod,
                pods: j.pods,
                demand: j.gpus(),
                release,
                last,
                p,
                interruptible: j.interruptible,
            };
            match fits_alone(&task, &shape) {
                Ok(()) => tasks.push(task),
                Err(why) => unplaced.push((i, why)),
            }
        }
        let start = tasks
            .iter()
            .map(|t| {
                t.release
                    .max(usize::try_from(t.last.unwrap_or(0).max(0)).unwrap_or(0))
            })
            .max()
            .unwrap_or(0);
        let total: usize = tasks.iter().fold(0usize, |a, t| a.saturating_add(t.p));
        let horizon = start.saturating_add(total).saturating_add(1);
        let limit = MAX_CELLS / shape.nodes.len().max(1);
        let mut problem = Problem {
            tasks,
            unplaced,
            shape,
            horizon: horizon.min(limit),
        };
        if horizon > limit {
            // A job released or running past the grid cannot be planned; say so.
            let (keep, late): (Vec<Task>, Vec<Task>) = problem
                .tasks
                .into_iter()
                .partition(|t| t.release.saturating_add(t.p) <= limit);
            problem.tasks = keep;
            problem
                .unplaced
                .extend(late.into_iter().map(|t| (t.job, Unplaced::TooFar)));
        }
        problem
    }

    /// The same jobs on a pool of `cap` GPUs in one node: the smallest-pool search counts GPUs.
    pub fn on_one_node(&self, cap: u64) -> Shape {
        Shape {
            cap,
            nodes: vec![cap],
            largest: cap,
        }
    }
}

/// Why a job cannot be planned in the pool at all: the reason its miss gives.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Unplaced {
    #[error("a pod of {pod} GPUs fits on no node (the largest has {largest})")]
    PodTooLarge { pod: u64, largest: u64 },
    #[error("it needs {demand} GPUs at once, more than the pool's {pool}")]
    OverPool { demand: u64, pool: u64 },
    #[error("its {pods} pods of {pod} GPUs do not fit on the pool's nodes at once")]
    NoFit { pods: u64, pod: u64 },
    #[error("it starts too far in the future to plan on this slot length")]
    TooFar,
}

/// Whether a task's pods fit the pool's nodes when nothing else runs.
fn fits_alone(task: &Task, shape: &Shape) -> Result<(), Unplaced> {
    if task.demand == 0 {
        return Ok(());
    }
    // A pod larger than every node cannot run on any pool of these nodes; one that only the
    // pool's size keeps out needs a larger pool, which the smallest-pool search finds.
    let largest = shape.largest;
    if task.g > largest {
        return Err(Unplaced::PodTooLarge {
            pod: task.g,
            largest,
        });
    }
    if task.demand > shape.cap {
        return Err(Unplaced::OverPool {
            demand: task.demand,
            pool: shape.cap,
        });
    }
    let mut grid = Grid::new(shape, 1);
    if grid.place(task, &[0]).is_none() {
        return Err(Unplaced::NoFit {
            pods: task.pods,
            pod: task.g,
        });
    }
    Ok(())
}

/// Free GPUs per node and GPUs in use, slot by slot.
#[derive(Debug, Clone)]
pub(crate) struct Grid {
    cap: u64,
    nodes: usize,
    /// `free[slot * nodes + node]`.
    free: Vec<u64>,
    used: Vec<u64>,
    /// GPU-slots in use over the whole grid, kept as tasks come and go: the search's cheap bound.
    busy: u128,
}

impl Grid {
    pub fn new(shape: &Shape, slots: usize) -> Grid {
        let nodes = shape.nodes.len().max(1);
        let mut free = Vec::with_capacity(slots.saturating_mul(nodes));
        for _ in 0..slots {
            free.extend(shape.nodes.iter().copied());
        }
        Grid {
            cap: shape.cap,
            nodes: shape.nodes.len(),
            free,
            used: vec![0; slots],
            busy: 0,
        }
    }

    pub fn slots(&self) -> usize {
        self.used.len()
    }

    pub fn used(&self, slot: usize) -> u64 {
        self.used.get(slot).copied().unwrap_or(0)
    }

    fn free(&self, slot: usize, node: usize) -> u64 {
        self.free
            .get(slot * self.nodes + node)
            .copied()
            .unwrap_or(0)
    }

    fn take(&mut self, slot: usize, node: usize, g: u64, give_back: bool) {
        if let Some(f) = self.free.get_mut(slot * self.nodes + node) {
            *f = if give_back {
                *f + g
            } else {
                f.saturating_sub(g)
            };
        }
    }

    /// Places every pod of `task` in `slots`, first-fit on the nodes; the node of each pod, or
    /// `None` (and the grid unchanged) when it does not fit.
    pub fn place(&mut self, task: &Task, slots: &[usize]) -> Option<Vec<usize>> {
        if slots.iter().any(|s| *s >= self.slots()) {
            return None;
        }
        if task.demand == 0 {
            return Some(Vec::new());
        }
        if slots
            .iter()
            .any(|s| self.used(*s).saturating_add(task.demand) > self.cap)
        {
            return None;
        }
        let mut at = Vec::new();
        for _ in 0..task.pods {
            let node = (0..self.nodes).find(|n| slots.iter().all(|s| self.free(*s, *n) >= task.g));
            match node {
                Some(n) => {
                    for s in slots {
                        self.take(*s, n, task.g, false);
                    }
                    at.push(n);
                }
                None => {
                    for n in at {
                        for s in slots {
                            self.take(*s, n, task.g, true);
                        }
                    }
                    return None;
                }
            }
        }
        for s in slots {
            if let Some(u) = self.used.get_mut(*s) {
                *u += task.demand;
            }
        }
        self.busy += u128::from(task.demand) * slots.len() as u128;
        Some(at)
    }

    /// Undoes [`Grid::place`].
    pub fn unplace(&mut self, task: &Task, slots: &[usize], at: &[usize]) {
        for n in at {
            for s in slots {
                self.take(*s, *n, task.g, true);
            }
        }
        for s in slots {
            if let Some(u) = self.used.get_mut(*s) {
                *u = u.saturating_sub(task.demand);
            }
        }
        self.busy = self
            .busy
            .saturating_sub(u128::from(task.demand) * slots.len() as u128);
    }

    /// Free GPU-slots over the whole grid (the total, whatever the nodes), in constant time: the
    /// search asks at every step.
    pub fn free_work(&self) -> u128 {
        (u128::from(self.cap) * self.slots() as u128).saturating_sub(self.busy)
    }
}

/// The slots each task runs in (sorted), in the order of [`Problem::tasks`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Schedule {
    pub slots: Vec<Vec<usize>>,
}

impl Schedule {
    /// The slot after the last one used.
    pub fn finish(&self) -> usize {
        self.slots
            .iter()
            .filter_map(|s| s.last())
            .map(|s| s + 1)
            .max()
            .unwrap_or(0)
    }

    pub fn meets_deadlines(&self, problem: &Problem) -> bool {
        problem
            .tasks
            .iter()
            .zip(&self.slots)
            .all(|(t, s)| match (t.last, s.last()) {
                (Some(l), Some(end)) => i64::try_from(*end).unwrap_or(i64::MAX) <= l,
                (Some(_), None) => false,
                (None, _) => true,
            })
    }

    /// GPUs in use per slot, up to the finish.
    pub fn profile(&self, problem: &Problem) -> Vec<u64> {
        let mut p = vec![0u64; self.finish()];
        for (t, slots) in problem.tasks.iter().zip(&self.slots) {
            for s in slots {
                if let Some(v) = p.get_mut(*s) {
                    *v = v.saturating_add(t.demand);
                }
            }
        }
        p
    }
}

/// A schedule and what is proven about it.
pub(crate) struct Solved {
    pub schedule: Schedule,
    /// Proven lower bound on the objective, in slots (`earliest`: the finish slot) or GPUs.
    pub bound: u64,
    pub exact: bool,
}

/// The smallest pool that meets every deadline, or why there is none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MinPool {
    pub gpus: Option<u64>,
    pub why: Option<String>,
}

/// The plan people read, from a schedule.
pub(crate) fn report(
    jobs: &[Job],
    problem: &Problem,
    settings: &Settings,
    solved: Solved,
    min_pool: MinPool,
) -> Plan {
    let slot = i64::try_from(settings.slot_s).unwrap_or(i64::MAX);
    let at = |slot_index: usize| {
        settings.now.saturating_add(
            i64::try_from(slot_index)
                .unwrap_or(i64::MAX)
                .saturating_mul(slot),
        )
    };
    let mut planned = Vec::new();
    let mut missed = Vec::new();
    let mut finish: Option<i64> = None;
    for (t, slots) in problem.tasks.iter().zip(&solved.schedule.slots) {
        let Some(j) = jobs.get(t.job) else { continue };
        let (Some(first), Some(last)) = (slots.first(), slots.last()) else {
            continue;
        };
        let start = at(*first);
        let rem = i64::try_from(j.runtime_s).unwrap_or(i64::MAX)
            - i64::try_from(t.p.saturating_sub(1))
                .unwrap_or(0)
                .saturating_mul(slot);
        let end = at(*last).saturating_add(rem.max(0));
        finish = Some(finish.map_or(end, |f| f.max(end)));
        let slack = j.deadline.map(|d| d.saturating_sub(end));
        if let Some(s) = slack.filter(|s| *s < 0) {
            missed.push(Missed {
                namespace: j.namespace.clone(),
                kind: j.kind.clone(),
                name: j.name.clone(),
                late_s: Some(-s),
                reason: (!t.can_meet())
                    .then(|| "it cannot finish in time even started at its earliest".to_string()),
            });
        }
        planned.push(PlannedJob {
            namespace: j.namespace.clone(),
            kind: j.kind.clone(),
            name: j.name.clone(),
            gpus: t.demand,
            start: Timestamp::from_unix(start),
            end: Timestamp::from_unix(end),
            deadline: j.deadline.map(Timestamp::from_unix),
            slack_s: slack,
            source: j.source.clone(),
            runs: runs(slots),
        });
    }
    for (i, why) in &problem.unplaced {
        if let Some(j) = jobs.get(*i) {
            missed.push(Missed {
                namespace: j.namespace.clone(),
                kind: j.kind.clone(),
                name: j.name.clone(),
                late_s: None,
                reason: Some(why.to_string()),
            });
        }
    }
    planned.sort_by(|a, b| {
        (a.start, &a.namespace, &a.name, &a.kind).cmp(&(b.start, &b.namespace, &b.name, &b.kind))
    });
    // Unplaceable first (they cannot run at all), then the latest.
    missed.sort_by(|a, b| {
        (
            a.late_s.is_some(),
            std::cmp::Reverse(a.late_s),
            &a.namespace,
            &a.name,
        )
            .cmp(&(
                b.late_s.is_some(),
                std::cmp::Reverse(b.late_s),
                &b.namespace,
                &b.name,
            ))
    });
    let profile = solved.schedule.profile(problem);
    let peak = profile.iter().copied().max().unwrap_or(0);
    // A fold from +0: an empty float sum is -0, which would print as "-0".
    let gpu_hours = jobs
        .iter()
        .map(|j| j.gpus() as f64 * j.runtime_s as f64 / 3600.0)
        .fold(0.0, |a, h| a + h);
    let (lower_bound, gap) = match settings.objective {
        Objective::Earliest => {
            // The finish is at least `bound - 1` whole slots plus the shortest tail of a last slot.
            let tail = problem
                .tasks
                .iter()
                .filter_map(|t| jobs.get(t.job).map(|j| (t, j)))
                .map(|(t, j)| {
                    i64::try_from(j.runtime_s).unwrap_or(i64::MAX)
                        - i64::try_from(t.p.saturating_sub(1))
                            .unwrap_or(0)
                            .saturating_mul(slot)
                })
                .min();
            let lb = match (tail, solved.bound) {
                (Some(tail), b) if b > 0 => Some(at(usize::try_from(b - 1).unwrap_or(0)) + tail),
                _ => None,
            };
            let gap = match (lb, finish) {
                (Some(lb), Some(f)) if f > settings.now && !solved.exact => {
                    ((f - lb).max(0) as f64 / (f - settings.now) as f64).max(0.0)
                }
                _ => 0.0,
            };
            (lb.map(|t| Bound::Finish(Timestamp::from_unix(t))), gap)
        }
        Objective::MinPeak => {
            let gap = if peak > 0 && !solved.exact {
                peak.saturating_sub(solved.bound) as f64 / peak as f64
            } else {
                0.0
            };
            (Some(Bound::Gpus(solved.bound)), gap)
        }
    };
    Plan {
        objective: settings.objective,
        pool: problem.shape.cap,
        feasible: missed.is_empty(),
        peak,
        peak_all_at_once: peak_as_soon_as_possible(jobs, settings.now),
        min_pool: min_pool.gpus,
        gpu_hours: (gpu_hours * 100.0).round() / 100.0,
        finish: finish.map(Timestamp::from_unix),
        lower_bound,
        gap: (gap * 1000.0).round() / 1000.0,
        jobs: planned,
        missed,
        exact: solved.exact,
        slot_s: settings.slot_s,
        now: Some(Timestamp::from_unix(settings.now)),
        profile,
        min_pool_why: min_pool.why,
    }
}

/// The most GPUs in use at once when every job starts as soon as it may (its earliest start, or
/// now) and runs its runtime: the seed's "starting all four jobs immediately", with jobs that are
/// not ready until later starting then. In seconds, not slots; a job ending as another starts does
/// not overlap it.
pub(crate) fn peak_as_soon_as_possible(jobs: &[Job], now: i64) -> u64 {
    let mut events: Vec<(i64, bool, u64)> = Vec::with_capacity(jobs.len() * 2);
    for j in jobs.iter().filter(|j| j.gpus() > 0) {
        let start = j.earliest_start.max(now);
        let end = start.saturating_add(i64::try_from(j.runtime_s.max(1)).unwrap_or(i64::MAX));
        // `false` sorts first: at one instant, ends before starts.
        events.push((start, true, j.gpus()));
        events.push((end, false, j.gpus()));
    }
    events.sort_unstable();
    let (mut now_in_use, mut peak) = (0u64, 0u64);
    for (_, starts, g) in events {
        if starts {
            now_in_use = now_in_use.saturating_add(g);
            peak = peak.max(now_in_use);
        } else {
            now_in_use = now_in_use.saturating_sub(g);
        }
    }
    peak
}

/// Sorted slots as (first, length) runs.
fn runs(slots: &[usize]) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = Vec::new();
    for s in slots {
        let s = *s as u64;
        match out.last_mut() {
            Some((first, len)) if *first + *len == s => *len += 1,
            _ => out.push((s, 1)),
        }
    }
    out
}
