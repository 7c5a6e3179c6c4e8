//! `gpuledger trend` against the real Prometheus, backfilled with promtool: kube-state-metrics
//! shaped series (requests per container, namespace labels) when gpuledger's own are absent, and
//! gpuledger's own when present; exact figures, and an insta snapshot of the markdown.

use serde_json::Value;

use super::prometheus_harness::{HISTORY_MINUTES, Prometheus, Series};
use super::support::{gpuledger, root};

/// A ramp over the history: `base + 2 × (minute / 10)`, so the 10-minute steps read 10, 12, 14,
/// 16, 16 for base 8 (the last step falls on minute 49).
pub(super) fn ramp(base: f64) -> Vec<f64> {
    (0..HISTORY_MINUTES)
        .map(|i| base + 2.0 * (i / 10) as f64)
        .collect()
}

pub(super) fn ksm<'a>(ns: &'a str, pod: &'a str, resource: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("namespace", ns),
        ("pod", pod),
        ("container", "main"),
        ("resource", resource),
        ("unit", "integer"),
    ]
}

fn run(prom: &Prometheus, format: &str) -> (i32, String, String) {
    let out = gpuledger(&root())
        .env("COLUMNS", "80")
        .args(["trend", "--prometheus", &prom.url()])
        .args(["--window", "40m", "--step", "10m", "--format", format])
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `(name, start, end, change, peak)` per row.
fn figures(rows: &Value) -> Vec<(String, f64, f64, f64, f64)> {
    rows.as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let f = |k: &str| r[k].as_f64().unwrap_or_else(|| panic!("{k}: {r}"));
            (
                r["name"].as_str().unwrap().to_string(),
                f("start"),
                f("end"),
                f("change"),
                f("peak"),
            )
        })
        .collect()
}

fn row(name: &str, start: f64, end: f64, change: f64, peak: f64) -> (String, f64, f64, f64, f64) {
    (name.to_string(), start, end, change, peak)
}

