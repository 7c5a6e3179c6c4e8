//! The tested-capacity rule, applied to a load test as read: among the runs that report every
//! bound's percentile, a known error share at most the limit and a sustained rate, the highest
//! rate of a run that met every bound. Pure, like `live::serving`'s quantiles: it reads nothing,
//! and it sits beside the load-test shape so that the rule and the fields it reads change
//! together.

use serde::Serialize;

use super::types::{LoadTest, Run, key};
use crate::intent::LatencyBound;

/// The tested capacity: the highest sustained rate of a run that met the objective.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Capacity {
    /// Requests per second the run completed.
    pub rps: f64,
    /// The run it came from (`rate 8 req/s`).
    pub run: String,
    /// Runs that met the objective, of the runs judged.
    pub runs_met: usize,
    pub runs: usize,
}

/// Why a load test gives no capacity; the report shows it as the reason the capacity is unknown.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NoCapacity {
    #[error("no latency objective (gpuledger.io/latency-objective) to test against")]
    NoObjective,
    #[error("{file} does not report {metric} latency")]
    NotReported { file: String, metric: String },
    /// `reported` lists the percentiles of the metric the file has (`ttft_p95, ttft_p99`).
    #[error("{file} reports {reported} but not {wanted} (percentiles are never interpolated)")]
    NotInterpolated {
        file: String,
        reported: String,
        wanted: String,
    },
    /// `lowest` is the run at the lowest load and why it missed (`rate 2 req/s: ttft_p95 …`).
    #[error("no run of {file} met the objective (lowest load, {lowest})")]
    NotMet { file: String, lowest: String },
    #[error("no run of {file} records its request throughput")]
    NoThroughput { file: String },
}

/// Applies the tested-capacity rule: among the runs that report every bound's percentile, a known
/// error share at most `error_limit` and a sustained rate, the highest rate of a run that met every
/// bound. `Err` says why there is no capacity (no objective, a percentile the file lacks, no run
/// that met it).
pub fn capacity(
    lt: &LoadTest,
    objective: &[LatencyBound],
    error_limit: f64,
) -> Result<Capacity, NoCapacity> {
    if objective.is_empty() {
        return Err(NoCapacity::NoObjective);
    }
    let mut best: Option<(f64, &Run)> = None;
    let mut met = 0;
    let mut missing: Option<NoCapacity> = None;
    // The run that came closest when none met it: the lowest rate judged.
    let mut lowest: Option<(f64, String)> = None;
    for run in &lt.runs {
        let Some(rps) = run.achieved_rps else {
            continue;
        };
        let mut why_not = None;
        for b in objective {
            let k = key(&b.metric, f64::from(b.percentile));
            match run.latency_ms.get(&k) {
                None => {
                    let have: Vec<&str> = run
                        .latency_ms
                        .keys()
                        .filter(|x| x.starts_with(&format!("{}_p", b.metric)))
                        .map(String::as_str)
                        .collect();
                    missing = Some(if have.is_empty() {
                        NoCapacity::NotReported {
                            file: lt.file.clone(),
                            metric: b.metric.clone(),
                        }
                    } else {
                        NoCapacity::NotInterpolated {
                            file: lt.file.clone(),
                            reported: have.join(", "),
                            wanted: k,
                        }
                    });
                    why_not = Some(String::new());
                    break;
                }
                Some(ms) if *ms > b.max_ms => {
                    why_not.get_or_insert(format!("{k} {} ms > {} ms", trim(*ms), trim(b.max_ms)));
                }
                Some(_) => {}
            }
        }
        match run.error_share() {
            None => {
                why_not.get_or_insert("its error count is not recorded".into());
            }
            Some(e) if e > error_limit => {
                why_not.get_or_insert(format!(
                    "{:.1}% of requests failed (limit {:.1}%)",
                    e * 100.0,
                    error_limit * 100.0
                ));
            }
            Some(_) => {}
        }
        match why_not {
            None => {
                met += 1;
                if best.is_none_or(|(r, _)| rps > r) {
                    best = Some((rps, run));
                }
            }
            Some(w) if !w.is_empty() => {
                if lowest.as_ref().is_none_or(|(r, _)| rps < *r) {
                    lowest = Some((rps, format!("{}: {w}", run.offered)));
                }
            }
            Some(_) => {}
        }
    }
    let judged = lt.runs.iter().filter(|r| r.achieved_rps.is_some()).count();
    match best {
        Some((rps, run)) => Ok(Capacity {
            rps,
            run: run.offered.to_string(),
            runs_met: met,
            runs: judged,
        }),
        None => Err(match (lowest, missing) {
            (Some((_, w)), _) => NoCapacity::NotMet {
                file: lt.file.clone(),
                lowest: w,
            },
            (None, Some(m)) => m,
            (None, None) => NoCapacity::NoThroughput {
                file: lt.file.clone(),
            },
        }),
    }
}

/// `410`, `0.5`: a figure as a person writes it.
fn trim(x: f64) -> String {
    let s = format!("{x:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}
