//! Load-test result files, read into one shape, and the tested-capacity rule.
//!
//! Three formats are read, told apart by their shape rather than their file name (people rename
//! files): vLLM `bench serve --save-result` (a flat object with a numeric `request_throughput`,
//! or a list of them as `bench sweep serve_sla` writes), AIPerf and GenAI-Perf
//! (`profile_export_aiperf.json`: metric tags mapping to stats objects, `request_throughput.avg`),
//! and GuideLLM (`benchmarks.json`: a `benchmarks` list, one per strategy). A directory is read
//! as every `.json` file in it, in name order, as one sweep (vLLM writes one file per run). A file
//! that is none of these is an error naming it; a file that is not JSON names its line and column.
//!
//! What was tested is read where the format records it: the model always; GPU type, GPUs per
//! replica, replicas and serving settings only where the file carries them (vLLM writes
//! `--metadata KEY=VALUE` pairs as top-level keys: `gpu_type`, `gpus`, `replicas`,
//! `tensor_parallel_size`, …). What a file does not record cannot be checked against the live
//! workload, and the report says so instead of assuming it matches.
//!
//! Latencies are kept in milliseconds under `<metric>_p<percentile>` (`ttft_p95`), with the
//! metrics of the latency objective: `ttft`, `itl`, `tpot`, `e2e`.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use crate::error::InputError;
use crate::intent::LatencyBound;

/// Which tool wrote the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// `vllm bench serve --save-result` (and `bench sweep serve_sla`).
    VllmBench,
    /// AIPerf's `profile_export_aiperf.json` or GenAI-Perf's `profile_export_genai_perf.json`.
    Aiperf,
    /// GuideLLM's `benchmarks.json`.
    Guidellm,
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Format::VllmBench => "vLLM bench serve",
            Format::Aiperf => "AIPerf/GenAI-Perf",
            Format::Guidellm => "GuideLLM",
        })
    }
}

/// The load a run offered.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind", content = "value")]
pub enum Offered {
    /// Requests per second (open loop).
    Rate(f64),
    /// Concurrent requests (closed loop).
    Concurrency(u64),
    /// As fast as possible (`request_rate: "inf"`, GuideLLM `throughput`).
    Unbounded,
    Unknown,
}

impl std::fmt::Display for Offered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Offered::Rate(r) => write!(f, "rate {r} req/s"),
            Offered::Concurrency(c) => write!(f, "concurrency {c}"),
            Offered::Unbounded => f.write_str("unbounded rate"),
            Offered::Unknown => f.write_str("offered load not recorded"),
        }
    }
}

/// One run at one offered load.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Run {
    pub offered: Offered,
    /// Completed requests per second over the run: the sustained rate.
    pub achieved_rps: Option<f64>,
    pub completed: Option<f64>,
    /// Failed requests; `None` when the file does not say.
    pub failed: Option<f64>,
    /// `ttft_p95` → milliseconds.
    pub latency_ms: BTreeMap<String, f64>,
}

impl Run {
    /// Failed / (completed + failed); `None` when either is unknown or nothing ran.
    pub fn error_share(&self) -> Option<f64> {
        let (c, f) = (self.completed?, self.failed?);
        let total = c + f;
        (total > 0.0).then(|| f / total)
    }
}

/// What the load test ran against, where the file records it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Tested {
    pub model: Option<String>,
    pub gpu_type: Option<String>,
    pub gpus_per_replica: Option<u64>,
    pub replicas: Option<u64>,
    /// Serving settings the file records (`tensor_parallel_size`, `max_num_seqs`, …).
    pub settings: BTreeMap<String, String>,
}

/// A load-test result: the file, its format, what was tested and its runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoadTest {
    pub file: String,
    pub format: Format,
    pub tested: Tested,
    pub runs: Vec<Run>,
}

/// vLLM `--metadata` keys (and the same names elsewhere) that are serving settings: a change in
/// any of them changes what one replica can serve.
pub const SETTINGS: [&str; 10] = [
    "tensor_parallel_size",
    "pipeline_parallel_size",
    "data_parallel_size",
    "max_num_seqs",
    "max_num_batched_tokens",
    "max_model_len",
    "quantization",
    "dtype",
    "kv_cache_dtype",
    "enable_prefix_caching",
];

