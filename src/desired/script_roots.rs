//! Roots applied by a script. A platform repository often keeps its Argo CD Applications and
//! ApplicationSets in a kustomize *base* with placeholder sources (`path: patch-me-see-overlays`)
//! and sets the real ones in *overlays*, one per environment; a bootstrap script applies one of
//! them (`kubectl apply -k bootstrap/overlays/<env>`). No file of the repository says which, so
//! the base's apps are found as roots with their placeholders. This names the overlays that could
//! be the root — kustomize directories no other kustomization includes, not components, whose
//! resources lead to that base — and the line of `.gpuledger.yaml` that picks one. It never
//! guesses which one the cluster applies.

use std::collections::{BTreeMap, BTreeSet};

use super::kustomization::{is_component, kustomization_entries};
use super::tree::{Tree, join, normalize, under};

/// How many candidate roots the line names before "and N more".
const SHOWN: usize = 8;

/// The one line that names the candidate roots, when root apps are defined in a kustomize base
/// that other kustomizations include; `None` otherwise.
pub fn candidates(
    tree: &Tree,
    kustomize_dirs: &BTreeSet<String>,
    root_app_files: &[&str],
) -> Option<String> {
    // Each kustomization's directly included kustomizations.
    let includes: BTreeMap<&str, BTreeSet<String>> = kustomize_dirs
        .iter()
        .map(|dir| {
            let inc = kustomization_entries(tree, dir)
                .into_iter()
                .filter_map(|e| normalize(&join(dir, &e)))
                .filter(|p| kustomize_dirs.contains(p))
                .collect();
            (dir.as_str(), inc)
        })
        .collect();
    let included: BTreeSet<&str> = includes.values().flatten().map(String::as_str).collect();
    // The bases that hold root apps: included by another kustomization.
    let bases: BTreeSet<&str> = kustomize_dirs
        .iter()
        .map(String::as_str)
        .filter(|k| included.contains(k))
        .filter(|k| root_app_files.iter().any(|f| under(f, k)))
        .collect();
    if bases.is_empty() {
        return None;
    }
    let leads_to_base = |top: &str| {
        let mut seen = BTreeSet::new();
        let mut stack = vec![top.to_string()];
        while let Some(d) = stack.pop() {
            if bases.contains(d.as_str()) {
                return true;
            }
            if seen.insert(d.clone()) {
                stack.extend(includes.get(d.as_str()).into_iter().flatten().cloned());
            }
        }
        false
    };
    let tops: Vec<&str> = kustomize_dirs
        .iter()
        .map(String::as_str)
        .filter(|d| !included.contains(d) && !is_component(tree, d))
        .filter(|d| leads_to_base(d))
        .collect();
    let first = tops.first()?;
    let mut named: Vec<String> = tops.iter().take(SHOWN).map(|t| t.to_string()).collect();
    if tops.len() > SHOWN {
        named.push(format!("and {} more", tops.len() - SHOWN));
    }
    let what = if bases.len() == 1 {
        "a kustomize base"
    } else {
        "kustomize bases"
    };
    Some(format!(
        "the apps in {} are {what} that overlays patch, and no app applies those overlays (a \
         script does, e.g. kubectl apply -k): name the root this cluster applies in \
         .gpuledger.yaml, render: {{roots: [{first}]}} — the candidates: {}",
        bases.into_iter().collect::<Vec<_>>().join(", "),
        named.join(", ")
    ))
}
