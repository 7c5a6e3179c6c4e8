//! Git as git has it (issue 34, item 4): real repositories with files git-lfs keeps as pointers,
//! submodules, names that are not UTF-8 and symlinks.

use std::collections::BTreeMap;

use super::render::deployment;
use super::support::{Repo, desired_gpus, gpuledger, render};

const OID: &str = "4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393";

/// A Git LFS pointer as git-lfs commits it in place of a file.
fn pointer(size: usize) -> String {
    format!("version https://git-lfs.github.com/spec/v1\noid sha256:{OID}\nsize {size}\n")
}

fn repo_with_pointer() -> (Repo, String) {
    let r = Repo::new();
    let trainer = deployment("trainer", 1, 8)
        .replace("name: trainer", "name: trainer\n  namespace: research");
    r.write(
        "serving/model.yaml",
        &deployment("llama", 2, 4).replace("name: llama", "name: llama\n  namespace: llm"),
    )
    .write(
        "serving/kustomization.yaml",
        "resources: [model.yaml, big.yaml]\n",
    )
    .write("serving/big.yaml", &pointer(trainer.len()))
    .write("batch/train.yaml", &pointer(trainer.len()))
    .commit("manifests in git-lfs");
    (r, trainer)
}

#[test]
fn an_lfs_pointer_is_unknown_never_an_empty_manifest() {
    let (r, _) = repo_with_pointer();
    for args in [&[][..], &["--ref", "HEAD"][..]] {
        let (code, json, err) = render(r.path(), args);
        let text = format!("{json:#}\n{err}");
        assert_ne!(code, 0, "{args:?}: {text}");
        assert!(
            text.contains("Git LFS object not fetched"),
            "{args:?}: {text}"
        );
        assert!(
            text.contains("serving/big.yaml") && text.contains("batch/train.yaml"),
            "{args:?}: {text}"
        );
        // The kustomization with a pointer is not counted as rendered with one workload.
        assert!(
            !desired_gpus(&json).contains_key("llm/Deployment/llama"),
            "{args:?}: {text}"
        );
    }
}

#[test]
fn an_lfs_object_fetched_locally_is_read() {
    let (r, trainer) = repo_with_pointer();
    // What `git lfs pull` leaves: the object under .git/lfs/objects, by its oid.
    let dir = r
        .path()
        .join(".git/lfs/objects")
        .join(&OID[..2])
        .join(&OID[2..4]);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(OID), &trainer).unwrap();
    for args in [&[][..], &["--ref", "HEAD"][..]] {
        let (code, json, err) = render(r.path(), args);
        assert_eq!(code, 0, "{args:?}: {err}");
        let gpus = desired_gpus(&json);
        assert_eq!(
            gpus,
            // Both pointers hold the trainer (in its own namespace, whichever file it is in).
            BTreeMap::from([
                ("llm/Deployment/llama".to_string(), 8),
                ("research/Deployment/trainer".to_string(), 8),
            ]),
            "{args:?}"
        );
    }
}

/// A superproject with its own app (`apps/own`, 1 GPU) and a submodule added from a local
/// repository (`apps/vendor`, 8 GPUs), both committed. The submodule's repository is returned too:
/// it must outlive the superproject's use of it.
fn repo_with_submodule() -> (Repo, Repo) {
    let sub = Repo::new();
    sub.write(
        "deploy.yaml",
        &deployment("vendor", 1, 8).replace("name: vendor", "name: vendor\n  namespace: vendor"),
    )
    .commit("vendor app");
    let r = Repo::new();
    r.write(
        "apps/own/deploy.yaml",
        &deployment("own", 1, 1).replace("name: own", "name: own\n  namespace: own"),
    )
    .commit("own app");
    let url = sub.path().display().to_string();
    // Git refuses local file submodules by default since 2.38.1 (CVE-2022-39253).
    r.git(&[
        "-c",
        "protocol.file.allow=always",
        "submodule",
        "add",
        "-q",
        &url,
        "apps/vendor",
    ]);
    r.commit("vendor as a submodule");
    (r, sub)
}

