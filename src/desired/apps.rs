//! Argo CD Applications and ApplicationSets, and Flux Kustomizations and HelmReleases, as render units.
//!
//! Only sources in this repository are rendered offline: an Argo CD `repoURL` or a Flux
//! `GitRepository` URL is compared with the repository's remotes and the URLs the user gave
//! (`--repo-url`, `render.repo_urls`). Anything else — another repository, a Helm repository or OCI
//! chart, a generator that needs cluster secrets, `valuesFrom` — is listed with the reason instead of
//! being dropped silently.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::tree::{Tree, normalize};
use super::{HelmArgs, How, Skipped, Unit};
use crate::k8s::object::{Body, Kind, Object};
use crate::util::glob;

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
}

impl Context<'_> {
    fn is_this_repo(&self, url: &str) -> bool {
        let n = normalize_url(url);
        self.repo_urls.contains(&n)
    }

    fn not_this_repo(&self, url: &str) -> String {
        let known = if self.repo_urls.is_empty() {
            "none: the repository has no remote; pass --repo-url or set render.repo_urls"
                .to_string()
        } else {
            self.repo_urls.join(", ")
        };
        format!("source {url} is not this repository (this repository is known as: {known})")
    }
}

/// Refusals and invalid specs are errors; "not reachable offline" is not.
const REFUSED: &str = "refused";

fn is_error(reason: &str) -> bool {
    reason.contains(REFUSED) || reason.contains(" spec: ") || reason.contains("not valid YAML")
}

fn defined_at(o: &Object) -> String {
    o.source.to_string()
}

fn spec<T: for<'de> Deserialize<'de>>(o: &Object) -> Result<T, String> {
    match &o.body {
        Body::Raw(v) => serde_json::from_value(if v.is_null() { json!({}) } else { v.clone() })
            .map_err(|e| format!("{}: {} spec: {e}", o.source, o.kind)),
        _ => Err(format!("{}: {} has no spec", o.source, o.kind)),
    }
}

