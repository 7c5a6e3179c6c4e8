//! Lists that cannot lie (issue 34, item 3): the API emulator breaks the pods list the way a
//! broken server, proxy or compacted etcd does (tests/support/kube_emulator.rs `ListFault`),
//! the real kubectl shows that the fault is on the wire, and gpuledger's inventory either comes
//! out right (a list repeated once, a token expired once: listed again) or says the pods list is
//! incomplete and why — never a count with an item twice, never a list followed forever.

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::kube_emulator::{Emulator, EmulatorOptions, ListFault};
use super::support::{fixture, gpuledger, root};

const DEMO: &str = "fixtures/demo/cluster.yaml";
const CONFIG: [&str; 2] = ["--config", "fixtures/demo/.gpuledger.yaml"];
/// Pods in the demo fleet, listed 7 a page.
const DEMO_PODS: usize = 114;

fn faulty(fault: ListFault) -> Emulator {
    Emulator::start(EmulatorOptions {
        snapshots: vec![fixture(DEMO)],
        convert_versions: true,
        page_size: Some(7),
        list_fault: Some(("pods".into(), fault)),
        ..EmulatorOptions::default()
    })
}

/// `inventory --format json` on the emulator: exit code, report, stderr, and how long it took.
fn inventory(emu: &Emulator) -> (i32, Value, String, Duration) {
    let t = Instant::now();
    let out = gpuledger(&root())
        .args(["inventory", "--format", "json", "--kubeconfig"])
        .arg(emu.kubeconfig_path())
        .args(CONFIG)
        .env_remove("KUBECONFIG")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let report = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.code().unwrap_or(-1), report, err, t.elapsed())
}

/// The demo fleet's GPU figures read from its snapshot file: what a sound list gives.
fn expected_gpus() -> Value {
    let out = gpuledger(&root())
        .args(["inventory", "--format", "json", "--snapshot"])
        .arg(fixture(DEMO))
        .args(CONFIG)
        .output()
        .unwrap();
    assert!(out.status.success());
    serde_json::from_slice::<Value>(&out.stdout).unwrap()["fleet"]["gpus"].clone()
}

/// Pod list requests the emulator served: (all pages, first pages).
fn pod_pages(emu: &Emulator) -> (usize, usize) {
    let reqs = emu.requests();
    let pods: Vec<_> = reqs
        .iter()
        .filter(|r| r.target.starts_with("/api/v1/pods?"))
        .collect();
    let first = pods
        .iter()
        .filter(|r| !r.target.contains("continue="))
        .count();
    (pods.len(), first)
}

/// `kubectl get pods -A --chunk-size 7 -o name` against the emulator.
fn kubectl_pods(emu: &Emulator) -> std::process::Output {
    Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(emu.kubeconfig_path())
        .arg("--cache-dir")
        .arg(emu.dir().join("kubectl-cache"))
        .args(["get", "pods", "-A", "--chunk-size", "7", "-o", "name"])
        .env_remove("KUBECONFIG")
        .output()
        .expect("kubectl is required by the list fault tests")
}

fn incomplete_pods(report: &Value) -> String {
    let rows = report["incomplete"].as_array().cloned().unwrap_or_default();
    let row = rows
        .iter()
        .find(|r| r["resource"] == "pods")
        .unwrap_or_else(|| panic!("pods not listed as incomplete: {report:#}"));
    row["reason"].as_str().unwrap().to_string()
}

#[test]
fn a_list_that_repeats_items_once_is_listed_again_and_comes_out_right() {
    let emu = faulty(ListFault::RepeatItems { lists: 1 });
    // The fault is on the wire: kubectl prints the repeated pods.
    let out = kubectl_pods(&emu);
    assert!(out.status.success());
    let names = String::from_utf8_lossy(&out.stdout).lines().count();
    assert!(names > DEMO_PODS, "kubectl saw {names} pods");

    let emu = faulty(ListFault::RepeatItems { lists: 1 });
    let (code, report, err, _) = inventory(&emu);
    assert_eq!(code, 0, "{err}");
    assert_eq!(report["complete"], true, "{report:#}");
    assert_eq!(report["fleet"]["gpus"], expected_gpus());
    assert_eq!(pod_pages(&emu).1, 2, "listed once more");
}

