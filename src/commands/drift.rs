//! `gpuledger drift`: live GPU workloads against Git, both directions, with coverage — or, with
//! `--suggest-accept`, the accepted-drift rules that would accept today's drift.

use gpuledger::analysis::drift::suggest_accept;
use gpuledger::pipeline::{self, Context};
use gpuledger::render::prometheus::{Options, exposition_of_cluster};
use gpuledger::render::render_drift;

use super::{Done, fleet_spec, signals};
use crate::cli::fleet::DriftArgs;

pub fn run(args: &DriftArgs, cx: &Context<'_>) -> anyhow::Result<Done> {
    let mut spec = fleet_spec(
        &args.live,
        signals(&args.live, &args.metrics, Some(&args.trend), None),
        &args.clock,
        args.output.config(),
    );
    spec.repo = Some(args.repo.spec());
    // Suggesting rules is the answer to drift, not a failure.
    let no_fail = args.no_fail || args.suggest_accept;
    let run = pipeline::drift::run(&spec, no_fail, cx)?;
    let report = &run.report;
    let today = report
        .provenance
        .as_ref()
        .and_then(|p| p.reported_at)
        .map(|t| t.date());
    let text = match (&report.drift, args.suggest_accept, today) {
        (Some(d), true, Some(today)) => suggest_accept(d, today),
        _ => match args.format.text() {
            Some(format) => render_drift(report, format, &args.output.style()),
            None => {
                exposition_of_cluster(report, Options::default(), args.repo.at.cluster.as_deref())
            }
        },
    };
    super::report(run, text, &args.output)
}
