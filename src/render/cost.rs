//! Cost per verified outcome as blocks: the headline "allocated → busy → valuable" per tenant and
//! per workload, then the cost itself (by tenant, product line and workload, with the rules that
//! assigned idle, shared and outside costs), the pods of no live workload, OpenCost's cost per
//! million tokens, and why each unknown figure is unknown.
//!
//! A workload below its quality threshold shows as unsuitable in place of its cost per outcome in
//! the headline: a cheaper wrong answer is not a bargain. Its cost stays in the cost tables.

use super::page::{self, FOLD, money};
use crate::doc::{Alert, Block, Doc, Table, Text};
use crate::report::cost::{Cost, CostRow, Decision};
use crate::report::{Headroom, HeadroomRow, Report};
use crate::util::date::Timestamp;

/// `gpuledger cost`: the title, where and when, then the section.
pub fn cost_doc(r: &Report) -> Doc {
    let mut d = Doc::new();
    d.heading(
        2,
        page::title("Cost per verified outcome", r.provenance.as_ref()),
    );
    if let Some(b) = page::banner(r) {
        d.push(b);
    }
    if let Some(x) = &r.compare {
        d.extend(super::compare::section(x));
        return d;
    }
    match &r.cost {
        Some(c) => {
            super::provenance::lead(&mut d, r.provenance.as_ref(), Block::Paragraph(summary(c)));
            d.extend(body(c, r.headroom.as_ref()));
        }
        None => d.paragraph("No cost or outcome input was given (--opencost, --outcomes)."),
    }
    if let Some(x) = &r.deadlines {
        d.extend(super::deadlines::section(x, "Deadline attainment"));
    }
    d
}

/// The section inventory appends when cost inputs were given.
pub fn section(c: &Cost, headroom: Option<&Headroom>) -> Doc {
    let mut d = Doc::new();
    d.heading(3, "Cost per verified outcome");
    d.push(Block::Paragraph(summary(c)));
    d.extend(body(c, headroom));
    d
}

/// `$412.50 over the 1h to 2026-12-02 12:00 UTC from OpenCost at URL; outcomes from …`
fn summary(c: &Cost) -> Text {
    let end =
        Timestamp::parse(&c.window_end).map_or_else(|_| c.window_end.clone(), Timestamp::human);
    let mut t = Text::new()
        .strong(money(c.total_cost))
        .plain(format!(" over the {}h to {end}", trim(c.window_hours)));
    t = match &c.source {
        Some(s) => t.plain(" from OpenCost at ").code(s.as_str()),
        None => t.plain(" (cost unknown)"),
    };
    t = if c.outcome_sources.is_empty() {
        t.plain("; no outcome source.")
    } else {
        t.plain(format!(
            "; outcomes from {}.",
            c.outcome_sources.join(" and ")
        ))
    };
    t
}

fn body(c: &Cost, headroom: Option<&Headroom>) -> Doc {
    let mut d = Doc::new();
    if !c.problems.is_empty() {
        let mut lines = vec![Text::new().strong("Outcome records that do not read").plain(
            ": the workloads they name have unknown outcomes; every other record is counted.",
        )];
        lines.extend(c.problems.iter().map(|p| Text::from(p.as_str())));
        d.push(Block::Alert {
            kind: Alert::Caution,
            lines,
        });
    }
    if let Some(why) = c.unknown.get("total_cost") {
        d.push(Block::Quote(vec![
            Text::new().plain("Cost is unknown: ").plain(why.as_str()),
        ]));
    }
    if let Some(why) = c.partial.get("total_cost") {
        d.push(Block::Alert {
            kind: Alert::Warning,
            lines: vec![Text::new().strong("Partial: ").plain(why.as_str())],
        });
    }
    d.extend(headline(c, headroom));
    if !c.rules.is_empty() {
        d.paragraph(Text::new().strong("How costs were assigned"));
        d.push(Block::List(
            c.rules.iter().map(|r| Text::from(r.as_str())).collect(),
        ));
    }
    if c.source.is_some() {
        d.section(
            "Cost by tenant",
            breakdown_table("tenant", &c.tenants, Tail::Groups(c)),
            Some(FOLD),
        );
        if c.product_lines.iter().any(|p| p.name != "(none)") {
            d.section(
                "Cost by product line",
                breakdown_table("product line", &c.product_lines, Tail::Groups(c)),
                Some(FOLD),
            );
        }
        d.section(
            "Cost by workload",
            breakdown_table("workload", &c.workloads, Tail::Workloads(c)),
            Some(FOLD),
        );
        d.section(
            "Pods of no live workload (finished jobs, pods without GPUs), by namespace",
            Table::new(&["namespace", "tenant", ">cost"]).rows(&c.other, |o| {
                vec![
                    o.namespace.as_str().into(),
                    o.tenant.as_str().into(),
                    money(o.total_cost).into(),
                ]
            }),
            Some(FOLD),
        );
    }
    d.section(
        "Inference cost per model (OpenCost)",
        Table::new(&[
            "model",
            "namespace",
            "basis",
            ">cost",
            ">tokens",
            ">per 1M tokens",
        ])
        .rows(&c.inference, |x| {
            vec![
                x.model.as_str().into(),
                x.namespace.as_deref().unwrap_or("").into(),
                x.cost_basis.as_deref().unwrap_or("").into(),
                money(x.total_cost).into(),
                x.total_tokens
                    .map_or("unknown".into(), |t| format!("{t:.0}"))
                    .into(),
                money(x.cost_per_million_tokens).into(),
            ]
        }),
        None,
    );
    let reasons = reasons(c);
    if !reasons.is_empty() {
        d.push(Block::Details {
            summary: Text::from(format!("Why figures are unknown ({})", reasons.len())),
            body: vec![Block::List(reasons)],
        });
    }
    d
}

