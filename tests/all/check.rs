//! `gpuledger check`: a feature branch of the drift fixture's repository against main, with and
//! without live state.

use serde_json::Value;

use super::drift::copy_dir;
use super::support::{Repo, fixture, gpuledger};

/// The parked app's directory once the model is parked: the Application still renders (a
/// directory Git cannot hold empty would be a missing path, which Argo CD fails on, and whose
/// GPUs are then unknown), and it declares no GPU.
pub const PARKED_NOTHING: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: parked, namespace: parked}\ndata: {state: parked}\n";

pub fn repo_with_feature_branch() -> Repo {
    let r = Repo::new();
    copy_dir(&fixture("tests/fixtures/drift/repo"), r.path());
    r.commit("gitops");
    r.git(&["checkout", "-q", "-b", "feature"]);
    let overlay =
        std::fs::read_to_string(r.path().join("serving/overlays/prod/kustomization.yaml")).unwrap();
    r.write("serving/overlays/prod/kustomization.yaml", &overlay.replace("value: 8", "value: 10"))
        .write("parked/model.yaml", PARKED_NOTHING)
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
    // The model the change adds is missing only until it syncs: the change, not drift.
    assert_eq!(c["drift_introduced"], serde_json::json!([]));
    // The cluster now (101 requested + 16 pending), llama +16 by its reshape, the adopted
    // fine-tune as it runs (8), the added model +8, the parked model (holding nothing) nothing.
    assert_eq!(c["capacity"]["base_projected"], 117);
    assert_eq!(c["capacity"]["projected"], 141);
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
            ("drift-introduced".to_string(), false)
        ]
    );
    assert!(
        err.contains("failed gates: capacity") && !err.contains("drift-introduced"),
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
    // The limit is the base's: main carries it, the feature branch is rebased onto it.
    r.write(
        ".gpuledger.yaml",
        &format!(
            "{}limits:\n  tenants: {{research: 10}}\n",
            std::fs::read_to_string(r.path().join(".gpuledger.yaml")).unwrap()
        ),
    )
    .commit("limit research");
    r.git(&["checkout", "-q", "feature"]);
    r.git(&["rebase", "-q", "main"]);
    r.git(&["checkout", "-q", "main"]);
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
    // The title, the headline, then the line naming the commits compared.
    let blocks: Vec<&str> = md.split("\n\n").take(3).collect();
    assert_eq!(blocks[0], "## GPU impact of this change", "{md}");
    assert!(blocks[1].starts_with("**Adds 16 GPUs (150 → 166)"), "{md}");
    assert!(
        blocks[2].starts_with("_Base main (") && blocks[2].contains(" → head feature ("),
        "{md}"
    );
    assert_eq!(
        md.matches("<details>").count(),
        md.matches("</details>").count()
    );
}

