//! AIPerf's `profile_export_aiperf.json` and GenAI-Perf's `profile_export_genai_perf.json`: metric
//! tags mapping to stats objects (`request_throughput.avg`, `time_to_first_token.p95` with its
//! `unit`), one run per file, the offered load in `input_config.loadgen`.

use std::collections::BTreeMap;

use serde_json::Value;

use super::fields::{num, text, whole};
use super::types::{Offered, Run, Tested, key};

/// A field of an AIPerf file that is there but does not read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(super) enum AiperfError {
    #[error("`error_request_count` has no number `avg`")]
    ErrorCount,
    #[error("`{tag}.unit` is {unit:?}, not a time unit")]
    Unit { tag: &'static str, unit: String },
}

pub(super) fn tested(v: &Value) -> Tested {
    let input = v.get("input_config");
    let names = input
        .and_then(|i| {
            i.pointer("/endpoint/model_names")
                .or_else(|| i.get("model_names"))
        })
        .and_then(Value::as_array);
    // A run against several models at once does not test any one of them.
    let model = match names.map(Vec::as_slice) {
        Some([one]) => text(Some(one)),
        _ => None,
    };
    Tested {
        model,
        ..Tested::default()
    }
}

pub(super) fn run(v: &Value) -> Result<Run, AiperfError> {
    let loadgen = v.pointer("/input_config/loadgen");
    let offered = match (
        num(loadgen.and_then(|l| l.get("request_rate"))),
        whole(loadgen.and_then(|l| l.get("concurrency"))),
    ) {
        (Some(r), _) => Offered::Rate(r),
        (None, Some(c)) => Offered::Concurrency(c),
        (None, None) => Offered::Unknown,
    };
    let failed = match v.get("error_request_count") {
        // AIPerf writes `null` for a clean run.
        None | Some(Value::Null) => Some(
            v.get("error_summary")
                .and_then(Value::as_array)
                .map(|e| e.iter().filter_map(|x| num(x.get("count"))).sum())
                .unwrap_or(0.0),
        ),
        Some(e) => Some(num(e.get("avg")).ok_or(AiperfError::ErrorCount)?),
    };
    let mut latency_ms = BTreeMap::new();
    for (tag, metric) in [
        ("time_to_first_token", "ttft"),
        ("inter_token_latency", "itl"),
        ("request_latency", "e2e"),
    ] {
        let Some(stats) = v.get(tag).and_then(Value::as_object) else {
            continue;
        };
        let scale = match stats.get("unit").and_then(Value::as_str).unwrap_or("ms") {
            "ms" => 1.0,
            "s" | "sec" | "seconds" => 1000.0,
            "us" => 0.001,
            "ns" => 0.000_001,
            u => {
                return Err(AiperfError::Unit {
                    tag,
                    unit: u.to_string(),
                });
            }
        };
        for (k, val) in stats {
            let Some(p) = k.strip_prefix('p').and_then(|p| p.parse::<f64>().ok()) else {
                continue;
            };
            if let Some(x) = num(Some(val)) {
                latency_ms.insert(key(metric, p), x * scale);
            }
        }
    }
    Ok(Run {
        offered,
        achieved_rps: num(v.pointer("/request_throughput/avg")),
        completed: num(v.pointer("/request_count/avg")),
        failed,
        latency_ms,
    })
}
