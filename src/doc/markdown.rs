//! The GitHub-flavoured markdown writer, and the one place that escapes text.
//!
//! A document is first laid out as [`Node`]s: leaves of text that stay whole (a paragraph, a table
//! row, a line of a fence) and groups that a split may cut inside (a `<details>` element, a table, a
//! fence), each with the text that opens it, closes it, and reopens it in the next part. Writing is
//! the concatenation of the nodes; [`crate::github::split`] packs the same nodes into parts. Blocks
//! are separated by one blank line.
//!
//! Escaping: [`Span::Plain`] text goes through [`esc`] — table pipes, HTML, emphasis and link
//! characters, `@` mentions and `#` references are made literal and control characters become
//! spaces — and [`Span::Code`] through [`code`], which keeps a code span closed. Nothing from the
//! cluster or a repository can reach the output any other way.

use super::tree::{Align, Block, Chart, Doc, MAX_LINES, MAX_X_LABELS, Span, Table};
use crate::util::redact::redact;

/// A document laid out for writing and splitting.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    /// The blank line between two blocks: where a split prefers to cut, and dropped at either end
    /// of a part.
    Gap,
    /// Text kept whole unless it alone is longer than a part.
    Leaf(String),
    /// A container a split may cut inside: a part cut in it ends with `close` and the next part
    /// starts with `reopen`.
    Group {
        open: String,
        reopen: String,
        close: String,
        children: Vec<Node>,
    },
}

impl Node {
    /// The text of the node as written.
    pub fn write(&self, out: &mut String) {
        match self {
            Node::Gap => out.push('\n'),
            Node::Leaf(s) => out.push_str(s),
            Node::Group {
                open,
                close,
                children,
                ..
            } => {
                out.push_str(open);
                for c in children {
                    c.write(out);
                }
                out.push_str(close);
            }
        }
    }
}

/// The document as markdown.
pub fn write(doc: &Doc) -> String {
    let mut out = String::new();
    for n in nodes(doc) {
        n.write(&mut out);
    }
    out
}

/// The document as nodes: each block, with a blank line between blocks.
pub fn nodes(doc: &Doc) -> Vec<Node> {
    blocks(&doc.blocks)
}

fn blocks(blocks: &[Block]) -> Vec<Node> {
    let mut out = Vec::with_capacity(blocks.len() * 2);
    for (i, b) in blocks.iter().enumerate() {
        if i > 0 {
            out.push(Node::Gap);
        }
        out.push(block(b));
    }
    out
}

