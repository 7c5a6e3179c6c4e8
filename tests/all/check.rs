//! `gpuledger check`: a feature branch of the drift fixture's repository against main, with and
//! without live state.

use serde_json::Value;

use super::drift::copy_dir;
use super::support::{Repo, fixture, gpuledger};

pub fn repo_with_feature_branch() -> Repo {
    let r = Repo::new();
    copy_dir(&fixture("tests/fixtures/drift/repo"), r.path());
    r.commit("gitops");
    r.git(&["checkout", "-q", "-b", "feature"]);
    let overlay =
        std::fs::read_to_string(r.path().join("serving/overlays/prod/kustomization.yaml")).unwrap();
    r.write("serving/overlays/prod/kustomization.yaml", &overlay.replace("value: 8", "value: 10"))
        .remove("parked/model.yaml")
        .write(
            "batch/rogue.yaml",
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: rogue-finetune, namespace: research}\nspec:\n  replicas: 2\n  template:\n    spec:\n      containers: [{name: main, resources: {limits: {nvidia.com/gpu: \"4\"}}}]\n",
        )
        .write(
            "batch/new-model.yaml",
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: new-model, namespace: research}\nspec:\n  replicas: 1\n  template:\n    spec:\n      containers: [{name: main, resources: {limits: {nvidia.com/gpu: \"8\"}}}]\n",
        )
        .commit("scale llama, park nothing, adopt the fine-tune, add a model");
    r.git(&["checkout", "-q", "main"]);
    r
}

fn check(r: &Repo, extra: &[&str]) -> (i32, Value, String) {
    let out = gpuledger(r.path())
        .args([
            "check",
            "--repo",
            ".",
            "--base",
            "main",
            "--head",
            "feature",
            "--now",
            "2026-11-30",
            "--format",
            "json",
        ])
        .args(extra)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let json = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {err}"));
    (out.status.code().unwrap_or(-1), json, err)
}

#[test]
fn delta_per_tenant_and_workload_changes_offline() {
    let r = repo_with_feature_branch();
    let (code, j, err) = check(&r, &[]);
    assert_eq!(code, 0, "{err}");
    let c = &j["check"];
    assert_eq!(
        (
            c["gpus_base"].as_u64(),
            c["gpus_head"].as_u64(),
            c["gpu_delta"].as_i64()
        ),
        (Some(150), Some(166), Some(16))
    );
    let tenants: Vec<(String, i64)> = c["tenants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_string(),
                t["delta"].as_i64().unwrap(),
            )
        })
        .collect();
    // The repository declares no namespaces and no cluster is given: tenants fall back to namespaces.
    assert_eq!(
        tenants,
        [
            ("llm-prod".to_string(), 16),
            ("parked".to_string(), -16),
            ("research".to_string(), 16),
            ("auto-ns".to_string(), 0),
            ("batch".to_string(), 0),
            ("qwen-ns".to_string(), 0)
        ]
    );
    let names = |k: &str| -> Vec<String> {
        c[k].as_array()
            .unwrap()
            .iter()
            .map(|w| w["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(names("added"), ["new-model", "rogue-finetune"]);
    assert_eq!(names("removed"), ["parked-model"]);
    assert_eq!(names("reshaped"), ["llama"]);
    assert_eq!(
        c["reshaped"][0]["shape_head"],
        "decode 10×8 + prefill 4×8 = 112"
    );
    assert_eq!(
        c["capacity"],
        Value::Null,
        "no live state: capacity unknown, not assumed"
    );
    assert_eq!(c["live"], false);
}

#[test]
fn drift_resolved_and_introduced_and_the_capacity_gate() {
    let r = repo_with_feature_branch();
    let snapshot = fixture("tests/fixtures/drift/cluster.yaml")
        .display()
        .to_string();
    let (code, j, err) = check(
        &r,
        &[
            "--snapshot",
            &snapshot,
            "--fail-on",
            "capacity,drift-introduced",
        ],
    );
    assert_eq!(code, 1, "{err}");
    let c = &j["check"];
    assert_eq!(
        c["drift_resolved"],
        serde_json::json!([
            "parked/Deployment/parked-model",
            "research/Deployment/rogue-finetune"
        ])
    );
    assert_eq!(
        c["drift_introduced"],
        serde_json::json!(["research/Deployment/new-model"])
    );
    // 166 desired + 2 held by unmanaged workloads against 112 placeable.
    assert_eq!(c["capacity"]["projected"], 168);
    assert_eq!(c["capacity"]["fits"], false);
    let gates: Vec<(String, bool)> = c["gates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            (
                g["name"].as_str().unwrap().to_string(),
                g["failed"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        gates,
        [
            ("capacity".to_string(), true),
            ("drift-introduced".to_string(), true)
        ]
    );
    assert!(
        err.contains("failed gates: capacity, drift-introduced"),
        "{err}"
    );
    // With the live namespaces, tenants resolve to their labels.
    assert!(
        c["tenants"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "research" && t["delta"] == 16)
    );
    // No gates asked for: findings are reported, the exit code stays 0.
    assert_eq!(check(&r, &["--snapshot", &snapshot]).0, 0);
}

#[test]
fn a_tenant_limit_fails_the_capacity_gate_and_markdown_is_balanced() {
    let r = repo_with_feature_branch();
    r.write(
        ".gpuledger.yaml",
        &format!(
            "{}limits:\n  tenants: {{research: 10}}\n",
            std::fs::read_to_string(r.path().join(".gpuledger.yaml")).unwrap()
        ),
    );
    let (code, j, err) = check(&r, &["--fail-on", "capacity"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        j["check"]["gates"][0]["why"]
            .as_str()
            .unwrap()
            .contains("tenant research declares 16 GPUs, over its limit of 10")
    );
    let out = gpuledger(r.path())
        .args([
            "check", "--repo", ".", "--base", "main", "--head", "feature", "--format", "markdown",
        ])
        .output()
        .unwrap();
    let md = String::from_utf8(out.stdout).unwrap();
    assert!(
        md.starts_with("## GPU impact of this change\n\n**+16 GPUs (150 → 166)"),
        "{md}"
    );
    assert_eq!(
        md.matches("<details>").count(),
        md.matches("</details>").count()
    );
}
