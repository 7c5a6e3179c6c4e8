//! Git as git has it (issue 34, item 4): real repositories with files git-lfs keeps as pointers,
//! submodules, names that are not UTF-8 and symlinks.

use std::collections::BTreeMap;

use super::render::{URL, deployment};
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

/// A repository where kustomizations reach files through symlinks inside the repository:
/// `apps/out` lists a file that links out of its root (to `shared/`), `apps/in` one that links
/// inside its root, and `apps/base` a base directory that links to `shared-base/`. Each app is
/// declared by `app(name, path)`.
fn repo_with_symlinks(app: &dyn Fn(&str, &str) -> String) -> Repo {
    use std::os::unix::fs::symlink;
    let r = Repo::new();
    let dep = |name: &str, gpus| {
        deployment(name, 1, gpus).replace(
            &format!("name: {name}"),
            &format!("name: {name}\n  namespace: ns"),
        )
    };
    r.write("shared/out.yaml", &dep("out", 4))
        .write("apps/in/real/in.yaml", &dep("in", 2))
        .write("shared-base/kustomization.yaml", "resources: [base.yaml]\n")
        .write("shared-base/base.yaml", &dep("base", 1))
        .write("apps/out/kustomization.yaml", "resources: [out.yaml]\n")
        .write("apps/in/kustomization.yaml", "resources: [in.yaml]\n")
        .write("apps/base/kustomization.yaml", "resources: [base]\n")
        .write(
            "deploy/apps.yaml",
            &["out", "in", "base"]
                .map(|n| app(n, &format!("apps/{n}")))
                .join("---\n"),
        );
    symlink("../../shared/out.yaml", r.path().join("apps/out/out.yaml")).unwrap();
    symlink("real/in.yaml", r.path().join("apps/in/in.yaml")).unwrap();
    symlink("../../shared-base", r.path().join("apps/base/base")).unwrap();
    r.commit("symlinks");
    r
}

/// name → error of every app in a render report.
fn app_errors(json: &serde_json::Value) -> BTreeMap<String, String> {
    json["desired"]["apps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["name"].as_str().unwrap().to_string(),
                a["error"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// Argo CD builds with kustomize's default load restrictor, root-only: a file reached through a
/// symlink that leaves the kustomization's root is refused, as kustomize refuses it; a link inside
/// the root and a base directory reached through a link render.
#[test]
fn symlinks_out_of_a_kustomize_root_are_refused_for_argo_cd() {
    let r = repo_with_symlinks(&|name, path| {
        format!(
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {{name: {name}, namespace: argocd}}\nspec:\n  destination: {{namespace: ns}}\n  source: {{repoURL: {URL}, path: {path}}}\n"
        )
    });
    for args in [
        &["--repo-url", URL][..],
        &["--repo-url", URL, "--ref", "HEAD"][..],
    ] {
        let (code, json, err) = render(r.path(), args);
        let text = format!("{json:#}\n{err}");
        assert_ne!(code, 0, "{args:?}: {text}");
        assert_eq!(
            desired_gpus(&json),
            BTreeMap::from([
                ("ns/Deployment/base".to_string(), 1),
                ("ns/Deployment/in".to_string(), 2),
            ]),
            "{args:?}: {text}"
        );
        let errors = app_errors(&json);
        assert!(
            errors["out"].contains("is not in or below") && !errors["out"].contains("/tmp"),
            "{args:?}: {errors:#?}"
        );
        assert_eq!(
            (errors["in"].as_str(), errors["base"].as_str()),
            ("", ""),
            "{args:?}"
        );
    }
}

/// Flux's kustomize-controller builds with no load restriction inside the repository: the same
/// links all render.
#[test]
fn symlinks_inside_the_repository_render_for_flux() {
    let r = repo_with_symlinks(&|name, path| {
        format!(
            "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {{name: {name}, namespace: flux-system}}\nspec:\n  path: ./{path}\n  sourceRef: {{kind: GitRepository, name: flux-system}}\n"
        )
    });
    r.write(
        "deploy/repo.yaml",
        &format!(
            "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {{name: flux-system, namespace: flux-system}}\nspec: {{url: \"{URL}\"}}\n"
        ),
    )
    .commit("flux source");
    for args in [
        &["--repo-url", URL][..],
        &["--repo-url", URL, "--ref", "HEAD"][..],
    ] {
        let (code, json, err) = render(r.path(), args);
        let text = format!("{json:#}\n{err}");
        assert_eq!(code, 0, "{args:?}: {text}");
        assert_eq!(
            desired_gpus(&json),
            BTreeMap::from([
                ("ns/Deployment/base".to_string(), 1),
                ("ns/Deployment/in".to_string(), 2),
                ("ns/Deployment/out".to_string(), 4),
            ]),
            "{args:?}: {text}"
        );
    }
}
