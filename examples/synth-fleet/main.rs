//! Synthetic GPU fleet generator, for benchmarking gpuledger on large snapshots.
//!
//! Writes a cluster snapshot shaped like `kubectl get namespaces,nodes,pods,... -A -o json` prints it
//! (one `List`, 4-space indentation), or multi-document block YAML: namespaces and tenants, mostly
//! 8-GPU nodes (some cordoned, tainted, NotReady or with a broken device plugin) plus a few CPU-only
//! nodes, and workloads with consistent owner chains: Deployments → ReplicaSets → Pods, StatefulSets,
//! Jobs, bare Pods, and Dynamo graphs (DynamoGraphDeployment → DynamoComponentDeployment → Deployment
//! → ReplicaSet → Pods), with Services and Ingresses in front of some of them. Bound pods never hold
//! more GPUs than their node has allocatable; pods that do not fit stay Pending.
//!
//! The output is deterministic for a seed and streamed object by object, so memory stays small:
//!
//! ```text
//! cargo run --release --example synth-fleet -- --nodes 5000 --pods 100000 --output fleet.json
//! cargo run --release --example synth-fleet -- --nodes 50 --pods 1000 --format yaml --seed 7 --output fleet.yaml
//! ```

use std::collections::HashSet;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

use clap::{Parser, ValueEnum};
use serde_json::{Value, json};

#[derive(Parser)]
#[command(
    about = "Generate a synthetic Kubernetes GPU fleet snapshot (JSON List or multi-document YAML)"
)]
struct Args {
    /// Number of nodes (about 95% with 8 GPUs, the rest CPU-only).
    #[arg(long, default_value_t = 5000)]
    nodes: usize,
    /// Number of pods across all workloads.
    #[arg(long, default_value_t = 100_000)]
    pods: usize,
    /// Number of namespaces (five per tenant).
    #[arg(long, default_value_t = 200)]
    namespaces: usize,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Json)]
    format: Format,
    /// JSON only: one compact line per object instead of kubectl's 4-space indentation.
    #[arg(long)]
    compact: bool,
    /// PRNG seed; the same seed gives the same file.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Output file.
    #[arg(long)]
    output: PathBuf,
    /// Also write a GitOps repository of plain manifests for the fleet's first GPU Deployments and
    /// StatefulSets into this directory (for the drift benchmark): most match the fleet, every
    /// tenth has one replica more in Git.
    #[arg(long, value_name = "DIR")]
    repo_out: Option<PathBuf>,
    /// How many workloads the repository holds.
    #[arg(long, default_value_t = 5000)]
    repo_workloads: usize,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Json,
    Yaml,
}

// ---------------------------------------------------------------------------------------------
// Randomness and small helpers
// ---------------------------------------------------------------------------------------------

/// splitmix64: tiny, fast, deterministic.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next_u64() % (hi - lo + 1) as u64) as i64
    }

    fn chance(&mut self, p: f64) -> bool {
        ((self.next_u64() >> 11) as f64 / (1u64 << 53) as f64) < p
    }

    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }

    /// A random (version 4 shaped) UUID.
    fn uid(&mut self) -> String {
        let (a, b) = (self.next_u64(), self.next_u64());
        format!(
            "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
            a >> 32,
            (a >> 16) & 0xffff,
            a & 0xfff,
            ((b >> 48) & 0x3fff) | 0x8000,
            b & 0xffff_ffff_ffff
        )
    }

    /// Random name suffix from the alphabet Kubernetes uses for generated names.
    fn suffix(&mut self, n: usize) -> String {
        const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
        (0..n)
            .map(|_| ALPHABET[self.below(ALPHABET.len())] as char)
            .collect()
    }

    fn hex(&mut self, n: usize) -> String {
        let mut s = String::with_capacity(n + 16);
        while s.len() < n {
            s.push_str(&format!("{:016x}", self.next_u64()));
        }
        s.truncate(n);
        s
    }
}

/// 2025-06-01T00:00:00Z, the snapshot's "now".
const NOW: i64 = 1_748_736_000;
const DAY: i64 = 86_400;

