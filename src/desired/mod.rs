//! The desired state: what a GitOps repository says should run, rendered the way Argo CD and Flux
//! would render it.
//!
//! [`tree`] reads the repository at a ref (paths inside the tree, symlinks that stay in it) and
//! [`kustomization`] reads what its kustomization files say; [`discover`] decides what to render
//! (the Argo CD and Flux apps when the repository declares any, else kustomize roots, chart roots
//! and plain directories, or the roots the config names) and parses every manifest once
//! ([`Parsed`]); [`argo`], [`appset`] and [`flux`] turn Argo CD Applications, ApplicationSets and
//! Flux Kustomizations/HelmReleases into render [`Unit`]s, each source yielding a unit or the
//! reason it is not rendered, on what [`source`] shares (whether a source is this repository);
//! [`follow`] renders the roots and follows the apps in their output down; [`render`] runs each
//! unit (plain YAML in process, kustomize and helm as sandboxed subprocesses, the [`cache`]
//! answering what it has seen) and hands over plain objects, after [`sandbox`] has checked that
//! every path the unit's kustomizations, chart and values name stays inside the repository. One
//! unit failing never stops the others: its [`error`] is part of the result.
//!
//! Dependencies run one way: `discover` → `follow` → `render` and `argo`/`appset`/`flux` →
//! `source`; `render` → `cache` → `sandbox` → `kustomization` → `tree` → `error`, with `tree` →
//! `git_tree` → `entry` for reading git (and `render` → `flux` for the files a Flux directory
//! lists); every module may use the shared types below, which use nothing of `desired/` but
//! [`error`].

pub mod appset;
pub mod argo;
pub mod argo_directory;
pub mod cache;
pub mod clusters;
pub mod discover;
pub mod entry;
pub mod error;
pub mod flux;
pub mod flux_bootstrap;
pub mod follow;
pub mod git_tree;
pub mod kustomization;
pub mod lenient;
pub mod lfs;
pub mod prepare;
pub mod remote;
pub mod render;
pub mod sandbox;
mod script_roots;
pub mod source;
pub mod sourceignore;
pub mod tree;

use std::collections::BTreeMap;

use serde_json::Value;

use crate::error::InputError;
use crate::k8s::object::Object;
use error::RenderError;

/// Every manifest file of the tree outside chart directories, parsed once by `discover`: its
/// objects, or why it does not parse. Plain units take their objects from it, kustomize builds
/// find the line of each object's source file in it, and following uses it to tell which files
/// an app applies.
pub type Parsed = BTreeMap<String, Result<Vec<Object>, InputError>>;

/// How a unit is rendered.
#[derive(Debug, Clone)]
pub enum How {
    /// These files, parsed in process.
    Plain { files: Vec<String> },
    /// `kustomize build` of the unit's directory, wrapped in a generated kustomization carrying
    /// these fields (namePrefix, images, replicas, patches, …) when there are any. A directory without
    /// a kustomization file gets one listing its manifests, as Flux does.
    Kustomize {
        overlay: serde_json::Map<String, Value>,
        recurse_plain: bool,
    },
    /// `helm template` of the chart directory.
    Helm(HelmArgs),
}

#[derive(Debug, Clone, Default)]
pub struct HelmArgs {
    pub release: String,
    /// Values files as tree paths, in order.
    pub values_files: Vec<String>,
    /// Inline values (Argo `values`/`valuesObject`, Flux `values`), applied after the files.
    pub values: Vec<Value>,
    /// Argo CD `parameters` (`--set`) and those with `forceString` (`--set-string`), by name as
    /// Argo CD keeps them (the last of a name wins), values as written: the render step escapes
    /// them as Argo CD does.
    pub set: BTreeMap<String, String>,
    pub set_string: BTreeMap<String, String>,
    /// Argo CD `fileParameters` (`--set-file`): name → tree path, the last of a name winning.
    pub set_file: BTreeMap<String, String>,
    pub include_crds: bool,
    /// A values file inside a fetched chart ([`CHART_FILE`]) that the chart does not have is
    /// dropped rather than an error (Argo CD `ignoreMissingValueFiles`, Flux
    /// `ignoreMissingValuesFiles`).
    pub ignore_missing_values: bool,
}

