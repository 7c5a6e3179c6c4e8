//! Writing to the Actions runner: the step summary (markdown, at most 1 MiB per step), step outputs
//! (`name<<DELIMITER` blocks in the `GITHUB_OUTPUT` file, so multi-line values cannot inject other
//! outputs), and workflow-command annotations (at most 10 warnings per step are shown, so the
//! tenth says how many more there are). Files are appended to, as the runner expects; the
//! annotation lines are returned for the binary to print on stdout.

use std::io::Write;
use std::path::Path;

use super::split;
use crate::doc::Doc;

/// GitHub shows at most this much of a step summary.
pub const SUMMARY_BYTES: usize = 1024 * 1024;
/// Warnings shown per step.
pub const MAX_WARNINGS: usize = 10;

/// Appends `markdown` to the step summary, cut at a block boundary (with `note`) if it would not
/// fit in 1 MiB.
pub fn append_summary(path: &Path, doc: &Doc, note: &str) -> std::io::Result<()> {
    let markdown = doc.markdown();
    let text = if markdown.len() + 2 <= SUMMARY_BYTES {
        markdown
    } else {
        // Three parts of at most 256 KiB each stay well under the 1 MiB.
        split::split(doc, 250_000, 3, note).concat()
    };
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    f.write_all(crate::util::redact::redact(&text).as_bytes())?;
    f.write_all(b"\n\n")
}

/// Appends step outputs in the heredoc form with a delimiter that occurs in no value.
pub fn write_outputs(path: &Path, outputs: &[(&str, String)]) -> std::io::Result<()> {
    let mut text = String::new();
    for (name, value) in outputs {
        let mut n = 0u32;
        let delimiter = loop {
            let d = format!("GPULEDGER_EOF_{n}");
            if !value.lines().any(|l| l == d) {
                break d;
            }
            n += 1;
        };
        text.push_str(&format!("{name}<<{delimiter}\n{value}\n{delimiter}\n"));
    }
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    f.write_all(crate::util::redact::redact(&text).as_bytes())
}

/// A warning on a file (or on the run, without one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Annotation {
    pub file: Option<String>,
    pub line: Option<u32>,
    pub title: String,
    pub message: String,
}

impl Annotation {
    /// `source` as the report writes it: `path/to/file.yaml:12` (or without the line).
    pub fn at(source: Option<&str>, title: String, message: String) -> Annotation {
        let (file, line) = match source {
            Some(s) => match s.rsplit_once(':') {
                Some((f, l)) if l.parse::<u32>().is_ok() => (Some(f.to_string()), l.parse().ok()),
                _ => (Some(s.to_string()), None),
            },
            None => (None, None),
        };
        Annotation {
            file,
            line,
            title,
            message,
        }
    }
}

/// `::warning file=…,line=…,title=…::message` lines, at most [`MAX_WARNINGS`]; when there are
/// more, the last line says how many were left out.
pub fn warnings(annotations: &[Annotation]) -> Vec<String> {
    let mut out = Vec::new();
    let shown = if annotations.len() > MAX_WARNINGS {
        MAX_WARNINGS - 1
    } else {
        annotations.len()
    };
    for a in annotations.iter().take(shown) {
        let mut props = Vec::new();
        if let Some(f) = &a.file {
            props.push(format!("file={}", property(f)));
            if let Some(l) = a.line {
                props.push(format!("line={l}"));
            }
        }
        props.push(format!("title={}", property(&a.title)));
        out.push(format!(
            "::warning {}::{}",
            props.join(","),
            data(&a.message)
        ));
    }
    if annotations.len() > shown {
        out.push(format!(
            "::warning title=gpuledger::{}",
            data(&format!(
                "{} more workloads changed shape or drifted: see the step summary",
                annotations.len() - shown
            ))
        ));
    }
    out
}

/// Escaping for a workflow command's message.
pub fn data(s: &str) -> String {
    // Redacted before escaping, which would otherwise hide a secret from the final pass.
    crate::util::redact::redact(s)
        .replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escaping for a workflow command's property value.
fn property(s: &str) -> String {
    data(s).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_use_a_delimiter_absent_from_the_value() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out");
        write_outputs(
            &p,
            &[
                ("drift", "3".into()),
                ("evil", "a\nGPULEDGER_EOF_0\nx=1".into()),
            ],
        )
        .unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert_eq!(
            text,
            "drift<<GPULEDGER_EOF_0\n3\nGPULEDGER_EOF_0\nevil<<GPULEDGER_EOF_1\na\nGPULEDGER_EOF_0\nx=1\nGPULEDGER_EOF_1\n"
        );
    }

    #[test]
    fn annotations_are_escaped_and_bounded() {
        let a = Annotation::at(
            Some("serving/a,b.yaml:12"),
            "reshaped: ns/Deployment/x".into(),
            "50% more\nGPUs".into(),
        );
        assert_eq!(
            warnings(std::slice::from_ref(&a)),
            vec![
                "::warning file=serving/a%2Cb.yaml,line=12,title=reshaped%3A ns/Deployment/x::50%25 more%0AGPUs"
            ]
        );
        let many = vec![a; 14];
        let lines = warnings(&many);
        assert_eq!(lines.len(), MAX_WARNINGS);
        assert!(lines[9].contains("5 more workloads"), "{}", lines[9]);
        let plain = Annotation::at(None, "t".into(), "m".into());
        assert_eq!(warnings(&[plain]), vec!["::warning title=t::m"]);
    }

    #[test]
    fn a_huge_summary_is_cut_under_one_mebibyte() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("summary.md");
        let table = crate::doc::Table::new(&["w", "t", ">g"]).rows(0..40_000, |_| {
            vec![
                "ns/Deployment/some-workload".into(),
                "tenant".into(),
                "8".into(),
            ]
        });
        let doc = Doc {
            blocks: vec![crate::doc::Block::Table(table)],
        };
        append_summary(&p, &doc, "cut: see the JSON report").unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.len() <= SUMMARY_BYTES, "{}", text.len());
        assert!(text.trim_end().ends_with("cut: see the JSON report"));
    }
}