/// RFC 3339 UTC timestamp from Unix seconds (civil-from-days, no date crate).
fn ts(t: i64) -> String {
    let (days, secs) = (t.div_euclid(DAY), t.rem_euclid(DAY));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

fn ipv4(n: u32) -> String {
    format!(
        "{}.{}.{}.{}",
        n >> 24,
        (n >> 16) & 255,
        (n >> 8) & 255,
        n & 255
    )
}

fn owner(api_version: &str, kind: &str, name: &str, uid: &str) -> Value {
    json!([{
        "apiVersion": api_version,
        "blockOwnerDeletion": true,
        "controller": true,
        "kind": kind,
        "name": name,
        "uid": uid,
    }])
}

/// Merges the entries of `extra` (an object) into `base` (an object).
fn merged(base: &Value, extra: Value) -> Value {
    let mut out = base.clone();
    if let (Some(o), Value::Object(e)) = (out.as_object_mut(), extra) {
        o.extend(e);
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Catalogues
// ---------------------------------------------------------------------------------------------

const TENANTS: &[&str] = &[
    "assistant",
    "enterprise",
    "reasoning",
    "code-assist",
    "search",
    "ads",
    "speech",
    "research",
    "vision",
    "safety",
    "translate",
    "recsys",
    "fraud",
    "maps",
    "photos",
    "video",
    "music",
    "docs",
    "mail",
    "calendar",
    "health",
    "finance",
    "retail",
    "travel",
    "games",
    "robotics",
    "biology",
    "climate",
    "legal",
    "support",
    "marketing",
    "sales",
    "people",
    "security",
    "infra",
    "data",
    "analytics",
    "edge",
    "mobile",
    "devices",
];
const PRODUCT_LINES: &[&str] = &[
    "chat",
    "chat-enterprise",
    "developer-tools",
    "search",
    "ads",
    "voice",
    "research",
    "media",
    "productivity",
    "commerce",
    "platform",
    "science",
];
const NS_SUFFIXES: &[&str] = &["prod", "staging", "dev", "batch", "eval"];
const ZONES: &[&str] = &["us-west-2a", "us-west-2b", "us-west-2c", "us-west-2d"];
/// (product label, instance type, GPU memory MiB, cpu, memory Ki, weight %)
const GPU_PRODUCTS: &[(&str, &str, u32, u32, u64, usize)] = &[
    (
        "NVIDIA-H100-80GB-HBM3",
        "p5.48xlarge",
        81_559,
        192,
        2_097_152_000,
        50,
    ),
    (
        "NVIDIA-H200",
        "p5en.48xlarge",
        143_771,
        192,
        2_097_152_000,
        25,
    ),
    (
        "NVIDIA-A100-SXM4-80GB",
        "p4de.24xlarge",
        81_920,
        96,
        1_207_959_552,
        15,
    ),
    (
        "NVIDIA-B200",
        "p6-b200.48xlarge",
        183_359,
        192,
        2_097_152_000,
        10,
    ),
];
const MODELS: &[(&str, &str)] = &[
    ("llama-70b", "meta-llama/Llama-3.3-70B-Instruct"),
    ("llama-8b", "meta-llama/Llama-3.1-8B-Instruct"),
    ("qwen3-32b", "Qwen/Qwen3-32B"),
    ("deepseek-r1", "deepseek-ai/DeepSeek-R1"),
    (
        "mistral-24b",
        "mistralai/Mistral-Small-3.1-24B-Instruct-2503",
    ),
    ("gemma-27b", "google/gemma-3-27b-it"),
];
/// (app, image, component)
const GPU_APPS: &[(&str, &str, &str)] = &[
    ("vllm", "vllm/vllm-openai:v0.9.1", "inference"),
    (
        "triton",
        "nvcr.io/nvidia/tritonserver:25.05-trtllm-python-py3",
        "inference",
    ),
    ("sglang", "lmsysorg/sglang:v0.4.7-cu126", "inference"),
    (
        "tei",
        "ghcr.io/huggingface/text-embeddings-inference:1.7",
        "embedding",
    ),
    ("trainer", "nvcr.io/nvidia/pytorch:25.05-py3", "training"),
    ("finetune", "nvcr.io/nvidia/nemo:25.04", "training"),
];
const CPU_APPS: &[(&str, &str, &str)] = &[
    ("gateway", "envoyproxy/envoy:v1.34.1", "gateway"),
    (
        "api",
        "registry.internal/platform/api-server:2025.05.3",
        "api",
    ),
    ("redis", "redis:7.4.3", "cache"),
    ("etl", "apache/spark:3.5.5", "batch"),
    ("web", "nginx:1.27.5", "web"),
    (
        "worker",
        "registry.internal/platform/queue-worker:1.18.0",
        "worker",
    ),
];
const WORDS: &[&str] = &[
    "chat",
    "search",
    "rank",
    "embed",
    "summarize",
    "moderation",
    "voice",
    "vision",
    "code",
    "agent",
    "eval",
    "batch",
    "rerank",
    "ingest",
    "router",
    "tutor",
];
const GPU_COUNTS: &[u32] = &[1, 1, 1, 1, 1, 2, 2, 4, 8, 8];
const DYNAMO_IMAGE: &str = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.4.1";
const DYNAMO_API: &str = "nvidia.com/v1alpha1";

// ---------------------------------------------------------------------------------------------
// The plan: nodes, namespaces and workloads with their pods placed, before anything is written
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq)]
enum NodeState {
    Ok,
    Cordoned,
    Tainted,
    NotReady,
    BrokenPlugin,
    CpuOnly,
}

struct Node {
    name: String,
    ip: String,
    zone: &'static str,
    product: usize,
    state: NodeState,
    /// GPUs the device plugin advertises as allocatable.
    alloc: u32,
    free: u32,
    created: i64,
}

struct Namespace {
    name: String,
    tenant: String,
    product_line: &'static str,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Deployment,
    StatefulSet,
    Job,
    BarePod,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Running,
    Pending,
    Succeeded,
    Failed,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Svc {
    None,
    ClusterIp,
    LoadBalancer,
    Headless,
}

/// One Dynamo service (component) of a graph.
struct DynamoPart {
    graph: usize,
    service: &'static str,
    component_type: &'static str,
    sub_type: Option<&'static str>,
    dcd_uid: String,
}

struct Graph {
    ns: usize,
    name: String,
    uid: String,
    model: &'static str,
    created: i64,
    /// Workload indices of its services, Frontend first.
    parts: Vec<usize>,
}

struct Workload {
    ns: usize,
    kind: Kind,
    name: String,
    uid: String,
    /// pod-template-hash (Deployments) or controller-revision-hash suffix (StatefulSets).
    hash: String,
    rs_uid: String,
    /// An older, scaled-down ReplicaSet: (hash, uid).
    old_rs: Option<(String, String)>,
    app: &'static str,
    component: &'static str,
    image: &'static str,
    command: Vec<String>,
    args: Vec<String>,
    gpus: u32,
    cpu: u32,
    mem_gi: u32,
    created: i64,
    /// Per pod: node index (None = Pending) and phase.
    pods: Vec<(Option<usize>, Phase)>,
    svc: Svc,
    /// Ingress in front of the Service: Some(internet-facing?).
    ingress: Option<bool>,
    dynamo: Option<DynamoPart>,
}

struct Plan {
    namespaces: Vec<Namespace>,
    nodes: Vec<Node>,
    workloads: Vec<Workload>,
    graphs: Vec<Graph>,
}

fn plan_nodes(rng: &mut Rng, n: usize) -> Vec<Node> {
    (0..n)
        .map(|i| {
            let ip_n = 0x0A10_0000 + i as u32 + 10 + (i as u32 / 250) * 6; // 10.16.x.y
            let ip = ipv4(ip_n);
            let state = if rng.chance(0.05) {
                NodeState::CpuOnly
            } else {
                match rng.below(1000) {
                    0..20 => NodeState::Cordoned,
                    20..35 => NodeState::Tainted,
                    35..50 => NodeState::NotReady,
                    50..65 => NodeState::BrokenPlugin,
                    _ => NodeState::Ok,
                }
            };
            let mut w = rng.below(100);
            let mut product = 0;
            for (j, p) in GPU_PRODUCTS.iter().enumerate() {
                if w < p.5 {
                    product = j;
                    break;
                }
                w -= p.5;
            }
            let zone = *rng.pick(ZONES);
            let alloc = match state {
                NodeState::CpuOnly | NodeState::BrokenPlugin => 0,
                _ => 8,
            };
            Node {
                name: format!("ip-{}.us-west-2.compute.internal", ip.replace('.', "-")),
                ip,
                zone,
                product,
                state,
                alloc,
                free: alloc,
                created: NOW - rng.range(2 * DAY, 200 * DAY),
            }
        })
        .collect()
}

fn plan_namespaces(n: usize) -> Vec<Namespace> {
    let tenants = (n / NS_SUFFIXES.len()).clamp(1, TENANTS.len());
    (0..n)
        .map(|i| {
            let t = i % tenants;
            let s = i / tenants;
            let suffix = NS_SUFFIXES[s % NS_SUFFIXES.len()];
            let name = if s < NS_SUFFIXES.len() {
                format!("{}-{suffix}", TENANTS[t])
            } else {
                format!("{}-{suffix}-{}", TENANTS[t], s / NS_SUFFIXES.len())
            };
            Namespace {
                name,
                tenant: TENANTS[t].to_string(),
                product_line: PRODUCT_LINES[t % PRODUCT_LINES.len()],
            }
        })
        .collect()
}

/// Places `count` pods of a workload; GPU pods go to a node with enough free GPUs, or stay Pending.
fn place(
    rng: &mut Rng,
    nodes: &mut [Node],
    gpus: u32,
    count: usize,
    kind: Kind,
) -> Vec<(Option<usize>, Phase)> {
    (0..count)
        .map(|_| {
            let node = if gpus > 0 {
                let start = rng.below(nodes.len());
                (0..nodes.len().min(64))
                    .map(|k| (start + k) % nodes.len())
                    .find(|&j| nodes[j].state != NodeState::Tainted && nodes[j].free >= gpus)
            } else {
                let j = rng.below(nodes.len());
                (nodes[j].state != NodeState::Tainted).then_some(j)
            };
            let Some(j) = node else {
                return (None, Phase::Pending);
            };
            nodes[j].free -= gpus;
            let phase = match kind {
                Kind::Job => match rng.below(100) {
                    0..35 => Phase::Succeeded,
                    35..43 => Phase::Failed,
                    _ => Phase::Running,
                },
                Kind::BarePod => match rng.below(100) {
                    0..10 => Phase::Succeeded,
                    10..15 => Phase::Failed,
                    _ => Phase::Running,
                },
                _ if rng.chance(0.01) => Phase::Failed,
                _ => Phase::Running,
            };
            (Some(j), phase)
        })
        .collect()
}

fn args_for(app: &str, model: &str, gpus: u32) -> Vec<String> {
    let v: Vec<&str> = match app {
        "vllm" => vec![
            "--model",
            model,
            "--tensor-parallel-size",
            "TP",
            "--port",
            "8000",
        ],
        "sglang" => vec!["--model-path", model, "--tp", "TP", "--port", "8000"],
        "triton" => vec!["--model-repository=/models/repo", "--http-port=8000"],
        "tei" => vec!["--model-id", "BAAI/bge-large-en-v1.5", "--port", "8000"],
        "trainer" | "finetune" => vec![
            "--nproc-per-node",
            "TP",
            "/workspace/train.py",
            "--config",
            "/configs/train.yaml",
        ],
        _ => vec!["--port", "8000", "--log-level", "info"],
    };
    v.into_iter()
        .map(|a| {
            if a == "TP" {
                gpus.to_string()
            } else {
                a.to_string()
            }
        })
        .collect()
}

#[allow(clippy::too_many_arguments)]
fn new_workload(
    rng: &mut Rng,
    ns: usize,
    kind: Kind,
    name: String,
    app: (&'static str, &'static str, &'static str),
    gpus: u32,
    args: Vec<String>,
    created: i64,
) -> Workload {
    let (cpu, mem_gi) = if gpus > 0 {
        (gpus * 12, gpus * 96)
    } else {
        (*rng.pick(&[1, 2, 4, 8]), *rng.pick(&[2, 4, 8, 16]))
    };
    let svc = match kind {
        Kind::Deployment if rng.chance(0.4) => {
            if rng.chance(0.15) {
                Svc::LoadBalancer
            } else {
                Svc::ClusterIp
            }
        }
        Kind::StatefulSet => Svc::Headless,
        _ => Svc::None,
    };
    let ingress = (svc == Svc::ClusterIp && rng.chance(0.3)).then(|| rng.chance(0.5));
    let old_rs = (kind == Kind::Deployment && rng.chance(0.3)).then(|| (rng.suffix(10), rng.uid()));
    Workload {
        ns,
        kind,
        name,
        uid: rng.uid(),
        hash: rng.suffix(10),
        rs_uid: rng.uid(),
        old_rs,
        app: app.0,
        image: app.1,
        component: app.2,
        command: Vec::new(),
        args,
        gpus,
        cpu,
        mem_gi,
        created,
        pods: Vec::new(),
        svc,
        ingress,
        dynamo: None,
    }
}

fn plan(rng: &mut Rng, args: &Args) -> Plan {
    let mut nodes = plan_nodes(rng, args.nodes.max(1));
    let namespaces = plan_namespaces(args.namespaces.max(1));
    let mut workloads: Vec<Workload> = Vec::new();
    let mut graphs: Vec<Graph> = Vec::new();
    let mut remaining = args.pods;
    let mut serial = 0usize;
    while remaining > 0 {
        serial += 1;
        let ns = rng.below(namespaces.len());
        let created = NOW - rng.range(DAY / 2, 120 * DAY);
        let roll = rng.below(100);
        if roll >= 92 && remaining >= 40 {
            // A Dynamo graph: Frontend, decode and prefill workers.
            let (short, model) = *rng.pick(MODELS);
            let gname = format!("{short}-{}-{serial}", rng.pick(WORDS));
            let g = graphs.len();
            let tp = *rng.pick(&[4, 8, 8, 8]);
            let parts = [
                ("Frontend", "frontend", None, rng.range(1, 2) as usize, 0),
                (
                    "VllmDecodeWorker",
                    "worker",
                    Some("decode"),
                    rng.range(2, 10) as usize,
                    tp,
                ),
                (
                    "VllmPrefillWorker",
                    "worker",
                    Some("prefill"),
                    rng.range(1, 6) as usize,
                    tp,
                ),
            ];
            let mut idx = Vec::new();
            for (service, component_type, sub_type, replicas, gpus) in parts {
                let name = format!("{gname}-{}", service.to_lowercase());
                let mut cmd_args = vec![
                    "--model".to_string(),
                    model.to_string(),
                    "--tensor-parallel-size".to_string(),
                    gpus.to_string(),
                ];
                if sub_type == Some("prefill") {
                    cmd_args.push("--is-prefill-worker".into());
                }
                if gpus == 0 {
                    cmd_args = vec!["--http-port".into(), "8000".into()];
                }
                let mut w = new_workload(
                    rng,
                    ns,
                    Kind::Deployment,
                    name,
                    ("dynamo", DYNAMO_IMAGE, "inference"),
                    gpus,
                    cmd_args,
                    created,
                );
                let module = if gpus == 0 {
                    "dynamo.frontend"
                } else {
                    "dynamo.vllm"
                };
                w.command = vec!["python3".into(), "-m".into(), module.into()];
                w.svc = if gpus == 0 { Svc::ClusterIp } else { Svc::None };
                w.ingress = (gpus == 0).then(|| rng.chance(0.5));
                w.pods = place(rng, &mut nodes, gpus, replicas, Kind::Deployment);
                w.dynamo = Some(DynamoPart {
                    graph: g,
                    service,
                    component_type,
                    sub_type,
                    dcd_uid: rng.uid(),
                });
                remaining -= replicas;
                idx.push(workloads.len());
                workloads.push(w);
            }
            graphs.push(Graph {
                ns,
                name: gname,
                uid: rng.uid(),
                model,
                created,
                parts: idx,
            });
            continue;
        }
        let (kind, replicas) = match roll {
            0..50 => (
                Kind::Deployment,
                *rng.pick(&[1, 1, 2, 2, 3, 4, 6, 8, 12, 16, 24]),
            ),
            50..65 => (Kind::StatefulSet, *rng.pick(&[1, 2, 3, 3, 4, 8, 16])),
            65..80 => (Kind::Job, *rng.pick(&[1, 1, 2, 4, 8])),
            _ => (Kind::BarePod, 1),
        };
        let replicas = replicas.min(remaining);
        let gpu = rng.chance(if kind == Kind::BarePod { 0.3 } else { 0.45 });
        let (gpus, app) = if gpu {
            let mut app = *rng.pick(GPU_APPS);
            if kind == Kind::Job && app.2 != "training" {
                app = GPU_APPS[4];
            }
            (*rng.pick(GPU_COUNTS), app)
        } else {
            (0, *rng.pick(CPU_APPS))
        };
        let (short, model) = *rng.pick(MODELS);
        let word = if gpu { short } else { *rng.pick(WORDS) };
        let name = format!("{}-{word}-{serial}", app.0);
        let args = args_for(app.0, model, gpus);
        let mut w = new_workload(rng, ns, kind, name, app, gpus, args, created);
        w.pods = place(rng, &mut nodes, gpus, replicas, kind);
        remaining -= replicas;
        workloads.push(w);
    }
    Plan {
        namespaces,
        nodes,
        workloads,
        graphs,
    }
}

// ---------------------------------------------------------------------------------------------
// Building objects
// ---------------------------------------------------------------------------------------------

struct Gen {
    rng: Rng,
    rv: u64,
    pod_ips: u32,
    svc_ips: u32,
}

impl Gen {
    fn rv(&mut self) -> String {
        self.rv += 1 + self.rng.below(40) as u64;
        self.rv.to_string()
    }
}

fn namespace_obj(g: &mut Gen, ns: &Namespace) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {
            "creationTimestamp": ts(NOW - 300 * DAY + g.rng.range(0, 100 * DAY)),
            "labels": {
                "kubernetes.io/metadata.name": ns.name,
                "product-line": ns.product_line,
                "tenant": ns.tenant,
            },
            "name": ns.name,
            "resourceVersion": g.rv(),
            "uid": g.rng.uid(),
        },
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    })
}

