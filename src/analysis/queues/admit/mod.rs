//! Would the queue admit one more workload now? Kueue's scheduler for a single workload against
//! the live queues: the queue it lands in, its flavor, and a verdict — admits, borrows, preempts
//! (naming what it would evict), waits (and behind what), never, or unknown.
//!
//! Followed from Kueue at the commit of `shared/corpus/queues/PROVENANCE.md`:
//! - the flavor assigner, `pkg/scheduler/flavorassigner/flavorassigner.go`: a pod set's flavors in
//!   the queue's order; a flavor whose node labels its pods' selector contradicts is skipped
//!   (`NoMatchingFlavor`); more than the queue could ever reach there is `ExceedsMaxQuota`; within
//!   what is available it fits (borrowing when above the nominal quota); otherwise preemption is
//!   tried when the queue's nominal quota holds it or it may preempt while borrowing, else it waits
//!   (`WaitingForQuota`). `flavorFungibility` decides whether the search stops at a flavor where it
//!   borrows (`whenCanBorrow`, default stop) or preempts (`whenCanPreempt`, default try the next);
//!   of the flavors tried, a fit beats a preemption, then less borrowing wins (`isPreferred`);
//! - preemption, `pkg/scheduler/preemption/` (`classical/hierarchical_preemption.go`,
//!   `common/preemption_policy.go`, `common/ordering.go`, `preemption.go`): within the queue per
//!   `withinClusterQueue`; other queues of the cohort only while they borrow, per
//!   `reclaimWithinCohort` (or `borrowWithinCohort` when the preemptor would borrow); candidates in
//!   other queues first, lowest priority first, newest first; removed until it fits, then those
//!   not needed are given back;
//! - partial admission, `podset_reducer.go`: the largest count down to `minCount` that fits;
//! - queueing, `pkg/cache/queue/cluster_queue.go`: priority, then creation time; under
//!   `StrictFIFO` a head that waits blocks everything behind it, under `BestEffortFIFO` work ahead
//!   that fits is admitted first and the rest is passed.
//!
//! Simplifications (said in `docs/queues.md`): one scheduling cycle, alone; no fair sharing,
//! topology-aware scheduling, admission checks, taints of flavors or resources other than GPUs.

mod assign;
mod decision;
mod kai;
mod live;

use assign::{Mode, assign_all, verdict_of};
pub use decision::Decision;
pub use live::Live;

use std::collections::HashMap;

use crate::queues::{Ask, ClusterQueue, NamespaceSelector, QueueWorkload, Strategy};
use crate::report::queues::Verdict;

/// Kueue's verdict on `ask` in the live queues of `live`.
pub fn decide(live: &Live<'_>, ask: &Ask) -> Decision {
    let a = live.admission;
    if ask.kai_queue.is_some() && ask.local_queue.is_none() {
        return kai::kai(a, ask);
    }
    let (cq, q) = match queue_of(live, ask) {
        Ok(found) => found,
        Err(d) => return d,
    };
    let cq_name = cq.name.as_str();
    let (priority, note) = live.priority_of(ask.priority_class.as_deref());
    let ahead = ahead_of(live, cq_name, priority, &ask.id);
    // Work ahead that fits is admitted first (BestEffortFIFO passes what does not).
    let mut leaf = live.leaf().clone();
    let mut first: Vec<String> = Vec::new();
    for w in &ahead {
        let o = assign_all(live, cq, q, &w.pod_sets, w.priority, &leaf);
        if o.iter().all(|o| matches!(o.mode, Mode::Fit { .. })) {
            for (ps, o) in w.pod_sets.iter().filter(|p| p.gpus() > 0).zip(&o) {
                if let Some(f) = &o.flavor {
                    let e = leaf.entry((cq_name.to_string(), f.clone())).or_insert(0);
                    *e = e.saturating_add(ps.gpus());
                }
            }
            first.push(w.id());
        } else if cq.strategy == Strategy::StrictFifo {
            // The head that does not fit blocks everything behind it.
            break;
        }
    }
    let (mut verdict, mut flavor, mut why) =
        verdict_of(&assign_all(live, cq, q, &ask.pod_sets, priority, &leaf));
    if matches!(verdict, Verdict::Waits | Verdict::Never)
        && let Some((v, f, w)) = partially(live, cq, q, ask, priority, &leaf)
    {
        (verdict, flavor, why) = (v, f, w);
    }
    if !first.is_empty() && matches!(verdict, Verdict::Waits) {
        why = format!("{why}; admitted first: {}", first.join(", "));
    }
    // StrictFIFO: a head that waits blocks the queue.
    let blocked: Vec<String> = ahead
        .iter()
        .map(|w| w.id())
        .filter(|id| !first.contains(id))
        .collect();
    if cq.strategy == Strategy::StrictFifo
        && !blocked.is_empty()
        && matches!(
            verdict,
            Verdict::Admits | Verdict::Borrows | Verdict::Preempts
        )
    {
        why = format!(
            "{} queued ahead of it in {cq_name} (StrictFIFO: the head blocks the queue): {}; alone it {} ({why})",
            crate::util::text::count(blocked.len() as u64, "workload"),
            blocked
                .iter()
                .take(3)
                .cloned()
                .collect::<Vec<_>>()
                .join(", "),
            verdict.as_str(),
        );
        verdict = Verdict::Waits;
    }
    if let Some(n) = note {
        why = format!("{why} ({n})");
    }
    Decision {
        queue: Some(cq_name.to_string()),
        flavor,
        verdict,
        why,
    }
}

