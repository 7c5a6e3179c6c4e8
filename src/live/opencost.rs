//! Cost from OpenCost: the allocation API (`GET /allocation`) over a window, and the inference
//! cost API (`GET /inferenceCost/total`) where the server has it.
//!
//! One allocation query per run, aggregated by `namespace,controllerKind,controller,pod` and
//! accumulated over the window, with `includeIdle=true` and `shareIdle=false`: gpuledger needs each
//! pod to find its workload (OpenCost's controller is the pod's immediate one, a StatefulSet where
//! gpuledger sees a LeaderWorkerSet), and the idle cost as its own `__idle__` entry so that the
//! report can spread it by a rule it states (OpenCost's HTTP API cannot share namespaces, so that
//! is done by the analysis too). The window is sent as an RFC 3339 pair, so that it is the same
//! window outcomes are counted over.
//!
//! OpenCost's wire format changed over time, and both generations are read: GPU request and usage
//! averages are top-level fields in older versions and only inside `gpuAllocation` in newer ones.
//! Label keys come Prometheus-sanitised (`gpuledger.io/tenant` → `gpuledger_io_tenant`); see
//! [`sanitize_label`]. A figure OpenCost could not compute arrives as `null`, the string `"NaN"`,
//! or (from some encoders) a bare `NaN` token that is not JSON: all three are read as unknown,
//! never as zero. A server error, an error body or a body that is not an allocation response is an
//! `Err` with the reason, so that the caller reports cost as unknown; the transport is
//! [`super::http`]'s, the same client Prometheus is read with.

use std::collections::BTreeMap;
use std::time::Duration;

use http::StatusCode;
use serde::{Deserialize, Deserializer};

use super::http::{Client, HttpError, excerpt};
use crate::util::date::Timestamp;

/// Where OpenCost is and how to read it.
#[derive(Clone)]
pub struct OpenCostSource {
    /// The API base URL (`http://opencost.opencost:9003`); `/allocation` is appended.
    pub url: String,
    pub bearer_token: Option<String>,
    /// For the whole read (both queries).
    pub timeout: Duration,
}

// By hand, so that the token never reaches a log line through `{:?}`.
impl std::fmt::Debug for OpenCostSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenCostSource")
            .field("url", &self.url)
            .field(
                "bearer_token",
                &self.bearer_token.as_ref().map(|_| "<redacted>"),
            )
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// The period costs and outcomes are counted over: `[start, end)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub start: Timestamp,
    pub end: Timestamp,
}

impl Window {
    /// The `window` that ends at `end`.
    pub fn ending(end: Timestamp, length: Duration) -> Window {
        let secs = i64::try_from(length.as_secs()).unwrap_or(i64::MAX);
        Window {
            start: Timestamp::from_unix(end.unix().saturating_sub(secs)),
            end,
        }
    }

    pub fn seconds(&self) -> i64 {
        self.end.seconds_since(self.start)
    }

    pub fn hours(&self) -> f64 {
        self.seconds() as f64 / 3600.0
    }

    /// OpenCost's `window` parameter: an RFC 3339 pair.
    pub fn param(&self) -> String {
        format!("{},{}", self.start, self.end)
    }
}

/// One allocation of the accumulated response, with the fields gpuledger uses. Every figure is
/// `None` when OpenCost did not give a finite number.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Allocation {
    /// The aggregation key (`team-a/deployment/chat/chat-7d9f-x2`, `__idle__`).
    pub key: String,
    pub cluster: Option<String>,
    pub namespace: Option<String>,
    /// Lower case, as OpenCost writes it (`deployment`, `statefulset`, `job`).
    pub controller_kind: Option<String>,
    pub controller: Option<String>,
    pub pod: Option<String>,
    /// Pod labels, keys sanitised by OpenCost.
    pub labels: BTreeMap<String, String>,
    /// Namespace labels, keys sanitised by OpenCost.
    pub namespace_labels: BTreeMap<String, String>,
    pub gpu_hours: Option<f64>,
    pub costs: Costs,
    /// Average GPUs requested and used over the window (either field generation).
    pub gpu_request_average: Option<f64>,
    pub gpu_usage_average: Option<f64>,
}

