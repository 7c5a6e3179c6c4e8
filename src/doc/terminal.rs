//! The terminal writer: plain text with aligned columns, fitted to the terminal.
//!
//! Markup is dropped (bold, code and links become their text; a link keeps its URL in
//! parentheses), `Details` are shown open under their summary, a table with a row limit shows
//! that many rows and counts the rest (unless [`Style::all`]), and charts are left out (the table
//! beside a chart holds its figures). A heading is followed directly by its content; other blocks
//! are separated by a blank line. Control characters — a terminal escape smuggled in through a
//! label — become `?`.
//!
//! With a width ([`Style::width`], read by the binary from the terminal or `COLUMNS`), paragraphs
//! wrap at spaces and a table wider than the terminal narrows its text columns — the widest first
//! — and wraps their cells onto continuation lines at a space, then after a `/` or `,`, then after
//! a host's whole label (`api.` + `example.com`). A column is not narrowed below its longest such
//! piece while another column can give way; a table that cannot fit so is laid out as records (a
//! row's first cell on a line, its other cells as `header: value` below), so no word is cut;
//! numbers are never cut. A limited table hides rows only when it hides three or more. With colour
//! ([`Style::color`]: a terminal, and `NO_COLOR` unset) headings and table headers are bold and an
//! alert's label is red; colour is added after layout, so widths count only what shows.

use super::tree::{Alert, Align, Block, Doc, Span, Table, Text};

/// How terminal text is laid out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Style {
    /// The terminal's width in columns; `None` lays out without a limit (a pipe, a file).
    pub width: Option<usize>,
    /// ANSI colour and bold.
    pub color: bool,
    /// Every row of every table, ignoring their limits (`--all`).
    pub all: bool,
}

/// The narrowest a text column is made when a table must fit.
const MIN_COLUMN: usize = 6;

/// A limited table hides rows only when it hides at least this many ("… 3 more not shown").
const HIDE_AT_LEAST: usize = 3;

pub fn write(doc: &Doc, style: &Style) -> String {
    let mut w = Writer {
        style: *style,
        out: String::new(),
    };
    w.blocks(&doc.blocks);
    w.out
}

struct Writer {
    style: Style,
    out: String,
}

impl Writer {
    fn blocks(&mut self, blocks: &[Block]) {
        let mut after_heading = true;
        for b in blocks {
            if matches!(b, Block::Chart(_)) {
                continue;
            }
            if !after_heading && !self.out.is_empty() {
                self.out.push('\n');
            }
            after_heading = false;
            match b {
                Block::Heading { text, .. } => {
                    let t = plain(text);
                    self.styled(&t, "1");
                    after_heading = true;
                }
                Block::Paragraph(t) | Block::Small(t) => self.wrapped(&plain(t), "", ""),
                Block::List(items) => {
                    for t in items {
                        self.wrapped(&plain(t), "  ", "    ");
                    }
                }
                Block::Quote(lines) => {
                    for t in lines {
                        self.wrapped(&plain(t), "", "  ");
                    }
                }
                Block::Alert { kind, lines } => self.alert(*kind, lines),
                Block::Table(t) => self.table(t),
                Block::Details { summary, body } => {
                    self.wrapped(&plain(summary), "", "");
                    self.blocks(body);
                }
                Block::Fence { lines, .. } => {
                    for l in lines {
                        self.out.push_str("  ");
                        self.out.push_str(&clean(l));
                        self.out.push('\n');
                    }
                }
                Block::Chart(_) => {}
            }
        }
    }

    /// A whole line in an SGR style (`1` bold, `1;31` bold red) when colour is on.
    fn styled(&mut self, line: &str, sgr: &str) {
        if self.style.color && !line.is_empty() {
            self.out
                .push_str(&format!("\u{1b}[{sgr}m{line}\u{1b}[0m\n"));
        } else {
            self.out.push_str(line);
            self.out.push('\n');
        }
    }

    /// Text wrapped at spaces to the width: the first line after `first`, the rest after `rest`.
    fn wrapped(&mut self, text: &str, first: &str, rest: &str) {
        let width = self
            .style
            .width
            .map(|w| w.saturating_sub(rest.len()).max(20));
        for (i, l) in wrap(text, width).iter().enumerate() {
            self.out.push_str(if i == 0 { first } else { rest });
            self.out.push_str(l);
            self.out.push('\n');
        }
    }

