//! `gpuledger plan`: when each batch job should start so that every deadline is met within a GPU
//! pool, and the pool that would be needed otherwise.

use gpuledger::pipeline::plan::PlanJob;
use gpuledger::pipeline::{self, Context};
use gpuledger::render::render_plan;

use super::Done;
use crate::cli::change::PlanArgs;

pub fn run(args: &PlanArgs, cx: &Context<'_>) -> anyhow::Result<Done> {
    // The cluster is read when named, or when the waiting work or a queue asks for it.
    let wants_cluster = args.pending || args.queue.is_some();
    let live = args
        .live
        .given()
        .or_else(|| wants_cluster.then(|| args.live.spec()));
    let job = PlanJob {
        jobs_file: args.jobs.clone(),
        repo: args.repo.given(),
        live,
        pending: args.pending,
        queue: args.queue.clone(),
        borrow: args.borrow,
        pool: args.pool,
        nodes: args.node.clone(),
        objective: args.objective.into(),
        slot_s: args.slot,
        fail_on_miss: args.fail_on_miss,
        config: args.output.config().map(Into::into),
        now: args.clock.now,
    };
    let run = pipeline::plan::run(&job, cx)?;
    let text = render_plan(&run.report, args.format.into(), &args.output.style());
    super::report(run, text, &args.output)
}
