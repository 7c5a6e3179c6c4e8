//! The terminal writer: plain text with aligned columns.
//!
//! Markup is dropped (bold, code and links become their text; a link keeps its URL in
//! parentheses), `Details` are shown open under their summary, a table with a row limit shows
//! that many rows and counts the rest, and charts are left out (the table beside a chart holds its
//! figures). A heading is followed directly by its content; other blocks are separated by a blank
//! line. Control characters — a terminal escape smuggled in through a label — become `?`.

use super::{Align, Block, Doc, Span, Table};

pub fn write(doc: &Doc) -> String {
    let mut out = String::new();
    write_blocks(&doc.blocks, &mut out);
    out
}

fn write_blocks(blocks: &[Block], out: &mut String) {
    let mut after_heading = true;
    for b in blocks {
        if matches!(b, Block::Chart(_)) {
            continue;
        }
        if !after_heading && !out.is_empty() {
            out.push('\n');
        }
        after_heading = false;
        match b {
            Block::Heading { text, .. } => {
                line(&text.0, out);
                after_heading = true;
            }
            Block::Paragraph(t) | Block::Small(t) => line(&t.0, out),
            Block::List(items) => {
                for t in items {
                    out.push_str("  ");
                    line(&t.0, out);
                }
            }
            Block::Quote(lines) => {
                for t in lines {
                    line(&t.0, out);
                }
            }
            Block::Table(t) => table(t, out),
            Block::Details { summary, body } => {
                line(&summary.0, out);
                write_blocks(body, out);
            }
            Block::Fence { lines, .. } => {
                for l in lines {
                    out.push_str("  ");
                    out.push_str(&clean(l));
                    out.push('\n');
                }
            }
            Block::Chart(_) => {}
        }
    }
}

fn line(spans: &[Span], out: &mut String) {
    inline(spans, out);
    out.push('\n');
}

/// Inline spans as plain text.
pub fn inline(spans: &[Span], out: &mut String) {
    for s in spans {
        match s {
            Span::Plain(p) | Span::Code(p) => out.push_str(&clean(p)),
            Span::Strong(t) | Span::Emph(t) => inline(t, out),
            Span::Link { text, url } => {
                inline(text, out);
                out.push_str(" (");
                out.push_str(&clean(url));
                out.push(')');
            }
        }
    }
}

fn clean(s: &str) -> String {
    if s.chars().any(char::is_control) {
        s.chars()
            .map(|c| if c.is_control() { '?' } else { c })
            .collect()
    } else {
        s.to_string()
    }
}

fn table(t: &Table, out: &mut String) {
    let shown = t.limit.unwrap_or(usize::MAX).min(t.rows.len());
    let rows: Vec<Vec<String>> = t
        .rows
        .iter()
        .take(shown)
        .map(|r| {
            r.iter()
                .map(|c| {
                    let mut s = String::new();
                    inline(&c.0, &mut s);
                    s
                })
                .collect()
        })
        .collect();
    let width = |s: &str| s.chars().count();
    let mut widths: Vec<usize> = t.headers.iter().map(|h| width(h)).collect();
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(width(c));
        }
    }
    let write_line = |cells: &[String], out: &mut String| {
        let mut l = String::new();
        for (i, c) in cells.iter().enumerate() {
            let w = widths.get(i).copied().unwrap_or(0);
            let pad = " ".repeat(w.saturating_sub(width(c)));
            if i > 0 {
                l.push_str("  ");
            }
            if t.align.get(i) == Some(&Align::Right) {
                l.push_str(&pad);
                l.push_str(c);
            } else {
                l.push_str(c);
                l.push_str(&pad);
            }
        }
        out.push_str(l.trim_end());
        out.push('\n');
    };
    write_line(&t.headers, out);
    let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
    write_line(&rule, out);
    for r in &rows {
        write_line(r, out);
    }
    if shown < t.rows.len() {
        out.push_str(&format!(
            "… {} more not shown (--format json for all)\n",
            t.rows.len() - shown
        ));
    }
}

#[cfg(test)]
mod tests {
    use crate::doc::{Block, Doc, Table, Text};

    #[test]
    fn columns_align_and_numbers_go_right() {
        let mut t = Table::new(&["name", ">n"]);
        t.row(vec!["a".into(), "10".into()]);
        t.row(vec!["bbb".into(), "2".into()]);
        let mut d = Doc::new();
        d.heading(3, "Title");
        d.push(Block::Table(t));
        d.paragraph(Text::new().strong("x").code("y"));
        assert_eq!(
            d.terminal(),
            "Title\nname   n\n────  ──\na     10\nbbb    2\n\nxy\n"
        );
    }

    #[test]
    fn control_characters_never_reach_the_terminal() {
        let mut d = Doc::new();
        d.paragraph("a\u{1b}[31mb");
        assert_eq!(d.terminal(), "a?[31mb\n");
    }

    #[test]
    fn a_limited_table_counts_what_it_leaves_out() {
        let t = Table::new(&["x"])
            .rows(0..5, |i| vec![i.to_string().into()])
            .limit(2);
        let mut d = Doc::new();
        d.push(Block::Table(t));
        assert!(
            d.terminal()
                .ends_with("1\n… 3 more not shown (--format json for all)\n")
        );
    }
}
