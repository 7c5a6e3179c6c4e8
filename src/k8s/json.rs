//! The fast path for JSON input: a `List`'s items parsed one by one from a window of the file.
//!
//! serde_json reads from an `io::Read` byte by byte (its `IoRead`), several times slower than from a
//! slice, and a fleet's snapshot is too large to hold whole (peak memory stays well below the
//! file's size). So the top-level objects of a JSON stream are walked here by hand, over a window
//! that slides along the input: each element of `items` is parsed from a slice of the window as
//! the list itself would read it ([`ItemReader`]), and every other value of the top-level object is
//! kept as its text. Those texts, with `items` empty, are then read as one small document, so the
//! rules of a list and of a lone object stay in one place (`super::document`), whatever the key
//! order (`kubectl get -o json` writes `items` before `kind`). Items and documents are read with
//! the read's [`Session`].
//!
//! Anything this walk does not expect (a top-level array, a syntax error, a value of the wrong
//! type, input that ends early) gives `None`: the caller then reads the whole input with the
//! streaming reader, which returns the same objects, or the error with its line and column. The
//! fast path changes how long a read takes, never what it returns.

use std::io::{self, Read};

use serde::de::{DeserializeOwned, DeserializeSeed, IgnoredAny};

use super::document::{
    self, BOM, Deferred, DocumentReader, ItemReader, ListItem, append, keep_meta,
};
use super::object::Object;
use super::session::Session;
use super::text::{Labels, Text};
use super::types::ObjectMeta;

/// How much of the input the window holds to begin with; it doubles for a value larger than that.
const WINDOW: usize = 8 << 20;

/// The window is refilled before a value when less than this is left ahead of it, so that most
/// values are parsed once (one cut off by the window's end is parsed again after a refill).
const AHEAD: usize = 1 << 20;

/// The objects of a JSON stream of top-level objects (Lists or lone objects) and the first list's
/// `gpuledger.io/…` annotations, or `None` when the input is anything else (see the module docs).
pub(super) fn read_stream(
    r: impl Read,
    size: Option<u64>,
    session: &mut Session,
) -> io::Result<Option<(Vec<Object>, Labels)>> {
    session.sharing(|s| read_with(Window::new(r, size, WINDOW, AHEAD), s))
}

fn read_with<R: Read>(
    mut w: Window<R>,
    session: &mut Session,
) -> io::Result<Option<(Vec<Object>, Labels)>> {
    w.more()?;
    if w.rest().starts_with(BOM) {
        w.pos += BOM.len();
    }
    let mut objects = Vec::new();
    let mut meta = Labels::new();
    loop {
        match w.peek()? {
            None => break,
            Some(b'{') => w.pos += 1,
            Some(_) => return Ok(None),
        }
        let Some((found, annotations)) = top_object(&mut w, session)? else {
            return Ok(None);
        };
        append(&mut objects, found);
        keep_meta(&mut meta, annotations);
    }
    Ok(Some((objects, meta)))
}

