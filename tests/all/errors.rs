//! Errors for common mistakes name their cause and the way out: an API server that cannot be
//! reached says why (DNS, refused, TLS, timeout), no kubeconfig points at `--snapshot`, a bad
//! `--context` lists the real ones, a field of the wrong type names the object and the field, an
//! unknown ref says how to fetch it, and no message repeats itself in its cause.

use std::path::Path;

use super::kube_emulator::{Emulator, EmulatorOptions};
use super::support::{Repo, gpuledger, root};

/// Runs gpuledger in the repository root, expecting exit 2; returns standard error.
fn error_of(cmd: &mut assert_cmd::Command) -> String {
    let out = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "exit code; stderr:\n{err}");
    err
}

fn kubeconfig(dir: &Path, server: &str) -> std::path::PathBuf {
    let path = dir.join("kubeconfig");
    std::fs::write(
        &path,
        format!(
            "apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {{server: \"{server}\"}}
contexts:
- name: gpu-east
  context: {{cluster: c, user: u}}
- name: gpu-west
  context: {{cluster: c, user: u}}
current-context: gpu-east
users:
- name: u
  user: {{token: t}}
"
        ),
    )
    .unwrap();
    path
}

fn inventory_with(cfg: &Path) -> assert_cmd::Command {
    let mut c = gpuledger(&root());
    c.args(["inventory", "--timeout", "20", "--request-timeout", "3"])
        .arg("--kubeconfig")
        .arg(cfg);
    c
}

#[test]
fn a_closed_port_is_connection_refused() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = tempfile::tempdir().unwrap();
    let cfg = kubeconfig(dir.path(), &format!("http://127.0.0.1:{port}"));
    let err = error_of(&mut inventory_with(&cfg));
    assert!(err.contains("connection refused: nothing listens"), "{err}");
}

#[test]
fn a_name_that_does_not_resolve_is_a_dns_failure() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = kubeconfig(dir.path(), "https://nonexistent.invalid:6443");
    let err = error_of(&mut inventory_with(&cfg));
    assert!(err.contains("DNS failure"), "{err}");
}

#[test]
fn https_to_a_plain_http_server_is_a_tls_mismatch() {
    let emu = Emulator::start(EmulatorOptions::snapshot(
        root().join("fixtures/demo/cluster.yaml"),
    ));
    let dir = tempfile::tempdir().unwrap();
    let cfg = kubeconfig(dir.path(), &format!("https://{}", emu.addr()));
    let err = error_of(&mut inventory_with(&cfg));
    assert!(err.contains("TLS mismatch"), "{err}");
    // A setting, not a passing fault: not retried.
    assert!(!err.contains("gave up after"), "{err}");
}

#[test]
fn no_kubeconfig_suggests_a_snapshot() {
    let home = tempfile::tempdir().unwrap();
    let err = error_of(
        gpuledger(&root())
            .args(["inventory"])
            .env("HOME", home.path())
            .env_remove("KUBERNETES_SERVICE_HOST"),
    );
    assert!(err.contains("no ~/.kube/config"), "{err}");
    assert!(err.contains("--snapshot FILE"), "{err}");
    assert!(err.contains("gpuledger snapshot"), "{err}");
}

#[test]
fn a_bad_context_lists_the_contexts_that_exist() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = kubeconfig(dir.path(), "http://127.0.0.1:1");
    let err = error_of(inventory_with(&cfg).args(["--context", "gpu-north"]));
    assert!(
        err.contains("has no context \"gpu-north\"; its contexts: gpu-east, gpu-west"),
        "{err}"
    );
    // The same through $KUBECONFIG.
    let err = error_of(
        gpuledger(&root())
            .args(["inventory", "--context", "gpu-north"])
            .env("KUBECONFIG", &cfg),
    );
    assert!(err.contains("its contexts: gpu-east, gpu-west"), "{err}");
}

#[test]
fn a_field_of_the_wrong_type_names_the_object_the_field_and_the_line() {
    let err = error_of(gpuledger(&root()).args([
        "inventory",
        "--snapshot",
        "tests/fixtures/wrong-type.yaml",
    ]));
    assert!(
        err.contains("tests/fixtures/wrong-type.yaml:7:13: Deployment ml/llm: spec.replicas: "),
        "{err}"
    );
    // Any field, any depth, in JSON as in YAML.
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("pod.json");
    std::fs::write(
        &json,
        r#"{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ml"},
"spec": {"containers": [{"name": "a"}, {"name": "b", "resources": {"limits": {"nvidia.com/gpu": [1]}}}]}}"#,
    )
    .unwrap();
    let err = error_of(
        gpuledger(&root())
            .arg("inventory")
            .arg("--snapshot")
            .arg(&json),
    );
    assert!(
        err.contains("pod.json:2:")
            && err.contains("Pod ml/p: spec.containers[1].resources.limits.nvidia.com/gpu: "),
        "{err}"
    );
}

#[test]
fn a_rendered_manifest_of_the_wrong_type_names_the_object_and_field() {
    let repo = Repo::new();
    repo.write(
        "apps/web.yaml",
        "apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: team-a}
spec:
  replicas: three
",
    )
    .commit("web");
    // The app fails (exit 2) and the report says why, with the rest of the apps.
    let out = gpuledger(repo.path())
        .args(["render", "--repo", "."])
        .env("HOME", repo.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("apps/web.yaml:5:13: Deployment team-a/web: spec.replicas: "),
        "{text}"
    );
}

#[test]
fn an_unknown_ref_says_how_to_fetch_it() {
    let repo = Repo::new();
    repo.write(
        "a.yaml",
        "kind: ConfigMap\napiVersion: v1\nmetadata: {name: a}\n",
    )
    .commit("a");
    let err = error_of(
        gpuledger(repo.path())
            .args(["render", "--repo", ".", "--ref", "origin/release"])
            .env("HOME", repo.path()),
    );
    assert!(err.contains("git fetch origin release"), "{err}");
    assert!(err.contains("fetch-depth: 0"), "{err}");
}

#[test]
fn no_message_repeats_its_cause() {
    let err = error_of(gpuledger(&root()).args(["inventory", "--snapshot", "/nonexistent.yaml"]));
    assert_eq!(err.matches("No such file or directory").count(), 1, "{err}");
    assert!(!err.contains("caused by"), "{err}");
}
