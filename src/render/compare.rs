//! Two configurations side by side as blocks: the verdict leads, then one table with a column per
//! side (window, cost, verified outcomes, cost per 1,000 with its interval, pass rate against the
//! threshold, latency against the objective, deadline attainment), then why figures are unknown.

use super::page::{money, percent_whole};
use crate::doc::{Block, Doc, Table, Text};
use crate::report::compare::{Compare, Side};
use crate::util::date::Timestamp;

pub fn section(c: &Compare) -> Doc {
    let mut d = Doc::new();
    d.paragraph(Text::new().strong(c.verdict.as_str()));
    let (a, b) = (&c.a, &c.b);
    let mut t = Table::new(&["", a.label.as_str(), b.label.as_str()]);
    let mut row = |what: &str, f: &dyn Fn(&Side) -> String| {
        t.row(vec![Text::from(what), f(a).into(), f(b).into()]);
    };
    row("workload", &|s| s.workload.clone());
    row("window", &|s| {
        format!("{} – {}", human(&s.window_start), human(&s.window_end))
    });
    row("cost", &|s| money(s.total_cost));
    row("cost per hour", &|s| money(s.cost_per_hour));
    row("results", &|s| number(s.results));
    row("verified outcomes", &|s| number(s.verified_outcomes));
    row("pass rate / threshold", &|s| {
        let rate = s
            .pass_rate
            .map_or_else(|| "unknown".to_string(), percent_whole);
        let mut out = match s.quality_threshold {
            Some(q) => format!("{rate} / {}", percent_whole(q)),
            None => rate,
        };
        if let Some(n) = s.sample {
            out.push_str(&format!(" (n = {n})"));
        }
        if s.suitable == Some(false) {
            out.push_str(": unsuitable");
        }
        out
    });
    row("cost per 1,000 verified", &|s| {
        let point = money(s.cost_per_1000);
        match s.cost_per_1000_interval {
            Some([lo, hi]) => format!("{point} ({}–{})", money(Some(lo)), money(Some(hi))),
            None => point,
        }
    });
    row("latency", &|s| {
        if s.latency.is_empty() {
            return "unknown".into();
        }
        s.latency
            .iter()
            .map(|l| {
                let now = l
                    .now_ms
                    .map_or_else(|| "unknown".to_string(), |m| format!("{m:.0} ms"));
                let mark = match l.met {
                    Some(true) => "met",
                    Some(false) => "missed",
                    None => "unknown",
                };
                format!("{}: {now} ({mark})", l.bound)
            })
            .collect::<Vec<_>>()
            .join(", ")
    });
    row("deadline attainment", &|s| match &s.deadline_attainment {
        Some(x) => match x.attainment {
            Some(v) => format!("{} ({} of {} runs)", percent_whole(v), x.met, x.runs),
            None => "unknown".into(),
        },
        None => "no deadline".into(),
    });
    d.push(Block::Table(t));
    for s in [a, b] {
        for (field, why) in s.unknown.iter() {
            d.push(Block::Small(Text::from(format!(
                "{} {field}: {why}",
                s.label
            ))));
        }
    }
    d
}

fn number(v: Option<f64>) -> String {
    v.map_or_else(|| "unknown".to_string(), |x| format!("{x:.0}"))
}

fn human(s: &str) -> String {
    Timestamp::parse(s).map_or_else(|_| s.to_string(), Timestamp::human)
}
