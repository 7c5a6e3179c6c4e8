//! GPUs used when the Prometheus is not only ours, or not whole: the real Prometheus backfilled
//! with DCGM series of two clusters, a pod replaced inside the window, NaN, ±Inf and out-of-range
//! samples, a GPU node without series; and a Thanos-style querier in front of it that answers
//! with `warnings` (a partial response). Each scenario once gave a confident wrong number.

use std::path::PathBuf;

use serde_json::Value;

use super::prometheus_harness::{HISTORY_MINUTES, Prometheus, Series};
use super::support::{gpuledger, root};
use super::thanos::PartialQuerier;

const ACTIVE: &str = "DCGM_FI_PROF_GR_ENGINE_ACTIVE";
const UTIL: &str = "DCGM_FI_DEV_GPU_UTIL";

/// A snapshot of `nodes` (name, GPUs) and bare pods (namespace, name, node, GPUs), in a temp dir.
fn fleet(nodes: &[(&str, u64)], pods: &[(&str, &str, &str, u64)]) -> (tempfile::TempDir, PathBuf) {
    let mut y = String::new();
    for (name, gpus) in nodes {
        y.push_str(&format!(
            "apiVersion: v1\nkind: Node\nmetadata: {{name: {name}}}\nstatus:\n  capacity: {{nvidia.com/gpu: \"{gpus}\"}}\n  allocatable: {{nvidia.com/gpu: \"{gpus}\"}}\n  conditions: [{{type: Ready, status: \"True\"}}]\n---\n"
        ));
    }
    for (ns, name, node, gpus) in pods {
        y.push_str(&format!(
            "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: {ns}}}\nspec:\n  nodeName: {node}\n  containers: [{{name: main, resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}}}]\nstatus: {{phase: Running}}\n---\n"
        ));
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cluster.yaml");
    std::fs::write(&path, y).unwrap();
    (dir, path)
}

/// One DCGM series of GPU `gpu` on `node`, held by `pod` (`ns/name`) or by nobody, with extra
/// labels (a cluster).
fn dcgm<'a>(
    metric: &'a str,
    node: &'a str,
    gpu: &'a str,
    pod: Option<(&'a str, &'a str)>,
    extra: &[(&'a str, &'a str)],
    values: &[f64],
) -> Series<'a> {
    let mut labels = vec![("gpu", gpu), ("Hostname", node), ("job", "dcgm")];
    if let Some((ns, name)) = pod {
        labels.extend([("namespace", ns), ("pod", name), ("container", "main")]);
    }
    labels.extend_from_slice(extra);
    Series::cycling(metric, &labels, values)
}

fn run(snapshot: &PathBuf, args: &[&str], format: &str) -> (i32, String, String) {
    let out = gpuledger(&root())
        .args(["inventory", "--format", format, "--snapshot"])
        .arg(snapshot)
        .args(["--window", "1h"])
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn json(snapshot: &PathBuf, args: &[&str]) -> Value {
    let (code, out, err) = run(snapshot, args, "json");
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).unwrap()
}

fn tenant(r: &Value, name: &str) -> Value {
    r["tenants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no tenant {name}: {}", r["tenants"]))
        .clone()
}

const EIGHT: [&str; 8] = ["0", "1", "2", "3", "4", "5", "6", "7"];

/// Two clusters in one Prometheus: prod-a (this fleet: a-0, a-1, every GPU busy) and prod-b
/// (three busy GPUs on b-0, another fleet).
fn two_clusters() -> Vec<Series<'static>> {
    let mut s = Vec::new();
    for (node, pod) in [("a-0", ("ml", "train-0")), ("a-1", ("ml", "train-1"))] {
        for g in EIGHT {
            s.push(dcgm(
                ACTIVE,
                node,
                g,
                Some(pod),
                &[("cluster", "prod-a")],
                &[0.9],
            ));
        }
    }
    for g in ["0", "1", "2"] {
        s.push(dcgm(
            ACTIVE,
            "b-0",
            g,
            Some(("ml", "other")),
            &[("cluster", "prod-b")],
            &[0.8],
        ));
    }
    s
}

