//! Documents into objects: a lone object, a `List` (recursively), or a sequence of objects.
//!
//! A document is read by a seed that carries the read's [`Session`]: it reads `apiVersion` and
//! `kind` (which kubectl and almost every manifest write first), then parses `spec` and `status`
//! straight into the body for that kind. Should `spec` come before `kind`, it is buffered as a JSON
//! value and parsed once the kind is known, so key order changes speed, never results. The items of
//! a typed list (`PodList`) that name no kind of their own take the list's; when the list's kind
//! comes after its items (kubectl writes keys in alphabetical order), those items wait for it, half
//! read. Each object is admitted ([`super::admit`]) as it is finished.
//!
//! The readers (`super::read`, `super::json`, `super::yaml`) drive these seeds over their parsers.

use std::fmt;
use std::sync::Arc;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::admit;
use super::object::{Body, Kind, Object, Source, describe};
use super::session::{FieldError, Session};
use super::text::{Labels, Text};
use super::types::ObjectMeta;

/// A UTF-8 byte order mark, which every reader skips.
pub(super) const BOM: &[u8] = b"\xEF\xBB\xBF";

/// `all += more`, taking `more`'s allocation when `all` is empty (one document, the usual case):
/// copying a fleet's objects would hold them twice at the peak.
pub fn append(all: &mut Vec<Object>, more: Vec<Object>) {
    if all.is_empty() {
        *all = more;
    } else {
        all.extend(more);
    }
}

/// The first top-level list's `gpuledger.io/…` annotations (a file of concatenated snapshots is
/// described by its first).
pub(super) fn keep_meta(kept: &mut Labels, found: Labels) {
    if kept.is_empty() {
        kept.extend(
            found
                .into_iter()
                .filter(|(k, _)| k.starts_with("gpuledger.io/")),
        );
    }
}

/// Why a read failed: its input could not be read, or is not Kubernetes objects.
pub(super) enum ReadError {
    Io(std::io::Error),
    Input(crate::error::InputError),
}

/// Why a document holds no object where it should.
#[derive(Debug, thiserror::Error)]
pub(super) enum DocumentError {
    #[error("document is not a Kubernetes object: it has no apiVersion and kind")]
    NotAnObject,
    #[error("{kind} object has no metadata.name")]
    NoName { kind: String },
    /// A `spec` or `status` read before the object's kind, which does not fit that kind.
    #[error("{0}")]
    Part(#[from] serde_json::Error),
}

/// How the metadata of an object is read, which decides whether its line is known. YAML wraps it in
/// `serde_saphyr::Spanned` to learn the line; JSON reads it plainly.
pub(super) trait MetaRepr<'de>: Deserialize<'de> {
    fn into_parts(self) -> (ObjectMeta, Option<u32>);
}

impl<'de> MetaRepr<'de> for ObjectMeta {
    fn into_parts(self) -> (ObjectMeta, Option<u32>) {
        (self, None)
    }
}

impl<'de> MetaRepr<'de> for serde_saphyr::Spanned<ObjectMeta> {
    fn into_parts(self) -> (ObjectMeta, Option<u32>) {
        let line = self.referenced.line();
        (
            self.value,
            (line > 0).then(|| u32::try_from(line).unwrap_or(u32::MAX)),
        )
    }
}

/// What one top-level document holds. The file is filled in by the reader afterwards; the line
/// comes from the metadata representation.
#[derive(Debug, Default)]
pub(super) struct Document {
    pub objects: Vec<Object>,
    /// `metadata.continue` of a paginated list: where the next page starts.
    pub continue_token: Option<String>,
    /// `metadata.annotations` of a top-level list: where and when `gpuledger snapshot` read it.
    pub list_annotations: Labels,
}

/// Reads one top-level document into a [`Document`], with the read's session. `M` says how its
/// metadata is read; `line_offset` is added to every line (a YAML document read on its own
/// counts its lines from its start).
pub(super) struct DocumentReader<'s, M> {
    session: &'s mut Session,
    line_offset: u32,
    marker: std::marker::PhantomData<M>,
}

