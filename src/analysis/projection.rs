//! The capacity projection of a check: the cluster after the change syncs.
//!
//! It starts from what the live cluster holds now — the GPUs its bound pods request and its
//! pending pods ask for, the figures `inventory` counts — and moves only the workloads the change
//! touches: one the change adds runs at its head shape; one it reshapes moves by what the change
//! does to its shape (head − base, on what it holds now: a graph the cluster runs below Git's
//! shape keeps that distance, so a shrink never reads as needing more), or runs at its head shape
//! when the change starts it (its base declared none); one it removes is gone if its app prunes,
//! else it keeps what it holds. Work that holds no GPUs now and that the
//! change does not start — a finished Job, a parked workload Git still declares, a CronJob between
//! runs — counts nothing, as in the inventory. So a change that touches no workload projects
//! exactly the inventory's requested + pending.
//!
//! A workload whose pod templates name GPU models ([`super::pins`]) can only run on them: each
//! model (or set of models) the change touches is judged on its own too — what its nodes hold now
//! plus the pending pods that can only run there (the inventory's per-model `requested` and
//! `pending`), with the touched workloads that can only run there moved, against that model's
//! placeable GPUs. An H100 shortage is not hidden by free L4s. A model no node read has has 0
//! placeable: what is pinned there cannot be placed.

use std::collections::{BTreeMap, BTreeSet};

use crate::report::{CapacityFit, Desired, DesiredWorkloadRow, ModelFit, Report};
use crate::util::sum::{self, Named, Overflow};
use crate::workload::WorkloadId;

/// A workload of one side, by cluster and identity (as `impact` indexes them).
pub type Side<'a> = BTreeMap<(Option<String>, WorkloadId), &'a DesiredWorkloadRow>;

/// Live figures a projection needs: unknown (with why) when the live state did not give them.
const NEEDED: [&str; 3] = ["gpus.placeable", "gpus.requested", "gpus.pending"];

/// The fleet after the change syncs, against its placeable GPUs; `Ok(Err(why))` when a live figure
/// it needs is unknown. `unmanaged` is what unmanaged live workloads hold (reported beside it).
pub fn project(
    report: &Report,
    base: &Desired,
    b: &Side<'_>,
    h: &Side<'_>,
    unmanaged: u64,
) -> Result<Result<CapacityFit, String>, Overflow> {
    if let Some((field, why)) = NEEDED
        .iter()
        .find_map(|f| report.fleet.unknown.get(*f).map(|why| (f, why)))
    {
        return Ok(Err(format!("the live {field} is unknown: {why}")));
    }
    let g = &report.fleet.gpus;
    let now =
        sum::add(g.requested, g.pending).named("the cluster", "GPUs requested and pending")?;
    // What each live workload holds now, bound and pending.
    let mut live: BTreeMap<WorkloadId, u64> = BTreeMap::new();
    for w in &report.workloads {
        let held = sum::add(w.gpus, w.gpus_pending).named(w.id(), "GPUs held")?;
        sum::add_to(live.entry(w.id().placed()).or_default(), held).named(w.id(), "GPUs held")?;
    }
    let keys: BTreeSet<_> = b.keys().chain(h.keys()).collect();
    let (mut freed, mut added) = (0u64, 0u64);
    let mut moved = Vec::new();
    // What each touched workload held and will hold, with the models it may run on before and
    // after (empty: any).
    let mut pinned: Vec<(&[String], u64, &[String], u64)> = Vec::new();
    for k in keys {
        let (bw, hw) = (b.get(k), h.get(k));
        // What can be counted of the declared GPUs (a desired row's `gpus`); a head with GPUs a
        // DRA claim cannot count leaves the capacity unknown before this is read (impact.rs).
        let gpus = |w: Option<&&DesiredWorkloadRow>| w.map_or(0, |w| w.workload.gpus);
        let (base_gpus, head_gpus) = (gpus(bw), gpus(hw));
        if bw
            .zip(hw)
            .is_some_and(|(x, y)| x.workload.roles == y.workload.roles)
        {
            continue;
        }
        let held = live.get(&k.1.clone().placed()).copied().unwrap_or(0);
        let after = match (bw, hw) {
            (None, Some(_)) => head_gpus,
            (Some(_), Some(_)) if base_gpus == 0 => head_gpus,
            (Some(_), Some(_)) if held > 0 => sum::add(held, head_gpus)
                .named(&k.1, "GPUs projected")?
                .saturating_sub(base_gpus),
            (Some(_), Some(_)) => 0,
            (Some(x), None) => {
                let prunes = base
                    .apps
                    .iter()
                    .find(|a| a.name == x.app && a.kind == x.app_kind)
                    .and_then(|a| a.prune);
                if prunes == Some(true) { 0 } else { held }
            }
            (None, None) => continue,
        };
        if after != held {
            moved.push(format!("{} {held} → {after}", k.1));
        }
        let (from, to) = match (bw, hw) {
            (Some(x), Some(y)) => (&x.gpu_models, &y.gpu_models),
            (Some(x), None) | (None, Some(x)) => (&x.gpu_models, &x.gpu_models),
            (None, None) => continue,
        };
        pinned.push((from, held, to, after));
        sum::add_to(&mut freed, held).named("the change", "GPUs freed")?;
        sum::add_to(&mut added, after).named("the change", "GPUs projected")?;
    }
    let projected =
        sum::add(now.saturating_sub(freed), added).named("the head", "GPUs projected")?;
    let by_model = by_model(report, &pinned)?;
    Ok(Ok(CapacityFit {
        placeable: g.placeable,
        projected,
        unmanaged_live: unmanaged,
        fits: projected <= g.placeable && by_model.iter().all(|m| m.fits),
        base_projected: now,
        base_fits: now <= g.placeable,
        live_requested: Some(g.requested),
        live_pending: Some(g.pending),
        moved,
        by_model,
    }))
}

