//! The pre-merge check as blocks, laid out to be decided on: a failed gate, then one sentence (what
//! changes, for whom, whether it fits, what it routes), one table of the workloads that changed,
//! the public routes it moves, the serving headroom at the head's shape; everything else — per tenant, capacity in full, drift, the
//! configuration, intent — folded, so a comment that has to be cut keeps what decides.

use super::page::{Links, arrow};
use crate::doc::{Alert, Block, Doc, Table, Text};
use crate::report::{ChangeRow, Check, Provenance};
use crate::util::text::count;

/// Drift lists longer than this are summarised inline and listed in full in `Details`.
const INLINE: usize = 10;

/// What became of the shape: the change role by role when reshaped, else the one shape there is.
fn change(c: &ChangeRow) -> String {
    c.change
        .clone()
        .unwrap_or_else(|| arrow(c.shape_base.as_deref(), c.shape_head.as_deref()))
}

/// Files of the app the change touched, named after the manifest, at most this many.
const TOUCHED: usize = 3;

/// The manifest, and for a reshaped workload the files of its app the change touched (the overlay
/// a reviewer should read when the base manifest did not change).
fn manifest(r: &ChangeRow, links: &Links) -> Text {
    let mut t = links.manifest(r.source.as_deref());
    if r.touched.is_empty() {
        return t;
    }
    let lead = if t.is_empty() {
        "changed: "
    } else {
        "; changed: "
    };
    t = t.plain(lead);
    for (i, f) in r.touched.iter().take(TOUCHED).enumerate() {
        if i > 0 {
            t = t.plain(", ");
        }
        t = t.append(links.manifest(Some(f)));
    }
    if r.touched.len() > TOUCHED {
        t = t.plain(format!(" and {} more", r.touched.len() - TOUCHED));
    }
    t
}

/// `+8`, `-16`, or `96 → 112` for a reshaped workload.
fn gpus(c: &ChangeRow) -> String {
    match (c.shape_base.is_some(), c.shape_head.is_some()) {
        (false, _) => format!("+{}", c.gpus_head),
        (_, false) => format!("-{}", c.gpus_base),
        _ => format!("{} → {}", c.gpus_base, c.gpus_head),
    }
}

