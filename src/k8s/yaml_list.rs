//! A large YAML `List` as `kubectl get -o yaml` writes it, read an item at a time.
//!
//! kubectl writes a fleet as one document: `apiVersion: v1`, `items:` and each item as a block
//! sequence entry at the first column (`- apiVersion: v1`), then `kind: List` and `metadata`. Such a
//! document is too large to hold whole, so it is read here line by line: each item (from its `- `
//! to the next line that starts at the first column) is parsed by the fast path
//! (`super::yaml_block`) as a one-entry sequence and read as a document of its own, its lines
//! counted from the stream's start; every other line, with `items: []` in place of the items, is
//! read as one small document at the end, which gives the list's annotations (a `List` is no
//! object, so its lines are not wanted).
//!
//! An item of a `kind: List` takes nothing from its list (its items name their own apiVersion and
//! kind), so read on its own it gives the objects the list's reader gives it. Anything else (another
//! kind of list, an item the fast path does not take, a list whose own metadata the reader trims,
//! so that its notes would come in another order) answers [`Listed::Again`]: the document's bytes
//! are gone by then, and the caller reads the whole input again without this path.

use std::io::{self, BufRead};

use super::object::Object;
use super::session::Session;
use super::text::Labels;
use super::yaml_value;

/// What became of a list read by [`read_list`].
pub(super) enum Listed {
    Read {
        objects: Vec<Object>,
        annotations: Labels,
    },
    /// The list is not one this path reads exactly: read the input again without it.
    Again,
}

/// Whether a document whose first bytes are `head` is a list this path reads: a line `items:` at
/// the first column, whose next line with content is an entry at the first column.
pub(super) fn looks_like_list(head: &[u8]) -> bool {
    let mut lines = head.split(|&b| b == b'\n');
    while let Some(line) = lines.next() {
        if line == b"items:" {
            return lines
                .find(|l| !(l.is_empty() || l.starts_with(b"#")))
                .is_some_and(|l| l.starts_with(b"- "));
        }
    }
    false
}

/// The objects of the list document `input` (the stream's lines after `offset`), and its
/// annotations; see the module docs.
pub(super) fn read_list(
    mut input: impl BufRead,
    offset: u32,
    session: &mut Session,
) -> io::Result<Listed> {
    let mut rest = String::new();
    let mut item = String::new();
    // The line the item being gathered starts on (1-based in the document); 0: none.
    let mut item_line: u32 = 0;
    let mut in_items = false;
    let mut items_seen = false;
    let mut objects = Vec::new();
    let mut line = Vec::new();
    let mut no: u32 = 0;
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        no = no.saturating_add(1);
        let Ok(text) = std::str::from_utf8(&line) else {
            return Ok(Listed::Again);
        };
        let first_column = !matches!(line.first(), None | Some(b' ' | b'\n' | b'#'));
        if !first_column {
            if item_line > 0 {
                item.push_str(text);
            } else if in_items && !text.trim_start_matches(' ').starts_with(['\n', '#']) {
                return Ok(Listed::Again); // items indented under their key
            } else {
                rest.push_str(text);
            }
            continue;
        }
        if !read_item(&mut item, item_line, offset, session, &mut objects) {
            return Ok(Listed::Again);
        }
        item_line = 0;
        if in_items && (text.starts_with("- ") || text.trim_end() == "-") {
            item_line = no;
            item.push_str(text);
            continue;
        }
        in_items = false;
        if text.trim_end() == "items:" {
            if items_seen {
                return Ok(Listed::Again);
            }
            items_seen = true;
            in_items = true;
            rest.push_str("items: []\n");
            continue;
        }
        rest.push_str(text);
    }
    if !read_item(&mut item, item_line, offset, session, &mut objects) {
        return Ok(Listed::Again);
    }
    let mark = session.mark();
    let Some(list) = yaml_value::read_list_rest(&rest, session, offset) else {
        return Ok(Listed::Again);
    };
    if session.mark() != mark || !list.objects.is_empty() {
        return Ok(Listed::Again);
    }
    Ok(Listed::Read {
        objects,
        annotations: list.list_annotations,
    })
}

/// Reads the item gathered in `item` (when `line`, its first line, is not 0) into `objects`, and
/// empties it; false when the fast path does not take it.
fn read_item(
    item: &mut String,
    line: u32,
    offset: u32,
    session: &mut Session,
    objects: &mut Vec<Object>,
) -> bool {
    if line == 0 {
        return true;
    }
    let at = offset.saturating_add(line - 1);
    let Some(found) = yaml_value::read_item(item, session, at) else {
        return false;
    };
    objects.extend(found);
    item.clear();
    true
}