fn block(b: &Block) -> Node {
    match b {
        Block::Heading { level, text } => Node::Leaf(format!(
            "{} {}\n",
            "#".repeat(usize::from((*level).clamp(1, 6))),
            inline(&text.0)
        )),
        Block::Paragraph(t) => Node::Leaf(format!("{}\n", inline(&t.0))),
        Block::List(items) => Node::Group {
            open: String::new(),
            reopen: String::new(),
            close: String::new(),
            children: items
                .iter()
                .map(|t| Node::Leaf(format!("- {}\n", inline(&t.0))))
                .collect(),
        },
        // Each line is its own paragraph (an empty quote line between them): adjacent quote lines
        // would join into one paragraph (CommonMark's lazy continuation), as GitHub shows them.
        Block::Quote(lines) => Node::Group {
            open: String::new(),
            reopen: String::new(),
            close: String::new(),
            children: lines
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    let gap = if i == 0 { "" } else { ">\n" };
                    Node::Leaf(format!("{gap}> {}\n", inline(&t.0)))
                })
                .collect(),
        },
        // GitHub's alert syntax: the marker alone on the quote's first line, and each line its own
        // paragraph as in a quote.
        Block::Alert { kind, lines } => {
            let open = format!("> [!{}]\n", kind.label());
            Node::Group {
                reopen: open.clone(),
                open,
                close: String::new(),
                children: lines
                    .iter()
                    .enumerate()
                    .map(|(i, t)| {
                        let gap = if i == 0 { "" } else { ">\n" };
                        Node::Leaf(format!("{gap}> {}\n", inline(&t.0)))
                    })
                    .collect(),
            }
        }
        Block::Table(t) => table(t),
        Block::Details { summary, body } => {
            let s = html_inline(&summary.0);
            Node::Group {
                open: format!("<details><summary>{s}</summary>\n\n"),
                reopen: format!("<details><summary>{} (continued)</summary>\n\n", capped(&s)),
                close: "\n</details>\n".to_string(),
                children: blocks(body),
            }
        }
        Block::Fence { info, lines } => {
            // A fence longer than any backtick run inside keeps the block closed.
            let longest = lines.iter().map(|l| longest_run(l, '`')).max().unwrap_or(0);
            let fence = "`".repeat(3.max(longest + 1));
            let info: String = info
                .chars()
                .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            let open = format!("{fence}{info}\n");
            Node::Group {
                reopen: open.clone(),
                open,
                close: format!("{fence}\n"),
                children: lines
                    .iter()
                    .map(|l| Node::Leaf(format!("{}\n", fence_line(l))))
                    .collect(),
            }
        }
        Block::Chart(Chart::Pie { title, slices }) => {
            // Colours a reader can tell apart (Okabe and Ito's palette, safe for colour-blind
            // readers, on light and dark themes); mermaid's default pastels blur together.
            let mut s = format!(
                "```mermaid\n%%{{init: {{\"theme\": \"base\", \"themeVariables\": {{{PIE_COLOURS}}}}}}}%%\npie showData title {}\n",
                label(title)
            );
            for (name, v) in slices {
                s.push_str(&format!("    \"{}\" : {v}\n", label(name)));
            }
            s.push_str("```\n");
            Node::Leaf(s)
        }
        Block::Chart(Chart::Lines {
            title,
            x,
            y,
            series,
        }) => Node::Leaf(lines(title, x, y, series)),
        Block::Chart(Chart::Gantt { title, sections }) => {
            let mut s = format!(
                "```mermaid\ngantt\n    title {}\n    dateFormat YYYY-MM-DD HH:mm\n    axisFormat %H:%M\n",
                label(title)
            );
            for (section, bars) in sections {
                s.push_str(&format!("    section {}\n", label(section)));
                for b in bars {
                    let tag = if b.late { "crit, " } else { "" };
                    s.push_str(&format!(
                        "    {} :{tag}{}, {}m\n",
                        label(&b.name),
                        // Ours (`YYYY-MM-DD HH:mm`), and `:` would not survive `label`.
                        b.start,
                        b.minutes
                    ));
                }
            }
            s.push_str("```\n");
            Node::Leaf(s)
        }
        Block::Small(t) => Node::Leaf(format!("<sub>{}</sub>\n", inline(&t.0))),
    }
}

/// `"pie1": "#0072B2", …` for mermaid's theme variables.
const PIE_COLOURS: &str = "\"pie1\": \"#0072B2\", \"pie2\": \"#E69F00\", \"pie3\": \"#009E73\", \"pie4\": \"#CC79A7\", \"pie5\": \"#56B4E9\", \"pie6\": \"#D55E00\", \"pie7\": \"#F0E442\", \"pie8\": \"#999999\"";

/// The pie's colours in order, for lines, with the names a legend gives them (Okabe and Ito's).
const LINE_COLOURS: [(&str, &str); MAX_LINES] = [
    ("#0072B2", "blue"),
    ("#E69F00", "orange"),
    ("#009E73", "green"),
    ("#CC79A7", "pink"),
    ("#56B4E9", "sky blue"),
    ("#D55E00", "vermillion"),
    ("#F0E442", "yellow"),
    ("#999999", "grey"),
];

