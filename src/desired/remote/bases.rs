//! kustomize's remote resources, fetched by gpuledger and mounted into the tree, so that kustomize
//! itself never fetches.
//!
//! kustomize reads a `resources`/`bases`/`components` entry that is a URL first as a file: an
//! `http(s)://` URL is fetched with a plain GET, and only when that fails with a non-2xx status
//! and the URL also reads as a git repository is it cloned (kustomize
//! `api/internal/target/kusttarget.go`, `accumulateResources`; `api/internal/loader/fileloader.go`);
//! a scheme-less `github.com/…` or a `git::` URL is a repository. Here every kustomization of the
//! tree (and of what is mounted, a few levels deep) is read once before anything renders: a remote
//! manifest is mounted as a directory holding it and a kustomization that lists it (a directory is
//! a root of its own, so kustomize's root-only load restrictor accepts it where a file outside the
//! root would be refused, and builds the same objects), a repository at its commit with the
//! entry's path inside it. The tree records, per kustomization directory and entry, the mounted
//! directory or why nothing was fetched; the render step rewrites the entry in its copy of that
//! kustomization to point at the mount, and nothing in the repository is changed.

use std::collections::BTreeSet;

use super::Remote;
use super::error::FetchError;
use super::git;
use crate::desired::kustomization::{KUSTOMIZATION_FILES, is_remote, kustomization_entries};
use crate::desired::tree::{Entry, REMOTE_MOUNTS, RemoteMiss, Tree, join};

/// How deep remote bases of remote bases are followed.
const MAX_ROUNDS: usize = 4;

fn kustomization_dirs(tree: &Tree) -> BTreeSet<String> {
    tree.files
        .keys()
        .filter_map(|p| {
            let (dir, name) = p.rsplit_once('/').unwrap_or(("", p.as_str()));
            KUSTOMIZATION_FILES.contains(&name).then(|| dir.to_string())
        })
        .collect()
}

/// A path segment as a mount's directory name: what is safe on every file system.
fn segment(s: &str) -> String {
    let cleaned: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    match cleaned.as_str() {
        "" | "." | ".." => "_".into(),
        _ => cleaned,
    }
}

fn miss(e: &FetchError) -> RemoteMiss {
    RemoteMiss {
        refused: e.is_refusal(),
        why: e.to_string(),
    }
}

/// Fetches and mounts the remote resources of every kustomization in `tree`.
pub fn mount(tree: &mut Tree, remote: &Remote) {
    let mut scanned: BTreeSet<String> = BTreeSet::new();
    for _ in 0..MAX_ROUNDS {
        let dirs: Vec<String> = kustomization_dirs(tree)
            .into_iter()
            .filter(|d| !scanned.contains(d))
            .collect();
        if dirs.is_empty() {
            break;
        }
        for dir in dirs {
            scanned.insert(dir.clone());
            for entry in kustomization_entries(tree, &dir) {
                let entry = entry.trim().to_string();
                let key = (dir.clone(), entry.clone());
                if !is_remote(&entry) || tree.remote_entries.contains_key(&key) {
                    continue;
                }
                let got = resolve(tree, remote, &entry);
                tree.remote_entries.insert(key, got);
            }
        }
    }
}

fn resolve(tree: &mut Tree, remote: &Remote, entry: &str) -> Result<String, RemoteMiss> {
    let lower = entry.to_ascii_lowercase();
    if lower.starts_with("https://") || lower.starts_with("http://") {
        match remote.file(entry) {
            Ok(bytes) => return Ok(mount_file(tree, entry, &bytes)),
            // kustomize: a URL that does not answer 2xx may still be a repository.
            Err(FetchError::Status { .. }) if git::parse(entry).is_ok() => {}
            Err(e) => return Err(miss(&e)),
        }
    }
    let spec = git::parse(entry).map_err(|why| RemoteMiss {
        refused: false,
        why,
    })?;
    let checkout = remote.git(&spec).map_err(|e| miss(&e))?;
    let url = url::Url::parse(&spec.repo).ok();
    let host = url.as_ref().and_then(url::Url::host_str).unwrap_or("host");
    let repo_path: Vec<String> = url
        .as_ref()
        .map(|u| {
            u.path()
                .split('/')
                .filter(|s| !s.is_empty())
                .map(segment)
                .collect()
        })
        .unwrap_or_default();
    let short = checkout.commit.get(..12).unwrap_or(&checkout.commit);
    let at = join(
        &join(REMOTE_MOUNTS, "git"),
        &format!("{}/{}@{short}", segment(host), repo_path.join("/")),
    );
    if !tree.mounts.contains_key(&at) {
        for (p, e) in &checkout.files {
            tree.files.insert(join(&at, p), e.clone());
        }
        tree.mounts.insert(
            at.clone(),
            format!(
                "{}@{} (commit {short})",
                super::http::shown(&spec.repo),
                spec.git_ref.as_deref().unwrap_or("HEAD")
            ),
        );
    }
    let dir = join(&at, &spec.path);
    if !tree.is_dir(&dir) {
        return Err(RemoteMiss {
            refused: false,
            why: format!(
                "{} has no directory {:?} at {}",
                super::http::shown(&spec.repo),
                spec.path,
                spec.git_ref.as_deref().unwrap_or("HEAD")
            ),
        });
    }
    Ok(dir)
}

/// A remote manifest as a directory holding it and a kustomization listing it.
fn mount_file(tree: &mut Tree, url: &str, bytes: &[u8]) -> String {
    let parsed = url::Url::parse(url).ok();
    let host = parsed
        .as_ref()
        .and_then(url::Url::host_str)
        .unwrap_or("host");
    let name = parsed
        .as_ref()
        .and_then(|u| u.path_segments()?.next_back().map(segment))
        .filter(|n| n != "_" && !KUSTOMIZATION_FILES.contains(&n.as_str()))
        .unwrap_or_else(|| "resource.yaml".into());
    let hash = super::store::sha256(url.as_bytes());
    let id = hash.get(..12).unwrap_or(&hash);
    let at = join(
        &join(REMOTE_MOUNTS, "https"),
        &format!("{}/{id}", segment(host)),
    );
    tree.files
        .insert(join(&at, &name), Entry::File(bytes.to_vec()));
    let k = serde_json::json!({
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": [name],
    });
    tree.files.insert(
        join(&at, "kustomization.yaml"),
        Entry::File(k.to_string().into_bytes()),
    );
    tree.mounts.insert(at.clone(), super::http::shown(url));
    at
}
