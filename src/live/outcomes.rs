//! Outcomes from the application, never guessed: a Prometheus counter a workload names in its
//! intent (`gpuledger.io/outcomes-metric`), or an outcome-records file (`--outcomes FILE`).
//!
//! The counter is a metric selector (`eval_results_total{verdict="pass",job="eval"}`) of verified
//! results; gpuledger asks for `sum(increase(SELECTOR[W]))` at the end of the cost window, so
//! that it counts the same window the cost covers. A counter with no series is unknown, not zero.
//!
//! An outcome-records file is JSON lines, or CSV with a header naming the same fields: `workload`
//! (`namespace/Kind/name`, as gpuledger prints it), `start` and `end` (RFC 3339: the period the
//! record covers), `results` (final results delivered, each once), and either `verified` (results
//! that met the quality threshold and the deadline) or `on_time`, `sample` and `sample_passed`
//! (correctness from a reviewed sample). A line that does not read is a [`LineProblem`] naming
//! `file:line`; every other line is kept, and the analysis leaves the workload the bad line names
//! unknown rather than under-count it.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;

use super::http::duration_text;
use super::range::{Range, RangeError};
use crate::util::date::{DateError, Timestamp};

/// How many verified outcomes one record says, and how they are known.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Verified {
    /// Counted: every result was checked.
    Counted(f64),
    /// From a reviewed sample: `on_time` results met the deadline, and `passed` of `sample`
    /// reviewed ones met the quality threshold.
    Sampled {
        on_time: f64,
        sample: u64,
        passed: u64,
    },
}

/// One line of an outcome-records file.
#[derive(Debug, Clone, PartialEq)]
pub struct OutcomeRecord {
    pub workload: String,
    pub start: Timestamp,
    pub end: Timestamp,
    pub results: f64,
    pub verified: Verified,
    /// `file:line`
    pub at: String,
}

/// A line that does not read.
#[derive(Debug, Clone, PartialEq)]
pub struct LineProblem {
    /// `file:line`
    pub at: String,
    /// The workload the line names, when that much could be read.
    pub workload: Option<String>,
    pub message: String,
}

impl std::fmt::Display for LineProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.at, self.message)
    }
}

