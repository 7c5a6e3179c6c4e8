//! Reading the fleet through the Kubernetes API: the emulator serves fixture snapshots, and
//! `inventory --kubeconfig` must give what `inventory --snapshot` gives on the same file.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::kube_emulator::{Emulator, EmulatorOptions};
use super::support::{fixture, gpuledger, root};

fn options(snapshot: &str) -> EmulatorOptions {
    EmulatorOptions {
        snapshots: vec![fixture(snapshot)],
        convert_versions: true,
        ..EmulatorOptions::default()
    }
}

/// `inventory` on the emulator: exit code, JSON report (if any), stderr.
fn live_inventory(emu: &Emulator, extra: &[&str]) -> (i32, Option<Value>, String) {
    let out = gpuledger(&root())
        .args(["inventory", "--format", "json", "--kubeconfig"])
        .arg(emu.kubeconfig_path())
        .args(extra)
        .env_remove("KUBECONFIG")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        serde_json::from_slice(&out.stdout).ok(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn snapshot_inventory(snapshot: &str, extra: &[&str]) -> Value {
    let out = gpuledger(&root())
        .args(["inventory", "--format", "json", "--snapshot"])
        .arg(fixture(snapshot))
        .args(extra)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The report without what names its input.
fn comparable(mut v: Value) -> Value {
    v["sources"] = Value::Null;
    // Where and when each was read differs by construction.
    v["provenance"] = Value::Null;
    for section in ["workloads", "graphs"] {
        for w in v[section].as_array_mut().unwrap() {
            w["source"] = Value::Null;
        }
    }
    v
}

#[test]
fn the_cluster_and_its_snapshot_give_the_same_inventory() {
    let cfg = ["--config", "fixtures/demo/.gpuledger.yaml"];
    let emu = Emulator::start(EmulatorOptions {
        page_size: Some(7),
        ..options("fixtures/demo/cluster.yaml")
    });
    let (code, live, err) = live_inventory(&emu, &cfg);
    assert_eq!(code, 0, "{err}");
    let live = live.unwrap();
    assert_eq!(
        comparable(live.clone()),
        comparable(snapshot_inventory("fixtures/demo/cluster.yaml", &cfg))
    );
    assert_eq!(live["complete"], true);
    assert!(
        live["sources"][0].as_str().unwrap().starts_with("cluster "),
        "{}",
        live["sources"]
    );
    // Paginated with the server's page size of 7, never Secrets.
    let reqs = emu.requests();
    let pod_pages = reqs
        .iter()
        .filter(|r| r.target.starts_with("/api/v1/pods?"))
        .count();
    assert!(pod_pages >= 114 / 7, "{pod_pages} pod pages");
    assert!(reqs.iter().any(|r| r.target.contains("continue=")));
    assert!(!reqs.iter().any(|r| r.target.contains("secrets")));
    assert!(reqs.iter().all(|r| r.method == "GET"), "read-only");
}

#[test]
fn a_synthetic_fleet_reads_the_same_through_the_api() {
    // tests/fixtures/synthetic-small.json: `synth-fleet --nodes 40 --pods 600 --namespaces 20
    // --compact --seed 7`, with Dynamo graphs, ReplicaSets, StatefulSets, Jobs and Ingresses.
    let emu = Emulator::start(EmulatorOptions {
        page_size: Some(50),
        ..options("tests/fixtures/synthetic-small.json")
    });
    let (code, live, err) = live_inventory(&emu, &[]);
    assert_eq!(code, 0, "{err}");
    let live = live.unwrap();
    assert_eq!(
        comparable(live.clone()),
        comparable(snapshot_inventory(
            "tests/fixtures/synthetic-small.json",
            &[]
        ))
    );
    assert!(live["fleet"]["gpus"]["requested"].as_u64().unwrap() > 0);
    assert!(!live["graphs"].as_array().unwrap().is_empty());
    // The same with lists written in kubectl's alphabetical order (`items` before `kind`).
    let alphabetical = Emulator::start(EmulatorOptions {
        page_size: Some(50),
        alphabetical_keys: true,
        ..options("tests/fixtures/synthetic-small.json")
    });
    let (code, again, err) = live_inventory(&alphabetical, &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(comparable(again.unwrap()), comparable(live));
}

#[test]
fn the_drift_fixture_and_a_cluster_without_dynamo_or_lws() {
    // The drift fixture serves DynamoGraphDeployments in both versions.
    let emu = Emulator::start(options("tests/fixtures/drift/cluster.yaml"));
    let (code, live, err) = live_inventory(&emu, &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        comparable(live.unwrap()),
        comparable(snapshot_inventory("tests/fixtures/drift/cluster.yaml", &[]))
    );
    // No CRDs at all: nothing to list for them, and no error.
    let emu = Emulator::start(EmulatorOptions {
        snapshots: vec![
            fixture("tests/fixtures/split-nodes.yaml"),
            fixture("tests/fixtures/split-pods.json"),
        ],
        ..EmulatorOptions::default()
    });
    let (code, live, err) = live_inventory(&emu, &[]);
    assert_eq!(code, 0, "{err}");
    let live = live.unwrap();
    assert_eq!(live["fleet"]["gpus"]["requested"], 10);
    assert!(
        !emu.requests()
            .iter()
            .any(|r| r.target.contains("dynamographdeployments"))
    );
}

#[test]
fn dynamo_served_only_as_v1beta1() {
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("beta.yaml");
    std::fs::write(
        &snap,
        "apiVersion: nvidia.com/v1beta1\nkind: DynamoGraphDeployment\nmetadata: {name: g, namespace: ml}\nspec:\n  components:\n  - name: decode\n    type: decode\n    replicas: 2\n    podTemplate: {spec: {containers: [{name: main, resources: {limits: {nvidia.com/gpu: 4}}}]}}\n",
    )
    .unwrap();
    let emu = Emulator::start(EmulatorOptions {
        snapshots: vec![snap],
        ..EmulatorOptions::default()
    });
    let (code, live, err) = live_inventory(&emu, &[]);
    assert_eq!(code, 0, "{err}");
    let g = &live.unwrap()["graphs"][0];
    assert_eq!(g["shape"], "decode 2×4 = 8");
    assert!(emu.requests().iter().any(|r| {
        r.target
            .starts_with("/apis/nvidia.com/v1beta1/dynamographdeployments")
    }));
}

#[test]
fn a_forbidden_resource_makes_the_report_incomplete() {
    let emu = Emulator::start(EmulatorOptions {
        forbidden: vec!["pods".into()],
        ..options("fixtures/demo/cluster.yaml")
    });
    let (code, live, err) = live_inventory(&emu, &["--config", "fixtures/demo/.gpuledger.yaml"]);
    assert_eq!(code, 2, "an incomplete report is an error: {err}");
    assert!(
        err.contains("report incomplete: pods") && err.contains("`list`"),
        "{err}"
    );
    let live = live.expect("the partial report is still written");
    assert_eq!(live["complete"], false);
    assert_eq!(live["incomplete"][0]["resource"], "pods");
    // Nodes were still read.
    assert_eq!(live["fleet"]["gpu_nodes"], 70);
    // What a person reads opens with the banner, and no figure built on pods reads as zero.
    for format in ["markdown", "table"] {
        let out = gpuledger(&root())
            .args(["inventory", "--format", format, "--kubeconfig"])
            .arg(emu.kubeconfig_path())
            .args(["--config", "fixtures/demo/.gpuledger.yaml"])
            .env_remove("KUBECONFIG")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let text = String::from_utf8_lossy(&out.stdout);
        let after_title: Vec<&str> = text
            .lines()
            // Blank lines, and the empty quote lines that part an alert's paragraphs.
            .filter(|l| !l.trim().trim_start_matches('>').trim().is_empty())
            .skip(1)
            .take(3)
            .collect();
        // A caution alert right under the title, naming the resource.
        assert!(after_title[0].contains("CAUTION"), "{format}: {text}");
        assert!(after_title[1].contains("INCOMPLETE"), "{format}: {text}");
        assert!(after_title[2].contains("pods"), "{format}: {text}");
        assert!(
            text.contains("unknown") && !text.contains("0 GPUs requested"),
            "{format}: {text}"
        );
        assert!(!text.contains("0.0%"), "{format}: {text}");
    }
}

#[test]
fn retries_after_two_503s() {
    let emu = Emulator::start(EmulatorOptions {
        fail_first: 2,
        ..options("fixtures/demo/cluster.yaml")
    });
    let (code, live, err) = live_inventory(&emu, &["--config", "fixtures/demo/.gpuledger.yaml"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(live.unwrap()["fleet"]["gpus"]["requested"], 430);
    let statuses: Vec<u16> = emu
        .requests()
        .iter()
        .filter(|r| r.target.starts_with("/api/v1/nodes?"))
        .map(|r| r.status)
        .collect();
    assert_eq!(statuses, [503, 503, 200]);
}

#[test]
fn a_server_slower_than_the_timeout() {
    let emu = Emulator::start(EmulatorOptions {
        latency: Duration::from_secs(5),
        ..options("fixtures/demo/cluster.yaml")
    });
    let started = Instant::now();
    let (code, _, err) = live_inventory(&emu, &["--timeout", "2", "--request-timeout", "1"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--timeout 2s") || err.contains("timed out"),
        "{err}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "gave up in {:?}",
        started.elapsed()
    );
}

#[test]
fn unreachable_cluster_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let kc = dir.path().join("kubeconfig");
    std::fs::write(
        &kc,
        "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: \"http://127.0.0.1:9\"}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\nusers: [{name: u, user: {token: secret-token-value}}]\n",
    )
    .unwrap();
    let out = gpuledger(&root())
        .args([
            "inventory",
            "--timeout",
            "3",
            "--request-timeout",
            "1",
            "--kubeconfig",
        ])
        .arg(&kc)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("127.0.0.1:9"), "{err}");
    assert!(
        !err.contains("secret-token-value"),
        "the token is never printed"
    );
}

#[test]
fn snapshot_of_the_cluster_reads_back_the_same() {
    let emu = Emulator::start(options("fixtures/demo/cluster.yaml"));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("fleet.json");
    let out = gpuledger(&root())
        .args(["snapshot", "--kubeconfig"])
        .arg(emu.kubeconfig_path())
        .arg("--output")
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(!text.contains("managedFields") && !text.contains("last-applied-configuration"));
    let list: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(list["kind"], "List");
    assert!(
        list["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i["apiVersion"].is_string() && i["kind"].is_string())
    );
    let cfg = ["--config", "fixtures/demo/.gpuledger.yaml"];
    let from_snapshot = {
        let out = gpuledger(&root())
            .args(["inventory", "--format", "json", "--snapshot"])
            .arg(&file)
            .args(cfg)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    assert_eq!(
        comparable(from_snapshot),
        comparable(snapshot_inventory("fixtures/demo/cluster.yaml", &cfg))
    );
}

/// deploy/rbac.yaml grants exactly get, list and watch on exactly the resources the code lists.
#[test]
fn rbac_matches_the_resources_the_code_reads() {
    use std::collections::BTreeSet;
    let text = std::fs::read_to_string(fixture("deploy/rbac.yaml")).unwrap();
    let docs: Vec<Value> = serde_saphyr::from_multiple(&text).unwrap();
    let role = docs
        .iter()
        .find(|d| d["kind"] == "ClusterRole")
        .expect("a ClusterRole");
    let mut granted = BTreeSet::new();
    for rule in role["rules"].as_array().unwrap() {
        let verbs: BTreeSet<&str> = rule["verbs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(
            verbs,
            BTreeSet::from(["get", "list", "watch"]),
            "read-only verbs only: {rule}"
        );
        for g in rule["apiGroups"].as_array().unwrap() {
            for r in rule["resources"].as_array().unwrap() {
                granted.insert((
                    g.as_str().unwrap().to_string(),
                    r.as_str().unwrap().to_string(),
                ));
            }
        }
    }
    let used: BTreeSet<(String, String)> = gpuledger::live::kube::RESOURCES
        .iter()
        .map(|r| (r.group.to_string(), r.plural.to_string()))
        .collect();
    assert_eq!(granted, used);
    assert!(!granted.iter().any(|(_, r)| r == "secrets"));
    // The binding gives the role to the ServiceAccount the CronJob runs as.
    let cron = std::fs::read_to_string(fixture("deploy/cronjob.yaml")).unwrap();
    assert!(cron.contains("serviceAccountName: gpuledger"));
}

/// Two clusters through two contexts: one section each, and the total.
#[test]
fn several_contexts_give_a_section_each_and_a_total() {
    let east = Emulator::start(options("fixtures/demo/cluster.yaml"));
    let west = Emulator::start(options("tests/fixtures/drift/cluster.yaml"));
    let dir = tempfile::tempdir().unwrap();
    let kc = dir.path().join("kubeconfig");
    std::fs::write(
        &kc,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- {{name: east, cluster: {{server: \"{}\"}}}}\n- {{name: west, cluster: {{server: \"{}\"}}}}\ncontexts:\n- {{name: east, context: {{cluster: east, user: u}}}}\n- {{name: west, context: {{cluster: west, user: u}}}}\ncurrent-context: east\nusers: [{{name: u, user: {{token: t}}}}]\n",
            east.url(),
            west.url()
        ),
    )
    .unwrap();
    let out = gpuledger(&root())
        .args([
            "inventory",
            "--format",
            "json",
            "--context",
            "east",
            "--context",
            "west",
            "--kubeconfig",
        ])
        .arg(&kc)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let east_alone = snapshot_inventory("fixtures/demo/cluster.yaml", &[]);
    let west_alone = snapshot_inventory("tests/fixtures/drift/cluster.yaml", &[]);
    let sections: Vec<&str> = r["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(sections, ["east", "west"]);
    assert_eq!(r["clusters"][0]["fleet"], east_alone["fleet"]);
    for k in ["capacity", "placeable", "requested", "pending"] {
        let sum = east_alone["fleet"]["gpus"][k].as_u64().unwrap()
            + west_alone["fleet"]["gpus"][k].as_u64().unwrap();
        assert_eq!(r["fleet"]["gpus"][k], sum, "{k}");
    }
    let tenants: u64 = r["tenants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["gpus_requested"].as_u64().unwrap())
        .sum();
    assert_eq!(tenants, r["fleet"]["gpus"]["requested"].as_u64().unwrap());
    // East has a placement problem, west a capacity problem: the total shows the worse.
    assert_eq!(east_alone["fleet"]["shortage"]["kind"], "placement");
    assert_eq!(west_alone["fleet"]["shortage"]["kind"], "capacity");
    assert_eq!(r["fleet"]["shortage"]["kind"], "capacity");
    assert!(
        r["workloads"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["cluster"] == "west" && w["name"] == "llama")
    );
    assert!(r["fleet"]["gpus"]["used"].is_null());
    // Why used is unknown, for every cluster; graphs say which cluster they run in.
    let why = r["fleet"]["unknown"]["gpus.used"].as_str().unwrap();
    assert!(
        why.starts_with("east: ") && why.contains("; west: "),
        "{why}"
    );
    let table = gpuledger(&root())
        .args([
            "inventory",
            "--context",
            "east",
            "--context",
            "west",
            "--kubeconfig",
        ])
        .arg(&kc)
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&table.stdout);
    assert!(
        table.contains("east:assistant-prod/llama-70b-prod "),
        "{table}"
    );
    assert!(table.contains("west:llm-prod/llama "), "{table}");
}

/// Drift reads the cluster through the same source interface: the same categories as from the
/// snapshot of that cluster.
#[test]
fn drift_against_the_cluster_equals_drift_against_its_snapshot() {
    let emu = Emulator::start(options("tests/fixtures/drift/cluster.yaml"));
    let repo = super::support::Repo::new();
    super::drift::copy_dir(&fixture("tests/fixtures/drift/repo"), repo.path());
    repo.commit("gitops");
    let run = |live: &[&str]| -> Value {
        let out = gpuledger(repo.path())
            .args([
                "drift",
                "--repo",
                ".",
                "--now",
                "2026-11-30",
                "--format",
                "json",
                "--no-fail",
            ])
            .args(live)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<Value>(&out.stdout).unwrap()["drift"].clone()
    };
    let kubeconfig = emu.kubeconfig_path().display().to_string();
    let snapshot = fixture("tests/fixtures/drift/cluster.yaml")
        .display()
        .to_string();
    assert_eq!(
        run(&["--kubeconfig", &kubeconfig]),
        run(&["--snapshot", &snapshot])
    );
}
