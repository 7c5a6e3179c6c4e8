//! Cost per verified outcome: what each workload, tenant and product line cost over a window,
//! what it produced, and whether it is fit for its purpose at all.
//!
//! **Cost** comes from OpenCost's allocations, one per pod. A pod's cost goes to the workload
//! gpuledger finds it belongs to (the same owner walk as the inventory, so a LeaderWorkerSet's
//! StatefulSet pods are the LeaderWorkerSet's); a pod OpenCost saw that belongs to no live
//! workload (a finished job, a pod without GPUs) stays with its namespace and that namespace's
//! tenant. Three costs are not any one workload's, and the report states the rule each followed:
//! OpenCost's idle cost (spread in proportion to each allocation's cost of the same resource, as
//! OpenCost's own `shareIdle` does, or kept separate), the cost of the shared namespaces of
//! `.gpuledger.yaml` (spread over everything else by GPU-hours; OpenCost's HTTP API cannot share
//! namespaces), and costs outside OpenCost from the configuration (each added once, to the one
//! workload or tenant it names). GPU cost is OpenCost's: billed on allocation, not on use.
//!
//! **Outcomes** come from the application: an outcome-records file, prorated by each record's
//! overlap with the window, or the counter a workload names in `gpuledger.io/outcomes-metric`.
//! A verified outcome met the quality threshold and the deadline; retries, failures, start-up
//! and idle time are in the cost and never in the outcomes. When correctness comes from a
//! reviewed sample, the pass rate has a Wilson 95% interval, and so have the verified outcomes
//! and the cost per 1,000 of them; below the minimum sample (`cost.min_sample`, default 30) only
//! the interval is given. A workload whose pass rate is below its quality threshold is
//! unsuitable whatever it costs.
//!
//! Pure: the fleet model, the window, OpenCost's answer, the records and the counters' values are
//! passed in. The work follows the data: [`allocate`] attributes OpenCost's allocations and spreads
//! idle, shared and outside costs; [`outcomes`] counts each workload's verified outcomes and its
//! cost per 1,000; [`rollup`] adds workloads up per tenant and product line; this file runs the
//! steps in order and assembles the section.

mod allocate;
mod coverage;
mod inputs;
mod outcomes;
mod rollup;

use std::collections::{BTreeMap, BTreeSet};

use crate::analysis::live::LiveFleet;
use crate::config::Config;
use crate::k8s::types::LabelMap;
use crate::report::cost::{
    Cost, CostRow, Decision, InferenceRow, OtherCost, Priced, UnassignedCost,
};
use crate::util::sum::Overflow;

use allocate::{Acc, Allocated, Target, add_external, fill_cost, spread_idle, spread_shared};
pub use coverage::{Covered, SLACK_S, covered};
pub use inputs::CostInputs;
use inputs::{by_cost, plus};
use outcomes::Outcomes;
pub use outcomes::wilson;