#[test]
fn a_list_that_always_repeats_items_is_incomplete_and_counts_each_item_once() {
    let emu = faulty(ListFault::RepeatItems { lists: u32::MAX });
    let (code, report, err, _) = inventory(&emu);
    assert_eq!(code, 2, "an incomplete report is an error: {err}");
    assert_eq!(report["complete"], false);
    let why = incomplete_pods(&report);
    assert!(
        why.contains("inconsistent") && why.contains("came twice"),
        "{why}"
    );
    // Never inflated: the pods list is not read whole, so what is built on pods is unknown
    // (null, as for a forbidden pods list), never 35 GPUs from 30 pods.
    assert_eq!(
        report["fleet"]["gpus"]["requested"],
        Value::Null,
        "{report:#}"
    );
    assert!(
        report["fleet"]["utilisation"]
            .as_f64()
            .is_none_or(|u| u <= 1.0)
    );
    assert_eq!(pod_pages(&emu).1, 2, "listed once more, then no more");
}

#[test]
fn a_continue_token_that_comes_back_stops_the_list() {
    let emu = faulty(ListFault::LoopSameToken);
    let (code, report, err, took) = inventory(&emu);
    assert_eq!(code, 2, "{err}");
    let why = incomplete_pods(&report);
    assert!(why.contains("continue token a second time"), "{why}");
    assert!(pod_pages(&emu).0 <= 3, "{:?}", pod_pages(&emu));
    assert!(took < Duration::from_secs(30), "{took:?}");
}

#[test]
fn fresh_tokens_over_the_same_page_stop_when_pages_bring_nothing_new() {
    let emu = faulty(ListFault::LoopFreshTokens);
    let (code, report, err, took) = inventory(&emu);
    assert_eq!(code, 2, "{err}");
    let why = incomplete_pods(&report);
    // The second page comes again and again under new tokens: 14 distinct pods, then pages
    // that add none.
    assert!(why.contains("pages without new items"), "{why}");
    let (pages, _) = pod_pages(&emu);
    assert!(pages <= 16, "{pages} pages");
    assert!(took < Duration::from_secs(30), "{took:?}");
}

#[test]
fn an_expired_continue_token_restarts_the_list_once() {
    let emu = faulty(ListFault::Expire { times: 1 });
    // The 410 is the real server's: kubectl stops on it with its message.
    let out = kubectl_pods(&emu);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("too old to display a consistent list"),
        "{err}"
    );

    let emu = faulty(ListFault::Expire { times: 1 });
    let (code, report, err, _) = inventory(&emu);
    assert_eq!(code, 0, "{err}");
    assert_eq!(report["complete"], true);
    assert_eq!(report["fleet"]["gpus"], expected_gpus());
    assert_eq!(pod_pages(&emu).1, 2, "one new list");
}

#[test]
fn a_continue_token_that_expires_again_fails_loudly() {
    let emu = faulty(ListFault::Expire { times: 2 });
    let (code, report, err, _) = inventory(&emu);
    assert_ne!(code, 0);
    assert!(
        report.is_null() || report["complete"] == false,
        "{report:#}"
    );
    assert!(
        err.contains("410") && err.contains("started again once") && err.contains("pods"),
        "{err}"
    );
    assert_eq!(pod_pages(&emu).1, 2, "restarted once only");
}

#[test]
fn the_snapshot_writer_writes_each_item_once_and_says_the_list_is_incomplete() {
    let emu = faulty(ListFault::RepeatItems { lists: u32::MAX });
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
    assert!(err.contains("inconsistent"), "{err}");
    let list: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let pods: Vec<String> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["kind"] == "Pod")
        .map(|i| {
            i["metadata"]["uid"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    assert_eq!(pods.len(), DEMO_PODS);
    let unique: std::collections::BTreeSet<_> = pods.iter().collect();
    assert_eq!(unique.len(), DEMO_PODS);
}
