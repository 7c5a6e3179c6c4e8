//! Argo CD Applications as render units: each source (a directory of plain manifests, a kustomize
//! overlay, a Helm chart with its values) in this repository becomes a unit; a source elsewhere, or
//! one only Argo CD's repo server can render (a config-management plugin, jsonnet), becomes a
//! [`SkipReason`] that says why.
//!
//! Which tool renders a source is decided as Argo CD decides it (argo-cd
//! `reposerver/repository/repository.go`, `GetAppSourceType`): the one explicit `kustomize`,
//! `helm`, `directory` or `plugin` field (`ApplicationSource.ExplicitType` in
//! `pkg/apis/application/v1alpha1/types.go`; more than one is an error), else detection in the
//! source directory (`util/app/discovery/discovery.go`, `Discover`/`AppType`): a kustomization
//! makes it kustomize, else a `Chart.yaml` makes it helm, else it is a directory of manifests.
//! Discovery walks the files in lexical order and the kustomization is recorded after the chart, so
//! a directory with both renders with kustomize.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::kustomization::is_kustomize_dir;
use super::source::{AppRef, Context, SkipReason, SourceOutcome, Why, naming_overlay, tree_path};
use super::tree::{Tree, join};
use super::{HelmArgs, How, Unit};
use crate::k8s::object::{Body, Object};
use crate::util::glob::Glob;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ArgoApp {
    pub source: Option<ArgoSource>,
    pub sources: Vec<ArgoSource>,
    pub destination: Destination,
    pub sync_policy: SyncPolicy,
}

