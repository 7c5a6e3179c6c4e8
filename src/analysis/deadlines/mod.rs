//! Deadline attainment: for batch work that declares a deadline (`gpuledger.io/deadline`), the
//! share of its runs that finished by it, per workload and per tenant.
//!
//! A run is one Job. Its deadline is the Job's own (an RFC 3339 instant in its annotations or an
//! `intent:` rule), or, for a Job a CronJob made, the CronJob's duration after the run's scheduled
//! start: the Job's `batch.kubernetes.io/cronjob-scheduled-timestamp` annotation (Kubernetes
//! `CronJobScheduledTimestampAnnotation`, kubernetes/kubernetes pkg/apis/batch/types.go), else the
//! Job's creation time, which the CronJob controller sets when it starts the run. A run met its
//! deadline when `status.completionTime` (set only when a Job succeeds) is at or before it; it
//! missed when it finished after, failed (a `Failed` condition: no result, whenever it ended), or is
//! still running past it. A run still running before its deadline is not counted yet.
//!
//! Runs come from the finished Jobs the live state holds and, over a window, from kube-state-metrics
//! (`kube_job_status_completion_time`, `kube_job_created`, `kube_job_owner`, `kube_job_failed`;
//! [`crate::live::jobs`]), which remembers Jobs the cluster has deleted; a Job read both ways is
//! counted once, as the live state has it. A workload that declares a deadline but has no run read
//! has no attainment, with why: never 0%. Pure: the objects, the rules and `now` are passed in.

use std::collections::{BTreeMap, BTreeSet};

use crate::analysis::cost::wilson;
use crate::analysis::live::LiveFleet;
use crate::analysis::tenancy::Resolver;
use crate::config::IntentRule;
use crate::intent::Deadline;
use crate::k8s::object::{Body, Object};
use crate::k8s::types::Labels;
use crate::live::jobs::KsmJob;
use crate::report::deadlines::{Attainment, Deadlines, LAST_RUNS, RunOutcome, RunRow};
use crate::util::date::Timestamp;

/// The annotation the CronJob controller puts on each Job it makes: the run's scheduled time.
pub const SCHEDULED_AT: &str = "batch.kubernetes.io/cronjob-scheduled-timestamp";

/// Where a run was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunSource {
    Live,
    KubeStateMetrics,
}

impl RunSource {
    fn name(self) -> &'static str {
        match self {
            RunSource::Live => "live",
            RunSource::KubeStateMetrics => "kube-state-metrics",
        }
    }
}

/// One run of a batch workload with a deadline.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// `namespace/Kind/name` of the workload: the CronJob of a scheduled run, else the Job.
    pub workload: String,
    pub tenant: String,
    pub namespace: String,
    pub job: String,
    pub deadline: Timestamp,
    /// When it finished successfully.
    pub finished: Option<Timestamp>,
    pub failed: bool,
    pub source: RunSource,
}

impl Run {
    /// How the run did at `now`; `None` while it runs before its deadline.
    fn outcome(&self, now: Timestamp) -> Option<(RunOutcome, Option<i64>)> {
        match self.finished {
            Some(f) if f <= self.deadline => Some((RunOutcome::Met, None)),
            Some(f) => Some((RunOutcome::Late, Some(f.seconds_since(self.deadline)))),
            None if self.failed => Some((RunOutcome::Failed, None)),
            None if now > self.deadline => Some((
                RunOutcome::RunningLate,
                Some(now.seconds_since(self.deadline)),
            )),
            None => None,
        }
    }
}

/// The deadline intent of an object (`kind` as the rules match it), from its annotations and the
/// first matching `intent:` rule; `None` when it declares none or it does not parse (the intent
/// lint reports that).
fn deadline_of(o: &Object, kind: &str, rules: &[IntentRule]) -> Option<Deadline> {
    let annotations: Labels = o
        .meta
        .annotations
        .iter()
        .filter(|(k, _)| k.starts_with(crate::intent::PREFIX))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    deadline_by_rule(&annotations, o.namespace(), kind, &o.meta.name, rules)
}

fn deadline_by_rule(
    annotations: &Labels,
    namespace: &str,
    kind: &str,
    name: &str,
    rules: &[IntentRule],
) -> Option<Deadline> {
    let rule = rules
        .iter()
        .enumerate()
        .find(|(_, r)| r.matches.matches(namespace, kind, name))
        .map(|(i, r)| (format!("intent[{i}]"), r.values()));
    let (intent, _) = crate::intent::read(
        annotations,
        rule.as_ref().map(|(at, v)| (at.as_str(), v)),
        kind == "CronJob",
    );
    intent.deadline
}

/// A Job's CronJob (namespace, name), when a CronJob made it.
fn cron_owner(o: &Object) -> Option<&str> {
    o.meta
        .owner_references
        .iter()
        .find(|r| r.kind == "CronJob")
        .map(|r| r.name.as_str())
}

