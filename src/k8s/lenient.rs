//! Manifests and dumps read as the controllers' and kubectl's decoders read them where the strict
//! reader refuses them: a mapping key given twice keeps its later value, with a warning naming the
//! file and line, and no message names an option of the parsing library. Used by `render` (a
//! directory's files, a chart's output) and by snapshot files.

use serde_json::Value;

use crate::error::InputError;

/// `text` re-encoded as JSON documents (one a line) with every duplicated key's later value, and
/// the warning that says so; [`super::read::last_wins`] reads the objects from it.
pub fn last_wins_json(
    text: &str,
    path: &str,
    e: &InputError,
) -> (Result<String, InputError>, String) {
    let key = e
        .message
        .split("duplicate mapping key:")
        .nth(1)
        .map(|k| k.split(',').next().unwrap_or(k).trim().to_string())
        .unwrap_or_default();
    let at = match e.line {
        Some(l) => format!("{path}:{l}"),
        None => path.to_string(),
    };
    let note = format!(
        "{at}: the key {key:?} is given twice; the later value is used, as the controllers' \
         decoder reads it"
    );
    let options = serde_saphyr::options! {
        duplicate_keys: serde_saphyr::DuplicateKeyPolicy::LastWins,
    };
    let docs: Vec<Value> = match serde_saphyr::from_multiple_with_options(text, options) {
        Ok(d) => d,
        Err(_) => return (Err(plain_words(e.clone())), note),
    };
    let json: String = docs
        .iter()
        .filter(|d| !d.is_null())
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join("\n");
    (Ok(json), note)
}

/// A reader's message without the parsing library's own advice (`set DuplicateKeyPolicy in
/// Options if acceptable`).
pub fn plain_words(mut e: InputError) -> InputError {
    e.message = e
        .message
        .replace(", set DuplicateKeyPolicy in Options if acceptable", "");
    e
}
