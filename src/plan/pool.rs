//! The smallest pool that meets every deadline: the "buy" half of "stagger or buy".
//!
//! Counted in GPUs on nodes at their real size: the pool's nodes as they are (not capped at the
//! pool, whose size is what is searched), and as many more nodes as large as the largest as the
//! work could fill; without node sizes, one node as large as the pool. A pod must still fit on one
//! node. Found by the same heuristic and exact search as the minimum peak, with the deadlines as
//! the only limit. There is none when a job cannot finish in time even started at its earliest,
//! or has a pod larger than every node: more GPUs would not help.

use super::exact;
use super::heuristic;
use super::model::{MinPool, Problem, Shape};
use super::types::{Job, Pool, Settings};

/// Nodes the search may add beyond the pool's own.
const MAX_EXTRA_NODES: u64 = 256;

pub(crate) fn min_pool(jobs: &[Job], pool: &Pool, settings: &Settings) -> MinPool {
    let all = jobs.iter().fold(0u64, |a, j| a.saturating_add(j.gpus()));
    let largest = pool.node_sizes.iter().copied().max().unwrap_or(0);
    // The pool's nodes at their real size, and enough nodes as large as the largest to hold
    // everything at once: the most a pool ever needs.
    let nodes: Vec<u64> = if largest == 0 {
        Vec::new()
    } else {
        // A pod takes at most one node, and the grid's cells are bounded: so are the extra nodes.
        let pods = jobs.iter().fold(0u64, |a, j| a.saturating_add(j.pods));
        let extra = all.div_ceil(largest).min(pods).min(MAX_EXTRA_NODES);
        pool.node_sizes
            .iter()
            .copied()
            .filter(|n| *n > 0)
            .chain(std::iter::repeat_n(
                largest,
                usize::try_from(extra).unwrap_or(0),
            ))
            .collect()
    };
    let room = Pool {
        gpus: all.max(1),
        node_sizes: nodes.clone(),
    };
    let problem = Problem::new(jobs, &room, settings);
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
    let shape = |cap: u64| {
        if nodes.is_empty() {
            problem.on_one_node(cap)
        } else {
            Shape {
                cap,
                nodes: nodes.clone(),
                largest,
            }
        }
    };
    let lb = heuristic::peak_bound(&problem).min(all);
    let (top, heur) = heuristic::lowest_cap(&problem, lb, all, shape);
    let mut budget = settings.budget;
    let (cap, solved) = exact::min_cap(&problem, shape, lb, top, heur, &mut budget);
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
