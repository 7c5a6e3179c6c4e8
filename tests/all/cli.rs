//! The command line: help, bad input (exit 2 with file and line), several snapshot files, stdin.

use super::support::{fixture, gpuledger, inventory_json, root};

fn fails_with(args: &[&str], needles: &[&str]) {
    let out = gpuledger(&root()).args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "exit code for {args:?}");
    assert!(out.stdout.is_empty(), "nothing on stdout on error");
    let err = String::from_utf8_lossy(&out.stderr);
    for n in needles {
        assert!(err.contains(n), "stderr for {args:?} lacks {n:?}:\n{err}");
    }
}

#[test]
fn broken_yaml_names_file_and_line() {
    fails_with(
        &["inventory", "--snapshot", "tests/fixtures/broken.yaml"],
        &["tests/fixtures/broken.yaml:7:", "flow mapping"],
    );
}

#[test]
fn wrong_type_names_file_and_line() {
    fails_with(
        &["inventory", "--snapshot", "tests/fixtures/wrong-type.yaml"],
        &["tests/fixtures/wrong-type.yaml:7:"],
    );
}

#[test]
fn fractional_gpu_names_the_object_file_and_line() {
    fails_with(
        &[
            "inventory",
            "--snapshot",
            "tests/fixtures/fractional-gpu.yaml",
        ],
        &[
            "tests/fixtures/fractional-gpu.yaml:13:",
            "Pod research/notebook",
            "0.5",
            "whole number",
        ],
    );
    fails_with(
        &[
            "inventory",
            "--snapshot",
            "tests/fixtures/fractional-gpu.json",
        ],
        &[
            "tests/fixtures/fractional-gpu.json:4:",
            "Pod ml/half",
            "0.5",
        ],
    );
}

#[test]
fn unknown_config_key_is_named() {
    fails_with(
        &[
            "inventory",
            "--snapshot",
            "fixtures/demo/cluster.yaml",
            "--config",
            "tests/fixtures/bad-config.yaml",
        ],
        &["tests/fixtures/bad-config.yaml:5:", "tolerated_taint"],
    );
}

#[test]
fn missing_and_empty_inputs_are_errors_not_zero() {
    fails_with(
        &[
            "inventory",
            "--snapshot",
            "tests/fixtures/does-not-exist.yaml",
        ],
        &["cannot read tests/fixtures/does-not-exist.yaml"],
    );
    fails_with(
        &["inventory", "--snapshot", "tests/fixtures/empty.yaml"],
        &["tests/fixtures/empty.yaml", "no Kubernetes objects"],
    );
    fails_with(
        &[
            "inventory",
            "--snapshot",
            "fixtures/demo/cluster.yaml",
            "--config",
            "nope.yaml",
        ],
        &["cannot read nope.yaml"],
    );
    // Without a snapshot the cluster is read; with no kubeconfig and no in-cluster account that is
    // an error, not an empty fleet.
    let home = tempfile::tempdir().unwrap();
    let out = gpuledger(&root())
        .arg("inventory")
        .env("HOME", home.path())
        .env_remove("KUBERNETES_SERVICE_HOST")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no cluster to read"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn several_snapshot_files_make_one_fleet() {
    let r = inventory_json(&[
        "--snapshot",
        "tests/fixtures/split-nodes.yaml",
        "--snapshot",
        "tests/fixtures/split-pods.json",
    ]);
    let f = &r["fleet"];
    assert_eq!(f["gpu_nodes"], 2);
    assert_eq!(f["gpus"]["capacity"], 20);
    assert_eq!(f["gpus"]["placeable"], 20);
    // 1e1 GPUs on gpu-a; the Succeeded pod does not count.
    assert_eq!(f["gpus"]["requested"], 10);
    assert_eq!(f["gpus"]["pending"], 8);
    // 6 + 4 GPUs free cover the 8 pending, but no single node has 8: a placement problem.
    assert_eq!(f["shortage"]["kind"], "placement");
    assert_eq!(f["shortage"]["free_placeable"], 10);
    assert_eq!(f["shortage"]["largest_free_block"], 6);
    let w = r["workloads"].as_array().unwrap();
    let ids: Vec<String> = w
        .iter()
        .map(|w| {
            format!(
                "{}/{} {} {}",
                w["kind"].as_str().unwrap(),
                w["name"].as_str().unwrap(),
                w["tenant"].as_str().unwrap(),
                w["shape_source"].as_str().unwrap()
            )
        })
        .collect();
    // Owners are missing from the dump: the ReplicaSet's Deployment comes from pod-template-hash,
    // the Dynamo graph from its label; shapes are inferred from the pods.
    assert_eq!(
        ids,
        [
            "Deployment/llm acme pods",
            "DynamoGraphDeployment/chat acme pods"
        ]
    );
    assert_eq!(w[1]["shape"], "decode 1×8 = 8");
    assert_eq!(w[1]["gpus_pending"], 8);
}