impl<'s, M> DocumentReader<'s, M> {
    pub(super) fn new(session: &'s mut Session, line_offset: u32) -> DocumentReader<'s, M> {
        DocumentReader {
            session,
            line_offset,
            marker: std::marker::PhantomData,
        }
    }
}

impl<'de, M: MetaRepr<'de>> DeserializeSeed<'de> for DocumentReader<'_, M> {
    type Value = Document;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Document, D::Error> {
        let mut doc = Document::default();
        d.deserialize_any(DocumentSeed::<M> {
            session: self.session,
            out: &mut doc.objects,
            list: Some((&mut doc.continue_token, &mut doc.list_annotations)),
            defaults: None,
            guessed: false,
            deferred: None,
            line_offset: self.line_offset,
            marker: std::marker::PhantomData,
        })?;
        Ok(doc)
    }
}

struct DocumentSeed<'a, M> {
    session: &'a mut Session,
    out: &'a mut Vec<Object>,
    /// Where a list's `metadata.continue` and `metadata.annotations` go (top-level documents only).
    list: Option<(&'a mut Option<String>, &'a mut Labels)>,
    /// apiVersion and kind for items that carry none: the API server leaves them out of the items
    /// of a typed list (`PodList`), because the list names them once.
    defaults: Option<(&'a str, &'a str)>,
    /// `defaults` are a guess at the item's own type (see [`ItemReader::guessed`]): the item must
    /// name that very apiVersion and kind, or its read fails with [`GUESS_MISSED`].
    guessed: bool,
    /// Items of a list whose `kind` comes after its `items`: an item that names no apiVersion or
    /// kind waits here, half read, until the list's kind names it; every other item is read as it
    /// streams by.
    deferred: Option<&'a mut Vec<Deferred>>,
    line_offset: u32,
    marker: std::marker::PhantomData<M>,
}

/// An item read before its list's kind: what it said, and where it goes among the list's objects.
pub(super) struct Deferred {
    at: usize,
    api_version: Option<String>,
    kind: Option<String>,
    meta: Option<(ObjectMeta, Option<u32>)>,
    early: Vec<(bool, serde_json::Value)>,
}

impl Deferred {
    /// The same item, `by` objects further down the list.
    pub(super) fn shifted(mut self, by: usize) -> Deferred {
        self.at += by;
        self
    }
}

impl<M> DocumentSeed<'_, M> {
    fn reborrow(&mut self) -> DocumentSeed<'_, M> {
        DocumentSeed {
            session: self.session,
            out: self.out,
            list: None,
            defaults: self.defaults,
            guessed: self.guessed,
            deferred: self.deferred.as_deref_mut(),
            line_offset: self.line_offset,
            marker: std::marker::PhantomData,
        }
    }
}

