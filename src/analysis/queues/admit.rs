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

use std::collections::HashMap;

use super::flavors::{allows, first_flavor};
use super::tree::{Tree, UsageMap};
use crate::queues::{
    Admission, Ask, BorrowWithinCohort, ClusterQueue, PodSetGpus, QueueWorkload, Reclaim, Strategy,
    WithinQueue, WorkloadState,
};
use crate::report::queues::Verdict;

/// The verdict on one workload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub queue: Option<String>,
    pub flavor: Option<String>,
    pub verdict: Verdict,
    pub why: String,
}

impl Decision {
    fn unknown(queue: Option<String>, why: impl Into<String>) -> Decision {
        Decision {
            queue,
            flavor: None,
            verdict: Verdict::Unknown,
            why: why.into(),
        }
    }
}

/// An admitted Workload as a preemption candidate.
#[derive(Debug, Clone)]
struct Held {
    id: String,
    /// The job it is the Workload of (`namespace/Kind/name`).
    owner: Option<String>,
    queue: String,
    /// GPUs per flavor.
    gpus: HashMap<String, u64>,
    priority: i64,
    /// When it was created (a proxy for when it reserved quota: newest is evicted first).
    created: i64,
}

/// The live queues, ready to admit against.
#[derive(Clone)]
pub struct Live<'a> {
    pub admission: &'a Admission,
    pub tree: Tree,
    /// GPUs reserved per (queue, flavor).
    leaf: HashMap<(String, String), u64>,
    held: Vec<Held>,
}

/// GPUs a reserved Workload holds per flavor (its admission's count of each pod set).
fn held_gpus(w: &QueueWorkload) -> HashMap<String, u64> {
    let mut out = HashMap::new();
    let Some(adm) = &w.admission else { return out };
    for p in &w.pod_sets {
        let Some(a) = adm.pod_sets.iter().find(|s| s.name == p.name) else {
            continue;
        };
        let Some(f) = &a.flavor else { continue };
        let n = a.count.unwrap_or(p.count).saturating_mul(p.gpus_per_pod);
        *out.entry(f.clone()).or_insert(0) += n;
    }
    out
}

impl<'a> Live<'a> {
    pub fn new(admission: &'a Admission) -> Live<'a> {
        let tree = Tree::new(admission);
        // What each queue holds: its own status where Kueue reports it (the reservation the
        // scheduler counts, else the admitted usage), else the sum of its reserved Workloads.
        let mut leaf: HashMap<(String, String), u64> = HashMap::new();
        let mut held = Vec::new();
        let reported = |q: &str| {
            admission
                .cluster_queue(q)
                .and_then(|q| q.reserved.as_ref().or(q.usage.as_ref()))
        };
        for q in &admission.cluster_queues {
            for (f, u) in reported(&q.name).into_iter().flatten() {
                leaf.insert((q.name.clone(), f.clone()), u.total);
            }
        }
        for w in &admission.workloads {
            if w.state != WorkloadState::Reserved {
                continue;
            }
            let Some(adm) = &w.admission else { continue };
            let gpus = held_gpus(w);
            if reported(&adm.cluster_queue).is_none() {
                for (f, n) in &gpus {
                    *leaf
                        .entry((adm.cluster_queue.clone(), f.clone()))
                        .or_insert(0) += n;
                }
            }
            held.push(Held {
                id: w.id(),
                owner: w.owner.clone(),
                queue: adm.cluster_queue.clone(),
                gpus,
                priority: w.priority,
                created: w.created.map_or(0, |t| t.unix()),
            });
        }
        Live {
            admission,
            tree,
            leaf,
            held,
        }
    }

    fn usage(&self, leaf: &HashMap<(String, String), u64>) -> UsageMap {
        self.tree.usage(leaf)
    }

    /// The queues without what the job `owner` holds: a job a change reshapes is admitted
    /// anew (Kueue makes a new Workload for the new spec), its old reservation released.
    pub fn without(&self, owner: &str) -> Live<'a> {
        let mut out = self.clone();
        for h in self
            .held
            .iter()
            .filter(|h| h.owner.as_deref() == Some(owner))
        {
            for (f, n) in &h.gpus {
                if let Some(v) = out.leaf.get_mut(&(h.queue.clone(), f.clone())) {
                    *v = v.saturating_sub(*n);
                }
            }
        }
        out.held.retain(|h| h.owner.as_deref() != Some(owner));
        out
    }

