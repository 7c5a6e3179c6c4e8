//! What serving workloads are asked for, from vLLM and Dynamo metrics in Prometheus: the request
//! rate over a window, and the context around it (queueing, KV cache, preemptions, latency).
//!
//! Neither vLLM nor Dynamo counts arrivals: `vllm:request_success_total` and
//! `dynamo_frontend_requests_total` are counted when a request finishes, so the rate read here is a
//! *completion* rate, which under overload understates what was asked for. The report says so.
//!
//! The rate is read by a range query over the window (`rate(…[5m])` every step), per pod, and the
//! pods are summed per workload by the caller at each step before the p95 and the peak are taken:
//! the p95 of a sum is not the sum of the pods' p95s. Queue depth (`vllm:num_requests_waiting`) and
//! KV-cache use (`vllm:kv_cache_usage_perc`) are range queries too; preemptions and the latency
//! histograms are one instant query each over the whole window (`increase`), kept per bucket so the
//! caller can sum a workload's pods before taking a quantile, as `histogram_quantile` would.
//!
//! Pods are named by their `namespace`/`pod` labels with the rule the DCGM reader uses
//! ([`super::prometheus`]): an `exported_` twin wins, and a plain label is the target's only in a
//! scrape job with no `exported_` twin. A failed read is an `Err` naming the URL and the query;
//! no series at all is an empty answer, which the analysis reports per workload.

use std::collections::BTreeMap;
use std::num::TryFromIntError;
use std::time::{Duration, SystemTime, SystemTimeError, UNIX_EPOCH};

use super::http::duration_text;
use super::prometheus::{PromSource, ScrapeJobs};
use super::range::{Range, RangeError, RangeSeries};

/// The range of `rate()`: four scrapes at the common 15s–1m intervals, and what dashboards use.
pub const RATE_RANGE: &str = "5m";

/// The labels every query keeps: enough to name the pod by the DCGM reader's rule.
const BY: &str = "namespace, pod, exported_namespace, exported_pod, job";

/// Which server exported a series.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Engine {
    Vllm,
    /// The Dynamo frontend (`dynamo_frontend_*`).
    Dynamo,
}

/// One pod's series of a range query: `(unix seconds, value)`, oldest first.
#[derive(Debug, Clone, PartialEq)]
pub struct PodSeries {
    pub namespace: Option<String>,
    pub pod: Option<String>,
    /// `model_name` (vLLM) or `model` (Dynamo), when the series has it.
    pub model: Option<String>,
    pub engine: Engine,
    pub points: Vec<(i64, f64)>,
}

/// One pod's value of an instant query.
#[derive(Debug, Clone, PartialEq)]
pub struct PodValue {
    pub namespace: Option<String>,
    pub pod: Option<String>,
    pub engine: Engine,
    pub value: f64,
}

/// One pod's latency histogram over the window: cumulative counts by upper bound (seconds).
#[derive(Debug, Clone, PartialEq)]
pub struct PodHistogram {
    pub namespace: Option<String>,
    pub pod: Option<String>,
    pub engine: Engine,
    /// `ttft`, `itl`, `tpot`, `e2e`: the metrics of a latency objective.
    pub metric: &'static str,
    /// `(le, count)`; `le` is `f64::INFINITY` for `+Inf`.
    pub buckets: Vec<(f64, f64)>,
}

/// Everything read for serving headroom.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ServingMetrics {
    /// The URL, window and step, as the report names the source.
    pub source: String,
    pub window: Duration,
    pub step: Duration,
    /// Completed requests per second, per pod.
    pub completions: Vec<PodSeries>,
    /// Requests waiting in vLLM's queue.
    pub waiting: Vec<PodSeries>,
    /// vLLM KV-cache use, 0–1.
    pub kv_cache: Vec<PodSeries>,
    /// Preemptions over the window.
    pub preemptions: Vec<PodValue>,
    pub histograms: Vec<PodHistogram>,
}

