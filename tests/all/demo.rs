//! The bundled demo fleet, checked figure by figure against `fixtures/demo/expected.json`, which
//! `fixtures/demo/generate.py` computes from the generated objects with its own implementation of the
//! counting rules (an independent oracle, not the tool's own output).

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::support::{fixture, gpuledger, inventory_json, root};

const DEMO: &str = "fixtures/demo/cluster.yaml";
const CONFIG: &str = "fixtures/demo/.gpuledger.yaml";

fn demo() -> Value {
    inventory_json(&["--snapshot", DEMO, "--config", CONFIG])
}

fn expected() -> Value {
    let text = std::fs::read_to_string(fixture("fixtures/demo/expected.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn fleet_counts_match_the_oracle() {
    let (r, e) = (demo(), expected());
    let f = &r["fleet"];
    assert_eq!(r["schema"], "gpuledger.report/v1");
    for k in [
        "capacity",
        "allocatable",
        "placeable",
        "requested",
        "pending",
    ] {
        assert_eq!(f["gpus"][k], e[k], "fleet.gpus.{k}");
    }
    for k in ["gpu_nodes", "gpu_namespaces", "public_routes"] {
        assert_eq!(f[k], e[k], "fleet.{k}");
    }
    // No metrics source: used is unknown (null) with a reason, never 0.
    assert_eq!(f["gpus"]["used"], Value::Null);
    assert!(
        f["unknown"]["gpus.used"]
            .as_str()
            .unwrap()
            .contains("no metrics source")
    );
    assert_eq!(f["shortage"]["kind"], e["diagnosis"]);
    let util = f["utilisation"].as_f64().unwrap();
    assert!((0.70..0.90).contains(&util), "demo utilisation {util}");
}

#[test]
fn excluded_nodes_and_reasons_match_the_oracle() {
    let (r, e) = (demo(), expected());
    let got: BTreeMap<String, Value> = r["fleet"]["excluded_nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["node"].as_str().unwrap().to_string(),
                n["reasons"].clone(),
            )
        })
        .collect();
    let want: BTreeMap<String, Value> =
        serde_json::from_value(e["excluded_nodes"].clone()).unwrap();
    assert_eq!(got, want);
}

#[test]
fn tenants_match_the_oracle_and_add_up_to_the_fleet() {
    let (r, e) = (demo(), expected());
    let tenants = r["tenants"].as_array().unwrap();
    let got: BTreeMap<String, Value> = tenants
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_string(),
                json!({"requested": t["gpus_requested"], "pending": t["gpus_pending"]}),
            )
        })
        .collect();
    let want: BTreeMap<String, Value> = serde_json::from_value(e["tenants"].clone()).unwrap();
    assert_eq!(got, want);
    let sum = |k: &str| tenants.iter().map(|t| t[k].as_u64().unwrap()).sum::<u64>();
    assert_eq!(
        sum("gpus_requested"),
        r["fleet"]["gpus"]["requested"].as_u64().unwrap()
    );
    assert_eq!(
        sum("gpus_pending"),
        r["fleet"]["gpus"]["pending"].as_u64().unwrap()
    );
    // Largest first.
    let req: Vec<u64> = tenants
        .iter()
        .map(|t| t["gpus_requested"].as_u64().unwrap())
        .collect();
    assert!(req.windows(2).all(|w| w[0] >= w[1]), "{req:?}");
    // Every tenant's GPUs are unknown-used, not zero-used.
    assert!(tenants.iter().all(|t| t["gpus_used"].is_null()));
}

#[test]
fn workloads_and_graphs_match_the_oracle() {
    let (r, e) = (demo(), expected());
    let got: BTreeMap<String, Value> = r["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            (
                format!("{}/{}/{}", w["namespace"].as_str().unwrap(), w["kind"].as_str().unwrap(), w["name"].as_str().unwrap()),
                json!({"requested": w["gpus"], "pending": w["gpus_pending"], "tenant": w["tenant"]}),
            )
        })
        .collect();
    let want: BTreeMap<String, Value> = serde_json::from_value(e["workloads"].clone()).unwrap();
    assert_eq!(got, want);

    let graphs: BTreeMap<String, Value> = r["graphs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            let roles: BTreeMap<String, Value> = g["roles"]
                .as_array()
                .unwrap()
                .iter()
                .map(|ro| {
                    (
                        ro["name"].as_str().unwrap().to_string(),
                        json!([ro["replicas"], ro["gpus_per_replica"]]),
                    )
                })
                .collect();
            (
                format!(
                    "{}/{}",
                    g["namespace"].as_str().unwrap(),
                    g["name"].as_str().unwrap()
                ),
                json!(roles),
            )
        })
        .collect();
    let want: BTreeMap<String, Value> = serde_json::from_value(e["graphs"].clone()).unwrap();
    assert_eq!(graphs, want);
    let prod = r["graphs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["name"] == "llama-70b-prod")
        .unwrap();
    assert_eq!(prod["shape"], "decode 10×8 + prefill 10×8 = 160");
    assert_eq!(prod["gpus"], 160);
}