/// A mermaid `xychart-beta` of `series` over `x`, y from 0 to a round number above the highest
/// value, at most [`MAX_X_LABELS`] x labels (evenly spaced, the first and last always), and a line
/// under it naming each line's colour. A point without a label still needs a category of its own
/// (mermaid merges equal ones and trims blanks): it gets an invisible one, zero-width spaces.
fn lines(title: &str, x: &[String], y: &str, series: &[(String, Vec<f64>)]) -> String {
    let shown = label_points(x.len());
    let labels: Vec<String> = x
        .iter()
        .enumerate()
        .map(|(i, l)| {
            if shown.contains(&i) {
                // Ours (dates and times): `:` stays, anything mermaid could read as syntax goes.
                let l: String = l
                    .chars()
                    .map(|c| {
                        if c.is_alphanumeric() || "-_. /:".contains(c) {
                            c
                        } else {
                            '_'
                        }
                    })
                    .collect();
                format!("\"{l}\"")
            } else {
                format!("\"{}\"", "\u{200b}".repeat(i + 1))
            }
        })
        .collect();
    let top = round_up(
        series
            .iter()
            .flat_map(|(_, v)| v.iter().copied())
            .fold(0.0, f64::max),
    );
    let palette: Vec<&str> = LINE_COLOURS.iter().map(|(c, _)| *c).collect();
    let mut s = format!(
        "```mermaid\n%%{{init: {{\"theme\": \"base\", \"themeVariables\": {{\"xyChart\": {{\"plotColorPalette\": \"{}\"}}}}}}}}%%\nxychart-beta\n    title \"{}\"\n    x-axis [{}]\n    y-axis \"{}\" 0 --> {}\n",
        palette.join(", "),
        label(title),
        labels.join(", "),
        label(y),
        figure(top)
    );
    for (_, values) in series.iter().take(LINE_COLOURS.len()) {
        let v: Vec<String> = values.iter().map(|v| figure(*v)).collect();
        s.push_str(&format!("    line [{}]\n", v.join(", ")));
    }
    s.push_str("```\n");
    let legend: Vec<String> = series
        .iter()
        .zip(LINE_COLOURS)
        .map(|((name, _), (_, colour))| format!("{} ({colour})", esc(name)))
        .collect();
    if !legend.is_empty() {
        s.push_str(&format!("\n<sub>Lines: {}.</sub>\n", legend.join(" · ")));
    }
    s
}

/// Which of `n` points carry an x label: at most [`MAX_X_LABELS`], evenly spaced, the first and
/// the last always.
fn label_points(n: usize) -> Vec<usize> {
    if n <= MAX_X_LABELS {
        return (0..n).collect();
    }
    let last = n - 1;
    let mut v: Vec<usize> = (0..MAX_X_LABELS)
        .map(|k| (k * last + (MAX_X_LABELS - 1) / 2) / (MAX_X_LABELS - 1))
        .collect();
    v.dedup();
    v
}

/// The top of a y axis: a round number (a multiple of half a power of ten) at or above `v`.
fn round_up(v: f64) -> f64 {
    if !v.is_finite() || v <= 0.0 {
        return 1.0;
    }
    let step = 10f64.powf(v.log10().floor()) / 2.0;
    (v / step).ceil() * step
}

/// A chart's number: whole, or with one decimal.
fn figure(v: f64) -> String {
    let r = (v * 10.0).round() / 10.0;
    if r.fract() == 0.0 {
        format!("{r:.0}")
    } else {
        format!("{r:.1}")
    }
}

fn table(t: &Table) -> Node {
    let header = format!(
        "| {} |\n|{}|\n",
        t.headers
            .iter()
            .map(|h| esc(h))
            .collect::<Vec<_>>()
            .join(" | "),
        t.align
            .iter()
            .map(|a| match a {
                Align::Left => "---",
                Align::Right => "---:",
            })
            .collect::<Vec<_>>()
            .join("|")
    );
    Node::Group {
        reopen: header.clone(),
        open: header,
        close: String::new(),
        children: t
            .rows
            .iter()
            .map(|r| {
                Node::Leaf(format!(
                    "| {} |\n",
                    r.iter().map(|c| cell(&c.0)).collect::<Vec<_>>().join(" | ")
                ))
            })
            .collect(),
    }
}

