//! Hostile and unusual inputs read by the binary (issue 12): numbers that would wrap, huge labels,
//! every YAML style kubectl accepts, and owner references that lie about their owner.

use std::path::Path;

use serde_json::Value;

use super::support::{Repo, gpuledger, render, root};

/// `inventory --snapshot F --format json`: (exit code, report if any, stderr).
fn inventory(file: &Path) -> (i32, Option<serde_json::Value>, String) {
    let out = gpuledger(&root())
        .args(["inventory", "--format", "json", "--snapshot"])
        .arg(file)
        .output()
        .expect("run gpuledger");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    (
        out.status.code().unwrap_or(-1),
        serde_json::from_slice(&out.stdout).ok(),
        err,
    )
}

fn write(dir: &Path, name: &str, text: impl AsRef<[u8]>) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

const NODE: &str = "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\nstatus:\n  capacity: {nvidia.com/gpu: \"8\"}\n  allocatable: {nvidia.com/gpu: \"8\"}\n";

fn deployment(name: &str, replicas: &str, gpus: &str) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\n  namespace: ml\nspec:\n  replicas: {replicas}\n  template:\n    spec:\n      containers:\n      - name: main\n        resources:\n          limits: {{nvidia.com/gpu: \"{gpus}\"}}\n"
    )
}

fn pod(name: &str, gpus: &[&str]) -> String {
    let containers: String = gpus
        .iter()
        .map(|g| format!("  - resources: {{limits: {{nvidia.com/gpu: \"{g}\"}}}}\n"))
        .collect();
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  namespace: ml\nspec:\n  nodeName: n1\n  containers:\n{containers}"
    )
}

fn assert_refused(code: i32, err: &str, object: &str) {
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(object), "the error names {object}: {err}");
    assert!(
        err.contains("too large") || err.contains("overflow"),
        "says why: {err}"
    );
}

// ---------------------------------------------------------------------------------------------
// Class 2: numbers never wrap.

/// 2^62 replicas × 8 GPUs is 2^65: an input error naming the Deployment, not 0.
#[test]
fn declared_shape_that_overflows_is_an_input_error() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "s.yaml",
        format!(
            "{NODE}---\n{}",
            deployment("big", "4611686018427387904", "8")
        ),
    );
    let (code, _, err) = inventory(&f);
    assert_refused(code, &err, "Deployment ml/big");
    assert!(err.contains("s.yaml:"), "names the file and line: {err}");
}

/// Two containers of 2^63 GPUs each: the pod's request overflows.
#[test]
fn pod_request_that_overflows_is_an_input_error() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "s.yaml",
        format!("{NODE}---\n{}", pod("p", &["8Ei", "8Ei"])),
    );
    let (code, _, err) = inventory(&f);
    assert_refused(code, &err, "Pod ml/p");
}

/// Each pod alone fits in 64 bits, their sum does not: the total names what was being added up.
#[test]
fn pods_whose_sum_would_overflow_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "s.json",
        format!(
            "{NODE}---\n{}---\n{}",
            pod("a", &["8Ei"]),
            pod("b", &["8Ei"])
        ),
    );
    let (code, _, err) = inventory(&f);
    assert_refused(code, &err, "the fleet: GPUs requested");
}

/// A LeaderWorkerSet's group and a Dynamo multinode service multiply three numbers.
#[test]
fn multinode_shapes_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    let lws = "apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata: {name: l, namespace: ml}\nspec:\n  replicas: 2\n  leaderWorkerTemplate:\n    size: 4294967296\n    workerTemplate:\n      spec:\n        containers: [{resources: {limits: {nvidia.com/gpu: \"4294967296\"}}}]\n";
    let (code, _, err) = inventory(&write(dir.path(), "l.yaml", lws));
    assert_refused(code, &err, "LeaderWorkerSet ml/l");
    let dgd = "apiVersion: nvidia.com/v1alpha1\nkind: DynamoGraphDeployment\nmetadata: {name: g, namespace: ml}\nspec:\n  services:\n    w:\n      componentType: worker\n      replicas: 3\n      multinode: {nodeCount: 4294967296}\n      resources: {limits: {gpu: \"4294967296\"}}\n";
    let (code, _, err) = inventory(&write(dir.path(), "g.yaml", dgd));
    assert_refused(code, &err, "DynamoGraphDeployment ml/g");
}

