//! The state of one read: the strings and label maps it shares, what it cut, where it failed.
//!
//! A read (a snapshot file, a manifest, one page of an API list) owns one [`Session`] and hands it
//! down, by reference, to everything that parses or finishes its objects (the document seeds of
//! `super::document`, the JSON fast path, the YAML documents). Nothing of a read lives anywhere
//! else, so reads on different threads (the API reader parses pages of several resources at once)
//! never see each other's state, and a read that is retried starts from a clean one.
//!
//! Sharing is what keeps a fleet's objects smaller than its file: each distinct label key or value
//! is stored once per read, and so is each distinct label map (the pods of a ReplicaSet carry the
//! same labels and annotations). The tables are bounded (`MAX_SHARED`) whatever the input, and
//! dropped with the session: the objects keep the strings they hold.
//!
//! While a read parses ([`Session::sharing`]), its string table is lent to the parsing thread, so
//! that a [`Text`] is the session's copy from the moment it is parsed: a string the read has seen
//! costs a lookup, not an allocation and a free. The table is taken back when the parse returns
//! (or unwinds); a read on another thread never sees it.

use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::Arc;

use foldhash::fast::RandomState;

use super::text::{self, Entries, LabelMap, MAX_SHARED, Strings, Text, keep};

/// How many [`Trimmed`] notes are kept per read; the rest are only counted, so the notes about a
/// hostile file stay small however many limits it exceeds.
const MAX_TRIMMED: usize = 20;

/// What the reader cut or dropped to keep an object within the API's limits (a label value over 63
/// characters, a name over 253): the object it belonged to, and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trimmed {
    pub object: Option<String>,
    pub what: String,
}

/// Where in an object the value of the wrong type that failed a read was met.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// `Deployment team-a/web`
    pub object: String,
    /// `spec.replicas`, `spec.template.spec.containers[0].resources.limits`
    pub field: String,
}

/// Where a read's notes stand, to go back to when part of it is read again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Mark {
    kept: usize,
    total: usize,
}

/// One read's state (see the module docs).
#[derive(Default)]
pub struct Session {
    strings: Strings,
    /// The strings are lent to the thread (see [`Session::sharing`]).
    lent: bool,
    /// Shared maps by a hash of their strings' addresses: a map's strings are shared before the
    /// map is, so equal maps hold the very same strings (and a map of strings from before the
    /// table was last cleared is merely not shared).
    maps: HashMap<u64, Vec<Entries>, RandomState>,
    map_count: usize,
    trimmed: Vec<Trimmed>,
    trimmed_total: usize,
    field_error: Option<FieldError>,
    /// Spec and status are parsed without tracking the path into them (which costs a fifth of a
    /// read): set only while the JSON fast path reads an item, which gives the whole input up to
    /// the streaming reader on any error, so every error is still explained with its field.
    pub(super) untracked: bool,
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session")
            .field("strings", &self.strings.len())
            .field("maps", &self.map_count)
            .field("trimmed", &self.trimmed_total)
            .field("field_error", &self.field_error)
            .finish()
    }
}

impl Session {
    pub fn new() -> Session {
        Session::default()
    }

    /// Makes `t` the session's copy of its string: the same allocation for every equal string of
    /// the read.
    pub(super) fn share_text(&mut self, t: &mut Text) {
        // Held twice: the table's copy already (parsed while the table was lent), or a copy of
        // one that is shared as it is.
        if Arc::strong_count(&t.0) > 1 {
            return;
        }
        let lent = if self.lent {
            text::lent_keep(&t.0)
        } else {
            None
        };
        t.0 = lent.unwrap_or_else(|| keep(&mut self.strings, &t.0));
    }

