//! The smallest pool that meets every deadline: the "buy" half of "stagger or buy".
//!
//! Counted in GPUs on nodes as large as the pool's largest (a pod must still fit on one), found
//! by the same heuristic and exact search as the minimum peak, with the deadlines as the only
//! limit. There is none when a job cannot finish in time even started at its earliest, or cannot
//! run on the pool's nodes at all: more GPUs would not help.

use super::exact;
use super::heuristic;
use super::model::{MinPool, Problem};

pub(crate) fn min_pool(problem: &Problem, budget: u64) -> MinPool {
    if let Some((_, why)) = problem.unplaced.first() {
        return MinPool {
            gpus: None,
            why: Some(why.to_string()),
        };
    }
    if problem.tasks.iter().any(|t| !t.can_meet()) {
        return MinPool {
            gpus: None,
            why: Some("a job cannot finish by its deadline even started at its earliest".into()),
        };
    }
    let one_node = |cap: u64| problem.on_one_node(cap);
    // Everything at its release meets every deadline: the most a pool ever needs.
    let all = problem
        .tasks
        .iter()
        .fold(0u64, |a, t| a.saturating_add(t.demand));
    let lb = heuristic::peak_bound(problem).min(all);
    let (top, heur) = heuristic::lowest_cap(problem, lb, all, one_node);
    let mut budget = budget;
    let (cap, solved) = exact::min_cap(problem, one_node, lb, top, heur, &mut budget);
    MinPool {
        gpus: Some(cap),
        why: (!solved.exact).then(|| {
            format!(
                "at most {cap}; at least {} (the search was cut short)",
                solved.bound
            )
        }),
    }
}
