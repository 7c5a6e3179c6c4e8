//! `gpuledger headroom`: each serving workload's tested capacity against production's rate.

use gpuledger::pipeline::{self, Context};
use gpuledger::render::render_headroom;

use super::{Done, fleet_spec, signals};
use crate::cli::fleet::HeadroomArgs;

pub fn run(args: &HeadroomArgs, cx: &Context<'_>) -> anyhow::Result<Done> {
    let spec = fleet_spec(
        &args.live,
        signals(&args.live, &args.metrics, None, None),
        &args.clock,
        args.output.config(),
    );
    let run = pipeline::headroom::run(&spec, args.repo.as_deref(), args.fail_on_over, cx)?;
    let text = render_headroom(&run.report, args.format.into(), &args.output.style());
    super::report(run, text, &args.output)
}
