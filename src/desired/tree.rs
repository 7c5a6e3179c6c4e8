//! A GitOps repository as a read-only tree of files, at a git ref or in the working directory.
//!
//! `--ref` reads trees and blobs through git2 without touching the user's work tree; without it, the
//! working directory is read as it is (uncommitted changes included), which is what a local
//! pre-merge check wants. Either way the renderers see the same [`Tree`]: a sorted list of files with
//! their bytes. External renderers (kustomize, helm) need files on disk, so [`Tree::write_files`]
//! writes the files a unit reads into the renderer's temporary directory. Symlinks are resolved
//! inside the tree only: one that points outside the repository is refused, never followed.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use super::error::TreeError;
use crate::error::{Error, InputError};

pub use super::entry::{Entry, MAX_FILE_BYTES};

pub struct Tree {
    /// What the tree was read from, for messages (`HEAD`, `main`, `working tree`).
    pub label: String,
    pub root: PathBuf,
    pub files: BTreeMap<String, Entry>,
    /// The repository's remote URLs (for matching Argo CD and Flux sources).
    pub remotes: Vec<String>,
    /// kustomize's remote resources, by the kustomization directory that names them and the entry
    /// as written: the tree directory their fetched content is mounted at (under
    /// [`REMOTE_MOUNTS`]), or why it was not fetched.
    pub remote_entries: BTreeMap<(String, String), Result<String, RemoteMiss>>,
    /// The directories fetched content is mounted at, and what each is (`https://github.com/org/
    /// repo@v1 (commit 0a1b2c3d4e5f)`), for the report.
    pub mounts: BTreeMap<String, String>,
}

/// Why a remote resource of a kustomization was not fetched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteMiss {
    /// gpuledger chose not to (`--offline`, a host the base does not use, a refused address),
    /// rather than the source failing.
    pub refused: bool,
    pub why: String,
}

/// Where fetched remote content is mounted in the tree: a name the repository cannot hold (a
/// repository's own files under `.gpuledger-` are dropped when it is read).
pub const REMOTE_MOUNTS: &str = ".gpuledger-remote";

/// The files a change touched between `base` and `head` (a ref, or the working tree with its
/// untracked files when `None`), as paths from the repository's root, renames on both sides.
/// `None` when git cannot tell (not a repository, an unknown ref): the caller then says nothing.
pub fn changed_paths(
    repo: &Path,
    base: &str,
    head: Option<&str>,
) -> Option<std::collections::BTreeSet<String>> {
    let git = git2::Repository::open(repo).ok()?;
    let tree = |rev: &str| git.revparse_single(rev).ok()?.peel_to_tree().ok();
    let base_tree = tree(base)?;
    let diff = match head {
        Some(h) => git
            .diff_tree_to_tree(Some(&base_tree), Some(&tree(h)?), None)
            .ok()?,
        None => {
            let mut opts = git2::DiffOptions::new();
            opts.include_untracked(true).recurse_untracked_dirs(true);
            git.diff_tree_to_workdir_with_index(Some(&base_tree), Some(&mut opts))
                .ok()?
        }
    };
    let mut out = std::collections::BTreeSet::new();
    for d in diff.deltas() {
        for f in [d.old_file(), d.new_file()] {
            if let Some(p) = f.path().and_then(|p| p.to_str()) {
                out.insert(p.to_string());
            }
        }
    }
    Some(out)
}

