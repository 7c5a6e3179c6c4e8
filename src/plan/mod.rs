//! The stagger planner: when should each batch job start so that every deadline is met within a
//! GPU pool, and what would the pool have to be otherwise?
//!
//! Before a team buys GPUs to clear a queue it should see how much flexibility its work has. The
//! planner takes jobs (GPUs per pod, pods, runtime, earliest start, deadline, whether it may be
//! interrupted) and a pool (its GPUs and the GPU size of each placeable node) and returns a
//! [`Plan`]: a start for every job, the peak, the peak of starting everything now, the smallest
//! pool that meets every deadline, and which jobs miss and by how much.
//!
//! The objective is lexicographic and stated in every output: (1) meet every deadline within the
//! pool; (2) with [`Objective::Earliest`], finish all work as early as possible (slack for
//! retries), or with [`Objective::MinPeak`], use the fewest GPUs at once and then finish as early
//! as possible at that peak. Time is cut into slots (15 minutes by default) from `now`; a job
//! starts on a slot boundary. Every pod of a job runs on one node for as long as the job runs
//! (the nodes are filled first-fit, in the order given); an interruptible job may run in pieces
//! of whole slots, a non-interruptible one runs in one piece.
//!
//! The work is split by data flow: [`types`] are what goes in and comes out; [`model`] turns jobs into slotted tasks and keeps the grid of
//! free GPUs per node and slot; [`heuristic`] schedules any number of jobs earliest-deadline first
//! and proves lower bounds; [`exact`] searches start times by branch and bound for small inputs
//! (within a budget, so it always ends); [`pool`] finds the smallest pool, on nodes at their real
//! size rather than capped at the pool. When the search
//! completes, the plan is optimal (`gap` 0); otherwise `lower_bound` is a proven bound and `gap`
//! says how far the plan may be from the best one.
//!
//! Pure: same jobs, same plan; the clock is passed in. The input is plain [`Job`]s so that any
//! source can feed it through [`plan`]: a jobs file ([`file`]), a ClusterQueue's quota
//! (`analysis::queues::pool`), and intent in Git or the cluster's waiting work (`analysis::plan`, which reads
//! them from the report's rows; nothing here imports the analyses).

mod exact;
pub mod file;
mod heuristic;
mod model;
mod pool;
mod types;

pub use types::{Bound, DEFAULT_BUDGET, Job, Missed, Objective, Plan, PlannedJob, Pool, Settings};

use model::Solved;

/// The planner's one entry point: the seam every source of jobs and pools feeds.
pub fn plan(jobs: Vec<Job>, pool: &Pool, settings: &Settings) -> Plan {
    let slot_s = settings.slot_s.max(1);
    let settings = Settings {
        slot_s,
        ..*settings
    };
    let problem = model::Problem::new(&jobs, pool, &settings);
    let solved = solve(&problem, &settings);
    let min_pool = pool::min_pool(&jobs, pool, &settings);
    model::report(&jobs, &problem, &settings, solved, min_pool)
}

fn solve(problem: &model::Problem, settings: &Settings) -> Solved {
    let shape = &problem.shape;
    match settings.objective {
        Objective::Earliest => {
            let heur = heuristic::schedule(problem, shape);
            let lb = heuristic::finish_bound(problem, shape.cap);
            exact::min_finish(problem, shape, heur, lb, settings.budget)
        }
        Objective::MinPeak => {
            let with_cap = |cap: u64| model::Shape {
                cap,
                nodes: shape.nodes.clone(),
                largest: shape.largest,
            };
            let lb = heuristic::peak_bound(problem).min(shape.cap);
            let (top, heur) = heuristic::lowest_cap(problem, lb, shape.cap, with_cap);
            let mut budget = settings.budget;
            let (cap, at_peak) = exact::min_cap(problem, with_cap, lb, top, heur, &mut budget);
            // At the lowest peak, finish as early as possible.
            let shape = with_cap(cap);
            let heur = heuristic::schedule(problem, &shape);
            let lb_finish = heuristic::finish_bound(problem, cap);
            let finished = exact::min_finish(problem, &shape, heur, lb_finish, budget);
            let schedule = if finished.schedule.meets_deadlines(problem)
                || !at_peak.schedule.meets_deadlines(problem)
            {
                finished.schedule
            } else {
                at_peak.schedule
            };
            Solved {
                schedule,
                bound: at_peak.bound,
                exact: at_peak.exact,
            }
        }
    }
}