    /// The GPUs per flavor of the work waiting in `queue` that would be admitted now, in queue
    /// order (priority, then creation time): each that fits its unused quota (or by borrowing)
    /// takes it; under StrictFIFO the first that does not blocks the rest.
    pub fn would_admit(&self, queue: &str) -> std::collections::BTreeMap<String, u64> {
        let mut out = std::collections::BTreeMap::new();
        let a = self.admission;
        let Some(cq) = a.cluster_queue(queue).filter(|q| q.problems.is_empty()) else {
            return out;
        };
        let Some(q) = self.tree.queue(queue).filter(|&q| self.tree.sound(q)) else {
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
        let mut leaf = self.leaf.clone();
        for w in waiting {
            let o = assign_all(self, cq, q, &w.pod_sets, w.priority, &leaf);
            if o.iter().all(|o| matches!(o.mode, Mode::Fit { .. })) {
                for (ps, o) in w.pod_sets.iter().filter(|p| p.gpus() > 0).zip(&o) {
                    if let Some(f) = &o.flavor {
                        *leaf.entry((queue.to_string(), f.clone())).or_insert(0) += ps.gpus();
                        *out.entry(f.clone()).or_insert(0) += ps.gpus();
                    }
                }
            } else if cq.strategy == Strategy::StrictFifo {
                break;
            }
        }
        out
    }

    /// Every node's usage now.
    pub fn usage_now(&self) -> UsageMap {
        self.usage(&self.leaf)
    }

    /// GPUs reserved in `queue`'s `flavor`.
    pub fn reserved(&self, queue: &str, flavor: &str) -> u64 {
        self.leaf
            .get(&(queue.to_string(), flavor.to_string()))
            .copied()
            .unwrap_or(0)
    }

    /// The priority a WorkloadPriorityClass (or PriorityClass) resolves to, as the live Workloads
    /// that name it say (Kueue writes the resolved value into `spec.priority`); 0 otherwise.
    fn priority_of(&self, class: Option<&str>) -> (i64, Option<String>) {
        let Some(c) = class else { return (0, None) };
        match self
            .admission
            .workloads
            .iter()
            .find(|w| w.priority_class.as_deref() == Some(c))
        {
            Some(w) => (w.priority, None),
            None => (
                0,
                Some(format!(
                    "priority class {c} is named by no live Workload: read as priority 0"
                )),
            ),
        }
    }
}

/// How one pod set fares in one flavor.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Mode {
    Fit {
        borrows: bool,
    },
    Preempt {
        targets: Vec<String>,
    },
    /// It would fit by preempting, but the queue's policies allow evicting nothing that helps.
    NoCandidates {
        why: String,
    },
    NoFit {
        never: bool,
        why: String,
    },
}

impl Mode {
    /// Kueue's preference: fit, then preempt, then nothing; then less borrowing.
    fn rank(&self) -> (u8, u8) {
        match self {
            Mode::Fit { borrows } => (0, u8::from(*borrows)),
            Mode::Preempt { .. } => (1, 0),
            Mode::NoCandidates { .. } => (2, 0),
            Mode::NoFit { never: false, .. } => (3, 0),
            Mode::NoFit { never: true, .. } => (4, 0),
        }
    }
}

/// A pod set's outcome: its flavor and mode, and what each flavor tried said.
struct Outcome {
    flavor: Option<String>,
    mode: Mode,
    tried: Vec<String>,
}

