//! Where an app's source is, and whether it is this repository: what the Argo CD, ApplicationSet
//! and Flux readers share.
//!
//! Only sources in this repository are rendered offline: an Argo CD `repoURL` or a Flux
//! `GitRepository` URL is compared with the repository's remotes and the URLs the user gave
//! (`--repo-url`, `render.repo_urls`). Anything else is a [`SkipReason`]: every source yields a
//! unit or the reason it is not rendered, and [`collect`] sorts them into the plan's lists.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::tree::Tree;
use super::{How, Skipped, Unit};
use crate::k8s::object::{Body, Kind, Object};

/// Normalises a git URL for comparison: `git@github.com:org/repo.git`,
/// `https://github.com/org/repo` and `ssh://git@github.com/org/repo/` are the same repository.
pub fn normalize_url(url: &str) -> String {
    let mut u = url.trim().to_ascii_lowercase();
    u = u.strip_prefix("git+").map(str::to_string).unwrap_or(u);
    let scheme_less = match u.split_once("://") {
        Some((_, rest)) => rest.to_string(),
        None => match u.split_once(':') {
            // scp-like `git@host:org/repo`
            Some((host, path)) if !host.contains('/') => format!("{host}/{path}"),
            _ => u.clone(),
        },
    };
    let no_user = match scheme_less.split_once('@') {
        Some((user, rest)) if !user.contains('/') => rest.to_string(),
        _ => scheme_less,
    };
    no_user
        .trim_end_matches('/')
        .trim_end_matches(".git")
        .trim_end_matches('/')
        .to_string()
}

pub struct Context<'a> {
    pub tree: &'a Tree,
    /// Normalised URLs that name this repository.
    pub repo_urls: Vec<String>,
    /// GitRepository objects found in the tree: (namespace, name) → normalised URL.
    pub git_repositories: BTreeMap<(String, String), String>,
    /// Flux sources (HelmRepository, OCIRepository, HelmChart, ArtifactGenerator, …) found in
    /// the tree's files and in what the apps rendered: (kind, namespace, name) → spec.
    pub flux_sources: FluxSources,
    /// `clusters:` of the configuration, to name the cluster of an Argo CD destination.
    pub clusters: &'a BTreeMap<String, crate::config::ClusterConfig>,
}

/// Flux source objects by (kind, namespace, name), with their specs.
pub type FluxSources = BTreeMap<(String, String, String), Value>;

/// The kinds of Flux sources an app's `sourceRef` or `chartRef` may name (source-controller's
/// group, and source-watcher's ArtifactGenerator).
const FLUX_SOURCE_GROUPS: [&str; 2] = ["source.toolkit.fluxcd.io", "source.extensions.fluxcd.io"];

/// Adds the Flux source objects among `objects` (a file's, or an app's rendered output).
pub fn add_flux_sources<'a>(into: &mut FluxSources, objects: impl Iterator<Item = &'a Object>) {
    for o in objects {
        if !FLUX_SOURCE_GROUPS.contains(&crate::k8s::object::group_of(&o.api_version)) {
            continue;
        }
        if let Body::Raw(v) = &o.body {
            into.insert(
                (
                    o.kind.to_string(),
                    o.namespace().to_string(),
                    o.meta.name.clone(),
                ),
                v.clone(),
            );
        }
    }
}

impl Context<'_> {
    /// The spec of the Flux source `kind` `namespace/name`: exact, else the one object of that
    /// name the tree holds without a namespace (a file whose namespace its Kustomization sets).
    pub fn flux_source(&self, kind: &str, namespace: &str, name: &str) -> Option<&Value> {
        let key = (kind.to_string(), namespace.to_string(), name.to_string());
        if let Some(v) = self.flux_sources.get(&key) {
            return Some(v);
        }
        let mut unnamespaced = self
            .flux_sources
            .iter()
            .filter(|((k, ns, n), _)| k == kind && ns.is_empty() && n == name);
        match (unnamespaced.next(), unnamespaced.next()) {
            (Some((_, v)), None) => Some(v),
            _ => None,
        }
    }
}

impl Context<'_> {
    pub fn is_this_repo(&self, url: &str) -> bool {
        let n = normalize_url(url);
        self.repo_urls.contains(&n)
    }

    pub fn not_this_repo(&self, url: &str) -> SkipReason {
        let known = if self.repo_urls.is_empty() {
            "none: the repository has no remote; pass --repo-url or set render.repo_urls"
                .to_string()
        } else {
            self.repo_urls.join(", ")
        };
        SkipReason {
            repository: Some(Box::new(url.to_string())),
            ..SkipReason::new(
                Why::NotThisRepository,
                format!(
                    "source {url} is not this repository (this repository is known as: {known})"
                ),
            )
        }
    }
}