impl Allocation {
    /// OpenCost's reserved names: `__idle__`, `__unallocated__`, `__unmounted__`, `__shared__`,
    /// `__external__`.
    pub fn is_idle(&self) -> bool {
        self.key == "__idle__" || self.key.starts_with("__idle__/")
    }
}

/// The cost of one allocation by resource, in the currency OpenCost is configured with.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Costs {
    pub gpu: Option<f64>,
    pub cpu: Option<f64>,
    pub ram: Option<f64>,
    pub pv: Option<f64>,
    pub network: Option<f64>,
    pub load_balancer: Option<f64>,
    pub shared: Option<f64>,
    pub external: Option<f64>,
    /// OpenCost's own total (adjustments included).
    pub total: Option<f64>,
}

/// Cost per model from `/inferenceCost/total`.
#[derive(Debug, Clone, PartialEq)]
pub struct InferenceCost {
    pub model: String,
    pub namespace: Option<String>,
    pub total_cost: Option<f64>,
    pub total_tokens: Option<f64>,
    pub cost_per_million_tokens: Option<f64>,
    /// `allocation` (reconciles to the bill) or `usage`.
    pub cost_basis: Option<String>,
}

/// What OpenCost answered.
#[derive(Debug, Clone, PartialEq)]
pub struct CostData {
    pub source: String,
    pub allocations: Vec<Allocation>,
    /// `Ok(None)` when the server does not serve inference cost (older than 1.121, or disabled).
    pub inference: Result<Option<Vec<InferenceCost>>, OpenCostError>,
}

/// Why OpenCost gave no cost (or no inference cost); the report shows the cost as unknown with it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum OpenCostError {
    #[error("the cost window is empty")]
    EmptyWindow,
    #[error(transparent)]
    Http(#[from] HttpError),
    /// An error status, with OpenCost's own message when the body has one and a hint.
    #[error("OpenCost at {base} answered {status}{hint} to {path}{}", detail.as_ref().map(|d| format!(": {d}")).unwrap_or_default())]
    Status {
        base: String,
        path: &'static str,
        status: StatusCode,
        hint: &'static str,
        detail: Option<String>,
    },
    #[error("OpenCost at {base}{path}: {reason}")]
    Answer {
        base: String,
        path: &'static str,
        #[source]
        reason: AnswerError,
    },
}

/// What is wrong with a body OpenCost sent with a success status. The JSON parser's message is
/// kept as text so that the answer (and the report built from it) can be cloned and compared.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AnswerError {
    #[error("not an allocation response ({reason}): {excerpt}")]
    NotAllocations { reason: String, excerpt: String },
    #[error("error code {code}: {message}")]
    Code { code: i64, message: String },
    /// `detail` is OpenCost's message, else the start of the body.
    #[error("a response without data: {detail}")]
    NoData { detail: String },
    #[error("not an inference cost response ({reason}): {excerpt}")]
    NotInference { reason: String, excerpt: String },
    #[error("no data.inferenceCosts in {excerpt}")]
    NoInferenceCosts { excerpt: String },
}

const ALLOCATION_PATH: &str = "/allocation";
const INFERENCE_PATH: &str = "/inferenceCost/total";

/// Reads the allocations (and inference cost) over `window`; see the module documentation.
pub async fn read(src: &OpenCostSource, window: Window) -> Result<CostData, OpenCostError> {
    if window.seconds() <= 0 {
        return Err(OpenCostError::EmptyWindow);
    }
    let client = Client::new(
        "OpenCost",
        &src.url,
        src.bearer_token.as_deref(),
        src.timeout,
    )?;
    let base = client.shown_url().to_string();
    let w = window.param();
    let query = [
        ("window", w.as_str()),
        ("aggregate", "namespace,controllerKind,controller,pod"),
        ("accumulate", "true"),
        ("includeIdle", "true"),
        ("shareIdle", "false"),
    ];
    let response = client.get(ALLOCATION_PATH, &query).await?;
    if !response.status.is_success() {
        return Err(http_error(
            &base,
            ALLOCATION_PATH,
            response.status,
            &response.body,
            client.has_token(),
        ));
    }
    let allocations =
        parse_allocations(&response.body).map_err(|reason| OpenCostError::Answer {
            base: base.clone(),
            path: ALLOCATION_PATH,
            reason,
        })?;
    let inference = match client
        .get(
            INFERENCE_PATH,
            &[
                ("window", w.as_str()),
                ("aggregate", "model_name,namespace"),
            ],
        )
        .await
    {
        Err(e) => Err(e.into()),
        // Not served: an OpenCost before 1.121, or INFERENCE_COST_ENABLED unset.
        Ok(r) if r.status == StatusCode::NOT_FOUND => Ok(None),
        Ok(r) if !r.status.is_success() => Err(http_error(
            &base,
            INFERENCE_PATH,
            r.status,
            &r.body,
            client.has_token(),
        )),
        Ok(r) => parse_inference(&r.body)
            .map(Some)
            .map_err(|reason| OpenCostError::Answer {
                base: base.clone(),
                path: INFERENCE_PATH,
                reason,
            }),
    };
    Ok(CostData {
        source: base,
        allocations,
        inference,
    })
}

