//! YAML streams: each document read on its own, with the read's session.
//!
//! serde-saphyr reads a stream of several documents only into types that carry no state (its
//! `read_with_options` takes a `DeserializeOwned`), and the read's [`Session`] must reach every
//! document. So the stream is cut into its documents here, at their marker lines, as it streams by,
//! and each document is read by the single-document reader with a seed. YAML 1.2 makes the cut
//! exact: a line that starts with `---` or `...` followed by a blank or the line's end is a
//! document marker wherever it appears, never content (`c-forbidden`). A `---` opens a new
//! document unless everything before it since the last document was blank lines, comments or
//! directives (which belong to the document it opens); a `...` closes the document it ends.
//!
//! Every document keeps its lines counted from the stream's start (objects' lines and errors'),
//! and the parsing limits of a document are those of the whole input, as before.
//!
//! A document smaller than `FAST_MAX` is first read by the fast path (`super::yaml_block` and
//! `super::yaml_value`: the block-style subset tools write, several times faster than
//! serde-saphyr); what that path does not take is read by serde-saphyr, with the same result. A
//! larger document that is a `List` as kubectl writes it is read an item at a time
//! (`super::yaml_list`); should that path not take it, the whole input is read again without it.

use std::io::{self, BufRead, Read};

use serde::de::DeserializeSeed;
use serde_saphyr::Spanned;

use super::document::{Document, DocumentReader, ReadError, append, keep_meta};
use super::object::Object;
use super::session::Session;
use super::text::Labels;
use super::types::ObjectMeta;
use super::yaml_list::{Listed, looks_like_list, read_list};
use super::yaml_value::read_document;
use crate::error::InputError;

/// Documents smaller than this are read whole, by the fast path (`super::yaml_block`) when it can.
const FAST_MAX: usize = 1 << 20;

/// How much of the fast path a read uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Fast {
    /// serde-saphyr reads every document (to test the fast path against).
    #[cfg(test)]
    Off,
    /// Documents smaller than `FAST_MAX`, each left to serde-saphyr when the fast path does
    /// not take it.
    Documents,
    /// And a larger `List` an item at a time (`super::yaml_list`), which may answer that the input
    /// must be read again without it.
    Lists,
}

/// Every object of a YAML stream and its first list's `gpuledger.io/…` annotations; `None` when a
/// read with [`Fast::Lists`] must be done again with [`Fast::Documents`] (see `super::yaml_list`).
pub(super) fn read_yaml(
    reader: impl BufRead,
    file: &str,
    size: Option<u64>,
    session: &mut Session,
    fast: Fast,
) -> Result<Option<(Vec<Object>, Labels)>, ReadError> {
    read_yaml_with(reader, file, size, session, fast, FAST_MAX)
}

/// [`read_yaml`], reading documents of up to `whole_max` bytes whole.
pub(super) fn read_yaml_with(
    reader: impl BufRead,
    file: &str,
    size: Option<u64>,
    session: &mut Session,
    fast: Fast,
    whole_max: usize,
) -> Result<Option<(Vec<Object>, Labels)>, ReadError> {
    let mut objects = Vec::new();
    let mut meta = Labels::new();
    let mut stream = Stream::new(reader);
    let mut text = Vec::new();
    while let Some(first_line) = stream.next_document().map_err(ReadError::Io)? {
        let offset = u32::try_from(first_line.saturating_sub(1)).unwrap_or(u32::MAX);
        // The document whole, when it is smaller than `whole_max`: the fast path reads it, or
        // serde-saphyr does from the same bytes. A larger one (a `kubectl get -o yaml` List) is
        // read an item at a time, or streams on to serde-saphyr after the bytes taken.
        text.clear();
        DocumentBytes(&mut stream)
            .take(u64::try_from(whole_max).unwrap_or(u64::MAX))
            .read_to_end(&mut text)
            .map_err(ReadError::Io)?;
        let whole = text.len() < whole_max;
        let mark = session.mark();
        let read = match fast {
            #[cfg(test)]
            Fast::Off => None,
            _ if whole => std::str::from_utf8(&text)
                .ok()
                .and_then(|t| read_document(t, session, offset)),
            Fast::Lists if looks_like_list(&text) => {
                let input = io::BufReader::with_capacity(
                    64 * 1024,
                    text.as_slice().chain(DocumentBytes(&mut stream)),
                );
                match read_list(input, offset, session).map_err(ReadError::Io)? {
                    Listed::Read {
                        objects,
                        annotations,
                    } => Some(Document {
                        objects,
                        list_annotations: annotations,
                        ..Document::default()
                    }),
                    Listed::Again => return Ok(None),
                }
            }
            _ => None,
        };
        let doc = match read {
            Some(doc) => doc,
            None => {
                session.reset_notes(mark);
                let rest = DocumentBytes(&mut stream);
                serde_saphyr::with_deserializer_from_reader_with_options(
                    text.as_slice().chain(rest),
                    yaml_options(size),
                    |de| {
                        DocumentReader::<Spanned<ObjectMeta>>::new(session, offset).deserialize(de)
                    },
                )
                .map_err(|e| yaml_error(&e, file, offset, session))?
            }
        };
        append(&mut objects, doc.objects);
        keep_meta(&mut meta, doc.list_annotations);
    }
    Ok(Some((objects, meta)))
}