/// GitRepository URLs by (namespace, name), from parsed files.
pub fn git_repositories<'a>(
    objects: impl Iterator<Item = &'a Object>,
) -> BTreeMap<(String, String), String> {
    objects
        .filter(|o| o.typed_kind() == Kind::GitRepository)
        .filter_map(|o| match &o.body {
            Body::Raw(v) => v["url"].as_str().map(|u| {
                (
                    (o.namespace().to_string(), o.meta.name.clone()),
                    normalize_url(u),
                )
            }),
            _ => None,
        })
        .collect()
}

/// Why a source is not rendered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// Another repository (or one whose URL is unknown).
    NotThisRepository,
    /// A Helm repository, OCI chart or remote values file: not fetched offline.
    Remote,
    /// A generator, `chartRef` or the like that needs the cluster or an API.
    NeedsCluster,
    /// Something the offline renderer does not do (a template function, a non-Git source).
    Unsupported,
    /// The source names something the tree does not have (a path, a ref, a chart).
    Missing,
    /// The spec is invalid (a broken field, YAML that does not parse).
    Invalid,
    /// The source is hostile: a path out of the repository, a refused symlink or pattern.
    Refused,
}

/// A source that is listed but not rendered, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkipReason {
    pub why: Why,
    /// What the report says.
    pub text: String,
    /// The other repository an app's source names, when that is why it is not rendered: the
    /// report says each such repository once, not once per app. Boxed: a skip travels in every
    /// source outcome's error, which stays small.
    pub repository: Option<Box<String>>,
}

impl SkipReason {
    pub fn new(why: Why, text: impl Into<String>) -> SkipReason {
        SkipReason {
            why,
            text: text.into(),
            repository: None,
        }
    }

    /// A message from the tree or a parser, classified by what it says: a refusal, an invalid
    /// spec, or merely something that could not be read.
    pub fn from_message(text: String) -> SkipReason {
        let why = if text.contains("refused") {
            Why::Refused
        } else if text.contains(" spec: ") || text.contains("not valid YAML") {
            Why::Invalid
        } else {
            Why::Missing
        };
        SkipReason {
            why,
            text,
            repository: None,
        }
    }

    /// Broken or hostile, rather than merely out of reach offline.
    pub fn is_error(&self) -> bool {
        matches!(self.why, Why::Invalid | Why::Refused)
    }
}

/// The app a source belongs to, as the report names it.
#[derive(Debug, Clone)]
pub struct AppRef {
    pub app: String,
    pub app_kind: String,
    pub defined_at: String,
    /// What the app object says, hashed: a check tells a changed app that does not render from
    /// an unchanged one by it.
    pub fingerprint: u64,
}

/// The hash of an object's spec (and name, kind, namespace): [`AppRef::fingerprint`].
pub fn fingerprint(o: &Object) -> u64 {
    let spec = match &o.body {
        Body::Raw(v) => serde_json::to_string(v).unwrap_or_default(),
        _ => String::new(),
    };
    let text = format!(
        "{}/{}/{}/{}\n{spec}",
        o.api_version,
        o.kind,
        o.namespace(),
        o.meta.name
    );
    let d = ring::digest::digest(&ring::digest::SHA256, text.as_bytes());
    let mut first = [0u8; 8];
    for (to, from) in first.iter_mut().zip(d.as_ref()) {
        *to = *from;
    }
    u64::from_le_bytes(first)
}

impl AppRef {
    /// The app an object is, shown as `app_kind`.
    pub fn of(o: &Object, app_kind: &str) -> AppRef {
        AppRef {
            app: o.meta.name.clone(),
            app_kind: app_kind.to_string(),
            defined_at: defined_at(o),
            fingerprint: fingerprint(o),
        }
    }

    /// A render unit of this app: `path` rendered `how`, placed in `namespace` (forced over the
    /// manifests' own when `force`).
    pub fn unit(&self, path: String, how: How, namespace: Option<String>, force: bool) -> Unit {
        Unit {
            app: self.app.clone(),
            app_kind: self.app_kind.clone(),
            defined_at: self.defined_at.clone(),
            path,
            how,
            namespace,
            force_namespace: force,
            substitute: None,
            substitute_from_cluster: false,
            notes: Vec::new(),
            cluster: None,
            lineage: Vec::new(),
            chart: None,
            prepared: None,
            fingerprint: self.fingerprint,
            prune: None,
        }
    }

