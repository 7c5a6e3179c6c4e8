//! The admission queues as blocks: what each queue holds per flavor, each tenant's quota, and who
//! runs beyond their quota — after the tenants, since a full queue is a decision figure.

use super::unknown::missing;
use crate::doc::{Doc, Table, Text};
use crate::report::Report;
use crate::report::queues::{Amount, QueueKind, QueueRow};

/// Whether the report's fleet has admission queues (or work queued for them).
pub fn has_admission(r: &Report) -> bool {
    !r.queues.is_empty() || r.fleet.gpus.queued > 0 || r.fleet.unknown.contains_key("gpus.queued")
}

/// The queued figure as people read it: `unknown` when what waits was not read.
pub fn queued(r: &Report) -> String {
    if r.fleet.unknown.contains_key("gpus.queued") || missing(r, "pods") {
        "unknown".into()
    } else {
        r.fleet.gpus.queued.to_string()
    }
}

fn amount(v: Option<Amount>, row: &QueueRow, field: &str) -> String {
    match v {
        Some(a) => a.to_string(),
        None if row.unknown.get(field).map(String::as_str)
            == Some(crate::report::queues::KAI_NO_QUOTA) =>
        {
            "unlimited".into()
        }
        None if row.unknown.contains_key(field) => "unknown".into(),
        // An unset limit is no limit.
        None => "—".into(),
    }
}

/// The queues table, the quota by tenant, and who borrows.
pub fn section(r: &Report) -> Doc {
    let mut d = Doc::new();
    if !has_admission(r) {
        return d;
    }
    let queued_unknown = r.fleet.unknown.get("gpus.queued");
    // Eight columns that fit 80: the cohort beside the queue, the nominal quota as "quota", the
    // borrowing limit as the most it may borrow.
    let table = Table::new(&[
        "queue (cohort)",
        "flavor",
        ">quota",
        ">borrow max",
        ">admitted",
        ">borrowed",
        ">queued",
        "tenants",
    ])
    .rows(&r.queues, |q| {
        let kind = match q.kind {
            QueueKind::ClusterQueue => "",
            QueueKind::KaiQueue => "KAI ",
            QueueKind::Cohort => "cohort ",
        };
        let name = match &q.cohort {
            Some(c) => format!("{} ({kind}{c})", q.queue),
            None if !kind.is_empty() => format!("{} ({})", q.queue, kind.trim_end()),
            None => q.queue.clone(),
        };
        let queued = if queued_unknown.is_some() {
            "unknown".to_string()
        } else {
            format!(
                "{}{}",
                amount(q.queued, q, "queued"),
                match q.workloads_queued {
                    Some(n) if n > 0 => format!(" ({n})"),
                    _ => String::new(),
                }
            )
        };
        vec![
            name.into(),
            q.flavor.clone().unwrap_or_else(|| "—".into()).into(),
            amount(q.nominal, q, "nominal").into(),
            amount(q.borrowing_limit, q, "borrowing_limit").into(),
            amount(q.admitted, q, "admitted").into(),
            amount(q.borrowed, q, "borrowed").into(),
            queued.into(),
            q.tenants.join(", ").into(),
        ]
    });
    d.section(
        "Queues (GPUs per flavor; borrow max — is no limit; queued: GPUs (workloads))",
        table,
        None,
    );
    if let Some(why) = queued_unknown {
        d.paragraph(Text::new().emph(format!("Queued GPUs unknown: {why}.")));
    }
    let why: Vec<Text> = r
        .queues
        .iter()
        .flat_map(|q| {
            q.unknown
                .iter()
                .map(move |(k, v)| format!("{} {k}: {v}", q.queue))
        })
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .map(Text::from)
        .collect();
    if !why.is_empty() {
        d.push(crate::doc::Block::Quote(why));
    }
    let tenants: Vec<_> = r
        .tenants
        .iter()
        .filter_map(|t| t.queues.as_ref().map(|q| (t, q)))
        .filter(|(t, q)| q.gpus_quota.0 > 0.0 || q.gpus_admitted.0 > 0.0 || t.gpus_queued > 0)
        .collect();
    d.section(
        "Quota by tenant",
        Table::new(&["tenant", ">quota", ">admitted", ">borrowed", ">queued"]).rows(
            &tenants,
            |(t, q)| {
                vec![
                    t.name.as_str().into(),
                    q.gpus_quota.to_string().into(),
                    q.gpus_admitted.to_string().into(),
                    q.gpus_borrowed
                        .map_or_else(|| "unknown".into(), |n| n.to_string())
                        .into(),
                    if queued_unknown.is_some() {
                        "unknown".to_string()
                    } else {
                        t.gpus_queued.to_string()
                    }
                    .into(),
                ]
            },
        ),
        None,
    );
    d
}

