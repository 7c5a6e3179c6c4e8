//! `gpuledger inventory`: read snapshots, compute the inventory (and, with `--repo`, drift against
//! Git), render it.

use std::sync::Arc;

use super::{Outcome, deliver, load};
use crate::analysis::drift::drift;
use crate::analysis::inventory::inventory_with_metrics;
use crate::analysis::usage::Metrics;
use crate::cli::InventoryArgs;
use crate::live::kube::Progress;
use crate::render::render;
use crate::util::date::Date;

pub fn run(args: &InventoryArgs, progress: &Arc<Progress>) -> anyhow::Result<Outcome> {
    let repo = args.repo.repo.as_deref();
    let (cfg, cfg_path) = load::config(args.output.config.as_deref(), repo)?;
    let live = load::live(&args.live, progress)?;
    let objects = live.objects;
    let mut sources = live.sources;
    let mut notes = Vec::new();
    if let Some(p) = &cfg_path {
        sources.push(p.display().to_string());
        notes.push(format!("using config {}", p.display()));
    }
    let mut failed = Vec::new();
    let desired = match repo {
        Some(r) => {
            let d = load::desired_state(&args.repo, r, &cfg, &objects)?;
            sources.push(format!("{} ({})", r.display(), d.at));
            failed = load::render_failures(&d);
            Some(d)
        }
        None => None,
    };
    let metrics = load::metrics(&args.live, &cfg);
    if let Metrics::Failed(reason) = &metrics {
        notes.push(format!("GPUs used are unknown: {reason}"));
    }
    let mut report = inventory_with_metrics(&objects, &cfg, sources, &metrics);
    report.complete = live.incomplete.is_empty();
    report.incomplete = live.incomplete;
    if let Some(d) = &desired {
        report.drift = Some(drift(
            &report.workloads,
            &objects,
            d,
            &cfg,
            args.now.unwrap_or_else(Date::today),
        ));
    }
    let text = render(&report, args.output.format);
    let stdout = deliver(text, args.output.output.as_deref(), &mut notes)?;
    let mut exit_code = 0;
    if !failed.is_empty() {
        notes.push(format!(
            "{} failed to render: {}",
            failed.len(),
            failed.join("; ")
        ));
        exit_code = 2;
    }
    for m in &report.incomplete {
        notes.push(format!("report incomplete: {}: {}", m.resource, m.reason));
        exit_code = 2;
    }
    Ok(Outcome {
        stdout,
        notes,
        exit_code,
    })
}
