//! Any number of jobs, fast: list scheduling earliest-deadline first, and the lower bounds that
//! say how far its plans can be from the best.
//!
//! The schedule takes the tasks by latest possible start (those without a deadline last), then
//! release, then size, and puts each at the earliest slot where all its pods fit on the nodes;
//! an interruptible task takes the earliest free slots one by one. The bounds hold for every
//! schedule, whatever the nodes: a task cannot start before its release, a slot holds at most
//! the pool's GPUs, and the work a deadline forces into a window must fit in it.

use super::model::{Grid, Problem, Schedule, Shape};

/// The order tasks are placed in: latest start first come first.
pub(crate) fn order(problem: &Problem) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..problem.tasks.len()).collect();
    idx.sort_by_key(|i| {
        problem.tasks.get(*i).map(|t| {
            (
                t.last
                    .map_or(i64::MAX, |l| l - i64::try_from(t.p).unwrap_or(0) + 1),
                t.release,
                std::cmp::Reverse(t.demand),
                t.job,
            )
        })
    });
    idx
}

/// Every task at its earliest fitting slots, in [`order`]; `None` when one does not fit before
/// `horizon`.
pub(crate) fn schedule(problem: &Problem, shape: &Shape) -> Option<Schedule> {
    let mut grid = Grid::new(shape, problem.horizon);
    let mut slots = vec![Vec::new(); problem.tasks.len()];
    for i in order(problem) {
        let task = problem.tasks.get(i)?;
        let mut chosen = Vec::new();
        if task.interruptible {
            let mut s = task.release;
            while chosen.len() < task.p {
                if s >= grid.slots() {
                    return None;
                }
                if grid.place(task, &[s]).is_some() {
                    chosen.push(s);
                }
                s += 1;
            }
        } else {
            let mut s = task.release;
            loop {
                if s + task.p > grid.slots() {
                    return None;
                }
                let run: Vec<usize> = (s..s + task.p).collect();
                if grid.place(task, &run).is_some() {
                    chosen = run;
                    break;
                }
                s += 1;
            }
        }
        if let Some(v) = slots.get_mut(i) {
            *v = chosen;
        }
    }
    Some(Schedule { slots })
}

/// The smallest cap in `lo..=hi` at which [`schedule`] meets every deadline (binary search: a
/// larger cap never hurts list scheduling much, and the exact search checks below it), with its
/// schedule; `hi` and its schedule when none does.
pub(crate) fn lowest_cap(
    problem: &Problem,
    lo: u64,
    hi: u64,
    shape: impl Fn(u64) -> Shape,
) -> (u64, Option<Schedule>) {
    let meets = |cap: u64| schedule(problem, &shape(cap)).filter(|s| s.meets_deadlines(problem));
    let Some(mut best) = meets(hi) else {
        return (hi, schedule(problem, &shape(hi)));
    };
    let (mut lo, mut hi) = (lo.min(hi), hi);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        match meets(mid) {
            Some(s) => {
                best = s;
                hi = mid;
            }
            None => lo = mid + 1,
        }
    }
    (hi, Some(best))
}

/// No schedule on `cap` GPUs ends before this slot.
pub(crate) fn finish_bound(problem: &Problem, cap: u64) -> u64 {
    let mut bound = problem
        .tasks
        .iter()
        .map(|t| (t.release + t.p) as u64)
        .max()
        .unwrap_or(0);
    if cap == 0 {
        return bound;
    }
    // From each release on, the work released then or later needs that many full slots.
    let mut by_release: Vec<(usize, u128)> = problem
        .tasks
        .iter()
        .map(|t| (t.release, t.work()))
        .collect();
    by_release.sort_unstable();
    let mut after: u128 = 0;
    for (release, work) in by_release.into_iter().rev() {
        after += work;
        let need = after.div_ceil(u128::from(cap));
        bound = bound.max(release as u64 + u64::try_from(need).unwrap_or(u64::MAX));
    }
    bound
}

/// No schedule that meets every deadline uses fewer GPUs at once: the largest task, and for every
/// window between a release and a deadline, the work that must happen inside it over its length.
pub(crate) fn peak_bound(problem: &Problem) -> u64 {
    let mut bound = problem.tasks.iter().map(|t| t.demand).max().unwrap_or(0);
    let mut starts: Vec<i64> = problem
        .tasks
        .iter()
        .map(|t| i64::try_from(t.release).unwrap_or(i64::MAX))
        .collect();
    let mut ends: Vec<i64> = problem
        .tasks
        .iter()
        .filter_map(|t| t.last.map(|l| l + 1))
        .collect();
    starts.sort_unstable();
    starts.dedup();
    ends.sort_unstable();
    ends.dedup();
    for a in &starts {
        for b in ends.iter().filter(|b| *b > a) {
            let len = (b - a) as u128;
            let forced: u128 = problem
                .tasks
                .iter()
                .filter_map(|t| {
                    let last = t.last?;
                    let r = i64::try_from(t.release).ok()?;
                    let p = i64::try_from(t.p).ok()?;
                    // Slots of the task that cannot fall outside [a, b), even split up.
                    let outside = (a - r).max(0) + (last + 1 - b).max(0);
                    let inside = (p - outside).clamp(0, b - a);
                    Some(u128::from(t.demand) * inside as u128)
                })
                .sum();
            bound = bound.max(u64::try_from(forced.div_ceil(len)).unwrap_or(u64::MAX));
        }
    }
    bound
}