/// The decision first, then allocated → busy → valuable, per tenant and per workload.
pub fn headline(c: &Cost, headroom: Option<&Headroom>) -> Doc {
    let mut d = Doc::new();
    if !c.workloads.is_empty() {
        d.paragraph(decision(&c.decision));
    }
    let table = |first: &str, rows: &[CostRow], workloads: bool| {
        Table::new(&[
            first,
            ">GPUs requested",
            ">GPUs busy",
            ">verified/h",
            ">cost per 1,000 verified",
            ">95% interval",
            ">headroom",
        ])
        .rows(rows, |r| {
            vec![
                r.name.as_str().into(),
                r.gpus_requested.to_string().into(),
                r.gpus_busy
                    .map_or("unknown".into(), |b| b.to_string())
                    .into(),
                r.verified_per_hour
                    .map_or_else(|| "unknown".into(), rate)
                    .into(),
                per_1000(r, workloads),
                interval(r.cost_per_1000_interval).into(),
                headroom_cell(r, workloads, headroom).into(),
            ]
        })
    };
    d.section(
        "Allocated → busy → valuable, per tenant",
        table("tenant", &c.tenants, false),
        None,
    );
    d.section(
        "Allocated → busy → valuable, per workload",
        table("workload", &c.workloads, true),
        Some(FOLD),
    );
    if headroom.is_none() {
        d.paragraph(Text::new().emph(
            "Headroom is unknown: no load test or serving metrics were read (gpuledger headroom, or inventory with --repo and --prometheus).",
        ));
    }
    let unsuitable: Vec<Text> = c
        .workloads
        .iter()
        .filter(|w| w.suitable == Some(false))
        .map(|w| {
            let why = match (w.pass_rate, w.quality_threshold, w.verified_interval) {
                (Some(p), Some(t), _) => {
                    format!(": pass rate {} is below its quality threshold {}", page::percent_trimmed(p), page::percent_trimmed(t))
                }
                (None, Some(t), Some(_)) => format!(
                    ": even the top of its pass rate's 95% interval is below its quality threshold {}",
                    page::percent_trimmed(t)
                ),
                _ => String::new(),
            };
            let passing = match w.passing {
                Some(p) if p > 0.0 && c.window_hours > 0.0 => format!(
                    " Its {} passing results/h are not verified outcomes.",
                    rate(p / c.window_hours)
                ),
                _ => String::new(),
            };
            Text::new()
                .code(w.name.as_str())
                .plain(" is ")
                .strong("unsuitable")
                .plain(format!("{why}, whatever it costs.{passing}"))
        })
        .collect();
    if !unsuitable.is_empty() {
        d.push(Block::Quote(unsuitable));
    }
    d
}