fn node_obj(g: &mut Gen, n: &Node) -> Value {
    let (product, instance, gpu_mem, cpu, mem_ki, _) = GPU_PRODUCTS[n.product];
    let cpu_only = n.state == NodeState::CpuOnly;
    let (instance, cpu, mem_ki) = if cpu_only {
        ("m7i.16xlarge", 64, 263_112_704u64)
    } else {
        (instance, cpu, mem_ki)
    };
    let mut labels = json!({
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/instance-type": instance,
        "beta.kubernetes.io/os": "linux",
        "eks.amazonaws.com/capacityType": "ON_DEMAND",
        "eks.amazonaws.com/nodegroup": if cpu_only { "system" } else { "gpu" },
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": n.name,
        "kubernetes.io/os": "linux",
        "node.kubernetes.io/instance-type": instance,
        "topology.kubernetes.io/region": "us-west-2",
        "topology.kubernetes.io/zone": n.zone,
    });
    let mut taints = Vec::new();
    let mut capacity = json!({
        "cpu": cpu.to_string(),
        "ephemeral-storage": "3905109820Ki",
        "hugepages-1Gi": "0",
        "hugepages-2Mi": "0",
        "memory": format!("{mem_ki}Ki"),
        "pods": "250",
    });
    let mut allocatable = json!({
        "cpu": format!("{}m", cpu * 1000 - 550),
        "ephemeral-storage": "3598855137853",
        "hugepages-1Gi": "0",
        "hugepages-2Mi": "0",
        "memory": format!("{}Ki", mem_ki - 7_602_176),
        "pods": "250",
    });
    if !cpu_only {
        labels["nvidia.com/gpu.count"] = json!("8");
        labels["nvidia.com/gpu.product"] = json!(product);
        labels["nvidia.com/gpu.memory"] = json!(gpu_mem.to_string());
        labels["nvidia.com/gpu.present"] = json!("true");
        labels["nvidia.com/cuda.driver.major"] = json!("570");
        taints.push(json!({"effect": "NoSchedule", "key": "nvidia.com/gpu", "value": "present"}));
        capacity["nvidia.com/gpu"] = json!("8");
        allocatable["nvidia.com/gpu"] = json!(n.alloc.to_string());
        capacity["vpc.amazonaws.com/efa"] = json!("32");
        allocatable["vpc.amazonaws.com/efa"] = json!("32");
    }
    let t = ts(n.created);
    let recent = ts(NOW - g.rng.range(60, 3600));
    let mut ready = json!({
        "lastHeartbeatTime": recent,
        "lastTransitionTime": t,
        "message": "kubelet is posting ready status",
        "reason": "KubeletReady",
        "status": "True",
        "type": "Ready",
    });
    let mut spec = json!({
        "providerID": format!("aws:///{}/i-0{}", n.zone, g.rng.hex(16)),
    });
    match n.state {
        NodeState::Cordoned => {
            spec["unschedulable"] = json!(true);
            taints.push(json!({"effect": "NoSchedule", "key": "node.kubernetes.io/unschedulable", "timeAdded": recent}));
        }
        NodeState::Tainted => {
            taints.push(json!({"effect": "NoExecute", "key": "maintenance.example.com/drain", "value": "gpu-xid-79", "timeAdded": recent}));
        }
        NodeState::NotReady => {
            ready = json!({
                "lastHeartbeatTime": ts(NOW - 3 * 3600),
                "lastTransitionTime": ts(NOW - 3 * 3600 + 40),
                "message": "Kubelet stopped posting node status.",
                "reason": "NodeStatusUnknown",
                "status": "Unknown",
                "type": "Ready",
            });
            taints.push(json!({"effect": "NoSchedule", "key": "node.kubernetes.io/unreachable", "timeAdded": recent}));
            taints.push(json!({"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "timeAdded": recent}));
        }
        _ => {}
    }
    if !taints.is_empty() {
        spec["taints"] = Value::Array(taints);
    }
    let pressure = |ty: &str, reason: &str, msg: &str| {
        json!({
            "lastHeartbeatTime": recent,
            "lastTransitionTime": t,
            "message": msg,
            "reason": reason,
            "status": "False",
            "type": ty,
        })
    };
    json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "annotations": {
                "alpha.kubernetes.io/provided-node-ip": n.ip,
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
            "creationTimestamp": t,
            "labels": labels,
            "name": n.name,
            "resourceVersion": g.rv(),
            "uid": g.rng.uid(),
        },
        "spec": spec,
        "status": {
            "addresses": [
                {"address": n.ip, "type": "InternalIP"},
                {"address": n.name, "type": "InternalDNS"},
                {"address": n.name, "type": "Hostname"},
            ],
            "allocatable": allocatable,
            "capacity": capacity,
            "conditions": [
                pressure("MemoryPressure", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
                pressure("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                pressure("PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
                ready,
            ],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "architecture": "amd64",
                "bootID": g.rng.uid(),
                "containerRuntimeVersion": "containerd://1.7.27",
                "kernelVersion": "6.1.134-150.224.amzn2023.x86_64",
                "kubeProxyVersion": "",
                "kubeletVersion": "v1.33.1-eks-1234567",
                "machineID": g.rng.hex(32),
                "operatingSystem": "linux",
                "osImage": "Amazon Linux 2023.7.20250527",
                "systemUUID": g.rng.uid(),
            },
        },
    })
}

/// Labels shared by a workload's template and pods (without per-pod labels).
fn template_labels(p: &Plan, w: &Workload) -> Value {
    let ns = &p.namespaces[w.ns];
    let mut l = json!({
        "app.kubernetes.io/component": w.component,
        "app.kubernetes.io/instance": w.name,
        "app.kubernetes.io/name": w.app,
        "app.kubernetes.io/part-of": ns.product_line,
        "team": ns.tenant,
    });
    match w.kind {
        Kind::Job => {
            l["batch.kubernetes.io/controller-uid"] = json!(w.uid);
            l["batch.kubernetes.io/job-name"] = json!(w.name);
            l["controller-uid"] = json!(w.uid);
            l["job-name"] = json!(w.name);
        }
        Kind::Deployment | Kind::StatefulSet | Kind::BarePod => {}
    }
    if let Some(d) = &w.dynamo {
        let graph = &p.graphs[d.graph].name;
        l["nvidia.com/dynamo-component"] = json!(d.service);
        l["nvidia.com/dynamo-component-type"] = json!(d.component_type);
        l["nvidia.com/dynamo-graph-deployment-name"] = json!(graph);
        l["nvidia.com/dynamo-namespace"] = json!(format!("{}-{graph}", ns.name));
        l["nvidia.com/selector"] = json!(w.name);
        if let Some(s) = d.sub_type {
            l["nvidia.com/dynamo-sub-component-type"] = json!(s);
        }
    }
    l
}

fn selector_labels(w: &Workload) -> Value {
    match w.kind {
        Kind::Job => json!({"batch.kubernetes.io/controller-uid": w.uid}),
        _ if w.dynamo.is_some() => json!({"nvidia.com/selector": w.name}),
        _ => json!({"app.kubernetes.io/instance": w.name}),
    }
}

fn resources(w: &Workload) -> Value {
    let mut requests = json!({
        "cpu": w.cpu.to_string(),
        "memory": format!("{}Gi", w.mem_gi),
    });
    let mut limits = json!({"memory": format!("{}Gi", w.mem_gi)});
    if w.gpus > 0 {
        limits["cpu"] = json!(w.cpu.to_string());
        limits["nvidia.com/gpu"] = json!(w.gpus.to_string());
        requests["nvidia.com/gpu"] = json!(w.gpus.to_string());
    }
    json!({"limits": limits, "requests": requests})
}

/// The pod template spec shared by a controller and its pods.
fn template_spec(p: &Plan, w: &Workload) -> Value {
    let ns = &p.namespaces[w.ns];
    let env = json!([
        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}},
        {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}},
        {"name": "HF_HOME", "value": "/models/hf"},
        {"name": "LOG_LEVEL", "value": "info"},
        {"name": "OTEL_EXPORTER_OTLP_ENDPOINT", "value": "http://otel-collector.observability.svc:4317"},
        {"name": "NCCL_DEBUG", "value": "WARN"},
    ]);
    let mut container = json!({
        "args": w.args,
        "env": env,
        "image": w.image,
        "imagePullPolicy": "IfNotPresent",
        "name": "main",
        "ports": [{"containerPort": 8000, "name": "http", "protocol": "TCP"}],
        "resources": resources(w),
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
        "volumeMounts": [
            {"mountPath": "/dev/shm", "name": "dshm"},
            {"mountPath": "/models", "name": "models", "readOnly": true},
        ],
    });
    if !w.command.is_empty() {
        container["command"] = json!(w.command);
    }
    json!({
        "containers": [container],
        "dnsPolicy": "ClusterFirst",
        "restartPolicy": if w.kind == Kind::Job { "Never" } else { "Always" },
        "schedulerName": "default-scheduler",
        "securityContext": {},
        "serviceAccount": format!("{}-workloads", ns.tenant),
        "serviceAccountName": format!("{}-workloads", ns.tenant),
        "terminationGracePeriodSeconds": 30,
        "tolerations": [
            {"effect": "NoSchedule", "key": "nvidia.com/gpu", "operator": "Exists"},
        ],
        "volumes": [
            {"emptyDir": {"medium": "Memory", "sizeLimit": "64Gi"}, "name": "dshm"},
            {"name": "models", "persistentVolumeClaim": {"claimName": format!("{}-models", ns.tenant), "readOnly": true}},
        ],
    })
}

