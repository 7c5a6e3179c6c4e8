//! Serving headroom as people read it: one line of verdicts, then per serving workload the tested
//! capacity at its objective, production's p95 and peak, the headroom and the verdict; below it
//! why each unknown is unknown, what could not be checked against the load test, and the
//! production context (latency now against the objective, queueing, KV cache, preemptions), which
//! is never a capacity claim. For a check, the serving workloads a change reshapes, one line each
//! at the head's shape, and the phrase its opening sentence uses for them.

use crate::doc::{Block, Doc, Table, Text};
use crate::report::{Headroom, HeadroomChange, HeadroomRow, HeadroomVerdict, Report};

/// `gpuledger headroom`: the title, the incomplete banner, the section.
pub fn headroom_doc(r: &Report) -> Doc {
    let mut d = Doc::new();
    d.heading(
        2,
        super::page::title("Serving headroom", r.provenance.as_ref()),
    );
    if let Some(b) = super::page::banner(r) {
        d.push(b);
    }
    match &r.headroom {
        Some(h) => {
            let mut body = body(h).blocks.into_iter();
            if let Some(first) = body.next() {
                super::provenance::lead(&mut d, r.provenance.as_ref(), first);
            }
            d.blocks.extend(body);
        }
        None => d.paragraph("No serving workloads."),
    }
    d
}

/// The section of `inventory`: under its own heading.
pub fn section(h: &Headroom) -> Doc {
    let mut d = Doc::new();
    d.heading(3, "Serving headroom");
    d.extend(body(h));
    d
}

/// The verdicts in one line: `3 serving workloads: 1 over, 1 fits, 1 unknown`.
pub fn summary(h: &Headroom) -> String {
    let n = h.workloads.len();
    if n == 0 {
        return "No serving workloads.".into();
    }
    let count = |v: HeadroomVerdict| h.workloads.iter().filter(|w| w.verdict == v).count();
    let parts: Vec<String> = [
        HeadroomVerdict::Over,
        HeadroomVerdict::NearCapacity,
        HeadroomVerdict::Fits,
        HeadroomVerdict::Unknown,
    ]
    .into_iter()
    .filter(|v| count(*v) > 0)
    .map(|v| format!("{} {v}", count(v)))
    .collect();
    format!(
        "{n} serving workload{}: {}.",
        if n == 1 { "" } else { "s" },
        parts.join(", ")
    )
}

fn body(h: &Headroom) -> Doc {
    let mut d = Doc::new();
    d.paragraph(Text::new().strong(summary(h)));
    if h.workloads.is_empty() {
        return d;
    }
    let source = match (&h.production_source, &h.production_unknown) {
        (Some(s), _) => format!("Production from {s}: {}.", h.rate_kind),
        (None, Some(why)) => format!("Production unknown: {why}."),
        (None, None) => "Production unknown.".into(),
    };
    d.paragraph(format!(
        "Tested capacity: the highest sustained rate of a load-test run that met the objective with at most {} of requests failed. Headroom = 1 − production p95 / capacity; near capacity below {}. {source}",
        super::page::percent_trimmed(h.error_limit),
        super::page::percent_trimmed(h.near_capacity)
    ));
    let table = Table::new(&[
        "workload",
        ">tested req/s",
        ">p95 req/s",
        ">peak req/s",
        ">headroom",
        "verdict",
    ])
    .rows(&h.workloads, |w| {
        vec![
            Text::from(id(w)),
            rate(w.tested_rps).into(),
            rate(w.production_p95_rps).into(),
            rate(w.production_peak_rps).into(),
            w.headroom
                .map_or_else(|| "unknown".into(), super::page::percent_trimmed)
                .into(),
            w.verdict.to_string().into(),
        ]
    });
    d.push(Block::Table(table));
    let mut notes = Vec::new();
    for w in &h.workloads {
        if let Some(why) = w.unknown.get("headroom") {
            notes.push(Text::from(format!("{}: {why}.", id(w))));
        }
        if let Some(s) = &w.scaled {
            notes.push(Text::from(format!("{}: {s}.", id(w))));
        }
        if w.tested_rps.is_some() && !w.unverified.is_empty() {
            notes.push(Text::from(format!(
                "{}: not checked against the load test: {}.",
                id(w),
                w.unverified.join("; ")
            )));
        }
    }
    if !notes.is_empty() {
        d.push(Block::List(notes));
    }
    let context: Vec<&HeadroomRow> = h
        .workloads
        .iter()
        .filter(|w| w.production_p95_rps.is_some())
        .collect();
    if !context.is_empty() {
        let t = Table::new(&[
            "workload",
            "latency now vs objective",
            ">queued",
            ">KV p95",
            ">preempt/min",
        ])
        .rows(context, |w| {
            vec![
                Text::from(id(w)),
                latency(w).into(),
                w.context
                    .queue_share
                    .map_or_else(|| "unknown".into(), super::page::percent_trimmed)
                    .into(),
                w.context
                    .kv_cache_p95
                    .map_or_else(|| "unknown".into(), super::page::percent_trimmed)
                    .into(),
                w.context
                    .preemptions_per_min
                    .map_or_else(|| "unknown".into(), |p| format!("{p:.1}"))
                    .into(),
            ]
        });
        d.section("Production context (not capacity)", t, None);
    }
    d
}

