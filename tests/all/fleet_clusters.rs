//! A fleet across clusters on Prometheus (issue 36, item 2): two `gpuledger serve`, one per
//! emulated cluster, scraped by one real Prometheus that evaluates deploy/recording-rules.yaml;
//! the fleet's totals in PromQL are the sum of the two clusters' `inventory` reports, every
//! series carries its cluster, and every query of deploy/grafana-fleet-clusters.json answers
//! from those rules and the metrics the exporters serve. The rules and the worked federation
//! configuration of the docs pass promtool.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::kube_emulator::{Emulator, EmulatorOptions, read_snapshot};
use super::prometheus_harness::Prometheus;
use super::serve_child::Serve;
use super::support::{fixture, gpuledger, root};

const RULES: &str = "deploy/recording-rules.yaml";
const DASHBOARD: &str = "deploy/grafana-fleet-clusters.json";
const FEDERATION: &str = "deploy/prometheus-federation.yaml";
const CONFIG: &str = "fixtures/demo/.gpuledger.yaml";

fn promtool(args: &[&str], file: &Path) -> (bool, String) {
    let out = Command::new("promtool")
        .args(args)
        .arg(file)
        .output()
        .expect("promtool on PATH (Debian's prometheus package; scripts/test.sh installs it)");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// The names the rule file records.
fn recorded() -> BTreeSet<String> {
    let text = std::fs::read_to_string(fixture(RULES)).unwrap();
    let rules: Value = serde_saphyr::from_str(&text).unwrap();
    let mut names = BTreeSet::new();
    for g in rules["groups"].as_array().unwrap() {
        for r in g["rules"].as_array().unwrap() {
            names.insert(r["record"].as_str().unwrap().to_string());
        }
    }
    names
}

#[test]
fn the_recording_rules_and_the_worked_federation_config_pass_promtool() {
    let (ok, text) = promtool(&["check", "rules"], &fixture(RULES));
    assert!(ok, "{text}");
    assert!(
        text.contains(&format!("{} rules found", recorded().len())),
        "{text}"
    );
    // The central Prometheus of docs/metrics-and-trend.md: federation scrape jobs and the rules.
    let (ok, text) = promtool(&["check", "config"], &fixture(FEDERATION));
    assert!(ok, "{text}");
    let docs = std::fs::read_to_string(fixture("docs/metrics-and-trend.md")).unwrap();
    let config = std::fs::read_to_string(fixture(FEDERATION)).unwrap();
    assert!(config.contains("/federate") && config.contains("honor_labels: true"));
    assert!(docs.contains(FEDERATION) && docs.contains(RULES) && docs.contains(DASHBOARD));
}

/// `inventory --format json` of the cluster a kubeconfig reaches, with the demo's tenancy.
fn inventory(kubeconfig: &Path) -> Value {
    let out = gpuledger(&root())
        .args([
            "inventory",
            "--format",
            "json",
            "--config",
            CONFIG,
            "--kubeconfig",
        ])
        .arg(kubeconfig)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The second cluster: the headroom fixture's small fleet, its `serve` namespace of tenant
/// `search` (a tenant of the demo fleet too, so that a tenant spans both clusters).
fn west_snapshot(dir: &Path) -> PathBuf {
    let mut items = read_snapshot(&fixture("fixtures/headroom/cluster.yaml")).unwrap();
    assert!(!items.iter().any(|o| o["kind"] == "Namespace"));
    items.push(json!({
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "serve", "labels": {"tenant": "search"}},
    }));
    let path = dir.join("west.json");
    let list = json!({"apiVersion": "v1", "kind": "List", "items": items});
    std::fs::write(&path, serde_json::to_string(&list).unwrap()).unwrap();
    path
}

/// The emulator's kubeconfig with its context named `name` (the default cluster label).
fn renamed_context(emu: &Emulator, name: &str, dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(emu.kubeconfig_path()).unwrap();
    let renamed = text
        .replace(
            "contexts:\n- name: emulator\n",
            &format!("contexts:\n- name: {name}\n"),
        )
        .replace(
            "current-context: emulator",
            &format!("current-context: {name}"),
        );
    assert_ne!(text, renamed, "the emulator's kubeconfig changed shape");
    let path = dir.join(format!("{name}.kubeconfig"));
    std::fs::write(&path, renamed).unwrap();
    path
}

/// The samples of an instant query, by their labels (without `__name__`).
fn query(prom: &Prometheus, promql: &str) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    for s in prom.query(promql).as_array().unwrap() {
        let labels: Vec<String> = s["metric"]
            .as_object()
            .unwrap()
            .iter()
            .filter(|(k, _)| *k != "__name__")
            .map(|(k, v)| format!("{k}={}", v.as_str().unwrap()))
            .collect();
        let v: f64 = s["value"][1].as_str().unwrap().parse().unwrap();
        out.insert(labels.join(","), v);
    }
    out
}

/// Polls until `promql` answers `want` (the rules are evaluated every second over scrapes every
/// second); fails with the last answer.
fn wait_for(prom: &Prometheus, promql: &str, want: &BTreeMap<String, f64>) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let got = query(prom, promql);
        if got == *want {
            return;
        }
        assert!(Instant::now() < deadline, "{promql}: {got:?}, not {want:?}");
        std::thread::sleep(Duration::from_millis(250));
    }
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap()
}

