//! Where rendering starts, in order of authority: the roots the config names; else the root apps
//! the repository declares (Argo CD and Flux apps whose file no other app applies — they and what
//! they apply alone define the desired state, [`super::follow`] takes it from there, and manifests
//! no app renders are listed as not deployed); else every kustomize root that is not a base or
//! component of another kustomization, every chart root, and every directory of plain manifests
//! outside those.
//!
//! Every manifest is parsed once here; the plain renderer reuses the parsed objects.

use std::collections::{BTreeMap, BTreeSet};

use super::follow::{self, Candidate, Start};
use super::kustomization::{
    KUSTOMIZATION_FILES, inflated_chart_dirs, is_component, kustomization_entries,
    kustomization_files, patch_files,
};
use super::source::{Context, collect, normalize_url};
use super::tree::{Tree, join, normalize, under};
use super::{HelmArgs, How, Unit, clusters};
use crate::config::{ClusterConfig, RenderConfig};
use crate::error::InputError;
use crate::k8s::object::Object;
use crate::k8s::read::read_str;
use crate::util::glob::Glob;

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

pub fn plan<'a>(
    tree: &'a Tree,
    cfg: &RenderConfig,
    cluster_config: &'a BTreeMap<String, ClusterConfig>,
    extra_urls: &[String],
) -> Start<'a> {
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
    // A directory with both a kustomization and a Chart.yaml is one app, of the tool Argo CD's
    // source detection picks: kustomize (`argo::source_type`).
    chart_dirs.retain(|d| !kustomize_dirs.contains(d));
    // A subchart (`<chart>/charts/<sub>`) is part of its parent.
    let all_charts = chart_dirs.clone();
    chart_dirs.retain(|d| !all_charts.iter().any(|c| c != d && under(d, c)));

    // Parse every manifest outside chart directories once.
    let mut parsed = BTreeMap::new();
    let mut file_notes: BTreeMap<String, Vec<String>> = BTreeMap::new();
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
                problems.push(e.to_string());
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
        let read = match read_str(text, path) {
            Err(e) if e.message.contains("duplicate mapping key") => {
                let (objects, note) = super::lenient::last_wins(text, path, &e);
                file_notes.entry(path.clone()).or_default().push(note);
                objects
            }
            Err(e) => match super::lenient::tool_configuration(text) {
                Some(what) => {
                    file_notes.entry(path.clone()).or_default().push(format!(
                        "{path}: {what} with no metadata is a tool's configuration, not an API \
                         object: skipped"
                    ));
                    Ok(Vec::new())
                }
                None => Err(super::lenient::plain_words(e)),
            },
            ok => ok,
        };
        parsed.insert(path.clone(), read.and_then(crate::workload::checked));
    }

    // A kustomization's patch files are applied to the objects they target, as kustomize applies
    // them: an Application, ApplicationSet or HelmRelease in one is a fragment, never an app or a
    // source of its own (the overlay that patches it renders the whole object).
    let patches: BTreeSet<String> = kustomize_dirs
        .iter()
        .flat_map(|dir| {
            patch_files(tree, dir)
                .into_iter()
                .filter_map(move |f| normalize(&join(dir, &f)))
        })
        .collect();
    let objects: Vec<&Object> = parsed
        .iter()
        .filter(|(path, _)| !patches.contains(*path))
        .filter_map(|(_, r)| r.as_ref().ok())
        .flatten()
        .collect();
    let git_repositories = super::source::git_repositories(objects.iter().copied());
    let mut flux_sources = super::source::FluxSources::new();
    super::source::add_flux_sources(&mut flux_sources, objects.iter().copied());
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
        flux_sources,
        clusters: cluster_config,
    };

    let mut units = Vec::new();
    let mut skipped = Vec::new();
    let mut not_roots = Vec::new();
    // Files that define apps, and the patch files applied to them: never "not deployed".
    let mut app_files = patches.clone();
    let app_objects: Vec<&Object> = objects
        .iter()
        .copied()
        .filter(|o| follow::is_app(o))
        .collect();
    let apps_declared = cfg.roots.is_empty() && !app_objects.is_empty();

    if !cfg.roots.is_empty() {
        for root in &cfg.roots {
            match normalize(root) {
                Some(r) if tree.is_dir(&r) || tree.exists(&r) => units.extend(
                    root_unit(tree, &r, &kustomize_dirs, &chart_dirs, &parsed, &excluded)
                        .map(|u| (u, None)),
                ),
                Some(r) if tree.unread_submodule(&r).is_some() => {
                    problems.push(format!("render.roots: {}", tree.missing(&r)));
                }
                _ => problems.push(format!(
                    "render.roots: {root:?} does not exist in the {}",
                    tree.label
                )),
            }
        }
    } else if app_objects.is_empty() {
        // A submodule that was not read holds apps that cannot be found: unknown, by its path.
        problems.extend(
            tree.files
                .iter()
                .filter(|(p, e)| {
                    matches!(e, super::entry::Entry::Submodule { .. }) && !hidden(p) && !excluded(p)
                })
                .filter_map(|(p, _)| tree.unread_submodule(p).map(|e| e.to_string())),
        );
        // A chart a kustomization inflates (`helmCharts`) is rendered there, with its values.
        let inflated: BTreeSet<String> = kustomize_dirs
            .iter()
            .flat_map(|k| inflated_chart_dirs(tree, k))
            .collect();
        chart_dirs.retain(|c| !inflated.contains(c));
        units = no_app_units(tree, &kustomize_dirs, &chart_dirs, &parsed)
            .into_iter()
            .map(|u| (u, None))
            .collect();
    } else {
        // What each app would apply, decided without rendering: its file is applied by another app
        // when it is in what that app's source reads.
        let ignore = super::sourceignore::SourceIgnore::load(tree);
        let candidates: Vec<Candidate<'_>> = app_objects
            .iter()
            .map(|o| {
                let outcomes = follow::app_outcomes(&ctx, o);
                let reach = outcomes
                    .iter()
                    .filter_map(|r| r.as_ref().ok())
                    .flat_map(|u| follow::reach(tree, u, &parsed, &ignore))
                    .collect();
                Candidate {
                    object: o,
                    outcomes,
                    reach,
                }
            })
            .collect();
        let (roots, parents, cycles) = follow::roots(&candidates);
        problems.extend(cycles);
        let root_files: Vec<&str> = roots
            .iter()
            .filter_map(|i| candidates.get(*i))
            .map(|c| &*c.object.source.file)
            .collect();
        problems.extend(super::script_roots::candidates(
            tree,
            &kustomize_dirs,
            &root_files,
        ));
        let label = |i: &usize| {
            candidates
                .get(*i)
                .map(|c| format!("{}/{}", c.object.kind, c.object.meta.name))
        };
        let parent_labels: Vec<Vec<String>> = parents
            .iter()
            .map(|ps| ps.iter().filter_map(label).collect())
            .collect();
        for (i, c) in candidates.into_iter().enumerate() {
            app_files.insert(c.object.source.file.to_string());
            if !roots.contains(&i) {
                let ps = parent_labels.get(i).cloned().unwrap_or_default();
                not_roots.push((c.object.clone(), ps));
                continue;
            }
            // A Flux root belongs to its cluster directory; an Argo CD one to its destination.
            let flux_cluster = clusters::flux_root(&c.object.source.file, cluster_config);
            let mut root_units = Vec::new();
            collect(c.outcomes, &mut root_units, &mut skipped);
            for mut u in root_units {
                if u.cluster.is_none() {
                    u.cluster = flux_cluster.clone();
                }
                units.push((u, Some(c.object.clone())));
            }
        }
    }
    Start {
        ctx,
        units,
        parsed,
        file_notes,
        skipped,
        problems,
        not_roots,
        app_files,
        apps_declared,
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
        substitute_from_cluster: false,
        notes: Vec::new(),
        cluster: None,
        lineage: Vec::new(),
        chart: None,
        prepared: None,
        fingerprint: 0,
        prune: None,
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
