//! The Kubeflow Trainer runtimes of the input: a TrainJob's shape is its runtime's.

use std::collections::HashMap;

use crate::k8s::object::Object;

/// The Kubeflow Trainer runtimes of the input, which TrainJobs reference for their shape.
pub(super) struct Runtimes<'a> {
    by_key: HashMap<(&'a str, &'a str, &'a str), &'a Object>,
}

impl<'a> Runtimes<'a> {
    pub(super) fn new(objects: &'a [Object]) -> Runtimes<'a> {
        let by_key = objects
            .iter()
            .filter(|o| o.group() == "trainer.kubeflow.org")
            .filter(|o| {
                matches!(
                    o.kind.as_str(),
                    "TrainingRuntime" | "ClusterTrainingRuntime"
                )
            })
            .map(|o| {
                // A ClusterTrainingRuntime is cluster-scoped, but kustomize's `namespace:` sets one
                // on kinds it does not know: it is found by name alone.
                let ns = if o.kind == "ClusterTrainingRuntime" {
                    ""
                } else {
                    o.namespace()
                };
                ((o.kind.as_str(), ns, o.meta.name.as_str()), o)
            })
            .collect();
        Runtimes { by_key }
    }

    pub(super) fn find(&self, kind: &str, ns: &str, name: &str) -> Option<&'a Object> {
        let ns = if kind == "ClusterTrainingRuntime" {
            ""
        } else {
            ns
        };
        self.by_key.get(&(kind, ns, name)).copied()
    }
}