/// The flavor assigner for one pod set of `need` GPUs in queue `q`.
fn assign(
    live: &Live<'_>,
    cq: &ClusterQueue,
    q: usize,
    ps: &PodSetGpus,
    need: u64,
    priority: i64,
    leaf: &HashMap<(String, String), u64>,
) -> Outcome {
    let usage = live.usage(leaf);
    let mut best: Option<(String, Mode)> = None;
    let mut tried = Vec::new();
    for f in &cq.flavors {
        let name = f.flavor.as_str();
        let mode = if live
            .admission
            .flavor(name)
            .is_some_and(|rf| !allows(rf, ps))
        {
            Mode::NoFit {
                never: true,
                why: format!("flavor {name} does not match its pods' node selector"),
            }
        } else {
            let val = i64::try_from(need).unwrap_or(i64::MAX);
            let potential = live.tree.potential(q, name);
            let available = live.tree.available(q, name, &usage);
            let used = i64::try_from(live.reserved(&cq.name, name)).unwrap_or(i64::MAX);
            let nominal = live.tree.nominal(q, name);
            if val > potential {
                Mode::NoFit {
                    never: true,
                    why: format!(
                        "{need} GPUs in flavor {name} > the most {} can ever reach there ({potential})",
                        cq.name
                    ),
                }
            } else if val <= available {
                Mode::Fit {
                    borrows: used.saturating_add(val) > nominal,
                }
            } else if nominal >= val
                || !matches!(
                    cq.preemption.borrow_within_cohort,
                    BorrowWithinCohort::Never
                )
            {
                let targets = preempt(live, cq, q, name, val, priority, leaf);
                if targets.is_empty() {
                    Mode::NoCandidates {
                        why: format!(
                            "{}; it may preempt nothing that would make room ({})",
                            wait_text(live, cq, q, name, need, &usage),
                            policies(cq)
                        ),
                    }
                } else {
                    Mode::Preempt { targets }
                }
            } else {
                Mode::NoFit {
                    never: false,
                    why: wait_text(live, cq, q, name, need, &usage),
                }
            }
        };
        tried.push(match &mode {
            Mode::NoFit { why, .. } | Mode::NoCandidates { why } => why.clone(),
            Mode::Preempt { .. } => format!("in flavor {name} by preempting"),
            Mode::Fit { borrows: true } => format!("in flavor {name} by borrowing"),
            Mode::Fit { borrows: false } => format!("in flavor {name}"),
        });
        let stop = match &mode {
            Mode::Fit { borrows } => !borrows || cq.fungibility.stop_when_borrowing,
            Mode::Preempt { .. } => cq.fungibility.stop_when_preempting,
            Mode::NoCandidates { .. } | Mode::NoFit { .. } => false,
        };
        if best.as_ref().is_none_or(|(_, b)| mode.rank() < b.rank()) {
            best = Some((name.to_string(), mode));
        }
        if stop {
            break;
        }
    }
    match best {
        Some((flavor, mode)) => Outcome {
            flavor: Some(flavor),
            mode,
            tried,
        },
        None => Outcome {
            flavor: None,
            mode: Mode::NoFit {
                never: true,
                why: format!("ClusterQueue {} has no GPU quota", cq.name),
            },
            tried,
        },
    }
}

/// Why it waits in a flavor: how much the queue has free there, and what the cohort could lend.
fn wait_text(
    live: &Live<'_>,
    cq: &ClusterQueue,
    q: usize,
    flavor: &str,
    need: u64,
    usage: &UsageMap,
) -> String {
    let nominal = live.tree.nominal(q, flavor);
    let used = live.reserved(&cq.name, flavor);
    let available = live.tree.available(q, flavor, usage);
    let mut s = format!(
        "{} is at {used} of its {nominal} in flavor {flavor} ({available} free to it{}), {need} needed",
        cq.name,
        match &cq.cohort {
            Some(c) => format!(
                " with what cohort {c} lends: {}",
                live.tree.lendable(q, flavor, usage)
            ),
            None => String::new(),
        }
    );
    if let Some(l) = cq.quota(flavor).and_then(|q| q.borrowing_limit) {
        s.push_str(&format!("; borrowing limit {l}"));
    }
    s
}

/// The queue's preemption policies, as a reviewer reads them.
fn policies(cq: &ClusterQueue) -> String {
    let p = &cq.preemption;
    format!(
        "withinClusterQueue {:?}, reclaimWithinCohort {:?}, borrowWithinCohort {}",
        p.within_cluster_queue,
        p.reclaim_within_cohort,
        match p.borrow_within_cohort {
            BorrowWithinCohort::Never => "Never",
            BorrowWithinCohort::LowerPriority { .. } => "LowerPriority",
        }
    )
}

