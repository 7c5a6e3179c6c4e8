//! The jobs file of `gpuledger plan --jobs`: a YAML list of jobs, each with the planner's fields,
//! durations as Kubernetes tools write them (`1h30m`) and times in RFC 3339.
//!
//! A value that does not parse, or a job that contradicts itself (a deadline before its earliest
//! start), is an input error naming the file and line: a plan from half the jobs would mislead.

use serde::Deserialize;
use serde_saphyr::Spanned;

use super::types::Job;
use crate::error::InputError;
use crate::util::date::Timestamp;

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
struct Raw {
    #[serde(default = "default_namespace")]
    namespace: String,
    #[serde(default = "default_kind")]
    kind: String,
    name: String,
    gpus_per_pod: u64,
    #[serde(default = "one")]
    pods: u64,
    runtime: Spanned<String>,
    earliest_start: Option<Spanned<String>>,
    deadline: Option<Spanned<String>>,
    #[serde(default)]
    interruptible: bool,
}

fn default_namespace() -> String {
    "default".into()
}

fn default_kind() -> String {
    "Job".into()
}

fn one() -> u64 {
    1
}

/// A duration that does not read; the text is the configuration's own message
/// ([`crate::config::Age::parse`]), which shows the forms it takes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadDuration(String);

/// `90s`, `30m`, `1h30m`, `2d`: seconds, more than zero — the configuration's durations
/// ([`crate::config::Age`]), so a jobs file and `.gpuledger.yaml` read time the same way.
pub fn parse_duration(s: &str) -> Result<u64, BadDuration> {
    crate::config::Age::parse(s)
        .map(|a| a.0)
        .map_err(|e| BadDuration(e.to_string()))
}

/// The jobs in `text` (the file `file`); `now` is the earliest start of a job that gives none.
pub fn parse_jobs(text: &str, file: &str, now: i64) -> Result<Vec<Job>, InputError> {
    let raw: Vec<Spanned<Raw>> = serde_saphyr::from_str(text)
        .map_err(|e| crate::k8s::read::yaml_error_to_input(&e, file))?;
    let err = |line: u64, message: String| InputError {
        file: file.to_string(),
        line: u32::try_from(line).ok().filter(|l| *l > 0),
        column: None,
        message,
    };
    let mut jobs = Vec::new();
    for item in raw {
        let line = item.referenced.line();
        let r = item.value;
        let runtime_s = parse_duration(&r.runtime.value)
            .map_err(|m| err(r.runtime.referenced.line(), format!("runtime: {m}")))?;
        let time = |v: &Option<Spanned<String>>, what: &str| -> Result<Option<i64>, InputError> {
            v.as_ref()
                .map(|s| {
                    Timestamp::parse(&s.value)
                        .map(|t| t.seconds_since(Timestamp::from_unix(0)))
                        .map_err(|m| err(s.referenced.line(), format!("{what}: {m}")))
                })
                .transpose()
        };
        let earliest = time(&r.earliest_start, "earliest_start")?;
        let deadline = time(&r.deadline, "deadline")?;
        if let (Some(e), Some(d)) = (earliest, deadline)
            && d <= e
        {
            return Err(err(
                r.deadline.as_ref().map_or(line, |d| d.referenced.line()),
                format!(
                    "job {}: the deadline is not after the earliest start",
                    r.name
                ),
            ));
        }
        if r.gpus_per_pod.checked_mul(r.pods).is_none() {
            return Err(err(
                line,
                format!("job {}: GPUs per pod × pods is too large", r.name),
            ));
        }
        jobs.push(Job {
            namespace: r.namespace,
            kind: r.kind,
            name: r.name,
            gpus_per_pod: r.gpus_per_pod,
            pods: r.pods,
            runtime_s,
            earliest_start: earliest.unwrap_or(now),
            deadline,
            interruptible: r.interruptible,
            source: Some(format!("{file}:{line}")),
        });
    }
    Ok(jobs)
}
