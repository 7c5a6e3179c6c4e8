//! What a change does to the queues: each workload it adds or reshapes judged against the queue
//! it joins ([`admission`]), and each quota it moves — per queue and flavor, the admitted work
//! that becomes borrowed and the queued work that would then be admitted ([`quota`]).
//!
//! Both read the queues as they will be once the change syncs: the live admission with the
//! head's queue objects laid over it ([`Admission::with_declared`]), so a pull request that adds a
//! LocalQueue and a job for it is judged with both. Without the live state nothing is known of
//! what the queues hold: the verdicts are unknown, and a quota change says what moves in the spec
//! only.

use std::collections::{BTreeMap, BTreeSet};

use super::admit::{Decision, Live, decide, would_admit};
use crate::k8s::object::Object;
use crate::queues::{Admission, Ask, DEFAULT_LOCAL_QUEUE, Quota};
use crate::report::queues::{AdmissionRow, Amount, QueueKind, QuotaChange, QuotaSide, Verdict};
use crate::report::{Gate, GateName, Known, Unknown};

/// Why a verdict is unknown without the live state.
const NO_LIVE: &str = "no live state: what the queue holds and what waits in it were not read (--snapshot, --context)";

/// One workload the change adds or reshapes.
pub struct Joining<'a> {
    pub ask: &'a Ask,
    /// It replaces a live workload of the same name (reshaped): its reservation is released.
    pub reshaped: bool,
    pub cluster: Option<String>,
}

