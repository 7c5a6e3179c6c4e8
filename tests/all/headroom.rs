//! Serving headroom end to end: the load tests of fixtures/headroom/repo (one per upstream format,
//! written for these tests from the formats' documented shapes), the fleet of
//! fixtures/headroom/cluster.yaml, and vLLM and Dynamo series backfilled into the real Prometheus.

use serde_json::Value;

use super::prometheus_harness::{HISTORY_MINUTES, Prometheus, Series};
use super::support::{fixture, gpuledger, root};

fn headroom(args: &[&str]) -> (i32, Value, String) {
    let out = gpuledger(&root())
        .args(["headroom", "--format", "json", "--snapshot"])
        .arg(fixture("fixtures/headroom/cluster.yaml"))
        .arg("--repo")
        .arg(fixture("fixtures/headroom/repo"))
        .args(args)
        .env_remove("GPULEDGER_PROMETHEUS")
        .env_remove("GPULEDGER_CONFIG")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let json = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}); stderr: {stderr}"));
    (out.status.code().unwrap_or(-1), json, stderr)
}

fn row<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["headroom"]["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["name"] == name)
        .unwrap_or_else(|| panic!("no headroom row {name}: {v:#}"))
}

fn close(v: &Value, want: f64) -> bool {
    v.as_f64().is_some_and(|x| (x - want).abs() < 1e-6)
}

/// A counter rising at `per_s` a second, sampled once a minute; it starts far from zero so that
/// `rate()` extrapolates freely at the edges of the data.
fn counter(per_s: f64) -> Vec<f64> {
    (0..HISTORY_MINUTES)
        .map(|i| 100_000.0 + per_s * 60.0 * i as f64)
        .collect()
}

/// Cumulative histogram buckets that each gain `per_min` observations a minute.
fn buckets<'a>(
    metric: &'a str,
    labels: &[(&'a str, &'a str)],
    per_min: &[(&'a str, f64)],
) -> Vec<Series<'a>> {
    per_min
        .iter()
        .map(|(le, n)| {
            let mut l = labels.to_vec();
            l.push(("le", le));
            Series::cycling(metric, &l, &counter(n / 60.0))
        })
        .collect()
}

fn vllm<'a>(pod: &'a str, ns: &'a str, model: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("namespace", ns),
        ("pod", pod),
        ("model_name", model),
        ("job", "vllm"),
        ("finished_reason", "stop"),
    ]
}

fn series() -> Vec<Series<'static>> {
    let mut s = Vec::new();
    let success = "vllm:request_success_total";
    // chat: three pods at 2 req/s each; one of them queues a quarter of the time.
    for pod in ["chat-6d4f-a", "chat-6d4f-b", "chat-6d4f-c"] {
        let l = vllm(pod, "serve", "Qwen/Qwen3-8B");
        s.push(Series::cycling(success, &l, &counter(2.0)));
        s.extend(buckets(
            "vllm:time_to_first_token_seconds_bucket",
            &l[..4],
            &[
                ("0.1", 10.0),
                ("0.25", 50.0),
                ("0.5", 90.0),
                ("1", 100.0),
                ("+Inf", 100.0),
            ],
        ));
    }
    s.push(Series::cycling(
        "vllm:num_requests_waiting",
        &vllm("chat-6d4f-a", "serve", "Qwen/Qwen3-8B")[..4],
        &[0.0, 0.0, 0.0, 3.0],
    ));
    s.push(Series::cycling(
        "vllm:num_preemptions_total",
        &vllm("chat-6d4f-a", "serve", "Qwen/Qwen3-8B")[..4],
        &counter(3.0 / 60.0),
    ));
    // summarize: 2 req/s against a tested 1.82.
    s.push(Series::cycling(
        success,
        &vllm("summarize-0", "serve", "meta-llama/Llama-3.1-8B-Instruct"),
        &counter(2.0),
    ));
    // rerank: its load test is of another model.
    s.push(Series::cycling(
        success,
        &vllm("rerank-0", "serve", "BAAI/bge-reranker-v2-m3"),
        &counter(1.0),
    ));
    // embed: busy, a small KV cache, and no load test.
    s.push(Series::cycling(
        success,
        &vllm("embed-0", "serve", "intfloat/e5-mistral-7b-instruct"),
        &counter(5.0),
    ));
    s.push(Series::new(
        "vllm:kv_cache_usage_perc",
        &vllm("embed-0", "serve", "intfloat/e5-mistral-7b-instruct")[..4],
        0.1,
    ));
    // llama: the Dynamo frontend counts 8.5 req/s; its vLLM workers count the same requests again.
    let fe = [
        ("namespace", "dyn"),
        ("pod", "llama-frontend-0"),
        ("model", "meta-llama/llama-3.3-70b-instruct"),
        ("job", "dynamo-frontend"),
        ("endpoint", "chat_completions"),
        ("request_type", "stream"),
        ("status", "success"),
    ];
    s.push(Series::cycling(
        "dynamo_frontend_requests_total",
        &fe,
        &counter(8.5),
    ));
    s.extend(buckets(
        "dynamo_frontend_time_to_first_token_seconds_bucket",
        &fe[..4],
        &[("0.5", 80.0), ("1", 100.0), ("+Inf", 100.0)],
    ));
    for pod in ["llama-worker-0", "llama-worker-1"] {
        s.push(Series::cycling(
            success,
            &vllm(pod, "dyn", "meta-llama/Llama-3.3-70B-Instruct"),
            &counter(4.25),
        ));
    }
    s
}