/// The ClusterQueue `ask` lands in (its LocalQueue's, else its namespace's `default`) and its
/// node in the tree — or the verdict when there is none to admit it: a LocalQueue that does not
/// exist (Kueue holds the job as inadmissible), a queue not read or whose quota is unknown, one
/// inactive or stopped.
fn queue_of<'a>(live: &'a Live<'_>, ask: &Ask) -> Result<(&'a ClusterQueue, usize), Decision> {
    let a = live.admission;
    let local = ask.local_queue.as_deref();
    let Some(cq_name) = a.cluster_queue_of(&ask.namespace, local) else {
        let lq = local.unwrap_or(crate::queues::DEFAULT_LOCAL_QUEUE);
        return Err(if a.local_queues.is_empty() {
            Decision::unknown(
                None,
                format!(
                    "no LocalQueue was read: LocalQueue {}/{lq} is not known",
                    ask.namespace
                ),
            )
        } else {
            Decision {
                queue: None,
                flavor: None,
                verdict: Verdict::Never,
                why: format!(
                    "LocalQueue {}/{lq} does not exist: Kueue holds the job as inadmissible",
                    ask.namespace
                ),
            }
        });
    };
    let queue = Some(cq_name.to_string());
    let Some(cq) = a.cluster_queue(cq_name) else {
        return Err(Decision::unknown(
            queue,
            format!("no ClusterQueue {cq_name} was read"),
        ));
    };
    if let Some(p) = cq.all_problems().next() {
        return Err(Decision::unknown(
            queue,
            format!("the queue's quota is unknown: {p}"),
        ));
    }
    let Some(q) = live.tree.queue(cq_name).filter(|&q| live.tree.sound(q)) else {
        return Err(Decision::unknown(
            queue,
            "its cohort's parents lead back to it (a cohort cycle)",
        ));
    };
    let held = |why: String| Decision {
        queue: queue.clone(),
        flavor: None,
        verdict: Verdict::Waits,
        why,
    };
    if let Some(why) = &cq.inactive {
        return Err(held(format!(
            "ClusterQueue {cq_name} is inactive ({why}): it admits nothing"
        )));
    }
    if cq.stopped {
        return Err(held(format!(
            "ClusterQueue {cq_name} is stopped (spec.stopPolicy): it admits nothing"
        )));
    }
    match a.selects(cq, &ask.namespace) {
        Ok(true) => Ok((cq, q)),
        Ok(false) => Err(Decision {
            queue,
            flavor: None,
            verdict: Verdict::Never,
            why: match cq.namespace_selector {
                NamespaceSelector::Nothing => format!(
                    "ClusterQueue {cq_name} selects no namespace (spec.namespaceSelector unset: Kueue's nothing selector): the job is held as Misconfigured"
                ),
                _ => format!(
                    "namespace {} is not selected by ClusterQueue {cq_name}'s namespaceSelector: the job is held as Misconfigured",
                    ask.namespace
                ),
            },
        }),
        Err(why) => Err(Decision::unknown(queue, why)),
    }
}

/// The work queued in `queue` ahead of a new workload of `priority`: of higher or equal priority
/// (all older than it), in queue order — priority, then creation time.
/// A job's own Workload (`owner`: the job a change reshapes) is not ahead of it.
fn ahead_of<'a>(
    live: &'a Live<'_>,
    queue: &str,
    priority: i64,
    owner: &str,
) -> Vec<&'a QueueWorkload> {
    let a = live.admission;
    let mut v: Vec<&QueueWorkload> = a
        .workloads
        .iter()
        .filter(|w| w.is_queued() && w.gpus() > 0 && w.priority >= priority)
        .filter(|w| w.owner.as_deref() != Some(owner))
        .filter(|w| {
            w.admission.as_ref().map(|x| x.cluster_queue.as_str()) == Some(queue)
                || a.cluster_queue_of(&w.namespace, w.local_queue.as_deref()) == Some(queue)
        })
        .collect();
    v.sort_by(|x, y| {
        y.priority
            .cmp(&x.priority)
            .then(x.created.cmp(&y.created))
            .then_with(|| x.id().cmp(&y.id()))
    });
    v
}

