//! The fast path for YAML documents: the block-style subset that `kubectl get -o yaml` and most
//! generators write, parsed by hand into a small tree.
//!
//! serde-saphyr reads every YAML 1.2 document, at a few tens of megabytes a second: its scanner,
//! parser and event queue are general. Kubernetes objects as tools write them use little of YAML:
//! block mappings and sequences indented with spaces, one-line plain, single- and double-quoted
//! scalars, `{}` and `[]`, comments. This module parses exactly that subset of one document (as
//! `super::yaml` cut it from its stream) into a [`Node`] tree that borrows the document's text, and
//! `super::yaml_value` reads the tree into the same objects through the document seeds.
//!
//! Anything outside the subset gives `None`, and the caller reads the document with serde-saphyr,
//! which gives the same objects, or the error with its line: anchors, aliases, tags, flow
//! collections other than `{}`/`[]`, block scalars, multi-line scalars, complex and duplicate keys,
//! directives, tabs, carriage returns, any byte outside printable ASCII, odd indentation. The fast
//! path changes how long a read takes, never what it returns; a differential test
//! (`super::yaml_value`'s tests) holds it to that.

use std::borrow::Cow;

/// A node of a document in the subset.
#[derive(Debug, PartialEq)]
pub(super) enum Node<'a> {
    /// A scalar: its text (escapes applied) and whether it was plain (unquoted), which decides its
    /// type (see [`plain_kind`]).
    Scalar {
        text: Cow<'a, str>,
        plain: bool,
    },
    /// A mapping, the line (from the document's first, 1-based) its first key or `{` is on, as
    /// serde-saphyr's `Spanned` gives it.
    Map {
        line: u32,
        entries: Vec<(Node<'a>, Node<'a>)>,
    },
    Seq(Vec<Node<'a>>),
}

/// How deep a document may nest before it is left to serde-saphyr (which bounds depth at 200).
const MAX_DEPTH: usize = 100;

/// Longest implicit key YAML allows (1024 characters, YAML 1.2 §7.4.2 `ns-s-implicit-yaml-key`).
const MAX_KEY: usize = 1024;

/// A line with content (not blank, not a comment).
#[derive(Debug, Clone, Copy)]
struct Line {
    /// Its number, from the document's first line, 1-based.
    no: u32,
    /// Leading spaces.
    indent: usize,
    /// Byte offsets of its content (after the indentation) and of its end (before `\n`).
    start: usize,
    end: usize,
}

/// The tree of one document, or `None` when the document is not in the subset.
pub(super) fn parse(text: &str) -> Option<Node<'_>> {
    // Printable ASCII and line feeds only: no tabs, no `\r`, no control or non-ASCII bytes.
    if !text
        .bytes()
        .all(|b| b == b'\n' || (0x20..0x7f).contains(&b))
    {
        return None;
    }
    let lines = content_lines(text)?;
    if lines.is_empty() {
        return Some(Node::Scalar {
            text: Cow::Borrowed(""),
            plain: true,
        });
    }
    let mut p = Parser {
        text,
        lines,
        at: 0,
        depth: 0,
    };
    let first = *p.lines.first()?;
    let node = p.block(first.indent, first.start)?;
    (p.at == p.lines.len()).then_some(node)
}

/// The document's content lines, without a leading `---` line and a trailing `...` line (the
/// stream's cut leaves at most those), or `None` for any other marker or a directive.
fn content_lines(text: &str) -> Option<Vec<Line>> {
    let mut lines = Vec::new();
    let mut ended = false;
    for (i, raw) in text.split('\n').enumerate() {
        let indent = raw.bytes().take_while(|&b| b == b' ').count();
        let content = raw.get(indent..)?;
        if content.is_empty() || content.starts_with('#') {
            continue;
        }
        if ended {
            return None;
        }
        let no = u32::try_from(i + 1).ok()?;
        if indent == 0 {
            if let Some(rest) = marker_rest(content, "---") {
                // Only as the first line, with nothing but a comment after it.
                if !lines.is_empty() || !is_end(rest) {
                    return None;
                }
                continue;
            }
            if let Some(rest) = marker_rest(content, "...") {
                if !is_end(rest) {
                    return None;
                }
                ended = true;
                continue;
            }
            if content.starts_with('%') {
                return None;
            }
        }
        let start = offset_in(text, content);
        lines.push(Line {
            no,
            indent,
            start,
            end: start + content.len(),
        });
    }
    Some(lines)
}

