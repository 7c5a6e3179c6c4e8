//! Finding the markers in a markdown document, with the line each one opens on.
//!
//! A marker is an HTML comment, invisible on GitHub: `<!-- gpuledger:fact PATH [FORMAT] -->`
//! or `<!-- gpuledger:table NAME -->`, then the text gpuledger owns, then `<!-- /gpuledger:fact -->`
//! (or `/gpuledger:table`). Only the bytes between an opening and its closing comment are ever
//! rewritten, so everything else in the document — its line endings, a byte-order mark, trailing
//! spaces — stays as it was. Markers inside code (a fenced block or a backtick span) are text about
//! markers, as in a README that documents them, and are left alone. This is not a markdown parser:
//! it knows fences and code spans, because those are where a marker is quoted rather than used.
//!
//! Anything half-formed is an error with its line, never a guess: an opening without its closing,
//! a marker opened inside another, a closing of the other kind or of nothing, a `gpuledger:`
//! comment that is not a fact or a table (github comment markers aside), a comment never closed.

use std::ops::Range;

use crate::error::InputError;

/// What a marker asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// One figure: a path into the report's JSON and how to write it.
    Fact { path: String, format: String },
    /// A whole table of the report, by name.
    Table { name: String },
}

impl Kind {
    /// `fact` or `table`: the word after `gpuledger:`.
    pub fn word(&self) -> &'static str {
        match self {
            Kind::Fact { .. } => "fact",
            Kind::Table { .. } => "table",
        }
    }
}

/// One marked span of a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marker {
    pub kind: Kind,
    /// The 1-based line of the opening comment.
    pub line: u32,
    /// The bytes between the opening and the closing comment: the text gpuledger owns.
    pub content: Range<usize>,
    /// The opening comment starts its line (after at most three spaces): markdown then reads the
    /// line as a block of HTML, which cuts a sentence around a fact in two.
    pub starts_line: bool,
}

/// The `gpuledger:` comments that belong to other parts of gpuledger (the hidden markers of its
/// pull-request comments and issues): a document that quotes one is not wrong.
const OTHER_MARKERS: [&str; 2] = ["comment", "issue"];

/// The markers of `text`, in order. `file` names the document in errors.
pub fn markers(file: &str, text: &str) -> Result<Vec<Marker>, InputError> {
    let lines = LineIndex::new(text);
    let err = |at: usize, message: String| InputError {
        file: file.to_string(),
        line: Some(lines.line(at)),
        column: Some(lines.column(text, at)),
        message,
    };
    let code = code_ranges(text);
    let mut out = Vec::new();
    // The open marker: its kind, where its comment starts, and where its content starts.
    let mut open: Option<(Kind, usize, usize)> = None;
    let mut from = 0;
    while let Some(rel) = text.get(from..).and_then(|t| t.find("<!--")) {
        let start = from + rel;
        if let Some(r) = code.iter().find(|r| r.contains(&start)) {
            from = r.end;
            continue;
        }
        let body_start = start + "<!--".len();
        let Some(body_len) = text.get(body_start..).and_then(|t| t.find("-->")) else {
            // A comment that never closes hides the rest of the document on GitHub; only ours is
            // our business.
            let rest = text.get(body_start..).unwrap_or_default();
            if rest.trim_start().starts_with("gpuledger:")
                || rest.trim_start().starts_with("/gpuledger:")
            {
                return Err(err(
                    start,
                    "this gpuledger comment is never closed with -->".into(),
                ));
            }
            break;
        };
        let end = body_start + body_len + "-->".len();
        from = end;
        let body = text
            .get(body_start..body_start + body_len)
            .unwrap_or_default();
        let words: Vec<&str> = body.split_whitespace().collect();
        let Some(first) = words.first() else { continue };
        if let Some(word) = first.strip_prefix("/gpuledger:") {
            let Some((kind, at, content_start)) = open.take() else {
                return Err(err(
                    start,
                    format!("<!-- /gpuledger:{word} --> closes no marker"),
                ));
            };
            if word != kind.word() || words.len() > 1 {
                return Err(err(
                    start,
                    format!(
                        "the gpuledger:{} marker of line {} is closed by <!-- /gpuledger:{}{} -->; close it with <!-- /gpuledger:{} -->",
                        kind.word(),
                        lines.line(at),
                        word,
                        if words.len() > 1 { " …" } else { "" },
                        kind.word()
                    ),
                ));
            }
            let line_start = text
                .get(..at)
                .and_then(|t| t.rfind('\n'))
                .map_or(0, |i| i + 1);
            let indent = text.get(line_start..at).unwrap_or_default();
            out.push(Marker {
                kind,
                line: lines.line(at),
                content: content_start..start,
                starts_line: indent.len() <= 3 && indent.chars().all(|c| c == ' '),
            });
            continue;
        }
        let Some(word) = first.strip_prefix("gpuledger:") else {
            continue;
        };
        if OTHER_MARKERS.contains(&word) {
            continue;
        }
        let args = words.get(1..).unwrap_or_default();
        let kind = match (word, args) {
            ("fact", [path]) => Kind::Fact {
                path: (*path).to_string(),
                format: "plain".into(),
            },
            ("fact", [path, format]) => Kind::Fact {
                path: (*path).to_string(),
                format: (*format).to_string(),
            },
            ("fact", _) => {
                return Err(err(
                    start,
                    "a fact marker is <!-- gpuledger:fact PATH [FORMAT] -->, e.g. <!-- gpuledger:fact fleet.gpus.placeable int -->".into(),
                ));
            }
            ("table", [name]) => Kind::Table {
                name: (*name).to_string(),
            },
            ("table", _) => {
                return Err(err(
                    start,
                    "a table marker is <!-- gpuledger:table NAME -->, e.g. <!-- gpuledger:table tenants -->".into(),
                ));
            }
            _ => {
                return Err(err(
                    start,
                    format!(
                        "unknown marker gpuledger:{word}: a marker is gpuledger:fact or gpuledger:table"
                    ),
                ));
            }
        };
        if let Some((outer, at, _)) = &open {
            return Err(err(
                start,
                format!(
                    "a gpuledger:{} marker inside the gpuledger:{} marker of line {}: markers do not nest (is <!-- /gpuledger:{} --> missing?)",
                    kind.word(),
                    outer.word(),
                    lines.line(*at),
                    outer.word()
                ),
            ));
        }
        open = Some((kind, start, end));
    }
    if let Some((kind, at, _)) = open {
        return Err(err(
            at,
            format!(
                "the gpuledger:{} marker is not closed: add <!-- /gpuledger:{} --> after its text",
                kind.word(),
                kind.word()
            ),
        ));
    }
    Ok(out)
}

