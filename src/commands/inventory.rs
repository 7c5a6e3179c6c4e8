//! `gpuledger inventory`: read the fleet (snapshots or clusters), compute the inventory (and, with
//! `--repo`, drift against Git), render it. Several `--context`s give one section per cluster plus
//! their total.

use std::sync::Arc;

use super::{Outcome, deliver, load};
use crate::analysis::drift::drift;
use crate::analysis::fleets::combine;
use crate::analysis::inventory::{inventory_with_metrics, live_workloads};
use crate::analysis::usage::Metrics;
use crate::cli::InventoryArgs;
use crate::live::kube::Progress;
use crate::render::render;
use crate::util::date::Date;

pub fn run(args: &InventoryArgs, progress: &Arc<Progress>) -> anyhow::Result<Outcome> {
    let repo = args.repo.repo.as_deref();
    let (cfg, cfg_path) = load::config(args.output.config.as_deref(), repo)?;
    let live = load::live(&args.live, progress)?;
    let several = live.parts.len() > 1;
    anyhow::ensure!(
        !(several && repo.is_some()),
        "drift (--repo) compares one cluster at a time: give a single --context"
    );
    anyhow::ensure!(
        !(several && args.live.prometheus.is_some()),
        "--prometheus belongs to one cluster: give a single --context"
    );
    let mut sources = live.sources.clone();
    let mut notes = Vec::new();
    if let Some(p) = &cfg_path {
        sources.push(p.display().to_string());
        notes.push(format!("using config {}", p.display()));
    }
    let metrics = load::metrics(&args.live, &cfg);
    if let Metrics::Failed(reason) = &metrics {
        notes.push(format!("GPUs used are unknown: {reason}"));
    }

    let mut failed = Vec::new();
    let mut report = if several {
        let reports = live
            .parts
            .into_iter()
            .map(|p| {
                let mut r = inventory_with_metrics(&p.objects, &cfg, vec![], &metrics);
                r.complete = p.incomplete.is_empty();
                r.incomplete = p.incomplete;
                (p.name.unwrap_or_default(), r)
            })
            .collect();
        combine(reports, sources)
    } else {
        let (part, _) = live.single("inventory")?;
        let desired = match repo {
            Some(r) => {
                let d = load::desired_state(&args.repo, r, &cfg, &part.objects)?;
                sources.push(format!("{} ({})", r.display(), d.at));
                failed = load::render_failures(&d);
                Some(d)
            }
            None => None,
        };
        let mut report = inventory_with_metrics(&part.objects, &cfg, sources, &metrics);
        report.complete = part.incomplete.is_empty();
        report.incomplete = part.incomplete;
        if let Some(d) = &desired {
            let today = args.now.unwrap_or_else(Date::today);
            let live = live_workloads(&part.objects);
            report.drift = Some(drift(&live, &part.objects, d, &cfg, today));
        }
        report
    };
    report.complete = report.incomplete.is_empty();

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