impl<'de, M: MetaRepr<'de>> DeserializeSeed<'de> for DocumentSeed<'_, M> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, M: MetaRepr<'de>> Visitor<'de> for DocumentSeed<'_, M> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a Kubernetes object (a mapping with apiVersion and kind) or a List of them")
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(()) // an empty document
    }

    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(self.reborrow())?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        // Items of a typed list start from the list's apiVersion and kind (an item that names its
        // own wins), so their spec parses straight into the typed body.
        // A guessed type only types the body: the item must name its own (checked below).
        let guess = self.defaults.filter(|_| self.guessed);
        let given = self.defaults.filter(|_| !self.guessed);
        let mut api_version: Option<String> = given.map(|(v, _)| v.to_string());
        let mut kind: Option<String> = given.map(|(_, k)| k.to_string());
        let mut meta: Option<(ObjectMeta, Option<u32>)> = None;
        let mut body: Option<Body> = None;
        // spec/status met before kind: kept as JSON and parsed at the end.
        let mut early: Vec<(bool, serde_json::Value)> = Vec::new();
        let mut items_seen = false;
        let mut waiting: Vec<Deferred> = Vec::new();
        // Whether the object named its own apiVersion and kind (checked against a guess).
        let mut named = (false, false);
        let (session, out) = (self.session, self.out);

        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            match key.as_ref() {
                "apiVersion" => {
                    api_version = Some(map.next_value()?);
                    named.0 = true;
                }
                "kind" => {
                    kind = Some(map.next_value()?);
                    named.1 = true;
                }
                "metadata" => {
                    let m: Option<M> = map.next_value()?;
                    let (mut m, line) = m.map(M::into_parts).unwrap_or_default();
                    admit::meta(&mut m, session);
                    meta = Some((m, line.map(|l| l.saturating_add(self.line_offset))));
                }
                "items" => {
                    items_seen = true;
                    // The list's kind may come later (kubectl writes keys in alphabetical order):
                    // the items stream by all the same, and only those that name no kind of their
                    // own wait for it, half read (never the whole list as a JSON tree).
                    let defaults = list_item_type(api_version.as_deref(), kind.as_deref());
                    let mut wait = kind.is_none().then(Vec::new);
                    map.next_value_seed(DocumentSeed::<M> {
                        session: &mut *session,
                        out: &mut *out,
                        list: None,
                        defaults,
                        guessed: false,
                        deferred: wait.as_mut(),
                        line_offset: self.line_offset,
                        marker: std::marker::PhantomData,
                    })?;
                    if let Some(w) = wait {
                        waiting.extend(w);
                    }
                }
                part @ ("spec" | "status") => {
                    let is_spec = part == "spec";
                    let v = api_version.as_deref().or(guess.map(|(v, _)| v));
                    match (v, kind.as_deref().or(guess.map(|(_, k)| k))) {
                        (Some(v), Some(k)) => {
                            let b = body.get_or_insert_with(|| Body::empty(Kind::of(v, k)));
                            map.next_value_seed(PartSeed {
                                body: b,
                                is_spec,
                                session: &mut *session,
                                kind: k,
                                meta: meta.as_ref().map(|m| &m.0),
                            })?;
                        }
                        _ => early.push((is_spec, map.next_value()?)),
                    }
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }

        if self.guessed
            && (named != (true, true)
                || self.defaults != api_version.as_deref().zip(kind.as_deref()))
        {
            return Err(de::Error::custom(GUESS_MISSED));
        }
        if !waiting.is_empty() {
            let defaults = list_item_type(api_version.as_deref(), kind.as_deref());
            place_waiting(out, waiting, defaults, session).map_err(de::Error::custom)?;
        }
        let (api_version, kind) = match (api_version, kind) {
            (Some(v), Some(k)) => (v, k),
            // A bare `items:` list without a kind: still a list.
            _ if items_seen => return Ok(()),
            (api_version, kind) => {
                let Some(d) = self.deferred else {
                    return Err(de::Error::custom(DocumentError::NotAnObject));
                };
                // An item of a list whose kind is not known yet: it waits for it.
                d.push(Deferred {
                    at: out.len(),
                    api_version,
                    kind,
                    meta,
                    early,
                });
                return Ok(());
            }
        };
        let typed = Kind::of(&api_version, &kind);
        // `List`, `PodList`, and any custom resource's `…List` that carries items.
        if typed == Kind::List || (items_seen && kind.ends_with("List")) {
            if let Some((slot, annotations)) = self.list {
                let meta = meta.map(|(m, _)| m).unwrap_or_default();
                *annotations = meta.annotations.to_labels();
                *slot = meta
                    .list_continue
                    .filter(|c| !c.is_empty())
                    .map(String::from);
            }
            return Ok(());
        }
        let object =
            finish(api_version, kind, meta, body, early, session).map_err(de::Error::custom)?;
        out.push(object);
        Ok(())
    }
}

