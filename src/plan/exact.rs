//! Exact plans for small inputs: a depth-first branch and bound over start slots.
//!
//! For a fixed pool cap and a last slot, [`feasible`] decides whether every task can be placed
//! inside its window: tasks in order of latest start, each tried at its earliest slots first, an
//! interruptible task as a chain of one-slot pieces (each after the last). Identical tasks start
//! in order (no search over their permutations), and a branch stops when the work left cannot fit
//! in the GPU-slots left. The objective is then found by walking up from a proven lower bound: the
//! first finish (or cap) that is feasible is the optimum, and every one proven infeasible on the
//! way raises the bound. The search counts its steps; past the budget it stops, and the caller
//! keeps the heuristic's plan with the bound proven so far. Nodes are filled first-fit, so the
//! search is exact over start times (a different packing of pods onto nodes is not tried).

use super::model::{Grid, Problem, Schedule, Shape, Solved};

/// Tasks (interruptible ones counted by their slots) above which the search is not tried.
const MAX_ITEMS: usize = 400;

/// One thing the search places: a whole task, or one slot of an interruptible one.
struct Item {
    task: usize,
    len: usize,
    /// Pieces of the same task after this one: it must leave room for them.
    after: usize,
    /// The previous item is an earlier piece of the same task.
    chained: bool,
    /// The previous item is an identical task: start no earlier than it.
    twin: bool,
}

pub(crate) enum Search {
    Found(Schedule),
    Infeasible,
    OutOfBudget,
}

fn items(problem: &Problem) -> Vec<Item> {
    let mut out: Vec<Item> = Vec::new();
    let mut prev: Option<&super::model::Task> = None;
    for i in super::heuristic::order(problem) {
        let Some(t) = problem.tasks.get(i) else {
            continue;
        };
        if t.interruptible && t.p > 1 {
            for k in 0..t.p {
                out.push(Item {
                    task: i,
                    len: 1,
                    after: t.p - 1 - k,
                    chained: k > 0,
                    twin: false,
                });
            }
        } else {
            let twin = prev.is_some_and(|q| {
                !q.interruptible
                    && (q.g, q.pods, q.release, q.last, q.p)
                        == (t.g, t.pods, t.release, t.last, t.p)
            });
            out.push(Item {
                task: i,
                len: t.p,
                after: 0,
                chained: false,
                twin,
            });
        }
        prev = Some(t);
    }
    out
}

/// Can every task be placed on `shape` within its window and before slot `limit`?
pub(crate) fn feasible(problem: &Problem, shape: &Shape, limit: usize, budget: &mut u64) -> Search {
    let limit = limit.min(problem.horizon);
    let items = items(problem);
    if items.len() > MAX_ITEMS {
        return Search::OutOfBudget;
    }
    for t in &problem.tasks {
        let first_end = i64::try_from(t.release + t.p).unwrap_or(i64::MAX) - 1;
        if first_end > t.last_within(limit) {
            return Search::Infeasible;
        }
    }
    let mut state = State {
        problem,
        items: &items,
        grid: Grid::new(shape, limit),
        starts: vec![0; items.len()],
        left: items
            .iter()
            .map(|it| {
                problem
                    .tasks
                    .get(it.task)
                    .map_or(0, |t| u128::from(t.demand) * it.len as u128)
            })
            .rev()
            .scan(0u128, |acc, w| {
                *acc += w;
                Some(*acc)
            })
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect(),
        budget,
    };
    match state.dfs(0) {
        Some(true) => {
            let mut slots = vec![Vec::new(); problem.tasks.len()];
            for (k, it) in items.iter().enumerate() {
                let s = state.starts.get(k).copied().unwrap_or(0);
                if let Some(v) = slots.get_mut(it.task) {
                    v.extend(s..s + it.len);
                }
            }
            for v in &mut slots {
                v.sort_unstable();
            }
            Search::Found(Schedule { slots })
        }
        Some(false) => Search::Infeasible,
        None => Search::OutOfBudget,
    }
}

struct State<'a> {
    problem: &'a Problem,
    items: &'a [Item],
    grid: Grid,
    starts: Vec<usize>,
    /// Work (GPU-slots) of item k and every item after it.
    left: Vec<u128>,
    budget: &'a mut u64,
}