#[test]
fn tested_capacity_from_each_format_without_production() {
    let (code, v, stderr) = headroom(&[]);
    assert_eq!(code, 0, "{stderr}");
    let h = &v["headroom"];
    assert!(
        h["production_unknown"]
            .as_str()
            .unwrap()
            .contains("--prometheus")
    );
    // vLLM sweep at 2 replicas, live 3: stale, never scaled without a rule.
    let chat = row(&v, "chat");
    assert_eq!(chat["tested_rps"], Value::Null);
    assert_eq!(
        chat["unknown"]["tested_rps"],
        "stale load test: tested at 2 replicas, live 3"
    );
    // AIPerf: one run at concurrency 32.
    let sum = row(&v, "summarize");
    assert!(close(&sum["tested_rps"], 1.82));
    assert_eq!(sum["load_test_format"], "AIPerf/GenAI-Perf");
    assert_eq!(sum["tested_run"], "concurrency 32 (1 of 1 runs met it)");
    // GuideLLM of another model than the pods' llm-d.ai/model label.
    let rerank = row(&v, "rerank");
    assert_eq!(
        rerank["unknown"]["tested_rps"],
        "stale load test: tested model BAAI/bge-reranker-base, live BAAI/bge-reranker-v2-m3"
    );
    // No load test: unknown whatever the activity.
    let embed = row(&v, "embed");
    assert_eq!(embed["unknown"]["tested_rps"], "no load test");
    assert_eq!(embed["verdict"], "unknown");
    let llama = row(&v, "llama");
    assert!(close(&llama["tested_rps"], 9.6));
    assert_eq!(
        llama["unverified"][0],
        "model (the live model is not known)"
    );
    for w in h["workloads"].as_array().unwrap() {
        assert_eq!(w["verdict"], "unknown", "{w}");
        assert_eq!(w["headroom"], Value::Null);
    }
}