/// One element of a list's `items` read on its own, as the list's own reader reads it: the objects
/// it holds and, when its list's kind is not known yet, the item that waits for it. The JSON fast
/// path (`super::json`) reads items one by one from a window of the file.
pub(super) struct ListItem {
    pub objects: Vec<Object>,
    /// `at` counts from this item's first object.
    pub deferred: Vec<Deferred>,
}

/// Reads a [`ListItem`] of a list whose apiVersion and kind so far are given (as the `items`
/// branch of the document seed does).
pub(super) struct ItemReader<'a> {
    session: &'a mut Session,
    defaults: Option<(&'a str, &'a str)>,
    guessed: bool,
    /// The list's kind has not come yet: an item that names none waits for it.
    defer: bool,
}

impl<'a> ItemReader<'a> {
    pub(super) fn new(
        session: &'a mut Session,
        api_version: Option<&'a str>,
        kind: Option<&'a str>,
    ) -> ItemReader<'a> {
        ItemReader {
            session,
            defaults: list_item_type(api_version, kind),
            guessed: false,
            defer: kind.is_none(),
        }
    }

    /// The item's own apiVersion and kind, found ahead of reading it (`super::json`): its spec
    /// then parses straight into the typed body whatever its key order. The item's own keys say
    /// the same when they come.
    pub(super) fn of_type(mut self, api_version: &'a str, kind: &'a str) -> ItemReader<'a> {
        self.defaults = Some((api_version, kind));
        self
    }

    /// A guess at the item's own apiVersion and kind (its run's, `super::json`): its
    /// spec parses straight into that typed body, and the read fails with [`GUESS_MISSED`] unless
    /// the item names that very type (then it is read again with its type looked up).
    pub(super) fn guessed(mut self, api_version: &'a str, kind: &'a str) -> ItemReader<'a> {
        self.defaults = Some((api_version, kind));
        self.guessed = true;
        self
    }
}

/// The error of an item that does not name the type it was read as (see [`ItemReader::guessed`]).
const GUESS_MISSED: &str = "the item is not of the type it was guessed to be";

impl<'de> DeserializeSeed<'de> for ItemReader<'_> {
    type Value = ListItem;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<ListItem, D::Error> {
        let mut objects = Vec::new();
        let mut deferred = Vec::new();
        DocumentSeed::<ObjectMeta> {
            session: self.session,
            out: &mut objects,
            list: None,
            defaults: self.defaults,
            guessed: self.guessed,
            deferred: self.defer.then_some(&mut deferred),
            line_offset: 0,
            marker: std::marker::PhantomData,
        }
        .deserialize(d)?;
        Ok(ListItem { objects, deferred })
    }
}

/// Completes the items that waited for their list's kind, now that the list is read.
pub(super) fn place_items(
    out: &mut Vec<Object>,
    waiting: Vec<Deferred>,
    api_version: Option<&str>,
    kind: Option<&str>,
    session: &mut Session,
) -> Result<(), DocumentError> {
    if waiting.is_empty() {
        return Ok(());
    }
    place_waiting(out, waiting, list_item_type(api_version, kind), session)
}

/// Items that waited for their list's kind, completed with the item type it names and put back in
/// their places among the list's objects.
fn place_waiting(
    out: &mut Vec<Object>,
    waiting: Vec<Deferred>,
    defaults: Option<(&str, &str)>,
    session: &mut Session,
) -> Result<(), DocumentError> {
    let mut done = Vec::with_capacity(waiting.len());
    for d in waiting {
        let api_version = d.api_version.or(defaults.map(|(v, _)| v.to_string()));
        let kind = d.kind.or(defaults.map(|(_, k)| k.to_string()));
        let (Some(api_version), Some(kind)) = (api_version, kind) else {
            return Err(DocumentError::NotAnObject);
        };
        done.push((
            d.at,
            finish(api_version, kind, d.meta, None, d.early, session)?,
        ));
    }
    // Each waits at the position the list had reached when it was read: merge in that order.
    let rest = std::mem::take(out);
    out.reserve(rest.len() + done.len());
    let mut done = done.into_iter().peekable();
    for (i, o) in rest.into_iter().enumerate() {
        while let Some((_, d)) = done.next_if(|(at, _)| *at <= i) {
            out.push(d);
        }
        out.push(o);
    }
    out.extend(done.map(|(_, d)| d));
    Ok(())
}