#[test]
fn snapshot_from_standard_input() {
    let text = std::fs::read(fixture("tests/fixtures/split-pods.json")).unwrap();
    let out = gpuledger(&root())
        .args(["inventory", "--snapshot", "-", "--format", "json"])
        .write_stdin(text)
        .output()
        .unwrap();
    // No node in this input: the pods count, what needs nodes is unknown (not 0), and the report
    // says it is incomplete.
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["fleet"]["gpus"]["requested"], 10);
    assert!(r["fleet"]["gpu_nodes"].is_null());
    assert!(r["fleet"]["gpus"]["placeable"].is_null());
    assert!(r["fleet"]["utilisation"].is_null());
    assert_eq!(r["incomplete"][0]["resource"], "nodes");
}

/// A pipe (`--snapshot <(kubectl get pods -o json)`) is read as standard input is: whole, once.
#[cfg(unix)]
#[test]
fn snapshot_from_a_pipe() {
    let text = std::fs::read(fixture("tests/fixtures/split-pods.json")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pods.json");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let writer = {
        let (fifo, text) = (fifo.clone(), text.clone());
        std::thread::spawn(move || std::fs::write(fifo, text).unwrap())
    };
    let piped = gpuledger(&root())
        .args(["inventory", "--format", "json", "--snapshot"])
        .arg(&fifo)
        .output()
        .unwrap();
    writer.join().unwrap();
    let stdin = gpuledger(&root())
        .args(["inventory", "--snapshot", "-", "--format", "json"])
        .write_stdin(text)
        .output()
        .unwrap();
    assert_eq!(
        piped.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&piped.stderr)
    );
    let figures = |out: &[u8]| {
        let mut r: serde_json::Value = serde_json::from_slice(out).unwrap();
        r["provenance"] = serde_json::Value::Null;
        r["reported_at"] = serde_json::Value::Null;
        r
    };
    assert_eq!(figures(&piped.stdout)["fleet"]["gpus"]["requested"], 10);
    assert_eq!(
        figures(&piped.stdout)["fleet"],
        figures(&stdin.stdout)["fleet"]
    );
}

#[test]
fn help_snapshots() {
    for (name, args) in [
        ("help", vec!["--help"]),
        ("inventory_help", vec!["inventory", "--help"]),
        ("render_help", vec!["render", "--help"]),
        ("check_help", vec!["check", "--help"]),
        ("github_comment_help", vec!["github", "comment", "--help"]),
        ("github_issue_help", vec!["github", "issue", "--help"]),
        ("plan_help", vec!["plan", "--help"]),
        ("docs_help", vec!["docs", "--help"]),
        ("cost_help", vec!["cost", "--help"]),
        ("headroom_help", vec!["headroom", "--help"]),
        ("serve_help", vec!["serve", "--help"]),
        ("trend_help", vec!["trend", "--help"]),
    ] {
        let out = gpuledger(&root())
            .args(&args)
            .env("COLUMNS", "100")
            .output()
            .unwrap();
        assert!(out.status.success());
        insta::assert_snapshot!(name, String::from_utf8(out.stdout).unwrap());
    }
}

/// At 80 columns no example command is wrapped by clap: a line that goes on a command is the
/// continuation of a line ending in `\`, and no line is wider than the terminal.
#[test]
fn help_examples_keep_each_command_on_its_lines_at_80_columns() {
    for args in [
        vec!["--help"],
        vec!["inventory", "--help"],
        vec!["render", "--help"],
        vec!["drift", "--help"],
        vec!["snapshot", "--help"],
        vec!["check", "--help"],
        vec!["github", "comment", "--help"],
        vec!["github", "issue", "--help"],
        vec!["plan", "--help"],
        vec!["docs", "--help"],
        vec!["headroom", "--help"],
    ] {
        let out = gpuledger(&root())
            .args(&args)
            .env("COLUMNS", "80")
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        for l in text.lines() {
            assert!(l.chars().count() <= 80, "{args:?}: wider than 80: {l:?}");
        }
        let examples = text.split("Examples:\n").nth(1).expect("examples");
        let mut previous = "";
        for l in examples
            .lines()
            .take_while(|l| l.is_empty() || l.starts_with("  "))
        {
            let command = l.starts_with("  gpuledger ") || l.starts_with("  kubectl ");
            let continued = l.starts_with("      ") && previous.ends_with('\\');
            assert!(
                l.is_empty() || l.starts_with("  # ") || command || continued,
                "{args:?}: an example wrapped mid-command: {l:?}"
            );
            previous = l;
        }
    }
}
