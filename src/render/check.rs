//! Rendering the pre-merge check: the summary line, the tenant delta table, then the workloads
//! added, removed and reshaped, the drift the change resolves and introduces, and the gates.

use std::fmt::Write;

use super::arrow;
use super::markdown::{code, esc};
use super::text::Table;
use crate::report::{ChangeRow, Check};

fn shapes(c: &ChangeRow) -> String {
    arrow(c.shape_base.as_deref(), c.shape_head.as_deref())
}

pub fn table(c: &Check) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", c.summary);
    let _ = writeln!(out, "base {} → head {}", c.base_at, c.head_at);
    if !c.tenants.is_empty() {
        out.push_str("\nTenants\n");
        let mut t = Table::new(&["tenant", ">base", ">head", ">delta"]);
        for r in &c.tenants {
            t.row(vec![
                r.name.clone(),
                r.gpus_base.to_string(),
                r.gpus_head.to_string(),
                format!("{:+}", r.delta),
            ]);
        }
        t.render(&mut out);
    }
    for (title, rows) in [
        ("Added", &c.added),
        ("Removed", &c.removed),
        ("Reshaped", &c.reshaped),
    ] {
        if rows.is_empty() {
            continue;
        }
        let _ = writeln!(out, "\n{title} ({})", rows.len());
        let mut t = Table::new(&["workload", "tenant", "app", "shape", ">GPUs"]);
        for r in rows.iter() {
            t.row(vec![
                r.id(),
                r.tenant.clone(),
                r.app.clone(),
                shapes(r),
                format!("{} → {}", r.gpus_base, r.gpus_head),
            ]);
        }
        t.render(&mut out);
    }
    for (title, ids) in [
        ("Drift resolved", &c.drift_resolved),
        ("Drift introduced", &c.drift_introduced),
    ] {
        if !ids.is_empty() {
            let _ = writeln!(out, "\n{title}: {}", ids.join(", "));
        }
    }
    if let Some(cap) = &c.capacity {
        let _ = writeln!(
            out,
            "\nCapacity: {} GPUs projected (head {} + unmanaged {}) against {} placeable: {}",
            cap.projected,
            c.gpus_head,
            cap.unmanaged_live,
            cap.placeable,
            if cap.fits { "fits" } else { "does NOT fit" }
        );
    }
    for e in &c.render_errors {
        let _ = writeln!(out, "render error: {e}");
    }
    for g in &c.gates {
        let _ = writeln!(
            out,
            "gate {}: {} ({})",
            g.name,
            if g.failed { "FAILED" } else { "ok" },
            g.why
        );
    }
    out
}

/// Summary, tenant (and product-line) deltas, capacity and gates first; the per-workload
/// `<details>` after them, so a comment that has to be cut keeps what decides.
pub fn markdown(c: &Check) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "## GPU impact of this change\n\n**{}**\n\nbase `{}` → head `{}`\n",
        esc(&c.summary),
        code(&c.base_at),
        code(&c.head_at)
    );
    for (first, rows) in [("tenant", &c.tenants), ("product line", &c.product_lines)] {
        // Without product lines configured, the one "(none)" row says nothing.
        if rows.iter().all(|r| r.name == "(none)") {
            continue;
        }
        let _ = writeln!(
            out,
            "| {first} | base | head | delta |\n|---|---:|---:|---:|"
        );
        for r in rows.iter() {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {:+} |",
                esc(&r.name),
                r.gpus_base,
                r.gpus_head,
                r.delta
            );
        }
        out.push('\n');
    }
    match &c.capacity {
        Some(cap) => {
            let _ = writeln!(
                out,
                "**Capacity**: {} GPUs projected (head {} + {} held by unmanaged workloads) against {} placeable: {}.\n",
                cap.projected,
                c.gpus_head,
                cap.unmanaged_live,
                cap.placeable,
                if cap.fits { "fits" } else { "**does not fit**" }
            );
        }
        None => out.push_str("_No live state was given: drift and capacity were not checked._\n\n"),
    }
    for l in &c.tenant_limits {
        let _ = writeln!(
            out,
            "- tenant {}: {} GPUs declared, limit {}{}",
            esc(&l.tenant),
            l.gpus_head,
            l.limit,
            if l.over {
                " — **over the limit**"
            } else {
                ""
            }
        );
    }
    if !c.tenant_limits.is_empty() {
        out.push('\n');
    }
    let drift_lists = [
        ("Drift resolved", &c.drift_resolved),
        ("Drift introduced", &c.drift_introduced),
    ];
    for (title, ids) in drift_lists {
        match ids.len() {
            0 => {}
            n if n <= INLINE => {
                let _ = writeln!(out, "**{title}** ({n}): {}\n", esc(&ids.join(", ")));
            }
            n => {
                let _ = writeln!(
                    out,
                    "**{title}** ({n}): {} and {} more (listed below)\n",
                    esc(&ids[..INLINE].join(", ")),
                    n - INLINE
                );
            }
        }
    }
    for e in &c.render_errors {
        let _ = writeln!(out, "- render error: {}", esc(e));
    }
    if !c.render_errors.is_empty() {
        out.push('\n');
    }
    for g in c.gates.iter().filter(|g| g.failed) {
        let _ = writeln!(out, "> **Gate `{}` failed**: {}\n", g.name, esc(&g.why));
    }
    for (title, rows) in [
        ("Added", &c.added),
        ("Removed", &c.removed),
        ("Reshaped", &c.reshaped),
    ] {
        if rows.is_empty() {
            continue;
        }
        let _ = writeln!(
            out,
            "<details><summary>{title} ({})</summary>\n",
            rows.len()
        );
        out.push_str(
            "| workload | tenant | app | shape | GPUs | manifest |\n|---|---|---|---|---:|---|\n",
        );
        for r in rows.iter() {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} → {} | {} |",
                esc(&r.id()),
                esc(&r.tenant),
                esc(&r.app),
                esc(&shapes(r)),
                r.gpus_base,
                r.gpus_head,
                r.source.as_deref().map(esc).unwrap_or_default()
            );
        }
        out.push_str("\n</details>\n\n");
    }
    for (title, ids) in drift_lists {
        if ids.len() > INLINE {
            let _ = writeln!(out, "<details><summary>{title} ({})</summary>\n", ids.len());
            for id in ids.iter() {
                let _ = writeln!(out, "- {}", esc(id));
            }
            out.push_str("\n</details>\n\n");
        }
    }
    out
}

/// Drift lists longer than this are summarised inline and listed in full in `<details>`.
const INLINE: usize = 10;