/// YAML parsing limits. Without aliases, every node, event and document costs at least a byte of
/// input, so limits proportional to the input's size never refuse an honest file (a `kubectl get -o
/// yaml` List of 100,000 pods is one document of millions of nodes) while an alias bomb, which
/// expands far beyond its size, is stopped. Depth is bounded to protect the stack.
fn yaml_options(size: Option<u64>) -> serde_saphyr::Options {
    // Standard input has no size: allow what a 1 GiB file would.
    let len = usize::try_from(size.unwrap_or(1 << 30)).unwrap_or(usize::MAX);
    let mut options = serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_reader_input_bytes: None,
            max_events: len.saturating_mul(2).max(1_000_000),
            max_nodes: len.max(250_000),
            max_documents: len.max(1_024),
            max_total_scalar_bytes: len.max(64 * 1024 * 1024),
            max_depth: 200,
        },
    };
    // The reader says where, in its own words; the parser's rendering of the line is not wanted.
    options.with_snippet = false;
    options
}

/// Converts a YAML error into an [`InputError`] ([`InputError::from_yaml`]).
pub(crate) fn yaml_error_to_input(e: &serde_saphyr::Error, file: &str) -> InputError {
    InputError::from_yaml(e, file)
}

/// A YAML error of the document whose lines start after `offset` lines of the stream.
fn yaml_error(
    e: &serde_saphyr::Error,
    file: &str,
    offset: u32,
    session: &mut Session,
) -> ReadError {
    if let serde_saphyr::Error::IOError { cause } = e {
        return ReadError::Io(io::Error::new(cause.kind(), cause.to_string()));
    }
    let mut input = yaml_error_to_input(e, file);
    input.line = input.line.map(|l| l.saturating_add(offset));
    input.message = session.explain(&input.message);
    ReadError::Input(input)
}

/// A YAML stream being cut into documents (see the module docs).
struct Stream<R> {
    input: R,
    /// Lines handed out so far.
    lines: u64,
    /// Bytes of the current line read (to tell a marker) and not handed out yet.
    head: Vec<u8>,
    /// The next byte starts a line, not classified yet.
    at_line_start: bool,
    /// The current line is a `...`: the document ends with it.
    end_marker: bool,
    /// The current line has had only blanks so far.
    blank: bool,
    /// The document has more than blank lines, comments and directives, or opened with `---`.
    started: bool,
    /// The document being handed out ended (at a marker or the input's end).
    ended: bool,
    /// The input has no more bytes.
    eof: bool,
}

/// How many bytes of a line tell whether it is a marker: an optional byte order mark, three
/// characters, and the one after them.
const HEAD: usize = 3 + 3 + 1;

impl<R: BufRead> Stream<R> {
    fn new(input: R) -> Stream<R> {
        Stream {
            input,
            lines: 0,
            head: Vec::with_capacity(HEAD),
            at_line_start: true,
            end_marker: false,
            blank: false,
            started: false,
            ended: true,
            eof: false,
        }
    }

    /// Moves to the next document, returning its first line, or `None` past the last.
    fn next_document(&mut self) -> io::Result<Option<u64>> {
        // What the previous document did not hand out (the parser stopped early) is skipped.
        io::copy(&mut DocumentBytes(self), &mut io::sink())?;
        if self.at_line_start {
            self.fill_head()?;
        }
        if self.head.is_empty() && self.eof {
            return Ok(None);
        }
        self.ended = false;
        self.started = false;
        Ok(Some(self.lines + 1))
    }