    fn alert(&mut self, kind: Alert, lines: &[Text]) {
        let label = format!("{}:", kind.label());
        let sgr = match kind {
            Alert::Caution => "1;31",
            Alert::Warning => "1;33",
        };
        let width = self.style.width.map(|w| w.saturating_sub(2).max(20));
        let mut first = true;
        for t in lines {
            for l in wrap(&plain(t), width) {
                if first {
                    if self.style.color {
                        self.out.push_str(&format!("\u{1b}[{sgr}m{label}\u{1b}[0m"));
                    } else {
                        self.out.push_str(&label);
                    }
                    self.out.push('\n');
                    first = false;
                }
                self.out.push_str("  ");
                self.out.push_str(&l);
                self.out.push('\n');
            }
        }
    }

    fn table(&mut self, t: &Table) {
        let limit = if self.style.all { None } else { t.limit };
        let mut shown = limit.unwrap_or(usize::MAX).min(t.rows.len());
        // A line that hides one or two rows takes as much room as they would: show them.
        if t.rows.len() - shown < HIDE_AT_LEAST {
            shown = t.rows.len();
        }
        let rows: Vec<Vec<String>> = t
            .rows
            .iter()
            .take(shown)
            .map(|r| r.iter().map(plain).collect())
            .collect();
        let mut widths: Vec<usize> = t.headers.iter().map(|h| width(h)).collect();
        for r in &rows {
            for (w, c) in widths.iter_mut().zip(r) {
                *w = (*w).max(width(c));
            }
        }
        if let Some(max) = self.style.width
            && !fit(&mut widths, t, &rows, max)
        {
            self.records(t, &rows);
        } else {
            self.grid(t, &rows, &widths);
        }
        if shown < t.rows.len() {
            self.out.push_str(&format!(
                "… {} more not shown (--all shows every row)\n",
                t.rows.len() - shown
            ));
        }
    }

    /// The table as a grid: a header, a rule and the rows in aligned columns.
    fn grid(&mut self, t: &Table, rows: &[Vec<String>], widths: &[usize]) {
        self.row(&t.headers, widths, t, true);
        let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
        self.row(&rule, widths, t, false);
        for r in rows {
            self.row(r, widths, t, false);
        }
    }

    /// A table too wide to fit without cutting a word, one record per row: its first cell on a
    /// line, then its other cells as `header: value` joined by ` · `, indented and wrapped as a
    /// paragraph (empty cells left out).
    fn records(&mut self, t: &Table, rows: &[Vec<String>]) {
        for r in rows {
            self.wrapped(r.first().map_or("", String::as_str), "", "  ");
            let fields: Vec<String> = t
                .headers
                .iter()
                .zip(r)
                .skip(1)
                .filter(|(_, c)| !c.trim().is_empty())
                .map(|(h, c)| {
                    if h.trim().is_empty() {
                        c.clone()
                    } else {
                        format!("{h}: {c}")
                    }
                })
                .collect();
            if !fields.is_empty() {
                self.wrapped(&fields.join(" · "), "  ", "  ");
            }
        }
    }

    /// One table row: each cell wrapped to its column, the row as many lines as its tallest cell.
    fn row(&mut self, cells: &[String], widths: &[usize], t: &Table, header: bool) {
        let wrapped: Vec<Vec<String>> = cells
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let w = widths.get(i).copied().unwrap_or(0);
                if t.align.get(i) == Some(&Align::Right) && !header {
                    vec![c.clone()]
                } else {
                    wrap(c, Some(w))
                }
            })
            .collect();
        let height = wrapped.iter().map(Vec::len).max().unwrap_or(1).max(1);
        for n in 0..height {
            let mut l = String::new();
            for (i, lines) in wrapped.iter().enumerate() {
                let c = lines.get(n).map(String::as_str).unwrap_or("");
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
            let l = l.trim_end().to_string();
            if header {
                self.styled(&l, "1");
            } else {
                self.out.push_str(&l);
                self.out.push('\n');
            }
        }
    }
}

