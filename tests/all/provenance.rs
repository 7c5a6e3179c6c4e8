//! What, where and when: a snapshot carries the context, server and read time it was taken at; every
//! report says its scope, the commits it compares and how old its live state is, flags a stale
//! snapshot, says when the read time is unknown, and never calls a GitHub checkout "working tree".

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use super::check::repo_with_feature_branch;
use super::kube_emulator::{Emulator, EmulatorOptions};
use super::support::{Repo, fixture, gpuledger, root};

fn out(o: &Output) -> (i32, String, String) {
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn inventory(snapshot: &Path, format: &str, extra: &[&str]) -> String {
    let o = gpuledger(&root())
        .args(["inventory", "--format", format, "--snapshot"])
        .arg(snapshot)
        .args(extra)
        .output()
        .unwrap();
    let (code, stdout, stderr) = out(&o);
    assert_eq!(code, 0, "{stderr}");
    stdout
}

/// A one-node snapshot as `gpuledger snapshot` writes it, read at `read_at`.
fn old_snapshot(dir: &Path, read_at: &str) -> std::path::PathBuf {
    let p = dir.join("fleet.json");
    std::fs::write(
        &p,
        format!(
            r#"{{"apiVersion": "v1", "kind": "List", "metadata": {{"annotations": {{"gpuledger.io/context": "gpu-east", "gpuledger.io/server": "https://10.0.0.1:6443", "gpuledger.io/read-at": "{read_at}", "gpuledger.io/version": "0.1.0", "gpuledger.io/resources": "nodes,pods,services,ingresses.networking.k8s.io"}}}}, "items": [
{{"apiVersion": "v1", "kind": "Node", "metadata": {{"name": "n1"}}, "status": {{"capacity": {{"nvidia.com/gpu": "8"}}, "allocatable": {{"nvidia.com/gpu": "8"}}, "conditions": [{{"type": "Ready", "status": "True"}}]}}}}
]}}
"#
        ),
    )
    .unwrap();
    p
}

#[test]
fn a_snapshot_says_where_and_when_it_was_read_and_reports_repeat_it() {
    let emu = Emulator::start(EmulatorOptions {
        snapshots: vec![fixture("tests/fixtures/drift/cluster.yaml")],
        ..EmulatorOptions::default()
    });
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("fleet.json");
    let o = gpuledger(&root())
        .args(["snapshot", "--kubeconfig"])
        .arg(emu.kubeconfig_path())
        .arg("-o")
        .arg(&file)
        .output()
        .unwrap();
    let (code, _, stderr) = out(&o);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("(read at 20"), "{stderr}");

    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        !text.contains("emulator-token"),
        "a credential in the snapshot"
    );
    let list: Value = serde_json::from_str(&text).unwrap();
    let a = &list["metadata"]["annotations"];
    assert_eq!(a["gpuledger.io/context"], "emulator");
    assert_eq!(a["gpuledger.io/server"], emu.url().trim_end_matches('/'));
    assert_eq!(a["gpuledger.io/version"], env!("CARGO_PKG_VERSION"));
    let read_at = a["gpuledger.io/read-at"].as_str().unwrap().to_string();
    assert!(read_at.ends_with('Z') && read_at.len() == 20, "{read_at}");

    // Real kubectl still reads the file back (it ignores a list's metadata).
    let k = std::process::Command::new("kubectl")
        .args([
            "create",
            "--dry-run=client",
            "-o",
            "name",
            "--validate=false",
            "-f",
        ])
        .arg(&file)
        .arg("--kubeconfig")
        .arg(emu.kubeconfig_path())
        .output()
        .expect("kubectl is installed on the test image");
    let (code, names, stderr) = out(&k);
    assert_eq!(code, 0, "kubectl refused the snapshot: {stderr}");
    assert!(names.contains("node/"), "{names}");

    // The report repeats them: JSON …
    let report: Value = serde_json::from_str(&inventory(&file, "json", &[])).unwrap();
    let p = &report["provenance"];
    assert_eq!(p["scope"], "emulator");
    let live = &p["live"][0];
    assert_eq!(live["source"], "snapshot");
    assert_eq!(live["context"], "emulator");
    assert_eq!(live["server"], a["gpuledger.io/server"]);
    assert_eq!(live["read_at"], read_at.as_str());
    assert_eq!(live["stale"], false);
    assert_eq!(live["stale_after"], "24h");
    // … and the table, under a title that names the cluster.
    let table = inventory(&file, "table", &[]);
    let mut lines = table.lines();
    assert_eq!(
        lines.next(),
        Some("GPU fleet inventory · emulator"),
        "{table}"
    );
    // The headline, then where and when.
    assert!(
        lines.next().unwrap().contains("GPUs requested of"),
        "{table}"
    );
    let line = lines.find(|l| !l.is_empty()).unwrap();
    assert!(
        line.starts_with("Cluster emulator · live state read ")
            && line.ends_with("from snapshot fleet.json"),
        "{table}"
    );
}

