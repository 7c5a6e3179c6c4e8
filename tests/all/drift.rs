//! `gpuledger drift` end to end: a git repository of Argo CD apps (kustomize overlay, directory,
//! autoscaled graph, batch) against a live snapshot with every drift category.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use super::support::{Repo, fixture, gpuledger};

pub(crate) fn repo() -> Repo {
    let r = Repo::new();
    copy_dir(&fixture("tests/fixtures/drift/repo"), r.path());
    // At a fixed time: the report names the commit, and the snapshot must not change with it.
    r.commit_at("gitops", "2026-11-30T09:00:00Z");
    r
}

pub(crate) fn copy_dir(from: &Path, to: &Path) {
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

fn drift(r: &Repo, extra: &[&str]) -> (i32, String, String) {
    drift_at(r, "2026-11-30", extra)
}

fn drift_at(r: &Repo, now: &str, extra: &[&str]) -> (i32, String, String) {
    let snapshot = fixture("tests/fixtures/drift/cluster.yaml");
    let out = gpuledger(r.path())
        .args(["drift", "--repo", ".", "--now", now, "--snapshot"])
        .arg(&snapshot)
        .args(extra)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn categories(d: &Value) -> BTreeMap<String, (String, u64, u64)> {
    let mut m = BTreeMap::new();
    for cat in ["unmanaged", "missing", "changed", "in_sync", "accepted"] {
        for r in d[cat].as_array().unwrap() {
            let id = format!(
                "{}/{}/{}",
                r["namespace"].as_str().unwrap(),
                r["kind"].as_str().unwrap(),
                r["name"].as_str().unwrap()
            );
            let prev = m.insert(
                id.clone(),
                (
                    cat.to_string(),
                    r["gpus"].as_u64().unwrap(),
                    r["gpus_git"].as_u64().unwrap(),
                ),
            );
            assert!(prev.is_none(), "{id} is in two categories");
        }
    }
    m
}

#[test]
fn every_category_with_exact_figures() {
    let r = repo();
    let (code, out, err) = drift(&r, &["--format", "json"]);
    assert_eq!(code, 1, "unaccepted drift exits 1: {err}");
    let report: Value = serde_json::from_str(&out).unwrap();
    let d = &report["drift"];
    let want: BTreeMap<String, (String, u64, u64)> = [
        ("llm-prod/DynamoGraphDeployment/llama", "changed", 64, 96),
        ("qwen-ns/DynamoGraphDeployment/qwen", "in_sync", 16, 16),
        ("auto-ns/DynamoGraphDeployment/auto", "in_sync", 5, 2),
        ("batch/CronJob/nightly", "in_sync", 4, 4),
        ("batch/Job/train-big", "in_sync", 0, 16),
        ("research/Deployment/rogue-finetune", "unmanaged", 8, 0),
        ("llm-prod/Deployment/copied", "unmanaged", 1, 0),
        ("scratch/Pod/debug-shell", "unmanaged", 1, 0),
        ("loadtest/Pod/loadtest-1", "accepted", 2, 0),
        ("parked/Deployment/parked-model", "missing", 0, 16),
    ]
    .into_iter()
    .map(|(k, c, g, gg)| (k.to_string(), (c.to_string(), g, gg)))
    .collect();
    assert_eq!(categories(d), want);

    // Coverage: matched GPUs (64 + 16 + 5 + 4 + 0) of the 101 requested.
    let coverage = d["coverage"].as_f64().unwrap();
    assert!((coverage - 89.0 / 101.0).abs() < 1e-9, "{coverage}");
    assert!(d["summary"].as_str().unwrap().starts_with("GitOps covers 88% of requested GPUs; 3 unmanaged workloads hold 10 GPUs; 1 missing; 1 changed"));
    // Live GPUs of every category add up to the fleet's requested GPUs.
    let live_sum: u64 = categories(d).values().map(|(_, g, _)| g).sum();
    assert_eq!(
        live_sum,
        report["fleet"]["gpus"]["requested"].as_u64().unwrap()
    );

    let row = |cat: &str, name: &str| {
        d[cat]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name)
            .unwrap()
            .clone()
    };
    // The kustomize overlay's replicas against the live graph, with both shapes and a diff.
    let llama = row("changed", "llama");
    assert_eq!(llama["git_shape"], "decode 8×8 + prefill 4×8 = 96");
    assert_eq!(llama["live_shape"], "decode 4×8 + prefill 4×8 = 64");
    assert!(
        llama["diff"]
            .as_str()
            .unwrap()
            .contains("-    replicas: 8\n+    replicas: 4"),
        "{}",
        llama["diff"]
    );
    assert_eq!(llama["tracked_by"], "argocd:llama");
    assert_eq!(llama["git_source"], "serving/base/dgd.yaml:4");
    // A copied tracking annotation that names another object is ignored.
    assert_eq!(row("unmanaged", "copied")["tracked_by"], Value::Null);
    // Autoscaled replicas are not drift.
    assert_eq!(row("in_sync", "auto")["autoscaled"], true);
    // Accepted and expired rules.
    let accepted = row("accepted", "loadtest-1");
    assert_eq!(accepted["accepted_as"], "unmanaged");
    assert_eq!(accepted["rule"]["owner"], "@perf-team");
    assert_eq!(
        d["expired"],
        serde_json::json!([{"rule": "research/*/rogue-*", "reason": "fine-tuning experiment", "owner": "@research", "expired": "2026-01-01", "would_match": ["research/Deployment/rogue-finetune"]}])
    );

    // --no-fail keeps the report and exits 0; after the accepted rule expires, load tests are drift.
    assert_eq!(drift(&r, &["--no-fail"]).0, 0);
    let (_, out, _) = drift_at(&r, "2027-01-01", &["--format", "json"]);
    let later: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        categories(&later["drift"])["loadtest/Pod/loadtest-1"].0,
        "unmanaged"
    );
}

