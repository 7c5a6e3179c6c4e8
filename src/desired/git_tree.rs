//! A commit's tree read as git has it: every blob by its path, names that are not UTF-8 included
//! (by their bytes, shown with the invalid bytes replaced, as `git ls-files` shows them unquoted),
//! and submodules read at the commit the superproject records, from the submodule's own
//! repository (`.git/modules/<name>`, or the older `<path>/.git`) when that commit is here;
//! otherwise the submodule is an [`Entry::Submodule`] and everything below it is unknown. The
//! working tree reads its submodules here too ([`submodules_of_workdir`]), so a submodule is the
//! same in both modes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::entry::{Entry, MAX_FILE_BYTES};

/// Submodules inside submodules are followed this deep.
const MAX_DEPTH: usize = 8;

/// Why a tree could not be read at all (a blob that cannot be read, or fetched).
#[derive(Debug, thiserror::Error)]
pub enum GitTreeError {
    #[error("cannot read tree {what}: {message}")]
    Tree { what: String, message: String },
    #[error("{path}: cannot read blob: {message}")]
    Blob { path: String, message: String },
    #[error(
        "{path} (blob {oid}) is not in this partial clone and could not be fetched{why}; fetch it (git fetch) or clone without --filter"
    )]
    NotFetched {
        path: String,
        oid: git2::Oid,
        why: String,
    },
}

/// Reads `tree` of `repo` into `files`, each path under `prefix` (`""` or `dir/`).
pub fn read_tree(
    repo: &git2::Repository,
    tree: &git2::Tree<'_>,
    prefix: &str,
    files: &mut BTreeMap<String, Entry>,
) -> Result<(), GitTreeError> {
    read_at_depth(repo, tree, prefix, files, 0)
}

fn read_at_depth(
    repo: &git2::Repository,
    tree: &git2::Tree<'_>,
    prefix: &str,
    files: &mut BTreeMap<String, Entry>,
    depth: usize,
) -> Result<(), GitTreeError> {
    let mut walk = Walk::default();
    walk_tree(repo, tree, prefix, &mut walk)?;
    // Blobs a partial clone (`git clone --filter=blob:none`, what CI checkouts often are) does not
    // hold: fetched together once the walk is done, as git itself would fetch them lazily.
    if !walk.absent.is_empty() {
        let fetched = fetch_blobs(repo, walk.absent.iter().map(|(_, oid, _)| *oid));
        for (full, oid, mode) in walk.absent {
            let blob = repo.find_blob(oid).map_err(|_| GitTreeError::NotFetched {
                path: full.clone(),
                oid,
                why: fetched
                    .as_ref()
                    .err()
                    .map(|e| format!(": {e}"))
                    .unwrap_or_default(),
            })?;
            walk.files.insert(full, blob_entry(&blob, mode));
        }
    }
    files.append(&mut walk.files);
    if walk.gitlinks.is_empty() {
        return Ok(());
    }
    let modules = walk
        .files_gitmodules
        .as_deref()
        .map(gitmodules)
        .unwrap_or_default();
    for (path, commit) in walk.gitlinks {
        let rel = path.strip_prefix(prefix).unwrap_or(&path).to_string();
        let found = open_submodule(repo, None, &modules, &rel);
        read_submodule(found, &path, commit, files, depth)?;
    }
    Ok(())
}

/// Reads the submodule at tree path `path` at `commit` from its repository `sub` into `files`, or
/// records it as unknown.
fn read_submodule(
    sub: Result<git2::Repository, String>,
    path: &str,
    commit: git2::Oid,
    files: &mut BTreeMap<String, Entry>,
    depth: usize,
) -> Result<(), GitTreeError> {
    let unknown = |why: String| Entry::Submodule {
        commit: commit.to_string(),
        why,
    };
    if depth >= MAX_DEPTH {
        files.insert(
            path.to_string(),
            unknown(format!("submodules nest deeper than {MAX_DEPTH}")),
        );
        return Ok(());
    }
    let sub = match sub {
        Ok(s) => s,
        Err(why) => {
            files.insert(path.to_string(), unknown(why));
            return Ok(());
        }
    };
    let tree = match sub.find_commit(commit).and_then(|c| c.tree()) {
        Ok(t) => t,
        Err(_) => {
            files.insert(
                path.to_string(),
                unknown(format!(
                    "its repository ({}) does not hold the recorded commit; `git submodule update` fetches it",
                    sub.path().display()
                )),
            );
            return Ok(());
        }
    };
    read_at_depth(&sub, &tree, &format!("{path}/"), files, depth + 1)
}

