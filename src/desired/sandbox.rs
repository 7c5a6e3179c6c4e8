//! The render sandbox: every local path that a kustomization, a chart or an app's helm options
//! name is resolved against the repository before a renderer runs, and refused when it leaves it.
//!
//! kustomize's root-only load restrictor only guards files: a `resources`, `bases` or `components`
//! entry that names a *directory* starts a new kustomization root wherever it is, so enough `../`
//! reaches any checkout or cache on the runner and renders it as this repository's desired state.
//! So before kustomize runs, the whole kustomization graph a unit reaches is walked here, every
//! field that names a file or directory is resolved lexically against the repository root
//! (following the repository's own symlinks, refusing one that points outside), and one entry
//! outside the repository fails the unit. The same holds for a chart's directory, its `file://`
//! dependencies, its values files and `--set-file` files. Nothing from the repository runs here:
//! the check reads the [`Tree`] only. Remote entries (`https://…`, `git@…`, `github.com/…`) are
//! refused too: rendering fetches nothing.

use std::collections::{BTreeSet, VecDeque};
use std::path::{Component, Path};

use serde_json::{Map, Value};

pub use super::error::Leaves;
use super::error::SandboxError;
use super::kustomization::{KUSTOMIZATION_FILES, is_remote};
use super::tree::{Entry, Tree, join};
use super::{CHART_FILE, HelmArgs};

/// More symlinks than this on one path is a loop (Linux stops at 40 as well).
const MAX_LINKS: usize = 40;

/// Resolves `path` (relative to the tree directory `dir`) to a tree path, following the tree's
/// symlinks component by component, as the file system of the rendered copy would.
pub fn resolve(tree: &Tree, dir: &str, path: &str) -> Result<String, Leaves> {
    if Path::new(path).has_root() {
        return Err(Leaves::Outside);
    }
    let mut pending: VecDeque<String> = VecDeque::new();
    push_components(&mut pending, &join(dir, path))?;
    let mut parts: Vec<String> = Vec::new();
    let mut links = 0;
    while let Some(c) = pending.pop_front() {
        if c == ".." {
            parts.pop().ok_or(Leaves::Outside)?;
            continue;
        }
        parts.push(c);
        let here = parts.join("/");
        if let Some(Entry::Symlink(target)) = tree.files.get(&here) {
            links += 1;
            if links > MAX_LINKS {
                return Err(Leaves::TooManyLinks);
            }
            if Path::new(target).has_root() {
                return Err(Leaves::Symlink {
                    link: here,
                    target: target.clone(),
                });
            }
            parts.pop();
            // The target replaces the link; what followed the link follows the target.
            let mut front = VecDeque::new();
            push_components(&mut front, target)?;
            // A relative target that climbs above the root leaves through this link.
            if climbs_out(parts.len(), &front) {
                return Err(Leaves::Symlink {
                    link: here,
                    target: target.clone(),
                });
            }
            front.extend(pending);
            pending = front;
        }
    }
    Ok(parts.join("/"))
}

/// Whether walking `components` from `depth` components deep ever goes above the root.
fn climbs_out(mut depth: usize, components: &VecDeque<String>) -> bool {
    for c in components {
        if c == ".." {
            match depth.checked_sub(1) {
                Some(d) => depth = d,
                None => return true,
            }
        } else {
            depth += 1;
        }
    }
    false
}

fn push_components(into: &mut VecDeque<String>, path: &str) -> Result<(), Leaves> {
    for c in Path::new(path).components() {
        match c {
            Component::Normal(s) => into.push_back(s.to_string_lossy().into_owned()),
            Component::CurDir => {}
            Component::ParentDir => into.push_back("..".into()),
            Component::RootDir | Component::Prefix(_) => return Err(Leaves::Outside),
        }
    }
    Ok(())
}

/// One path a kustomization names: the field it sits in, the entry as written, and whether the
/// field may name a kustomization directory (which is then checked too).
struct Named {
    field: &'static str,
    entry: String,
    may_be_dir: bool,
}

