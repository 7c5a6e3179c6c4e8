//! What was read decides what is known: a dump's kinds are what was read. A `kubectl get pods`
//! dump has no Node, so capacity and the shortage diagnosis are unknown (never 0, never "capacity
//! problem"); a dump without a Service, Ingress, Gateway or HTTPRoute has no known public routes;
//! with pods forbidden every per-tenant figure built on pods is unknown, as the header is; and a
//! snapshot gpuledger writes records the resources it listed, so a partial one is told from a
//! complete one.

use std::path::Path;

use serde_json::Value;

use super::kube_emulator::{Emulator, EmulatorOptions, read_snapshot};
use super::support::{fixture, gpuledger, root};

const DEMO: &str = "fixtures/demo/cluster.yaml";
const CFG: [&str; 2] = ["--config", "fixtures/demo/.gpuledger.yaml"];

/// The demo's objects, as the emulator reads them.
fn demo_items() -> Vec<Value> {
    read_snapshot(&fixture(DEMO)).unwrap()
}

/// A plain kubectl dump (`kind: List`, no gpuledger metadata) of the demo's objects of `kinds`
/// (or of every kind but `kinds` when `except`).
fn dump(dir: &Path, name: &str, kinds: &[&str], except: bool) -> std::path::PathBuf {
    let items: Vec<Value> = demo_items()
        .into_iter()
        .filter(|i| kinds.contains(&i["kind"].as_str().unwrap_or("")) != except)
        .collect();
    let path = dir.join(name);
    let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items});
    std::fs::write(&path, serde_json::to_vec(&list).unwrap()).unwrap();
    path
}

/// `inventory` of `file` in `format`: exit code, stdout, stderr.
fn inventory(file: &Path, format: &str) -> (i32, String, String) {
    let out = gpuledger(&root())
        .args(["inventory", "--format", format, "--snapshot"])
        .arg(file)
        .args(CFG)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn json_of(file: &Path) -> (i32, Value) {
    let (code, out, err) = inventory(file, "json");
    (
        code,
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}{err}")),
    )
}

#[test]
fn a_pods_only_dump_leaves_capacity_and_the_diagnosis_unknown() {
    let dir = tempfile::tempdir().unwrap();
    let (_, whole) = json_of(&fixture(DEMO));
    let pods = dump(dir.path(), "pods.json", &["Pod"], false);
    let (code, r) = json_of(&pods);
    // The pods were read, and count as they do in the whole dump.
    assert_eq!(
        r["fleet"]["gpus"]["requested"],
        whole["fleet"]["gpus"]["requested"]
    );
    assert_eq!(
        r["fleet"]["gpus"]["pending"],
        whole["fleet"]["gpus"]["pending"]
    );
    // The nodes were not: what needs them is null with why, and the report is incomplete.
    assert_eq!(code, 2, "{r}");
    assert_eq!(r["complete"], false);
    assert_eq!(r["incomplete"][0]["resource"], "nodes");
    for f in ["capacity", "allocatable", "placeable"] {
        assert_eq!(r["fleet"]["gpus"][f], Value::Null, "{f}");
        let why = r["fleet"]["unknown"][format!("gpus.{f}")].as_str().unwrap();
        assert!(why.contains("no Node"), "{why}");
    }
    assert_eq!(r["fleet"]["gpu_nodes"], Value::Null);
    assert_eq!(r["fleet"]["utilisation"], Value::Null);
    assert_eq!(r["fleet"]["shortage"]["kind"], "unknown");
    assert_eq!(r["fleet"]["shortage"]["free_placeable"], Value::Null);
    // A person reads the same: no zero placeable, no capacity or placement verdict.
    for format in ["table", "markdown"] {
        let (_, text, _) = inventory(&pods, format);
        let text = text.replace("**", "");
        assert!(text.contains("INCOMPLETE"), "{format}: {text}");
        assert!(text.contains("of unknown placeable"), "{format}: {text}");
        for wrong in [
            "Capacity problem",
            "Placement problem",
            "0 placeable",
            "on 0 GPU",
        ] {
            assert!(!text.contains(wrong), "{format} says {wrong:?}: {text}");
        }
    }
    // The exporter has no sample for what is unknown, and says it is.
    let (_, prom, _) = inventory(&pods, "prometheus");
    assert!(
        !prom.contains("gpuledger_fleet_gpus{tier=\"placeable\"}"),
        "{prom}"
    );
    assert!(
        prom.contains("gpuledger_unknown{field=\"fleet.gpus.placeable\"} 1"),
        "{prom}"
    );
}