fn http_error(
    base: &str,
    path: &'static str,
    status: StatusCode,
    body: &[u8],
    has_token: bool,
) -> OpenCostError {
    let detail = match serde_json::from_slice::<ErrorBody>(&without_nan(body)) {
        Ok(ErrorBody {
            message: Some(m), ..
        }) if !m.is_empty() => m,
        _ => excerpt(body),
    };
    let hint = match status {
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN if has_token => {
            " (check the bearer token)"
        }
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => " (a bearer token may be needed)",
        StatusCode::NOT_FOUND => " (is the URL the OpenCost API, port 9003?)",
        _ => "",
    };
    OpenCostError::Status {
        base: base.to_string(),
        path,
        status,
        hint,
        detail: (!detail.is_empty()).then_some(detail),
    }
}

#[derive(Deserialize)]
struct ErrorBody {
    #[serde(default)]
    message: Option<String>,
}

/// `{code, status, data: [ {key: allocation}, … ], message}`: one map per step.
#[derive(Deserialize)]
struct AllocationResponse {
    #[serde(default)]
    code: Option<i64>,
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    data: Option<Vec<Option<AllocationSet>>>,
}

/// One step's allocations by key; `null` entries are skipped.
type AllocationSet = BTreeMap<String, Option<RawAllocation>>;

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct RawAllocation {
    properties: Option<Properties>,
    #[serde(deserialize_with = "number")]
    gpu_hours: Option<f64>,
    #[serde(deserialize_with = "number")]
    gpu_cost: Option<f64>,
    #[serde(deserialize_with = "number")]
    cpu_cost: Option<f64>,
    #[serde(deserialize_with = "number")]
    ram_cost: Option<f64>,
    #[serde(deserialize_with = "number")]
    pv_cost: Option<f64>,
    #[serde(deserialize_with = "number")]
    network_cost: Option<f64>,
    #[serde(deserialize_with = "number")]
    load_balancer_cost: Option<f64>,
    #[serde(deserialize_with = "number")]
    shared_cost: Option<f64>,
    #[serde(deserialize_with = "number")]
    external_cost: Option<f64>,
    #[serde(deserialize_with = "number")]
    total_cost: Option<f64>,
    /// Older servers.
    #[serde(deserialize_with = "number")]
    gpu_request_average: Option<f64>,
    #[serde(deserialize_with = "number")]
    gpu_usage_average: Option<f64>,
    /// Newer servers.
    gpu_allocation: Option<GpuAllocation>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct GpuAllocation {
    #[serde(deserialize_with = "number")]
    gpu_request_average: Option<f64>,
    #[serde(deserialize_with = "number")]
    gpu_usage_average: Option<f64>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct Properties {
    cluster: Option<String>,
    namespace: Option<String>,
    controller_kind: Option<String>,
    controller: Option<String>,
    pod: Option<String>,
    #[serde(deserialize_with = "string_map")]
    labels: BTreeMap<String, String>,
    #[serde(deserialize_with = "string_map")]
    namespace_labels: BTreeMap<String, String>,
}

/// A number, a numeric string, `"NaN"` or `null`: only a finite number is kept.
fn number<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    let v = Option::<serde_json::Value>::deserialize(d)?;
    Ok(match v {
        Some(serde_json::Value::Number(n)) => n.as_f64(),
        Some(serde_json::Value::String(s)) => s.trim().parse::<f64>().ok(),
        _ => None,
    }
    .filter(|f| f.is_finite()))
}

/// A label map; `null` is empty, and non-text values are dropped rather than failing the read.
fn string_map<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<String, String>, D::Error> {
    let v = Option::<BTreeMap<String, serde_json::Value>>::deserialize(d)?;
    Ok(v.unwrap_or_default()
        .into_iter()
        .filter_map(|(k, v)| match v {
            serde_json::Value::String(s) => Some((k, s)),
            _ => None,
        })
        .collect())
}

/// The body with every bare `NaN`, `Inf`, `+Inf`, `-Inf`, `Infinity` outside strings replaced by
/// `null`: some encoders write them, and they are not JSON.
pub fn without_nan(body: &[u8]) -> Vec<u8> {
    const WORDS: [&[u8]; 7] = [
        b"-Infinity",
        b"+Infinity",
        b"Infinity",
        b"-Inf",
        b"+Inf",
        b"Inf",
        b"NaN",
    ];
    let mut out = Vec::with_capacity(body.len());
    let (mut in_string, mut escaped) = (false, false);
    let mut i = 0;
    while let Some(&c) = body.get(i) {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == b'\\' {
                escaped = true;
            } else if c == b'"' {
                in_string = false;
            }
            i += 1;
            continue;
        }
        if c == b'"' {
            in_string = true;
            out.push(c);
            i += 1;
            continue;
        }
        let rest = body.get(i..).unwrap_or_default();
        if let Some(w) = WORDS.iter().find(|w| rest.starts_with(w)) {
            out.extend_from_slice(b"null");
            i += w.len();
            continue;
        }
        out.push(c);
        i += 1;
    }
    out
}

