//! `gpuledger trend`: GPUs per tenant and product line over a window, from Prometheus's history.

use std::time::Duration;

use gpuledger::pipeline::trend::TrendJob;
use gpuledger::pipeline::{self, Context};
use gpuledger::render::render_trend;

use super::Done;
use crate::cli::fleet::TrendArgs;
use crate::cli::shared::token;

pub fn run(args: &TrendArgs, cx: &Context<'_>) -> anyhow::Result<Done> {
    let job = TrendJob {
        prometheus: args.prometheus.clone(),
        token: token(&args.prometheus_token_env),
        window: args.window,
        step: args.step,
        timeout: Duration::from_secs(args.timeout.max(1)),
        config: args.output.config().map(Into::into),
        now: args.clock.now,
        live: args.runway.spec(),
    };
    let run = pipeline::trend::run(&job, cx)?;
    let text = render_trend(&run.report, args.format.into(), &args.output.style());
    super::report(run, text, &args.output)
}
