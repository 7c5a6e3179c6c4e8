//! The parts every page shares: the output formats and how a page is laid out in each, titles,
//! the INCOMPLETE banner, links to manifests, how long lists fold, and how figures read (an
//! unknown count, a percentage, money — the numbers themselves are [`crate::util::number`]'s, so
//! the report's own sentences read the same).
//!
//! Every section's builder (inventory, drift, check, …) uses this file and nothing of its siblings'
//! but what it embeds; nothing here uses a section.

use crate::doc::{Alert, Block, Doc, Text};
use crate::report::{Provenance, Report};
use crate::util::number::{self, Digits};

pub use crate::doc::terminal::Style;
pub use crate::util::number::money;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Aligned columns for a terminal.
    Table,
    /// GitHub-flavoured markdown (PR comments, issues, job summaries).
    Markdown,
    /// The versioned report (schema gpuledger.report/v1).
    Json,
}

pub fn layout<T: serde::Serialize>(doc: &Doc, report: &T, format: Format, style: &Style) -> String {
    match format {
        Format::Table => crate::doc::terminal::write(doc, style),
        Format::Markdown => doc.markdown(),
        Format::Json => json(report),
    }
}

pub fn json<T: serde::Serialize>(v: &T) -> String {
    let mut s = crate::report::to_json(v)
        .and_then(|v| serde_json::to_string_pretty(&v))
        .unwrap_or_else(|e| format!("{{\"error\": \"cannot serialize report: {e}\"}}"));
    s.push('\n');
    s
}

/// `before → after`, or whichever side there is.
pub fn arrow(before: Option<&str>, after: Option<&str>) -> String {
    match (before, after) {
        (Some(b), Some(a)) => format!("{b} → {a}"),
        (Some(x), None) | (None, Some(x)) => x.to_string(),
        (None, None) => String::new(),
    }
}

/// Lists longer than this are folded into `<details>` on GitHub.
pub const FOLD: usize = 10;

/// `GPU impact of this change · gpu-east`: the title with the scope, when there is one.
pub fn title(base: &str, p: Option<&Provenance>) -> String {
    match p.and_then(|p| p.scope.as_deref()) {
        Some(scope) => format!("{base} · {scope}"),
        None => base.to_string(),
    }
}

/// The INCOMPLETE banner of a report whose input could not all be read: it leads every human
/// output, naming each resource and why (the RBAC verb that is missing).
pub fn banner(r: &Report) -> Option<Block> {
    if r.complete {
        return None;
    }
    let mut lines = vec![
        Text::new()
            .strong("INCOMPLETE")
            .plain(": part of the cluster could not be read, so figures that depend on it are unknown or under-count."),
    ];
    lines.extend(r.incomplete.iter().map(|m| {
        Text::new()
            .code(m.resource.as_str())
            .plain(format!(": {}", m.reason))
    }));
    Some(Block::Alert {
        kind: Alert::Caution,
        lines,
    })
}

/// Where a manifest named `path:line` lives: on GitHub, the blob at the commit the report is about
/// (`…/blob/<sha>/path#L3`); elsewhere nothing, and the manifest stays text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Links {
    /// `https://github.com/acme/gitops/blob/<sha>/<repository path>/`
    blob: Option<String>,
}

impl Links {
    /// Links into `slug` (`owner/name`) at `sha`; `prefix` is the GitOps repository's folder in it
    /// (`gitops/`, or empty).
    pub fn github(server: &str, slug: &str, sha: &str, prefix: &str) -> Links {
        Links {
            blob: Some(format!(
                "{}/{slug}/blob/{sha}/{prefix}",
                server.trim_end_matches('/')
            )),
        }
    }

    /// A manifest (`path:line`, `path:line:column` or a path), linked when it is a plain relative
    /// path in the repository; any other source (a chart template, an unknown) stays text.
    pub fn manifest(&self, source: Option<&str>) -> Text {
        let Some(source) = source.filter(|s| !s.is_empty()) else {
            return Text::new();
        };
        let Some(blob) = &self.blob else {
            return Text::from(source);
        };
        let mut parts = source.splitn(3, ':');
        let path = parts.next().unwrap_or_default();
        let line = parts
            .next()
            .filter(|l| l.chars().all(|c| c.is_ascii_digit()) && !l.is_empty());
        let plain_path = !path.is_empty()
            && !path.starts_with('/')
            && !path
                .split('/')
                .any(|c| c == ".." || c == "." || c.is_empty())
            && path
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_./+@".contains(c));
        if !plain_path {
            return Text::from(source);
        }
        let url = match line {
            Some(l) => format!("{blob}{path}#L{l}"),
            None => format!("{blob}{path}"),
        };
        Text::new().link(Text::new().code(source), url)
    }
}

/// `45m`, `2h`, `1h30m`, `1d3h`: a span of time as a table shows it (negative with `-`).
pub fn duration(secs: i64) -> String {
    let sign = if secs < 0 { "-" } else { "" };
    let s = secs.unsigned_abs();
    let (d, h, m) = (s / 86_400, s % 86_400 / 3600, s % 3600 / 60);
    match (d, h, m) {
        (0, 0, m) => format!("{sign}{m}m"),
        (0, h, 0) => format!("{sign}{h}h"),
        (0, h, m) => format!("{sign}{h}h{m}m"),
        (d, h, _) => format!("{sign}{d}d{h}h"),
    }
}

/// `42`, or `unknown` for a figure that could not be computed.
pub fn count(v: Option<u64>) -> String {
    v.map_or_else(|| "unknown".to_string(), |n| n.to_string())
}

/// `78.1%`, or `n/a` (a share of nothing).
pub fn percent(v: Option<f64>) -> String {
    v.map_or_else(|| "n/a".to_string(), |f| number::percent(f, Digits::Tenth))
}

/// `46%`: a headline or a sentence rounds.
pub fn percent_whole(share: f64) -> String {
    number::percent(share, Digits::Whole)
}

/// `46%` or `46.5%`: a tenth only when there is one.
pub fn percent_trimmed(share: f64) -> String {
    number::percent(share, Digits::Trimmed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::Span;

    #[test]
    fn a_manifest_links_to_its_blob_line_only_when_it_is_a_plain_repository_path() {
        let links = Links::github("https://github.com/", "acme/gitops", "abc123", "gitops/");
        let url = |t: Text| match t.0.first() {
            Some(Span::Link { url, .. }) => Some(url.clone()),
            _ => None,
        };
        assert_eq!(
            url(links.manifest(Some("serving/base/dgd.yaml:4"))).as_deref(),
            Some("https://github.com/acme/gitops/blob/abc123/gitops/serving/base/dgd.yaml#L4")
        );
        assert_eq!(
            url(links.manifest(Some("a.yaml:7:3"))).as_deref(),
            Some("https://github.com/acme/gitops/blob/abc123/gitops/a.yaml#L7")
        );
        for not_a_path in [
            "../etc/passwd:1",
            "/abs.yaml:1",
            "chart x (template)",
            "a//b:1",
        ] {
            assert_eq!(url(links.manifest(Some(not_a_path))), None, "{not_a_path}");
        }
        assert!(links.manifest(None).is_empty());
        // Off GitHub a manifest is text.
        assert_eq!(
            Links::default().manifest(Some("a.yaml:1")),
            Text::from("a.yaml:1")
        );
    }
}
