//! Following the controllers from the roots down.
//!
//! Argo CD and Flux apply what an app renders, and an app in that output is an app in turn: an
//! Application rendered by an app-of-apps chart, a HelmRelease that a Flux Kustomization applies
//! after its overlay patched it, Kustomizations applying directories of Kustomizations. So the
//! desired state is what the *roots* render, followed down: a root is an app object in a file that
//! no other app's source reads (a bootstrap Application, `clusters/<name>/flux-system/gotk-sync.yaml`),
//! and every other app is rendered from the object its parent rendered — never from its raw file,
//! which its parent may patch, rename, substitute or place in another namespace. App objects that
//! no root reaches are listed as "not applied by any root", never rendered.
//!
//! Each root belongs to a cluster ([`super::clusters`]); a Flux app's children stay in its cluster,
//! an Argo CD Application goes where its destination says. Following is bounded in depth, and an
//! app that applies one of its ancestors is reported as a cycle and not followed again.

use std::collections::{BTreeMap, BTreeSet};

use super::error::RenderError;
use super::kustomization::{is_kustomize_dir, kustomization_entries};
use super::remote::Remote;
use super::render::Renderer;
use super::source::{AppRef, Context, SourceOutcome, collect};
use super::tree::{Tree, join, normalize, under};
use super::{How, Outcome, Parsed, Rendered, Skipped, Unit, appset, argo, flux};
use crate::k8s::object::{Kind, Object};

/// How deep app-of-apps chains are followed: deeper is reported, not rendered.
pub const MAX_DEPTH: usize = 8;

/// Whether an object is an app a GitOps controller renders.
pub fn is_app(o: &Object) -> bool {
    matches!(
        o.typed_kind(),
        Kind::Application | Kind::ApplicationSet | Kind::FluxKustomization | Kind::HelmRelease
    ) || super::flux_bootstrap::is_flux_instance(o)
}

/// The render units of one app object (one per Argo CD source, one per generated Application),
/// or why each is not rendered.
pub fn app_outcomes(ctx: &Context<'_>, o: &Object) -> Vec<SourceOutcome> {
    match o.typed_kind() {
        Kind::Application => {
            let owner = AppRef::of(o, "Application");
            match argo::application_spec(o) {
                Ok(spec) => argo::argo_units(ctx, &owner, &spec),
                // A broken spec is reported under the object's own kind.
                Err(e) => vec![
                    AppRef {
                        app_kind: o.kind.to_string(),
                        ..owner
                    }
                    .skip(e),
                ],
            }
        }
        Kind::ApplicationSet => appset::appset_units(ctx, o),
        _ => flux::flux_units(ctx, o).into_iter().collect(),
    }
}

/// Who an app is within a cluster: what a second copy of it would collide with.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct AppKey {
    cluster: Option<String>,
    kind: String,
    namespace: String,
    name: String,
}

impl AppKey {
    fn of(o: &Object, cluster: &Option<String>) -> AppKey {
        AppKey {
            cluster: cluster.clone(),
            kind: o.kind.to_string(),
            namespace: o.namespace().to_string(),
            name: o.meta.name.clone(),
        }
    }

    fn label(&self) -> String {
        format!("{}/{}", self.kind, self.name)
    }
}

/// The files an app's unit applies, decided the way its controller decides them without
/// rendering: a plain source's files; a kustomization's resources, bases and components followed
/// through the directories they name; a path without a kustomization listed as Flux lists it.
/// A chart's templates are not manifests of the tree, so they apply no file of it.
pub fn reach(
    tree: &Tree,
    unit: &Unit,
    parsed: &Parsed,
    ignore: &super::sourceignore::SourceIgnore,
) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    match &unit.how {
        How::Plain { files } => out.extend(files.iter().cloned()),
        How::Helm(_) => {}
        How::Kustomize { recurse_plain, .. } => {
            let mut seen = BTreeSet::new();
            if is_kustomize_dir(tree, &unit.path) {
                kustomization_reach(tree, &unit.path, &mut seen, &mut out);
            } else {
                let entries: Vec<String> = if *recurse_plain {
                    flux::generated_resources(tree, &unit.path, parsed, ignore)
                } else {
                    tree.files_under(&unit.path)
                        .filter_map(|f| f.strip_prefix(&unit.path))
                        .map(|r| r.trim_start_matches('/').to_string())
                        .filter(|r| !r.contains('/'))
                        .collect()
                };
                for e in entries {
                    let p = join(&unit.path, &e);
                    if is_kustomize_dir(tree, &p) {
                        kustomization_reach(tree, &p, &mut seen, &mut out);
                    } else {
                        out.insert(p);
                    }
                }
            }
        }
    }
    out
}