#[test]
fn a_submodule_is_read_at_its_recorded_commit_in_both_modes() {
    let (r, _sub) = repo_with_submodule();
    let want = BTreeMap::from([
        ("own/Deployment/own".to_string(), 1),
        ("vendor/Deployment/vendor".to_string(), 8),
    ]);
    for args in [&[][..], &["--ref", "HEAD"][..]] {
        let (code, json, err) = render(r.path(), args);
        assert_eq!(code, 0, "{args:?}: {json:#}\n{err}");
        assert_eq!(desired_gpus(&json), want, "{args:?}");
    }
    // An unchanged checkout against its own HEAD changes nothing.
    let out = gpuledger(r.path())
        .args(["check", "--repo", ".", "--base", "HEAD", "--format", "json"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let json: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {err}"));
    let c = &json["check"];
    assert_eq!(
        (
            c["gpus_base"].as_u64(),
            c["gpus_head"].as_u64(),
            c["gpu_delta"].as_i64()
        ),
        (Some(9), Some(9), Some(0)),
        "{json:#}\n{err}"
    );
}

#[test]
fn a_submodule_not_here_is_unknown_with_its_path_in_both_modes() {
    let (r, _sub) = repo_with_submodule();
    // A clone without `--recurse-submodules`: the gitlink is recorded, its commit is nowhere here.
    let clone = tempfile::tempdir().unwrap();
    let dest = clone.path().join("c");
    let out = std::process::Command::new("git")
        .args(["clone", "-q"])
        .arg(r.path())
        .arg(&dest)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for args in [&[][..], &["--ref", "HEAD"][..]] {
        let (code, json, err) = render(&dest, args);
        let text = format!("{json:#}\n{err}");
        assert_ne!(code, 0, "{args:?}: {text}");
        assert!(
            text.contains("apps/vendor") && text.contains("submodule"),
            "{args:?}: {text}"
        );
        assert_eq!(
            desired_gpus(&json),
            BTreeMap::from([("own/Deployment/own".to_string(), 1)]),
            "{args:?}"
        );
    }
}

/// A file name that is not UTF-8 (Latin-1 `é`), as git stores it: bytes.
fn latin1(prefix: &str, suffix: &str) -> std::path::PathBuf {
    use std::os::unix::ffi::OsStrExt;
    let mut name = prefix.as_bytes().to_vec();
    name.push(0xe9);
    name.extend_from_slice(suffix.as_bytes());
    std::path::PathBuf::from(std::ffi::OsStr::from_bytes(&name))
}

#[test]
fn non_utf8_file_names_are_read_never_dropped() {
    let r = Repo::new();
    r.write(
        "batch/a.yaml",
        &deployment("a", 1, 1).replace("name: a", "name: a\n  namespace: batch"),
    );
    // A file and a directory whose names are Latin-1 bytes.
    std::fs::write(
        r.path().join("batch").join(latin1("caf", ".yaml")),
        deployment("cafe", 1, 2).replace("name: cafe", "name: cafe\n  namespace: batch"),
    )
    .unwrap();
    let dir = r.path().join(latin1("r", "sum"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("job.yaml"),
        deployment("resume", 1, 4).replace("name: resume", "name: resume\n  namespace: batch"),
    )
    .unwrap();
    r.commit("names in Latin-1");
    let want = BTreeMap::from([
        ("batch/Deployment/a".to_string(), 1),
        ("batch/Deployment/cafe".to_string(), 2),
        ("batch/Deployment/resume".to_string(), 4),
    ]);
    for args in [&[][..], &["--ref", "HEAD"][..]] {
        let (code, json, err) = render(r.path(), args);
        let text = format!("{json:#}\n{err}");
        assert_eq!(code, 0, "{args:?}: {text}");
        assert_eq!(desired_gpus(&json), want, "{args:?}: {text}");
        // The names are shown as git shows them unquoted: the byte that is not UTF-8 replaced.
        assert!(text.contains("caf\u{FFFD}.yaml"), "{args:?}: {text}");
        assert!(text.contains("r\u{FFFD}sum"), "{args:?}: {text}");
    }
}