impl State<'_> {
    /// `Some(found)`, or `None` when the budget ran out.
    fn dfs(&mut self, k: usize) -> Option<bool> {
        let Some(item) = self.items.get(k) else {
            return Some(true);
        };
        if *self.budget == 0 {
            return None;
        }
        *self.budget -= 1;
        let task = self.problem.tasks.get(item.task)?;
        let mut lo = task.release;
        if item.chained || item.twin {
            let prev = self.starts.get(k.wrapping_sub(1)).copied().unwrap_or(0);
            lo = lo.max(if item.chained { prev + 1 } else { prev });
        }
        let work_left = self.left.get(k).copied().unwrap_or(0);
        if work_left > self.grid.free_work() {
            return Some(false);
        }
        let last =
            task.last_within(self.grid.slots()) - i64::try_from(item.after + item.len).ok()? + 1;
        let Ok(hi) = usize::try_from(last) else {
            return Some(false);
        };
        for s in lo..=hi {
            let run: Vec<usize> = (s..s + item.len).collect();
            let Some(at) = self.grid.place(task, &run) else {
                continue;
            };
            if let Some(v) = self.starts.get_mut(k) {
                *v = s;
            }
            match self.dfs(k + 1) {
                Some(true) => return Some(true),
                None => return None,
                Some(false) => {}
            }
            self.grid.unplace(task, &run, &at);
        }
        Some(false)
    }
}

/// The earliest finish on `shape` that meets every deadline, walking up from `bound`;
/// `heuristic` is the plan to keep when the search cannot prove better.
pub(crate) fn min_finish(
    problem: &Problem,
    shape: &Shape,
    heuristic: Option<Schedule>,
    bound: u64,
    budget: u64,
) -> Solved {
    let mut budget = budget;
    let mut bound = bound;
    let mut upper = heuristic.filter(|s| s.meets_deadlines(problem));
    if upper.is_none() {
        match feasible(problem, shape, problem.horizon, &mut budget) {
            Search::Found(s) => upper = Some(s),
            Search::Infeasible | Search::OutOfBudget => {
                // No plan meets every deadline (or none was found): the earliest-deadline plan,
                // late jobs and all.
                let schedule = super::heuristic::schedule(problem, shape).unwrap_or(Schedule {
                    slots: vec![Vec::new(); problem.tasks.len()],
                });
                let exact = schedule.finish() as u64 <= bound;
                return Solved {
                    schedule,
                    bound,
                    exact,
                };
            }
        }
    }
    let Some(mut best) = upper else {
        return Solved {
            schedule: Schedule { slots: Vec::new() },
            bound,
            exact: false,
        };
    };
    let top = best.finish() as u64;
    let mut t = bound;
    while t < top {
        match feasible(
            problem,
            shape,
            usize::try_from(t).unwrap_or(usize::MAX),
            &mut budget,
        ) {
            Search::Found(s) => {
                best = s;
                return Solved {
                    schedule: best,
                    bound: t,
                    exact: true,
                };
            }
            Search::Infeasible => {
                t += 1;
                bound = t;
            }
            Search::OutOfBudget => {
                return Solved {
                    schedule: best,
                    bound,
                    exact: false,
                };
            }
        }
    }
    Solved {
        schedule: best,
        bound: top,
        exact: true,
    }
}

/// The lowest cap in `bound..=top` at which every deadline can be met, walking up from the bound:
/// the cap, and what is proven. `heuristic` meets every deadline at `top`, when it is given.
pub(crate) fn min_cap(
    problem: &Problem,
    shape: impl Fn(u64) -> Shape,
    bound: u64,
    top: u64,
    heuristic: Option<Schedule>,
    budget: &mut u64,
) -> (u64, Solved) {
    let mut upper = heuristic.filter(|s| s.meets_deadlines(problem));
    if upper.is_none() {
        match feasible(problem, &shape(top), problem.horizon, budget) {
            Search::Found(s) => upper = Some(s),
            Search::Infeasible | Search::OutOfBudget => {
                let schedule =
                    super::heuristic::schedule(problem, &shape(top)).unwrap_or(Schedule {
                        slots: vec![Vec::new(); problem.tasks.len()],
                    });
                return (
                    top,
                    Solved {
                        schedule,
                        bound,
                        exact: false,
                    },
                );
            }
        }
    }
    let Some(best) = upper else {
        return (
            top,
            Solved {
                schedule: Schedule { slots: Vec::new() },
                bound,
                exact: false,
            },
        );
    };
    let mut cap = bound;
    while cap < top {
        match feasible(problem, &shape(cap), problem.horizon, budget) {
            Search::Found(s) => {
                return (
                    cap,
                    Solved {
                        schedule: s,
                        bound: cap,
                        exact: true,
                    },
                );
            }
            Search::Infeasible => cap += 1,
            Search::OutOfBudget => {
                return (
                    top,
                    Solved {
                        schedule: best,
                        bound: cap,
                        exact: false,
                    },
                );
            }
        }
    }
    (
        top,
        Solved {
            schedule: best,
            bound: top,
            exact: true,
        },
    )
}