/// The gates and their `unknown` flags, by name.
fn gates(j: &Value) -> Vec<(String, bool, bool, String)> {
    j["check"]["gates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            (
                g["name"].as_str().unwrap().to_string(),
                g["failed"].as_bool().unwrap(),
                g["unknown"].as_bool().unwrap(),
                g["why"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn gates_that_cannot_be_evaluated_fail_closed_without_live_state() {
    let r = repo_with_feature_branch();
    let (code, j, err) = check(&r, &["--fail-on", "capacity,drift-introduced"]);
    assert_eq!(code, 1, "a gate that cannot be evaluated fails: {err}");
    let g = gates(&j);
    assert_eq!(
        g.iter()
            .map(|(n, f, u, _)| (n.as_str(), *f, *u))
            .collect::<Vec<_>>(),
        [("capacity", true, true), ("drift-introduced", true, true)]
    );
    assert!(
        g[0].3.starts_with("cannot check capacity: no live state"),
        "{g:?}"
    );
    assert!(
        g[1].3
            .starts_with("cannot check drift-introduced: no live state"),
        "{g:?}"
    );
    // Unknown is null, never an empty list that reads as "0 drift introduced".
    assert_eq!(j["check"]["drift_introduced"], Value::Null);
    assert_eq!(j["check"]["drift_resolved"], Value::Null);
    assert!(j["check"]["drift_unknown"].is_string());
    let out = gpuledger(r.path())
        .args([
            "check",
            "--repo",
            ".",
            "--base",
            "main",
            "--head",
            "feature",
            "--fail-on",
            "capacity",
            "--format",
            "markdown",
        ])
        .output()
        .unwrap();
    let md = String::from_utf8(out.stdout).unwrap();
    assert!(
        md.contains("**Gate `capacity` could not be evaluated**: cannot check capacity"),
        "{md}"
    );
}

#[test]
fn an_incomplete_live_read_leaves_drift_and_capacity_unknown() {
    use super::kube_emulator::{Emulator, EmulatorOptions};
    let r = repo_with_feature_branch();
    let emu = Emulator::start(EmulatorOptions {
        forbidden: vec!["pods".into()],
        ..EmulatorOptions::snapshot(fixture("tests/fixtures/drift/cluster.yaml"))
    });
    let kubeconfig = emu.kubeconfig_path().display().to_string();
    let (code, j, err) = check(
        &r,
        &[
            "--kubeconfig",
            &kubeconfig,
            "--fail-on",
            "capacity,drift-introduced",
        ],
    );
    assert_eq!(code, 2, "an incomplete read is an error: {err}");
    let c = &j["check"];
    assert_eq!(c["drift_introduced"], Value::Null, "{c}");
    assert_eq!(c["capacity"], Value::Null, "{c}");
    assert!(
        c["drift_unknown"]
            .as_str()
            .unwrap()
            .contains("the live state is incomplete (pods:"),
        "{c}"
    );
    let g = gates(&j);
    assert!(
        g.iter().all(|(_, failed, unknown, _)| *failed && *unknown),
        "{g:?}"
    );
    assert!(
        c["summary"].as_str().unwrap().contains("drift unknown"),
        "{c}"
    );
}

#[test]
fn a_change_cannot_relax_its_own_check() {
    let r = repo_with_feature_branch();
    // main limits research to 150 GPUs; the feature branch adds 16 research GPUs, raises the
    // limit, accepts the drift it introduces and excludes a directory from rendering.
    r.write(
        ".gpuledger.yaml",
        &format!(
            "{}limits:\n  tenants: {{research: 10}}\n",
            std::fs::read_to_string(r.path().join(".gpuledger.yaml")).unwrap()
        ),
    )
    .commit("limit research");
    r.git(&["checkout", "-q", "feature"]);
    r.git(&["rebase", "-q", "main"]);
    let cfg = std::fs::read_to_string(r.path().join(".gpuledger.yaml")).unwrap();
    r.write(
        ".gpuledger.yaml",
        &cfg.replace("research: 10", "research: 1000")
            .replace("render:\n", "render:\n  exclude: [\"batch/**\"]\n")
            .replace(
                "accepted_drift:\n",
                "accepted_drift:\n- match: {namespace: qwen-ns, name: qwen}\n  reason: trust me\n  owner: '@mallory'\n  expires: 2099-01-01\n",
            ),
    )
    // Retiring qwen leaves it running (its app does not prune): drift the head introduces.
    .write(
            // The app's directory stays (a path that does not exist is an app that does not
            // render, whose GPUs are unknown): it declares no model any more.
            "serving/qwen/graph.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: qwen-retired, namespace: qwen-ns}\n",
        )
    .commit("relax the gates");
    // As in CI, the working tree is the pull request's head.
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
        c["drift_introduced"],
        serde_json::json!(["qwen-ns/DynamoGraphDeployment/qwen"]),
        "the head's accepted-drift rule does not apply to its own check"
    );
    let g = gates(&j);
    assert!(
        g[0].3.contains("tenant research declares") && g[0].3.contains("over its limit of 10"),
        "{g:?}"
    );
    assert!(
        c["added"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["name"] == "new-model"),
        "the head's exclude does not hide its own workloads"
    );
    assert_eq!(c["config"]["applied"], "main:.gpuledger.yaml");
    assert_eq!(
        c["config"]["changes"],
        serde_json::json!([
            "accepts drift on namespace qwen-ns, name qwen, owner @mallory, until 2099-01-01 (trust me)",
            "raises the limit of research 10 → 1000 GPUs",
            "excludes batch/** from rendering"
        ]),
        "{}",
        c["config"]
    );
    assert!(err.contains("using config main:.gpuledger.yaml"), "{err}");
    let out = gpuledger(r.path())
        .args([
            "check", "--repo", ".", "--base", "main", "--head", "feature", "--format", "markdown",
        ])
        .output()
        .unwrap();
    let md = String::from_utf8(out.stdout).unwrap();
    assert!(
        md.contains("### Configuration changes in this pull request"),
        "{md}"
    );
    assert!(
        md.contains("raises the limit of research 10 → 1000 GPUs"),
        "{md}"
    );

    // An explicit --config wins, for base and head alike, and says so.
    let explicit = r.path().join("ci.yaml");
    std::fs::write(&explicit, "limits:\n  tenants: {research: 1000}\n").unwrap();
    let (code, j, err) = check(&r, &["--config", "ci.yaml", "--fail-on", "render-error"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        j["check"]["config"]["applied"],
        "ci.yaml (--config, for base and head; a file of the working tree, so the change under review can edit it)"
    );
    assert_eq!(j["check"]["config"]["changes"], serde_json::json!([]));
    assert!(err.contains("using config ci.yaml (--config"), "{err}");
}

#[test]
fn a_head_configuration_that_does_not_parse_is_a_render_error() {
    let r = repo_with_feature_branch();
    r.git(&["checkout", "-q", "feature"]);
    r.write(".gpuledger.yaml", "limits:\n  tenant: {research: 1}\n")
        .commit("typo");
    r.git(&["checkout", "-q", "main"]);
    let (code, j, err) = check(&r, &["--fail-on", "render-error"]);
    assert_eq!(code, 1, "{err}");
    let e = j["check"]["config"]["head_error"].as_str().unwrap();
    assert!(e.starts_with("feature:.gpuledger.yaml"), "{e}");
    assert!(e.contains("tenant"), "{e}");
}

#[test]
fn a_render_failure_makes_the_delta_unknown_and_fails_by_default() {
    let r = repo_with_feature_branch();
    r.git(&["checkout", "-q", "-b", "typo", "main"]);
    let nightly = std::fs::read_to_string(r.path().join("batch/nightly.yaml")).unwrap();
    r.write(
        "batch/nightly.yaml",
        &format!("{nightly}metadata: {{name: x\n"),
    )
    .commit("a YAML typo");
    r.git(&["checkout", "-q", "main"]);
    let run = |extra: &[&str]| {
        let out = gpuledger(r.path())
            .args(["check", "--repo", ".", "--base", "main", "--head", "typo"])
            .args(extra)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    // render-error is a gate by default.
    let (code, json, err) = run(&["--format", "json"]);
    assert_eq!(code, Some(1), "{err}");
    let j: Value = serde_json::from_str(&json).unwrap();
    let c = &j["check"];
    assert_eq!(c["gpu_delta"], Value::Null, "{c}");
    let why = c["delta_unknown"].as_str().unwrap();
    assert!(
        why.contains("batch failed to render at the head") && why.contains("batch/nightly.yaml:"),
        "{why}"
    );
    // Its workloads are neither removed nor anything else: their fate is unknown.
    assert_eq!(c["removed"], serde_json::json!([]), "{c}");
    assert_eq!(c["added"], serde_json::json!([]), "{c}");
    let (code, md, _) = run(&["--format", "markdown"]);
    assert_eq!(code, Some(1));
    let first = md.lines().find(|l| l.starts_with("**")).unwrap();
    assert!(
        first.starts_with("**GPU delta unknown: Application batch failed to render"),
        "{md}"
    );
    assert!(!md.contains("−20") && !md.contains("-20 GPUs"), "{md}");
    // Opting out.
    let (code, _, err) = run(&["--fail-on", "none"]);
    assert_eq!(code, Some(0), "{err}");
}

#[test]
fn the_capacity_gate_judges_the_change_not_the_fleet() {
    let r = repo_with_feature_branch();
    // The fleet is already over its placeable GPUs at main; this branch frees 16.
    r.git(&["checkout", "-q", "-b", "shrink", "main"]);
    let overlay =
        std::fs::read_to_string(r.path().join("serving/overlays/prod/kustomization.yaml")).unwrap();
    r.write(
        "serving/overlays/prod/kustomization.yaml",
        &overlay.replace("value: 8", "value: 6"),
    )
    .commit("shrink llama decode");
    r.git(&["checkout", "-q", "-b", "readme", "main"]);
    r.write("README.md", "docs only\n").commit("a README");
    r.git(&["checkout", "-q", "main"]);
    let snapshot = fixture("tests/fixtures/drift/cluster.yaml")
        .display()
        .to_string();
    let gate = |head: &str| {
        let out = gpuledger(r.path())
            .args(["check", "--repo", ".", "--base", "main", "--head", head])
            .args([
                "--snapshot",
                &snapshot,
                "--fail-on",
                "capacity",
                "--format",
                "json",
            ])
            .output()
            .unwrap();
        let j: Value = serde_json::from_slice(&out.stdout).unwrap();
        (
            out.status.code(),
            j["check"]["capacity"].clone(),
            j["check"]["gates"][0]["why"].clone(),
        )
    };
    let (code, cap, why) = gate("shrink");
    assert_eq!(code, Some(0), "{why}");
    // Now 101 requested + 16 pending of 112: over by 5; the shrink frees 16 of what llama runs.
    assert_eq!(cap["fits"], true);
    assert_eq!(cap["base_fits"], false);
    assert!(
        why.as_str().unwrap().contains("already over by 5")
            && why.as_str().unwrap().contains("this change frees 16"),
        "{why}"
    );
    let (code, _, why) = gate("readme");
    assert_eq!(code, Some(0), "a change that moves nothing passes: {why}");
    let (code, _, why) = gate("feature");
    assert_eq!(code, Some(1), "a change that makes it worse fails: {why}");
    assert!(why.as_str().unwrap().contains("this change needs"), "{why}");
}

/// Tenancy has one resolution: with the live state, the cluster's Namespace labels (as `inventory`
/// and `drift` resolve them); offline, Git's Namespace objects and the tenancy rules. The live
/// check says in one line where the cluster knows more than Git alone.
#[test]
fn tenants_come_from_the_cluster_when_it_is_read_and_from_git_otherwise() {
    let r = repo_with_feature_branch();
    let snapshot = fixture("tests/fixtures/drift/cluster.yaml");
    let (_, offline, err) = check(&r, &[]);
    assert!(offline["check"]["tenancy"].is_null(), "{err}");
    let (_, live, err) = check(&r, &["--snapshot", snapshot.to_str().unwrap()]);
    let tenant_of = |j: &Value, name: &str| {
        j["check"]["reshaped"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["name"] == name)
            .map(|w| w["tenant"].clone())
    };
    // llm-prod carries `tenant: chat` in the cluster only.
    assert_eq!(
        tenant_of(&offline, "llama"),
        Some("llm-prod".into()),
        "{err}"
    );
    assert_eq!(tenant_of(&live, "llama"), Some("chat".into()), "{err}");
    let names = |j: &Value| -> Vec<String> {
        j["check"]["tenants"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(
        names(&live).contains(&"chat".to_string()),
        "{:?}",
        names(&live)
    );
    assert!(!names(&live).contains(&"llm-prod".to_string()));
    assert!(names(&offline).contains(&"llm-prod".to_string()));
    // The inventory of the same snapshot names the same tenant.
    let inv = gpuledger(r.path())
        .args([
            "inventory",
            "--snapshot",
            snapshot.to_str().unwrap(),
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    let inv: Value = serde_json::from_slice(&inv.stdout).unwrap();
    let llama = inv["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["namespace"] == "llm-prod" && w["name"] == "llama")
        .unwrap();
    assert_eq!(llama["tenant"], "chat");
    assert_eq!(live["check"]["tenant_sources"]["llm-prod"], "cluster");
    assert_eq!(offline["check"]["tenant_sources"]["llm-prod"], "rules");
    let notes = live["check"]["tenancy"].as_array().unwrap();
    assert!(
        notes.iter().any(|n| n["namespace"] == "llm-prod"
            && n["git"] == "llm-prod"
            && n["cluster"] == "chat"),
        "{notes:?}"
    );
    // Said in the human report, in one line.
    let out = gpuledger(r.path())
        .args([
            "check", "--repo", ".", "--base", "main", "--head", "feature",
        ])
        .args([
            "--snapshot",
            snapshot.to_str().unwrap(),
            "--format",
            "markdown",
        ])
        .output()
        .unwrap();
    let md = String::from_utf8_lossy(&out.stdout);
    let line: Vec<&str> = md.lines().filter(|l| l.contains("Tenants: ")).collect();
    assert_eq!(line.len(), 1, "{md}");
    assert!(
        line[0].contains("from the cluster's Namespace labels for"),
        "{md}"
    );
    assert!(
        line[0].contains("llm-prod (chat; Git alone: llm-prod)"),
        "{md}"
    );
    assert!(!md.contains("Declare those Namespaces"), "{md}");
}

/// A workload reshaped by an overlay points at the overlay the change touched, not only at the
/// base manifest that did not change; so does a change in the working tree.
#[test]
fn a_reshaped_workload_points_at_the_overlay_the_change_touched() {
    let r = repo_with_feature_branch();
    let (_, j, err) = check(&r, &[]);
    let reshaped = &j["check"]["reshaped"][0];
    assert_eq!(reshaped["source"], "serving/base/dgd.yaml:4", "{err}");
    assert_eq!(
        reshaped["touched"],
        serde_json::json!(["serving/overlays/prod/kustomization.yaml"])
    );
    assert_eq!(reshaped["change"], "decode replicas 8 → 10, +16 GPUs");
    // The working tree against main: the same file, uncommitted.
    r.git(&["checkout", "-q", "feature"]);
    let out = gpuledger(r.path())
        .args(["check", "--repo", ".", "--base", "main", "--format", "json"])
        .output()
        .unwrap();
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        j["check"]["reshaped"][0]["touched"],
        serde_json::json!(["serving/overlays/prod/kustomization.yaml"])
    );
}

/// The units `gpuledger check` ran a renderer for (its debug log), with their report.
fn check_renders(r: &Repo, head: &str) -> (Value, Vec<String>) {
    let venv = std::env::var("GPULEDGER_VENV")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|_| super::support::root().join(".venv"));
    let path = format!(
        "{}:{}",
        venv.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = gpuledger(r.path())
        .args(["check", "--repo", ".", "--base", "main", "--head", head])
        .args(["--now", "2026-11-30", "--format", "json"])
        .env(
            "GPULEDGER_HELM",
            super::support::root().join("tests/support/helm"),
        )
        .env("GPULEDGER_LOG", "gpuledger::desired=debug")
        .env_remove("GPULEDGER_KUSTOMIZE")
        .env("PATH", path)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {err}"));
    let mut rendered: Vec<String> = err
        .lines()
        .filter(|l| l.contains("rendered"))
        .filter_map(|l| l.split_once("unit=").map(|(_, u)| u.to_string()))
        .collect();
    rendered.sort();
    (json, rendered)
}

/// The render cache: base and head share it, so a no-change check renders each kustomize and helm
/// unit once, and a change to one app renders that app at base and at head, nothing else twice.
#[test]
fn a_check_renders_what_the_change_touched_twice_and_the_rest_once() {
    let r = Repo::new();
    let deploy = |name: &str, gpus: u32| {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}}}\nspec:\n  replicas: 1\n  template:\n    spec:\n      containers: [{{name: main, resources: {{limits: {{nvidia.com/gpu: \"{gpus}\"}}}}}}]\n"
        )
    };
    for app in ["a", "b", "c"] {
        r.write(
            &format!("apps/{app}/kustomization.yaml"),
            "resources: [deploy.yaml, ../../base]\nnamespace: team\nnamePrefix: x-\n",
        )
        .write(&format!("apps/{app}/deploy.yaml"), &deploy(app, 1));
    }
    r.write("base/kustomization.yaml", "resources: [svc.yaml]\n")
        .write(
            "base/svc.yaml",
            "apiVersion: v1\nkind: Service\nmetadata: {name: svc}\nspec: {ports: [{port: 80}]}\n",
        )
        .write(
            "charts/m/Chart.yaml",
            "apiVersion: v2\nname: m\nversion: 0.1.0\n",
        )
        .write("charts/m/values.yaml", "gpus: 2\n")
        .write(
            "charts/m/templates/d.yaml",
            &deploy("m", 2).replace("\"2\"", "{{ .Values.gpus | quote }}"),
        )
        .commit("apps");
    r.git(&["branch", "same"]);
    r.git(&["checkout", "-q", "-b", "one"]);
    r.write("apps/b/deploy.yaml", &deploy("b", 4))
        .commit("b takes 4");
    r.git(&["checkout", "-q", "main"]);

    let units = [
        "kustomize/apps/a (kustomize apps/a)",
        "kustomize/apps/b (kustomize apps/b)",
        "kustomize/apps/c (kustomize apps/c)",
        "helm/charts/m (helm charts/m)",
    ];
    let mut once: Vec<String> = units.iter().map(|s| s.to_string()).collect();
    once.sort();
    let (j, rendered) = check_renders(&r, "same");
    assert_eq!(j["check"]["gpu_delta"].as_i64(), Some(0), "{j}");
    assert_eq!(rendered, once, "a no-change check renders each unit once");

    let (j, rendered) = check_renders(&r, "one");
    assert_eq!(j["check"]["gpu_delta"].as_i64(), Some(3), "{j}");
    let mut twice = once.clone();
    twice.push(units[1].to_string());
    twice.sort();
    assert_eq!(rendered, twice, "only the changed app renders at both refs");
}

/// Drift introduced is drift that remains once the head syncs: a workload the change adds is
/// missing only until then, never drift; a live workload the head stops declaring stays — and is
/// drift — unless its app prunes it.
#[test]
fn a_workload_the_head_stops_declaring_is_drift_unless_its_app_prunes() {
    let snapshot = fixture("tests/fixtures/drift/cluster.yaml")
        .display()
        .to_string();
    let introduced = |prune: bool| {
        let r = Repo::new();
        copy_dir(&fixture("tests/fixtures/drift/repo"), r.path());
        if prune {
            let apps = std::fs::read_to_string(r.path().join("argocd/apps.yaml")).unwrap();
            r.write(
                "argocd/apps.yaml",
                &apps.replace(
                    "path: serving/qwen}\n",
                    "path: serving/qwen}\n  syncPolicy: {automated: {prune: true}}\n",
                ),
            );
        }
        r.commit("gitops");
        r.git(&["checkout", "-q", "-b", "feature"]);
        r.write(
            // The app's directory stays (a path that does not exist is an app that does not
            // render, whose GPUs are unknown): it declares no model any more.
            "serving/qwen/graph.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: qwen-retired, namespace: qwen-ns}\n",
        )
            .write(
                "batch/new-model.yaml",
                "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: new-model, namespace: research}\nspec:\n  replicas: 1\n  template:\n    spec:\n      containers: [{name: main, resources: {limits: {nvidia.com/gpu: \"8\"}}}]\n",
            )
            .commit("retire qwen, add a model");
        let (code, j, err) = check(
            &r,
            &["--snapshot", &snapshot, "--fail-on", "drift-introduced"],
        );
        (code, j["check"]["drift_introduced"].clone(), err)
    };
    let (code, without, err) = introduced(false);
    assert_eq!(
        without,
        serde_json::json!(["qwen-ns/DynamoGraphDeployment/qwen"]),
        "the added model is the change; qwen keeps running: {err}"
    );
    assert_eq!(code, 1, "{err}");
    let (code, with, err) = introduced(true);
    assert_eq!(with, serde_json::json!([]), "the sync deletes qwen: {err}");
    assert_eq!(code, 0, "{err}");
}

/// A gate that is not enabled is a note: the comment never says "does NOT fit" in bold while the
/// check passes.
#[test]
fn capacity_over_without_the_gate_is_a_note_not_a_verdict() {
    let r = repo_with_feature_branch();
    let snapshot = fixture("tests/fixtures/drift/cluster.yaml")
        .display()
        .to_string();
    let out = gpuledger(r.path())
        .args([
            "check", "--repo", ".", "--base", "main", "--head", "feature",
        ])
        .args([
            "--now",
            "2026-11-30",
            "--format",
            "markdown",
            "--snapshot",
            &snapshot,
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(!md.contains("does NOT fit"), "{md}");
    assert!(!md.contains("**does not fit"), "{md}");
    assert!(md.contains("the capacity gate is not enabled"), "{md}");
    let gated = gpuledger(r.path())
        .args([
            "check", "--repo", ".", "--base", "main", "--head", "feature",
        ])
        .args([
            "--now",
            "2026-11-30",
            "--format",
            "markdown",
            "--snapshot",
            &snapshot,
        ])
        .args(["--fail-on", "capacity"])
        .output()
        .unwrap();
    assert_eq!(gated.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&gated.stdout).contains("does NOT fit"));
}

/// An app that renders on neither side (its source is another repository) and that the change
/// leaves alone: the delta is known (0), but the totals are floors, and the opening sentence says
/// so instead of "Keeps the declared GPUs at 2 (2 → 2)".
#[test]
fn the_opening_sentence_never_states_a_total_it_does_not_know() {
    let app = |name: &str, url: &str, path: &str| {
        format!(
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {{name: {name}, namespace: argocd}}\nspec:\n  destination: {{server: https://kubernetes.default.svc, namespace: ml}}\n  source: {{repoURL: {url}, path: {path}}}\n"
        )
    };
    let ours = "https://github.com/acme/gitops.git";
    let r = Repo::new();
    r.write("apps/llm.yaml", &app("llm", ours, "llm"))
        .write("apps/team.yaml", &app("team", "https://github.com/acme/team-models.git", "models"))
        .write(
            "llm/deploy.yaml",
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: llm, namespace: ml}\nspec:\n  replicas: 1\n  template:\n    spec:\n      containers: [{name: m, resources: {limits: {nvidia.com/gpu: \"2\"}}}]\n",
        )
        .commit("apps");
    r.git(&["checkout", "-q", "-b", "feature"]);
    r.write("llm/README.md", "the chat model\n")
        .commit("docs only");
    r.git(&["checkout", "-q", "main"]);
    let (_, j, err) = check(&r, &["--repo-url", ours]);
    let c = &j["check"];
    assert_eq!(c["gpu_delta"], 0, "{err}");
    assert_eq!(
        (
            c["gpus_base_floor"].as_bool(),
            c["gpus_head_floor"].as_bool()
        ),
        (Some(true), Some(true))
    );
    let out = gpuledger(r.path())
        .args([
            "check",
            "--repo",
            ".",
            "--base",
            "main",
            "--head",
            "feature",
            "--repo-url",
            ours,
        ])
        .args(["--format", "markdown"])
        .output()
        .unwrap();
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(
        md.contains("Changes no declared GPU of what rendered (≥2 → ≥2: an app it leaves alone did not render)"),
        "{md}"
    );
    assert!(!md.contains("Keeps the declared GPUs at 2"), "{md}");
}
