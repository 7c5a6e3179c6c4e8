//! The plan: nodes, namespaces and workloads with their pods placed, all decided before anything
//! is written, so that bound pods never hold more GPUs than their node has.

use crate::Args;
use crate::catalog::*;
use crate::rng::*;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum NodeState {
    Ok,
    Cordoned,
    Tainted,
    NotReady,
    BrokenPlugin,
    CpuOnly,
}

pub(crate) struct Node {
    pub(crate) name: String,
    pub(crate) ip: String,
    pub(crate) zone: &'static str,
    pub(crate) product: usize,
    pub(crate) state: NodeState,
    /// GPUs the device plugin advertises as allocatable.
    pub(crate) alloc: u32,
    pub(crate) free: u32,
    pub(crate) created: i64,
}

pub(crate) struct Namespace {
    pub(crate) name: String,
    pub(crate) tenant: String,
    pub(crate) product_line: &'static str,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Deployment,
    StatefulSet,
    Job,
    BarePod,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    Running,
    Pending,
    Succeeded,
    Failed,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Svc {
    None,
    ClusterIp,
    LoadBalancer,
    Headless,
}

/// One Dynamo service (component) of a graph.
pub(crate) struct DynamoPart {
    pub(crate) graph: usize,
    pub(crate) service: &'static str,
    pub(crate) component_type: &'static str,
    pub(crate) sub_type: Option<&'static str>,
    pub(crate) dcd_uid: String,
}

pub(crate) struct Graph {
    pub(crate) ns: usize,
    pub(crate) name: String,
    pub(crate) uid: String,
    pub(crate) model: &'static str,
    pub(crate) created: i64,
    /// Workload indices of its services, Frontend first.
    pub(crate) parts: Vec<usize>,
}

pub(crate) struct Workload {
    pub(crate) ns: usize,
    pub(crate) kind: Kind,
    pub(crate) name: String,
    pub(crate) uid: String,
    /// pod-template-hash (Deployments) or controller-revision-hash suffix (StatefulSets).
    pub(crate) hash: String,
    pub(crate) rs_uid: String,
    /// An older, scaled-down ReplicaSet: (hash, uid).
    pub(crate) old_rs: Option<(String, String)>,
    pub(crate) app: &'static str,
    pub(crate) component: &'static str,
    pub(crate) image: &'static str,
    pub(crate) command: Vec<String>,
    pub(crate) args: Vec<String>,
    pub(crate) gpus: u32,
    pub(crate) cpu: u32,
    pub(crate) mem_gi: u32,
    pub(crate) created: i64,
    /// Per pod: node index (None = Pending) and phase.
    pub(crate) pods: Vec<(Option<usize>, Phase)>,
    pub(crate) svc: Svc,
    /// Ingress in front of the Service: Some(internet-facing?).
    pub(crate) ingress: Option<bool>,
    pub(crate) dynamo: Option<DynamoPart>,
}

pub(crate) struct Plan {
    pub(crate) namespaces: Vec<Namespace>,
    pub(crate) nodes: Vec<Node>,
    pub(crate) workloads: Vec<Workload>,
    pub(crate) graphs: Vec<Graph>,
}

pub(crate) fn plan_nodes(rng: &mut Rng, n: usize) -> Vec<Node> {
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

pub(crate) fn plan_namespaces(n: usize) -> Vec<Namespace> {
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
pub(crate) fn place(
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

pub(crate) fn args_for(app: &str, model: &str, gpus: u32) -> Vec<String> {
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
pub(crate) fn new_workload(
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

pub(crate) fn plan(rng: &mut Rng, args: &Args) -> Plan {
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