/// The admitted workloads whose eviction lets `val` GPUs of `flavor` into queue `q`, or none.
fn preempt(
    live: &Live<'_>,
    cq: &ClusterQueue,
    q: usize,
    flavor: &str,
    val: i64,
    priority: i64,
    leaf: &HashMap<(String, String), u64>,
) -> Vec<String> {
    let usage = live.usage(leaf);
    let used = i64::try_from(live.reserved(&cq.name, flavor)).unwrap_or(i64::MAX);
    let within_nominal = used.saturating_add(val) <= live.tree.nominal(q, flavor);
    let root = live.tree.root(q);
    let mut candidates: Vec<&Held> = live
        .held
        .iter()
        .filter(|h| h.gpus.get(flavor).copied().unwrap_or(0) > 0)
        .filter(|h| {
            if h.queue == cq.name {
                return match cq.preemption.within_cluster_queue {
                    WithinQueue::Never => false,
                    // A new workload is the newest: equal priority never qualifies.
                    WithinQueue::LowerPriority | WithinQueue::LowerOrNewerEqualPriority => {
                        h.priority < priority
                    }
                };
            }
            let Some(other) = live.tree.queue(&h.queue) else {
                return false;
            };
            if cq.cohort.is_none() || live.tree.root(other) != root {
                return false;
            }
            // Only a queue above its nominal quota loses work to another queue.
            if !live.tree.above_nominal(other, flavor, &usage) {
                return false;
            }
            if within_nominal {
                match cq.preemption.reclaim_within_cohort {
                    Reclaim::Never => false,
                    Reclaim::LowerPriority => h.priority < priority,
                    Reclaim::Any => true,
                }
            } else {
                match cq.preemption.borrow_within_cohort {
                    BorrowWithinCohort::Never => false,
                    BorrowWithinCohort::LowerPriority {
                        max_priority_threshold,
                    } => {
                        h.priority < priority
                            && max_priority_threshold.is_none_or(|t| h.priority <= t)
                    }
                }
            }
        })
        .collect();
    candidates.sort_by(|a, b| {
        (a.queue == cq.name)
            .cmp(&(b.queue == cq.name))
            .then(a.priority.cmp(&b.priority))
            .then(b.created.cmp(&a.created))
            .then_with(|| a.id.cmp(&b.id))
    });
    let fits = |leaf: &HashMap<(String, String), u64>| {
        val <= live.tree.available(q, flavor, &live.usage(leaf))
    };
    let mut leaf = leaf.clone();
    let mut removed: Vec<&Held> = Vec::new();
    for c in candidates {
        for (f, n) in &c.gpus {
            if let Some(v) = leaf.get_mut(&(c.queue.clone(), f.clone())) {
                *v = v.saturating_sub(*n);
            }
        }
        removed.push(c);
        if fits(&leaf) {
            // Give back, the latest removal first but the last, what is not needed.
            let mut keep: Vec<&Held> = removed.split_off(removed.len().saturating_sub(1));
            while let Some(h) = removed.pop() {
                let mut trial = leaf.clone();
                for (f, n) in &h.gpus {
                    *trial.entry((h.queue.clone(), f.clone())).or_insert(0) += n;
                }
                if fits(&trial) {
                    leaf = trial;
                } else {
                    keep.push(h);
                }
            }
            keep.reverse();
            return keep.iter().map(|h| h.id.clone()).collect();
        }
    }
    Vec::new()
}

/// The outcome of every GPU pod set of `pod_sets`, each seeing the GPUs the ones before it took.
fn assign_all(
    live: &Live<'_>,
    cq: &ClusterQueue,
    q: usize,
    pod_sets: &[PodSetGpus],
    priority: i64,
    leaf: &HashMap<(String, String), u64>,
) -> Vec<Outcome> {
    let mut leaf = leaf.clone();
    let mut out = Vec::new();
    for ps in pod_sets.iter().filter(|p| p.gpus() > 0) {
        let o = assign(live, cq, q, ps, ps.gpus(), priority, &leaf);
        if let (Some(f), Mode::Fit { .. }) = (&o.flavor, &o.mode) {
            *leaf.entry((cq.name.clone(), f.clone())).or_insert(0) += ps.gpus();
        }
        out.push(o);
    }
    out
}

