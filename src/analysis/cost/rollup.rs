//! A tenant's or product line's cost row from its workloads' rows, its pods of no live workload
//! and the outside costs that name it: costs summed (unknown when any part is), and verified
//! outcomes and the cost per 1,000 of them over that same total.
//!
//! The rule, so that the figures add up: a group's cost per 1,000 verified outcomes is its whole
//! cost (the cost column: its workloads, its pods of no live workload, its shares of idle and
//! shared cost, its outside costs) over the verified outcomes of all its workloads. An unsuitable
//! workload adds its cost and no verified outcome. When a workload that is not unsuitable has
//! unknown outcomes, the group's outcomes, and so its cost per outcome, are unknown and say which
//! workloads are missing: a part is never counted as the whole.

use super::inputs::plus;
use super::outcomes::per_hour_and_cost;
use crate::report::cost::{Breakdown, CostRow};

/// A tenant's or product line's row from its workloads, its pods of no live workload, and the
/// outside cost that names it (`external`, counted once).
pub(super) fn aggregate(
    name: String,
    workloads: &[&CostRow],
    others: &[&CostRow],
    external: f64,
    cost_unknown: Option<&str>,
    hours: f64,
) -> CostRow {
    let all = || workloads.iter().chain(others.iter());
    let sum = |f: &dyn Fn(&CostRow) -> Option<f64>| -> Option<f64> {
        all().map(|r| f(r)).try_fold(0.0, |s, x| Some(s + x?))
    };
    let outside = (external != 0.0).then_some(external);
    let mut row = CostRow {
        name,
        gpus_requested: workloads.iter().map(|w| w.gpus_requested).sum(),
        total_cost: match cost_unknown {
            Some(_) => None,
            None => plus(sum(&|r| r.total_cost), Some(external)),
        },
        gpu_hours: sum(&|r| r.gpu_hours),
        breakdown: Breakdown {
            gpu: sum(&|r| r.breakdown.gpu),
            cpu: sum(&|r| r.breakdown.cpu),
            ram: sum(&|r| r.breakdown.ram),
            pv: sum(&|r| r.breakdown.pv),
            network: sum(&|r| r.breakdown.network),
            load_balancer: sum(&|r| r.breakdown.load_balancer),
            idle: sum(&|r| r.breakdown.idle),
            shared: sum(&|r| r.breakdown.shared),
            external: outside.map_or_else(
                || sum(&|r| r.breakdown.external),
                |e| plus(sum(&|r| r.breakdown.external), Some(e)),
            ),
        },
        ..CostRow::default()
    };
    if row.total_cost.is_none() {
        let why = cost_unknown.map(str::to_string).unwrap_or_else(|| {
            let names: Vec<&str> = all()
                .filter(|r| r.total_cost.is_none())
                .map(|r| r.name.as_str())
                .collect();
            format!("the cost of {} is unknown", names.join(", "))
        });
        row.unknown.insert("total_cost".into(), why);
    }
    outcomes(&mut row, workloads, hours);
    row.unknown.insert(
        "pass_rate".into(),
        "judged per workload, against each one's own threshold".into(),
    );
    row.suitable = if workloads.iter().any(|w| w.suitable == Some(false)) {
        Some(false)
    } else if !workloads.is_empty() && workloads.iter().all(|w| w.suitable == Some(true)) {
        Some(true)
    } else {
        None
    };
    if row.suitable.is_none() {
        row.unknown.insert(
            "suitable".into(),
            if workloads.is_empty() {
                "it has no live workload to judge".into()
            } else {
                "not every workload's suitability is known".into()
            },
        );
    }
    row
}

/// The group's verified outcomes (all its workloads', or unknown with the ones missing) and the
/// cost per 1,000 of them over its whole cost.
fn outcomes(row: &mut CostRow, workloads: &[&CostRow], hours: f64) {
    let reports = |w: &CostRow| w.verified_outcomes.is_some() || w.verified_interval.is_some();
    let silent: Vec<&str> = workloads
        .iter()
        .filter(|w| !reports(w))
        .map(|w| w.name.as_str())
        .collect();
    if workloads.is_empty() {
        row.unknown.insert(
            "verified_outcomes".into(),
            "it has no live workload: its cost (pods of no live workload, outside costs) buys no counted outcome".into(),
        );
        return;
    }
    if silent.len() == workloads.len() {
        row.unknown.insert(
            "verified_outcomes".into(),
            "none of its workloads reports outcomes".into(),
        );
        return;
    }
    if !silent.is_empty() {
        // The outcomes of the others are only part of what its whole cost bought.
        let why = format!(
            "{} of its {} workloads report no outcomes ({}): its cost buys outcomes that were not counted",
            silent.len(),
            workloads.len(),
            silent.join(", ")
        );
        row.unknown.insert("verified_outcomes".into(), why.clone());
        row.unknown.insert("cost_per_1000".into(), why);
        return;
    }
    let point: Option<f64> = workloads
        .iter()
        .map(|w| w.verified_outcomes)
        .try_fold(0.0, |s, v| Some(s + v?));
    let bound = |i: usize| -> f64 {
        workloads
            .iter()
            .map(|w| match (w.verified_interval, w.verified_outcomes) {
                (Some(b), _) => b.get(i).copied().unwrap_or(0.0),
                (None, Some(v)) => v,
                (None, None) => 0.0,
            })
            .sum()
    };
    row.verified_outcomes = point;
    if workloads.iter().any(|w| w.verified_interval.is_some()) {
        row.verified_interval = Some([bound(0), bound(1)]);
    }
    if point.is_none() {
        row.unknown.insert(
            "verified_outcomes".into(),
            "a workload's reviewed sample is below the minimum: only the interval is given".into(),
        );
    }
    // The same total as the cost column.
    let mut scratch = CostRow {
        total_cost: row.total_cost,
        verified_outcomes: row.verified_outcomes,
        verified_interval: row.verified_interval,
        ..CostRow::default()
    };
    per_hour_and_cost(&mut scratch, hours);
    row.verified_per_hour = scratch.verified_per_hour;
    row.cost_per_1000 = scratch.cost_per_1000;
    row.cost_per_1000_interval = scratch.cost_per_1000_interval;
    for (k, v) in scratch.unknown {
        row.unknown.entry(k).or_insert(v);
    }
}
