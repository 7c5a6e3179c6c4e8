//! `gpuledger serve` when the API server changes under it (issue 48): restarted on the same port
//! with pods newly forbidden or newly allowed, a resource forbidden then allowed again while
//! serving (with a long interval too), a CRD removed and
//! re-added, every list and watch answering 500 for a while, watches cut every second. Each
//! asserts `/metrics` within seconds of the change — a refused resource's figures unknown at once,
//! failing ones kept but stale and never `gpuledger_report_complete 1`, a removed kind's figures
//! gone — and the one log line per change, naming the resource, with no line from kube-client.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::kube_emulator::{Emulator, EmulatorOptions};
use super::serve_child::Serve;
use super::serve_watch::{gpu_pod, with_gpus};
use super::support::fixture;

const DEMO: &str = "fixtures/demo/cluster.yaml";
const REQUESTED: &str = "gpuledger_fleet_gpus{cluster=\"emulator\",tier=\"requested\"}";
const COMPLETE: &str = "gpuledger_report_complete{cluster=\"emulator\"}";
/// How long a change may take to show.
const SOON: Duration = Duration::from_secs(10);

fn synced(resource: &str) -> String {
    format!("gpuledger_exporter_resource_synced{{cluster=\"emulator\",resource=\"{resource}\"}}")
}

fn age(resource: &str) -> String {
    format!(
        "gpuledger_exporter_resource_age_seconds{{cluster=\"emulator\",resource=\"{resource}\"}}"
    )
}

fn incomplete(resource: &str) -> String {
    format!("gpuledger_report_incomplete_input{{cluster=\"emulator\",resource=\"{resource}\"}}")
}

fn demo() -> Emulator {
    Emulator::start(EmulatorOptions::snapshot(fixture(DEMO)))
}

/// A logged `serve --interval 1s` on the kubeconfig, with `extra` arguments.
fn serve(kubeconfig: &str, extra: &[&str]) -> Serve {
    let mut args = vec!["--interval", "1s", "--kubeconfig", kubeconfig];
    args.extend_from_slice(extra);
    Serve::start_logged(&args)
}

