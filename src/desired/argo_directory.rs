//! Argo CD directory sources: which files a `directory` source renders (`recurse`, `include`,
//! `exclude`), and why one holding jsonnet is not rendered.

use serde::Deserialize;
use serde_json::Value;

use super::source::{SkipReason, Why};
use super::tree::Tree;
use crate::util::glob::Glob;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ArgoDirectory {
    pub recurse: bool,
    pub include: Option<String>,
    pub exclude: Option<String>,
    /// jsonnet options (external variables, top-level arguments, library paths): they only apply
    /// to the `.jsonnet` files of the directory.
    pub jsonnet: Option<Value>,
}

/// An Argo CD directory `include`/`exclude`, compiled once per source. Empty means unset.
fn directory_glob(pat: &Option<String>) -> Result<Option<Glob>, SkipReason> {
    match pat.as_deref().filter(|p| !p.is_empty()) {
        None => Ok(None),
        Some(p) => Glob::crossing(p)
            .map(Some)
            .map_err(|e| SkipReason::new(Why::Refused, format!("directory pattern: {e}"))),
    }
}

/// Files an Argo CD directory source renders, as argo-cd `reposerver/repository/repository.go`
/// picks them (`getPotentiallyValidManifests`, formerly `findManifests`): files named `*.yaml`,
/// `*.yml`, `*.json` or `*.jsonnet` directly in the directory (below it too with `recurse`), whose
/// path relative to the directory is not matched by `exclude` and is matched by `include` when set.
/// A `.jsonnet` file among them is evaluated by Argo CD, which gpuledger does not do: the source is
/// then not rendered, with the reason (`.libsonnet` files are only imported by those).
pub fn directory_files(
    tree: &Tree,
    dir: &str,
    d: &ArgoDirectory,
) -> Result<Vec<String>, SkipReason> {
    let include = directory_glob(&d.include)?;
    let exclude = directory_glob(&d.exclude)?;
    let picked: Vec<&str> = tree
        .files_under(dir)
        .filter(|f| {
            let rel = f.strip_prefix(dir).unwrap_or(f).trim_start_matches('/');
            if !d.recurse && rel.contains('/') {
                return false;
            }
            let name = rel.rsplit('/').next().unwrap_or(rel);
            let manifest = [".yaml", ".yml", ".json", ".jsonnet"]
                .iter()
                .any(|e| name.ends_with(e));
            manifest
                && !exclude.as_ref().is_some_and(|g| g.is_match(rel))
                && include.as_ref().is_none_or(|g| g.is_match(rel))
        })
        .collect();
    let jsonnet: Vec<&str> = picked
        .iter()
        .copied()
        .filter(|f| f.ends_with(".jsonnet"))
        .collect();
    if let Some(first) = jsonnet.first() {
        let more = match jsonnet.len() {
            1 => String::new(),
            n => format!(" and {} more", n - 1),
        };
        return Err(SkipReason::new(
            Why::Unsupported,
            format!(
                "directory source with jsonnet: Argo CD evaluates {first}{more} with jsonnet; gpuledger does not evaluate jsonnet"
            ),
        ));
    }
    Ok(picked.into_iter().map(str::to_string).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A refused include/exclude pattern is an error on the source, not a filter that never matches.
    #[test]
    fn directory_patterns() {
        let d = ArgoDirectory {
            include: Some("{a,b}".repeat(12)),
            ..ArgoDirectory::default()
        };
        let e = directory_glob(&d.include).unwrap_err();
        assert!(e.is_error() && e.text.contains("refused"), "{e:?}");
    }
}