#[test]
fn a_stale_snapshot_is_flagged_under_the_title() {
    let tmp = tempfile::tempdir().unwrap();
    let file = old_snapshot(tmp.path(), "2026-11-29T06:00:00Z");
    let now = ["--now", "2026-12-02T06:00:00Z"];
    let table = inventory(&file, "table", &now);
    let lines: Vec<&str> = table.lines().take(4).collect();
    assert_eq!(lines[0], "GPU fleet inventory · gpu-east", "{table}");
    assert_eq!(lines[1], "WARNING:", "{table}");
    assert!(
        lines[2].contains(
            "Live state read 3 days ago (2026-11-29 06:00 UTC) from snapshot fleet.json of gpu-east — stale past 24h"
        ),
        "{table}"
    );
    assert!(
        table.contains("live state read 2026-11-29 06:00 UTC (3 days before this report)"),
        "{table}"
    );
    let report: Value = serde_json::from_str(&inventory(&file, "json", &now)).unwrap();
    let live = &report["provenance"]["live"][0];
    assert_eq!(
        (live["stale"].clone(), live["age_seconds"].clone()),
        (Value::Bool(true), Value::from(259_200))
    );
    assert_eq!(report["provenance"]["reported_at"], "2026-12-02T06:00:00Z");

    // The threshold is the config's; the markdown says the same.
    let cfg = tmp.path().join("cfg.yaml");
    std::fs::write(&cfg, "snapshot:\n  stale_after: 4d\n").unwrap();
    let cfg = cfg.display().to_string();
    let relaxed = inventory(
        &file,
        "markdown",
        &["--now", "2026-12-02T06:00:00Z", "--config", &cfg],
    );
    assert!(!relaxed.contains("stale past"), "{relaxed}");
    let strict = inventory(&file, "markdown", &now);
    assert!(strict.contains("stale past 24h"), "{strict}");
    // A date is its midnight: 2 days and 18 hours after the read.
    let by_date = inventory(&file, "table", &["--now", "2026-12-02"]);
    assert!(by_date.contains("(2 days before this report)"), "{by_date}");
}

#[test]
fn a_kubectl_dump_says_its_read_time_is_unknown() {
    let file = fixture("tests/fixtures/drift/cluster.yaml");
    let report: Value = serde_json::from_str(&inventory(&file, "json", &[])).unwrap();
    let live = &report["provenance"]["live"][0];
    assert_eq!(live["read_at"], Value::Null);
    assert_eq!(live["age_seconds"], Value::Null);
    assert_eq!(
        live["read_at_unknown"],
        "a kubectl dump carries no read time"
    );
    let table = inventory(&file, "table", &[]);
    assert!(
        table.contains("Live state from snapshot cluster.yaml, read time unknown (a kubectl dump carries no read time)"),
        "{table}"
    );
}