/// Polls `/metrics` until `ok` holds for its samples; the samples.
fn until(
    serve: &Serve,
    what: &str,
    ok: impl Fn(&BTreeMap<String, f64>) -> bool,
) -> BTreeMap<String, f64> {
    let start = Instant::now();
    loop {
        let s = serve.samples();
        if !s.is_empty() && ok(&s) {
            return s;
        }
        assert!(
            start.elapsed() < SOON,
            "{what}: not within {SOON:?}; /metrics:\n{s:#?}\nlog:\n{}",
            serve.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The first complete report, every resource synced.
fn settled(serve: &Serve) -> BTreeMap<String, f64> {
    let start = Instant::now();
    loop {
        let s = serve.samples();
        let all_synced = s
            .iter()
            .filter(|(k, _)| k.starts_with("gpuledger_exporter_resource_synced{"))
            .all(|(_, v)| *v == 1.0);
        if s.get(COMPLETE) == Some(&1.0) && s.contains_key(REQUESTED) && all_synced {
            return s;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no complete report:\n{}",
            serve.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The library's own lines never reach the log (no `-v`).
fn no_library_lines(log: &str) {
    for bad in ["kube_client", "hyper::", "eof in poll"] {
        assert!(!log.contains(bad), "{bad:?} in the log:\n{log}");
    }
}

#[test]
fn a_restarted_api_server_with_pods_now_forbidden_makes_their_figures_unknown_at_once() {
    let first = demo();
    // A copy: the emulator's own goes with it.
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::copy(first.kubeconfig_path(), &kubeconfig).unwrap();
    let serve = serve(&kubeconfig.display().to_string(), &[]);
    let before = settled(&serve);
    assert_eq!(before[&synced("pods")], 1.0);
    let port = first.addr().port();
    drop(first);
    // Down: the last figures stay, stale — not synced, not complete.
    let down = until(&serve, "stale while down", |s| {
        s.get(&synced("pods")) == Some(&0.0) && s.get(COMPLETE) == Some(&0.0)
    });
    assert_eq!(down[REQUESTED], before[REQUESTED], "the last figures stay");
    serve.wait_for_log(
        "pods: watch ended (connection refused); relisting with backoff",
        SOON,
    );
    std::thread::sleep(Duration::from_millis(1500));
    let older = serve.samples();
    assert!(older[&age("pods")] >= 1.0, "the age grows: {older:?}");
    // Back on the same port, with pods forbidden.
    let _second = Emulator::start(EmulatorOptions {
        port,
        forbidden: vec!["pods".into()],
        ..EmulatorOptions::snapshot(fixture(DEMO))
    });
    let after = until(&serve, "pods unknown after the restart", |s| {
        s.get(&incomplete("pods")) == Some(&1.0) && s.get(&synced("nodes")) == Some(&1.0)
    });
    assert!(!after.contains_key(REQUESTED), "unknown, not 0: {after:?}");
    assert_eq!(after[COMPLETE], 0.0);
    assert_eq!(after[&synced("pods")], 0.0);
    let log = serve.wait_for_log("pods: forbidden (403): its figures are unknown", SOON);
    // The current error is said, never the outage's again.
    let since = &log[log.find("pods: forbidden (403)").unwrap()..];
    assert!(!since.contains("connection refused"), "{log}");
    assert!(serve.log().contains("nodes: synced again"), "{log}");
    no_library_lines(&serve.log());
    // One line per change: the outage is told once per resource, not per retry.
    let told = log.matches("pods: watch ended").count();
    assert_eq!(told, 1, "{log}");
}

#[test]
fn a_restarted_api_server_with_pods_now_allowed_brings_their_figures_back() {
    let first = Emulator::start(EmulatorOptions {
        forbidden: vec!["pods".into()],
        ..EmulatorOptions::snapshot(fixture(DEMO))
    });
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::copy(first.kubeconfig_path(), &kubeconfig).unwrap();
    let serve = serve(&kubeconfig.display().to_string(), &[]);
    let before = until(&serve, "pods unknown", |s| {
        s.get(&incomplete("pods")) == Some(&1.0) && s.get(&synced("nodes")) == Some(&1.0)
    });
    assert!(!before.contains_key(REQUESTED));
    assert_eq!(before[COMPLETE], 0.0);
    let port = first.addr().port();
    drop(first);
    serve.wait_for_log("nodes: watch ended (connection refused)", SOON);
    let _second = Emulator::start(EmulatorOptions {
        port,
        ..EmulatorOptions::snapshot(fixture(DEMO))
    });
    let after = until(&serve, "pods back after the restart", |s| {
        s.contains_key(REQUESTED) && s.get(COMPLETE) == Some(&1.0)
    });
    assert_eq!(after[&synced("pods")], 1.0);
    assert!(!after.contains_key(&incomplete("pods")), "{after:?}");
    let log = serve.wait_for_log("pods: synced again", SOON);
    no_library_lines(&log);
}

#[test]
fn a_resource_forbidden_then_allowed_is_unknown_then_back_with_json_lines() {
    let emu = demo();
    let kubeconfig = emu.kubeconfig_path().display().to_string();
    let serve = serve(&kubeconfig, &["--log-format", "json"]);
    let before = settled(&serve);
    emu.fault("forbid", "pods");
    let forbidden = until(&serve, "pods unknown", |s| {
        s.get(&incomplete("pods")) == Some(&1.0) && !s.contains_key(REQUESTED)
    });
    assert_eq!(forbidden[COMPLETE], 0.0);
    assert_eq!(forbidden[&synced("pods")], 0.0);
    assert_eq!(forbidden[&synced("nodes")], 1.0);
    emu.fault("allow", "pods");
    let back = until(&serve, "pods back", |s| {
        s.get(REQUESTED) == Some(&before[REQUESTED]) && s.get(COMPLETE) == Some(&1.0)
    });
    assert_eq!(back[&synced("pods")], 1.0);
    assert!(!back.contains_key(&incomplete("pods")));
    let log = serve.wait_for_log("pods: synced again", SOON);
    no_library_lines(&log);
    // Every line is one JSON object; the resource's lines carry resource, event and level.
    let lines: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l:?}")))
        .collect();
    let pods: Vec<(&str, &str)> = lines
        .iter()
        .filter(|l| l["resource"] == "pods")
        .map(|l| (l["level"].as_str().unwrap(), l["event"].as_str().unwrap()))
        .collect();
    assert_eq!(pods, [("warn", "refused"), ("info", "synced")], "{log}");
    assert!(
        lines
            .iter()
            .any(|l| l["event"] == "serve" && l["message"].as_str().unwrap().contains("serving")),
        "{log}"
    );
}

#[test]
fn a_resource_forbidden_is_unknown_at_once_however_long_the_interval() {
    // A watch refused (the role lost the verb) lists at once rather than a poll (an hour) later.
    let emu = demo();
    let kubeconfig = emu.kubeconfig_path().display().to_string();
    let serve = Serve::start_logged(&["--interval", "1h", "--kubeconfig", &kubeconfig]);
    settled(&serve);
    emu.fault("forbid", "pods");
    let s = until(&serve, "pods unknown", |s| {
        s.get(&incomplete("pods")) == Some(&1.0) && !s.contains_key(REQUESTED)
    });
    assert_eq!(s[COMPLETE], 0.0);
    serve.wait_for_log("pods: forbidden (403): its figures are unknown", SOON);
}

#[test]
fn a_resource_whose_credentials_are_refused_is_unknown_at_once() {
    // 401 on one resource (a token that no longer works for it): refused, like a 403; retried
    // every interval, and back once the credentials are accepted again.
    let emu = demo();
    let kubeconfig = emu.kubeconfig_path().display().to_string();
    let serve = serve(&kubeconfig, &[]);
    settled(&serve);
    emu.fault("unauthorize", "pods");
    let s = until(&serve, "pods unknown", |s| {
        s.get(&incomplete("pods")) == Some(&1.0) && !s.contains_key(REQUESTED)
    });
    assert_eq!(s[COMPLETE], 0.0);
    assert_eq!(s[&synced("pods")], 0.0);
    serve.wait_for_log("pods: unauthorized (401): its figures are unknown", SOON);
    emu.fault("allow", "pods");
    let back = until(&serve, "pods back", |s| {
        s.get(COMPLETE) == Some(&1.0) && s.contains_key(REQUESTED)
    });
    assert_eq!(back[&synced("pods")], 1.0);
}

#[test]
fn a_crd_removed_has_no_figures_and_they_return_when_it_is_served_again() {
    // Every version of a kind served, as a CRD with several versions is: a graph is read under
    // whichever one gpuledger prefers.
    let emu = Emulator::start(EmulatorOptions {
        convert_versions: true,
        ..EmulatorOptions::snapshot(fixture(DEMO))
    });
    let kubeconfig = emu.kubeconfig_path().display().to_string();
    let serve = serve(&kubeconfig, &[]);
    let graphs = |s: &BTreeMap<String, f64>| {
        s.iter()
            .filter(|(k, _)| k.starts_with("gpuledger_graph_role_gpus{"))
            .count()
    };
    let coverage = "gpuledger_fleet_intent_coverage_ratio{cluster=\"emulator\"}";
    let before = settled(&serve);
    let crd = "dynamographdeployments.nvidia.com";
    emu.fault("remove", crd);
    // The graph without components goes with its kind, and the intent it declared.
    let gone = until(&serve, "graphs gone", |s| {
        graphs(s) < graphs(&before) && s.get(coverage) < before.get(coverage)
    });
    // None exist: the report stays complete and the resource synced.
    assert_eq!(gone[COMPLETE], 1.0);
    assert_eq!(gone[&synced(crd)], 1.0);
    serve.wait_for_log(&format!("{crd}: not served (404)"), SOON);
    emu.fault("restore", crd);
    until(&serve, "graphs back", |s| {
        graphs(s) == graphs(&before) && s.get(coverage) == before.get(coverage)
    });
    serve.wait_for_log(&format!("{crd}: synced again"), SOON);
    no_library_lines(&serve.log());
}

#[test]
fn lists_and_watches_answering_500_for_a_while_keep_the_figures_stale_then_recover() {
    let emu = demo();
    let kubeconfig = emu.kubeconfig_path().display().to_string();
    let serve = serve(&kubeconfig, &[]);
    let before = settled(&serve);
    emu.fail_for(500, 3.0);
    let failing = until(&serve, "stale", |s| {
        s.get(&synced("pods")) == Some(&0.0) && s.get(COMPLETE) == Some(&0.0)
    });
    assert_eq!(
        failing[REQUESTED], before[REQUESTED],
        "the last figures stay"
    );
    let log = serve.wait_for_log("pods: watch ended (500); relisting with backoff", SOON);
    assert!(!log.contains("pods: forbidden"), "{log}");
    let back = until(&serve, "synced again", |s| {
        s.get(&synced("pods")) == Some(&1.0) && s.get(COMPLETE) == Some(&1.0)
    });
    assert_eq!(back[REQUESTED], before[REQUESTED]);
    assert!(back[&age("pods")] < 5.0, "{back:?}");
    let log = serve.wait_for_log("pods: synced again", SOON);
    no_library_lines(&log);
}

#[test]
fn watches_cut_every_second_stay_synced_follow_changes_and_log_nothing() {
    let emu = demo();
    let kubeconfig = emu.kubeconfig_path().display().to_string();
    let serve = serve(&kubeconfig, &[]);
    let before = settled(&serve);
    let (ns, name, gpus) = gpu_pod();
    for cut in 0..5 {
        emu.end_watches();
        std::thread::sleep(Duration::from_millis(500));
        if cut == 2 {
            let pod = emu.object("v1", "Pod", &ns, &name).unwrap();
            emu.apply(with_gpus(pod, gpus + 2));
        }
        std::thread::sleep(Duration::from_millis(500));
        let s = serve.samples();
        assert_eq!(s[COMPLETE], 1.0, "cut {cut}: {s:?}");
        assert_eq!(s[&synced("pods")], 1.0, "cut {cut}");
    }
    serve.wait_for_value(REQUESTED, before[REQUESTED] + 2.0, SOON);
    // A watch that ends is resumed, as at its timeout: nothing to tell.
    let log = serve.log();
    assert!(!log.contains("watch ended"), "{log}");
    no_library_lines(&log);
    // Each cut was followed by a new watch.
    let reqs = emu.requests();
    let watches = reqs
        .iter()
        .filter(|r| r.path() == "/api/v1/nodes" && r.query("watch").is_some())
        .count();
    assert!(watches >= 5, "{watches} watches of nodes");
}

#[test]
fn the_client_libraries_own_warnings_show_only_with_verbose() {
    // The same outage twice: without -v the log is gpuledger's lines only (asserted in the
    // restart test too); with -v kube-client's own warnings show, named by their target.
    for verbose in [false, true] {
        let emu = demo();
        let dir = tempfile::tempdir().unwrap();
        let kubeconfig = dir.path().join("kubeconfig");
        std::fs::copy(emu.kubeconfig_path(), &kubeconfig).unwrap();
        let kubeconfig = kubeconfig.display().to_string();
        let serve = serve(&kubeconfig, if verbose { &["-v"] } else { &[] });
        settled(&serve);
        drop(emu);
        let log = serve.wait_for_log("pods: watch ended", SOON);
        if verbose {
            serve.wait_for_log("kube_client", SOON);
        } else {
            std::thread::sleep(Duration::from_secs(2));
            no_library_lines(&serve.log());
            assert!(log.lines().all(|l| !l.starts_with("DEBUG")), "{log}");
        }
    }
}