/// Inline spans as markdown.
pub fn inline(spans: &[Span]) -> String {
    inline_in(spans, false)
}

/// Inline spans in a table cell: GFM splits cells at every unescaped `|`, even inside a code span
/// (where `\|` then stands for the pipe), so code spans escape their pipes there.
fn cell(spans: &[Span]) -> String {
    inline_in(spans, true)
}

fn inline_in(spans: &[Span], in_cell: bool) -> String {
    let inline = |t: &[Span]| inline_in(t, in_cell);
    let mut out = String::new();
    for s in spans {
        match s {
            Span::Plain(p) => out.push_str(&esc(p)),
            Span::Strong(t) => {
                out.push_str("**");
                out.push_str(&inline(t));
                out.push_str("**");
            }
            Span::Emph(t) => {
                out.push('_');
                out.push_str(&inline(t));
                out.push('_');
            }
            Span::Code(c) => {
                out.push('`');
                if in_cell {
                    out.push_str(&code(c).replace('|', "\\|"));
                } else {
                    out.push_str(&code(c));
                }
                out.push('`');
            }
            Span::Link { text, url } => {
                out.push('[');
                out.push_str(&inline(text));
                out.push_str("](");
                out.push_str(&link_url(url));
                out.push(')');
            }
        }
    }
    out
}

/// Inline spans inside an HTML element (a `<summary>`), where GitHub does not read markdown: HTML
/// markup, and only `&`, `<`, `>` and `"` escaped.
fn html_inline(spans: &[Span]) -> String {
    let mut out = String::new();
    for s in spans {
        match s {
            Span::Plain(p) => out.push_str(&html(p)),
            Span::Strong(t) => out.push_str(&format!("<b>{}</b>", html_inline(t))),
            Span::Emph(t) => out.push_str(&format!("<i>{}</i>", html_inline(t))),
            Span::Code(c) => out.push_str(&format!("<code>{}</code>", html(c))),
            Span::Link { text, url } => out.push_str(&format!(
                "<a href=\"{}\">{}</a>",
                html_attribute(&link_url(url)),
                html_inline(text)
            )),
        }
    }
    out
}

/// An attribute value (a link's `href`): only what would end the attribute is escaped.
fn html_attribute(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn html(s: &str) -> String {
    inert(s, |c, out| match c {
        '&' => out.push_str("&amp;"),
        '<' => out.push_str("&lt;"),
        '>' => out.push_str("&gt;"),
        '"' => out.push_str("&quot;"),
        c if c.is_control() => out.push(' '),
        c => out.push(c),
    })
}

/// Escapes text for a table cell or paragraph.
pub fn esc(s: &str) -> String {
    inert(s, |c, out| match c {
        '|' => out.push_str("\\|"),
        '<' => out.push_str("&lt;"),
        '>' => out.push_str("&gt;"),
        '&' => out.push_str("&amp;"),
        '`' | '*' | '_' | '[' | ']' | '\\' | '~' | '@' | '#' => {
            out.push('\\');
            out.push(c);
        }
        c if c.is_control() => out.push(' '),
        c => out.push(c),
    })
}

/// Text from a repository or cluster made inert for one context: secrets masked (before escaping
/// could hide them), every character written by `escape`, and a zero-width space after each one
/// that starts a mention, a reference or a link.
fn inert(s: &str, escape: impl Fn(char, &mut String)) -> String {
    let s = redact(s);
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        let next = chars.peek().copied();
        let breaks = inert_link(c, next, &out) || starts_reference(c, next);
        escape(c, &mut out);
        if breaks {
            out.push('\u{200B}');
        }
    }
    out
}