fn template(p: &Plan, w: &Workload, extra_labels: Value) -> Value {
    json!({
        "metadata": {
            "annotations": {"prometheus.io/port": "9090", "prometheus.io/scrape": "true"},
            "labels": merged(&template_labels(p, w), extra_labels),
        },
        "spec": template_spec(p, w),
    })
}

fn managed_fields(manager: &str, time: &str, labels: &Value, owner_uid: Option<&str>) -> Value {
    let mut f_labels = json!({".": {}});
    if let Some(l) = labels.as_object() {
        for k in l.keys() {
            f_labels[format!("f:{k}")] = json!({});
        }
    }
    let mut f_meta = json!({"f:labels": f_labels});
    if let Some(uid) = owner_uid {
        f_meta["f:generateName"] = json!({});
        f_meta["f:ownerReferences"] = json!({".": {}, (format!("k:{{\"uid\":\"{uid}\"}}")): {}});
    }
    json!([{
        "apiVersion": "v1",
        "fieldsType": "FieldsV1",
        "fieldsV1": {
            "f:metadata": f_meta,
            "f:spec": {
                "f:containers": {
                    "k:{\"name\":\"main\"}": {".": {}, "f:args": {}, "f:env": {}, "f:image": {}, "f:name": {}, "f:resources": {}},
                },
                "f:tolerations": {},
            },
        },
        "manager": manager,
        "operation": "Update",
        "time": time,
    }])
}