/// The verdict of a set of pod-set outcomes.
fn verdict_of(outcomes: &[Outcome]) -> (Verdict, Option<String>, String) {
    let flavor = outcomes.iter().find_map(|o| o.flavor.clone());
    let worst = outcomes.iter().max_by_key(|o| o.mode.rank());
    let Some(worst) = worst else {
        return (Verdict::Admits, None, "it asks for no GPUs".into());
    };
    match &worst.mode {
        Mode::Fit { .. } => {
            let borrows = outcomes
                .iter()
                .any(|o| o.mode == Mode::Fit { borrows: true });
            let text = outcomes
                .iter()
                .map(|o| o.tried.last().cloned().unwrap_or_default())
                .collect::<Vec<_>>()
                .join("; ");
            if borrows {
                (Verdict::Borrows, flavor, format!("fits {text}"))
            } else {
                (
                    Verdict::Admits,
                    flavor,
                    format!("fits its unused nominal quota {text}"),
                )
            }
        }
        Mode::Preempt { .. } => {
            let targets: Vec<String> = outcomes
                .iter()
                .filter_map(|o| match &o.mode {
                    Mode::Preempt { targets } => Some(targets.clone()),
                    _ => None,
                })
                .flatten()
                .collect();
            (
                Verdict::Preempts,
                worst.flavor.clone(),
                format!(
                    "fits only by evicting {} ({})",
                    targets.join(", "),
                    worst.tried.join("; ")
                ),
            )
        }
        Mode::NoCandidates { .. } | Mode::NoFit { never: false, .. } => (
            Verdict::Waits,
            worst.flavor.clone().or(flavor),
            worst.tried.join("; "),
        ),
        Mode::NoFit { never: true, .. } => (Verdict::Never, None, worst.tried.join("; ")),
    }
}

