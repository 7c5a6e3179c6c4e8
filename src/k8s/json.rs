//! The fast path for JSON input: a `List`'s items parsed one by one from a window of the file.
//!
//! serde_json reads from an `io::Read` byte by byte (its `IoRead`), several times slower than from a
//! slice, and a fleet's snapshot is too large to hold whole (peak memory stays well below the
//! file's size). So the top-level objects of a JSON stream are walked here by hand, over a window
//! that slides along the input (`super::json_window`): each element of `items` is parsed from a
//! slice of the window as the list itself would read it, and every other value of the top-level
//! object is kept as its text. A large list's items are read on two threads, the second from the
//! middle of the input to the array's end ([`Split`]): a fleet's read takes about half as long on
//! two cores. Those texts, with `items` empty, are then read as one small document, so the
//! rules of a list and of a lone object stay in one place (`super::document`), whatever the key
//! order (`kubectl get -o json` writes `items` before `kind`). Items and documents are read with
//! the read's [`Session`].
//!
//! Anything this walk does not expect (a top-level array, a syntax error, a value of the wrong
//! type, input that ends early) gives `None`: the caller then reads the whole input with the
//! streaming reader, which returns the same objects, or the error with its line and column. The
//! fast path changes how long a read takes, never what it returns.

use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::ScopedJoinHandle;

use serde::de::DeserializeSeed;

use super::document::{self, BOM, Deferred, DocumentReader, ListItem, append, keep_meta};
use super::json_window::{Source, Window, blanks, names_itself};
use super::object::Object;
use super::session::{Session, Trimmed};
use super::text::Labels;
use super::types::ObjectMeta;

/// How much of the input the window holds to begin with; it doubles for a value larger than that.
const WINDOW: usize = 8 << 20;

/// The window is refilled before a value when less than this is left ahead of it, so that most
/// values are parsed once (one cut off by the window's end is parsed again after a refill).
const AHEAD: usize = 1 << 20;

/// A list's items are read on two threads when at least this much of the input is left (see
/// [`Split`]); below it a second thread gains little.
const SPLIT_MIN: u64 = 16 << 20;

/// The objects of a JSON stream of top-level objects (Lists or lone objects) and the first list's
/// `gpuledger.io/…` annotations, or `None` when the input is anything else (see the module docs).
pub(super) fn read_stream<S: Source + ?Sized>(
    src: &S,
    size: Option<u64>,
    session: &mut Session,
) -> io::Result<Option<(Vec<Object>, Labels)>> {
    let mut w = Window::new(src, 0, size, WINDOW, AHEAD);
    let split = Split::Half { min: SPLIT_MIN };
    session.sharing(|s| read_with(&mut w, split, s))
}

fn read_with<S: Source + ?Sized>(
    w: &mut Window<'_, S>,
    split: Split,
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
        let Some((found, annotations)) = top_object(w, split, session)? else {
            return Ok(None);
        };
        append(&mut objects, found);
        keep_meta(&mut meta, annotations);
    }
    Ok(Some((objects, meta)))
}

