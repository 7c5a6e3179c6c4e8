//! Git as git has it (issue 34, item 4): real repositories whose files git-lfs keeps as pointers.

use std::collections::BTreeMap;

use super::render::deployment;
use super::support::{Repo, desired_gpus, render};

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
