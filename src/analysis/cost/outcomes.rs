//! Outcomes per workload: outcome records prorated by their overlap with the window, or the
//! counter a workload names; verified outcomes (with the Wilson interval of a reviewed sample),
//! the pass rate against the quality threshold, and cost per 1,000 verified outcomes.
//!
//! A verified outcome met the quality threshold and the deadline. The records say which results
//! passed (`passing`); a workload whose pass rate is below its quality threshold is unsuitable,
//! and then none of its results is a verified outcome: it has 0, known, and its cost buys none.

use super::inputs::CostInputs;
use crate::live::outcomes::Verified;
use crate::report::cost::CostRow;

/// z for a two-sided 95% interval.
const Z95: f64 = 1.959_963_984_540_054;

/// The Wilson score interval of `passed` of `n` at 95%; `None` for an empty sample.
pub fn wilson(passed: u64, n: u64) -> Option<(f64, f64)> {
    if n == 0 || passed > n {
        return None;
    }
    let (x, n) = (passed as f64, n as f64);
    let p = x / n;
    let z2 = Z95 * Z95;
    let centre = (x + z2 / 2.0) / (n + z2);
    let half = Z95 * n.sqrt() / (n + z2) * (p * (1.0 - p) + z2 / (4.0 * n)).sqrt();
    Some(((centre - half).max(0.0), (centre + half).min(1.0)))
}

/// The records and counters, by workload.
pub(super) struct Outcomes<'a> {
    inputs: &'a CostInputs<'a>,
    /// What outcomes are counted over ([`super::Covered::spans`]).
    spans: Vec<(i64, i64)>,
}

/// What the records of one workload add up to in the window.
#[derive(Default)]
struct Tally {
    records: usize,
    overlapping: usize,
    results: f64,
    counted: f64,
    counted_results: f64,
    on_time: f64,
    sample: u64,
    passed: u64,
}