/// What follows a document marker at the start of `content`, when it is one.
fn marker_rest<'a>(content: &'a str, marker: &str) -> Option<&'a str> {
    let rest = content.strip_prefix(marker)?;
    (rest.is_empty() || rest.starts_with(' ')).then_some(rest)
}

/// Whether what is left of a line is nothing, or blanks and a comment.
fn is_end(rest: &str) -> bool {
    let t = rest.trim_start_matches(' ');
    t.is_empty() || (t.starts_with('#') && (t.len() < rest.len() || rest.starts_with('#')))
}

/// The byte offset of `part` within `whole` (a subslice of it).
fn offset_in(whole: &str, part: &str) -> usize {
    part.as_ptr() as usize - whole.as_ptr() as usize
}

struct Parser<'a> {
    text: &'a str,
    lines: Vec<Line>,
    /// The next line to read.
    at: usize,
    depth: usize,
}

impl<'a> Parser<'a> {
    fn line(&self) -> Option<Line> {
        self.lines.get(self.at).copied()
    }

    fn slice(&self, from: usize, to: usize) -> &'a str {
        self.text.get(from..to).unwrap_or_default()
    }

    /// A block node whose first line is the current one, starting at byte `col` of it (past a
    /// `- ` when it is a sequence entry's), indented by `indent`.
    fn block(&mut self, indent: usize, col: usize) -> Option<Node<'a>> {
        let line = self.line()?;
        let content = self.slice(col, line.end);
        if is_entry(content) {
            // `- - x`: a sequence in a sequence entry's line.
            if col != line.start {
                return None;
            }
            return self.seq(indent);
        }
        if looks_like_key(content) {
            return self.map(indent, col);
        }
        // A scalar on its own line: multi-line, or a document that is one scalar.
        None
    }

    fn enter(&mut self) -> Option<()> {
        self.depth += 1;
        (self.depth <= MAX_DEPTH).then_some(())
    }

    /// A block sequence whose entries start at column `indent`, from the current line.
    fn seq(&mut self, indent: usize) -> Option<Node<'a>> {
        self.enter()?;
        let mut items = Vec::new();
        while let Some(line) = self.line() {
            if line.indent < indent {
                break;
            }
            let content = self.slice(line.start, line.end);
            if line.indent > indent {
                return None;
            }
            if !is_entry(content) {
                break; // the mapping this sequence is a value of goes on
            }
            let after = content.get(1..).unwrap_or_default();
            let pad = after.bytes().take_while(|&b| b == b' ').count();
            let rest = after.get(pad..).unwrap_or_default();
            if is_end(rest) {
                self.at += 1;
                items.push(self.below(indent, false)?);
            } else if looks_like_key(rest) {
                let col = line.start + 1 + pad;
                items.push(self.map(col - (line.start - line.indent), col)?);
            } else {
                items.push(inline(rest, line.no)?);
                self.at += 1;
            }
        }
        self.depth -= 1;
        Some(Node::Seq(items))
    }

    /// A block mapping whose keys start at column `indent`, the first at byte `col` of the current
    /// line.
    fn map(&mut self, indent: usize, col: usize) -> Option<Node<'a>> {
        self.enter()?;
        let first = self.line()?;
        let mut entries: Vec<(Node<'a>, Node<'a>)> = Vec::new();
        let mut col = col;
        while let Some(line) = self.line() {
            let content = self.slice(col, line.end);
            let (key, used) = key(content)?;
            let rest = content.get(used..).unwrap_or_default();
            let pad = rest.bytes().take_while(|&b| b == b' ').count();
            let rest = rest.get(pad..).unwrap_or_default();
            let value = if is_end(rest) {
                self.at += 1;
                self.below(indent, true)?
            } else {
                self.at += 1;
                inline(rest, line.no)?
            };
            entries.push((key, value));
            let Some(next) = self.line() else { break };
            if next.indent < indent {
                break;
            }
            if next.indent > indent || is_entry(self.slice(next.start, next.end)) {
                return None;
            }
            col = next.start;
        }
        if has_duplicates(&entries) {
            return None;
        }
        self.depth -= 1;
        Some(Node::Map {
            line: first.no,
            entries,
        })
    }

    /// The value of a key or entry whose line ends after it: a block node on the following lines,
    /// indented deeper than `indent` (or, for a key, a sequence at the same indentation), or an
    /// empty plain scalar (null).
    fn below(&mut self, indent: usize, same_indent_seq: bool) -> Option<Node<'a>> {
        if let Some(next) = self.line() {
            if next.indent > indent {
                return self.block(next.indent, next.start);
            }
            if same_indent_seq
                && next.indent == indent
                && is_entry(self.slice(next.start, next.end))
            {
                return self.seq(indent);
            }
        }
        Some(Node::Scalar {
            text: Cow::Borrowed(""),
            plain: true,
        })
    }
}