fn kustomization_reach(
    tree: &Tree,
    dir: &str,
    seen: &mut BTreeSet<String>,
    out: &mut BTreeSet<String>,
) {
    if !seen.insert(dir.to_string()) {
        return;
    }
    for e in kustomization_entries(tree, dir) {
        // A remote base is not part of this tree.
        if e.contains("://") || e.starts_with("github.com/") {
            continue;
        }
        let Some(p) = normalize(&join(dir, &e)) else {
            continue;
        };
        if tree.is_dir(&p) {
            kustomization_reach(tree, &p, seen, out);
        } else {
            out.insert(p);
        }
    }
}

/// An app found in the tree's files, with what its sources would apply.
pub struct Candidate<'a> {
    pub object: &'a Object,
    pub outcomes: Vec<SourceOutcome>,
    pub reach: BTreeSet<String>,
}

/// The roots among the tree's app objects: those whose file no *other* app applies (an app that
/// applies its own file — Flux's `flux-system`, an Argo CD app-of-apps that manages itself — is
/// still a root). Once a repository has a Flux bootstrap (a Flux app applying its own file), Flux
/// applies only what that reaches: a stray Flux object nothing applies is not a root. Returns the
/// indexes of the roots, each candidate's static parents (indexes), and the cycles among the rest:
/// apps that apply each other while no root applies any of them.
pub fn roots(candidates: &[Candidate<'_>]) -> (Vec<usize>, Vec<Vec<usize>>, Vec<String>) {
    // Who applies each file, indexed once: an app's parents are the others that reach its file.
    let mut appliers: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (j, c) in candidates.iter().enumerate() {
        for f in &c.reach {
            appliers.entry(f.as_str()).or_default().push(j);
        }
    }
    let parents: Vec<Vec<usize>> = candidates
        .iter()
        .enumerate()
        .map(|(i, c)| {
            appliers
                .get(&*c.object.source.file)
                .into_iter()
                .flatten()
                .copied()
                .filter(|j| *j != i)
                .collect()
        })
        .collect();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); candidates.len()];
    for (c, ps) in parents.iter().enumerate() {
        for p in ps {
            if let Some(ch) = children.get_mut(*p) {
                ch.push(c);
            }
        }
    }
    let is_flux = |c: &Candidate<'_>| {
        matches!(
            c.object.typed_kind(),
            Kind::FluxKustomization | Kind::HelmRelease
        )
    };
    let applies_itself = |c: &Candidate<'_>| c.reach.contains(&*c.object.source.file);
    let bootstrapped = candidates.iter().any(|c| is_flux(c) && applies_itself(c));
    let roots: Vec<usize> = candidates
        .iter()
        .enumerate()
        .filter(|(i, c)| {
            parents.get(*i).is_some_and(Vec::is_empty)
                && !(bootstrapped && is_flux(c) && !applies_itself(c))
        })
        .map(|(i, _)| i)
        .collect();
    // Everything the roots reach, statically; what is left and leads back to itself is a cycle.
    let mut reached: BTreeSet<usize> = roots.iter().copied().collect();
    let mut frontier: Vec<usize> = roots.clone();
    while let Some(p) = frontier.pop() {
        for &c in children.get(p).into_iter().flatten() {
            if reached.insert(c) {
                frontier.push(c);
            }
        }
    }
    let mut cycles = Vec::new();
    let mut reported = BTreeSet::new();
    for start in (0..candidates.len()).filter(|i| !reached.contains(i)) {
        if reported.contains(&start) {
            continue;
        }
        // Walk up the first parent until a node repeats: the repeated part is a cycle.
        let mut path = vec![start];
        let mut at = start;
        while let Some(&p) = parents.get(at).and_then(|ps| ps.first()) {
            if let Some(pos) = path.iter().position(|&x| x == p) {
                let cycle: Vec<usize> = path.split_off(pos);
                if cycle.iter().all(|c| reported.insert(*c)) {
                    let names: Vec<String> = cycle
                        .iter()
                        .rev()
                        .chain(cycle.last())
                        .filter_map(|&c| candidates.get(c))
                        .map(|c| {
                            let o = c.object;
                            format!("{}/{} ({})", o.kind, o.meta.name, o.source.file)
                        })
                        .collect();
                    cycles.push(format!(
                        "apps apply each other and no root applies them (a cycle): {}",
                        names.join(" → ")
                    ));
                }
                break;
            }
            path.push(p);
            at = p;
        }
    }
    (roots, parents, cycles)
}

