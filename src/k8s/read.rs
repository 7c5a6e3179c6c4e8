//! Reading objects from files: multi-document YAML, JSON, `List`s, and concatenated JSON streams.
//!
//! A snapshot is whatever `kubectl get … -o yaml|json` prints, and manifests are YAML files with `---`
//! separators, so one reader serves both. Input that opens with `{` or `[` is tried as a JSON stream
//! and, if it turns out not to be JSON, read again as YAML (every style kubectl accepts: flow
//! mappings, `---`, comments, directives, CRLF, a byte order mark). Both formats are streamed from a
//! buffered reader, so memory follows the objects kept, not the file's size. Every error names the
//! file and, where the parser knows it, the line and column.
//!
//! Each read owns a [`Session`] (strings shared, notes of what was cut, the field a read failed in)
//! and says, on stderr, what it cut to the API's limits. The objects come out as read: checking
//! their GPU figures is the caller's (`crate::workload::checked`), which knows what they are for.
//!
//! A snapshot written by `gpuledger snapshot` also says where and when it was read, in its `List`'s
//! `metadata.annotations` under `gpuledger.io/…` keys ([`SnapshotMeta`]): kubectl ignores a list's
//! metadata, so the file stays one kubectl reads back. A plain `kubectl get -o yaml` dump has none.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::Arc;

use serde::Deserialize;
use serde::de::DeserializeSeed;

use super::document::{BOM, DocumentReader, ReadError, keep_meta};
use super::object::Object;
use super::session::Session;
use super::text::Labels;
use super::types::{ObjectMeta, PodSpec, PodTemplate};
use super::yaml::{Fast, read_yaml};
use crate::error::{Error, InputError};
use crate::util::date::Timestamp;

pub use super::document::append;
pub(crate) use super::yaml::yaml_error_to_input;

/// The annotation keys of a snapshot's `List` metadata.
pub const CONTEXT_KEY: &str = "gpuledger.io/context";
pub const SERVER_KEY: &str = "gpuledger.io/server";
pub const READ_AT_KEY: &str = "gpuledger.io/read-at";
pub const VERSION_KEY: &str = "gpuledger.io/version";
/// The resources the snapshot holds every object of (`nodes,pods,services,…`): what was read, so a
/// partial snapshot is told from a complete one. Absent from a plain kubectl dump.
pub const RESOURCES_KEY: &str = "gpuledger.io/resources";

/// Where and when a snapshot was read, from its `List` metadata; every field is absent in a plain
/// kubectl dump.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SnapshotMeta {
    /// The kubeconfig context (`in-cluster` inside a pod).
    pub context: Option<String>,
    /// The API server URL, without credentials.
    pub server: Option<String>,
    /// When the read started.
    pub read_at: Option<Timestamp>,
    /// Why `read_at` is absent although the annotation is there (it does not parse).
    pub read_at_invalid: Option<String>,
    /// The gpuledger version that wrote it.
    pub version: Option<String>,
    /// The resources it holds every object of (`nodes`, `ingresses.networking.k8s.io`), when
    /// gpuledger wrote it; `None` for a plain dump, whose kinds are what was read.
    pub resources: Option<Vec<String>>,
}

impl SnapshotMeta {
    /// Reads the `gpuledger.io/…` annotations; others are ignored. Values are bounded to one line,
    /// since they are quoted into reports.
    pub fn from_annotations(a: &Labels) -> SnapshotMeta {
        let get = |k: &str| {
            a.get(k)
                .map(|v| crate::util::text::line(v, 200))
                .filter(|v| !v.is_empty())
        };
        let (read_at, read_at_invalid) = match get(READ_AT_KEY) {
            None => (None, None),
            Some(v) => match Timestamp::parse(&v) {
                Ok(t) => (Some(t), None),
                Err(e) => (None, Some(format!("{READ_AT_KEY}: {e}"))),
            },
        };
        SnapshotMeta {
            context: get(CONTEXT_KEY),
            server: get(SERVER_KEY),
            read_at,
            read_at_invalid,
            version: get(VERSION_KEY),
            // Not bounded to one line like the others: a list of names, never quoted whole.
            resources: a.get(RESOURCES_KEY).map(|v| {
                v.split(',')
                    .map(str::trim)
                    .filter(|r| !r.is_empty())
                    .map(str::to_string)
                    .collect()
            }),
        }
    }

    /// The annotations that say it, for the `List` a snapshot writes.
    pub fn annotations(&self) -> Labels {
        let mut a = Labels::new();
        let mut put = |k: &str, v: Option<String>| {
            if let Some(v) = v {
                a.insert(k.to_string(), v);
            }
        };
        put(CONTEXT_KEY, self.context.clone());
        put(SERVER_KEY, self.server.clone());
        put(READ_AT_KEY, self.read_at.map(|t| t.to_string()));
        put(VERSION_KEY, self.version.clone());
        put(RESOURCES_KEY, self.resources.as_ref().map(|r| r.join(",")));
        a
    }

    /// No gpuledger metadata at all: a plain kubectl dump.
    pub fn is_empty(&self) -> bool {
        *self == SnapshotMeta::default()
    }
}

/// What a snapshot file holds: its objects and, when gpuledger wrote it, where and when it was read.
pub struct Snapshot {
    pub objects: Vec<Object>,
    pub meta: SnapshotMeta,
}