/// One object from what its document said: its name (or generated name), its typed body with the
/// parts read before its kind was known, admitted.
fn finish(
    api_version: String,
    kind: String,
    meta: Option<(ObjectMeta, Option<u32>)>,
    body: Option<Body>,
    early: Vec<(bool, serde_json::Value)>,
    session: &mut Session,
) -> Result<Object, DocumentError> {
    let typed = Kind::of(&api_version, &kind);
    let (mut meta, line) = meta.unwrap_or_default();
    // The generated name serves only here: an object keeps its name.
    if let Some(g) = meta.generate_name.take().filter(|g| !g.is_empty())
        && meta.name.is_empty()
    {
        meta.name = g.into();
    }
    if meta.name.is_empty() {
        return Err(DocumentError::NoName { kind });
    }
    let mut body = body.unwrap_or_else(|| Body::empty(typed));
    for (is_spec, value) in early {
        set_part(&mut body, is_spec, value, session, &kind, Some(&meta))?;
    }
    admit::body(&mut body, session);
    let (mut api_version, mut kind) = (Text::from(api_version), Text::from(kind));
    session.share_text(&mut api_version);
    session.share_text(&mut kind);
    let object = Object {
        api_version,
        kind,
        meta,
        body,
        source: Source {
            file: Arc::from(""),
            line,
        },
    };
    session.name_notes(&object);
    Ok(object)
}

/// The apiVersion and kind of the items of a typed list (`PodList` holds `Pod`s).
fn list_item_type<'a>(
    api_version: Option<&'a str>,
    kind: Option<&'a str>,
) -> Option<(&'a str, &'a str)> {
    let item = kind?.strip_suffix("List").filter(|k| !k.is_empty())?;
    Some((api_version?, item))
}

/// The `spec` or `status` of an object whose kind is known, read into its body.
struct PartSeed<'a> {
    body: &'a mut Body,
    is_spec: bool,
    session: &'a mut Session,
    kind: &'a str,
    meta: Option<&'a ObjectMeta>,
}

impl<'de> DeserializeSeed<'de> for PartSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        set_part(
            self.body,
            self.is_spec,
            d,
            self.session,
            self.kind,
            self.meta,
        )
    }
}

/// Reads `spec` or `status` into `body`, tracking the path into it: a value of the wrong type
/// (`replicas: three`) is noted in the session with its object and field (see
/// [`Session::explain`]), whatever field it is, while the parser keeps the file position.
fn set_part<'de, D: Deserializer<'de>>(
    body: &mut Body,
    is_spec: bool,
    d: D,
    session: &mut Session,
    kind: &str,
    meta: Option<&ObjectMeta>,
) -> Result<(), D::Error> {
    if session.untracked {
        return if is_spec {
            body.set_spec(d)
        } else {
            body.set_status(d)
        };
    }
    let mut track = serde_path_to_error::Track::new();
    let tracked = serde_path_to_error::Deserializer::new(d, &mut track);
    let r = if is_spec {
        body.set_spec(tracked)
    } else {
        body.set_status(tracked)
    };
    if r.is_err() {
        let part = if is_spec { "spec" } else { "status" };
        let path = track.path().to_string();
        let field = if path == "." {
            part.to_string()
        } else {
            format!("{part}.{path}")
        };
        // The object as far as it is read: its kind, and its name once its metadata came.
        let mut object = String::new();
        match meta {
            Some(m) => {
                let _ = describe(&mut object, kind, m.namespace.as_deref(), &m.name);
            }
            None => object.push_str(kind),
        }
        session.fail_in(FieldError { object, field });
    }
    r
}