impl Tree {
    /// Reads `repo` at `rev` (a branch, tag or sha), or its working directory when `rev` is `None`.
    pub fn open(repo: &Path, rev: Option<&str>) -> Result<Tree, Error> {
        let git = git2::Repository::open(repo).ok();
        let remotes = git.as_ref().map(remote_urls).unwrap_or_default();
        let (label, mut files) = match rev {
            None => {
                let mut files = read_workdir(repo, git.as_ref())?;
                if let Some(g) = &git {
                    super::git_tree::submodules_of_workdir(g, repo, &mut files)
                        .map_err(|e| input(repo, &format!("in the working tree: {e}")))?;
                }
                ("working tree".to_string(), files)
            }
            Some(rev) => {
                let git = git
                    .as_ref()
                    .ok_or_else(|| input(repo, "is not a git repository (needed for --ref)"))?;
                ("ref ".to_string() + rev, read_git(git, rev, repo)?)
            }
        };
        // Names gpuledger gives its own files (fetched content, wrappers) are never the
        // repository's: a repository cannot pass its files off as fetched ones.
        files.retain(|p, _| !p.starts_with(".gpuledger-"));
        // Git LFS pointers, in the working tree (not smudged) as at a ref.
        let git_dir = git.as_ref().map(git2::Repository::commondir);
        for entry in files.values_mut() {
            if let Entry::File(bytes) = entry
                && let Some(found) = super::lfs::fetched(bytes, git_dir)
            {
                *entry = match found {
                    Ok(object) => Entry::File(object),
                    Err(oid) => Entry::LfsPointer { oid },
                };
            }
        }
        Ok(Tree {
            label,
            root: repo.to_path_buf(),
            files,
            remotes,
            remote_entries: BTreeMap::new(),
            mounts: BTreeMap::new(),
        })
    }

    /// The bytes of a file, following symlinks that stay inside the tree.
    pub fn read(&self, path: &str) -> Result<&[u8], TreeError> {
        let mut p = path.to_string();
        for _ in 0..16 {
            match self.files.get(&p) {
                Some(Entry::File(b)) => return Ok(b),
                Some(Entry::TooLarge(n)) => {
                    return Err(TreeError::TooLarge {
                        path: path.to_string(),
                        size: *n,
                        limit: MAX_FILE_BYTES,
                    });
                }
                Some(Entry::LfsPointer { oid }) => {
                    return Err(TreeError::LfsNotFetched {
                        path: path.to_string(),
                        oid: oid.clone(),
                    });
                }
                Some(Entry::Symlink(target)) => {
                    p = resolve_link(&p, target).ok_or_else(|| TreeError::SymlinkOutside {
                        path: path.to_string(),
                        target: target.clone(),
                    })?;
                }
                Some(Entry::Submodule { .. }) | None => {
                    return Err(self.unread_submodule(&p).unwrap_or(TreeError::NoSuchFile {
                        path: path.to_string(),
                        tree: self.label.clone(),
                    }));
                }
            }
        }
        Err(TreeError::SymlinkLoop {
            path: path.to_string(),
        })
    }

