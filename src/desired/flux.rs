//! Flux Kustomizations and HelmReleases as render units, when their GitRepository (defined in this
//! repository) points at this repository. `postBuild.substituteFrom` and `valuesFrom` read the
//! cluster: the unit is rendered without them and says so.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Value, json};

use super::source::{
    AppRef, Context, SkipReason, SourceOutcome, Why, defined_at, naming_overlay, spec, tree_path,
};
use super::tree::is_chart_dir;
use super::{HelmArgs, How, Unit};
use crate::k8s::object::{Kind, Object};

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct SourceRef {
    kind: String,
    name: String,
    namespace: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct PostBuild {
    substitute: BTreeMap<String, String>,
    substitute_from: Vec<Value>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct FluxKustomizationSpec {
    path: Option<String>,
    source_ref: SourceRef,
    target_namespace: Option<String>,
    name_prefix: Option<String>,
    name_suffix: Option<String>,
    patches: Vec<Value>,
    images: Vec<Value>,
    components: Vec<String>,
    post_build: Option<PostBuild>,
    /// Whether the controller deletes what the source stops declaring (a required field of
    /// `kustomize.toolkit.fluxcd.io/v1`).
    prune: bool,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct HelmChartSpec {
    chart: String,
    source_ref: SourceRef,
    values_files: Vec<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct HelmChartTemplate {
    spec: HelmChartSpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct HelmReleaseSpec {
    chart: Option<HelmChartTemplate>,
    chart_ref: Option<Value>,
    values: Option<Value>,
    values_from: Vec<Value>,
    release_name: Option<String>,
    target_namespace: Option<String>,
}

impl Context<'_> {
    /// Checks that a Flux sourceRef names a GitRepository for this repository.
    fn flux_source(&self, o: &Object, r: &SourceRef) -> Result<(), SkipReason> {
        if r.kind != "GitRepository" {
            return Err(SkipReason::new(
                Why::Unsupported,
                format!(
                    "source {} {} is not a GitRepository: not rendered offline",
                    r.kind, r.name
                ),
            ));
        }
        let ns = r
            .namespace
            .clone()
            .unwrap_or_else(|| o.namespace().to_string());
        match self.git_repositories.get(&(ns.clone(), r.name.clone())) {
            Some(url) if self.repo_urls.contains(url) => Ok(()),
            Some(url) => Err(self.not_this_repo(url)),
            None => Err(SkipReason::new(
                Why::NotThisRepository,
                format!(
                    "GitRepository {ns}/{} is not defined in this repository, so its URL is unknown",
                    r.name
                ),
            )),
        }
    }
}

/// The unit of a Flux Kustomization or HelmRelease, or why it is not rendered; `None` for other
/// kinds.
pub fn flux_units(ctx: &Context<'_>, o: &Object) -> Option<SourceOutcome> {
    let owner = AppRef {
        app: o.meta.name.clone(),
        app_kind: o.kind.clone(),
        defined_at: defined_at(o),
    };
    let unit = match o.typed_kind() {
        Kind::FluxKustomization => kustomization_unit(ctx, o, &owner),
        Kind::HelmRelease => helm_release_unit(ctx, o, &owner),
        _ => return None,
    };
    Some(unit.map_err(|r| (owner, r)))
}

fn kustomization_unit(ctx: &Context<'_>, o: &Object, owner: &AppRef) -> Result<Unit, SkipReason> {
    let s: FluxKustomizationSpec = spec(o)?;
    ctx.flux_source(o, &s.source_ref)?;
    let path = tree_path(s.path.as_deref().unwrap_or("."))?;
    if !ctx.tree.is_dir(&path) {
        return Err(SkipReason::new(
            Why::Missing,
            format!("path {path:?} does not exist in the {}", ctx.tree.label),
        ));
    }
    let mut overlay = naming_overlay(
        s.name_prefix.as_ref(),
        s.name_suffix.as_ref(),
        s.target_namespace.as_ref(),
    );
    if !s.patches.is_empty() {
        overlay.insert("patches".into(), Value::Array(s.patches.clone()));
    }
    if !s.images.is_empty() {
        overlay.insert("images".into(), Value::Array(s.images.clone()));
    }
    if !s.components.is_empty() {
        overlay.insert("components".into(), json!(s.components));
    }
    let mut u = owner.unit(
        path,
        How::Kustomize {
            overlay,
            recurse_plain: true,
        },
        s.target_namespace.clone(),
        s.target_namespace.is_some(),
    );
    u.prune = Some(s.prune);
    if let Some(pb) = s.post_build {
        if !pb.substitute_from.is_empty() {
            u.notes.push(
                "postBuild.substituteFrom reads ConfigMaps/Secrets from the cluster: unresolved offline"
                    .into(),
            );
        }
        u.substitute = Some(pb.substitute);
    }
    Ok(u)
}

fn helm_release_unit(ctx: &Context<'_>, o: &Object, owner: &AppRef) -> Result<Unit, SkipReason> {
    let name = &owner.app;
    let s: HelmReleaseSpec = spec(o)?;
    if s.chart_ref.is_some() {
        return Err(SkipReason::new(
            Why::Remote,
            "spec.chartRef (OCIRepository/HelmChart) is not rendered offline",
        ));
    }
    let Some(chart) = s.chart else {
        return Err(SkipReason::new(
            Why::Missing,
            "HelmRelease has no spec.chart",
        ));
    };
    ctx.flux_source(o, &chart.spec.source_ref)?;
    let path = tree_path(&chart.spec.chart)?;
    if !is_chart_dir(ctx.tree, &path) {
        return Err(SkipReason::new(
            Why::Missing,
            format!("{path:?} is not a chart directory (no Chart.yaml)"),
        ));
    }
    let ns = s
        .target_namespace
        .clone()
        .or_else(|| o.meta.namespace.clone());
    let release = s
        .release_name
        .clone()
        .unwrap_or_else(|| match &s.target_namespace {
            Some(t) => format!("{t}-{name}"),
            None => name.clone(),
        });
    let mut args = HelmArgs {
        release,
        include_crds: true,
        ..HelmArgs::default()
    };
    for vf in &chart.spec.values_files {
        match tree_path(vf) {
            Ok(p) => args.values_files.push(p),
            Err(e) => return Err(e),
        }
    }
    if let Some(v) = s.values {
        args.values.push(v);
    }
    let mut u = owner.unit(path, How::Helm(args), ns, s.target_namespace.is_some());
    // Helm deletes what a release no longer renders.
    u.prune = Some(true);
    if !s.values_from.is_empty() {
        u.notes.push(
            "valuesFrom reads ConfigMaps/Secrets from the cluster: unresolved offline".into(),
        );
    }
    Ok(u)
}

/// The resources of the kustomization Flux generates for a path that has none, as tree paths
/// relative to `dir`: following fluxcd/pkg `kustomize/kustomize_generator.go`
/// (`generateKustomization`), every `.yaml`/`.yml` file below it, except that a sub-directory with
/// its own kustomization file is one resource and is not descended into; files the GitRepository's
/// `.sourceignore` leaves out of the artifact ([`super::sourceignore`]) are not there to list.
/// Files that hold no object are left out (kustomize refuses an empty resource); one that does not
/// parse goes in, and kustomize has the last word, as in Flux.
pub fn generated_resources(
    tree: &super::tree::Tree,
    dir: &str,
    parsed: &std::collections::BTreeMap<String, Result<Vec<Object>, crate::error::InputError>>,
    ignore: &super::sourceignore::SourceIgnore,
) -> Vec<String> {
    let prefix = if dir.is_empty() {
        String::new()
    } else {
        format!("{}/", dir.trim_end_matches('/'))
    };
    let mut out = std::collections::BTreeSet::new();
    for path in tree.files_under(dir) {
        let Some(rel) = path.strip_prefix(&prefix) else {
            continue;
        };
        if ignore.ignores(path) {
            continue;
        }
        // The highest sub-directory (below `dir`) with a kustomization file stands for the file.
        let nested = rel
            .match_indices('/')
            .filter_map(|(i, _)| rel.get(..i))
            .find(|sub| super::kustomization::is_kustomize_dir(tree, &format!("{prefix}{sub}")));
        if let Some(sub) = nested {
            out.insert(sub.to_string());
            continue;
        }
        if !(rel.ends_with(".yaml") || rel.ends_with(".yml")) {
            continue;
        }
        if parsed
            .get(path)
            .is_some_and(|r| r.as_ref().is_ok_and(Vec::is_empty))
        {
            continue;
        }
        out.insert(rel.to_string());
    }
    out.into_iter().collect()
}