/// Why the serving metrics could not be read; the headroom report shows production as unknown
/// with it.
#[derive(Debug, thiserror::Error)]
pub enum ServingError {
    #[error("the Prometheus window must be at least a second")]
    Window,
    #[error("{0}")]
    Clock(#[from] SystemTimeError),
    #[error("{0}")]
    ClockRange(#[from] TryFromIntError),
    #[error(transparent)]
    Query(#[from] RangeError),
}

/// What production metrics gave the headroom analysis: nothing asked, the reason the read
/// failed, or the metrics.
#[derive(Debug, Clone)]
pub enum Production {
    NotConfigured,
    /// The read failed: the reason.
    Failed(String),
    Read(ServingMetrics),
}

/// What production asks of the serving workloads, or why it is unknown.
pub async fn production(src: Option<&PromSource>) -> Production {
    match src {
        None => Production::NotConfigured,
        Some(s) => match serving(s, None).await {
            Ok(m) => Production::Read(m),
            Err(e) => Production::Failed(e.to_string()),
        },
    }
}

/// The histograms read, by objective metric: vLLM's and the Dynamo frontend's.
const HISTOGRAMS: [(&str, Engine, &str); 7] = [
    ("ttft", Engine::Vllm, "vllm:time_to_first_token_seconds"),
    ("itl", Engine::Vllm, "vllm:inter_token_latency_seconds"),
    (
        "tpot",
        Engine::Vllm,
        "vllm:request_time_per_output_token_seconds",
    ),
    ("e2e", Engine::Vllm, "vllm:e2e_request_latency_seconds"),
    (
        "ttft",
        Engine::Dynamo,
        "dynamo_frontend_time_to_first_token_seconds",
    ),
    (
        "itl",
        Engine::Dynamo,
        "dynamo_frontend_inter_token_latency_seconds",
    ),
    (
        "e2e",
        Engine::Dynamo,
        "dynamo_frontend_request_duration_seconds",
    ),
];

/// The step of the range queries: a minute, or coarser so a long window stays under Prometheus's
/// 11,000 points per series.
pub fn step_for(window: Duration) -> Duration {
    Duration::from_secs((window.as_secs() / 1000).max(60))
}

/// Reads the serving metrics over `src.window`, ending at `end` (unix seconds; the system clock
/// when `None`).
pub async fn serving(src: &PromSource, end: Option<i64>) -> Result<ServingMetrics, ServingError> {
    let window = src.window;
    if window.as_secs() == 0 {
        return Err(ServingError::Window);
    }
    let w = duration_text(window);
    let step = step_for(window);
    let end = match end {
        Some(e) => e,
        None => i64::try_from(SystemTime::now().duration_since(UNIX_EPOCH)?.as_secs())?,
    };
    let start = end.saturating_sub(i64::try_from(window.as_secs()).unwrap_or(i64::MAX));
    let prom = Range::new(&src.url, src.bearer_token.as_deref(), src.timeout)?;
    let q = Queries {
        prom: &prom,
        start,
        end,
        step: step.as_secs(),
    };
    let mut out = ServingMetrics {
        source: format!(
            "{} over {w} (step {})",
            prom.shown_url(),
            duration_text(step)
        ),
        window,
        step,
        ..ServingMetrics::default()
    };
    for (engine, counter, model) in [
        (Engine::Vllm, "vllm:request_success_total", "model_name"),
        (Engine::Dynamo, "dynamo_frontend_requests_total", "model"),
    ] {
        let query = format!("sum by ({BY}, {model}) (rate({counter}[{RATE_RANGE}]))");
        out.completions
            .extend(q.range(&query, engine, Some(model)).await?);
    }
    out.waiting = q
        .range(
            &format!("sum by ({BY}) (vllm:num_requests_waiting)"),
            Engine::Vllm,
            None,
        )
        .await?;
    out.kv_cache = q
        .range(
            &format!("max by ({BY}) (vllm:kv_cache_usage_perc)"),
            Engine::Vllm,
            None,
        )
        .await?;
    out.preemptions = q
        .instant(&format!(
            "sum by ({BY}) (increase(vllm:num_preemptions_total[{w}]))"
        ))
        .await?
        .into_iter()
        .filter_map(|(namespace, pod, m)| {
            Some(PodValue {
                namespace,
                pod,
                engine: Engine::Vllm,
                value: sample(&m)?,
            })
        })
        .collect();
    for (metric, engine, name) in HISTOGRAMS {
        let rows = q
            .instant(&format!("sum by ({BY}, le) (increase({name}_bucket[{w}]))"))
            .await?;
        let mut per_pod: BTreeMap<PodKey, Vec<(f64, f64)>> = BTreeMap::new();
        for (namespace, pod, m) in rows {
            let (Some(le), Some(v)) = (m.labels.get("le").and_then(|l| le(l)), sample(&m)) else {
                continue;
            };
            per_pod.entry((namespace, pod)).or_default().push((le, v));
        }
        for ((namespace, pod), mut buckets) in per_pod {
            buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
            out.histograms.push(PodHistogram {
                namespace,
                pod,
                engine,
                metric,
                buckets,
            });
        }
    }
    Ok(out)
}

/// A pod's namespace and name, as far as the labels tell.
type PodKey = (Option<String>, Option<String>);

fn le(s: &str) -> Option<f64> {
    match s.trim() {
        "+Inf" | "Inf" => Some(f64::INFINITY),
        x => x.parse().ok().filter(|v: &f64| v.is_finite()),
    }
}

struct Queries<'a> {
    prom: &'a Range,
    start: i64,
    end: i64,
    step: u64,
}

impl Queries<'_> {
    /// A range query's series, each named by its pod.
    async fn range(
        &self,
        query: &str,
        engine: Engine,
        model: Option<&str>,
    ) -> Result<Vec<PodSeries>, RangeError> {
        let series = self
            .prom
            .range(query, self.start, self.end, self.step)
            .await?;
        let jobs = ScrapeJobs::of(series.iter().map(|s| &s.labels));
        let mut out: Vec<PodSeries> = series
            .iter()
            .map(|s| PodSeries {
                namespace: jobs.workload_label(&s.labels, "namespace"),
                pod: jobs.workload_label(&s.labels, "pod"),
                model: model.and_then(|m| s.labels.get(m).filter(|v| !v.is_empty()).cloned()),
                engine,
                points: s.samples.clone(),
            })
            .collect();
        out.sort_by(|a, b| (&a.namespace, &a.pod, &a.model).cmp(&(&b.namespace, &b.pod, &b.model)));
        Ok(out)
    }

    /// An instant query at the end of the window: each series (its one finite sample, or none)
    /// with its pod.
    async fn instant(
        &self,
        query: &str,
    ) -> Result<Vec<(Option<String>, Option<String>, RangeSeries)>, RangeError> {
        let series = self.prom.instant(query, self.end).await?;
        let jobs = ScrapeJobs::of(series.iter().map(|s| &s.labels));
        let named: Vec<_> = series
            .iter()
            .map(|s| {
                (
                    jobs.workload_label(&s.labels, "namespace"),
                    jobs.workload_label(&s.labels, "pod"),
                )
            })
            .collect();
        Ok(named
            .into_iter()
            .zip(series)
            .map(|((n, p), s)| (n, p, s))
            .collect())
    }
}

/// The one sample of an instant query's series.
fn sample(s: &RangeSeries) -> Option<f64> {
    s.samples.first().map(|(_, v)| *v)
}

/// The `q` quantile (0–1) of a cumulative histogram, as Prometheus's `histogram_quantile` computes
/// it: linear within the bucket the rank falls in (from 0 for the first bucket), the last finite
/// upper bound when it falls in `+Inf`. `None` without observations or a `+Inf` bucket.
pub fn histogram_quantile(q: f64, buckets: &[(f64, f64)]) -> Option<f64> {
    let (last_le, total) = *buckets.last()?;
    if !last_le.is_infinite() || total <= 0.0 || !(0.0..=1.0).contains(&q) {
        return None;
    }
    let rank = q * total;
    let mut lower = (0.0, 0.0);
    for &(le, count) in buckets {
        if count >= rank {
            if le.is_infinite() {
                return Some(lower.0);
            }
            let in_bucket = count - lower.1;
            if in_bucket <= 0.0 {
                return Some(le);
            }
            return Some(lower.0 + (le - lower.0) * (rank - lower.1) / in_bucket);
        }
        lower = (le, count);
    }
    Some(lower.0)
}

/// The `q` quantile of a sample, interpolated between ranks as `quantile_over_time` does.
pub fn quantile(q: f64, values: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let rank = q.clamp(0.0, 1.0) * (v.len() - 1) as f64;
    let lo = rank.floor() as usize;
    let hi = rank.ceil() as usize;
    let (a, b) = (*v.get(lo)?, *v.get(hi)?);
    Some(a + (b - a) * (rank - lo as f64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_as_prometheus_computes_them() {
        let b = [
            (0.1, 10.0),
            (0.5, 60.0),
            (1.0, 100.0),
            (f64::INFINITY, 100.0),
        ];
        // rank 95 falls in (0.5, 1.0]: 0.5 + 0.5 × 35/40.
        assert!((histogram_quantile(0.95, &b).unwrap() - 0.9375).abs() < 1e-12);
        assert!((histogram_quantile(0.05, &b).unwrap() - 0.05).abs() < 1e-12);
        let tail = [(1.0, 50.0), (f64::INFINITY, 100.0)];
        assert_eq!(histogram_quantile(0.95, &tail), Some(1.0));
        assert_eq!(
            histogram_quantile(0.5, &[(1.0, 0.0), (f64::INFINITY, 0.0)]),
            None
        );
        assert_eq!(histogram_quantile(0.5, &[(1.0, 3.0)]), None);

        assert_eq!(quantile(0.5, &[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(quantile(0.95, &[0.0, 10.0]), Some(9.5));
        assert_eq!(quantile(0.95, &[]), None);
    }

    #[test]
    fn steps() {
        assert_eq!(step_for(Duration::from_secs(3600)), Duration::from_secs(60));
        assert_eq!(
            step_for(Duration::from_secs(7 * 86_400)),
            Duration::from_secs(604)
        );
    }
}