#[test]
fn from_kube_state_metrics_per_tenant_and_product_line_with_exact_figures() {
    let ramp = ramp(8.0);
    let prom = Prometheus::start(&[
        Series::cycling(
            "kube_pod_container_resource_requests",
            &ksm("chat-prod", "llm-0", "nvidia_com_gpu"),
            &ramp,
        ),
        Series::new(
            "kube_pod_container_resource_requests",
            &ksm("chat-prod", "llm-1", "nvidia_com_gpu"),
            4.0,
        ),
        // Not a GPU: never counted.
        Series::new(
            "kube_pod_container_resource_requests",
            &ksm("chat-prod", "llm-1", "cpu"),
            100.0,
        ),
        Series::new(
            "kube_pod_container_resource_requests",
            &ksm("search", "idx-0", "nvidia_com_gpu"),
            8.0,
        ),
        Series::new(
            "kube_pod_container_resource_requests",
            &ksm("scratch", "nb-0", "nvidia_com_gpu"),
            2.0,
        ),
        Series::new(
            "kube_namespace_labels",
            &[
                ("namespace", "chat-prod"),
                ("label_tenant", "chat"),
                ("label_product_line", "assistant"),
            ],
            1.0,
        ),
        Series::new(
            "kube_namespace_labels",
            &[
                ("namespace", "search"),
                ("label_tenant", "search"),
                ("label_product_line", "search"),
            ],
            1.0,
        ),
        Series::new("kube_namespace_labels", &[("namespace", "scratch")], 1.0),
    ]);
    let (code, out, err) = run(&prom, "json");
    assert_eq!(code, 0, "{err}");
    let j: Value = serde_json::from_str(&out).unwrap();
    let t = &j["trend"];
    assert_eq!(t["source"], "kube-state-metrics");
    assert_eq!(t["covered"].as_array().unwrap().len(), 5);
    // kube-state-metrics knows requests, not activity: busy is unknown, never 0.
    assert!(
        t["busy_unknown"]
            .as_str()
            .unwrap()
            .contains("kube-state-metrics has no GPU activity"),
        "{t}"
    );
    assert_eq!(t["tenants"][0]["busy_start"], Value::Null);
    assert_eq!(
        figures(&t["tenants"]),
        [
            row("chat", 14.0, 20.0, 6.0, 20.0),
            row("search", 8.0, 8.0, 0.0, 8.0),
            row("scratch", 2.0, 2.0, 0.0, 2.0),
        ]
    );
    assert_eq!(
        t["tenants"][0]["points"],
        serde_json::json!([14.0, 16.0, 18.0, 20.0, 20.0])
    );
    // +6 over 40 minutes, per week.
    assert_eq!(t["tenants"][0]["per_week"], 6.0 / 2400.0 * 604_800.0);
    assert_eq!(t["fastest"], "chat");
    assert_eq!(
        figures(&t["product_lines"]),
        [
            row("assistant", 14.0, 20.0, 6.0, 20.0),
            row("search", 8.0, 8.0, 0.0, 8.0),
            row("(none)", 2.0, 2.0, 0.0, 2.0),
        ]
    );

    let (_, md, _) = run(&prom, "markdown");
    // The clock and the port change from run to run: name them.
    let mut stable = md.replace(&prom.url().replace("http://", ""), "PROMETHEUS");
    let at = |k: &str| gpuledger::util::date::Timestamp::from_unix(t[k].as_i64().unwrap()).human();
    stable = stable
        .replace(&at("start"), "START")
        .replace(&at("end"), "END");
    for (i, at) in t["covered"].as_array().unwrap().iter().enumerate() {
        let h = gpuledger::util::date::Timestamp::from_unix(at.as_i64().unwrap()).human();
        stable = stable.replace(&h[5..16], &format!("T{i}"));
    }
    insta::assert_snapshot!("trend_markdown", stable);

    let (_, table, _) = run(&prom, "table");
    // A terminal of 80 columns: every line fits.
    assert!(table.lines().all(|l| l.chars().count() <= 80), "{table}");
    assert!(
        table
            .replace('\n', " ")
            .contains("Growing fastest: chat, +1512 GPUs a week (14 → 20 over 40m)."),
        "{table}"
    );
    // kube-state-metrics has no free placeable GPUs and no live state was given: the runway is
    // unknown with why, never "not growing" and never 0.
    let r = &t["runway"];
    assert_eq!(r["free"], Value::Null);
    assert_eq!(r["fleet"]["verdict"], "unknown");
    assert_eq!(r["fleet"]["weeks"], Value::Null);
    assert_eq!(r["fleet"]["per_week"], 6.0 / 2400.0 * 604_800.0);
    assert!(
        r["unknown"]
            .as_str()
            .unwrap()
            .starts_with("kube-state-metrics does not export the free placeable GPUs"),
        "{r}"
    );
}