/// A unit waiting to render, with the apps above it.
struct Queued {
    unit: Unit,
    /// The app this unit renders, and its ancestors (root first, itself last).
    chain: Vec<AppKey>,
}

/// What `discover` hands over: the roots' units and what following their output needs.
pub struct Start<'a> {
    pub ctx: Context<'a>,
    /// The roots' units, each with the app object behind it (none for a configured root or a
    /// repository without apps).
    pub units: Vec<(Unit, Option<Object>)>,
    pub parsed: Parsed,
    pub skipped: Vec<Skipped>,
    pub problems: Vec<String>,
    /// App objects found in the tree's files that are not roots, with the apps whose sources
    /// include their file (`Kind/name`): listed when no root reaches them.
    pub not_roots: Vec<(Object, Vec<String>)>,
    /// Files that define app objects, and kustomizations' patch files (fragments applied to the
    /// objects they target): never "not deployed" themselves.
    pub app_files: BTreeSet<String>,
    /// Whether the repository declares apps (files no app renders are then "not deployed").
    pub apps_declared: bool,
    /// What reading a manifest file passed over or read leniently (a tool's configuration, a
    /// duplicated key), by file: said on the apps that render the file.
    pub file_notes: BTreeMap<String, Vec<String>>,
}

/// Renders the roots and follows the apps in their output, breadth first; what a level's units
/// need from outside the repository is fetched through `remote` before the level renders.
pub fn render_all(start: Start<'_>, renderer: &mut Renderer<'_>, remote: &Remote) -> Rendered {
    let Start {
        mut ctx,
        units,
        parsed,
        mut skipped,
        mut problems,
        not_roots,
        app_files,
        apps_declared,
        file_notes,
    } = start;
    let mut visited: BTreeSet<AppKey> = BTreeSet::new();
    let mut queue: std::collections::VecDeque<Queued> = units
        .into_iter()
        .map(|(unit, app)| {
            let chain = match app {
                Some(o) => {
                    let k = AppKey::of(&o, &unit.cluster);
                    visited.insert(k.clone());
                    vec![k]
                }
                None => Vec::new(),
            };
            Queued { unit, chain }
        })
        .collect();
    // Raw app objects a followed app rendered: their names by file and kind.
    let mut reached: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    // Directories of this repository the followed apps name as sources, rendered or not.
    let mut named_by_apps: BTreeSet<String> = BTreeSet::new();
    let mut outcomes = Vec::new();
    // Breadth first, a level at a time: the units of a level render together (in parallel, the
    // cache permitting), then their results are followed in queue order, as one at a time would.
    while !queue.is_empty() {
        let mut level: Vec<Queued> = queue.drain(..).collect();
        let mut units: Vec<Unit> = level.iter().map(|q| q.unit.clone()).collect();
        let unfetched = super::prepare::prepare(&mut units, ctx.tree, remote);
        let ready: Vec<&Unit> = units
            .iter()
            .zip(&unfetched)
            .filter(|(_, e)| e.is_none())
            .map(|(u, _)| u)
            .collect();
        let mut rendered = renderer.render_batch(&ready, &parsed).into_iter();
        let results: Vec<Result<Vec<Object>, RenderError>> = unfetched
            .into_iter()
            .map(|e| match e {
                Some(e) => Err(e),
                None => rendered.next().unwrap_or(Err(RenderError::NotRendered)),
            })
            .collect();
        for (q, u) in level.iter_mut().zip(units) {
            q.unit = u;
        }
        // The Flux sources a level renders (an OCIRepository beside its HelmRelease, placed in
        // the namespace its Kustomization sets) are what the apps it renders refer to.
        for objs in results.iter().filter_map(|r| r.as_ref().ok()) {
            super::source::add_flux_sources(&mut ctx.flux_sources, objs.iter());
        }
        for (Queued { unit, chain }, result) in level.into_iter().zip(results) {
            if let Ok(objs) = &result {
                for o in objs.iter().filter(|o| is_app(o)) {
                    reached
                        .entry((o.source.file.to_string(), o.kind.to_string()))
                        .or_default()
                        .push(o.meta.name.clone());
                    named_by_apps.extend(argo_local_paths(&ctx, o));
                    let child_units: Vec<SourceOutcome> = app_outcomes(&ctx, o)
                        .into_iter()
                        .map(|r| {
                            r.map(|mut u| {
                                // A Flux app applies into its parent's cluster; an Argo CD Application
                                // says where, and only says nothing when its destination is empty.
                                if u.cluster.is_none() {
                                    u.cluster = unit.cluster.clone();
                                }
                                u.lineage = unit.lineage.clone();
                                u.lineage.push(format!("{}/{}", unit.app_kind, unit.app));
                                u
                            })
                        })
                        .collect();
                    let cluster = child_units
                        .iter()
                        .find_map(|r| r.as_ref().ok().map(|u| u.cluster.clone()))
                        .unwrap_or_else(|| unit.cluster.clone());
                    let key = AppKey::of(o, &cluster);
                    if chain.last() == Some(&key) {
                        continue; // an app that applies itself (flux-system, a self-managing app)
                    }
                    // A root that its own apps apply again manages itself through them (a
                    // FluxInstance from a chart whose sync applies the root): followed once.
                    if chain.first() == Some(&key) {
                        continue;
                    }
                    if let Some(pos) = chain.iter().position(|k| *k == key) {
                        let names: Vec<String> = chain
                            .get(pos..)
                            .unwrap_or_default()
                            .iter()
                            .chain([&key])
                            .map(AppKey::label)
                            .collect();
                        problems.push(format!(
                            "apps apply each other (a cycle), not followed again: {}",
                            names.join(" → ")
                        ));
                        continue;
                    }
                    if !visited.insert(key.clone()) {
                        // Applied twice within a cluster: the duplicate object is reported as such.
                        continue;
                    }
                    if chain.len() >= MAX_DEPTH {
                        problems.push(format!(
                            "{} at {}: apps nested more than {MAX_DEPTH} deep are not followed",
                            key.label(),
                            o.source
                        ));
                        continue;
                    }
                    let mut child_chain = chain.clone();
                    child_chain.push(key);
                    let mut units = Vec::new();
                    collect(child_units, &mut units, &mut skipped);
                    queue.extend(units.into_iter().map(|unit| Queued {
                        unit,
                        chain: child_chain.clone(),
                    }));
                }
            }
            outcomes.push(Outcome { unit, result });
        }
    }
    for o in &mut outcomes {
        if let How::Plain { files } = &o.unit.how {
            let notes: Vec<String> = files
                .iter()
                .filter_map(|f| file_notes.get(f))
                .flatten()
                .cloned()
                .collect();
            o.unit.notes.extend(notes);
        }
    }
    drop_roots_apps_render(&mut outcomes, &named_by_apps);
    let failed: BTreeSet<String> = outcomes
        .iter()
        .filter(|o| o.result.is_err())
        .map(|o| format!("{}/{}", o.unit.app_kind, o.unit.app))
        .collect();
    for (o, parents) in &not_roots {
        // Matched by file and kind, and by name within the rendered one (a prefix or suffix).
        if reached
            .get(&(o.source.file.to_string(), o.kind.to_string()))
            .is_some_and(|names| names.iter().any(|n| n.contains(&o.meta.name)))
        {
            continue;
        }
        skipped.push(Skipped {
            fingerprint: super::source::fingerprint(o),
            app: o.meta.name.clone(),
            app_kind: o.kind.to_string(),
            defined_at: o.source.to_string(),
            reason: not_applied(parents, &failed),
            repository: None,
            error: false,
            not_applied: true,
            cluster: None,
        });
    }
    let not_deployed = if apps_declared {
        not_deployed(&parsed, &outcomes, &app_files)
    } else {
        Vec::new()
    };
    Rendered {
        label: ctx.tree.label.clone(),
        cluster: None,
        outcomes,
        skipped,
        not_deployed,
        problems: {
            problems.extend(renderer.take_problems());
            problems
        },
    }
}

