//! Splitting a long document into parts that each fit GitHub's limit on a comment or issue body
//! (65,536 characters, and in any case 262,144 bytes), over the document's blocks — never by
//! reading markdown back.
//!
//! The markdown writer lays a document out as [`Node`]s: gaps between blocks, leaves that stay
//! whole (a paragraph, a table row, a line of a fence) and groups a cut may fall inside (a
//! `<details>`, a table, a fence, a list), each knowing the text that opens, closes and reopens it.
//! Parts are packed greedily, shallowest boundaries first: a node that does not fit the rest of a
//! part goes whole to the next part, unless it is larger than a whole part, in which case the
//! packer descends into it (a group) or cuts it at a character boundary (a leaf, the last resort).
//! A part cut inside groups ends by closing them, innermost first — the fence, then `</details>` —
//! and the next part reopens them outermost first: `<details><summary>… (continued)</summary>`, a
//! table's header and separator rows, the fence's opening line. A group is never left right after
//! its opening: the opening moves to the next part with its content. Everything inserted counts
//! against the budgets. Gaps at either end of a part are dropped; nothing else is changed.
//!
//! When everything does not fit in the parts allowed, the last part is filled as far as it goes —
//! descending into groups rather than leaving room — with room kept for its closings and the
//! caller's overflow note, which ends it; the rest is dropped. Budgets under [`MIN_STRUCTURED`]
//! characters leave no room for structure and get plain character chunks, and nesting so deep that
//! closing and reopening it would take more than a quarter of a part is cut without reopening.

use std::ops::{Add, Sub};

use crate::doc::Doc;
use crate::doc::markdown::{self, Node};

/// GitHub rejects bodies over this many bytes, whatever their length in characters.
const MAX_BYTES: usize = 262_144;
/// Below this many characters per part there is no room to close and reopen anything.
const MIN_STRUCTURED: usize = 200;
/// What separates the last part's content from the overflow note.
const NOTE_SEP: &str = "\n\n";

/// Splits `doc` into at most `max_parts` parts of at most `max_chars` characters (Unicode scalar
/// values) and 262,144 bytes each.
///
/// When everything does not fit, the last part ends with `overflow_note` (markdown, counted
/// against its budget) and the rest is dropped. Always returns at least one part (an empty one for
/// an empty document); `max_parts == 0` counts as 1.
pub fn split(doc: &Doc, max_chars: usize, max_parts: usize, overflow_note: &str) -> Vec<String> {
    let max_parts = max_parts.max(1);
    let budget = Size {
        chars: max_chars,
        bytes: MAX_BYTES,
    };
    let nodes = markdown::nodes(doc);
    if max_chars < MIN_STRUCTURED {
        let mut text = String::new();
        for n in &nodes {
            n.write(&mut text);
        }
        return split_plain(&text, budget, max_parts, overflow_note);
    }
    // The note is short by contract; should it not be, the part still needs room for content.
    let note_room = Size {
        chars: budget.chars / 2,
        bytes: budget.bytes / 2,
    } - Size::of(NOTE_SEP);
    let note = overflow_note
        .get(..fitting_prefix(overflow_note, note_room))
        .unwrap_or("");
    let parts = Packer::new(budget, None).run(&nodes);
    if parts.len() <= max_parts {
        return parts;
    }
    Packer::new(budget, Some((max_parts, note))).run(&nodes)
}

/// [`split`] into a single part: the body for callers that post one comment only.
pub fn truncate(doc: &Doc, max_chars: usize, overflow_note: &str) -> String {
    split(doc, max_chars, 1, overflow_note).concat()
}

/// Characters and bytes: every part must fit both.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Size {
    chars: usize,
    bytes: usize,
}

impl Size {
    fn of(s: &str) -> Size {
        Size {
            chars: s.chars().count(),
            bytes: s.len(),
        }
    }

    fn fits(self, budget: Size) -> bool {
        self.chars <= budget.chars && self.bytes <= budget.bytes
    }
}

impl Add for Size {
    type Output = Size;
    fn add(self, o: Size) -> Size {
        Size {
            chars: self.chars.saturating_add(o.chars),
            bytes: self.bytes.saturating_add(o.bytes),
        }
    }
}

impl Sub for Size {
    type Output = Size;
    fn sub(self, o: Size) -> Size {
        Size {
            chars: self.chars.saturating_sub(o.chars),
            bytes: self.bytes.saturating_sub(o.bytes),
        }
    }
}

/// A group the current part is inside.
struct Open<'a> {
    open: &'a str,
    reopen: &'a str,
    close: &'a str,
    /// Where its opening starts in the current part.
    mark: usize,
    /// Whether any content of it is in the current part (else a cut moves its opening on).
    has_content: bool,
}