// ---------------------------------------------------------------------------------------------
// Argo CD

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ArgoApp {
    pub source: Option<ArgoSource>,
    pub sources: Vec<ArgoSource>,
    pub destination: Destination,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Destination {
    pub namespace: Option<String>,
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
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ArgoHelm {
    pub value_files: Vec<String>,
    pub values: Option<Value>,
    pub values_object: Option<Value>,
    pub parameters: Vec<HelmParameter>,
    pub release_name: Option<String>,
    pub skip_crds: bool,
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
    let mut m = Map::new();
    if let Some(p) = &k.name_prefix {
        m.insert("namePrefix".into(), json!(p));
    }
    if let Some(s) = &k.name_suffix {
        m.insert("nameSuffix".into(), json!(s));
    }
    if let Some(n) = &k.namespace {
        m.insert("namespace".into(), json!(n));
    }
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

pub fn is_kustomize_dir(tree: &Tree, dir: &str) -> bool {
    super::discover::KUSTOMIZATION_FILES
        .iter()
        .any(|f| tree.exists(&join(dir, f)))
}

fn is_chart_dir(tree: &Tree, dir: &str) -> bool {
    tree.exists(&join(dir, "Chart.yaml"))
}

pub fn join(dir: &str, file: &str) -> String {
    if dir.is_empty() {
        file.to_string()
    } else {
        format!("{}/{file}", dir.trim_end_matches('/'))
    }
}

/// A path from a manifest (`./apps/x`, `apps/x/`) as a tree path, refused when it leaves the tree.
fn tree_path(p: &str) -> Result<String, String> {
    normalize(p.trim()).ok_or_else(|| format!("path {p:?} points outside the repository: refused"))
}

/// Files an Argo CD directory source renders.
fn directory_files(tree: &Tree, dir: &str, d: &ArgoDirectory) -> Vec<String> {
    let matches_opt = |pat: &Option<String>, name: &str, rel: &str| {
        pat.as_deref()
            .filter(|p| !p.is_empty())
            .map(|p| glob::matches(p, name) || glob::matches(p, rel))
    };
    tree.files_under(dir)
        .filter(|f| {
            let rel = f.strip_prefix(dir).unwrap_or(f).trim_start_matches('/');
            if !d.recurse && rel.contains('/') {
                return false;
            }
            let name = rel.rsplit('/').next().unwrap_or(rel);
            let manifest = [".yaml", ".yml", ".json"].iter().any(|e| name.ends_with(e));
            manifest
                && matches_opt(&d.include, name, rel) != Some(false)
                && matches_opt(&d.exclude, name, rel) != Some(true)
        })
        .map(str::to_string)
        .collect()
}

/// Render units for one Argo CD Application (spec given; `name` is the app name).
pub fn argo_units(
    ctx: &Context<'_>,
    name: &str,
    app_kind: &str,
    at: &str,
    app: &ArgoApp,
) -> (Vec<Unit>, Vec<Skipped>) {
    let mut units = Vec::new();
    let mut skipped = Vec::new();
    let skip = |reason: String| Skipped {
        app: name.to_string(),
        app_kind: app_kind.to_string(),
        defined_at: at.to_string(),
        error: is_error(&reason),
        reason,
    };
    let sources: Vec<&ArgoSource> = app.source.iter().chain(&app.sources).collect();
    if sources.is_empty() {
        skipped.push(skip("the Application has no source".into()));
    }
    // `ref:` sources lend their repository to `$ref/...` value files.
    let refs: BTreeMap<&str, &ArgoSource> = sources
        .iter()
        .filter_map(|s| s.ref_.as_deref().map(|r| (r, *s)))
        .collect();
    let namespace = app.destination.namespace.clone().filter(|n| !n.is_empty());
    for s in &sources {
        if s.ref_.is_some() && s.path.is_none() && s.chart.is_none() {
            continue; // a values-only source
        }
        if let Some(chart) = &s.chart {
            skipped.push(skip(format!(
                "Helm chart {chart} from repository {} is not rendered offline (remote chart)",
                s.repo_url
            )));
            continue;
        }
        if s.repo_url.starts_with("oci://") || !ctx.is_this_repo(&s.repo_url) {
            skipped.push(skip(ctx.not_this_repo(&s.repo_url)));
            continue;
        }
        let path = match tree_path(s.path.as_deref().unwrap_or(".")) {
            Ok(p) => p,
            Err(e) => {
                skipped.push(skip(e));
                continue;
            }
        };
        if !ctx.tree.is_dir(&path) {
            skipped.push(skip(format!(
                "path {path:?} does not exist in the {}",
                ctx.tree.label
            )));
            continue;
        }
        let how = if s.helm.is_some() || is_chart_dir(ctx.tree, &path) {
            let h = s.helm.clone().unwrap_or_default();
            let mut args = HelmArgs {
                release: h.release_name.clone().unwrap_or_else(|| name.to_string()),
                include_crds: !h.skip_crds,
                ..HelmArgs::default()
            };
            let mut bad = None;
            for vf in &h.value_files {
                let resolved = match vf.strip_prefix('$') {
                    Some(rest) => {
                        let (r, file) = rest.split_once('/').unwrap_or((rest, ""));
                        match refs.get(r) {
                            Some(src) if ctx.is_this_repo(&src.repo_url) => tree_path(file),
                            Some(src) => Err(format!(
                                "value file {vf}: {}",
                                ctx.not_this_repo(&src.repo_url)
                            )),
                            None => Err(format!("value file {vf}: no source with ref {r:?}")),
                        }
                    }
                    None if vf.contains("://") => {
                        Err(format!("value file {vf} is remote: not fetched offline"))
                    }
                    None => tree_path(&join(&path, vf)),
                };
                match resolved {
                    Ok(p) => args.values_files.push(p),
                    Err(e) => bad = Some(e),
                }
            }
            if let Some(e) = bad {
                skipped.push(skip(e));
                continue;
            }
            // valuesObject wins over values.
            match (&h.values_object, &h.values) {
                (Some(v), _) => args.values.push(v.clone()),
                (None, Some(Value::String(s))) if !s.trim().is_empty() => {
                    match serde_saphyr::from_str::<Value>(s) {
                        Ok(v) => args.values.push(v),
                        Err(e) => {
                            skipped.push(skip(format!("helm.values is not valid YAML: {e}")));
                            continue;
                        }
                    }
                }
                (None, Some(v @ Value::Object(_))) => args.values.push(v.clone()),
                _ => {}
            }
            for p in &h.parameters {
                if p.force_string {
                    args.set_string.push((p.name.clone(), p.value.clone()));
                } else {
                    args.set.push((p.name.clone(), p.value.clone()));
                }
            }
            How::Helm(args)
        } else if s.kustomize.is_some() || is_kustomize_dir(ctx.tree, &path) {
            How::Kustomize {
                overlay: s
                    .kustomize
                    .as_ref()
                    .map(kustomize_overlay)
                    .unwrap_or_default(),
                recurse_plain: false,
            }
        } else {
            let d = s.directory.clone().unwrap_or_default();
            How::Plain {
                files: directory_files(ctx.tree, &path, &d),
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
        units.push(Unit {
            app: name.to_string(),
            app_kind: app_kind.to_string(),
            defined_at: at.to_string(),
            path,
            how,
            namespace: namespace.clone(),
            force_namespace: false,
            substitute: None,
            notes,
        });
    }
    (units, skipped)
}

// ---------------------------------------------------------------------------------------------
// ApplicationSet

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct AppSetSpec {
    go_template: bool,
    generators: Vec<Map<String, Value>>,
    template: Value,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct GitGenerator {
    #[serde(rename = "repoURL")]
    repo_url: String,
    directories: Vec<DirPattern>,
    files: Vec<DirPattern>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
struct DirPattern {
    path: String,
    exclude: bool,
}

type Params = BTreeMap<String, Value>;

fn path_params(path: &str, into: &mut Params) {
    let basename = path.rsplit('/').next().unwrap_or(path).to_string();
    let normalized: String = basename
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    into.insert("path".into(), json!(path));
    into.insert("path.path".into(), json!(path));
    into.insert("path.basename".into(), json!(basename));
    into.insert("path.basenameNormalized".into(), json!(normalized));
    for (i, seg) in path.split('/').enumerate() {
        into.insert(format!("path[{i}]"), json!(seg));
        into.insert(format!("path.segments[{i}]"), json!(seg));
    }
}

fn flatten(prefix: &str, v: &Value, into: &mut Params) {
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, v, into);
            }
            if !prefix.is_empty() {
                into.insert(prefix.to_string(), v.clone());
            }
        }
        _ => {
            into.insert(prefix.to_string(), v.clone());
        }
    }
}

fn generate(ctx: &Context<'_>, kind: &str, g: &Value) -> Result<Vec<Params>, String> {
    match kind {
        "list" => {
            let elements = g
                .get("elements")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            Ok(elements
                .iter()
                .map(|e| {
                    let mut p = Params::new();
                    flatten("", e, &mut p);
                    p
                })
                .collect())
        }
        "git" => {
            let git: GitGenerator =
                serde_json::from_value(g.clone()).map_err(|e| format!("git generator: {e}"))?;
            if !ctx.is_this_repo(&git.repo_url) {
                return Err(ctx.not_this_repo(&git.repo_url));
            }
            let mut out = Vec::new();
            if !git.directories.is_empty() {
                let mut dirs: Vec<String> = ctx
                    .tree
                    .files
                    .keys()
                    .filter_map(|f| f.rsplit_once('/').map(|(d, _)| d.to_string()))
                    .flat_map(|d| {
                        let parts: Vec<&str> = d.split('/').collect();
                        (1..=parts.len())
                            .map(move |i| parts[..i].join("/"))
                            .collect::<Vec<_>>()
                    })
                    .collect();
                dirs.sort();
                dirs.dedup();
                for d in dirs {
                    if d.split('/').any(|s| s.starts_with('.')) {
                        continue;
                    }
                    let included = git
                        .directories
                        .iter()
                        .any(|p| !p.exclude && glob::matches(&p.path, &d));
                    let excluded = git
                        .directories
                        .iter()
                        .any(|p| p.exclude && glob::matches(&p.path, &d));
                    if included && !excluded {
                        let mut p = Params::new();
                        path_params(&d, &mut p);
                        out.push(p);
                    }
                }
            }
            for pat in &git.files {
                for f in ctx
                    .tree
                    .files
                    .keys()
                    .filter(|f| glob::matches(&pat.path, f))
                {
                    let bytes = ctx.tree.read(f)?;
                    let text = String::from_utf8_lossy(bytes);
                    let docs: Vec<Value> =
                        serde_saphyr::from_multiple(&text).map_err(|e| format!("{f}: {e}"))?;
                    for doc in docs {
                        let mut p = Params::new();
                        flatten("", &doc, &mut p);
                        let dir = f.rsplit_once('/').map_or("", |(d, _)| d);
                        path_params(dir, &mut p);
                        p.insert(
                            "path.filename".into(),
                            json!(f.rsplit('/').next().unwrap_or(f)),
                        );
                        out.push(p);
                    }
                }
            }
            Ok(out)
        }
        other => Err(format!(
            "the {other} generator needs the cluster (secrets, composition or an API) and is not rendered offline"
        )),
    }
}

/// Replaces `{{ key }}` (and `{{ .key }}` with goTemplate) in every string of `template`.
fn substitute(template: &Value, params: &Params, go: bool) -> Result<Value, String> {
    Ok(match template {
        Value::String(s) => Value::String(substitute_str(s, params, go)?),
        Value::Array(a) => Value::Array(
            a.iter()
                .map(|v| substitute(v, params, go))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| Ok((substitute_str(k, params, go)?, substitute(v, params, go)?)))
                .collect::<Result<_, String>>()?,
        ),
        v => v.clone(),
    })
}

fn substitute_str(s: &str, params: &Params, go: bool) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = s;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after
            .find("}}")
            .ok_or_else(|| format!("unclosed {{{{ in template string {s:?}"))?;
        let expr = after[..end].trim();
        let key = if go {
            expr.strip_prefix('.')
                .ok_or_else(|| format!("template expression {{{{{expr}}}}} is not supported offline (only {{{{.param}}}})"))?
        } else {
            expr
        };
        if key.contains(' ') || key.contains('|') {
            return Err(format!(
                "template expression {{{{{expr}}}}} is not supported offline (only plain parameters)"
            ));
        }
        let v = params.get(key).ok_or_else(|| {
            format!("template parameter {key:?} is not produced by the generator")
        })?;
        match v {
            Value::String(s) => out.push_str(s),
            v => out.push_str(&v.to_string()),
        }
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Render units for an ApplicationSet: each generated Application.
pub fn appset_units(ctx: &Context<'_>, o: &Object) -> (Vec<Unit>, Vec<Skipped>) {
    let at = defined_at(o);
    let name = o.meta.name.clone();
    let skip = |kind: &str, reason: String| Skipped {
        app: name.clone(),
        app_kind: format!("ApplicationSet/{kind}"),
        defined_at: at.clone(),
        error: is_error(&reason),
        reason,
    };
    let s: AppSetSpec = match spec(o) {
        Ok(s) => s,
        Err(e) => return (vec![], vec![skip("?", e)]),
    };
    let mut units = Vec::new();
    let mut skipped = Vec::new();
    for g in &s.generators {
        let Some((kind, body)) = g.iter().find(|(k, _)| k.as_str() != "selector") else {
            continue;
        };
        let params = match generate(ctx, kind, body) {
            Ok(p) => p,
            Err(e) => {
                skipped.push(skip(kind, e));
                continue;
            }
        };
        for p in params {
            let app = match substitute(&s.template, &p, s.go_template) {
                Ok(v) => v,
                Err(e) => {
                    skipped.push(skip(kind, e));
                    continue;
                }
            };
            let app_name = app["metadata"]["name"]
                .as_str()
                .unwrap_or(&name)
                .to_string();
            let spec: ArgoApp = match serde_json::from_value(app["spec"].clone()) {
                Ok(s) => s,
                Err(e) => {
                    skipped.push(skip(kind, format!("generated Application {app_name}: {e}")));
                    continue;
                }
            };
            let (u, sk) = argo_units(
                ctx,
                &app_name,
                &format!("ApplicationSet/{kind}"),
                &at,
                &spec,
            );
            units.extend(u);
            skipped.extend(sk);
        }
    }
    (units, skipped)
}

// ---------------------------------------------------------------------------------------------
// Flux

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
    fn flux_source(&self, o: &Object, r: &SourceRef) -> Result<(), String> {
        if r.kind != "GitRepository" {
            return Err(format!(
                "source {} {} is not a GitRepository: not rendered offline",
                r.kind, r.name
            ));
        }
        let ns = r
            .namespace
            .clone()
            .unwrap_or_else(|| o.namespace().to_string());
        match self.git_repositories.get(&(ns.clone(), r.name.clone())) {
            Some(url) if self.repo_urls.contains(url) => Ok(()),
            Some(url) => Err(self.not_this_repo(url)),
            None => Err(format!(
                "GitRepository {ns}/{} is not defined in this repository, so its URL is unknown",
                r.name
            )),
        }
    }
}

pub fn flux_units(ctx: &Context<'_>, o: &Object) -> (Vec<Unit>, Vec<Skipped>) {
    let at = defined_at(o);
    let name = o.meta.name.clone();
    let kind = o.kind.clone();
    let skip = |reason: String| Skipped {
        app: name.clone(),
        app_kind: kind.clone(),
        defined_at: at.clone(),
        error: is_error(&reason),
        reason,
    };
    let unit = |path: String, how: How, namespace: Option<String>, force: bool| Unit {
        app: name.clone(),
        app_kind: kind.clone(),
        defined_at: at.clone(),
        path,
        how,
        namespace,
        force_namespace: force,
        substitute: None,
        notes: Vec::new(),
    };
    match o.typed_kind() {
        Kind::FluxKustomization => {
            let s: FluxKustomizationSpec = match spec(o) {
                Ok(s) => s,
                Err(e) => return (vec![], vec![skip(e)]),
            };
            if let Err(e) = ctx.flux_source(o, &s.source_ref) {
                return (vec![], vec![skip(e)]);
            }
            let path = match tree_path(s.path.as_deref().unwrap_or(".")) {
                Ok(p) => p,
                Err(e) => return (vec![], vec![skip(e)]),
            };
            if !ctx.tree.is_dir(&path) {
                return (
                    vec![],
                    vec![skip(format!(
                        "path {path:?} does not exist in the {}",
                        ctx.tree.label
                    ))],
                );
            }
            let mut overlay = Map::new();
            if let Some(p) = &s.name_prefix {
                overlay.insert("namePrefix".into(), json!(p));
            }
            if let Some(p) = &s.name_suffix {
                overlay.insert("nameSuffix".into(), json!(p));
            }
            if let Some(n) = &s.target_namespace {
                overlay.insert("namespace".into(), json!(n));
            }
            if !s.patches.is_empty() {
                overlay.insert("patches".into(), Value::Array(s.patches.clone()));
            }
            if !s.images.is_empty() {
                overlay.insert("images".into(), Value::Array(s.images.clone()));
            }
            if !s.components.is_empty() {
                overlay.insert("components".into(), json!(s.components));
            }
            let mut u = unit(
                path,
                How::Kustomize {
                    overlay,
                    recurse_plain: true,
                },
                s.target_namespace.clone(),
                s.target_namespace.is_some(),
            );
            if let Some(pb) = s.post_build {
                if !pb.substitute_from.is_empty() {
                    u.notes.push(
                        "postBuild.substituteFrom reads ConfigMaps/Secrets from the cluster: unresolved offline"
                            .into(),
                    );
                }
                u.substitute = Some(pb.substitute);
            }
            (vec![u], vec![])
        }
        Kind::HelmRelease => {
            let s: HelmReleaseSpec = match spec(o) {
                Ok(s) => s,
                Err(e) => return (vec![], vec![skip(e)]),
            };
            if s.chart_ref.is_some() {
                return (
                    vec![],
                    vec![skip(
                        "spec.chartRef (OCIRepository/HelmChart) is not rendered offline".into(),
                    )],
                );
            }
            let Some(chart) = s.chart else {
                return (vec![], vec![skip("HelmRelease has no spec.chart".into())]);
            };
            if let Err(e) = ctx.flux_source(o, &chart.spec.source_ref) {
                return (vec![], vec![skip(e)]);
            }
            let path = match tree_path(&chart.spec.chart) {
                Ok(p) => p,
                Err(e) => return (vec![], vec![skip(e)]),
            };
            if !is_chart_dir(ctx.tree, &path) {
                return (
                    vec![],
                    vec![skip(format!(
                        "{path:?} is not a chart directory (no Chart.yaml)"
                    ))],
                );
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
                    Err(e) => return (vec![], vec![skip(e)]),
                }
            }
            if let Some(v) = s.values {
                args.values.push(v);
            }
            let mut u = unit(path, How::Helm(args), ns, s.target_namespace.is_some());
            if !s.values_from.is_empty() {
                u.notes.push(
                    "valuesFrom reads ConfigMaps/Secrets from the cluster: unresolved offline"
                        .into(),
                );
            }
            (vec![u], vec![])
        }
        _ => (vec![], vec![]),
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

    #[test]
    fn template_substitution_both_syntaxes() {
        let mut p = Params::new();
        path_params("apps/llama", &mut p);
        let t = json!({"metadata": {"name": "{{path.basename}}-app"}, "spec": {"source": {"path": "{{path}}"}}});
        let v = substitute(&t, &p, false).unwrap();
        assert_eq!(v["metadata"]["name"], "llama-app");
        let t = json!({"metadata": {"name": "{{ .path.basename }}"}});
        assert_eq!(
            substitute(&t, &p, true).unwrap()["metadata"]["name"],
            "llama"
        );
        assert!(substitute(&json!("{{ .path.basename | upper }}"), &p, true).is_err());
        assert!(substitute(&json!("{{missing}}"), &p, false).is_err());
    }
}
