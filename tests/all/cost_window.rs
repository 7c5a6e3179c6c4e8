//! Cost over the window OpenCost really covers: the OpenCost stand-in answering for less of the
//! window than asked (a store that holds six of 24 hours, a per-step answer with a step missing),
//! in OpenCost's wire format with each allocation's own `start`, `end`, `window` and `minutes`.
//! Cost per outcome must be cost over outcomes of the same hours.

use serde_json::{Value, json};

use super::opencost_fake::{Answer, OpenCost};
use super::support::{fixture, gpuledger, root};

const NOW: &str = "2026-12-02T12:00:00Z";

/// `NOW` minus whole hours (up to 36), RFC 3339.
fn at(hours_before: i64) -> String {
    let total = 12 - hours_before;
    let (day, hour) = if total >= 0 {
        (2, total)
    } else {
        (1, 24 + total)
    };
    format!("2026-12-0{day}T{hour:02}:00:00Z")
}

/// One allocation of grade-qwen (or the idle one) that ran from `from` to `to` hours before NOW
/// and cost `cost`.
fn allocation(key: &str, from: i64, to: i64, cost: f64) -> (String, Value) {
    let (ns, kind, controller, pod) = match key {
        "__idle__" => ("", "", "", ""),
        _ => ("eval", "job", "grade-qwen", "grade-qwen-x7k2p"),
    };
    let v = json!({
        "name": key,
        "properties": {"cluster": "c", "namespace": ns, "controllerKind": kind,
                       "controller": controller, "pod": pod},
        "window": {"start": at(from), "end": at(to)},
        "start": at(from), "end": at(to),
        "minutes": ((from - to) * 60) as f64,
        "gpuHours": (from - to) as f64, "gpuCost": cost, "cpuCost": 0.0, "ramCost": 0.0,
        "totalCost": cost,
    });
    (key.to_string(), v)
}

fn set(allocs: &[(String, Value)]) -> Value {
    Value::Object(allocs.iter().cloned().collect())
}

fn answer(sets: Vec<Value>) -> String {
    json!({"code": 200, "status": "success", "data": sets}).to_string()
}

const QWEN: &str = "eval/job/grade-qwen/grade-qwen-x7k2p";

/// `gpuledger cost` over 24 hours; 1,000 verified outcomes an hour all day long.
fn cost(body: String) -> Value {
    let oc = OpenCost::start(&[("/allocation", Answer::ok(body))]);
    let dir = tempfile::tempdir().unwrap();
    let records = dir.path().join("outcomes.csv");
    std::fs::write(
        &records,
        format!(
            "workload,start,end,results,verified\neval/Job/grade-qwen,{},{NOW},24000,24000\n",
            at(24)
        ),
    )
    .unwrap();
    let out = gpuledger(&root())
        .arg("cost")
        .arg("--snapshot")
        .arg(fixture("tests/fixtures/cost/cluster.json"))
        .args(["--opencost", &oc.url(), "--outcomes"])
        .arg(&records)
        .args(["--window", "24h", "--now", NOW, "--format", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    r["cost"].clone()
}

fn qwen(c: &Value) -> Value {
    c["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["name"] == "eval/Job/grade-qwen")
        .unwrap()
        .clone()
}

fn per_1000(c: &Value) -> f64 {
    qwen(c)["cost_per_1000"].as_f64().unwrap()
}

#[test]
fn a_store_with_six_of_24_hours_is_partial_and_priced_over_those_hours() {
    // $2 an hour for the six hours OpenCost holds.
    let body = answer(vec![set(&[
        allocation(QWEN, 6, 0, 12.0),
        allocation("__idle__", 6, 0, 0.0),
    ])]);
    let c = cost(body);
    assert!(
        (per_1000(&c) - 2.0).abs() < 1e-9,
        "six hours of cost over 24 hours of outcomes read $0.50: {c:#}"
    );
    assert_eq!(c["covered_share"], 0.25);
    assert_eq!(c["covered_hours"], 6.0);
    let why = c["partial"]["total_cost"].as_str().unwrap();
    assert!(why.contains("6h of the 24h window (25%"), "{why}");
    let q = qwen(&c);
    assert!((q["verified_outcomes"].as_f64().unwrap() - 6000.0).abs() < 1e-6);
    assert!((q["verified_per_hour"].as_f64().unwrap() - 1000.0).abs() < 1e-6);
}

#[test]
fn a_missing_step_is_a_gap_not_a_cheaper_day() {
    let step = |from, to| {
        set(&[
            allocation(QWEN, from, to, 12.0),
            allocation("__idle__", from, to, 0.0),
        ])
    };
    // Four six-hour steps asked, the third absent (a null set, as OpenCost writes an empty one).
    let body = answer(vec![step(24, 18), step(18, 12), Value::Null, step(6, 0)]);
    let c = cost(body);
    assert!(
        (per_1000(&c) - 2.0).abs() < 1e-9,
        "three steps over four steps' outcomes read $1.50: {c:#}"
    );
    assert_eq!(c["covered_share"], 0.75);
    let why = c["partial"]["total_cost"].as_str().unwrap();
    assert!(why.contains("18h of the 24h window (75%"), "{why}");
    assert!(
        why.contains("2026-12-01T12:00:00Z to 2026-12-02T00:00:00Z, 2026-12-02T06:00:00Z to 2026-12-02T12:00:00Z"),
        "the covered spans, around the missing step: {why}"
    );

    // Every step there: the whole window, not partial.
    let body = answer(vec![step(24, 18), step(18, 12), step(12, 6), step(6, 0)]);
    let c = cost(body);
    assert!((per_1000(&c) - 2.0).abs() < 1e-9, "{c:#}");
    assert!(
        c.get("partial").is_none() && c.get("covered_share").is_none(),
        "{c:#}"
    );
}