/// Whether `content` starts a block sequence entry: `-` followed by a space or the line's end.
fn is_entry(content: &str) -> bool {
    content == "-" || content.starts_with("- ")
}

/// Whether `content` (not an entry) reads as a key: a quoted scalar followed by `:`, or a plain
/// one that has `: ` or ends with `:`.
fn looks_like_key(content: &str) -> bool {
    match content.as_bytes().first() {
        Some(b'"') => double_quoted(content)
            .is_some_and(|(_, n)| content.get(n..).is_some_and(|r| r.starts_with(':'))),
        Some(b'\'') => single_quoted(content)
            .is_some_and(|(_, n)| content.get(n..).is_some_and(|r| r.starts_with(':'))),
        _ => {
            let t = content.trim_end_matches(' ');
            t.contains(": ") || t.ends_with(':')
        }
    }
}

/// A key at the start of `content` and the bytes it takes with its `:`, or `None`.
fn key(content: &str) -> Option<(Node<'_>, usize)> {
    let (text, plain, end) = match content.as_bytes().first()? {
        b'"' => {
            let (t, n) = double_quoted(content)?;
            (t, false, n)
        }
        b'\'' => {
            let (t, n) = single_quoted(content)?;
            (t, false, n)
        }
        _ => {
            let at = plain_key_end(content)?;
            let t = content.get(..at)?;
            if t.ends_with(' ') || t.contains(" #") || !is_plain_start(t) || t == "<<" {
                return None;
            }
            // A key that would be typed (null, a boolean, a number) is left to serde-saphyr.
            if plain_kind(t) != PlainKind::Str {
                return None;
            }
            (Cow::Borrowed(t), true, at)
        }
    };
    if text.len() > MAX_KEY || !content.get(end..)?.starts_with(':') {
        return None;
    }
    // The `:` is followed by a blank or the line's end.
    let after = content.get(end + 1..)?;
    if !(after.is_empty() || after.starts_with(' ')) {
        return None;
    }
    Some((Node::Scalar { text, plain }, end + 1))
}

/// Where a plain key ends: the first `:` followed by a blank or the line's end.
fn plain_key_end(content: &str) -> Option<usize> {
    let b = content.as_bytes();
    (0..b.len()).find(|&i| b.get(i) == Some(&b':') && matches!(b.get(i + 1), None | Some(b' ')))
}

/// Whether a plain scalar may start as `t` does in block context (YAML 1.2 §7.3.3
/// `ns-plain-first`): not with an indicator, except `-`, `?` and `:` before a non-blank. `?` and
/// `:` are left to serde-saphyr all the same.
fn is_plain_start(t: &str) -> bool {
    match t.as_bytes() {
        [] => false,
        [b'-', next, ..] => *next != b' ',
        [first, ..] => !b"-?:,[]{}#&*!|>'\"%@`".contains(first),
    }
}