/// A directory an app renders is that app's, never also a root of its own: in a repository
/// without app objects in its files (an app-of-apps chart whose parent Application was created by
/// hand, a bootstrap overlay applied by hand), the roots found by discovery render first, and a
/// root that one of the apps they render also renders is dropped, so its objects count once.
/// A directory an Argo CD Application names but does not render (a config-management plugin's)
/// is that app's too.
fn drop_roots_apps_render(outcomes: &mut Vec<Outcome>, named_by_apps: &BTreeSet<String>) {
    let mut by_apps: BTreeSet<String> = outcomes
        .iter()
        .filter(|o| !o.unit.lineage.is_empty())
        .map(|o| o.unit.path.clone())
        .collect();
    by_apps.extend(named_by_apps.iter().cloned());
    outcomes.retain(|o| {
        let discovered = o.unit.lineage.is_empty() && o.unit.fingerprint == 0;
        !(discovered && by_apps.contains(&o.unit.path))
    });
}

/// The directories of this repository an Argo CD Application's sources name (`path` of a source
/// whose `repoURL` is this repository), whether or not gpuledger renders them.
fn argo_local_paths(ctx: &Context<'_>, o: &Object) -> Vec<String> {
    if o.typed_kind() != Kind::Application {
        return Vec::new();
    }
    let crate::k8s::object::Body::Raw(spec) = &o.body else {
        return Vec::new();
    };
    let sources = spec.get("source").into_iter().chain(
        spec.get("sources")
            .and_then(|s| s.as_array())
            .into_iter()
            .flatten(),
    );
    sources
        .filter(|s| {
            s.get("repoURL")
                .and_then(|u| u.as_str())
                .is_some_and(|u| ctx.is_this_repo(u))
        })
        .filter_map(|s| s.get("path").and_then(|p| p.as_str()))
        .filter_map(|p| super::tree::tree_path(p).ok())
        .collect()
}