#[test]
fn a_dump_without_pods_leaves_every_figure_built_on_pods_unknown() {
    let dir = tempfile::tempdir().unwrap();
    let (_, whole) = json_of(&fixture(DEMO));
    let (code, r) = json_of(&dump(dir.path(), "no-pods.json", &["Pod"], true));
    assert_eq!(code, 2);
    assert_eq!(r["incomplete"][0]["resource"], "pods");
    // Nodes were read.
    assert_eq!(
        r["fleet"]["gpus"]["placeable"],
        whole["fleet"]["gpus"]["placeable"]
    );
    assert_eq!(r["fleet"]["gpus"]["requested"], Value::Null);
    assert_eq!(r["fleet"]["shortage"]["kind"], "unknown");
    // Every row agrees with the header: null, and the report's root says why.
    for t in r["tenants"].as_array().unwrap() {
        assert_eq!(t["gpus_requested"], Value::Null, "{t}");
        assert_eq!(t["share"], Value::Null, "{t}");
    }
    for w in r["workloads"].as_array().unwrap() {
        assert_eq!(w["gpus"], Value::Null, "{w}");
    }
    assert!(
        r["unknown"]["tenants.gpus_requested"]
            .as_str()
            .unwrap()
            .contains("no Pod")
    );
    let (_, text, _) = inventory(&dump(dir.path(), "no-pods.json", &["Pod"], true), "table");
    let tenants = text.split("Tenants").nth(1).unwrap();
    let first_row = tenants.lines().nth(3).unwrap();
    assert!(first_row.contains("unknown"), "{first_row}");
}

#[test]
fn a_dump_without_routes_has_unknown_public_routes() {
    let dir = tempfile::tempdir().unwrap();
    let (_, whole) = json_of(&fixture(DEMO));
    assert!(whole["fleet"]["public_routes"].as_u64().unwrap() > 0);
    let file = dump(
        dir.path(),
        "no-routes.json",
        &["Service", "Ingress", "Gateway", "HTTPRoute"],
        true,
    );
    let (code, r) = json_of(&file);
    // Routes are not a headline figure: the GPUs are whole and the run is clean.
    assert_eq!(code, 0);
    assert_eq!(r["fleet"]["gpus"], whole["fleet"]["gpus"]);
    assert_eq!(r["fleet"]["public_routes"], Value::Null);
    assert!(
        r["fleet"]["unknown"]["public_routes"]
            .as_str()
            .unwrap()
            .contains("no Service")
    );
    assert_eq!(r["routes"], Value::Null);
    for t in r["tenants"].as_array().unwrap() {
        assert_eq!(t["public_routes"], Value::Null, "{t}");
    }
    let (_, text, _) = inventory(&file, "table");
    assert!(text.contains("unknown public routes"), "{text}");
    assert!(!text.contains(" 0 public routes"), "{text}");
}

#[test]
fn with_pods_forbidden_the_tenant_rows_agree_with_the_header() {
    let emu = Emulator::start(EmulatorOptions {
        snapshots: vec![fixture(DEMO)],
        convert_versions: true,
        forbidden: vec!["pods".into()],
        ..EmulatorOptions::default()
    });
    let out = gpuledger(&root())
        .args(["inventory", "--format", "json", "--kubeconfig"])
        .arg(emu.kubeconfig_path())
        .args(CFG)
        .env_remove("KUBECONFIG")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    // Routes were read: the header counts them, and a tenant's share of them needs its pods.
    assert!(r["fleet"]["public_routes"].as_u64().unwrap() > 0);
    for t in r["tenants"].as_array().unwrap() {
        assert_eq!(t["public_routes"], Value::Null, "{t}");
        assert_eq!(t["gpus_requested"], Value::Null, "{t}");
    }
    assert!(
        r["unknown"]["tenants.public_routes"]
            .as_str()
            .unwrap()
            .contains("pods")
    );
}

