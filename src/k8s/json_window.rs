//! The window the JSON fast path parses from, and what it reads through it: a list item.
//!
//! A [`Window`] holds a stretch of the input, from any byte of it, and slides along as values are
//! parsed from it; it reads through a [`Source`], an input read at any offset (a file by positional
//! reads, bytes in memory), so that two windows can read one input at once (see `super::json`'s
//! split). An item is parsed from a slice of the window as its list would read it
//! ([`Window::item`]), typed ahead of its spec when its apiVersion and kind come last.

use std::io;

use serde::de::{DeserializeOwned, DeserializeSeed, IgnoredAny};

use super::document::{ItemReader, ListItem};
use super::session::Session;
use super::text::Text;

/// An input read at any offset, without a cursor of its own: two threads can read it at once.
pub(super) trait Source: Sync {
    /// Reads into `buf` from byte `at` of the input; 0 at its end.
    fn read_at(&self, buf: &mut [u8], at: u64) -> io::Result<usize>;
}

impl Source for std::fs::File {
    #[cfg(unix)]
    fn read_at(&self, buf: &mut [u8], at: u64) -> io::Result<usize> {
        std::os::unix::fs::FileExt::read_at(self, buf, at)
    }
    #[cfg(windows)]
    fn read_at(&self, buf: &mut [u8], at: u64) -> io::Result<usize> {
        std::os::windows::fs::FileExt::seek_read(self, buf, at)
    }
}

impl Source for [u8] {
    fn read_at(&self, buf: &mut [u8], at: u64) -> io::Result<usize> {
        let rest = usize::try_from(at)
            .ok()
            .and_then(|at| self.get(at..))
            .unwrap_or_default();
        let n = rest.len().min(buf.len());
        if let (Some(to), Some(from)) = (buf.get_mut(..n), rest.get(..n)) {
            to.copy_from_slice(from);
        }
        Ok(n)
    }
}

/// An item's own apiVersion and kind, when they are not its first keys (kubectl and the API server
/// write them first; a dump reordered by a tool may put them last).
#[derive(Debug)]
pub(super) struct OwnType {
    pub(super) api_version: String,
    pub(super) kind: String,
}

/// Whether the item's first key is `apiVersion` or `kind`: it says its type before its spec as it
/// is read (as kubectl and the API server write it).
fn type_first(text: &[u8]) -> bool {
    let start = blanks(text);
    let inner = text.get(start + 1..).unwrap_or_default().trim_ascii_start();
    text.get(start) == Some(&b'{')
        && (inner.starts_with(b"\"apiVersion\"") || inner.starts_with(b"\"kind\""))
}

/// The item's own type, looked up by a scan over its bytes ([`top_keys`]), unless its first key
/// is `apiVersion` or `kind` (see [`type_first`]) or it names none (a typed list's item takes the
/// list's). Any surprise (a key twice, a kind that is not a string, an escape in a key, bytes that
/// are not JSON) gives `None`: the item is then read as it stands, which says what is wrong.
pub(super) fn own_type(text: &[u8]) -> Option<OwnType> {
    if type_first(text) {
        return None;
    }
    let (mut api_version, mut kind) = (None, None);
    top_keys(text, |key, after| {
        let slot = match key {
            b"apiVersion" => &mut api_version,
            b"kind" => &mut kind,
            _ => return Some(after),
        };
        let v = after + blanks(text.get(after..)?);
        if slot.is_some() || text.get(v) != Some(&b'"') {
            return None;
        }
        let v_end = string_end(text, v)?;
        *slot = Some(serde_json::from_slice::<String>(text.get(v..v_end)?).ok()?);
        Some(v_end)
    })?;
    Some(OwnType {
        api_version: api_version?,
        kind: kind?,
    })
}

