//! `gpuledger serve` by watch (issue 36, item 1): on the API emulator, a pod's GPU request changed
//! while serving shows in the metrics within seconds, with one list per resource and then
//! watches (counted by the emulator); a 410 Expired lists again; the store's memory stays flat
//! over many changes.

use std::collections::BTreeMap;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::kube_emulator::{Emulator, EmulatorOptions, RequestRecord, read_snapshot};
use super::serve_child::Serve;
use super::support::{fixture, root};

const DEMO: &str = "fixtures/demo/cluster.yaml";
/// Every series carries the cluster: the emulator's kubeconfig context.
const REQUESTED: &str = "gpuledger_fleet_gpus{cluster=\"emulator\",tier=\"requested\"}";

/// A `gpuledger serve` on the emulator, refreshed only by watched changes when `interval` is
/// long.
fn serve_on(emu: &Emulator, interval: &str) -> Serve {
    let kubeconfig = emu.kubeconfig_path().display().to_string();
    Serve::start(&["--interval", interval, "--kubeconfig", &kubeconfig])
}

/// A running pod of the demo that holds GPUs (by its containers' limits), and how many.
pub(super) fn gpu_pod() -> (String, String, u64) {
    for o in read_snapshot(&fixture(DEMO)).unwrap() {
        let gpus = &o["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"];
        let gpus = gpus.as_str().and_then(|g| g.parse::<u64>().ok());
        if o["kind"] == "Pod"
            && o["status"]["phase"] == "Running"
            && let Some(n) = gpus
        {
            let meta = &o["metadata"];
            let (ns, name) = (meta["namespace"].as_str(), meta["name"].as_str());
            return (ns.unwrap().into(), name.unwrap().into(), n);
        }
    }
    panic!("no running GPU pod in {DEMO}");
}

/// The pod with `gpus` in its first container's requests and limits.
pub(super) fn with_gpus(mut pod: Value, gpus: u64) -> Value {
    let res = &mut pod["spec"]["containers"][0]["resources"];
    for side in ["requests", "limits"] {
        res[side]["nvidia.com/gpu"] = gpus.to_string().into();
    }
    pod
}

/// The lists (no `watch`) and watches of each resource path.
fn by_path(reqs: &[RequestRecord]) -> BTreeMap<String, (u32, u32)> {
    let mut out: BTreeMap<String, (u32, u32)> = BTreeMap::new();
    for r in reqs.iter().filter(|r| r.method == "GET") {
        let segs = r.path().split('/').filter(|s| !s.is_empty()).count();
        let resource = matches!(
            (r.path().starts_with("/api/v1/"), segs),
            (true, 3) | (false, 4)
        );
        if !resource {
            continue; // discovery
        }
        let e = out.entry(r.path().to_string()).or_default();
        match r.query("watch").as_deref() {
            Some("true" | "1") => e.1 += 1,
            _ => e.0 += 1,
        }
    }
    out
}

#[test]
fn serve_follows_a_gpu_request_change_within_seconds_listing_each_resource_once() {
    let emu = Emulator::start(EmulatorOptions {
        snapshots: vec![fixture(DEMO)],
        bookmark_interval: Duration::from_millis(500),
        ..EmulatorOptions::default()
    });
    let serve = serve_on(&emu, "1h");
    let start = Instant::now();
    let before = loop {
        if let Some(v) = serve.samples().get(REQUESTED) {
            break *v;
        }
        assert!(start.elapsed() < Duration::from_secs(60), "no report");
        std::thread::sleep(Duration::from_millis(100));
    };
    let (ns, name, gpus) = gpu_pod();
    let pod = emu.object("v1", "Pod", &ns, &name).unwrap();
    emu.apply(with_gpus(pod.clone(), gpus + 3));
    let took = serve.wait_for_value(REQUESTED, before + 3.0, Duration::from_secs(10));
    eprintln!("the metrics followed a change in {took:?}");
    // Deleted: its GPUs leave the figure.
    emu.delete("v1", "Pod", &ns, &name).unwrap();
    serve.wait_for_value(REQUESTED, before - gpus as f64, Duration::from_secs(10));
    emu.apply(pod);
    serve.wait_for_value(REQUESTED, before, Duration::from_secs(10));

    // One list per resource, then watches only: nothing listed again.
    let paths = by_path(&emu.requests());
    let pods = paths["/api/v1/pods"];
    assert_eq!(pods.0, 1, "{paths:?}");
    assert!(pods.1 >= 1, "{paths:?}");
    for (path, (lists, watches)) in &paths {
        assert_eq!((*lists, *watches >= 1), (1, true), "{path}: {paths:?}");
    }
    assert!(paths.len() >= 10, "{paths:?}");
    // The exporter counts the same.
    let s = serve.samples();
    let n = paths.len() as f64;
    assert_eq!(
        s["gpuledger_exporter_api_requests_total{cluster=\"emulator\",verb=\"list\"}"], n,
        "{s:?}"
    );
    assert!(s["gpuledger_exporter_api_requests_total{cluster=\"emulator\",verb=\"watch\"}"] >= n);
}

