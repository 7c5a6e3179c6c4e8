//! GPU activity from DCGM exporter metrics in Prometheus: the "used" half of requested-vs-used.
//!
//! Two instant queries, one per metric, each asking four statistics of every series over the
//! window at one evaluation time: `avg_over_time`, `count_over_time`, `min_over_time` and
//! `max_over_time`, told apart by a `gpuledger_stat` label (`label_replace(…) or …`). The metrics
//! are `DCGM_FI_PROF_GR_ENGINE_ACTIVE`, the graphics-engine active ratio (0–1, and the one that
//! also works for MIG instances), and `DCGM_FI_DEV_GPU_UTIL`, the older percentage (read as a
//! ratio, divided by 100). What the answers mean is [`gpus`]'s: series are grouped into physical
//! GPUs (or MIG instances) so that a GPU is counted once per window however many pods it held;
//! a GPU whose profiling series has a NaN, ±Inf or out-of-range sample falls back to its own
//! `DCGM_FI_DEV_GPU_UTIL`, and is unknown — never idle — when that is unusable too.
//!
//! Which cluster: a Prometheus that is not only ours (Thanos, Mimir, a shared server) holds other
//! clusters' DCGM series too. `metrics.cluster_selector` (a PromQL matcher such as
//! `cluster="prod-a"`) goes into both queries; without it, each GPU carries the values of the
//! conventional cluster labels ([`CLUSTER_LABELS`]) its series have, and the analysis picks this
//! fleet's cluster by its node names, or says it cannot.
//!
//! The pod labels need care. DCGM exports `namespace`/`pod`/`container` (empty on an idle GPU).
//! Scraped with the ServiceMonitor default `honorLabels: false`, Prometheus sets those names to the
//! *exporter's* pod and renames DCGM's to `exported_namespace`/`exported_pod`/
//! `exported_container` — but only where DCGM's value is non-empty, so an idle GPU's series carries
//! the exporter pod under the plain name and no `exported_` label at all. Taken at face value that
//! would bill every idle GPU to `dcgm-exporter`. So the plain label is read as the workload only in
//! a scrape job (the `job` label) where no series carries its `exported_` twin, and never when it
//! names a DCGM exporter pod; otherwise the GPU has no pod.
//!
//! A `success` answer may carry `warnings` (Thanos and Mimir say so when a store or a shard did
//! not answer: a partial response). They are kept in [`DcgmRead::warnings`], and the report's
//! `used` is then a lower bound that says why.
//!
//! Failure is never zero: an unreachable server, a timeout, an HTTP error or a Prometheus error body
//! is an `Err` naming the URL (never the token), and so is "no DCGM series at all", so the caller
//! reports `used` as unknown with the reason. The transport (TLS, token header, deadline) is
//! [`super::http`]'s; this module only knows what to ask and what the answers mean.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use http::StatusCode;
use serde::Deserialize;
use serde::de::IgnoredAny;

use super::http::{Client, HttpError, duration_text, excerpt};

mod gpus;
#[cfg(test)]
mod tests;

/// The graphics-engine active ratio (0–1); reported per MIG instance too.
pub const GR_ENGINE_ACTIVE: &str = "DCGM_FI_PROF_GR_ENGINE_ACTIVE";
/// GPU utilisation in percent (0–100); absent or 0 for MIG instances.
pub const GPU_UTIL: &str = "DCGM_FI_DEV_GPU_UTIL";

/// Label names that say which cluster a series came from where one Prometheus (or Thanos, Mimir)
/// holds several: `cluster` (kube-prometheus external labels, Thanos, Mimir, Grafana Cloud, GKE
/// managed Prometheus), `cluster_name`, `cluster_id` (Rancher), and the OpenTelemetry collector's
/// `k8s_cluster_name` with its short forms.
pub const CLUSTER_LABELS: [&str; 6] = [
    "cluster",
    "cluster_name",
    "cluster_id",
    "k8s_cluster",
    "k8s_cluster_name",
    "kubernetes_cluster",
];

/// The instant-query endpoint, below the base URL.
const QUERY_PATH: &str = "/api/v1/query";

/// The label that tells the four statistics of one series apart in an answer.
const STAT_LABEL: &str = "gpuledger_stat";

