//! The period cost and outcomes are counted over: the asked window, or the part of it OpenCost's
//! answer really covers.
//!
//! OpenCost answers for the window it is asked about whatever it holds: a store that only has the
//! last six hours returns six hours of cost for a 24-hour window, and a per-step answer with a step
//! missing returns three steps' cost for four. Divided by a full window's outcomes, that is a cost
//! per outcome four times or a third too low. So the answer's own times are read (each allocation's
//! `start`/`end`, its `window`, `minutes`: [`crate::live::opencost::Coverage`]); when they leave
//! more of the window uncovered than a scrape's slack ([`SLACK_S`], or 1% of a long window), the
//! cost is partial, the covered share is stated, and outcomes (records prorated by their overlap,
//! counters read over the covered spans), outside costs and rates are counted over the covered
//! spans only — never a short cost over a long count.

use std::time::Duration;

use crate::live::http::duration_text;
use crate::live::opencost::{CostData, OpenCostError, Window};
use crate::util::number::{Digits, percent};

/// Uncovered time below this (or 1% of the window, whichever is more) is the resolution of
/// OpenCost's own queries, not a gap.
pub const SLACK_S: i64 = 300;

/// What cost and outcomes are counted over.
#[derive(Debug, Clone, PartialEq)]
pub struct Covered {
    /// Disjoint `[start, end)` spans, Unix seconds, oldest first: the window itself unless the
    /// cost is partial.
    pub spans: Vec<(i64, i64)>,
    /// Their hours.
    pub hours: f64,
    /// When less than the window is covered: the covered share and the sentence that says so.
    pub partial: Option<(f64, String)>,
}

/// See the module documentation. Without an OpenCost answer (none asked, or it failed), the
/// window.
pub fn covered(window: Window, opencost: Option<&Result<CostData, OpenCostError>>) -> Covered {
    let whole = Covered {
        spans: vec![(window.start.unix(), window.end.unix())],
        hours: window.hours(),
        partial: None,
    };
    let Some(Ok(data)) = opencost else {
        return whole;
    };
    let c = &data.coverage;
    // An answer that says nothing about time (every allocation undated) cannot be judged.
    if c.spans.is_empty() && c.undated > 0 {
        return whole;
    }
    let asked = window.seconds();
    let seen = c.seconds();
    if asked - seen <= SLACK_S.max(asked / 100) {
        return whole;
    }
    #[allow(clippy::cast_precision_loss)]
    let share = if asked > 0 {
        seen as f64 / asked as f64
    } else {
        0.0
    };
    let spans: Vec<(i64, i64)> = c.spans.iter().map(|(s, e)| (s.unix(), e.unix())).collect();
    let shown: Vec<String> = c.spans.iter().map(|(s, e)| format!("{s} to {e}")).collect();
    let hours = |secs: i64| duration_text(Duration::from_secs(u64::try_from(secs).unwrap_or(0)));
    let sentence = if spans.is_empty() {
        format!(
            "OpenCost's answer covers none of the {} window: it has no allocation in it",
            hours(asked)
        )
    } else {
        format!(
            "OpenCost's answer covers {} of the {} window ({}: {}); cost, outcomes and rates are counted over that part only",
            hours(seen),
            hours(asked),
            percent(share, Digits::Whole),
            shown.join(", ")
        )
    };
    #[allow(clippy::cast_precision_loss)]
    let covered_hours = seen as f64 / 3600.0;
    Covered {
        spans,
        hours: covered_hours,
        partial: Some((share, sentence)),
    }
}

/// The share of `[from, to)` inside `spans`, in seconds.
pub fn overlap(spans: &[(i64, i64)], from: i64, to: i64) -> i64 {
    spans
        .iter()
        .map(|(s, e)| (to.min(*e) - from.max(*s)).max(0))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::live::opencost::Coverage;
    use crate::util::date::Timestamp;

    fn answer(spans: &[(i64, i64)], undated: usize) -> Result<CostData, OpenCostError> {
        Ok(CostData {
            source: "http://opencost".into(),
            allocations: vec![],
            coverage: Coverage {
                spans: spans
                    .iter()
                    .map(|(s, e)| (Timestamp::from_unix(*s), Timestamp::from_unix(*e)))
                    .collect(),
                undated,
            },
            inference: Ok(None),
        })
    }

    #[test]
    fn the_window_unless_the_answer_leaves_a_gap() {
        let w = Window::ending(Timestamp::from_unix(86_400), Duration::from_secs(86_400));
        // No answer, an answer that says nothing about time, a gap within the slack: the window.
        for a in [
            None,
            Some(answer(&[], 3)),
            Some(answer(&[(0, 86_400 - 600)], 0)),
        ] {
            let c = covered(w, a.as_ref());
            assert_eq!((c.spans, c.partial), (vec![(0, 86_400)], None));
        }
        let c = covered(w, Some(&answer(&[(0, 3600), (7200, 10_800)], 0)));
        assert_eq!(c.spans, [(0, 3600), (7200, 10_800)]);
        assert!((c.hours - 2.0).abs() < 1e-12);
        let (share, why) = c.partial.unwrap();
        assert!((share - 2.0 / 24.0).abs() < 1e-12);
        assert!(
            why.starts_with("OpenCost's answer covers 2h of the 24h window (8%: "),
            "{why}"
        );
        // Nothing at all.
        let c = covered(w, Some(&answer(&[], 0)));
        assert_eq!((c.spans.len(), c.hours), (0, 0.0));
        assert!(c.partial.unwrap().1.contains("covers none"));
    }

    #[test]
    fn overlaps() {
        assert_eq!(overlap(&[(0, 10), (20, 30)], 5, 25), 10);
        assert_eq!(overlap(&[(0, 10)], 10, 20), 0);
        assert_eq!(overlap(&[], 0, 20), 0);
    }
}