/// Every Job of the live state with a deadline, finished or not.
pub fn live_runs(objects: &[Object], rules: &[IntentRule], tenancy: &Resolver<'_>) -> Vec<Run> {
    let crons: BTreeMap<(&str, &str), &Object> = objects
        .iter()
        .filter(|o| matches!(o.body, Body::CronJob(_)))
        .map(|o| ((o.namespace(), o.meta.name.as_str()), o))
        .collect();
    let mut runs = Vec::new();
    for o in objects {
        let Body::Job(j) = &o.body else { continue };
        let ns = o.namespace();
        let failed = j
            .status
            .conditions
            .iter()
            .any(|c| c.type_ == "Failed" && c.status == "True");
        let finished = j
            .status
            .completion_time
            .as_deref()
            .and_then(|t| Timestamp::parse(t).ok());
        let cron = cron_owner(o).and_then(|n| crons.get(&(ns, n)).copied());
        let (owner, deadline) = match cron {
            Some(c) => {
                let Some(Deadline::AfterStart {
                    after_scheduled_start_s,
                }) = deadline_of(c, "CronJob", rules)
                else {
                    continue;
                };
                let start = o
                    .meta
                    .annotations
                    .get(SCHEDULED_AT)
                    .and_then(|t| Timestamp::parse(t).ok())
                    .or_else(|| {
                        o.meta
                            .creation_timestamp
                            .as_deref()
                            .and_then(|t| Timestamp::parse(t).ok())
                    });
                let Some(start) = start else { continue };
                let secs = i64::try_from(after_scheduled_start_s).unwrap_or(i64::MAX);
                (c, Timestamp::from_unix(start.unix().saturating_add(secs)))
            }
            None => match deadline_of(o, "Job", rules) {
                Some(Deadline::At(t)) => (o, t),
                _ => continue,
            },
        };
        runs.push(Run {
            workload: format!("{ns}/{}/{}", owner.kind, owner.meta.name),
            tenant: tenancy.tenant(&owner.meta.labels, ns),
            namespace: ns.to_string(),
            job: o.meta.name.clone(),
            deadline,
            finished,
            failed,
            source: RunSource::Live,
        });
    }
    runs
}

/// The runs kube-state-metrics remembers, with the deadline each had: its CronJob's (from the live
/// CronJob) after the Job's creation, or the Job's own from an `intent:` rule (a deleted Job's
/// annotations are gone; kube-state-metrics keeps none by default).
pub fn ksm_runs(
    jobs: &[KsmJob],
    objects: &[Object],
    rules: &[IntentRule],
    tenancy: &Resolver<'_>,
) -> Vec<Run> {
    let crons: BTreeMap<(&str, &str), &Object> = objects
        .iter()
        .filter(|o| matches!(o.body, Body::CronJob(_)))
        .map(|o| ((o.namespace(), o.meta.name.as_str()), o))
        .collect();
    let mut runs = Vec::new();
    for j in jobs {
        let ns = j.namespace.as_str();
        let cron = j
            .cron_owner
            .as_deref()
            .and_then(|n| crons.get(&(ns, n)).copied());
        let (workload, tenant, deadline) = match cron {
            Some(c) => {
                let Some(Deadline::AfterStart {
                    after_scheduled_start_s,
                }) = deadline_of(c, "CronJob", rules)
                else {
                    continue;
                };
                let Some(created) = j.created else { continue };
                let secs = i64::try_from(after_scheduled_start_s).unwrap_or(i64::MAX);
                (
                    format!("{ns}/CronJob/{}", c.meta.name),
                    tenancy.tenant(&c.meta.labels, ns),
                    Timestamp::from_unix(created.saturating_add(secs)),
                )
            }
            None if j.cron_owner.is_none() => {
                match deadline_by_rule(&Labels::new(), ns, "Job", &j.job, rules) {
                    Some(Deadline::At(t)) => (
                        format!("{ns}/Job/{}", j.job),
                        tenancy.tenant(&Default::default(), ns),
                        t,
                    ),
                    _ => continue,
                }
            }
            None => continue,
        };
        runs.push(Run {
            workload,
            tenant,
            namespace: ns.to_string(),
            job: j.job.clone(),
            deadline,
            finished: j.completed.map(Timestamp::from_unix),
            failed: j.failed,
            source: RunSource::KubeStateMetrics,
        });
    }
    runs
}

/// The live batch workloads that declare a deadline, with their tenants: each has a row, known or
/// not.
pub fn declared(fleet: &LiveFleet<'_>) -> Vec<(String, String)> {
    fleet
        .each()
        .filter(|(_, w, a)| {
            crate::intent::WorkClass::of(&w.id.kind) == crate::intent::WorkClass::Batch
                && a.intent.as_ref().is_some_and(|i| i.deadline.is_some())
        })
        .map(|(_, w, a)| (w.id.to_string(), a.tenant.clone()))
        .collect()
}

