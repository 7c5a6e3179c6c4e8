//! Turning a report into what people and programs read: each report section is built once as
//! [`doc`](crate::doc) blocks (here, one file per section) and laid out by the terminal or the
//! markdown writer; JSON is serde of the report.
//!
//! Pure functions of the report. Every output shows the same figures; the JSON is the versioned
//! interface, the other two are for people. An unknown figure is written as `unknown`, never `0`.
//! A new report section is a block builder in this folder: both writers get it for free.

mod check;
pub mod compare;
pub mod cost;
pub mod deadlines;
mod desired;
mod dra;
mod drift;
pub mod exposition;
pub mod facts;
pub mod headroom;
mod inventory;
mod lists;
pub mod nodes;
pub mod page;
pub mod plan;
pub mod prometheus;
pub mod provenance;
mod queues;
mod routes;
mod tenancy;
pub mod trend;
mod unknown;
mod verdict;

use crate::doc::{Block, Doc, Text};
use crate::report::{CheckReport, RenderReport, Report};
pub use page::{Format, Links, Style};
use page::{json, layout};

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
        let mut d = drift::drift(
            x,
            &Links::default(),
            report.provenance.as_ref(),
            page::banner(report),
        );
        if let Some(x) = &report.deadlines {
            d.extend(deadlines::section(x, "Deadline attainment"));
        }
        d
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
    d.heading(2, page::title("GPU drift against Git", p));
    if let Some(b) = page::banner(report) {
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
    if let Some(x) = &report.deadlines {
        d.extend(deadlines::section(x, "Deadline attainment"));
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
    layout(&report_doc(report), report, format, style)
}

/// `inventory --by node`: the per-node view (the inventory when the report has none); JSON is the
/// whole report.
pub fn render_nodes(report: &Report, format: Format, style: &Style) -> String {
    let doc = nodes::nodes_doc(report).unwrap_or_else(|| report_doc(report));
    layout(&doc, report, format, style)
}

/// The drift report: drift first, the full report in JSON.
pub fn render_drift(report: &Report, format: Format, style: &Style) -> String {
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
