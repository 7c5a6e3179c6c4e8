//! GPU activity from DCGM exporter metrics in Prometheus: the "used" half of requested-vs-used.
//!
//! One instant query per metric over a window: `avg_over_time(DCGM_FI_PROF_GR_ENGINE_ACTIVE[w])`,
//! the graphics-engine active ratio (0–1, and the one that also works for MIG instances); when
//! Prometheus has no series of it at all (DCGM without profiling metrics), the older
//! `DCGM_FI_DEV_GPU_UTIL` percentage divided by 100. Each series becomes a [`GpuActivity`]: the GPU
//! (node, index, UUID, MIG instance), the pod DCGM attributed it to, and the activity clamped into
//! 0..=1. `avg_over_time` averages the samples that exist in the window, so a pod that ran for ten
//! minutes at full load reads 1.0 however long the window is.
//!
//! The pod labels need care. DCGM exports `namespace`/`pod`/`container` (empty on an idle GPU).
//! Scraped with the ServiceMonitor default `honorLabels: false`, Prometheus sets those names to the
//! *exporter's* pod and renames DCGM's to `exported_namespace`/`exported_pod`/
//! `exported_container` — but only where DCGM's value is non-empty, so an idle GPU's series carries
//! the exporter pod under the plain name and no `exported_` label at all. Taken at face value that
//! would bill every idle GPU to `dcgm-exporter`. So the plain label is read as the workload only in
//! a scrape job (the `job` label) where no series carries its `exported_` twin, and never when it
//! names a DCGM exporter pod; otherwise the GPU has no pod. Series that differ only in scrape
//! labels (two jobs scraping the same exporter, an exporter restarted inside the window) are merged
//! into one entry with the mean of their activities.
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

/// The graphics-engine active ratio (0–1); reported per MIG instance too.
pub const GR_ENGINE_ACTIVE: &str = "DCGM_FI_PROF_GR_ENGINE_ACTIVE";
/// GPU utilisation in percent (0–100); absent or 0 for MIG instances.
pub const GPU_UTIL: &str = "DCGM_FI_DEV_GPU_UTIL";

/// The instant-query endpoint, below the base URL.
const QUERY_PATH: &str = "/api/v1/query";

/// Where the metrics are and how to read them.
#[derive(Clone)]
pub struct PromSource {
    /// The Prometheus base URL (`http://prometheus.monitoring:9090`, or with a path prefix
    /// behind a proxy); `/api/v1/query` is appended.
    pub url: String,
    /// Sent as `Authorization: Bearer …`; surrounding whitespace (a token file's newline) is
    /// ignored.
    pub bearer_token: Option<String>,
    /// The averaging window of `avg_over_time`.
    pub window: Duration,
    /// For the whole read (both queries).
    pub timeout: Duration,
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
            .finish()
    }
}

