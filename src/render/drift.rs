//! Drift as blocks: the one-line summary first, then each category largest first, each changed
//! workload's diff folded, the expired acceptance rules, and the coverage per tenant.

use super::inventory::FOLD;
use super::percent;
use crate::doc::{Block, Doc, Table, Text};
use crate::report::{Drift, DriftCategory, DriftRow};

/// Rows of an in-sync list a terminal shows.
const TERMINAL_IN_SYNC: usize = 25;

fn categories(d: &Drift) -> [(&'static str, &[DriftRow], bool); 5] {
    [
        (
            "Unmanaged: live GPU workloads with no match in Git",
            &d.unmanaged,
            false,
        ),
        ("Missing: in Git, not live", &d.missing, false),
        ("Changed: GPU shape differs", &d.changed, false),
        ("Accepted drift", &d.accepted, false),
        // In-sync workloads are the quiet majority: always folded.
        ("In sync", &d.in_sync, true),
    ]
}

fn shapes(r: &DriftRow) -> String {
    match (&r.git_shape, &r.live_shape) {
        (Some(g), Some(l)) if g == l => g.clone(),
        (Some(g), Some(l)) => format!("git: {g} → live: {l}"),
        (Some(g), None) => format!("git: {g}"),
        (None, Some(l)) => format!("live: {l}"),
        (None, None) => String::new(),
    }
}

fn note(r: &DriftRow) -> String {
    let mut n = Vec::new();
    if let Some(rule) = &r.rule {
        n.push(format!(
            "accepted {}: {}{}{}",
            r.accepted_as.map_or("", DriftCategory::as_str),
            rule.reason,
            rule.owner
                .as_deref()
                .map(|o| format!(" ({o})"))
                .unwrap_or_default(),
            rule.expires
                .as_deref()
                .map(|e| format!(", until {e}"))
                .unwrap_or_default()
        ));
    }
    if r.autoscaled {
        n.push("autoscaled: replicas not compared".into());
    }
    if let Some(t) = &r.tracked_by {
        n.push(format!("tracked by {t}"));
    }
    n.join("; ")
}

/// `p`: the report's provenance when drift is the report's title, `None` as a section.
pub fn drift(d: &Drift, p: Option<&crate::report::Provenance>) -> Doc {
    let mut doc = Doc::new();
    doc.heading(2, super::provenance::title("Drift against Git", p));
    doc.extend(super::provenance::lines(p));
    doc.paragraph(Text::new().strong(d.summary.as_str()));
    doc.paragraph(
        Text::new()
            .plain("Git at ")
            .code(d.desired_at.as_str())
            .plain(if d.desired_incomplete {
                " — some apps failed to render (see gpuledger render)."
            } else {
                "."
            }),
    );
    for (title, rows, always_fold) in categories(d) {
        if rows.is_empty() {
            continue;
        }
        let mut t = Table::new(&[
            "workload",
            "tenant",
            ">live GPUs",
            ">git GPUs",
            "shape",
            "app",
            "note",
        ])
        .rows(rows, |r| {
            vec![
                r.id().into(),
                r.tenant.as_str().into(),
                r.gpus.to_string().into(),
                r.gpus_git.to_string().into(),
                shapes(r).into(),
                r.app.as_deref().unwrap_or("").into(),
                note(r).into(),
            ]
        });
        let title = format!("{title} ({})", rows.len());
        if always_fold || rows.len() > FOLD {
            if always_fold {
                t = t.limit(TERMINAL_IN_SYNC);
            }
            doc.push(Block::Details {
                summary: title.into(),
                body: vec![Block::Table(t)],
            });
        } else {
            doc.heading(3, title);
            doc.push(Block::Table(t));
        }
    }
    for r in d.changed.iter().chain(d.accepted.iter()) {
        if let Some(diff) = &r.diff {
            doc.push(Block::Details {
                summary: format!("Diff of {}", r.id()).into(),
                body: vec![Block::Fence {
                    info: "diff".into(),
                    lines: diff.lines().map(str::to_string).collect(),
                }],
            });
        }
    }
    let expired: Vec<Text> = d
        .expired
        .iter()
        .map(|e| {
            Text::new()
                .plain("Expired acceptance rule ")
                .code(e.rule.as_str())
                .plain(format!(
                    " ({}, expired {}) hides nothing now{}.",
                    e.reason,
                    e.expired,
                    if e.would_match.is_empty() {
                        String::new()
                    } else {
                        format!("; it would match {}", e.would_match.join(", "))
                    }
                ))
        })
        .collect();
    if !expired.is_empty() {
        doc.push(Block::Quote(expired));
    }
    if !d.coverage_by_tenant.is_empty() {
        doc.push(Block::Details {
            summary: "Coverage by tenant".into(),
            body: vec![Block::Table(
                Table::new(&["tenant", ">requested", ">managed", ">coverage"]).rows(
                    &d.coverage_by_tenant,
                    |c| {
                        vec![
                            c.tenant.as_str().into(),
                            c.gpus_requested.to_string().into(),
                            c.gpus_managed.to_string().into(),
                            percent(c.coverage).into(),
                        ]
                    },
                ),
            )],
        });
    }
    doc
}
