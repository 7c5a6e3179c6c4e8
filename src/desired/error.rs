//! Why a file of the repository could not be read, a unit was refused by the sandbox, or a unit
//! did not render.
//!
//! One enum per stage: [`TreeError`] for reading the [`Tree`](super::tree::Tree), [`SandboxError`]
//! for a path a kustomization, chart or app names that leaves the repository, [`InflateError`] for
//! a kustomization's `helmCharts`, and [`RenderError`] for everything that stops a unit, which
//! wraps the others. A unit's error is data, not a failure of the run: it ends up as the app's
//! `error` in the report, in these words, so each message names the file and what to change.
//! Errors are cloned into every unit that shares a render (the render cache), so what the
//! operating system said is kept behind an [`Arc`].
//!
//! They live here, below every module of `desired/`, so that the tree, the sandbox and the render
//! step can all hand each other's errors on without naming each other.

use std::sync::Arc;

use crate::error::InputError;

/// Why a path is not inside the repository.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Leaves {
    /// `..` above the repository root, or an absolute path.
    #[error("leaves the repository")]
    Outside,
    /// Through a symlink in the repository whose target is outside it.
    #[error("leaves the repository (through the symlink {link} to {target:?})")]
    Symlink { link: String, target: String },
    /// A symlink loop.
    #[error("leaves the repository (a symlink loop)")]
    TooManyLinks,
}

/// A file or path of the repository's tree that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TreeError {
    #[error("{path}: {size} bytes is too large for a manifest (limit {limit}): refused")]
    TooLarge { path: String, size: u64, limit: u64 },
    #[error(
        "{path}: Git LFS object not fetched (a pointer to sha256:{oid}; `git lfs pull` fetches it): what it holds is unknown"
    )]
    LfsNotFetched { path: String, oid: String },
    #[error("{}", submodule_not_read(path, submodule, commit, why))]
    SubmoduleNotRead {
        path: String,
        submodule: String,
        commit: String,
        why: String,
    },
    #[error("{path}: symlink to {target} points outside the repository: refused")]
    SymlinkOutside { path: String, target: String },
    #[error("{path}: too many levels of symlinks")]
    SymlinkLoop { path: String },
    /// `tree` is what the tree was read from (`working tree`, `ref main`).
    #[error("{path}: no such file in the {tree}")]
    NoSuchFile { path: String, tree: String },
    /// A path from a manifest that climbs out of the repository.
    #[error("path {path:?} points outside the repository: refused")]
    PathOutside { path: String },
}

fn submodule_not_read(path: &str, submodule: &str, commit: &str, why: &str) -> String {
    let what = if path == submodule {
        format!("{path}: submodule")
    } else {
        format!("{path}: in the submodule {submodule}")
    };
    format!("{what} at commit {commit}, not read: {why}; what it holds is unknown")
}

/// A path that a unit's kustomizations, chart or helm options name, refused before any renderer
/// runs (see the `sandbox` module).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SandboxError {
    #[error("{file}: remote {field} entry {entry:?} is not fetched: refused")]
    Remote {
        file: String,
        field: &'static str,
        entry: String,
    },
    /// A remote resource that was not fetched, and why.
    #[error("{file}: remote {field} entry {entry:?}: {why}")]
    RemoteMiss {
        file: String,
        field: &'static str,
        entry: String,
        why: String,
        refused: bool,
    },
    #[error("{file}: {field} entry {entry:?} {why}: refused")]
    Leaves {
        file: String,
        field: &'static str,
        entry: String,
        why: Leaves,
    },
    #[error(transparent)]
    Read(#[from] TreeError),
    #[error("{file}: cannot be read to check the paths it names ({message}): refused")]
    Unparsable { file: String, message: String },
    #[error("{file}: is not a kustomization (not a mapping)")]
    NotMapping { file: String },
    #[error("chart directory {chart} {why}: refused")]
    Chart { chart: String, why: Leaves },
    #[error("{chart_file}: dependencies entry {entry:?} {why}: refused")]
    Dependency {
        chart_file: String,
        entry: String,
        why: Leaves,
    },
    #[error("values file {file} {why}: refused")]
    ValuesFile { file: String, why: Leaves },
    #[error("fileParameters entry {name}: file {file} {why}: refused")]
    FileParameter {
        name: String,
        file: String,
        why: Leaves,
    },
}