/// Partial admission (`kueue.x-k8s.io/job-min-parallelism` → `minCount`): the most pods, down to
/// the minimum, that fit or fit by preempting.
fn partially(
    live: &Live<'_>,
    cq: &ClusterQueue,
    q: usize,
    ask: &Ask,
    priority: i64,
    leaf: &HashMap<(String, String), u64>,
) -> Option<(Verdict, Option<String>, String)> {
    let (i, ps) = ask
        .pod_sets
        .iter()
        .enumerate()
        .find(|(_, p)| p.min_count.is_some_and(|m| m < p.count))?;
    let min = ps.min_count?;
    let with = |count: u64| {
        let mut sets = ask.pod_sets.clone();
        if let Some(p) = sets.get_mut(i) {
            p.count = count;
        }
        verdict_of(&assign_all(live, cq, q, &sets, priority, leaf))
    };
    // The largest count that fits (the outcome only improves as the count shrinks).
    let (mut lo, mut hi) = (min, ps.count.saturating_sub(1));
    let ok = |v: &Verdict| matches!(v, Verdict::Admits | Verdict::Borrows | Verdict::Preempts);
    let at_min = with(min);
    match at_min.0 {
        // Even its minimum can never fit: never.
        Verdict::Never | Verdict::Unknown => return None,
        // Its minimum can fit, not now: it waits (never only when even partially it cannot).
        Verdict::Waits => {
            return Some((
                Verdict::Waits,
                at_min.1,
                format!(
                    "partially, once there is room: its minimum {min} of {} pods ({} GPUs) {}",
                    ps.count,
                    min.saturating_mul(ps.gpus_per_pod),
                    at_min.2
                ),
            ));
        }
        Verdict::Admits | Verdict::Borrows | Verdict::Preempts => {}
    }
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if ok(&with(mid).0) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let (v, f, why) = with(lo);
    Some((
        v,
        f,
        format!(
            "partially: {lo} of its {} pods ({} GPUs; minimum {min}) {why}",
            ps.count,
            lo.saturating_mul(ps.gpus_per_pod)
        ),
    ))
}

/// The GPUs per flavor of the work waiting in `queue` that would be admitted now, in queue
/// order (priority, then creation time): each that fits its unused quota (or by borrowing)
/// takes it; under StrictFIFO the first that does not blocks the rest.
pub fn would_admit(live: &Live<'_>, queue: &str) -> std::collections::BTreeMap<String, u64> {
    let mut out = std::collections::BTreeMap::new();
    let a = live.admission;
    let Some(cq) = a.cluster_queue(queue).filter(|q| q.known()) else {
        return out;
    };
    let Some(q) = live.tree.queue(queue).filter(|&q| live.tree.sound(q)) else {
        return out;
    };
    if cq.stopped || cq.inactive.is_some() {
        return out;
    }
    let mut waiting: Vec<&QueueWorkload> = a
        .workloads
        .iter()
        .filter(|w| w.is_queued() && w.gpus() > 0)
        .filter(|w| a.cluster_queue_of(&w.namespace, w.local_queue.as_deref()) == Some(queue))
        .collect();
    waiting.sort_by(|x, y| {
        y.priority
            .cmp(&x.priority)
            .then(x.created.cmp(&y.created))
            .then_with(|| x.id().cmp(&y.id()))
    });
    let mut leaf = live.leaf().clone();
    for w in waiting {
        let o = assign_all(live, cq, q, &w.pod_sets, w.priority, &leaf);
        if o.iter().all(|o| matches!(o.mode, Mode::Fit { .. })) {
            for (ps, o) in w.pod_sets.iter().filter(|p| p.gpus() > 0).zip(&o) {
                if let Some(f) = &o.flavor {
                    let e = leaf.entry((queue.to_string(), f.clone())).or_insert(0);
                    *e = e.saturating_add(ps.gpus());
                    let e = out.entry(f.clone()).or_insert(0);
                    *e = e.saturating_add(ps.gpus());
                }
            }
        } else if cq.strategy == Strategy::StrictFifo {
            break;
        }
    }
    out
}
