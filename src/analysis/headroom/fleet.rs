//! Serving headroom of the live fleet: per serving workload, the capacity its load test measured
//! at the workload's latency objective, held against its live configuration (the pods' model,
//! the GPU types of their nodes, their engine flags; [`super::capacity`]), against the request
//! rate production asks of it.
//!
//! Production is the workload's completion rate (Dynamo frontend when it has one, else vLLM),
//! summed over its pods at each step of the window; its p95 and peak are taken over the steps.
//! Headroom and verdict are [`super::capacity::verdict`]'s, `unknown` when either side is.
//! Queueing, KV cache, preemptions and latency are context beside the verdict, never a capacity:
//! a workload without a load test is "capacity unknown: no load test" however idle it looks.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::config::HeadroomConfig;
use crate::intent::{LatencyBound, WorkClass};
use crate::k8s::object::Body;
use crate::k8s::types::Text;
use crate::live::loadtest::{self, LoadTests};
use crate::live::serving::{
    Engine, PodHistogram, PodSeries, Production, ServingMetrics, histogram_quantile, quantile,
};
use crate::report::{Headroom, HeadroomRow, HeadroomVerdict, LatencyNow, ServingContext};
use crate::util::sum::Overflow;
use crate::workload::{Workload, WorkloadId};

use super::capacity::{Configuration, Side};
use crate::analysis::live::LiveFleet;
use crate::analysis::nodes::GPU_PRODUCT_LABEL;

/// The pod label llm-d (and OpenCost's inference cost) name the served model with.
pub const MODEL_LABEL: &str = "llm-d.ai/model";

/// Every serving workload of the fleet (or any workload whose intent names a load test or a
/// latency objective), with its headroom.
pub fn headroom(
    fleet: &LiveFleet<'_>,
    load_tests: &LoadTests,
    production: &Production,
    cfg: &HeadroomConfig,
) -> Result<Headroom, Overflow> {
    let live = Live::new(fleet);
    let (source, production_unknown, metrics) = match production {
        Production::NotConfigured => (
            None,
            Some("no Prometheus with vLLM or Dynamo metrics (--prometheus)".to_string()),
            None,
        ),
        Production::Failed(why) => (None, Some(why.clone()), None),
        Production::Read(m) => (Some(m.source.clone()), None, Some(m)),
    };
    let per_workload = metrics.map(|m| live.split(m)).unwrap_or_default();
    let mut out = Vec::new();
    for (_, w, about) in fleet.each() {
        let intent = about.intent.as_ref();
        let serving = w.intent_facts.class == WorkClass::Serving
            || intent.is_some_and(|i| i.load_test.is_some() || !i.latency_objective.is_empty());
        if !serving {
            continue;
        }
        let id = w.id.clone();
        let objective: &[LatencyBound] = intent
            .map(|i| i.latency_objective.as_slice())
            .unwrap_or(&[]);
        let mine = per_workload.get(&id);
        let mut row = HeadroomRow {
            namespace: w.id.namespace.clone(),
            api_group: w.id.group.clone(),
            kind: w.id.kind.clone(),
            name: w.id.name.clone(),
            tenant: about.tenant.clone(),
            objective: (!objective.is_empty()).then(|| objective_text(objective)),
            load_test: intent.and_then(|i| i.load_test.clone()),
            load_test_format: None,
            tested_rps: None,
            tested_run: None,
            scaled: None,
            unverified: Vec::new(),
            live_model: None,
            production_metric: None,
            production_p95_rps: None,
            production_peak_rps: None,
            headroom: None,
            verdict: HeadroomVerdict::Unknown,
            unknown: Default::default(),
            latency: Vec::new(),
            context: ServingContext::default(),
        };
        // Production first: the live model comes from the metrics' model label.
        match (&production_unknown, mine) {
            (Some(why), _) => {
                row.unknown.insert("production_p95_rps".into(), why.clone());
            }
            (None, None) => {
                row.unknown.insert(
                    "production_p95_rps".into(),
                    "no vLLM or Dynamo request series for its pods".into(),
                );
            }
            (None, Some(m)) => production_of(&mut row, m, objective, metrics),
        }
        if row.live_model.is_none() {
            row.live_model = live.model.get(&id).cloned();
        }
        capacity_of(&mut row, w, &live, load_tests, objective, cfg);
        match super::capacity::verdict(
            row.tested_rps,
            row.production_p95_rps,
            row.production_peak_rps,
            cfg.near_capacity,
        ) {
            Some((h, v)) => {
                row.headroom = Some(h);
                row.verdict = v;
            }
            None => {
                // A reason every row shares (no Prometheus) is said once, above the table.
                let why = ["tested_rps", "production_p95_rps"]
                    .iter()
                    .filter_map(|k| {
                        let w = row.unknown.get(*k)?;
                        Some(if production_unknown.as_ref() == Some(w) {
                            label(k).to_string()
                        } else {
                            format!("{}: {w}", label(k))
                        })
                    })
                    .collect::<Vec<_>>()
                    .join("; ");
                row.unknown.insert(
                    "headroom".into(),
                    if why.is_empty() {
                        "the tested capacity is zero".into()
                    } else {
                        why
                    },
                );
            }
        }
        out.push(row);
    }
    out.sort_by(|a, b| {
        (a.verdict, &a.namespace, &a.kind, &a.name).cmp(&(
            b.verdict,
            &b.namespace,
            &b.kind,
            &b.name,
        ))
    });
    Ok(Headroom {
        production_source: source,
        production_unknown,
        rate_kind: "a completion rate: vLLM and Dynamo count a request when it finishes, so under overload it understates arrivals".into(),
        error_limit: cfg.error_limit,
        near_capacity: cfg.near_capacity,
        workloads: out,
    })
}

