//! The external renderers and the room they run in: which kustomize and helm this machine has,
//! the environment every renderer process gets (a throwaway HOME, git that reaches no remote), and
//! the files gpuledger writes into the repository's copy for them (wrapper kustomizations, values).
//! Renderer messages are shown with the copy's paths named as the repository names them.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::desired::error::FileError;
use crate::desired::tree::Tree;
use crate::util::process::which;

/// The external renderers available on this machine.
#[derive(Debug, Clone)]
pub struct Tools {
    /// The kustomize program and the arguments before the directory (`kustomize build` or
    /// `kubectl kustomize`).
    pub kustomize: Option<(PathBuf, Vec<String>)>,
    pub helm: Option<PathBuf>,
    pub timeout: Duration,
    /// Whether kustomize units that cannot touch each other build in one process (the `batch`
    /// module); `GPULEDGER_KUSTOMIZE_BATCH=0` builds each on its own.
    pub batch: bool,
}

impl Tools {
    /// `GPULEDGER_KUSTOMIZE` / `GPULEDGER_HELM` when set, else `kustomize` (or `kubectl`) and `helm` on
    /// PATH.
    pub fn detect(timeout: Duration) -> Tools {
        let from_env = |var: &str| {
            std::env::var_os(var)
                .map(PathBuf::from)
                .filter(|p| !p.as_os_str().is_empty())
        };
        let kustomize = match from_env("GPULEDGER_KUSTOMIZE") {
            Some(p) => Some(kustomize_args(p)),
            None => which("kustomize")
                .map(kustomize_args)
                .or_else(|| which("kubectl").map(kustomize_args)),
        };
        Tools {
            kustomize,
            helm: from_env("GPULEDGER_HELM").or_else(|| which("helm")),
            timeout,
            batch: std::env::var("GPULEDGER_KUSTOMIZE_BATCH").map_or(true, |v| v != "0"),
        }
    }
}

fn kustomize_args(p: PathBuf) -> (PathBuf, Vec<String>) {
    let is_kubectl = p
        .file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with("kubectl"));
    let sub = if is_kubectl { "kustomize" } else { "build" };
    (p, vec![sub.into()])
}

/// Where a unit renders: the tree, its copy on disk (`root`), the renderers' HOME, the tools, and
/// the unit's number, which names the files gpuledger writes for it (wrappers, values files).
pub(super) struct Site<'a> {
    pub tree: &'a Tree,
    pub root: &'a Path,
    pub home: &'a Path,
    pub tools: &'a Tools,
    pub number: usize,
}

/// The environment of a renderer: a HOME outside the repository's copy (so a repository cannot
/// plant a `.gitconfig` or helm plugins there), and git that can reach no remote and read no
/// configuration, should a renderer try to fetch something.
pub(super) fn sandbox_env(home: &Path) -> Vec<(String, String)> {
    vec![
        ("HOME".into(), home.display().to_string()),
        ("GIT_CONFIG_NOSYSTEM".into(), "1".into()),
        ("GIT_CONFIG_GLOBAL".into(), "/dev/null".into()),
        ("GIT_TERMINAL_PROMPT".into(), "0".into()),
        ("GIT_ALLOW_PROTOCOL".into(), "none".into()),
    ]
}

/// Writes a file gpuledger generates for a renderer (JSON is YAML), making its directory.
pub(super) fn write(path: &Path, v: &Value) -> Result<(), FileError> {
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d).map_err(|e| FileError::new(d.display(), e))?;
    }
    std::fs::write(path, serde_json::to_string_pretty(v).unwrap_or_default())
        .map_err(|e| FileError::new(path.display(), e))
}

/// Error messages name paths as the repository does, not the temporary directory.
pub(super) fn clean_paths(msg: &str, root: &Path) -> String {
    msg.replace(&format!("{}/", root.display()), "")
        .replace(&root.display().to_string(), ".")
}

/// A tree path as messages show it: the root is `.`.
pub(super) fn rel(p: &str) -> String {
    if p.is_empty() {
        ".".into()
    } else {
        p.to_string()
    }
}