/// One thing to render: an app's source, or a root found without apps.
#[derive(Debug, Clone)]
pub struct Unit {
    /// The owning app's name (Argo CD Application, Flux object), or the root's path.
    pub app: String,
    /// `Application`, `ApplicationSet/<generator>`, `Kustomization`, `HelmRelease`, `kustomize`,
    /// `helm`, `directory`.
    pub app_kind: String,
    /// Where the app is defined (file:line), or the root's path.
    pub defined_at: String,
    /// The source directory (or file) in the tree.
    pub path: String,
    pub how: How,
    /// Namespace for namespaced objects that set none (Argo destination, Flux target).
    pub namespace: Option<String>,
    /// Flux `targetNamespace` overrides what the manifests say.
    pub force_namespace: bool,
    /// Flux `postBuild.substitute`.
    pub substitute: Option<BTreeMap<String, String>>,
    /// Flux `postBuild.substituteFrom` is set: variables come from the cluster too, so one that
    /// `substitute` does not give is unknown and kept as written, not replaced with nothing.
    pub substitute_from_cluster: bool,
    /// What could not be resolved offline (valuesFrom, substituteFrom), rendered without.
    pub notes: Vec<String>,
    /// The cluster the unit's objects are applied to ([`clusters`]), when the repository says.
    pub cluster: Option<String>,
    /// The apps that applied this unit's app, root first (`Kustomization/flux-system`, …); empty
    /// for a root.
    pub lineage: Vec<String>,
    /// A chart from a Helm repository or an OCI registry, fetched before the unit renders (its
    /// `path` then only names it).
    pub chart: Option<remote::refs::ChartRef>,
    /// What fetching prepared for it: the chart, the dependencies its `charts/` lacks, and what
    /// each request resolved to. Set by [`follow`] before the unit renders.
    pub prepared: Option<std::sync::Arc<Prepared>>,
    /// The app object's hash ([`source::fingerprint`]); 0 for a root found without apps.
    pub fingerprint: u64,
    /// Whether syncing the app deletes what it stops declaring: Argo CD's
    /// `syncPolicy.automated.prune` (false when unset, Argo CD's default), a Flux Kustomization's
    /// `spec.prune`, true for a HelmRelease (Helm removes what a release no longer renders);
    /// `None` for a root no app applies.
    pub prune: Option<bool>,
}

/// A values file inside a fetched chart (Argo CD `valueFiles` of a chart source, Flux
/// `valuesFiles` of a HelmRepository chart), as a [`HelmArgs::values_files`] entry.
pub const CHART_FILE: &str = ".gpuledger-chart/";

/// What was fetched for a unit before it renders.
#[derive(Debug, Clone, Default)]
pub struct Prepared {
    /// The unit's chart, when it is not in the repository.
    pub chart: Option<remote::refs::FetchedChart>,
    /// Dependencies its chart's `charts/` lacks, by name.
    pub deps: Vec<(String, remote::deps::Supply)>,
    /// What each request resolved to, for the report.
    pub resolved: Vec<remote::refs::Resolved>,
}

/// An app that is listed but not rendered, with the reason (another repository, an OCI chart, a
/// generator that needs the cluster).
#[derive(Debug, Clone)]
pub struct Skipped {
    pub app: String,
    pub app_kind: String,
    pub defined_at: String,
    pub reason: String,
    /// The other repository its source names, when that is the reason ([`source::SkipReason`]).
    pub repository: Option<String>,
    /// True when the app is broken or hostile (a path out of the repository, an invalid spec),
    /// rather than merely out of reach offline.
    pub error: bool,
    /// An app object that no root applies (listed, never rendered).
    pub not_applied: bool,
    pub cluster: Option<String>,
    /// The app object's hash ([`source::fingerprint`]).
    pub fingerprint: u64,
}

/// A rendered unit: its objects, or the error that stopped it.
pub struct Outcome {
    pub unit: Unit,
    pub result: Result<Vec<Object>, RenderError>,
}

/// Everything `render` produced for one tree.
pub struct Rendered {
    pub label: String,
    /// The one cluster kept by [`Rendered::keep_cluster`].
    pub cluster: Option<String>,
    pub outcomes: Vec<Outcome>,
    pub skipped: Vec<Skipped>,
    /// Manifest files that no app renders (only when the repository declares apps).
    pub not_deployed: Vec<String>,
    /// Problems with the repository as a whole (an unreadable app definition, a refused symlink).
    pub problems: Vec<String>,
}

impl Rendered {
    /// The clusters the rendered apps are applied to, by name.
    pub fn clusters(&self) -> std::collections::BTreeSet<String> {
        self.outcomes
            .iter()
            .filter_map(|o| o.unit.cluster.clone())
            .chain(self.skipped.iter().filter_map(|s| s.cluster.clone()))
            .collect()
    }

    /// Keeps what is applied to `cluster`, and what names no cluster (a source without a
    /// destination belongs to every cluster the repository is compared with).
    pub fn keep_cluster(&mut self, cluster: &str) {
        let mine = |c: &Option<String>| c.as_deref().is_none_or(|c| c == cluster);
        self.outcomes.retain(|o| mine(&o.unit.cluster));
        self.skipped.retain(|s| mine(&s.cluster));
        self.cluster = Some(cluster.to_string());
    }
}
