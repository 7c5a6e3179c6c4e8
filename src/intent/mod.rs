//! Workload intent: what a workload says it needs, in Git — a deadline, the earliest start, the
//! expected runtime, whether it may be interrupted, a quality threshold, a latency objective, what
//! counts as a valuable outcome.
//!
//! Intent is read from `gpuledger.io/*` annotations on the workload's root object, and from
//! `intent:` rules in `.gpuledger.yaml` for charts whose annotations the team does not control (an
//! annotation wins over a rule, key by key). Start flexibility (earliest start … deadline − runtime)
//! and interruption tolerance are kept apart: a job that may wait to start may still have to run in
//! one piece. Keys the ecosystem already has (Kueue's max exec time, a Job's
//! `activeDeadlineSeconds`, Cluster Autoscaler's safe-to-evict, Karpenter's do-not-disrupt, Volcano
//! and KAI preemptibility) are read as [`Facts`] for [`lint`], never duplicated.
//!
//! A value that does not parse is a [`Problem`] beside the intent, never a silent default.

pub mod lint;

use serde::Serialize;

use crate::k8s::types::{LabelMap, Labels};
use crate::util::date::{DateError, Timestamp};

pub const PREFIX: &str = "gpuledger.io/";

/// The intent keys, without the prefix, in the order reports list them.
pub const KEYS: [&str; 9] = [
    "deadline",
    "earliest-start",
    "runtime",
    "interruptible",
    "quality-threshold",
    "latency-objective",
    "outcome",
    "load-test",
    "outcomes-metric",
];

/// When results are needed.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Deadline {
    /// An instant, RFC 3339 UTC.
    At(Timestamp),
    /// For a CronJob: this long after each scheduled start.
    AfterStart { after_scheduled_start_s: u64 },
}

/// One latency bound: `ttft_p95<=500ms`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LatencyBound {
    /// `ttft`, `itl`, `tpot`, `e2e`.
    pub metric: String,
    pub percentile: u8,
    pub max_ms: f64,
}

/// A workload's declared intent. Every field is optional; a workload declares intent when any is
/// set.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Intent {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deadline: Option<Deadline>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub earliest_start: Option<Timestamp>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runtime_s: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interruptible: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quality_threshold: Option<f64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub latency_objective: Vec<LatencyBound>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load_test: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcomes_metric: Option<String>,
}

impl Intent {
    pub fn is_empty(&self) -> bool {
        *self == Intent::default()
    }
}

/// A value that does not parse, with its key (as written, with the prefix for an annotation).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    pub key: String,
    pub value: String,
    pub message: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {:?} {}", self.key, self.value, self.message)
    }
}

/// What kind of work a workload is, for the lints that apply to it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WorkClass {
    /// Runs to completion: Job, CronJob, training jobs, RayJob, JobSet.
    Batch,
    /// Serves requests: Deployment, StatefulSet, LeaderWorkerSet, Dynamo graph, KServe, RayService.
    Serving,
    #[default]
    Other,
}

impl WorkClass {
    pub fn of(kind: &str) -> WorkClass {
        match kind {
            "Job" | "CronJob" | "PyTorchJob" | "TFJob" | "MPIJob" | "XGBoostJob" | "PaddleJob"
            | "JAXJob" | "TrainJob" | "RayJob" | "JobSet" => WorkClass::Batch,
            "Deployment"
            | "StatefulSet"
            | "LeaderWorkerSet"
            | "DynamoGraphDeployment"
            | "InferenceService"
            | "LLMInferenceService"
            | "RayService" => WorkClass::Serving,
            _ => WorkClass::Other,
        }
    }
}

