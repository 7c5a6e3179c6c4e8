//! Turning a [`Report`] into text: a terminal table, GitHub-flavoured markdown, or JSON.
//!
//! Pure functions of the report. All three show the same figures; the JSON is the versioned
//! interface, the other two are for people. An unknown figure is written as `unknown`, never `0`.

mod check;
mod desired;
mod drift;
mod markdown;
mod table;
mod text;

use clap::ValueEnum;

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

pub fn render(report: &Report, format: Format) -> String {
    match format {
        Format::Table => {
            let mut s = table::render(report);
            if let Some(d) = &report.drift {
                s.push('\n');
                s.push_str(&drift::table(d));
            }
            s
        }
        Format::Markdown => {
            let mut s = markdown::render(report);
            if let Some(d) = &report.drift {
                s.push('\n');
                s.push_str(&drift::markdown(d));
            }
            s
        }
        Format::Json => json(report),
    }
}

/// The drift report: drift first (the summary line leads), the full report in JSON.
pub fn render_drift(report: &Report, format: Format) -> String {
    match (&report.drift, format) {
        (Some(d), Format::Table) => drift::table(d),
        (Some(d), Format::Markdown) => drift::markdown(d),
        _ => json(report),
    }
}

/// The body of a drift tracking issue: the fleet's four counts and the tenant table, then drift.
pub fn render_drift_issue(report: &Report) -> String {
    let mut s = markdown::headline(report);
    match &report.drift {
        Some(d) => {
            s.push('\n');
            s.push_str(&drift::markdown(d));
        }
        None => s.push_str("\nDrift is unknown: no desired state was given.\n"),
    }
    s
}

pub fn render_check(report: &CheckReport, format: Format) -> String {
    match format {
        Format::Table => check::table(&report.check),
        Format::Markdown => check::markdown(&report.check),
        Format::Json => json(report),
    }
}

pub fn render_desired(report: &RenderReport, format: Format) -> String {
    match format {
        Format::Table => desired::table(report),
        Format::Markdown => desired::markdown(report),
        Format::Json => json(report),
    }
}

fn json<T: serde::Serialize>(v: &T) -> String {
    let mut s = serde_json::to_string_pretty(v)
        .unwrap_or_else(|e| format!("{{\"error\": \"cannot serialize report: {e}\"}}"));
    s.push('\n');
    s
}

/// `42`, or `unknown` for a figure that could not be computed.
/// `before → after`, or whichever side there is.
pub(crate) fn arrow(before: Option<&str>, after: Option<&str>) -> String {
    match (before, after) {
        (Some(b), Some(a)) => format!("{b} → {a}"),
        (Some(x), None) | (None, Some(x)) => x.to_string(),
        (None, None) => String::new(),
    }
}

pub(crate) fn count(v: Option<u64>) -> String {
    v.map_or_else(|| "unknown".to_string(), |n| n.to_string())
}

/// `78.1%`, or `n/a`.
pub(crate) fn percent(v: Option<f64>) -> String {
    v.map_or_else(|| "n/a".to_string(), |f| format!("{:.1}%", f * 100.0))
}
