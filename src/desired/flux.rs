//! Flux Kustomizations and HelmReleases as render units: a Kustomization whose GitRepository is
//! this repository (one defined in Git with this repository's URL, or one Git does not hold,
//! which is the bootstrap's), or whose ExternalArtifact an ArtifactGenerator builds from it; a
//! HelmRelease whose chart is in this repository, or in a HelmRepository (an index or an OCI
//! registry) or an OCIRepository, fetched before it renders. `postBuild.substituteFrom` and
//! `valuesFrom` read the cluster: the unit is rendered without them and says so.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::remote::refs::{ChartRef, ChartSource, Rules};
use super::source::{
    AppRef, Context, SkipReason, SourceOutcome, Why, naming_overlay, spec, tree_path,
};
use super::tree::is_chart_dir;
use super::{CHART_FILE, HelmArgs, How, Unit};
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
    version: Option<String>,
    source_ref: SourceRef,
    values_files: Vec<String>,
    ignore_missing_values_files: bool,
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

/// Where a Flux app's sources are: this repository (at a path), or why not.
enum Located {
    /// This repository; a note when that was inferred (a GitRepository absent from Git).
    ThisRepo(Option<String>),
    /// An ExternalArtifact an ArtifactGenerator builds from this repository: the tree directory
    /// the app's path maps to.
    Mapped { dir: String, note: String },
}

impl Context<'_> {
    /// The GitRepository a `sourceRef` names, as this repository or why not. One that Git does
    /// not hold is the one `flux bootstrap` (or a flux-operator FluxInstance's `spec.sync`)
    /// creates in the cluster: this repository.
    fn git_source(&self, ns: &str, name: &str) -> Result<Option<String>, SkipReason> {
        let url = self
            .flux_source("GitRepository", ns, name)
            .and_then(|v| v.get("url"))
            .and_then(Value::as_str);
        match url {
            Some(u) if self.is_this_repo(u) => Ok(None),
            Some(u) => Err(self.not_this_repo(u)),
            None => Ok(Some(format!(
                "GitRepository {ns}/{name} is not in the repository: taken as this repository, \
                 as flux bootstrap (or a FluxInstance's spec.sync) creates it"
            ))),
        }
    }

    /// Checks a Kustomization's `sourceRef` and finds the tree directory its `path` is.
    fn locate(&self, o: &Object, r: &SourceRef, path: &str) -> Result<Located, SkipReason> {
        let ns = r
            .namespace
            .clone()
            .unwrap_or_else(|| o.namespace().to_string());
        match r.kind.as_str() {
            "GitRepository" => self.git_source(&ns, &r.name).map(Located::ThisRepo),
            "ExternalArtifact" => {
                let (dir, note) =
                    super::flux_bootstrap::external_artifact(self, &ns, &r.name, path)?;
                Ok(Located::Mapped { dir, note })
            }
            kind => Err(SkipReason::new(
                Why::Unsupported,
                format!(
                    "source {kind} {ns}/{}: only GitRepository and ExternalArtifact sources are \
                     rendered as kustomizations (an OCI artifact's or bucket's manifests are not)",
                    r.name
                ),
            )),
        }
    }
}

/// The unit of a Flux Kustomization or HelmRelease (or a FluxInstance's sync), or why it is not
/// rendered; `None` for other kinds.
pub fn flux_units(ctx: &Context<'_>, o: &Object) -> Option<SourceOutcome> {
    if super::flux_bootstrap::is_flux_instance(o) {
        return Some(super::flux_bootstrap::flux_instance_unit(ctx, o));
    }
    let owner = AppRef::of(o, &o.kind);
    let unit = match o.typed_kind() {
        Kind::FluxKustomization => kustomization_unit(ctx, o, &owner),
        Kind::HelmRelease => helm_release_unit(ctx, o, &owner),
        _ => return None,
    };
    Some(unit.map_err(|r| (owner, r)))
}