/// A file gpuledger reads or writes in the repository's copy on disk, and what the system said.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{path}: {source}")]
pub struct FileError {
    pub path: String,
    pub source: Arc<std::io::Error>,
}

impl FileError {
    pub fn new(path: impl std::fmt::Display, source: std::io::Error) -> FileError {
        FileError {
            path: path.to_string(),
            source: Arc::new(source),
        }
    }
}

const NO_HELM: &str = "helm is not installed (not on PATH; set GPULEDGER_HELM)";

/// A kustomization's `helmCharts` that could not be inflated. `file` is the kustomization, `chart`
/// the entry's chart name.
#[derive(Debug, Clone, thiserror::Error)]
pub enum InflateError {
    #[error(
        "{file}: helmCharts are not inflated by Flux's kustomize-controller (it builds without \
         --enable-helm and fails with \"must specify --enable-helm\"); render the chart with a \
         HelmRelease instead"
    )]
    Flux { file: String },
    #[error(transparent)]
    File(#[from] FileError),
    #[error("{file}: helmCharts is not a list")]
    NotAList { file: String },
    #[error("{file}: helmGlobals: {message}")]
    Globals { file: String, message: String },
    /// `entry` counts from 1.
    #[error("{file}: helmCharts entry {entry}: {message}")]
    Entry {
        file: String,
        entry: usize,
        message: String,
    },
    #[error("{file}: helmCharts entry {entry}: chart name cannot be empty")]
    EmptyName { file: String, entry: usize },
    #[error("{file}: helmCharts {what} {path:?} {why}: refused")]
    Leaves {
        file: String,
        what: &'static str,
        path: String,
        why: Leaves,
    },
    #[error(
        "{file}: helmCharts {what} {path}: {resolved} is not in or below {dir}; kustomize's \
         root-only load restrictor refuses it, as kustomize build --enable-helm does"
    )]
    NotLoadable {
        file: String,
        what: &'static str,
        path: String,
        resolved: String,
        dir: String,
    },
    #[error(
        "{file}: helmCharts chart {chart}: no chart at {chart_dir} and no repo to pull it from"
    )]
    NoChart {
        file: String,
        chart: String,
        chart_dir: String,
    },
    #[error(
        "{file}: helmCharts chart {chart}{}: remote chart from {repo} is not fetched offline; \
         vendor it into {chart_dir} (helm pull --untar) to render it",
        version_suffix(.version)
    )]
    RemoteChart {
        file: String,
        chart: String,
        version: String,
        repo: String,
        chart_dir: String,
    },
    #[error("{file}: helmCharts chart {chart}: values file {values_file}: {source}")]
    ValuesFile {
        file: String,
        chart: String,
        values_file: String,
        source: Box<TreeError>,
    },
    #[error("{file}: helmCharts chart {chart}: values file {values_file}: {message}")]
    ValuesYaml {
        file: String,
        chart: String,
        values_file: String,
        message: String,
    },
    #[error("{file}: helmCharts chart {chart}: values file {values_file} is not a mapping")]
    ValuesNotMapping {
        file: String,
        chart: String,
        values_file: String,
    },
    #[error(
        "{file}: helmCharts chart {chart}: valuesMerge {merge:?} must be one of [merge override replace]"
    )]
    ValuesMerge {
        file: String,
        chart: String,
        merge: String,
    },
    #[error("{file}: helmCharts chart {chart}: {source}")]
    Sandbox {
        file: String,
        chart: String,
        source: Box<SandboxError>,
    },
    #[error("{}", NO_HELM)]
    NoHelm,
    /// helm's own words, with the copy's paths named as the repository names them.
    #[error("{file}: helmCharts chart {chart} ({chart_file}): {message}")]
    Helm {
        file: String,
        chart: String,
        chart_file: String,
        message: String,
    },
    /// A document of helm's output that is not YAML; `template` is where it came from.
    #[error("{file}: helmCharts chart {chart}: {template}: {message}")]
    Output {
        file: String,
        chart: String,
        template: String,
        message: String,
    },
}