/// A row's serving headroom (the headroom section's figure, joined by name): a workload's own, or
/// for a tenant the tightest of its serving workloads', with how many are unknown. `—` where no
/// serving workload is concerned; `unknown` when headroom was not computed (no load test, no
/// Prometheus: the headroom section says why).
fn headroom_cell(r: &CostRow, workload: bool, headroom: Option<&Headroom>) -> String {
    let Some(h) = headroom else {
        return "unknown".into();
    };
    let rows: Vec<&HeadroomRow> = h
        .workloads
        .iter()
        .filter(|w| {
            if workload {
                format!("{}/{}/{}", w.namespace, w.kind, w.name) == r.name
            } else {
                w.tenant == r.name
            }
        })
        .collect();
    if rows.is_empty() {
        return "—".into();
    }
    let known: Vec<f64> = rows.iter().filter_map(|w| w.headroom).collect();
    let unknown = rows.len() - known.len();
    let tightest = known
        .iter()
        .copied()
        .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.min(v))));
    match (tightest, unknown) {
        (None, _) => "unknown".into(),
        (Some(v), 0) => page::percent_trimmed(v),
        (Some(v), n) => format!("{} ({n} unknown)", page::percent_trimmed(v)),
    }
}

/// The cost per 1,000 verified outcomes, or, for a workload, the verdict that outranks it (a
/// tenant's figure stays: the note under the table names its unsuitable work).
fn per_1000(r: &CostRow, workload: bool) -> Text {
    if workload && r.suitable == Some(false) {
        return Text::new().strong("unsuitable");
    }
    match r.cost_per_1000 {
        Some(v) => Text::from(money(Some(v))),
        None if r.cost_per_1000_interval.is_some() => Text::from("interval only"),
        None => Text::from("unknown"),
    }
}

/// `Cheapest verified outcome: … at $2.43 per 1,000; dearest: …. Unsuitable whatever it costs: ….`
fn decision(d: &Decision) -> Text {
    let mut t = Text::new();
    match (&d.cheapest, &d.dearest) {
        (Some(lo), Some(hi)) if lo.workload != hi.workload => {
            t = t
                .strong("Cheapest verified outcome")
                .plain(": ")
                .code(lo.workload.as_str())
                .plain(format!(" at {} per 1,000; ", money(Some(lo.cost_per_1000))))
                .strong("dearest")
                .plain(": ")
                .code(hi.workload.as_str())
                .plain(format!(" at {} per 1,000.", money(Some(hi.cost_per_1000))));
        }
        (Some(one), _) => {
            t = t
                .strong("One verified outcome is priced")
                .plain(": ")
                .code(one.workload.as_str())
                .plain(format!(" at {} per 1,000.", money(Some(one.cost_per_1000))));
        }
        _ => t = t.strong("No verified outcome has a known cost."),
    }
    let names = |mut t: Text, names: &[String]| {
        for (i, n) in names.iter().enumerate() {
            if i > 0 {
                t = t.plain(", ");
            }
            t = t.code(n.as_str());
        }
        t.plain(".")
    };
    if !d.unsuitable.is_empty() {
        t = names(
            t.plain(" ")
                .strong("Unsuitable")
                .plain(" whatever it costs: "),
            &d.unsuitable,
        );
    }
    if !d.unpriced.is_empty() {
        t = names(t.plain(" Cost per verified outcome unknown: "), &d.unpriced);
    }
    t
}

