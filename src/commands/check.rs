//! `gpuledger check`: base against head, with the live state when given.

use gpuledger::github::event::Runtime as Actions;
use gpuledger::pipeline::check::CheckJob;
use gpuledger::pipeline::{self, Context};
use gpuledger::render::render_check;

use super::{Done, signals};
use crate::cli::change::CheckArgs;

/// The check's job from its flags; `scope` names the report (GitHub's `--scope`).
pub fn job(args: &CheckArgs, scope: Option<String>) -> CheckJob {
    CheckJob {
        repo: args.repo.spec(args.head.clone()),
        base: args.base.clone(),
        live: args.live.given(),
        signals: signals(
            &args.live,
            &args.metrics,
            Some(&args.trend),
            Some(&args.cost),
        ),
        gates: args.gates(),
        config: args.output.config().map(Into::into),
        now: args.clock.now,
        scope,
    }
}

pub fn run(args: &CheckArgs, cx: &Context<'_>) -> anyhow::Result<Done> {
    // An event payload that cannot be read is an error here: the base would be guessed.
    Actions::from_env(|k| std::env::var(k).ok()).map_err(anyhow::Error::msg)?;
    let run = pipeline::check::run(&job(args, None), cx)?;
    let text = render_check(&run.report, args.format.into(), &args.output.style());
    super::report(run, text, &args.output)
}
