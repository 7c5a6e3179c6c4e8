//! GitHub-flavoured markdown: a headline, the four counts, tenants (with a mermaid pie), graphs, and
//! the long lists folded into `<details>`.
//!
//! Everything that came from the cluster or a repository (names, hosts, labels) goes through
//! [`esc`], so a hostile label cannot break a table, open an HTML tag or ping a team.

use std::fmt::Write;

use super::{count, percent};
use crate::report::Report;

/// Lists longer than this are folded into `<details>`.
const FOLD: usize = 10;

/// Escapes text for a markdown table cell or paragraph.
pub(crate) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '|' => out.push_str("\\|"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '`' | '*' | '_' | '[' | ']' | '\\' | '#' | '@' | '~' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Text for inside a code span: nothing is escaped there, so backticks (which would end the span)
/// and control characters are replaced instead.
pub(crate) fn code(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '`' => '\'',
            c if c.is_control() => ' ',
            c => c,
        })
        .collect()
}

fn table(out: &mut String, headers: &[&str], rows: Vec<Vec<String>>) {
    let _ = writeln!(
        out,
        "| {} |",
        headers
            .iter()
            .map(|h| h.trim_start_matches('>'))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    let _ = writeln!(
        out,
        "|{}|",
        headers
            .iter()
            .map(|h| if h.starts_with('>') { "---:" } else { "---" })
            .collect::<Vec<_>>()
            .join("|")
    );
    for r in rows {
        let _ = writeln!(out, "| {} |", r.join(" | "));
    }
}

/// A section, folded into `<details>` when it has more than [`FOLD`] rows (unless it is one of the
/// decision tables, which always stay open).
fn section(out: &mut String, title: &str, headers: &[&str], rows: Vec<Vec<String>>) {
    section_with(out, title, headers, rows, true)
}

fn section_with(
    out: &mut String,
    title: &str,
    headers: &[&str],
    rows: Vec<Vec<String>>,
    foldable: bool,
) {
    if rows.is_empty() {
        return;
    }
    if foldable && rows.len() > FOLD {
        let _ = writeln!(
            out,
            "<details><summary>{title} ({})</summary>\n",
            rows.len()
        );
        table(out, headers, rows);
        out.push_str("\n</details>\n\n");
    } else {
        let _ = writeln!(out, "### {title}\n");
        table(out, headers, rows);
        out.push('\n');
    }
}

pub fn render(r: &Report) -> String {
    let mut out = headline(r);
    details(r, &mut out);
    out
}

/// The fleet's four counts and the tenant table: what a drift issue leads with.
pub fn headline(r: &Report) -> String {
    let mut out = String::new();
    let f = &r.fleet;
    let g = &f.gpus;
    out.push_str("## GPU fleet inventory\n\n");
    let _ = writeln!(
        out,
        "**{}** GPUs requested of **{}** placeable ({} utilisation) on {} GPU nodes; {} pending. {}.\n",
        g.requested,
        g.placeable,
        percent(f.utilisation),
        f.gpu_nodes,
        g.pending,
        esc(&f.shortage.summary),
    );
    table(
        &mut out,
        &[
            "capacity",
            "allocatable",
            "placeable",
            "requested",
            "pending",
            "used",
        ],
        vec![vec![
            g.capacity.to_string(),
            g.allocatable.to_string(),
            g.placeable.to_string(),
            g.requested.to_string(),
            g.pending.to_string(),
            count(g.used),
        ]],
    );
    out.push('\n');
    for (field, why) in &f.unknown {
        let _ = writeln!(out, "> `{field}` is unknown: {}", esc(why));
    }
    let _ = writeln!(
        out,
        "\n{} namespaces hold GPU pods (the top three hold {}); {} public routes.\n",
        f.gpu_namespaces,
        percent(f.top3_namespace_share),
        f.public_routes
    );

    section_with(
        &mut out,
        "Tenants",
        &[
            "tenant",
            ">requested",
            ">pending",
            ">used",
            ">share",
            ">workloads",
            ">public routes",
            "product lines",
        ],
        r.tenants
            .iter()
            .map(|t| {
                vec![
                    esc(&t.name),
                    t.gpus_requested.to_string(),
                    t.gpus_pending.to_string(),
                    count(t.gpus_used),
                    percent(t.share),
                    t.workloads.to_string(),
                    t.public_routes.to_string(),
                    esc(&t.product_lines.join(", ")),
                ]
            })
            .collect(),
        false,
    );
    let pie: Vec<_> = r.tenants.iter().filter(|t| t.gpus_requested > 0).collect();
    if !pie.is_empty() {
        out.push_str("```mermaid\npie showData title GPUs requested by tenant\n");
        for t in pie {
            // Mermaid labels are quoted strings: keep them to safe characters.
            let label: String = t
                .name
                .chars()
                .map(|c| {
                    if c.is_alphanumeric() || "-_. /".contains(c) {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            let _ = writeln!(out, "    \"{label}\" : {}", t.gpus_requested);
        }
        out.push_str("```\n\n");
    }
    out
}

/// Everything after the headline: idle GPUs, graphs, workloads, routes, nodes, namespaces.
fn details(r: &Report, out: &mut String) {
    let f = &r.fleet;
    section(
        out,
        "Requested but idle",
        &["tenant", ">requested", ">busy", ">idle"],
        r.idle
            .iter()
            .map(|x| {
                vec![
                    esc(&x.tenant),
                    x.gpus_requested.to_string(),
                    x.gpus_used.to_string(),
                    x.gpus_idle.to_string(),
                ]
            })
            .collect(),
    );
    section(
        out,
        "Busy GPUs no pod accounts for",
        &["node", "gpu", ">activity", "why"],
        f.unattributed_busy
            .iter()
            .map(|u| {
                vec![
                    esc(&u.node),
                    esc(&u.gpu),
                    format!("{:.0}%", u.activity * 100.0),
                    esc(&u.reason),
                ]
            })
            .collect(),
    );
    if r.product_lines.iter().any(|p| p.name.is_some()) {
        section(
            out,
            "Product lines",
            &[
                "product line",
                ">requested",
                ">pending",
                ">share",
                ">workloads",
                "tenants",
            ],
            r.product_lines
                .iter()
                .map(|p| {
                    vec![
                        esc(p.name.as_deref().unwrap_or("(none)")),
                        p.gpus_requested.to_string(),
                        p.gpus_pending.to_string(),
                        percent(p.share),
                        p.workloads.to_string(),
                        esc(&p.tenants.join(", ")),
                    ]
                })
                .collect(),
        );
    }
    section(
        out,
        "Dynamo graphs",
        &["graph", "tenant", "shape", ">requested", ">pending"],
        r.graphs
            .iter()
            .map(|w| {
                vec![
                    esc(&format!("{}/{}", w.namespace, w.name)),
                    esc(&w.tenant),
                    esc(&w.shape),
                    w.gpus.to_string(),
                    w.gpus_pending.to_string(),
                ]
            })
            .collect(),
    );
    section(
        out,
        "Workloads",
        &["workload", "tenant", "shape", ">requested", ">pending"],
        r.workloads
            .iter()
            .map(|w| {
                vec![
                    esc(&format!("{}/{}/{}", w.namespace, w.kind, w.name)),
                    esc(&w.tenant),
                    esc(&w.shape),
                    w.gpus.to_string(),
                    w.gpus_pending.to_string(),
                ]
            })
            .collect(),
    );
    section(
        out,
        "GPU nodes not fully placeable",
        &["node", ">capacity", ">placeable", "reason"],
        f.excluded_nodes
            .iter()
            .map(|n| {
                vec![
                    esc(&n.node),
                    n.capacity.to_string(),
                    n.placeable.to_string(),
                    esc(&n.reason),
                ]
            })
            .collect(),
    );
    section(
        out,
        "Pending pods that fit on no placeable node",
        &["pod", ">GPUs", "workload"],
        f.shortage
            .unplaceable
            .iter()
            .map(|p| {
                vec![
                    esc(&format!("{}/{}", p.namespace, p.name)),
                    p.gpus.to_string(),
                    esc(&p.workload),
                ]
            })
            .collect(),
    );
    section(
        out,
        "MIG slices and shared GPUs",
        &[
            "resource",
            ">capacity",
            ">allocatable",
            ">requested",
            ">pending",
        ],
        f.other_gpus
            .iter()
            .map(|o| {
                vec![
                    esc(&o.resource),
                    o.capacity.to_string(),
                    o.allocatable.to_string(),
                    o.requested.to_string(),
                    o.pending.to_string(),
                ]
            })
            .collect(),
    );
    section(
        out,
        "Public routes",
        &["kind", "host", "path", "tenants", ">GPUs", "why public"],
        r.routes
            .iter()
            .map(|x| {
                vec![
                    esc(&x.kind),
                    esc(&x.host),
                    esc(&x.path),
                    esc(&x.tenants.join(", ")),
                    x.gpus.to_string(),
                    esc(&x.public_because),
                ]
            })
            .collect(),
    );
    section(
        out,
        "Namespaces",
        &["namespace", "tenant", ">requested", ">pending"],
        r.namespaces
            .iter()
            .map(|n| {
                vec![
                    esc(&n.name),
                    esc(&n.tenant),
                    n.gpus_requested.to_string(),
                    n.gpus_pending.to_string(),
                ]
            })
            .collect(),
    );
}

#[cfg(test)]
mod tests {
    use super::esc;

    #[test]
    fn escapes_table_breakers_html_and_mentions() {
        assert_eq!(esc("a|b"), "a\\|b");
        assert_eq!(esc("<script>"), "&lt;script&gt;");
        assert_eq!(esc("@org/team"), "\\@org/team");
        assert_eq!(esc("line\nbreak"), "line break");
        assert_eq!(esc("`code`"), "\\`code\\`");
    }
}
