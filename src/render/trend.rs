//! The trend as people read it: "growing fastest" in the headline, where the history came from,
//! then per tenant and per product line the start, end, change, rate per week and peak; on a
//! terminal a sparkline per row, in markdown a mermaid `xychart-beta` line per product line.

use crate::doc::{Block, Doc, Table, Text};
use crate::report::trend::{Source, Trend, TrendReport, TrendRow};
use crate::util::date::Timestamp;

/// `12.5`, `-3`, or `unknown`.
fn gpus(v: Option<f64>) -> String {
    v.map_or_else(|| "unknown".into(), number)
}

fn number(v: f64) -> String {
    let r = (v * 10.0).round() / 10.0;
    if r.fract() == 0.0 {
        format!("{r:.0}")
    } else {
        format!("{r:.1}")
    }
}

fn signed(v: Option<f64>) -> String {
    v.map_or_else(
        || "unknown".into(),
        |v| {
            let s = number(v);
            if v > 0.0 && s != "0" {
                format!("+{s}")
            } else {
                s
            }
        },
    )
}

fn day(t: i64) -> String {
    Timestamp::from_unix(t).date().to_string()
}

fn span(t: &Trend) -> String {
    step_text(u64::try_from(t.end - t.start).unwrap_or(0))
}

/// The window's ends: dates for daily steps, times below a day.
fn when(t: &Trend, at: i64) -> String {
    if t.step_s.is_multiple_of(86_400) {
        day(at)
    } else {
        Timestamp::from_unix(at).human()
    }
}

/// The verdict: who grows fastest, or why there is no trend.
pub fn headline(t: &Trend) -> Text {
    if let Some(why) = &t.unknown {
        return Text::new()
            .strong("Trend unknown")
            .plain(format!(": {why}."));
    }
    match t
        .fastest
        .as_ref()
        .and_then(|n| t.tenants.iter().find(|r| &r.name == n))
    {
        Some(r) => Text::new()
            .plain("Growing fastest: ")
            .strong(r.name.as_str())
            .plain(format!(
                ", {} GPUs a week ({} → {} over {}).",
                signed(r.per_week),
                gpus(r.start),
                gpus(r.end),
                span(t)
            )),
        None => Text::new().plain(format!("No tenant's GPUs grew over {}.", span(t))),
    }
}

pub fn trend_doc(r: &TrendReport, terminal: bool) -> Doc {
    let t = &r.trend;
    let mut d = Doc::new();
    d.heading(2, "GPU trend per tenant and product line");
    d.paragraph(headline(t));
    let source = match t.source {
        Source::Gpuledger => "gpuledger's own series",
        Source::KubeStateMetrics => "kube-state-metrics",
    };
    d.push(Block::Small(Text::new().emph(format!(
        "From {source}: {}; {} to {} in steps of {}; {} steps with data.",
        t.source_note,
        when(t, t.start),
        when(t, t.end),
        step_text(t.step_s),
        t.covered.len()
    ))));
    for (title, first, rows) in [
        ("Tenants", "tenant", &t.tenants),
        ("Product lines", "product line", &t.product_lines),
    ] {
        if rows.is_empty() {
            continue;
        }
        // Busy GPUs are exported per tenant only.
        let busy = first == "tenant" && t.busy_unknown.is_none();
        let mut headers = vec![first, ">start", ">end", ">change", ">per week", ">peak"];
        if busy {
            headers.extend([">busy start", ">busy end"]);
        }
        if terminal {
            headers.push("trend");
        }
        let table = Table::new(&headers).rows(rows.iter(), |x: &TrendRow| {
            let mut row = vec![
                x.name.as_str().into(),
                gpus(x.start).into(),
                gpus(x.end).into(),
                signed(x.change).into(),
                signed(x.per_week).into(),
                gpus(x.peak).into(),
            ];
            if busy {
                row.push(gpus(x.busy_start).into());
                row.push(gpus(x.busy_end).into());
            }
            if terminal {
                row.push(spark(&x.points).into());
            }
            row
        });
        d.section(title, table, None);
        if first == "tenant"
            && let Some(why) = &t.busy_unknown
        {
            d.push(Block::Small(
                Text::new().emph(format!("Busy GPUs unknown: {why}.")),
            ));
        }
    }
    if !terminal && t.unknown.is_none() {
        for line in &t.product_lines {
            d.push(chart(&line.name, t, &line.points));
        }
    }
    d
}

fn step_text(s: u64) -> String {
    match s {
        s if s.is_multiple_of(86_400) => format!("{}d", s / 86_400),
        s if s.is_multiple_of(3600) => format!("{}h", s / 3600),
        s if s.is_multiple_of(60) => format!("{}m", s / 60),
        s => format!("{s}s"),
    }
}

/// The plan's sparkline, on whole GPUs, scaled to the row's own peak.
fn spark(points: &[f64]) -> String {
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let whole: Vec<u64> = points.iter().map(|p| p.max(0.0).round() as u64).collect();
    super::plan::sparkline(&whole, 0)
}

/// A mermaid `xychart-beta` with one line: the product line's GPUs at each step with data. The
/// name is cluster text inside a diagram: only characters mermaid cannot read as syntax remain.
fn chart(name: &str, t: &Trend, points: &[f64]) -> Block {
    let title: String = name
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || " ._()-/".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    // `12-02` for daily steps, `12-02 14:00` below a day.
    let labels: Vec<String> = t
        .covered
        .iter()
        .map(|at| {
            let h = Timestamp::from_unix(*at).human();
            let short = if t.step_s.is_multiple_of(86_400) {
                h.get(5..10)
            } else {
                h.get(5..16)
            };
            format!("\"{}\"", short.unwrap_or(&h))
        })
        .collect();
    let values: Vec<String> = points.iter().map(|v| number(*v)).collect();
    Block::Fence {
        info: "mermaid".into(),
        lines: vec![
            "xychart-beta".into(),
            format!("    title \"GPUs requested: {title}\""),
            format!("    x-axis [{}]", labels.join(", ")),
            "    y-axis \"GPUs\"".into(),
            format!("    line [{}]", values.join(", ")),
        ],
    }
}