#[test]
fn a_410_expired_watch_lists_that_resource_again() {
    // No bookmarks come (an hour apart), so a watch's version moves only with its own events.
    let emu = Emulator::start(EmulatorOptions {
        snapshots: vec![fixture(DEMO)],
        bookmark_interval: Duration::from_secs(3600),
        ..EmulatorOptions::default()
    });
    let serve = serve_on(&emu, "1h");
    let start = Instant::now();
    let before = loop {
        if let Some(v) = serve.samples().get(REQUESTED) {
            break *v;
        }
        assert!(start.elapsed() < Duration::from_secs(60), "no report");
        std::thread::sleep(Duration::from_millis(100));
    };
    let watching = |path: &str| {
        let start = Instant::now();
        while by_path(&emu.requests()).get(path).is_none_or(|p| p.1 == 0) {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "no watch of {path}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    watching("/api/v1/nodes");
    watching("/api/v1/pods");
    // A node changes: the nodes' watch moves to the new version, the pods' stays at its list's.
    // Then etcd compacts to it and the API server restarts (every watch ends): the pods' watch
    // resumes from before the compaction, gets an ERROR 410 Expired, and lists pods again; the
    // nodes' resumes where it was.
    let node = read_snapshot(&fixture(DEMO))
        .unwrap()
        .into_iter()
        .find(|o| o["kind"] == "Node")
        .unwrap();
    let node_name = node["metadata"]["name"].as_str().unwrap().to_string();
    let mut node = emu.object("v1", "Node", "", &node_name).unwrap();
    node["metadata"]["labels"]["touched"] = "yes".into();
    let touched = emu.apply(node);
    std::thread::sleep(Duration::from_millis(300)); // the node's event reaches serve
    emu.compact();
    emu.end_watches();
    let start = Instant::now();
    while by_path(&emu.requests())["/api/v1/pods"].0 < 2 {
        assert!(
            start.elapsed() < Duration::from_secs(15),
            "pods not listed again: {:?}",
            by_path(&emu.requests())
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let reqs = emu.requests();
    let paths = by_path(&reqs);
    assert_eq!(paths["/api/v1/pods"].0, 2, "{paths:?}");
    assert_eq!(paths["/api/v1/nodes"].0, 1, "{paths:?}");
    // The nodes' watch resumed from the node's change.
    let resumed: Vec<String> = reqs
        .iter()
        .filter(|r| r.path() == "/api/v1/nodes" && r.query("watch").is_some())
        .filter_map(|r| r.query("resourceVersion"))
        .collect();
    assert_eq!(resumed.last(), Some(&touched.to_string()), "{resumed:?}");
    // And the relisted pods are watched again: a change shows.
    let (ns, name, gpus) = gpu_pod();
    let pod = emu.object("v1", "Pod", &ns, &name).unwrap();
    emu.apply(with_gpus(pod, gpus + 2));
    serve.wait_for_value(REQUESTED, before + 2.0, Duration::from_secs(10));
}

/// Memory stays flat over many changes: the store replaces objects, it does not accumulate
/// them. Short here (1,000 changes); `GPULEDGER_SOAK_CHANGES=20000` runs a long one.
#[test]
fn serve_by_watch_memory_stays_flat_over_many_changes() {
    let changes: u64 = std::env::var("GPULEDGER_SOAK_CHANGES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000)
        .max(100);
    let emu = Emulator::start(EmulatorOptions::snapshot(fixture(DEMO)));
    let serve = serve_on(&emu, "1h");
    let start = Instant::now();
    let before = loop {
        if let Some(v) = serve.samples().get(REQUESTED) {
            break *v;
        }
        assert!(start.elapsed() < Duration::from_secs(60), "no report");
        std::thread::sleep(Duration::from_millis(100));
    };
    let (ns, name, gpus) = gpu_pod();
    let pod = emu.object("v1", "Pod", &ns, &name).unwrap();
    let mut series = Vec::new();
    for k in 1..=10 {
        for i in 0..changes / 10 {
            // A new label value each time (a growing store would keep them all).
            let mut p = with_gpus(pod.clone(), gpus + 1 + i % 2);
            p["metadata"]["labels"]["churn"] = format!("c{k}-{i}").into();
            emu.apply(p);
            if i % 20 == 0 {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        // The last change of each tenth is seen before the memory is read.
        let last = gpus + 1 + (changes / 10 - 1) % 2;
        serve.wait_for_value(
            REQUESTED,
            before - gpus as f64 + last as f64,
            Duration::from_secs(20),
        );
        series.push(rss_kib(serve.child.id()));
    }
    let text: Vec<String> = series.iter().map(u64::to_string).collect();
    eprintln!(
        "watch soak: {changes} changes in {:.0}s; RSS KiB at each tenth: {}",
        start.elapsed().as_secs_f64(),
        text.join(" ")
    );
    let (half, last) = (series[4], series[9]);
    assert!(
        last <= half + 2 * 1024,
        "RSS grew from {half} KiB to {last} KiB over the second half: {}",
        text.join(" ")
    );
    // Still one list per resource: the changes came by watch.
    assert_eq!(by_path(&emu.requests())["/api/v1/pods"].0, 1);
}

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap()
}

/// The series of a report, without the exporter's own and the read time (which differ by run).
fn report_series(text: &str) -> BTreeMap<String, f64> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("gpuledger_exporter_"))
        .filter(|l| !l.starts_with("gpuledger_live_read_timestamp_seconds"))
        .filter_map(|l| l.rsplit_once(' '))
        .filter_map(|(k, v)| Some((k.to_string(), v.parse().ok()?)))
        .collect()
}

/// The watched store gives the pipeline what a list gives: the same report as a one-off
/// `inventory` of the same cluster, a forbidden resource unread in both.
#[test]
fn the_watched_store_reports_what_a_one_off_read_does_forbidden_resources_unread() {
    let emu = Emulator::start(EmulatorOptions {
        forbidden: vec!["services".into(), "pods".into()],
        ..EmulatorOptions::snapshot(fixture(DEMO))
    });
    let serve = serve_on(&emu, "1h");
    let start = Instant::now();
    let served = loop {
        if let Some((200, text)) = serve.get("/metrics")
            && text.contains("gpuledger_report_complete")
        {
            break text;
        }
        assert!(start.elapsed() < Duration::from_secs(60), "no report");
        std::thread::sleep(Duration::from_millis(100));
    };
    let out = Command::new(env!("CARGO_BIN_EXE_gpuledger"))
        .current_dir(root())
        .args(["inventory", "--format", "prometheus", "--kubeconfig"])
        .arg(emu.kubeconfig_path())
        .env_remove("KUBECONFIG")
        .env_remove("GPULEDGER_CONFIG")
        .output()
        .unwrap();
    let once = String::from_utf8(out.stdout).unwrap();
    // serve's series carry the cluster (the context); the one-off exposition has no such label
    // (only the graph roles' empty `cluster=""`).
    let plain = |text: &str| {
        let t = text
            .replace("cluster=\"emulator\",", "")
            .replace("cluster=\"\",", "");
        t.replace("{cluster=\"emulator\"}", "")
    };
    assert!(served.contains("gpuledger_fleet_gpu_nodes{cluster=\"emulator\"} 70"));
    let (served, once) = (report_series(&plain(&served)), report_series(&plain(&once)));
    assert_eq!(served, once);
    assert_eq!(served["gpuledger_report_complete"], 0.0);
    for r in ["pods", "services"] {
        let k = format!("gpuledger_report_incomplete_input{{resource=\"{r}\"}}");
        assert_eq!(served.get(&k), Some(&1.0), "{served:?}");
    }
    // Pods unread: no requested figure at all, never a 0.
    assert!(
        !served.contains_key("gpuledger_fleet_gpus{tier=\"requested\"}"),
        "{served:?}"
    );
    assert!(served.len() > 10, "{served:?}");
}