fn kustomization_unit(ctx: &Context<'_>, o: &Object, owner: &AppRef) -> Result<Unit, SkipReason> {
    let s: FluxKustomizationSpec = spec(o)?;
    let raw_path = s.path.as_deref().unwrap_or(".");
    let (path, note) = match ctx.locate(o, &s.source_ref, raw_path)? {
        Located::ThisRepo(note) => (tree_path(raw_path)?, note),
        Located::Mapped { dir, note } => (dir, Some(note)),
    };
    if !ctx.tree.is_dir(&path) {
        return Err(SkipReason::new(Why::Missing, ctx.tree.missing(&path)));
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
        overlay.insert(
            "components".into(),
            super::source::components_overlay(&path, &s.components),
        );
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
    u.notes.extend(note);
    u.prune = Some(s.prune);
    if let Some(pb) = s.post_build {
        if !pb.substitute_from.is_empty() {
            u.notes.push(
                "postBuild.substituteFrom reads ConfigMaps/Secrets from the cluster: unresolved offline; \
                 a variable only they would give is kept as written"
                    .into(),
            );
            u.substitute_from_cluster = true;
        }
        u.substitute = Some(pb.substitute);
    }
    Ok(u)
}

/// helm-controller's release name (`api/v2/helmrelease_types.go`, `GetReleaseName`):
/// `[targetNamespace-]name`, shortened past 53 characters to its first 40, `-` and 12 hex
/// characters of its SHA-256.
fn release_name(name: &str, target: Option<&String>) -> String {
    let full = match target {
        Some(t) => format!("{t}-{name}"),
        None => name.to_string(),
    };
    if full.len() <= 53 {
        return full;
    }
    let hash = super::remote::store::sha256(full.as_bytes());
    let head: String = full.chars().take(40).collect();
    format!("{head}-{}", hash.get(..12).unwrap_or(&hash))
}

fn helm_release_unit(ctx: &Context<'_>, o: &Object, owner: &AppRef) -> Result<Unit, SkipReason> {
    let name = &owner.app;
    let s: HelmReleaseSpec = spec(o)?;
    let ns = s
        .target_namespace
        .clone()
        .or_else(|| o.meta.namespace.as_deref().map(str::to_string));
    let release = s
        .release_name
        .clone()
        .unwrap_or_else(|| release_name(name, s.target_namespace.as_ref()));
    let mut args = HelmArgs {
        release,
        include_crds: true,
        ..HelmArgs::default()
    };
    let own_ns = o.namespace().to_string();
    let (chart_spec, chart_ns) = match (&s.chart, &s.chart_ref) {
        (Some(c), _) => (c.spec.clone(), own_ns.clone()),
        (None, Some(r)) => {
            let r: SourceRef = serde_json::from_value(r.clone()).map_err(|e| {
                SkipReason::new(
                    Why::Invalid,
                    format!("{}: HelmRelease spec.chartRef: {e}", o.source),
                )
            })?;
            let rns = r.namespace.clone().unwrap_or_else(|| own_ns.clone());
            match r.kind.as_str() {
                "OCIRepository" => {
                    let chart = oci_repository_chart(ctx, &rns, &r.name)?;
                    return Ok(remote_unit(owner, chart, args, ns, s, &[]));
                }
                "HelmChart" => {
                    let hc = ctx.flux_source("HelmChart", &rns, &r.name).ok_or_else(|| {
                        SkipReason::new(
                            Why::NotThisRepository,
                            format!("HelmChart {rns}/{} is not in the repository", r.name),
                        )
                    })?;
                    let spec: HelmChartSpec = serde_json::from_value(hc.clone()).map_err(|e| {
                        SkipReason::new(Why::Invalid, format!("HelmChart {rns}/{}: {e}", r.name))
                    })?;
                    (spec, rns)
                }
                kind => {
                    return Err(SkipReason::new(
                        Why::Unsupported,
                        format!("spec.chartRef {kind} {rns}/{} is not rendered", r.name),
                    ));
                }
            }
        }
        (None, None) => {
            return Err(SkipReason::new(
                Why::Missing,
                "HelmRelease has neither spec.chart nor spec.chartRef",
            ));
        }
    };
    let r = &chart_spec.source_ref;
    let rns = r.namespace.clone().unwrap_or(chart_ns);
    match r.kind.as_str() {
        "HelmRepository" => {
            let chart = helm_repository_chart(ctx, &rns, &r.name, &chart_spec)?;
            args.ignore_missing_values = chart_spec.ignore_missing_values_files;
            let files = chart_spec.values_files.clone();
            return Ok(remote_unit(owner, chart, args, ns, s, &files));
        }
        "GitRepository" => {}
        kind => {
            return Err(SkipReason::new(
                Why::Unsupported,
                format!("chart source {kind} {rns}/{} is not rendered", r.name),
            ));
        }
    }
    let note = ctx.git_source(&rns, &r.name)?;
    let path = tree_path(&chart_spec.chart)?;
    if !is_chart_dir(ctx.tree, &path) {
        return Err(SkipReason::new(
            Why::Missing,
            format!("{path:?} is not a chart directory (no Chart.yaml)"),
        ));
    }
    for vf in &chart_spec.values_files {
        args.values_files.push(tree_path(vf)?);
    }
    if let Some(v) = s.values {
        args.values.push(v);
    }
    let mut u = owner.unit(path, How::Helm(args), ns, s.target_namespace.is_some());
    u.notes.extend(note);
    // Helm deletes what a release no longer renders.
    u.prune = Some(true);
    if !s.values_from.is_empty() {
        u.notes.push(
            "valuesFrom reads ConfigMaps/Secrets from the cluster: unresolved offline".into(),
        );
    }
    Ok(u)
}

/// A HelmRelease's unit for a fetched chart; `values_files` are paths inside the chart.
fn remote_unit(
    owner: &AppRef,
    chart: ChartRef,
    mut args: HelmArgs,
    ns: Option<String>,
    s: HelmReleaseSpec,
    values_files: &[String],
) -> Unit {
    for vf in values_files {
        if let Some(p) = super::tree::normalize(vf).filter(|p| !p.is_empty()) {
            args.values_files.push(format!("{CHART_FILE}{p}"));
        }
    }
    if let Some(v) = s.values {
        args.values.push(v);
    }
    let mut u = owner.unit(
        chart.location(),
        How::Helm(args),
        ns,
        s.target_namespace.is_some(),
    );
    u.chart = Some(chart);
    // Helm deletes what a release no longer renders.
    u.prune = Some(true);
    if !s.values_from.is_empty() {
        u.notes.push(
            "valuesFrom reads ConfigMaps/Secrets from the cluster: unresolved offline".into(),
        );
    }
    u
}

/// The chart a HelmRepository serves (source-controller `docs/spec/v1/helmrepositories.md`):
/// `type: oci` (or an `oci://` URL) is a registry holding `<url>/<chart>`, any other an index.
fn helm_repository_chart(
    ctx: &Context<'_>,
    ns: &str,
    name: &str,
    c: &HelmChartSpec,
) -> Result<ChartRef, SkipReason> {
    let repo = ctx.flux_source("HelmRepository", ns, name).ok_or_else(|| {
        SkipReason::new(
            Why::NotThisRepository,
            format!("HelmRepository {ns}/{name} is not in the repository, so its URL is unknown"),
        )
    })?;
    let url = repo.get("url").and_then(Value::as_str).unwrap_or_default();
    if url.is_empty() {
        return Err(SkipReason::new(
            Why::Invalid,
            format!("HelmRepository {ns}/{name} has no url"),
        ));
    }
    let oci = repo.get("type").and_then(Value::as_str) == Some("oci") || url.starts_with("oci://");
    let insecure = repo
        .get("insecure")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let source = if oci {
        ChartSource::Oci {
            reference: format!(
                "{}/{}",
                url.trim_start_matches("oci://").trim_end_matches('/'),
                c.chart
            ),
            insecure,
        }
    } else {
        ChartSource::Repo {
            url: url.to_string(),
            chart: c.chart.clone(),
        }
    };
    Ok(ChartRef {
        source,
        version: c.version.clone().unwrap_or_else(|| "*".into()),
        digest: None,
        rules: Rules::Flux,
    })
}

/// The chart an OCIRepository names (source-controller `docs/spec/v1/ocirepositories.md`,
/// `getArtifactRef`): `ref.digest` wins, then `ref.semver` (with `semverFilter`), then `ref.tag`,
/// else `latest`.
fn oci_repository_chart(ctx: &Context<'_>, ns: &str, name: &str) -> Result<ChartRef, SkipReason> {
    let repo = ctx.flux_source("OCIRepository", ns, name).ok_or_else(|| {
        SkipReason::new(
            Why::NotThisRepository,
            format!("OCIRepository {ns}/{name} is not in the repository, so its URL is unknown"),
        )
    })?;
    let url = repo.get("url").and_then(Value::as_str).unwrap_or_default();
    let Some(reference) = url.strip_prefix("oci://") else {
        return Err(SkipReason::new(
            Why::Invalid,
            format!("OCIRepository {ns}/{name}: url {url:?} is not oci://"),
        ));
    };
    let r = repo.get("ref").cloned().unwrap_or(Value::Null);
    let field = |k: &str| r.get(k).and_then(Value::as_str).map(str::to_string);
    let (version, digest, rules) = match (field("digest"), field("semver"), field("tag")) {
        (Some(d), _, _) => (String::new(), Some(d), Rules::Tag),
        (None, Some(range), _) => (
            range,
            None,
            Rules::FluxSemver {
                filter: field("semverFilter"),
            },
        ),
        (None, None, Some(tag)) => (tag, None, Rules::Tag),
        (None, None, None) => ("latest".into(), None, Rules::Tag),
    };
    Ok(ChartRef {
        source: ChartSource::Oci {
            reference: reference.to_string(),
            insecure: repo
                .get("insecure")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        },
        version,
        digest,
        rules,
    })
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
