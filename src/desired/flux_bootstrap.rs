//! The Flux sources people do not keep in Git, read from what they do keep.
//!
//! A flux-operator `FluxInstance` (`fluxcd.controlplane.io/v1`) with `spec.sync` makes the operator
//! create a source and a Kustomization, both named `sync.name` (by default the instance's
//! namespace, `flux-system`), with the Kustomization at `sync.path`
//! (flux-operator `docs/api/v1/fluxinstance.md`, `internal/builder/templates.go`): it is rendered
//! here as that Kustomization, of this repository when `sync.url` is this repository (or when the
//! repository has no known URL). A source-watcher `ArtifactGenerator`
//! (`source.extensions.fluxcd.io/v1beta1`, `docs/spec/v1beta1/artifactgenerators.md`) builds an
//! `ExternalArtifact` by copying files of its sources; when a copy takes a directory of this
//! repository (`@alias/dir/**` copies its contents, `@alias/dir/` the directory itself), a path
//! in the artifact is that directory in the tree.

use serde::Deserialize;
use serde_json::Value;

use super::source::{AppRef, Context, SkipReason, SourceOutcome, Why, spec, tree_path};
use super::tree::normalize;
use super::{How, Unit};
use crate::k8s::object::{Object, group_of};

pub fn is_flux_instance(o: &Object) -> bool {
    o.kind == "FluxInstance" && group_of(&o.api_version) == "fluxcd.controlplane.io"
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct Sync {
    kind: String,
    url: String,
    #[serde(rename = "ref")]
    ref_: String,
    path: String,
    name: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
struct FluxInstanceSpec {
    sync: Option<Sync>,
}

/// The Kustomization a FluxInstance's `spec.sync` creates, as a unit.
pub fn flux_instance_unit(ctx: &Context<'_>, o: &Object) -> SourceOutcome {
    let ns = if o.namespace().is_empty() {
        "flux-system"
    } else {
        o.namespace()
    };
    let owner = AppRef::of(o, &o.kind);
    let s: FluxInstanceSpec = spec(o).map_err(|r| (owner.clone(), r))?;
    let Some(sync) = s.sync else {
        return Err((
            owner,
            SkipReason::new(
                Why::Missing,
                "FluxInstance has no spec.sync: it installs Flux and syncs nothing",
            ),
        ));
    };
    let name = sync.name.clone().unwrap_or_else(|| ns.to_string());
    let owner = AppRef {
        app: name,
        app_kind: "Kustomization".into(),
        ..owner
    };
    let unit = || -> Result<Unit, SkipReason> {
        if sync.kind != "GitRepository" {
            return Err(SkipReason::new(
                Why::Unsupported,
                format!(
                    "FluxInstance spec.sync kind {}: only a GitRepository sync is rendered",
                    sync.kind
                ),
            ));
        }
        let note = if ctx.is_this_repo(&sync.url) {
            None
        } else if ctx.repo_urls.is_empty() {
            Some(format!(
                "FluxInstance syncs {} at {}; taken as this repository, which has no known URL",
                sync.url, sync.ref_
            ))
        } else {
            return Err(ctx.not_this_repo(&sync.url));
        };
        let path = tree_path(if sync.path.is_empty() {
            "."
        } else {
            &sync.path
        })?;
        if !ctx.tree.is_dir(&path) {
            return Err(SkipReason::new(
                Why::Missing,
                format!(
                    "FluxInstance sync path {path:?} does not exist in the {}",
                    ctx.tree.label
                ),
            ));
        }
        let mut u = owner.unit(
            path,
            How::Kustomize {
                overlay: Default::default(),
                recurse_plain: true,
            },
            None,
            false,
        );
        // The sync Kustomization flux-operator writes prunes (internal/builder/templates.go).
        u.prune = Some(true);
        u.notes.extend(note);
        u.notes.push(format!(
            "the Kustomization FluxInstance {} creates from spec.sync",
            o.meta.name
        ));
        Ok(u)
    };
    unit().map_err(|r| (owner, r))
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
struct GeneratorSource {
    alias: String,
    kind: String,
    name: String,
    namespace: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
struct Copy {
    from: String,
    to: String,
    exclude: Vec<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
struct Artifact {
    name: String,
    copy: Vec<Copy>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct GeneratorSpec {
    sources: Vec<GeneratorSource>,
    artifacts: Vec<Artifact>,
    path_pattern: Option<String>,
}

/// The tree directory that `path` of the ExternalArtifact `ns/name` is, and a note saying so.
pub fn external_artifact(
    ctx: &Context<'_>,
    ns: &str,
    name: &str,
    path: &str,
) -> Result<(String, String), SkipReason> {
    let unknown = |why: String| SkipReason::new(Why::Unsupported, why);
    let generator = ctx
        .flux_sources
        .iter()
        .filter(|((k, gns, _), _)| k == "ArtifactGenerator" && (gns == ns || gns.is_empty()))
        .find_map(|((_, _, gname), v)| {
            let g: GeneratorSpec = serde_json::from_value(v.clone()).ok()?;
            let a = g.artifacts.iter().find(|a| a.name == name)?.clone();
            Some((gname.clone(), g, a))
        });
    let Some((gname, g, artifact)) = generator else {
        return Err(SkipReason::new(
            Why::NotThisRepository,
            format!(
                "ExternalArtifact {ns}/{name}: no ArtifactGenerator in the repository builds it"
            ),
        ));
    };
    if g.path_pattern.is_some() {
        return Err(unknown(format!(
            "ExternalArtifact {ns}/{name} of ArtifactGenerator {gname} fans out with pathPattern, \
             which is not followed"
        )));
    }
    let want = normalize(path.trim_start_matches("./")).unwrap_or_default();
    let mut found = Vec::new();
    for c in &artifact.copy {
        let Some((alias, from)) = c.from.strip_prefix('@').and_then(|f| f.split_once('/')) else {
            continue;
        };
        let Some(src) = g.sources.iter().find(|s| s.alias == alias) else {
            continue;
        };
        let to = c.to.strip_prefix("@artifact").unwrap_or(&c.to);
        let to = normalize(to.trim_start_matches('/')).unwrap_or_default();
        let (tree_dir, artifact_dir) = if let Some(d) = from.strip_suffix("/**") {
            (d.to_string(), to)
        } else if let Some(d) = from.strip_suffix('/') {
            let base = d.rsplit('/').next().unwrap_or(d);
            (d.to_string(), super::tree::join(&to, base))
        } else {
            continue;
        };
        let rest = if want == artifact_dir {
            Some(String::new())
        } else if artifact_dir.is_empty() {
            Some(want.clone())
        } else {
            want.strip_prefix(&format!("{artifact_dir}/"))
                .map(str::to_string)
        };
        if let Some(rest) = rest {
            found.push((src.clone(), tree_dir, rest, !c.exclude.is_empty()));
        }
    }
    let [(src, tree_dir, rest, excludes)] = found.as_slice() else {
        return Err(unknown(format!(
            "ExternalArtifact {ns}/{name}: path {path:?} is {} copies of ArtifactGenerator {gname}, \
             not one directory of a source",
            if found.is_empty() {
                "in none of the"
            } else {
                "assembled from several"
            }
        )));
    };
    if src.kind != "GitRepository" {
        return Err(unknown(format!(
            "ExternalArtifact {ns}/{name}: its source {} {} is not a GitRepository",
            src.kind, src.name
        )));
    }
    let sns = src.namespace.clone().unwrap_or_else(|| ns.to_string());
    let url = ctx
        .flux_source("GitRepository", &sns, &src.name)
        .and_then(|v| v.get("url"))
        .and_then(Value::as_str);
    if let Some(u) = url.filter(|u| !ctx.is_this_repo(u)) {
        return Err(ctx.not_this_repo(u));
    }
    let dir = tree_path(&super::tree::join(tree_dir, rest))?;
    let mut note = format!(
        "ExternalArtifact {ns}/{name} (ArtifactGenerator {gname}): rendered from {} of this \
         repository",
        if dir.is_empty() { "." } else { &dir }
    );
    if *excludes {
        note.push_str("; its copy excludes some files, which are rendered all the same");
    }
    Ok((dir, note))
}