/// The `pull_request` event of `main` → `feature`.
fn event(dir: &Path, r: &Repo) -> std::path::PathBuf {
    let text = std::fs::read_to_string(fixture("tests/fixtures/github/pull_request.json"))
        .unwrap()
        .replace("HEAD_SHA", r.git(&["rev-parse", "feature"]).trim())
        .replace("BASE_SHA", r.git(&["rev-parse", "main"]).trim())
        .replace("HEAD_REPO", "acme/gitops")
        .replace("HEAD_LABEL", "acme:feature")
        .replace("HEAD_FORK", "false");
    let p = dir.join("event.json");
    std::fs::write(&p, text).unwrap();
    p
}

/// `check` as a workflow step runs it on a pull_request event: no --base, the checkout as it is.
fn check_in_actions(r: &Repo, event: &Path, format: &str) -> String {
    let o = gpuledger(r.path())
        .args(["check", "--repo", ".", "--format", format, "--snapshot"])
        .arg(fixture("tests/fixtures/drift/cluster.yaml"))
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_EVENT_NAME", "pull_request")
        .env("GITHUB_EVENT_PATH", event)
        .output()
        .unwrap();
    let (code, stdout, stderr) = out(&o);
    assert!(code == 0 || code == 1, "{stderr}");
    stdout
}

fn short(r: &Repo, rev: &str) -> String {
    r.git(&["rev-parse", "--short=7", rev]).trim().to_string()
}

#[test]
fn check_on_a_pull_request_names_both_commits_never_the_working_tree() {
    let r = repo_with_feature_branch();
    let tmp = tempfile::tempdir().unwrap();
    let ev = event(tmp.path(), &r);
    let (base, head) = (short(&r, "main"), short(&r, "feature"));
    let subject = "scale llama, park nothing, adopt the fine-tune, add a model";

    // The checkout is the pull request's head.
    r.git(&["checkout", "-q", "--detach", "feature"]);
    let table = check_in_actions(&r, &ev, "table");
    assert!(!table.contains("working tree"), "{table}");
    let want = format!("Base {base} \"gitops\" → head {head} \"{subject}\"");
    assert!(table.contains(&want), "{want}\n{table}");
    let md = check_in_actions(&r, &ev, "markdown");
    assert!(!md.contains("working tree"), "{md}");
    let json: Value = serde_json::from_str(&check_in_actions(&r, &ev, "json")).unwrap();
    let git = &json["provenance"]["git"];
    assert_eq!(git[0]["side"], "base");
    assert_eq!(git[0]["commit"], base.as_str());
    assert_eq!(git[0]["subject"], "gitops");
    assert_eq!(git[1]["commit"], head.as_str());
    assert_eq!(git[1]["subject"], subject);
    assert_eq!(json["check"]["head_at"], format!("{head} \"{subject}\""));

    // actions/checkout's default: the merge of the head into the base.
    r.git(&["checkout", "-q", "--detach", "main"]);
    r.git(&[
        "merge",
        "-q",
        "--no-ff",
        "-m",
        "Merge feature into main",
        "feature",
    ]);
    let table = check_in_actions(&r, &ev, "table");
    assert!(!table.contains("working tree"), "{table}");
    let want = format!("→ head merge of {head} \"{subject}\" into {base}");
    assert!(table.contains(&want), "{want}\n{table}");

    // Outside Actions, a local working tree says so, and on which commit.
    let o = gpuledger(r.path())
        .args([
            "check", "--repo", ".", "--base", "main", "--format", "table",
        ])
        .output()
        .unwrap();
    let (_, table, stderr) = out(&o);
    let merge = short(&r, "HEAD");
    assert!(
        table.contains(&format!(
            "→ head working tree on top of {merge} \"Merge feature into main\""
        )),
        "{table}\n{stderr}"
    );
    assert!(
        table.contains(&format!("Base main ({base} \"gitops\")")),
        "{table}"
    );
}
