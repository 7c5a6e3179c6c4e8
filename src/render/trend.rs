//! The trend as people read it: the runway (when the free placeable GPUs run out at the measured
//! growth) and who grows fastest in the headline, where the history came from, then per tenant
//! (with each one's runway) and per product line the start, end, change, rate per week and peak;
//! on a terminal a sparkline per row, in markdown one mermaid line chart per view — all tenants on
//! one, all product lines on the other — in the pie's colours, from 0.

use crate::doc::{Block, Chart, Doc, MAX_LINES, Table, Text};
use crate::report::trend::{RunwayRow, RunwayVerdict, Source, Trend, TrendReport, TrendRow};
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

/// The verdict: how long the free GPUs last, who grows fastest, or why there is no trend.
pub fn headline(t: &Trend) -> Text {
    if let Some(why) = &t.unknown {
        return Text::new()
            .strong("Trend unknown")
            .plain(format!(": {why}."));
    }
    let mut text = runway_sentence(t);
    let fastest = t
        .fastest
        .as_ref()
        .and_then(|n| t.tenants.iter().find(|r| &r.name == n));
    text = match fastest {
        Some(r) => {
            let alone = t
                .runway
                .tenants
                .iter()
                .find(|x| x.name == r.name)
                .filter(|x| x.verdict == RunwayVerdict::RunsOut && t.runway.fleet.weeks != x.weeks)
                .and_then(|x| x.weeks)
                .map(|w| format!(" Alone, it would fill them in {}.", weeks(w)))
                .unwrap_or_default();
            text.plain(" Growing fastest: ")
                .strong(r.name.as_str())
                .plain(format!(
                    ", {} GPUs a week ({} → {} over {}).{alone}",
                    signed(r.per_week),
                    gpus(r.start),
                    gpus(r.end),
                    span(t)
                ))
        }
        None => text.plain(format!(" No tenant's GPUs grew over {}.", span(t))),
    };
    text
}

/// The fleet's runway in a sentence: "At +28 GPUs a week, the 89 free placeable GPUs last about
/// 3 weeks (until 2026-12-24)."
fn runway_sentence(t: &Trend) -> Text {
    let r = &t.runway;
    let free = r
        .free
        .map_or_else(|| "unknown".to_string(), |n| n.to_string());
    match r.fleet.verdict {
        RunwayVerdict::RunsOut => {
            let w = r.fleet.weeks.unwrap_or(0.0);
            let lead = Text::new().plain(format!(
                "At {} GPUs a week, the {free} free placeable GPUs ",
                signed(r.fleet.per_week)
            ));
            if w <= 0.0 {
                lead.strong("are already gone").plain(".")
            } else {
                lead.plain("last ")
                    .strong(format!("about {}", weeks(w)))
                    .plain(format!(
                        " (until {}).",
                        r.fleet.runs_out.map(day).unwrap_or_default()
                    ))
            }
        }
        RunwayVerdict::NotGrowing => Text::new()
            .plain(format!(
                "The fleet's GPUs are not growing ({} a week over {}): ",
                signed(r.fleet.per_week),
                span(t)
            ))
            .strong(if r.free.is_some() {
                format!("the {free} free placeable GPUs do not run out at this rate.")
            } else {
                "nothing runs out at this rate.".to_string()
            }),
        RunwayVerdict::Unknown => Text::new().strong("Runway unknown").plain(format!(
            ": {}.",
            r.unknown
                .as_deref()
                .unwrap_or("the free placeable GPUs are unknown")
        )),
    }
}

/// `3.2 weeks`, `12 weeks`, `5 days`.
fn weeks(w: f64) -> String {
    if w < 1.0 {
        let d = (w * 7.0).round().max(1.0);
        format!("{d:.0} day{}", if d == 1.0 { "" } else { "s" })
    } else if w < 10.0 {
        format!("{} weeks", number(w))
    } else {
        format!("{w:.0} weeks")
    }
}

