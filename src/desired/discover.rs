//! What to render, in order of authority: the roots the config names; else the Argo CD and Flux apps
//! the repository declares (they alone define the desired state, and manifests no app renders are
//! listed as not deployed); else every kustomize root that is not a base or component of another
//! kustomization, every chart root, and every directory of plain manifests outside those.
//!
//! Every manifest is parsed once here; the plain renderer reuses the parsed objects.

use std::collections::{BTreeMap, BTreeSet};

use super::source::{AppRef, Context, collect, normalize_url};
use super::tree::{
    KUSTOMIZATION_FILES, Tree, is_component, join, kustomization_entries, kustomization_files,
    normalize,
};
use super::{HelmArgs, How, Skipped, Unit, appset, argo, flux};
use crate::config::RenderConfig;
use crate::error::InputError;
use crate::k8s::object::{Body, Kind, Object};
use crate::k8s::read::read_str;
use crate::util::glob::Glob;

pub struct Plan {
    pub units: Vec<Unit>,
    pub skipped: Vec<Skipped>,
    /// Parsed manifest files (path → objects or the parse error).
    pub parsed: BTreeMap<String, Result<Vec<Object>, InputError>>,
    pub not_deployed: Vec<String>,
    pub problems: Vec<String>,
}

fn dir_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

fn is_manifest_name(path: &str) -> bool {
    [".yaml", ".yml", ".json"].iter().any(|e| path.ends_with(e))
}

fn hidden(path: &str) -> bool {
    path.split('/').any(|s| s.starts_with('.'))
}

fn under(path: &str, dir: &str) -> bool {
    dir.is_empty() || path == dir || path.starts_with(&format!("{dir}/"))
}

