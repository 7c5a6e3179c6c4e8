//! The Jobs kube-state-metrics remembers over a window, for deadline attainment
//! ([`crate::analysis::deadlines`]): the cluster deletes finished Jobs (`ttlSecondsAfterFinished`,
//! a CronJob's history limits), kube-state-metrics' series of them stay in Prometheus.
//!
//! Four instant queries at the window's end, each `last_over_time` over the window, by
//! `namespace, job_name`: `kube_job_status_completion_time` (set when a Job succeeds),
//! `kube_job_created`, `kube_job_owner` (its CronJob) and `kube_job_failed{condition="true"}`
//! (the `Failed` condition). Metric names and labels as kube-state-metrics documents them
//! (kubernetes/kube-state-metrics docs/metrics/workload/job-metrics.md). A failed query is an error
//! naming the URL and the query; the caller shows the runs as unknown with it.

use std::collections::BTreeMap;
use std::time::Duration;

use super::http::duration_text;
use super::range::{Range, RangeError, RangeSeries};

/// One Job as kube-state-metrics last saw it in the window.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KsmJob {
    pub namespace: String,
    pub job: String,
    /// Unix seconds.
    pub created: Option<i64>,
    /// Unix seconds; only for a Job that succeeded.
    pub completed: Option<i64>,
    pub failed: bool,
    /// The CronJob that made it.
    pub cron_owner: Option<String>,
}

/// The Jobs seen in the `window` ending at `end` (unix seconds), by namespace and name.
pub async fn jobs(
    url: &str,
    token: Option<&str>,
    timeout: Duration,
    end: i64,
    window: Duration,
) -> Result<Vec<KsmJob>, RangeError> {
    let prom = Range::new(url, token, timeout)?;
    let w = duration_text(window);
    let by = "namespace, job_name";
    let q = |metric: &str| format!("max by ({by}) (last_over_time({metric}[{w}]))");
    let mut out: BTreeMap<(String, String), KsmJob> = BTreeMap::new();
    let key = |s: &RangeSeries| {
        Some((
            s.labels.get("namespace")?.clone(),
            s.labels.get("job_name")?.clone(),
        ))
    };
    let value = |s: &RangeSeries| s.samples.last().map(|(_, v)| *v);
    for (metric, field) in [
        ("kube_job_created", 0),
        ("kube_job_status_completion_time", 1),
        ("kube_job_failed{condition=\"true\"}", 2),
    ] {
        for s in prom.instant(&q(metric), end).await? {
            let Some((ns, job)) = key(&s) else { continue };
            let Some(v) = value(&s).filter(|v| v.is_finite()) else {
                continue;
            };
            let e = out.entry((ns.clone(), job.clone())).or_insert(KsmJob {
                namespace: ns,
                job,
                ..KsmJob::default()
            });
            match field {
                0 => e.created = Some(v as i64),
                1 => e.completed = Some(v as i64),
                _ => e.failed = v > 0.0,
            }
        }
    }
    let owners = format!(
        "max by ({by}, owner_name) (last_over_time(kube_job_owner{{owner_kind=\"CronJob\"}}[{w}]))"
    );
    for s in prom.instant(&owners, end).await? {
        let Some(k) = key(&s) else { continue };
        if let (Some(e), Some(owner)) = (out.get_mut(&k), s.labels.get("owner_name")) {
            e.cron_owner = Some(owner.clone());
        }
    }
    Ok(out.into_values().collect())
}
