//! Workload intent end to end: annotations and `intent:` rules in the reports, intent coverage,
//! and the pre-merge lint with its gate.

use serde_json::Value;

use super::support::{Repo, gpuledger};

fn job(name: &str, annotations: &str, extra_spec: &str) -> String {
    format!(
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {name}\n  namespace: research\n  annotations:\n{annotations}spec:\n{extra_spec}  parallelism: 2\n  template:\n    spec:\n      containers: [{{name: main, resources: {{limits: {{nvidia.com/gpu: \"2\"}}}}}}]\n"
    )
}

fn run(r: &Repo, args: &[&str]) -> (i32, Value, String) {
    let out = gpuledger(r.path())
        .args(args)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    (
        out.status.code().unwrap_or(-1),
        serde_json::from_slice(&out.stdout).unwrap_or(Value::Null),
        err,
    )
}

#[test]
fn intent_in_reports_and_the_lint_on_a_change() {
    let r = Repo::new();
    r.write(
        "batch/eval.yaml",
        &job(
            "eval",
            "    gpuledger.io/deadline: \"2026-12-02T17:00:00Z\"\n    gpuledger.io/earliest-start: \"2026-12-02T12:00:00Z\"\n    gpuledger.io/runtime: 1h\n    gpuledger.io/interruptible: \"true\"\n",
            "",
        ),
    )
    .write(
        "batch/plain.yaml",
        &job("plain", "    team: research\n", ""),
    )
    .write(
        ".gpuledger.yaml",
        "intent:\n- match: {name: plain}\n  runtime: 30m\n  interruptible: true\n",
    )
    .commit("intent");

    // In the render report: intent per workload, and its coverage (both declare some: one by a rule).
    let (code, j, err) = run(&r, &["render", "--repo", "."]);
    assert_eq!(code, 0, "{err}");
    let ws = j["desired"]["workloads"].as_array().unwrap();
    let eval = ws.iter().find(|w| w["name"] == "eval").unwrap();
    assert_eq!(eval["intent"]["runtime_s"], 3600);
    assert_eq!(eval["intent"]["deadline"], "2026-12-02T17:00:00Z");
    assert_eq!(eval["intent"]["interruptible"], true);
    let plain = ws.iter().find(|w| w["name"] == "plain").unwrap();
    assert_eq!(plain["intent"]["runtime_s"], 1800, "{plain}");
    assert_eq!(j["desired"]["intent_coverage"], 1.0);

    // A change adds a job whose intent cannot hold, and one without any.
    r.git(&["checkout", "-q", "-b", "feature"]);
    r.write(
        "batch/late.yaml",
        &job(
            "late",
            "    gpuledger.io/deadline: \"2026-12-02T13:00:00Z\"\n    gpuledger.io/earliest-start: \"2026-12-02T12:00:00Z\"\n    gpuledger.io/runtime: 3h\n    gpuledger.io/interruptible: \"false\"\n    cluster-autoscaler.kubernetes.io/safe-to-evict: \"true\"\n",
            "  activeDeadlineSeconds: 3600\n",
        ),
    )
    .write(
        "batch/broken.yaml",
        &job("broken", "    gpuledger.io/runtime: forever\n", ""),
    )
    .write("batch/bare.yaml", &job("bare", "    team: research\n", ""))
    .commit("more jobs");
    let check = |gates: &str| {
        run(
            &r,
            &[
                "check",
                "--repo",
                ".",
                "--base",
                "main",
                "--head",
                "feature",
                "--fail-on",
                gates,
            ],
        )
    };
    let (code, j, err) = check("intent");
    assert_eq!(code, 1, "{err}");
    let findings: Vec<(String, String, String)> = j["check"]["intent"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["name"].as_str().unwrap().to_string(),
                f["rule"].as_str().unwrap().to_string(),
                f["source"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    let rules_of = |name: &str| -> Vec<&str> {
        findings
            .iter()
            .filter(|f| f.0 == name)
            .map(|f| f.1.as_str())
            .collect()
    };
    assert_eq!(
        rules_of("late"),
        ["infeasible", "contradiction", "contradiction"]
    );
    assert_eq!(
        rules_of("broken"),
        ["unparsable", "incomplete", "incomplete"]
    );
    assert_eq!(rules_of("bare"), ["missing"]);
    // Each names the manifest and line to fix.
    assert!(
        findings
            .iter()
            .all(|f| f.2.starts_with("batch/") && f.2.contains(':')),
        "{findings:?}"
    );
    // The unchanged workloads are not linted.
    assert!(rules_of("eval").is_empty() && rules_of("plain").is_empty());
    let gate = j["check"]["gates"].as_array().unwrap()[0].clone();
    assert_eq!(gate["name"], "intent");
    assert_eq!(gate["failed"], true);
    // Without the gate the findings are reported and the check passes.
    let (code, j, _) = check("none");
    assert_eq!(code, 0);
    assert_eq!(j["check"]["intent"].as_array().unwrap().len(), 7);
    // The comment says the one workload without intent in one line, in the singular.
    let md = gpuledger(r.path())
        .args([
            "check", "--repo", ".", "--base", "main", "--head", "feature",
        ])
        .args(["--fail-on", "none", "--format", "markdown"])
        .output()
        .unwrap();
    let md = String::from_utf8_lossy(&md.stdout);
    assert!(
        md.contains("**1 workload declares no intent** (gpuledger.io/deadline"),
        "{md}"
    );
}

#[test]
fn a_bad_intent_rule_is_named_by_its_place() {
    let r = Repo::new();
    r.write(
        "batch/plain.yaml",
        &job("plain", "    team: research\n", ""),
    )
    .write(
        ".gpuledger.yaml",
        "intent:\n- match: {kind: Job}\n  deadline: next week\n",
    )
    .commit("bad rule");
    let (code, j, err) = run(&r, &["render", "--repo", "."]);
    assert_eq!(code, 0, "{err}");
    let w = &j["desired"]["workloads"][0];
    assert_eq!(w["intent_problems"][0]["key"], "intent[0].deadline", "{w}");
    // An unknown key in a rule is an error with its line.
    r.write(
        ".gpuledger.yaml",
        "intent:\n- match: {kind: Job}\n  dedline: 2026-12-02T17:00:00Z\n",
    );
    let (code, _, err) = run(&r, &["render", "--repo", "."]);
    assert_eq!(code, 2);
    assert!(
        err.contains(".gpuledger.yaml:3:3: unknown field `dedline`"),
        "{err}"
    );
}

/// A change that adds batch work with intent says, against the live state, whether it fits the
/// batch pool by staggering: the seed example on a 4-GPU cluster.
#[test]
fn the_check_says_whether_added_batch_work_fits_staggered() {
    let r = Repo::new();
    r.write("README.md", "gitops\n").commit("empty");
    r.git(&["checkout", "-q", "-b", "feature"]);
    for name in ["eval-a", "eval-b", "eval-c", "eval-d"] {
        r.write(
            &format!("batch/{name}.yaml"),
            &format!(
                "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {name}\n  namespace: ml\n  annotations:\n    gpuledger.io/runtime: 1h\n    gpuledger.io/earliest-start: \"2026-12-02T12:00:00Z\"\n    gpuledger.io/deadline: \"2026-12-02T17:00:00Z\"\nspec:\n  template:\n    spec:\n      containers: [{{name: main, resources: {{limits: {{nvidia.com/gpu: \"2\"}}}}}}]\n"
            ),
        );
    }
    r.write(
        "live.yaml",
        // A snapshot as gpuledger writes it, which lists what it read: a node, and no pods.
        "apiVersion: v1\nkind: List\nmetadata:\n  annotations: {gpuledger.io/resources: \"nodes,pods,services,ingresses.networking.k8s.io\"}\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata: {name: gpu-a}\n  status:\n    capacity: {nvidia.com/gpu: \"4\"}\n    allocatable: {nvidia.com/gpu: \"4\"}\n    conditions: [{type: Ready, status: \"True\"}]\n",
    )
    .commit("four evals");
    let (code, j, err) = run(
        &r,
        &[
            "check",
            "--repo",
            ".",
            "--base",
            "main",
            "--head",
            "feature",
            "--snapshot",
            "live.yaml",
            "--now",
            "2026-12-02T12:00:00Z",
            "--fail-on",
            "none",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let s = j["check"]["stagger"].as_str().unwrap_or_default();
    assert!(
        s.contains("Fits the pool staggered: peak 4 of 4 GPUs")
            && s.contains("started as soon as each may, it needs 8"),
        "{s:?}"
    );
    // The pull-request comment's body, as people read it: the stagger verdict beside capacity.
    let out = gpuledger(r.path())
        .args([
            "check",
            "--repo",
            ".",
            "--base",
            "main",
            "--head",
            "feature",
            "--snapshot",
            "live.yaml",
            "--now",
            "2026-12-02T12:00:00Z",
            "--fail-on",
            "none",
            "--format",
            "markdown",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    // The commits' short shas vary per run.
    let mut body = String::from_utf8_lossy(&out.stdout).into_owned();
    for branch in ["main", "feature"] {
        let sha = r.git(&["rev-parse", "--short=7", branch]);
        body = body.replace(sha.trim(), &format!("{}_SHA", branch.to_uppercase()));
    }
    insta::assert_snapshot!("check_stagger_markdown", body);
}