    /// Runs `parse` with the session's string table lent to this thread, so that strings are
    /// shared as they are parsed (see the module docs). Nested in its own `sharing`, `parse` runs
    /// with the table where it is; in another read's (never done), the strings it parses are kept
    /// in that read's table.
    pub(super) fn sharing<R>(&mut self, parse: impl FnOnce(&mut Session) -> R) -> R {
        if self.lent {
            return parse(self);
        }
        if let Err(own) = text::lend(std::mem::take(&mut self.strings)) {
            self.strings = own;
            return parse(self);
        }
        self.lent = true;
        // Taken back also when the parse unwinds (then the unwinding goes on).
        let found = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| parse(self)));
        self.strings = text::take_back().unwrap_or_default();
        self.lent = false;
        found.unwrap_or_else(|p| std::panic::resume_unwind(p))
    }

    /// Shares the strings of `m`, then `m`'s entries themselves with every equal map of the read.
    pub(super) fn share_labels(&mut self, m: &mut LabelMap) {
        let Some(entries) = m.0.as_mut() else {
            return;
        };
        match Arc::get_mut(entries) {
            Some(own) => {
                for (k, v) in own.iter_mut() {
                    self.share_text(k);
                    self.share_text(v);
                }
            }
            // Held elsewhere too (never, for a map just parsed): shared through a copy.
            None => {
                let mut copy = entries.to_vec();
                for (k, v) in &mut copy {
                    self.share_text(k);
                    self.share_text(v);
                }
                *entries = Arc::from(copy);
            }
        }
        let key = address_hash(self.maps.hasher(), entries);
        if let Some(found) = self
            .maps
            .get(&key)
            .and_then(|c| c.iter().find(|e| same_strings(e, entries)))
        {
            *entries = found.clone();
            return;
        }
        if self.map_count >= MAX_SHARED {
            self.maps.clear();
            self.map_count = 0;
        }
        self.maps.entry(key).or_default().push(entries.clone());
        self.map_count += 1;
    }

    /// Notes that something of the object being read was cut to the API's limits; the object is
    /// named once its metadata is read ([`Session::name_notes`]).
    pub(super) fn note_trimmed(&mut self, what: String) {
        self.trimmed_total = self.trimmed_total.saturating_add(1);
        if self.trimmed.len() < MAX_TRIMMED {
            self.trimmed.push(Trimmed { object: None, what });
        }
    }

    /// Names `object` in the notes that do not name one yet.
    pub(super) fn name_notes(&mut self, object: impl fmt::Display) {
        let mut unnamed = self.trimmed.iter_mut().filter(|n| n.object.is_none());
        let Some(first) = unnamed.next() else {
            return;
        };
        let object = object.to_string();
        for n in unnamed {
            n.object = Some(object.clone());
        }
        first.object = Some(object);
    }

    /// Where the notes stand, to go back to with [`Session::reset_notes`].
    pub(super) fn mark(&self) -> Mark {
        Mark {
            kept: self.trimmed.len(),
            total: self.trimmed_total,
        }
    }

    /// Forgets the notes taken since `mark` (their object is read again), and the field error.
    pub(super) fn reset_notes(&mut self, mark: Mark) {
        self.trimmed.truncate(mark.kept);
        self.trimmed_total = mark.total;
        self.field_error = None;
    }

    /// Takes in the notes of a read of the rest of the same input (on another thread, see
    /// `super::json`), as if this read had taken them after its own.
    pub(super) fn add_notes(&mut self, (notes, total): (Vec<Trimmed>, usize)) {
        let room = MAX_TRIMMED.saturating_sub(self.trimmed.len());
        self.trimmed.extend(notes.into_iter().take(room));
        self.trimmed_total = self.trimmed_total.saturating_add(total);
    }

    /// The read's notes (at most `MAX_TRIMMED`), and how many there were in all.
    pub fn take_trimmed(&mut self) -> (Vec<Trimmed>, usize) {
        (
            std::mem::take(&mut self.trimmed),
            std::mem::take(&mut self.trimmed_total),
        )
    }

    /// Remembers the object and field a spec or status failed in.
    pub(super) fn fail_in(&mut self, e: FieldError) {
        self.field_error = Some(e);
    }

    /// The object and field the read failed in, if a spec or status field failed it.
    pub fn take_field_error(&mut self) -> Option<FieldError> {
        self.field_error.take()
    }

    /// The parser's message led by the object and field it is about, when a spec or status field
    /// failed: `Deployment team-a/web: spec.replicas: invalid type: string "three", expected a
    /// whole number`. (The parser gives the file position; only the reader knows the object.)
    pub(super) fn explain(&mut self, message: &str) -> String {
        let Some(f) = self.take_field_error() else {
            return message.to_string();
        };
        let own = plain_types(message);
        if f.object.is_empty() {
            format!("{}: {own}", f.field)
        } else {
            format!("{}: {}: {own}", f.object, f.field)
        }
    }
}

fn address_hash(state: &RandomState, entries: &[(Text, Text)]) -> u64 {
    let mut h = state.build_hasher();
    for (k, v) in entries {
        (Arc::as_ptr(&k.0) as *const u8 as usize).hash(&mut h);
        (Arc::as_ptr(&v.0) as *const u8 as usize).hash(&mut h);
    }
    h.finish()
}

fn same_strings(a: &[(Text, Text)], b: &[(Text, Text)]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| Arc::ptr_eq(&x.0.0, &y.0.0) && Arc::ptr_eq(&x.1.0, &y.1.0))
}

