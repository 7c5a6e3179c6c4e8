//! Manifests read as the controllers' decoders read them, where gpuledger's strict reader would
//! refuse them: a duplicated mapping key (the later value wins, with a warning naming the file and
//! line: [`crate::k8s::lenient`], shared with snapshot files), and a file that is a tool's
//! configuration rather than an API object (an audit policy, a
//! kind or kubeadm config, an `IstioOperator` install file: `apiVersion` and `kind`, no
//! `metadata`), which a directory of manifests skips with a note instead of failing. kustomize
//! sources are read by kustomize itself and keep its refusals. No message names an option of a
//! parsing library.

use serde_json::Value;

pub use crate::k8s::lenient::plain_words;
pub use crate::k8s::read::last_wins;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::k8s::read::read_str;

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