pub fn check(c: &Check, p: &Provenance, links: &Links) -> Doc {
    let mut d = Doc::new();
    d.heading(2, super::page::title("GPU impact of this change", Some(p)));
    // A failed gate is the verdict: it leads, before any figure.
    let failed: Vec<Text> = c
        .gates
        .iter()
        .filter(|g| g.failed)
        .map(|g| {
            Text::new()
                .strong(
                    Text::new()
                        .plain("Gate ")
                        .code(g.name.as_str())
                        .plain(if g.unknown {
                            " could not be evaluated"
                        } else {
                            " failed"
                        }),
                )
                .plain(format!(": {}", g.why))
        })
        .collect();
    if !failed.is_empty() {
        d.push(Block::Alert {
            kind: Alert::Caution,
            lines: failed,
        });
    }
    super::provenance::lead(
        &mut d,
        Some(p),
        Block::Paragraph(Text::new().strong(super::verdict::sentence(c))),
    );
    if c.delta_unknown.is_some() {
        d.paragraph(Text::new().emph(
            "The tables below leave out the apps that failed to render: what they change is unknown.",
        ));
    }
    // A failure leads: what did not render is said before any table.
    if !c.render_errors.is_empty() {
        d.push(Block::List(
            c.render_errors
                .iter()
                .map(|e| Text::from(format!("render error: {e}")))
                .collect(),
        ));
    }
    let rest = changed(&mut d, c, links);
    super::queues::change_section(&mut d, c);
    // Beside the fit, which counts everything at once: staggered, batch work may still fit.
    if let Some(s) = &c.stagger {
        d.paragraph(
            Text::new()
                .strong("Batch work added")
                .plain(format!(": {s}")),
        );
    }
    super::routes::section(
        &mut d,
        &c.routes,
        c.unknown.get("routes").map(String::as_str),
    );
    super::headroom::change_section(&mut d, &c.headroom);
    if let Some(docs) = &c.docs {
        super::facts::section_for(&mut d, docs, links);
    }
    config(&mut d, c);
    // Everything else a reviewer may want, folded: per tenant, capacity in full, drift.
    let folded = d.blocks.len();
    for (first, plural, rows) in [
        ("tenant", "tenants", &c.tenants),
        ("product line", "product lines", &c.product_lines),
    ] {
        // Without product lines configured, the one "(none)" row says nothing.
        if rows.iter().all(|r| r.name == "(none)") {
            continue;
        }
        // Only what the change moves; the rest is counted.
        let (moved, same): (Vec<_>, Vec<_>) = rows.iter().partition(|r| r.delta != 0);
        if !moved.is_empty() {
            // Who to call is a column only when a moved tenant has a contact; the trend only when
            // a Prometheus gave one.
            let contacts = moved.iter().any(|r| !r.contacts.is_empty());
            let trend = moved.iter().any(|r| r.gpus_per_week.value().is_some());
            let mut headers = vec![first, ">base", ">head", ">delta"];
            if trend {
                headers.push(">GPUs/week");
            }
            if contacts {
                headers.push("contact");
            }
            d.push(Block::Table(Table::new(&headers).rows(moved, |r| {
                let mut row = vec![
                    r.name.as_str().into(),
                    r.gpus_base.to_string().into(),
                    r.gpus_head.to_string().into(),
                    format!("{:+}", r.delta).into(),
                ];
                if trend {
                    row.push(
                        r.gpus_per_week
                            .value()
                            .map_or_else(|| "unknown".into(), |w| format!("{w:+.1}"))
                            .into(),
                    );
                }
                if contacts {
                    row.push(r.contacts.join(", ").into());
                }
                row
            })));
        }
        if !same.is_empty() {
            d.paragraph(Text::new().emph(format!(
                "{} {} unchanged.",
                same.len(),
                if same.len() == 1 {
                    format!("{first} is")
                } else {
                    format!("{plural} are")
                }
            )));
        }
    }
    if let Some(line) = super::tenancy::line(&c.tenant_sources, &c.tenancy) {
        d.paragraph(line);
    }
    let gated = c.gates.iter().any(|g| g.name == "capacity");
    match (&c.capacity, &c.capacity_unknown) {
        (Some(cap), _) => d.paragraph(
            Text::new()
                .strong("Capacity")
                .plain(format!(": {}: ", cap.verdict()))
                .append(match (cap.fits, cap.worse(), gated) {
                    (true, _, _) => Text::from("fits"),
                    (false, true, true) => {
                        Text::new().strong("does not fit, and this change makes it worse")
                    }
                    (false, true, false) => Text::from(
                        "does not fit, and this change makes it worse (a note: the capacity gate is not enabled)",
                    ),
                    (false, false, _) => {
                        Text::from("does not fit, but this change does not make it worse")
                    }
                })
                .plain("."),
        ),
        (None, _) if !c.live => d.paragraph(
            Text::new().emph("No live state was given: drift and capacity were not checked."),
        ),
        (None, why) => d.paragraph(
            Text::new()
                .strong("Capacity unknown")
                .plain(format!(": {}.", why.as_deref().unwrap_or("not computed"))),
        ),
    }
    // Allocated → busy → valuable of the tenants the change moves, when cost inputs were given.
    // Its headroom column: at the head's shape, of the serving workloads the change reshapes.
    if let Some(v) = &c.valuable {
        d.extend(super::cost::headline(
            v,
            Some(&super::headroom::change_as_section(&c.headroom)),
        ));
        d.paragraph(Text::new().emph(
            "Headroom: at the head's shape, of the serving workloads this change reshapes (— where it reshapes none).",
        ));
    }
    if let (true, Some(why)) = (c.live, &c.drift_unknown) {
        d.paragraph(
            Text::new()
                .strong("Drift unknown")
                .plain(format!(": {why}.")),
        );
    }
    let limits: Vec<Text> = c
        .tenant_limits
        .iter()
        .map(|l| {
            let t = Text::from(format!(
                "tenant {}: {} declared, limit {}",
                l.tenant,
                count(l.gpus_head, "GPU"),
                l.limit
            ));
            if l.over {
                t.plain(" — ").strong("over the limit")
            } else {
                t
            }
        })
        .collect();
    if !limits.is_empty() {
        d.push(Block::List(limits));
    }
    let none = Vec::new();
    let drift_lists = [
        ("Drift resolved", c.drift_resolved.as_ref().unwrap_or(&none)),
        (
            "Drift introduced",
            c.drift_introduced.as_ref().unwrap_or(&none),
        ),
    ];
    for (title, ids) in drift_lists {
        match ids.len() {
            0 => {}
            n if n <= INLINE => d.paragraph(
                Text::new()
                    .strong(title)
                    .plain(format!(" ({n}): {}", ids.join(", "))),
            ),
            n => {
                d.paragraph(Text::new().strong(title).plain(format!(" ({n}):")));
                d.push(Block::List(ids.iter().map(Text::from).collect()));
            }
        }
    }
    let more: Vec<Block> = d.blocks.split_off(folded);
    if !more.is_empty() {
        d.push(Block::Details {
            summary: more_summary(c).into(),
            body: more,
        });
    }
    if let Some(rest) = rest {
        d.push(rest);
    }
    intent(&mut d, c, links);
    d
}

