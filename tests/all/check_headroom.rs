//! Serving headroom at the head's shape in `check` (issue 33 §2): a git repository whose head
//! halves three serving Deployments, each naming a load test in the repository; the live state at
//! the base's shape; vLLM series backfilled into the real Prometheus. chat's load test at the head
//! is of the head's 2×8 and fits; summarize's is of its head shape and production is over it;
//! rerank's is still of the base's shape (stale); embed keeps its GPUs but its head lowers
//! `--max-num-seqs` below what its load test ran (stale). The load tests the working tree holds
//! (the base's) differ from the head's: the check must read the head ref.

use serde_json::Value;

use super::prometheus_harness::{HISTORY_MINUTES, Prometheus, Series};
use super::support::{Repo, gpuledger};

const H100: &str = "NVIDIA-H100-80GB-HBM3";

fn deployment(name: &str, replicas: u64, gpus: u64, model: &str) -> String {
    format!(
        "apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
  namespace: serve
  annotations:
    gpuledger.io/load-test: loadtests/{name}.json
    gpuledger.io/latency-objective: ttft_p95<=500ms
spec:
  replicas: {replicas}
  template:
    spec:
      nodeSelector: {{nvidia.com/gpu.product: {H100}}}
      containers:
      - name: vllm
        args: [serve, {model}, --max-num-seqs, \"256\"]
        resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}
"
    )
}

/// A vLLM bench serve result of one run at `rps` that met the objective (p95 TTFT 300 ms).
fn load_test(model: &str, gpus: u64, replicas: u64, rps: f64) -> String {
    format!(
        r#"{{"backend": "vllm", "model_id": "{model}", "gpu_type": "{H100}", "gpus": {gpus}, "replicas": {replicas}, "max_num_seqs": 256, "request_rate": {rps}, "completed": 1000, "failed": 0, "request_throughput": {rps}, "p95_ttft_ms": 300.0}}"#
    )
}

const CHAT: &str = "Qwen/Qwen3-8B";
const SUMMARIZE: &str = "meta-llama/Llama-3.1-8B-Instruct";
const RERANK: &str = "BAAI/bge-reranker-v2-m3";
const EMBED: &str = "intfloat/e5-mistral-7b-instruct";

/// main: chat 4×8, summarize 2×4, rerank 2×1, each with a load test of that shape. feature halves
/// each; chat's and summarize's load tests are redone at the new shape, rerank's is not.
fn repo() -> Repo {
    let r = Repo::new();
    r.write("serve/chat.yaml", &deployment("chat", 4, 8, CHAT))
        .write(
            "serve/summarize.yaml",
            &deployment("summarize", 2, 4, SUMMARIZE),
        )
        .write("serve/rerank.yaml", &deployment("rerank", 2, 1, RERANK))
        .write("loadtests/chat.json", &load_test(CHAT, 8, 4, 23.0))
        .write("loadtests/summarize.json", &load_test(SUMMARIZE, 4, 2, 6.0))
        .write("loadtests/rerank.json", &load_test(RERANK, 1, 2, 4.0))
        .write("serve/embed.yaml", &deployment("embed", 1, 1, EMBED))
        .write("loadtests/embed.json", &load_test(EMBED, 1, 1, 5.0))
        .commit("serving at full size");
    r.git(&["checkout", "-q", "-b", "feature"]);
    r.write("serve/chat.yaml", &deployment("chat", 2, 8, CHAT))
        .write(
            "serve/summarize.yaml",
            &deployment("summarize", 1, 4, SUMMARIZE),
        )
        .write("serve/rerank.yaml", &deployment("rerank", 1, 1, RERANK))
        .write("loadtests/chat.json", &load_test(CHAT, 8, 2, 11.9))
        .write("loadtests/summarize.json", &load_test(SUMMARIZE, 4, 1, 3.0))
        .write(
            "serve/embed.yaml",
            &deployment("embed", 1, 1, EMBED).replace("\"256\"", "\"128\""),
        )
        .commit("halve serving");
    r.git(&["checkout", "-q", "main"]);
    r
}

