//! Two configurations side by side: what each side of `cost --compare A B` names, each side's
//! figures from its cost row, and the verdict on whether the difference is real at this sample
//! size.
//!
//! A side is `[LABEL=]WORKLOAD[@START..END]`: two workloads (an A/B pair serving the same traffic)
//! over the report's window, or one workload over two windows around a change
//! (`before=ml/Deployment/chat@2026-12-01T00:00:00Z..2026-12-02T00:00:00Z after=…`).
//!
//! The verdict follows the product's rule for cost per verified outcome: a side below its quality
//! threshold is unsuitable whatever it costs, so it never "wins". Otherwise the sides are compared
//! by cost per 1,000 verified outcomes: when correctness was sampled, each has a Wilson 95%
//! interval and the difference is real only when the intervals do not overlap (a conservative
//! test: overlapping 95% intervals can still differ, but then the sample cannot say so); outcomes
//! counted one by one (`verified` in the records, a counter) have no sampling interval. A worse
//! latency objective or deadline attainment on the cheaper side is said after the verdict.
//! Pure: the rows, latency and attainment are passed in.

use crate::report::compare::{Compare, Side};
use crate::report::cost::CostRow;
use crate::report::deadlines::Attainment;
use crate::report::headroom::LatencyNow;
use crate::util::date::Timestamp;
use crate::util::number::{Digits, percent};

/// What one side of a comparison names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SideSpec {
    pub label: Option<String>,
    /// `namespace/Kind/name`, as gpuledger prints it.
    pub workload: String,
    pub window: Option<(Timestamp, Timestamp)>,
}

/// A side that does not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SideError {
    #[error("{0:?} names no workload: give namespace/Kind/name, as gpuledger prints it")]
    NoWorkload(String),
    #[error("{0:?}: the window must be START..END, two RFC 3339 instants")]
    Window(String),
    #[error("{0:?}: the window ends before it starts")]
    Backwards(String),
}

impl SideSpec {
    /// `[LABEL=]WORKLOAD[@START..END]`.
    pub fn parse(s: &str) -> Result<SideSpec, SideError> {
        let s = s.trim();
        let (label, rest) = match s.split_once('=') {
            Some((l, r)) if !l.contains('/') && !l.is_empty() => (Some(l.to_string()), r),
            _ => (None, s),
        };
        let (workload, window) = match rest.split_once('@') {
            Some((w, win)) => {
                let (from, to) = win
                    .split_once("..")
                    .ok_or_else(|| SideError::Window(s.to_string()))?;
                let t = |x: &str| Timestamp::parse(x).map_err(|_| SideError::Window(s.to_string()));
                let (from, to) = (t(from)?, t(to)?);
                if to <= from {
                    return Err(SideError::Backwards(s.to_string()));
                }
                (w, Some((from, to)))
            }
            None => (rest, None),
        };
        if workload.split('/').count() != 3 || workload.split('/').any(str::is_empty) {
            return Err(SideError::NoWorkload(s.to_string()));
        }
        Ok(SideSpec {
            label: label.clone(),
            workload: workload.to_string(),
            window,
        })
    }
}

/// One side's figures: its cost row over its window, the latency bounds and its deadline
/// attainment.
pub fn side(
    label: String,
    row: &CostRow,
    window: (Timestamp, Timestamp),
    hours: f64,
    latency: Vec<LatencyNow>,
    deadline_attainment: Option<Attainment>,
) -> Side {
    let mut s = Side {
        label,
        workload: row.name.clone(),
        window_start: window.0.to_string(),
        window_end: window.1.to_string(),
        window_hours: hours,
        total_cost: row.total_cost,
        cost_per_hour: row.total_cost.filter(|_| hours > 0.0).map(|c| c / hours),
        results: row.results,
        verified_outcomes: row.verified_outcomes,
        pass_rate: row.pass_rate,
        sample: row.sample,
        quality_threshold: row.quality_threshold,
        suitable: row.suitable,
        cost_per_1000: row.cost_per_1000,
        cost_per_1000_interval: row.cost_per_1000_interval,
        latency,
        deadline_attainment,
        unknown: row.unknown.clone(),
        partial: Default::default(),
    };
    if s.cost_per_hour.is_none() {
        let why = if s.total_cost.is_none() {
            "its cost is unknown"
        } else {
            "the cost covers none of its window"
        };
        s.unknown.set("cost_per_hour", why);
    }
    s
}

/// The comparison of `a` and `b` with its verdict.
pub fn compare(a: Side, b: Side) -> Compare {
    let (verdict, distinguishable, cheaper, saving) = judge(&a, &b);
    Compare {
        a,
        b,
        verdict,
        distinguishable,
        cheaper,
        saving,
    }
}