/// A value that follows its key or `- ` on the same line: `{}`, `[]`, a quoted or plain scalar.
fn inline(rest: &str, line: u32) -> Option<Node<'_>> {
    let (node, after) = match rest.as_bytes().first()? {
        b'"' => {
            let (text, n) = double_quoted(rest)?;
            (Node::Scalar { text, plain: false }, rest.get(n..)?)
        }
        b'\'' => {
            let (text, n) = single_quoted(rest)?;
            (Node::Scalar { text, plain: false }, rest.get(n..)?)
        }
        b'{' => (
            Node::Map {
                line,
                entries: Vec::new(),
            },
            rest.strip_prefix("{}")?,
        ),
        b'[' => (Node::Seq(Vec::new()), rest.strip_prefix("[]")?),
        _ => {
            // A comment starts at ` #`; the scalar is what comes before it, without trailing blanks.
            let text = rest
                .find(" #")
                .map_or(rest, |i| rest.get(..i).unwrap_or_default());
            let text = text.trim_end_matches(' ');
            if !is_plain_start(text) || text.contains(": ") || text.ends_with(':') {
                return None;
            }
            // serde-saphyr reads even an ignored value, and refuses some (a non-finite float):
            // a scalar typed by a rule not copied is left to it wherever it is.
            if plain_kind(text) == PlainKind::Other {
                return None;
            }
            let node = Node::Scalar {
                text: Cow::Borrowed(text),
                plain: true,
            };
            return Some(node);
        }
    };
    if !(after.is_empty() || (after.starts_with(' ') && is_end(after))) {
        return None;
    }
    Some(node)
}

/// A one-line double-quoted scalar at the start of `s` (past its `"`), and the bytes it takes
/// with both quotes. Escapes: `\\ \" \/ \n \t \r` and `\u` with four hex digits outside the surrogates (YAML 1.2
/// §5.7); any other escape, or no closing quote on the line, gives `None`.
fn double_quoted(s: &str) -> Option<(Cow<'_, str>, usize)> {
    let body = s.get(1..)?;
    let b = body.as_bytes();
    let first = b.iter().position(|&c| c == b'"' || c == b'\\')?;
    if b.get(first) == Some(&b'"') {
        return Some((Cow::Borrowed(body.get(..first)?), first + 2));
    }
    let mut out = String::from(body.get(..first)?);
    let mut i = first;
    loop {
        match *b.get(i)? {
            b'"' => return Some((Cow::Owned(out), i + 2)),
            b'\\' => {
                let e = *b.get(i + 1)?;
                i += 2;
                out.push(match e {
                    b'\\' => '\\',
                    b'"' => '"',
                    b'/' => '/',
                    b'n' => '\n',
                    b't' => '\t',
                    b'r' => '\r',
                    b'u' => {
                        let hex = body.get(i..i + 4)?;
                        if !hex.bytes().all(|c| c.is_ascii_hexdigit()) {
                            return None;
                        }
                        i += 4;
                        char::from_u32(u32::from_str_radix(hex, 16).ok()?)?
                    }
                    _ => return None,
                });
            }
            c => {
                out.push(char::from(c));
                i += 1;
            }
        }
    }
}

/// A one-line single-quoted scalar at the start of `s` (`''` is a quote), and the bytes it takes.
fn single_quoted(s: &str) -> Option<(Cow<'_, str>, usize)> {
    let body = s.get(1..)?;
    let mut at = body.find('\'')?;
    if !body.get(at + 1..)?.starts_with('\'') {
        return Some((Cow::Borrowed(body.get(..at)?), at + 2));
    }
    let mut out = String::new();
    let mut from = 0;
    loop {
        if body.get(at + 1..)?.starts_with('\'') {
            out.push_str(body.get(from..=at)?);
            from = at + 2;
            at = from + body.get(from..)?.find('\'')?;
        } else {
            out.push_str(body.get(from..at)?);
            return Some((Cow::Owned(out), at + 2));
        }
    }
}