pub fn plan(tree: &Tree, cfg: &RenderConfig, extra_urls: &[String]) -> Plan {
    let mut problems = Vec::new();
    // Each pattern is compiled once; a refused one still excludes the directory it names.
    let exclude: Vec<(&str, Option<Glob>)> = cfg
        .exclude
        .iter()
        .map(|g| {
            let compiled = Glob::new(g)
                .map_err(|e| problems.push(format!("render.exclude: {e}")))
                .ok();
            (g.as_str(), compiled)
        })
        .collect();
    let excluded = |p: &str| {
        exclude.iter().any(|(g, compiled)| {
            compiled.as_ref().is_some_and(|c| c.is_match(p)) || under(p, g.trim_end_matches('/'))
        })
    };

    // Kustomize and chart roots.
    let kustomize_dirs: BTreeSet<String> = tree
        .files
        .keys()
        .filter(|p| KUSTOMIZATION_FILES.contains(&file_name(p)) && !hidden(p) && !excluded(p))
        .map(|p| dir_of(p).to_string())
        .collect();
    let mut chart_dirs: Vec<String> = tree
        .files
        .keys()
        .filter(|p| file_name(p) == "Chart.yaml" && !hidden(p) && !excluded(p))
        .map(|p| dir_of(p).to_string())
        .collect();
    // A subchart (`<chart>/charts/<sub>`) is part of its parent.
    let all_charts = chart_dirs.clone();
    chart_dirs.retain(|d| !all_charts.iter().any(|c| c != d && under(d, c)));

    // Parse every manifest outside chart directories once.
    let mut parsed = BTreeMap::new();
    for (path, _) in tree.files.iter() {
        if !is_manifest_name(path)
            || hidden(path)
            || excluded(path)
            || KUSTOMIZATION_FILES.contains(&file_name(path))
            || all_charts.iter().any(|c| under(path, c))
        {
            continue;
        }
        let bytes = match tree.read(path) {
            Ok(b) => b,
            Err(e) => {
                problems.push(e);
                continue;
            }
        };
        let Ok(text) = std::str::from_utf8(bytes) else {
            parsed.insert(
                path.clone(),
                Err(InputError {
                    file: path.clone(),
                    line: None,
                    column: None,
                    message: "is not valid UTF-8".into(),
                }),
            );
            continue;
        };
        // Values files, CI configs and the like are not manifests: only text that names an
        // apiVersion and a kind is.
        if !(text.contains("apiVersion") && text.contains("kind")) {
            continue;
        }
        parsed.insert(path.clone(), read_str(text, path));
    }

    let objects: Vec<&Object> = parsed
        .values()
        .filter_map(|r| r.as_ref().ok())
        .flatten()
        .collect();
    let git_repositories = objects
        .iter()
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
        .collect();
    let mut repo_urls: Vec<String> = tree
        .remotes
        .iter()
        .chain(&cfg.repo_urls)
        .chain(extra_urls)
        .map(|u| normalize_url(u))
        .collect();
    repo_urls.sort();
    repo_urls.dedup();
    let ctx = Context {
        tree,
        repo_urls,
        git_repositories,
    };

    let mut units = Vec::new();
    let mut skipped = Vec::new();
    let mut not_deployed = Vec::new();

    if !cfg.roots.is_empty() {
        for root in &cfg.roots {
            match normalize(root) {
                Some(r) if tree.is_dir(&r) || tree.exists(&r) => units.extend(root_unit(
                    tree,
                    &r,
                    &kustomize_dirs,
                    &chart_dirs,
                    &parsed,
                    &excluded,
                )),
                _ => problems.push(format!(
                    "render.roots: {root:?} does not exist in the {}",
                    tree.label
                )),
            }
        }
    } else {
        let app_objects: Vec<&Object> = objects
            .iter()
            .copied()
            .filter(|o| {
                matches!(
                    o.typed_kind(),
                    Kind::Application
                        | Kind::ApplicationSet
                        | Kind::FluxKustomization
                        | Kind::HelmRelease
                )
            })
            .collect();
        if app_objects.is_empty() {
            // A chart a kustomization inflates (`helmCharts`) is rendered there, with its values.
            let inflated: BTreeSet<String> = kustomize_dirs
                .iter()
                .flat_map(|k| super::tree::inflated_chart_dirs(tree, k))
                .collect();
            chart_dirs.retain(|c| !inflated.contains(c));
            units = no_app_units(tree, &kustomize_dirs, &chart_dirs, &parsed);
        } else {
            for o in &app_objects {
                let outcomes = match o.typed_kind() {
                    Kind::Application => {
                        let owner = AppRef {
                            app: o.meta.name.clone(),
                            app_kind: "Application".into(),
                            defined_at: o.source.to_string(),
                        };
                        match argo::application_spec(o) {
                            Ok(spec) => argo::argo_units(&ctx, &owner, &spec),
                            // A broken spec is reported under the object's own kind.
                            Err(e) => vec![
                                AppRef {
                                    app_kind: o.kind.clone(),
                                    ..owner
                                }
                                .skip(e),
                            ],
                        }
                    }
                    Kind::ApplicationSet => appset::appset_units(&ctx, o),
                    _ => flux::flux_units(&ctx, o).into_iter().collect(),
                };
                collect(outcomes, &mut units, &mut skipped);
            }
            // Manifests that no app renders, and that are not app definitions themselves.
            let app_files: BTreeSet<&str> = app_objects.iter().map(|o| &*o.source.file).collect();
            for (path, r) in &parsed {
                let Ok(objs) = r else { continue };
                if objs.is_empty() || app_files.contains(path.as_str()) {
                    continue;
                }
                if objs
                    .iter()
                    .all(|o| matches!(o.typed_kind(), Kind::GitRepository))
                {
                    continue;
                }
                let rendered = units.iter().any(|u| match &u.how {
                    How::Plain { files } => files.contains(path),
                    _ => under(path, &u.path),
                });
                if !rendered {
                    not_deployed.push(path.clone());
                }
            }
        }
    }
    Plan {
        units,
        skipped,
        parsed,
        not_deployed,
        problems,
    }
}