/// Reads every object in `path` (`-` is standard input).
pub fn read_objects(path: &Path) -> Result<Vec<Object>, Error> {
    read_snapshot(path).map(|s| s.objects)
}

/// Reads every object in `path` (`-` is standard input), with the snapshot's metadata.
pub fn read_snapshot(path: &Path) -> Result<Snapshot, Error> {
    let name: Arc<str> = Arc::from(path.display().to_string());
    let read_err = |source| Error::Read {
        path: path.to_path_buf(),
        source,
    };
    // Standard input, a pipe (`--snapshot <(kubectl get pods -o json)`) or a device can be read
    // neither twice nor at an offset, and telling JSON from YAML may take two reads: they are read
    // whole first. A file is read where it lies.
    let read = if path == Path::new("-") {
        read_whole(io::stdin().lock(), &name).map_err(read_err)?
    } else {
        let f = File::open(path).map_err(read_err)?;
        match f.metadata() {
            Ok(m) if m.is_file() => {
                let size = m.len();
                let read = read_from(&mut Input::File(f), &name, Some(size));
                last_wins_on_duplicates(read, || std::fs::read_to_string(path))
            }
            _ => read_whole(f, &name).map_err(read_err)?,
        }
    };
    let (objects, meta) = read.map_err(|e| match e {
        ReadError::Io(source) => read_err(source),
        ReadError::Input(e) => Error::Input(e),
    })?;
    if objects.is_empty() {
        return Err(Error::Input(InputError {
            file: name.to_string(),
            line: None,
            column: None,
            message: "contains no Kubernetes objects".into(),
        }));
    }
    Ok(Snapshot {
        objects,
        meta: SnapshotMeta::from_annotations(&meta),
    })
}

/// The objects of what `r` holds, read whole first.
fn read_whole(
    mut r: impl Read,
    name: &Arc<str>,
) -> io::Result<Result<(Vec<Object>, Labels), ReadError>> {
    let mut text = Vec::new();
    r.read_to_end(&mut text)?;
    let size = u64::try_from(text.len()).ok();
    let read = read_from(&mut Input::Bytes(&text), name, size);
    Ok(last_wins_on_duplicates(read, || {
        String::from_utf8(text.clone()).map_err(io::Error::other)
    }))
}

/// Reads `text` with every duplicated key's later value, and the warning that says so (see
/// [`super::lenient`]).
pub fn last_wins(
    text: &str,
    path: &str,
    e: &InputError,
) -> (Result<Vec<Object>, InputError>, String) {
    let (json, note) = super::lenient::last_wins_json(text, path, e);
    let read = json.and_then(|json| read_str(&json, path)).map(|mut objs| {
        // Lines of the re-encoded documents are not lines of the file.
        for o in &mut objs {
            o.source.line = None;
        }
        objs
    });
    (read, note)
}

/// A snapshot with a mapping key given twice (a chart's output with a repeated label) is read as
/// kubectl reads it: the later value wins, with a warning naming the file and line
/// ([`super::lenient::last_wins`]); no other error names the parsing library's options.
fn last_wins_on_duplicates(
    read: Result<(Vec<Object>, Labels), ReadError>,
    text: impl FnOnce() -> io::Result<String>,
) -> Result<(Vec<Object>, Labels), ReadError> {
    match read {
        Err(ReadError::Input(e)) if e.message.contains("duplicate mapping key") => {
            let text = text().map_err(ReadError::Io)?;
            let (objects, note) = last_wins(&text, &e.file, &e);
            let objects = objects.map_err(ReadError::Input)?;
            tracing::warn!("{note}");
            Ok((objects, Labels::new()))
        }
        Err(ReadError::Input(e)) => Err(ReadError::Input(super::lenient::plain_words(e))),
        other => other,
    }
}

/// Reads every object from a string (manifests already in memory, tests).
pub fn read_str(text: &str, file: &str) -> Result<Vec<Object>, InputError> {
    let name: Arc<str> = Arc::from(file);
    let size = u64::try_from(text.len()).ok();
    read_from(&mut Input::Bytes(text.as_bytes()), &name, size)
        .map(|(objects, _)| objects)
        .map_err(|e| match e {
            ReadError::Io(e) => InputError {
                file: file.to_string(),
                line: None,
                column: None,
                message: e.to_string(),
            },
            ReadError::Input(e) => e,
        })
}

/// The bytes being read, which can be read again from the start.
enum Input<'a> {
    Bytes(&'a [u8]),
    File(File),
}

impl Input<'_> {
    /// A reader from the first byte, past a UTF-8 byte order mark.
    fn reader(&mut self) -> io::Result<Box<dyn BufRead + '_>> {
        let mut r: Box<dyn BufRead + '_> = match self {
            Input::Bytes(b) => Box::new(*b),
            Input::File(f) => {
                f.seek(SeekFrom::Start(0))?;
                Box::new(BufReader::with_capacity(256 * 1024, &*f))
            }
        };
        if r.fill_buf()?.starts_with(BOM) {
            r.consume(BOM.len());
        }
        Ok(r)
    }
}

