//! A tenant's or product line's cost row from its workloads' rows and its pods of no live workload:
//! costs summed (unknown when any part is), outcomes over the workloads that report them, and cost
//! per 1,000 over the same workloads.

use super::outcomes::per_hour_and_cost;
use crate::report::cost::{Breakdown, CostRow};

/// A tenant's or product line's row from its workloads and its pods of no live workload.
pub(super) fn aggregate(
    name: String,
    workloads: &[&CostRow],
    others: &[&CostRow],
    cost_unknown: Option<&str>,
    hours: f64,
) -> CostRow {
    let all = || workloads.iter().chain(others.iter());
    let sum = |f: &dyn Fn(&CostRow) -> Option<f64>| -> Option<f64> {
        all().map(|r| f(r)).try_fold(0.0, |s, x| Some(s + x?))
    };
    let mut row = CostRow {
        name,
        gpus_requested: workloads.iter().map(|w| w.gpus_requested).sum(),
        total_cost: sum(&|r| r.total_cost),
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
            external: sum(&|r| r.breakdown.external),
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
    // Outcomes: over the workloads that report them; the cost per 1,000 over the same ones.
    let known: Vec<&&CostRow> = workloads
        .iter()
        .filter(|w| w.verified_outcomes.is_some() || w.verified_interval.is_some())
        .collect();
    let silent = workloads.len() - known.len();
    if known.is_empty() {
        row.unknown.insert(
            "verified_outcomes".into(),
            "none of its workloads reports outcomes".into(),
        );
    } else {
        let point: Option<f64> = known
            .iter()
            .map(|w| w.verified_outcomes)
            .try_fold(0.0, |s, v| Some(s + v?));
        let bounds = |i: usize| -> f64 {
            known
                .iter()
                .map(|w| match (w.verified_interval, w.verified_outcomes) {
                    (Some(b), _) => b.get(i).copied().unwrap_or(0.0),
                    (None, Some(v)) => v,
                    (None, None) => 0.0,
                })
                .sum()
        };
        let sampled = known.iter().any(|w| w.verified_interval.is_some());
        row.verified_outcomes = point;
        if sampled {
            row.verified_interval = Some([bounds(0), bounds(1)]);
        }
        if point.is_none() {
            row.unknown.insert(
                "verified_outcomes".into(),
                "a workload's reviewed sample is below the minimum: only the interval is given"
                    .into(),
            );
        }
        let cost_of_known: Option<f64> = known
            .iter()
            .map(|w| w.total_cost)
            .try_fold(0.0, |s, c| Some(s + c?));
        if silent > 0 {
            row.unknown.insert(
                "cost_per_1000".into(),
                format!(
                    "over the {} of its {} workloads that report outcomes, and their cost only",
                    known.len(),
                    workloads.len()
                ),
            );
        }
        // With every workload reporting, the whole cost buys the outcomes (idle, finished jobs
        // and outside costs included); otherwise only the reporting workloads' cost is comparable.
        let basis = if silent == 0 {
            row.total_cost
        } else {
            cost_of_known
        };
        let mut scratch = CostRow {
            total_cost: basis,
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
            "not every workload's suitability is known".into(),
        );
    }
    row
}
