//! vLLM `bench serve --save-result`: a flat object with a numeric `request_throughput` (a list of
//! them as `bench sweep serve_sla` writes). `--metadata KEY=VALUE` pairs land as top-level keys,
//! which is where the tested GPU type, GPUs, replicas and serving settings are read from
//! (`gpu_type`, `gpus`, `replicas`, `tensor_parallel_size`, …). Percentiles are keys of the form
//! `p95_ttft_ms`.

use std::collections::BTreeMap;

use serde_json::Value;

use super::fields::{num, text, whole};
use super::types::{Offered, Run, SETTINGS, Tested, key};

/// Whether `v` is one vLLM run: a numeric `request_throughput` (AIPerf's is an object).
pub(super) fn is_vllm(v: &Value) -> bool {
    v.get("request_throughput").is_some_and(Value::is_number)
}

pub(super) fn tested(v: &Value) -> Tested {
    Tested {
        model: text(v.get("model_id")),
        gpu_type: text(v.get("gpu_type")).or_else(|| text(v.get("gpu"))),
        gpus_per_replica: whole(v.get("gpus")).or_else(|| whole(v.get("gpus_per_replica"))),
        replicas: whole(v.get("replicas")),
        settings: SETTINGS
            .iter()
            .filter_map(|k| text(v.get(*k)).map(|s| (k.to_string(), s)))
            .collect(),
    }
}

pub(super) fn run(v: &Value) -> Run {
    let offered = match v.get("request_rate") {
        Some(Value::String(s)) if s.trim().eq_ignore_ascii_case("inf") => {
            match whole(v.get("max_concurrency")) {
                Some(c) => Offered::Concurrency(c),
                None => Offered::Unbounded,
            }
        }
        r => match num(r) {
            Some(r) => Offered::Rate(r),
            None => whole(v.get("max_concurrency"))
                .map(Offered::Concurrency)
                .unwrap_or(Offered::Unknown),
        },
    };
    let completed = num(v.get("completed"));
    let failed = num(v.get("failed")).or_else(|| {
        // Versions before `failed` was written: what was sent and did not complete.
        let sent = num(v.get("num_prompts"))?;
        Some((sent - completed?).max(0.0))
    });
    let mut latency_ms = BTreeMap::new();
    if let Some(map) = v.as_object() {
        for (k, val) in map {
            let Some(rest) = k.strip_prefix('p').and_then(|r| r.strip_suffix("_ms")) else {
                continue;
            };
            let Some((pct, metric)) = rest.split_once('_') else {
                continue;
            };
            let metric = match metric {
                "ttft" => "ttft",
                "itl" => "itl",
                "tpot" => "tpot",
                "e2el" => "e2e",
                _ => continue,
            };
            if let (Ok(p), Some(ms)) = (pct.parse::<f64>(), num(Some(val))) {
                latency_ms.insert(key(metric, p), ms);
            }
        }
    }
    Run {
        offered,
        achieved_rps: num(v.get("request_throughput")),
        completed,
        failed,
        latency_ms,
    }
}
