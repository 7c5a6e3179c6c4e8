//! Drift as blocks: the one-line summary first, then each category largest first with the columns
//! that say something for it (an unmanaged workload has no app and no Git shape; a changed one says
//! what changed) and the next step, each changed workload's diff folded, the expired acceptance
//! rules, and the coverage per tenant.

use super::page::{FOLD, Links, percent};
use crate::doc::{Block, Doc, Table, Text};
use crate::report::{Drift, DriftCategory, DriftRow, Provenance};
use crate::util::text::count;

/// Rows of an in-sync list a terminal shows.
const TERMINAL_IN_SYNC: usize = 25;

/// One drift category as a reader meets it.
struct Category<'a> {
    title: &'static str,
    rows: &'a [DriftRow],
    /// In-sync workloads are the quiet majority: always folded.
    fold: bool,
    /// What to do about a row of this category.
    next: Option<fn() -> Text>,
    table: fn(&[DriftRow], &Links) -> Table,
}

fn categories(d: &Drift) -> [Category<'_>; 7] {
    [
        // What could not be judged leads.
        Category {
            title: "Unknown: applied by an app that failed to render",
            rows: &d.unknown,
            fold: false,
            next: Some(|| {
                Text::new()
                    .plain("Next step: fix the app's render error (")
                    .code("gpuledger render")
                    .plain(" names it); until then Git's side of these workloads is unknown.")
            }),
            table: unknown,
        },
        Category {
            title: "Unmanaged: live GPU workloads with no match in Git",
            rows: &d.unmanaged,
            fold: false,
            next: Some(|| {
                Text::new()
                    .plain("Next step: adopt each in Git (add its manifest to an app), or accept it in ")
                    .code(".gpuledger.yaml")
                    .plain(" with a reason, an owner and an expiry — ")
                    .code("gpuledger drift --suggest-accept")
                    .plain(" writes the rules to start from.")
            }),
            table: unmanaged,
        },
        Category {
            title: "Missing: in Git, not live",
            rows: &d.missing,
            fold: false,
            next: Some(|| {
                Text::from(
                    "Next step: sync the app, or remove the manifest from Git if the workload is parked on purpose.",
                )
            }),
            table: missing,
        },
        Category {
            title: "Changed: GPU shape differs",
            rows: &d.changed,
            fold: false,
            next: Some(|| {
                Text::from(
                    "Next step: sync the app to restore Git's shape, or commit the live shape to Git if it is the right one.",
                )
            }),
            table: changed,
        },
        Category {
            title: "Queued: in Git's shape, waiting for queue quota",
            rows: &d.queued,
            fold: false,
            next: None,
            table: in_sync,
        },
        Category {
            title: "Accepted drift",
            rows: &d.accepted,
            fold: false,
            next: None,
            table: accepted,
        },
        Category {
            title: "In sync",
            rows: &d.in_sync,
            fold: true,
            next: None,
            table: in_sync,
        },
    ]
}

fn unmanaged(rows: &[DriftRow], _: &Links) -> Table {
    Table::new(&["workload", "tenant", ">GPUs", "shape", "age", "note"])
        .rows(rows, |r| {
            vec![
                r.id().into(),
                r.tenant.as_str().into(),
                r.gpus.to_string().into(),
                r.live_shape.as_deref().unwrap_or("").into(),
                age(r).into(),
                note(r).into(),
            ]
        })
        .drop_empty_columns()
}

fn unknown(rows: &[DriftRow], _: &Links) -> Table {
    Table::new(&["workload", "tenant", ">GPUs", "shape", "app"])
        .rows(rows, |r| {
            vec![
                r.id().into(),
                r.tenant.as_str().into(),
                r.gpus.to_string().into(),
                r.live_shape.as_deref().unwrap_or("").into(),
                r.app.as_deref().unwrap_or("").into(),
            ]
        })
        .drop_empty_columns()
}

fn missing(rows: &[DriftRow], links: &Links) -> Table {
    Table::new(&[
        "workload",
        "tenant",
        ">Git GPUs",
        "shape",
        "app",
        "manifest",
        "note",
    ])
    .rows(rows, |r| {
        vec![
            r.id().into(),
            r.tenant.as_str().into(),
            super::page::count(r.gpus_git).into(),
            r.git_shape.as_deref().unwrap_or("").into(),
            r.app.as_deref().unwrap_or("").into(),
            links.manifest(r.git_source.as_deref()),
            note(r).into(),
        ]
    })
    .drop_empty_columns()
}