/// The live state at the base's shape: each Deployment with its pods on H100 nodes.
fn cluster() -> String {
    let mut y = format!(
        "apiVersion: v1
kind: Node
metadata: {{name: gpu-1, labels: {{nvidia.com/gpu.product: {H100}}}}}
status:
  capacity: {{nvidia.com/gpu: \"64\"}}
  allocatable: {{nvidia.com/gpu: \"64\"}}
  conditions: [{{type: Ready, status: \"True\"}}]
"
    );
    for (name, replicas, gpus, model) in [
        ("chat", 4, 8, CHAT),
        ("summarize", 2, 4, SUMMARIZE),
        ("rerank", 2, 1, RERANK),
        ("embed", 1, 1, EMBED),
    ] {
        let d = deployment(name, replicas, gpus, model).replace(
            "  namespace: serve\n",
            &format!("  namespace: serve\n  uid: d-{name}\n"),
        );
        y.push_str("---\n");
        y.push_str(&d);
        for i in 0..replicas {
            y.push_str(&format!(
                "---
apiVersion: v1
kind: Pod
metadata:
  name: {name}-{i}
  namespace: serve
  ownerReferences: [{{apiVersion: apps/v1, kind: Deployment, name: {name}, uid: d-{name}, controller: true}}]
spec:
  nodeName: gpu-1
  containers:
  - name: vllm
    args: [serve, {model}, --max-num-seqs, \"256\"]
    resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}
status: {{phase: Running}}
"
            ));
        }
    }
    y
}

/// A counter rising at `per_s` a second, sampled once a minute.
fn counter(per_s: f64) -> Vec<f64> {
    (0..HISTORY_MINUTES)
        .map(|i| 100_000.0 + per_s * 60.0 * i as f64)
        .collect()
}

const PODS: [&str; 9] = [
    "chat-0",
    "chat-1",
    "chat-2",
    "chat-3",
    "summarize-0",
    "summarize-1",
    "rerank-0",
    "rerank-1",
    "embed-0",
];

/// chat: 4 pods at 2.3 req/s (9.2); summarize: 2 at 2 (4); rerank: 2 at 1 (2).
fn series() -> Vec<Series<'static>> {
    PODS.iter()
        .map(|pod| {
            let (model, per_s) = match pod.split('-').next() {
                Some("chat") => (CHAT, 2.3),
                Some("summarize") => (SUMMARIZE, 2.0),
                Some("embed") => (EMBED, 1.0),
                _ => (RERANK, 1.0),
            };
            Series::cycling(
                "vllm:request_success_total",
                &[
                    ("namespace", "serve"),
                    ("pod", pod),
                    ("model_name", model),
                    ("job", "vllm"),
                    ("finished_reason", "stop"),
                ],
                &counter(per_s),
            )
        })
        .collect()
}

fn check(r: &Repo, extra: &[&str]) -> (i32, Value, String) {
    let out = gpuledger(r.path())
        .args([
            "check", "--repo", ".", "--base", "main", "--head", "feature", "--format", "json",
        ])
        .args(extra)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let json = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {err}"));
    (out.status.code().unwrap_or(-1), json, err)
}

fn row<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["check"]["headroom"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["name"] == name)
        .unwrap_or_else(|| panic!("no headroom row {name}: {v:#}"))
}

fn close(v: &Value, want: f64) -> bool {
    v.as_f64().is_some_and(|x| (x - want).abs() < 1e-6)
}

fn gate(v: &Value) -> &Value {
    v["check"]["gates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["name"] == "headroom")
        .unwrap_or_else(|| panic!("no headroom gate: {v:#}"))
}

#[test]
fn headroom_at_the_heads_shape_fits_is_over_or_is_stale() {
    let r = repo();
    let snapshot = r.path().join("cluster.yaml");
    // Untracked: the live state, not part of either commit.
    std::fs::write(&snapshot, cluster()).unwrap();
    let prom = Prometheus::start(&series());
    let url = prom.url();
    let live = [
        "--snapshot",
        "cluster.yaml",
        "--prometheus",
        url.as_str(),
        "--window",
        "1h",
    ];
    let mut args = live.to_vec();
    args.extend(["--fail-on", "headroom"]);
    let (code, v, err) = check(&r, &args);
    assert_eq!(code, 1, "summarize is over and --fail-on headroom: {err}");

    // chat: the head's 2×8 load test (the working tree holds the base's 4×8 one at 23 req/s).
    let chat = row(&v, "chat");
    assert_eq!(chat["workload"], "serve/Deployment/chat");
    assert_eq!(chat["load_test"], "loadtests/chat.json");
    assert!(close(&chat["tested_rps"], 11.9), "{chat:#}");
    assert!(close(&chat["production_p95_rps"], 9.2), "{chat:#}");
    assert!(close(&chat["headroom"], 1.0 - 9.2 / 11.9), "{chat:#}");
    assert_eq!(chat["verdict"], "fits");
    assert_eq!(chat["production_metric"], "vllm");
    assert_eq!(chat["unverified"], serde_json::json!([]));
    assert_eq!(chat["unknown"], serde_json::json!({}));
    let shape = chat["shape"].as_str().unwrap();
    assert!(shape.contains("2×8"), "{shape}");
    assert_eq!(
        chat["summary"],
        format!(
            "serve/Deployment/chat: tested 11.9 req/s at the head's {shape}, production p95 9.2 — fits with 22.7%"
        )
    );

    // summarize: production's 4 req/s over the head's tested 3.
    let sum = row(&v, "summarize");
    assert!(close(&sum["tested_rps"], 3.0));
    assert!(close(&sum["production_p95_rps"], 4.0));
    assert!(close(&sum["headroom"], 1.0 - 4.0 / 3.0));
    assert_eq!(sum["verdict"], "over");
    assert!(
        sum["summary"]
            .as_str()
            .unwrap()
            .ends_with("production p95 4 — over by 33.3%"),
        "{sum:#}"
    );

    // rerank: its load test is still of the base's 2 replicas.
    let rerank = row(&v, "rerank");
    assert_eq!(rerank["tested_rps"], Value::Null);
    assert_eq!(
        rerank["unknown"]["tested_rps"],
        "stale load test: tested at 2 replicas, the head's 1"
    );
    assert!(close(&rerank["production_p95_rps"], 2.0));
    assert_eq!(rerank["headroom"], Value::Null);
    assert_eq!(rerank["verdict"], "unknown");
    assert_eq!(
        rerank["unknown"]["headroom"],
        "capacity unknown: stale load test: tested at 2 replicas, the head's 1"
    );

    // embed: only its engine flags change (--max-num-seqs 256 → 128): not a reshape of its GPUs,
    // but of what its load test measured.
    let embed = row(&v, "embed");
    assert_eq!(
        embed["unknown"]["tested_rps"],
        "stale load test: tested with max_num_seqs 256, the head's 128"
    );
    assert_eq!(embed["verdict"], "unknown");
    assert!(
        !v["check"]["reshaped"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["name"] == "embed")
    );

    // Over first, then fits, then unknown.
    let order: Vec<&str> = v["check"]["headroom"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["name"].as_str().unwrap())
        .collect();
    assert_eq!(order, ["summarize", "chat", "embed", "rerank"]);
    let g = gate(&v);
    assert_eq!(g["failed"], true);
    assert_eq!(g["unknown"], false);
    let why = g["why"].as_str().unwrap();
    assert!(
        why.starts_with("serve/Deployment/summarize: tested 3 req/s"),
        "{why}"
    );
    assert!(why.contains("1 fits"), "{why}");
    assert!(
        why.contains("unknown, not failed: serve/Deployment/embed"),
        "{why}"
    );

    // The comment as markdown: the sentence, then one line per workload.
    let out = gpuledger(r.path())
        .args([
            "check", "--repo", ".", "--base", "main", "--head", "feature", "--format", "markdown",
        ])
        .args(live)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "no gate asked: exit 0");
    let md = String::from_utf8_lossy(&out.stdout);
    println!("{md}");
    assert!(
        md.contains("serving headroom at the head's shape: 1 over, 1 fits, 2 unknown"),
        "{md}"
    );
    assert!(
        md.contains("### Serving headroom at the head's shape"),
        "{md}"
    );
    assert!(
        md.contains(&format!(
            "- **fits** `serve/Deployment/chat`: tested 11.9 req/s at the head's {shape}, production p95 9.2 — fits with 22.7%."
        )),
        "{md}"
    );

    // Without Prometheus: unknown with why, never 0 and never "fits"; the gate does not fail.
    let (code, v, err) = check(&r, &["--snapshot", "cluster.yaml", "--fail-on", "headroom"]);
    assert_eq!(code, 0, "{err}");
    for w in v["check"]["headroom"].as_array().unwrap() {
        assert_eq!(w["verdict"], "unknown", "{w}");
        assert_eq!(w["production_p95_rps"], Value::Null);
        assert_eq!(
            w["unknown"]["production_p95_rps"],
            "no Prometheus with vLLM or Dynamo metrics (--prometheus)"
        );
    }
    assert!(close(&row(&v, "chat")["tested_rps"], 11.9));
    let g = gate(&v);
    assert_eq!(
        (g["failed"].as_bool(), g["unknown"].as_bool()),
        (Some(false), Some(true))
    );

    // Without live state: no pods to read production's rate by.
    let (code, v, err) = check(&r, &["--prometheus", url.as_str(), "--fail-on", "headroom"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        row(&v, "summarize")["unknown"]["production_p95_rps"]
            .as_str()
            .unwrap()
            .starts_with("needs the live state"),
        "{v:#}"
    );
}