/// GitHub links `@user`, `@org/team`, `#123` and `owner/repo#123` in the text of a rendered
/// comment, after markdown: a backslash or an HTML entity does not stop it, and a mention notifies
/// and a reference posts into another issue's timeline. A zero-width space between the sign and
/// what follows it breaks the link and keeps the text as it reads (the way Dependabot quotes
/// `@dependabot`). Code spans and fences are never linked.
fn starts_reference(c: char, next: Option<char>) -> bool {
    matches!(c, '@' | '#') && next.is_some_and(|n| n.is_alphanumeric() || n == '_' || n == '-')
}

/// The other ways GitHub links text to an issue: a URL (`https://github.com/o/r/issues/1` posts a
/// cross-reference too, and any URL becomes a link) and `GH-123`. True when `c`, written after
/// `out` and followed by `next`, starts one: `:` before `//`, `-` after `GH` before a digit; a
/// zero-width space then goes after `c`.
fn inert_link(c: char, next: Option<char>, out: &str) -> bool {
    match c {
        ':' => next == Some('/'),
        '-' => {
            next.is_some_and(|n| n.is_ascii_digit())
                && out
                    .get(out.len().saturating_sub(2)..)
                    .is_some_and(|p| p.eq_ignore_ascii_case("gh"))
        }
        _ => false,
    }
}

/// Text for inside a code span: nothing is escaped there, so backticks (which would end the span)
/// and control characters are replaced instead.
pub fn code(s: &str) -> String {
    redact(s)
        .chars()
        .map(|c| match c {
            '`' => '\'',
            c if c.is_control() => ' ',
            c => c,
        })
        .collect()
}

