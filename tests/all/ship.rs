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
