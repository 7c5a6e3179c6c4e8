//! Markdown budget: splits a long report into parts that each fit GitHub's limit on a comment or
//! issue body (65,536 characters, and in any case 262,144 bytes), without leaving a code fence or
//! a `<details>` element open or broken in any part.
//!
//! The document is read line by line, tracking what is open: a fenced code block (CommonMark: up
//! to three spaces of indentation, then three or more backticks or tildes; it is closed by a line
//! of the same character, at least as many, with nothing but whitespace after; a backtick fence's
//! info string holds no backtick) and, outside fences, the nesting of `<details>` elements, counted
//! tag by tag so that `<details><summary>Added (3)</summary>` opens one and a line may both close
//! and open. Each open `<details>` remembers its `<summary>` text. Tags inside a code span do not
//! count: a report may well mention `` `<details>` `` in prose.
//!
//! Parts are packed greedily, cutting at the shallowest boundaries first. Between top-level blocks
//! (nothing open) a part takes block after block while they fit; a block that does not fit goes
//! whole to the next part, unless it is larger than a whole part, in which case it is cut inside,
//! again preferring its own shallowest boundaries: between nested blocks rather than inside a
//! fence, at blank lines rather than between two lines of a paragraph, never right after an
//! opening or right before a closing. A part cut inside a block ends by closing what is open (the
//! fence, then `</details>` for each open element, innermost first) and the next part starts by
//! reopening it in the original order: `<details><summary>{summary} (continued)</summary>` and an
//! empty line for each element, then the fence's original opening line, info string included. A
//! table cut between rows starts again with its header and separator rows so the rest still renders
//! as a table. All of that inserted text counts against the budgets. A single line too long for
//! any part is cut at a character boundary, with the same closing and reopening around the cut.
//!
//! When everything does not fit in the parts allowed, the last part is filled as far as it goes
//! with room kept for its closings and the caller's overflow note, which ends it; the rest is
//! dropped. Nothing else is dropped or changed: parts only lose trailing blank lines (and
//! continuation parts their leading blank lines outside fences, which would be trailing ones of
//! the part before).
//!
//! Limits, fine for the reports we render: fences inside list items or block quotes are only
//! recognised when indented three spaces or less; `<details>` in an HTML comment counts; a summary,
//! `<details ...>` tag or fence line longer than [`REOPEN_CAP`] characters is shortened when
//! reopened; and nesting so deep that reopening it would take more than a quarter of a part is not
//! reopened at all (those cuts are plain); a line too long for any part that holds `<details>`
//! tags is cut without regard to them. Budgets under [`MIN_STRUCTURED`] characters leave no room
//! for any of this and get plain character chunks.

use std::ops::{Add, Sub};

/// GitHub rejects bodies over this many bytes, whatever their length in characters.
const MAX_BYTES: usize = 262_144;
/// Below this many characters per part there is no room to close and reopen anything.
const MIN_STRUCTURED: usize = 200;
/// Longest summary, `<details ...>` tag or fence opening line repeated as is when reopening: a
/// part cut inside a block must keep most of its room for the block.
const REOPEN_CAP: usize = 200;
/// Boundaries to cut at only when nothing better fits: right after an opening, right before a
/// closing, inside a table's header and separator.
const AVOID: u32 = u32::MAX - 1;
/// Inside a line too long for any part.
const HARD: u32 = u32::MAX;
const CLOSE_DETAILS: &str = "</details>\n";

/// Splits `markdown` into at most `max_parts` parts of at most `max_chars` characters (Unicode
/// scalar values, `str::chars().count()`) each, and at most 262,144 bytes each.
///
/// When everything does not fit in `max_parts` parts, the last part ends with `overflow_note`
/// (which counts against its budget) and the rest is dropped. Always returns at least one part (an
/// empty one for an empty input); `max_parts == 0` counts as 1.
pub fn split(
    markdown: &str,
    max_chars: usize,
    max_parts: usize,
    overflow_note: &str,
) -> Vec<String> {
    let max_parts = max_parts.max(1);
    let budget = Size {
        chars: max_chars,
        bytes: MAX_BYTES,
    };
    if max_chars < MIN_STRUCTURED {
        return split_plain(markdown, budget, max_parts, overflow_note);
    }
    // The note is short by contract; should it not be, the part still needs room for content.
    let note_room = Size {
        chars: budget.chars / 2,
        bytes: budget.bytes / 2,
    } - Size::of(NOTE_SEP);
    let note = overflow_note
        .get(..fitting_prefix(overflow_note, note_room))
        .unwrap_or("");
    let reserve = Size::of(NOTE_SEP) + Size::of(note);
    Doc::new(markdown, budget, budget - reserve).split(max_parts, note)
}

/// [`split`] into a single part: the body for callers that post one comment only.
pub fn truncate(markdown: &str, max_chars: usize, overflow_note: &str) -> String {
    split(markdown, max_chars, 1, overflow_note).concat()
}

/// What separates the last part's content from the overflow note.
const NOTE_SEP: &str = "\n\n";

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

    fn divided(self, n: usize) -> Size {
        Size {
            chars: self.chars / n,
            bytes: self.bytes / n,
        }
    }

    fn times(self, n: usize) -> Size {
        Size {
            chars: self.chars.saturating_mul(n),
            bytes: self.bytes.saturating_mul(n),
        }
    }

    fn max(self, other: Size) -> Size {
        Size {
            chars: self.chars.max(other.chars),
            bytes: self.bytes.max(other.bytes),
        }
    }
}

impl Add for Size {
    type Output = Size;
    fn add(self, other: Size) -> Size {
        Size {
            chars: self.chars.saturating_add(other.chars),
            bytes: self.bytes.saturating_add(other.bytes),
        }
    }
}

impl Sub for Size {
    type Output = Size;
    fn sub(self, other: Size) -> Size {
        Size {
            chars: self.chars.saturating_sub(other.chars),
            bytes: self.bytes.saturating_sub(other.bytes),
        }
    }
}

/// What is open between two lines: the innermost `<details>` (its parents chain to the outermost)
/// and the fence, which is always innermost since nothing opens inside a fence.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct State {
    details: Option<usize>,
    fence: Option<usize>,
}

/// One `<details>` element. Elements form a tree by `parent`, so that every line can name what is
/// open by one index however deep the nesting.
struct Details {
    parent: Option<usize>,
    depth: usize,
    line: usize,
    tag: String,
    summary: Option<String>,
    /// `<details><summary>… (continued)</summary>` and the empty line after it.
    reopen: String,
    /// The reopening of this element and all its ancestors.
    reopen_all: Size,
}

struct Fence {
    ch: u8,
    len: usize,
    line: usize,
    reopen: String,
    close: String,
    reopen_size: Size,
    close_size: Size,
}

struct Line {
    start: usize,
    end: usize,
    before: State,
    after: State,
    blank: bool,
    /// Opens, closes or holds a `<details>` tag, or opens or closes a fence.
    structural: bool,
    heading: bool,
    /// Counts as content of what encloses it (for not cutting an element before anything of it).
    content: bool,
    separator: bool,
    /// For a table's body row: the line of the table's header row.
    header: Option<usize>,
}

