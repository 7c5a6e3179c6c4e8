//! `gpuledger cost`: read the fleet (as `inventory` does, DCGM activity included), OpenCost over
//! the window ending `--now`, and the outcomes (a records file, or the counters workloads name in
//! their intent), and render cost per verified outcome. [`attach`] is also what `inventory` calls
//! when it is given `--opencost` or `--outcomes`.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use tokio::runtime::Runtime;

use super::{Exit, Note, Outcome, deliver};
use crate::cli::{CostArgs, CostInputArgs, LiveArgs};
use gpuledger::analysis::cost::{CostInputs, cost};
use gpuledger::analysis::inventory::inventory_with_metrics;
use gpuledger::analysis::usage::Metrics;
use gpuledger::config::Config;
use gpuledger::input;
use gpuledger::k8s::object::Object;
use gpuledger::live::kube::Progress;
use gpuledger::live::opencost::{self, OpenCostSource, Window};
use gpuledger::live::outcomes::{self, CounterSource, OutcomeFile};
use gpuledger::render::render_cost;
use gpuledger::report::{Provenance, Report};
use gpuledger::util::date::Timestamp;

pub fn run(args: &CostArgs, rt: &Runtime, progress: &Arc<Progress>) -> anyhow::Result<Outcome> {
    args.output.not_prometheus("cost")?;
    let (cfg, cfg_path) = input::config(args.output.config.as_deref(), None)?;
    let live = rt.block_on(input::live(&args.live.spec(), progress))?;
    anyhow::ensure!(
        live.parts.len() <= 1,
        "cost belongs to one cluster (one OpenCost): give a single --context"
    );
    let mut sources = live.sources.clone();
    let mut notes = Vec::new();
    if let Some(p) = &cfg_path {
        sources.push(p.display().to_string());
        notes.push(Note::ConfigUsed(p.display().to_string()));
    }
    let metrics = rt.block_on(input::metrics(args.live.metrics().as_ref(), &cfg));
    if let Metrics::Failed(reason) = &metrics {
        notes.push(Note::MetricsUnknown(reason.clone()));
    }
    let now = args.now.unwrap_or_else(Timestamp::now);
    let live_provenance: Vec<_> = live
        .parts
        .iter()
        .flat_map(|p| p.provenance.iter().cloned())
        .collect();
    let (part, _) = live.single("cost")?;
    let mut report = inventory_with_metrics(&part.objects, &cfg, sources, &metrics)?;
    report.complete = part.incomplete.is_empty();
    report.incomplete = part.incomplete;
    let failed = attach(
        &mut report,
        &part.objects,
        &cfg,
        &args.cost,
        &args.live,
        now,
        rt,
        &mut notes,
    )?;
    report.provenance = Some(Provenance::new(
        None,
        live_provenance,
        Vec::new(),
        now,
        cfg.snapshot.stale_after,
    ));
    let text = render_cost(&report, args.output.format, &args.output.style());
    let stdout = deliver(text, args.output.output.as_deref(), &mut notes)?;
    // The command's own inputs: either failing is an error, with the report still written.
    let exit = if failed.opencost || failed.records {
        Exit::Error
    } else {
        Exit::Clean
    };
    Ok(super::report_outcome(
        &report.incomplete,
        stdout,
        notes,
        exit,
    ))
}

/// What failed among the cost inputs: the report says what is unknown and why, and the notes
/// repeat it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Failed {
    /// OpenCost could not be read.
    pub opencost: bool,
    /// A line of the outcome records does not read.
    pub records: bool,
}

/// Reads the cost inputs and puts the cost section into `report`.
#[allow(clippy::too_many_arguments)]
pub fn attach(
    report: &mut Report,
    objects: &[Object],
    cfg: &Config,
    args: &CostInputArgs,
    live: &LiveArgs,
    now: Timestamp,
    rt: &Runtime,
    notes: &mut Vec<Note>,
) -> anyhow::Result<Failed> {
    let window = Window::ending(now, live.window);
    let timeout = Duration::from_secs(live.request_timeout.max(1));
    let records: Option<OutcomeFile> = match &args.outcomes {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read the outcome records {}", path.display()))?;
            Some(outcomes::parse(&text, &path.display().to_string()))
        }
        None => None,
    };
    let opencost = args.opencost.as_ref().map(|url| {
        let src = OpenCostSource {
            url: url.clone(),
            bearer_token: token(&args.opencost_token_env),
            timeout,
        };
        rt.block_on(opencost::read(&src, window))
    });
    // Counters for the workloads the records do not cover.
    let recorded: BTreeSet<&str> = records
        .iter()
        .flat_map(|f| f.records.iter().map(|r| r.workload.as_str()))
        .collect();
    let selectors: Vec<String> = report
        .workloads
        .iter()
        .filter(|w| !recorded.contains(w.id().to_string().as_str()))
        .filter_map(|w| w.intent.as_ref()?.outcomes_metric.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let counters = match (&live.prometheus, selectors.is_empty()) {
        (Some(url), false) => {
            let src = CounterSource {
                url: url.clone(),
                bearer_token: token(&live.prometheus_token_env),
                timeout,
            };
            rt.block_on(outcomes::counters(
                &src,
                &selectors,
                now,
                u64::try_from(window.seconds()).unwrap_or(0),
            ))
        }
        _ => BTreeMap::new(),
    };
    let inputs = CostInputs {
        window,
        opencost: opencost.as_ref(),
        records: records.as_ref(),
        counters: &counters,
        counter_source: live.prometheus.as_deref(),
    };
    report.cost = Some(cost(report, objects, cfg, &inputs)?);
    let mut failed = Failed::default();
    if let Some(Err(e)) = &opencost {
        notes.push(Note::Say(format!("cost is unknown: {e}")));
        failed.opencost = true;
    }
    if let Some(f) = &records {
        for p in &f.problems {
            notes.push(Note::Say(format!("outcome record does not read: {p}")));
            failed.records = true;
        }
    }
    Ok(failed)
}

/// A bearer token from the environment variable `var`, registered with the redactor.
fn token(var: &str) -> Option<String> {
    std::env::var(var)
        .ok()
        .filter(|t| !t.trim().is_empty())
        .inspect(|t| gpuledger::util::redact::register(t))
}