/// The summary line of the folded part: what it holds, with the figures that matter.
fn more_summary(c: &Check) -> String {
    let moved = c.tenants.iter().filter(|t| t.delta != 0).count();
    let mut parts = vec![format!(
        "Per tenant ({moved} moved, {} unchanged)",
        c.tenants.len() - moved
    )];
    parts.push(match (&c.capacity, c.live) {
        (Some(_), _) => "capacity".into(),
        (None, false) => "capacity not checked".into(),
        (None, true) => "capacity unknown".into(),
    });
    match (&c.drift_resolved, &c.drift_introduced) {
        (Some(r), Some(i)) => parts.push(format!(
            "drift: resolves {}, introduces {}",
            r.len(),
            i.len()
        )),
        _ if c.live => parts.push("drift unknown".into()),
        _ => {}
    }
    parts.join(", ")
}

/// Changed workloads shown in the opening table; the rest are folded after everything else.
const SHOWN: usize = 10;

/// One table of what changed: every workload the change adds, removes or reshapes (the first
/// [`SHOWN`]; the rest come back folded, to be pushed last).
fn changed(d: &mut Doc, c: &Check, links: &Links) -> Option<Block> {
    let rows: Vec<(&str, &ChangeRow)> = [
        ("added", &c.added),
        ("removed", &c.removed),
        ("reshaped", &c.reshaped),
    ]
    .into_iter()
    .flat_map(|(what, rows)| rows.iter().map(move |r| (what, r)))
    .collect();
    if rows.is_empty() {
        return None;
    }
    let table = |rows: &[(&str, &ChangeRow)]| {
        Table::new(&["workload", "tenant", "change", ">GPUs", "manifest"])
            .rows(rows.iter(), |(what, r)| {
                let shape = if *what == "reshaped" {
                    change(r)
                } else {
                    format!("{what}: {}", change(r))
                };
                vec![
                    r.id().into(),
                    r.tenant.as_str().into(),
                    shape.into(),
                    gpus(r).into(),
                    manifest(r, links),
                ]
            })
            .drop_empty_columns()
    };
    let (shown, rest) = rows.split_at(rows.len().min(SHOWN));
    d.push(Block::Table(table(shown)));
    if rest.is_empty() {
        return None;
    }
    d.paragraph(Text::new().emph(format!(
        "and {} more changed workloads, listed at the end.",
        rest.len()
    )));
    Some(Block::Details {
        summary: format!("{} more changed workloads", rest.len()).into(),
        body: vec![Block::Table(table(rest))],
    })
}

/// What the intent of the added and reshaped workloads lacks or contradicts, by manifest. Workloads
/// that declare no intent at all are one line (a repository that has not adopted intent yet is not
/// a table of the same finding); the rest is a table.
fn intent(outer: &mut Doc, c: &Check, links: &Links) {
    if c.intent.is_empty() {
        return;
    }
    let (missing, rest): (Vec<_>, Vec<_>) = c.intent.iter().partition(|f| f.rule == "missing");
    let mut d = Doc::new();
    if !missing.is_empty() {
        let names: Vec<String> = missing
            .iter()
            .map(|f| format!("{}/{}/{}", f.namespace, f.kind, f.name))
            .collect();
        let shown = names
            .iter()
            .take(INLINE)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ");
        let more = match names.len().saturating_sub(INLINE) {
            0 => String::new(),
            n => format!(" and {n} more"),
        };
        d.paragraph(
            Text::new()
                .strong(format!(
                    "{} {} no intent",
                    count(crate::util::sum::count(names.len()), "workload"),
                    if names.len() == 1 {
                        "declares"
                    } else {
                        "declare"
                    }
                ))
                .plain(format!(
                    " (gpuledger.io/deadline, runtime, interruptible, latency-objective, …): {shown}{more}."
                )),
        );
    }
    if !rest.is_empty() {
        let table = Table::new(&["workload", "cluster", "finding", "manifest"])
            .rows(rest.iter(), |f| {
                vec![
                    format!("{}/{}/{}", f.namespace, f.kind, f.name).into(),
                    f.cluster.as_deref().unwrap_or("").into(),
                    Text::new()
                        .strong(f.rule.as_str())
                        .plain(format!(": {}", f.message)),
                    links.manifest(f.source.as_deref()),
                ]
            })
            .drop_empty_columns();
        d.push(Block::Table(table));
    }
    outer.push(Block::Details {
        summary: format!(
            "Intent: {} without intent, {} other findings",
            missing.len(),
            rest.len()
        )
        .into(),
        body: d.blocks,
    });
}

/// Which configuration the gates applied, and what the change does to `.gpuledger.yaml` (it takes
/// effect only once merged, so a reviewer approves it here: it stays unfolded).
fn config(d: &mut Doc, c: &Check) {
    let r = &c.config;
    if r.changes.is_empty() && r.head_error.is_none() {
        return;
    }
    d.heading(3, "Configuration changes in this pull request");
    d.paragraph(
        Text::new()
            .plain("This check applied ")
            .code(r.applied.as_str())
            .plain("; the changes below take effect once merged:"),
    );
    let mut items: Vec<Text> = r.changes.iter().map(Text::from).collect();
    if let Some(e) = &r.head_error {
        items.push(Text::new().strong("does not parse").plain(format!(": {e}")));
    }
    d.push(Block::List(items));
}