/// The range a side's cost per 1,000 may lie in: its interval when sampled, else its point.
fn range(s: &Side) -> Option<[f64; 2]> {
    s.cost_per_1000_interval
        .or_else(|| s.cost_per_1000.map(|c| [c, c]))
}

fn pct(share: f64) -> String {
    percent(share, Digits::Whole)
}

type Verdict = (String, Option<bool>, Option<String>, Option<f64>);

fn judge(a: &Side, b: &Side) -> Verdict {
    let unsuitable = |s: &Side| {
        let rate = s.pass_rate.map(pct).unwrap_or_else(|| "unknown".into());
        let threshold = s.quality_threshold.map(pct).unwrap_or_default();
        format!(
            "{} is unsuitable: pass rate {rate} below its quality threshold {threshold}",
            s.label
        )
    };
    match (a.suitable == Some(false), b.suitable == Some(false)) {
        (true, true) => {
            return (
                format!(
                    "Neither keeps outcomes: {}; {}",
                    unsuitable(a),
                    unsuitable(b)
                ),
                None,
                None,
                None,
            );
        }
        (true, false) | (false, true) => {
            let (bad, good) = if a.suitable == Some(false) {
                (a, b)
            } else {
                (b, a)
            };
            return (
                format!(
                    "{} keeps outcomes, whatever either costs: {}",
                    good.label,
                    unsuitable(bad)
                ),
                None,
                None,
                None,
            );
        }
        (false, false) => {}
    }
    let (Some(ra), Some(rb)) = (range(a), range(b)) else {
        let missing = if range(a).is_none() { a } else { b };
        let why = missing
            .unknown
            .get("cost_per_1000")
            .or_else(|| missing.unknown.get("total_cost"))
            .or_else(|| missing.unknown.get("verified_outcomes"))
            .map(String::as_str)
            .unwrap_or("unknown");
        return (
            format!(
                "Cannot compare: {}'s cost per 1,000 verified outcomes is unknown ({why})",
                missing.label
            ),
            None,
            None,
            None,
        );
    };
    let sampled = a.cost_per_1000_interval.is_some() || b.cost_per_1000_interval.is_some();
    let n = [a.sample, b.sample].into_iter().flatten().min();
    let overlap = ra[0] <= rb[1] && rb[0] <= ra[1];
    let mid = |r: [f64; 2], s: &Side| s.cost_per_1000.unwrap_or((r[0] + r[1]) / 2.0);
    let (ca, cb) = (mid(ra, a), mid(rb, b));
    let (cheap, dear, cc, cd) = if cb < ca {
        (b, a, cb, ca)
    } else {
        (a, b, ca, cb)
    };
    let saving = (cd > 0.0).then(|| 1.0 - cc / cd);
    if overlap && (sampled || ca == cb) {
        let why = match n {
            Some(n) if sampled => format!("n = {n}"),
            _ => "the same cost per 1,000 verified outcomes".into(),
        };
        let line = if sampled {
            format!(
                "Not distinguishable yet: {why}, the intervals of cost per 1,000 verified outcomes overlap"
            )
        } else {
            format!("Not distinguishable: {why}")
        };
        return (line, Some(false), None, saving);
    }
    let how = if sampled {
        "intervals do not overlap"
    } else {
        "outcomes counted one by one, no sampling interval"
    };
    let mut line = format!(
        "{} keeps outcomes at {} less cost: {how}",
        cheap.label,
        saving.map(pct).unwrap_or_else(|| "unknown".into())
    );
    for caveat in caveats(cheap, dear) {
        line.push_str("; ");
        line.push_str(&caveat);
    }
    (line, Some(true), Some(cheap.label.clone()), saving)
}

/// What the cheaper side does worse: a latency bound it misses that the other meets, a lower
/// deadline attainment.
fn caveats(cheap: &Side, dear: &Side) -> Vec<String> {
    let mut out = Vec::new();
    for l in cheap.latency.iter().filter(|l| l.met == Some(false)) {
        let other = dear.latency.iter().find(|d| d.bound == l.bound);
        if other.is_none_or(|d| d.met != Some(false)) {
            let now = l
                .now_ms
                .map(|m| format!(" ({m:.0} ms)"))
                .unwrap_or_default();
            out.push(format!("but {} misses {}{now}", cheap.label, l.bound));
        }
    }
    let att = |s: &Side| s.deadline_attainment.as_ref().and_then(|d| d.attainment);
    if let (Some(x), Some(y)) = (att(cheap), att(dear))
        && x < y
    {
        out.push(format!(
            "but {} meets fewer deadlines ({} against {})",
            cheap.label,
            pct(x),
            pct(y)
        ));
    }
    out
}

#[cfg(test)]
mod tests;