/// What one walk of a tree found.
#[derive(Default)]
struct Walk {
    files: BTreeMap<String, Entry>,
    absent: Vec<(String, git2::Oid, i32)>,
    gitlinks: Vec<(String, git2::Oid)>,
    /// The tree's own `.gitmodules`, which names its submodules.
    files_gitmodules: Option<String>,
}

fn walk_tree(
    repo: &git2::Repository,
    tree: &git2::Tree<'_>,
    dir: &str,
    walk: &mut Walk,
) -> Result<(), GitTreeError> {
    for entry in tree.iter() {
        // git names are bytes: one that is not UTF-8 is read under its name with the invalid
        // bytes replaced, never dropped.
        let name = String::from_utf8_lossy(entry.name_bytes());
        let full = format!("{dir}{name}");
        match entry.kind() {
            Some(git2::ObjectType::Tree) => {
                let sub = repo.find_tree(entry.id()).map_err(|e| GitTreeError::Tree {
                    what: full.clone(),
                    message: e.message().to_string(),
                })?;
                walk_tree(repo, &sub, &format!("{full}/"), walk)?;
            }
            Some(git2::ObjectType::Blob) => match repo.find_blob(entry.id()) {
                Ok(blob) => {
                    let e = blob_entry(&blob, entry.filemode());
                    if name == ".gitmodules"
                        && let Entry::File(b) = &e
                    {
                        walk.files_gitmodules = Some(String::from_utf8_lossy(b).into_owned());
                    }
                    walk.files.insert(full, e);
                }
                Err(e) if e.code() == git2::ErrorCode::NotFound => {
                    walk.absent.push((full, entry.id(), entry.filemode()));
                }
                Err(e) => {
                    return Err(GitTreeError::Blob {
                        path: full,
                        message: e.message().to_string(),
                    });
                }
            },
            // A gitlink: a submodule at a commit of its own repository.
            Some(git2::ObjectType::Commit) => walk.gitlinks.push((full, entry.id())),
            _ => {}
        }
    }
    Ok(())
}

/// The submodules a working directory holds, by path: the commit it has checked out (what the
/// working tree holds), else the commit its index records. Read as at a ref, into `files`.
pub fn submodules_of_workdir(
    repo: &git2::Repository,
    root: &Path,
    files: &mut BTreeMap<String, Entry>,
) -> Result<(), GitTreeError> {
    let Ok(index) = repo.index() else {
        return Ok(());
    };
    let links: Vec<(String, git2::Oid)> = index
        .iter()
        .filter(|e| e.mode == 0o160000)
        .map(|e| (String::from_utf8_lossy(&e.path).into_owned(), e.id))
        .collect();
    if links.is_empty() {
        return Ok(());
    }
    let modules = std::fs::read_to_string(root.join(".gitmodules"))
        .map(|t| gitmodules(&t))
        .unwrap_or_default();
    for (path, recorded) in links {
        let found = open_submodule(repo, Some(root), &modules, &path);
        let commit = found
            .as_ref()
            .ok()
            .filter(|s| s.workdir().is_some_and(|w| same_dir(w, &root.join(&path))))
            .and_then(|s| s.head().ok()?.target())
            .unwrap_or(recorded);
        read_submodule(found, &path, commit, files, 0)?;
    }
    Ok(())
}

fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// The submodule at `path` (relative to `repo`'s root): its own repository, as git finds it — the
/// checked-out `<path>/.git` (a directory, or a file naming `.git/modules/<name>`) in a working
/// tree, else `.git/modules/<name>` by the name `.gitmodules` gives the path (the path itself when
/// it gives none). Why it cannot be opened otherwise.
fn open_submodule(
    repo: &git2::Repository,
    workdir: Option<&Path>,
    modules: &BTreeMap<String, String>,
    path: &str,
) -> Result<git2::Repository, String> {
    if let Some(w) = workdir
        && w.join(path).join(".git").exists()
        && let Ok(r) = git2::Repository::open(w.join(path))
    {
        return Ok(r);
    }
    let name = modules.get(path).map_or(path, String::as_str);
    // git refuses submodule names that climb out of `.git/modules` (submodule.c,
    // check_submodule_name); so does this.
    if name.split(['/', '\\']).any(|c| c == ".." || c.is_empty()) {
        return Err(format!("its name {name:?} in .gitmodules is refused"));
    }
    let dir: PathBuf = repo.commondir().join("modules").join(name);
    git2::Repository::open_bare(&dir)
        .or_else(|_| git2::Repository::open(&dir))
        .map_err(|_| {
            "its repository is not here (not cloned: `git submodule update --init` fetches it)"
                .to_string()
        })
}