#[test]
fn production_from_vllm_and_dynamo_in_prometheus() {
    let prom = Prometheus::start(&series());
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("gpuledger.yaml");
    std::fs::write(
        &cfg,
        "headroom:\n  scale:\n    - match: {namespace: serve, name: chat}\n      scale: per-replica\n",
    )
    .unwrap();
    let (code, v, stderr) = headroom(&[
        "--prometheus",
        &prom.url(),
        "--window",
        "1h",
        "--config",
        cfg.to_str().unwrap(),
        "--fail-on-over",
    ]);
    assert_eq!(
        code, 1,
        "summarize is over and --fail-on-over was given: {stderr}"
    );
    assert!(
        v["headroom"]["rate_kind"]
            .as_str()
            .unwrap()
            .contains("completion rate")
    );

    // chat: 7.9 req/s at 2 replicas, scaled by the rule to 3 → 11.85; production 3 × 2 = 6.
    let chat = row(&v, "chat");
    assert!(close(&chat["tested_rps"], 11.85), "{chat:#}");
    assert!(
        chat["scaled"]
            .as_str()
            .unwrap()
            .contains("7.9 req/s at 2 replicas → 3 live")
    );
    assert!(close(&chat["production_p95_rps"], 6.0), "{chat:#}");
    assert!(close(&chat["production_peak_rps"], 6.0));
    assert!(close(&chat["headroom"], 1.0 - 6.0 / 11.85));
    assert_eq!(chat["verdict"], "fits");
    assert_eq!(chat["live_model"], "Qwen/Qwen3-8B");
    // TTFT from the three pods' histograms: rank 95 of 100 is halfway into (0.5 s, 1 s].
    assert_eq!(chat["latency"][0]["bound"], "ttft_p95<=500ms");
    assert!(close(&chat["latency"][0]["now_ms"], 750.0), "{chat:#}");
    assert_eq!(chat["latency"][0]["met"], false);
    let queued = chat["context"]["queue_share"].as_f64().unwrap();
    assert!((0.2..=0.3).contains(&queued), "{queued}");
    let preempt = chat["context"]["preemptions_per_min"].as_f64().unwrap();
    assert!((2.4..=3.1).contains(&preempt), "{preempt}");

    let sum = row(&v, "summarize");
    assert!(close(&sum["production_p95_rps"], 2.0));
    assert!(close(&sum["headroom"], 1.0 - 2.0 / 1.82));
    assert_eq!(sum["verdict"], "over");
    assert_eq!(sum["production_metric"], "vllm");

    // The frontend's rate, not the frontend's plus the workers'.
    let llama = row(&v, "llama");
    assert_eq!(llama["production_metric"], "dynamo-frontend");
    assert!(close(&llama["production_p95_rps"], 8.5), "{llama:#}");
    assert!(close(&llama["headroom"], 1.0 - 8.5 / 9.6));
    assert_eq!(llama["verdict"], "near-capacity");
    // The model label's case differs from the load test's: the same model.
    assert_eq!(llama["unknown"].get("tested_rps"), None);
    assert!(close(&llama["latency"][0]["now_ms"], 875.0), "{llama:#}");
    assert_eq!(llama["latency"][1]["now_ms"], Value::Null);

    let embed = row(&v, "embed");
    assert!(close(&embed["production_p95_rps"], 5.0));
    assert!(close(&embed["context"]["kv_cache_p95"], 0.1));
    assert_eq!(embed["unknown"]["tested_rps"], "no load test");
    assert_eq!(embed["verdict"], "unknown");

    // Over first, then near capacity, fits, unknown.
    let order: Vec<&str> = v["headroom"]["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["name"].as_str().unwrap())
        .collect();
    assert_eq!(order, ["summarize", "llama", "chat", "embed", "rerank"]);

    // What a person sees, at 80 columns (printed for the README's example: --nocapture).
    let out = gpuledger(&root())
        .args(["headroom", "--snapshot"])
        .arg(fixture("fixtures/headroom/cluster.yaml"))
        .arg("--repo")
        .arg(fixture("fixtures/headroom/repo"))
        .args([
            "--prometheus",
            &prom.url(),
            "--config",
            cfg.to_str().unwrap(),
        ])
        .env("COLUMNS", "80")
        .env_remove("GPULEDGER_PROMETHEUS")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    println!("{text}");
    for line in text.lines() {
        assert!(line.chars().count() <= 80, "{line:?}");
    }
    assert!(
        text.contains("5 serving workloads: 1 over, 1 near capacity, 1 fits, 2 unknown."),
        "{text}"
    );

    // The inventory carries the same section when its inputs exist.
    let out = gpuledger(&root())
        .args(["inventory", "--format", "json", "--snapshot"])
        .arg(fixture("fixtures/headroom/cluster.yaml"))
        .args([
            "--prometheus",
            &prom.url(),
            "--config",
            cfg.to_str().unwrap(),
        ])
        .env_remove("GPULEDGER_PROMETHEUS")
        .output()
        .unwrap();
    let inv: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(close(&row(&inv, "chat")["production_p95_rps"], 6.0));
    assert_eq!(
        row(&inv, "chat")["tested_rps"],
        Value::Null,
        "no --repo: no load test read"
    );
    let out = gpuledger(&root())
        .args(["inventory", "--snapshot"])
        .arg(fixture("fixtures/headroom/cluster.yaml"))
        .args(["--prometheus", &prom.url()])
        .env("COLUMNS", "80")
        .env_remove("GPULEDGER_PROMETHEUS")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    println!("{text}");
    assert!(
        text.contains("Serving headroom\n5 serving workloads: 5 unknown."),
        "{text}"
    );
    for line in text.lines() {
        assert!(line.chars().count() <= 80, "{line:?}");
    }
}

#[test]
fn inventory_without_headroom_inputs_has_no_section() {
    let out = gpuledger(&root())
        .args(["inventory", "--format", "json", "--snapshot"])
        .arg(fixture("fixtures/headroom/cluster.yaml"))
        .env_remove("GPULEDGER_PROMETHEUS")
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v.get("headroom"), None);
}

