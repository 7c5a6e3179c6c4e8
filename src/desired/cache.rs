//! The render cache: a unit whose inputs are byte-identical renders once per run.
//!
//! `check` renders the repository at its base and at its head, and most apps are the same at both:
//! rendering them twice costs a kustomize or helm process each for nothing. A unit's key is what
//! decides its output — how it is rendered (kind, path, overlay, helm options, namespace, Flux
//! substitutions) and the git blob id of every file it can read: every file under each
//! kustomization directory it builds and under each path those kustomizations and the app's
//! overlay name (bases, patches, generators' files, chart homes), or its chart directory, the
//! chart's `file://` dependencies, values files and `--set-file` files; the unit's own directory
//! always, and the repository's `.sourceignore` files and any `Chart.yaml` above it (which decide
//! what a generated kustomization lists). Whole directories are keyed rather than the files a
//! renderer opens, so a key may change when the output would not, never the reverse. A unit whose
//! reads cannot be told (a kustomization the sandbox refuses or cannot parse, a path that leaves the
//! repository) gets no key and is rendered every time. Plain YAML is parsed in process and never
//! cached. The cache lives for one run: it is keyed on contents, not on refs, so base and head
//! share it, and what it holds is the unit's objects before they are placed in its namespace.

use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;

use serde_json::Value;

use super::error::RenderError;
use super::sandbox;
use super::tree::{Entry, Tree, join};
use super::{How, Unit};
use crate::k8s::object::Object;

/// What decides a unit's output, as a git object id of its description.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Key(git2::Oid);

/// Rendered units by key, and a log of the units that were rendered rather than found.
#[derive(Default)]
pub struct RenderCache {
    done: Mutex<HashMap<Key, Result<Vec<Object>, RenderError>>>,
    rendered: Mutex<Vec<String>>,
    hits: Mutex<usize>,
}

impl RenderCache {
    pub fn new() -> RenderCache {
        RenderCache::default()
    }

    pub(crate) fn get(&self, key: &Key) -> Option<Result<Vec<Object>, RenderError>> {
        let found = self.done.lock().ok()?.get(key).cloned();
        if found.is_some()
            && let Ok(mut h) = self.hits.lock()
        {
            *h += 1;
        }
        found
    }

    pub(crate) fn put(&self, key: Key, result: &Result<Vec<Object>, RenderError>) {
        if let Ok(mut m) = self.done.lock() {
            m.insert(key, result.clone());
        }
    }

    /// Records that a unit ran its renderer (`kustomize apps/x`, `helm charts/y`).
    pub(crate) fn log(&self, what: String) {
        tracing::debug!(unit = %what, "rendered");
        if let Ok(mut r) = self.rendered.lock() {
            r.push(what);
        }
    }

    /// The units that ran a renderer, in the order they finished.
    pub fn rendered(&self) -> Vec<String> {
        self.rendered.lock().map(|r| r.clone()).unwrap_or_default()
    }

    /// How many renders the cache answered.
    pub fn hits(&self) -> usize {
        self.hits.lock().map(|h| *h).unwrap_or_default()
    }
}

/// What a rendered unit reads: every file of the repository it can open (as tree paths), the paths
/// its kustomizations name (with the directories they build), and the fields they set.
#[derive(Debug, Clone)]
pub struct Inputs {
    pub key: Key,
    pub files: Vec<String>,
    /// The unit's directory, the kustomization directories it builds and every path they (and the
    /// app's overlay) name; or the chart, its dependencies and values files.
    pub roots: BTreeSet<String>,
    /// Every top-level field of the unit's kustomizations and overlay (empty for helm).
    pub fields: BTreeSet<String>,
}

/// The unit's key, or `None` when what it reads cannot be told (then it is not cached).
pub fn key(tree: &Tree, unit: &Unit) -> Option<Key> {
    inputs(tree, unit).map(|i| i.key)
}