fn pod_obj(g: &mut Gen, p: &Plan, w: &Workload, i: usize, used: &mut HashSet<String>) -> Value {
    let (node, phase) = w.pods[i];
    let ns = &p.namespaces[w.ns].name;
    let mut unique = |g: &mut Gen, n: usize| loop {
        let s = g.rng.suffix(n);
        if used.insert(s.clone()) {
            break s;
        }
    };
    let (name, generate, owner_ref, extra) = match w.kind {
        Kind::Deployment => {
            let rs = format!("{}-{}", w.name, w.hash);
            let sfx = unique(g, 5);
            (
                format!("{rs}-{sfx}"),
                Some(format!("{rs}-")),
                Some(owner("apps/v1", "ReplicaSet", &rs, &w.rs_uid)),
                json!({"pod-template-hash": w.hash}),
            )
        }
        Kind::StatefulSet => (
            format!("{}-{i}", w.name),
            Some(format!("{}-", w.name)),
            Some(owner("apps/v1", "StatefulSet", &w.name, &w.uid)),
            json!({
                "apps.kubernetes.io/pod-index": i.to_string(),
                "controller-revision-hash": format!("{}-{}", w.name, w.hash),
                "statefulset.kubernetes.io/pod-name": format!("{}-{i}", w.name),
            }),
        ),
        Kind::Job => {
            let sfx = unique(g, 5);
            (
                format!("{}-{sfx}", w.name),
                Some(format!("{}-", w.name)),
                Some(owner("batch/v1", "Job", &w.name, &w.uid)),
                json!({}),
            )
        }
        Kind::BarePod => (w.name.clone(), None, None, json!({})),
    };
    let labels = merged(&template_labels(p, w), extra);
    let created = w.created + g.rng.range(0, (NOW - w.created) / 2);
    let started = created + g.rng.range(2, 30);
    let owner_uid = owner_ref
        .as_ref()
        .map(|o| o[0]["uid"].as_str().unwrap_or("").to_string());
    let mut meta = json!({
        "annotations": {"prometheus.io/port": "9090", "prometheus.io/scrape": "true"},
        "creationTimestamp": ts(created),
        "labels": labels,
        "managedFields": managed_fields("kube-controller-manager", &ts(created), &labels, owner_uid.as_deref()),
        "name": name,
        "namespace": ns,
        "resourceVersion": g.rv(),
        "uid": g.rng.uid(),
    });
    if let Some(gn) = generate {
        meta["generateName"] = json!(gn);
    }
    if let Some(o) = owner_ref {
        meta["ownerReferences"] = o;
    }
    let mut spec = template_spec(p, w);
    spec["tolerations"].as_array_mut().expect("tolerations").extend([
        json!({"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists", "tolerationSeconds": 300}),
        json!({"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists", "tolerationSeconds": 300}),
    ]);
    spec["enableServiceLinks"] = json!(true);
    spec["preemptionPolicy"] = json!("PreemptLowerPriority");
    spec["priority"] = json!(0);
    let qos = if w.gpus > 0 {
        "Guaranteed"
    } else {
        "Burstable"
    };
    let status = match node {
        None => json!({
            "conditions": [{
                "lastProbeTime": null,
                "lastTransitionTime": ts(created),
                "message": format!("0/{} nodes are available: {} Insufficient nvidia.com/gpu. preemption: 0/{} nodes are available: {} No preemption victims found for incoming pod.", p.nodes.len(), p.nodes.len(), p.nodes.len(), p.nodes.len()),
                "reason": "Unschedulable",
                "status": "False",
                "type": "PodScheduled",
            }],
            "phase": "Pending",
            "qosClass": qos,
        }),
        Some(j) => {
            let n = &p.nodes[j];
            spec["nodeName"] = json!(n.name);
            g.pod_ips += 1;
            let ip = ipv4(0x6440_0000 + g.pod_ips);
            let (ready, cond_reason, state, phase_s) = match phase {
                Phase::Running => (
                    true,
                    None,
                    json!({"running": {"startedAt": ts(started + 5)}}),
                    "Running",
                ),
                Phase::Succeeded => (
                    false,
                    Some("PodCompleted"),
                    json!({"terminated": {
                    "containerID": format!("containerd://{}", g.rng.hex(64)),
                    "exitCode": 0, "finishedAt": ts(started + 3600), "reason": "Completed", "startedAt": ts(started + 5)}}),
                    "Succeeded",
                ),
                _ => (
                    false,
                    Some("PodFailed"),
                    json!({"terminated": {
                    "containerID": format!("containerd://{}", g.rng.hex(64)),
                    "exitCode": 1, "finishedAt": ts(started + 600), "reason": "Error", "startedAt": ts(started + 5)}}),
                    "Failed",
                ),
            };
            let cond = |ty: &str, ok: bool| {
                let mut c = json!({
                    "lastProbeTime": null,
                    "lastTransitionTime": ts(started + 20),
                    "status": if ok { "True" } else { "False" },
                    "type": ty,
                });
                if let (false, Some(r)) = (ok, cond_reason) {
                    c["reason"] = json!(r);
                }
                c
            };
            json!({
                "conditions": [
                    cond("Initialized", true),
                    cond("Ready", ready),
                    cond("ContainersReady", ready),
                    cond("PodScheduled", true),
                ],
                "containerStatuses": [{
                    "containerID": format!("containerd://{}", g.rng.hex(64)),
                    "image": w.image,
                    "imageID": format!("{}@sha256:{}", w.image.split(':').next().unwrap_or(w.image), g.rng.hex(64)),
                    "lastState": {},
                    "name": "main",
                    "ready": ready,
                    "restartCount": if g.rng.chance(0.1) { g.rng.below(5) } else { 0 },
                    "started": ready,
                    "state": state,
                }],
                "hostIP": n.ip,
                "hostIPs": [{"ip": n.ip}],
                "phase": phase_s,
                "podIP": ip,
                "podIPs": [{"ip": ip}],
                "qosClass": qos,
                "startTime": ts(started),
            })
        }
    };
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": spec,
        "status": status,
    })
}

