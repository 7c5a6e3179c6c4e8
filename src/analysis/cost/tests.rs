//! Cost per verified outcome on small fleets: attribution, spreading, outcomes and the seed's worked
//! example.

use super::outcomes::per_hour_and_cost;
use super::*;
use crate::analysis::live::LiveFleet;
use crate::analysis::usage::Metrics;
use crate::k8s::read::read_str;
use crate::live::opencost::Costs;
use crate::live::opencost::{Allocation, CostData, Window};
use crate::live::outcomes::parse;
use crate::util::date::Timestamp;

/// A running Job of one 1-GPU pod with a 98% quality threshold.
fn job(name: &str) -> String {
    format!(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {{name: {name}, namespace: eval, uid: u-{name}, annotations: {{gpuledger.io/quality-threshold: \"0.98\"}}}}\nspec:\n  parallelism: 1\n  template:\n    spec:\n      containers: [{{name: c, resources: {{limits: {{nvidia.com/gpu: 1}}}}}}]\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}-p\n  namespace: eval\n  ownerReferences: [{{apiVersion: batch/v1, kind: Job, name: {name}, uid: u-{name}, controller: true}}]\nspec:\n  nodeName: n\n  containers: [{{name: c, resources: {{limits: {{nvidia.com/gpu: 1}}}}}}]\nstatus: {{phase: Running}}\n---\n"
    )
}

fn allocation(pod: &str, total: f64) -> Allocation {
    Allocation {
        key: format!("eval/job/x/{pod}"),
        namespace: Some("eval".into()),
        controller_kind: Some("job".into()),
        pod: Some(pod.into()),
        gpu_hours: Some(1.0),
        costs: Costs {
            gpu: Some(total),
            cpu: Some(0.0),
            ram: Some(0.0),
            pv: Some(0.0),
            network: Some(0.0),
            load_balancer: Some(0.0),
            shared: Some(0.0),
            external: Some(0.0),
            total: Some(total),
        },
        ..Allocation::default()
    }
}

/// The seed's worked example: 1,000 tasks an hour at a 98% requirement. A model at 90% is
/// unsuitable however cheap; 990 correct and timely results for $2/h are about $2.02 per
/// 1,000 qualifying outcomes, and the same for $1.50/h about $1.52.
#[test]
fn the_seeds_worked_example() {
    let text = [job("big"), job("cheap"), job("small")].concat();
    let objects = read_str(&text, "fleet.yaml").unwrap();
    let cfg = Config::default();
    let fleet = LiveFleet::read(&objects, &cfg, &Metrics::NotConfigured).unwrap();
    let window = Window::ending(
        Timestamp::parse("2026-12-02T12:00:00Z").unwrap(),
        std::time::Duration::from_secs(3600),
    );
    let data = Ok(CostData {
        coverage: crate::live::opencost::Coverage {
            spans: vec![(window.start, window.end)],
            undated: 0,
        },
        source: "http://opencost".into(),
        allocations: vec![
            allocation("big-p", 2.0),
            allocation("cheap-p", 1.5),
            allocation("small-p", 0.5),
        ],
        inference: Ok(None),
    });
    let records = parse(
        "workload,start,end,results,verified\n\
eval/Job/big,2026-12-02T11:00:00Z,2026-12-02T12:00:00Z,1000,990\n\
eval/Job/cheap,2026-12-02T11:00:00Z,2026-12-02T12:00:00Z,1000,990\n\
eval/Job/small,2026-12-02T11:00:00Z,2026-12-02T12:00:00Z,1000,900\n",
        "outcomes.csv",
    );
    let counters = BTreeMap::new();
    let inputs = CostInputs {
        window,
        opencost: Some(&data),
        records: Some(&records),
        counters: &counters,
        counter_source: None,
    };
    let c = cost(&fleet, &cfg, &inputs).unwrap();
    let w = |n: &str| {
        c.workloads
            .iter()
            .find(|r| r.name == format!("eval/Job/{n}"))
            .unwrap()
    };
    let big = w("big");
    assert_eq!(format!("{:.2}", big.cost_per_1000.unwrap()), "2.02");
    assert_eq!(big.verified_per_hour, Some(990.0));
    assert_eq!(big.suitable, Some(true));
    let cheap = w("cheap");
    assert_eq!(format!("{:.2}", cheap.cost_per_1000.unwrap()), "1.52");
    assert_eq!(cheap.suitable, Some(true));
    let small = w("small");
    assert_eq!(small.pass_rate, Some(0.9));
    assert_eq!(small.suitable, Some(false), "unsuitable however cheap");
    // Below its threshold, its 900 passing results are not verified outcomes: its cost buys none.
    assert_eq!(small.passing, Some(900.0));
    assert_eq!(small.verified_outcomes, Some(0.0));
    assert_eq!(small.cost_per_1000, None);
    assert!(small.unknown["cost_per_1000"].contains("unsuitable"));
    assert_eq!(c.total_cost, Some(4.0));
    // The tenant pays for all three and gets the suitable two's outcomes.
    let [tenant] = c.tenants.as_slice() else {
        panic!("{:?}", c.tenants)
    };
    assert_eq!(tenant.verified_outcomes, Some(1980.0));
    assert_eq!(tenant.total_cost, Some(4.0));
    assert_eq!(
        format!("{:.2}", tenant.cost_per_1000.unwrap()),
        format!("{:.2}", 4.0 / 1980.0 * 1000.0)
    );
    assert_eq!(
        c.decision.cheapest.as_ref().unwrap().workload,
        "eval/Job/cheap"
    );
    assert_eq!(
        c.decision.dearest.as_ref().unwrap().workload,
        "eval/Job/big"
    );
    assert_eq!(c.decision.unsuitable, ["eval/Job/small"]);
}

#[test]
fn an_outside_cost_alone_does_not_make_a_cost_known() {
    let text = [job("seen"), job("unseen")].concat();
    let objects = read_str(&text, "fleet.yaml").unwrap();
    let cfg = Config::parse(
        "cost:\n  external:\n  - {name: api, per_hour: 2, workload: eval/Job/unseen}\n",
        "c",
    )
    .unwrap();
    let fleet = LiveFleet::read(&objects, &cfg, &Metrics::NotConfigured).unwrap();
    let window = Window::ending(
        Timestamp::parse("2026-12-02T12:00:00Z").unwrap(),
        std::time::Duration::from_secs(3600),
    );
    let data = Ok(CostData {
        coverage: crate::live::opencost::Coverage {
            spans: vec![(window.start, window.end)],
            undated: 0,
        },
        source: "x".into(),
        allocations: vec![allocation("seen-p", 1.0)],
        inference: Ok(None),
    });
    let counters = BTreeMap::new();
    let inputs = CostInputs {
        window,
        opencost: Some(&data),
        records: None,
        counters: &counters,
        counter_source: None,
    };
    let c = cost(&fleet, &cfg, &inputs).unwrap();
    let unseen = c
        .workloads
        .iter()
        .find(|r| r.name == "eval/Job/unseen")
        .unwrap();
    assert_eq!(unseen.total_cost, None, "{unseen:?}");
    assert_eq!(unseen.breakdown.external, Some(2.0));
    assert!(unseen.unknown["total_cost"].contains("only its outside cost"));
    assert_eq!(c.total_cost, Some(3.0));
}

#[test]
fn below_the_minimum_sample_only_the_interval() {
    let text = job("tiny");
    let objects = read_str(&text, "fleet.yaml").unwrap();
    let cfg = Config::default();
    let fleet = LiveFleet::read(&objects, &cfg, &Metrics::NotConfigured).unwrap();
    let window = Window::ending(
        Timestamp::parse("2026-12-02T12:00:00Z").unwrap(),
        std::time::Duration::from_secs(3600),
    );
    let data = Ok(CostData {
        coverage: crate::live::opencost::Coverage {
            spans: vec![(window.start, window.end)],
            undated: 0,
        },
        source: "x".into(),
        allocations: vec![allocation("tiny-p", 1.0)],
        inference: Ok(None),
    });
    // 10 of 10 reviewed: below the minimum sample of 30.
    let records = parse(
        "{\"workload\":\"eval/Job/tiny\",\"start\":\"2026-12-02T11:00:00Z\",\"end\":\"2026-12-02T12:00:00Z\",\"results\":100,\"on_time\":100,\"sample\":10,\"sample_passed\":10}\n",
        "o.jsonl",
    );
    let counters = BTreeMap::new();
    let inputs = CostInputs {
        window,
        opencost: Some(&data),
        records: Some(&records),
        counters: &counters,
        counter_source: None,
    };
    let c = cost(&fleet, &cfg, &inputs).unwrap();
    let r = &c.workloads[0];
    assert_eq!(r.verified_outcomes, None);
    assert_eq!(r.cost_per_1000, None);
    assert!(r.cost_per_1000_interval.is_some());
    assert!(r.unknown["verified_outcomes"].contains("below the minimum of 30"));
    assert_eq!(r.sample, Some(10));
    // 10 of 10, but the interval's low end (0.72) is below 0.98: not known to be suitable.
    assert_eq!(r.suitable, None);
}

#[test]
fn wilson_matches_the_reference() {
    let (lo, hi) = wilson(188, 200).unwrap();
    assert!(
        (lo - 0.898).abs() < 0.0005 && (hi - 0.965).abs() < 0.0005,
        "{lo} {hi}"
    );
    assert_eq!(wilson(0, 0), None);
    let (lo, hi) = wilson(0, 10).unwrap();
    assert_eq!(lo, 0.0);
    assert!(hi > 0.2 && hi < 0.35, "{hi}");
    let (lo, hi) = wilson(10, 10).unwrap();
    assert!(lo > 0.65 && hi == 1.0, "{lo}");
}

#[test]
fn cost_per_outcome_interval_from_the_reference() {
    // $1000 for 10,000 on-time outcomes at 188/200: $0.106, [$0.104, $0.111] per outcome.
    let mut row = CostRow {
        total_cost: Some(1000.0),
        verified_outcomes: Some(10_000.0 * 0.94),
        verified_interval: {
            let (lo, hi) = wilson(188, 200).unwrap();
            Some([10_000.0 * lo, 10_000.0 * hi])
        },
        ..CostRow::default()
    };
    per_hour_and_cost(&mut row, 1.0);
    let per = row.cost_per_1000.unwrap() / 1000.0;
    let [lo, hi] = row.cost_per_1000_interval.unwrap();
    assert!((per - 0.106).abs() < 0.0005, "{per}");
    assert!((lo / 1000.0 - 0.104).abs() < 0.0005, "{lo}");
    assert!((hi / 1000.0 - 0.111).abs() < 0.0005, "{hi}");
}

/// A tenant with a workload that reports no outcomes has unknown outcomes: the others' are only
/// part of what its whole cost bought, never the whole.
#[test]
fn a_tenant_with_a_silent_workload_has_unknown_outcomes() {
    let text = [job("counted"), job("silent")].concat();
    let objects = read_str(&text, "fleet.yaml").unwrap();
    let cfg = Config::default();
    let fleet = LiveFleet::read(&objects, &cfg, &Metrics::NotConfigured).unwrap();
    let window = Window::ending(
        Timestamp::parse("2026-12-02T12:00:00Z").unwrap(),
        std::time::Duration::from_secs(3600),
    );
    let data = Ok(CostData {
        coverage: crate::live::opencost::Coverage {
            spans: vec![(window.start, window.end)],
            undated: 0,
        },
        source: "x".into(),
        allocations: vec![allocation("counted-p", 1.0), allocation("silent-p", 3.0)],
        inference: Ok(None),
    });
    let records = parse(
        "workload,start,end,results,verified\n\
eval/Job/counted,2026-12-02T11:00:00Z,2026-12-02T12:00:00Z,1000,990\n",
        "outcomes.csv",
    );
    let counters = BTreeMap::new();
    let inputs = CostInputs {
        window,
        opencost: Some(&data),
        records: Some(&records),
        counters: &counters,
        counter_source: None,
    };
    let c = cost(&fleet, &cfg, &inputs).unwrap();
    let t = &c.tenants[0];
    assert_eq!(t.total_cost, Some(4.0));
    assert_eq!(t.verified_outcomes, None, "{t:?}");
    assert_eq!(t.cost_per_1000, None);
    assert!(
        t.unknown["cost_per_1000"].contains("eval/Job/silent"),
        "{t:?}"
    );
    assert_eq!(c.decision.unpriced, ["eval/Job/silent"]);
}