/// Byte offsets of line starts, for 1-based lines and columns.
struct LineIndex(Vec<usize>);

impl LineIndex {
    fn new(text: &str) -> LineIndex {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex(starts)
    }

    fn line(&self, at: usize) -> u32 {
        let n = self.0.partition_point(|s| *s <= at);
        u32::try_from(n).unwrap_or(u32::MAX)
    }

    /// The column in characters, as an editor counts them.
    fn column(&self, text: &str, at: usize) -> u32 {
        let n = self.0.partition_point(|s| *s <= at);
        let start = self.0.get(n.saturating_sub(1)).copied().unwrap_or(0);
        let chars = text.get(start..at).map_or(0, |s| s.chars().count());
        u32::try_from(chars + 1).unwrap_or(u32::MAX)
    }
}

/// The byte ranges of fenced code blocks and backtick code spans: where a marker is quoted.
fn code_ranges(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    // Fenced blocks, line by line: an opening fence of three or more backticks or tildes (indented
    // at most three spaces) runs to a closing fence of the same character at least as long, or to
    // the end of the document.
    let mut fence: Option<(char, usize, usize)> = None;
    let mut pos = 0;
    let mut prose = Vec::new();
    let mut prose_start = 0;
    for line in text.split_inclusive('\n') {
        let indent = line.len() - line.trim_start_matches(' ').len();
        let rest = line.trim_start_matches(' ');
        let run = |c: char| rest.chars().take_while(|x| *x == c).count();
        match fence {
            None if indent <= 3 => {
                for c in ['`', '~'] {
                    let n = run(c);
                    let info = rest.get(n..).unwrap_or_default();
                    if n >= 3 && !(c == '`' && info.contains('`')) {
                        fence = Some((c, n, pos));
                        prose.push(prose_start..pos);
                        break;
                    }
                }
            }
            Some((c, n, start)) if indent <= 3 => {
                let m = run(c);
                if m >= n && rest.get(m..).unwrap_or_default().trim().is_empty() {
                    out.push(start..pos + line.len());
                    fence = None;
                    prose_start = pos + line.len();
                }
            }
            _ => {}
        }
        pos += line.len();
    }
    match fence {
        Some((_, _, start)) => out.push(start..text.len()),
        None => prose.push(prose_start..text.len()),
    }
    // Code spans in the prose between fences: a run of N backticks up to the next run of exactly N
    // (a run without its match is literal backticks). A blank line ends a paragraph, and a span.
    for r in prose {
        let Some(p) = text.get(r.clone()) else {
            continue;
        };
        let bytes = p.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            // A backslash-escaped backtick is literal and opens nothing (the report escapes a
            // backtick in a value that way).
            if bytes.get(i) != Some(&b'`') || (i > 0 && bytes.get(i - 1) == Some(&b'\\')) {
                i += 1;
                continue;
            }
            let n = bytes.iter().skip(i).take_while(|b| **b == b'`').count();
            let mut j = i + n;
            let mut close = None;
            while j < bytes.len() {
                if bytes.get(j) == Some(&b'`') {
                    let m = bytes.iter().skip(j).take_while(|b| **b == b'`').count();
                    if m == n {
                        close = Some(j + m);
                        break;
                    }
                    j += m;
                } else if p
                    .get(j..)
                    .is_some_and(|t| t.starts_with("\n\n") || t.starts_with("\n\r\n"))
                {
                    break;
                } else {
                    j += 1;
                }
            }
            match close {
                Some(end) => {
                    out.push(r.start + i..r.start + end);
                    i = end;
                }
                None => i += n,
            }
        }
    }
    out.sort_by_key(|r| r.start);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fact(path: &str, format: &str) -> Kind {
        Kind::Fact {
            path: path.into(),
            format: format.into(),
        }
    }

    #[test]
    fn facts_and_tables_are_found_with_their_lines_and_content() {
        let text = "# Fleet\n\nWe have <!-- gpuledger:fact fleet.gpus.placeable -->503<!-- /gpuledger:fact --> GPUs\n(<!--gpuledger:fact fleet.utilisation percent-->85.5%<!--/gpuledger:fact-->).\n\n<!-- gpuledger:table tenants -->\n| a |\n<!-- /gpuledger:table -->\n";
        let m = markers("README.md", text).unwrap();
        assert_eq!(m.len(), 3);
        assert_eq!(m[0].kind, fact("fleet.gpus.placeable", "plain"));
        assert_eq!((m[0].line, &text[m[0].content.clone()]), (3, "503"));
        assert_eq!(m[1].kind, fact("fleet.utilisation", "percent"));
        assert_eq!((m[1].line, &text[m[1].content.clone()]), (4, "85.5%"));
        assert_eq!(
            m[2].kind,
            Kind::Table {
                name: "tenants".into()
            }
        );
        assert_eq!((m[2].line, &text[m[2].content.clone()]), (6, "\n| a |\n"));
    }

    #[test]
    fn markers_quoted_in_code_are_text_and_other_comments_are_ignored() {
        let text = "Write `<!-- gpuledger:fact x -->1<!-- /gpuledger:fact -->` or\n\n```md\n<!-- gpuledger:table tenants -->\n```\n\n~~~~\n<!-- gpuledger:fact y\n~~~~\n<!-- a comment --> ``<!-- /gpuledger:fact -->`` <!-- gpuledger:comment scope=\"x\" -->\n<!-- gpuledger:fact z -->2<!-- /gpuledger:fact -->";
        let m = markers("a.md", text).unwrap();
        assert_eq!(m.len(), 1, "{m:?}");
        assert_eq!(m[0].kind, fact("z", "plain"));
        assert_eq!(m[0].line, 11);
        // An unclosed fence runs to the end: nothing after it is a marker.
        assert!(
            markers("a.md", "```\n<!-- gpuledger:fact x -->")
                .unwrap()
                .is_empty()
        );
        // A lone backtick is literal; the marker after it is real.
        let m = markers(
            "a.md",
            "a ` b <!-- gpuledger:fact x -->1<!-- /gpuledger:fact -->",
        )
        .unwrap();
        assert_eq!(m.len(), 1);
    }

    #[test]
    fn malformed_markers_are_errors_at_their_line() {
        let cases = [
            ("a\n<!-- gpuledger:fact x -->1\n", 2, "is not closed"),
            (
                "<!-- gpuledger:fact x -->\n<!-- gpuledger:fact y -->1<!-- /gpuledger:fact -->",
                2,
                "do not nest",
            ),
            ("\n\n<!-- /gpuledger:fact -->", 3, "closes no marker"),
            (
                "<!-- gpuledger:table t -->x<!-- /gpuledger:fact -->",
                1,
                "is closed by <!-- /gpuledger:fact -->",
            ),
            (
                "<!-- gpuledger:facts x -->",
                1,
                "unknown marker gpuledger:facts",
            ),
            ("<!-- gpuledger:fact -->", 1, "PATH [FORMAT]"),
            ("<!-- gpuledger:fact a b c -->", 1, "PATH [FORMAT]"),
            ("<!-- gpuledger:table -->", 1, "NAME"),
            ("x\n <!-- gpuledger:fact x", 2, "never closed"),
        ];
        for (text, line, says) in cases {
            let e = markers("doc.md", text).unwrap_err();
            assert_eq!(e.line, Some(line), "{text:?}: {e}");
            assert!(e.to_string().contains(says), "{text:?}: {e}");
            assert!(e.to_string().starts_with(&format!("doc.md:{line}:")), "{e}");
        }
    }

    #[test]
    fn lines_count_crlf_and_columns_count_characters() {
        let text = "é\r\nxé <!-- gpuledger:fact x -->1<!-- /gpuledger:fact -->\r\n";
        let m = markers("a.md", text).unwrap();
        assert_eq!(m[0].line, 2);
        assert_eq!(&text[m[0].content.clone()], "1");
        let e = markers("a.md", "é\r\nxé <!-- gpuledger:fact x -->").unwrap_err();
        assert_eq!((e.line, e.column), (Some(2), Some(4)));
    }
}