/// Every local path a kustomization names, in the fields kustomize reads paths from.
fn named_paths(k: &Map<String, Value>) -> Vec<Named> {
    let mut out = Vec::new();
    let mut add = |field: &'static str, v: Option<&Value>, may_be_dir: bool| {
        if let Some(s) = v.and_then(Value::as_str) {
            out.push(Named {
                field,
                entry: s.to_string(),
                may_be_dir,
            });
        }
    };
    let list = |v: Option<&Value>| -> Vec<Value> {
        match v {
            Some(Value::Array(a)) => a.clone(),
            Some(s @ Value::String(_)) => vec![s.clone()],
            _ => Vec::new(),
        }
    };
    for (field, may_be_dir) in [
        ("resources", true),
        ("bases", true),
        ("components", true),
        ("crds", false),
        ("configurations", false),
        ("patchesStrategicMerge", false),
        ("transformers", true),
        ("generators", true),
        ("validators", true),
    ] {
        for v in list(k.get(field)) {
            // An inline patch or transformer configuration is YAML, not a path.
            if v.as_str().is_some_and(|s| !s.contains('\n')) {
                add(field, Some(&v), may_be_dir);
            }
        }
    }
    for field in ["patches", "patchesJson6902", "replacements"] {
        for v in list(k.get(field)) {
            add(field, v.get("path"), false);
        }
    }
    for field in ["configMapGenerator", "secretGenerator"] {
        for g in list(k.get(field)) {
            for f in list(g.get("files")) {
                // `key=path` names the file after the first `=`, as kustomize parses it.
                let f = f.as_str().map(|s| s.split_once('=').map_or(s, |(_, p)| p));
                add(
                    field,
                    f.map(|s| Value::String(s.to_string())).as_ref(),
                    false,
                );
            }
            for e in list(g.get("envs")) {
                add(field, Some(&e), false);
            }
            add(field, g.get("env"), false);
        }
    }
    for c in list(k.get("helmCharts")) {
        add("helmCharts", c.get("valuesFile"), false);
        for f in list(c.get("additionalValuesFiles")) {
            add("helmCharts", Some(&f), false);
        }
    }
    // The deprecated form kustomize converts to `helmCharts` (helmchartargs.go, HelmChartArgs).
    for c in list(k.get("helmChartInflationGenerator")) {
        add("helmChartInflationGenerator", c.get("values"), false);
        add("helmChartInflationGenerator", c.get("chartHome"), false);
    }
    if let Some(g) = k.get("helmGlobals") {
        add("helmGlobals", g.get("chartHome"), false);
        add("helmGlobals", g.get("configHome"), false);
    }
    if let Some(o) = k.get("openapi") {
        add("openapi", o.get("path"), false);
    }
    out
}

/// Checks the paths of `k`, a kustomization in the tree directory `dir` shown as `file`; returns
/// the directories it names, to be checked in turn, and adds every path it names to `named`.
fn check_one(
    tree: &Tree,
    dir: &str,
    file: &str,
    k: &Map<String, Value>,
    named: &mut BTreeSet<String>,
) -> Result<Vec<String>, SandboxError> {
    let mut dirs = Vec::new();
    for n in named_paths(k) {
        let entry = n.entry.trim();
        if is_remote(entry) {
            // kustomize fetches only what `resources`, `bases` and `components` name; gpuledger
            // fetched those before rendering and mounted them in the tree.
            let fetched = matches!(n.field, "resources" | "bases" | "components")
                .then(|| {
                    tree.remote_entries
                        .get(&(dir.to_string(), entry.to_string()))
                })
                .flatten();
            match fetched {
                Some(Ok(mount)) => {
                    named.insert(mount.clone());
                    if tree.is_dir(mount) {
                        dirs.push(mount.clone());
                    }
                    continue;
                }
                Some(Err(miss)) => {
                    return Err(SandboxError::RemoteMiss {
                        file: file.to_string(),
                        field: n.field,
                        entry: entry.to_string(),
                        why: miss.why.clone(),
                        refused: miss.refused,
                    });
                }
                None => {
                    return Err(SandboxError::Remote {
                        file: file.to_string(),
                        field: n.field,
                        entry: entry.to_string(),
                    });
                }
            }
        }
        let p = resolve(tree, dir, entry).map_err(|why| SandboxError::Leaves {
            file: file.to_string(),
            field: n.field,
            entry: entry.to_string(),
            why,
        })?;
        named.insert(p.clone());
        if n.may_be_dir && tree.is_dir(&p) {
            dirs.push(p);
        }
    }
    Ok(dirs)
}

