//! The fast path's tree ([`super::yaml_block`]) read by the document seeds, as serde-saphyr would
//! read the same document.
//!
//! A serde `Deserializer` over a [`Node`], typing scalars as serde-saphyr does with the options
//! `super::yaml` gives it (YAML 1.2 core schema, serde-saphyr's `deserialize_any` and string rules
//! in `de/deserializer.rs` and `parse_scalars.rs`): a quoted scalar is a string; a plain one is null
//! (empty, `~`, `null`, `Null`, `NULL`), a boolean, an integer, or else a string. Where serde-saphyr
//! applies a rule this reader does not copy (YAML 1.1 booleans such as `yes`, floats, other radixes,
//! a quoted number read as a number, an empty value read as a struct), this reader fails instead,
//! and the document is read again by serde-saphyr: whatever this reader accepts, it reads as
//! serde-saphyr does. Errors carry no position; the caller never shows them.
//!
//! The metadata's line, which serde-saphyr's `Spanned` gives, comes from [`Lined`].

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use super::document::{Document, DocumentReader, MetaRepr};
use super::object::Object;
use super::session::Session;
use super::types::ObjectMeta;
use super::yaml_block::{self, Node, PlainKind, plain_kind};

/// One document's objects read by the fast path, or `None` when the document is not in its subset
/// or this reader refused it (the caller then reads it with serde-saphyr; the session's notes are
/// the caller's to reset).
pub(super) fn read_document(text: &str, session: &mut Session, offset: u32) -> Option<Document> {
    let node = yaml_block::parse(text)?;
    DocumentReader::<Lined>::new(session, offset)
        .deserialize(NodeDe(&node))
        .ok()
}

/// The objects of one item of a large `List` (`super::yaml_list`), whose text is a one-entry block
/// sequence, read as a document of its own; `None` as for [`read_document`].
pub(super) fn read_item(text: &str, session: &mut Session, offset: u32) -> Option<Vec<Object>> {
    let Node::Seq(items) = yaml_block::parse(text)? else {
        return None;
    };
    let [item] = items.as_slice() else {
        return None;
    };
    let doc = DocumentReader::<Lined>::new(session, offset)
        .deserialize(NodeDe(item))
        .ok()?;
    Some(doc.objects)
}

/// A large `List` without its items (`items: []`), read as a document, when its kind is `List`
/// (whose items take nothing from it); `None` otherwise.
pub(super) fn read_list_rest(text: &str, session: &mut Session, offset: u32) -> Option<Document> {
    let node = yaml_block::parse(text)?;
    let Node::Map { entries, .. } = &node else {
        return None;
    };
    let is_list = entries.iter().any(|(k, v)| {
        matches!(k, Node::Scalar { text, .. } if text == "kind")
            && matches!(v, Node::Scalar { text, .. } if text == "List")
    });
    if !is_list {
        return None;
    }
    DocumentReader::<Lined>::new(session, offset)
        .deserialize(NodeDe(&node))
        .ok()
}

/// An object's metadata and the line its mapping starts on, as `serde_saphyr::Spanned` gives it.
pub(super) struct Lined(ObjectMeta, Option<u32>);

/// The newtype name by which [`NodeDe`] knows a [`Lined`] is asked for.
const LINED: &str = "gpuledger::k8s::yaml_value::Lined";

impl<'de> Deserialize<'de> for Lined {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Lined, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Lined;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("object metadata")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Lined, A::Error> {
                let line: u32 = seq
                    .next_element()?
                    .ok_or_else(|| de::Error::custom("no line"))?;
                let meta = seq
                    .next_element()?
                    .ok_or_else(|| de::Error::custom("no metadata"))?;
                Ok(Lined(meta, (line > 0).then_some(line)))
            }
        }
        d.deserialize_newtype_struct(LINED, V)
    }
}

impl MetaRepr<'_> for Lined {
    fn into_parts(self) -> (ObjectMeta, Option<u32>) {
        (self.0, self.1)
    }
}

/// Why the fast path refused a document (never shown: the document is read again).
#[derive(Debug)]
pub(super) struct Refused(String);

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refused {}