/// A URL inside `(…)`: characters that would end the destination are percent-encoded.
fn link_url(url: &str) -> String {
    let mut out = String::with_capacity(url.len());
    for c in url.chars() {
        match c {
            ' ' => out.push_str("%20"),
            '(' => out.push_str("%28"),
            ')' => out.push_str("%29"),
            '<' => out.push_str("%3C"),
            '>' => out.push_str("%3E"),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// A line inside a fence: only control characters (other than tab) are replaced; nothing else
/// can end the fence, which is longer than any backtick run inside.
fn fence_line(l: &str) -> String {
    redact(l)
        .chars()
        .map(|c| if c.is_control() && c != '\t' { ' ' } else { c })
        .collect()
}

/// Mermaid labels are quoted strings: keep them to safe characters.
fn label(s: &str) -> String {
    redact(s)
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || "-_. /".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn longest_run(s: &str, ch: char) -> usize {
    s.split(|c| c != ch).map(str::len).max().unwrap_or(0)
}

/// Longest summary repeated as is when a `<details>` is reopened in the next part: the part must
/// keep its room for the content.
const REOPEN_CAP: usize = 200;

fn capped(s: &str) -> String {
    if s.chars().count() <= REOPEN_CAP {
        s.to_string()
    } else {
        // Cut at a character boundary, and never inside an escape sequence or entity.
        let mut cut: String = s.chars().take(REOPEN_CAP).collect();
        while cut.ends_with('\\') {
            cut.pop();
        }
        if let Some(amp) = cut.rfind('&')
            && !cut.get(amp..).is_some_and(|t| t.contains(';'))
        {
            cut.truncate(amp);
        }
        format!("{cut}…")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::{Block, Doc, Text};

    #[test]
    fn a_lines_chart_starts_at_zero_labels_eight_points_and_names_its_colours() {
        let x: Vec<String> = (1..=31).map(|d| format!("12-{d:02}")).collect();
        let mut d = Doc::new();
        d.push(Block::Chart(Chart::Lines {
            title: "GPUs requested per tenant".into(),
            x,
            y: "GPUs".into(),
            series: vec![
                (
                    "chat".into(),
                    (0..31).map(|i| 150.0 + f64::from(i)).collect(),
                ),
                ("a|b".into(), vec![2.5; 31]),
            ],
        }));
        let md = d.markdown();
        assert!(
            md.starts_with("```mermaid\n%%{init: {\"theme\": \"base\", \"themeVariables\": {\"xyChart\": {\"plotColorPalette\": \"#0072B2, #E69F00, "),
            "{md}"
        );
        assert!(md.contains("    y-axis \"GPUs\" 0 --> 200\n"), "{md}");
        assert!(md.contains("    line [150, 151, "), "{md}");
        assert!(md.contains("    line [2.5, 2.5, "), "{md}");
        let axis = md.lines().find(|l| l.contains("x-axis")).unwrap();
        let shown: Vec<&str> = axis.split('"').filter(|l| l.starts_with("12-")).collect();
        assert_eq!(
            shown,
            [
                "12-01", "12-05", "12-10", "12-14", "12-18", "12-22", "12-27", "12-31"
            ]
        );
        // Every point has a category of its own: 31 distinct labels.
        let all: std::collections::BTreeSet<&str> = axis.split('"').skip(1).step_by(2).collect();
        assert_eq!(all.len(), 31);
        assert!(
            md.ends_with("\n<sub>Lines: chat (blue) · a\\|b (orange).</sub>\n"),
            "{md}"
        );
        assert_eq!(round_up(196.0), 200.0);
        assert_eq!(round_up(88.0), 90.0);
        assert_eq!(round_up(46.0), 50.0);
        assert_eq!(round_up(0.0), 1.0);
    }

    #[test]
    fn each_line_of_an_alert_is_its_own_paragraph() {
        let doc = Doc {
            blocks: vec![Block::Alert {
                kind: crate::doc::Alert::Caution,
                lines: vec![Text::new().plain("one"), Text::new().plain("two")],
            }],
        };
        assert_eq!(write(&doc), "> [!CAUTION]\n> one\n>\n> two\n");
    }

    #[test]
    fn each_line_of_a_quote_is_its_own_paragraph() {
        let doc = Doc {
            blocks: vec![Block::Quote(vec![
                Text::new().plain("one"),
                Text::new().plain("two"),
            ])],
        };
        let md = write(&doc);
        assert_eq!(md, "> one\n>\n> two\n");
        // As a CommonMark reader (GitHub's) sees it: one quote holding two paragraphs.
        let paragraphs = pulldown_cmark::Parser::new(&md)
            .filter(|e| {
                matches!(
                    e,
                    pulldown_cmark::Event::Start(pulldown_cmark::Tag::Paragraph)
                )
            })
            .count();
        assert_eq!(paragraphs, 2, "{md}");
    }

    #[test]
    fn escapes_table_breakers_html_and_mentions() {
        assert_eq!(esc("a|b"), "a\\|b");
        assert_eq!(esc("<script>"), "&lt;script&gt;");
        assert_eq!(esc("@org/team"), "\\@\u{200B}org/team");
        assert_eq!(esc("fixes #12"), "fixes \\#\u{200B}12");
        assert_eq!(esc("a @ b # c"), "a \\@ b \\# c");
        assert_eq!(esc("see GH-12"), "see GH-\u{200B}12");
        assert_eq!(
            esc("https://github.com/o/r/issues/1"),
            "https:\u{200B}//github.com/o/r/issues/1"
        );
    }

    #[test]
    fn secrets_are_masked_before_escaping_could_hide_them() {
        crate::util::redact::register("ghs_secret_with_underscores_42");
        let s = "token ghs_secret_with_underscores_42 echoed";
        for out in [esc(s), code(s), html(s), fence_line(s)] {
            assert!(!out.contains("secret"), "{out}");
            assert!(out.contains("***") || out.contains("\\*\\*\\*"), "{out}");
        }
        assert_eq!(esc("line\nbreak"), "line break");
        assert_eq!(esc("`code`"), "\\`code\\`");
    }

    #[test]
    fn blocks_are_separated_by_one_blank_line() {
        let mut d = Doc::new();
        d.heading(2, "Title");
        d.paragraph(Text::new().strong("x").plain(" y"));
        let mut t = Table::new(&["a", ">n"]);
        t.row(vec!["p|q".into(), "1".into()]);
        d.push(Block::Table(t));
        assert_eq!(
            d.markdown(),
            "## Title\n\n**x** y\n\n| a | n |\n|---|---:|\n| p\\|q | 1 |\n"
        );
    }

    #[test]
    fn a_fence_outlasts_the_backticks_inside() {
        let mut d = Doc::new();
        d.push(Block::Fence {
            info: "diff".into(),
            lines: vec!["a ```` b".into()],
        });
        assert_eq!(d.markdown(), "`````diff\na ```` b\n`````\n");
    }

    #[test]
    fn details_nest_blocks() {
        let mut d = Doc::new();
        d.push(Block::Details {
            summary: "S <b>".into(),
            body: vec![Block::Paragraph("x".into())],
        });
        assert_eq!(
            d.markdown(),
            "<details><summary>S &lt;b&gt;</summary>\n\nx\n\n</details>\n"
        );
    }

    /// Text from a repository or cluster in every kind of block: after GitHub's markdown, nothing
    /// of it is HTML, a mention or a reference, and it never leaves its block.
    #[test]
    fn hostile_text_stays_inert_in_every_block() {
        use crate::doc::{Chart, Table, Text};
        use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
        let hostile = "x</details><!-- gpuledger:comment v1 -->\n## Fake\n@octocat @org/team #123 o/r#9 `b` | c\r\n<details><summary>s</summary>";
        let mut d = Doc::new();
        d.heading(2, hostile);
        d.paragraph(Text::from(hostile).strong(hostile).emph(hostile));
        d.push(Block::List(vec![hostile.into(), Text::new().code(hostile)]));
        d.push(Block::Quote(vec![hostile.into()]));
        d.push(Block::Details {
            summary: Text::from(hostile).code(hostile).strong(hostile),
            body: vec![Block::Table(Table::new(&["a", ">b"]).rows(0..2, |_| {
                vec![Text::from(hostile), Text::new().code(hostile)]
            }))],
        });
        d.push(Block::Fence {
            info: "text".into(),
            lines: vec![hostile.into()],
        });
        d.push(Block::Chart(Chart::Pie {
            title: hostile.into(),
            slices: vec![(hostile.into(), 1)],
        }));
        d.push(Block::Small(hostile.into()));
        let md = write(&d);
        let mut html = Vec::new();
        let (mut in_code, mut headings) = (0, 0);
        for e in Parser::new_ext(&md, Options::ENABLE_TABLES) {
            match e {
                Event::Html(h) | Event::InlineHtml(h) => html.push(h.to_string()),
                Event::Start(Tag::CodeBlock(_)) => in_code += 1,
                Event::End(TagEnd::CodeBlock) => in_code -= 1,
                Event::Start(Tag::Heading { .. }) => headings += 1,
                Event::Text(t) if in_code == 0 => {
                    let t = t.to_string();
                    for sign in ['@', '#'] {
                        for (i, _) in t.match_indices(sign) {
                            let next = t[i + 1..].chars().next();
                            assert!(
                                !next.is_some_and(|n| n.is_ascii_alphanumeric()),
                                "a live {sign} in {t:?} of\n{md}"
                            );
                        }
                    }
                }
                _ => {}
            }
        }
        assert_eq!(headings, 1, "{md}");
        // The only HTML is the writer's own: the one <details>, its summary (whose text is
        // escaped inside it) and the footer's <sub>.
        let html = html.concat();
        assert_eq!(html.matches("<details>").count(), 1, "{html}");
        assert_eq!(html.matches("</details>").count(), 1, "{html}");
        assert!(!html.contains("<!--"), "{html}");
    }
}