    /// Reads the head of the line at the position into `head`: up to [`HEAD`] bytes, or to the
    /// line's end.
    fn fill_head(&mut self) -> io::Result<()> {
        while self.head.len() < HEAD && !self.head.ends_with(b"\n") {
            let buf = self.input.fill_buf()?;
            if buf.is_empty() {
                self.eof = true;
                break;
            }
            let want = (HEAD - self.head.len()).min(buf.len());
            let n = buf
                .iter()
                .take(want)
                .position(|&b| b == b'\n')
                .map_or(want, |i| i + 1);
            self.head
                .extend_from_slice(buf.get(..n).unwrap_or_default());
            self.input.consume(n);
        }
        Ok(())
    }

    /// Hands out bytes of the current document into `out`; 0 at its end.
    fn read_document(&mut self, out: &mut [u8]) -> io::Result<usize> {
        loop {
            if self.ended || out.is_empty() {
                return Ok(0);
            }
            if self.at_line_start {
                self.fill_head()?;
                if self.head.is_empty() {
                    self.ended = true;
                    return Ok(0);
                }
                let m = marker(&self.head);
                if m == Some(Marker::Start) {
                    if self.started {
                        // The next document's first line: kept for it.
                        self.ended = true;
                        return Ok(0);
                    }
                    self.started = true;
                }
                self.end_marker = m == Some(Marker::End);
                self.blank = m.is_none();
                self.at_line_start = false;
            }
            let n = if self.head.is_empty() {
                // The rest of the line, straight from the input.
                let buf = self.input.fill_buf()?;
                if buf.is_empty() {
                    self.eof = true;
                    self.end_line();
                    continue;
                }
                let window = buf.get(..buf.len().min(out.len())).unwrap_or_default();
                let (n, lines) = if self.started && !self.blank && !self.end_marker {
                    // Within a document's content, only a marker line ends it: whole lines are
                    // handed out at once, up to the first line that may be one.
                    lines_up_to_marker(window)
                } else {
                    let n = window
                        .iter()
                        .position(|&b| b == b'\n')
                        .map_or(window.len(), |i| i + 1);
                    (n, 0)
                };
                let give = window.get(..n).unwrap_or_default();
                out.get_mut(..n).unwrap_or_default().copy_from_slice(give);
                classify(&mut self.blank, &mut self.started, give);
                self.input.consume(n);
                // The lines passed over whole; the last one's end is counted below.
                self.lines += lines;
                n
            } else {
                let n = self.head.len().min(out.len());
                let give = self.head.get(..n).unwrap_or_default();
                out.get_mut(..n).unwrap_or_default().copy_from_slice(give);
                classify(&mut self.blank, &mut self.started, give);
                self.head.drain(..n);
                n
            };
            if out.get(..n).is_some_and(|o| o.ends_with(b"\n")) {
                self.end_line();
            }
            return Ok(n);
        }
    }

    /// The current line was handed out to its end; a `...` line also ends the document.
    fn end_line(&mut self) {
        self.lines += 1;
        self.at_line_start = true;
        if self.end_marker {
            self.ended = true;
        }
    }
}

/// How many bytes of `window` (which starts within a line) can be handed out at once, and how many
/// lines they end before their last byte: through the end of the line before the first line that
/// may be a marker (a line is known to be none once its head, or all of it, is in the window).
fn lines_up_to_marker(window: &[u8]) -> (usize, u64) {
    let mut end = None;
    let mut newlines = 0;
    for (i, _) in window.iter().enumerate().filter(|(_, b)| **b == b'\n') {
        newlines += 1;
        end = Some(i + 1);
        let next = window.get(i + 1..).unwrap_or_default();
        let known = next.len() >= HEAD || next.contains(&b'\n');
        if !known || marker(next).is_some() {
            break;
        }
    }
    match end {
        Some(e) => (e, newlines - 1),
        None => (window.len(), 0),
    }
}

/// Learns from bytes of a line, handed out while it has had only blanks, whether it is content:
/// anything but a blank line, a comment or a directive starts the document.
fn classify(blank: &mut bool, started: &mut bool, bytes: &[u8]) {
    if !*blank {
        return;
    }
    let head = bytes.strip_prefix(super::document::BOM).unwrap_or(bytes);
    if let Some(&b) = head.iter().find(|b| !matches!(b, b' ' | b'\t' | b'\r')) {
        *blank = false;
        if !matches!(b, b'\n' | b'#' | b'%') {
            *started = true;
        }
    }
}