/// `spec.syncPolicy`: only whether an automated sync prunes (argo-cd
/// `pkg/apis/application/v1alpha1/types.go`, `SyncPolicyAutomated.Prune`, false by default).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct SyncPolicy {
    pub automated: Option<Automated>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Automated {
    pub prune: bool,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Destination {
    pub namespace: Option<String>,
    pub server: Option<String>,
    pub name: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ArgoSource {
    #[serde(rename = "repoURL")]
    pub repo_url: String,
    pub path: Option<String>,
    pub chart: Option<String>,
    pub target_revision: Option<String>,
    #[serde(rename = "ref")]
    pub ref_: Option<String>,
    pub helm: Option<ArgoHelm>,
    pub kustomize: Option<ArgoKustomize>,
    pub directory: Option<ArgoDirectory>,
    /// A config-management plugin (`name` may be empty: Argo CD then discovers the plugin).
    pub plugin: Option<Value>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ArgoHelm {
    pub value_files: Vec<String>,
    pub values: Option<Value>,
    pub values_object: Option<Value>,
    pub parameters: Vec<HelmParameter>,
    pub file_parameters: Vec<HelmFileParameter>,
    pub release_name: Option<String>,
    pub skip_crds: bool,
    pub ignore_missing_value_files: bool,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct HelmParameter {
    pub name: String,
    pub value: String,
    pub force_string: bool,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct HelmFileParameter {
    pub name: String,
    pub path: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ArgoKustomize {
    pub name_prefix: Option<String>,
    pub name_suffix: Option<String>,
    pub namespace: Option<String>,
    pub images: Vec<String>,
    pub replicas: Vec<Value>,
    pub common_labels: Option<Value>,
    pub common_annotations: Option<Value>,
    pub patches: Vec<Value>,
    pub components: Vec<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ArgoDirectory {
    pub recurse: bool,
    pub include: Option<String>,
    pub exclude: Option<String>,
    /// jsonnet options (external variables, top-level arguments, library paths): they only apply
    /// to the `.jsonnet` files of the directory.
    pub jsonnet: Option<Value>,
}

/// The tools Argo CD renders a source with (argo-cd `ApplicationSourceType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SourceType {
    Kustomize,
    Helm,
    Directory,
    Plugin,
}

impl SourceType {
    fn name(self) -> &'static str {
        match self {
            SourceType::Kustomize => "Kustomize",
            SourceType::Helm => "Helm",
            SourceType::Directory => "Directory",
            SourceType::Plugin => "Plugin",
        }
    }
}

/// The source's type as Argo CD decides it (see the module comment): the explicit field, else
/// what the directory holds.
fn source_type(tree: &Tree, path: &str, s: &ArgoSource) -> Result<SourceType, SkipReason> {
    // argo-cd pkg/apis/application/v1alpha1/types.go, ExplicitType: in this order.
    let explicit: Vec<SourceType> = [
        (s.kustomize.is_some(), SourceType::Kustomize),
        (s.helm.is_some(), SourceType::Helm),
        (s.directory.is_some(), SourceType::Directory),
        (s.plugin.is_some(), SourceType::Plugin),
    ]
    .into_iter()
    .filter_map(|(set, t)| set.then_some(t))
    .collect();
    match explicit.as_slice() {
        [one] => return Ok(*one),
        [] => {}
        many => {
            let names: Vec<&str> = many.iter().map(|t| t.name()).collect();
            return Err(SkipReason::new(
                Why::Invalid,
                format!("multiple application sources defined: {}", names.join(",")),
            ));
        }
    }
    // argo-cd util/app/discovery/discovery.go, Discover: a file whose name ends in `Chart.yaml`
    // marks helm, a kustomization file marks kustomize, and the later file in the lexical walk
    // wins: `Chart.yaml` sorts before every kustomization name, so kustomize wins.
    if is_kustomize_dir(tree, path) {
        return Ok(SourceType::Kustomize);
    }
    let chart = tree.files_under(path).any(|f| {
        let rel = f.strip_prefix(path).unwrap_or(f).trim_start_matches('/');
        !rel.contains('/') && rel.ends_with("Chart.yaml")
    });
    Ok(if chart {
        SourceType::Helm
    } else {
        SourceType::Directory
    })
}

/// An Argo CD `images` entry (`name=new:tag`, `name:tag`, `name@sha256:…`) as a kustomize image.
fn kustomize_image(s: &str) -> Value {
    let (name, new) = match s.split_once('=') {
        Some((n, new)) => (n, Some(new)),
        None => (s, None),
    };
    let split_ref = |img: &str| -> (String, Option<String>, Option<String>) {
        if let Some((n, d)) = img.split_once('@') {
            return (n.to_string(), None, Some(d.to_string()));
        }
        match img.rsplit_once(':').filter(|(_, t)| !t.contains('/')) {
            Some((n, t)) => (n.to_string(), Some(t.to_string()), None),
            None => (img.to_string(), None, None),
        }
    };
    let mut out = Map::new();
    match new {
        Some(new) => {
            let (n, tag, digest) = split_ref(new);
            out.insert("name".into(), json!(name));
            out.insert("newName".into(), json!(n));
            if let Some(t) = tag {
                out.insert("newTag".into(), json!(t));
            }
            if let Some(d) = digest {
                out.insert("digest".into(), json!(d));
            }
        }
        None => {
            let (n, tag, digest) = split_ref(name);
            out.insert("name".into(), json!(n));
            if let Some(t) = tag {
                out.insert("newTag".into(), json!(t));
            }
            if let Some(d) = digest {
                out.insert("digest".into(), json!(d));
            }
        }
    }
    Value::Object(out)
}

fn kustomize_overlay(k: &ArgoKustomize) -> Map<String, Value> {
    let mut m = naming_overlay(
        k.name_prefix.as_ref(),
        k.name_suffix.as_ref(),
        k.namespace.as_ref(),
    );
    if !k.images.is_empty() {
        m.insert(
            "images".into(),
            Value::Array(k.images.iter().map(|i| kustomize_image(i)).collect()),
        );
    }
    if !k.replicas.is_empty() {
        let reps = k
            .replicas
            .iter()
            .map(|r| {
                let count = match &r["count"] {
                    Value::String(s) => s
                        .parse::<i64>()
                        .map(Value::from)
                        .unwrap_or(Value::String(s.clone())),
                    v => v.clone(),
                };
                json!({"name": r["name"], "count": count})
            })
            .collect();
        m.insert("replicas".into(), Value::Array(reps));
    }
    if let Some(l) = &k.common_labels {
        m.insert("commonLabels".into(), l.clone());
    }
    if let Some(a) = &k.common_annotations {
        m.insert("commonAnnotations".into(), a.clone());
    }
    if !k.patches.is_empty() {
        m.insert("patches".into(), Value::Array(k.patches.clone()));
    }
    m
}

/// An Argo CD directory `include`/`exclude`, compiled once per source. Empty means unset.
fn directory_glob(pat: &Option<String>) -> Result<Option<Glob>, SkipReason> {
    match pat.as_deref().filter(|p| !p.is_empty()) {
        None => Ok(None),
        Some(p) => Glob::crossing(p)
            .map(Some)
            .map_err(|e| SkipReason::new(Why::Refused, format!("directory pattern: {e}"))),
    }
}

/// Files an Argo CD directory source renders, as argo-cd `reposerver/repository/repository.go`
/// picks them (`getPotentiallyValidManifests`, formerly `findManifests`): files named `*.yaml`,
/// `*.yml`, `*.json` or `*.jsonnet` directly in the directory (below it too with `recurse`), whose
/// path relative to the directory is not matched by `exclude` and is matched by `include` when set.
/// A `.jsonnet` file among them is evaluated by Argo CD, which gpuledger does not do: the source is
/// then not rendered, with the reason (`.libsonnet` files are only imported by those).
fn directory_files(tree: &Tree, dir: &str, d: &ArgoDirectory) -> Result<Vec<String>, SkipReason> {
    let include = directory_glob(&d.include)?;
    let exclude = directory_glob(&d.exclude)?;
    let picked: Vec<&str> = tree
        .files_under(dir)
        .filter(|f| {
            let rel = f.strip_prefix(dir).unwrap_or(f).trim_start_matches('/');
            if !d.recurse && rel.contains('/') {
                return false;
            }
            let name = rel.rsplit('/').next().unwrap_or(rel);
            let manifest = [".yaml", ".yml", ".json", ".jsonnet"]
                .iter()
                .any(|e| name.ends_with(e));
            manifest
                && !exclude.as_ref().is_some_and(|g| g.is_match(rel))
                && include.as_ref().is_none_or(|g| g.is_match(rel))
        })
        .collect();
    let jsonnet: Vec<&str> = picked
        .iter()
        .copied()
        .filter(|f| f.ends_with(".jsonnet"))
        .collect();
    if let Some(first) = jsonnet.first() {
        let more = match jsonnet.len() {
            1 => String::new(),
            n => format!(" and {} more", n - 1),
        };
        return Err(SkipReason::new(
            Why::Unsupported,
            format!(
                "directory source with jsonnet: Argo CD evaluates {first}{more} with jsonnet; gpuledger does not evaluate jsonnet"
            ),
        ));
    }
    Ok(picked.into_iter().map(str::to_string).collect())
}

/// An Application's spec, as the discovery reads it.
pub fn application_spec(o: &Object) -> Result<ArgoApp, SkipReason> {
    // Unlike other readers, an Application without a readable spec is always an error.
    let invalid = |text: String| SkipReason::new(Why::Invalid, text);
    match &o.body {
        Body::Raw(v) => serde_json::from_value(if v.is_null() {
            Value::Object(Default::default())
        } else {
            v.clone()
        })
        .map_err(|e| invalid(format!("{}: Application spec: {e}", o.source))),
        _ => Err(invalid(format!("{}: Application has no spec", o.source))),
    }
}

/// Render units for one Argo CD Application: one outcome per source (values-only `ref:` sources
/// yield none), or one saying the Application has no source.
pub fn argo_units(ctx: &Context<'_>, owner: &AppRef, app: &ArgoApp) -> Vec<SourceOutcome> {
    let sources: Vec<&ArgoSource> = app.source.iter().chain(&app.sources).collect();
    if sources.is_empty() {
        return vec![owner.skip(SkipReason::new(
            Why::Missing,
            "the Application has no source",
        ))];
    }
    // `ref:` sources lend their repository to `$ref/...` value files.
    let refs: BTreeMap<&str, &ArgoSource> = sources
        .iter()
        .filter_map(|s| s.ref_.as_deref().map(|r| (r, *s)))
        .collect();
    let namespace = app.destination.namespace.clone().filter(|n| !n.is_empty());
    let cluster = super::clusters::argo_destination(
        app.destination.server.as_deref(),
        app.destination.name.as_deref(),
        ctx.clusters,
    );
    sources
        .iter()
        // A values-only source renders nothing itself.
        .filter(|s| !(s.ref_.is_some() && s.path.is_none() && s.chart.is_none()))
        .map(|s| {
            argo_source(ctx, owner, s, &refs, namespace.clone())
                .map(|u| Unit {
                    cluster: cluster.clone(),
                    prune: Some(app.sync_policy.automated.as_ref().is_some_and(|a| a.prune)),
                    ..u
                })
                .map_err(|r| (owner.clone(), r))
        })
        .collect()
}

/// A helm value file or file parameter of an Argo CD source as a tree path, as Argo CD resolves it
/// (argo-cd `util/io/path/resolved.go`, `ResolveValueFilePathOrUrl`): `$ref/…` in the repository
/// of the source with that `ref`, an absolute path from the repository root, anything else from
/// the source's directory; a URL is not fetched. Symlinks are followed by the render sandbox.
fn argo_file(
    ctx: &Context<'_>,
    dir: &str,
    refs: &BTreeMap<&str, &ArgoSource>,
    f: &str,
) -> Result<String, SkipReason> {
    match f.strip_prefix('$') {
        Some(rest) => {
            let (r, file) = rest.split_once('/').unwrap_or((rest, ""));
            match refs.get(r) {
                Some(src) if ctx.is_this_repo(&src.repo_url) => tree_path(file),
                Some(src) => Err(SkipReason::new(
                    Why::NotThisRepository,
                    ctx.not_this_repo(&src.repo_url).text,
                )),
                None => Err(SkipReason::new(
                    Why::Missing,
                    format!("no source with ref {r:?}"),
                )),
            }
        }
        None if f.contains("://") => Err(SkipReason::new(
            Why::Remote,
            "a remote file is not fetched offline",
        )),
        None => match f.strip_prefix('/') {
            Some(from_root) => tree_path(from_root),
            None => tree_path(&join(dir, f)),
        },
    }
}

/// One Argo CD source as a unit.
fn argo_source(
    ctx: &Context<'_>,
    owner: &AppRef,
    s: &ArgoSource,
    refs: &BTreeMap<&str, &ArgoSource>,
    namespace: Option<String>,
) -> Result<Unit, SkipReason> {
    if let Some(chart) = &s.chart {
        return Err(SkipReason::new(
            Why::Remote,
            format!(
                "Helm chart {chart} from repository {} is not rendered offline (remote chart)",
                s.repo_url
            ),
        ));
    }
    if s.repo_url.starts_with("oci://") || !ctx.is_this_repo(&s.repo_url) {
        return Err(ctx.not_this_repo(&s.repo_url));
    }
    let path = tree_path(s.path.as_deref().unwrap_or("."))?;
    if !ctx.tree.is_dir(&path) {
        return Err(SkipReason::new(
            Why::Missing,
            format!("path {path:?} does not exist in the {}", ctx.tree.label),
        ));
    }
    let how = match source_type(ctx.tree, &path, s)? {
        SourceType::Plugin => {
            let name = s
                .plugin
                .as_ref()
                .and_then(|p| p.get("name"))
                .and_then(Value::as_str)
                .filter(|n| !n.is_empty());
            return Err(SkipReason::new(
                Why::Unsupported,
                match name {
                    Some(n) => format!(
                        "config-management plugin {n} runs in Argo CD's repo server; gpuledger does not run it"
                    ),
                    None => "config-management plugin (the one Argo CD discovers for this path) runs in Argo CD's repo server; gpuledger does not run it".to_string(),
                },
            ));
        }
        SourceType::Helm => helm_how(ctx, owner, s, refs, &path)?,
        SourceType::Kustomize => How::Kustomize {
            overlay: s
                .kustomize
                .as_ref()
                .map(kustomize_overlay)
                .unwrap_or_default(),
            recurse_plain: false,
        },
        SourceType::Directory => {
            let d = s.directory.clone().unwrap_or_default();
            How::Plain {
                files: directory_files(ctx.tree, &path, &d)?,
            }
        }
    };
    // The whole repository is rendered at one ref; an app pinned elsewhere is said so.
    let notes = s
        .target_revision
        .as_deref()
        .filter(|r| !matches!(*r, "" | "HEAD" | "head"))
        .map(|r| {
            format!(
                "targetRevision {r} is not followed offline: rendered at the {}",
                ctx.tree.label
            )
        })
        .into_iter()
        .collect();
    Ok(Unit {
        notes,
        ..owner.unit(path, how, namespace, false)
    })
}

/// A helm source's arguments, as Argo CD passes them to `helm template`.
fn helm_how(
    ctx: &Context<'_>,
    owner: &AppRef,
    s: &ArgoSource,
    refs: &BTreeMap<&str, &ArgoSource>,
    path: &str,
) -> Result<How, SkipReason> {
    let h = s.helm.clone().unwrap_or_default();
    let mut args = HelmArgs {
        release: h.release_name.clone().unwrap_or_else(|| owner.app.clone()),
        include_crds: !h.skip_crds,
        ..HelmArgs::default()
    };
    let file = |f: &str| argo_file(ctx, path, refs, f);
    for vf in &h.value_files {
        let p =
            file(vf).map_err(|e| SkipReason::new(e.why, format!("value file {vf}: {}", e.text)))?;
        // As argo-cd reposerver/repository/repository.go (helmTemplate) does: a value file
        // that does not exist is dropped with `ignoreMissingValueFiles`, else helm fails on it.
        if !ctx.tree.exists(&p) {
            if h.ignore_missing_value_files {
                continue;
            }
            // Argo CD fails the sync on it: an error, not a source out of reach.
            return Err(SkipReason::new(
                Why::Invalid,
                format!(
                    "value file {vf} does not exist in the {} (helm.ignoreMissingValueFiles is not set)",
                    ctx.tree.label
                ),
            ));
        }
        args.values_files.push(p);
    }
    // valuesObject, when set, replaces values entirely (argo-cd pkg/apis/application/v1alpha1,
    // `ApplicationSourceHelm.ValuesYAML`); helmTemplate passes it as the last `--values` file,
    // after the value files and before the parameters.
    match (&h.values_object, &h.values) {
        (Some(v), _) => args.values.push(v.clone()),
        (None, Some(Value::String(s))) if !s.trim().is_empty() => {
            match serde_saphyr::from_str::<Value>(s) {
                Ok(v) => args.values.push(v),
                Err(e) => {
                    return Err(SkipReason::new(
                        Why::Invalid,
                        format!("helm.values is not valid YAML: {e}"),
                    ));
                }
            }
        }
        (None, Some(v @ Value::Object(_))) => args.values.push(v.clone()),
        _ => {}
    }
    // As Argo CD keeps them (argo-cd reposerver/repository/repository.go, helmTemplate): maps
    // by name, so the last parameter of a name wins; `forceString` ones go to `--set-string`.
    for p in &h.parameters {
        let to = if p.force_string {
            &mut args.set_string
        } else {
            &mut args.set
        };
        to.insert(p.name.clone(), p.value.clone());
    }
    for p in &h.file_parameters {
        let f = file(&p.path).map_err(|e| {
            SkipReason::new(
                e.why,
                format!("fileParameters entry {}: {}", p.name, e.text),
            )
        })?;
        args.set_file.insert(p.name.clone(), f);
    }
    Ok(How::Helm(args))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images() {
        assert_eq!(
            kustomize_image("nginx=registry/nginx:1.2"),
            json!({"name": "nginx", "newName": "registry/nginx", "newTag": "1.2"})
        );
        assert_eq!(
            kustomize_image("nginx:1.2"),
            json!({"name": "nginx", "newTag": "1.2"})
        );
        assert_eq!(
            kustomize_image("localhost:5000/nginx"),
            json!({"name": "localhost:5000/nginx"})
        );
    }

    /// A refused include/exclude pattern is an error on the source, not a filter that never matches.
    #[test]
    fn directory_patterns() {
        let d = ArgoDirectory {
            include: Some("{a,b}".repeat(12)),
            ..ArgoDirectory::default()
        };
        let e = directory_glob(&d.include).unwrap_err();
        assert!(e.is_error() && e.text.contains("refused"), "{e:?}");
    }
}
