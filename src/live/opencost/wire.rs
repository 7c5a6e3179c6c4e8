//! OpenCost's answers as they arrive, read into plain allocations and inference costs: both field
//! generations, sanitised label keys, and the `null`, `"NaN"` and bare `NaN` figures read as
//! unknown.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer};

use super::types::{Allocation, AnswerError, Costs, InferenceCost};
use crate::live::http::excerpt;
use crate::util::date::Timestamp;

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
    start: Option<String>,
    end: Option<String>,
    window: Option<RawWindow>,
    #[serde(deserialize_with = "number")]
    minutes: Option<f64>,
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

/// An allocation's (or its step's) window.
#[derive(Deserialize, Default)]
#[serde(default)]
struct RawWindow {
    start: Option<String>,
    end: Option<String>,
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
    parse_answer(body).map(|a| a.allocations)
}

/// An allocation response read: the allocations summed over steps, and when each allocation of
/// each step ran (what [`super::Coverage`] is made of).
#[derive(Debug)]
pub struct AllocationAnswer {
    pub allocations: Vec<Allocation>,
    pub periods: Vec<(Timestamp, Timestamp)>,
    /// Allocations that said nothing about when they ran.
    pub undated: usize,
}

/// See [`AllocationAnswer`].
pub fn parse_answer(body: &[u8]) -> Result<AllocationAnswer, AnswerError> {
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
    let mut periods = Vec::new();
    let mut undated = 0;
    for (key, raw) in sets.into_iter().flatten().flatten() {
        let Some(raw) = raw else { continue };
        let next = allocation(key.clone(), raw);
        match (next.start, next.end) {
            (Some(s), Some(e)) => periods.push((s, e)),
            _ => undated += 1,
        }
        match merged.get_mut(&key) {
            Some(a) => add(a, &next),
            None => {
                merged.insert(key, next);
            }
        }
    }
    Ok(AllocationAnswer {
        allocations: merged.into_values().collect(),
        periods,
        undated,
    })
}

/// When an allocation ran: its own `start`/`end`, else its step's `window`; one end and
/// `minutes` give the other.
fn period(raw: &RawAllocation) -> (Option<Timestamp>, Option<Timestamp>) {
    let time = |own: &Option<String>, step: Option<&Option<String>>| {
        own.as_deref()
            .or(step.and_then(|s| s.as_deref()))
            .and_then(|t| Timestamp::parse(t).ok())
    };
    let w = raw.window.as_ref();
    let start = time(&raw.start, w.map(|w| &w.start));
    let end = time(&raw.end, w.map(|w| &w.end));
    #[allow(clippy::cast_possible_truncation)]
    let secs = raw.minutes.map(|m| (m * 60.0).round() as i64);
    match (start, end, secs) {
        (None, Some(e), Some(s)) => (Some(Timestamp::from_unix(e.unix() - s)), Some(e)),
        (Some(b), None, Some(s)) => (Some(b), Some(Timestamp::from_unix(b.unix() + s))),
        (s, e, _) => (s, e),
    }
}

fn allocation(key: String, raw: RawAllocation) -> Allocation {
    let (start, end) = period(&raw);
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
        start,
        end,
        minutes: raw.minutes,
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
    a.start = match (a.start, b.start) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, y) => x.or(y),
    };
    a.end = a.end.max(b.end);
    a.minutes = sum(a.minutes, b.minutes);
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