/// The same from a repository: the rendered manifest is refused with its object named.
#[test]
fn render_refuses_an_overflowing_manifest() {
    let r = Repo::new();
    r.write(
        "apps/big/d.yaml",
        &deployment("big", "4611686018427387904", "8"),
    )
    .write("apps/ok/d.yaml", &deployment("ok", "2", "4"))
    .commit("big");
    let (code, json, err) = render(r.path(), &[]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("failed to render") && err.contains("big"),
        "{err}"
    );
    let apps = json["desired"]["apps"].as_array().unwrap();
    let app = |name: &str| {
        apps.iter()
            .find(|a| a["path"].as_str().is_some_and(|p| p.ends_with(name)))
            .unwrap_or_else(|| panic!("app {name}: {json}"))
    };
    let big = app("big");
    assert_eq!(big["status"], "error", "{big}");
    let why = big["error"].as_str().unwrap();
    assert!(
        why.contains("Deployment ml/big") && why.contains("too large") && why.contains("d.yaml:"),
        "{why}"
    );
    // The other app still counts, and nothing wrapped to a small figure: the total is unknown,
    // what rendered is 8.
    assert_eq!(app("ok")["gpus_declared"], 8, "{json}");
    assert_eq!(json["desired"]["gpus_declared"], Value::Null, "{json}");
    assert_eq!(json["desired"]["gpus_declared_rendered"], 8, "{json}");
    assert_eq!(big["gpus_declared"], Value::Null, "{big}");
}

// ---------------------------------------------------------------------------------------------
// Class 7: valid YAML is read as YAML.

fn gpus_requested(file: &Path) -> u64 {
    let (code, r, err) = inventory(file);
    assert_eq!(code, 0, "{}: {err}", file.display());
    r.unwrap()["fleet"]["gpus"]["requested"].as_u64().unwrap()
}

#[test]
fn every_yaml_style_kubectl_accepts() {
    let dir = tempfile::tempdir().unwrap();
    let node_json = r#"{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"},"status":{"capacity":{"nvidia.com/gpu":"8"},"allocatable":{"nvidia.com/gpu":"8"}}}"#;
    let pod_flow = "{apiVersion: v1, kind: Pod, metadata: {name: p, namespace: ml}, spec: {nodeName: n1, containers: [{resources: {limits: {nvidia.com/gpu: 2}}}]}}";
    let pod_json = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ml"},"spec":{"nodeName":"n1","containers":[{"resources":{"limits":{"nvidia.com/gpu":"2"}}}]}}"#;
    let cases: Vec<(&str, String)> = vec![
        ("flow mapping", format!("{pod_flow}\n---\n{node_json}\n")),
        (
            "flow mapping first, block after",
            format!("{pod_flow}\n---\n{NODE}"),
        ),
        (
            "document start",
            format!("---\n{node_json}\n---\n{pod_json}\n"),
        ),
        (
            "comments before JSON",
            format!("# fleet\n# dump\n{pod_json}\n---\n{NODE}"),
        ),
        (
            "YAML directive",
            format!("%YAML 1.2\n---\n{pod_flow}\n---\n{NODE}"),
        ),
        (
            "a List in flow style",
            format!("{{apiVersion: v1, kind: List, items: [{pod_flow}, {node_json}]}}\n"),
        ),
        (
            "a flow sequence of objects",
            format!("[{pod_flow}, {node_json}]\n"),
        ),
        (
            "CRLF",
            format!("{}---\n{NODE}", pod("p", &["2"])).replace('\n', "\r\n"),
        ),
        ("BOM", format!("\u{feff}{}---\n{NODE}", pod("p", &["2"]))),
        (
            "BOM before JSON",
            format!("\u{feff}{pod_json}\n{node_json}\n"),
        ),
        (
            "tabs where legal",
            format!("{}---\n{NODE}", pod("p", &["2"])).replace("kind: ", "kind:\t"),
        ),
        ("JSON stream", format!("{pod_json}\n{node_json}\n")),
        ("JSON with CRLF", format!("{pod_json}\r\n{node_json}\r\n")),
    ];
    for (what, text) in cases {
        let f = write(dir.path(), "s.yaml", &text);
        assert_eq!(gpus_requested(&f), 2, "{what}:\n{text}");
    }
}

