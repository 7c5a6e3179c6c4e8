//! Rendering drift: the one-line summary first, then each category largest first, and in markdown
//! each changed workload's diff folded into `<details>`.

use std::fmt::Write;

use super::markdown::{code, esc};
use super::percent;
use super::text::Table;
use crate::report::{Drift, DriftRow};

const CATEGORIES: [(&str, &str); 5] = [
    (
        "unmanaged",
        "Unmanaged: live GPU workloads with no match in Git",
    ),
    ("missing", "Missing: in Git, not live"),
    ("changed", "Changed: GPU shape differs"),
    ("accepted", "Accepted drift"),
    ("in_sync", "In sync"),
];

fn rows<'a>(d: &'a Drift, category: &str) -> &'a [DriftRow] {
    match category {
        "unmanaged" => &d.unmanaged,
        "missing" => &d.missing,
        "changed" => &d.changed,
        "accepted" => &d.accepted,
        _ => &d.in_sync,
    }
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
            r.accepted_as.as_deref().unwrap_or(""),
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

pub fn table(d: &Drift) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", d.summary);
    let _ = writeln!(
        out,
        "Git at {}{}",
        d.desired_at,
        if d.desired_incomplete {
            " (some apps failed to render: see `gpuledger render`)"
        } else {
            ""
        }
    );
    for (cat, title) in CATEGORIES {
        let rows = rows(d, cat);
        if rows.is_empty() || cat == "in_sync" {
            continue;
        }
        let _ = writeln!(out, "\n{title} ({})", rows.len());
        let mut t = Table::new(&[
            "workload",
            "tenant",
            ">live GPUs",
            ">git GPUs",
            "shape",
            "app",
            "note",
        ]);
        for r in rows {
            t.row(vec![
                r.id(),
                r.tenant.clone(),
                r.gpus.to_string(),
                r.gpus_git.to_string(),
                shapes(r),
                r.app.clone().unwrap_or_default(),
                note(r),
            ]);
        }
        t.render(&mut out);
    }
    let _ = writeln!(out, "\nIn sync: {} workloads", d.in_sync.len());
    for e in &d.expired {
        let _ = writeln!(
            out,
            "expired acceptance rule {} ({}, expired {}): hides nothing now{}",
            e.rule,
            e.reason,
            e.expired,
            if e.would_match.is_empty() {
                String::new()
            } else {
                format!("; would match {}", e.would_match.join(", "))
            }
        );
    }
    if !d.coverage_by_tenant.is_empty() {
        out.push_str("\nCoverage by tenant\n");
        let mut t = Table::new(&["tenant", ">requested", ">managed", ">coverage"]);
        for c in &d.coverage_by_tenant {
            t.row(vec![
                c.tenant.clone(),
                c.gpus_requested.to_string(),
                c.gpus_managed.to_string(),
                percent(c.coverage),
            ]);
        }
        t.render(&mut out);
    }
    out
}

pub fn markdown(d: &Drift) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "## Drift against Git\n\n**{}**\n", esc(&d.summary));
    let _ = writeln!(
        out,
        "Git at `{}`{}.\n",
        code(&d.desired_at),
        if d.desired_incomplete {
            " — some apps failed to render"
        } else {
            ""
        }
    );
    for (cat, title) in CATEGORIES {
        let rows = rows(d, cat);
        if rows.is_empty() {
            continue;
        }
        let fold = cat == "in_sync" || rows.len() > 10;
        if fold {
            let _ = writeln!(
                out,
                "<details><summary>{title} ({})</summary>\n",
                rows.len()
            );
        } else {
            let _ = writeln!(out, "### {title} ({})\n", rows.len());
        }
        out.push_str("| workload | tenant | live GPUs | git GPUs | shape | app | note |\n|---|---|---:|---:|---|---|---|\n");
        for r in rows {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} |",
                esc(&r.id()),
                esc(&r.tenant),
                r.gpus,
                r.gpus_git,
                esc(&shapes(r)),
                esc(r.app.as_deref().unwrap_or("")),
                esc(&note(r))
            );
        }
        out.push('\n');
        if fold {
            out.push_str("</details>\n\n");
        }
    }
    for r in d.changed.iter().chain(d.accepted.iter()) {
        if let Some(diff) = &r.diff {
            let _ = writeln!(
                out,
                "<details><summary>Diff of {}</summary>\n",
                esc(&r.id())
            );
            // A fence longer than any backtick run inside keeps the block closed.
            let fence = "`".repeat(3.max(longest_backtick_run(diff) + 1));
            let _ = writeln!(out, "{fence}diff\n{}{fence}\n\n</details>\n", diff);
        }
    }
    for e in &d.expired {
        let _ = writeln!(
            out,
            "> Expired acceptance rule `{}` ({}, expired {}) hides nothing now{}.",
            e.rule.replace('`', "'"),
            esc(&e.reason),
            e.expired,
            if e.would_match.is_empty() {
                String::new()
            } else {
                format!("; it would match {}", esc(&e.would_match.join(", ")))
            }
        );
    }
    if !d.coverage_by_tenant.is_empty() {
        out.push_str("\n<details><summary>Coverage by tenant</summary>\n\n| tenant | requested | managed | coverage |\n|---|---:|---:|---:|\n");
        for c in &d.coverage_by_tenant {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} |",
                esc(&c.tenant),
                c.gpus_requested,
                c.gpus_managed,
                percent(c.coverage)
            );
        }
        out.push_str("\n</details>\n");
    }
    out
}

fn longest_backtick_run(s: &str) -> usize {
    s.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}