/// A document marker line: `---` opens a document, `...` ends one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Marker {
    Start,
    End,
}

/// Whether a line whose first bytes are `head` (see [`Stream::fill_head`]) is a marker.
fn marker(head: &[u8]) -> Option<Marker> {
    let head = head.strip_prefix(super::document::BOM).unwrap_or(head);
    let (kind, after) = if let Some(after) = head.strip_prefix(b"---") {
        (Marker::Start, after)
    } else {
        (Marker::End, head.strip_prefix(b"...")?)
    };
    // The head stops at the line's end, or at the input's: nothing after the marker is its end.
    match after.first() {
        None | Some(b' ' | b'\t' | b'\r' | b'\n') => Some(kind),
        _ => None,
    }
}

/// The bytes of the stream's current document, as a reader for the parser.
struct DocumentBytes<'a, R>(&'a mut Stream<R>);

impl<R: BufRead> Read for DocumentBytes<'_, R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        self.0.read_document(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The documents a stream is cut into, each with its first line, the same whatever the size
    /// of the reader's buffer (a line or a marker cut by the buffer's end).
    fn documents(text: &str) -> Vec<(u64, String)> {
        let cut = |capacity: usize| {
            let mut s = Stream::new(io::BufReader::with_capacity(capacity, text.as_bytes()));
            let mut out = Vec::new();
            while let Some(first) = s.next_document().unwrap() {
                let mut doc = String::new();
                DocumentBytes(&mut s).read_to_string(&mut doc).unwrap();
                out.push((first, doc));
            }
            out
        };
        let whole = cut(text.len().max(1));
        for capacity in 1..=24 {
            assert_eq!(cut(capacity), whole, "buffer of {capacity}: {text:?}");
        }
        whole
    }

    fn pairs(docs: &[(u64, &str)]) -> Vec<(u64, String)> {
        docs.iter().map(|(l, d)| (*l, d.to_string())).collect()
    }

    #[test]
    fn a_stream_is_cut_at_its_marker_lines() {
        assert_eq!(
            documents("a: 1\n---\nb: 2\n"),
            pairs(&[(1, "a: 1\n"), (2, "---\nb: 2\n")])
        );
        // Comments and directives belong to the document their `---` opens.
        assert_eq!(
            documents("# c\n%YAML 1.2\n---\na: 1\n--- {b: 2}\n"),
            pairs(&[(1, "# c\n%YAML 1.2\n---\na: 1\n"), (5, "--- {b: 2}\n")])
        );
        // `...` ends a document; what follows is the next one.
        assert_eq!(
            documents("a: 1\n...\n%YAML 1.2\n---\nb\n"),
            pairs(&[(1, "a: 1\n...\n"), (3, "%YAML 1.2\n---\nb\n")])
        );
        // Not markers: indented, or followed by more than a blank.
        let one = "a: |\n  ---\n---x: 1\n....\n";
        assert_eq!(documents(one), pairs(&[(1, one)]));
        // CRLF, a byte order mark, and a marker at the input's very end are.
        assert_eq!(
            documents("a: 1\r\n---\r\nb: 2"),
            pairs(&[(1, "a: 1\r\n"), (2, "---\r\nb: 2")])
        );
        assert_eq!(
            documents("a: 1\n\u{feff}--- \nb\n---"),
            pairs(&[(1, "a: 1\n"), (2, "\u{feff}--- \nb\n"), (4, "---")])
        );
        assert_eq!(
            documents("a: 1\nb:\n- c\n- ---\n---\nd: |\n  x\n...\n"),
            pairs(&[(1, "a: 1\nb:\n- c\n- ---\n"), (5, "---\nd: |\n  x\n...\n")])
        );
        assert_eq!(documents(""), pairs(&[]));
        assert_eq!(documents("\n# only a comment\n").len(), 1);
    }

    #[test]
    fn documents_keep_the_lines_of_the_stream() {
        let text = "# fleet\n---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n---\n\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  replicas: many\n";
        let objects = crate::k8s::read::read_str(&text.replace("many", "2"), "t.yaml").unwrap();
        let lines: Vec<_> = objects.iter().map(|o| o.source.line).collect();
        assert_eq!(lines, [Some(6), Some(12)]);
        let e = crate::k8s::read::read_str(text, "t.yaml").unwrap_err();
        assert_eq!(e.line, Some(14), "{e}");
        assert!(
            e.message.starts_with("Deployment d: spec.replicas: "),
            "{e}"
        );
    }
}