/// What the attainment is counted over.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    /// Count only runs whose deadline falls in `[start, end]`.
    pub window: Option<(Timestamp, Timestamp)>,
    /// Whether kube-state-metrics' Jobs were read.
    pub kube_state_metrics: bool,
    /// Where runs were read, as the report names them.
    pub sources: Vec<String>,
    /// Why a source is unknown, by source key (`kube_state_metrics`).
    pub unknown: Vec<(String, String)>,
}

/// Deadline attainment of `runs` (live first: a Job read again from kube-state-metrics is skipped)
/// and of the `declared` workloads that have none, at `now`.
pub fn attainment(
    runs: &[Run],
    declared: &[(String, String)],
    scope: &Scope,
    now: Timestamp,
) -> Deadlines {
    let mut seen: BTreeSet<(&str, &str)> = BTreeSet::new();
    // workload → (tenant, runs with outcomes)
    let mut by_workload: BTreeMap<&str, (&str, Vec<RunRow>)> = BTreeMap::new();
    for (w, t) in declared {
        by_workload.entry(w).or_insert((t, Vec::new()));
    }
    for r in runs {
        if !seen.insert((&r.namespace, &r.job)) {
            continue;
        }
        if let Some((start, end)) = scope.window
            && (r.deadline < start || r.deadline > end)
        {
            continue;
        }
        let entry = by_workload
            .entry(&r.workload)
            .or_insert((&r.tenant, Vec::new()));
        if let Some((outcome, late_s)) = r.outcome(now) {
            entry.1.push(RunRow {
                job: format!("{}/{}", r.namespace, r.job),
                deadline: r.deadline.to_string(),
                finished: r.finished.map(|f| f.to_string()),
                outcome,
                late_s,
                source: r.source.name().to_string(),
            });
        }
    }
    let no_run = match (scope.window, scope.kube_state_metrics) {
        (Some(_), _) => "no finished run of it with a deadline in the window was read",
        (None, true) => {
            "no finished run of it in the live state or in kube-state-metrics' Jobs over the window"
        }
        (None, false) => {
            "no finished run of it in the live state (the cluster deletes finished Jobs; kube-state-metrics' Jobs in Prometheus remember them)"
        }
    };
    let mut tenants: BTreeMap<&str, Vec<RunRow>> = BTreeMap::new();
    let mut workloads: Vec<Attainment> = Vec::new();
    for (w, (t, rows)) in by_workload {
        tenants.entry(t).or_default().extend(rows.iter().cloned());
        let mut a = row(w, rows, no_run);
        a.tenant = Some(t.to_string());
        workloads.push(a);
    }
    let mut tenants: Vec<Attainment> = tenants
        .into_iter()
        .map(|(t, rows)| row(t, rows, no_run))
        .collect();
    for rows in [&mut workloads, &mut tenants] {
        rows.sort_by(|a, b| {
            worst_first(a.attainment, b.attainment).then_with(|| a.name.cmp(&b.name))
        });
    }
    let mut unknown = crate::report::Unknown::default();
    for (k, why) in &scope.unknown {
        unknown.set(k, why.clone());
    }
    Deadlines {
        sources: scope.sources.clone(),
        window_start: scope.window.map(|(s, _)| s.to_string()),
        window_end: scope.window.map(|(_, e)| e.to_string()),
        workloads,
        tenants,
        unknown,
    }
}

fn row(name: &str, mut rows: Vec<RunRow>, no_run: &str) -> Attainment {
    let runs = rows.len() as u64;
    let met = rows.iter().filter(|r| r.outcome == RunOutcome::Met).count() as u64;
    let mut a = Attainment {
        name: name.to_string(),
        runs,
        met,
        missed: runs - met,
        ..Attainment::default()
    };
    if runs == 0 {
        a.unknown.set("attainment", no_run);
        a.unknown.set("interval", no_run);
    } else {
        a.attainment = Some(met as f64 / runs as f64);
        a.interval = wilson(met, runs).map(|(lo, hi)| [lo, hi]);
    }
    rows.sort_by(|a, b| b.deadline.cmp(&a.deadline).then_with(|| a.job.cmp(&b.job)));
    rows.truncate(LAST_RUNS);
    a.last = rows;
    a
}

/// Lowest attainment first; unknown last.
fn worst_first(a: Option<f64>, b: Option<f64>) -> std::cmp::Ordering {
    match (a, b) {
        (Some(x), Some(y)) => x.total_cmp(&y),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    }
}

#[cfg(test)]
mod tests;