impl<'a> Outcomes<'a> {
    pub(super) fn new(inputs: &'a CostInputs<'a>, spans: Vec<(i64, i64)>) -> Outcomes<'a> {
        Outcomes { inputs, spans }
    }

    fn tally(&self, id: &str) -> Tally {
        let mut t = Tally::default();
        let Some(f) = self.inputs.records else {
            return t;
        };
        for r in f.records.iter().filter(|r| r.workload == id) {
            t.records += 1;
            let span = r.end.seconds_since(r.start) as f64;
            let inside = super::coverage::overlap(&self.spans, r.start.unix(), r.end.unix());
            if inside <= 0 || span <= 0.0 {
                continue;
            }
            t.overlapping += 1;
            // A record is prorated by the share of its period inside the window (or the part of
            // it the cost covers).
            let share = inside as f64 / span;
            t.results += r.results * share;
            match r.verified {
                Verified::Counted(v) => {
                    t.counted += v * share;
                    t.counted_results += r.results * share;
                }
                Verified::Sampled {
                    on_time,
                    sample,
                    passed,
                } => {
                    t.on_time += on_time * share;
                    t.sample = t.sample.saturating_add(sample);
                    t.passed = t.passed.saturating_add(passed);
                }
            }
        }
        t
    }

    /// Fills the outcome figures of a workload row whose cost is already set.
    pub(super) fn fill(
        &self,
        row: &mut CostRow,
        selector: Option<&str>,
        min_sample: u64,
        hours: f64,
    ) {
        let id = row.name.clone();
        let bad: Vec<String> = self
            .inputs
            .records
            .map(|f| {
                f.problems
                    .iter()
                    .filter(|p| p.workload.as_deref() == Some(id.as_str()))
                    .map(ToString::to_string)
                    .collect()
            })
            .unwrap_or_default();
        if !bad.is_empty() {
            row.unknown.insert(
                "verified_outcomes".into(),
                format!("a record of it does not read: {}", bad.join("; ")),
            );
            return;
        }
        let t = self.tally(&id);
        if t.records > 0 {
            row.outcome_source = Some("records".into());
            if t.overlapping == 0 {
                row.unknown.insert(
                    "verified_outcomes".into(),
                    "none of its records overlaps the window".into(),
                );
                return;
            }
            row.results = Some(t.results);
            let interval = (t.sample > 0).then(|| wilson(t.passed, t.sample)).flatten();
            let p_hat = (t.sample > 0).then(|| t.passed as f64 / t.sample as f64);
            let sampled = t.on_time > 0.0 || t.sample > 0;
            let point = t.counted + t.on_time * p_hat.unwrap_or(0.0);
            if sampled {
                row.sample = Some(t.sample);
                row.sample_passed = Some(t.passed);
                match interval {
                    Some((lo, hi)) => {
                        row.verified_interval =
                            Some([t.counted + t.on_time * lo, t.counted + t.on_time * hi]);
                    }
                    None => {
                        row.unknown.insert(
                            "verified_outcomes".into(),
                            "its on-time results were reviewed in a sample of 0".into(),
                        );
                        return;
                    }
                }
            }
            let enough = !sampled || t.sample >= min_sample;
            if enough {
                row.verified_outcomes = Some(point);
                row.pass_rate = if t.counted_results > 0.0 && !sampled {
                    Some(t.counted / t.counted_results)
                } else if sampled && t.counted_results == 0.0 {
                    p_hat
                } else if t.results > 0.0 {
                    Some(point / t.results)
                } else {
                    None
                };
            } else {
                let why = format!(
                    "a reviewed sample of {} is below the minimum of {min_sample} (cost.min_sample): only the interval is given",
                    t.sample
                );
                row.unknown.insert("verified_outcomes".into(), why.clone());
                row.unknown.insert("pass_rate".into(), why);
            }
            self.suitability(row, interval, sampled, enough);
            row.passing = row.verified_outcomes;
            if row.suitable == Some(false) {
                // Verified means the work met its quality threshold: below it, none of its results
                // is a verified outcome, whatever each passed. Its cost stays, buying nothing.
                row.verified_outcomes = Some(0.0);
                row.verified_interval = None;
                row.unknown.remove("verified_outcomes");
            }
        } else if let Some(sel) = selector {
            row.outcome_source = Some("counter".into());
            match self.inputs.counters.get(sel) {
                Some(Ok(v)) => row.verified_outcomes = Some(*v),
                Some(Err(e)) => {
                    row.unknown
                        .insert("verified_outcomes".into(), e.to_string());
                }
                None => {
                    row.unknown.insert(
                        "verified_outcomes".into(),
                        format!("its counter {sel} was not read: give --prometheus URL"),
                    );
                }
            }
            row.unknown.insert(
                "pass_rate".into(),
                "a counter gives verified outcomes only, not the results they were judged among"
                    .into(),
            );
            row.unknown.insert(
                "suitable".into(),
                "no pass rate to hold against the quality threshold".into(),
            );
        } else {
            row.unknown.insert(
                "verified_outcomes".into(),
                "no outcome source: no record in --outcomes and no gpuledger.io/outcomes-metric"
                    .into(),
            );
        }
        per_hour_and_cost(row, hours);
    }

    fn suitability(
        &self,
        row: &mut CostRow,
        interval: Option<(f64, f64)>,
        sampled: bool,
        enough: bool,
    ) {
        let Some(threshold) = row.quality_threshold else {
            row.unknown.insert(
                "suitable".into(),
                "no quality threshold in its intent (gpuledger.io/quality-threshold)".into(),
            );
            return;
        };
        row.suitable = match (row.pass_rate, interval) {
            (Some(p), _) if enough => Some(p >= threshold),
            (_, Some((lo, hi))) if sampled => {
                if hi < threshold {
                    Some(false)
                } else if lo >= threshold {
                    Some(true)
                } else {
                    None
                }
            }
            _ => None,
        };
        if row.suitable.is_none() {
            row.unknown.insert(
                "suitable".into(),
                format!("the pass rate's interval straddles the quality threshold {threshold}"),
            );
        }
    }
}

/// Verified outcomes per hour, and cost per 1,000 of them with its interval.
pub(super) fn per_hour_and_cost(row: &mut CostRow, hours: f64) {
    if hours > 0.0 {
        row.verified_per_hour = row.verified_outcomes.map(|v| v / hours);
    }
    let Some(cost) = row.total_cost else {
        if row.verified_outcomes.is_some() || row.verified_interval.is_some() {
            row.unknown
                .insert("cost_per_1000".into(), "its cost is unknown".into());
        }
        return;
    };
    match row.verified_outcomes {
        Some(v) if v > 0.0 => row.cost_per_1000 = Some(cost / v * 1000.0),
        Some(_) if row.suitable == Some(false) => {
            row.unknown.insert(
                "cost_per_1000".into(),
                "unsuitable: below its quality threshold none of its results is a verified outcome, so its cost buys none".into(),
            );
        }
        Some(_) => {
            row.unknown.insert(
                "cost_per_1000".into(),
                "no verified outcome in the window: all of its cost bought nothing that counts"
                    .into(),
            );
        }
        None => {}
    }
    if let Some([lo, hi]) = row.verified_interval {
        if lo > 0.0 {
            row.cost_per_1000_interval = Some([cost / hi * 1000.0, cost / lo * 1000.0]);
        } else {
            row.unknown.insert(
                "cost_per_1000_interval".into(),
                "the interval's low end has no verified outcome: the cost per outcome is unbounded above".into(),
            );
        }
    }
}