/// What the workload's own object says elsewhere that bears on its intent: the keys the ecosystem
/// already has.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Facts {
    pub class: WorkClass,
    pub cron: bool,
    /// `cluster-autoscaler.kubernetes.io/safe-to-evict`.
    pub safe_to_evict: Option<bool>,
    /// `karpenter.sh/do-not-disrupt: "true"`.
    pub do_not_disrupt: bool,
    /// `volcano.sh/preemptable`.
    pub volcano_preemptable: Option<bool>,
    /// `kai.scheduler/preemptibility` (label).
    pub kai_preemptibility: Option<String>,
    /// `kueue.x-k8s.io/max-exec-time-seconds` (label).
    pub max_exec_time_s: Option<u64>,
    /// A Job's (or CronJob's job template's) `spec.activeDeadlineSeconds`.
    pub active_deadline_s: Option<u64>,
}

impl Facts {
    /// Reads the ecosystem keys from the root object's annotations and labels (and its pod
    /// template's labels, where KAI and Kueue put theirs).
    pub fn read(
        kind: &str,
        annotations: &LabelMap,
        labels: &LabelMap,
        template_labels: Option<&LabelMap>,
        active_deadline_s: Option<u64>,
    ) -> Facts {
        let get = |k: &str| {
            annotations
                .get(k)
                .or_else(|| labels.get(k))
                .or_else(|| template_labels.and_then(|l| l.get(k)))
                .map(|v| v.trim())
        };
        let flag = |k: &str| get(k).and_then(|v| v.parse::<bool>().ok());
        Facts {
            class: WorkClass::of(kind),
            cron: kind == "CronJob",
            safe_to_evict: flag("cluster-autoscaler.kubernetes.io/safe-to-evict"),
            do_not_disrupt: flag("karpenter.sh/do-not-disrupt") == Some(true),
            volcano_preemptable: flag("volcano.sh/preemptable"),
            kai_preemptibility: get("kai.scheduler/preemptibility").map(str::to_string),
            max_exec_time_s: get("kueue.x-k8s.io/max-exec-time-seconds")
                .and_then(|v| v.parse().ok()),
            active_deadline_s,
        }
    }
}

/// Why one intent value does not read; the message follows the value (`"tomorrow" is not a time:
/// …`), as [`Problem`] shows it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
enum ValueError {
    #[error("is not a time: {0}")]
    NotATime(#[source] DateError),
    #[error(
        "is neither a time (RFC 3339) nor, for a CronJob, a duration after each scheduled start ({0})"
    )]
    NeitherTimeNorDuration(#[source] DurationError),
    #[error(transparent)]
    Duration(#[from] DurationError),
    #[error("is not a runtime: it must be longer than zero")]
    ZeroRuntime,
    #[error("is not true or false")]
    NotABool,
    #[error("is not a fraction (e.g. 0.98)")]
    NotAFraction,
    #[error("is not a fraction between 0 and 1")]
    FractionRange,
    #[error("{0:?} is not a latency bound such as ttft_p95<=500ms (metrics ttft, itl, tpot, e2e)")]
    NotALatencyBound(String),
    #[error("is empty")]
    Empty,
}

/// A duration that does not read as one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    #[error("{0:?} is not a duration such as 30m or 1h30m")]
    NotADuration(String),
    #[error("{0:?} is longer than a hundred years")]
    TooLong(String),
}

/// Parses intent from `gpuledger.io/*` annotations, then fills the keys they leave unset from
/// `rule` (the first matching `intent:` rule's values, by key without the prefix).
pub fn read(
    annotations: &Labels,
    rule: Option<(&str, &std::collections::BTreeMap<String, String>)>,
    cron: bool,
) -> (Intent, Vec<Problem>) {
    let mut intent = Intent::default();
    let mut problems = Vec::new();
    for key in KEYS {
        // The value as written, and where it came from (`gpuledger.io/deadline` for an
        // annotation, `intent[0].deadline` for a rule).
        let annotation = format!("{PREFIX}{key}");
        let (at, value) = match annotations.get(&annotation) {
            Some(v) => (annotation, v),
            None => match rule.and_then(|(at, r)| r.get(key).map(|v| (at, v))) {
                Some((at, v)) => (format!("{at}.{key}"), v),
                None => continue,
            },
        };
        if let Err(e) = set(&mut intent, key, value, cron) {
            problems.push(Problem {
                key: at,
                value: value.clone(),
                message: e.to_string(),
            });
        }
    }
    (intent, problems)
}