/// Where the metrics are and how to read them.
#[derive(Clone)]
pub struct PromSource {
    /// The Prometheus base URL (`http://prometheus.monitoring:9090`, or with a path prefix
    /// behind a proxy); `/api/v1/query` is appended.
    pub url: String,
    /// Sent as `Authorization: Bearer …`; surrounding whitespace (a token file's newline) is
    /// ignored.
    pub bearer_token: Option<String>,
    /// The averaging window.
    pub window: Duration,
    /// For the whole read (both queries).
    pub timeout: Duration,
    /// `metrics.cluster_selector`: label matchers put into every DCGM query (`cluster="prod-a"`),
    /// already checked by the configuration's reader.
    pub cluster_selector: Option<String>,
}

// By hand, so that the token never reaches a log line through `{:?}`.
impl std::fmt::Debug for PromSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PromSource")
            .field("url", &self.url)
            .field(
                "bearer_token",
                &self.bearer_token.as_ref().map(|_| "<redacted>"),
            )
            .field("window", &self.window)
            .field("timeout", &self.timeout)
            .field("cluster_selector", &self.cluster_selector)
            .finish()
    }
}

/// One physical GPU (or MIG instance) as DCGM names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuId {
    /// The values of [`CLUSTER_LABELS`] its series carry (empty in a one-cluster Prometheus).
    pub scope: BTreeMap<String, String>,
    /// DCGM's `Hostname` (`hostname` on newer exporters): the node name when the exporter runs
    /// with `NODE_NAME`, as the GPU operator's does.
    pub node: Option<String>,
    /// The `gpu` label (the device index on the node); the UUID when that is missing.
    pub gpu: String,
    pub uuid: Option<String>,
    /// `GPU_I_PROFILE`, e.g. `1g.10gb`.
    pub mig_profile: Option<String>,
    /// `GPU_I_ID`.
    pub mig_instance: Option<String>,
}

/// A pod DCGM named on a GPU during the window (all `None`: the GPU's time without a pod).
#[derive(Debug, Clone, PartialEq)]
pub struct Holder {
    pub namespace: Option<String>,
    pub pod: Option<String>,
    pub container: Option<String>,
    /// Its part of the GPU's activity: its samples' sum over all the GPU's samples, so the
    /// holders of a GPU add up to the GPU's activity.
    pub activity: f64,
    /// How many of the GPU's samples were its.
    pub samples: f64,
}

/// The average activity of one GPU (or MIG instance) over the window, and who held it.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuActivity {
    pub id: GpuId,
    /// 0..=1: the mean of every sample of the GPU in the window, whichever pod it was under.
    pub activity: f64,
    /// Largest part first.
    pub holders: Vec<Holder>,
    /// Which series it came from: [`GR_ENGINE_ACTIVE`] or [`GPU_UTIL`].
    pub metric: &'static str,
}

/// A GPU whose samples cannot be read as activity in any metric: unknown, never idle.
#[derive(Debug, Clone, PartialEq)]
pub struct UnsoundGpu {
    pub id: GpuId,
    /// The pods named on it (their `activity` is 0: it is not known).
    pub holders: Vec<Holder>,
    /// What was wrong with each metric (`DCGM_FI_PROF_GR_ENGINE_ACTIVE: NaN or ±Inf samples`).
    pub reason: String,
}

/// What the DCGM queries answered.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DcgmRead {
    /// Sorted by cluster, node, GPU and MIG instance.
    pub gpus: Vec<GpuActivity>,
    pub unsound: Vec<UnsoundGpu>,
    /// The `warnings` of the answers (a partial response), each once.
    pub warnings: Vec<String>,
    /// The matchers the queries were scoped with (`metrics.cluster_selector`).
    pub selector: Option<String>,
}