    pub fn skip(&self, reason: SkipReason) -> SourceOutcome {
        Err((self.clone(), reason))
    }
}

/// What one source yields: a unit to render, or the app and why it is not rendered.
pub type SourceOutcome = Result<Unit, (AppRef, SkipReason)>;

/// Sorts outcomes into units and skipped apps, each in the order they came.
pub fn collect(
    outcomes: impl IntoIterator<Item = SourceOutcome>,
    units: &mut Vec<Unit>,
    skipped: &mut Vec<Skipped>,
) {
    for o in outcomes {
        match o {
            Ok(u) => units.push(u),
            Err((app, reason)) => skipped.push(Skipped {
                fingerprint: app.fingerprint,
                app: app.app,
                app_kind: app.app_kind,
                defined_at: app.defined_at,
                error: reason.is_error(),
                reason: reason.text,
                repository: reason.repository.map(|r| *r),
                not_applied: false,
                cluster: None,
            }),
        }
    }
}

/// The naming fields Argo CD's kustomize options and Flux Kustomizations both lay over a
/// kustomization: name prefix and suffix, and the namespace.
pub fn naming_overlay(
    prefix: Option<&String>,
    suffix: Option<&String>,
    namespace: Option<&String>,
) -> Map<String, Value> {
    let mut m = Map::new();
    for (key, v) in [
        ("namePrefix", prefix),
        ("nameSuffix", suffix),
        ("namespace", namespace),
    ] {
        if let Some(v) = v {
            m.insert(key.into(), json!(v));
        }
    }
    m
}

/// An app's kustomize `components`, as the wrapper kustomization at the top of the copy names
/// them. Both controllers add them to the kustomization of the app's path, so each is relative to
/// that path: Argo CD runs `kustomize edit add component` in the source path (argo-cd
/// `util/kustomize/kustomize.go`, `Build`), Flux appends them to the path's kustomization (fluxcd
/// pkg `kustomize/kustomize_generator.go`, `WriteFile`). An entry that leaves the repository is
/// still refused by the sandbox, which resolves it from the wrapper.
pub fn components_overlay(path: &str, components: &[String]) -> Value {
    Value::Array(
        components
            .iter()
            .map(|c| json!(format!("../{}", super::tree::join(path, c))))
            .collect(),
    )
}

/// A path from a manifest as a tree path; one that leaves the tree is refused.
pub fn tree_path(p: &str) -> Result<String, SkipReason> {
    super::tree::tree_path(p).map_err(|e| SkipReason::new(Why::Refused, e.to_string()))
}

pub fn defined_at(o: &Object) -> String {
    o.source.to_string()
}

/// An Argo CD or Flux object's spec; a missing spec is an empty one.
pub fn spec<T: for<'de> Deserialize<'de>>(o: &Object) -> Result<T, SkipReason> {
    match &o.body {
        Body::Raw(v) => serde_json::from_value(if v.is_null() { json!({}) } else { v.clone() })
            .map_err(|e| {
                SkipReason::new(Why::Invalid, format!("{}: {} spec: {e}", o.source, o.kind))
            }),
        _ => Err(SkipReason::new(
            Why::Missing,
            format!("{}: {} has no spec", o.source, o.kind),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_normalise() {
        let a = normalize_url("git@github.com:Org/Repo.git");
        assert_eq!(a, "github.com/org/repo");
        assert_eq!(normalize_url("https://github.com/org/repo"), a);
        assert_eq!(normalize_url("ssh://git@github.com/org/repo/"), a);
        assert_eq!(normalize_url("https://github.com/org/repo.git/"), a);
        assert_ne!(normalize_url("https://github.com/org/other"), a);
    }

    #[test]
    fn reasons_classify_as_before() {
        let r =
            SkipReason::from_message("path \"../x\" points outside the repository: refused".into());
        assert!(r.is_error());
        let r = SkipReason::from_message("a.yaml: no such file in the working tree".into());
        assert!(!r.is_error());
        assert!(SkipReason::new(Why::Invalid, "x").is_error());
        assert!(!SkipReason::new(Why::NeedsCluster, "x").is_error());
    }
}