/// The allocations of a response, summed over its sets (a server that ignores `accumulate`
/// answers one set per step). Sorted by key.
pub fn parse_allocations(body: &[u8]) -> Result<Vec<Allocation>, AnswerError> {
    let clean = without_nan(body);
    let response: AllocationResponse =
        serde_json::from_slice(&clean).map_err(|e| AnswerError::NotAllocations {
            reason: e.to_string(),
            excerpt: excerpt(body),
        })?;
    if let Some(code) = response.code.filter(|c| *c != 200) {
        return Err(AnswerError::Code {
            code,
            message: response.message.unwrap_or_default(),
        });
    }
    let Some(sets) = response.data else {
        return Err(AnswerError::NoData {
            detail: response.message.unwrap_or_else(|| excerpt(body)),
        });
    };
    let mut merged: BTreeMap<String, Allocation> = BTreeMap::new();
    for (key, raw) in sets.into_iter().flatten().flatten() {
        let Some(raw) = raw else { continue };
        let next = allocation(key.clone(), raw);
        match merged.get_mut(&key) {
            Some(a) => add(a, &next),
            None => {
                merged.insert(key, next);
            }
        }
    }
    Ok(merged.into_values().collect())
}

fn allocation(key: String, raw: RawAllocation) -> Allocation {
    let p = raw.properties.unwrap_or_default();
    let gpu = raw.gpu_allocation.unwrap_or_default();
    let text = |s: Option<String>| s.filter(|s| !s.is_empty());
    Allocation {
        key,
        cluster: text(p.cluster),
        namespace: text(p.namespace),
        controller_kind: text(p.controller_kind).map(|k| k.to_lowercase()),
        controller: text(p.controller),
        pod: text(p.pod),
        labels: p.labels,
        namespace_labels: p.namespace_labels,
        gpu_hours: raw.gpu_hours,
        costs: Costs {
            gpu: raw.gpu_cost,
            cpu: raw.cpu_cost,
            ram: raw.ram_cost,
            pv: raw.pv_cost,
            network: raw.network_cost,
            load_balancer: raw.load_balancer_cost,
            shared: raw.shared_cost,
            external: raw.external_cost,
            total: raw.total_cost,
        },
        // The newer field wins: the top-level one is gone from newer servers, and where both
        // exist they are the same figure.
        gpu_request_average: gpu.gpu_request_average.or(raw.gpu_request_average),
        gpu_usage_average: gpu.gpu_usage_average.or(raw.gpu_usage_average),
    }
}