/// One top-level object, past its `{`: the objects of its `items` (when it has them) followed by
/// the object itself unless it is a list, and the list's annotations.
fn top_object<S: Source + ?Sized>(
    w: &mut Window<'_, S>,
    split: Split,
    session: &mut Session,
) -> io::Result<Option<(Vec<Object>, Labels)>> {
    // The object's text without its items, read as a document at the end.
    let mut rest = b"{".to_vec();
    let mut api_version: Option<String> = None;
    let mut kind: Option<String> = None;
    let mut items: Option<Items> = None;
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
                let (v, k) = (api_version.as_deref(), kind.as_deref());
                let Some(read) = read_items(w, split, v, k, session)? else {
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
    if let Some(items) = items {
        let waiting;
        (out, waiting) = items.into_parts();
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

/// The objects read from a list's items so far, and the items that wait for the list's type. The
/// objects are kept in chunks of [`CHUNK`], moved into one vector of the exact size at the end: no
/// vector doubles (and is copied) as it grows, and the two threads' objects join without one.
#[derive(Default)]
struct Items {
    chunks: Vec<Vec<Object>>,
    len: usize,
    waiting: Vec<Deferred>,
}

/// Objects a chunk of [`Items`] holds (a power of two: the first chunk grows to it by doubling).
const CHUNK: usize = 4096;

impl Items {
    /// The last two objects, when they are in one chunk.
    fn last_two(&self) -> Option<&[Object; 2]> {
        self.chunks.last()?.last_chunk::<2>()
    }

    fn push(&mut self, item: ListItem) {
        let at = self.len;
        self.waiting
            .extend(item.deferred.into_iter().map(|d| d.shifted(at)));
        self.len += item.objects.len();
        for o in item.objects {
            match self.chunks.last_mut().filter(|c| c.len() < CHUNK) {
                Some(c) => c.push(o),
                None => {
                    let mut c = Vec::with_capacity(if self.chunks.is_empty() { 1 } else { CHUNK });
                    c.push(o);
                    self.chunks.push(c);
                }
            }
        }
    }

    /// The items read after these (by a second thread), behind them.
    fn append(&mut self, later: Items) {
        let at = self.len;
        self.waiting
            .extend(later.waiting.into_iter().map(|d| d.shifted(at)));
        self.len += later.len;
        self.chunks.extend(later.chunks);
    }

    /// The objects in one vector, and the items that wait.
    fn into_parts(mut self) -> (Vec<Object>, Vec<Deferred>) {
        if self.chunks.len() <= 1 {
            return (self.chunks.pop().unwrap_or_default(), self.waiting);
        }
        let mut all = Vec::with_capacity(self.len);
        for c in self.chunks {
            all.extend(c);
        }
        (all, self.waiting)
    }
}

/// Whether a list's items are read on two threads. A second thread looks for an item from a byte
/// further on (past blanks, a `,` and a `{` that opens an object naming its `kind` and `metadata`,
/// see [`first_item`]) and reads the items from there to the array's end, while this thread reads
/// those before it. Where this thread's items reach that very byte, the second thread's items
/// follow them; where they pass it (the byte was in a string, or in an item's own list: a guess
/// by bytes), the second thread's work is dropped and this thread reads on. Either way the objects,
/// their order and the notes taken are those of one thread reading them all: an item's reading
/// depends only on its bytes and the list's type so far, which both threads are given.
#[derive(Debug, Clone, Copy)]
enum Split {
    /// From the middle of what is left of the input, when that is at least `min` bytes of a file
    /// (its size known) and the machine has two cores.
    Half { min: u64 },
    /// From this byte, whatever the input (tests).
    #[cfg(test)]
    From(u64),
    /// On one thread.
    #[cfg(test)]
    Off,
}

impl Split {
    /// The byte the second thread looks for an item from, if a second thread is to read.
    fn point<S: Source + ?Sized>(self, w: &Window<'_, S>) -> Option<u64> {
        match self {
            Split::Half { min } => {
                let left = w.size()?.checked_sub(w.at())?;
                let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
                (left >= min && cores >= 2).then(|| w.at() + left / 2)
            }
            #[cfg(test)]
            Split::From(at) => (at > w.at()).then_some(at),
            #[cfg(test)]
            Split::Off => None,
        }
    }
}

/// The elements of an `items` array, past its `[`, read with the list's type so far; on two threads
/// when `split` says so.
fn read_items<S: Source + ?Sized>(
    w: &mut Window<'_, S>,
    split: Split,
    api_version: Option<&str>,
    kind: Option<&str>,
    session: &mut Session,
) -> io::Result<Option<Items>> {
    let mut items = Items::default();
    if w.peek()? == Some(b']') {
        w.pos += 1;
        return Ok(Some(items));
    }
    let done = match split.point(w) {
        None => items_to_end(w, api_version, kind, session, &mut items, None, None)?,
        Some(from) => {
            let later = w.sibling(from);
            let found = AtomicU64::new(u64::MAX);
            let stop = AtomicBool::new(false);
            std::thread::scope(|scope| {
                let second = Second {
                    thread: scope.spawn(|| second_half(later, api_version, kind, &found, &stop)),
                    found: &found,
                    stop: &stop,
                };
                let done = items_to_end(
                    w,
                    api_version,
                    kind,
                    session,
                    &mut items,
                    Some(second),
                    None,
                );
                // Not reached (this thread failed, or the array ended before it): not needed.
                stop.store(true, Ordering::Relaxed);
                done
            })?
        }
    };
    Ok(done.map(|()| {
        w.pos += 1; // the `]`
        items
    }))
}

/// Reads items into `items` up to the array's `]` (not consumed). `second` is the thread reading
/// the items from further on (see [`Split`]); `stop` is set when the items this thread reads are
/// no longer needed.
fn items_to_end<S: Source + ?Sized>(
    w: &mut Window<'_, S>,
    api_version: Option<&str>,
    kind: Option<&str>,
    session: &mut Session,
    items: &mut Items,
    mut second: Option<Second<'_, '_>>,
    stop: Option<&AtomicBool>,
) -> io::Result<Option<()>> {
    loop {
        if stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
            return Ok(None);
        }
        w.peek()?;
        let at = w.at();
        let joined = second
            .take_if(|s| at >= s.found.load(Ordering::Acquire))
            .and_then(|s| s.join(at));
        if let Some(later) = joined {
            session.add_notes(later.notes);
            items.append(later.items);
            w.jump(later.end);
        } else {
            // The previous item's type, the likeliest of the next in a run of one type (a list
            // of pods). Only within a run: where types alternate (a pod, its ReplicaSet, a pod),
            // a wrong guess would cost a whole read of the item before it is read again.
            let guess = match items.last_two() {
                Some([a, b]) if (&a.api_version, &a.kind) == (&b.api_version, &b.kind) => {
                    Some((b.api_version.clone(), b.kind.clone()))
                }
                _ => None,
            };
            let Some(item) = w.item(session, api_version, kind, guess)? else {
                return Ok(None);
            };
            items.push(item);
        }
        match w.peek()? {
            Some(b',') => w.pos += 1,
            Some(b']') => return Ok(Some(())),
            _ => return Ok(None),
        }
    }
}

/// The second thread of a split read, as the first sees it.
struct Second<'scope, 'env> {
    thread: ScopedJoinHandle<'scope, Option<Later>>,
    /// The byte its first item starts at, once it has found one (`u64::MAX` until then).
    found: &'env AtomicU64,
    stop: &'env AtomicBool,
}

impl Second<'_, '_> {
    /// Its items, when the first thread's items reached its first item's byte (`at`, the first
    /// thread's position, is that byte) and it read them to the array's end.
    fn join(self, at: u64) -> Option<Later> {
        let reached = at == self.found.load(Ordering::Acquire);
        if !reached {
            self.stop.store(true, Ordering::Relaxed);
        }
        let later = self
            .thread
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p))
            .filter(|_| reached);
        #[cfg(test)]
        tests::SPLITS.with(|c| {
            let (taken, dropped) = c.get();
            c.set(match later {
                Some(_) => (taken + 1, dropped),
                None => (taken, dropped + 1),
            });
        });
        later
    }
}

