//! Strings shared across a read, and the compact label maps built of them.
//!
//! A fleet repeats the same few label keys and values across every pod of a workload, and every
//! workload of a tenant: in a 100,000-pod snapshot, labels and annotations held in
//! `BTreeMap<String, String>`s were half the memory kept. Objects keep them as a sorted slice of
//! shared strings ([`LabelMap`] of [`Text`]), a map in one allocation. While a read parses, its
//! string table is lent to the thread (below), so a string is the read's copy as soon as it is
//! parsed; the read's [`Session`](super::session::Session) then swaps each map for the copy it
//! already holds, so that each distinct string, and each distinct map, is stored once per read.
//! Built anywhere else (a report's labels, a test), they are plain values.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::sync::Arc;

use foldhash::fast::RandomState;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};

/// A map of strings owned by whoever builds it (a report's labels, a config's keys); objects
/// keep theirs as a [`LabelMap`].
pub type Labels = BTreeMap<String, String>;

/// An immutable string, shared by every object of a read that says it (a label key or value).
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Text(pub(super) Arc<str>);

impl Default for Text {
    fn default() -> Text {
        Text(Arc::from(""))
    }
}

impl Text {
    /// The copy of `s` of the read parsing on this thread (see `super::session`), or one of its
    /// own: how a reader that borrowed a string from its input keeps it.
    pub fn shared(s: &str) -> Text {
        lent_copy(s).map_or_else(|| Text::from(s), Text)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::ops::Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Text {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl std::borrow::Borrow<str> for Text {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        *self.0 == *other
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        *self.0 == **other
    }
}

impl PartialEq<String> for Text {
    fn eq(&self, other: &String) -> bool {
        *self.0 == **other
    }
}

impl PartialEq<Text> for str {
    fn eq(&self, other: &Text) -> bool {
        *self == *other.0
    }
}

impl PartialEq<Text> for &str {
    fn eq(&self, other: &Text) -> bool {
        **self == *other.0
    }
}

impl PartialEq<Text> for String {
    fn eq(&self, other: &Text) -> bool {
        **self == *other.0
    }
}

impl From<&str> for Text {
    fn from(s: &str) -> Text {
        Text(Arc::from(s))
    }
}

impl From<String> for Text {
    fn from(s: String) -> Text {
        Text(Arc::from(s))
    }
}

impl From<&String> for Text {
    fn from(s: &String) -> Text {
        Text(Arc::from(s.as_str()))
    }
}

impl From<Text> for Arc<str> {
    fn from(t: Text) -> Arc<str> {
        t.0
    }
}

impl From<Text> for String {
    fn from(t: Text) -> String {
        t.0.to_string()
    }
}

/// A label map's entries, shared by every object whose map is the same (the pods of one
/// ReplicaSet carry the same labels and annotations).
pub(super) type Entries = Arc<[(Text, Text)]>;

/// Labels, annotations or a selector: entries sorted by key, each key once (the last written
/// wins, as in a map), in one allocation of shared strings shared by the objects whose maps are
/// equal; an empty map allocates nothing.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct LabelMap(pub(super) Option<Entries>);

impl LabelMap {
    pub fn new() -> LabelMap {
        LabelMap::default()
    }

    pub(super) fn entries(&self) -> &[(Text, Text)] {
        self.0.as_deref().unwrap_or_default()
    }

    fn find(&self, key: &str) -> Result<usize, usize> {
        self.entries()
            .binary_search_by(|(k, _)| k.as_str().cmp(key))
    }

    pub fn get(&self, key: &str) -> Option<&Text> {
        self.find(key)
            .ok()
            .and_then(|i| self.entries().get(i))
            .map(|(_, v)| v)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.find(key).is_ok()
    }

    pub fn len(&self) -> usize {
        self.entries().len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries().is_empty()
    }

    /// Entries in key order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&Text, &Text)> + ExactSizeIterator {
        self.entries().iter().map(|(k, v)| (k, v))
    }

    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &Text> + ExactSizeIterator {
        self.entries().iter().map(|(k, _)| k)
    }

    /// The map with its entries changed by `change` (a copy: the entries may be shared).
    fn edit<R>(&mut self, change: impl FnOnce(&mut Vec<(Text, Text)>) -> R) -> R {
        let mut v = self.entries().to_vec();
        let r = change(&mut v);
        self.0 = (!v.is_empty()).then(|| Arc::from(v));
        r
    }

    /// Sets `key` to `value`, returning the value it replaces.
    pub fn insert(&mut self, key: impl Into<Text>, value: impl Into<Text>) -> Option<Text> {
        let (key, value) = (key.into(), value.into());
        let at = self.find(&key);
        self.edit(|v| match at {
            Ok(i) => v.get_mut(i).map(|e| std::mem::replace(&mut e.1, value)),
            Err(i) => {
                v.insert(i, (key, value));
                None
            }
        })
    }

    /// Takes `key` out, returning its value.
    pub fn remove(&mut self, key: &str) -> Option<Text> {
        let i = self.find(key).ok()?;
        Some(self.edit(|v| v.remove(i).1))
    }

    /// Keeps the entries `keep` says yes to, asking once about each (`keep` may note what it
    /// drops).
    pub fn retain(&mut self, mut keep: impl FnMut(&Text, &Text) -> bool) {
        let Some(first) = self.entries().iter().position(|(k, v)| !keep(k, v)) else {
            return;
        };
        let mut at = 0;
        self.edit(|v| {
            v.retain(|(k, val)| {
                at += 1;
                match (at - 1).cmp(&first) {
                    std::cmp::Ordering::Less => true,
                    std::cmp::Ordering::Equal => false,
                    std::cmp::Ordering::Greater => keep(k, val),
                }
            })
        });
    }

    /// The same entries as an owned map.
    pub fn to_labels(&self) -> Labels {
        self.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// From entries in any order; of a key written twice, the last wins.
    fn from_entries(mut v: Vec<(Text, Text)>) -> LabelMap {
        // A stable sort keeps equal keys in the order written: the last of each run wins.
        v.sort_by(|a, b| a.0.cmp(&b.0));
        let mut out: Vec<(Text, Text)> = Vec::with_capacity(v.len());
        for e in v {
            match out.last_mut() {
                Some(last) if last.0 == e.0 => *last = e,
                _ => out.push(e),
            }
        }
        LabelMap((!out.is_empty()).then(|| Arc::from(out)))
    }
}

impl fmt::Debug for LabelMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<K: Into<Text>, V: Into<Text>> FromIterator<(K, V)> for LabelMap {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> LabelMap {
        LabelMap::from_entries(
            iter.into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        )
    }
}

impl From<Labels> for LabelMap {
    fn from(l: Labels) -> LabelMap {
        l.into_iter().collect()
    }
}

impl From<&Labels> for LabelMap {
    fn from(l: &Labels) -> LabelMap {
        l.iter().collect()
    }
}

impl<'a> IntoIterator for &'a LabelMap {
    type Item = (&'a Text, &'a Text);
    type IntoIter = std::iter::Map<
        std::slice::Iter<'a, (Text, Text)>,
        fn(&'a (Text, Text)) -> (&'a Text, &'a Text),
    >;
    fn into_iter(self) -> Self::IntoIter {
        self.entries().iter().map(|(k, v)| (k, v))
    }
}

/// How many distinct strings, and distinct maps, a read's session keeps before it starts again: a
/// bound on its own memory whatever the input (strings already handed out stay valid).
pub(super) const MAX_SHARED: usize = 1 << 20;

/// The strings of a read, each once (see `super::session`).
pub(super) type Strings = HashSet<Arc<str>, RandomState>;

thread_local! {
    /// The string table of the read parsing on this thread, if one lent it (see `super::session`).
    static LENT: RefCell<Option<Strings>> = const { RefCell::new(None) };
}

/// Lends `table` to this thread; gives it back when another is lent already.
pub(super) fn lend(table: Strings) -> Result<(), Strings> {
    LENT.with_borrow_mut(|lent| match lent {
        Some(_) => Err(table),
        None => {
            *lent = Some(table);
            Ok(())
        }
    })
}

/// The table lent to this thread, taken back.
pub(super) fn take_back() -> Option<Strings> {
    LENT.with_borrow_mut(Option::take)
}

/// The lent table's copy of `a`'s string (`a` itself if it is new), or `None` when none is lent.
pub(super) fn lent_keep(a: &Arc<str>) -> Option<Arc<str>> {
    LENT.with_borrow_mut(|table| table.as_mut().map(|t| keep(t, a)))
}

/// The read's copy of `s` when a read parsing on this thread lent its table (made and added when
/// it is new), or `None`.
pub(super) fn lent_copy(s: &str) -> Option<Arc<str>> {
    LENT.with_borrow_mut(|table| table.as_mut().map(|t| intern(t, s)))
}

/// The table's copy of `s`, added if it is new.
fn intern(table: &mut Strings, s: &str) -> Arc<str> {
    match table.get(s) {
        Some(a) => a.clone(),
        None => add(table, Arc::from(s)),
    }
}

/// The table's copy of `a`'s string: `a` itself if it is new.
pub(super) fn keep(table: &mut Strings, a: &Arc<str>) -> Arc<str> {
    match table.get(&**a) {
        Some(found) => found.clone(),
        None => add(table, a.clone()),
    }
}

/// Adds a string the table does not hold (a full table starts again, see [`MAX_SHARED`]).
fn add(table: &mut Strings, a: Arc<str>) -> Arc<str> {
    if table.len() >= MAX_SHARED {
        table.clear();
    }
    table.insert(a.clone());
    a
}

/// A string read on its own, with the same acceptance as `String` (a string, or UTF-8 bytes):
/// the copy of the read that lent its strings to this thread (see `super::session`), or one of its
/// own that the reader's session shares afterwards.
struct TextVisitor;

impl<'de> Visitor<'de> for TextVisitor {
    type Value = Text;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Text, E> {
        Ok(Text::shared(v))
    }
    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Text, E> {
        match std::str::from_utf8(v) {
            Ok(s) => self.visit_str(s),
            Err(_) => Err(E::invalid_value(de::Unexpected::Bytes(v), &self)),
        }
    }
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Text, D::Error> {
        d.deserialize_string(TextVisitor)
    }
}

impl<'de> Deserialize<'de> for LabelMap {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<LabelMap, D::Error> {
        struct MapVisitor;
        impl<'de> Visitor<'de> for MapVisitor {
            type Value = LabelMap;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a map")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<LabelMap, A::Error> {
                let mut v = Vec::with_capacity(map.size_hint().unwrap_or(0).min(64));
                while let Some((k, val)) = map.next_entry::<Text, Text>()? {
                    v.push((k, val));
                }
                Ok(LabelMap::from_entries(v))
            }
        }
        d.deserialize_map(MapVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(m: &LabelMap) -> Vec<(&str, &str)> {
        m.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
    }

    #[test]
    fn label_maps_keep_the_last_of_a_key_and_copy_on_change() {
        let a: LabelMap = serde_json::from_str(r#"{"b":"1","a":"2","b":"3"}"#).unwrap();
        assert_eq!(pairs(&a), [("a", "2"), ("b", "3")]);
        let b: LabelMap = serde_json::from_str(r#"{"a":"2","b":"3"}"#).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.get("a").map(Text::as_str), Some("2"));
        assert!(a.get("c").is_none() && !a.contains_key("c"));

        // Changing a copy leaves the entries it shared alone.
        let mut c = a.clone();
        assert_eq!(c.remove("a").as_deref(), Some("2"));
        assert_eq!(c.insert("z", "9"), None);
        assert_eq!(c.insert("z", "10").as_deref(), Some("9"));
        assert_eq!(pairs(&c), [("b", "3"), ("z", "10")]);
        assert_eq!(pairs(&a), [("a", "2"), ("b", "3")]);
        c.retain(|k, _| k != "b");
        assert_eq!(pairs(&c), [("z", "10")]);

        let empty: LabelMap = serde_json::from_str("{}").unwrap();
        assert!(empty.0.is_none() && empty.is_empty());
        assert_eq!(a.to_labels().get("b").map(String::as_str), Some("3"));
    }

    #[test]
    fn text_reads_and_prints_as_its_string() {
        let x = Text::from("team");
        assert_eq!(x, "team");
        assert_eq!(format!("{x} {x:?}"), "team \"team\"");
    }
}