/// Whether `text` starts with an object that has `kind` and `metadata` keys of its own (as an item
/// of a list of objects has, and a container, an owner reference or a managed-fields entry has
/// not), and how long it is.
pub(super) fn names_itself(text: &[u8]) -> Option<usize> {
    let (mut kind, mut metadata) = (false, false);
    let end = top_keys(text, |key, after| {
        match key {
            b"kind" => kind = true,
            b"metadata" => metadata = true,
            _ => {}
        }
        Some(after)
    })?;
    (kind && metadata).then_some(end)
}

/// Walks the keys of the object `text` starts with (past blanks): `visit` gets each of its own
/// keys and the index past its colon, and says where the scan goes on (there, or past the value
/// it read itself). The scan jumps from brace to brace and over strings (a pod is mostly
/// strings, an indented file mostly blanks), several times faster than parsing the object to
/// skip it; brackets need no counting, since a string followed by a colon is a key and only the
/// object's own keys sit one brace deep. Past the object's end, or `None` when `visit` says so,
/// a key holds an escape, or the bytes are not an object that ends within `text`.
fn top_keys(text: &[u8], mut visit: impl FnMut(&[u8], usize) -> Option<usize>) -> Option<usize> {
    let start = blanks(text);
    if text.get(start) != Some(&b'{') {
        return None;
    }
    let (mut i, mut depth) = (start + 1, 1usize);
    while depth > 0 {
        i = next_token(text, i)?;
        match *text.get(i)? {
            b'"' => {
                let end = string_end(text, i)?;
                let after = end + blanks(text.get(end..)?);
                // A key of the object itself: its value follows the colon.
                if depth == 1 && text.get(after) == Some(&b':') {
                    let key = text.get(i + 1..end - 1)?;
                    if key.contains(&b'\\') {
                        return None;
                    }
                    i = visit(key, after + 1)?;
                } else {
                    i = end;
                }
                continue;
            }
            b'{' => depth += 1,
            _ => depth -= 1, // `}`
        }
        i += 1;
    }
    Some(i)
}

/// The next `"`, `{` or `}` from `text[i]`: a compact item has one within a few bytes, an
/// indented one after a run of blanks that memchr crosses.
fn next_token(text: &[u8], mut i: usize) -> Option<usize> {
    for _ in 0..16 {
        if matches!(*text.get(i)?, b'"' | b'{' | b'}') {
            return Some(i);
        }
        i += 1;
    }
    Some(i + memchr::memchr3(b'"', b'{', b'}', text.get(i..)?)?)
}

/// Past the end of the JSON string that opens at `text[open]`, or `None` if it does not end.
fn string_end(text: &[u8], open: usize) -> Option<usize> {
    let mut j = open + 1;
    // Most strings of an object are short: their end is found byte by byte, a long one's by memchr.
    for _ in 0..32 {
        match *text.get(j)? {
            b'"' => return Some(j + 1),
            b'\\' => j += 2,
            _ => j += 1,
        }
    }
    loop {
        j += memchr::memchr2(b'"', b'\\', text.get(j..)?)?;
        if text.get(j) == Some(&b'"') {
            return Some(j + 1);
        }
        j += 2; // an escape and the byte it escapes
    }
}

/// How many JSON blanks `text` starts with.
pub(super) fn blanks(text: &[u8]) -> usize {
    text.len() - text.trim_ascii_start().len()
}

/// Whether parsing `text` failed only because it ends too early: serde_json says so (`Eof`),
/// except of a number cut short (`1.`, `2e`), which it calls invalid at the end of the slice.
fn cut_off(text: &[u8], e: &serde_json::Error) -> bool {
    e.is_eof() || error_at(text, e) >= text.len()
}

/// The byte of `text` a parse error points at (serde_json counts columns in bytes from 0 past
/// the line's start, see `SliceRead::position_of_index` in its `read.rs`).
fn error_at(text: &[u8], e: &serde_json::Error) -> usize {
    let line_start = match e.line() {
        0 => return 0,
        1 => 0,
        n => text
            .iter()
            .enumerate()
            .filter(|(_, b)| **b == b'\n')
            .nth(n - 2)
            .map_or(text.len(), |(i, _)| i + 1),
    };
    line_start + e.column()
}