/// The runway: chat grows 10 → 16 GPUs over 40 minutes (1512 a week), search is flat; the free
/// placeable GPUs come from gpuledger's own series (3024: two weeks at that rate), or from the
/// live state when one is given (the demo fleet's 89).
#[test]
fn the_runway_is_free_placeable_gpus_over_the_measured_growth() {
    let prom = Prometheus::start(&[
        Series::cycling(
            "gpuledger_tenant_gpus",
            &[("tenant", "chat"), ("state", "requested")],
            &ramp(8.0),
        ),
        Series::new(
            "gpuledger_tenant_gpus",
            &[("tenant", "search"), ("state", "requested")],
            4.0,
        ),
        Series::new("gpuledger_fleet_free_placeable_gpus", &[], 3024.0),
    ]);
    let (code, out, err) = run(&prom, "json");
    assert_eq!(code, 0, "{err}");
    let j: Value = serde_json::from_str(&out).unwrap();
    let t = &j["trend"];
    let r = &t["runway"];
    assert_eq!(r["free"], 3024, "{r:#}");
    assert!(
        r["free_source"]
            .as_str()
            .unwrap()
            .starts_with("gpuledger_fleet_free_placeable_gpus in http://127.0.0.1:"),
        "{r:#}"
    );
    assert_eq!(r["unknown"], Value::Null);
    let week = 604_800;
    let fleet = &r["fleet"];
    assert_eq!(fleet["name"], "fleet");
    assert_eq!(fleet["per_week"], 1512.0);
    assert_eq!(fleet["verdict"], "runs-out");
    assert_eq!(fleet["weeks"], 2.0);
    assert_eq!(fleet["runs_out"], t["end"].as_i64().unwrap() + 2 * week);
    let tenants: Vec<(&str, &str, Option<f64>)> = r["tenants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            (
                x["name"].as_str().unwrap(),
                x["verdict"].as_str().unwrap(),
                x["weeks"].as_f64(),
            )
        })
        .collect();
    assert_eq!(
        tenants,
        [
            ("chat", "runs-out", Some(2.0)),
            ("search", "not-growing", None)
        ]
    );
    let until = gpuledger::util::date::Timestamp::from_unix(fleet["runs_out"].as_i64().unwrap())
        .date()
        .to_string();
    let (_, md, _) = run(&prom, "markdown");
    assert!(
        md.contains(&format!(
            "At +1512 GPUs a week, the 3024 free placeable GPUs last **about 2 weeks** (until {until})."
        )),
        "{md}"
    );
    assert!(
        md.contains("| chat | 10 | 16 | +6 | +1512 | 16 | 2 weeks |"),
        "{md}"
    );
    assert!(
        md.contains("| search | 4 | 4 | 0 | 0 | 4 | not growing |"),
        "{md}"
    );

    // A live state wins over the exported figure: the demo fleet has 89 free placeable GPUs.
    let out = gpuledger(&root())
        .args(["trend", "--prometheus", &prom.url()])
        .args(["--window", "40m", "--step", "10m", "--format", "json"])
        .args(["--snapshot", "fixtures/demo/cluster.yaml"])
        .args(["--config", "fixtures/demo/.gpuledger.yaml"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &j["trend"]["runway"];
    assert_eq!(r["free"], 89, "{r:#}");
    assert_eq!(
        r["free_source"], "the live state (fixtures/demo/cluster.yaml)",
        "{r:#}"
    );
    assert_eq!(r["fleet"]["weeks"], 89.0 / 1512.0);
    assert!(
        j["sources"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s.as_str().unwrap().contains("cluster.yaml")),
        "{j:#}"
    );

    // Nothing exported and no live state: unknown, with the way out.
    let bare = Prometheus::start(&[Series::cycling(
        "gpuledger_tenant_gpus",
        &[("tenant", "chat"), ("state", "requested")],
        &ramp(8.0),
    )]);
    let (_, out, err) = run(&bare, "json");
    let j: Value = serde_json::from_str(&out).unwrap();
    let r = &j["trend"]["runway"];
    assert_eq!(r["free"], Value::Null);
    assert_eq!(r["fleet"]["verdict"], "unknown");
    assert!(
        r["unknown"]
            .as_str()
            .unwrap()
            .starts_with("gpuledger_fleet_free_placeable_gpus has no sample in the window"),
        "{r:#}"
    );
    assert!(err.contains("runway unknown:"), "{err}");
}

#[test]
fn gpuledgers_own_series_are_preferred_and_no_history_is_unknown() {
    let prom = Prometheus::start(&[
        Series::cycling(
            "gpuledger_tenant_gpus",
            &[("tenant", "chat"), ("state", "requested")],
            &ramp(8.0),
        ),
        // Busy per DCGM, as serve exports it: read at the same steps, 4 → 10.
        Series::cycling(
            "gpuledger_tenant_gpus",
            &[("tenant", "chat"), ("state", "used")],
            &ramp(2.0),
        ),
        Series::new(
            "gpuledger_product_line_gpus",
            &[("product_line", "assistant"), ("state", "requested")],
            4.0,
        ),
        // Also there, but not read: gpuledger's series win.
        Series::new(
            "kube_pod_container_resource_requests",
            &ksm("x", "p", "nvidia_com_gpu"),
            99.0,
        ),
    ]);
    let (code, out, err) = run(&prom, "json");
    assert_eq!(code, 0, "{err}");
    let j: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(j["trend"]["source"], "gpuledger");
    assert_eq!(
        figures(&j["trend"]["tenants"]),
        [row("chat", 10.0, 16.0, 6.0, 16.0)]
    );
    let chat = &j["trend"]["tenants"][0];
    assert_eq!(
        (chat["busy_start"].as_f64(), chat["busy_end"].as_f64()),
        (Some(4.0), Some(10.0))
    );
    assert_eq!(j["trend"]["busy_unknown"], Value::Null);

    let empty = Prometheus::start(&[]);
    let (code, out, err) = run(&empty, "markdown");
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("**Trend unknown**: no history: kube\\_pod\\_container\\_resource\\_requests has no sample in the window."),
        "{out}"
    );
    assert!(!out.contains("| 0 |"), "unknown is never zero: {out}");
}