#[test]
fn a_snapshot_records_what_it_listed_and_a_partial_one_reads_as_partial() {
    let emu = Emulator::start(EmulatorOptions {
        snapshots: vec![fixture(DEMO)],
        convert_versions: true,
        forbidden: vec!["nodes".into()],
        ..EmulatorOptions::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("fleet.json");
    let out = gpuledger(&root())
        .args(["snapshot", "--kubeconfig"])
        .arg(emu.kubeconfig_path())
        .arg("--output")
        .arg(&file)
        .env_remove("KUBECONFIG")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("nodes"), "{err}");
    let list: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let listed = list["metadata"]["annotations"]["gpuledger.io/resources"]
        .as_str()
        .unwrap();
    let listed: Vec<&str> = listed.split(',').collect();
    assert!(
        listed.contains(&"pods") && listed.contains(&"services"),
        "{listed:?}"
    );
    assert!(!listed.contains(&"nodes"), "{listed:?}");
    // Read back, the snapshot knows it holds no nodes: capacity is unknown, not 0.
    let (code, r) = json_of(&file);
    assert_eq!(code, 2);
    assert_eq!(r["fleet"]["gpus"]["placeable"], Value::Null);
    assert!(
        r["fleet"]["unknown"]["gpus.placeable"]
            .as_str()
            .unwrap()
            .contains("not read"),
        "{r}"
    );
}

/// `cmd` (a one-cluster job about workloads) of `file`: exit code and its JSON report.
fn workloads_job(cmd: &str, file: &Path) -> (i32, Value) {
    let out = gpuledger(&root())
        .args([cmd, "--format", "json", "--snapshot"])
        .arg(file)
        .args(CFG)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let r = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{cmd}: {e}: {text}{}", String::from_utf8_lossy(&out.stderr)));
    (out.status.code().unwrap_or(-1), r)
}

#[test]
fn cost_and_headroom_need_the_pods_and_not_the_nodes() {
    let dir = tempfile::tempdir().unwrap();
    let pods_only = dump(dir.path(), "pods.json", &["Pod"], false);
    let no_pods = dump(dir.path(), "no-pods.json", &["Pod"], true);
    for cmd in ["cost", "headroom"] {
        // Per-workload reports need no Node: a pods-only dump is whole for them, while the
        // fleet figures they carry beside it stay unknown with why.
        let (_, r) = workloads_job(cmd, &pods_only);
        assert_eq!(r["complete"], true, "{cmd}: {}", r["incomplete"]);
        assert_eq!(r["fleet"]["gpus"]["placeable"], Value::Null, "{cmd}");
        // Without pods every figure they give is unknown, and the report says it is incomplete
        // (it said complete before the one-cluster jobs shared one step).
        let (code, r) = workloads_job(cmd, &no_pods);
        assert_eq!(code, 2, "{cmd}: {r}");
        assert_eq!(r["complete"], false, "{cmd}");
        assert_eq!(r["incomplete"][0]["resource"], "pods", "{cmd}");
        assert!(
            r["incomplete"][0]["reason"]
                .as_str()
                .unwrap()
                .contains("no Pod"),
            "{cmd}: {}",
            r["incomplete"]
        );
    }
}

/// Manifests given as a snapshot (no Node, no Pod) read as desired state: one line says so and
/// names `gpuledger render`, then what the workloads declare — no page of unknown figures, and
/// still exit 2, since the fleet's figures are unknown.
#[test]
fn manifests_given_as_a_snapshot_say_so_and_show_what_they_declare() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("deploy.yaml");
    std::fs::write(
        &file,
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: chat, namespace: serving}\nspec:\n  replicas: 3\n  template:\n    spec:\n      containers: [{name: m, resources: {limits: {nvidia.com/gpu: 2}}}]\n",
    )
    .unwrap();
    let out = super::support::gpuledger(&super::support::root())
        .args(["inventory", "--snapshot"])
        .arg(&file)
        .env("COLUMNS", "200")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(
        text.contains("This input holds no Node and no Pod: it reads as manifests (desired state), not a cluster. gpuledger render --repo DIR is the command for manifests"),
        "{text}"
    );
    let row = text
        .lines()
        .find(|l| l.starts_with("serving/Deployment/chat"))
        .unwrap_or_else(|| panic!("no row: {text}"));
    assert!(
        row.contains("main 3×2 = 6") && row.trim_end().ends_with('6'),
        "{row}"
    );
    assert!(!text.contains("unknown"), "{text}");
}