fn id(w: &HeadroomRow) -> String {
    format!("{}/{}/{}", w.namespace, w.kind, w.name)
}

fn rate(r: Option<f64>) -> String {
    r.map_or_else(|| "unknown".into(), |r| format!("{r:.2}"))
}

/// `ttft_p95 420 ms ≤ 500 ✓, itl_p95 unknown`, or the p95s when there is no objective.
fn latency(w: &HeadroomRow) -> String {
    if w.latency.is_empty() {
        let ms = |x: Option<f64>| x.map_or_else(|| "unknown".into(), |v| format!("{v:.0}ms"));
        return format!(
            "ttft_p95 {}, itl_p95 {} (no objective)",
            ms(w.context.ttft_p95_ms),
            ms(w.context.itl_p95_ms)
        );
    }
    w.latency
        .iter()
        .map(|l| {
            let (metric, max) = l.bound.split_once("<=").unwrap_or((l.bound.as_str(), ""));
            match (l.now_ms, l.met) {
                (Some(n), Some(true)) => format!("{metric} {n:.0}ms ≤ {max}"),
                (Some(n), _) => format!("{metric} {n:.0}ms > {max}"),
                (None, _) => format!("{metric} unknown (≤ {max})"),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The verdicts at the head's shape in a few words, for the check's opening sentence:
/// `serving headroom at the head's shape: 1 over, 1 fits`; `None` when the change reshapes no
/// serving workload.
pub fn change_phrase(rows: &[HeadroomChange]) -> Option<String> {
    if rows.is_empty() {
        return None;
    }
    let count = |v: HeadroomVerdict| rows.iter().filter(|w| w.verdict == v).count();
    let parts: Vec<String> = [
        HeadroomVerdict::Over,
        HeadroomVerdict::NearCapacity,
        HeadroomVerdict::Fits,
        HeadroomVerdict::Unknown,
    ]
    .into_iter()
    .filter(|v| count(*v) > 0)
    .map(|v| format!("{} {v}", count(v)))
    .collect();
    Some(format!(
        "serving headroom at the head's shape: {}",
        parts.join(", ")
    ))
}

/// A check's serving headroom at the head's shape: one line per serving workload the change
/// reshapes, its verdict first.
pub fn change_section(d: &mut Doc, rows: &[HeadroomChange]) {
    if rows.is_empty() {
        return;
    }
    d.heading(3, "Serving headroom at the head's shape");
    let lines = rows
        .iter()
        .map(|r| {
            let rest = r
                .summary
                .strip_prefix(&format!("{}: ", r.workload))
                .unwrap_or(&r.summary);
            let mut t = Text::new()
                .strong(r.verdict.to_string())
                .plain(" ")
                .code(r.workload.as_str())
                .plain(format!(": {rest}"));
            if r.tested_rps.is_some() && !r.unverified.is_empty() {
                t = t.plain(format!(
                    "; not checked against the load test: {}",
                    r.unverified.join("; ")
                ));
            }
            t.plain(".")
        })
        .collect();
    d.push(Block::List(lines));
}

/// The check's reshaped serving workloads as a headroom section, for the headroom column of
/// allocated → busy → valuable.
pub fn change_as_section(rows: &[HeadroomChange]) -> Headroom {
    Headroom {
        workloads: rows
            .iter()
            .map(|r| HeadroomRow {
                namespace: r.namespace.clone(),
                kind: r.kind.clone(),
                name: r.name.clone(),
                tenant: r.tenant.clone(),
                headroom: r.headroom,
                verdict: r.verdict,
                ..HeadroomRow::default()
            })
            .collect(),
        ..Headroom::default()
    }
}