fn set(intent: &mut Intent, key: &str, v: &str, cron: bool) -> Result<(), ValueError> {
    let v = v.trim();
    match key {
        "deadline" => {
            intent.deadline = Some(match Timestamp::parse(v) {
                Ok(t) => Deadline::At(t),
                Err(e) if !cron => return Err(ValueError::NotATime(e)),
                Err(_) => Deadline::AfterStart {
                    after_scheduled_start_s: duration(v)
                        .map_err(ValueError::NeitherTimeNorDuration)?,
                },
            })
        }
        "earliest-start" => {
            intent.earliest_start = Some(Timestamp::parse(v).map_err(ValueError::NotATime)?)
        }
        "runtime" => {
            let s = duration(v)?;
            if s == 0 {
                return Err(ValueError::ZeroRuntime);
            }
            intent.runtime_s = Some(s)
        }
        "interruptible" => {
            intent.interruptible = Some(v.parse::<bool>().map_err(|_| ValueError::NotABool)?)
        }
        "quality-threshold" => {
            let q: f64 = v.parse().map_err(|_| ValueError::NotAFraction)?;
            if !(0.0..=1.0).contains(&q) {
                return Err(ValueError::FractionRange);
            }
            intent.quality_threshold = Some(q)
        }
        "latency-objective" => intent.latency_objective = latency(v)?,
        "outcome" => intent.outcome = non_empty(v)?,
        "load-test" => intent.load_test = non_empty(v)?,
        "outcomes-metric" => intent.outcomes_metric = non_empty(v)?,
        _ => {}
    }
    Ok(())
}

fn non_empty(v: &str) -> Result<Option<String>, ValueError> {
    if v.is_empty() {
        return Err(ValueError::Empty);
    }
    Ok(Some(v.to_string()))
}

/// A duration as Kubernetes tools write them (Go's `time.ParseDuration` without the sub-second
/// units): `90s`, `30m`, `1h30m`, `1.5h`. Whole seconds.
pub fn duration(v: &str) -> Result<u64, DurationError> {
    let bad = || DurationError::NotADuration(v.to_string());
    let mut rest = v.trim();
    if rest.is_empty() {
        return Err(bad());
    }
    let mut total = 0f64;
    while !rest.is_empty() {
        let n_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(bad)?;
        let (n, tail) = rest.split_at(n_end);
        let n: f64 = n.parse().map_err(|_| bad())?;
        let u_end = tail
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(tail.len());
        let (unit, tail) = tail.split_at(u_end);
        let secs = match unit {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 0.001,
            _ => return Err(bad()),
        };
        total += n * secs;
        rest = tail;
    }
    if !total.is_finite() || total > 100.0 * 365.0 * 86_400.0 {
        return Err(DurationError::TooLong(v.to_string()));
    }
    Ok(total.round() as u64)
}

