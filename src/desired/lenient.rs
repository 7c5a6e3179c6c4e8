//! Manifests read as the controllers' decoders read them, where gpuledger's strict reader would
//! refuse them: a duplicated mapping key (the later value wins, with a warning naming the file and
//! line), and a file that is a tool's configuration rather than an API object (an audit policy, a
//! kind or kubeadm config, an `IstioOperator` install file: `apiVersion` and `kind`, no
//! `metadata`), which a directory of manifests skips with a note instead of failing. kustomize
//! sources are read by kustomize itself and keep its refusals. No message names an option of a
//! parsing library.

use serde_json::Value;

use crate::error::InputError;
use crate::k8s::object::Object;
use crate::k8s::read::read_str;

/// Reads `text` with every duplicated key's later value, and the warning that says so.
pub fn last_wins(
    text: &str,
    path: &str,
    e: &InputError,
) -> (Result<Vec<Object>, InputError>, String) {
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
    let read = read_str(&json, path).map(|mut objs| {
        // Lines of the re-encoded documents are not lines of the file.
        for o in &mut objs {
            o.source.line = None;
        }
        objs
    });
    (read, note)
}

/// `Policy (audit.k8s.io/v1)` when every document of `text` names an `apiVersion` and a `kind`
/// but has no `metadata`: a tool's configuration file, not an object for the API.
pub fn tool_configuration(text: &str) -> Option<String> {
    let docs: Vec<Value> = serde_saphyr::from_multiple(text).ok()?;
    let docs: Vec<&Value> = docs.iter().filter(|d| !d.is_null()).collect();
    let first = docs.first()?;
    let tool = |d: &&Value| {
        d.get("apiVersion").and_then(Value::as_str).is_some()
            && d.get("kind").and_then(Value::as_str).is_some()
            && d.get("metadata").is_none()
    };
    docs.iter().all(tool).then(|| {
        format!(
            "{} ({})",
            first["kind"].as_str().unwrap_or_default(),
            first["apiVersion"].as_str().unwrap_or_default()
        )
    })
}

/// A reader's message without the parsing library's own advice (`set DuplicateKeyPolicy in
/// Options if acceptable`).
pub fn plain_words(mut e: InputError) -> InputError {
    e.message = e
        .message
        .replace(", set DuplicateKeyPolicy in Options if acceptable", "");
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_later_key_wins_and_tool_files_are_told_apart() {
        let text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  name: b\n";
        let e = read_str(text, "f.yaml").unwrap_err();
        assert!(!plain_words(e.clone()).message.contains("Options"), "{e}");
        let (objs, note) = last_wins(text, "f.yaml", &e);
        assert_eq!(objs.unwrap()[0].meta.name, "b");
        assert!(
            note.starts_with("f.yaml:5: the key \"name\" is given twice"),
            "{note}"
        );
        assert_eq!(
            tool_configuration("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: []\n").as_deref(),
            Some("Policy (audit.k8s.io/v1)")
        );
        assert_eq!(tool_configuration(text), None);
        assert_eq!(tool_configuration("kind: X\nmetadata: {}\n"), None);
    }
}
