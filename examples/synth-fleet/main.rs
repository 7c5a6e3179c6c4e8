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
use std::io::{self, BufWriter};
use std::path::PathBuf;

use clap::{Parser, ValueEnum};

mod catalog;
mod controllers;
mod objects;
mod plan;
mod rng;
mod write;

use controllers::*;
use objects::*;
use plan::*;
use rng::*;
use write::*;

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
