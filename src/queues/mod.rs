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
mod selector;

pub use kai::{POD_GROUP_ANNOTATION, is_leaf as is_kai_leaf};
pub use model::*;
pub use selector::*;

use crate::k8s::object::{Kind, Object};

impl Admission {
    /// The admission objects of `objects`, read once.
    pub fn read(objects: &[Object]) -> Admission {
        let mut a = Admission::default();
        // A fleet's Workloads are by the hundred thousand: room for them once.
        let workloads = objects
            .iter()
            .filter(|o| o.typed_kind() == Kind::KueueWorkload)
            .count();
        a.workloads.reserve_exact(workloads);
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
                Kind::Namespace => {
                    a.namespaces
                        .get_or_insert_default()
                        .insert(o.meta.name.clone(), o.meta.labels.clone());
                }
                _ => {}
            }
        }
        a.validate();
        a
    }

    /// Sorts what was read and checks what each object names against the whole (a LocalQueue's
    /// ClusterQueue, a queue's flavors, an admission's flavor, cohort and KAI parents), anew: the
    /// live admission with Git's queues laid over it is checked as one.
    pub fn validate(&mut self) {
        self.cluster_queues.sort_by(|x, y| x.name.cmp(&y.name));
        self.cohorts.sort_by(|x, y| x.name.cmp(&y.name));
        self.flavors.sort_by(|x, y| x.name.cmp(&y.name));
        self.kai_queues.sort_by(|x, y| x.name.cmp(&y.name));
        self.local_queues
            .sort_by(|x, y| (&x.namespace, &x.name).cmp(&(&y.namespace, &y.name)));
        self.reference_problems.clear();
        for q in &mut self.cluster_queues {
            q.reference_problems.clear();
            q.inactive = None;
        }
        for c in &mut self.cohorts {
            c.reference_problems.clear();
        }
        for q in &mut self.kai_queues {
            q.reference_problems.clear();
        }
        kueue::check_references(self);
        kai::check_tree(self);
    }

    /// Every problem of what was read: the queues', the cohorts' and the rest.
    pub fn all_problems(&self) -> impl Iterator<Item = &Problem> {
        self.cluster_queues
            .iter()
            .flat_map(ClusterQueue::all_problems)
            .chain(
                self.cohorts
                    .iter()
                    .flat_map(|c| c.problems.iter().chain(&c.reference_problems)),
            )
            .chain(self.kai_queues.iter().flat_map(KaiQueue::all_problems))
            .chain(&self.problems)
            .chain(&self.reference_problems)
    }
}

impl Admission {
    /// The queues after a change syncs: the live admission with the queue objects a side of Git
    /// declares laid over it — a queue, cohort, LocalQueue or flavor Git declares has Git's spec
    /// (its quota, cohort, policies) and keeps what the cluster says it holds (its status); one
    /// Git does not declare stays as it is live.
    pub fn with_declared(&self, declared: &[Object]) -> Admission {
        let d = Admission::read(declared);
        let mut out = self.clone();
        for q in d.cluster_queues {
            match out.cluster_queues.iter_mut().find(|x| x.name == q.name) {
                Some(live) => {
                    *live = ClusterQueue {
                        usage: live.usage.take(),
                        reserved: live.reserved.take(),
                        pending_workloads: live.pending_workloads,
                        ..q
                    }
                }
                None => out.cluster_queues.push(q),
            }
        }
        for c in d.cohorts {
            out.cohorts.retain(|x| x.name != c.name);
            out.cohorts.push(c);
        }
        for l in d.local_queues {
            out.local_queues
                .retain(|x| (&x.namespace, &x.name) != (&l.namespace, &l.name));
            out.local_queues.push(l);
        }
        for f in d.flavors {
            out.flavors.retain(|x| x.name != f.name);
            out.flavors.push(f);
        }
        for q in d.kai_queues {
            match out.kai_queues.iter_mut().find(|x| x.name == q.name) {
                Some(live) => {
                    *live = KaiQueue {
                        allocated: live.allocated,
                        ..q
                    }
                }
                None => out.kai_queues.push(q),
            }
        }
        // A Namespace Git declares has Git's labels once synced.
        if let Some(declared) = d.namespaces {
            out.namespaces.get_or_insert_default().extend(declared);
        }
        out.problems.extend(d.problems);
        out.validate();
        out
    }
}

/// An object that defines admission (a queue, a cohort, a flavor), not what waits in it.
pub fn is_queue_object(o: &Object) -> bool {
    matches!(
        o.typed_kind(),
        Kind::ClusterQueue
            | Kind::Cohort
            | Kind::LocalQueue
            | Kind::ResourceFlavor
            | Kind::KaiQueue
    )
}

#[cfg(test)]
mod tests;