/// The average activity of one GPU (or MIG instance) over the window, with the pod on it.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuActivity {
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
    /// The workload DCGM attributed the GPU to; all `None` on an idle GPU.
    pub namespace: Option<String>,
    pub pod: Option<String>,
    pub container: Option<String>,
    /// 0..=1, averaged over the window.
    pub activity: f64,
    /// Which series it came from: [`GR_ENGINE_ACTIVE`] or [`GPU_UTIL`].
    pub metric: &'static str,
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
    /// Series exist but every one averaged to NaN or ±Inf: still unknown, not idle.
    #[error(
        "no finite DCGM values ({metrics}) in {base} over {window}: {series} series averaged to NaN or Inf"
    )]
    NonFinite {
        metrics: String,
        base: String,
        window: String,
        series: usize,
    },
    #[error("no DCGM series ({metrics}) in {base} over {window}")]
    NoSeries {
        metrics: String,
        base: String,
        window: String,
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

/// Reads the average GPU activity per GPU over `src.window`; see the module documentation.
pub async fn gpu_activity(src: &PromSource) -> Result<Vec<GpuActivity>, PromError> {
    let window = prom_duration(src.window).ok_or(PromError::Window(src.window))?;
    let client = Client::new(
        "Prometheus",
        &src.url,
        src.bearer_token.as_deref(),
        src.timeout,
    )?;
    let base = client.shown_url();
    let queries = [
        (
            GR_ENGINE_ACTIVE,
            format!("avg_over_time({GR_ENGINE_ACTIVE}[{window}])"),
        ),
        (
            GPU_UTIL,
            format!("avg_over_time({GPU_UTIL}[{window}]) / 100"),
        ),
    ];
    let mut non_finite = 0;
    for (metric, query) in &queries {
        let response = client.get(QUERY_PATH, &[("query", query)]).await?;
        if !response.status.is_success() {
            return Err(http_error(
                base,
                query,
                response.status,
                &response.body,
                client.has_token(),
            )
            .into());
        }
        let samples = parse_response(&response.body).map_err(|reason| PromError::Answer {
            base: base.to_string(),
            query: query.clone(),
            reason,
        })?;
        let total = samples.len();
        let activities = activities(samples, metric);
        if !activities.is_empty() {
            return Ok(activities);
        }
        non_finite += total;
    }
    let names = queries.map(|(m, _)| m).join(", ");
    let window = duration_text(src.window);
    if non_finite > 0 {
        return Err(PromError::NonFinite {
            metrics: names,
            base: base.to_string(),
            window,
            series: non_finite,
        });
    }
    Err(PromError::NoSeries {
        metrics: names,
        base: base.to_string(),
        window,
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

/// The vector of a successful response; a Prometheus error body (which some proxies send with
/// status 200) or any other shape is an error.
fn parse_response(body: &[u8]) -> Result<Vec<Sample>, AnswerError> {
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
        Some(ApiData::Vector(samples)) => Ok(samples),
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
    fn new(samples: &'a [Sample]) -> ScrapeJobs<'a> {
        ScrapeJobs::of(samples.iter().map(|s| &s.metric))
    }

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

/// The DCGM exporter's own pod (GPU operator `nvidia-dcgm-exporter-…`, Helm chart `dcgm-exporter-…`)
/// under a plain `pod` label is the scrape target, never a workload.
fn is_exporter_pod(pod: &str) -> bool {
    pod.contains("dcgm-exporter")
}

/// What identifies one entry: the GPU and the pod, not the scrape (job, instance, exporter pod).
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Key {
    node: Option<String>,
    gpu: NaturalKey,
    mig_instance: Option<NaturalKey>,
    uuid: Option<String>,
    mig_profile: Option<String>,
    namespace: Option<String>,
    pod: Option<String>,
    container: Option<String>,
}

/// Sorts `2` before `10`: numbers by value, then anything else by text.
#[derive(PartialEq, Eq, PartialOrd, Ord, Clone)]
struct NaturalKey(Option<u64>, String);

impl NaturalKey {
    fn new(s: &str) -> NaturalKey {
        NaturalKey(s.parse().ok(), s.to_string())
    }
}

/// Turns a query result into activities, sorted by node, GPU, MIG instance and pod. Non-finite
/// values (NaN from a GPU without the field) are skipped; the rest are clamped into 0..=1
/// (`scale` already applied by the query).
fn activities(samples: Vec<Sample>, metric: &'static str) -> Vec<GpuActivity> {
    let jobs = ScrapeJobs::new(&samples);
    let mut merged: BTreeMap<Key, (f64, u32)> = BTreeMap::new();
    for s in &samples {
        let Some(value) = parse_value(&s.value.1) else {
            continue;
        };
        let m = &s.metric;
        let uuid = non_empty(m, "UUID");
        let gpu = non_empty(m, "gpu")
            .or_else(|| uuid.clone())
            .unwrap_or_default();
        let namespace = jobs.workload_label(m, "namespace");
        let pod = jobs.workload_label(m, "pod");
        let container = jobs.workload_label(m, "container");
        // Only a plain (unrenamed) label can name the exporter itself; then none of the three
        // is the workload's.
        let exporter =
            pod.as_deref().is_some_and(is_exporter_pod) && non_empty(m, "exported_pod").is_none();
        let (namespace, pod, container) = if exporter {
            (None, None, None)
        } else {
            (namespace, pod, container)
        };
        let key = Key {
            node: non_empty(m, "Hostname").or_else(|| non_empty(m, "hostname")),
            gpu: NaturalKey::new(&gpu),
            mig_instance: non_empty(m, "GPU_I_ID").map(|i| NaturalKey::new(&i)),
            uuid,
            mig_profile: non_empty(m, "GPU_I_PROFILE"),
            namespace,
            pod,
            container,
        };
        let entry = merged.entry(key).or_insert((0.0, 0));
        entry.0 += value.clamp(0.0, 1.0);
        entry.1 += 1;
    }
    merged
        .into_iter()
        .map(|(k, (sum, n))| GpuActivity {
            node: k.node,
            gpu: k.gpu.1,
            uuid: k.uuid,
            mig_profile: k.mig_profile,
            mig_instance: k.mig_instance.map(|i| i.1),
            namespace: k.namespace,
            pod: k.pod,
            container: k.container,
            activity: (sum / f64::from(n)).clamp(0.0, 1.0),
            metric,
        })
        .collect()
}

/// A Prometheus sample value (`"0.25"`, `"NaN"`, `"+Inf"`); `None` unless finite.
fn parse_value(s: &str) -> Option<f64> {
    s.trim().parse::<f64>().ok().filter(|v| v.is_finite())
}

/// A PromQL duration: [`duration_text`] writes a single unit (`1h`, `90m`, `45s`, `1500ms`),
/// which every Prometheus version accepts. `None` below one millisecond.
fn prom_duration(d: Duration) -> Option<String> {
    (d.as_millis() > 0).then(|| duration_text(d))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(body: &str) -> Vec<GpuActivity> {
        activities(parse_response(body.as_bytes()).unwrap(), GR_ENGINE_ACTIVE)
    }

    fn vector(series: &[(&str, &str)]) -> String {
        let result: Vec<String> = series
            .iter()
            .map(|(labels, value)| {
                format!(r#"{{"metric":{{{labels}}},"value":[1700000000.123,"{value}"]}}"#)
            })
            .collect();
        format!(
            r#"{{"status":"success","data":{{"resultType":"vector","result":[{}]}}}}"#,
            result.join(",")
        )
    }

    fn pod_of(a: &GpuActivity) -> (Option<&str>, Option<&str>, Option<&str>) {
        (
            a.namespace.as_deref(),
            a.pod.as_deref(),
            a.container.as_deref(),
        )
    }

    #[test]
    fn exported_labels_win_over_the_exporter_pod() {
        let body = vector(&[
            (
                r#""gpu":"0","UUID":"GPU-a","Hostname":"node-1","job":"gpu-metrics","namespace":"gpu-operator","pod":"nvidia-dcgm-exporter-x1","container":"nvidia-dcgm-exporter","exported_namespace":"team-a","exported_pod":"trainer-0","exported_container":"main""#,
                "0.75",
            ),
            // Idle GPU on the same scrape: DCGM's empty pod label was not renamed, so the plain
            // ones are the exporter's.
            (
                r#""gpu":"1","UUID":"GPU-b","Hostname":"node-1","job":"gpu-metrics","namespace":"gpu-operator","pod":"node-exporter-lookalike","container":"exporter""#,
                "0",
            ),
        ]);
        let got = parse(&body);
        assert_eq!(got.len(), 2);
        assert_eq!(
            pod_of(&got[0]),
            (Some("team-a"), Some("trainer-0"), Some("main"))
        );
        assert_eq!(got[0].activity, 0.75);
        assert_eq!(got[0].node.as_deref(), Some("node-1"));
        assert_eq!(got[0].uuid.as_deref(), Some("GPU-a"));
        assert_eq!(got[0].metric, GR_ENGINE_ACTIVE);
        assert_eq!(pod_of(&got[1]), (None, None, None));
        assert_eq!(got[1].activity, 0.0);
    }

    #[test]
    fn plain_labels_are_the_workload_with_honor_labels() {
        let body = vector(&[
            (
                r#""gpu":"0","hostname":"node-2","job":"dcgm","namespace":"team-b","pod":"serve-1","container":"vllm""#,
                "0.5",
            ),
            (
                r#""gpu":"1","hostname":"node-2","job":"dcgm","namespace":"","pod":"","container":"""#,
                "0.01",
            ),
        ]);
        let got = parse(&body);
        assert_eq!(
            pod_of(&got[0]),
            (Some("team-b"), Some("serve-1"), Some("vllm"))
        );
        assert_eq!(
            got[0].node.as_deref(),
            Some("node-2"),
            "lower-case hostname is accepted"
        );
        assert_eq!(
            pod_of(&got[1]),
            (None, None, None),
            "empty labels mean no pod"
        );
    }

    #[test]
    fn exported_wins_only_when_non_empty() {
        let body = vector(&[(
            r#""gpu":"0","namespace":"team-c","pod":"job-7","exported_namespace":"","exported_pod":"""#,
            "0.3",
        )]);
        // Here the exported twins exist in the job, so the plain labels are target labels.
        assert_eq!(pod_of(&parse(&body)[0]), (None, None, None));
        let body = vector(&[(
            r#""gpu":"0","namespace":"team-c","pod":"job-7","exported_pod":"real-pod""#,
            "0.3",
        )]);
        // `exported_namespace` never appears, so `namespace` is DCGM's own.
        assert_eq!(
            pod_of(&parse(&body)[0]),
            (Some("team-c"), Some("real-pod"), None)
        );
    }

    #[test]
    fn an_idle_fleet_is_not_billed_to_the_exporter() {
        // honorLabels: false and every GPU idle: no exported_ label anywhere to learn from.
        let body = vector(&[(
            r#""gpu":"0","Hostname":"n","namespace":"gpu-operator","pod":"nvidia-dcgm-exporter-7k2p9","container":"nvidia-dcgm-exporter""#,
            "0",
        )]);
        assert_eq!(pod_of(&parse(&body)[0]), (None, None, None));
    }

    #[test]
    fn non_finite_values_are_skipped_and_the_rest_clamped() {
        let body = vector(&[
            (r#""gpu":"0""#, "NaN"),
            (r#""gpu":"1""#, "+Inf"),
            (r#""gpu":"2""#, "-Inf"),
            (r#""gpu":"3""#, "1.02"),
            (r#""gpu":"4""#, "-0.001"),
            (r#""gpu":"5""#, "not a number"),
        ]);
        let got = parse(&body);
        let pairs: Vec<(&str, f64)> = got.iter().map(|a| (a.gpu.as_str(), a.activity)).collect();
        assert_eq!(pairs, vec![("3", 1.0), ("4", 0.0)]);
    }

    #[test]
    fn mig_instances_are_separate_entries() {
        let body = vector(&[
            (
                r#""gpu":"0","UUID":"GPU-m","Hostname":"h","GPU_I_PROFILE":"1g.10gb","GPU_I_ID":"13","exported_namespace":"a","exported_pod":"p13""#,
                "0.2",
            ),
            (
                r#""gpu":"0","UUID":"GPU-m","Hostname":"h","GPU_I_PROFILE":"3g.40gb","GPU_I_ID":"2","exported_namespace":"b","exported_pod":"p2""#,
                "0.9",
            ),
        ]);
        let got = parse(&body);
        assert_eq!(got.len(), 2);
        // Natural order: instance 2 before 13.
        assert_eq!(got[0].mig_instance.as_deref(), Some("2"));
        assert_eq!(got[0].mig_profile.as_deref(), Some("3g.40gb"));
        assert_eq!(got[0].pod.as_deref(), Some("p2"));
        assert_eq!(got[1].mig_instance.as_deref(), Some("13"));
        assert_eq!(got[1].mig_profile.as_deref(), Some("1g.10gb"));
        assert_eq!(got[1].activity, 0.2);
    }

    #[test]
    fn duplicate_scrapes_of_one_gpu_merge() {
        let body = vector(&[
            (
                r#""gpu":"0","Hostname":"h","instance":"10.0.0.1:9400","exported_pod":"p","exported_namespace":"n""#,
                "0.4",
            ),
            (
                r#""gpu":"0","Hostname":"h","instance":"10.0.0.2:9400","exported_pod":"p","exported_namespace":"n""#,
                "0.6",
            ),
            (r#""gpu":"10","Hostname":"h""#, "0.1"),
            (r#""gpu":"2","Hostname":"h""#, "0.1"),
        ]);
        let got = parse(&body);
        let gpus: Vec<&str> = got.iter().map(|a| a.gpu.as_str()).collect();
        assert_eq!(gpus, vec!["0", "2", "10"]);
        assert!((got[0].activity - 0.5).abs() < 1e-12);
    }

    #[test]
    fn gpu_falls_back_to_the_uuid() {
        let got = parse(&vector(&[(r#""UUID":"GPU-1234""#, "0.5")]));
        assert_eq!(got[0].gpu, "GPU-1234");
        assert_eq!(got[0].node, None);
    }

    #[test]
    fn error_bodies() {
        let body = br#"{"status":"error","errorType":"bad_data","error":"1:15: parse error: unexpected \"]\""}"#;
        let e = parse_response(body).err().unwrap().to_string();
        assert_eq!(
            e,
            r#"status error: bad_data: 1:15: parse error: unexpected "]""#
        );

        let e = http_error(
            "http://prom:9090",
            "up",
            StatusCode::SERVICE_UNAVAILABLE,
            br#"{"status":"error","errorType":"unavailable","error":"too many queries"}"#,
            false,
        )
        .to_string();
        assert_eq!(
            e,
            "Prometheus at http://prom:9090 answered 503 Service Unavailable to `up`: unavailable: too many queries"
        );

        let e = http_error(
            "https://p",
            "up",
            StatusCode::UNAUTHORIZED,
            b"<html>\n<h1>401</h1>\n</html>",
            true,
        )
        .to_string();
        assert_eq!(
            e,
            "Prometheus at https://p answered 401 Unauthorized (check the bearer token) to `up`: <html> <h1>401</h1> </html>"
        );

        let e = parse_response(b"<html>login</html>")
            .err()
            .unwrap()
            .to_string();
        assert!(e.starts_with("not a Prometheus API response"), "{e}");

        let matrix = br#"{"status":"success","data":{"resultType":"matrix","result":[]}}"#;
        assert!(
            parse_response(matrix)
                .err()
                .unwrap()
                .to_string()
                .contains("matrix")
        );
        let scalar =
            br#"{"status":"success","data":{"resultType":"scalar","result":[1700000000,"1"]}}"#;
        assert!(
            parse_response(scalar)
                .err()
                .unwrap()
                .to_string()
                .contains("scalar")
        );
        let empty = br#"{"status":"success","data":{"resultType":"vector","result":[]}}"#;
        assert!(parse_response(empty).unwrap().is_empty());
    }

    #[test]
    fn result_type_may_follow_result() {
        let body = br#"{"data":{"result":[{"metric":{"gpu":"0"},"value":[1,"0.5"]}],"resultType":"vector"},"status":"success","warnings":["w"]}"#;
        assert_eq!(parse_response(body).unwrap().len(), 1);
    }

    #[test]
    fn durations() {
        assert_eq!(
            prom_duration(Duration::from_secs(3600)).as_deref(),
            Some("1h")
        );
        assert_eq!(
            prom_duration(Duration::from_secs(5400)).as_deref(),
            Some("90m")
        );
        assert_eq!(
            prom_duration(Duration::from_secs(45)).as_deref(),
            Some("45s")
        );
        assert_eq!(
            prom_duration(Duration::from_millis(1500)).as_deref(),
            Some("1500ms")
        );
        assert_eq!(prom_duration(Duration::from_micros(10)), None);
    }

    #[test]
    fn tokens_stay_out_of_debug_and_errors() {
        let src = PromSource {
            url: "http://p".into(),
            bearer_token: Some("s3cret".into()),
            window: Duration::from_secs(60),
            timeout: Duration::from_secs(1),
        };
        assert!(!format!("{src:?}").contains("s3cret"));
    }
}