/// A tenant's runway cell.
fn runway_cell(r: Option<&RunwayRow>) -> String {
    match r {
        Some(r) if r.verdict == RunwayVerdict::RunsOut => r.weeks.map_or_else(String::new, weeks),
        Some(r) if r.verdict == RunwayVerdict::NotGrowing => "not growing".into(),
        _ => "unknown".into(),
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
    let free = match (&t.runway.free_source, &t.runway.unknown) {
        (Some(from), None) => format!(" Free placeable GPUs from {from}."),
        _ => String::new(),
    };
    d.push(Block::Small(Text::new().emph(format!(
        "From {source}: {}; {} to {} in steps of {}; {} steps with data.{free}",
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
        let tenants = first == "tenant";
        // Busy GPUs are exported per tenant only.
        let busy = tenants && t.busy_unknown.is_none();
        let mut headers = vec![first, ">start", ">end", ">change", ">per week", ">peak"];
        if busy {
            headers.extend([">busy start", ">busy end"]);
        }
        let runway = tenants && t.unknown.is_none();
        if runway {
            headers.push("runway");
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
            if runway {
                row.push(runway_cell(t.runway.tenants.iter().find(|r| r.name == x.name)).into());
            }
            if terminal {
                row.push(spark(&x.points).into());
            }
            row
        });
        d.heading(3, title);
        if !terminal && t.unknown.is_none() {
            d.push(chart(first, t, rows));
        }
        d.push(Block::Table(table));
        if tenants && let Some(why) = &t.busy_unknown {
            d.push(Block::Small(
                Text::new().emph(format!("Busy GPUs unknown: {why}.")),
            ));
        }
        if runway {
            d.push(Block::Small(Text::new().emph(
                "Runway: how long the free placeable GPUs last if the tenant alone keeps growing at its rate.",
            )));
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

/// The most points a terminal sparkline shows: a longer history is sampled down to this many, so
/// the trend column fits an 80-column table.
const SPARK_POINTS: usize = 12;

/// The plan's sparkline, on whole GPUs, scaled to the row's own peak, of at most
/// [`SPARK_POINTS`] points (evenly spaced samples, the first and last always). A step without
/// GPUs is a no-break space, so a table cell never wraps inside the line.
fn spark(points: &[f64]) -> String {
    let n = points.len();
    let picked: Vec<f64> = if n <= SPARK_POINTS {
        points.to_vec()
    } else {
        (0..SPARK_POINTS)
            .filter_map(|k| points.get(k * (n - 1) / (SPARK_POINTS - 1)).copied())
            .collect()
    };
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let whole: Vec<u64> = picked.iter().map(|p| p.max(0.0).round() as u64).collect();
    super::plan::sparkline(&whole, 0).replace(' ', "\u{a0}")
}

/// One mermaid line chart of a view's rows: the seven largest now by name and the rest as one
/// "other" line (the pie's eight colours), at each step with data. Names are cluster text: the
/// markdown writer keeps only what mermaid cannot read as syntax.
fn chart(view: &str, t: &Trend, rows: &[TrendRow]) -> Block {
    // `view` is ours: `tenant` or `product line`.
    // `12-02` for daily steps, `12-02 14:00` below a day.
    let x: Vec<String> = t
        .covered
        .iter()
        .map(|at| {
            let h = Timestamp::from_unix(*at).human();
            let short = if t.step_s.is_multiple_of(86_400) {
                h.get(5..10)
            } else {
                h.get(5..16)
            };
            short.unwrap_or(&h).to_string()
        })
        .collect();
    const NAMED: usize = MAX_LINES - 1;
    let mut series: Vec<(String, Vec<f64>)> = rows
        .iter()
        .take(if rows.len() > NAMED + 1 {
            NAMED
        } else {
            rows.len()
        })
        .map(|r| (r.name.clone(), r.points.clone()))
        .collect();
    if rows.len() > NAMED + 1 {
        let mut other = vec![0.0; t.covered.len()];
        for r in rows.iter().skip(NAMED) {
            for (o, p) in other.iter_mut().zip(&r.points) {
                *o += p;
            }
        }
        series.push((format!("other ({})", rows.len() - NAMED), other));
    }
    Block::Chart(Chart::Lines {
        title: format!("GPUs requested per {view}"),
        x,
        y: "GPUs".into(),
        series,
    })
}
