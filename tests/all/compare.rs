//! `cost --compare A B` end to end: the seed's worked example through OpenCost's API (the stand-in
//! serving a recorded-shape answer) and outcome records — $2/h against $1.50/h for 990 verified of
//! 1,000, a 90% model against a 95% threshold — a sampled pair whose intervals overlap, and two
//! windows of one workload, each asked of OpenCost for its own window.

use gpuledger::util::date::Timestamp;
use serde_json::Value;

use super::opencost_fake::{Answer, OpenCost};
use super::prometheus_harness::{HISTORY_MINUTES, Prometheus, Series};
use super::support::{fixture, gpuledger, root};

const NOW: &str = "2026-12-02T12:00:00Z";

fn opencost() -> OpenCost {
    let body = std::fs::read_to_string(fixture("tests/fixtures/compare/allocation.json")).unwrap();
    OpenCost::start(&[("/allocation", Answer::ok(body))])
}

fn compare(oc: &OpenCost, a: &str, b: &str, format: &str) -> (i32, String, String) {
    let out = gpuledger(&root())
        .arg("cost")
        .arg("--snapshot")
        .arg(fixture("tests/fixtures/compare/cluster.yaml"))
        .args(["--opencost", &oc.url(), "--outcomes"])
        .arg(fixture("tests/fixtures/compare/outcomes.csv"))
        .args(["--window", "1h", "--now", NOW, "--format", format])
        .args(["--compare", a, b])
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn json(oc: &OpenCost, a: &str, b: &str) -> Value {
    let (code, out, err) = compare(oc, a, b, "json");
    assert_eq!(code, 0, "{err}");
    let r: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(r["kind"], "cost");
    r["compare"].clone()
}

fn close(v: &Value, want: f64) -> bool {
    v.as_f64().is_some_and(|x| (x - want).abs() < 0.005)
}

#[test]
fn the_worked_example_keeps_990_outcomes_for_a_quarter_less() {
    let oc = opencost();
    let c = json(&oc, "serve/Deployment/h100", "serve/Deployment/l40s");
    assert_eq!(c["a"]["label"], "A");
    assert!(close(&c["a"]["cost_per_hour"], 2.0), "{c:#}");
    assert!(close(&c["b"]["cost_per_hour"], 1.5), "{c:#}");
    assert!(close(&c["a"]["verified_outcomes"], 990.0));
    // $2 / 990 × 1,000 = $2.02; $1.50 / 990 × 1,000 = $1.52.
    assert!(close(&c["a"]["cost_per_1000"], 2.0202), "{c:#}");
    assert!(close(&c["b"]["cost_per_1000"], 1.5152), "{c:#}");
    assert_eq!(
        c["verdict"],
        "B keeps outcomes at 25% less cost: outcomes counted one by one, no sampling interval"
    );
    assert_eq!(c["distinguishable"], true);
    assert_eq!(c["cheaper"], "B");
    // No Prometheus: latency is unknown with why, never met.
    assert!(c["b"]["latency"].as_array().unwrap().is_empty());
    assert!(
        c["b"]["unknown"]["latency"]
            .as_str()
            .unwrap()
            .contains("--prometheus")
    );
    let (_, md, _) = compare(
        &oc,
        "serve/Deployment/h100",
        "serve/Deployment/l40s",
        "markdown",
    );
    assert!(md.contains("**B keeps outcomes at 25% less cost"), "{md}");
    assert!(
        md.contains("| cost per 1,000 verified | $2.02 | $1.52 |"),
        "{md}"
    );
}

#[test]
fn a_90_percent_model_is_unsuitable_against_a_95_percent_threshold() {
    let oc = opencost();
    let c = json(&oc, "serve/Deployment/h100", "serve/Deployment/small");
    assert_eq!(c["b"]["suitable"], false);
    assert!(close(&c["b"]["pass_rate"], 0.9));
    assert_eq!(c["b"]["verified_outcomes"], 0.0);
    assert!(c["b"]["cost_per_1000"].is_null());
    assert_eq!(
        c["verdict"],
        "A keeps outcomes, whatever either costs: B is unsuitable: pass rate 90% below its quality threshold 95%"
    );
    assert!(c["distinguishable"].is_null());
}

#[test]
fn a_sampled_pair_whose_intervals_overlap_is_not_distinguishable_yet() {
    let oc = opencost();
    let c = json(&oc, "eval/Job/judge-a", "eval/Job/judge-b");
    assert_eq!(c["a"]["sample"], 40);
    let [lo, hi] = [
        &c["a"]["cost_per_1000_interval"][0],
        &c["a"]["cost_per_1000_interval"][1],
    ]
    .map(|v| v.as_f64().unwrap());
    let b = c["b"]["cost_per_1000"].as_f64().unwrap();
    let b_hi = c["b"]["cost_per_1000_interval"][1].as_f64().unwrap();
    // B's point is below A's interval, yet the intervals overlap: n = 40 cannot tell them apart.
    assert!(lo < hi && b < lo && lo <= b_hi, "{c:#}");
    assert!(
        c["verdict"]
            .as_str()
            .unwrap()
            .starts_with("Not distinguishable yet: n = 40"),
        "{c:#}"
    );
    assert_eq!(c["distinguishable"], false);
    assert!(c["cheaper"].is_null());
}

#[test]
fn two_windows_are_each_asked_for_their_own_window() {
    let oc = opencost();
    let c = json(
        &oc,
        "before=serve/Deployment/h100@2026-12-02T10:00:00Z..2026-12-02T11:00:00Z",
        "after=serve/Deployment/h100@2026-12-02T11:00:00Z..2026-12-02T12:00:00Z",
    );
    assert_eq!(c["a"]["label"], "before");
    assert_eq!(c["a"]["window_start"], "2026-12-02T10:00:00Z");
    let asked = oc.requests();
    assert!(
        asked
            .iter()
            .any(|r| r.contains("window=2026-12-02T10%3A00%3A00Z%2C2026-12-02T11%3A00%3A00Z")),
        "{asked:#?}"
    );
    assert!(
        asked
            .iter()
            .any(|r| r.contains("window=2026-12-02T11%3A00%3A00Z%2C2026-12-02T12%3A00%3A00Z")),
        "{asked:#?}"
    );
    // The records cover 11:00–12:00 only: the earlier window has no verified outcome, and the
    // comparison says so rather than comparing.
    assert!(c["a"]["verified_outcomes"].is_null(), "{c:#}");
    assert!(c["b"]["cost_per_1000"].is_f64(), "{c:#}");
    assert!(
        c["verdict"]
            .as_str()
            .unwrap()
            .starts_with("Cannot compare: before's cost per 1,000 verified outcomes is unknown"),
        "{c:#}"
    );
}

#[test]
fn a_side_that_names_no_live_workload_is_an_error() {
    let oc = opencost();
    let (code, _, err) = compare(
        &oc,
        "serve/Deployment/h100",
        "serve/Deployment/gone",
        "json",
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("serve/Deployment/gone is not a live GPU workload"),
        "{err}"
    );
    let (code, _, err) = compare(&oc, "h100", "serve/Deployment/l40s", "json");
    assert_eq!(code, 2);
    assert!(err.contains("names no workload"), "{err}");
}

/// A vLLM time-to-first-token histogram whose buckets gain `per_min` observations a minute.
fn ttft<'a>(pod: &'a str, per_min: &[(&'a str, f64)]) -> Vec<Series<'a>> {
    per_min
        .iter()
        .map(|(le, n)| {
            let values: Vec<f64> = (0..HISTORY_MINUTES)
                .map(|i| 100_000.0 + n * i as f64)
                .collect();
            Series::cycling(
                "vllm:time_to_first_token_seconds_bucket",
                &[
                    ("namespace", "serve"),
                    ("pod", pod),
                    ("model_name", "m"),
                    ("job", "vllm"),
                    ("le", le),
                ],
                &values,
            )
        })
        .collect()
}

#[test]
fn latency_against_the_objective_comes_from_the_serving_histograms() {
    // h100: p95 between 250 and 500 ms; l40s: between 500 ms and 1 s, against ttft_p95<=500ms.
    let mut series = ttft(
        "h100-5c8d7-aaaaa",
        &[
            ("0.1", 50.0),
            ("0.25", 90.0),
            ("0.5", 100.0),
            ("1", 100.0),
            ("+Inf", 100.0),
        ],
    );
    series.extend(ttft(
        "l40s-6f9b8-bbbbb",
        &[
            ("0.1", 10.0),
            ("0.25", 50.0),
            ("0.5", 80.0),
            ("1", 100.0),
            ("+Inf", 100.0),
        ],
    ));
    // Headroom reads a workload's histograms once it has request series.
    let requests: Vec<f64> = (0..HISTORY_MINUTES)
        .map(|i| 100_000.0 + 100.0 * i as f64)
        .collect();
    for pod in ["h100-5c8d7-aaaaa", "l40s-6f9b8-bbbbb"] {
        series.push(Series::cycling(
            "vllm:request_success_total",
            &[
                ("namespace", "serve"),
                ("pod", pod),
                ("model_name", "m"),
                ("job", "vllm"),
            ],
            &requests,
        ));
    }
    let prom = Prometheus::start(&series);
    // The window ends now (the backfilled history is relative to the clock): the OpenCost answer
    // and the records are moved to the last hour.
    let now = Timestamp::now();
    let hour_ago = Timestamp::from_unix(now.unix() - 3600);
    let shift = |text: String| {
        text.replace("2026-12-02T11:00:00Z", &hour_ago.to_string())
            .replace("2026-12-02T12:00:00Z", &now.to_string())
    };
    let body =
        shift(std::fs::read_to_string(fixture("tests/fixtures/compare/allocation.json")).unwrap());
    let oc = OpenCost::start(&[("/allocation", Answer::ok(body))]);
    let dir = tempfile::tempdir().unwrap();
    let records = dir.path().join("outcomes.csv");
    std::fs::write(
        &records,
        shift(std::fs::read_to_string(fixture("tests/fixtures/compare/outcomes.csv")).unwrap()),
    )
    .unwrap();
    let out = gpuledger(&root())
        .arg("cost")
        .arg("--snapshot")
        .arg(fixture("tests/fixtures/compare/cluster.yaml"))
        .args([
            "--opencost",
            &oc.url(),
            "--prometheus",
            &prom.url(),
            "--outcomes",
        ])
        .arg(&records)
        .args(["--window", "1h", "--format", "json"])
        .args([
            "--compare",
            "serve/Deployment/h100",
            "serve/Deployment/l40s",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let c = &r["compare"];
    let bound = |side: &str| c[side]["latency"][0].clone();
    assert_eq!(bound("a")["bound"], "ttft_p95<=500ms", "{c:#}");
    assert_eq!(bound("a")["met"], true, "{c:#}");
    assert_eq!(bound("b")["met"], false, "{c:#}");
    let (a_ms, b_ms) = (
        bound("a")["now_ms"].as_f64().unwrap(),
        bound("b")["now_ms"].as_f64().unwrap(),
    );
    assert!(
        (250.0..=500.0).contains(&a_ms) && (500.0..=1000.0).contains(&b_ms),
        "{a_ms} {b_ms}"
    );
    let verdict = c["verdict"].as_str().unwrap();
    assert!(
        verdict.starts_with("B keeps outcomes at 25% less cost"),
        "{verdict}"
    );
    assert!(
        verdict.contains("; but B misses ttft_p95<=500ms ("),
        "{verdict}"
    );
}