impl de::Error for Refused {
    fn custom<T: fmt::Display>(msg: T) -> Refused {
        Refused(msg.to_string())
    }
}

fn refuse<T>(what: &str) -> Result<T, Refused> {
    Err(Refused(what.to_string()))
}

/// A node read by serde.
struct NodeDe<'b, 'a>(&'b Node<'a>);

impl<'b, 'a> NodeDe<'b, 'a> {
    /// The node's text when it is a scalar that reads as a string.
    fn string(&self) -> Result<&'b Cow<'a, str>, Refused> {
        match self.0 {
            Node::Scalar { text, plain: false } => Ok(text),
            Node::Scalar { text, plain: true } if plain_kind(text) != PlainKind::Null => Ok(text),
            _ => refuse("not a string"),
        }
    }

    fn kind(&self) -> Option<PlainKind> {
        match self.0 {
            Node::Scalar { text, plain: true } => Some(plain_kind(text)),
            _ => None,
        }
    }
}

fn visit_text<'de, V: Visitor<'de>>(text: &Cow<'de, str>, v: V) -> Result<V::Value, Refused> {
    match text {
        Cow::Borrowed(s) => v.visit_borrowed_str(s),
        Cow::Owned(s) => v.visit_str(s),
    }
}

macro_rules! integers {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'a>>(self, v: V) -> Result<V::Value, Refused> {
            match self.kind() {
                Some(PlainKind::Unsigned(u)) => v.visit_u64(u),
                Some(PlainKind::Negative(i)) => v.visit_i64(i),
                _ => refuse("not an integer"),
            }
        }
    )*};
}

macro_rules! refused {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'a>>(self, _: V) -> Result<V::Value, Refused> {
            refuse(stringify!($method))
        }
    )*};
}

impl<'a> Deserializer<'a> for NodeDe<'_, 'a> {
    type Error = Refused;

    fn deserialize_any<V: Visitor<'a>>(self, v: V) -> Result<V::Value, Refused> {
        match self.0 {
            Node::Map { entries, .. } => v.visit_map(Entries::new(entries)),
            Node::Seq(items) => v.visit_seq(Items(items.iter())),
            Node::Scalar { text, plain: false } => visit_text(text, v),
            Node::Scalar { text, plain: true } => match plain_kind(text) {
                PlainKind::Null => v.visit_unit(),
                PlainKind::Bool(b) => v.visit_bool(b),
                PlainKind::Unsigned(u) => v.visit_u64(u),
                PlainKind::Negative(i) => v.visit_i64(i),
                PlainKind::Str => visit_text(text, v),
                PlainKind::Other => refuse("a scalar typed by another rule"),
            },
        }
    }

    fn deserialize_bool<V: Visitor<'a>>(self, v: V) -> Result<V::Value, Refused> {
        match self.kind() {
            Some(PlainKind::Bool(b)) => v.visit_bool(b),
            _ => refuse("not a boolean"),
        }
    }

    integers! {
        deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_i128
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_u128
    }

    refused! {
        deserialize_f32 deserialize_f64 deserialize_char deserialize_bytes deserialize_byte_buf
    }

    fn deserialize_str<V: Visitor<'a>>(self, v: V) -> Result<V::Value, Refused> {
        visit_text(self.string()?, v)
    }

    fn deserialize_string<V: Visitor<'a>>(self, v: V) -> Result<V::Value, Refused> {
        visit_text(self.string()?, v)
    }

    fn deserialize_option<V: Visitor<'a>>(self, v: V) -> Result<V::Value, Refused> {
        match self.kind() {
            Some(PlainKind::Null) => v.visit_none(),
            _ => v.visit_some(self),
        }
    }

    fn deserialize_unit<V: Visitor<'a>>(self, v: V) -> Result<V::Value, Refused> {
        match self.kind() {
            Some(PlainKind::Null) => v.visit_unit(),
            _ => refuse("not null"),
        }
    }

    fn deserialize_unit_struct<V: Visitor<'a>>(
        self,
        _: &'static str,
        v: V,
    ) -> Result<V::Value, Refused> {
        self.deserialize_unit(v)
    }

    fn deserialize_newtype_struct<V: Visitor<'a>>(
        self,
        name: &'static str,
        v: V,
    ) -> Result<V::Value, Refused> {
        if name != LINED {
            return v.visit_newtype_struct(self);
        }
        match self.0 {
            Node::Map { line, .. } => v.visit_seq(LinedParts {
                line: Some(*line),
                node: Some(self.0),
            }),
            _ => refuse("metadata is not a mapping"),
        }
    }

    fn deserialize_seq<V: Visitor<'a>>(self, v: V) -> Result<V::Value, Refused> {
        match self.0 {
            Node::Seq(items) => v.visit_seq(Items(items.iter())),
            _ => refuse("not a sequence"),
        }
    }

    fn deserialize_tuple<V: Visitor<'a>>(self, _: usize, _: V) -> Result<V::Value, Refused> {
        refuse("a tuple")
    }

    fn deserialize_tuple_struct<V: Visitor<'a>>(
        self,
        _: &'static str,
        _: usize,
        _: V,
    ) -> Result<V::Value, Refused> {
        refuse("a tuple struct")
    }

    fn deserialize_map<V: Visitor<'a>>(self, v: V) -> Result<V::Value, Refused> {
        match self.0 {
            Node::Map { entries, .. } => v.visit_map(Entries::new(entries)),
            _ => refuse("not a mapping"),
        }
    }

    fn deserialize_struct<V: Visitor<'a>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, Refused> {
        self.deserialize_map(v)
    }

    fn deserialize_enum<V: Visitor<'a>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Refused> {
        refuse("an enum")
    }

    fn deserialize_identifier<V: Visitor<'a>>(self, v: V) -> Result<V::Value, Refused> {
        self.deserialize_str(v)
    }

    fn deserialize_ignored_any<V: Visitor<'a>>(self, v: V) -> Result<V::Value, Refused> {
        // The whole tree is parsed already: there is nothing to skip.
        v.visit_unit()
    }
}