/// What the second thread read: the items from its first to the array's end, and its notes.
struct Later {
    items: Items,
    notes: (Vec<Trimmed>, usize),
    /// The `]` that ends the array.
    end: u64,
}

/// The second thread: the items from the first found in `w` to the array's end, read with a
/// session of its own; `None` if it found none, met anything unexpected, or was stopped.
fn second_half<S: Source + ?Sized>(
    mut w: Window<'_, S>,
    api_version: Option<&str>,
    kind: Option<&str>,
    found: &AtomicU64,
    stop: &AtomicBool,
) -> Option<Later> {
    let mut session = Session::new();
    let mut items = Items::default();
    let done = session.sharing(|session| {
        w.more()?;
        let Some(first) = first_item(w.rest()) else {
            return Ok(None);
        };
        w.pos += first;
        found.store(w.at(), Ordering::Release);
        items_to_end(
            &mut w,
            api_version,
            kind,
            session,
            &mut items,
            None,
            Some(stop),
        )
    });
    match done {
        Ok(Some(())) => Some(Later {
            items,
            notes: session.take_trimmed(),
            end: w.at(),
        }),
        Ok(None) | Err(_) => None,
    }
}

/// Where in `text` the first item after a `,` starts: a `{` after the comma (and blanks) that
/// opens an object naming its `kind` and `metadata` (see [`names_itself`]) and is followed by
/// another `,` or the array's `]`. A guess by bytes, which the first thread checks.
fn first_item(text: &[u8]) -> Option<usize> {
    let mut i = 0;
    loop {
        i += memchr::memchr(b',', text.get(i..)?)? + 1;
        let after = text.get(i..)?;
        let open = blanks(after);
        if after.get(open) != Some(&b'{') {
            continue;
        }
        let item = after.get(open..)?;
        if let Some(len) = names_itself(item)
            && matches!(
                item.get(len..)?.trim_ascii_start().first(),
                Some(b',' | b']')
            )
        {
            return Some(i + open);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::k8s::json_window::own_type;
    use crate::k8s::read::read_json;

    thread_local! {
        /// How many second threads' items the reads on this thread took in, and how many they
        /// dropped (see [`Second::join`]).
        pub(super) static SPLITS: std::cell::Cell<(usize, usize)> =
            const { std::cell::Cell::new((0, 0)) };
    }

    /// An input that hands out at most three bytes a read, as a pipe may.
    struct Trickle<'a>(&'a [u8]);

    impl Source for Trickle<'_> {
        fn read_at(&self, out: &mut [u8], at: u64) -> io::Result<usize> {
            let n = out.len().min(3);
            self.0.read_at(&mut out[..n], at)
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

    /// What the fast path returns and notes, read through a window of `window` bytes.
    fn fast_read<S: Source + ?Sized>(
        src: &S,
        window: usize,
        ahead: usize,
        split: Split,
    ) -> Option<String> {
        let mut session = Session::new();
        let mut w = Window::new(src, 0, None, window, ahead);
        let got = read_with(&mut w, split, &mut session).unwrap();
        got.map(|f| seen(&f, &mut session))
    }

    /// The fast path over windows of every small size (each value cut somewhere by a window's
    /// end), a large one, a trickling input, and with a second thread from every byte (see
    /// [`Split`]): each returns what the streaming reader returns, or gives up (`None`), which it
    /// must when the streaming reader fails. `fast` says whether it must also take the input
    /// whole.
    fn same_as_streaming(text: &str, fast: bool) -> Option<String> {
        let want = streaming(text);
        let bytes = text.as_bytes();
        // Without reading ahead, a window of w bytes cuts the input's first value at w.
        let mut windows: Vec<(usize, usize)> = (1..=256).map(|w| (w, 0)).collect();
        windows.extend((1..=48).map(|w| (w, w / 2)));
        windows.extend([(7, 100), (1 << 20, 1 << 10)]);
        let mut reads: Vec<(String, Option<String>)> = Vec::new();
        for (window, ahead) in windows {
            let got = fast_read(bytes, window, ahead, Split::Off);
            reads.push((format!("window {window}, ahead {ahead}"), got));
        }
        reads.push((
            "trickle".to_string(),
            fast_read(&Trickle(bytes), 16, 4, Split::Off),
        ));
        for from in 1..=bytes.len() as u64 {
            for (window, ahead) in [(16, 4), (1 << 20, 1 << 10)] {
                let got = fast_read(bytes, window, ahead, Split::From(from));
                let how = format!("window {window}, ahead {ahead}, second thread from {from}");
                reads.push((how, got));
            }
        }
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
            let mut w = Window::new(text.as_bytes(), 0, None, 8, 4);
            let fast = read_with(&mut w, Split::Off, &mut Session::new()).unwrap();
            assert!(fast.is_none(), "{text}");
            same_as_streaming(&text, false);
        }
        // …and errors keep the streaming reader's line and column.
        let err = crate::k8s::read::read_str("{\"kind\": \"List\",\n \"items\": [\n {\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": 3}}]}", "t.json").unwrap_err();
        assert_eq!((err.line, err.column.is_some()), (Some(3), true), "{err}");
    }

    /// A list read on two threads, the second from any byte: the same objects, in the same order,
    /// with the same notes, as one thread reads. Its items are taken in where the second thread
    /// began at an item of the list; dropped where it began elsewhere (in a string, in the items
    /// of a list inside an item, in a container).
    #[test]
    fn a_list_read_on_two_threads_from_any_byte_is_read_as_on_one() {
        let pod = |name: &str| {
            format!(
                r#"{{"apiVersion": "v1", "kind": "Pod", "metadata": {{"name": "{name}", "annotations": {{"note": "a,{{b}}, [c]"}}}}, "spec": {{"containers": [{{"name": "a"}}, {{"name": "b", "resources": {{"limits": {{"nvidia.com/gpu": "1"}}}}}}]}}}}"#
            )
        };
        let last = |name: &str| {
            format!(
                r#"{{"metadata": {{"name": "{name}"}}, "spec": {{"nodeName": "n1"}}, "kind": "Pod", "apiVersion": "v1"}}"#
            )
        };
        let long = format!(
            r#"{{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {{"name": "c", "labels": {{"a": "{}"}}}}}}"#,
            "x".repeat(70)
        );
        let nested = format!(
            r#"{{"apiVersion": "v1", "kind": "List", "metadata": {{}}, "items": [{}, {}]}}"#,
            pod("in1"),
            pod("in2")
        );
        // No type of its own: it waits for the list's, which comes after the items.
        let untyped = r#"{"metadata": {"name": "u"}, "spec": {"nodeName": "n2"}}"#;
        let items = [
            pod("p1"),
            long.clone(),
            last("k1"),
            nested,
            untyped.to_string(),
            pod("p2"),
            long,
            last("k2"),
            untyped.replace("\"u\"", "\"v\""),
            pod("p3"),
        ];
        let text = format!(
            r#"{{"items": [{}], "kind": "PodList", "apiVersion": "v1", "metadata": {{}}}}"#,
            items.join(",\n ")
        );
        SPLITS.set((0, 0));
        let found = same_as_streaming(&text, true).unwrap();
        assert!(found.contains("in2") && found.ends_with(" 2"), "{found}");
        let (taken, dropped) = SPLITS.get();
        assert!(taken > 0 && dropped > 0, "taken {taken}, dropped {dropped}");
    }
}