/// Manifest files that no rendered unit reads, that define no app, and that hold more than
/// GitRepository objects (which Flux reads through its apps).
fn not_deployed(
    parsed: &Parsed,
    outcomes: &[Outcome],
    app_files: &BTreeSet<String>,
) -> Vec<String> {
    // A manifest that an overlay pulls in from outside its own directory (`../../base`) is
    // deployed: kustomize's origin annotations named it as each object's source.
    let rendered_files: BTreeSet<&str> = outcomes
        .iter()
        .filter_map(|o| o.result.as_ref().ok())
        .flatten()
        .map(|o| &*o.source.file)
        .collect();
    parsed
        .iter()
        .filter_map(|(path, r)| {
            let objs = r.as_ref().ok()?;
            if objs.is_empty()
                || app_files.contains(path)
                || objs.iter().all(|o| o.typed_kind() == Kind::GitRepository)
                || rendered_files.contains(path.as_str())
            {
                return None;
            }
            let rendered = outcomes.iter().any(|o| match &o.unit.how {
                How::Plain { files } => files.contains(path),
                _ => under(path, &o.unit.path),
            });
            (!rendered).then(|| path.clone())
        })
        .collect()
}

/// Why an app object in the tree is not applied: no app includes its file, the apps that do
/// failed to render, or they include the file and render something else (a patch deleted it, a
/// parent itself is not applied).
fn not_applied(parents: &[String], failed: &BTreeSet<String>) -> String {
    if parents.is_empty() {
        return "not applied by any root: no app's source includes this file (Flux applies what \
                the cluster's bootstrap Kustomization reaches)"
            .into();
    }
    let broken: Vec<&String> = parents.iter().filter(|p| failed.contains(*p)).collect();
    if !broken.is_empty() {
        return format!(
            "not applied by any root: {} failed to render, so what it applies is unknown",
            broken
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    format!(
        "not applied by any root: {} include{} this file, but no root reaches {} or what {} \
         render{} does not hold this object",
        parents.join(", "),
        if parents.len() == 1 { "s" } else { "" },
        if parents.len() == 1 { "it" } else { "them" },
        if parents.len() == 1 { "it" } else { "they" },
        if parents.len() == 1 { "s" } else { "" },
    )
}
