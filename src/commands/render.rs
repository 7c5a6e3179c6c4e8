//! `gpuledger render`: the desired GPU workloads of a GitOps repository at a ref.

use gpuledger::pipeline;
use gpuledger::render::render_desired;

use super::Done;
use crate::cli::change::RenderArgs;

pub fn run(args: &RenderArgs) -> anyhow::Result<Done> {
    let run = pipeline::render::run(&args.repo.spec(), args.output.config())?;
    let text = render_desired(&run.report, args.format.into(), &args.output.style());
    super::report(run, text, &args.output)
}