#[test]
fn the_inventory_has_a_trend_column_when_a_prometheus_is_given() {
    // The contacts fixture's namespaces, chat and search, with no tenancy labels: tenants are
    // the namespace names.
    let prom = Prometheus::start(&[
        Series::cycling(
            "kube_pod_container_resource_requests",
            &ksm("chat", "chat-0", "nvidia_com_gpu"),
            &ramp(0.0),
        ),
        Series::new(
            "kube_pod_container_resource_requests",
            &ksm("search", "search-0", "nvidia_com_gpu"),
            2.0,
        ),
    ]);
    let inventory = |format: &str| {
        let out = gpuledger(&root())
            .args([
                "inventory",
                "--snapshot",
                "tests/fixtures/contacts/cluster.yaml",
            ])
            .args(["--prometheus", &prom.url(), "--trend-window", "40m"])
            .args(["--trend-step", "10m", "--format", format])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let j: Value = serde_json::from_str(&inventory("json")).unwrap();
    let per_week: Vec<(&str, Option<f64>)> = j["tenants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["name"].as_str().unwrap(), t["gpus_per_week"].as_f64()))
        .collect();
    // chat: 2 → 8 over 40 minutes; search flat.
    assert_eq!(
        per_week,
        [
            ("chat", Some(6.0 / 2400.0 * 604_800.0)),
            ("search", Some(0.0))
        ]
    );
    let md = inventory("markdown");
    assert!(md.contains("| GPUs/week |"), "{md}");
    assert!(md.contains("| +1512 |"), "{md}");
}

/// With a Prometheus, the pull-request check gives each tenant it moves its trend: assistant's
/// namespace chat grows 2 → 8 GPUs over 40 minutes in kube-state-metrics' history.
#[test]
fn the_check_has_a_trend_column_when_a_prometheus_is_given() {
    let prom = Prometheus::start(&[
        Series::cycling(
            "kube_pod_container_resource_requests",
            &ksm("chat", "chat-0", "nvidia_com_gpu"),
            &ramp(0.0),
        ),
        Series::new(
            "kube_namespace_labels",
            &[("namespace", "chat"), ("label_tenant", "assistant")],
            1.0,
        ),
    ]);
    let r = super::cost::chat_change_repo();
    let out = gpuledger(r.path())
        .args([
            "check", "--repo", ".", "--base", "main", "--head", "feature",
        ])
        .arg("--snapshot")
        .arg(super::support::fixture("tests/fixtures/cost/cluster.json"))
        .args(["--prometheus", &prom.url(), "--trend-window", "40m"])
        .args([
            "--trend-step",
            "10m",
            "--fail-on",
            "none",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    let assistant = &j["check"]["tenants"][0];
    assert_eq!(
        assistant["name"], "assistant",
        "{:#}",
        j["check"]["tenants"]
    );
    assert_eq!(assistant["gpus_per_week"], 6.0 / 2400.0 * 604_800.0);
}