/// A line, or a piece of a line too long for any part. Cuts happen between segments.
struct Seg {
    start: usize,
    end: usize,
    line: usize,
    first: bool,
    terminated: bool,
}

struct Doc<'a> {
    text: &'a str,
    lines: Vec<Line>,
    details: Vec<Details>,
    fences: Vec<Fence>,
    segs: Vec<Seg>,
    /// `sums[j]` is the size of segments `0..j`.
    sums: Vec<Size>,
    /// `class[j]` ranks the boundary before segment `j`: lower is a better place to cut.
    class: Vec<u32>,
    budget: Size,
    /// The budget less the overflow note: what the last part's content and closings may take.
    avail: Size,
}

impl<'a> Doc<'a> {
    fn new(markdown: &'a str, budget: Size, avail: Size) -> Doc<'a> {
        let mut doc = Doc {
            text: markdown.get(..trimmed_len(markdown)).unwrap_or(""),
            lines: Vec::new(),
            details: Vec::new(),
            fences: Vec::new(),
            segs: Vec::new(),
            sums: Vec::new(),
            class: Vec::new(),
            budget,
            avail,
        };
        doc.read_lines();
        doc.find_tables();
        doc.prepare_reopenings();
        doc.cut_segments();
        doc.classify();
        doc
    }

    fn line_text(&self, i: usize) -> &'a str {
        let text: &'a str = self.text;
        self.lines
            .get(i)
            .and_then(|l| text.get(l.start..l.end))
            .unwrap_or("")
    }