impl Input<'_> {
    /// The input read as a JSON stream: first by the fast path over a window of the input
    /// ([`super::json`]), and, when that meets anything it does not expect, again from the start
    /// by serde_json's streaming reader, which says what is wrong and where. The streaming reader
    /// gets a reader of its concrete type: serde_json reads byte by byte, and through a
    /// `dyn BufRead` every byte is a call the compiler cannot inline. `size` is the input's, as
    /// [`read_from`] was given it.
    fn json(
        &mut self,
        file: &str,
        size: Option<u64>,
        session: &mut Session,
    ) -> Result<(Vec<Object>, Labels), JsonFailure> {
        let io = |e| JsonFailure::Read(ReadError::Io(e));
        let fast = match self {
            Input::Bytes(b) => super::json::read_stream(*b, size, session),
            Input::File(f) => super::json::read_stream(&*f, size, session),
        }
        .map_err(io)?;
        if let Some(found) = fast {
            return Ok(found);
        }
        // The read starts again, and so does what it noted and shared.
        *session = Session::new();
        match self {
            Input::Bytes(b) => read_json(b.strip_prefix(BOM).unwrap_or(b), file, session),
            Input::File(f) => {
                f.seek(SeekFrom::Start(0)).map_err(io)?;
                let mut r = BufReader::with_capacity(256 * 1024, &*f);
                if r.fill_buf().map_err(io)?.starts_with(BOM) {
                    r.consume(BOM.len());
                }
                read_json(r, file, session)
            }
        }
    }
}

/// One page of a list response from the API server (JSON): its objects and the token of the next
/// page, if any. `source` names the cluster resource in errors and in each object's source.
///
/// Strings are shared within a page: its session goes with it, so that a long-running `serve` never
/// keeps the strings of objects it dropped, and pages parsed at once on several threads share
/// nothing.
pub fn read_page(text: &str, source: &str) -> Result<(Vec<Object>, Option<String>), InputError> {
    let file: Arc<str> = Arc::from(source);
    let mut session = Session::new();
    let mut de = serde_json::Deserializer::from_str(text);
    let mut doc = session
        .sharing(|s| DocumentReader::<ObjectMeta>::new(s, 0).deserialize(&mut de))
        .and_then(|doc| de.end().map(|()| doc))
        .map_err(|e| match json_error(e, source, &mut session) {
            ReadError::Input(e) => e,
            ReadError::Io(e) => InputError {
                file: source.to_string(),
                line: None,
                column: None,
                message: e.to_string(),
            },
        })?;
    for o in &mut doc.objects {
        o.source.file = file.clone();
    }
    warn_trimmed(source, &mut session);
    Ok((doc.objects, doc.continue_token))
}

/// A pod template embedded in a custom resource's spec (kept as JSON), read with the limits every
/// object's are read with, in a session of its own.
pub fn pod_template(v: &serde_json::Value) -> Result<PodTemplate, serde_json::Error> {
    let mut t = PodTemplate::deserialize(v)?;
    super::admit::template(&mut t, &mut Session::new());
    Ok(t)
}

/// A bare pod spec embedded in a custom resource's spec (see [`pod_template`]).
pub fn pod_spec(v: &serde_json::Value) -> Result<PodSpec, serde_json::Error> {
    let mut p = PodSpec::deserialize(v)?;
    super::admit::pod_spec(&mut p, &mut Session::new());
    Ok(p)
}

/// JSON or YAML, decided by parsing, not by a guess: input that opens like JSON (`{` or `[`) is
/// read as a JSON stream, and read again as YAML if it is not JSON after all (a YAML flow mapping
/// `{apiVersion: v1, …}`, JSON documents between `---` lines). Everything else is YAML, which also
/// reads JSON documents with comments or directives before them. When neither parser accepts the
/// input, the error is the one of the parser that got further into it.
fn read_from(
    input: &mut Input<'_>,
    file: &Arc<str>,
    size: Option<u64>,
) -> Result<(Vec<Object>, Labels), ReadError> {
    let mut session = Session::new();
    let (mut objects, meta) =
        if opens_like_json(&mut input.reader().map_err(ReadError::Io)?).map_err(ReadError::Io)? {
            let json = input.json(file, size, &mut session);
            match json {
                Ok(objects) => objects,
                Err(JsonFailure::Read(e)) => return Err(e),
                Err(JsonFailure::NotJson(json)) => {
                    session = Session::new();
                    match yaml(input, file, size, &mut session) {
                        Ok(objects) => objects,
                        Err(ReadError::Input(yaml)) => {
                            let at = |e: &InputError| (e.line, e.column);
                            return Err(ReadError::Input(if at(&yaml) > at(&json) {
                                yaml
                            } else {
                                json
                            }));
                        }
                        Err(e) => return Err(e),
                    }
                }
            }
        } else {
            yaml(input, file, size, &mut session)?
        };
    for o in &mut objects {
        o.source.file = file.clone();
    }
    warn_trimmed(file, &mut session);
    Ok((objects, meta))
}

/// Says, on stderr, what the read cut to the API's limits (see [`super::admit`]), naming the file
/// and object, a bounded number of times.
fn warn_trimmed(file: &str, session: &mut Session) {
    let (notes, total) = session.take_trimmed();
    for n in &notes {
        match &n.object {
            Some(o) => tracing::warn!("{file}: {o}: {}", n.what),
            None => tracing::warn!("{file}: {}", n.what),
        }
    }
    if total > notes.len() {
        tracing::warn!(
            "{file}: {} more labels, names or annotations beyond the Kubernetes limits were cut or ignored",
            total - notes.len()
        );
    }
}