fn label(k: &str) -> &str {
    match k {
        "tested_rps" => "capacity unknown",
        _ => "production unknown",
    }
}

/// `ttft_p95<=500ms,itl_p95<=50ms`
pub fn objective_text(bounds: &[LatencyBound]) -> String {
    bounds
        .iter()
        .map(|b| format!("{}_p{}<={}ms", b.metric, b.percentile, b.max_ms))
        .collect::<Vec<_>>()
        .join(",")
}

/// The load test the workload names, held against its live configuration.
fn capacity_of(
    row: &mut HeadroomRow,
    r: &Workload,
    live: &Live,
    load_tests: &LoadTests,
    objective: &[LatencyBound],
    cfg: &HeadroomConfig,
) {
    let c = Configuration {
        side: Side::Live,
        id: &r.id,
        roles: &r.shape.roles,
        model: row.live_model.as_deref(),
        gpu_types: live.gpu_types.get(&r.id),
        settings: live.settings.get(&r.id),
    };
    let held = super::capacity::held(row.load_test.as_deref(), &c, load_tests, objective, cfg);
    row.load_test_format = held.format;
    row.tested_rps = held.rps;
    row.tested_run = held.run;
    row.scaled = held.scaled;
    row.unverified = held.unverified;
    if let Some(why) = held.unknown {
        row.unknown.insert("tested_rps".into(), why);
    }
}

/// The model and the `--flag value` settings of a serving engine's command line (`vllm serve
/// MODEL --max-num-seqs 256`, `python -m dynamo.vllm --model MODEL --tensor-parallel-size 2`,
/// or the same inside one `sh -c` string). Flags are named as the load tests name them:
/// `max_num_seqs`. A flag without a value is `true`.
pub fn engine_flags<'a>(
    tokens: impl Iterator<Item = &'a str>,
) -> (Option<String>, BTreeMap<String, String>) {
    let words: Vec<&str> = tokens.flat_map(str::split_whitespace).collect();
    let mut flags = BTreeMap::new();
    let mut model = None;
    let mut i = 0;
    while let Some(w) = words.get(i) {
        i += 1;
        if *w == "serve" {
            if let Some(m) = words.get(i).filter(|m| !m.starts_with('-')) {
                model.get_or_insert_with(|| (*m).to_string());
                i += 1;
            }
            continue;
        }
        let Some(flag) = w.strip_prefix("--") else {
            continue;
        };
        let (key, value) = match flag.split_once('=') {
            Some((k, v)) => (k, v.to_string()),
            None => match words.get(i).filter(|v| !v.starts_with("--")) {
                Some(v) => {
                    i += 1;
                    (flag, (*v).to_string())
                }
                None => (flag, "true".to_string()),
            },
        };
        let key = key.replace('-', "_");
        if key == "model" {
            model.get_or_insert(value.clone());
        }
        flags.insert(key, value);
    }
    (model, flags)
}