/// `ttft_p95<=500ms,itl_p95<=50ms`, `e2e_p99<=2s`.
fn latency(v: &str) -> Result<Vec<LatencyBound>, ValueError> {
    let mut out = Vec::new();
    for part in v.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let bad = || ValueError::NotALatencyBound(part.to_string());
        let (lhs, rhs) = part.split_once("<=").ok_or_else(bad)?;
        let (metric, pct) = lhs.trim().split_once("_p").ok_or_else(bad)?;
        if !matches!(metric, "ttft" | "itl" | "tpot" | "e2e") {
            return Err(bad());
        }
        let percentile: u8 = pct
            .parse()
            .ok()
            .filter(|p| (1..=100).contains(p))
            .ok_or_else(bad)?;
        let rhs = rhs.trim();
        let max_ms = match rhs.strip_suffix("ms") {
            Some(n) => n.parse::<f64>().map_err(|_| bad())?,
            None => rhs
                .strip_suffix('s')
                .and_then(|n| n.parse::<f64>().ok())
                .map(|s| s * 1000.0)
                .ok_or_else(bad)?,
        };
        if !(max_ms.is_finite() && max_ms > 0.0) {
            return Err(bad());
        }
        out.push(LatencyBound {
            metric: metric.to_string(),
            percentile,
            max_ms,
        });
    }
    if out.is_empty() {
        return Err(ValueError::Empty);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ann(pairs: &[(&str, &str)]) -> Labels {
        pairs
            .iter()
            .map(|(k, v)| (format!("{PREFIX}{k}"), v.to_string()))
            .collect()
    }

    #[test]
    fn durations_as_kubernetes_tools_write_them() {
        for (v, s) in [
            ("90s", 90),
            ("30m", 1800),
            ("1h30m", 5400),
            ("1.5h", 5400),
            ("2h", 7200),
        ] {
            assert_eq!(duration(v), Ok(s), "{v}");
        }
        for v in ["", "forever", "1d", "h", "10", "1h30", "-1h"] {
            assert!(duration(v).is_err(), "{v}");
        }
    }

    #[test]
    fn every_key_parses_and_bad_values_are_problems() {
        let (i, p) = read(
            &ann(&[
                ("deadline", "2026-12-02T17:00:00Z"),
                ("earliest-start", "2026-12-02T12:00:00Z"),
                ("runtime", "1h"),
                ("interruptible", "true"),
                ("quality-threshold", "0.98"),
                (
                    "latency-objective",
                    "ttft_p95<=500ms, itl_p95<=50ms,e2e_p99<=2s",
                ),
                ("outcome", "a merged eval report"),
            ]),
            None,
            false,
        );
        assert!(p.is_empty(), "{p:?}");
        assert_eq!(i.runtime_s, Some(3600));
        assert_eq!(i.interruptible, Some(true));
        assert_eq!(i.latency_objective.len(), 3);
        assert_eq!(i.latency_objective[2].max_ms, 2000.0);
        assert_eq!(
            i.deadline,
            Some(Deadline::At(
                Timestamp::parse("2026-12-02T17:00:00Z").unwrap()
            ))
        );

        let (i, p) = read(
            &ann(&[
                ("runtime", "forever"),
                ("interruptible", "maybe"),
                ("quality-threshold", "98"),
                ("latency-objective", "fast"),
                ("deadline", "2h"),
                ("outcome", "ok"),
            ]),
            None,
            false,
        );
        let keys: Vec<&str> = p.iter().map(|p| p.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "gpuledger.io/deadline",
                "gpuledger.io/runtime",
                "gpuledger.io/interruptible",
                "gpuledger.io/quality-threshold",
                "gpuledger.io/latency-objective"
            ]
        );
        // What parsed is kept: nothing else is lost.
        assert_eq!(i.outcome.as_deref(), Some("ok"));
    }

    #[test]
    fn a_cronjob_deadline_may_be_a_duration_after_each_start() {
        let (i, p) = read(&ann(&[("deadline", "2h")]), None, true);
        assert!(p.is_empty());
        assert_eq!(
            i.deadline,
            Some(Deadline::AfterStart {
                after_scheduled_start_s: 7200
            })
        );
    }

    #[test]
    fn annotations_win_over_rules_key_by_key() {
        let rule: std::collections::BTreeMap<String, String> = [
            ("runtime".to_string(), "3h".to_string()),
            ("interruptible".to_string(), "true".to_string()),
        ]
        .into();
        let (i, p) = read(
            &ann(&[("runtime", "1h")]),
            Some(("intent[0]", &rule)),
            false,
        );
        assert!(p.is_empty());
        assert_eq!(i.runtime_s, Some(3600));
        assert_eq!(i.interruptible, Some(true));
        let bad: std::collections::BTreeMap<String, String> =
            [("runtime".to_string(), "soon".to_string())].into();
        let (_, p) = read(&Labels::new(), Some(("intent[2]", &bad)), false);
        assert_eq!(p[0].key, "intent[2].runtime");
    }
}
