//! A ClusterQueue's namespace selector: which namespaces may submit work to it. Kueue holds a
//! workload whose namespace its queue does not select (`Misconfigured`), so a pull request's job
//! there can never be admitted, and that namespace is not among the queue's tenants. Read from
//! `spec.namespaceSelector` as the API server's label selector reads it, matched against the
//! Namespaces' labels.

use crate::k8s::types::LabelMap;

/// A ClusterQueue's `spec.namespaceSelector`: whose workloads it admits. Unset is Kueue's
/// nothing selector — no namespace — and `{}` selects every namespace (kueue
/// `apis/kueue/v1beta2/clusterqueue_types.go`; a workload in a namespace it does not select is
/// held as `Misconfigured`: `pkg/workload/resources.go` `ValidateAdmissibility`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum NamespaceSelector {
    #[default]
    Nothing,
    Everything,
    /// `matchLabels` (each as `In` one value) and `matchExpressions`, all of which must hold.
    Match(Vec<Requirement>),
}

/// One term of a label selector (`metav1.LabelSelectorRequirement`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    pub key: String,
    pub op: SelectorOp,
    pub values: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SelectorOp {
    In,
    NotIn,
    Exists,
    DoesNotExist,
}

/// The label the API server gives every namespace: its own name.
pub const NAMESPACE_NAME_LABEL: &str = "kubernetes.io/metadata.name";

impl NamespaceSelector {
    /// Whether it selects namespace `name` with `labels` (as the API server labels a namespace:
    /// with [`NAMESPACE_NAME_LABEL`] too, added here when Git's Namespace lacks it).
    pub fn selects(&self, name: &str, labels: &LabelMap) -> bool {
        let value = |key: &str| {
            labels
                .get(key)
                .map(|v| v.as_str())
                .or_else(|| (key == NAMESPACE_NAME_LABEL).then_some(name))
        };
        match self {
            NamespaceSelector::Nothing => false,
            NamespaceSelector::Everything => true,
            NamespaceSelector::Match(terms) => terms.iter().all(|t| {
                let v = value(&t.key);
                match t.op {
                    SelectorOp::In => v.is_some_and(|v| t.values.iter().any(|x| x == v)),
                    SelectorOp::NotIn => v.is_none_or(|v| !t.values.iter().any(|x| x == v)),
                    SelectorOp::Exists => v.is_some(),
                    SelectorOp::DoesNotExist => v.is_none(),
                }
            }),
        }
    }
}

/// `spec.namespaceSelector` (`metav1.LabelSelectorAsSelector`: null selects nothing, `{}`
/// everything); a term that does not read is a problem of the queue, as the API server refuses it.
/// A term that does not read is `(field, why)` in `bad`.
pub(super) fn read(
    v: &serde_json::Value,
    bad: &mut Vec<(String, &'static str)>,
) -> NamespaceSelector {
    let Some(m) = v.as_object() else {
        return NamespaceSelector::Nothing;
    };
    let mut terms = Vec::new();
    let mut bad = |field: String, why: &'static str| bad.push((field, why));
    for (k, val) in m
        .get("matchLabels")
        .and_then(serde_json::Value::as_object)
        .into_iter()
        .flatten()
    {
        match val.as_str() {
            Some(s) => terms.push(Requirement {
                key: k.clone(),
                op: SelectorOp::In,
                values: vec![s.to_string()],
            }),
            None => bad(
                format!("spec.namespaceSelector.matchLabels.{k}"),
                "is not a string",
            ),
        }
    }
    let expressions = m
        .get("matchExpressions")
        .and_then(serde_json::Value::as_array);
    for (i, e) in expressions.into_iter().flatten().enumerate() {
        let field = format!("spec.namespaceSelector.matchExpressions[{i}]");
        let op = match e["operator"].as_str() {
            Some("In") => SelectorOp::In,
            Some("NotIn") => SelectorOp::NotIn,
            Some("Exists") => SelectorOp::Exists,
            Some("DoesNotExist") => SelectorOp::DoesNotExist,
            _ => {
                bad(
                    format!("{field}.operator"),
                    "is not In, NotIn, Exists or DoesNotExist",
                );
                continue;
            }
        };
        let Some(key) = e["key"].as_str() else {
            bad(format!("{field}.key"), "is missing");
            continue;
        };
        let values = e["values"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|x| x.as_str().map(str::to_string))
            .collect();
        terms.push(Requirement {
            key: key.to_string(),
            op,
            values,
        });
    }
    if terms.is_empty() {
        NamespaceSelector::Everything
    } else {
        NamespaceSelector::Match(terms)
    }
}
