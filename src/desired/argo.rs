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

pub use super::argo_directory::ArgoDirectory;
use super::argo_directory::directory_files;
use super::kustomization::is_kustomize_dir;
use super::remote::refs::{ChartRef, ChartSource, Rules};
use super::source::{AppRef, Context, SkipReason, SourceOutcome, Why, naming_overlay, tree_path};
use super::tree::{Tree, join};
use super::{CHART_FILE, HelmArgs, How, Unit};
use crate::k8s::object::{Body, Object};

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

fn kustomize_overlay(k: &ArgoKustomize, path: &str) -> Map<String, Value> {
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
    if !k.components.is_empty() {
        m.insert(
            "components".into(),
            super::source::components_overlay(path, &k.components),
        );
    }
    m
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
        return remote_chart(
            ctx,
            owner,
            s,
            refs,
            namespace,
            chart_source(&s.repo_url, chart),
        );
    }
    // Argo CD's native OCI source: an artifact; a Helm chart's renders at its root.
    if let Some(reference) = s.repo_url.strip_prefix("oci://") {
        if !matches!(s.path.as_deref().unwrap_or("."), "" | "." | "./") {
            return Err(SkipReason::new(
                Why::Unsupported,
                format!(
                    "OCI source {} with path {:?}: only a Helm chart at the artifact's root is rendered",
                    s.repo_url,
                    s.path.as_deref().unwrap_or_default()
                ),
            ));
        }
        let source = ChartSource::Oci {
            reference: reference.to_string(),
            insecure: false,
        };
        return remote_chart(ctx, owner, s, refs, namespace, source);
    }
    if !ctx.is_this_repo(&s.repo_url) {
        return Err(ctx.not_this_repo(&s.repo_url));
    }
    let path = tree_path(s.path.as_deref().unwrap_or("."))?;
    if !ctx.tree.is_dir(&path) {
        return Err(SkipReason::new(Why::Missing, ctx.tree.missing(&path)));
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
        SourceType::Helm => helm_how(ctx, owner, s, refs, Some(&path))?,
        SourceType::Kustomize => How::Kustomize {
            overlay: s
                .kustomize
                .as_ref()
                .map(|k| kustomize_overlay(k, &path))
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

/// Where a chart source's chart is (argo-cd `util/helm/client.go`, `IsHelmOciRepo`): a `repoURL`
/// without a scheme is an OCI registry, one with `oci://` too; any other is a Helm repository.
fn chart_source(repo_url: &str, chart: &str) -> ChartSource {
    let url = repo_url.trim();
    match url.strip_prefix("oci://") {
        Some(r) => ChartSource::Oci {
            reference: format!("{}/{chart}", r.trim_end_matches('/')),
            insecure: false,
        },
        None if !url.contains("://") => ChartSource::Oci {
            reference: format!("{}/{chart}", url.trim_end_matches('/')),
            insecure: false,
        },
        None => ChartSource::Repo {
            url: url.to_string(),
            chart: chart.to_string(),
        },
    }
}

/// A chart source whose chart is fetched: `helm template` of it with the Application's helm
/// options, its `valueFiles` read from the chart (or from a `$ref` source of this repository),
/// its `targetRevision` resolved as Argo CD resolves it.
fn remote_chart(
    ctx: &Context<'_>,
    owner: &AppRef,
    s: &ArgoSource,
    refs: &BTreeMap<&str, &ArgoSource>,
    namespace: Option<String>,
    source: ChartSource,
) -> Result<Unit, SkipReason> {
    let version = s.target_revision.clone().unwrap_or_default();
    let (version, digest) = match version.split_once('@') {
        Some((v, d)) if d.starts_with("sha256:") => (v.to_string(), Some(d.to_string())),
        _ if version.starts_with("sha256:") => (String::new(), Some(version)),
        _ => (version, None),
    };
    let chart = ChartRef {
        source,
        version,
        digest,
        rules: Rules::Argo,
    };
    let how = helm_how(ctx, owner, s, refs, None)?;
    Ok(Unit {
        chart: Some(chart.clone()),
        ..owner.unit(chart.location(), how, namespace, false)
    })
}

/// A value file of a fetched chart, as a [`CHART_FILE`] path: relative to the chart's root
/// (an absolute path too: the chart is the source's whole tree), never out of it.
fn chart_file(f: &str) -> Result<String, SkipReason> {
    match crate::desired::tree::normalize(f.trim_start_matches('/')) {
        Some(p) if !p.is_empty() => Ok(format!("{CHART_FILE}{p}")),
        _ => Err(SkipReason::new(
            Why::Refused,
            format!("{f:?} leaves the chart: refused"),
        )),
    }
}

/// A helm source's arguments, as Argo CD passes them to `helm template`. `path` is the chart's
/// directory in the tree, or `None` for a fetched chart.
fn helm_how(
    ctx: &Context<'_>,
    owner: &AppRef,
    s: &ArgoSource,
    refs: &BTreeMap<&str, &ArgoSource>,
    path: Option<&str>,
) -> Result<How, SkipReason> {
    let h = s.helm.clone().unwrap_or_default();
    let mut args = HelmArgs {
        release: h.release_name.clone().unwrap_or_else(|| owner.app.clone()),
        include_crds: !h.skip_crds,
        ignore_missing_values: h.ignore_missing_value_files,
        ..HelmArgs::default()
    };
    let file = |f: &str| match path {
        Some(dir) => argo_file(ctx, dir, refs, f),
        None if f.starts_with('$') || f.contains("://") => argo_file(ctx, "", refs, f),
        None => chart_file(f),
    };
    for vf in &h.value_files {
        let p =
            file(vf).map_err(|e| SkipReason::new(e.why, format!("value file {vf}: {}", e.text)))?;
        if p.starts_with(CHART_FILE) {
            args.values_files.push(p);
            continue;
        }
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
}