fn production_of(
    row: &mut HeadroomRow,
    m: &Mine<'_>,
    objective: &[LatencyBound],
    metrics: Option<&ServingMetrics>,
) {
    // The frontend is what clients see; vLLM behind a Dynamo frontend would count the same
    // requests again.
    let engine = if m.completions.iter().any(|s| s.engine == Engine::Dynamo) {
        Engine::Dynamo
    } else {
        Engine::Vllm
    };
    let series: Vec<&PodSeries> = m
        .completions
        .iter()
        .copied()
        .filter(|s| s.engine == engine)
        .collect();
    // Dynamo's series disagree on the model's case (`qwen/qwen3-0.6b` and `Qwen/Qwen3-0.6B`).
    let mut models: BTreeMap<String, &str> = BTreeMap::new();
    for m in series.iter().filter_map(|s| s.model.as_deref()) {
        models.entry(m.to_lowercase()).or_insert(m);
    }
    if let [(_, one)] = models.iter().collect::<Vec<_>>().as_slice() {
        row.live_model = Some((**one).to_string());
    }
    let total = sum_by_time(&series, |a, b| a + b);
    if total.is_empty() {
        row.unknown.insert(
            "production_p95_rps".into(),
            "its request series have no samples in the window".into(),
        );
    } else {
        let values: Vec<f64> = total.values().copied().collect();
        row.production_metric = Some(
            match engine {
                Engine::Dynamo => "dynamo-frontend",
                Engine::Vllm => "vllm",
            }
            .into(),
        );
        row.production_p95_rps = quantile(0.95, &values);
        row.production_peak_rps = values.iter().copied().reduce(f64::max);
    }
    let waiting = sum_by_time(&m.waiting, |a, b| a + b);
    if !waiting.is_empty() {
        let queued = waiting.values().filter(|v| **v > 0.0).count();
        row.context.queue_share = Some(queued as f64 / waiting.len() as f64);
    }
    let kv = sum_by_time(&m.kv_cache, f64::max);
    row.context.kv_cache_p95 = quantile(0.95, &kv.values().copied().collect::<Vec<_>>());
    if let Some(metrics) = metrics
        && !m.preemptions.is_empty()
    {
        let minutes = metrics.window.as_secs_f64() / 60.0;
        row.context.preemptions_per_min = Some(m.preemptions.iter().sum::<f64>() / minutes);
    }
    let hist = |metric: &str, q: f64| -> Option<f64> {
        let of = |engine: Engine| {
            let mut merged: BTreeMap<u64, (f64, f64)> = BTreeMap::new();
            for h in m
                .histograms
                .iter()
                .filter(|h| h.metric == metric && h.engine == engine)
            {
                for &(le, count) in &h.buckets {
                    // Bit order of non-negative floats is their numeric order.
                    merged.entry(le.to_bits()).or_insert((le, 0.0)).1 += count;
                }
            }
            let buckets: Vec<(f64, f64)> = merged.into_values().collect();
            histogram_quantile(q, &buckets).map(|s| s * 1000.0)
        };
        of(Engine::Dynamo).or_else(|| of(Engine::Vllm))
    };
    row.context.ttft_p95_ms = hist("ttft", 0.95);
    row.context.itl_p95_ms = hist("itl", 0.95);
    row.latency = objective
        .iter()
        .map(|b| {
            let now_ms = hist(&b.metric, f64::from(b.percentile) / 100.0);
            LatencyNow {
                bound: objective_text(std::slice::from_ref(b)),
                now_ms,
                met: now_ms.map(|n| n <= b.max_ms),
            }
        })
        .collect();
}

