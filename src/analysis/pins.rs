//! Which GPU models a workload says it runs on: the node selector or the required node affinity of
//! its pod templates on the GFD label `nvidia.com/gpu.product` ([`super::nodes::GPU_PRODUCT_LABEL`]).
//!
//! A pod's `nodeSelector` entry names one model; its required node affinity names the models of
//! the `In` requirements on the label, one per term, and its terms are ORed while the requirements
//! of a term are ANDed (`NodeSelector` and `NodeSelectorTerm` in Kubernetes'
//! `staging/src/k8s.io/api/core/v1/types.go`): a term without such a requirement admits any model.
//! Both must hold when both are set. A workload with several pod templates (a LeaderWorkerSet's
//! leader and workers) may run on the models any of them names, and on any model when one of them
//! names none. No models means any: the workload is judged against the whole fleet.
//! The kinds gpuledger reads pod templates of are pinned; a Dynamo graph or an InferenceService
//! (their pods' placement lives in CRD fields) is judged against the whole fleet.

use std::collections::BTreeSet;

use crate::k8s::object::Object;
use crate::k8s::types::PodSpec;

/// The GPU models one pod spec may run on; `None` when it names none (any model).
pub fn of_spec(spec: &PodSpec) -> Option<BTreeSet<String>> {
    spec.gpu_models()
}

/// The GPU models a workload's root object may run on, sorted; empty when it names none.
pub fn of_object(o: &Object) -> Vec<String> {
    let mut models = BTreeSet::new();
    for (_, spec) in o.pod_templates() {
        match of_spec(spec) {
            Some(m) => models.extend(m),
            None => return Vec::new(),
        }
    }
    models.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(spec: &str) -> Object {
        let y = format!(
            "apiVersion: v1\nkind: Pod\nmetadata: {{name: p, namespace: ml}}\nspec:\n{spec}"
        );
        crate::k8s::read::read_str(&y, "t.yaml").unwrap().remove(0)
    }

    #[test]
    fn selector_and_affinity_name_the_models() {
        let sel = pod("  nodeSelector: {nvidia.com/gpu.product: H100}\n");
        assert_eq!(of_object(&sel), ["H100"]);
        let aff = "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n        nodeSelectorTerms:\n";
        let two = pod(&format!(
            "{aff}        - matchExpressions: [{{key: nvidia.com/gpu.product, operator: In, values: [H100, A100]}}]\n"
        ));
        assert_eq!(of_object(&two), ["A100", "H100"]);
        // A second term without the label admits any model.
        let any = pod(&format!(
            "{aff}        - matchExpressions: [{{key: nvidia.com/gpu.product, operator: In, values: [H100]}}]\n        - matchExpressions: [{{key: pool, operator: In, values: [a]}}]\n"
        ));
        assert!(of_object(&any).is_empty());
        // NotIn names no model to judge against.
        let not_in = pod(&format!(
            "{aff}        - matchExpressions: [{{key: nvidia.com/gpu.product, operator: NotIn, values: [L4]}}]\n"
        ));
        assert!(of_object(&not_in).is_empty());
        assert!(of_object(&pod("  nodeSelector: {pool: a}\n")).is_empty());
    }
}