/// The parsers' Rust type names in the words a manifest's author uses: `invalid u64` / `expected
/// u64` become "not a whole number" / "expected a whole number", and so on.
pub(super) fn plain_types(message: &str) -> String {
    let mut out = message.to_string();
    for ty in [
        "u64", "u32", "u16", "u8", "i64", "i32", "i16", "i8", "usize",
    ] {
        out = out
            .replace(&format!("invalid {ty}"), "not a whole number")
            .replace(&format!("expected {ty}"), "expected a whole number");
    }
    for (from, to) in [
        ("invalid f64", "not a number"),
        ("expected f64", "expected a number"),
        ("invalid bool", "not true or false"),
        ("expected a boolean", "expected true or false"),
    ] {
        out = out.replace(from, to);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(m: &LabelMap) -> Vec<(&str, &str)> {
        m.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
    }

    #[test]
    fn equal_maps_of_a_read_share_one_allocation() {
        let mut s = Session::new();
        let mut a: LabelMap = serde_json::from_str(r#"{"b":"1","a":"2","b":"3"}"#).unwrap();
        let mut b: LabelMap = serde_json::from_str(r#"{"a":"2","b":"3"}"#).unwrap();
        s.share_labels(&mut a);
        s.share_labels(&mut b);
        assert_eq!(pairs(&a), [("a", "2"), ("b", "3")]);
        let (Some(ea), Some(eb)) = (&a.0, &b.0) else {
            panic!("non-empty maps hold entries");
        };
        assert!(Arc::ptr_eq(ea, eb), "equal maps share one allocation");
        // Another read shares nothing with this one.
        let mut c: LabelMap = serde_json::from_str(r#"{"a":"2","b":"3"}"#).unwrap();
        Session::new().share_labels(&mut c);
        assert!(!Arc::ptr_eq(ea, c.0.as_ref().unwrap()));
        assert_eq!(a, c);
    }

    #[test]
    fn equal_strings_of_a_read_are_one_allocation() {
        let mut s = Session::new();
        let (mut x, mut y) = (Text::from("team"), Text::from(String::from("team")));
        assert!(!Arc::ptr_eq(&x.0, &y.0));
        s.share_text(&mut x);
        s.share_text(&mut y);
        assert!(Arc::ptr_eq(&x.0, &y.0));
        assert_eq!(x, "team");
    }

    /// While a read parses, the strings parsed on its thread are its copies from the start; the
    /// table is its own again when the parse returns or unwinds, and no other read sees it.
    #[test]
    fn a_read_lends_its_strings_to_its_thread_only_while_it_parses() {
        let mut s = Session::new();
        let parse = |text: &str| serde_json::from_str::<Text>(text).unwrap();
        let (x, y) = s.sharing(|inner| {
            // Nested: the table stays where it is.
            let nested = inner.sharing(|_| parse(r#""team""#));
            (nested, parse(r#""te\u0061m""#))
        });
        assert!(Arc::ptr_eq(&x.0, &y.0), "parsed as the read's one copy");
        assert!(text::lent_copy("team").is_none(), "taken back");
        let mut z = Text::from("team");
        s.share_text(&mut z);
        assert!(Arc::ptr_eq(&x.0, &z.0), "the session holds what was parsed");
        assert!(
            !Arc::ptr_eq(&x.0, &parse(r#""team""#).0),
            "no read, no sharing"
        );
        // On another thread, another read's parse shares nothing with this one.
        let other = std::thread::scope(|t| {
            t.spawn(|| Session::new().sharing(|_| parse(r#""team""#)))
                .join()
                .unwrap()
        });
        assert!(!Arc::ptr_eq(&x.0, &other.0));
        let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            s.sharing(|_| -> () { panic!("a parse that unwinds") })
        }));
        assert!(unwound.is_err());
        assert!(
            text::lent_copy("team").is_none(),
            "taken back as it unwound"
        );
        let again = s.sharing(|_| parse(r#""team""#));
        assert!(Arc::ptr_eq(&x.0, &again.0), "and lent again");
    }

    #[test]
    fn notes_are_bounded_named_and_rolled_back() {
        let mut s = Session::new();
        s.note_trimmed("a".into());
        s.name_notes("Pod ml/p");
        let mark = s.mark();
        for i in 0..30 {
            s.note_trimmed(format!("n{i}"));
        }
        s.reset_notes(mark);
        for i in 0..30 {
            s.note_trimmed(format!("m{i}"));
        }
        let (notes, total) = s.take_trimmed();
        assert_eq!((notes.len(), total), (MAX_TRIMMED, 31));
        assert_eq!(notes[0].object.as_deref(), Some("Pod ml/p"));
        assert_eq!(notes[1].object, None);
        assert_eq!(s.take_trimmed().1, 0);
    }

    #[test]
    fn parser_type_names_read_as_plain_words() {
        assert_eq!(plain_types("invalid u64"), "not a whole number");
        assert_eq!(
            plain_types("invalid type: string \"three\", expected u64"),
            "invalid type: string \"three\", expected a whole number"
        );
        assert_eq!(plain_types("unknown field"), "unknown field");
    }
}