fn bad_fleet(load_test: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("cluster.yaml"),
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: chat\n  namespace: serve\n  annotations:\n    gpuledger.io/load-test: {load_test}\n    gpuledger.io/latency-objective: ttft_p95<=500ms\nspec:\n  replicas: 1\n  template:\n    spec:\n      containers: [{{name: vllm, resources: {{limits: {{nvidia.com/gpu: 1}}}}}}]\n"
        ),
    )
    .unwrap();
    dir
}

fn bad(load_test: &str) -> (i32, Value, String) {
    let dir = bad_fleet(load_test);
    let out = gpuledger(&root())
        .args(["headroom", "--format", "json", "--snapshot"])
        .arg(dir.path().join("cluster.yaml"))
        .arg("--repo")
        .arg(fixture("fixtures/headroom/repo"))
        .env_remove("GPULEDGER_PROMETHEUS")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        serde_json::from_slice(&out.stdout).unwrap(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_load_test_of_an_unknown_format_is_an_error_naming_the_file() {
    let (code, v, stderr) = bad("bad/unknown.json");
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("bad/unknown.json: is not a load-test result gpuledger reads"),
        "{stderr}"
    );
    let why = row(&v, "chat")["unknown"]["tested_rps"].as_str().unwrap();
    assert!(
        why.starts_with("bad/unknown.json: is not a load-test result"),
        "{why}"
    );
}

#[test]
fn a_malformed_load_test_names_its_line() {
    let (code, _, stderr) = bad("bad/malformed.json");
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("bad/malformed.json:4:"), "{stderr}");
}

#[test]
fn a_load_test_outside_the_repository_is_refused() {
    let (code, v, stderr) = bad("../../Cargo.toml");
    assert_eq!(code, 2, "{stderr}");
    assert!(
        row(&v, "chat")["unknown"]["tested_rps"]
            .as_str()
            .unwrap()
            .contains("relative path inside the repository")
    );
}

#[test]
fn the_table_fits_80_columns() {
    let out = gpuledger(&root())
        .args(["headroom", "--snapshot"])
        .arg(fixture("fixtures/headroom/cluster.yaml"))
        .arg("--repo")
        .arg(fixture("fixtures/headroom/repo"))
        .env("COLUMNS", "80")
        .env_remove("GPULEDGER_PROMETHEUS")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    for line in text.lines() {
        assert!(line.chars().count() <= 80, "{line:?}");
    }
    assert!(text.contains("capacity unknown: no load test"), "{text}");
}

#[test]
fn markdown_snapshot() {
    let out = gpuledger(&root())
        .args(["headroom", "--format", "markdown", "--snapshot"])
        .arg(fixture("fixtures/headroom/cluster.yaml"))
        .arg("--repo")
        .arg(fixture("fixtures/headroom/repo"))
        .env_remove("GPULEDGER_PROMETHEUS")
        .env_remove("GPULEDGER_CONFIG")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    insta::assert_snapshot!(String::from_utf8(out.stdout).unwrap());
}

#[test]
fn a_config_rule_names_a_load_test_for_a_chart_the_team_does_not_control() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("gpuledger.yaml");
    std::fs::write(
        &cfg,
        "intent:\n  - match: {namespace: serve, name: embed}\n    load-test: loadtests/llama-vllm.json\n    latency-objective: ttft_p95<=800ms\n",
    )
    .unwrap();
    let (code, v, stderr) = headroom(&["--config", cfg.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    let embed = row(&v, "embed");
    assert_eq!(embed["load_test"], "loadtests/llama-vllm.json");
    assert!(close(&embed["tested_rps"], 9.6), "{embed:#}");
    assert_eq!(embed["objective"], "ttft_p95<=800ms");
}

#[cfg(unix)]
#[test]
fn a_symlink_out_of_the_repository_is_refused() {
    let repo = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("lt.json");
    std::fs::copy(
        fixture("fixtures/headroom/repo/loadtests/llama-vllm.json"),
        &target,
    )
    .unwrap();
    std::os::unix::fs::symlink(&target, repo.path().join("lt.json")).unwrap();
    let dir = bad_fleet("lt.json");
    let out = gpuledger(&root())
        .args(["headroom", "--format", "json", "--snapshot"])
        .arg(dir.path().join("cluster.yaml"))
        .arg("--repo")
        .arg(repo.path())
        .env_remove("GPULEDGER_PROMETHEUS")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        row(&v, "chat")["unknown"]["tested_rps"]
            .as_str()
            .unwrap()
            .contains("inside the repository")
    );
}