/// One top-level object, past its `{`: the objects of its `items` (when it has them) followed by
/// the object itself unless it is a list, and the list's annotations.
fn top_object<R: Read>(
    w: &mut Window<R>,
    session: &mut Session,
) -> io::Result<Option<(Vec<Object>, Labels)>> {
    // The object's text without its items, read as a document at the end.
    let mut rest = b"{".to_vec();
    let mut api_version: Option<String> = None;
    let mut kind: Option<String> = None;
    let mut items: Option<(Vec<Object>, Vec<Deferred>)> = None;
    if w.peek()? == Some(b'}') {
        w.pos += 1;
    } else {
        loop {
            let Some(key) = w.value::<String>()? else {
                return Ok(None);
            };
            if w.peek()? != Some(b':') {
                return Ok(None);
            }
            w.pos += 1;
            if rest.len() > 1 {
                rest.push(b',');
            }
            serde_json::to_writer(&mut rest, &key)?;
            rest.push(b':');
            if key == "items" && w.peek()? == Some(b'[') {
                if items.is_some() {
                    return Ok(None); // twice: left to the streaming reader
                }
                w.pos += 1;
                let Some(read) = read_items(w, api_version.as_deref(), kind.as_deref(), session)?
                else {
                    return Ok(None);
                };
                items = Some(read);
                rest.extend_from_slice(b"[]");
            } else {
                let Some(raw) = w.raw()? else {
                    return Ok(None);
                };
                // The list's type so far, for the items that follow (a later key wins, as in
                // the list's own reader); a value that is not a string fails the document below.
                match key.as_str() {
                    "apiVersion" => api_version = serde_json::from_slice(&raw).ok(),
                    "kind" => kind = serde_json::from_slice(&raw).ok(),
                    _ => {}
                }
                rest.extend_from_slice(&raw);
            }
            match w.peek()? {
                Some(b',') => w.pos += 1,
                Some(b'}') => {
                    w.pos += 1;
                    break;
                }
                _ => return Ok(None),
            }
        }
    }
    rest.push(b'}');
    let mut out = Vec::new();
    if let Some((found, waiting)) = items {
        out = found;
        let (v, k) = (api_version.as_deref(), kind.as_deref());
        if document::place_items(&mut out, waiting, v, k, session).is_err() {
            return Ok(None);
        }
    }
    let mut de = serde_json::Deserializer::from_slice(&rest);
    let read = DocumentReader::<ObjectMeta>::new(session, 0).deserialize(&mut de);
    let Ok(doc) = read.and_then(|doc| de.end().map(|()| doc)) else {
        return Ok(None);
    };
    // The list's own object, if it is not a list, comes after its items (as the reader pushes it).
    out.extend(doc.objects);
    Ok(Some((out, doc.list_annotations)))
}

/// The elements of an `items` array, past its `[`, read with the list's type so far.
fn read_items<R: Read>(
    w: &mut Window<R>,
    api_version: Option<&str>,
    kind: Option<&str>,
    session: &mut Session,
) -> io::Result<Option<(Vec<Object>, Vec<Deferred>)>> {
    let mut out: Vec<Object> = Vec::new();
    let mut waiting = Vec::new();
    if w.peek()? == Some(b']') {
        w.pos += 1;
        return Ok(Some((out, waiting)));
    }
    loop {
        // The previous item's type, the likeliest of the next in a run of one type (a list of
        // pods). Only within a run: where types alternate (a pod, its ReplicaSet, a pod), a wrong
        // guess would cost a whole read of the item before it is read again.
        let guess = match out.last_chunk::<2>() {
            Some([a, b]) if (&a.api_version, &a.kind) == (&b.api_version, &b.kind) => {
                Some((b.api_version.clone(), b.kind.clone()))
            }
            _ => None,
        };
        let Some(item) = w.item(session, api_version, kind, guess)? else {
            return Ok(None);
        };
        let at = out.len();
        waiting.extend(item.deferred.into_iter().map(|d| d.shifted(at)));
        out.extend(item.objects);
        match w.peek()? {
            Some(b',') => w.pos += 1,
            Some(b']') => {
                w.pos += 1;
                return Ok(Some((out, waiting)));
            }
            _ => return Ok(None),
        }
    }
}

/// An item's own apiVersion and kind, when they are not its first keys (kubectl and the API server
/// write them first; a dump reordered by a tool may put them last).
#[derive(Debug)]
struct OwnType {
    api_version: String,
    kind: String,
}

/// Whether the item's first key is `apiVersion` or `kind`: it says its type before its spec as it
/// is read (as kubectl and the API server write it).
fn type_first(text: &[u8]) -> bool {
    let start = blanks(text);
    let inner = text.get(start + 1..).unwrap_or_default().trim_ascii_start();
    text.get(start) == Some(&b'{')
        && (inner.starts_with(b"\"apiVersion\"") || inner.starts_with(b"\"kind\""))
}