/// A workload's queue as a cell: `cq-a`, `cq-a (preempted)`, `cq-a (never: ExceedsMaxQuota)`.
pub fn queue_cell(w: &crate::report::WorkloadRow) -> String {
    let Some(q) = &w.queue else {
        return String::new();
    };
    let state = match (&w.queue_never, w.queue_state) {
        (Some(why), _) => format!(" (never: {why})"),
        (None, Some(crate::report::queues::QueueState::Evicted)) => " (evicted)".into(),
        (None, Some(crate::report::queues::QueueState::Preempted)) => " (preempted)".into(),
        _ => String::new(),
    };
    format!("{q}{state}")
}

/// How many verdicts the sentence names before it counts the rest.
const NAMED: usize = 2;

/// The queues in a check's sentence: `team-b/Job/train (16 GPUs) joins cq-b: waits — cq-b is at
/// 16 of its 16 in flavor h100 …; quota moves in cq-a (h100 16 → 24)`. The gravest verdicts
/// first.
pub fn change_phrase(
    rows: &[crate::report::queues::AdmissionRow],
    quota: &[crate::report::queues::QuotaChange],
) -> Option<String> {
    use crate::report::queues::Verdict;
    let rank = |v: Verdict| match v {
        Verdict::Never => 0,
        Verdict::Waits => 1,
        Verdict::Preempts => 2,
        Verdict::Unknown => 3,
        Verdict::Borrows => 4,
        Verdict::Admits => 5,
    };
    let mut sorted: Vec<_> = rows.iter().collect();
    sorted.sort_by_key(|r| rank(r.verdict));
    let mut parts: Vec<String> = sorted
        .iter()
        .take(NAMED)
        .map(|r| {
            format!(
                "{} ({} GPUs) joins {}: {} — {}",
                r.workload,
                r.gpus,
                r.queue.as_deref().unwrap_or("its queue"),
                r.verdict.as_str(),
                // The first clause says it; the table below has the rest.
                crate::util::text::line(r.why.split("; ").next().unwrap_or_default(), 160)
            )
        })
        .collect();
    if rows.len() > NAMED {
        parts.push(format!("{} more in queues", rows.len() - NAMED));
    }
    let moved: Vec<String> = quota
        .iter()
        .take(NAMED)
        .map(|q| {
            let n = |s: Option<crate::report::queues::QuotaSide>| {
                s.and_then(|s| s.nominal)
                    .map_or_else(|| "none".to_string(), |n| n.to_string())
            };
            format!(
                "{}{} {} → {}{}",
                q.queue,
                q.flavor
                    .as_deref()
                    .map(|f| format!(" {f}"))
                    .unwrap_or_default(),
                n(q.before),
                n(q.after),
                match (q.becomes_borrowed, q.would_admit) {
                    (Some(b), _) if b > 0 => format!(", {b} admitted GPUs become borrowed"),
                    (_, Some(a)) if a > 0 => format!(", admits {a} queued GPUs"),
                    _ => String::new(),
                }
            )
        })
        .collect();
    if !moved.is_empty() {
        let more = quota.len().saturating_sub(NAMED);
        parts.push(format!(
            "quota moves: {}{}",
            moved.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        ));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// The admission verdicts and quota changes of a check, as tables.
pub fn change_section(d: &mut Doc, c: &crate::report::Check) {
    d.section(
        "Against its queue",
        Table::new(&["workload", "queue", "flavor", ">GPUs", "verdict", "why"]).rows(
            &c.admission,
            |r| {
                vec![
                    r.workload.as_str().into(),
                    r.queue.clone().unwrap_or_default().into(),
                    r.flavor.clone().unwrap_or_default().into(),
                    r.gpus.to_string().into(),
                    Text::new().strong(r.verdict.as_str()),
                    r.why.as_str().into(),
                ]
            },
        ),
        None,
    );
    let side = |s: Option<crate::report::queues::QuotaSide>| match s {
        None => "—".to_string(),
        Some(s) => format!(
            "{}{}{}",
            s.nominal.map_or("?".into(), |n| n.to_string()),
            s.borrowing_limit
                .map(|b| format!(" (borrow ≤ {b})"))
                .unwrap_or_default(),
            s.lending_limit
                .map(|l| format!(" (lend ≤ {l})"))
                .unwrap_or_default()
        ),
    };
    d.section(
        "Quota moved",
        Table::new(&[
            "queue",
            "flavor",
            "before",
            "after",
            ">becomes borrowed",
            ">would admit",
        ])
        .rows(&c.quota, |q| {
            vec![
                format!("{} ({})", q.queue, q.kind.as_str()).into(),
                q.flavor.clone().unwrap_or_default().into(),
                side(q.before).into(),
                side(q.after).into(),
                q.becomes_borrowed
                    .map_or_else(|| "unknown".into(), |n| n.to_string())
                    .into(),
                q.would_admit
                    .map_or_else(|| "unknown".into(), |n| n.to_string())
                    .into(),
            ]
        }),
        None,
    );
}

/// ` Beyond their quota: beta borrows 8 in cq-b (preemptible) — @team-b.`: who to call besides
/// the largest tenants when the fleet is nearly full.
pub fn borrowing(mut t: Text, rows: &[crate::report::queues::BorrowingRow]) -> Text {
    if rows.is_empty() {
        return t;
    }
    t = t.plain(" Beyond their quota");
    for (i, b) in rows.iter().enumerate() {
        t = t.plain(if i == 0 { ": " } else { "; " });
        t = t.strong(b.tenant.as_str()).plain(format!(
            " borrows {} in {}{}",
            b.borrowed,
            b.queue,
            if b.preemptible { " (preemptible)" } else { "" }
        ));
        if !b.contacts.is_empty() {
            t = t.plain(format!(" — {}", b.contacts.join(", ")));
        }
    }
    t.plain(".")
}

/// The queues as metrics: `gpuledger_queue_gpus{queue, kind, flavor, state}` with `state` one of
/// nominal, borrowing_limit, lending_limit, admitted, borrowed, queued (an unset limit, being no
/// limit, has no sample; an unknown figure has none either, and `gpuledger_unknown` names it),
/// and `gpuledger_queue_workloads_queued`. Bounded by the fleet's queues and flavors.
pub fn metrics(out: &mut super::exposition::Exposition, r: &Report) {
    use super::exposition::Family;
    if r.queues.is_empty() {
        return;
    }
    let queued_unknown = r.fleet.unknown.contains_key("gpus.queued") || missing(r, "pods");
    let mut gpus = Family::gauge(
        "gpuledger_queue_gpus",
        "GPUs per admission queue (Kueue ClusterQueue, KAI Queue) and flavor: nominal quota, borrowing_limit and lending_limit (absent: no limit), admitted, borrowed (above nominal), queued (waiting for quota).",
    );
    let mut waiting = Family::gauge(
        "gpuledger_queue_workloads_queued",
        "Workloads waiting for quota per admission queue and flavor.",
    );
    for q in &r.queues {
        let flavor = q.flavor.as_deref().unwrap_or("");
        let labels = |state: &'static str| {
            [
                ("queue", q.queue.clone()),
                ("kind", q.kind.as_str().to_string()),
                ("flavor", flavor.to_string()),
                ("state", state.to_string()),
            ]
        };
        let queued = if queued_unknown { None } else { q.queued };
        for (state, v) in [
            ("nominal", q.nominal),
            ("borrowing_limit", q.borrowing_limit),
            ("lending_limit", q.lending_limit),
            ("admitted", q.admitted),
            ("borrowed", q.borrowed),
            ("queued", queued),
        ] {
            // A limit that is not set is no limit: no sample, and not unknown.
            let unset = v.is_none() && !q.unknown.contains_key(state) && state.ends_with("_limit");
            if unset {
                continue;
            }
            let l = labels(state);
            let l: Vec<(&str, &str)> = l.iter().map(|(k, v)| (*k, v.as_str())).collect();
            gpus.sample(&l, v.map(|a| a.0));
        }
        let l = labels("queued");
        waiting.sample(
            &l[..3]
                .iter()
                .map(|(k, v)| (*k, v.as_str()))
                .collect::<Vec<_>>(),
            q.workloads_queued
                .filter(|_| !queued_unknown)
                .map(|n| n as f64),
        );
    }
    out.push(gpus);
    out.push(waiting);
}