/// Why one line of an outcome-records file does not read: the [`LineProblem`]'s message.
#[derive(Debug, thiserror::Error)]
enum RecordError {
    #[error("{0}")]
    Json(#[from] serde_json::Error),
    #[error("{cells} cells where the header has {columns} columns")]
    Cells { cells: usize, columns: usize },
    #[error("{name}: {value:?} is not a number")]
    NotANumber { name: String, value: String },
    #[error("{name} is {value}: a count is a number of at least 0")]
    NotACount { name: &'static str, value: f64 },
    #[error("{name} is {value}: a sample is a whole number")]
    NotWhole { name: &'static str, value: f64 },
    #[error("workload: expected namespace/Kind/name, as gpuledger prints it")]
    Workload,
    #[error("{0} is missing")]
    Missing(&'static str),
    #[error("{name}: {source}")]
    Time {
        name: &'static str,
        #[source]
        source: DateError,
    },
    #[error("end {end} is not after start {start}")]
    EndNotAfterStart { start: Timestamp, end: Timestamp },
    /// A part (`verified`, `on_time`) above the whole (`results`), or `sample_passed` above
    /// `sample`.
    #[error("{part} ({value}) is more than {whole} ({of})")]
    MoreThan {
        part: &'static str,
        value: String,
        whole: &'static str,
        of: String,
    },
    #[error("give either verified, or on_time with sample and sample_passed, not both")]
    Both,
    #[error("verified is missing (or on_time, sample and sample_passed for a sampled review)")]
    NoVerified,
}

/// The records of one file and the lines that did not read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OutcomeFile {
    pub path: String,
    pub records: Vec<OutcomeRecord>,
    pub problems: Vec<LineProblem>,
}

/// A record's fields as text or numbers, before they are checked.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawRecord {
    workload: Option<String>,
    start: Option<String>,
    end: Option<String>,
    results: Option<f64>,
    verified: Option<f64>,
    on_time: Option<f64>,
    sample: Option<f64>,
    sample_passed: Option<f64>,
}

const FIELDS: [&str; 8] = [
    "workload",
    "start",
    "end",
    "results",
    "verified",
    "on_time",
    "sample",
    "sample_passed",
];

/// Reads an outcome-records file's text: JSON lines when the first line that says anything opens
/// an object, CSV with a header otherwise. Blank lines are skipped.
pub fn parse(text: &str, file: &str) -> OutcomeFile {
    let mut out = OutcomeFile {
        path: file.to_string(),
        ..OutcomeFile::default()
    };
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty());
    let Some((first_no, first)) = lines.next() else {
        return out;
    };
    let mut push = |no: usize, raw: Result<RawRecord, RecordError>| {
        let at = format!("{file}:{no}");
        let named = raw.as_ref().ok().and_then(|r| r.workload.clone());
        match raw.and_then(|r| check(r, &at)) {
            Ok(r) => out.records.push(r),
            Err(e) => out.problems.push(LineProblem {
                at,
                workload: named,
                message: e.to_string(),
            }),
        }
    };
    if first.starts_with('{') {
        for (no, line) in std::iter::once((first_no, first)).chain(lines) {
            push(
                no,
                serde_json::from_str::<RawRecord>(line).map_err(RecordError::from),
            );
        }
        return out;
    }
    let header: Vec<String> = csv_cells(first)
        .into_iter()
        .map(|h| h.to_lowercase())
        .collect();
    if let Some(bad) = header.iter().find(|h| !FIELDS.contains(&h.as_str())) {
        out.problems.push(LineProblem {
            at: format!("{file}:{first_no}"),
            workload: None,
            message: format!(
                "unknown column {bad:?} in the CSV header (expected {})",
                FIELDS.join(", ")
            ),
        });
        return out;
    }
    for (no, line) in lines {
        push(no, csv_record(&header, line));
    }
    out
}

/// Splits a CSV line: commas, with `"…"` quoting (`""` inside is a quote).
fn csv_cells(line: &str) -> Vec<String> {
    let mut cells = Vec::new();
    let mut cell = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                cell.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            ',' if !quoted => cells.push(std::mem::take(&mut cell).trim().to_string()),
            c => cell.push(c),
        }
    }
    cells.push(cell.trim().to_string());
    cells
}

fn csv_record(header: &[String], line: &str) -> Result<RawRecord, RecordError> {
    let cells = csv_cells(line);
    if cells.len() != header.len() {
        return Err(RecordError::Cells {
            cells: cells.len(),
            columns: header.len(),
        });
    }
    let mut r = RawRecord::default();
    for (name, value) in header.iter().zip(cells) {
        if value.is_empty() {
            continue;
        }
        let num = || {
            value.parse::<f64>().map_err(|_| RecordError::NotANumber {
                name: name.clone(),
                value: value.clone(),
            })
        };
        match name.as_str() {
            "workload" => r.workload = Some(value.clone()),
            "start" => r.start = Some(value.clone()),
            "end" => r.end = Some(value.clone()),
            "results" => r.results = Some(num()?),
            "verified" => r.verified = Some(num()?),
            "on_time" => r.on_time = Some(num()?),
            "sample" => r.sample = Some(num()?),
            "sample_passed" => r.sample_passed = Some(num()?),
            _ => {}
        }
    }
    Ok(r)
}

/// A count: finite and not negative.
fn count(name: &'static str, v: f64) -> Result<f64, RecordError> {
    if v.is_finite() && v >= 0.0 {
        Ok(v)
    } else {
        Err(RecordError::NotACount { name, value: v })
    }
}

/// A whole count (a sample size).
fn whole(name: &'static str, v: f64) -> Result<u64, RecordError> {
    let v = count(name, v)?;
    if v.fract() != 0.0 || v > 1e15 {
        return Err(RecordError::NotWhole { name, value: v });
    }
    Ok(v as u64)
}