/// Narrows a table until its rows fit `max` columns, in the order that costs a reader least:
/// first number columns to their widest figure (their header wraps); then text columns, the widest
/// first, to their longest word (wrapping between words; an id longer than 24 at its `/`); then to
/// their longest piece that [`wrap`] never cuts — an id broken only after `/`, then a host only
/// after a whole label's `.`. `false` when even that does not fit: the caller lays the rows out
/// as records instead of cutting words.
fn fit(widths: &mut [usize], t: &Table, rows: &[Vec<String>], max: usize) -> bool {
    let total = |w: &[usize]| w.iter().sum::<usize>() + 2 * w.len().saturating_sub(1);
    let longest_word = |s: &str| s.split(' ').map(width).max().unwrap_or(0);
    let column = |i: usize| rows.iter().filter_map(move |r| r.get(i));
    let header_word: Vec<usize> = t.headers.iter().map(|h| longest_word(h)).collect();
    let right = |i: usize| t.align.get(i) == Some(&Align::Right);
    let floor = |i: usize, piece: &dyn Fn(&str) -> usize| {
        let hw = header_word.get(i).copied().unwrap_or(0);
        column(i)
            .map(|c| piece(c))
            .max()
            .unwrap_or(0)
            .max(hw)
            .max(MIN_COLUMN)
    };
    let floors: [Vec<usize>; 4] = [
        (0..widths.len())
            .map(|i| {
                let hw = header_word.get(i).copied().unwrap_or(0);
                if right(i) {
                    column(i).map(|c| width(c)).max().unwrap_or(0).max(hw)
                } else {
                    usize::MAX
                }
            })
            .collect(),
        // A word longer than 24 is an id or a path: it may wrap at its `/` before a column of
        // short words wraps between them.
        (0..widths.len())
            .map(|i| {
                floor(i, &|c: &str| {
                    longest_word(c).min(24).max(longest_piece(c, true))
                })
            })
            .collect(),
        (0..widths.len())
            .map(|i| floor(i, &|c: &str| longest_piece(c, false)))
            .collect(),
        (0..widths.len())
            .map(|i| floor(i, &|c: &str| longest_piece(c, true)))
            .collect(),
    ];
    for (pass, floor) in floors.iter().enumerate() {
        while total(widths) > max {
            let widest = widths
                .iter()
                .enumerate()
                .filter(|(i, w)| {
                    (pass == 0 || !right(*i)) && **w > floor.get(*i).copied().unwrap_or(usize::MAX)
                })
                .max_by_key(|(i, w)| (**w, std::cmp::Reverse(*i)))
                .map(|(i, _)| i);
            match widest.and_then(|i| widths.get_mut(i)) {
                Some(w) => *w -= 1,
                None => break,
            }
        }
    }
    total(widths) <= max
}

/// Whether a line may break after the character at `i` without cutting a word: after a `/` (a
/// workload id, a path) or a `,`; with `dots`, also after a `.` that ends a whole label and is
/// followed by the next one's letter (`api.` + `chat.example.com`; never inside `1.5`). The space
/// is the writer's first choice and is handled apart.
fn breaks_after(chars: &[char], i: usize, dots: bool) -> bool {
    match chars.get(i) {
        Some('/' | ',') => i + 1 < chars.len(),
        Some('.') if dots => {
            i > 0
                && chars.get(i - 1).is_some_and(|c| c.is_alphanumeric())
                && chars.get(i + 1).is_some_and(|c| c.is_alphabetic())
        }
        _ => false,
    }
}

/// The longest run of `text` that [`wrap`] keeps on one line when it has to: split at spaces and
/// after every [`breaks_after`] point.
fn longest_piece(text: &str, dots: bool) -> usize {
    let mut longest = 0;
    for word in text.split(' ') {
        let chars: Vec<char> = word.chars().collect();
        let mut run = 0;
        for i in 0..chars.len() {
            run += 1;
            if breaks_after(&chars, i, dots) {
                longest = longest.max(run);
                run = 0;
            }
        }
        longest = longest.max(run);
    }
    longest
}

/// Splits `text` into lines of at most `width` characters (no limit: one line), breaking after a
/// space (dropped), else after a `/` or `,`, else after a label's `.` (kept on this line: see
/// [`breaks_after`]), and mid-word only
/// when a piece alone is longer than the line. A hyphen is not a break: `enterprise-api` and
/// `llama-70b` are names, not prose.
fn wrap(text: &str, width: Option<usize>) -> Vec<String> {
    let Some(width) = width.filter(|w| *w > 0) else {
        return vec![text.to_string()];
    };
    let mut lines = Vec::new();
    let mut rest: Vec<char> = text.chars().collect();
    while rest.len() > width {
        let space = (1..=width)
            .rev()
            .find(|i| rest.get(*i) == Some(&' '))
            .map(|i| (i, i + 1));
        let mark = |dots: bool| {
            (1..width)
                .rev()
                .find(|i| breaks_after(&rest, *i, dots))
                .map(|i| (i + 1, i + 1))
        };
        let (end, next) = space
            .or_else(|| mark(false))
            .or_else(|| mark(true))
            .unwrap_or((width, width));
        lines.push(
            rest.get(..end)
                .unwrap_or_default()
                .iter()
                .collect::<String>()
                .trim_end()
                .to_string(),
        );
        rest = rest.get(next..).unwrap_or_default().to_vec();
        while rest.first() == Some(&' ') {
            rest.remove(0);
        }
    }
    if !rest.is_empty() || lines.is_empty() {
        lines.push(rest.into_iter().collect());
    }
    lines
}

fn width(s: &str) -> usize {
    s.chars().count()
}

