//! Admission as the fleet's batch schedulers define it, read into plain values: Kueue's
//! ClusterQueues, Cohorts, LocalQueues, ResourceFlavors and Workloads, and KAI Scheduler's Queues
//! and PodGroups.
//!
//! In a fleet whose batch work goes through an admission queue, a job waits for its queue's quota
//! before it has a pod (Kueue keeps it suspended), or its pods wait behind a scheduling gate. What
//! the queues hold is therefore a tier of its own — queued, beside pending — and a quota is not a
//! node. This module only reads: objects in, an [`Admission`] out, with every figure that does
//! not parse named by object and field ([`Problem`]) instead of read as 0. The analyses
//! (`crate::analysis::queues`) compute the queue rows, the queued tier, the diagnosis and a pull
//! request's verdict from it.
//!
//! Field names and defaults follow Kueue `apis/kueue/v1beta2/*_types.go` (and v1beta1, which names
//! the cohort `spec.cohort`) and KAI `pkg/apis/scheduling/v2/queue_types.go` and
//! `v2alpha2/podgroup_types.go`, at the commits `shared/corpus/queues/PROVENANCE.md` names.

mod kai;
mod kueue;
mod model;

pub use kai::{POD_GROUP_ANNOTATION, is_leaf as is_kai_leaf};
pub use model::*;

use crate::k8s::object::{Kind, Object};

impl Admission {
    /// The admission objects of `objects`, read once.
    pub fn read(objects: &[Object]) -> Admission {
        let mut a = Admission::default();
        for (i, o) in objects.iter().enumerate() {
            match o.typed_kind() {
                Kind::ClusterQueue => a.cluster_queues.push(kueue::cluster_queue(o)),
                Kind::Cohort => a.cohorts.push(kueue::cohort(o)),
                Kind::LocalQueue => a
                    .local_queues
                    .extend(kueue::local_queue(o, &mut a.problems)),
                Kind::ResourceFlavor => a.flavors.push(kueue::flavor(o)),
                Kind::KueueWorkload => a.workloads.extend(kueue::workload(i, o)),
                Kind::KaiQueue => a.kai_queues.push(kai::queue(o)),
                Kind::PodGroup => a.pod_groups.extend(kai::pod_group(i, o)),
                _ => {}
            }
        }
        a.cluster_queues.sort_by(|x, y| x.name.cmp(&y.name));
        a.cohorts.sort_by(|x, y| x.name.cmp(&y.name));
        a.flavors.sort_by(|x, y| x.name.cmp(&y.name));
        a.kai_queues.sort_by(|x, y| x.name.cmp(&y.name));
        a.local_queues
            .sort_by(|x, y| (&x.namespace, &x.name).cmp(&(&y.namespace, &y.name)));
        kueue::check_references(&mut a);
        kai::check_tree(&mut a);
        a
    }
}

#[cfg(test)]
mod tests;
