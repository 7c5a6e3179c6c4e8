//! Documents with marked facts, as blocks: the tables a `gpuledger:table` marker is filled with,
//! and the list of stale and unknown facts that `docs --check`, the pre-merge check and the drift
//! issue show.
//!
//! A marked table is the report's own table, taken from the inventory's document tree as the
//! report shows it, so a document and the report can never lay the same figures out differently
//! (a column another part of gpuledger adds to the tenants table appears in documents too).

use super::inventory;
use super::page::{Format, Links, Style, layout};
use crate::doc::{Block, Doc, Span, Table, Text};
use crate::report::Report;
use crate::report::facts::{DocFinding, DocsReport, DocsStatus};

/// The tables a document can mark, by name: the section title (or first column) that finds each in
/// the inventory.
pub const TABLES: [(&str, Find); 13] = [
    ("gpus", Find::FirstColumn("GPUs")),
    ("models", Find::FirstColumn("GPU model")),
    ("clusters", Find::Section("Clusters")),
    ("tenants", Find::Section("Tenants")),
    ("product-lines", Find::Section("Product lines")),
    (
        "idle",
        Find::Section("Requested but idle (largest gap first)"),
    ),
    ("graphs", Find::Section("Dynamo graphs")),
    ("workloads", Find::Section("Workloads")),
    (
        "excluded-nodes",
        Find::Section("GPU nodes not fully placeable"),
    ),
    (
        "unplaceable",
        Find::Section("Pending pods that fit on no placeable node"),
    ),
    (
        "other-gpus",
        Find::Section("MIG slices and shared GPUs (not counted as whole GPUs)"),
    ),
    ("routes", Find::Section("Public routes")),
    ("namespaces", Find::Section("Namespaces")),
];

/// How a named table is found in the inventory's blocks.
#[derive(Debug, Clone, Copy)]
pub enum Find {
    /// The table under this heading, or folded in `Details` whose summary starts with it.
    Section(&'static str),
    /// The first table whose first column is this (the figures, which have no heading).
    FirstColumn(&'static str),
}

/// Every table a document can mark, by name, as markdown with every row (`_None._` when the
/// report has no rows for it): the inventory is laid out once for all of them.
pub fn tables(r: &Report) -> Vec<(&'static str, String)> {
    let doc = inventory::inventory(r);
    TABLES
        .iter()
        .map(|(name, find)| {
            let found = match find {
                Find::Section(title) => section(&doc.blocks, title),
                Find::FirstColumn(col) => first(&doc.blocks, &|t| {
                    t.headers.first().is_some_and(|h| h == col)
                }),
            };
            let mut d = Doc::new();
            match found {
                Some(t) => d.push(Block::Table(Table {
                    limit: None,
                    ..t.clone()
                })),
                None => d.paragraph(Text::new().emph("None.")),
            }
            (*name, d.markdown())
        })
        .collect()
}

fn first<'a>(blocks: &'a [Block], want: &dyn Fn(&Table) -> bool) -> Option<&'a Table> {
    blocks.iter().find_map(|b| match b {
        Block::Table(t) if want(t) => Some(t),
        Block::Details { body, .. } => first(body, want),
        _ => None,
    })
}

fn section<'a>(blocks: &'a [Block], title: &str) -> Option<&'a Table> {
    let mut under = false;
    for b in blocks {
        match b {
            Block::Heading { text, .. } => under = plain(text) == title,
            Block::Table(t) if under => return Some(t),
            Block::Details { summary, body } => {
                let s = plain(summary);
                if s == title || s.starts_with(&format!("{title} (")) {
                    return first(body, &|_| true);
                }
                under = false;
            }
            _ => {}
        }
    }
    None
}

fn plain(t: &Text) -> String {
    fn spans(v: &[Span], out: &mut String) {
        for s in v {
            match s {
                Span::Plain(p) | Span::Code(p) => out.push_str(p),
                Span::Strong(t) | Span::Emph(t) | Span::Link { text: t, .. } => spans(t, out),
            }
        }
    }
    let mut out = String::new();
    spans(&t.0, &mut out);
    out
}

/// The list of stale and unknown facts for a terminal or markdown, or the status as JSON.
pub fn render_docs(report: &DocsReport, title: &str, format: Format, style: &Style) -> String {
    layout(&docs_doc(&report.docs, title), report, format, style)
}

/// The result of `gpuledger docs --check` (or `--write`) on its own.
pub fn docs_doc(status: &DocsStatus, title: &str) -> Doc {
    let mut d = Doc::new();
    d.heading(2, title);
    d.paragraph(Text::new().strong(format!("{}.", status.summary())));
    body(&mut d, status, &Links::default());
    d
}

/// The findings under a section heading, for the check and the drift issue; nothing when every
/// marked fact matches.
pub fn section_for(d: &mut Doc, status: &DocsStatus, links: &Links) {
    if status.clean() {
        return;
    }
    d.heading(3, "Documents");
    d.paragraph(
        Text::new()
            .plain(format!("{}. ", status.summary()))
            .code("gpuledger docs --write")
            .plain(" rewrites the marked text."),
    );
    body(d, status, links);
}

fn body(d: &mut Doc, status: &DocsStatus, links: &Links) {
    if !status.errors.is_empty() {
        d.push(Block::List(
            status
                .errors
                .iter()
                .map(|e| Text::new().strong("cannot read").plain(format!(": {e}")))
                .collect(),
        ));
    }
    if !status.warnings.is_empty() {
        d.push(Block::List(
            status
                .warnings
                .iter()
                .map(|w| Text::new().strong("note").plain(format!(": {w}")))
                .collect(),
        ));
    }
    let row = |f: &DocFinding| {
        vec![
            links.manifest(Some(&format!("{}:{}", f.file, f.line))),
            Text::new().code(f.marker.as_str()),
            Text::from(f.old.as_str()),
            match (&f.new, &f.unknown) {
                (Some(n), _) => Text::from(n.as_str()),
                (None, Some(why)) => Text::new().emph("unknown").plain(format!(": {why}")),
                (None, None) => Text::new().emph("unknown"),
            },
        ]
    };
    if !status.stale.is_empty() {
        d.push(Block::Table(
            Table::new(if status.written.is_empty() {
                &["where", "fact", "document says", "report says"]
            } else {
                &["where", "fact", "was", "now"]
            })
            .rows(&status.stale, row),
        ));
    }
    if !status.unknown.is_empty() {
        d.push(Block::Table(
            Table::new(&["where", "fact", "document says (kept)", "report says"])
                .rows(&status.unknown, row),
        ));
    }
}