pub(super) enum JsonFailure {
    /// The input is not JSON (a syntax error, or it ends mid-value): try it as YAML.
    NotJson(InputError),
    /// The input is JSON but not valid Kubernetes objects, or could not be read.
    Read(ReadError),
}

/// Every object of a stream of JSON documents, read one after the other by serde_json.
pub(super) fn read_json(
    reader: impl BufRead,
    file: &str,
    session: &mut Session,
) -> Result<(Vec<Object>, Labels), JsonFailure> {
    session.sharing(|session| read_json_documents(reader, file, session))
}

fn read_json_documents(
    reader: impl BufRead,
    file: &str,
    session: &mut Session,
) -> Result<(Vec<Object>, Labels), JsonFailure> {
    let mut objects = Vec::new();
    let mut meta = Labels::new();
    let mut de = serde_json::Deserializer::from_reader(reader);
    loop {
        // `end` skips the blanks before the next document, and says whether there is one.
        match de.end() {
            Ok(()) => break,
            Err(e) if e.is_io() => return Err(JsonFailure::Read(json_error(e, file, session))),
            Err(_) => {}
        }
        let doc = DocumentReader::<ObjectMeta>::new(session, 0)
            .deserialize(&mut de)
            .map_err(|e| {
                let not_json = matches!(
                    e.classify(),
                    serde_json::error::Category::Syntax | serde_json::error::Category::Eof
                );
                match json_error(e, file, session) {
                    ReadError::Input(e) if not_json => JsonFailure::NotJson(e),
                    other => JsonFailure::Read(other),
                }
            })?;
        append(&mut objects, doc.objects);
        keep_meta(&mut meta, doc.list_annotations);
    }
    Ok((objects, meta))
}

/// Whether the first byte past blanks is `{` or `[`: then the input may be JSON (and is tried as
/// JSON first, which is faster), never assumed to be.
fn opens_like_json(reader: &mut impl BufRead) -> io::Result<bool> {
    loop {
        let buf = reader.fill_buf()?;
        let Some(&first) = buf.iter().find(|b| !b.is_ascii_whitespace()) else {
            if buf.is_empty() {
                return Ok(false);
            }
            let n = buf.len();
            reader.consume(n);
            continue;
        };
        return Ok(first == b'{' || first == b'[');
    }
}

/// The input read as a YAML stream, with every fast path; when the one for large lists answers
/// that it cannot read a list exactly, the input is read again from the start without it (see
/// `super::yaml_list`).
fn yaml(
    input: &mut Input<'_>,
    file: &str,
    size: Option<u64>,
    session: &mut Session,
) -> Result<(Vec<Object>, Labels), ReadError> {
    let reader = input.reader().map_err(ReadError::Io)?;
    if let Some(found) = session.sharing(|s| read_yaml(reader, file, size, s, Fast::Lists))? {
        return Ok(found);
    }
    *session = Session::new();
    let reader = input.reader().map_err(ReadError::Io)?;
    // Without the list path, every document is read to its end: never `None`.
    let found = session.sharing(|s| read_yaml(reader, file, size, s, Fast::Documents))?;
    Ok(found.unwrap_or_default())
}

