//! The pre-merge check as blocks: the summary, the tenant (and product-line) deltas, capacity,
//! limits, drift and gates first; the per-workload lists folded after them, so a comment that has
//! to be cut keeps what decides.

use super::arrow;
use crate::doc::{Block, Doc, Table, Text};
use crate::report::{ChangeRow, Check, Provenance};

/// Drift lists longer than this are summarised inline and listed in full in `Details`.
const INLINE: usize = 10;

fn shapes(c: &ChangeRow) -> String {
    arrow(c.shape_base.as_deref(), c.shape_head.as_deref())
}

pub fn check(c: &Check, p: &Provenance) -> Doc {
    let mut d = Doc::new();
    d.heading(
        2,
        super::provenance::title("GPU impact of this change", Some(p)),
    );
    d.extend(super::provenance::lines(Some(p)));
    d.paragraph(Text::new().strong(c.summary.as_str()));
    if c.delta_unknown.is_some() {
        d.paragraph(Text::new().emph(
            "The tables below leave out the apps that failed to render: what they change is unknown.",
        ));
    }
    for (first, rows) in [("tenant", &c.tenants), ("product line", &c.product_lines)] {
        // Without product lines configured, the one "(none)" row says nothing.
        if rows.iter().all(|r| r.name == "(none)") {
            continue;
        }
        d.push(Block::Table(
            Table::new(&[first, ">base", ">head", ">delta"]).rows(rows.iter(), |r| {
                vec![
                    r.name.as_str().into(),
                    r.gpus_base.to_string().into(),
                    r.gpus_head.to_string().into(),
                    format!("{:+}", r.delta).into(),
                ]
            }),
        ));
    }
    match (&c.capacity, &c.capacity_unknown) {
        (Some(cap), _) => d.paragraph(
            Text::new()
                .strong("Capacity")
                .plain(format!(
                    ": head {} GPUs + {} held by unmanaged workloads: {}: ",
                    c.gpus_head,
                    cap.unmanaged_live,
                    cap.verdict()
                ))
                .append(match (cap.fits, cap.projected > cap.base_projected) {
                    (true, _) => Text::from("fits"),
                    (false, true) => {
                        Text::new().strong("does not fit, and this change makes it worse")
                    }
                    (false, false) => {
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
                "tenant {}: {} GPUs declared, limit {}",
                l.tenant, l.gpus_head, l.limit
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
            n => d.paragraph(Text::new().strong(title).plain(format!(
                " ({n}): {} and {} more (listed below)",
                ids.iter().take(INLINE).cloned().collect::<Vec<_>>().join(", "),
                n - INLINE
            ))),
        }
    }
    if !c.render_errors.is_empty() {
        d.push(Block::List(
            c.render_errors
                .iter()
                .map(|e| Text::from(format!("render error: {e}")))
                .collect(),
        ));
    }
    for g in c.gates.iter().filter(|g| g.failed) {
        let verdict = if g.unknown {
            " could not be evaluated"
        } else {
            " failed"
        };
        d.push(Block::Quote(vec![
            Text::new()
                .strong(
                    Text::new()
                        .plain("Gate ")
                        .code(g.name.as_str())
                        .plain(verdict),
                )
                .plain(format!(": {}", g.why)),
        ]));
    }
    config(&mut d, c);
    for (title, rows) in [
        ("Added", &c.added),
        ("Removed", &c.removed),
        ("Reshaped", &c.reshaped),
    ] {
        if rows.is_empty() {
            continue;
        }
        d.push(Block::Details {
            summary: format!("{title} ({})", rows.len()).into(),
            body: vec![Block::Table(
                Table::new(&["workload", "tenant", "app", "shape", ">GPUs", "manifest"]).rows(
                    rows.iter(),
                    |r| {
                        vec![
                            r.id().into(),
                            r.tenant.as_str().into(),
                            r.app.as_str().into(),
                            shapes(r).into(),
                            format!("{} → {}", r.gpus_base, r.gpus_head).into(),
                            r.source.as_deref().unwrap_or("").into(),
                        ]
                    },
                ),
            )],
        });
    }
    for (title, ids) in drift_lists {
        if ids.len() > INLINE {
            d.push(Block::Details {
                summary: format!("{title} ({})", ids.len()).into(),
                body: vec![Block::List(ids.iter().map(Text::from).collect())],
            });
        }
    }
    d
}

/// Which configuration the gates applied, and what the change does to `.gpuledger.yaml` (it takes
/// effect only once merged, so a reviewer approves it here).
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