/// Whether two keys of a mapping are the same (serde-saphyr refuses duplicate keys).
fn has_duplicates(entries: &[(Node<'_>, Node<'_>)]) -> bool {
    if entries.len() <= 16 {
        // Keys of one mapping mostly differ in length or in their last byte: compared whole only
        // when those agree.
        let quick = |k: &str| (k.len(), k.as_bytes().last().copied());
        return entries.iter().enumerate().any(|(i, a)| {
            let (ka, qa) = (key_text(a), quick(key_text(a)));
            entries.get(i + 1..).is_some_and(|rest| {
                rest.iter()
                    .any(|b| quick(key_text(b)) == qa && key_text(b) == ka)
            })
        });
    }
    let mut seen = std::collections::HashSet::with_capacity(entries.len());
    !entries.iter().all(|e| seen.insert(key_text(e)))
}

/// The text of an entry's key (always a scalar in this subset).
fn key_text<'e>((k, _): &'e (Node<'_>, Node<'_>)) -> &'e str {
    match k {
        Node::Scalar { text, .. } => text.as_ref(),
        _ => "",
    }
}

/// What a plain scalar's text is as a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PlainKind {
    Null,
    Bool(bool),
    Unsigned(u64),
    Negative(i64),
    Str,
    /// Typed by a rule this reader does not copy: left to serde-saphyr.
    Other,
}

/// The type of a plain scalar, as serde-saphyr types it (see `super::yaml_value`).
pub(super) fn plain_kind(t: &str) -> PlainKind {
    match t {
        "" | "~" | "null" | "Null" | "NULL" => return PlainKind::Null,
        "true" => return PlainKind::Bool(true),
        "false" => return PlainKind::Bool(false),
        _ => {}
    }
    let digits = t.strip_prefix('-').unwrap_or(t);
    let decimal = !digits.is_empty()
        && digits.len() <= 18
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'));
    if decimal {
        if digits.len() == t.len() {
            return digits.parse().map_or(PlainKind::Other, PlainKind::Unsigned);
        }
        if digits != "0" {
            return t.parse().map_or(PlainKind::Other, PlainKind::Negative);
        }
        return PlainKind::Other;
    }
    let unsigned = t.strip_prefix(['+', '-']).unwrap_or(t);
    // `.inf`, `-.nan`, and the words Rust's float parser knows.
    let word = unsigned.strip_prefix('.').unwrap_or(unsigned);
    if ["inf", "infinity", "nan"]
        .iter()
        .any(|w| word.eq_ignore_ascii_case(w))
    {
        return PlainKind::Other;
    }
    match unsigned.as_bytes().first() {
        Some(b) if b.is_ascii_digit() || *b == b'.' => {
            if maybe_number(unsigned) {
                PlainKind::Other
            } else {
                PlainKind::Str
            }
        }
        _ => {
            // YAML 1.1 booleans: serde-saphyr reads `yes`, `off`… as booleans.
            const WORDS: [&str; 8] = ["y", "yes", "n", "no", "on", "off", "true", "false"];
            if WORDS.iter().any(|w| unsigned.eq_ignore_ascii_case(w)) {
                PlainKind::Other
            } else {
                PlainKind::Str
            }
        }
    }
}

/// Whether `t` (past its sign) may be read as a number by some rule: a radix prefix (`0x`, `0o`,
/// `0b`, any case) before digits of its radix, or digits and underscores with at most one `.` and
/// an exponent. An address, a version, a date or a uid (`69c73752-…`, `0bb07356-…`) is not.
fn maybe_number(t: &str) -> bool {
    let b = t.as_bytes();
    if let [b'0', radix, digits @ ..] = b {
        let digit = |c: &u8| match radix {
            b'x' | b'X' => c.is_ascii_hexdigit(),
            b'o' | b'O' => (b'0'..=b'7').contains(c),
            b'b' | b'B' => matches!(c, b'0' | b'1'),
            _ => false,
        };
        if digits.iter().all(|c| digit(c) || *c == b'_') && b"xXoObB".contains(radix) {
            return true;
        }
    }
    let digits = |i: usize| {
        i + b
            .iter()
            .skip(i)
            .take_while(|c| c.is_ascii_digit() || **c == b'_')
            .count()
    };
    let mut i = digits(0);
    if b.get(i) == Some(&b'.') {
        i = digits(i + 1);
    }
    // A number has a digit before its exponent: `.` or `._` is a string.
    if !b.iter().take(i).any(u8::is_ascii_digit) {
        return false;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        i = digits(i);
    }
    i == b.len()
}