/// The item's own type, looked up by a scan over its bytes, unless its first key is `apiVersion`
/// or `kind` (see [`type_first`]) or it names none (a typed list's item takes the list's). The scan jumps from brace to brace and over strings (a
/// pod is mostly strings, an indented file mostly blanks), several times faster than parsing the
/// item to skip it; brackets need no counting, since a string followed by a colon is a key and
/// only the item's own keys sit one brace deep. Any surprise (a key twice, a kind that is not a
/// string, an escape in a key, bytes that are not JSON) gives `None`: the item is then read as it
/// stands, which says what is wrong.
fn own_type(text: &[u8]) -> Option<OwnType> {
    let start = blanks(text);
    if text.get(start) != Some(&b'{') || type_first(text) {
        return None;
    }
    let (mut api_version, mut kind) = (None, None);
    let (mut i, mut depth) = (start + 1, 1usize);
    while depth > 0 {
        i = next_token(text, i)?;
        match *text.get(i)? {
            b'"' => {
                let end = string_end(text, i)?;
                let after = end + blanks(text.get(end..)?);
                // A key of the item itself: its value follows the colon.
                if depth == 1 && text.get(after) == Some(&b':') {
                    let key = text.get(i + 1..end - 1)?;
                    let slot = match key {
                        b"apiVersion" => &mut api_version,
                        b"kind" => &mut kind,
                        k if k.contains(&b'\\') => return None,
                        _ => {
                            i = after + 1;
                            continue;
                        }
                    };
                    let v = after + 1 + blanks(text.get(after + 1..)?);
                    if slot.is_some() || text.get(v) != Some(&b'"') {
                        return None;
                    }
                    let v_end = string_end(text, v)?;
                    *slot = Some(serde_json::from_slice::<String>(text.get(v..v_end)?).ok()?);
                    i = v_end;
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
    Some(OwnType {
        api_version: api_version?,
        kind: kind?,
    })
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
fn blanks(text: &[u8]) -> usize {
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

/// A window on the input: `buf[pos..]` is read and not yet parsed.
struct Window<R> {
    input: R,
    buf: Vec<u8>,
    pos: usize,
    /// The input has no more bytes.
    eof: bool,
    /// See [`AHEAD`].
    ahead: usize,
    /// How many bytes the last value parsed took (blanks before it included).
    last: usize,
}

impl<R: Read> Window<R> {
    fn new(input: R, size: Option<u64>, window: usize, ahead: usize) -> Window<R> {
        // A small input gets a small window (rendered manifests, API pages).
        let capacity = size
            .and_then(|s| usize::try_from(s).ok())
            .map_or(window, |s| s.saturating_add(1).min(window));
        Window {
            input,
            buf: Vec::with_capacity(capacity),
            pos: 0,
            eof: false,
            ahead,
            last: 0,
        }
    }

    fn rest(&self) -> &[u8] {
        self.buf.get(self.pos..).unwrap_or_default()
    }

    /// Reads more of the input: the unparsed bytes move to the front, and the window fills up to
    /// its capacity, which doubles when they already fill it (one value larger than the window).
    fn more(&mut self) -> io::Result<()> {
        if self.eof {
            return Ok(());
        }
        self.buf.drain(..self.pos);
        self.pos = 0;
        if self.buf.len() == self.buf.capacity() {
            self.buf.reserve(self.buf.capacity().max(1));
        }
        let free = self.buf.capacity() - self.buf.len();
        let read = (&mut self.input)
            .take(u64::try_from(free).unwrap_or(u64::MAX))
            .read_to_end(&mut self.buf)?;
        self.eof = read < free;
        Ok(())
    }

    /// The next byte past blanks (consumed), without consuming it; `None` at the end of the input.
    fn peek(&mut self) -> io::Result<Option<u8>> {
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
    fn value<T: DeserializeOwned>(&mut self) -> io::Result<Option<T>> {
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
    fn item(
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
            if self.buf.len() - self.pos < self.ahead && !self.eof {
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
            let before = self.buf.len() - self.pos;
            self.more()?;
            if self.buf.len() - self.pos == before && self.eof {
                return Ok(None); // the input ends inside the value
            }
        }
    }

    /// The text of the value at the position (with the blanks before it).
    fn raw(&mut self) -> io::Result<Option<Vec<u8>>> {
        if self.value::<IgnoredAny>()?.is_none() {
            return Ok(None);
        }
        // `value` parses from the window as it stands when it returns: the value's bytes are the
        // last `self.last` before the position.
        let from = self.pos - self.last;
        Ok(self.buf.get(from..self.pos).map(<[u8]>::to_vec))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::k8s::read::read_json;

    /// A reader that hands out at most three bytes a call, as a pipe may.
    struct Trickle<'a>(&'a [u8]);

    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let n = out.len().min(3).min(self.0.len());
            out[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    /// What a read returned and noted, in a form two reads can be compared by.
    fn seen(found: &(Vec<Object>, Labels), session: &mut Session) -> String {
        let (notes, total) = session.take_trimmed();
        format!("{:?}\n{:?}\n{notes:?} {total}", found.0, found.1)
    }

    /// The streaming reader's answer, or `None` if it fails.
    fn streaming(text: &str) -> Option<String> {
        let mut session = Session::new();
        read_json(text.as_bytes(), "t.json", &mut session)
            .ok()
            .map(|found| seen(&found, &mut session))
    }

    /// The fast path over windows of every small size (each value cut somewhere by a window's
    /// end), a large one, and a trickling reader: each returns what the streaming reader returns,
    /// or gives up (`None`), which it must when the streaming reader fails. `fast` says whether
    /// it must also take the input whole.
    fn same_as_streaming(text: &str, fast: bool) -> Option<String> {
        let want = streaming(text);
        let bytes = text.as_bytes();
        // Without reading ahead, a window of w bytes cuts the input's first value at w.
        let mut windows: Vec<(usize, usize)> = (1..=256).map(|w| (w, 0)).collect();
        windows.extend((1..=48).map(|w| (w, w / 2)));
        windows.extend([(7, 100), (1 << 20, 1 << 10)]);
        let mut reads: Vec<(String, Option<String>)> = Vec::new();
        for (window, ahead) in windows {
            let mut session = Session::new();
            let got = read_with(Window::new(bytes, None, window, ahead), &mut session).unwrap();
            reads.push((
                format!("window {window}, ahead {ahead}"),
                got.map(|f| seen(&f, &mut session)),
            ));
        }
        let mut session = Session::new();
        let got = read_with(Window::new(Trickle(bytes), None, 16, 4), &mut session).unwrap();
        reads.push(("trickle".to_string(), got.map(|f| seen(&f, &mut session))));
        for (how, got) in reads {
            match (&got, &want) {
                (None, _) if !fast || want.is_none() => {}
                (Some(_), Some(_)) if got == want => {}
                _ => panic!("{how}: fast {got:?}, streaming {want:?}: {text}"),
            }
        }
        want
    }

    const POD: &str = r#"{"metadata": {"name": "a", "namespace": "ml", "labels": {"app": "w\u00e9b", "t": "x"}}, "spec": {"nodeName": "n1", "containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": "2"}, "requests": {"cpu": 1.5}}}]}, "status": {"phase": "Running"}}"#;

    #[test]
    fn lists_in_any_key_order_read_as_the_streaming_reader_reads_them() {
        let kubectl = format!(
            r#"{{"apiVersion": "v1", "items": [{POD}, {{"apiVersion": "v1", "kind": "Node", "metadata": {{"name": "n1"}}, "status": {{"allocatable": {{"nvidia.com/gpu": "8"}}}}}}, {{"metadata": {{"generateName": "b-"}}}}], "kind": "PodList", "metadata": {{"resourceVersion": "1", "annotations": {{"gpuledger.io/context": "prod", "other": "x"}}}}}}"#
        );
        let found = same_as_streaming(&kubectl, true).unwrap();
        assert!(found.contains("\"n1\"") && found.contains("gpuledger.io/context"));
        // kind first; kind-less items of an untyped List are not objects (both readers fail).
        let kind_first = kubectl.replacen(
            r#""apiVersion": "v1", "items""#,
            r#""kind": "PodList", "apiVersion": "v1", "items""#,
            1,
        );
        assert_eq!(same_as_streaming(&kind_first, true), Some(found.clone()));
        assert_eq!(
            same_as_streaming(&kubectl.replace("PodList", "List"), true),
            None
        );
        // Items without apiVersion before it; spec before kind; an empty list; no items at all.
        let late = format!(r#"{{"items": [{POD}], "kind": "PodList", "apiVersion": "v1"}}"#);
        assert!(same_as_streaming(&late, true).unwrap().contains("Running"));
        let spec_first = r#"{"spec": {"replicas": 3}, "metadata": {"name": "d"}, "kind": "Deployment", "apiVersion": "apps/v1"}"#;
        assert!(
            same_as_streaming(spec_first, true)
                .unwrap()
                .contains("replicas")
        );
        same_as_streaming(
            r#"{"apiVersion": "v1", "items": [], "kind": "List", "metadata": {}}"#,
            true,
        )
        .unwrap();
        assert_eq!(same_as_streaming("{}", true), None);
        same_as_streaming(
            r#"{"items": [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}}]}"#,
            true,
        )
        .unwrap();
        // A stream of documents, numbers and literals at the window's end.
        let stream = format!(
            "{kubectl}\n{spec_first}  \n{{\"apiVersion\":\"v1\",\"kind\":\"List\",\"n\":12345678,\"f\":-1.5e3,\"t\":true,\"z\":null,\"items\":[{spec_first}]}}\n"
        );
        same_as_streaming(&stream, true).unwrap();
        // Labels beyond the API's limits are cut and noted once, however often a read is retried.
        let long = format!(
            r#"{{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {{"name": "c", "labels": {{"a": "{}"}}}}}}"#,
            "x".repeat(70)
        );
        let cut =
            same_as_streaming(&format!(r#"{{"kind": "List", "items": [{long}]}}"#), true).unwrap();
        assert!(cut.ends_with(" 1"), "{cut}");
    }

    /// Items whose kind and apiVersion come last are typed ahead of their spec, and read as the
    /// streaming reader reads them (which buffers their spec until their kind comes).
    #[test]
    fn kind_last_items_are_typed_before_their_spec() {
        let pod = r#"{"metadata": {"name": "p", "namespace": "ml"}, "spec": {"nodeName": "n1", "containers": [{"resources": {"limits": {"nvidia.com/gpu": "2"}}}]}, "status": {"phase": "Running"}, "kind": "Pod", "apiVersion": "v1"}"#;
        let typed = own_type(pod.as_bytes()).unwrap();
        assert_eq!(
            (typed.api_version.as_str(), typed.kind.as_str()),
            ("v1", "Pod")
        );
        // Said first, not said, said twice or not as a string: not looked up.
        for text in [
            r#"{"apiVersion": "v1", "spec": {}, "kind": "Pod"}"#,
            r#" { "kind": "Pod", "apiVersion": "v1"}"#,
            r#"{"metadata": {"name": "a"}}"#,
            r#"{"spec": {}, "kind": "Pod", "apiVersion": "v1", "kind": "Node"}"#,
            r#"{"spec": {}, "kind": 3, "apiVersion": "v1"}"#,
            r#"{"spec": {}, "ki\u006ed": "Pod", "apiVersion": "v1"}"#,
        ] {
            assert!(own_type(text.as_bytes()).is_none(), "{text}");
        }
        // Only the item's own keys count: not a kind inside its spec, a string that looks like
        // a key, braces and escaped quotes inside strings.
        let tricky = r#"{ "spec" : {"kind": "Secret", "apiVersion": "v1", "a": ["{", "\"kind\": \"X\"", {"kind": "Y"}]},
            "note": "}\\", "list": [[], {}, "]"], "n": -1.5e3, "t": true, "z": null,
            "kind" :"Pod", "apiVersion": "v\u0031", "after": {"kind": "Z"}}"#;
        let typed = own_type(tricky.as_bytes()).unwrap();
        assert_eq!(
            (typed.api_version.as_str(), typed.kind.as_str()),
            ("v1", "Pod")
        );
        // Cut off, or not an object: not looked up.
        for text in [&tricky[..tricky.len() - 3], "[1]", "", "  "] {
            assert!(own_type(text.as_bytes()).is_none(), "{text}");
        }
        let deployment = r#"{"spec": {"replicas": 3, "template": {"spec": {"containers": [{"resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}}, "metadata": {"name": "d"}, "kind": "Deployment", "apiVersion": "apps/v1"}"#;
        let list = format!(
            r#"{{"items": [{pod}, {deployment}], "metadata": {{}}, "kind": "List", "apiVersion": "v1"}}"#
        );
        let found = same_as_streaming(&list, true).unwrap();
        assert!(
            found.contains("Running") && found.contains("replicas: Some(3)"),
            "{found}"
        );
        // A spec that does not fit its kind fails as it does when read in order.
        let wrong = r#"{"items": [{"spec": {"replicas": "three"}, "metadata": {"name": "d"}, "kind": "Deployment", "apiVersion": "apps/v1"}], "kind": "List"}"#;
        assert_eq!(same_as_streaming(wrong, false), None);
    }

    /// A kind-last item in a run of one type is read as that type, which it must then name
    /// itself, apiVersion and kind both: otherwise it is read again with its type looked up.
    #[test]
    fn a_kind_last_item_is_read_as_the_item_before_it_only_if_it_names_that_type() {
        let pod = |name: &str, tail: &str| {
            format!(
                r#"{{"metadata": {{"name": "{name}"}}, "spec": {{"nodeName": "n1", "containers": [{{"resources": {{"limits": {{"nvidia.com/gpu": "2"}}}}}}]}}{tail}}}"#
            )
        };
        let typed = r#", "kind": "Pod", "apiVersion": "v1""#;
        // A Deployment after a pod: its spec fits a pod's (unknown fields are skipped) but it
        // names another kind, so its replicas are read as a Deployment's.
        let deployment = r#"{"spec": {"replicas": 3, "template": {"spec": {"containers": [{"resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}}, "metadata": {"name": "d"}, "kind": "Deployment", "apiVersion": "apps/v1"}"#;
        let mixed = format!(
            r#"{{"items": [{}, {}, {deployment}, {}], "kind": "List", "apiVersion": "v1"}}"#,
            pod("a", typed),
            pod("b", typed),
            pod("c", typed),
        );
        let found = same_as_streaming(&mixed, true).unwrap();
        assert!(found.contains("replicas: Some(3)"), "{found}");
        // Another apiVersion, or only a kind in a typed list: what the item says, with the
        // list's apiVersion for the one it leaves out.
        let typed_list = format!(
            r#"{{"items": [{}, {}, {}, {}, {}, {}], "kind": "PodList", "apiVersion": "v1"}}"#,
            pod("a", typed),
            pod("a2", typed),
            pod("b", r#", "kind": "Pod", "apiVersion": "example.com/v2""#),
            pod("a3", typed),
            pod("a4", typed),
            pod("c", r#", "kind": "Pod""#),
        );
        let found = same_as_streaming(&typed_list, true).unwrap();
        assert!(found.contains("example.com/v2"), "{found}");
        // An item that names no type in an untyped list is not an object, whatever came before.
        let untyped = format!(
            r#"{{"items": [{}, {}, {}], "kind": "List", "apiVersion": "v1"}}"#,
            pod("a", typed),
            pod("a2", typed),
            pod("b", ""),
        );
        assert_eq!(same_as_streaming(&untyped, false), None);
    }

    #[test]
    fn what_the_fast_path_does_not_expect_is_left_to_the_streaming_reader() {
        let pod = r#"{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}}"#;
        for text in [
            format!("[{pod}]"),                                      // a top-level array
            format!(r#"{{"kind": "List", "items": [{pod}]"#),         // ends early
            format!(r#"{{"kind": "List", "items": [{pod},]}}"#),      // a syntax error
            format!(r#"{{"kind": "List", "items": [{pod}], "items": []}}"#), // items twice
            r#"{"kind": "List", "items": {}}"#.to_string(),         // items not an array
            r#"{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}, "spec": {"containers": 3}}"#.to_string(),
            format!("{pod} 7"),                                      // a number after the object
        ] {
            let fast =
                read_with(Window::new(text.as_bytes(), None, 8, 4), &mut Session::new()).unwrap();
            assert!(fast.is_none(), "{text}");
            same_as_streaming(&text, false);
        }
        // …and errors keep the streaming reader's line and column.
        let err = crate::k8s::read::read_str("{\"kind\": \"List\",\n \"items\": [\n {\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": 3}}]}", "t.json").unwrap_err();
        assert_eq!((err.line, err.column.is_some()), (Some(3), true), "{err}");
    }
}