/// A window on the input: `buf[pos..end]` is read and not yet parsed; `buf[0]` is the input's
/// byte `start`.
pub(super) struct Window<'a, S: ?Sized> {
    src: &'a S,
    /// The input's size, when known (a file's).
    size: Option<u64>,
    start: u64,
    buf: Vec<u8>,
    end: usize,
    pub(super) pos: usize,
    /// The input has no more bytes.
    eof: bool,
    /// How much the window holds to begin with (see `super::json::WINDOW`).
    window: usize,
    /// See `super::json::AHEAD`.
    ahead: usize,
    /// How many bytes the last value parsed took (blanks before it included).
    last: usize,
}

impl<'a, S: Source + ?Sized> Window<'a, S> {
    /// A window on `src` from its byte `at`.
    pub(super) fn new(
        src: &'a S,
        at: u64,
        size: Option<u64>,
        window: usize,
        ahead: usize,
    ) -> Window<'a, S> {
        // A small input gets a small window (rendered manifests, API pages).
        let capacity = size
            .and_then(|s| usize::try_from(s.saturating_sub(at)).ok())
            .map_or(window, |s| s.saturating_add(1).min(window));
        Window {
            src,
            size,
            start: at,
            buf: vec![0; capacity.max(1)],
            end: 0,
            pos: 0,
            eof: false,
            window,
            ahead,
            last: 0,
        }
    }

    /// Another window on the same input, from its byte `at`, of the same sizes.
    pub(super) fn sibling(&self, at: u64) -> Window<'a, S> {
        Window::new(self.src, at, self.size, self.window, self.ahead)
    }

    pub(super) fn size(&self) -> Option<u64> {
        self.size
    }

    /// The input's byte at the position.
    pub(super) fn at(&self) -> u64 {
        self.start + self.pos as u64
    }

    /// Moves the window to the input's byte `at` (read again from there).
    pub(super) fn jump(&mut self, at: u64) {
        self.start = at;
        (self.pos, self.end, self.eof, self.last) = (0, 0, false, 0);
    }

    pub(super) fn rest(&self) -> &[u8] {
        self.buf.get(self.pos..self.end).unwrap_or_default()
    }

    /// Reads more of the input: the unparsed bytes move to the front, and the window fills up,
    /// doubling when they already fill it (one value larger than the window).
    pub(super) fn more(&mut self) -> io::Result<()> {
        if self.eof {
            return Ok(());
        }
        self.buf.copy_within(self.pos..self.end, 0);
        self.start += self.pos as u64;
        self.end -= self.pos;
        self.pos = 0;
        if self.end == self.buf.len() {
            self.buf.resize(self.buf.len() * 2, 0);
        }
        while let Some(free) = self.buf.get_mut(self.end..).filter(|f| !f.is_empty()) {
            match self.src.read_at(free, self.start + self.end as u64) {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                Ok(n) => self.end += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// The next byte past blanks (consumed), without consuming it; `None` at the end of the input.
    pub(super) fn peek(&mut self) -> io::Result<Option<u8>> {
        loop {
            let blanks = self
                .rest()
                .iter()
                .take_while(|b| matches!(b, b' ' | b'\n' | b'\t' | b'\r'))
                .count();
            self.pos += blanks;
            if let Some(&b) = self.rest().first() {
                return Ok(Some(b));
            }
            if self.eof {
                return Ok(None);
            }
            self.more()?;
        }
    }

    /// The value at the position, parsed from the window; `None` if it is not a `T` (or not JSON).
    pub(super) fn value<T: DeserializeOwned>(&mut self) -> io::Result<Option<T>> {
        self.parse(|rest| {
            let mut values = serde_json::Deserializer::from_slice(rest).into_iter::<T>();
            let parsed = values.next();
            (parsed, values.byte_offset())
        })
    }

    /// The list item at the position, read as the list's reader reads it (see [`ItemReader`]),
    /// without tracking the path into its spec (see [`Session::untracked`]): an item that fails
    /// makes the fast path give the input up to the streaming reader, which tracks it and names
    /// the field. `guess` is the type it likely has (that of the run of items it is in).
    pub(super) fn item(
        &mut self,
        session: &mut Session,
        api_version: Option<&str>,
        kind: Option<&str>,
        guess: Option<(Text, Text)>,
    ) -> io::Result<Option<ListItem>> {
        let mark = session.mark();
        session.untracked = true;
        let item = self.parse(|rest| {
            // An item cut off by the window's end is read again: what its partial read noted is
            // noted again.
            session.reset_notes(mark);
            // An item whose apiVersion and kind come after its spec (kind last) would have its
            // spec and status buffered as JSON trees until they come: it is read as the type of
            // the run it is in, which it must then name; failing that (or outside a run),
            // its type is looked up first by a scan over its bytes (no allocation), so its spec
            // and status parse straight into the typed body all the same.
            let guess = guess.as_ref().filter(|_| !type_first(rest));
            if let Some((v, k)) = guess {
                let reader = ItemReader::new(session, api_version, kind).guessed(v, k);
                let mut de = serde_json::Deserializer::from_slice(rest);
                match reader.deserialize(&mut de) {
                    Ok(item) => {
                        return (Some(Ok(item)), de.into_iter::<IgnoredAny>().byte_offset());
                    }
                    // Cut off by the window's end: read again, guess and all, once it holds more.
                    Err(e) if cut_off(rest, &e) => {
                        return (Some(Err(e)), 0);
                    }
                    Err(_) => session.reset_notes(mark),
                }
            }
            let own = own_type(rest);
            let reader = match &own {
                Some(t) => {
                    ItemReader::new(session, api_version, kind).of_type(&t.api_version, &t.kind)
                }
                None => ItemReader::new(session, api_version, kind),
            };
            let mut de = serde_json::Deserializer::from_slice(rest);
            let parsed = reader.deserialize(&mut de);
            (Some(parsed), de.into_iter::<IgnoredAny>().byte_offset())
        });
        session.untracked = false;
        item
    }

    /// What `parse` makes of the window from the position: the value and the bytes it took, or
    /// `None` if it is not one. A value the window's end cuts off is parsed again once the window
    /// holds more.
    fn parse<T>(
        &mut self,
        mut parse: impl FnMut(&[u8]) -> (Option<serde_json::Result<T>>, usize),
    ) -> io::Result<Option<T>> {
        loop {
            if self.end - self.pos < self.ahead && !self.eof {
                self.more()?;
            }
            let rest = self.rest();
            let len = rest.len();
            let (result, offset) = parse(rest);
            let (parsed, used) = match result {
                Some(Ok(v)) => (Some(v), offset),
                // Cut off by the window's end: parsed again once it holds more.
                Some(Err(e)) if cut_off(rest, &e) => (None, len),
                Some(Err(_)) => return Ok(None),
                None => (None, len),
            };
            // A number the window cuts is a number all the same: a value that ends where the
            // window ends is only trusted at the end of the input.
            if used < len || self.eof {
                if parsed.is_some() {
                    self.pos += used;
                    self.last = used;
                }
                return Ok(parsed);
            }
            let before = self.end - self.pos;
            self.more()?;
            if self.end - self.pos == before && self.eof {
                return Ok(None); // the input ends inside the value
            }
        }
    }

    /// The text of the value at the position (with the blanks before it).
    pub(super) fn raw(&mut self) -> io::Result<Option<Vec<u8>>> {
        if self.value::<IgnoredAny>()?.is_none() {
            return Ok(None);
        }
        // `value` parses from the window as it stands when it returns: the value's bytes are the
        // last `self.last` before the position.
        let from = self.pos - self.last;
        Ok(self.buf.get(from..self.pos).map(<[u8]>::to_vec))
    }
}