/// Broken JSON still gets a JSON error with its line; broken flow YAML a YAML one.
#[test]
fn errors_come_from_the_parser_that_got_furthest() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "bad.json",
        "{\"apiVersion\":\"v1\",\n\"kind\":\"Pod\",\n\"metadata\":{\"name\":\"p\"},\n\"spec\": {\"containers\": [}\n}",
    );
    let (code, _, err) = inventory(&f);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("bad.json:4"), "{err}");
}

// ---------------------------------------------------------------------------------------------
// Class 13: owners resolve by uid and agree in kind and name.

#[test]
fn an_owner_uid_of_another_kind_is_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        "{NODE}---\napiVersion: nvidia.com/v1alpha1\nkind: DynamoGraphDeployment\nmetadata: {{name: b, namespace: ml, uid: u-graph}}\nspec:\n  services:\n    w: {{componentType: worker, replicas: 1, resources: {{limits: {{gpu: \"1\"}}}}}}\n---\napiVersion: batch/v1\nkind: Job\nmetadata: {{name: j, namespace: ml, uid: u-job}}\nspec: {{template: {{spec: {{containers: [{{resources: {{limits: {{nvidia.com/gpu: 1}}}}}}]}}}}}}\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: ml\n  ownerReferences: [{{apiVersion: apps/v1, kind: Deployment, name: a, uid: u-graph, controller: true}}]\nspec:\n  nodeName: n1\n  containers: [{{resources: {{limits: {{nvidia.com/gpu: 2}}}}}}]\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: q\n  namespace: ml\n  ownerReferences: [{{apiVersion: batch/v1, kind: Job, name: other, uid: u-job, controller: true}}]\nspec:\n  nodeName: n1\n  containers: [{{resources: {{limits: {{nvidia.com/gpu: 3}}}}}}]\n"
    );
    let f = write(dir.path(), "s.yaml", text);
    let (code, r, err) = inventory(&f);
    assert_eq!(code, 0, "{err}");
    let r = r.unwrap();
    let workloads = r.to_string();
    let rows: Vec<&serde_json::Value> = r["workloads"]
        .as_array()
        .expect("workloads")
        .iter()
        .collect();
    let held = |kind: &str, name: &str| {
        rows.iter()
            .find(|w| w["kind"] == kind && w["name"] == name)
            .map(|w| w["gpus"].as_u64().unwrap())
    };
    assert_eq!(held("Deployment", "a"), Some(2), "{workloads}");
    assert_eq!(held("Job", "other"), Some(3), "{workloads}");
    assert_eq!(held("DynamoGraphDeployment", "b"), Some(0), "{workloads}");
    assert_ne!(held("Job", "j"), Some(3), "{workloads}");
}

// ---------------------------------------------------------------------------------------------
// Class 6: memory bounded by the input.