/// Kueue's verdict on `ask` in the live queues of `live`.
pub fn decide(live: &Live<'_>, ask: &Ask) -> Decision {
    let a = live.admission;
    if ask.kai_queue.is_some() && ask.local_queue.is_none() {
        return kai(a, ask);
    }
    let local = ask.local_queue.as_deref();
    let Some(cq_name) = a.cluster_queue_of(&ask.namespace, local) else {
        let lq = local.unwrap_or(crate::queues::DEFAULT_LOCAL_QUEUE);
        return if a.local_queues.is_empty() {
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
        };
    };
    let queue = Some(cq_name.to_string());
    let Some(cq) = a.cluster_queue(cq_name) else {
        return Decision::unknown(queue, format!("no ClusterQueue {cq_name} was read"));
    };
    if let Some(p) = cq.problems.first() {
        return Decision::unknown(queue, format!("the queue's quota is unknown: {p}"));
    }
    let Some(q) = live.tree.queue(cq_name).filter(|&q| live.tree.sound(q)) else {
        return Decision::unknown(
            queue,
            "its cohort's parents lead back to it (a cohort cycle)",
        );
    };
    if let Some(why) = &cq.inactive {
        return Decision {
            queue,
            flavor: None,
            verdict: Verdict::Waits,
            why: format!("ClusterQueue {cq_name} is inactive ({why}): it admits nothing"),
        };
    }
    if cq.stopped {
        return Decision {
            queue,
            flavor: None,
            verdict: Verdict::Waits,
            why: format!("ClusterQueue {cq_name} is stopped (spec.stopPolicy): it admits nothing"),
        };
    }
    let (priority, note) = live.priority_of(ask.priority_class.as_deref());
    let ahead: Vec<&QueueWorkload> = {
        let mut v: Vec<&QueueWorkload> = a
            .workloads
            .iter()
            .filter(|w| w.is_queued() && w.gpus() > 0 && w.priority >= priority)
            .filter(|w| {
                w.admission.as_ref().map(|x| x.cluster_queue.as_str()) == Some(cq_name)
                    || a.cluster_queue_of(&w.namespace, w.local_queue.as_deref()) == Some(cq_name)
            })
            .collect();
        v.sort_by(|x, y| {
            y.priority
                .cmp(&x.priority)
                .then(x.created.cmp(&y.created))
                .then_with(|| x.id().cmp(&y.id()))
        });
        v
    };
    // Work ahead that fits is admitted first (BestEffortFIFO passes what does not).
    let mut leaf = live.leaf.clone();
    let mut first: Vec<String> = Vec::new();
    for w in &ahead {
        let o = assign_all(live, cq, q, &w.pod_sets, w.priority, &leaf);
        if o.iter().all(|o| matches!(o.mode, Mode::Fit { .. })) {
            for (ps, o) in w.pod_sets.iter().filter(|p| p.gpus() > 0).zip(&o) {
                if let Some(f) = &o.flavor {
                    *leaf.entry((cq_name.to_string(), f.clone())).or_insert(0) += ps.gpus();
                }
            }
            first.push(w.id());
        }
    }
    let mut outcomes = assign_all(live, cq, q, &ask.pod_sets, priority, &leaf);
    let (mut verdict, mut flavor, mut why) = verdict_of(&outcomes);
    if matches!(verdict, Verdict::Waits | Verdict::Never)
        && let Some((v, f, w)) = partially(live, cq, q, ask, priority, &leaf)
    {
        (verdict, flavor, why) = (v, f, w);
        outcomes.clear();
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
        queue,
        flavor,
        verdict,
        why,
    }
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
    if !ok(&with(min).0) {
        return None;
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

/// KAI: a queue admits within its limit (and those of its parents); above its quota the work is
/// over quota (preemptible), what KAI calls borrowing; above the limit it waits, and more than
/// the limit holds is never (`pkg/scheduler/plugins/proportion/capacity_policy/`).
fn kai(a: &Admission, ask: &Ask) -> Decision {
    let name = ask.kai_queue.clone().unwrap_or_default();
    let queue = Some(name.clone());
    let Some(q) = a.kai_queue(&name) else {
        return if a.kai_queues.is_empty() {
            Decision::unknown(queue, "no KAI Queue was read")
        } else {
            Decision {
                queue,
                flavor: None,
                verdict: Verdict::Never,
                why: format!("KAI Queue {name} does not exist (QueueDoesNotExist)"),
            }
        };
    };
    if let Some(p) = q.problems.first() {
        return Decision::unknown(queue, format!("the queue's quota is unknown: {p}"));
    }
    #[allow(clippy::cast_precision_loss)]
    let need = ask.gpus() as f64;
    // The queue and its parents: the tightest limit binds.
    let mut chain = vec![q];
    while let Some(p) = chain
        .last()
        .and_then(|q| q.parent.as_deref())
        .and_then(|p| a.kai_queue(p))
    {
        if chain.len() > a.kai_queues.len() {
            break;
        }
        chain.push(p);
    }
    for c in &chain {
        let Some(limit) = c.limit else { continue };
        if need > limit {
            return Decision {
                queue,
                flavor: None,
                verdict: Verdict::Never,
                why: format!("{need} GPUs > the limit of KAI Queue {} ({limit})", c.name),
            };
        }
        let Some(allocated) = c.allocated else {
            return Decision::unknown(
                queue,
                format!("KAI Queue {} reports no status.allocated", c.name),
            );
        };
        if allocated + need > limit {
            return Decision {
                queue,
                flavor: None,
                verdict: Verdict::Waits,
                why: format!(
                    "KAI Queue {} has {allocated} of its limit {limit} allocated, {need} needed (OverLimit)",
                    c.name
                ),
            };
        }
    }
    let allocated = q.allocated.unwrap_or(0.0);
    match q.quota {
        Some(quota) if quota >= 0.0 && allocated + need > quota => Decision {
            queue,
            flavor: None,
            verdict: Verdict::Borrows,
            why: format!(
                "over KAI Queue {name}'s quota ({allocated} + {need} > {quota}): runs preemptible, within its limit"
            ),
        },
        _ => Decision {
            queue,
            flavor: None,
            verdict: Verdict::Admits,
            why: format!(
                "within KAI Queue {name}'s quota ({allocated} + {need} ≤ {})",
                q.quota.map_or("unlimited".into(), |n| n.to_string())
            ),
        },
    }
}

/// The flavor and GPU model a new workload's GPUs would go to in its queue, for display.
pub fn flavor_of(a: &Admission, cq: &str, ps: &PodSetGpus) -> Option<String> {
    a.cluster_queue(cq)
        .and_then(|c| first_flavor(a, c, ps))
        .map(|(f, _)| f.to_string())
}
