//! `gpuledger headroom`: read the fleet, the load tests its serving workloads name in the
//! repository, and production's request rates from Prometheus; report each serving workload's
//! headroom. `inventory` adds the same section through [`section`] when its inputs exist.

use std::path::Path;
use std::sync::Arc;

use tokio::runtime::Runtime;

use super::{Exit, Note, Outcome, deliver};
use crate::cli::HeadroomArgs;
use gpuledger::analysis::headroom::headroom;
use gpuledger::analysis::inventory::inventory;
use gpuledger::config::Config;
use gpuledger::input::{self, MetricsSpec};
use gpuledger::k8s::object::Object;
use gpuledger::live::kube::Progress;
use gpuledger::live::loadtest::read_load_tests;
use gpuledger::live::prometheus::PromSource;
use gpuledger::live::serving::{Production, production};
use gpuledger::render::render_headroom;
use gpuledger::report::{Headroom, HeadroomVerdict, Provenance, Report};
use gpuledger::util::date::Timestamp;

pub fn run(args: &HeadroomArgs, rt: &Runtime, progress: &Arc<Progress>) -> anyhow::Result<Outcome> {
    args.output.not_prometheus("headroom")?;
    let repo = args.repo.as_deref();
    let (cfg, cfg_path) = input::config(args.output.config.as_deref(), repo)?;
    let live = rt.block_on(input::live(&args.live.spec(), progress))?;
    let mut sources = live.sources.clone();
    let mut notes = Vec::new();
    if let Some(p) = &cfg_path {
        sources.push(p.display().to_string());
        notes.push(Note::ConfigUsed(p.display().to_string()));
    }
    if let Some(r) = repo {
        sources.push(format!("{} (working tree)", r.display()));
    }
    let live_provenance: Vec<_> = live
        .parts
        .iter()
        .flat_map(|p| p.provenance.iter().cloned())
        .collect();
    let (part, _) = live.single("headroom")?;
    let mut report = inventory(&part.objects, &cfg, sources)?;
    report.complete = part.incomplete.is_empty();
    report.incomplete = part.incomplete;
    let production = rt.block_on(production(
        prom_source(args.live.metrics().as_ref()).as_ref(),
    ));
    let (h, errors) = section(&part.objects, &report, repo, &production, &cfg)?;
    report.headroom = Some(h);
    report.provenance = Some(Provenance::new(
        None,
        live_provenance,
        Vec::new(),
        Timestamp::now(),
        cfg.snapshot.stale_after,
    ));
    let over = report.headroom.as_ref().is_some_and(|h| {
        h.workloads
            .iter()
            .any(|w| w.verdict == HeadroomVerdict::Over)
    });
    let text = render_headroom(&report, args.output.format, &args.output.style());
    let stdout = deliver(text, args.output.output.as_deref(), &mut notes)?;
    let mut exit = Exit::Clean;
    if over && args.fail_on_over {
        notes.push(Note::Say(
            "a serving workload's production p95 is above its tested capacity".into(),
        ));
        exit = Exit::Findings;
    }
    for e in errors {
        notes.push(Note::Say(format!("load test unreadable: {e}")));
        exit = Exit::Error;
    }
    Ok(super::report_outcome(
        &report.incomplete,
        stdout,
        notes,
        exit,
    ))
}

/// The Prometheus of `--prometheus`, as the serving reader takes it.
pub fn prom_source(spec: Option<&MetricsSpec>) -> Option<PromSource> {
    spec.map(|m| PromSource {
        url: m.url.clone(),
        bearer_token: m.token.clone(),
        window: m.window,
        timeout: m.timeout,
    })
}

/// The headroom section of `report`'s workloads, and the load tests that could not be read.
pub fn section(
    objects: &[Object],
    report: &Report,
    repo: Option<&Path>,
    production: &Production,
    cfg: &Config,
) -> anyhow::Result<(Headroom, Vec<String>)> {
    let paths = report
        .workloads
        .iter()
        .filter_map(|r| r.intent.as_ref()?.load_test.as_deref());
    let (load_tests, errors) = read_load_tests(repo, paths);
    let h = headroom(
        objects,
        &report.workloads,
        &load_tests,
        production,
        &cfg.headroom,
    )?;
    Ok((h, errors.iter().map(ToString::to_string).collect()))
}

/// Whether `inventory` has headroom inputs: a load test it can read, or serving request series.
pub fn has_inputs(report: &Report, repo: Option<&Path>, production: &Production) -> bool {
    let load_test = repo.is_some()
        && report
            .workloads
            .iter()
            .any(|w| w.intent.as_ref().is_some_and(|i| i.load_test.is_some()));
    let series = matches!(production, Production::Read(m) if !m.completions.is_empty());
    load_test || series
}