/// Checks every kustomization a kustomize unit reaches from `start`, and the fields gpuledger lays
/// over it (`overlay`, written into a wrapper kustomization in `wrap_dir` at the root), before
/// kustomize runs. A kustomization that cannot be read as YAML is refused: a path it names could
/// not be checked. Returns the directories of the kustomizations it read (the unit's build), in
/// the order it reached them, for the render step to inflate their `helmCharts`.
pub fn kustomize(
    tree: &Tree,
    start: &str,
    overlay: &Map<String, Value>,
    wrap_dir: &str,
) -> Result<Vec<String>, SandboxError> {
    kustomize_reads(tree, start, overlay, wrap_dir).map(|r| r.built)
}

/// What a kustomize unit reads, as [`kustomize_reads`] finds it.
#[derive(Debug, Clone, Default)]
pub struct Reads {
    /// The directories of the kustomizations it builds, in the order they were reached.
    pub built: Vec<String>,
    /// Every path (file or directory) the kustomizations and the overlay name, as tree paths.
    pub named: BTreeSet<String>,
    /// Every top-level field any of its kustomizations (or the overlay) sets.
    pub fields: BTreeSet<String>,
}

/// [`kustomize`], and every path (file or directory) the kustomizations and the overlay name, as
/// tree paths: with the directories built, what a kustomize unit can read (the render cache keys
/// on their contents, and batching keeps units that read the same paths apart).
pub fn kustomize_reads(
    tree: &Tree,
    start: &str,
    overlay: &Map<String, Value>,
    wrap_dir: &str,
) -> Result<Reads, SandboxError> {
    let mut named = BTreeSet::new();
    let mut fields: BTreeSet<String> = overlay.keys().cloned().collect();
    let mut todo = check_one(
        tree,
        wrap_dir,
        "the app's kustomize options",
        overlay,
        &mut named,
    )?;
    todo.push(start.to_string());
    let mut seen = BTreeSet::new();
    let mut built = Vec::new();
    while let Some(dir) = todo.pop() {
        if !seen.insert(dir.clone()) {
            continue;
        }
        for name in KUSTOMIZATION_FILES {
            let file = join(&dir, name);
            if !tree.exists(&file) {
                continue;
            }
            let bytes = tree.read(&file)?;
            let text = String::from_utf8_lossy(bytes);
            let v: Value = serde_saphyr::from_str(&text).map_err(|e| SandboxError::Unparsable {
                file: file.clone(),
                message: e.to_string(),
            })?;
            let k = match v {
                Value::Object(k) => k,
                Value::Null => Map::new(),
                _ => return Err(SandboxError::NotMapping { file }),
            };
            todo.extend(check_one(tree, &dir, &file, &k, &mut named)?);
            fields.extend(k.keys().cloned());
            if built.last() != Some(&dir) {
                built.push(dir.clone());
            }
        }
    }
    Ok(Reads {
        built,
        named,
        fields,
    })
}

/// Checks a helm unit before helm runs: the chart directory, its `file://` dependencies, its values
/// files and `--set-file` files stay inside the repository.
pub fn helm(tree: &Tree, chart: &str, a: &HelmArgs) -> Result<(), SandboxError> {
    let chart_dir = resolve(tree, "", chart).map_err(|why| SandboxError::Chart {
        chart: chart.to_string(),
        why,
    })?;
    let chart_file = join(&chart_dir, "Chart.yaml");
    if let Ok(bytes) = tree.read(&chart_file)
        && let Ok(Value::Object(c)) =
            serde_saphyr::from_str::<Value>(&String::from_utf8_lossy(bytes))
    {
        let deps = c.get("dependencies").and_then(Value::as_array);
        for d in deps.into_iter().flatten() {
            let Some(local) = d
                .get("repository")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix("file://"))
            else {
                continue;
            };
            resolve(tree, &chart_dir, local).map_err(|why| SandboxError::Dependency {
                chart_file: chart_file.clone(),
                entry: local.to_string(),
                why,
            })?;
        }
    }
    helm_files(tree, a)
}