/// Reads a load-test file, or every `.json` file of a directory as one sweep. `shown` names the
/// path in errors (as the annotation wrote it).
pub fn read(path: &Path, shown: &str) -> Result<LoadTest, InputError> {
    let io = |e: std::io::Error| InputError {
        file: shown.to_string(),
        line: None,
        column: None,
        message: format!("cannot read the load test: {e}"),
    };
    if path.is_dir() {
        let mut files: Vec<_> = std::fs::read_dir(path)
            .map_err(io)?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        let mut out: Option<LoadTest> = None;
        for f in &files {
            let name = format!(
                "{}/{}",
                shown.trim_end_matches('/'),
                f.file_name()
                    .map(|n| n.to_string_lossy())
                    .unwrap_or_default()
            );
            let text = read_capped(f, &name)?;
            let lt = parse(&text, &name)?;
            match &mut out {
                None => {
                    out = Some(LoadTest {
                        file: shown.to_string(),
                        ..lt
                    })
                }
                Some(acc) => {
                    if acc.format != lt.format || acc.tested != lt.tested {
                        return Err(InputError {
                            file: name,
                            line: None,
                            column: None,
                            message: format!(
                                "is not part of the same load test as the other files of {shown} (another format, model or tested configuration)"
                            ),
                        });
                    }
                    acc.runs.extend(lt.runs);
                }
            }
        }
        return out.ok_or_else(|| InputError {
            file: shown.to_string(),
            line: None,
            column: None,
            message: "is a directory without .json load-test results".into(),
        });
    }
    let text = read_capped(path, shown)?;
    parse(&text, shown)
}

/// Load-test results with every request in them (`--save-detailed`) run to tens of megabytes; past
/// this size a file is refused rather than read into memory.
const MAX_BYTES: u64 = 256 << 20;

fn read_capped(path: &Path, shown: &str) -> Result<String, InputError> {
    let err = |message: String| InputError {
        file: shown.to_string(),
        line: None,
        column: None,
        message,
    };
    let len = std::fs::metadata(path)
        .map_err(|e| err(format!("cannot read the load test: {e}")))?
        .len();
    if len > MAX_BYTES {
        return Err(err(format!(
            "is {len} bytes, more than the {MAX_BYTES} a load-test result may have"
        )));
    }
    std::fs::read_to_string(path).map_err(|e| err(format!("cannot read the load test: {e}")))
}

/// Parses one load-test file's text; `file` names it in errors.
pub fn parse(text: &str, file: &str) -> Result<LoadTest, InputError> {
    let err = |message: String| InputError {
        file: file.to_string(),
        line: None,
        column: None,
        message,
    };
    let v: Value = serde_json::from_str(text).map_err(|e| InputError {
        file: file.to_string(),
        line: u32::try_from(e.line()).ok().filter(|l| *l > 0),
        column: u32::try_from(e.column()).ok().filter(|c| *c > 0),
        message: format!("not a JSON load-test result: {e}"),
    })?;
    let (format, tested, runs) = match &v {
        Value::Array(items) if !items.is_empty() && items.iter().all(is_vllm) => {
            let mut runs = Vec::new();
            let mut tested = None;
            for (i, item) in items.iter().enumerate() {
                let t = vllm_tested(item);
                if tested.as_ref().is_some_and(|x| *x != t) {
                    return Err(err(format!(
                        "run [{i}] tested another model or configuration than run [0]"
                    )));
                }
                tested = Some(t);
                runs.push(vllm_run(item));
            }
            (Format::VllmBench, tested.unwrap_or_default(), runs)
        }
        Value::Object(_) if v.get("benchmarks").is_some_and(Value::is_array) => {
            guidellm(&v).map_err(err)?
        }
        Value::Object(_) if v.get("request_throughput").is_some_and(Value::is_object) => (
            Format::Aiperf,
            aiperf_tested(&v),
            vec![aiperf_run(&v).map_err(err)?],
        ),
        Value::Object(_) if is_vllm(&v) => (Format::VllmBench, vllm_tested(&v), vec![vllm_run(&v)]),
        _ => {
            return Err(err(
                "is not a load-test result gpuledger reads: expected vLLM bench serve \
                 (`request_throughput`, a number), AIPerf/GenAI-Perf (`request_throughput.avg`) \
                 or GuideLLM (`benchmarks`)"
                    .into(),
            ));
        }
    };
    if runs.is_empty() {
        return Err(err("has no runs".into()));
    }
    Ok(LoadTest {
        file: file.to_string(),
        format,
        tested,
        runs,
    })
}

fn num(v: Option<&Value>) -> Option<f64> {
    v.and_then(Value::as_f64).filter(|x| x.is_finite())
}

