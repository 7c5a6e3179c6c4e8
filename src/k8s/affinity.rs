//! Where a pod may run, as far as GPUs go: its required node affinity (the lean types), and the
//! GPU models its node selector and affinity name on GFD's `nvidia.com/gpu.product` label.

use std::collections::BTreeSet;

use serde::Deserialize;

use super::exact::exact;
use super::text::LabelMap;

/// The GPU models a pod with `node_selector` and `affinity` may run on; `None` when they name
/// none (any model).
pub fn gpu_models(
    node_selector: &LabelMap,
    affinity: Option<&Affinity>,
) -> Option<BTreeSet<String>> {
    {
        let selector = node_selector
            .get(super::gpus::GPU_PRODUCT_LABEL)
            .map(|m| BTreeSet::from([m.as_str().to_string()]));
        let terms = affinity
            .and_then(|a| a.node_affinity.as_ref())
            .and_then(|n| {
                n.required_during_scheduling_ignored_during_execution
                    .as_ref()
            })
            .map(|s| s.node_selector_terms.as_slice())
            .unwrap_or_default();
        // Each term: the models its `In` requirements on the label leave (ANDed), or any.
        let mut affinity: Option<BTreeSet<String>> = None;
        for t in terms {
            let mut term: Option<BTreeSet<String>> = None;
            for r in t
                .match_expressions
                .iter()
                .filter(|r| r.key == super::gpus::GPU_PRODUCT_LABEL && r.operator == "In")
            {
                let values: BTreeSet<String> = r.values.iter().cloned().collect();
                term = Some(match term {
                    Some(t) => t.intersection(&values).cloned().collect(),
                    None => values,
                });
            }
            // A term that admits any model makes the whole selector admit any.
            let Some(term) = term else {
                affinity = None;
                break;
            };
            affinity.get_or_insert_with(BTreeSet::new).extend(term);
        }
        match (selector, affinity) {
            (Some(s), Some(a)) => Some(s.intersection(&a).cloned().collect()),
            (s, a) => s.or(a),
        }
    }
}

/// `spec.affinity` of a pod (`core/v1/types.go` `Affinity`): its node affinity.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Affinity {
    pub node_affinity: Option<NodeAffinity>,
}

/// `NodeAffinity`: the scheduling requirement (the preferred terms are only weights).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct NodeAffinity {
    pub required_during_scheduling_ignored_during_execution: Option<NodeSelector>,
}

/// `NodeSelector`: its terms are ORed (`core/v1/types.go`: "The terms are ORed.").
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct NodeSelector {
    #[serde(deserialize_with = "exact")]
    pub node_selector_terms: Vec<NodeSelectorTerm>,
}

/// `NodeSelectorTerm`: its requirements are ANDed.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct NodeSelectorTerm {
    #[serde(deserialize_with = "exact")]
    pub match_expressions: Vec<NodeSelectorRequirement>,
}

/// `NodeSelectorRequirement`: `key`, `operator` (`In`, `NotIn`, `Exists`, `DoesNotExist`, `Gt`,
/// `Lt`) and `values`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct NodeSelectorRequirement {
    pub key: String,
    pub operator: String,
    #[serde(deserialize_with = "exact")]
    pub values: Vec<String>,
}