/// A mapping's entries, read in order.
struct Entries<'b, 'a> {
    entries: std::slice::Iter<'b, (Node<'a>, Node<'a>)>,
    value: Option<&'b Node<'a>>,
}

impl<'b, 'a> Entries<'b, 'a> {
    fn new(entries: &'b [(Node<'a>, Node<'a>)]) -> Entries<'b, 'a> {
        Entries {
            entries: entries.iter(),
            value: None,
        }
    }
}

impl<'a> MapAccess<'a> for Entries<'_, 'a> {
    type Error = Refused;

    fn next_key_seed<K: DeserializeSeed<'a>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Refused> {
        let Some((k, v)) = self.entries.next() else {
            return Ok(None);
        };
        self.value = Some(v);
        seed.deserialize(NodeDe(k)).map(Some)
    }

    fn next_value_seed<S: DeserializeSeed<'a>>(&mut self, seed: S) -> Result<S::Value, Refused> {
        match self.value.take() {
            Some(v) => seed.deserialize(NodeDe(v)),
            None => refuse("a value without its key"),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

/// A sequence's items, read in order.
struct Items<'b, 'a>(std::slice::Iter<'b, Node<'a>>);

impl<'a> SeqAccess<'a> for Items<'_, 'a> {
    type Error = Refused;

    fn next_element_seed<S: DeserializeSeed<'a>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, Refused> {
        self.0
            .next()
            .map(|n| seed.deserialize(NodeDe(n)))
            .transpose()
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

/// A [`Lined`]'s two parts: the line, then the metadata.
struct LinedParts<'b, 'a> {
    line: Option<u32>,
    node: Option<&'b Node<'a>>,
}

impl<'a> SeqAccess<'a> for LinedParts<'_, 'a> {
    type Error = Refused;

    fn next_element_seed<S: DeserializeSeed<'a>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, Refused> {
        if let Some(line) = self.line.take() {
            return seed
                .deserialize(de::value::U32Deserializer::<Refused>::new(line))
                .map(Some);
        }
        self.node
            .take()
            .map(|n| seed.deserialize(NodeDe(n)))
            .transpose()
    }
}

#[cfg(test)]
mod tests;