/// Adds the figures of one step to the accumulated allocation; unknown in any step is unknown.
fn add(a: &mut Allocation, b: &Allocation) {
    let sum = |x: Option<f64>, y: Option<f64>| Some(x? + y?);
    a.gpu_hours = sum(a.gpu_hours, b.gpu_hours);
    let (x, y) = (&mut a.costs, &b.costs);
    x.gpu = sum(x.gpu, y.gpu);
    x.cpu = sum(x.cpu, y.cpu);
    x.ram = sum(x.ram, y.ram);
    x.pv = sum(x.pv, y.pv);
    x.network = sum(x.network, y.network);
    x.load_balancer = sum(x.load_balancer, y.load_balancer);
    x.shared = sum(x.shared, y.shared);
    x.external = sum(x.external, y.external);
    x.total = sum(x.total, y.total);
    // Averages of several steps are not a sum: kept only when one step gave them.
    a.gpu_request_average = None;
    a.gpu_usage_average = None;
}

/// `data.inferenceCosts` (the implementation) or `data.totals` (the design document).
#[derive(Deserialize)]
struct InferenceResponse {
    #[serde(default)]
    data: Option<InferenceData>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct InferenceData {
    #[serde(default, alias = "totals")]
    inference_costs: Option<BTreeMap<String, RawInference>>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct RawInference {
    properties: Option<InferenceProperties>,
    cost_basis: Option<String>,
    #[serde(deserialize_with = "number")]
    total_cost: Option<f64>,
    #[serde(deserialize_with = "number")]
    total_tokens: Option<f64>,
    #[serde(deserialize_with = "number")]
    cost_per_million_tokens: Option<f64>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct InferenceProperties {
    model_name: Option<String>,
    namespace: Option<String>,
}

/// Cost per model, sorted by model and namespace.
pub fn parse_inference(body: &[u8]) -> Result<Vec<InferenceCost>, AnswerError> {
    let clean = without_nan(body);
    let r: InferenceResponse =
        serde_json::from_slice(&clean).map_err(|e| AnswerError::NotInference {
            reason: e.to_string(),
            excerpt: excerpt(body),
        })?;
    let costs =
        r.data
            .and_then(|d| d.inference_costs)
            .ok_or_else(|| AnswerError::NoInferenceCosts {
                excerpt: excerpt(body),
            })?;
    let mut out: Vec<InferenceCost> = costs
        .into_iter()
        .map(|(key, c)| {
            let p = c.properties.unwrap_or_default();
            InferenceCost {
                model: p
                    .model_name
                    .filter(|m| !m.is_empty())
                    .unwrap_or_else(|| key.split(':').next().unwrap_or_default().to_string()),
                namespace: p.namespace.filter(|n| !n.is_empty()),
                total_cost: c.total_cost,
                total_tokens: c.total_tokens,
                cost_per_million_tokens: c.cost_per_million_tokens,
                cost_basis: c.cost_basis,
            }
        })
        .collect();
    out.sort_by(|a, b| (&a.model, &a.namespace).cmp(&(&b.model, &b.namespace)));
    Ok(out)
}

/// A label key as OpenCost writes it: Prometheus-sanitised, every character outside
/// `[A-Za-z0-9_]` replaced by `_` (`app.kubernetes.io/name` → `app_kubernetes_io_name`).
pub fn sanitize_label(key: &str) -> String {
    key.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_field_generations_are_read() {
        let old = br#"{"code":200,"status":"success","data":[{"a/deployment/x/x-1":{"name":"a/deployment/x/x-1","properties":{"namespace":"a","controllerKind":"deployment","controller":"x","pod":"x-1","labels":{"gpuledger_io_tenant":"acme"}},"gpuHours":2,"gpuCost":4.5,"cpuCost":0.5,"ramCost":0.25,"totalCost":5.25,"gpuRequestAverage":1,"gpuUsageAverage":0.4}}]}"#;
        let new = br#"{"code":200,"status":"success","data":[{"a/deployment/x/x-1":{"properties":{"namespace":"a","controllerKind":"Deployment","controller":"x","pod":"x-1"},"gpuHours":2,"gpuCost":4.5,"totalCost":5.25,"gpuAllocation":{"gpuDevice":"nvidia0","gpuModel":"Tesla T4","isGPUShared":false,"gpuUsageAverage":0.4,"gpuRequestAverage":1}}}]}"#;
        for body in [&old[..], &new[..]] {
            let a = parse_allocations(body).unwrap();
            assert_eq!(a.len(), 1);
            let a = &a[0];
            assert_eq!(a.namespace.as_deref(), Some("a"));
            assert_eq!(a.controller_kind.as_deref(), Some("deployment"));
            assert_eq!(a.gpu_request_average, Some(1.0));
            assert_eq!(a.gpu_usage_average, Some(0.4));
            assert_eq!(a.costs.total, Some(5.25));
        }
        let a = parse_allocations(old).unwrap();
        assert_eq!(a[0].labels.get("gpuledger_io_tenant").unwrap(), "acme");
    }

    #[test]
    fn nan_in_any_spelling_is_unknown() {
        let body = br#"{"code":200,"data":[{"k":{"gpuCost":NaN,"cpuCost":"NaN","ramCost":null,"pvCost":-Inf,"totalCost":"1.5","name":"NaN inside a string stays"}}]}"#;
        let a = parse_allocations(body).unwrap();
        let c = a[0].costs;
        assert_eq!((c.gpu, c.cpu, c.ram, c.pv), (None, None, None, None));
        assert_eq!(c.total, Some(1.5));
        assert_eq!(
            without_nan(br#"{"a":"NaN \"Inf\"","b":NaN}"#),
            br#"{"a":"NaN \"Inf\"","b":null}"#.to_vec()
        );
    }

    #[test]
    fn steps_are_summed_and_unknown_stays_unknown() {
        let body = br#"{"code":200,"data":[{"k":{"gpuCost":1,"totalCost":2}},{"k":{"gpuCost":1,"totalCost":null}},null]}"#;
        let a = parse_allocations(body).unwrap();
        assert_eq!(a[0].costs.gpu, Some(2.0));
        assert_eq!(a[0].costs.total, None);
    }

    #[test]
    fn error_bodies_are_errors() {
        let e = parse_allocations(br#"{"code":500,"message":"boom"}"#)
            .unwrap_err()
            .to_string();
        assert_eq!(e, "error code 500: boom");
        assert!(
            parse_allocations(b"<html>502</html>")
                .unwrap_err()
                .to_string()
                .starts_with("not an allocation response")
        );
        assert!(
            parse_allocations(br#"{"code":200}"#)
                .unwrap_err()
                .to_string()
                .contains("without data")
        );
        let e = http_error(
            "http://oc:9003",
            "/allocation",
            StatusCode::INTERNAL_SERVER_ERROR,
            br#"{"code":500,"message":"Error: prometheus unreachable"}"#,
            false,
        )
        .to_string();
        assert_eq!(
            e,
            "OpenCost at http://oc:9003 answered 500 Internal Server Error to /allocation: Error: prometheus unreachable"
        );
    }

    #[test]
    fn inference_cost_in_both_shapes() {
        let body = br#"{"data":{"inferenceCosts":{"Qwen/Qwen3-32B:llm":{"properties":{"modelName":"Qwen/Qwen3-32B","namespace":"llm"},"costBasis":"allocation","totalCost":42.5,"totalTokens":15000000,"costPerMillionTokens":2.83}},"window":{}}}"#;
        let c = parse_inference(body).unwrap();
        assert_eq!(c[0].model, "Qwen/Qwen3-32B");
        assert_eq!(c[0].cost_per_million_tokens, Some(2.83));
        let design = br#"{"data":{"totals":{"m:ns":{"totalCost":NaN}}}}"#;
        let c = parse_inference(design).unwrap();
        assert_eq!(c[0].model, "m");
        assert_eq!(c[0].total_cost, None);
    }

    #[test]
    fn labels_are_sanitised_like_prometheus() {
        assert_eq!(sanitize_label("gpuledger.io/tenant"), "gpuledger_io_tenant");
        assert_eq!(sanitize_label("tenant"), "tenant");
    }

    #[test]
    fn window_is_an_rfc3339_pair() {
        let end = Timestamp::parse("2026-12-02T12:00:00Z").unwrap();
        let w = Window::ending(end, Duration::from_secs(3600));
        assert_eq!(w.param(), "2026-12-02T11:00:00Z,2026-12-02T12:00:00Z");
        assert_eq!(w.hours(), 1.0);
    }
}