/// Why the GPU activity could not be read: the report shows `used` as unknown with it.
#[derive(Debug, thiserror::Error)]
pub enum PromError {
    #[error("the Prometheus window must be at least 1ms, not {0:?}")]
    Window(Duration),
    #[error(transparent)]
    Http(#[from] HttpError),
    #[error(transparent)]
    Status(#[from] StatusError),
    #[error("Prometheus at {base}, query `{query}`: {reason}")]
    Answer {
        base: String,
        query: String,
        #[source]
        reason: AnswerError,
    },
    #[error("no DCGM series ({metrics}) in {base} over {window}{scope}")]
    NoSeries {
        metrics: String,
        base: String,
        window: String,
        /// ` matching {selector}`, or nothing.
        scope: String,
    },
}

/// What is wrong with an answer Prometheus gave with a success status.
#[derive(Debug, thiserror::Error)]
pub enum AnswerError {
    #[error("not a Prometheus API response ({source}): {excerpt}")]
    NotApi {
        #[source]
        source: serde_json::Error,
        excerpt: String,
    },
    #[error("status {status}: {}{error}", error_type.as_ref().map(|t| format!("{t}: ")).unwrap_or_default())]
    Failed {
        status: String,
        error_type: Option<String>,
        error: String,
    },
    #[error("expected an instant vector, got a range vector (matrix)")]
    Matrix,
    #[error("expected an instant vector, got a scalar")]
    Scalar,
    #[error("a success response without data")]
    NoData,
}

/// The query for one metric: four statistics of each series over `window`, in one answer.
fn stats_query(metric: &str, window: &str, selector: Option<&str>) -> String {
    let matchers = selector.map(|s| format!("{{{s}}}")).unwrap_or_default();
    ["avg", "count", "min", "max"]
        .map(|stat| {
            format!(
                r#"label_replace({stat}_over_time({metric}{matchers}[{window}]), "{STAT_LABEL}", "{stat}", "", "")"#
            )
        })
        .join(" or ")
}

/// Reads the activity per GPU over `src.window`; see the module documentation.
pub async fn gpu_activity(src: &PromSource) -> Result<DcgmRead, PromError> {
    let window = prom_duration(src.window).ok_or(PromError::Window(src.window))?;
    let client = Client::new(
        "Prometheus",
        &src.url,
        src.bearer_token.as_deref(),
        src.timeout,
    )?;
    let base = client.shown_url();
    let selector = src.cluster_selector.as_deref();
    let active = ask(&client, GR_ENGINE_ACTIVE, &window, selector).await?;
    let util = ask(&client, GPU_UTIL, &window, selector).await?;
    let warnings: BTreeSet<String> = active
        .warnings
        .iter()
        .chain(&util.warnings)
        .cloned()
        .collect();
    let (active, util) = (active.samples, util.samples);
    let (gpus, unsound) = gpus::merge(&active, &util);
    if gpus.is_empty() && unsound.is_empty() {
        return Err(PromError::NoSeries {
            metrics: format!("{GR_ENGINE_ACTIVE}, {GPU_UTIL}"),
            base: base.to_string(),
            window: duration_text(src.window),
            scope: selector
                .map(|s| format!(" matching {{{s}}}"))
                .unwrap_or_default(),
        });
    }
    Ok(DcgmRead {
        gpus,
        unsound,
        warnings: warnings.into_iter().collect(),
        selector: src.cluster_selector.clone(),
    })
}

/// One metric's statistics, or why Prometheus gave none.
async fn ask(
    client: &Client,
    metric: &str,
    window: &str,
    selector: Option<&str>,
) -> Result<Answer, PromError> {
    let base = client.shown_url();
    let query = stats_query(metric, window, selector);
    let response = client.get(QUERY_PATH, &[("query", &query)]).await?;
    if !response.status.is_success() {
        return Err(http_error(
            base,
            &query,
            response.status,
            &response.body,
            client.has_token(),
        )
        .into());
    }
    parse_response(&response.body).map_err(|reason| PromError::Answer {
        base: base.to_string(),
        query,
        reason,
    })
}

/// Prometheus answered a query with an error status: its own explanation when the body has one,
/// and a hint at what to change.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("Prometheus at {base} answered {status}{hint} to `{query}`{}", detail.as_ref().map(|d| format!(": {d}")).unwrap_or_default())]
pub struct StatusError {
    base: String,
    status: StatusCode,
    hint: &'static str,
    query: String,
    detail: Option<String>,
}

/// A Prometheus error answer, with Prometheus's own explanation when the body has one.
pub(crate) fn http_error(
    base: &str,
    query: &str,
    status: StatusCode,
    body: &[u8],
    has_token: bool,
) -> StatusError {
    let detail = match serde_json::from_slice::<ApiResponse>(body) {
        Ok(ApiResponse {
            error: Some(error),
            error_type,
            ..
        }) => match error_type {
            Some(t) => format!("{t}: {error}"),
            None => error,
        },
        _ => excerpt(body),
    };
    let hint = match status {
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN if has_token => {
            " (check the bearer token)"
        }
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => " (a bearer token may be needed)",
        StatusCode::NOT_FOUND => " (is the URL the Prometheus base URL?)",
        s if s.is_redirection() => " (give the URL it redirects to)",
        _ => "",
    };
    StatusError {
        base: base.to_string(),
        status,
        hint,
        query: query.to_string(),
        detail: (!detail.is_empty()).then_some(detail),
    }
}

#[derive(Deserialize)]
struct ApiResponse {
    status: String,
    #[serde(default)]
    data: Option<ApiData>,
    #[serde(rename = "errorType", default)]
    error_type: Option<String>,
    #[serde(default)]
    error: Option<String>,
    /// Prometheus's own (PromQL annotations) and a partial response's (Thanos, Mimir).
    #[serde(default)]
    warnings: Vec<String>,
}

#[derive(Deserialize)]
#[serde(tag = "resultType", content = "result", rename_all = "lowercase")]
enum ApiData {
    Vector(Vec<Sample>),
    Matrix(IgnoredAny),
    Scalar(IgnoredAny),
    String(IgnoredAny),
}

/// One series of an instant vector: its labels and `[<unix time>, "<value>"]`.
#[derive(Deserialize)]
struct Sample {
    metric: BTreeMap<String, String>,
    value: (IgnoredAny, String),
}

/// A successful instant-vector answer.
struct Answer {
    samples: Vec<Sample>,
    warnings: Vec<String>,
}

/// The vector of a successful response and its warnings; a Prometheus error body (which some
/// proxies send with status 200) or any other shape is an error.
fn parse_response(body: &[u8]) -> Result<Answer, AnswerError> {
    let response: ApiResponse =
        serde_json::from_slice(body).map_err(|source| AnswerError::NotApi {
            source,
            excerpt: excerpt(body),
        })?;
    if response.status != "success" {
        return Err(AnswerError::Failed {
            status: response.status,
            error_type: response.error_type,
            error: response.error.unwrap_or_else(|| "no error message".into()),
        });
    }
    match response.data {
        Some(ApiData::Vector(samples)) => Ok(Answer {
            samples,
            warnings: response.warnings,
        }),
        Some(ApiData::Matrix(_)) => Err(AnswerError::Matrix),
        Some(ApiData::Scalar(_) | ApiData::String(_)) => Err(AnswerError::Scalar),
        None => Err(AnswerError::NoData),
    }
}

/// Which series of the result set carry each `exported_` pod label, per scrape job: in those jobs
/// the plain label is a target label (the exporter pod), for every series of the job. The serving
/// reader (`super::serving`) reads vLLM and Dynamo pod labels by the same rule.
pub(super) struct ScrapeJobs<'a> {
    renamed: BTreeSet<(Option<&'a str>, &'static str)>,
}

const POD_LABELS: [&str; 3] = ["namespace", "pod", "container"];

impl<'a> ScrapeJobs<'a> {
    /// From the label sets of one result set.
    pub(super) fn of(
        metrics: impl Iterator<Item = &'a BTreeMap<String, String>>,
    ) -> ScrapeJobs<'a> {
        let mut renamed = BTreeSet::new();
        for m in metrics {
            for label in POD_LABELS {
                if m.contains_key(&format!("exported_{label}")) {
                    renamed.insert((m.get("job").map(String::as_str), label));
                }
            }
        }
        ScrapeJobs { renamed }
    }

    /// The workload's value of `namespace`, `pod` or `container` on this series.
    pub(super) fn workload_label(
        &self,
        metric: &BTreeMap<String, String>,
        label: &'static str,
    ) -> Option<String> {
        if let Some(v) = non_empty(metric, &format!("exported_{label}")) {
            return Some(v);
        }
        let job = metric.get("job").map(String::as_str);
        if self.renamed.contains(&(job, label)) {
            return None;
        }
        non_empty(metric, label)
    }
}

fn non_empty(metric: &BTreeMap<String, String>, label: &str) -> Option<String> {
    metric.get(label).filter(|v| !v.is_empty()).cloned()
}

/// A PromQL duration: [`duration_text`] writes a single unit (`1h`, `90m`, `45s`, `1500ms`),
/// which every Prometheus version accepts. `None` below one millisecond.
fn prom_duration(d: Duration) -> Option<String> {
    (d.as_millis() > 0).then(|| duration_text(d))
}