/// Checks the values files and `--set-file` files of a helm unit (a fetched chart's own files
/// are its own, and are not the repository's to check).
pub fn helm_files(tree: &Tree, a: &HelmArgs) -> Result<(), SandboxError> {
    for f in a.values_files.iter().filter(|f| !f.starts_with(CHART_FILE)) {
        resolve(tree, "", f).map_err(|why| SandboxError::ValuesFile {
            file: f.clone(),
            why,
        })?;
    }
    for (name, f) in a
        .set_file
        .iter()
        .filter(|(_, f)| !f.starts_with(CHART_FILE))
    {
        resolve(tree, "", f).map_err(|why| SandboxError::FileParameter {
            name: name.clone(),
            file: f.clone(),
            why,
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, Entry)]) -> Tree {
        Tree {
            label: "test".into(),
            root: "/nonexistent".into(),
            files: files
                .iter()
                .map(|(p, e)| (p.to_string(), e.clone()))
                .collect(),
            remotes: Vec::new(),
            remote_entries: Default::default(),
            mounts: Default::default(),
        }
    }

    #[test]
    fn paths_resolve_through_the_trees_symlinks() {
        let link = |t: &str| Entry::Symlink(t.into());
        let t = tree(&[
            ("base/d.yaml", Entry::File(b"x".to_vec())),
            ("apps/x/base", link("../../base")),
            ("apps/x/out", link("../../../etc")),
            ("apps/x/abs", link("/etc")),
            ("apps/x/loop", link("loop")),
        ]);
        assert_eq!(
            resolve(&t, "apps/x", "base/d.yaml").as_deref(),
            Ok("base/d.yaml")
        );
        assert_eq!(resolve(&t, "apps/x", "../../base").as_deref(), Ok("base"));
        assert_eq!(resolve(&t, "apps/x", "../../../x"), Err(Leaves::Outside));
        assert_eq!(resolve(&t, "apps/x", "/etc/passwd"), Err(Leaves::Outside));
        assert!(matches!(
            resolve(&t, "apps/x", "out/passwd"),
            Err(Leaves::Symlink { .. })
        ));
        assert!(matches!(
            resolve(&t, "apps/x", "abs"),
            Err(Leaves::Symlink { .. })
        ));
        assert_eq!(resolve(&t, "apps/x", "loop"), Err(Leaves::TooManyLinks));
        // `..` after a symlinked directory climbs from the target, as the file system does.
        assert_eq!(resolve(&t, "apps/x", "base/../apps").as_deref(), Ok("apps"));
    }

    #[test]
    fn every_path_field_is_named() {
        let k: Value = serde_json::json!({
            "resources": ["a", "https://x/y"], "bases": ["b"], "components": ["c"],
            "crds": ["d"], "configurations": ["e"], "patchesStrategicMerge": ["f", "kind: X\nmetadata: {}\n"],
            "transformers": ["g"], "generators": ["h"], "validators": ["i"],
            "patches": [{"path": "j"}, {"patch": "inline"}], "patchesJson6902": [{"path": "k"}],
            "replacements": [{"path": "l"}, {"source": {}}],
            "configMapGenerator": [{"files": ["key=m", "n"], "envs": ["o"], "env": "p"}],
            "secretGenerator": [{"files": ["q"]}],
            "helmCharts": [{"valuesFile": "r", "additionalValuesFiles": ["s"]}],
            "helmGlobals": {"chartHome": "t", "configHome": "u"}, "openapi": {"path": "v"},
            "helmChartInflationGenerator": [{"values": "s2", "chartHome": "s3"}],
        });
        let Value::Object(k) = k else { unreachable!() };
        let got: Vec<String> = named_paths(&k).into_iter().map(|n| n.entry).collect();
        let want: Vec<String> = "a https://x/y b c d e f g h i j k l m n o p q r s s2 s3 t u v"
            .split(' ')
            .map(str::to_string)
            .collect();
        assert_eq!(got, want);
    }
}