fn changed(rows: &[DriftRow], links: &Links) -> Table {
    Table::new(&[
        "workload",
        "tenant",
        ">Git GPUs",
        ">live GPUs",
        "Git → live",
        "app",
        "manifest",
        "note",
    ])
    .rows(rows, |r| {
        vec![
            r.id().into(),
            r.tenant.as_str().into(),
            super::page::count(r.gpus_git).into(),
            r.gpus.to_string().into(),
            r.change.clone().unwrap_or_else(|| shapes(r)).into(),
            r.app.as_deref().unwrap_or("").into(),
            links.manifest(r.git_source.as_deref()),
            note(r).into(),
        ]
    })
    .drop_empty_columns()
}

fn accepted(rows: &[DriftRow], _: &Links) -> Table {
    Table::new(&["workload", "tenant", ">live GPUs", ">Git GPUs", "as", "why"])
        .rows(rows, |r| {
            vec![
                r.id().into(),
                r.tenant.as_str().into(),
                r.gpus.to_string().into(),
                super::page::count(r.gpus_git).into(),
                r.accepted_as.map_or("", DriftCategory::as_str).into(),
                note(r).into(),
            ]
        })
        .drop_empty_columns()
}

fn in_sync(rows: &[DriftRow], _: &Links) -> Table {
    Table::new(&["workload", "tenant", ">GPUs", "shape", "app", "note"])
        .rows(rows, |r| {
            vec![
                r.id().into(),
                r.tenant.as_str().into(),
                r.gpus.to_string().into(),
                shapes(r).into(),
                r.app.as_deref().unwrap_or("").into(),
                note(r).into(),
            ]
        })
        .drop_empty_columns()
        .limit(TERMINAL_IN_SYNC)
}

fn shapes(r: &DriftRow) -> String {
    match (&r.git_shape, &r.live_shape) {
        (Some(g), Some(l)) if g == l => g.clone(),
        (Some(g), Some(l)) => format!("Git: {g} → live: {l}"),
        (Some(g), None) => g.clone(),
        (None, Some(l)) => l.clone(),
        (None, None) => String::new(),
    }
}

/// `12 days`, `today`, or nothing when the creation time is not known.
fn age(r: &DriftRow) -> String {
    match r.age_days {
        Some(0) => "today".into(),
        Some(n) => count(u64::try_from(n).unwrap_or(0), "day"),
        None => String::new(),
    }
}

fn note(r: &DriftRow) -> String {
    let mut n = Vec::new();
    if let Some(rule) = &r.rule {
        n.push(format!(
            "{}{}{}",
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
    if let Some(s) = r.queue_state {
        n.push(
            match s {
                crate::report::queues::QueueState::Queued => "waits for queue quota",
                crate::report::queues::QueueState::Evicted => "evicted by Kueue, waits again",
                crate::report::queues::QueueState::Preempted => "preempted, waits again",
            }
            .into(),
        );
    }
    if r.autoscaled {
        n.push("autoscaled: replicas not compared".into());
    }
    if let Some(t) = &r.tracked_by {
        n.push(format!("tracked by {t}"));
    }
    if !r.ambiguous.is_empty() {
        n.push(format!(
            "ambiguous in Git: applied by {} (compared with the first)",
            r.ambiguous.join(" and ")
        ));
    }
    n.join("; ")
}

/// The drift section: its heading, the summary, and the categories. `p`: the report's provenance
/// when drift is the report's title, `None` as a section.
/// `banner`: the INCOMPLETE alert of a report whose title this is.
pub fn drift(d: &Drift, links: &Links, p: Option<&Provenance>, banner: Option<Block>) -> Doc {
    let mut doc = Doc::new();
    doc.heading(2, super::page::title("Drift against Git", p));
    if let Some(b) = banner {
        doc.push(b);
    }
    super::provenance::lead(
        &mut doc,
        p,
        Block::Paragraph(Text::new().strong(d.summary.as_str())),
    );
    body(&mut doc, d, links, p);
    doc
}

/// Everything under the summary: where Git was read (unless the provenance line said it), the
/// categories, diffs, expired rules and coverage.
pub fn body(doc: &mut Doc, d: &Drift, links: &Links, p: Option<&Provenance>) {
    let said = p.is_some_and(|p| !p.git.is_empty());
    if !said || d.desired_incomplete {
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
    }
    for c in categories(d) {
        if c.rows.is_empty() {
            continue;
        }
        let t = (c.table)(c.rows, links);
        let title = format!("{} ({})", c.title, c.rows.len());
        let mut blocks = vec![Block::Table(t)];
        if let Some(next) = c.next {
            blocks.push(Block::Paragraph(Text::new().emph(next())));
        }
        if c.fold || c.rows.len() > FOLD {
            doc.push(Block::Details {
                summary: title.into(),
                body: blocks,
            });
        } else {
            doc.heading(3, title);
            for b in blocks {
                doc.push(b);
            }
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
}