/// Each GPU model of the fleet, and each set of models a touched workload names, judged on its
/// own: what the inventory counts on those models now, with every touched workload that can only
/// run there moved.
fn by_model(
    report: &Report,
    pinned: &[(&[String], u64, &[String], u64)],
) -> Result<Vec<ModelFit>, Overflow> {
    let touched: BTreeSet<&[String]> = pinned
        .iter()
        .flat_map(|(from, _, to, _)| [*from, *to])
        .filter(|p| !p.is_empty())
        .collect();
    let fleet: Vec<Vec<String>> = report
        .fleet
        .models
        .iter()
        .map(|m| vec![m.model.clone()])
        .collect();
    let pools: BTreeSet<&[String]> = fleet
        .iter()
        .map(Vec::as_slice)
        .chain(touched.iter().copied())
        .collect();
    let within =
        |pin: &[String], pool: &[String]| !pin.is_empty() && pin.iter().all(|m| pool.contains(m));
    let mut fits = Vec::new();
    for pool in pools {
        let model = pool.join(" or ");
        let (mut nodes, mut placeable, mut now) = (0u64, 0u64, 0u64);
        for m in report
            .fleet
            .models
            .iter()
            .filter(|m| pool.contains(&m.model))
        {
            sum::add_to(&mut nodes, m.nodes).named(&model, "GPU nodes")?;
            sum::add_to(&mut placeable, m.placeable).named(&model, "placeable GPUs")?;
            sum::add_to(&mut now, m.requested).named(&model, "GPUs requested")?;
            sum::add_to(&mut now, m.pending).named(&model, "GPUs pending")?;
        }
        let (mut freed, mut added) = (0u64, 0u64);
        for (from, held, to, after) in pinned {
            if within(from, pool) {
                sum::add_to(&mut freed, *held).named(&model, "GPUs freed")?;
            }
            if within(to, pool) {
                sum::add_to(&mut added, *after).named(&model, "GPUs projected")?;
            }
        }
        let after = sum::add(now.saturating_sub(freed), added).named(&model, "GPUs projected")?;
        fits.push(ModelFit {
            model,
            models: pool.to_vec(),
            nodes,
            placeable,
            now,
            after,
            fits: after <= placeable,
            touched: touched.contains(pool),
        });
    }
    Ok(fits)
}