fn text(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_string()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn whole(v: Option<&Value>) -> Option<u64> {
    match v? {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn is_vllm(v: &Value) -> bool {
    v.get("request_throughput").is_some_and(Value::is_number)
}

fn vllm_tested(v: &Value) -> Tested {
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

fn vllm_run(v: &Value) -> Run {
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

/// `ttft_p95`, `ttft_p99.9`.
fn key(metric: &str, percentile: f64) -> String {
    format!("{metric}_p{percentile}")
}

fn aiperf_tested(v: &Value) -> Tested {
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

fn aiperf_run(v: &Value) -> Result<Run, String> {
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
        Some(e) => {
            Some(num(e.get("avg")).ok_or("`error_request_count` has no number `avg`".to_string())?)
        }
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
            u => return Err(format!("`{tag}.unit` is {u:?}, not a time unit")),
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

/// GuideLLM writes percentiles as `p001` (0.1), `p01` (1), `p05` (5), `p95`, `p999` (99.9).
fn guidellm_percentile(k: &str) -> Option<f64> {
    let digits = k.strip_prefix('p')?;
    let n: f64 = digits.parse().ok()?;
    Some(match digits.len() {
        3 => n / 10.0,
        _ => n,
    })
}

type Parsed = (Format, Tested, Vec<Run>);

fn guidellm(v: &Value) -> Result<Parsed, String> {
    let tested = Tested {
        model: text(v.pointer("/config/model")),
        ..Tested::default()
    };
    let mut runs = Vec::new();
    for (i, b) in v
        .get("benchmarks")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let at = |f: &str| format!("benchmarks[{i}]: {f}");
        let metrics = b.get("metrics").ok_or_else(|| at("no `metrics`"))?;
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
                if let (Some(p), Some(x)) = (guidellm_percentile(k), num(Some(val))) {
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
    Ok((Format::Guidellm, tested, runs))
}

/// The tested capacity: the highest sustained rate of a run that met the objective.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Capacity {
    /// Requests per second the run completed.
    pub rps: f64,
    /// The run it came from (`rate 8 req/s`).
    pub run: String,
    /// Runs that met the objective, of the runs judged.
    pub runs_met: usize,
    pub runs: usize,
}

/// Applies the tested-capacity rule: among the runs that report every bound's percentile, a known
/// error share at most `error_limit` and a sustained rate, the highest rate of a run that met every
/// bound. `Err` says why there is no capacity (no objective, a percentile the file lacks, no run
/// that met it).
pub fn capacity(
    lt: &LoadTest,
    objective: &[LatencyBound],
    error_limit: f64,
) -> Result<Capacity, String> {
    if objective.is_empty() {
        return Err("no latency objective (gpuledger.io/latency-objective) to test against".into());
    }
    let mut best: Option<(f64, &Run)> = None;
    let mut met = 0;
    let mut missing: Option<String> = None;
    // The run that came closest when none met it: the lowest rate judged.
    let mut lowest: Option<(f64, String)> = None;
    for run in &lt.runs {
        let Some(rps) = run.achieved_rps else {
            continue;
        };
        let mut why_not = None;
        for b in objective {
            let k = key(&b.metric, f64::from(b.percentile));
            match run.latency_ms.get(&k) {
                None => {
                    let have: Vec<&str> = run
                        .latency_ms
                        .keys()
                        .filter(|x| x.starts_with(&format!("{}_p", b.metric)))
                        .map(String::as_str)
                        .collect();
                    missing = Some(if have.is_empty() {
                        format!("{} does not report {} latency", lt.file, b.metric)
                    } else {
                        format!(
                            "{} reports {} but not {k} (percentiles are never interpolated)",
                            lt.file,
                            have.join(", ")
                        )
                    });
                    why_not = Some(String::new());
                    break;
                }
                Some(ms) if *ms > b.max_ms => {
                    why_not.get_or_insert(format!("{k} {} ms > {} ms", trim(*ms), trim(b.max_ms)));
                }
                Some(_) => {}
            }
        }
        match run.error_share() {
            None => {
                why_not.get_or_insert("its error count is not recorded".into());
            }
            Some(e) if e > error_limit => {
                why_not.get_or_insert(format!(
                    "{:.1}% of requests failed (limit {:.1}%)",
                    e * 100.0,
                    error_limit * 100.0
                ));
            }
            Some(_) => {}
        }
        match why_not {
            None => {
                met += 1;
                if best.is_none_or(|(r, _)| rps > r) {
                    best = Some((rps, run));
                }
            }
            Some(w) if !w.is_empty() => {
                if lowest.as_ref().is_none_or(|(r, _)| rps < *r) {
                    lowest = Some((rps, format!("{}: {w}", run.offered)));
                }
            }
            Some(_) => {}
        }
    }
    let judged = lt.runs.iter().filter(|r| r.achieved_rps.is_some()).count();
    match best {
        Some((rps, run)) => Ok(Capacity {
            rps,
            run: run.offered.to_string(),
            runs_met: met,
            runs: judged,
        }),
        None => Err(match (lowest, missing) {
            (Some((_, w)), _) => {
                format!("no run of {} met the objective (lowest load, {w})", lt.file)
            }
            (None, Some(m)) => m,
            (None, None) => format!("no run of {} records its request throughput", lt.file),
        }),
    }
}

/// `410`, `0.5`: a figure as a person writes it.
fn trim(x: f64) -> String {
    let s = format!("{x:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bound(metric: &str, percentile: u8, max_ms: f64) -> LatencyBound {
        LatencyBound {
            metric: metric.into(),
            percentile,
            max_ms,
        }
    }

    const VLLM: &str = r#"{"date":"20261201-120000","backend":"vllm","model_id":"Qwen/Qwen3-8B",
      "num_prompts":1000,"request_rate":8.0,"max_concurrency":null,"duration":125.3,
      "completed":998,"failed":2,"request_throughput":7.96,"p95_ttft_ms":410.0,"p99_ttft_ms":610.0,
      "p95_itl_ms":41.0,"p99.9_itl_ms":90.0,"p95_e2el_ms":5000,"gpu_type":"NVIDIA-H100-80GB-HBM3","gpus":1,
      "replicas":1,"max_num_seqs":"256"}"#;

    #[test]
    fn vllm_bench_serve() {
        let lt = parse(VLLM, "lt.json").unwrap();
        assert_eq!(lt.format, Format::VllmBench);
        assert_eq!(lt.tested.model.as_deref(), Some("Qwen/Qwen3-8B"));
        assert_eq!(lt.tested.gpus_per_replica, Some(1));
        assert_eq!(lt.tested.settings["max_num_seqs"], "256");
        let r = &lt.runs[0];
        assert_eq!(r.offered, Offered::Rate(8.0));
        assert_eq!(r.latency_ms["ttft_p95"], 410.0);
        assert_eq!(r.latency_ms["itl_p99.9"], 90.0);
        assert_eq!(r.latency_ms["e2e_p95"], 5000.0);
        assert_eq!(r.error_share(), Some(0.002));
        let c = capacity(&lt, &[bound("ttft", 95, 500.0)], 0.01).unwrap();
        assert_eq!(c.rps, 7.96);
        let e = capacity(&lt, &[bound("ttft", 90, 500.0)], 0.01).unwrap_err();
        assert!(e.contains("ttft_p95, ttft_p99 but not ttft_p90"), "{e}");
    }

    #[test]
    fn highest_rate_that_met_the_objective_and_error_limit() {
        let run = |rate: f64, rps: f64, ttft: f64, failed: u32| {
            format!(
                r#"{{"model_id":"m","request_rate":{rate},"completed":100,"failed":{failed},"request_throughput":{rps},"p95_ttft_ms":{ttft}}}"#
            )
        };
        let sweep = format!(
            "[{},{},{},{}]",
            run(2.0, 2.0, 100.0, 0),
            run(4.0, 3.9, 300.0, 0),
            run(6.0, 5.8, 450.0, 5),
            run(8.0, 6.1, 900.0, 0)
        );
        let lt = parse(&sweep, "sweep.json").unwrap();
        let c = capacity(&lt, &[bound("ttft", 95, 500.0)], 0.01).unwrap();
        // 6 req/s met latency but failed 5/105 > 1%; 8 req/s broke latency.
        assert_eq!((c.rps, c.runs_met, c.runs), (3.9, 2, 4));
        assert_eq!(c.run, "rate 4 req/s");
        let c = capacity(&lt, &[bound("ttft", 95, 500.0)], 0.05).unwrap();
        assert_eq!(c.rps, 5.8);
        let e = capacity(&lt, &[bound("ttft", 95, 50.0)], 0.01).unwrap_err();
        assert!(e.contains("ttft_p95 100 ms > 50 ms"), "{e}");
        assert!(capacity(&lt, &[], 0.01).is_err());
    }

    #[test]
    fn aiperf_profile_export() {
        let text = r#"{"schema_version":"1.4","input_config":{"endpoint":{"model_names":["meta-llama/Llama-3.2-1B-Instruct"]},"loadgen":{"concurrency":32}},
          "request_count":{"avg":256,"unit":"requests"},"error_request_count":null,
          "request_throughput":{"avg":1.82,"unit":"requests/sec"},
          "time_to_first_token":{"avg":1240.09,"p50":786.0,"p95":1900.0,"p99":2093.6,"unit":"ms"},
          "request_latency":{"p95":2.5,"unit":"s"},"was_cancelled":false,"error_summary":[]}"#;
        let lt = parse(text, "p.json").unwrap();
        assert_eq!(lt.format, Format::Aiperf);
        assert_eq!(
            lt.tested.model.as_deref(),
            Some("meta-llama/Llama-3.2-1B-Instruct")
        );
        let r = &lt.runs[0];
        assert_eq!(r.offered, Offered::Concurrency(32));
        assert_eq!(r.failed, Some(0.0));
        assert_eq!(r.latency_ms["e2e_p95"], 2500.0);
        assert_eq!(
            capacity(&lt, &[bound("ttft", 95, 2000.0)], 0.0)
                .unwrap()
                .rps,
            1.82
        );
    }

    #[test]
    fn guidellm_percentile_keys() {
        assert_eq!(guidellm_percentile("p95"), Some(95.0));
        assert_eq!(guidellm_percentile("p05"), Some(5.0));
        assert_eq!(guidellm_percentile("p001"), Some(0.1));
        assert_eq!(guidellm_percentile("p999"), Some(99.9));
    }

    #[test]
    fn guidellm_benchmarks() {
        let lt = parse(
            include_str!("../../fixtures/headroom/repo/loadtests/rerank-guidellm.json"),
            "g.json",
        )
        .unwrap();
        assert_eq!(lt.format, Format::Guidellm);
        assert_eq!(lt.tested.model.as_deref(), Some("BAAI/bge-reranker-base"));
        assert_eq!(lt.runs.len(), 2);
        assert_eq!(lt.runs[1].offered, Offered::Rate(10.0));
        // Request latency is in seconds in GuideLLM.
        assert!((lt.runs[1].latency_ms["e2e_p99"] - 290.0).abs() < 1e-9);
        assert!((lt.runs[0].latency_ms["e2e_p99.9"] - 300.0).abs() < 1e-9);
        // 10 errored of 1200 is within 1%.
        let c = capacity(&lt, &[bound("e2e", 99, 300.0)], 0.01).unwrap();
        assert_eq!((c.rps, c.runs_met), (9.9, 2));
        let c = capacity(&lt, &[bound("e2e", 99, 250.0)], 0.01).unwrap();
        assert_eq!(c.rps, 4.97);
    }

    #[test]
    fn a_directory_is_one_sweep() {
        let dir = tempfile::tempdir().unwrap();
        let run = |rate: u32, rps: f64, ttft: f64| {
            format!(
                r#"{{"model_id":"m","request_rate":{rate},"completed":10,"failed":0,"request_throughput":{rps},"p95_ttft_ms":{ttft}}}"#
            )
        };
        std::fs::write(dir.path().join("run=1.json"), run(2, 1.9, 100.0)).unwrap();
        std::fs::write(dir.path().join("run=2.json"), run(4, 3.8, 300.0)).unwrap();
        std::fs::write(dir.path().join("notes.txt"), "not read").unwrap();
        let lt = read(dir.path(), "sweep/").unwrap();
        assert_eq!(lt.runs.len(), 2);
        assert_eq!(
            capacity(&lt, &[bound("ttft", 95, 200.0)], 0.0).unwrap().rps,
            1.9
        );
        std::fs::write(
            dir.path().join("run=3.json"),
            run(8, 7.0, 900.0).replace("\"m\"", "\"other\""),
        )
        .unwrap();
        let e = read(dir.path(), "sweep/").unwrap_err();
        assert_eq!(e.file, "sweep/run=3.json");
        assert!(e.message.contains("not part of the same load test"), "{e}");
    }

    #[test]
    fn unknown_and_malformed() {
        let e = parse(r#"{"hello": 1}"#, "x.json").unwrap_err();
        assert_eq!(e.file, "x.json");
        assert!(e.message.contains("not a load-test result"), "{e}");
        let e = parse("{\n  \"request_throughput\": 1,\n  oops\n}", "y.json").unwrap_err();
        assert_eq!((e.line, e.file.as_str()), (Some(3), "y.json"));
        let e = parse("[]", "z.json").unwrap_err();
        assert!(e.message.contains("not a load-test result"), "{e}");
    }
}