/// Inline text as one plain line.
fn plain(t: &Text) -> String {
    let mut s = String::new();
    inline(&t.0, &mut s);
    s
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

#[cfg(test)]
mod tests {
    use super::*;
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
        // Not even with colour on: only the writer's own escapes are written.
        let coloured = write(
            &d,
            &Style {
                color: true,
                ..Style::default()
            },
        );
        assert_eq!(coloured, "a?[31mb\n");
    }

    #[test]
    fn a_limited_table_counts_what_it_leaves_out_unless_all_rows_are_asked_for() {
        let t = Table::new(&["x"])
            .rows(0..5, |i| vec![i.to_string().into()])
            .limit(2);
        let mut d = Doc::new();
        d.push(Block::Table(t));
        assert!(
            d.terminal()
                .ends_with("1\n… 3 more not shown (--all shows every row)\n")
        );
        let all = write(
            &d,
            &Style {
                all: true,
                ..Style::default()
            },
        );
        assert!(all.ends_with("3\n4\n"), "{all}");
        // One or two rows past the limit are shown rather than counted.
        for (rows, limit) in [(3, 2), (4, 2)] {
            let mut d = Doc::new();
            d.push(Block::Table(
                Table::new(&["x"])
                    .rows(0..rows, |i| vec![i.to_string().into()])
                    .limit(limit),
            ));
            let out = d.terminal();
            assert!(!out.contains("not shown"), "{out}");
            assert!(out.ends_with(&format!("{}\n", rows - 1)), "{out}");
        }
    }

    #[test]
    fn a_wide_table_fits_the_width_by_wrapping_its_text_columns() {
        let t = Table::new(&["workload", ">GPUs", "why"]).rows(0..2, |i| {
            vec![
                format!("assistant-prod/DynamoGraphDeployment/llama-70b-{i}").into(),
                "160".into(),
                "gateway gateway-system/public-gw is public (config)".into(),
            ]
        });
        let mut d = Doc::new();
        d.push(Block::Table(t));
        let out = write(
            &d,
            &Style {
                width: Some(40),
                ..Style::default()
            },
        );
        for l in out.lines() {
            assert!(l.chars().count() <= 40, "{l:?} in\n{out}");
        }
        // Cut at separators, numbers whole, nothing lost.
        assert!(out.contains("assistant-prod/"), "{out}");
        assert!(out.contains(" 160 "), "{out}");
        assert!(out.contains("gateway-system/"), "{out}");
    }

    #[test]
    fn paragraphs_wrap_at_spaces_and_alerts_lead_with_their_label() {
        let mut d = Doc::new();
        d.paragraph("one two three four five six seven eight nine ten eleven twelve");
        d.push(Block::Alert {
            kind: Alert::Caution,
            lines: vec!["gate capacity failed: over by 8".into()],
        });
        let out = write(
            &d,
            &Style {
                width: Some(24),
                ..Style::default()
            },
        );
        assert_eq!(
            out,
            "one two three four five\nsix seven eight nine ten\neleven twelve\n\nCAUTION:\n  gate capacity failed:\n  over by 8\n"
        );
        let coloured = write(
            &d,
            &Style {
                color: true,
                ..Style::default()
            },
        );
        assert!(
            coloured.contains("\u{1b}[1;31mCAUTION:\u{1b}[0m"),
            "{coloured}"
        );
    }

    #[test]
    fn wrap_breaks_long_words_and_keeps_separators() {
        assert_eq!(wrap("abcdefgh", Some(3)), ["abc", "def", "gh"]);
        assert_eq!(wrap("ns/Kind/name", Some(8)), ["ns/Kind/", "name"]);
        assert_eq!(wrap("a b", None), ["a b"]);
        assert_eq!(wrap("", Some(4)), [""]);
        // A host breaks after a whole label, never inside one nor at a hyphen; a number is whole.
        assert_eq!(
            wrap("enterprise-api.example.com", Some(20)),
            ["enterprise-api.", "example.com"]
        );
        assert_eq!(
            wrap("api.chat.example.com", Some(15)),
            ["api.chat.", "example.com"]
        );
        assert_eq!(wrap("ratio 12.5%", Some(8)), ["ratio", "12.5%"]);
        assert_eq!(longest_piece("ns/DynamoGraphDeployment/x y.z", true), 22);
        assert_eq!(longest_piece("v1.5 a-b-c", true), 5);
        assert_eq!(longest_piece("batch/nightly.yaml:20", false), 15);
        assert_eq!(longest_piece("batch/nightly.yaml:20", true), 8);
        // A path breaks at its `/` before a file name breaks at its dot.
        assert_eq!(
            wrap("batch/nightly.yaml:20", Some(16)),
            ["batch/", "nightly.yaml:20"]
        );
    }
}