/// Combines the series' points that share a timestamp (range queries align them to the steps).
fn sum_by_time(series: &[&PodSeries], f: fn(f64, f64) -> f64) -> BTreeMap<i64, f64> {
    let mut out: BTreeMap<i64, f64> = BTreeMap::new();
    for s in series {
        for &(t, v) in &s.points {
            out.entry(t).and_modify(|x| *x = f(*x, v)).or_insert(v);
        }
    }
    out
}

/// One workload's share of the serving metrics.
#[derive(Default)]
struct Mine<'a> {
    completions: Vec<&'a PodSeries>,
    waiting: Vec<&'a PodSeries>,
    kv_cache: Vec<&'a PodSeries>,
    preemptions: Vec<f64>,
    histograms: Vec<&'a PodHistogram>,
}

/// What the live objects say about each workload: its pods, the GPU types under them, its model
/// label.
struct Live {
    pod_workload: HashMap<(String, String), WorkloadId>,
    gpu_types: HashMap<WorkloadId, BTreeSet<String>>,
    model: HashMap<WorkloadId, String>,
    /// The serving-setting flags of the workload's GPU pods, each with every value seen (pods in
    /// the middle of a rollout may disagree).
    settings: HashMap<WorkloadId, BTreeMap<String, BTreeSet<String>>>,
}

impl Live {
    fn new(fleet: &LiveFleet<'_>) -> Live {
        let objects = fleet.objects;
        let node_product: HashMap<&str, &str> = objects
            .iter()
            .filter(|o| matches!(o.body, Body::Node(_)))
            .filter_map(|o| {
                let p = o.meta.labels.get(GPU_PRODUCT_LABEL)?;
                Some((o.meta.name.as_str(), p.as_str()))
            })
            .collect();
        let mut live = Live {
            pod_workload: HashMap::new(),
            gpu_types: HashMap::new(),
            model: HashMap::new(),
            settings: HashMap::new(),
        };
        let gpu_pods: std::collections::HashSet<usize> = fleet
            .workloads
            .pods
            .iter()
            .filter(|g| g.gpus.whole > 0)
            .map(|g| g.object)
            .collect();
        for (i, (o, owner)) in objects.iter().zip(&fleet.owner_of).enumerate() {
            let Body::Pod(p) = &o.body else { continue };
            let Some(wi) = *owner else {
                continue;
            };
            let Some(wl) = fleet.workloads.list.get(wi) else {
                continue;
            };
            let id = wl.id.clone();
            live.pod_workload
                .insert((o.namespace().to_string(), o.meta.name.clone()), id.clone());
            if let Some(m) = o
                .meta
                .labels
                .get(MODEL_LABEL)
                .or_else(|| wl.labels.get(MODEL_LABEL))
            {
                live.model
                    .entry(id.clone())
                    .or_insert_with(|| m.to_string());
            }
            let gpu_pod = gpu_pods.contains(&i);
            if gpu_pod {
                let (model, flags) = engine_flags(
                    p.spec
                        .containers
                        .iter()
                        .flat_map(|c| c.command.iter().chain(&c.args).map(Text::as_str)),
                );
                if let Some(m) = model {
                    live.model.entry(id.clone()).or_insert(m);
                }
                let seen = live.settings.entry(id.clone()).or_default();
                for k in loadtest::SETTINGS {
                    // A flag a pod does not set is the engine's default: unknown here, and kept
                    // apart from any value another pod sets.
                    let v = flags.get(k).cloned().unwrap_or_default();
                    seen.entry(k.to_string()).or_default().insert(v);
                }
            }
            if let (true, Some(node)) = (gpu_pod, p.spec.node_name.as_deref())
                && let Some(product) = node_product.get(node)
            {
                live.gpu_types
                    .entry(id)
                    .or_default()
                    .insert((*product).to_string());
            }
        }
        live
    }