/// The cost section of the live fleet; see the module documentation.
pub fn cost(
    fleet: &LiveFleet<'_>,
    cfg: &Config,
    inputs: &CostInputs<'_>,
) -> Result<Cost, Overflow> {
    let c = &cfg.cost;
    let window = inputs.window;
    // What cost and outcomes are counted over: the window, or the part OpenCost covers.
    let covered = covered(window, inputs.opencost);
    let hours = covered.hours;
    let mut unknown = crate::report::Unknown::default();
    if let Some(why) = &fleet.used_unknown {
        unknown.set("gpus_busy", why.clone());
    }
    let mut rules = vec![
        "Each pod's cost goes to the workload it belongs to; pods of no live workload (finished jobs, pods without GPUs) stay with their namespace's tenant. GPU cost is OpenCost's: billed on allocation (requested GPU-hours), not on use.".to_string(),
    ];
    let shared_ns: BTreeSet<&str> = c.shared_namespaces.iter().map(String::as_str).collect();

    // Where the cost is unknown for everyone, and why.
    let cost_unknown: Option<String> = match inputs.opencost {
        None => Some("no cost source: give --opencost URL (the OpenCost API)".into()),
        Some(Err(e)) => Some(e.to_string()),
        Some(Ok(_)) => None,
    };
    let Allocated {
        mut accs,
        idle,
        other_labels,
    } = match inputs.opencost {
        Some(Ok(data)) => allocate::attribute(fleet, cfg, &data.allocations, &shared_ns),
        _ => Allocated::default(),
    };

    let idle_total = idle.costs.total;
    let mut unassigned: Vec<UnassignedCost> = Vec::new();
    if cost_unknown.is_none() {
        spread_idle(&mut accs, &idle, c.idle, &mut rules, &mut unassigned);
    }
    let shared = accs.remove(&Target::Shared);
    let shared_total = shared.as_ref().map_or(Some(0.0), Acc::total);
    if cost_unknown.is_none() {
        if shared_ns.is_empty() {
            rules.push("No shared namespaces (cost.shared_namespaces): each namespace's cost stays with its tenant.".into());
        } else {
            spread_shared(
                &mut accs,
                &c.shared_namespaces.join(", "),
                shared_total,
                &mut rules,
                &mut unassigned,
            );
        }
    }
    let (tenant_external, external_total) = add_external(
        &mut accs,
        fleet,
        &c.external,
        hours,
        &mut rules,
        &mut unassigned,
    );

    // Totals.
    let total_cost = match &cost_unknown {
        Some(_) => None,
        None => {
            // Shares of idle and shared cost move money between rows: the total is every
            // allocation's own cost once, idle included, plus the outside costs.
            let shared_own = shared.as_ref().map_or(Some(0.0), |s| s.costs.total);
            let own = accs
                .values()
                .map(|a| a.costs.total)
                .chain([idle_total, shared_own])
                .try_fold(0.0, |s, t| Some(s + t?));
            plus(own, Some(external_total))
        }
    };
    if let Some(why) = &cost_unknown {
        unknown.set("total_cost", why.clone());
    } else if total_cost.is_none() {
        unknown.set(
            "total_cost",
            "OpenCost gave NaN for part of the window's cost",
        );
    }

    // Outcomes per workload.
    let outcomes = Outcomes::new(inputs, covered.spans.clone());
    let mut outcome_sources = Vec::new();
    if let Some(f) = inputs.records {
        outcome_sources.push(format!("records {}", f.path));
    }
    if let Some(p) = inputs.counter_source
        && !inputs.counters.is_empty()
    {
        outcome_sources.push(format!("counters in {p}"));
    }

    let workloads: Vec<CostRow> = fleet
        .each()
        .map(|(i, w, a)| {
            let mut row = CostRow {
                name: w.id.to_string(),
                tenant: Some(a.tenant.clone()),
                product_line: a.product_line.clone(),
                gpus_requested: w.requested.whole,
                gpus_busy: a.used.map(|u| u.busy),
                quality_threshold: a.intent.as_ref().and_then(|x| x.quality_threshold),
                ..CostRow::default()
            };
            match (&cost_unknown, accs.get(&Target::Workload(i))) {
                (Some(why), _) => {
                    row.unknown.insert("total_cost".into(), why.clone());
                }
                // An outside cost alone is not its cost: what OpenCost would say is unknown.
                (None, None) => {
                    row.unknown.insert(
                        "total_cost".into(),
                        "OpenCost has no allocation for its pods in the window".into(),
                    );
                }
                (None, Some(acc)) if !acc.seen => {
                    row.breakdown.external = acc.external;
                    row.unknown.insert(
                        "total_cost".into(),
                        "OpenCost has no allocation for its pods in the window (only its outside cost is known)".into(),
                    );
                }
                (None, Some(acc)) => fill_cost(&mut row, acc),
            }
            let selector = a.intent.as_ref().and_then(|x| x.outcomes_metric.as_deref());
            outcomes.fill(&mut row, selector, c.min_sample, hours);
            row
        })
        .collect();

    // Pods of no live workload, per namespace.
    let mut other = Vec::new();
    let mut other_rows: Vec<CostRow> = Vec::new();
    for (t, a) in &accs {
        let Target::Other(ns) = t else { continue };
        let labels: LabelMap = other_labels.get(ns).map(LabelMap::from).unwrap_or_default();
        let tenant = fleet.tenancy.tenant(&labels, ns);
        let mut row = CostRow {
            name: ns.clone(),
            tenant: Some(tenant.clone()),
            product_line: fleet.tenancy.product_line(&labels, ns),
            ..CostRow::default()
        };
        fill_cost(&mut row, a);
        other.push(OtherCost {
            namespace: ns.clone(),
            tenant,
            total_cost: row.total_cost,
        });
        other_rows.push(row);
    }
    other.sort_by(|a, b| {
        by_cost(a.total_cost, b.total_cost).then_with(|| a.namespace.cmp(&b.namespace))
    });

    // Every row's cost goes to exactly one tenant and one product line; an outside cost that names
    // a tenant has no product line. So Σ tenants = Σ product lines = total − unassigned.
    let group = |key: &dyn Fn(&CostRow) -> String, external: &BTreeMap<String, f64>| {
        let mut groups: BTreeMap<String, (Vec<&CostRow>, Vec<&CostRow>)> = BTreeMap::new();
        for r in &workloads {
            groups.entry(key(r)).or_default().0.push(r);
        }
        for r in &other_rows {
            groups.entry(key(r)).or_default().1.push(r);
        }
        for name in external.keys() {
            groups.entry(name.clone()).or_default();
        }
        groups
            .into_iter()
            .map(|(name, (ws, others))| {
                let e = external.get(&name).copied().unwrap_or(0.0);
                rollup::aggregate(name, &ws, &others, e, cost_unknown.as_deref(), hours)
            })
            .collect::<Vec<CostRow>>()
    };
    let tenant_gpus = fleet.tenant_gpus();
    let mut tenants = group(
        &|r| r.tenant.clone().unwrap_or_else(|| "(none)".into()),
        &tenant_external,
    );
    for t in &mut tenants {
        if let Some((requested, used)) = tenant_gpus.get(t.name.as_str()) {
            t.gpus_requested = *requested;
            t.gpus_busy = *used;
        }
    }
    let to_tenants: f64 = tenant_external.values().sum();
    let mut no_line: BTreeMap<String, f64> = BTreeMap::new();
    if to_tenants != 0.0 {
        no_line.insert("(none)".to_string(), to_tenants);
    }
    let mut product_lines = group(
        &|r| r.product_line.clone().unwrap_or_else(|| "(none)".into()),
        &no_line,
    );
    let mut workloads = workloads;
    for rows in [&mut workloads, &mut tenants, &mut product_lines] {
        rows.sort_by(|a, b| by_cost(a.total_cost, b.total_cost).then_with(|| a.name.cmp(&b.name)));
    }

    let (inference, inference_unknown) = match inputs.opencost {
        Some(Ok(d)) => match &d.inference {
            Ok(Some(v)) => (
                v.iter()
                    .map(|x| InferenceRow {
                        model: x.model.clone(),
                        namespace: x.namespace.clone(),
                        cost_basis: x.cost_basis.clone(),
                        total_cost: x.total_cost,
                        total_tokens: x.total_tokens,
                        cost_per_million_tokens: x.cost_per_million_tokens,
                    })
                    .collect(),
                None,
            ),
            Ok(None) => (
                Vec::new(),
                Some("OpenCost does not serve /inferenceCost (1.121 or later with INFERENCE_COST_ENABLED=true)".to_string()),
            ),
            Err(e) => (Vec::new(), Some(e.to_string())),
        },
        _ => (Vec::new(), None),
    };
    if let Some(why) = &inference_unknown {
        unknown.set("inference", why.clone());
    }

    let unassigned_cost = match &cost_unknown {
        Some(_) => None,
        None => unassigned
            .iter()
            .map(|u| u.cost)
            .try_fold(0.0, |s, c| Some(s + c?)),
    };
    let decision = decide(&workloads);

    Ok(Cost {
        window_start: window.start.to_string(),
        window_end: window.end.to_string(),
        window_hours: window.hours(),
        covered_hours: covered.partial.as_ref().map(|_| covered.hours),
        covered_share: covered.partial.as_ref().map(|(share, _)| *share),
        partial: covered
            .partial
            .iter()
            .map(|(_, why)| ("total_cost".to_string(), why.clone()))
            .collect(),
        source: match inputs.opencost {
            Some(Ok(d)) => Some(d.source.clone()),
            _ => None,
        },
        outcome_sources,
        rules: if cost_unknown.is_some() {
            Vec::new()
        } else {
            rules
        },
        total_cost,
        idle_cost: if cost_unknown.is_some() {
            None
        } else {
            idle_total
        },
        shared_cost: if cost_unknown.is_some() || shared_ns.is_empty() {
            None
        } else {
            shared_total
        },
        external_cost: external_total,
        unassigned: if cost_unknown.is_some() {
            Vec::new()
        } else {
            unassigned
        },
        unassigned_cost,
        tenant_external_cost: to_tenants,
        decision,
        min_sample: c.min_sample,
        unknown,
        problems: inputs
            .records
            .map(|f| f.problems.iter().map(ToString::to_string).collect())
            .unwrap_or_default(),
        workloads,
        tenants,
        product_lines,
        other,
        inference,
        inference_unknown,
    })
}

/// The decision the headline states over `workloads`: the cheapest and dearest verified outcome
/// among the work that is not unsuitable, the unsuitable work, and the work whose cost per
/// verified outcome is unknown. A caller that shows only some workloads (the pull-request check)
/// decides over those.
pub fn decide(workloads: &[CostRow]) -> Decision {
    let mut priced: Vec<Priced> = Vec::new();
    let mut d = Decision::default();
    for w in workloads {
        match (w.suitable, w.cost_per_1000) {
            (Some(false), _) => d.unsuitable.push(w.name.clone()),
            (_, Some(c)) => priced.push(Priced {
                workload: w.name.clone(),
                cost_per_1000: c,
            }),
            (_, None) => d.unpriced.push(w.name.clone()),
        }
    }
    priced.sort_by(|a, b| {
        a.cost_per_1000
            .total_cmp(&b.cost_per_1000)
            .then_with(|| a.workload.cmp(&b.workload))
    });
    d.unsuitable.sort();
    d.unpriced.sort();
    d.cheapest = priced.first().cloned();
    d.dearest = priced.last().cloned();
    d
}

#[cfg(test)]
mod tests;
