//! Turning a report into what people and programs read: each report section is built once as
//! [`doc`](crate::doc) blocks (here, one file per section) and laid out by the terminal or the
//! markdown writer; JSON is serde of the report.
//!
//! Pure functions of the report. Every output shows the same figures; the JSON is the versioned
//! interface, the other two are for people. An unknown figure is written as `unknown`, never `0`.
//! A new report section is a block builder in this folder: both writers get it for free.

mod check;
pub mod cost;
mod desired;
mod drift;
pub mod facts;
pub mod headroom;
mod inventory;
pub mod plan;
pub mod prometheus;
pub mod provenance;
pub mod trend;

use clap::ValueEnum;

pub use crate::doc::terminal::Style;
use crate::doc::{Block, Doc, Text};
use crate::report::{CheckReport, RenderReport, Report};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Aligned columns for a terminal.
    Table,
    /// GitHub-flavoured markdown (PR comments, issues, job summaries).
    Markdown,
    /// The versioned report (schema gpuledger.report/v1).
    Json,
    /// Prometheus text exposition (inventory and drift; `gpuledger serve` serves it).
    Prometheus,
}

/// The inventory, with drift when the report has it.
pub fn report_doc(report: &Report) -> Doc {
    let mut d = inventory::inventory(report);
    if let Some(x) = &report.drift {
        d.extend(drift::drift(x, &Links::default(), None, None));
    }
    d
}

/// The drift report: drift first (the summary line leads).
pub fn drift_doc(report: &Report) -> Option<Doc> {
    report.drift.as_ref().map(|x| {
        drift::drift(
            x,
            &Links::default(),
            report.provenance.as_ref(),
            inventory::banner(report),
        )
    })
}

/// The body of a drift tracking issue: drift leads (its summary, then unmanaged, missing and
/// changed), and the fleet's counts and tenants follow, folded — the issue is about drift, the
/// inventory is context. The marked facts of the repository's documents that the live state
/// contradicts (`docs`) come after drift.
pub fn drift_issue_doc(
    report: &Report,
    links: &Links,
    docs: Option<&crate::report::facts::DocsStatus>,
) -> Doc {
    let p = report.provenance.as_ref();
    let mut d = Doc::new();
    d.heading(2, provenance::title("GPU drift against Git", p));
    if let Some(b) = inventory::banner(report) {
        d.push(b);
    }
    let summary = match &report.drift {
        Some(x) => x.summary.as_str(),
        None => "Drift is unknown: no desired state was given.",
    };
    provenance::lead(&mut d, p, Block::Paragraph(Text::new().strong(summary)));
    if let Some(x) = &report.drift {
        drift::body(&mut d, x, links, p);
    }
    if let Some(status) = docs {
        facts::section_for(&mut d, status, links);
    }
    let mut body = inventory::figures(report).blocks;
    // Allocated → busy → valuable, when the issue was given cost inputs.
    if let Some(c) = &report.cost {
        body.extend(cost::headline(c, report.headroom.as_ref()).blocks);
    }
    d.push(Block::Details {
        summary: Text::from(format!("Fleet inventory: {}", inventory::one_line(report))),
        body,
    });
    d
}

pub fn check_doc(report: &CheckReport, links: &Links) -> Doc {
    check::check(&report.check, &report.provenance, links)
}

pub fn desired_doc(report: &RenderReport) -> Doc {
    desired::desired(report)
}

pub fn render(report: &Report, format: Format, style: &Style) -> String {
    match format {
        Format::Prometheus => prometheus::exposition(report, prometheus::Options::default()),
        _ => layout(&report_doc(report), report, format, style),
    }
}

/// The drift report: drift first, the full report in JSON.
pub fn render_drift(report: &Report, format: Format, style: &Style) -> String {
    if format == Format::Prometheus {
        return prometheus::exposition(report, prometheus::Options::default());
    }
    match drift_doc(report) {
        Some(d) => layout(&d, report, format, style),
        None => json(report),
    }
}

/// `gpuledger cost`: the cost section with the report's title; JSON is the whole report.
pub fn render_cost(report: &Report, format: Format, style: &Style) -> String {
    layout(&cost::cost_doc(report), report, format, style)
}

pub fn render_check(report: &CheckReport, format: Format, style: &Style) -> String {
    layout(&check_doc(report, &Links::default()), report, format, style)
}

pub fn render_desired(report: &RenderReport, format: Format, style: &Style) -> String {
    layout(&desired_doc(report), report, format, style)
}

/// `gpuledger headroom`: the serving headroom section under its own title; JSON is the report.
pub fn render_headroom(report: &Report, format: Format, style: &Style) -> String {
    layout(&headroom::headroom_doc(report), report, format, style)
}

/// The plan: a table with a sparkline, markdown with a gantt chart, or the JSON report.
pub fn render_plan(
    report: &crate::report::plan::PlanReport,
    format: Format,
    style: &Style,
) -> String {
    layout(
        &plan::plan_doc(report, format == Format::Table),
        report,
        format,
        style,
    )
}

/// The trend: sparklines on a terminal, mermaid line charts in markdown, or the JSON report.
pub fn render_trend(
    report: &crate::report::trend::TrendReport,
    format: Format,
    style: &Style,
) -> String {
    layout(
        &trend::trend_doc(report, format == Format::Table),
        report,
        format,
        style,
    )
}

fn layout<T: serde::Serialize>(doc: &Doc, report: &T, format: Format, style: &Style) -> String {
    match format {
        Format::Table => crate::doc::terminal::write(doc, style),
        Format::Markdown => doc.markdown(),
        Format::Json => json(report),
        // The commands that write other reports refuse the format before they get here.
        Format::Prometheus => {
            "# this report has no Prometheus form: use inventory or drift\n".into()
        }
    }
}

fn json<T: serde::Serialize>(v: &T) -> String {
    let mut s = serde_json::to_string_pretty(v)
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

/// `42`, or `unknown` for a figure that could not be computed.
pub(crate) fn count(v: Option<u64>) -> String {
    v.map_or_else(|| "unknown".to_string(), |n| n.to_string())
}

/// `78.1%`, or `n/a`.
pub(crate) fn percent(v: Option<f64>) -> String {
    v.map_or_else(|| "n/a".to_string(), |f| format!("{:.1}%", f * 100.0))
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