fn counts(w: &Workload) -> (usize, usize) {
    let ready = w
        .pods
        .iter()
        .filter(|(_, ph)| *ph == Phase::Running)
        .count();
    (w.pods.len(), ready)
}

fn controller_meta(
    g: &mut Gen,
    p: &Plan,
    w: &Workload,
    name: &str,
    labels: Value,
    owner_ref: Option<Value>,
) -> Value {
    let mut m = json!({
        "annotations": {"meta.helm.sh/release-name": w.name, "meta.helm.sh/release-namespace": p.namespaces[w.ns].name},
        "creationTimestamp": ts(w.created),
        "generation": 1 + g.rng.below(6),
        "labels": labels,
        "name": name,
        "namespace": p.namespaces[w.ns].name,
        "resourceVersion": g.rv(),
        "uid": "",
    });
    if let Some(o) = owner_ref {
        m["ownerReferences"] = o;
    }
    m
}

fn deployment_obj(g: &mut Gen, p: &Plan, w: &Workload) -> Value {
    let (replicas, ready) = counts(w);
    let owner_ref = w
        .dynamo
        .as_ref()
        .map(|d| owner(DYNAMO_API, "DynamoComponentDeployment", &w.name, &d.dcd_uid));
    let mut meta = controller_meta(g, p, w, &w.name, template_labels(p, w), owner_ref);
    meta["uid"] = json!(w.uid);
    meta["annotations"]["deployment.kubernetes.io/revision"] =
        json!(if w.old_rs.is_some() { "2" } else { "1" });
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta,
        "spec": {
            "progressDeadlineSeconds": 600,
            "replicas": replicas,
            "revisionHistoryLimit": 10,
            "selector": {"matchLabels": selector_labels(w)},
            "strategy": {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}, "type": "RollingUpdate"},
            "template": template(p, w, json!({})),
        },
        "status": {
            "availableReplicas": ready,
            "conditions": [
                {"lastTransitionTime": ts(w.created + 60), "lastUpdateTime": ts(w.created + 60), "message": format!("ReplicaSet \"{}-{}\" has successfully progressed.", w.name, w.hash), "reason": "NewReplicaSetAvailable", "status": "True", "type": "Progressing"},
                {"lastTransitionTime": ts(w.created + 60), "lastUpdateTime": ts(w.created + 60), "message": "Deployment has minimum availability.", "reason": "MinimumReplicasAvailable", "status": if ready * 4 >= replicas * 3 { "True" } else { "False" }, "type": "Available"},
            ],
            "observedGeneration": 1,
            "readyReplicas": ready,
            "replicas": replicas,
            "updatedReplicas": replicas,
        },
    })
}

fn replicaset_obj(g: &mut Gen, p: &Plan, w: &Workload, hash: &str, uid: &str, live: bool) -> Value {
    let (replicas, ready) = if live { counts(w) } else { (0, 0) };
    let name = format!("{}-{hash}", w.name);
    let extra = json!({"pod-template-hash": hash});
    let labels = merged(&template_labels(p, w), extra.clone());
    let mut meta = controller_meta(
        g,
        p,
        w,
        &name,
        labels,
        Some(owner("apps/v1", "Deployment", &w.name, &w.uid)),
    );
    meta["uid"] = json!(uid);
    meta["annotations"]["deployment.kubernetes.io/desired-replicas"] =
        json!(counts(w).0.to_string());
    meta["annotations"]["deployment.kubernetes.io/revision"] =
        json!(if live && w.old_rs.is_some() { "2" } else { "1" });
    json!({
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": meta,
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": merged(&selector_labels(w), extra.clone())},
            "template": template(p, w, extra),
        },
        "status": {
            "availableReplicas": ready,
            "fullyLabeledReplicas": replicas,
            "observedGeneration": 1,
            "readyReplicas": ready,
            "replicas": replicas,
        },
    })
}

fn statefulset_obj(g: &mut Gen, p: &Plan, w: &Workload) -> Value {
    let (replicas, ready) = counts(w);
    let mut meta = controller_meta(g, p, w, &w.name, template_labels(p, w), None);
    meta["uid"] = json!(w.uid);
    let rev = format!("{}-{}", w.name, w.hash);
    json!({
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": meta,
        "spec": {
            "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Retain"},
            "podManagementPolicy": "Parallel",
            "replicas": replicas,
            "revisionHistoryLimit": 10,
            "selector": {"matchLabels": selector_labels(w)},
            "serviceName": w.name,
            "template": template(p, w, json!({})),
            "updateStrategy": {"rollingUpdate": {"partition": 0}, "type": "RollingUpdate"},
        },
        "status": {
            "availableReplicas": ready,
            "collisionCount": 0,
            "currentReplicas": replicas,
            "currentRevision": rev,
            "observedGeneration": 1,
            "readyReplicas": ready,
            "replicas": replicas,
            "updateRevision": rev,
            "updatedReplicas": replicas,
        },
    })
}

fn job_obj(g: &mut Gen, p: &Plan, w: &Workload) -> Value {
    let n = w.pods.len();
    let count = |ph: Phase| w.pods.iter().filter(|(_, x)| *x == ph).count();
    let (succeeded, failed) = (count(Phase::Succeeded), count(Phase::Failed));
    let active = n - succeeded - failed;
    let mut meta = controller_meta(g, p, w, &w.name, template_labels(p, w), None);
    meta["uid"] = json!(w.uid);
    json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": meta,
        "spec": {
            "backoffLimit": 6,
            "completionMode": "NonIndexed",
            "completions": n,
            "manualSelector": false,
            "parallelism": n,
            "podReplacementPolicy": "TerminatingOrFailed",
            "selector": {"matchLabels": selector_labels(w)},
            "suspend": false,
            "template": template(p, w, json!({})),
        },
        "status": {
            "active": active,
            "failed": failed,
            "ready": count(Phase::Running),
            "startTime": ts(w.created + 5),
            "succeeded": succeeded,
            "terminating": 0,
            "uncountedTerminatedPods": {},
        },
    })
}

fn service_obj(g: &mut Gen, p: &Plan, w: &Workload) -> Value {
    let ns = &p.namespaces[w.ns].name;
    let selector = match &w.dynamo {
        Some(d) => json!({
            "nvidia.com/dynamo-component": d.service,
            "nvidia.com/dynamo-graph-deployment-name": p.graphs[d.graph].name,
        }),
        None => selector_labels(w),
    };
    g.svc_ips += 1;
    let ip = if w.svc == Svc::Headless {
        "None".to_string()
    } else {
        ipv4(0xAC14_0000 + g.svc_ips)
    };
    let mut port = json!({"name": "http", "port": 80, "protocol": "TCP", "targetPort": "http"});
    let mut spec = json!({
        "clusterIP": ip,
        "clusterIPs": [ip],
        "internalTrafficPolicy": "Cluster",
        "ipFamilies": ["IPv4"],
        "ipFamilyPolicy": "SingleStack",
        "selector": selector,
        "sessionAffinity": "None",
        "type": "ClusterIP",
    });
    let mut annotations =
        json!({"meta.helm.sh/release-name": w.name, "meta.helm.sh/release-namespace": ns});
    let mut status = json!({"loadBalancer": {}});
    if w.svc == Svc::LoadBalancer {
        spec["type"] = json!("LoadBalancer");
        spec["allocateLoadBalancerNodePorts"] = json!(true);
        spec["externalTrafficPolicy"] = json!("Cluster");
        port["nodePort"] = json!(30000 + g.rng.below(2767));
        annotations["service.beta.kubernetes.io/aws-load-balancer-scheme"] =
            json!(if g.rng.chance(0.5) {
                "internet-facing"
            } else {
                "internal"
            });
        annotations["service.beta.kubernetes.io/aws-load-balancer-type"] = json!("external");
        status = json!({"loadBalancer": {"ingress": [{"hostname": format!("k8s-{}-{}.elb.us-west-2.amazonaws.com", g.rng.hex(10), g.rng.hex(10))}]}});
    }
    spec["ports"] = json!([port]);
    json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "annotations": annotations,
            "creationTimestamp": ts(w.created),
            "labels": template_labels(p, w),
            "name": w.name,
            "namespace": ns,
            "resourceVersion": g.rv(),
            "uid": g.rng.uid(),
        },
        "spec": spec,
        "status": status,
    })
}

