//! `gpuledger inventory`: the fleet's report (with drift, cost, headroom and the trend column where
//! their inputs are given), in the format asked — Prometheus's exposition included.

use gpuledger::pipeline::{self, Context};
use gpuledger::render::prometheus::{Options, exposition_of_cluster};
use gpuledger::render::{render, render_nodes};

use super::{Done, fleet_spec, signals};
use crate::cli::fleet::{By, InventoryArgs};

pub fn run(args: &InventoryArgs, cx: &Context<'_>) -> anyhow::Result<Done> {
    let mut spec = fleet_spec(
        &args.live,
        signals(
            &args.live,
            &args.metrics,
            Some(&args.trend),
            Some(&args.cost),
        ),
        &args.clock,
        args.output.config(),
    );
    spec.repo = args.repo.given();
    spec.by_node = args.by == By::Node;
    let run = pipeline::inventory::run(&spec, cx)?;
    let text = match args.format.text() {
        Some(format) if spec.by_node => render_nodes(&run.report, format, &args.output.style()),
        Some(format) => render(&run.report, format, &args.output.style()),
        None => exposition_of_cluster(
            &run.report,
            Options {
                workloads: args.workload_series,
            },
            args.repo.at.cluster.as_deref(),
        ),
    };
    super::report(run, text, &args.output)
}