fn unit(path: &str, kind: &str, how: How) -> Unit {
    Unit {
        app: if path.is_empty() {
            ".".into()
        } else {
            path.to_string()
        },
        app_kind: kind.to_string(),
        defined_at: if path.is_empty() {
            ".".into()
        } else {
            path.to_string()
        },
        path: path.to_string(),
        how,
        namespace: None,
        force_namespace: false,
        substitute: None,
        notes: Vec::new(),
    }
}

fn chart_unit(dir: &str) -> Unit {
    let name = if dir.is_empty() {
        "release".to_string()
    } else {
        file_name(dir).to_string()
    };
    unit(
        dir,
        "helm",
        How::Helm(HelmArgs {
            release: name,
            include_crds: true,
            ..HelmArgs::default()
        }),
    )
}

fn root_unit(
    tree: &Tree,
    root: &str,
    kustomize_dirs: &BTreeSet<String>,
    chart_dirs: &[String],
    parsed: &BTreeMap<String, Result<Vec<Object>, InputError>>,
    excluded: &dyn Fn(&str) -> bool,
) -> Option<Unit> {
    if kustomize_dirs.contains(root) {
        return Some(unit(
            root,
            "kustomize",
            How::Kustomize {
                overlay: Default::default(),
                recurse_plain: false,
            },
        ));
    }
    if chart_dirs.iter().any(|c| c == root) {
        return Some(chart_unit(root));
    }
    if tree.exists(root) {
        return Some(unit(
            root,
            "file",
            How::Plain {
                files: vec![root.to_string()],
            },
        ));
    }
    let files: Vec<String> = parsed
        .keys()
        .filter(|p| under(p, root) && !excluded(p))
        .cloned()
        .collect();
    Some(unit(root, "directory", How::Plain { files }))
}

/// Without apps: top-level kustomize roots, chart roots, then directories of plain manifests.
fn no_app_units(
    tree: &Tree,
    kustomize_dirs: &BTreeSet<String>,
    chart_dirs: &[String],
    parsed: &BTreeMap<String, Result<Vec<Object>, InputError>>,
) -> Vec<Unit> {
    // Directories that another kustomization uses as a resource or component.
    let referenced: BTreeSet<String> = kustomize_dirs
        .iter()
        .flat_map(|dir| {
            kustomization_entries(tree, dir)
                .into_iter()
                .filter_map(move |r| normalize(&join(dir, &r)))
        })
        .filter(|p| kustomize_dirs.contains(p))
        .collect();
    // A Component is a fragment for other kustomizations, never a root, referenced or not.
    let mut units: Vec<Unit> = kustomize_dirs
        .iter()
        .filter(|d| !referenced.contains(*d) && !is_component(tree, d))
        .map(|d| {
            unit(
                d,
                "kustomize",
                How::Kustomize {
                    overlay: Default::default(),
                    recurse_plain: false,
                },
            )
        })
        .collect();
    units.extend(chart_dirs.iter().map(|d| chart_unit(d)));
    // Files a kustomization reads (a patch, a resource outside its directory) are its output or a
    // fragment of it, never an app of their own: a patch that sets replicas is not a workload.
    let fragments: BTreeSet<String> = kustomize_dirs
        .iter()
        .flat_map(|dir| {
            kustomization_files(tree, dir)
                .into_iter()
                .filter_map(move |f| normalize(&join(dir, &f)))
        })
        .collect();
    let mut plain: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for path in parsed.keys() {
        if kustomize_dirs.iter().any(|k| under(path, k)) || fragments.contains(path) {
            continue;
        }
        plain.entry(dir_of(path)).or_default().push(path.clone());
    }
    units.extend(
        plain
            .into_iter()
            .map(|(d, files)| unit(d, "directory", How::Plain { files })),
    );
    units
}

#[cfg(test)]
pub(crate) fn plan_unit_for_tests() -> Unit {
    unit("apps", "directory", How::Plain { files: vec![] })
}
