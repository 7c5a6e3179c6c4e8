//! What a kustomization file says, read from the tree without running kustomize: whether a
//! directory is a kustomization (or a `kind: Component`), the entries it builds, the files it
//! patches with, and the charts it inflates through `helmCharts`.
//!
//! Discovery uses this to tell apps from the fragments of other apps, following uses it to know
//! which files an app applies, and the render step to know which directories a kustomize unit
//! builds. A kustomization that does not parse is passed over here: kustomize reports it when the
//! unit renders.

use serde_json::Value;

use super::tree::{Tree, join, normalize};

/// The names kustomize reads a kustomization from, in its order.
pub const KUSTOMIZATION_FILES: [&str; 3] =
    ["kustomization.yaml", "kustomization.yml", "Kustomization"];

pub fn is_kustomize_dir(tree: &Tree, dir: &str) -> bool {
    KUSTOMIZATION_FILES
        .iter()
        .any(|f| tree.exists(&join(dir, f)))
}

/// The kustomization files in `dir`, parsed (kustomize reads the first it finds; a file that does
/// not parse is left for kustomize to report).
fn kustomizations(tree: &Tree, dir: &str) -> Vec<Value> {
    KUSTOMIZATION_FILES
        .iter()
        .filter_map(|f| tree.read(&join(dir, f)).ok())
        .filter_map(|bytes| serde_saphyr::from_str::<Value>(&String::from_utf8_lossy(bytes)).ok())
        .collect()
}

/// The strings of `v[key]` when it is a list (entries that are not strings are skipped).
fn strings<'a>(v: &'a Value, key: &str) -> impl Iterator<Item = &'a str> {
    v.get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}

/// Whether the kustomization in `dir` is a `kind: Component` (kustomize's reusable fragment): it is
/// built only as a component of another kustomization, never on its own.
pub fn is_component(tree: &Tree, dir: &str) -> bool {
    kustomizations(tree, dir)
        .iter()
        .any(|v| v.get("kind").and_then(Value::as_str) == Some("Component"))
}

/// Every file the kustomization in `dir` reads besides its directories, as written: patch files
/// (`patches[].path`, `patchesStrategicMerge`, `patchesJson6902[].path`) and the entries of
/// `resources`/`bases` (files or directories). A file listed here is part of that kustomization's
/// output, or a fragment of it — never an app of its own.
pub fn kustomization_files(tree: &Tree, dir: &str) -> Vec<String> {
    let mut out = Vec::new();
    for v in kustomizations(tree, dir) {
        out.extend(entries(&v));
    }
    out.extend(patch_files(tree, dir));
    out
}

/// The patch files of the kustomization in `dir`, as written: `patches[].path`,
/// `patchesStrategicMerge` and `patchesJson6902[].path` (kustomize
/// `api/types/kustomization.go`). Each is applied to the objects it targets, never an object of
/// its own: an Application or HelmRelease in a patch file is no app.
pub fn patch_files(tree: &Tree, dir: &str) -> Vec<String> {
    let mut out = Vec::new();
    for v in kustomizations(tree, dir) {
        for key in ["patches", "patchesJson6902"] {
            out.extend(
                v.get(key)
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|p| p.get("path").and_then(Value::as_str))
                    .map(str::to_string),
            );
        }
        // An inline strategic-merge patch is YAML text, not a path.
        out.extend(
            strings(&v, "patchesStrategicMerge")
                .filter(|p| !p.contains('\n'))
                .map(str::to_string),
        );
    }
    out
}

/// The chart directories the kustomization in `dir` inflates through `helmCharts` (each at
/// `<helmGlobals.chartHome or "charts">/<name>` below `dir`, as kustomize's
/// HelmChartInflationGenerator finds it), as tree paths. Such a chart is part of that
/// kustomization's output, rendered with its values — not an app of its own with default values.
pub fn inflated_chart_dirs(tree: &Tree, dir: &str) -> Vec<String> {
    let mut out = Vec::new();
    for v in kustomizations(tree, dir) {
        let list = |key: &str| v.get(key).and_then(Value::as_array).into_iter().flatten();
        // The deprecated `helmChartInflationGenerator` (kustomize converts it to `helmCharts`):
        // its last non-empty `chartHome` is the home unless `helmGlobals` is set.
        let old_home = list("helmChartInflationGenerator")
            .filter_map(|c| c.get("chartHome").and_then(Value::as_str))
            .rfind(|h| !h.is_empty());
        let home = match v.get("helmGlobals") {
            Some(g) if !g.is_null() => g.get("chartHome").and_then(Value::as_str),
            _ => old_home,
        }
        .filter(|h| !h.is_empty())
        .unwrap_or("charts");
        let names = list("helmCharts")
            .filter_map(|c| c.get("name").and_then(Value::as_str))
            .chain(
                list("helmChartInflationGenerator")
                    .filter_map(|c| c.get("chartName").and_then(Value::as_str)),
            );
        out.extend(
            names
                .filter(|n| !n.is_empty())
                .filter_map(|n| normalize(&join(dir, &join(home, n)))),
        );
    }
    out
}

/// A kustomize entry that names something on the network rather than a local path: a URL, an
/// SCP-like git address, or a scheme-less `github.com/…` repository.
pub fn is_remote(entry: &str) -> bool {
    let e = entry.trim();
    e.contains("://")
        || e.starts_with("git@")
        || e.contains("?ref=")
        || e.starts_with("github.com/")
}

/// The `resources`, `bases` and `components` entries of the kustomization in `dir`, as written.
pub fn kustomization_entries(tree: &Tree, dir: &str) -> Vec<String> {
    kustomizations(tree, dir).iter().flat_map(entries).collect()
}

fn entries(v: &Value) -> Vec<String> {
    ["resources", "bases", "components"]
        .into_iter()
        .flat_map(|key| strings(v, key).map(str::to_string))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::desired::tree::Entry;

    #[test]
    fn charts_a_kustomization_inflates() {
        let t = |k: &str| Tree {
            label: "test".into(),
            root: "/nonexistent".into(),
            files: [(
                "apps/llm/kustomization.yaml".to_string(),
                Entry::File(k.as_bytes().to_vec()),
            )]
            .into(),
            remotes: Vec::new(),
            remote_entries: Default::default(),
            mounts: Default::default(),
        };
        let k = "helmCharts:\n- name: llm\n- name: ''\n- repo: x\n- name: ../../vendor/ray\n";
        assert_eq!(
            inflated_chart_dirs(&t(k), "apps/llm"),
            ["apps/llm/charts/llm", "apps/vendor/ray"]
        );
        let k = "helmGlobals: {chartHome: ../../shared}\nhelmCharts:\n- name: llm\n";
        assert_eq!(inflated_chart_dirs(&t(k), "apps/llm"), ["shared/llm"]);
        assert!(inflated_chart_dirs(&t("resources: [a.yaml]\n"), "apps/llm").is_empty());
        let k = "helmChartInflationGenerator:\n- {chartName: old, chartHome: vendor}\n";
        assert_eq!(
            inflated_chart_dirs(&t(k), "apps/llm"),
            ["apps/llm/vendor/old"]
        );
    }
}