#[test]
fn another_clusters_series_are_not_counted() {
    let (_d, snap) = fleet(
        &[("a-0", 8), ("a-1", 8)],
        &[("ml", "train-0", "a-0", 8), ("ml", "train-1", "a-1", 8)],
    );
    let prom = Prometheus::start(&two_clusters());
    // Detected: the one cluster whose DCGM hostnames are this fleet's nodes, and the choice said.
    let r = json(&snap, &["--prometheus", &prom.url()]);
    let f = &r["fleet"];
    assert_eq!(f["gpus"]["used"], 16, "19 counted both clusters: {f}");
    assert_eq!(f["gpus"]["capacity"], 16);
    assert!(f["unattributed_busy"].as_array().unwrap().is_empty(), "{f}");
    let scope = f["metrics_scope"].as_str().unwrap();
    assert!(scope.contains(r#"cluster="prod-a""#), "{scope}");
    assert!(scope.contains("metrics.cluster_selector"), "{scope}");

    // Configured: the selector goes into the query and the report says so.
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("config.yaml");
    std::fs::write(&cfg, "metrics:\n  cluster_selector: 'cluster=\"prod-a\"'\n").unwrap();
    let r = json(
        &snap,
        &[
            "--prometheus",
            &prom.url(),
            "--config",
            cfg.to_str().unwrap(),
        ],
    );
    assert_eq!(r["fleet"]["gpus"]["used"], 16);
    let scope = r["fleet"]["metrics_scope"].as_str().unwrap();
    assert!(scope.starts_with("metrics.cluster_selector"), "{scope}");

    // A selector that is not a label matcher is refused with the file.
    std::fs::write(&cfg, "metrics:\n  cluster_selector: 'prod-a'\n").unwrap();
    let (code, _, err) = run(
        &snap,
        &[
            "--prometheus",
            &prom.url(),
            "--config",
            cfg.to_str().unwrap(),
        ],
        "json",
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("metrics.cluster_selector"), "{err}");
}

#[test]
fn clusters_that_cannot_be_told_apart_leave_used_unknown() {
    // Both clusters name their nodes a-0: nothing says which one is this fleet.
    let mut s = two_clusters();
    s.extend(EIGHT.map(|g| dcgm(ACTIVE, "a-0", g, None, &[("cluster", "prod-c")], &[0.7])));
    let (_d, snap) = fleet(&[("a-0", 8), ("a-1", 8)], &[("ml", "train-0", "a-0", 8)]);
    let prom = Prometheus::start(&s);
    let r = json(&snap, &["--prometheus", &prom.url()]);
    assert_eq!(r["fleet"]["gpus"]["used"], Value::Null);
    let why = r["fleet"]["unknown"]["gpus.used"].as_str().unwrap();
    assert!(
        why.contains("prod-a")
            && why.contains("prod-c")
            && why.contains("metrics.cluster_selector"),
        "{why}"
    );
    assert!(tenant(&r, "ml")["gpus_used"].is_null());
}

#[test]
fn a_replaced_pod_counts_its_gpu_once() {
    // Three physical GPUs; on GPU 0 web-old ran the first half of the window and web-new the
    // second, each busy: one busy GPU, not two.
    let (_d, snap) = fleet(
        &[("n", 3)],
        &[
            ("web", "web-new", "n", 1),
            ("web", "web-1", "n", 1),
            ("web", "web-2", "n", 1),
        ],
    );
    let half = HISTORY_MINUTES / 2;
    let prom = Prometheus::start(&[
        dcgm(ACTIVE, "n", "0", Some(("web", "web-old")), &[], &[0.9]).during(0..half),
        dcgm(ACTIVE, "n", "0", Some(("web", "web-new")), &[], &[0.9]).during(half..HISTORY_MINUTES),
        dcgm(ACTIVE, "n", "1", Some(("web", "web-1")), &[], &[0.9]),
        dcgm(ACTIVE, "n", "2", Some(("web", "web-2")), &[], &[0.9]),
    ]);
    let r = json(&snap, &["--prometheus", &prom.url()]);
    let f = &r["fleet"];
    assert_eq!(f["gpus"]["used"], 3, "4 used of 3 physical: {f}");
    let eq = f["gpu_equivalents_used"].as_f64().unwrap();
    assert!((eq - 2.7).abs() < 1e-6, "{eq}");
    // The busy GPU belongs to the pod that holds it now, not to the one that left.
    assert!(f["unattributed_busy"].as_array().unwrap().is_empty(), "{f}");
    assert_eq!(tenant(&r, "web")["gpus_used"], 3);
    assert!(f["partial"].get("gpus.used").is_none(), "{f}");
}

#[test]
fn bad_samples_fall_back_per_gpu_to_gpu_util() {
    // Six GPUs, all busy by GPU_UTIL; the profiling metric is NaN, +Inf, negative or above 1 on
    // four of them. A seventh has bad samples in both metrics: unknown, not idle.
    let (_d, snap) = fleet(&[("n", 7)], &[("ml", "big", "n", 7)]);
    let pod = Some(("ml", "big"));
    let mut s = vec![
        dcgm(ACTIVE, "n", "0", pod, &[], &[0.9, f64::NAN]),
        dcgm(ACTIVE, "n", "1", pod, &[], &[0.9, f64::INFINITY]),
        dcgm(ACTIVE, "n", "2", pod, &[], &[0.9, -0.5]),
        dcgm(ACTIVE, "n", "3", pod, &[], &[0.9, 1.5]),
        dcgm(ACTIVE, "n", "4", pod, &[], &[0.9]),
        dcgm(ACTIVE, "n", "5", pod, &[], &[0.9]),
        dcgm(ACTIVE, "n", "6", pod, &[], &[f64::NAN]),
        dcgm(UTIL, "n", "6", pod, &[], &[-3.0, 90.0]),
    ];
    for g in ["0", "1", "2", "3", "4", "5"] {
        s.push(dcgm(UTIL, "n", g, pod, &[], &[90.0]));
    }
    let prom = Prometheus::start(&s);
    let r = json(&snap, &["--prometheus", &prom.url()]);
    let f = &r["fleet"];
    assert_eq!(f["gpus"]["used"], 6, "all six readable GPUs are busy: {f}");
    let unknown = f["unknown_gpus"].as_array().unwrap();
    assert_eq!(unknown.len(), 1, "{f}");
    assert_eq!(
        (unknown[0]["node"].as_str(), unknown[0]["gpu"].as_str()),
        (Some("n"), Some("6"))
    );
    let partial = f["partial"]["gpus.used"].as_str().unwrap();
    assert!(partial.contains("1 GPU"), "{partial}");
    // The pod on the unknown GPU: its workload's use is unknown, not a lower number.
    assert!(tenant(&r, "ml")["gpus_used"].is_null(), "{}", r["tenants"]);
    assert!(r["idle"].as_array().unwrap().is_empty(), "{}", r["idle"]);
}

#[test]
fn a_gpu_node_without_series_is_no_metrics_not_idle() {
    let (_d, snap) = fleet(
        &[("n1", 8), ("n2", 8)],
        &[("team-a", "a", "n1", 8), ("team-b", "b", "n2", 8)],
    );
    let prom = Prometheus::start(
        &EIGHT.map(|g| dcgm(ACTIVE, "n1", g, Some(("team-a", "a")), &[], &[0.9])),
    );
    let r = json(&snap, &["--prometheus", &prom.url()]);
    let f = &r["fleet"];
    assert_eq!(
        f["no_metrics_nodes"],
        serde_json::json!([{"node": "n2", "gpus": 8}]),
        "{f}"
    );
    assert_eq!(f["gpus"]["used"], 8);
    assert!(
        f["partial"]["gpus.used"].as_str().unwrap().contains("n2"),
        "{f}"
    );
    assert_eq!(tenant(&r, "team-a")["gpus_used"], 8);
    assert!(
        tenant(&r, "team-b")["gpus_used"].is_null(),
        "requested but idle? no: unknown"
    );
    let idle: Vec<&str> = r["idle"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["tenant"].as_str().unwrap())
        .collect();
    assert_eq!(idle, ["team-a"], "team-b is never 'requested but idle'");
    // The markdown names the node.
    let (_, md, _) = run(&snap, &["--prometheus", &prom.url()], "markdown");
    assert!(md.contains("n2"), "{md}");
    assert!(md.to_lowercase().contains("no dcgm series"), "{md}");
    // The exporter keeps the sample and names the figure a lower bound.
    let (_, text, _) = run(&snap, &["--prometheus", &prom.url()], "prometheus");
    assert!(
        text.contains("gpuledger_partial{field=\"fleet.gpus.used\"} 1"),
        "{text}"
    );
    assert!(
        text.contains("gpuledger_fleet_gpus{tier=\"used\"} 8"),
        "{text}"
    );
}

#[test]
fn a_partial_answer_makes_used_partial() {
    let (_d, snap) = fleet(
        &[("n1", 8), ("n2", 8)],
        &[("team-a", "a", "n1", 8), ("team-b", "b", "n2", 8)],
    );
    let mut s: Vec<Series<'_>> = EIGHT
        .map(|g| {
            dcgm(
                ACTIVE,
                "n1",
                g,
                Some(("team-a", "a")),
                &[("store", "east")],
                &[0.9],
            )
        })
        .into();
    s.extend(EIGHT.map(|g| {
        dcgm(
            ACTIVE,
            "n2",
            g,
            Some(("team-b", "b")),
            &[("store", "west")],
            &[0.9],
        )
    }));
    let prom = Prometheus::start(&s);
    let warning = "No StoreAPIs matched for this query: store west timed out";
    let thanos = PartialQuerier::start(&prom.url(), warning, Some(("store", "west")));
    let r = json(&snap, &["--prometheus", &thanos.url()]);
    let f = &r["fleet"];
    let partial = f["partial"]["gpus.used"]
        .as_str()
        .unwrap_or_else(|| panic!("{f}"));
    assert!(partial.contains(warning), "{partial}");
    assert_eq!(f["gpus"]["used"], 8, "a lower bound, said to be one");
    assert!(!thanos.asked().is_empty());
    // The history readers get the same answer: the trend column is unknown, with the warning.
    let trend = f["unknown"]["tenants.gpus_per_week"]
        .as_str()
        .unwrap_or_default();
    assert!(
        trend.contains("a partial answer") && trend.contains(warning),
        "{f}"
    );
    let (_, md, _) = run(&snap, &["--prometheus", &thanos.url()], "markdown");
    assert!(md.contains("partial"), "{md}");
    assert!(md.contains("store west timed out"), "{md}");
}