fn ingress_obj(g: &mut Gen, p: &Plan, w: &Workload, public: bool) -> Value {
    let ns = &p.namespaces[w.ns].name;
    let scheme = if public {
        "internet-facing"
    } else {
        "internal"
    };
    json!({
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {
            "annotations": {
                "alb.ingress.kubernetes.io/group.name": ns,
                "alb.ingress.kubernetes.io/scheme": scheme,
                "alb.ingress.kubernetes.io/target-type": "ip",
            },
            "creationTimestamp": ts(w.created),
            "generation": 1,
            "labels": template_labels(p, w),
            "name": w.name,
            "namespace": ns,
            "resourceVersion": g.rv(),
            "uid": g.rng.uid(),
        },
        "spec": {
            "ingressClassName": "alb",
            "rules": [{
                "host": format!("{}.{ns}.example.com", w.name),
                "http": {"paths": [{
                    "backend": {"service": {"name": w.name, "port": {"name": "http"}}},
                    "path": "/",
                    "pathType": "Prefix",
                }]},
            }],
        },
        "status": {"loadBalancer": {"ingress": [{"hostname": format!("k8s-{}-{}.{}.elb.amazonaws.com", g.rng.hex(8), g.rng.hex(10), if public { "us-west-2" } else { "internal.us-west-2" })}]}},
    })
}

/// The DGD / DCD `resources` block: GPUs as `gpu` in limits.
fn dynamo_resources(w: &Workload) -> Value {
    let mut limits = json!({"cpu": w.cpu.to_string(), "memory": format!("{}Gi", w.mem_gi)});
    if w.gpus > 0 {
        limits["gpu"] = json!(w.gpus.to_string());
    }
    json!({"limits": limits, "requests": {"cpu": w.cpu.to_string(), "memory": format!("{}Gi", w.mem_gi)}})
}

fn dynamo_service_spec(w: &Workload, d: &DynamoPart) -> Value {
    let mut s = json!({
        "componentType": d.component_type,
        "extraPodSpec": {"mainContainer": {"args": w.args, "command": w.command, "image": w.image}},
        "replicas": w.pods.len(),
        "resources": dynamo_resources(w),
    });
    if let Some(sub) = d.sub_type {
        s["subComponentType"] = json!(sub);
    }
    s
}

fn graph_obj(g: &mut Gen, p: &Plan, gr: &Graph) -> Value {
    let ns = &p.namespaces[gr.ns].name;
    let mut services = json!({});
    let mut status_services = json!({});
    for &i in &gr.parts {
        let w = &p.workloads[i];
        let d = w.dynamo.as_ref().expect("dynamo part");
        services[d.service] = dynamo_service_spec(w, d);
        let (replicas, ready) = counts(w);
        status_services[d.service] = json!({"componentKind": "Deployment", "gpusPerReplica": w.gpus, "readyReplicas": ready, "replicas": replicas});
    }
    json!({
        "apiVersion": DYNAMO_API,
        "kind": "DynamoGraphDeployment",
        "metadata": {
            "annotations": {"argocd.argoproj.io/tracking-id": format!("{ns}:nvidia.com/DynamoGraphDeployment:{ns}/{}", gr.name)},
            "creationTimestamp": ts(gr.created),
            "generation": 1 + g.rng.below(5),
            "labels": {"app.kubernetes.io/instance": ns},
            "name": gr.name,
            "namespace": ns,
            "resourceVersion": g.rv(),
            "uid": gr.uid,
        },
        "spec": {
            "backendFramework": "vllm",
            "envs": [{"name": "HF_HOME", "value": "/models/hf"}, {"name": "MODEL", "value": gr.model}],
            "services": services,
        },
        "status": {
            "conditions": [{"lastTransitionTime": ts(gr.created + 600), "message": "All resources are ready", "reason": "all_resources_are_ready", "status": "True", "type": "Ready"}],
            "services": status_services,
            "state": "successful",
        },
    })
}

fn dcd_obj(g: &mut Gen, p: &Plan, w: &Workload, d: &DynamoPart) -> Value {
    let gr = &p.graphs[d.graph];
    let ns = &p.namespaces[w.ns].name;
    let dns = format!("{ns}-{}", gr.name);
    let mut labels = json!({
        "nvidia.com/dynamo-component": d.service,
        "nvidia.com/dynamo-component-type": d.component_type,
        "nvidia.com/dynamo-graph-deployment-name": gr.name,
        "nvidia.com/dynamo-namespace": dns,
    });
    let mut spec = dynamo_service_spec(w, d);
    spec["backendFramework"] = json!("vllm");
    spec["dynamoNamespace"] = json!(dns);
    spec["serviceName"] = json!(d.service);
    if let Some(sub) = d.sub_type {
        labels["nvidia.com/dynamo-sub-component-type"] = json!(sub);
    }
    json!({
        "apiVersion": DYNAMO_API,
        "kind": "DynamoComponentDeployment",
        "metadata": {
            "creationTimestamp": ts(gr.created),
            "generation": 1 + g.rng.below(3),
            "labels": labels,
            "name": w.name,
            "namespace": ns,
            "ownerReferences": owner(DYNAMO_API, "DynamoGraphDeployment", &gr.name, &gr.uid),
            "resourceVersion": g.rv(),
            "uid": d.dcd_uid,
        },
        "spec": spec,
        "status": {
            "conditions": [{"lastTransitionTime": ts(gr.created + 600), "message": "component is ready", "reason": "ComponentReady", "status": "True", "type": "Available"}],
            "podSelector": {"nvidia.com/selector": w.name},
        },
    })
}

// ---------------------------------------------------------------------------------------------
// Writing: kubectl-style indented JSON List, or multi-document block YAML
// ---------------------------------------------------------------------------------------------

struct Counting<W> {
    inner: W,
    bytes: u64,
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

fn pad(w: &mut impl Write, n: usize) -> io::Result<()> {
    const SPACES: &[u8] = &[b' '; 64];
    let mut left = n;
    while left > 0 {
        let k = left.min(SPACES.len());
        w.write_all(&SPACES[..k])?;
        left -= k;
    }
    Ok(())
}

/// Pretty JSON with 4-space indentation, as kubectl prints it; `indent` is the current depth.
fn write_json<W: Write>(w: &mut W, v: &Value, indent: usize) -> io::Result<()> {
    match v {
        Value::Object(m) if !m.is_empty() => {
            w.write_all(b"{\n")?;
            for (i, (k, v)) in m.iter().enumerate() {
                if i > 0 {
                    w.write_all(b",\n")?;
                }
                pad(w, indent + 4)?;
                serde_json::to_writer(&mut *w, k)?;
                w.write_all(b": ")?;
                write_json(w, v, indent + 4)?;
            }
            w.write_all(b"\n")?;
            pad(w, indent)?;
            w.write_all(b"}")
        }
        Value::Array(a) if !a.is_empty() => {
            w.write_all(b"[\n")?;
            for (i, v) in a.iter().enumerate() {
                if i > 0 {
                    w.write_all(b",\n")?;
                }
                pad(w, indent + 4)?;
                write_json(w, v, indent + 4)?;
            }
            w.write_all(b"\n")?;
            pad(w, indent)?;
            w.write_all(b"]")
        }
        _ => Ok(serde_json::to_writer(&mut *w, v)?),
    }
}

fn yaml_key<W: Write>(w: &mut W, k: &str) -> io::Result<()> {
    let plain = k.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '/' | '-'))
        && !matches!(
            k.to_ascii_lowercase().as_str(),
            "y" | "n" | "yes" | "no" | "on" | "off" | "true" | "false" | "null"
        );
    if plain {
        w.write_all(k.as_bytes())
    } else {
        Ok(serde_json::to_writer(&mut *w, k)?)
    }
}

