//! Turning a report into what people and programs read: each report section is built once as
//! [`doc`](crate::doc) blocks (here, one file per section) and laid out by the terminal or the
//! markdown writer; JSON is serde of the report.
//!
//! Pure functions of the report. Every output shows the same figures; the JSON is the versioned
//! interface, the other two are for people. An unknown figure is written as `unknown`, never `0`.
//! A new report section is a block builder in this folder: both writers get it for free.

mod check;
mod desired;
mod drift;
mod inventory;
pub mod provenance;

use clap::ValueEnum;

use crate::doc::Doc;
use crate::report::{CheckReport, RenderReport, Report};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Aligned columns for a terminal.
    Table,
    /// GitHub-flavoured markdown (PR comments, issues, job summaries).
    Markdown,
    /// The versioned report (schema gpuledger.report/v1).
    Json,
}

/// The inventory, with drift when the report has it.
pub fn report_doc(report: &Report) -> Doc {
    let mut d = inventory::inventory(report);
    if let Some(x) = &report.drift {
        d.extend(drift::drift(x, None));
    }
    d
}

/// The drift report: drift first (the summary line leads).
pub fn drift_doc(report: &Report) -> Option<Doc> {
    report.drift.as_ref().map(|x| {
        let mut d = Doc::new();
        if let Some(b) = inventory::banner(report) {
            d.push(b);
        }
        d.extend(drift::drift(x, report.provenance.as_ref()));
        d
    })
}

/// The body of a drift tracking issue: the fleet's four counts and the tenant table, then drift.
pub fn drift_issue_doc(report: &Report) -> Doc {
    let mut d = inventory::headline(report);
    match &report.drift {
        Some(x) => d.extend(drift::drift(x, None)),
        None => d.paragraph("Drift is unknown: no desired state was given."),
    }
    d
}

pub fn check_doc(report: &CheckReport) -> Doc {
    check::check(&report.check, &report.provenance)
}

pub fn desired_doc(report: &RenderReport) -> Doc {
    desired::desired(report)
}

pub fn render(report: &Report, format: Format) -> String {
    layout(&report_doc(report), report, format)
}

/// The drift report: drift first, the full report in JSON.
pub fn render_drift(report: &Report, format: Format) -> String {
    match drift_doc(report) {
        Some(d) => layout(&d, report, format),
        None => json(report),
    }
}

pub fn render_check(report: &CheckReport, format: Format) -> String {
    layout(&check_doc(report), report, format)
}

pub fn render_desired(report: &RenderReport, format: Format) -> String {
    layout(&desired_doc(report), report, format)
}

fn layout<T: serde::Serialize>(doc: &Doc, report: &T, format: Format) -> String {
    match format {
        Format::Table => doc.terminal(),
        Format::Markdown => doc.markdown(),
        Format::Json => json(report),
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

/// `42`, or `unknown` for a figure that could not be computed.
pub(crate) fn count(v: Option<u64>) -> String {
    v.map_or_else(|| "unknown".to_string(), |n| n.to_string())
}

/// `78.1%`, or `n/a`.
pub(crate) fn percent(v: Option<f64>) -> String {
    v.map_or_else(|| "n/a".to_string(), |f| format!("{:.1}%", f * 100.0))
}
