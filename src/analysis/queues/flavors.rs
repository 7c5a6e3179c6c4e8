//! Which of a queue's flavors a pod set may use: Kueue's flavor selector, on node labels.

use crate::queues::{Admission, ClusterQueue, PodSetGpus, ResourceFlavor};

/// Whether `flavor`'s node labels allow the pods of `ps` (kueue `flavorassigner.go`
/// `flavorSelector`: only the keys the flavor names are compared; a required node affinity is
/// compared on the GPU model label).
pub fn allows(flavor: &ResourceFlavor, ps: &PodSetGpus) -> bool {
    let selector_ok = flavor
        .node_labels
        .iter()
        .all(|(k, v)| ps.node_selector.get(k).is_none_or(|s| s == v));
    let model_ok = match (flavor.model(), &ps.models) {
        (Some(m), Some(allowed)) => allowed.contains(m),
        _ => true,
    };
    selector_ok && model_ok
}

/// The first GPU flavor of `cq` (in its order) that the pods of `ps` allow, with its model.
pub fn first_flavor<'a>(
    a: &'a Admission,
    cq: &'a ClusterQueue,
    ps: &PodSetGpus,
) -> Option<(&'a str, Option<&'a str>)> {
    cq.flavors.iter().find_map(|f| {
        let rf = a.flavor(&f.flavor);
        let ok = rf.is_none_or(|rf| allows(rf, ps));
        ok.then(|| (f.flavor.as_str(), rf.and_then(ResourceFlavor::model)))
    })
}