fn json_error(e: serde_json::Error, file: &str, session: &mut Session) -> ReadError {
    if e.is_io() {
        return ReadError::Io(io::Error::other(e.to_string()));
    }
    let full = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    let message = session.explain(full.strip_suffix(&suffix).unwrap_or(&full));
    ReadError::Input(InputError {
        file: file.to_string(),
        line: u32::try_from(e.line()).ok().filter(|&l| l > 0),
        column: u32::try_from(e.column()).ok().filter(|&c| c > 0),
        message,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::k8s::object::Body;
    use crate::k8s::types::Text;

    /// kubectl writes a List's keys in alphabetical order, `items` before `kind`: items stream by
    /// as they are read, those of a typed list that name no kind wait for the list's kind, and the
    /// order of the list is kept.
    #[test]
    fn items_before_the_list_kind_stream_and_keep_their_order() {
        let text = r#"{"apiVersion": "v1", "items": [
            {"metadata": {"name": "a", "namespace": "ml"}, "spec": {"nodeName": "n1", "containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": "2"}}}]}},
            {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}},
            {"metadata": {"name": "b", "namespace": "ml"}}
        ], "kind": "PodList", "metadata": {"resourceVersion": "1"}}"#;
        let objs = read_str(text, "t.json").unwrap();
        let names: Vec<String> = objs.iter().map(|o| o.to_string()).collect();
        assert_eq!(names, ["Pod ml/a", "Node n1", "Pod ml/b"]);
        assert!(matches!(&objs[0].body, Body::Pod(p) if p.spec.node_name.as_deref() == Some("n1")));
        // Without a kind anywhere, an item is still not an object.
        let e = read_str(
            r#"{"items": [{"metadata": {"name": "a"}}], "kind": "List"}"#,
            "t.json",
        )
        .unwrap_err();
        assert!(e.to_string().contains("no apiVersion and kind"), "{e}");
    }

    /// What a pod keeps is exactly as long as the pod says, whatever the reader and key order: a
    /// list that kept room for more (serde reserves four on a vector's first push) held half of a
    /// fleet's read in memory that nothing used.
    #[test]
    fn the_lists_an_object_keeps_are_exactly_their_length() {
        let pod = |kind_last: bool| {
            let (head, tail) = (
                r#""apiVersion": "v1", "kind": "Pod","#,
                r#", "kind": "Pod", "apiVersion": "v1""#,
            );
            format!(
                r#"{{{}"metadata": {{"name": "a", "namespace": "ml", "ownerReferences": [{{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "r", "uid": "u", "controller": true}}]}}, "spec": {{"nodeName": "n1", "containers": [{{"name": "c", "args": ["--model", "m", "--tp", "2"], "resources": {{"limits": {{"nvidia.com/gpu": "2", "cpu": "1"}}, "requests": {{"nvidia.com/gpu": "2"}}}}}}], "initContainers": [{{"name": "i"}}]}}, "status": {{"phase": "Running"}}{}}}"#,
                if kind_last { "" } else { head },
                if kind_last { tail } else { "" },
            )
        };
        let yaml = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n  ownerReferences:\n  - {apiVersion: apps/v1, kind: ReplicaSet, name: r, uid: u}\nspec:\n  containers:\n  - name: c\n    args: [--model, m]\n    resources:\n      limits: {nvidia.com/gpu: 2, cpu: 1}\n";
        let inputs = [
            ("kind first, alone", pod(false), "t.json"),
            ("kind last, alone", pod(true), "t.json"),
            (
                "kind first, in a list",
                format!(
                    r#"{{"apiVersion": "v1", "items": [{}], "kind": "List"}}"#,
                    pod(false)
                ),
                "t.json",
            ),
            (
                "kind last, in a list",
                format!(
                    r#"{{"items": [{}], "kind": "List", "apiVersion": "v1"}}"#,
                    pod(true)
                ),
                "t.json",
            ),
            ("YAML", yaml.to_string(), "t.yaml"),
        ];
        for (how, text, file) in inputs {
            let objs = read_str(&text, file).unwrap();
            let Some(Body::Pod(p)) = objs.first().map(|o| &o.body) else {
                panic!("{how}: no pod");
            };
            let refs = &objs[0].meta.owner_references;
            let c = &p.spec.containers;
            assert_eq!(
                (refs.len(), refs.capacity()),
                (1, 1),
                "{how}: owner references"
            );
            assert_eq!((c.len(), c.capacity()), (1, 1), "{how}: containers");
            let gpu = &c[0].resources.limits.0;
            assert_eq!((gpu.len(), gpu.capacity()), (1, 1), "{how}: GPU limits");
            assert_eq!(c[0].args.len(), c[0].args.capacity(), "{how}: args");
            let i = &p.spec.init_containers;
            assert_eq!(i.len(), i.capacity(), "{how}: init containers");
        }
        // Every object and owner reference of a read holds one copy of each apiVersion and kind.
        let two = format!(
            r#"{{"apiVersion": "v1", "items": [{0}, {0}], "kind": "List"}}"#,
            pod(false)
        );
        let objs = read_str(&two, "t.json").unwrap();
        let (a, b) = (&objs[0], &objs[1]);
        assert!(std::sync::Arc::ptr_eq(&a.kind.0, &b.kind.0));
        assert!(std::sync::Arc::ptr_eq(&a.api_version.0, &b.api_version.0));
        let (ra, rb) = (&a.meta.owner_references[0], &b.meta.owner_references[0]);
        assert!(std::sync::Arc::ptr_eq(&ra.kind.0, &rb.kind.0));
        assert!(std::sync::Arc::ptr_eq(&ra.api_version.0, &rb.api_version.0));
    }

    /// The strings a fleet repeats are held once per read, whichever path reads them: two pods of
    /// one ReplicaSet on one node share their namespace, node, phase, owner reference and
    /// container name (their own name and uid stay theirs).
    #[test]
    fn the_strings_pods_repeat_are_held_once() {
        let pod = |name: &str, kind_last: bool| {
            let body = format!(
                r#""metadata": {{"name": "{name}", "uid": "u-{name}", "namespace": "ml",
                "ownerReferences": [{{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-5d8f", "uid": "rs-1", "controller": true}}]}},
                "spec": {{"nodeName": "gpu-1", "containers": [{{"name": "vllm", "args": ["--tp", "2"]}}],
                "initContainers": [{{"name": "proxy", "restartPolicy": "Always"}}]}},
                "status": {{"phase": "Running"}}"#
            );
            if kind_last {
                format!(r#"{{{body}, "kind": "Pod", "apiVersion": "v1"}}"#)
            } else {
                format!(r#"{{"apiVersion": "v1", "kind": "Pod", {body}}}"#)
            }
        };
        let as_yaml = |name: &str| {
            format!(
                "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  uid: u-{name}\n  namespace: ml\n  ownerReferences:\n  - {{apiVersion: apps/v1, kind: ReplicaSet, name: web-5d8f, uid: rs-1, controller: true}}\nspec:\n  nodeName: gpu-1\n  containers:\n  - name: vllm\n  initContainers:\n  - name: proxy\n    restartPolicy: Always\nstatus:\n  phase: Running\n"
            )
        };
        let same = |a: &Text, b: &Text| std::sync::Arc::ptr_eq(&a.0, &b.0);
        for kind_last in [false, true] {
            let list = format!(
                r#"{{"apiVersion": "v1", "kind": "List", "items": [{}, {}]}}"#,
                pod("a", kind_last),
                pod("b", kind_last)
            );
            let yaml = format!("{}---\n{}", as_yaml("a"), as_yaml("b"));
            for (text, file) in [(list, "t.json"), (yaml, "t.yaml")] {
                let objs = read_str(&text, file).unwrap();
                let [a, b] = objs.as_slice() else {
                    panic!("{file}: two pods, got {}", objs.len());
                };
                let (Body::Pod(pa), Body::Pod(pb)) = (&a.body, &b.body) else {
                    panic!("{file}: pods");
                };
                let how = format!("{file}, kind last: {kind_last}");
                let (ra, rb) = (&a.meta.owner_references[0], &b.meta.owner_references[0]);
                let (ca, cb) = (&pa.spec.containers[0], &pb.spec.containers[0]);
                let (ia, ib) = (&pa.spec.init_containers[0], &pb.spec.init_containers[0]);
                for (what, x, y) in [
                    (
                        "namespace",
                        a.meta.namespace.as_ref(),
                        b.meta.namespace.as_ref(),
                    ),
                    (
                        "node",
                        pa.spec.node_name.as_ref(),
                        pb.spec.node_name.as_ref(),
                    ),
                    ("phase", pa.status.phase.as_ref(), pb.status.phase.as_ref()),
                    ("owner name", Some(&ra.name), Some(&rb.name)),
                    ("owner uid", Some(&ra.uid), Some(&rb.uid)),
                    ("container", Some(&ca.name), Some(&cb.name)),
                    (
                        "restart policy",
                        ia.restart_policy.as_ref(),
                        ib.restart_policy.as_ref(),
                    ),
                ] {
                    let (Some(x), Some(y)) = (x, y) else {
                        panic!("{how}: {what} not read");
                    };
                    assert!(same(x, y), "{how}: {what} {x} held twice");
                }
                assert_eq!(
                    (a.meta.uid.as_deref(), b.meta.uid.as_deref()),
                    (Some("u-a"), Some("u-b"))
                );
                assert_eq!(pa.status.phase.as_deref(), Some("Running"), "{how}");
            }
        }
    }

    /// The JSON fast path parses specs without tracking where it is in them; a field of the wrong
    /// type deep in a list item is still named, with its object and line, in either key order.
    #[test]
    fn a_wrong_field_in_a_list_item_is_named_whatever_the_path_taken() {
        let good = r#"{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}"#;
        let bad = r#"{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "team-a"},
            "spec": {"template": {"spec": {"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": "1.5"}}}]}}}}"#;
        let bad_last = r#"{"metadata": {"name": "web", "namespace": "team-a"},
            "spec": {"replicas": "three"}, "kind": "Deployment", "apiVersion": "apps/v1"}"#;
        for (item, field, line) in [
            (
                bad,
                "Deployment team-a/web: spec.template.spec.containers[0].resources.limits",
                2,
            ),
            (bad_last, "Deployment team-a/web: spec.replicas: ", 2),
        ] {
            let text = format!(
                r#"{{"apiVersion": "v1", "items": [{good},
            {item}], "kind": "List"}}"#
            );
            let e = read_str(&text, "t.json").unwrap_err();
            assert!(e.message.contains(field), "{e}");
            assert!(e.line.is_some_and(|l| l >= line), "{e}");
        }
    }

    #[test]
    fn yaml_multi_document_with_list_and_empty_documents() {
        let text = "---\n# nothing here\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n  namespace: ml\nspec:\n  containers:\n  - name: c\n    resources:\n      limits:\n        nvidia.com/gpu: 2\n---\n---\napiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata:\n    name: n1\n- apiVersion: v1\n  kind: Namespace\n  metadata:\n    name: ml\n";
        let objs = read_str(text, "t.yaml").unwrap();
        let names: Vec<_> = objs.iter().map(|o| o.to_string()).collect();
        assert_eq!(names, ["Pod ml/a", "Node n1", "Namespace ml"]);
        assert_eq!(objs[0].source.line, Some(7));
        assert_eq!(&*objs[0].source.file, "t.yaml");
        let Body::Pod(p) = &objs[0].body else {
            panic!()
        };
        assert_eq!(p.spec.containers[0].resources.limits.to_gpus().whole, 2);
    }

    /// A dump with a key given twice (a chart's output with a repeated label) reads as kubectl
    /// reads it, the later value winning; no error names the parsing library's options.
    #[test]
    fn a_snapshot_with_a_repeated_key_keeps_the_later_value() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("dump.yaml");
        let pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: ml\n  labels:\n    app: a\n    app: b\nspec:\n  containers: [{name: c, resources: {limits: {nvidia.com/gpu: 1}}}]\n";
        std::fs::write(&file, pod).unwrap();
        let objs = read_objects(&file).unwrap();
        assert_eq!(objs.len(), 1);
        assert_eq!(
            objs[0].meta.labels.get("app").map(|v| v.as_str()),
            Some("b")
        );
        std::fs::write(&file, "apiVersion: v1\nkind: Pod\nmetadata: {name: [}\n").unwrap();
        let Err(Error::Input(e)) = read_objects(&file) else {
            panic!("a broken file reads")
        };
        assert!(!e.message.contains("Options"), "{e}");
    }

    #[test]
    fn a_snapshot_list_says_where_and_when_it_was_read() {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("s.json");
        std::fs::write(
            &json,
            r#"{"apiVersion":"v1","kind":"List","metadata":{"annotations":{"gpuledger.io/context":"gpu-east","gpuledger.io/server":"https://10.0.0.1:6443","gpuledger.io/read-at":"2026-12-02T06:00:00Z","gpuledger.io/version":"0.1.0","other":"x"}},"items":[{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"ml"}}]}"#,
        )
        .unwrap();
        let s = read_snapshot(&json).unwrap();
        assert_eq!(s.objects.len(), 1);
        assert_eq!(s.meta.context.as_deref(), Some("gpu-east"));
        assert_eq!(s.meta.server.as_deref(), Some("https://10.0.0.1:6443"));
        assert_eq!(s.meta.read_at.unwrap().to_string(), "2026-12-02T06:00:00Z");
        assert_eq!(s.meta.version.as_deref(), Some("0.1.0"));
        // The same in YAML, and written back as the same annotations.
        let yaml = dir.path().join("s.yaml");
        std::fs::write(
            &yaml,
            "apiVersion: v1\nkind: List\nmetadata:\n  annotations:\n    gpuledger.io/context: gpu-east\n    gpuledger.io/read-at: not-a-time\nitems:\n- apiVersion: v1\n  kind: Namespace\n  metadata: {name: ml}\n",
        )
        .unwrap();
        let y = read_snapshot(&yaml).unwrap().meta;
        assert_eq!(y.context.as_deref(), Some("gpu-east"));
        assert!(y.read_at.is_none() && y.read_at_invalid.is_some());
        assert_eq!(
            SnapshotMeta::from_annotations(&s.meta.annotations()),
            s.meta
        );
        // A kubectl dump (a List without annotations, or bare objects) has none.
        let plain = dir.path().join("p.yaml");
        std::fs::write(
            &plain,
            "apiVersion: v1\nkind: Namespace\nmetadata: {name: ml}\n",
        )
        .unwrap();
        assert!(read_snapshot(&plain).unwrap().meta.is_empty());
    }

    #[test]
    fn json_list_and_stream() {
        let text = r#"{"apiVersion":"v1","kind":"List","items":[{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a"}}]}
{"apiVersion":"v1","kind":"Node","metadata":{"name":"n"}}"#;
        let objs = read_str(text, "t.json").unwrap();
        assert_eq!(objs.len(), 2);
        assert_eq!(objs[1].to_string(), "Node n");
    }

    #[test]
    fn typed_list_items_without_kind_and_the_continue_token() {
        // What the API server returns for a page of `GET /api/v1/pods?limit=2`.
        let page = r#"{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"7","continue":"abc"},
            "items":[{"metadata":{"name":"a","namespace":"ml"},"spec":{"nodeName":"n","containers":[{"resources":{"limits":{"nvidia.com/gpu":"2"}}}]}},
                     {"metadata":{"name":"b","namespace":"ml"}}]}"#;
        let (objs, next) = read_page(page, "cluster").unwrap();
        assert_eq!(next.as_deref(), Some("abc"));
        assert_eq!(objs.len(), 2);
        assert_eq!(objs[0].to_string(), "Pod ml/a");
        let Body::Pod(p) = &objs[0].body else {
            panic!()
        };
        assert_eq!(p.spec.containers[0].resources.limits.to_gpus().whole, 2);
        let (_, last) = read_page(
            r#"{"kind":"NodeList","apiVersion":"v1","metadata":{"continue":""},"items":[]}"#,
            "c",
        )
        .unwrap();
        assert_eq!(last, None);
    }

    #[test]
    fn labels_and_names_beyond_the_api_limits_are_cut_and_noted() {
        let ok = "v".repeat(63);
        let long = "v".repeat(64);
        let name = "n".repeat(300);
        let text = format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  namespace: ml\n  labels: {{a: {ok}, b: {long}, {long}: x, example.com/{ok}: y}}\nspec:\n  nodeSelector: {{pool: {long}}}\n"
        );
        let objs = read_str(&text, "t.yaml").unwrap();
        let m = &objs[0].meta;
        assert_eq!(m.name.len(), 253);
        let keys: Vec<&str> = m.labels.keys().map(Text::as_str).collect();
        assert_eq!(keys, ["a", &format!("example.com/{ok}")]);
        let Body::Pod(p) = &objs[0].body else {
            panic!()
        };
        assert!(p.spec.node_selector.is_empty());
    }

    /// Equal label maps of a read share one allocation, in every reader (JSON fast path, JSON
    /// stream, YAML), and the strings of equal command lines are shared too.
    #[test]
    fn a_reads_equal_maps_and_strings_share_storage() {
        let pod = |n: &str| {
            format!(
                r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"{n}","labels":{{"app":"web","team":"a"}}}},"spec":{{"containers":[{{"args":["--serve"]}}]}}}}"#
            )
        };
        let list = format!(r#"{{"kind":"List","items":[{},{}]}}"#, pod("a"), pod("b"));
        let stream = format!("{}\n{}", pod("a"), pod("b"));
        let yaml = format!("{}\n---\n{}", pod("a"), pod("b"));
        for text in [list, stream, yaml] {
            let objs = read_str(&text, "t").unwrap();
            let (a, b) = (&objs[0].meta.labels, &objs[1].meta.labels);
            assert_eq!(a, b);
            assert!(
                std::sync::Arc::ptr_eq(a.0.as_ref().unwrap(), b.0.as_ref().unwrap()),
                "{text}"
            );
            let args = |o: &Object| match &o.body {
                Body::Pod(p) => p.spec.containers[0].args[0].0.clone(),
                _ => panic!(),
            };
            assert!(
                std::sync::Arc::ptr_eq(&args(&objs[0]), &args(&objs[1])),
                "{text}"
            );
        }
    }

    /// Pages of a list are parsed on several threads at once, each with its own session.
    #[test]
    fn pages_read_at_once_on_several_threads_read_alike() {
        let page = r#"{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[{"metadata":{"name":"a","labels":{"k":"v"}}}]}"#;
        let reads: Vec<_> = (0..4)
            .map(|_| {
                std::thread::spawn(move || {
                    read_page(page, "cluster").map(|(o, _)| format!("{o:?}"))
                })
            })
            .collect();
        let got: Vec<_> = reads
            .into_iter()
            .map(|t| t.join().unwrap().unwrap())
            .collect();
        assert!(got.iter().all(|g| *g == got[0]), "{got:?}");
    }

    #[test]
    fn a_generated_name_stands_in_for_the_name() {
        let objs = read_str(
            "apiVersion: batch/v1\nkind: Job\nmetadata:\n  generateName: migrate-\n",
            "t",
        )
        .unwrap();
        assert_eq!(objs[0].meta.name, "migrate-");
    }

    #[test]
    fn spec_before_kind_is_still_typed() {
        let text = r#"{"spec":{"nodeName":"n1","containers":[{"resources":{"requests":{"nvidia.com/gpu":"4"}}}]},"metadata":{"name":"p"},"kind":"Pod","apiVersion":"v1"}"#;
        let objs = read_str(text, "t.json").unwrap();
        let Body::Pod(p) = &objs[0].body else {
            panic!()
        };
        assert_eq!(p.spec.node_name.as_deref(), Some("n1"));
        assert_eq!(p.spec.containers[0].resources.requests.to_gpus().whole, 4);
    }

    #[test]
    fn fractional_gpu_names_object_file_and_line() {
        let text = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: half\n  namespace: ml\nspec:\n  containers:\n  - name: c\n    resources:\n      limits:\n        nvidia.com/gpu: \"0.5\"\n";
        let e = read_str(text, "bad.yaml").unwrap_err();
        assert_eq!(e.line, Some(11), "{e}");
        assert!(e.message.contains("Pod ml/half"), "{e}");
        assert!(e.message.contains("0.5"), "{e}");

        let json = "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"half\"},\n\"spec\":{\"containers\":[{\"resources\":{\"limits\":{\n\"nvidia.com/gpu\":0.5}}}]}}";
        let e = read_str(json, "bad.json").unwrap_err();
        assert_eq!(e.line, Some(3), "{e}");
        assert!(e.message.contains("Pod half"), "{e}");
    }

    #[test]
    fn broken_yaml_and_wrong_types_have_lines() {
        let e = read_str(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: [unclosed\n",
            "b.yaml",
        )
        .unwrap_err();
        assert!(e.line.is_some(), "{e}");
        let e = read_str(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  replicas: many\n",
            "b.yaml",
        )
        .unwrap_err();
        assert_eq!(e.line, Some(6), "{e}");
        let e = read_str("just: a map\n", "b.yaml").unwrap_err();
        assert!(e.message.contains("no apiVersion and kind"), "{e}");
    }

    /// kustomize writes `metadata: null` for a pod template whose metadata it emptied (seen on
    /// hemang-rh/openshift-gitops's CronJob); the API server reads it as none, and so does this.
    #[test]
    fn a_null_template_metadata_reads_as_none() {
        let yaml = "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: c}\nspec:\n  schedule: '* * * * *'\n  jobTemplate:\n    metadata: {name: c}\n    spec:\n      template:\n        metadata: null\n        spec:\n          containers: [{name: c, resources: {limits: {nvidia.com/gpu: 1}}}]\n";
        for objs in [
            read_str(yaml, "c.yaml").unwrap(),
            read_str(
                &serde_json::to_string(&serde_saphyr::from_str::<serde_json::Value>(yaml).unwrap())
                    .unwrap(),
                "c.json",
            )
            .unwrap(),
        ] {
            let Body::CronJob(c) = &objs[0].body else {
                panic!("{:?}", objs[0].body)
            };
            let t = &c.job_template.spec.template;
            assert!(t.metadata.labels.is_empty());
            assert_eq!(t.spec.containers.len(), 1);
        }
    }
}
