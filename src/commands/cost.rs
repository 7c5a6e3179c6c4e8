//! `gpuledger cost`: cost per verified outcome of the fleet's workloads, tenants and product lines;
//! with `--compare A B`, two configurations side by side.

use anyhow::Context as _;
use gpuledger::analysis::compare::SideSpec;
use gpuledger::pipeline::compare::CompareSpec;
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
    let run = match args.compare.as_deref() {
        Some([a, b]) => {
            let side = |s: &str| SideSpec::parse(s).context("--compare");
            let spec = CompareSpec {
                fleet: spec,
                a: side(a)?,
                b: side(b)?,
            };
            pipeline::compare::run(&spec, cx)?
        }
        Some(_) => anyhow::bail!("--compare takes two sides: A B"),
        None => pipeline::cost::run(&spec, cx)?,
    };
    let text = render_cost(&run.report, args.format.into(), &args.output.style());
    super::report(run, text, &args.output)
}
