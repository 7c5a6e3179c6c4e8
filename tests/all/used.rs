//! GPUs used, end to end: DCGM-shaped series in the real Prometheus, attributed through the drift
//! fixture's pods to workloads and tenants.

use serde_json::Value;

use super::prometheus_harness::{Prometheus, Series};
use super::support::{fixture, gpuledger, root};

const ACTIVE: &str = "DCGM_FI_PROF_GR_ENGINE_ACTIVE";

/// One DCGM series per GPU of a pod, labelled as a ServiceMonitor with `honorLabels: false` leaves
/// them: `exported_*` for the workload, the plain labels naming the exporter.
fn pod_gpus<'a>(
    ns: &'a str,
    pod: &'a str,
    node: &'a str,
    gpus: &[&'a str],
    activity: f64,
) -> Vec<Series<'a>> {
    gpus.iter()
        .map(|g| {
            Series::new(
                ACTIVE,
                &[
                    ("gpu", g),
                    ("Hostname", node),
                    ("exported_namespace", ns),
                    ("exported_pod", pod),
                    ("namespace", "gpu-operator"),
                    ("pod", "nvidia-dcgm-exporter-x2k9p"),
                    ("job", "dcgm"),
                ],
                activity,
            )
        })
        .collect()
}

fn inventory(args: &[&str]) -> (i32, Value, String) {
    let out = gpuledger(&root())
        .args(["inventory", "--format", "json", "--snapshot"])
        .arg(fixture("tests/fixtures/drift/cluster.yaml"))
        .args(args)
        .env_remove("GPULEDGER_PROMETHEUS")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        serde_json::from_slice(&out.stdout).unwrap(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn busy_gpus_per_tenant_and_the_idle_gap() {
    let eight = ["0", "1", "2", "3", "4", "5", "6", "7"];
    let mut series = Vec::new();
    // chat: one decode pod busy (8 GPUs), one idle (8 GPUs at 2%).
    series.extend(pod_gpus(
        "llm-prod",
        "llama-decode-0",
        "gpu-00",
        &eight,
        0.9,
    ));
    series.extend(pod_gpus(
        "llm-prod",
        "llama-decode-1",
        "gpu-01",
        &eight,
        0.02,
    ));
    // research: the unmanaged fine-tune, half busy: 4 GPUs at 50%.
    series.extend(pod_gpus(
        "research",
        "rogue-finetune-84d-0",
        "gpu-09",
        &["0", "1", "2", "3"],
        0.5,
    ));
    // A busy GPU with no pod on it, and an idle one.
    series.push(Series::new(
        ACTIVE,
        &[("gpu", "7"), ("Hostname", "gpu-13"), ("job", "dcgm")],
        0.8,
    ));
    series.push(Series::new(
        ACTIVE,
        &[("gpu", "6"), ("Hostname", "gpu-13"), ("job", "dcgm")],
        0.0,
    ));
    // A MIG instance: counted per profile, never as a whole GPU.
    series.push(Series::new(
        ACTIVE,
        &[
            ("gpu", "0"),
            ("GPU_I_PROFILE", "1g.10gb"),
            ("GPU_I_ID", "1"),
            ("hostname", "gpu-12"),
            ("job", "dcgm"),
        ],
        0.6,
    ));
    // Every other GPU node reports its GPUs idle: a node without series would be unknown, not idle.
    let quiet = [
        "gpu-02", "gpu-03", "gpu-04", "gpu-05", "gpu-06", "gpu-07", "gpu-08", "gpu-10", "gpu-11",
    ];
    for node in quiet {
        for g in eight {
            series.push(Series::new(
                ACTIVE,
                &[("gpu", g), ("Hostname", node), ("job", "dcgm")],
                0.0,
            ));
        }
    }
    let prom = Prometheus::start(&series);
    let (code, r, err) = inventory(&["--prometheus", &prom.url(), "--window", "1h"]);
    assert_eq!(code, 0, "{err}");
    let f = &r["fleet"];
    assert_eq!(
        f["gpus"]["used"],
        8 + 4 + 1,
        "busy whole GPUs, attributed or not"
    );
    assert!(f["unknown"].get("gpus.used").is_none());
    assert!(f.get("partial").is_none(), "every GPU node reported: {f}");
    assert!(f.get("no_metrics_nodes").is_none(), "{f}");
    let eq = f["gpu_equivalents_used"].as_f64().unwrap();
    assert!(
        (eq - (8.0 * 0.9 + 8.0 * 0.02 + 4.0 * 0.5 + 0.8)).abs() < 1e-6,
        "{eq}"
    );
    assert_eq!(f["unattributed_busy"].as_array().unwrap().len(), 1);
    assert_eq!(f["unattributed_busy"][0]["node"], "gpu-13");

    let tenant = |name: &str| {
        r["tenants"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap()
            .clone()
    };
    assert_eq!(tenant("chat")["gpus_used"], 8);
    assert_eq!(tenant("research")["gpus_used"], 4);
    assert_eq!(
        tenant("perf")["gpus_used"],
        0,
        "known idle is 0, unlike unknown"
    );
    // The requested-but-idle gap, largest first: chat holds 86 and keeps 8 busy.
    assert_eq!(
        r["idle"][0],
        serde_json::json!({"tenant": "chat", "gpus_requested": 86, "gpus_used": 8, "gpus_idle": 78})
    );
    let llama = r["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["name"] == "llama")
        .unwrap()
        .clone();
    assert_eq!(llama["gpus_used"], 8);
    let mig = r["fleet"]["other_gpus"].as_array().unwrap();
    assert!(
        mig.iter()
            .all(|o| o["resource"] != "nvidia.com/mig-1g.10gb" || o["used"] == 1),
        "{mig:?}"
    );
}

#[test]
fn prometheus_unreachable_or_empty_is_unknown_never_zero() {
    // A closed port: unknown with the reason, the rest of the report intact.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let (code, r, err) = inventory(&["--prometheus", &url]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(r["fleet"]["gpus"]["used"], Value::Null);
    assert!(
        r["fleet"]["unknown"]["gpus.used"]
            .as_str()
            .unwrap()
            .contains("cannot reach Prometheus"),
        "{}",
        r["fleet"]["unknown"]
    );
    assert!(
        r["tenants"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["gpus_used"].is_null())
    );
    assert!(err.contains("GPUs used are unknown"), "{err}");
    assert_eq!(r["fleet"]["gpus"]["requested"], 101);
    // A Prometheus without DCGM series.
    let prom = Prometheus::start(&[Series::new("up", &[("job", "x")], 1.0)]);
    let (_, r, _) = inventory(&["--prometheus", &prom.url()]);
    assert_eq!(r["fleet"]["gpus"]["used"], Value::Null);
    assert!(
        r["fleet"]["unknown"]["gpus.used"]
            .as_str()
            .unwrap()
            .contains("no DCGM series")
    );
}