#[test]
fn mig_and_shared_gpus_are_on_their_own_lines() {
    let (r, e) = (demo(), expected());
    let other: BTreeMap<String, (Value, Value)> = r["fleet"]["other_gpus"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["resource"].as_str().unwrap().to_string(),
                (o["capacity"].clone(), o["requested"].clone()),
            )
        })
        .collect();
    for (res, want) in e["mig"].as_object().unwrap() {
        assert_eq!(
            other[res],
            (want["capacity"].clone(), want["requested"].clone()),
            "{res}"
        );
    }
    assert_eq!(
        other["nvidia.com/gpu.shared"],
        (
            e["shared"]["capacity"].clone(),
            e["shared"]["requested"].clone()
        )
    );
}

#[test]
fn routes_are_traced_to_tenants() {
    let r = demo();
    let routes = r["routes"].as_array().unwrap();
    assert_eq!(
        routes.len() as u64,
        r["fleet"]["public_routes"].as_u64().unwrap()
    );
    for route in routes {
        assert!(
            !route["tenants"].as_array().unwrap().is_empty(),
            "untraced route {route}"
        );
    }
    // The ALB group member without its own scheme is public through its group.
    assert!(
        routes
            .iter()
            .any(|x| x["public_because"].as_str().unwrap().contains("ALB group"))
    );
}

#[test]
fn table_output_snapshot() {
    let out = gpuledger(&root())
        .args(["inventory", "--snapshot", DEMO, "--config", CONFIG])
        .output()
        .unwrap();
    assert!(out.status.success());
    insta::assert_snapshot!("demo_table", String::from_utf8(out.stdout).unwrap());
}

/// The demo at 80 columns, as a terminal shows it: every line fits, text columns wrap between
/// words, numbers stay whole; `--all` shows the rows a terminal otherwise counts.
#[test]
fn table_at_80_columns() {
    let out = gpuledger(&root())
        .args(["inventory", "--snapshot", DEMO, "--config", CONFIG])
        .env("COLUMNS", "80")
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for l in text.lines() {
        assert!(l.chars().count() <= 80, "{l:?}");
    }
    assert!(!text.contains('\u{1b}'), "no colour through a pipe");
    insta::assert_snapshot!("demo_table_80", text);
    let all = gpuledger(&root())
        .args(["inventory", "--snapshot", DEMO, "--config", CONFIG, "--all"])
        .output()
        .unwrap();
    let all = String::from_utf8(all.stdout).unwrap();
    // A limit hides three rows or more, never one or two (tests/all/layout.rs).
    assert!(!all.contains("more not shown"), "{all}");
}