/// The verdict on each workload the change adds or reshapes that joins a queue: one it names, or
/// (with the live state) its namespace's `default` LocalQueue.
pub fn admission(
    live: &Known<&Admission>,
    head_queues: &[Object],
    joining: &[Joining<'_>],
) -> Vec<AdmissionRow> {
    let after = live.value().map(|a| a.with_declared(head_queues));
    let queues = after.as_ref().map(Live::new);
    let mut rows: Vec<AdmissionRow> = joining
        .iter()
        .filter_map(|j| {
            let ask = j.ask;
            let decision = match (&after, &queues) {
                (Some(a), Some(q)) => {
                    let defaulted = ask.local_queue.is_none()
                        && ask.kai_queue.is_none()
                        && a.local_queue(&ask.namespace, DEFAULT_LOCAL_QUEUE).is_some();
                    if !ask.names_queue() && !defaulted {
                        return None;
                    }
                    if a.is_empty() {
                        Decision {
                            queue: ask.local_queue.clone().or(ask.kai_queue.clone()),
                            flavor: None,
                            verdict: Verdict::Unknown,
                            why: "it names a queue, but no Kueue or KAI queue was read from the cluster".into(),
                        }
                    } else if j.reshaped {
                        decide(&q.without(&ask.id), ask)
                    } else {
                        decide(q, ask)
                    }
                }
                _ if ask.names_queue() => Decision {
                    queue: ask.local_queue.clone().or(ask.kai_queue.clone()),
                    flavor: None,
                    verdict: Verdict::Unknown,
                    why: match live {
                        Known::Unknown(why) => why.clone(),
                        Known::Value(_) => NO_LIVE.into(),
                    },
                },
                _ => return None,
            };
            Some(AdmissionRow {
                workload: ask.id.clone(),
                queue: decision.queue,
                flavor: decision.flavor,
                gpus: ask.gpus(),
                verdict: decision.verdict,
                why: decision.why,
                cluster: j.cluster.clone(),
            })
        })
        .collect();
    rows.sort_by(|a, b| (&a.cluster, &a.workload).cmp(&(&b.cluster, &b.workload)));
    rows
}

fn side(q: Option<&Quota>) -> Option<QuotaSide> {
    q.map(|q| QuotaSide {
        nominal: Some(Amount::whole(q.nominal)),
        borrowing_limit: q.borrowing_limit.map(Amount::whole),
        lending_limit: q.lending_limit.map(Amount::whole),
    })
}

/// Every GPU quota the change moves, per queue (or cohort) and flavor, with what moves in the
/// live queues: admitted GPUs that would be above the nominal quota (borrowed, so preemptible)
/// that were not, and queued GPUs that would then be admitted.
pub fn quota(base: &[Object], head: &[Object], live: &Known<&Admission>) -> Vec<QuotaChange> {
    let (b, h) = (Admission::read(base), Admission::read(head));
    let no_live = match live {
        Known::Unknown(why) => why.as_str(),
        Known::Value(_) => NO_LIVE,
    };
    let live = live.value().copied();
    let mut rows = Vec::new();
    let before_live = live.map(|a| a.with_declared(base));
    let after_live = live.map(|a| a.with_declared(head));
    let (before_q, after_q) = (
        before_live.as_ref().map(Live::new),
        after_live.as_ref().map(Live::new),
    );
    let names: BTreeSet<&str> = b
        .cluster_queues
        .iter()
        .chain(&h.cluster_queues)
        .map(|q| q.name.as_str())
        .collect();
    for name in names {
        let (bq, hq) = (b.cluster_queue(name), h.cluster_queue(name));
        let mut flavors: Vec<&str> = hq
            .iter()
            .chain(bq.iter())
            .flat_map(|q| q.flavors.iter().map(|f| f.flavor.as_str()))
            .collect();
        let mut seen = BTreeSet::new();
        flavors.retain(|f| seen.insert(*f));
        let admitted_after = after_q.as_ref().map(|q| would_admit(q, name));
        let admitted_before = before_q.as_ref().map(|q| would_admit(q, name));
        for f in flavors {
            let (before, after) = (bq.and_then(|q| q.quota(f)), hq.and_then(|q| q.quota(f)));
            if before == after && bq.is_some() == hq.is_some() {
                continue;
            }
            let mut unknown = Unknown::default();
            let becomes_borrowed = match &after_q {
                Some(q) => {
                    let used = q.reserved(name, f);
                    let over = |x: Option<&Quota>| used.saturating_sub(x.map_or(0, |x| x.nominal));
                    Some(over(after).saturating_sub(over(before)))
                }
                None => {
                    unknown.set("becomes_borrowed", no_live);
                    None
                }
            };
            let would_admit = match (&admitted_before, &admitted_after) {
                (Some(b), Some(a)) => Some(
                    a.get(f)
                        .copied()
                        .unwrap_or(0)
                        .saturating_sub(b.get(f).copied().unwrap_or(0)),
                ),
                _ => {
                    unknown.set("would_admit", no_live);
                    None
                }
            };
            rows.push(QuotaChange {
                queue: name.to_string(),
                kind: QueueKind::ClusterQueue,
                flavor: Some(f.to_string()),
                before: side(before),
                after: side(after),
                becomes_borrowed,
                would_admit,
                unknown,
            });
        }
    }
    rows.extend(cohort_changes(&b, &h));
    rows.extend(kai_changes(&b, &h, live));
    rows
}

/// A cohort's own quota moved: what its queues may borrow changes (no figure of admitted work
/// moves by itself).
fn cohort_changes(b: &Admission, h: &Admission) -> Vec<QuotaChange> {
    let names: BTreeSet<&str> = b
        .cohorts
        .iter()
        .chain(&h.cohorts)
        .map(|c| c.name.as_str())
        .collect();
    let mut rows = Vec::new();
    for name in names {
        let quotas = |a: &Admission| -> BTreeMap<String, Quota> {
            a.cohort(name)
                .map(|c| {
                    c.flavors
                        .iter()
                        .map(|f| (f.flavor.clone(), f.quota))
                        .collect()
                })
                .unwrap_or_default()
        };
        let (bq, hq) = (quotas(b), quotas(h));
        let flavors: BTreeSet<&String> = bq.keys().chain(hq.keys()).collect();
        for f in flavors {
            if bq.get(f) == hq.get(f) {
                continue;
            }
            rows.push(QuotaChange {
                queue: name.to_string(),
                kind: QueueKind::Cohort,
                flavor: Some(f.clone()),
                before: side(bq.get(f)),
                after: side(hq.get(f)),
                becomes_borrowed: None,
                would_admit: None,
                unknown: Unknown::from(BTreeMap::from([(
                    "becomes_borrowed".to_string(),
                    "a cohort's quota is lent to its queues: what each borrows follows from them"
                        .to_string(),
                )])),
            });
        }
    }
    rows
}

/// A KAI queue's quota or limit moved.
fn kai_changes(b: &Admission, h: &Admission, live: Option<&Admission>) -> Vec<QuotaChange> {
    let names: BTreeSet<&str> = b
        .kai_queues
        .iter()
        .chain(&h.kai_queues)
        .map(|q| q.name.as_str())
        .collect();
    let mut rows = Vec::new();
    for name in names {
        let s = |a: &Admission| {
            a.kai_queue(name).map(|q| QuotaSide {
                nominal: q.quota.filter(|n| *n >= 0.0).map(Amount),
                borrowing_limit: q
                    .limit
                    .map(|l| Amount((l - q.quota.unwrap_or(0.0).max(0.0)).max(0.0))),
                lending_limit: None,
            })
        };
        let (before, after) = (s(b), s(h));
        if before == after {
            continue;
        }
        let mut unknown = Unknown::default();
        let allocated = live
            .and_then(|a| a.kai_queue(name))
            .and_then(|q| q.allocated);
        let over = |x: Option<QuotaSide>| {
            let n = x.and_then(|x| x.nominal).map_or(0.0, |n| n.0);
            allocated.map(|a| (a - n).max(0.0))
        };
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let becomes_borrowed = match (over(after), over(before)) {
            (Some(a), Some(b)) => Some((a - b).max(0.0).ceil() as u64),
            _ => {
                unknown.set("becomes_borrowed", NO_LIVE);
                None
            }
        };
        unknown.set(
            "would_admit",
            "KAI admits by its scheduler's fair share: which held pod groups a quota frees is not predicted",
        );
        rows.push(QuotaChange {
            queue: name.to_string(),
            kind: QueueKind::KaiQueue,
            flavor: None,
            before,
            after,
            becomes_borrowed,
            would_admit: None,
            unknown,
        });
    }
    rows
}

/// The check's terse summary of the queues: `queues: 1 waits, 1 admits; quota moved in cq-a`.
pub fn summary(rows: &[AdmissionRow], changes: &[QuotaChange]) -> Option<String> {
    let mut by: BTreeMap<Verdict, u64> = BTreeMap::new();
    for r in rows {
        *by.entry(r.verdict).or_default() += 1;
    }
    let mut parts: Vec<String> = by
        .iter()
        .map(|(v, n)| format!("{n} {}", v.as_str()))
        .collect();
    let moved: BTreeSet<&str> = changes.iter().map(|c| c.queue.as_str()).collect();
    if !moved.is_empty() {
        parts.push(format!(
            "quota moved in {}",
            moved.into_iter().collect::<Vec<_>>().join(", ")
        ));
    }
    (!parts.is_empty()).then(|| format!("queues: {}", parts.join(", ")))
}

/// The `quota` gate: fails on a workload its queue can never admit, and on a quota change that
/// makes admitted work borrowed (preemptible) that was not; cannot be evaluated (fails closed)
/// where a verdict or a quota's effect is unknown.
pub fn gate(rows: &[AdmissionRow], changes: &[QuotaChange]) -> Gate {
    let gate = |failed: bool, unknown: bool, why: String| Gate {
        name: GateName::Quota.to_string(),
        failed,
        unknown,
        why,
    };
    let never: Vec<String> = rows
        .iter()
        .filter(|r| r.verdict == Verdict::Never)
        .map(|r| {
            format!(
                "{} can never be admitted by {}",
                r.workload,
                r.queue.as_deref().unwrap_or("its queue")
            )
        })
        .collect();
    let borrowed: Vec<String> = changes
        .iter()
        .filter(|c| c.becomes_borrowed.is_some_and(|n| n > 0))
        .map(|c| {
            format!(
                "{}{} makes {} admitted GPUs borrowed",
                c.queue,
                c.flavor
                    .as_deref()
                    .map(|f| format!(" ({f})"))
                    .unwrap_or_default(),
                c.becomes_borrowed.unwrap_or(0)
            )
        })
        .collect();
    if !never.is_empty() || !borrowed.is_empty() {
        return gate(true, false, [never, borrowed].concat().join("; "));
    }
    let unknown: Vec<String> = rows
        .iter()
        .filter(|r| r.verdict == Verdict::Unknown)
        .map(|r| format!("{}: {}", r.workload, r.why))
        .chain(
            changes
                .iter()
                .filter(|c| c.kind != QueueKind::Cohort && c.becomes_borrowed.is_none())
                .map(|c| {
                    let why = c
                        .unknown
                        .get("becomes_borrowed")
                        .map_or(NO_LIVE, String::as_str);
                    format!("{}: {why}", c.queue)
                }),
        )
        .collect();
    if !unknown.is_empty() {
        return gate(
            true,
            true,
            format!("cannot check quota: {}", unknown.join("; ")),
        );
    }
    gate(
        false,
        false,
        match (rows.len(), changes.len()) {
            (0, 0) => "no workload of this change joins a queue, and no quota moves".into(),
            (r, c) => format!(
                "{} judged against its queue, {} moved: none never admitted, none made borrowed",
                crate::util::text::count(r as u64, "workload"),
                crate::util::text::count(c as u64, "quota")
            ),
        },
    )
}