    /// Paths of the files directly or indirectly under `dir` (`""` is the root).
    pub fn files_under<'a>(&'a self, dir: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        let prefix = if dir.is_empty() {
            String::new()
        } else {
            format!("{}/", dir.trim_end_matches('/'))
        };
        self.files
            .range(prefix.clone()..)
            .take_while(move |(k, _)| k.starts_with(&prefix))
            .map(|(k, _)| k.as_str())
    }

    /// The submodule not read that holds `path` (or is it), as the error reading it is.
    pub fn unread_submodule(&self, path: &str) -> Option<TreeError> {
        let mut at = path;
        loop {
            if let Some(Entry::Submodule { commit, why }) = self.files.get(at) {
                return Some(TreeError::SubmoduleNotRead {
                    path: path.to_string(),
                    submodule: at.to_string(),
                    commit: commit.clone(),
                    why: why.clone(),
                });
            }
            at = at.rsplit_once('/')?.0;
        }
    }

    /// Why the directory an app names is not in the tree: it does not exist, or it is in a
    /// submodule that was not read.
    pub fn missing(&self, dir: &str) -> String {
        match self.unread_submodule(dir) {
            Some(e) => e.to_string(),
            None => format!("path {dir:?} does not exist in the {}", self.label),
        }
    }

    pub fn is_dir(&self, dir: &str) -> bool {
        dir.is_empty() || self.files_under(dir).next().is_some()
    }

    pub fn exists(&self, path: &str) -> bool {
        self.files.contains_key(path)
    }

    /// Writes these files of the tree under `dir`, and returns every path written (the files, and
    /// what their symlinks point to). A symlink that stays inside the tree is written as the same
    /// symlink, with what it points to (a file, or a directory's files): the renderers then see
    /// the repository's links as the controller's checkout has them, so kustomize's load
    /// restrictor judges a file by where its link leads (kustomize `api/internal/loader/
    /// loadrestrictions.go`, RestrictionRootOnly, on the path `kyaml/filesys/fsondisk.go`
    /// CleanedAbs returns with symlinks evaluated). A symlink that leaves the tree is not written
    /// (reading it is refused above).
    pub fn write_files<'p>(
        &self,
        dir: &Path,
        paths: impl IntoIterator<Item = &'p str>,
    ) -> Result<Vec<String>, Error> {
        let mut wrote = Vec::new();
        let mut pending: Vec<(String, usize)> =
            paths.into_iter().map(|p| (p.to_string(), 0)).collect();
        let mut seen = std::collections::HashSet::new();
        while let Some((path, depth)) = pending.pop() {
            // Names gpuledger writes itself (wrapper kustomizations, values files) are its own;
            // fetched content mounted in the tree is written like the repository's files.
            if (path.starts_with(".gpuledger-") && !path.starts_with(REMOTE_MOUNTS))
                || !seen.insert(path.clone())
            {
                continue;
            }
            let dest = dir.join(&path);
            let fail = |source| Error::Write {
                path: dest.clone(),
                source,
            };
            let parent = |d: &Path| match d.parent() {
                Some(p) => std::fs::create_dir_all(p),
                None => Ok(()),
            };
            match self.files.get(&path) {
                Some(Entry::Symlink(target)) => {
                    let Some(to) = resolve_link(&path, target) else {
                        continue;
                    };
                    // What the link points to, written too unless it is already there (a
                    // unit may have rewritten it in the copy), as far as links chain.
                    if depth < 40 {
                        let extra: Vec<String> = if self.files.contains_key(&to) {
                            vec![to]
                        } else {
                            self.files_under(&to).map(str::to_string).collect()
                        };
                        pending.extend(
                            extra
                                .into_iter()
                                .filter(|p| std::fs::symlink_metadata(dir.join(p)).is_err())
                                .map(|p| (p, depth + 1)),
                        );
                    }
                    if std::fs::symlink_metadata(&dest).is_ok() {
                        continue;
                    }
                    parent(&dest).map_err(fail)?;
                    std::os::unix::fs::symlink(target, &dest).map_err(fail)?;
                }
                _ => {
                    let Ok(bytes) = self.read(&path) else {
                        continue;
                    };
                    parent(&dest)
                        .and_then(|()| std::fs::write(&dest, bytes))
                        .map_err(fail)?;
                }
            }
            wrote.push(path);
        }
        Ok(wrote)
    }
}

fn input(path: &Path, message: &str) -> Error {
    Error::Input(InputError {
        file: path.display().to_string(),
        line: None,
        column: None,
        message: message.to_string(),
    })
}