fn version_suffix(version: &str) -> String {
    if version.is_empty() {
        String::new()
    } else {
        format!(" version {version}")
    }
}

/// Why a unit has no objects. The message is what the report shows as the app's error.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RenderError {
    #[error(
        "kustomize is not installed (neither kustomize nor kubectl is on PATH; set GPULEDGER_KUSTOMIZE)"
    )]
    NoKustomize,
    #[error("{}", NO_HELM)]
    NoHelm,
    /// The repository could not be copied to disk for kustomize and helm; the run's problems say
    /// why, once.
    #[error("the repository could not be written to disk for rendering")]
    NoCopy,
    #[error("the repository's copy is unusable")]
    CopyUnusable,
    /// A unit that the renderer lost track of: never expected, said rather than panicked.
    #[error("not rendered")]
    NotRendered,
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    #[error(transparent)]
    Inflate(#[from] InflateError),
    #[error(transparent)]
    File(#[from] FileError),
    /// A manifest (or a renderer's output) that does not parse.
    #[error(transparent)]
    Manifest(#[from] InputError),
    /// kustomize's own error for the app's path.
    #[error("kustomize build {path}: {message}")]
    Kustomize { path: String, message: String },
    /// The app's path builds alone; the app's options laid over it do not.
    #[error(
        "kustomize build {path} with the app's options (name prefix, patches, images, …): {message}"
    )]
    KustomizeOptions { path: String, message: String },
    /// helm's own words, with the copy's paths named as the repository names them.
    #[error("{0}")]
    Helm(String),
    /// Something the unit needs from outside the repository was not fetched: `what` names it
    /// (`chart oci://… ^1.2`, `dependency redis of the chart`).
    #[error("{what}: {error}")]
    Fetch {
        what: String,
        /// Why, as the fetch said it.
        error: String,
        /// gpuledger chose not to fetch (offline, a new source host, a refused address).
        refused: bool,
    },
}

impl RenderError {
    /// gpuledger chose not to fetch what the unit needs (`--offline`, a host the base does not
    /// use, a refused address): the unit is unknown, not broken.
    pub fn is_refusal(&self) -> bool {
        match self {
            RenderError::Fetch { refused, .. } => *refused,
            RenderError::Sandbox(SandboxError::RemoteMiss { refused, .. }) => *refused,
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Messages no integration test reaches, word for word as the report shows them.
    #[test]
    fn messages_say_what_to_do() {
        assert_eq!(
            RenderError::NoHelm.to_string(),
            "helm is not installed (not on PATH; set GPULEDGER_HELM)"
        );
        assert_eq!(
            InflateError::NoHelm.to_string(),
            RenderError::NoHelm.to_string()
        );
        let remote = |version: &str| InflateError::RemoteChart {
            file: "k/kustomization.yaml".into(),
            chart: "llm".into(),
            version: version.into(),
            repo: "https://charts.example".into(),
            chart_dir: "k/charts/llm".into(),
        };
        assert_eq!(
            remote("1.2.0").to_string(),
            "k/kustomization.yaml: helmCharts chart llm version 1.2.0: remote chart from \
             https://charts.example is not fetched offline; vendor it into k/charts/llm (helm pull \
             --untar) to render it"
        );
        assert!(remote("").to_string().contains("chart llm: remote chart"));
        let e = RenderError::from(SandboxError::Read(TreeError::TooLarge {
            path: "big.yaml".into(),
            size: 70,
            limit: 64,
        }));
        assert_eq!(
            e.to_string(),
            "big.yaml: 70 bytes is too large for a manifest (limit 64): refused"
        );
    }
}