    fn workload(&self, ns: Option<&String>, pod: Option<&String>) -> Option<&WorkloadId> {
        self.pod_workload.get(&(ns?.clone(), pod?.clone()))
    }

    fn split<'a>(&self, m: &'a ServingMetrics) -> HashMap<WorkloadId, Mine<'a>> {
        let mut out: HashMap<WorkloadId, Mine<'a>> = HashMap::new();
        for s in &m.completions {
            if let Some(id) = self.workload(s.namespace.as_ref(), s.pod.as_ref()) {
                out.entry(id.clone()).or_default().completions.push(s);
            }
        }
        for s in &m.waiting {
            if let Some(id) = self.workload(s.namespace.as_ref(), s.pod.as_ref()) {
                out.entry(id.clone()).or_default().waiting.push(s);
            }
        }
        for s in &m.kv_cache {
            if let Some(id) = self.workload(s.namespace.as_ref(), s.pod.as_ref()) {
                out.entry(id.clone()).or_default().kv_cache.push(s);
            }
        }
        for s in &m.preemptions {
            if let Some(id) = self.workload(s.namespace.as_ref(), s.pod.as_ref()) {
                out.entry(id.clone()).or_default().preemptions.push(s.value);
            }
        }
        for h in &m.histograms {
            if let Some(id) = self.workload(h.namespace.as_ref(), h.pod.as_ref()) {
                out.entry(id.clone()).or_default().histograms.push(h);
            }
        }
        // A workload with only context series and no request series has no production rate.
        out.retain(|_, m| !m.completions.is_empty());
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::usage::Metrics;
    use crate::config::{Config, MatchSpec, Scale, ScaleRule};
    use crate::k8s::object::Object;
    use crate::k8s::read::read_str;
    use crate::live::serving::PodSeries;

    /// A 2-replica, 1-GPU Deployment `serve/chat` on an H100 node, naming `lt.json`.
    fn fleet(replicas: u64, objective: &str) -> Vec<Object> {
        let mut y = format!(
            "apiVersion: v1\nkind: Node\nmetadata: {{name: n1, labels: {{nvidia.com/gpu.product: H100}}}}\nstatus: {{capacity: {{nvidia.com/gpu: 8}}, allocatable: {{nvidia.com/gpu: 8}}}}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: chat\n  namespace: serve\n  uid: d1\n  annotations: {{gpuledger.io/load-test: lt.json, gpuledger.io/latency-objective: \"{objective}\"}}\nspec:\n  replicas: {replicas}\n  template: {{spec: {{containers: [{{resources: {{limits: {{nvidia.com/gpu: 1}}}}}}]}}}}\n"
        );
        for i in 0..replicas {
            y.push_str(&format!("---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: chat-{i}\n  namespace: serve\n  ownerReferences: [{{apiVersion: apps/v1, kind: Deployment, name: chat, uid: d1, controller: true}}]\nspec:\n  nodeName: n1\n  containers: [{{resources: {{limits: {{nvidia.com/gpu: 1}}}}}}]\nstatus: {{phase: Running}}\n"));
        }
        read_str(&y, "t").unwrap()
    }

    fn load_test(extra: &str) -> LoadTests {
        let text = format!(
            r#"{{"model_id":"Qwen/Qwen3-8B","request_rate":8,"completed":100,"failed":0,"request_throughput":10.0,"p95_ttft_ms":300{extra}}}"#
        );
        [(
            "lt.json".to_string(),
            Ok(loadtest::parse(&text, "lt.json").unwrap()),
        )]
        .into()
    }

    /// Each of `pods` completes at `rates` (one per step, a minute apart).
    fn production(pods: u64, rates: &[f64]) -> Production {
        Production::Read(ServingMetrics {
            source: "test".into(),
            window: std::time::Duration::from_secs(3600),
            step: std::time::Duration::from_secs(60),
            completions: (0..pods)
                .map(|i| PodSeries {
                    namespace: Some("serve".into()),
                    pod: Some(format!("chat-{i}")),
                    model: Some("qwen/qwen3-8b".into()),
                    engine: Engine::Vllm,
                    points: rates
                        .iter()
                        .enumerate()
                        .map(|(t, r)| (t as i64 * 60, *r))
                        .collect(),
                })
                .collect(),
            ..ServingMetrics::default()
        })
    }

    fn run(objs: &[Object], lt: &LoadTests, p: &Production, cfg: &HeadroomConfig) -> HeadroomRow {
        let cfg_all = Config::default();
        let fleet = LiveFleet::read(objs, &cfg_all, &Metrics::NotConfigured).unwrap();
        let h = headroom(&fleet, lt, p, cfg).unwrap();
        h.workloads.into_iter().next().unwrap()
    }

    #[test]
    fn verdicts_from_the_p95_and_the_peak() {
        let objs = fleet(2, "ttft_p95<=500ms");
        let cfg = HeadroomConfig::default();
        let lt = load_test("");
        // Two pods at 3 req/s: p95 6 of 10 → 40% headroom.
        let r = run(&objs, &lt, &production(2, &[3.0; 20]), &cfg);
        assert_eq!(r.verdict, HeadroomVerdict::Fits);
        assert!((r.headroom.unwrap() - 0.4).abs() < 1e-12);
        assert_eq!(r.live_model.as_deref(), Some("qwen/qwen3-8b"));
        // 4.5 each: 10% headroom, below the 20% line.
        let r = run(&objs, &lt, &production(2, &[4.5; 20]), &cfg);
        assert_eq!(r.verdict, HeadroomVerdict::NearCapacity);
        // A p95 that fits but a peak above the capacity: near capacity.
        let mut rates = vec![2.0; 40];
        rates.push(6.0);
        let r = run(&objs, &lt, &production(2, &rates), &cfg);
        assert_eq!(r.production_peak_rps, Some(12.0));
        assert_eq!(r.verdict, HeadroomVerdict::NearCapacity);
        let r = run(&objs, &lt, &production(2, &[6.0; 20]), &cfg);
        assert_eq!(r.verdict, HeadroomVerdict::Over);
        assert!((r.headroom.unwrap() + 0.2).abs() < 1e-12);
    }

    #[test]
    fn a_load_test_of_other_hardware_is_stale_never_scaled() {
        let objs = fleet(2, "ttft_p95<=500ms");
        let cfg = HeadroomConfig::default();
        let p = production(2, &[3.0; 5]);
        let r = run(
            &objs,
            &load_test(r#","gpu_type":"A100","gpus":2"#),
            &p,
            &cfg,
        );
        assert_eq!(r.tested_rps, None);
        assert_eq!(
            r.unknown["tested_rps"],
            "stale load test: tested on A100, live on H100; tested with 2 GPUs per replica, live 1"
        );
        assert_eq!(r.verdict, HeadroomVerdict::Unknown);
        let r = run(&objs, &load_test(r#","model_id":"other""#), &p, &cfg);
        assert!(r.unknown["tested_rps"].contains("tested model other, live qwen/qwen3-8b"));
        // Everything the file records matches: nothing is left unverified but the settings.
        let r = run(
            &objs,
            &load_test(r#","gpu_type":"h100","gpus":1,"replicas":2,"max_num_seqs":64"#),
            &p,
            &cfg,
        );
        assert_eq!(r.tested_rps, Some(10.0));
        assert_eq!(r.unverified.len(), 1, "{:?}", r.unverified);
    }

    #[test]
    fn engine_flags_from_the_command_line() {
        let (m, f) = engine_flags(
            [
                "vllm",
                "serve",
                "Qwen/Qwen3-8B",
                "--max-num-seqs",
                "128",
                "--enable-prefix-caching",
                "--tensor-parallel-size=2",
            ]
            .into_iter(),
        );
        assert_eq!(m.as_deref(), Some("Qwen/Qwen3-8B"));
        assert_eq!(f["max_num_seqs"], "128");
        assert_eq!(f["enable_prefix_caching"], "true");
        assert_eq!(f["tensor_parallel_size"], "2");
        let (m, f) = engine_flags(
            [
                "sh",
                "-c",
                "python3 -m dynamo.vllm --model m --max-model-len 8192",
            ]
            .into_iter(),
        );
        assert_eq!(m.as_deref(), Some("m"));
        assert_eq!(f["max_model_len"], "8192");
    }

    #[test]
    fn serving_settings_are_compared_with_the_live_pods_arguments() {
        let with_args = |args: &str| {
            let text = format!(
                "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: chat\n  namespace: serve\n  uid: d1\n  annotations: {{gpuledger.io/load-test: lt.json, gpuledger.io/latency-objective: \"ttft_p95<=500ms\"}}\nspec:\n  replicas: 1\n  template: {{spec: {{containers: [{{resources: {{limits: {{nvidia.com/gpu: 1}}}}}}]}}}}\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: chat-0\n  namespace: serve\n  ownerReferences: [{{apiVersion: apps/v1, kind: Deployment, name: chat, uid: d1, controller: true}}]\nspec:\n  nodeName: n1\n  containers: [{{args: [{args}], resources: {{limits: {{nvidia.com/gpu: 1}}}}}}]\nstatus: {{phase: Running}}\n"
            );
            read_str(&text, "t").unwrap()
        };
        let lt = load_test(r#","max_num_seqs":"256","tensor_parallel_size":1"#);
        let cfg = HeadroomConfig::default();
        let objs = with_args("serve, Qwen/Qwen3-8B, --max-num-seqs, \"128\"");
        let r = run(&objs, &lt, &Production::NotConfigured, &cfg);
        assert_eq!(
            r.unknown["tested_rps"],
            "stale load test: tested with max_num_seqs 256, live 128"
        );
        // The model came from the command line.
        assert_eq!(r.live_model.as_deref(), Some("Qwen/Qwen3-8B"));
        let objs = with_args("serve, Qwen/Qwen3-8B, --max-num-seqs=256");
        let r = run(&objs, &lt, &Production::NotConfigured, &cfg);
        assert_eq!(r.tested_rps, Some(10.0));
        assert!(
            r.unverified
                .iter()
                .any(|u| u.starts_with("tensor_parallel_size (not set on the live pods")),
            "{:?}",
            r.unverified
        );
    }

    #[test]
    fn per_replica_scaling_only_when_configured_and_said() {
        let objs = fleet(3, "ttft_p95<=500ms");
        let lt = load_test(r#","replicas":2"#);
        let p = production(3, &[3.0; 5]);
        let r = run(&objs, &lt, &p, &HeadroomConfig::default());
        assert_eq!(
            r.unknown["tested_rps"],
            "stale load test: tested at 2 replicas, live 3"
        );
        let cfg = HeadroomConfig {
            scale: vec![ScaleRule {
                matches: MatchSpec::default(),
                scale: Scale::PerReplica,
            }],
            ..HeadroomConfig::default()
        };
        let r = run(&objs, &lt, &p, &cfg);
        assert_eq!(r.tested_rps, Some(15.0));
        assert!(
            r.scaled
                .as_deref()
                .unwrap()
                .contains("10 req/s at 2 replicas → 3 live")
        );
        assert!((r.headroom.unwrap() - 0.4).abs() < 1e-12);
    }

    #[test]
    fn without_a_load_test_or_objective_capacity_is_unknown_whatever_the_activity() {
        let objs = fleet(1, "ttft_p95<=500ms");
        let p = production(1, &[0.1; 5]);
        let r = run(&objs, &LoadTests::new(), &p, &HeadroomConfig::default());
        assert_eq!(
            r.unknown["tested_rps"],
            "load test lt.json was not read (no --repo)"
        );
        assert_eq!(r.production_p95_rps, Some(0.1));
        assert_eq!(r.verdict, HeadroomVerdict::Unknown);
        let r = run(
            &objs,
            &load_test(""),
            &Production::NotConfigured,
            &HeadroomConfig::default(),
        );
        assert_eq!(r.tested_rps, Some(10.0));
        assert_eq!(r.unknown["headroom"], "production unknown");
    }
}
