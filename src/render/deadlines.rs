//! Deadline attainment as blocks: one sentence (how many runs met their deadline, the worst
//! workload), the workloads with their last runs, the tenants folded, and where the runs came from.
//! A workload with no run read shows `unknown` with why, never 0%.

use super::page::{FOLD, percent_whole};
use crate::doc::{Block, Doc, Table, Text};
use crate::report::deadlines::{Attainment, Deadlines, RunOutcome};
use crate::util::date::Timestamp;

/// The section under a level-3 heading: `title` says what it is for the command
/// (`Deadline attainment`, `How the last runs did`).
pub fn section(d: &Deadlines, title: &str) -> Doc {
    let mut doc = Doc::new();
    doc.heading(3, title);
    doc.push(Block::Paragraph(summary(d)));
    for (k, why) in d.unknown.iter() {
        doc.push(Block::Quote(vec![Text::from(format!("{k}: {why}"))]));
    }
    let mut t = Table::new(&[
        "workload",
        "tenant",
        ">runs",
        ">met",
        ">attainment",
        "last runs",
    ]);
    for a in &d.workloads {
        t.row(vec![
            Text::new().code(a.name.as_str()),
            a.tenant.as_deref().unwrap_or("").into(),
            a.runs.to_string().into(),
            a.met.to_string().into(),
            share(a).into(),
            last(a).into(),
        ]);
    }
    doc.push(Block::Table(t));
    // Why each unknown is unknown, once per reason.
    let mut why: std::collections::BTreeMap<&str, Vec<&str>> = std::collections::BTreeMap::new();
    for a in d.workloads.iter().filter(|a| a.attainment.is_none()) {
        if let Some(w) = a.unknown.get("attainment") {
            why.entry(w.as_str()).or_default().push(a.name.as_str());
        }
    }
    for (w, names) in why {
        doc.push(Block::Small(Text::from(format!(
            "Unknown for {}: {w}.",
            names.join(", ")
        ))));
    }
    doc.section(
        "Deadline attainment by tenant",
        Table::new(&["tenant", ">runs", ">met", ">attainment"]).rows(&d.tenants, |a| {
            vec![
                a.name.as_str().into(),
                a.runs.to_string().into(),
                a.met.to_string().into(),
                share(a).into(),
            ]
        }),
        Some(FOLD.min(3)),
    );
    doc
}

/// `5 of 8 runs met their deadline (63%); worst: ml/CronJob/nightly 1 of 4.` with the sources.
pub fn summary(d: &Deadlines) -> Text {
    let runs: u64 = d.workloads.iter().map(|a| a.runs).sum();
    let met: u64 = d.workloads.iter().map(|a| a.met).sum();
    let mut t = if runs == 0 {
        Text::new().strong("Deadline attainment is unknown: no finished run was read.")
    } else {
        let mut t = Text::new().strong(format!(
            "{met} of {runs} run{} met {} deadline ({})",
            if runs == 1 { "" } else { "s" },
            if runs == 1 { "its" } else { "their" },
            percent_whole(met as f64 / runs as f64)
        ));
        if let Some(w) = d
            .workloads
            .iter()
            .find(|a| a.attainment.is_some_and(|x| x < 1.0))
        {
            t = t
                .plain("; worst: ")
                .code(w.name.as_str())
                .plain(format!(" {} of {}", w.met, w.runs));
        }
        t.plain(".")
    };
    if !d.sources.is_empty() {
        t = t.plain(format!(" Runs from {}", d.sources.join(" and ")));
        if let (Some(s), Some(e)) = (&d.window_start, &d.window_end) {
            t = t.plain(format!(", deadlines from {} to {}", human(s), human(e)));
        }
        t = t.plain(".");
    }
    t
}

/// `80% (49–94%)`, or `unknown: why`.
fn share(a: &Attainment) -> String {
    match (a.attainment, a.interval) {
        (Some(x), Some([lo, hi])) => format!(
            "{} ({}–{})",
            percent_whole(x),
            percent_whole(lo),
            percent_whole(hi)
        ),
        (Some(x), None) => percent_whole(x),
        (None, _) => "unknown".into(),
    }
}

/// `late 30m, met, failed`: the last runs, newest first.
fn last(a: &Attainment) -> String {
    a.last
        .iter()
        .map(|r| match (r.outcome, r.late_s) {
            (RunOutcome::Late | RunOutcome::RunningLate, Some(s)) => {
                format!("{} {}", r.outcome, super::page::duration(s))
            }
            (o, _) => o.to_string(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn human(s: &str) -> String {
    Timestamp::parse(s).map_or_else(|_| s.to_string(), Timestamp::human)
}