fn check(r: RawRecord, at: &str) -> Result<OutcomeRecord, RecordError> {
    let workload = r
        .workload
        .filter(|w| w.split('/').count() == 3 && w.split('/').all(|p| !p.is_empty()))
        .ok_or(RecordError::Workload)?;
    let time = |name: &'static str, v: Option<String>| {
        let v = v.ok_or(RecordError::Missing(name))?;
        Timestamp::parse(&v).map_err(|source| RecordError::Time { name, source })
    };
    let (start, end) = (time("start", r.start)?, time("end", r.end)?);
    if end.seconds_since(start) <= 0 {
        return Err(RecordError::EndNotAfterStart { start, end });
    }
    let results = count("results", r.results.ok_or(RecordError::Missing("results"))?)?;
    let more = |part, value: f64, whole, of: f64| RecordError::MoreThan {
        part,
        value: value.to_string(),
        whole,
        of: of.to_string(),
    };
    let sampled = (r.on_time, r.sample, r.sample_passed);
    let verified = match (r.verified, sampled) {
        (Some(v), (None, None, None)) => {
            let v = count("verified", v)?;
            if v > results {
                return Err(more("verified", v, "results", results));
            }
            Verified::Counted(v)
        }
        (None, (Some(on_time), Some(sample), Some(passed))) => {
            let on_time = count("on_time", on_time)?;
            let (sample, passed) = (whole("sample", sample)?, whole("sample_passed", passed)?);
            if on_time > results {
                return Err(more("on_time", on_time, "results", results));
            }
            if passed > sample {
                return Err(RecordError::MoreThan {
                    part: "sample_passed",
                    value: passed.to_string(),
                    whole: "sample",
                    of: sample.to_string(),
                });
            }
            Verified::Sampled {
                on_time,
                sample,
                passed,
            }
        }
        (Some(_), _) => return Err(RecordError::Both),
        (None, _) => return Err(RecordError::NoVerified),
    };
    Ok(OutcomeRecord {
        workload,
        start,
        end,
        results,
        verified,
        at: at.to_string(),
    })
}

/// Where the outcome counters are.
#[derive(Clone)]
pub struct CounterSource {
    pub url: String,
    pub bearer_token: Option<String>,
    pub timeout: Duration,
}

// By hand, so that the token never reaches a log line through `{:?}`.
impl std::fmt::Debug for CounterSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CounterSource")
            .field("url", &self.url)
            .field(
                "bearer_token",
                &self.bearer_token.as_ref().map(|_| "<redacted>"),
            )
            .finish()
    }
}

/// The PromQL for the increase of `selector` over `seconds`.
pub fn counter_query(selector: &str, seconds: u64) -> String {
    let w = duration_text(Duration::from_secs(seconds));
    format!("sum(increase({}[{w}]))", selector.trim())
}

/// Whether the text can be a counter selector: a metric name with optional label matchers (a
/// subquery over anything else would not be a counter's increase).
pub fn is_selector(s: &str) -> bool {
    let s = s.trim();
    let name_end = s.find('{').unwrap_or(s.len());
    let name = s.get(..name_end).unwrap_or_default();
    let name_ok = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
        && !name.starts_with(|c: char| c.is_ascii_digit());
    let rest = s.get(name_end..).unwrap_or_default();
    name_ok && (rest.is_empty() || (rest.starts_with('{') && rest.ends_with('}')))
}

/// Why a counter gives no count; the cost report shows the workload's outcomes as unknown with
/// it.
#[derive(Debug, thiserror::Error)]
pub enum CounterError {
    /// The Prometheus could not be asked at all (every selector fails the same way).
    #[error("{0}")]
    Client(String),
    #[error(transparent)]
    Query(#[from] RangeError),
    #[error(
        "{selector:?} is not a counter selector (a metric name with optional {{label matchers}})"
    )]
    NotASelector { selector: String },
    #[error("no series for `{query}` in {base}")]
    NoSeries { query: String, base: String },
    #[error("`{query}` is not a count")]
    NotACount { query: String },
    /// The cost covers none of the window, so there is no period to count outcomes over.
    #[error(
        "OpenCost's answer covers none of the window: there is no period to count outcomes over"
    )]
    NoPeriod,
}