/// What the unit reads and its key, or `None` when that cannot be told (plain YAML, which is
/// parsed in process, or a unit the sandbox refuses).
pub fn inputs(tree: &Tree, unit: &Unit) -> Option<Inputs> {
    let mut roots: BTreeSet<String> = BTreeSet::new();
    let mut fields = BTreeSet::new();
    roots.insert(unit.path.clone());
    match &unit.how {
        How::Plain { .. } => return None,
        How::Kustomize { overlay, .. } => {
            let reads =
                sandbox::kustomize_reads(tree, &unit.path, overlay, ".gpuledger-wrap").ok()?;
            roots.extend(reads.built);
            roots.extend(reads.named);
            fields = reads.fields;
        }
        How::Helm(a) => {
            let chart = sandbox::resolve(tree, "", &unit.path).ok()?;
            let chart_file = join(&chart, "Chart.yaml");
            if let Ok(bytes) = tree.read(&chart_file) {
                let c: Value = serde_saphyr::from_str(&String::from_utf8_lossy(bytes)).ok()?;
                let deps = c.get("dependencies").and_then(Value::as_array);
                for d in deps.into_iter().flatten() {
                    if let Some(local) = d
                        .get("repository")
                        .and_then(Value::as_str)
                        .and_then(|r| r.strip_prefix("file://"))
                    {
                        roots.insert(sandbox::resolve(tree, &chart, local).ok()?);
                    }
                }
            }
            roots.insert(chart);
            for f in a.values_files.iter().chain(a.set_file.values()) {
                roots.insert(sandbox::resolve(tree, "", f).ok()?);
            }
        }
    }
    // What a generated kustomization lists depends on these beyond the unit's own directory.
    let mut files: BTreeSet<&str> = tree
        .files
        .keys()
        .map(String::as_str)
        .filter(|p| p.rsplit('/').next() == Some(".sourceignore"))
        .collect();
    let mut dir = unit.path.as_str();
    while !dir.is_empty() {
        dir = dir.rsplit_once('/').map_or("", |(parent, _)| parent);
        if let Some((k, _)) = tree.files.get_key_value(&join(dir, "Chart.yaml")) {
            files.insert(k.as_str());
        }
    }
    for r in &roots {
        if tree.is_dir(r) {
            files.extend(tree.files_under(r));
        }
        if let Some((k, _)) = tree.files.get_key_value(r.as_str()) {
            files.insert(k.as_str());
        }
    }
    let mut desc = format!(
        "{}\n{}\n{:?}\n{:?}\n{}\n{:?}\n{}\n",
        unit.app_kind,
        unit.path,
        unit.how,
        unit.namespace,
        unit.force_namespace,
        unit.substitute,
        unit.substitute_from_cluster
    );
    // A fetched chart and fetched dependencies are what their digests say.
    if let Some(c) = &unit.chart {
        desc.push_str(&format!("{c:?}\n"));
    }
    for r in unit.prepared.iter().flat_map(|p| &p.resolved) {
        desc.push_str(&format!(
            "{} {} {} {}\n",
            r.what, r.source, r.version, r.digest
        ));
    }
    for (name, _) in unit.prepared.iter().flat_map(|p| &p.deps) {
        desc.push_str(&format!("dependency {name}\n"));
    }
    for f in &files {
        desc.push_str(f);
        desc.push('\t');
        match tree.files.get(*f) {
            Some(Entry::File(b)) => desc.push_str(&blob(b)),
            Some(Entry::Symlink(t)) => {
                // A copy of its target is what the renderer sees.
                desc.push_str(&format!("-> {t} "));
                match tree.read(f) {
                    Ok(b) => desc.push_str(&blob(b)),
                    Err(e) => desc.push_str(&e.to_string()),
                }
            }
            Some(Entry::TooLarge(n)) => desc.push_str(&format!("too large {n}")),
            Some(Entry::LfsPointer { oid }) => desc.push_str(&format!("lfs pointer {oid}")),
            Some(Entry::Submodule { commit, .. }) => {
                desc.push_str(&format!("submodule not read {commit}"))
            }
            None => desc.push_str("missing"),
        }
        desc.push('\n');
    }
    Some(Inputs {
        key: Key(blob_id(desc.as_bytes())?),
        files: files.into_iter().map(str::to_string).collect(),
        roots,
        fields,
    })
}

fn blob_id(bytes: &[u8]) -> Option<git2::Oid> {
    git2::Oid::hash_object(git2::ObjectType::Blob, bytes).ok()
}

/// A file's git blob id, as `git hash-object` gives it.
fn blob(bytes: &[u8]) -> String {
    blob_id(bytes).map_or_else(|| format!("{} bytes", bytes.len()), |o| o.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> Tree {
        Tree {
            label: "test".into(),
            root: "/nonexistent".into(),
            files: files
                .iter()
                .map(|(p, c)| (p.to_string(), Entry::File(c.as_bytes().to_vec())))
                .collect(),
            remotes: Vec::new(),
            remote_entries: Default::default(),
            mounts: Default::default(),
        }
    }

    fn kustomize_unit(path: &str) -> Unit {
        let mut u = super::super::discover::plan_unit_for_tests();
        u.path = path.into();
        u.how = How::Kustomize {
            overlay: Default::default(),
            recurse_plain: false,
        };
        u
    }

    #[test]
    fn a_key_follows_what_the_unit_reads_and_nothing_else() {
        let base = [
            (
                "apps/a/kustomization.yaml",
                "resources: [d.yaml, ../../base]\n",
            ),
            ("apps/a/d.yaml", "kind: Deployment\n"),
            (
                "base/kustomization.yaml",
                "resources: [s.yaml]\npatches: [{path: ../p/x.yaml}]\n",
            ),
            ("base/s.yaml", "kind: Service\n"),
            ("p/x.yaml", "kind: Deployment\n"),
            ("apps/b/kustomization.yaml", "resources: [d.yaml]\n"),
            ("apps/b/d.yaml", "kind: Deployment\n"),
        ];
        let k = |files: &[(&str, &str)], path: &str| key(&tree(files), &kustomize_unit(path));
        let a = k(&base, "apps/a");
        assert!(a.is_some());
        // Another app's change leaves the key alone.
        let mut other = base;
        other[6].1 = "kind: StatefulSet\n";
        assert_eq!(k(&other, "apps/a"), a);
        assert_ne!(k(&other, "apps/b"), k(&base, "apps/b"));
        // A base, and a patch named from outside every built directory, change it.
        for i in [3, 4] {
            let mut changed = base;
            changed[i].1 = "kind: Changed\n";
            assert_ne!(k(&changed, "apps/a"), a, "{}", base[i].0);
        }
        // So do the unit's options.
        let mut u = kustomize_unit("apps/a");
        u.namespace = Some("x".into());
        assert_ne!(key(&tree(&base), &u), a);
        // A path out of the repository: not cached.
        let out = [("apps/a/kustomization.yaml", "resources: [../../../x]\n")];
        assert_eq!(k(&out, "apps/a"), None);
    }
}
