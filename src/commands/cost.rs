//! `gpuledger cost`: cost per verified outcome of the fleet's workloads, tenants and product lines.

use gpuledger::pipeline::{self, Context};
use gpuledger::render::render_cost;

use super::{Done, fleet_spec, signals};
use crate::cli::fleet::CostArgs;

pub fn run(args: &CostArgs, cx: &Context<'_>) -> anyhow::Result<Done> {
    let spec = fleet_spec(
        &args.live,
        signals(&args.live, &args.metrics, None, Some(&args.cost)),
        &args.clock,
        args.output.config(),
    );
    let run = pipeline::cost::run(&spec, cx)?;
    let text = render_cost(&run.report, args.format.into(), &args.output.style());
    super::report(run, text, &args.output)
}
