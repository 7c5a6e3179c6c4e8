//! What is shipped around the binary: the in-cluster manifests run the repository's image the way
//! its Dockerfile allows (by digest, non-root, read-only root, no shell to call), and `--version`
//! names the commit.

use serde_json::Value;

use crate::support::{fixture, gpuledger, root};

fn containers(pod: &Value) -> Vec<&Value> {
    ["initContainers", "containers"]
        .iter()
        .filter_map(|k| pod[k].as_array())
        .flatten()
        .collect()
}

#[test]
fn the_cronjob_runs_the_image_by_digest_non_root_on_a_read_only_root() {
    let text = std::fs::read_to_string(fixture("deploy/cronjob.yaml")).unwrap();
    let cron: Value = serde_saphyr::from_str(&text).unwrap();
    let pod = &cron["spec"]["jobTemplate"]["spec"]["template"]["spec"];
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    assert_eq!(pod["securityContext"]["runAsUser"], 65532);
    let cs = containers(pod);
    assert!(cs.len() >= 2, "snapshot and inventory");
    for c in cs {
        let image = c["image"].as_str().unwrap();
        let (repo, digest) = image.split_once("@sha256:").expect("an image by digest");
        assert_eq!(repo, "registry.example.com/gpuledger");
        assert!(digest.len() == 64 && digest.chars().all(|d| d.is_ascii_hexdigit()));
        assert_eq!(c["securityContext"]["readOnlyRootFilesystem"], true, "{c}");
        assert_eq!(c["securityContext"]["allowPrivilegeEscalation"], false);
        // The image is distroless: gpuledger is the entrypoint and there is no shell to run.
        assert!(c.get("command").is_none(), "{c}");
        let mounts: Vec<&str> = c["volumeMounts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["mountPath"].as_str().unwrap())
            .collect();
        assert!(mounts.contains(&"/tmp"), "a writable /tmp: {mounts:?}");
    }
}

#[test]
fn the_image_is_built_locked_and_runs_as_the_cronjob_user() {
    let docker = std::fs::read_to_string(root().join("Dockerfile")).unwrap();
    let run_stage = docker.rsplit_once("\nFROM ").unwrap().1;
    assert!(run_stage.contains("\nUSER 65532:65532\n"), "{run_stage}");
    assert!(docker.contains("cargo build --release --locked"));
    // The renderers come from the one list of tested versions, checksummed.
    assert!(docker.contains("COPY scripts/tool-versions.env"));
    assert!(docker.contains("sha256sum -c"));
    let ignore = std::fs::read_to_string(root().join(".dockerignore")).unwrap();
    assert!(ignore.contains("!scripts/tool-versions.env"));
}

#[test]
fn version_names_the_release_and_the_commit() {
    let out = gpuledger(&root()).arg("--version").output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let rest = text
        .trim()
        .strip_prefix(&format!("gpuledger {} (commit ", env!("CARGO_PKG_VERSION")))
        .unwrap_or_else(|| panic!("{text}"));
    let commit = rest.strip_suffix(')').unwrap();
    // In a checkout, the checkout's commit (CI and developers build from one).
    let head = std::process::Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(root())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    match (head, std::env::var("GPULEDGER_GIT_COMMIT").ok()) {
        (_, Some(given)) if !given.is_empty() => assert!(given.starts_with(commit), "{text}"),
        (Some(head), _) => assert_eq!(commit, &head[..12], "{text}"),
        (None, _) => assert_eq!(commit, "unknown"),
    }
}

#[test]
fn the_exporter_runs_serve_by_digest_read_only_as_the_rbac_service_account() {
    let text = std::fs::read_to_string(fixture("deploy/exporter.yaml")).unwrap();
    let docs: Vec<Value> = serde_saphyr::from_multiple(&text).unwrap();
    let kind = |k: &str| docs.iter().find(|d| d["kind"] == k).expect(k);
    let pod = &kind("Deployment")["spec"]["template"]["spec"];
    assert_eq!(
        pod["serviceAccountName"], "gpuledger",
        "rbac.yaml's account"
    );
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    let c = containers(pod)[0];
    let (repo, digest) = c["image"].as_str().unwrap().split_once("@sha256:").unwrap();
    assert_eq!(repo, "registry.example.com/gpuledger");
    assert_eq!(digest.len(), 64);
    assert_eq!(c["securityContext"]["readOnlyRootFilesystem"], true);
    assert!(c.get("command").is_none());
    let args: Vec<&str> = c["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(args[0], "serve");
    // The port serve listens on is the one the Service and the ServiceMonitor reach.
    assert!(args.contains(&"--listen=0.0.0.0:9477"), "{args:?}");
    assert_eq!(c["ports"][0]["containerPort"], 9477);
    assert_eq!(c["readinessProbe"]["httpGet"]["path"], "/healthz");
    let svc = kind("Service");
    assert_eq!(svc["spec"]["ports"][0]["targetPort"], "metrics");
    let sm = kind("ServiceMonitor");
    assert_eq!(sm["spec"]["endpoints"][0]["port"], "metrics");
    assert_eq!(
        sm["spec"]["selector"]["matchLabels"],
        svc["metadata"]["labels"]
    );
    // The same CLI would accept these arguments.
    let out = gpuledger(&root())
        .args(&args)
        .arg("--help")
        .output()
        .unwrap();
    assert!(out.status.success());
}

#[test]
fn the_dashboard_queries_only_metrics_gpuledger_exports() {
    let text = std::fs::read_to_string(fixture("deploy/grafana-dashboard.json")).unwrap();
    let dashboard: Value = serde_json::from_str(&text).unwrap();
    let sources = [
        "src/render/prometheus.rs",
        "src/render/queues.rs",
        "src/report/series.rs",
        "src/commands/serve.rs",
        "src/commands/serve/sync.rs",
    ]
    .map(|p| std::fs::read_to_string(fixture(p)).unwrap())
    .join("\n");
    let mut exprs = Vec::new();
    for p in dashboard["panels"].as_array().unwrap() {
        for t in p["targets"].as_array().into_iter().flatten() {
            exprs.push(t["expr"].as_str().unwrap().to_string());
        }
    }
    assert!(exprs.len() > 10);
    for e in &exprs {
        for name in e
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|w| w.starts_with("gpuledger_"))
        {
            assert!(
                sources.contains(&format!("\"{name}\"")),
                "the dashboard queries {name}, which gpuledger does not export"
            );
        }
    }
}