#[test]
fn suggested_rules_accept_todays_drift() {
    let r = repo();
    let (code, rules, err) = drift(&r, &["--suggest-accept"]);
    assert_eq!(code, 0, "{err}");
    assert!(rules.contains("expires: 2026-12-30"), "{rules}");
    // Never an empty owner: the tenant until a person is named.
    assert!(!rules.contains("owner: \"\""), "{rules}");
    assert!(rules.contains("owner: \"research\""), "{rules}");
    // Append the suggestion to the config, as a user would after editing it: no drift is left.
    let cfg = std::fs::read_to_string(r.path().join(".gpuledger.yaml")).unwrap();
    let existing = cfg.split("accepted_drift:\n").nth(1).unwrap();
    let suggested = rules.split("accepted_drift:\n").nth(1).unwrap();
    let merged = format!(
        "{}accepted_drift:\n{existing}{suggested}",
        cfg.split("accepted_drift:\n").next().unwrap()
    );
    r.write(".gpuledger.yaml", &merged);
    let (code, out, err) = drift(&r, &["--format", "json"]);
    assert_eq!(code, 0, "{err}\n{merged}");
    let d: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(d["drift"]["accepted"].as_array().unwrap().len(), 6);
}

#[test]
fn markdown_snapshot() {
    let r = repo();
    let (_, md, _) = drift(&r, &["--format", "markdown"]);
    assert_eq!(
        md.matches("<details>").count(),
        md.matches("</details>").count()
    );
    assert_eq!(md.matches("```").count() % 2, 0);
    insta::assert_snapshot!("drift_markdown", md);
}

#[test]
fn inventory_with_a_repository_holds_drift_too() {
    let r = repo();
    let out = gpuledger(r.path())
        .args([
            "inventory",
            "--repo",
            ".",
            "--now",
            "2026-11-30",
            "--format",
            "json",
            "--snapshot",
        ])
        .arg(fixture("tests/fixtures/drift/cluster.yaml"))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["drift"]["changed"][0]["name"], "llama");
    assert_eq!(report["tenants"][0]["name"], "chat");
}

#[test]
fn a_repository_in_which_nothing_renders_is_an_error_not_all_unmanaged() {
    let r = Repo::new();
    r.write("README.md", "docs\n")
        .write("docs/values.yaml", "a: 1\n")
        .commit("no manifests");
    let snapshot = fixture("tests/fixtures/drift/cluster.yaml");
    for args in [
        vec!["render", "--repo", "."],
        vec![
            "drift",
            "--repo",
            ".",
            "--snapshot",
            snapshot.to_str().unwrap(),
        ],
        vec![
            "drift",
            "--repo",
            ".",
            "--ref",
            "main",
            "--snapshot",
            snapshot.to_str().unwrap(),
        ],
    ] {
        let out = gpuledger(r.path()).args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("nothing to render in"), "{args:?}: {err}");
        assert!(
            !String::from_utf8_lossy(&out.stdout).contains("unmanaged"),
            "{args:?}: no drift report"
        );
    }
}

/// An app that fails to render leaves the live workloads it applied unknown, not unmanaged: the
/// live graph tracked by `argocd:llama` is listed under unknown with that app, and drift exits 2.
#[test]
fn a_live_workload_of_an_app_that_failed_to_render_is_unknown_not_unmanaged() {
    let r = repo();
    r.write(
        "serving/base/dgd.yaml",
        "apiVersion: nvidia.com/v1alpha1\nkind: [broken\n",
    )
    .commit("break the llama app");
    let (code, out, err) = drift(&r, &["--format", "json"]);
    assert_eq!(code, 2, "{err}");
    let d = &serde_json::from_str::<Value>(&out).unwrap()["drift"];
    let ids = |cat: &str| -> Vec<String> {
        d[cat]
            .as_array()
            .map(|v| {
                v.iter()
                    .map(|r| {
                        format!(
                            "{}/{}",
                            r["namespace"].as_str().unwrap(),
                            r["name"].as_str().unwrap()
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    assert_eq!(ids("unknown"), ["llm-prod/llama"], "{d}");
    assert_eq!(d["unknown"][0]["app"], "argocd:llama");
    assert!(
        !ids("unmanaged").contains(&"llm-prod/llama".to_string()),
        "{d}"
    );
    assert!(
        d["summary"]
            .as_str()
            .unwrap()
            .contains("1 unknown (applied by an app that failed to render)"),
        "{d}"
    );
    let (_, md, _) = drift(&r, &["--format", "markdown"]);
    assert!(
        md.contains("### Unknown: applied by an app that failed to render (1)"),
        "{md}"
    );
}