/// Block YAML mapping at `indent`; with `inline_first` the first key follows a `- ` already written.
fn write_yaml_map<W: Write>(
    w: &mut W,
    m: &serde_json::Map<String, Value>,
    indent: usize,
    inline_first: bool,
) -> io::Result<()> {
    for (i, (k, v)) in m.iter().enumerate() {
        if i > 0 || !inline_first {
            pad(w, indent)?;
        }
        yaml_key(w, k)?;
        w.write_all(b":")?;
        match v {
            Value::Object(o) if !o.is_empty() => {
                w.write_all(b"\n")?;
                write_yaml_map(w, o, indent + 2, false)?;
            }
            Value::Array(a) if !a.is_empty() => {
                w.write_all(b"\n")?;
                write_yaml_seq(w, a, indent)?;
            }
            _ => {
                w.write_all(b" ")?;
                serde_json::to_writer(&mut *w, v)?;
                w.write_all(b"\n")?;
            }
        }
    }
    Ok(())
}

fn write_yaml_seq<W: Write>(w: &mut W, a: &[Value], indent: usize) -> io::Result<()> {
    for v in a {
        pad(w, indent)?;
        w.write_all(b"- ")?;
        match v {
            Value::Object(o) if !o.is_empty() => write_yaml_map(w, o, indent + 2, true)?,
            // Scalars, empty collections and nested sequences as JSON flow (valid YAML).
            _ => {
                serde_json::to_writer(&mut *w, v)?;
                w.write_all(b"\n")?;
            }
        }
    }
    Ok(())
}

struct Out<W: Write> {
    w: W,
    format: Format,
    compact: bool,
    items: usize,
}

impl<W: Write> Out<W> {
    fn begin(&mut self) -> io::Result<()> {
        if self.format == Format::Json {
            self.w
                .write_all(b"{\n    \"apiVersion\": \"v1\",\n    \"items\": [\n")?;
        }
        Ok(())
    }

    fn emit(&mut self, v: &Value) -> io::Result<()> {
        match self.format {
            Format::Json => {
                if self.items > 0 {
                    self.w.write_all(b",\n")?;
                }
                if self.compact {
                    serde_json::to_writer(&mut self.w, v)?;
                } else {
                    pad(&mut self.w, 8)?;
                    write_json(&mut self.w, v, 8)?;
                }
            }
            Format::Yaml => {
                self.w.write_all(b"---\n")?;
                if let Value::Object(m) = v {
                    write_yaml_map(&mut self.w, m, 0, false)?;
                }
            }
        }
        self.items += 1;
        Ok(())
    }

    fn end(&mut self) -> io::Result<()> {
        if self.format == Format::Json {
            self.w.write_all(
                b"\n    ],\n    \"kind\": \"List\",\n    \"metadata\": {\n        \"resourceVersion\": \"\"\n    }\n}\n",
            )?;
        }
        self.w.flush()
    }
}

fn main() -> io::Result<()> {
    let args = Args::parse();
    let mut rng = Rng(args.seed);
    let p = plan(&mut rng, &args);
    let mut g = Gen {
        rng,
        rv: 48_000_000,
        pod_ips: 0,
        svc_ips: 0,
    };
    let file = File::create(&args.output)?;
    let counting = Counting {
        inner: BufWriter::with_capacity(1 << 20, file),
        bytes: 0,
    };
    let mut out = Out {
        w: counting,
        format: args.format,
        compact: args.compact,
        items: 0,
    };
    out.begin()?;
    for ns in &p.namespaces {
        out.emit(&namespace_obj(&mut g, ns))?;
    }
    for n in &p.nodes {
        out.emit(&node_obj(&mut g, n))?;
    }
    let (mut pods, mut gpu_pods, mut pending) = (0usize, 0usize, 0usize);
    for w in &p.workloads {
        let mut used = HashSet::new();
        for i in 0..w.pods.len() {
            out.emit(&pod_obj(&mut g, &p, w, i, &mut used))?;
            pods += 1;
            gpu_pods += usize::from(w.gpus > 0);
            pending += usize::from(w.pods[i].0.is_none());
        }
    }
    for w in p.workloads.iter().filter(|w| w.svc != Svc::None) {
        out.emit(&service_obj(&mut g, &p, w))?;
    }
    for w in p.workloads.iter().filter(|w| w.kind == Kind::Deployment) {
        out.emit(&deployment_obj(&mut g, &p, w))?;
    }
    for w in p.workloads.iter().filter(|w| w.kind == Kind::Deployment) {
        if let Some((hash, uid)) = &w.old_rs {
            out.emit(&replicaset_obj(&mut g, &p, w, hash, uid, false))?;
        }
        out.emit(&replicaset_obj(&mut g, &p, w, &w.hash, &w.rs_uid, true))?;
    }
    for w in p.workloads.iter().filter(|w| w.kind == Kind::StatefulSet) {
        out.emit(&statefulset_obj(&mut g, &p, w))?;
    }
    for w in p.workloads.iter().filter(|w| w.kind == Kind::Job) {
        out.emit(&job_obj(&mut g, &p, w))?;
    }
    for w in &p.workloads {
        if let Some(public) = w.ingress {
            out.emit(&ingress_obj(&mut g, &p, w, public))?;
        }
    }
    for gr in &p.graphs {
        out.emit(&graph_obj(&mut g, &p, gr))?;
    }
    for w in &p.workloads {
        if let Some(d) = &w.dynamo {
            out.emit(&dcd_obj(&mut g, &p, w, d))?;
        }
    }
    out.end()?;
    if let Some(dir) = &args.repo_out {
        write_repo(&p, dir, args.repo_workloads)?;
    }
    let alloc: u32 = p.nodes.iter().map(|n| n.alloc).sum();
    let free: u32 = p.nodes.iter().map(|n| n.free).sum();
    eprintln!(
        "synth-fleet: {} objects ({} nodes, {} namespaces, {} workloads, {} Dynamo graphs), {pods} pods ({gpu_pods} GPU pods, {pending} pending), {}/{alloc} allocatable GPUs bound, {} bytes written to {}",
        out.items,
        p.nodes.len(),
        p.namespaces.len(),
        p.workloads.len(),
        p.graphs.len(),
        alloc - free,
        out.w.bytes,
        args.output.display()
    );
    Ok(())
}

/// A plain-manifest GitOps repository for the first `n` GPU Deployments and StatefulSets.
fn write_repo(p: &Plan, dir: &std::path::Path, n: usize) -> io::Result<()> {
    let candidates = p.workloads.iter().filter(|w| {
        w.gpus > 0 && w.dynamo.is_none() && matches!(w.kind, Kind::Deployment | Kind::StatefulSet)
    });
    let mut written = 0;
    for (i, w) in candidates.take(n).enumerate() {
        let ns = &p.namespaces[w.ns].name;
        let kind = if w.kind == Kind::Deployment {
            "Deployment"
        } else {
            "StatefulSet"
        };
        let replicas = w.pods.len() + usize::from(i % 10 == 0);
        let d = dir.join(ns);
        std::fs::create_dir_all(&d)?;
        std::fs::write(
            d.join(format!("{}.yaml", w.name)),
            format!(
                "apiVersion: apps/v1\nkind: {kind}\nmetadata:\n  name: {}\n  namespace: {ns}\nspec:\n  replicas: {replicas}\n  template:\n    spec:\n      containers:\n      - name: main\n        image: {}\n        resources:\n          limits: {{nvidia.com/gpu: \"{}\"}}\n",
                w.name, w.image, w.gpus
            ),
        )?;
        written += 1;
    }
    eprintln!(
        "synth-fleet: {written} workloads written to the repository {}",
        dir.display()
    );
    Ok(())
}