struct Packer<'a> {
    budget: Size,
    /// The last part allowed and the note that ends it, when the parts are limited.
    limit: Option<(usize, &'a str)>,
    parts: Vec<String>,
    cur: String,
    size: Size,
    /// Where the current part's content starts (after the reopened openings).
    content_from: usize,
    stack: Vec<Open<'a>>,
    /// What closing the stack costs.
    closing: Size,
    /// A gap to write before the next content in this part.
    gap: bool,
    done: bool,
}

impl<'a> Packer<'a> {
    fn new(budget: Size, limit: Option<(usize, &'a str)>) -> Packer<'a> {
        Packer {
            budget,
            limit,
            parts: Vec::new(),
            cur: String::new(),
            size: Size::default(),
            content_from: 0,
            stack: Vec::new(),
            closing: Size::default(),
            gap: false,
            done: false,
        }
    }

    fn run(mut self, nodes: &'a [Node]) -> Vec<String> {
        for n in nodes {
            self.node(n);
        }
        if !self.done {
            self.finish_part(false);
        }
        if self.parts.is_empty() {
            self.parts.push(String::new());
        }
        self.parts
    }

    fn last(&self) -> bool {
        self.limit
            .is_some_and(|(max, _)| self.parts.len() + 1 >= max)
    }

    /// Room left for content in the current part: the closings and (on the last part) the note
    /// are kept free.
    fn room(&self) -> Size {
        let mut reserved = self.size + self.closing;
        if self.last()
            && let Some((_, note)) = self.limit
        {
            reserved = reserved + Size::of(NOTE_SEP) + Size::of(note);
        }
        if self.gap {
            reserved = reserved + Size::of("\n");
        }
        self.budget - reserved
    }

    fn has_content(&self) -> bool {
        self.cur.len() > self.content_from
    }

    /// What a fresh part costs before any content: the reopened openings.
    fn reopen_cost(&self) -> Size {
        self.stack
            .iter()
            .fold(Size::default(), |s, o| s + Size::of(o.reopen))
            + self.closing
    }

    /// Writes a pending gap, unless the part has no content yet (a part never starts with one).
    fn flush_gap(&mut self) {
        if self.gap && self.has_content() {
            self.cur.push('\n');
            self.size = self.size + Size::of("\n");
        }
        self.gap = false;
    }

    fn push_text(&mut self, s: &str, content: bool) {
        if content {
            self.flush_gap();
        }
        self.cur.push_str(s);
        self.size = self.size + Size::of(s);
        if content {
            for o in &mut self.stack {
                o.has_content = true;
            }
        }
    }

    fn node(&mut self, n: &'a Node) {
        if self.done {
            return;
        }
        match n {
            Node::Gap => self.gap = true,
            Node::Leaf(s) => self.leaf(s),
            Node::Group {
                open,
                reopen,
                close,
                children,
            } => {
                let mut text = String::new();
                n.write(&mut text);
                let whole = Size::of(&text);
                if whole.fits(self.room()) {
                    self.push_text(&text, true);
                    return;
                }
                // It fits a part of its own: it goes whole to the next part.
                if !self.last()
                    && self.has_content()
                    && whole.fits(self.budget - self.reopen_cost())
                {
                    self.cut();
                    self.push_text(&text, true);
                    return;
                }
                self.descend(open, reopen, close, children);
            }
        }
    }

    fn descend(&mut self, open: &'a str, reopen: &'a str, close: &'a str, children: &'a [Node]) {
        let overhead = self.reopen_cost() + Size::of(reopen) + Size::of(close) + Size::of(close);
        let structured = overhead.chars <= self.budget.chars / 4;
        if !Size::of(open).fits(self.room() - Size::of(close)) && self.has_content() {
            self.cut();
            if self.done {
                return;
            }
        }
        if !structured {
            // Too deep to close and reopen: its opening and closing are cut like any text.
            self.leaf(open);
            for c in children {
                self.node(c);
            }
            self.leaf(close);
            return;
        }
        self.flush_gap();
        let mark = self.cur.len();
        self.push_text(open, false);
        {
            self.stack.push(Open {
                open,
                reopen,
                close,
                mark,
                has_content: false,
            });
            self.closing = self.closing + Size::of(close);
        }
        for c in children {
            self.node(c);
            if self.done {
                return;
            }
        }
        self.stack.pop();
        self.closing = self.closing - Size::of(close);
        self.gap = false;
        self.push_text(close, false);
    }

    fn leaf(&mut self, s: &'a str) {
        let size = Size::of(s);
        if size.fits(self.room()) {
            self.push_text(s, true);
            return;
        }
        if self.has_content() && size.fits(self.budget - self.reopen_cost()) {
            // Whole in the next part; on the last part there is none, so this is where it ends.
            self.cut();
            if !self.done {
                self.push_text(s, true);
            }
            return;
        }
        // Longer than any part: cut at character boundaries, each piece ending its line so that
        // what closes the part starts on a line of its own.
        let mut rest = s;
        while !rest.is_empty() && !self.done {
            let take = fitting_prefix(rest, self.room() - Size::of("\n"));
            if take == 0 {
                if !self.has_content() {
                    // Not even one character fits an empty part: give up on the rest.
                    return;
                }
                self.cut();
                continue;
            }
            let (head, tail) = rest.split_at(take);
            self.push_text(head, true);
            rest = tail;
            if !rest.is_empty() {
                if !head.ends_with('\n') {
                    self.push_text("\n", true);
                }
                self.cut();
            }
        }
    }

    /// Ends the current part here and starts the next one inside the same groups; on the last
    /// part, ends it with the note instead and stops.
    fn cut(&mut self) {
        // A group with nothing of its own in this part moves to the next part whole.
        let mut moved = Vec::new();
        while self.stack.last().is_some_and(|o| !o.has_content) {
            if let Some(o) = self.stack.pop() {
                self.cur.truncate(o.mark);
                self.closing = self.closing - Size::of(o.close);
                moved.push(o);
            }
        }
        self.size = Size::of(&self.cur);
        if self.last() {
            self.finish_part(true);
            self.done = true;
            return;
        }
        self.finish_part(false);
        let mut next = String::new();
        for o in &self.stack {
            next.push_str(o.reopen);
        }
        self.content_from = next.len();
        self.cur = next;
        self.size = Size::of(&self.cur);
        for mut o in moved.into_iter().rev() {
            o.mark = self.cur.len();
            o.has_content = false;
            self.cur.push_str(o.open);
            self.closing = self.closing + Size::of(o.close);
            self.stack.push(o);
        }
        self.size = Size::of(&self.cur);
        self.gap = false;
    }

    /// Closes what is open and files the part, ending it with the note when the document is cut
    /// short here.
    fn finish_part(&mut self, cut_short: bool) {
        let mut part = std::mem::take(&mut self.cur);
        for o in self.stack.iter().rev() {
            part.push_str(o.close);
        }
        let keep = trimmed_len(&part);
        part.truncate(keep);
        if cut_short && let Some((_, note)) = self.limit {
            if part.ends_with('\n') {
                part.pop();
            }
            if !part.is_empty() {
                part.push_str(NOTE_SEP);
            }
            part.push_str(note);
        }
        self.parts.push(part);
        self.size = Size::default();
        self.content_from = 0;
    }
}

/// For budgets too small to hold any structure: consecutive character chunks.
fn split_plain(markdown: &str, budget: Size, max_parts: usize, note: &str) -> Vec<String> {
    let mut rest = markdown.get(..trimmed_len(markdown)).unwrap_or("");
    let mut parts = Vec::new();
    while !rest.is_empty() && parts.len() < max_parts {
        let take = fitting_prefix(rest, budget);
        if take == 0 {
            break;
        }
        if parts.len() + 1 == max_parts && take < rest.len() {
            let reserve = Size::of(NOTE_SEP) + Size::of(note);
            if reserve.fits(budget) {
                let take = fitting_prefix(rest, budget - reserve);
                let mut part = rest.get(..take).unwrap_or("").to_string();
                if !part.is_empty() {
                    part.push_str(NOTE_SEP);
                }
                part.push_str(note);
                parts.push(part);
            } else {
                parts.push(rest.get(..take).unwrap_or("").to_string());
            }
            break;
        }
        parts.push(rest.get(..take).unwrap_or("").to_string());
        rest = rest.get(take..).unwrap_or("");
    }
    if parts.is_empty() {
        parts.push(String::new());
    }
    parts
}

/// The byte length of the longest prefix of `s` that fits `limit`.
fn fitting_prefix(s: &str, limit: Size) -> usize {
    let mut acc = Size::default();
    for (i, ch) in s.char_indices() {
        acc = acc
            + Size {
                chars: 1,
                bytes: ch.len_utf8(),
            };
        if !acc.fits(limit) {
            return i;
        }
    }
    s.len()
}

/// The byte length of `s` without its trailing blank lines (the last other line keeps its line
/// ending and any trailing spaces, which may be a hard line break).
fn trimmed_len(s: &str) -> usize {
    let kept = s.trim_end_matches([' ', '\t', '\r', '\n']).len();
    if kept == 0 {
        return 0;
    }
    s.get(kept..)
        .and_then(|tail| tail.find('\n'))
        .map_or(s.len(), |k| kept + k + 1)
}

#[cfg(test)]
mod tests;