/// What closes a cost table so that its column adds up to the total.
enum Tail<'a> {
    /// Tenants or product lines: the cost no row carries, then the total.
    Groups(&'a Cost),
    /// Workloads: also the pods of no live workload and the outside costs that name a tenant.
    Workloads(&'a Cost),
}

/// The cost breakdown of `rows`, closed by the lines that make its column add up to the total.
fn breakdown_table(first: &str, rows: &[CostRow], tail: Tail<'_>) -> Table {
    let mut table = Table::new(&[
        first,
        ">total",
        ">GPU",
        ">CPU",
        ">RAM",
        ">idle",
        ">shared",
        ">other",
        ">GPU-hours",
    ])
    .rows(rows, |r| {
        let b = &r.breakdown;
        let name = if r.name == "(none)" && first == "product line" {
            "no product line"
        } else {
            r.name.as_str()
        };
        let other = [b.pv, b.network, b.load_balancer, b.external]
            .into_iter()
            .try_fold(0.0, |s, x| Some(s + x?));
        vec![
            name.into(),
            money(r.total_cost).into(),
            money(b.gpu).into(),
            money(b.cpu).into(),
            money(b.ram).into(),
            money(b.idle).into(),
            money(b.shared).into(),
            money(other).into(),
            r.gpu_hours
                .map_or("unknown".into(), |h| format!("{h:.1}"))
                .into(),
        ]
    });
    let blank = || Text::from("");
    let line = |name: Text, cost: Option<f64>| {
        let mut cells = vec![name, money(cost).into()];
        cells.extend(std::iter::repeat_with(blank).take(7));
        cells
    };
    let c = match tail {
        Tail::Groups(c) => c,
        Tail::Workloads(c) => {
            if !c.other.is_empty() {
                let other = c
                    .other
                    .iter()
                    .map(|o| o.total_cost)
                    .try_fold(0.0, |s, x| Some(s + x?));
                table.row(line(Text::from("pods of no live workload"), other));
            }
            if c.tenant_external_cost != 0.0 {
                table.row(line(
                    Text::from("outside costs that name a tenant"),
                    Some(c.tenant_external_cost),
                ));
            }
            c
        }
    };
    {
        for u in &c.unassigned {
            table.row(line(
                Text::from(format!("not assigned: {}", u.what)),
                u.cost,
            ));
        }
        table.row(line(Text::new().strong("total"), c.total_cost));
    }
    table
}

/// One line per unknown figure of a row: `team-a: verified outcomes: no outcome source …`.
fn reasons(c: &Cost) -> Vec<Text> {
    let mut out = Vec::new();
    for (kind, rows) in [
        ("tenant", &c.tenants),
        ("product line", &c.product_lines),
        ("workload", &c.workloads),
    ] {
        for r in rows {
            for (field, why) in &r.unknown {
                // A group has no pass rate of its own by design: the JSON says so, the page
                // need not.
                if kind != "workload" && field == "pass_rate" {
                    continue;
                }
                out.push(
                    Text::new()
                        .plain(format!("{kind} "))
                        .code(r.name.as_str())
                        .plain(format!(": {}: {why}", field.replace('_', " "))),
                );
            }
        }
    }
    for (field, why) in c.unknown.iter().filter(|(f, _)| f.as_str() != "total_cost") {
        out.push(Text::from(format!("{}: {why}", field.replace('_', " "))));
    }
    if let Some(why) = &c.inference_unknown {
        out.push(Text::from(format!("inference cost per model: {why}")));
    }
    out
}

/// `$1.98–$2.07`, or empty without an interval.
fn interval(v: Option<[f64; 2]>) -> String {
    match v {
        Some([lo, hi]) => format!("{}–{}", money(Some(lo)), money(Some(hi))),
        None => String::new(),
    }
}

/// `990`, `12.5`, `0.25`: whole above 100, else with what it takes.
fn rate(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// `1`, `1.5`: hours without trailing zeros.
fn trim(v: f64) -> String {
    let s = format!("{v:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn serving(ns: &str, name: &str, tenant: &str, headroom: Option<f64>) -> HeadroomRow {
        HeadroomRow {
            namespace: ns.into(),
            kind: "Deployment".into(),
            name: name.into(),
            tenant: tenant.into(),
            headroom,
            ..HeadroomRow::default()
        }
    }

    fn row(name: &str) -> CostRow {
        CostRow {
            name: name.into(),
            ..CostRow::default()
        }
    }

    #[test]
    fn headroom_joins_workloads_by_name_and_gives_a_tenant_its_tightest() {
        let h = Headroom {
            workloads: vec![
                serving("chat", "chat", "assistant", Some(0.494)),
                serving("chat", "summarize", "assistant", Some(-0.099)),
                serving("chat", "rerank", "assistant", None),
            ],
            ..Headroom::default()
        };
        let cell = |name: &str, workload: bool| headroom_cell(&row(name), workload, Some(&h));
        assert_eq!(cell("chat/Deployment/chat", true), "49.4%");
        assert_eq!(cell("chat/Deployment/rerank", true), "unknown");
        // Batch work has no serving headroom: not unknown, not applicable.
        assert_eq!(cell("eval/Job/grade", true), "—");
        assert_eq!(cell("assistant", false), "-9.9% (1 unknown)");
        assert_eq!(cell("research", false), "—");
        // Headroom not computed at all: unknown (the note under the table says why).
        assert_eq!(headroom_cell(&row("research"), false, None), "unknown");
    }
}