#[test]
fn two_clusters_in_one_prometheus_add_up_to_the_sum_of_their_inventories() {
    let dir = tempfile::tempdir().unwrap();
    let east = Emulator::start(EmulatorOptions {
        convert_versions: true,
        ..EmulatorOptions::snapshot(fixture("fixtures/demo/cluster.yaml"))
    });
    let west = Emulator::start(EmulatorOptions::snapshot(west_snapshot(dir.path())));
    let west_config = renamed_context(&west, "west", dir.path());
    let east_config = east.kubeconfig_path().to_path_buf();
    // East named by --cluster; west by its kubeconfig context.
    let serve_east = Serve::start(&[
        "--interval",
        "1h",
        "--cluster",
        "east",
        "--config",
        CONFIG,
        "--kubeconfig",
        east_config.to_str().unwrap(),
    ]);
    let serve_west = Serve::start(&[
        "--interval",
        "1h",
        "--config",
        CONFIG,
        "--kubeconfig",
        west_config.to_str().unwrap(),
    ]);
    let (text_east, text_west) = (
        serve_east.metrics_with("gpuledger_fleet_gpus"),
        serve_west.metrics_with("gpuledger_fleet_gpus"),
    );
    for (text, cluster) in [(&text_east, "east"), (&text_west, "west")] {
        let samples: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
        assert!(samples.len() > 20);
        for l in samples {
            assert!(l.contains(&format!("{{cluster=\"{cluster}\"")), "{l}");
        }
    }
    let reports = [inventory(&east_config), inventory(&west_config)];

    let prom = Prometheus::start_with_rules(
        &[],
        &[serve_east.addr.to_string(), serve_west.addr.to_string()],
        &[fixture(RULES)],
    );

    // The fleet's tiers: the sum of the two reports.
    let mut tiers = BTreeMap::new();
    for tier in [
        "capacity",
        "allocatable",
        "placeable",
        "requested",
        "pending",
        "queued",
    ] {
        let sum: f64 = reports.iter().map(|r| f(&r["fleet"]["gpus"][tier])).sum();
        tiers.insert(format!("tier={tier}"), sum);
    }
    assert!(tiers["tier=requested"] > f(&reports[0]["fleet"]["gpus"]["requested"]));
    wait_for(&prom, "tier:gpuledger_fleet_gpus:sum", &tiers);
    // Each cluster's own figure, once.
    let mut per_cluster = BTreeMap::new();
    for (r, c) in reports.iter().zip(["east", "west"]) {
        per_cluster.insert(
            format!("cluster={c},tier=requested"),
            f(&r["fleet"]["gpus"]["requested"]),
        );
    }
    wait_for(
        &prom,
        "cluster_tier:gpuledger_fleet_gpus:max{tier=\"requested\"}",
        &per_cluster,
    );
    let both = BTreeMap::from([(String::new(), 2.0)]);
    wait_for(&prom, ":gpuledger_clusters:count", &both);
    let placeable = tiers["tier=placeable"];
    let util = BTreeMap::from([(String::new(), tiers["tier=requested"] / placeable)]);
    wait_for(&prom, ":gpuledger_fleet_utilisation:ratio", &util);

    // Per tenant across clusters: tenants merge by name; `search` is in both.
    let mut tenants: BTreeMap<String, f64> = BTreeMap::new();
    for r in &reports {
        for t in r["tenants"].as_array().unwrap() {
            *tenants
                .entry(format!("tenant={}", t["name"].as_str().unwrap()))
                .or_default() += f(&t["gpus_requested"]);
        }
    }
    let in_both = |r: &Value| {
        r["tenants"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "search" && f(&t["gpus_requested"]) > 0.0)
    };
    assert!(
        reports.iter().all(in_both),
        "tenant search spans both clusters"
    );
    wait_for(
        &prom,
        "sum by (tenant) (tenant_state:gpuledger_tenant_gpus:sum{state=\"requested\"})",
        &tenants,
    );
    let free: f64 = reports
        .iter()
        .map(|r| f(&r["fleet"]["shortage"]["free_placeable"]))
        .sum();
    let free = BTreeMap::from([(String::new(), free)]);
    wait_for(&prom, ":gpuledger_fleet_free_placeable_gpus:sum", &free);

    // No series without its cluster reached Prometheus.
    assert_eq!(
        prom.query("{__name__=~\"gpuledger_.+\", job=\"gpuledger\", cluster=\"\"}"),
        json!([])
    );
    // Every rule records something.
    for name in recorded() {
        assert!(!query(&prom, &name).is_empty(), "{name} recorded nothing");
    }
    dashboard_answers(&prom, &[&text_east, &text_west]);
}

/// Every query of the fleet dashboard (its panels and its variable) names only recorded rules and
/// metrics the exporters serve, and answers on the two clusters.
fn dashboard_answers(prom: &Prometheus, served: &[&str]) {
    let dashboard: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture(DASHBOARD)).unwrap()).unwrap();
    let rules = recorded();
    let names: BTreeSet<&str> = served
        .iter()
        .flat_map(|t| t.lines())
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split(['{', ' ']).next())
        .collect();
    let mut exprs: Vec<String> = dashboard["panels"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["targets"].as_array().unwrap())
        .map(|t| t["expr"].as_str().unwrap().to_string())
        .collect();
    assert!(exprs.len() >= 10);
    for v in dashboard["templating"]["list"].as_array().unwrap() {
        if let Some(q) = v["query"]["query"].as_str() {
            // `label_values(metric, label)`: the metric must answer.
            let metric = q.trim_start_matches("label_values(").split(',').next();
            exprs.push(metric.unwrap().trim().to_string());
        }
    }
    for e in &exprs {
        for word in e
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
            .filter(|w| w.contains(':') || w.starts_with("gpuledger_"))
        {
            assert!(
                rules.contains(word) || names.contains(word),
                "the dashboard queries {word}, which no rule records and no exporter serves"
            );
        }
        let q = e.replace("$cluster", ".*");
        assert!(
            !query(prom, &q).is_empty(),
            "the dashboard's {e} answers nothing"
        );
    }
}
