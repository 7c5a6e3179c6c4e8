//! Kueue's flavor assigner and preemption for one workload's pod sets against the live queues
//! (`pkg/scheduler/flavorassigner/flavorassigner.go`, `pkg/scheduler/preemption/`).

use std::collections::HashMap;

use super::super::flavors::allows;
use super::super::tree::UsageMap;
use super::live::{Held, Live};
use crate::queues::{BorrowWithinCohort, ClusterQueue, PodSetGpus, Reclaim, WithinQueue};
use crate::report::queues::Verdict;

/// How one pod set fares in one flavor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Mode {
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
pub(super) struct Outcome {
    pub(super) flavor: Option<String>,
    pub(super) mode: Mode,
    pub(super) tried: Vec<String>,
}

/// The flavor assigner for one pod set of `need` GPUs in queue `q`, the workload's earlier pod
/// sets having assumed `assumed` GPUs per flavor (Kueue's `val = assumedUsage + request`).
fn assign(
    live: &Live<'_>,
    cq: &ClusterQueue,
    q: usize,
    (ps, need, assumed): (&PodSetGpus, u64, &HashMap<String, u64>),
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
            let val = i64::try_from(need.saturating_add(assumed.get(name).copied().unwrap_or(0)))
                .unwrap_or(i64::MAX);
            let potential = live.tree.potential(q, name);
            let available = live.tree.available(q, name, &usage);
            let used = used_in(&usage, q, name);
            let nominal = live.tree.nominal(q, name);
            if val > potential {
                Mode::NoFit {
                    never: true,
                    why: format!(
                        "{val} GPUs in flavor {name} > the most {} can ever reach there ({potential})",
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

/// GPUs queue `q` holds in `flavor` in `usage` (the live reservation, with what the pod sets
/// before and the work admitted ahead of this one took).
fn used_in(usage: &UsageMap, q: usize, flavor: &str) -> i64 {
    usage.get(&(q, flavor.to_string())).copied().unwrap_or(0)
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
    let used = used_in(usage, q, flavor);
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
    let used = used_in(&usage, q, flavor);
    let within_nominal = used.saturating_add(val) <= live.tree.nominal(q, flavor);
    let root = live.tree.root(q);
    let mut candidates: Vec<&Held<'_>> = live
        .held
        .iter()
        .filter(|h| h.gpus_in(flavor) > 0)
        .filter(|h| {
            if h.queue == cq.name {
                return match cq.preemption.within_cluster_queue {
                    WithinQueue::Never => false,
                    // A new workload is the newest: equal priority never qualifies.
                    WithinQueue::LowerPriority | WithinQueue::LowerOrNewerEqualPriority => {
                        h.w.priority < priority
                    }
                };
            }
            let Some(other) = live.tree.queue(h.queue) else {
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
                    Reclaim::LowerPriority => h.w.priority < priority,
                    Reclaim::Any => true,
                }
            } else {
                match cq.preemption.borrow_within_cohort {
                    BorrowWithinCohort::Never => false,
                    BorrowWithinCohort::LowerPriority {
                        max_priority_threshold,
                    } => {
                        h.w.priority < priority
                            && max_priority_threshold.is_none_or(|t| h.w.priority <= t)
                    }
                }
            }
        })
        .collect();
    candidates.sort_by(|a, b| {
        (a.queue == cq.name)
            .cmp(&(b.queue == cq.name))
            .then(a.w.priority.cmp(&b.w.priority))
            .then(b.created.cmp(&a.created))
            .then_with(|| (&a.w.namespace, &a.w.name).cmp(&(&b.w.namespace, &b.w.name)))
    });
    let fits = |leaf: &HashMap<(String, String), u64>| {
        val <= live.tree.available(q, flavor, &live.usage(leaf))
    };
    let mut leaf = leaf.clone();
    let mut removed: Vec<&Held<'_>> = Vec::new();
    for c in candidates {
        // A queue that is no longer above its nominal quota loses nothing more to another queue
        // (`candidate_generator.go` re-checks each step).
        if c.queue != cq.name
            && live
                .tree
                .queue(c.queue)
                .is_none_or(|o| !live.tree.above_nominal(o, flavor, &live.usage(&leaf)))
        {
            continue;
        }
        for (f, n) in &c.gpus {
            if let Some(v) = leaf.get_mut(&(c.queue.to_string(), f.to_string())) {
                *v = v.saturating_sub(*n);
            }
        }
        removed.push(c);
        if fits(&leaf) {
            // Give back, the latest removal first but the last, what is not needed.
            let mut keep: Vec<&Held<'_>> = removed.split_off(removed.len().saturating_sub(1));
            while let Some(h) = removed.pop() {
                let mut trial = leaf.clone();
                for (f, n) in &h.gpus {
                    let e = trial
                        .entry((h.queue.to_string(), f.to_string()))
                        .or_insert(0);
                    *e = e.saturating_add(*n);
                }
                if fits(&trial) {
                    leaf = trial;
                } else {
                    keep.push(h);
                }
            }
            keep.reverse();
            return keep.iter().map(|h| h.w.id()).collect();
        }
    }
    Vec::new()
}

/// The outcome of every GPU pod set of `pod_sets`, each seeing the GPUs the ones before it took.
pub(super) fn assign_all(
    live: &Live<'_>,
    cq: &ClusterQueue,
    q: usize,
    pod_sets: &[PodSetGpus],
    priority: i64,
    leaf: &HashMap<(String, String), u64>,
) -> Vec<Outcome> {
    let mut assumed: HashMap<String, u64> = HashMap::new();
    let mut out = Vec::new();
    for ps in pod_sets.iter().filter(|p| p.gpus() > 0) {
        let o = assign(live, cq, q, (ps, ps.gpus(), &assumed), priority, leaf);
        if let (Some(f), Mode::Fit { .. } | Mode::Preempt { .. }) = (&o.flavor, &o.mode) {
            let e = assumed.entry(f.clone()).or_insert(0);
            *e = e.saturating_add(ps.gpus());
        }
        out.push(o);
    }
    out
}

/// The verdict of a set of pod-set outcomes.
pub(super) fn verdict_of(outcomes: &[Outcome]) -> (Verdict, Option<String>, String) {
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