/// The increase of each selector over the window ending at `end`, by selector: `Err` with the
/// reason for a selector that failed or has no series.
pub async fn counters(
    src: &CounterSource,
    selectors: &[String],
    end: Timestamp,
    seconds: u64,
) -> BTreeMap<String, Result<f64, CounterError>> {
    let mut out = BTreeMap::new();
    let prom = match Range::new(&src.url, src.bearer_token.as_deref(), src.timeout) {
        Ok(c) => c,
        Err(e) => {
            for s in selectors {
                out.insert(s.clone(), Err(CounterError::Client(e.to_string())));
            }
            return out;
        }
    };
    let time = end.unix();
    for s in selectors {
        let result = if is_selector(s) {
            let query = counter_query(s, seconds);
            one(&prom, &query, time).await
        } else {
            Err(CounterError::NotASelector {
                selector: s.clone(),
            })
        };
        out.insert(s.clone(), result);
    }
    out
}

async fn one(prom: &Range, query: &str, time: i64) -> Result<f64, CounterError> {
    let series = prom.instant(query, time).await?;
    let Some(sample) = series.first() else {
        return Err(CounterError::NoSeries {
            query: query.to_string(),
            base: prom.shown_url().to_string(),
        });
    };
    // A non-finite answer has no sample left: not a count.
    sample
        .samples
        .first()
        .map(|(_, v)| *v)
        .filter(|v| *v >= 0.0)
        .ok_or_else(|| CounterError::NotACount {
            query: query.to_string(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_lines_and_csv_read_the_same() {
        let json = r#"{"workload":"eval/Job/grade","start":"2026-12-02T11:00:00Z","end":"2026-12-02T12:00:00Z","results":1000,"verified":990}

{"workload":"eval/Job/grade","start":"2026-12-02T11:00:00Z","end":"2026-12-02T12:00:00Z","results":100,"on_time":95,"sample":40,"sample_passed":38}
"#;
        let csv = "workload,start,end,results,verified,on_time,sample,sample_passed\n\
eval/Job/grade,2026-12-02T11:00:00Z,2026-12-02T12:00:00Z,1000,990,,,\n\
\"eval/Job/grade\",2026-12-02T11:00:00Z,2026-12-02T12:00:00Z,100,,95,40,38\n";
        let a = parse(json, "o.jsonl");
        let b = parse(csv, "o.csv");
        assert!(
            a.problems.is_empty() && b.problems.is_empty(),
            "{a:?} {b:?}"
        );
        assert_eq!(a.records.len(), 2);
        for (x, y) in a.records.iter().zip(&b.records) {
            assert_eq!((x.results, x.verified), (y.results, y.verified));
        }
        assert_eq!(a.records[1].at, "o.jsonl:3");
        assert_eq!(
            a.records[1].verified,
            Verified::Sampled {
                on_time: 95.0,
                sample: 40,
                passed: 38
            }
        );
    }

    #[test]
    fn a_bad_line_names_file_and_line_and_the_rest_is_kept() {
        let text = "workload,start,end,results,verified\n\
a/Job/x,2026-12-02T11:00:00Z,2026-12-02T12:00:00Z,10,9\n\
a/Job/y,2026-12-02T11:00:00Z,2026-12-02T12:00:00Z,10,11\n\
a/Job/z,yesterday,2026-12-02T12:00:00Z,10,9\n";
        let f = parse(text, "o.csv");
        assert_eq!(f.records.len(), 1);
        assert_eq!(f.problems.len(), 2);
        assert_eq!(
            f.problems[0].to_string(),
            "o.csv:3: verified (11) is more than results (10)"
        );
        assert_eq!(f.problems[0].workload.as_deref(), Some("a/Job/y"));
        assert!(f.problems[1].to_string().starts_with("o.csv:4: start:"));
        let f = parse("{\"workload\":\"a/Job/x\",\"oops\":1}\n", "o.jsonl");
        assert!(f.problems[0].message.contains("unknown field"), "{f:?}");
        let f = parse("workload,when\n", "o.csv");
        assert!(f.problems[0].message.contains("unknown column"), "{f:?}");
    }

    #[test]
    fn selectors() {
        assert!(is_selector("eval_results_total"));
        assert!(is_selector(r#"eval_results_total{verdict="pass"}"#));
        assert!(!is_selector("rate(x[5m])"));
        assert!(!is_selector(""));
        assert_eq!(
            counter_query("x_total{a=\"b\"}", 3600),
            "sum(increase(x_total{a=\"b\"}[1h]))"
        );
    }
}