/// Normalises `dir/..`-style paths inside the tree; `None` when the path leaves the root.
pub fn normalize(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for c in Path::new(path).components() {
        match c {
            Component::Normal(s) => parts.push(s.to_str()?),
            Component::CurDir => {}
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(parts.join("/"))
}

/// A path from a manifest (`./apps/x`, `apps/x/`) as a tree path, refused when it leaves the tree.
pub fn tree_path(p: &str) -> Result<String, TreeError> {
    normalize(p.trim()).ok_or_else(|| TreeError::PathOutside {
        path: p.to_string(),
    })
}

/// Whether `path` is `dir` or below it (everything is below the root, `""`).
pub fn under(path: &str, dir: &str) -> bool {
    dir.is_empty() || path == dir || path.starts_with(&format!("{dir}/"))
}

/// `dir/file`, or `file` at the root.
pub fn join(dir: &str, file: &str) -> String {
    if dir.is_empty() {
        file.to_string()
    } else {
        format!("{}/{file}", dir.trim_end_matches('/'))
    }
}

pub fn is_chart_dir(tree: &Tree, dir: &str) -> bool {
    tree.exists(&join(dir, "Chart.yaml"))
}

/// The tree path a symlink at `link` with `target` points to, if it stays inside the tree.
fn resolve_link(link: &str, target: &str) -> Option<String> {
    if target.starts_with('/') {
        return None;
    }
    let dir = link.rsplit_once('/').map_or("", |(d, _)| d);
    normalize(&format!("{dir}/{target}"))
}

fn remote_urls(repo: &git2::Repository) -> Vec<String> {
    let Ok(names) = repo.remotes() else {
        return vec![];
    };
    let mut urls: Vec<String> = names
        .iter()
        .filter_map(|n| n.ok().flatten())
        .filter_map(|n| repo.find_remote(n).ok())
        .filter_map(|r| r.url().ok().map(str::to_string))
        .collect();
    urls.sort();
    urls.dedup();
    urls
}

/// What to do about a ref the clone does not have: a shallow or single-branch clone (what
/// actions/checkout makes by default) lacks the base branch and older commits.
pub fn fetch_hint(rev: &str) -> String {
    let remote_ref = rev.strip_prefix("origin/").unwrap_or(rev);
    format!(
        "fetch it first (`git fetch origin {remote_ref}`); under GitHub Actions, give actions/checkout \
         `fetch-depth: 0`"
    )
}

fn read_git(
    repo: &git2::Repository,
    rev: &str,
    path: &Path,
) -> Result<BTreeMap<String, Entry>, Error> {
    let obj = repo.revparse_single(rev).map_err(|e| {
        input(
            path,
            &format!(
                "cannot resolve ref {rev:?}: {}; {}",
                e.message(),
                fetch_hint(rev)
            ),
        )
    })?;
    let tree = obj.peel_to_tree().map_err(|e| {
        input(
            path,
            &format!("ref {rev:?} does not name a tree: {}", e.message()),
        )
    })?;
    let mut files = BTreeMap::new();
    super::git_tree::read_tree(repo, &tree, "", &mut files)
        .map_err(|e| input(path, &format!("at ref {rev:?}: {e}")))?;
    Ok(files)
}

/// The working directory's files; a submodule's directory is left to
/// [`super::git_tree::submodules_of_workdir`], which reads it as at a ref. A name that is not UTF-8
/// is read under its name with the invalid bytes replaced, never dropped.
fn read_workdir(
    root: &Path,
    git: Option<&git2::Repository>,
) -> Result<BTreeMap<String, Entry>, Error> {
    let submodules: std::collections::BTreeSet<PathBuf> = git
        .and_then(|g| g.index().ok())
        .map(|index| {
            index
                .iter()
                .filter(|e| e.mode == 0o160000)
                .map(|e| {
                    use std::os::unix::ffi::OsStrExt;
                    PathBuf::from(std::ffi::OsStr::from_bytes(&e.path))
                })
                .collect()
        })
        .unwrap_or_default();
    let mut files = BTreeMap::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let dir = root.join(&rel);
        let entries = std::fs::read_dir(&dir).map_err(|source| Error::Read {
            path: dir.clone(),
            source,
        })?;
        for e in entries {
            let e = e.map_err(|source| Error::Read {
                path: dir.clone(),
                source,
            })?;
            let name = e.file_name();
            if rel.as_os_str().is_empty() && name == ".git" {
                continue;
            }
            let rel_path = rel.join(&name);
            if submodules.contains(&rel_path) {
                continue;
            }
            let key = rel_path.to_string_lossy().replace('\\', "/");
            let full = root.join(&rel_path);
            let meta = std::fs::symlink_metadata(&full).map_err(|source| Error::Read {
                path: full.clone(),
                source,
            })?;
            if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&full).map_err(|source| Error::Read {
                    path: full.clone(),
                    source,
                })?;
                files.insert(key, Entry::Symlink(target.to_string_lossy().into_owned()));
            } else if meta.is_dir() {
                stack.push(rel_path);
            } else if meta.is_file() {
                let entry = if meta.len() > MAX_FILE_BYTES {
                    Entry::TooLarge(meta.len())
                } else {
                    Entry::File(std::fs::read(&full).map_err(|source| Error::Read {
                        path: full.clone(),
                        source,
                    })?)
                };
                files.insert(key, entry);
            }
        }
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_stays_inside() {
        assert_eq!(normalize("a/./b/../c").as_deref(), Some("a/c"));
        assert_eq!(normalize("a/../../etc"), None);
        assert_eq!(normalize("/etc/passwd"), None);
        assert_eq!(
            resolve_link("apps/x/link.yaml", "../y/real.yaml").as_deref(),
            Some("apps/y/real.yaml")
        );
        assert_eq!(resolve_link("link.yaml", "../../outside"), None);
    }
}
