//! GuideLLM's `benchmarks.json`: a `benchmarks` list, one per strategy (constant or Poisson rate,
//! concurrent streams, synchronous, throughput), each with its metrics' percentiles under
//! `successful.percentiles` and its request totals.

use std::collections::BTreeMap;

use serde_json::Value;

use super::fields::{num, text, whole};
use super::types::{Offered, Run, Tested, key};

/// A benchmark of a GuideLLM file without its metrics.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("benchmarks[{index}]: no `metrics`")]
pub(super) struct NoMetrics {
    index: usize,
}

/// GuideLLM writes percentiles as `p001` (0.1), `p01` (1), `p05` (5), `p95`, `p999` (99.9).
pub(super) fn percentile(k: &str) -> Option<f64> {
    let digits = k.strip_prefix('p')?;
    let n: f64 = digits.parse().ok()?;
    Some(match digits.len() {
        3 => n / 10.0,
        _ => n,
    })
}

/// What was tested and one run per benchmark.
pub(super) fn read(v: &Value) -> Result<(Tested, Vec<Run>), NoMetrics> {
    let tested = Tested {
        model: text(v.pointer("/config/model")),
        ..Tested::default()
    };
    let mut runs = Vec::new();
    for (index, b) in v
        .get("benchmarks")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let metrics = b.get("metrics").ok_or(NoMetrics { index })?;
        let strategy = b.pointer("/config/strategy");
        let kind = strategy
            .and_then(|s| s.get("type_").or_else(|| s.get("type")))
            .and_then(Value::as_str)
            .unwrap_or("");
        let offered = match kind {
            "constant" | "poisson" => num(strategy.and_then(|s| s.get("rate")))
                .map(Offered::Rate)
                .unwrap_or(Offered::Unknown),
            "concurrent" => whole(strategy.and_then(|s| s.get("streams")))
                .map(Offered::Concurrency)
                .unwrap_or(Offered::Unknown),
            "synchronous" => Offered::Concurrency(1),
            "throughput" => Offered::Unbounded,
            _ => Offered::Unknown,
        };
        let totals = metrics.get("request_totals");
        let mut latency_ms = BTreeMap::new();
        for (tag, metric, scale) in [
            ("time_to_first_token_ms", "ttft", 1.0),
            ("inter_token_latency_ms", "itl", 1.0),
            ("time_per_output_token_ms", "tpot", 1.0),
            // GuideLLM's request latency is in seconds.
            ("request_latency", "e2e", 1000.0),
        ] {
            let Some(ps) = metrics
                .get(tag)
                .and_then(|m| m.pointer("/successful/percentiles"))
                .and_then(Value::as_object)
            else {
                continue;
            };
            for (k, val) in ps {
                if let (Some(p), Some(x)) = (percentile(k), num(Some(val))) {
                    latency_ms.insert(key(metric, p), x * scale);
                }
            }
        }
        runs.push(Run {
            offered,
            achieved_rps: num(metrics.pointer("/requests_per_second/successful/mean")),
            completed: num(totals.and_then(|t| t.get("successful"))),
            failed: num(totals.and_then(|t| t.get("errored"))),
            latency_ms,
        });
    }
    Ok((tested, runs))
}