/// `.gitmodules`: submodule path → name (git-config syntax, `[submodule "name"]` and `path = …`).
fn gitmodules(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut name: Option<String> = None;
    for line in text.lines().map(str::trim) {
        if let Some(section) = line.strip_prefix('[') {
            name = section
                .trim_end_matches(']')
                .trim()
                .strip_prefix("submodule")
                .map(|r| r.trim().trim_matches('"').to_string());
        } else if let (Some(n), Some((key, value))) = (&name, line.split_once('='))
            && key.trim().eq_ignore_ascii_case("path")
        {
            out.insert(
                value
                    .trim()
                    .trim_matches('"')
                    .trim_end_matches('/')
                    .to_string(),
                n.clone(),
            );
        }
    }
    out
}

/// A blob as a tree entry: a symlink's target, a file's bytes, or a file too large to read.
fn blob_entry(blob: &git2::Blob<'_>, filemode: i32) -> Entry {
    let size = u64::try_from(blob.size()).unwrap_or(u64::MAX);
    if size > MAX_FILE_BYTES {
        // Too big to be a manifest; reading it is refused later with a clear message.
        return Entry::TooLarge(size);
    }
    let content = blob.content().to_vec();
    if filemode == 0o120000 {
        Entry::Symlink(String::from_utf8_lossy(&content).into_owned())
    } else {
        Entry::File(content)
    }
}

/// Seconds the fetch of a partial clone's missing blobs may take.
const FETCH_TIMEOUT_S: u64 = 120;

/// Fetches `oids` from the repository's promisor remote in one `git fetch`, the way git fetches
/// missing objects of a partial clone (git `promisor-remote.c`, `fetch_objects`: a fetch with the
/// noop negotiation, no tags, no FETCH_HEAD and the blob filter). libgit2 cannot fetch lazily, so
/// this runs the git on PATH with the user's credentials (home, SSH agent), bounded in time, in the
/// repository's `.git`: nothing from the tree under review configures it.
fn fetch_blobs(
    repo: &git2::Repository,
    oids: impl Iterator<Item = git2::Oid>,
) -> Result<(), FetchError> {
    let config = repo.config().map_err(FetchError::Config)?;
    let mut promisor = None;
    if let Ok(mut entries) = config.entries(Some(r"remote\..*\.promisor")) {
        while let Some(Ok(e)) = entries.next() {
            if e.value().is_ok_and(|v| v.eq_ignore_ascii_case("true")) {
                promisor = e
                    .name()
                    .ok()
                    .and_then(|n| n.strip_prefix("remote."))
                    .and_then(|n| n.strip_suffix(".promisor"))
                    .map(str::to_string);
            }
        }
    }
    let remote = promisor.ok_or(FetchError::NotPartial)?;
    let git = crate::util::process::which("git").ok_or(FetchError::NoGit)?;
    let gitdir = repo.path().display().to_string();
    let mut args = vec![
        "--git-dir".to_string(),
        gitdir,
        "-c".into(),
        "fetch.negotiationAlgorithm=noop".into(),
        "fetch".into(),
        "--quiet".into(),
        "--no-tags".into(),
        "--no-write-fetch-head".into(),
        "--recurse-submodules=no".into(),
        "--filter=blob:none".into(),
        remote.clone(),
    ];
    args.extend(oids.map(|o| o.to_string()));
    // The user's own credentials reach git; a prompt never waits for a terminal.
    let mut env: Vec<(String, String)> = [
        "HOME",
        "XDG_CONFIG_HOME",
        "SSH_AUTH_SOCK",
        "GIT_SSH_COMMAND",
        "GIT_ASKPASS",
    ]
    .into_iter()
    .filter_map(|k| std::env::var(k).ok().map(|v| (k.to_string(), v)))
    .collect();
    env.push(("GIT_TERMINAL_PROMPT".into(), "0".into()));
    let cwd = repo.path();
    crate::util::process::run(&crate::util::process::Run {
        program: &git,
        args,
        cwd,
        env,
        timeout: std::time::Duration::from_secs(FETCH_TIMEOUT_S),
    })
    .map(|_| ())
    .map_err(|e| FetchError::Fetch {
        remote,
        message: e.to_string(),
    })
}

/// Why the blobs a partial clone lacks could not be fetched: part of the message that names the
/// missing file.
#[derive(Debug, thiserror::Error)]
enum FetchError {
    #[error("{}", .0.message())]
    Config(git2::Error),
    #[error("it is not a partial clone (no promisor remote)")]
    NotPartial,
    #[error("git is not on PATH")]
    NoGit,
    #[error("git fetch {remote}: {message}")]
    Fetch { remote: String, message: String },
}