    fn body(&self, i: usize) -> &'a str {
        self.line_text(i).trim_end_matches(['\n', '\r'])
    }

    fn read_lines(&mut self) {
        let text: &'a str = self.text;
        let mut state = State::default();
        // A `<details>` whose summary may come on the next line.
        let mut awaiting_summary: Option<usize> = None;
        let mut start = 0;
        for raw in text.split_inclusive('\n') {
            let end = start + raw.len();
            let body = raw.trim_end_matches(['\n', '\r']);
            let i = self.lines.len();
            let before = state;
            let blank = is_blank(body);
            let mut tags = false;
            if let Some(f) = state.fence {
                if self.fences.get(f).is_some_and(|f| closes_fence(body, f)) {
                    state.fence = None;
                }
            } else if let Some(fence) = open_fence(body, i) {
                self.fences.push(fence);
                state.fence = Some(self.fences.len() - 1);
                awaiting_summary = None;
            } else {
                for tag in details_tags(body) {
                    tags = true;
                    awaiting_summary = None;
                    match tag {
                        Token::Open { tag, summary } => {
                            let depth = self.depth_of(state.details) + 1;
                            let waiting = summary.is_none();
                            self.details.push(Details {
                                parent: state.details,
                                depth,
                                line: i,
                                tag,
                                summary,
                                reopen: String::new(),
                                reopen_all: Size::default(),
                            });
                            let id = self.details.len() - 1;
                            state.details = Some(id);
                            if waiting {
                                awaiting_summary = Some(id);
                            }
                        }
                        Token::Close => {
                            // A stray `</details>` closes nothing of ours.
                            if let Some(d) = state.details {
                                state.details = self.details.get(d).and_then(|d| d.parent);
                            }
                        }
                    }
                }
                if !tags
                    && !blank
                    && let Some(d) = awaiting_summary.take()
                    && state.details == Some(d)
                    && let Some(summary) = summary_at_start(body)
                    && let Some(details) = self.details.get_mut(d)
                {
                    details.summary = Some(summary);
                }
            }
            let in_fence = before.fence.is_some() || state.fence.is_some();
            let summary_only =
                !in_fence && starts_with_tag(body.trim_start().as_bytes(), b"<summary");
            let opens = self.depth(state) > self.depth(before);
            self.lines.push(Line {
                start,
                end,
                before,
                after: state,
                blank,
                structural: tags || before != state,
                heading: !in_fence && strip_indent(body).is_some_and(|b| b.starts_with('#')),
                content: !blank && !opens && !summary_only,
                separator: false,
                header: None,
            });
            start = end;
        }
    }

    fn is_row(&self, i: usize) -> bool {
        self.lines
            .get(i)
            .is_some_and(|l| l.before.fence.is_none() && l.after.fence.is_none())
            && strip_indent(self.body(i)).is_some_and(|b| b.starts_with('|'))
    }

    fn find_tables(&mut self) {
        let mut header: Option<usize> = None;
        for i in 0..self.lines.len() {
            if !self.is_row(i) {
                header = None;
                continue;
            }
            if self.lines[i].separator {
                continue;
            }
            if let Some(h) = header {
                self.lines[i].header = Some(h);
            } else if self.is_row(i + 1) && is_separator(self.body(i + 1)) {
                header = Some(i);
                self.lines[i + 1].separator = true;
            }
        }
    }

    fn prepare_reopenings(&mut self) {
        // Parents come before their children, so one pass sees every parent finished.
        for i in 0..self.details.len() {
            let d = &self.details[i];
            let tag = if d.tag.chars().count() <= REOPEN_CAP {
                d.tag.as_str()
            } else {
                "<details>"
            };
            let summary = capped(d.summary.as_deref().unwrap_or("Details"));
            let reopen = format!("{tag}<summary>{summary} (continued)</summary>\n\n");
            let parent = d
                .parent
                .and_then(|p| self.details.get(p))
                .map_or(Size::default(), |p| p.reopen_all);
            self.details[i].reopen_all = parent + Size::of(&reopen);
            self.details[i].reopen = reopen;
        }
    }

    fn cut_segments(&mut self) {
        let newline = Size::of("\n");
        for i in 0..self.lines.len() {
            let line = &self.lines[i];
            let (start, end) = (line.start, line.end);
            let text = self.line_text(i);
            let terminated = text.ends_with('\n');
            let overhead = self.reopen_size(line.before)
                + self
                    .header_of_line(i)
                    .map_or(Size::default(), |h| self.header_size(h))
                + self
                    .close_size(line.before)
                    .max(self.close_size(line.after));
            // Any segment alone, with what a part must add around it, fits even the last part.
            let limit = self.avail - overhead - newline;
            if Size::of(text).fits(limit) {
                self.segs.push(Seg {
                    start,
                    end,
                    line: i,
                    first: true,
                    terminated,
                });
                continue;
            }
            let mut piece_start = start;
            let mut acc = Size::default();
            for (offset, ch) in text.char_indices() {
                let next = acc
                    + Size {
                        chars: 1,
                        bytes: ch.len_utf8(),
                    };
                if !next.fits(limit) && acc.chars > 0 {
                    self.segs.push(Seg {
                        start: piece_start,
                        end: start + offset,
                        line: i,
                        first: piece_start == start,
                        terminated: false,
                    });
                    piece_start = start + offset;
                    acc = Size::default();
                }
                acc = acc
                    + Size {
                        chars: 1,
                        bytes: ch.len_utf8(),
                    };
            }
            self.segs.push(Seg {
                start: piece_start,
                end,
                line: i,
                first: piece_start == start,
                terminated,
            });
        }
        self.sums.push(Size::default());
        for j in 0..self.segs.len() {
            let seg = &self.segs[j];
            let size = Size::of(self.text.get(seg.start..seg.end).unwrap_or(""));
            self.sums.push(self.sums[j] + size);
        }
    }

    fn classify(&mut self) {
        let n = self.lines.len();
        let mut content_before = vec![0usize; n + 1];
        for i in 0..n {
            content_before[i + 1] = content_before[i] + usize::from(self.lines[i].content);
        }
        let mut next_nonblank = vec![None; n + 1];
        for i in (0..n).rev() {
            next_nonblank[i] = if self.lines[i].blank {
                next_nonblank[i + 1]
            } else {
                Some(i)
            };
        }
        let mut prev_nonblank = vec![None; n + 1];
        for i in 1..=n {
            prev_nonblank[i] = if self.lines[i - 1].blank {
                prev_nonblank[i - 1]
            } else {
                Some(i - 1)
            };
        }
        let line_class = |i: usize| -> u32 {
            let (prev, line) = (&self.lines[i - 1], &self.lines[i]);
            // Between a table's header and separator, or before its first row, the part before
            // would end with a table of no rows.
            if line.separator || prev.separator {
                return AVOID;
            }
            let st = line.before;
            let depth = self.depth(st);
            if depth > 0 {
                let opened = match (st.fence, st.details) {
                    (Some(f), _) => self.fences.get(f).map_or(0, |f| f.line),
                    (None, Some(d)) => self.details.get(d).map_or(0, |d| d.line),
                    (None, None) => 0,
                };
                let nothing_yet = content_before[i] == content_before[(opened + 1).min(i)];
                let closes_next = next_nonblank[i].is_some_and(|q: usize| {
                    self.depth(self.lines[q].after) < self.depth(self.lines[q].before)
                });
                if nothing_yet || closes_next {
                    return AVOID;
                }
            }
            let nested = u32::try_from(depth).unwrap_or(u32::MAX).saturating_mul(2);
            let inside_code = st.fence.is_some();
            let block_break =
                prev.blank || line.blank || prev.structural || line.structural || line.heading;
            // A heading belongs with what follows it.
            let after_heading = prev_nonblank[i].is_some_and(|p: usize| self.lines[p].heading);
            let within = inside_code || !block_break || after_heading;
            nested.saturating_add(u32::from(within)).min(AVOID - 1)
        };
        let m = self.segs.len();
        let mut class = vec![0; m + 1];
        for (j, c) in class.iter_mut().enumerate().take(m).skip(1) {
            let seg = &self.segs[j];
            *c = if seg.first {
                line_class(seg.line)
            } else {
                HARD
            };
        }
        self.class = class;
    }

    fn depth_of(&self, details: Option<usize>) -> usize {
        details
            .and_then(|d| self.details.get(d))
            .map_or(0, |d| d.depth)
    }

    fn depth(&self, st: State) -> usize {
        self.depth_of(st.details) + usize::from(st.fence.is_some())
    }

    fn state_at(&self, j: usize) -> State {
        match self.segs.get(j) {
            Some(seg) => self.lines[seg.line].before,
            None => self.lines.last().map_or(State::default(), |l| l.after),
        }
    }

    fn reopen_full(&self, st: State) -> Size {
        let details = st
            .details
            .and_then(|d| self.details.get(d))
            .map_or(Size::default(), |d| d.reopen_all);
        let fence = st
            .fence
            .and_then(|f| self.fences.get(f))
            .map_or(Size::default(), |f| f.reopen_size);
        details + fence
    }

    fn close_full(&self, st: State) -> Size {
        let fence = st
            .fence
            .and_then(|f| self.fences.get(f))
            .map_or(Size::default(), |f| f.close_size);
        let depth = self.depth_of(st.details);
        let details = if depth > 0 {
            Size::of("\n") + Size::of(CLOSE_DETAILS).times(depth)
        } else {
            Size::default()
        };
        fence + details
    }

    /// Structure so deep (or a fence so long) that repeating it would crowd out the content is
    /// neither closed nor reopened.
    fn plain(&self, st: State) -> bool {
        !(self.reopen_full(st) + self.close_full(st)).fits(self.avail.divided(4))
    }

    fn reopen_size(&self, st: State) -> Size {
        if self.plain(st) {
            Size::default()
        } else {
            self.reopen_full(st)
        }
    }

    fn close_size(&self, st: State) -> Size {
        if self.plain(st) {
            Size::default()
        } else {
            self.close_full(st)
        }
    }

    fn reopen_text(&self, st: State) -> String {
        let mut out = String::new();
        if self.plain(st) {
            return out;
        }
        let mut chain = Vec::new();
        let mut cur = st.details;
        while let Some(d) = cur.and_then(|d| self.details.get(d)) {
            chain.push(d.reopen.as_str());
            cur = d.parent;
        }
        for reopen in chain.iter().rev() {
            out.push_str(reopen);
        }
        if let Some(f) = st.fence.and_then(|f| self.fences.get(f)) {
            out.push_str(&f.reopen);
        }
        out
    }

    fn close_text(&self, st: State) -> String {
        let mut out = String::new();
        if self.plain(st) {
            return out;
        }
        if let Some(f) = st.fence.and_then(|f| self.fences.get(f)) {
            out.push_str(&f.close);
        }
        let depth = self.depth_of(st.details);
        if depth > 0 {
            out.push('\n');
            out.push_str(&CLOSE_DETAILS.repeat(depth));
        }
        out
    }

    /// The header row to repeat when a part starts at line `i`: `i` is a table's body row and
    /// the header and separator are short enough to repeat.
    fn header_of_line(&self, i: usize) -> Option<usize> {
        let h = self.lines.get(i)?.header?;
        self.header_size(h).fits(self.avail.divided(8)).then_some(h)
    }

    fn header_size(&self, h: usize) -> Size {
        Size::of(self.line_text(h)) + Size::of(self.line_text(h + 1))
    }

    fn header_at(&self, j: usize) -> Option<usize> {
        let seg = self.segs.get(j)?;
        if seg.first {
            self.header_of_line(seg.line)
        } else {
            None
        }
    }

    fn prefix_size(&self, j: usize) -> Size {
        self.reopen_size(self.state_at(j))
            + self
                .header_at(j)
                .map_or(Size::default(), |h| self.header_size(h))
    }

    fn prefix_text(&self, j: usize) -> String {
        let mut out = self.reopen_text(self.state_at(j));
        if let Some(h) = self.header_at(j) {
            out.push_str(self.line_text(h));
            out.push_str(self.line_text(h + 1));
        }
        out
    }

    /// What a part ending before segment `c` adds after its content.
    fn tail_size(&self, c: usize) -> Size {
        let newline = match c.checked_sub(1).and_then(|p| self.segs.get(p)) {
            Some(seg) if !seg.terminated => Size::of("\n"),
            _ => Size::default(),
        };
        newline + self.close_size(self.state_at(c))
    }

    fn range(&self, s: usize, c: usize) -> Size {
        self.sums[c] - self.sums[s]
    }

    fn split(&self, max_parts: usize, note: &str) -> Vec<String> {
        let m = self.segs.len();
        let mut parts = Vec::new();
        let mut s = 0;
        loop {
            if !parts.is_empty() {
                s = self.skip_blank(s);
            }
            if s >= m {
                break;
            }
            if (self.prefix_size(s) + self.range(s, m)).fits(self.budget) {
                parts.push(self.emit(s, m, None));
                break;
            }
            if parts.len() + 1 >= max_parts {
                let c = self.choose_cut(s, self.avail, true);
                parts.push(self.emit(s, c, Some(note)));
                break;
            }
            let c = self.choose_cut(s, self.budget, false);
            parts.push(self.emit(s, c, None));
            s = c;
        }
        if parts.is_empty() {
            parts.push(String::new());
        }
        parts
    }

    /// Blank lines at a cut belong to neither part; inside a fence they are code and stay.
    fn skip_blank(&self, mut s: usize) -> usize {
        while let Some(seg) = self.segs.get(s) {
            let line = &self.lines[seg.line];
            let whole_blank_line = seg.first && seg.end == line.end && line.blank;
            if !whole_blank_line || line.before.fence.is_some() {
                break;
            }
            s += 1;
        }
        s
    }

    /// Every boundary after `s` where a part starting at `s` fits `limit`, with its class.
    fn feasible(&self, s: usize, limit: Size) -> Vec<(usize, u32)> {
        let m = self.segs.len();
        let prefix = self.prefix_size(s);
        let mut out = Vec::new();
        for c in s + 1..=m {
            let content = prefix + self.range(s, c);
            if !content.fits(limit) {
                break;
            }
            if c == m {
                out.push((c, 0));
                break;
            }
            if (content + self.tail_size(c)).fits(limit) {
                out.push((c, self.class[c]));
            }
        }
        out
    }

    /// Where the part starting at segment `s` ends. Level by level, from the shallowest class of
    /// boundary: take the furthest boundary that fits, unless the block after it is too big for a
    /// part of its own, in which case look inside that block at the next level. `fill` is for the
    /// last part before an overflow note, which simply goes as far as it can.
    fn choose_cut(&self, s: usize, limit: Size, fill: bool) -> usize {
        let cands = self.feasible(s, limit);
        let furthest = |worst: u32| {
            cands
                .iter()
                .rev()
                .find(|&&(_, class)| class <= worst)
                .map(|&(c, _)| c)
        };
        if !fill {
            let mut levels: Vec<u32> = cands
                .iter()
                .map(|&(_, class)| class)
                .filter(|&class| class < AVOID)
                .collect();
            levels.sort_unstable();
            levels.dedup();
            let mut base = s;
            let mut best = None;
            for level in levels {
                let Some(c) = cands
                    .iter()
                    .rev()
                    .find(|&&(c, class)| c > base && class <= level)
                    .map(|&(c, _)| c)
                else {
                    continue;
                };
                if c == self.segs.len() || self.next_block_fits(c, level) {
                    return c;
                }
                base = c;
                best = Some(c);
            }
            if let Some(c) = best {
                return c;
            }
        }
        furthest(AVOID - 1)
            .or_else(|| furthest(AVOID))
            .or_else(|| furthest(HARD))
            // Unreachable: every segment fits a part of its own (see `cut_segments`).
            .unwrap_or(s + 1)
    }

    /// Whether the block starting at `c` and ending at the next boundary of class `level` or
    /// better fits a part of its own.
    fn next_block_fits(&self, c: usize, level: u32) -> bool {
        let m = self.segs.len();
        let prefix = self.prefix_size(c);
        for e in c + 1..=m {
            let content = prefix + self.range(c, e);
            if !content.fits(self.budget) {
                return false;
            }
            if e == m {
                return true;
            }
            if self.class[e] <= level {
                return (content + self.tail_size(e)).fits(self.budget);
            }
        }
        false
    }

    fn emit(&self, s: usize, c: usize, note: Option<&str>) -> String {
        let mut out = self.prefix_text(s);
        let (start, end) = (self.segs[s].start, self.segs[c - 1].end);
        out.push_str(self.text.get(start..end).unwrap_or(""));
        if c < self.segs.len() {
            let st = self.state_at(c);
            let close = self.close_text(st);
            if !close.is_empty() {
                // The closing brings its own blank line; in code, blank lines are content.
                if st.fence.is_none() {
                    out.truncate(trimmed_len(&out));
                }
                if !out.is_empty() && !out.ends_with('\n') {
                    out.push('\n');
                }
                out.push_str(&close);
            }
        }
        out.truncate(trimmed_len(&out));
        if let Some(note) = note {
            out.truncate(out.trim_end_matches(['\n', '\r']).len());
            if !out.is_empty() {
                out.push_str(NOTE_SEP);
            }
            out.push_str(note);
        }
        out
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

fn is_blank(body: &str) -> bool {
    body.trim_matches([' ', '\t', '\r', '\n']).is_empty()
}

/// The line without up to three spaces of indentation, or `None` when indented more (code).
fn strip_indent(body: &str) -> Option<&str> {
    let indent = body.bytes().take_while(|&b| b == b' ').count();
    if indent > 3 { None } else { body.get(indent..) }
}

fn is_separator(body: &str) -> bool {
    strip_indent(body).is_some_and(|b| {
        b.starts_with('|')
            && b.contains('-')
            && b.chars().all(|c| matches!(c, '|' | '-' | ':' | ' ' | '\t'))
    })
}

/// Up to [`REOPEN_CAP`] characters of `s`, marked when shortened.
fn capped(s: &str) -> String {
    match s.char_indices().nth(REOPEN_CAP) {
        Some((i, _)) => format!("{}…", s.get(..i).unwrap_or("")),
        None => s.to_string(),
    }
}

/// A fence marker: indentation, character, length and what follows the run.
fn fence_marker(body: &str) -> Option<(usize, u8, usize, &str)> {
    let rest = strip_indent(body)?;
    let indent = body.len() - rest.len();
    let ch = *rest.as_bytes().first()?;
    if ch != b'`' && ch != b'~' {
        return None;
    }
    let len = rest.bytes().take_while(|&b| b == ch).count();
    if len < 3 {
        return None;
    }
    Some((indent, ch, len, rest.get(len..)?))
}

fn open_fence(body: &str, line: usize) -> Option<Fence> {
    let (indent, ch, len, info) = fence_marker(body)?;
    if ch == b'`' && info.contains('`') {
        return None;
    }
    let marker = format!(
        "{}{}",
        " ".repeat(indent),
        char::from(ch).to_string().repeat(len)
    );
    let reopen = if body.chars().count() <= REOPEN_CAP {
        format!("{body}\n")
    } else {
        format!("{marker}\n")
    };
    let close = format!("{marker}\n");
    Some(Fence {
        ch,
        len,
        line,
        reopen_size: Size::of(&reopen),
        close_size: Size::of(&close),
        reopen,
        close,
    })
}

fn closes_fence(body: &str, fence: &Fence) -> bool {
    matches!(
        fence_marker(body),
        Some((_, ch, len, rest)) if ch == fence.ch && len >= fence.len && is_blank(rest)
    )
}

enum Token {
    Open {
        tag: String,
        summary: Option<String>,
    },
    Close,
}

/// True when `rest` starts with the tag name `name` (`<details`, case-insensitive) and the name
/// ends there.
fn starts_with_tag(rest: &[u8], name: &[u8]) -> bool {
    rest.get(..name.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(name))
        && matches!(
            rest.get(name.len()),
            None | Some(b'>' | b' ' | b'\t' | b'\r' | b'\n')
        )
}

/// The length of `</details>` (with optional spaces before `>`) at the start of `rest`.
fn closing_tag(rest: &[u8]) -> Option<usize> {
    let name = b"</details";
    if !rest.get(..name.len())?.eq_ignore_ascii_case(name) {
        return None;
    }
    let spaces = rest
        .get(name.len()..)?
        .iter()
        .take_while(|&&b| b == b' ' || b == b'\t')
        .count();
    let gt = name.len() + spaces;
    (rest.get(gt) == Some(&b'>')).then_some(gt + 1)
}

/// The `<details>` openings and closings of a line, in order, outside code spans.
fn details_tags(line: &str) -> Vec<Token> {
    let b = line.as_bytes();
    let mut tags = Vec::new();
    let mut i = 0;
    while let Some(&byte) = b.get(i) {
        let rest = b.get(i..).unwrap_or_default();
        if byte == b'`' {
            let run = run_len(b, i);
            i = code_span_end(b, i + run, run).unwrap_or(i + run);
        } else if byte == b'<' && starts_with_tag(rest, b"<details") {
            let end = rest
                .iter()
                .position(|&c| c == b'>')
                .map_or(b.len(), |p| i + p + 1);
            let tag = line
                .get(i..end)
                .filter(|t| t.ends_with('>'))
                .unwrap_or("<details>");
            let summary = line.get(end..).and_then(summary_at_start);
            tags.push(Token::Open {
                tag: tag.to_string(),
                summary,
            });
            i = end;
        } else if let Some(len) = closing_tag(rest).filter(|_| byte == b'<') {
            tags.push(Token::Close);
            i += len;
        } else {
            i += 1;
        }
    }
    tags
}

fn run_len(b: &[u8], i: usize) -> usize {
    b.get(i..)
        .unwrap_or_default()
        .iter()
        .take_while(|&&c| c == b'`')
        .count()
}

/// Where a code span opened by `run` backticks ends: after the next run of exactly as many.
fn code_span_end(b: &[u8], mut i: usize, run: usize) -> Option<usize> {
    while let Some(&byte) = b.get(i) {
        if byte == b'`' {
            let n = run_len(b, i);
            if n == run {
                return Some(i + n);
            }
            i += n;
        } else {
            i += 1;
        }
    }
    None
}

/// The text of a `<summary>` starting `s` (after spaces), up to `</summary>` or the line's end.
fn summary_at_start(s: &str) -> Option<String> {
    let t = s.trim_start();
    if !starts_with_tag(t.as_bytes(), b"<summary") {
        return None;
    }
    let open_end = t.bytes().position(|c| c == b'>')? + 1;
    let inner = t.get(open_end..)?;
    let close = b"</summary";
    let text = match inner
        .as_bytes()
        .windows(close.len())
        .position(|w| w.eq_ignore_ascii_case(close))
    {
        Some(p) => inner.get(..p)?,
        None => inner,
    };
    Some(text.trim().to_string())
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag};

    use super::*;

    const NOTE: &str = "_Report truncated: the full report is in the job summary._";

    /// Checks a part with an independent parser: every fenced code block ends with a closing
    /// fence, and `<details>` openings and closings in HTML balance without going negative.
    fn assert_well_formed(part: &str) {
        let mut depth = 0i64;
        for (event, range) in Parser::new_ext(part, Options::ENABLE_TABLES).into_offset_iter() {
            match event {
                Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(_))) => {
                    let block = &part[range];
                    let lines: Vec<&str> = block.lines().collect();
                    let open = lines.first().map_or("", |l| l.trim_start());
                    let ch = open.chars().next().unwrap_or(' ');
                    let open_len = open.chars().take_while(|&c| c == ch).count();
                    let last = lines
                        .iter()
                        .enumerate()
                        .rev()
                        .find(|(_, l)| !l.trim().is_empty());
                    let closed = last.is_some_and(|(k, l)| {
                        let l = l.trim();
                        k > 0 && l.chars().all(|c| c == ch) && l.chars().count() >= open_len
                    });
                    assert!(closed, "fence left open:\n{block}\n--- in part ---\n{part}");
                }
                Event::Html(html) | Event::InlineHtml(html) => {
                    let lower = html.to_ascii_lowercase();
                    let mut rest = lower.as_str();
                    while let Some(lt) = rest.find('<') {
                        rest = &rest[lt..];
                        if rest.starts_with("</details>") {
                            depth -= 1;
                            assert!(depth >= 0, "</details> before its opening in:\n{part}");
                        } else if rest.starts_with("<details")
                            && rest[8..]
                                .chars()
                                .next()
                                .is_none_or(|c| c == '>' || c.is_whitespace())
                        {
                            depth += 1;
                        }
                        rest = &rest[1..];
                    }
                }
                _ => {}
            }
        }
        assert_eq!(depth, 0, "unbalanced <details> in part:\n{part}");
    }

    fn assert_within(parts: &[String], max_chars: usize) {
        for part in parts {
            let chars = part.chars().count();
            assert!(chars <= max_chars, "{chars} chars > {max_chars}:\n{part}");
            assert!(part.len() <= MAX_BYTES, "{} bytes", part.len());
        }
    }

    /// Every non-blank line of `doc` appears in the parts, in order.
    fn assert_in_order(doc: &str, parts: &[String]) {
        let joined = parts.join("\n");
        let mut out = joined.lines();
        for line in doc.lines().filter(|l| !is_blank(l)) {
            assert!(out.any(|o| o == line), "{line:?} missing or out of order");
        }
    }

    fn check(doc: &str, max_chars: usize, max_parts: usize) -> Vec<String> {
        let parts = split(doc, max_chars, max_parts, NOTE);
        assert!(!parts.is_empty() && parts.len() <= max_parts.max(1));
        assert_within(&parts, max_chars);
        for part in &parts {
            assert_well_formed(part);
        }
        parts
    }

    fn diff_lines(doc: &mut String, n: usize) {
        for i in 0..n {
            let sign = if i % 2 == 0 { '-' } else { '+' };
            let _ = writeln!(
                doc,
                "{sign}   spec.template.spec.containers[{i}].resources.limits.nvidia.com/gpu: {i}"
            );
        }
    }

    fn big_diff_doc() -> String {
        let mut doc = String::from(
            "## Drift\n\nOne workload changed.\n\n<details><summary>Diff of ns/Deployment/big</summary>\n\n```diff\n",
        );
        diff_lines(&mut doc, 3_000);
        doc.push_str("```\n\n</details>\n\nAfter the diff.\n");
        doc
    }

    #[test]
    fn short_document_is_one_identical_part() {
        let doc = "## Title\n\nSome text → é 😀\n\n<details><summary>More</summary>\n\n```diff\n+a\n```\n\n</details>\n";
        assert_eq!(split(doc, 65_536, 3, NOTE), vec![doc.to_string()]);
        assert_eq!(truncate(doc, 1_000, NOTE), doc);
        let no_newline = doc.trim_end();
        assert_eq!(
            split(no_newline, 1_000, 1, NOTE),
            vec![no_newline.to_string()]
        );
    }

    #[test]
    fn empty_input_gives_one_empty_part() {
        assert_eq!(split("", 1_000, 3, NOTE), vec![String::new()]);
        assert_eq!(split(" \n\n\t\n", 1_000, 3, NOTE), vec![String::new()]);
        assert_eq!(split("", 1_000, 0, NOTE), vec![String::new()]);
        assert_eq!(split("text\n", 1_000, 0, NOTE), vec!["text\n".to_string()]);
        assert_eq!(truncate("", 1_000, NOTE), "");
    }

    #[test]
    fn trailing_blank_lines_are_trimmed() {
        assert_eq!(
            split("a  \n\n \n", 1_000, 2, NOTE),
            vec!["a  \n".to_string()]
        );
    }

    #[test]
    fn small_blocks_are_cut_only_between_them() {
        let blocks: Vec<String> = (0..200)
            .map(|i| {
                format!(
                    "### Item {i}\n\n{}\n\n<details><summary>More on {i}</summary>\n\n- a\n- b\n\n</details>",
                    "word ".repeat(i % 37 + 1).trim_end()
                )
            })
            .collect();
        let doc = blocks.join("\n\n") + "\n";
        let parts = check(&doc, 2_000, 100);
        assert!(parts.len() > 5, "{} parts", parts.len());
        for part in &parts {
            assert!(!part.contains("(continued)"), "cut inside a block:\n{part}");
        }
        // Cut only at blank lines between top-level blocks: nothing added, nothing lost.
        assert_eq!(parts.join("\n"), doc);
    }

    #[test]
    fn huge_diff_in_details_is_closed_and_reopened() {
        let doc = big_diff_doc();
        let parts = check(&doc, 10_000, 50);
        assert!(parts.len() > 5, "{} parts", parts.len());
        assert!(parts[0].starts_with("## Drift\n\nOne workload changed.\n\n<details>"));
        let reopened =
            "<details><summary>Diff of ns/Deployment/big (continued)</summary>\n\n```diff\n";
        let closed = "```\n\n</details>\n";
        for part in &parts[1..parts.len() - 1] {
            assert!(part.starts_with(reopened), "{part}");
            assert!(part.ends_with(closed), "{part}");
        }
        assert!(parts[parts.len() - 1].ends_with("After the diff.\n"));
        assert_in_order(&doc, &parts);
    }

    #[test]
    fn huge_table_repeats_its_header() {
        let header = "| workload | tenant | GPUs |\n|---|---|---:|\n";
        let mut doc = format!("Intro.\n\n{header}");
        for i in 0..2_000 {
            let _ = writeln!(doc, "| ns/Deployment/w-{i} | team-{} | {} |", i % 7, i % 9);
        }
        doc.push_str("\nOutro.\n");
        let parts = check(&doc, 5_000, 100);
        assert!(parts.len() > 10);
        assert!(parts[0].starts_with("Intro.\n\n| workload"));
        for part in &parts[1..] {
            if part.contains("| ns/Deployment/") {
                assert!(part.starts_with(header), "{part}");
                let table = Parser::new_ext(part, Options::ENABLE_TABLES)
                    .any(|e| matches!(e, Event::Start(Tag::Table(_))));
                assert!(table, "not a table:\n{part}");
            }
        }
        assert_in_order(&doc, &parts);
    }

    #[test]
    fn table_in_details_repeats_its_header_after_reopening() {
        let header = "| workload | tenant | GPUs |\n|---|---|---:|\n";
        let mut doc = format!("<details><summary>In sync (2000)</summary>\n\n{header}");
        for i in 0..2_000 {
            let _ = writeln!(doc, "| ns/Deployment/w-{i} | team-{} | {} |", i % 7, i % 9);
        }
        doc.push_str("\n</details>\n");
        let parts = check(&doc, 5_000, 100);
        let reopened =
            format!("<details><summary>In sync (2000) (continued)</summary>\n\n{header}");
        for part in &parts[1..] {
            assert!(part.starts_with(&reopened), "{part}");
        }
        for part in &parts[..parts.len() - 1] {
            assert!(part.ends_with(" |\n\n</details>\n"), "{part}");
        }
        assert_in_order(&doc, &parts);
    }

    #[test]
    fn overflow_gives_max_parts_ending_with_the_note() {
        let doc = big_diff_doc();
        for max_parts in 1..=4 {
            let parts = check(&doc, 10_000, max_parts);
            assert_eq!(parts.len(), max_parts);
            let last = &parts[max_parts - 1];
            assert!(
                last.ends_with(&format!("```\n\n</details>\n\n{NOTE}")),
                "{last}"
            );
            // Filled as far as it goes: the room left is less than one more diff line.
            assert!(
                last.chars().count() > 10_000 - 200,
                "{}",
                last.chars().count()
            );
        }
        let one = truncate(&doc, 10_000, NOTE);
        assert_eq!(one, split(&doc, 10_000, 1, NOTE)[0]);
        assert!(one.ends_with(NOTE) && one.chars().count() <= 10_000);
    }

    #[test]
    fn multibyte_characters_near_cut_points() {
        let mut doc = String::from(
            "Intro → café 😀\n\n<details><summary>Diff of ns/é/→</summary>\n\n```diff\n",
        );
        for i in 0..400 {
            let _ = writeln!(doc, "+ {}{}", "→é😀".repeat(i % 13), "x".repeat(i % 5));
        }
        doc.push_str("```\n\n</details>\n\n| a | b |\n|---|---|\n");
        for i in 0..300 {
            let _ = writeln!(doc, "| 😀{} | {} |", "é".repeat(i % 11), "→".repeat(i % 7));
        }
        for max_chars in (1_000..1_040).step_by(3) {
            let parts = check(&doc, max_chars, 100);
            assert!(parts.len() > 3);
            assert_in_order(&doc, &parts);
        }
    }

    #[test]
    fn lines_longer_than_the_budget_are_hard_cut() {
        let long: String = "é😀→ab".chars().cycle().take(4_500).collect();
        let doc = format!("Intro.\n\n{long}\n\nOutro.\n");
        let parts = check(&doc, 1_000, 20);
        assert!(parts.len() >= 5);
        assert!(parts.concat().contains(&long));
        assert!(parts[parts.len() - 1].ends_with("Outro.\n"));

        let doc =
            format!("<details><summary>Big line</summary>\n\n```text\n{long}\n```\n\n</details>\n");
        let parts = check(&doc, 1_000, 20);
        let pieces: String = parts
            .iter()
            .filter_map(|p| p.lines().skip_while(|l| *l != "```text").nth(1))
            // The first part may close its fence before any of the line: the piece that fits
            // a part of its own does not fit after the opening lines.
            .filter(|l| *l != "```")
            .collect();
        assert_eq!(pieces, long);
        for part in &parts[1..] {
            assert!(
                part.starts_with("<details><summary>Big line (continued)</summary>\n\n```text\n")
            );
        }
    }

    #[test]
    fn nested_details_reopen_outer_then_inner() {
        let mut doc = String::from(
            "<details><summary>Changed (2)</summary>\n\n| workload | GPUs |\n|---|---:|\n| a | 1 |\n\n<details><summary>Diff of a</summary>\n\n```diff\n",
        );
        diff_lines(&mut doc, 2_000);
        doc.push_str("```\n\n</details>\n\n</details>\n");
        let parts = check(&doc, 8_000, 100);
        assert!(parts.len() > 5);
        let reopened = "<details><summary>Changed (2) (continued)</summary>\n\n<details><summary>Diff of a (continued)</summary>\n\n```diff\n";
        for part in &parts[1..] {
            assert!(part.starts_with(reopened), "{part}");
        }
        for part in &parts[..parts.len() - 1] {
            assert!(part.ends_with("```\n\n</details>\n</details>\n"), "{part}");
        }
        assert_in_order(&doc, &parts);
    }

    #[test]
    fn tilde_fence_is_not_closed_by_backticks() {
        let mut doc = String::from("~~~markdown\n");
        for i in 0..1_500 {
            if i % 3 == 0 {
                doc.push_str("```\n");
            } else {
                let _ = writeln!(doc, "line {i} of an example");
            }
        }
        doc.push_str("~~~\n\nAfter.\n");
        let parts = check(&doc, 2_000, 50);
        assert!(parts.len() > 5);
        for part in &parts[1..] {
            assert!(part.starts_with("~~~markdown\n"), "{part}");
        }
        for part in &parts[..parts.len() - 1] {
            assert!(part.ends_with("\n~~~\n"), "{part}");
        }
        assert_in_order(&doc, &parts);
    }

    #[test]
    fn unclosed_fence_is_closed_at_each_cut() {
        let mut doc = String::from("Intro.\n\n```diff\n");
        diff_lines(&mut doc, 1_000);
        let parts = split(&doc, 3_000, 100, NOTE);
        assert!(parts.len() > 5);
        assert_within(&parts, 3_000);
        for part in &parts[..parts.len() - 1] {
            assert_well_formed(part);
            assert!(part.ends_with("\n```\n"), "{part}");
        }
        for part in &parts[1..] {
            assert!(part.starts_with("```diff\n"), "{part}");
        }
        // The input left it open; so does its last part.
        assert!(parts[parts.len() - 1].ends_with("nvidia.com/gpu: 999\n"));
        assert_in_order(&doc, &parts);
    }

    #[test]
    fn details_in_code_spans_and_fences_are_not_counted() {
        let mut doc = String::new();
        for i in 0..300 {
            let _ = writeln!(doc, "Fold long lists with `<details>` ({i}).\n");
            if i % 50 == 0 {
                doc.push_str("```html\n<details><summary>Example</summary>\n```\n\n");
            }
        }
        let parts = check(&doc, 2_000, 100);
        assert!(parts.len() > 5);
        for part in &parts {
            assert!(
                !part.contains("</details>") && !part.contains("(continued)"),
                "{part}"
            );
        }
        assert_in_order(&doc, &parts);
    }

    #[test]
    fn summary_on_the_line_after_details_is_reopened() {
        let mut doc = String::from("<details open>\n<summary>Diff of b</summary>\n\n```diff\n");
        diff_lines(&mut doc, 500);
        doc.push_str("```\n\n</details>\n");
        let parts = check(&doc, 5_000, 100);
        for part in &parts[1..] {
            assert!(
                part.starts_with(
                    "<details open><summary>Diff of b (continued)</summary>\n\n```diff\n"
                ),
                "{part}"
            );
        }
    }

    #[test]
    fn tiny_and_pathological_inputs_stay_within_budget() {
        let doc = big_diff_doc();
        assert_eq!(split(&doc, 0, 3, NOTE), vec![String::new()]);
        for max_chars in [1, 5, 50, 199] {
            for max_parts in [1, 3] {
                let parts = split(&doc, max_chars, max_parts, NOTE);
                assert_eq!(parts.len(), max_parts);
                assert_within(&parts, max_chars);
            }
        }
        let deep = "<details><summary>level</summary>\n\n".repeat(500) + &"text\n".repeat(2_000);
        let ticks = format!("{}\n{}", "`".repeat(5_000), "code\n".repeat(2_000));
        let note = "n".repeat(5_000);
        for max_chars in [1_000, 3_000] {
            // Nesting too deep to reopen is cut plainly; its lines all stay.
            let parts = split(&deep, max_chars, 1_000, &note);
            assert_within(&parts, max_chars);
            assert_in_order(&deep, &parts);
            // A fence too long to repeat: plain cuts, and hard ones through the fence line.
            let parts = split(&ticks, max_chars, 1_000, &note);
            assert_within(&parts, max_chars);
            assert_eq!(parts.concat().matches("code\n").count(), 2_000);
            for doc in [&deep, &ticks] {
                let parts = split(doc, max_chars, 2, &note);
                assert_eq!(parts.len(), 2);
                assert_within(&parts, max_chars);
            }
        }
    }

    /// xorshift64: deterministic documents without a new crate.
    struct XorShift(u64);

    impl XorShift {
        fn next(&mut self) -> u64 {
            let mut x = self.0;
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            self.0 = x;
            x
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n.max(1) as u64) as usize
        }
    }

    const WORDS: &[&str] = &[
        "gpu",
        "tenant",
        "→",
        "café",
        "😀",
        "ns/Deployment/train",
        "`code`",
        "**bold**",
        "A100",
        "naïve",
        "日本語",
        "é",
        "limits",
        "`<details>`",
    ];

    fn words(rng: &mut XorShift, n: usize) -> String {
        let words: Vec<&str> = (0..n).map(|_| WORDS[rng.below(WORDS.len())]).collect();
        words.join(" ")
    }

    fn summary(rng: &mut XorShift) -> String {
        // No code span in summaries: raw HTML would show its `<details>` to the checker.
        words(rng, 3).replace("`<details>`", "x")
    }

    fn table(rng: &mut XorShift, rows: usize) -> String {
        let mut t = String::from("| workload | tenant | GPUs |\n|---|---|---:|");
        for i in 0..rows {
            let _ = write!(t, "\n| {} | {} | {i} |", words(rng, 2), words(rng, 1));
        }
        t
    }

    fn fence(rng: &mut XorShift, lines: usize) -> String {
        let (open, close) = match rng.below(4) {
            0 => ("```diff", "```"),
            1 => ("````", "````"),
            2 => ("~~~yaml", "~~~"),
            _ => ("```", "```"),
        };
        let shorter_backticks_allowed = open.starts_with('~') || open.starts_with("````");
        let mut f = format!("{open}\n");
        for _ in 0..lines {
            match rng.below(10) {
                0 => f.push('\n'),
                1 if shorter_backticks_allowed => f.push_str("```\n"),
                _ => {
                    let sign = ["+ ", "- ", "  "][rng.below(3)];
                    let n = rng.below(12) + 1;
                    let _ = writeln!(f, "{sign}{}", words(rng, n));
                }
            }
        }
        f.push_str(close);
        f
    }

    fn random_doc(rng: &mut XorShift) -> String {
        let scale = [3_000, 30_000, 120_000, 300_000][rng.below(4)];
        let target = rng.below(scale) + 200;
        let mut blocks = Vec::new();
        let mut size = 0;
        while size < target {
            let block = match rng.below(8) {
                0 => format!("## {}", words(rng, 4)),
                1 => {
                    let lines: Vec<String> = (0..rng.below(4) + 1)
                        .map(|_| {
                            let n = rng.below(20) + 1;
                            format!("Line {}", words(rng, n))
                        })
                        .collect();
                    lines.join("\n")
                }
                2 => {
                    let rows = rng.below(300) + 1;
                    table(rng, rows)
                }
                3 => {
                    let (s, n, rows) = (summary(rng), rng.below(999), rng.below(600) + 1);
                    let t = table(rng, rows);
                    format!("<details><summary>{s} ({n})</summary>\n\n{t}\n\n</details>")
                }
                4 => {
                    let lines = rng.below(400) + 1;
                    fence(rng, lines)
                }
                5 => {
                    let (s, lines) = (summary(rng), rng.below(1_500) + 1);
                    let f = fence(rng, lines);
                    format!("<details><summary>Diff of {s}</summary>\n\n{f}\n\n</details>")
                }
                6 => {
                    let (outer, inner) = (summary(rng), summary(rng));
                    let rows = rng.below(100) + 1;
                    let t = table(rng, rows);
                    let lines = rng.below(800) + 1;
                    let f = fence(rng, lines);
                    format!(
                        "<details><summary>Changed {outer}</summary>\n\n{t}\n\n<details><summary>Diff of {inner}</summary>\n\n{f}\n\n</details>\n\n</details>"
                    )
                }
                _ => {
                    let heading = words(rng, 2);
                    let rows = rng.below(50) + 1;
                    format!("### {heading}\n\n{}", table(rng, rows))
                }
            };
            size += block.len();
            blocks.push(block);
        }
        blocks.join("\n\n") + "\n"
    }

    #[test]
    fn random_documents_keep_structure_and_budget() {
        let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
        let mut overflows = 0;
        for case in 0..200 {
            let doc = random_doc(&mut rng);
            let max_chars = 1_000 + rng.below(59_001);
            let max_parts = 1 + rng.below(6);
            let parts = split(&doc, max_chars, max_parts, NOTE);
            let context = format!(
                "case {case}: {} bytes, {max_chars} chars, {max_parts} parts",
                doc.len()
            );
            assert!(!parts.is_empty() && parts.len() <= max_parts, "{context}");
            for part in &parts {
                assert!(part.chars().count() <= max_chars, "{context}");
                assert!(part.len() <= MAX_BYTES, "{context}");
                assert_well_formed(part);
            }
            if parts[parts.len() - 1].ends_with(NOTE) {
                overflows += 1;
                assert_eq!(parts.len(), max_parts, "{context}");
            } else {
                assert_in_order(&doc, &parts);
            }
        }
        // Both paths are exercised.
        assert!((20..180).contains(&overflows), "{overflows} overflows");
    }

    #[test]
    fn arbitrary_text_never_panics_and_stays_within_budget() {
        const PIECES: &[&str] = &[
            "`",
            "```",
            "~~~",
            "````",
            " ",
            "   ",
            "\n",
            "\r\n",
            "\n\n",
            "<details>",
            "<DETAILS open>",
            "<details",
            "</details>",
            "</details >",
            "<summary>",
            "</summary>",
            "|",
            "|---|",
            "#",
            "é",
            "😀",
            "→",
            "x",
            "word ",
            "\t",
            "<",
            ">",
        ];
        let mut rng = XorShift(42);
        for case in 0..400 {
            let len = rng.below(3_000);
            let doc: String = (0..len).map(|_| PIECES[rng.below(PIECES.len())]).collect();
            let max_chars = [200, 250, 1_000, 4_000][rng.below(4)] + rng.below(100);
            let max_parts = rng.below(8);
            let parts = split(&doc, max_chars, max_parts, NOTE);
            assert!(
                !parts.is_empty() && parts.len() <= max_parts.max(1),
                "case {case}"
            );
            assert_within(&parts, max_chars);
        }
    }

    fn drift_report(workloads: usize) -> String {
        let mut doc = format!(
            "## Drift against Git\n\n**{workloads} workloads changed, 412 GPUs differ from Git**\n\nGit at `3f2c1ab`.\n\n### Changed (10)\n\n| workload | tenant | live GPUs | git GPUs |\n|---|---|---:|---:|\n"
        );
        for i in 0..10 {
            let _ = writeln!(
                doc,
                "| ns/Deployment/name-{i} | team-{i} | {} | {} |",
                i + 2,
                i
            );
        }
        doc.push('\n');
        for i in 0..workloads {
            let _ = writeln!(
                doc,
                "<details><summary>ns/Kind/name-{i}</summary>\n\n```diff"
            );
            for j in 0..20 {
                let sign = [' ', '-', '+'][j % 3];
                let _ = writeln!(
                    doc,
                    "{sign}     nvidia.com/gpu: {j}  # container trainer-{j}"
                );
            }
            doc.push_str("```\n\n</details>\n\n");
        }
        doc
    }

    #[test]
    fn drift_report_with_300_workloads() {
        let doc = drift_report(300);
        assert!(
            doc.chars().count() > 4 * 60_000,
            "the report must overflow four parts"
        );
        let parts = check(&doc, 60_000, 4);
        assert_eq!(parts.len(), 4);
        assert!(parts[3].ends_with(NOTE));
        for part in &parts {
            // Each workload's block is small: cuts fall between them.
            assert!(!part.contains("(continued)"), "{part}");
        }
        assert!(parts[0].starts_with("## Drift against Git\n\n**300 workloads"));

        let one = check(&doc, 60_000, 1);
        assert!(one[0].ends_with(&format!("</details>\n\n{NOTE}")));

        let all = check(&doc, 60_000, 10);
        assert!(!all[all.len() - 1].ends_with(NOTE));
        assert_in_order(&doc, &all);
        for i in 0..300 {
            let summary = format!("<summary>ns/Kind/name-{i}</summary>");
            assert_eq!(
                all.iter()
                    .map(|p| p.matches(&summary).count())
                    .sum::<usize>(),
                1
            );
        }
    }
}