/// Runs gpuledger with `args`, stdout and stderr into files, and returns (exit code, stdout, stderr,
/// peak resident memory in MB) of that one process (wait4 gives its own rusage, whatever other
/// tests run at the same time).
fn run_measured(dir: &Path, args: &[&std::ffi::OsStr]) -> (i32, Vec<u8>, String, i64) {
    let out_path = dir.join("stdout");
    let err_path = dir.join("stderr");
    // The peak is measured by a small parent (python's os.wait4), not by this test process: Linux
    // keeps a forked child's high-water mark across exec, so a child forked from a large,
    // many-threaded test harness would report the harness's memory as its own.
    const MEASURE: &str = "import os, sys\n\
        out = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)\n\
        err = os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)\n\
        pid = os.fork()\n\
        if pid == 0:\n\
        \x20   os.dup2(out, 1); os.dup2(err, 2)\n\
        \x20   os.execv(sys.argv[3], sys.argv[3:])\n\
        _, status, usage = os.wait4(pid, 0)\n\
        print(os.waitstatus_to_exitcode(status), usage.ru_maxrss)\n";
    let out = std::process::Command::new("python3")
        .current_dir(root())
        .env_remove("GPULEDGER_CONFIG")
        .env_remove("GPULEDGER_LOG")
        .env_remove("KUBECONFIG")
        .arg("-c")
        .arg(MEASURE)
        .arg(&out_path)
        .arg(&err_path)
        .arg(env!("CARGO_BIN_EXE_gpuledger"))
        .args(args)
        .output()
        .expect("python3 runs the measurement");
    let report = String::from_utf8_lossy(&out.stdout);
    let mut fields = report.split_whitespace().map(|f| f.parse::<i64>().unwrap());
    let (code, kib) = (fields.next().unwrap(), fields.next().unwrap());
    (
        i32::try_from(code).unwrap(),
        std::fs::read(&out_path).unwrap(),
        std::fs::read_to_string(&err_path).unwrap(),
        kib / 1024,
    )
}

/// A ~1 MB namespace label used as the tenant, repeated into every row by the old reader; and a
/// ~1 MB tenant label on a pod. The binary stays under 200 MB and its output stays small.
#[test]
fn a_hostile_megabyte_stays_under_200_mb() {
    let dir = tempfile::tempdir().unwrap();
    let huge = "x".repeat(1 << 20);
    let mut text = format!(
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ml\n  labels: {{tenant: {huge}}}\n---\n{NODE}"
    );
    for i in 0..2000 {
        text.push_str(&format!(
            "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: p{i}, namespace: ml}}\nspec: {{nodeName: n1, containers: [{{resources: {{limits: {{nvidia.com/gpu: 1}}}}}}]}}\n"
        ));
    }
    let f = write(dir.path(), "hostile.yaml", &text);
    let (code, stdout, err, rss_mb) = run_measured(
        dir.path(),
        &[
            "inventory".as_ref(),
            "--format".as_ref(),
            "markdown".as_ref(),
            "--snapshot".as_ref(),
            f.as_os_str(),
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(rss_mb < 200, "peak memory {rss_mb} MB");
    assert!(
        stdout.len() < text.len() / 4,
        "output {} bytes for {} bytes of input",
        stdout.len(),
        text.len()
    );
    assert!(
        err.contains("Namespace ml") && err.contains("63"),
        "a note names the object and the limit: {err}"
    );
    assert!(
        err.len() < 4096,
        "the note stays small: {} bytes",
        err.len()
    );

    // A huge tenant label on every pod of a Deployment.
    let mut text = NODE.to_string();
    let label = "y".repeat(1 << 19);
    text.push_str(&format!(
        "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: d, namespace: ml, uid: ud, labels: {{tenant: {label}}}}}\nspec: {{replicas: 2000, template: {{spec: {{containers: [{{resources: {{limits: {{nvidia.com/gpu: 1}}}}}}]}}}}}}\n"
    ));
    text.push_str(&format!(
        "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: p, namespace: ml, labels: {{tenant: {label}}}}}\nspec: {{nodeName: n1, containers: [{{resources: {{limits: {{nvidia.com/gpu: 1}}}}}}]}}\n"
    ));
    let f = write(dir.path(), "hostile2.yaml", &text);
    let (code, stdout, err, rss_mb) = run_measured(
        dir.path(),
        &[
            "inventory".as_ref(),
            "--format".as_ref(),
            "json".as_ref(),
            "--snapshot".as_ref(),
            f.as_os_str(),
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(rss_mb < 200, "peak memory {rss_mb} MB");
    assert!(stdout.len() < 64 * 1024, "output {} bytes", stdout.len());
    assert!(
        err.contains("Deployment ml/d") && err.contains("Pod ml/p"),
        "{err}"
    );
}