#[test]
fn markdown_output_snapshot() {
    let out = gpuledger(&root())
        .args([
            "inventory",
            "--snapshot",
            DEMO,
            "--config",
            CONFIG,
            "--format",
            "markdown",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let md = String::from_utf8(out.stdout).unwrap();
    assert!(md.contains("```mermaid\n%%{init:") && md.contains("}%%\npie showData"));
    assert_eq!(
        md.matches("<details>").count(),
        md.matches("</details>").count()
    );
    insta::assert_snapshot!("demo_markdown", md);
}

#[test]
fn output_file_and_the_default_config_in_the_working_directory() {
    // Run from the demo folder without --config: its .gpuledger.yaml is picked up.
    let dir = tempfile::tempdir().unwrap();
    let out_file = dir.path().join("report.json");
    let out = gpuledger(&fixture("fixtures/demo"))
        .args([
            "inventory",
            "--snapshot",
            "cluster.yaml",
            "--format",
            "json",
            "--output",
        ])
        .arg(&out_file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("using config"), "{stderr}");
    let from_file: Value =
        serde_json::from_str(&std::fs::read_to_string(&out_file).unwrap()).unwrap();
    let direct = demo();
    assert_eq!(from_file["fleet"], direct["fleet"]);
    assert_eq!(from_file["tenants"], direct["tenants"]);
}

/// On a terminal the table is in colour (bold headings, the header row); `NO_COLOR` turns it off,
/// and through a pipe there is none (the other tests). A real pseudo-terminal, through `script`.
#[test]
fn colour_on_a_terminal_only_and_never_with_no_color() {
    let cmd = format!(
        "{} inventory --snapshot {DEMO} --config {CONFIG}",
        env!("CARGO_BIN_EXE_gpuledger")
    );
    let run = |no_color: Option<&str>| {
        let mut c = std::process::Command::new("script");
        c.args(["-qec", &cmd, "/dev/null"])
            .current_dir(root())
            .env("COLUMNS", "100")
            .env("TERM", "xterm")
            .env_remove("NO_COLOR")
            .env_remove("CI");
        if let Some(v) = no_color {
            c.env("NO_COLOR", v);
        }
        let out = c.output().expect("script(1) from util-linux");
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let coloured = run(None);
    assert!(
        coloured.contains("\u{1b}[1mGPU fleet inventory\u{1b}[0m"),
        "{coloured}"
    );
    let plain = run(Some("1"));
    assert!(plain.contains("GPU fleet inventory"), "{plain}");
    assert!(!plain.contains('\u{1b}'), "{plain}");
    // At the terminal's width.
    assert!(
        plain.lines().all(|l| l.trim_end().chars().count() <= 100),
        "{plain}"
    );
}

/// `inventory --by node`: every GPU node's free GPUs as the oracle computes them (allocatable
/// minus requested on placeable nodes), the totals per GPU model and how the free GPUs split, and
/// the next step for the five 8-GPU pods that fit nowhere: the 23 nodes with 3 or 4 free are
/// fragmented, five empty 8-GPU nodes would hold them, and draining five half-full nodes (their
/// 4-GPU pods moving onto other nodes' free GPUs) makes room in the fleet as it is.
#[test]
fn free_gpus_per_node_and_the_next_step_match_the_oracle() {
    let out = gpuledger(&root())
        .args([
            "inventory",
            "--snapshot",
            DEMO,
            "--config",
            CONFIG,
            "--by",
            "node",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let e = expected();
    let view = &r["nodes"];
    let free: BTreeMap<String, u64> = view["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["placeable"] == true)
        .map(|n| {
            (
                n["node"].as_str().unwrap().to_string(),
                n["free"].as_u64().unwrap(),
            )
        })
        .collect();
    let want: BTreeMap<String, u64> = serde_json::from_value(e["free"].clone()).unwrap();
    let want: BTreeMap<String, u64> = want
        .into_iter()
        .filter(|(n, _)| free.contains_key(n))
        .collect();
    assert_eq!(free, want);
    assert_eq!(free.values().sum::<u64>(), 89);
    assert_eq!(view["nodes"].as_array().unwrap().len(), 70);
    let h100 = &view["models"][0];
    assert_eq!(h100["model"], "NVIDIA-H100-80GB-HBM3");
    assert_eq!(
        (
            &h100["nodes"],
            &h100["allocatable"],
            &h100["requested"],
            &h100["free"]
        ),
        (&json!(69), &json!(527), &json!(430), &json!(89))
    );
    assert_eq!(h100["largest_free_block"], 4);
    assert_eq!(
        h100["free_blocks"],
        json!([{"free": 4, "nodes": 20}, {"free": 3, "nodes": 3}])
    );
    let step = &r["fleet"]["shortage"]["next_step"];
    assert_eq!(step["fragmented"].as_array().unwrap().len(), 23);
    assert_eq!(step["fragmented_free"], 89);
    assert_eq!(
        step["nodes_needed"],
        json!([{"model": "NVIDIA-H100-80GB-HBM3", "gpus_per_node": 8, "nodes": 5, "pods": 5, "gpus": 40}])
    );
    assert_eq!(step["too_large"], json!([]));
    let drain = &step["drain"];
    assert_eq!(drain["nodes"].as_array().unwrap().len(), 5);
    assert_eq!(
        (&drain["gpus"], drain["pods"].as_array().unwrap().len()),
        (&json!(20), 5)
    );
    // The terminal view names the blocks and the step.
    let text = gpuledger(&root())
        .args([
            "inventory",
            "--snapshot",
            DEMO,
            "--config",
            CONFIG,
            "--by",
            "node",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("20×4 + 3×3"), "{text}");
    assert!(
        text.contains(
            "Or add capacity: 5 empty nodes of 8 GPUs (NVIDIA-H100-80GB-HBM3) for 5 pods."
        ),
        "{text}"
    );
}
