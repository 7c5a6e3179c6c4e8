//! A read-only Kubernetes API server emulator serving snapshot files, for trying gpuledger or
//! `kubectl` against a fake cluster without an API server (see tests/support/kube_emulator.rs).
//!
//! Prints the path of a kubeconfig for it on stdout, logs requests on stderr, serves until killed:
//!
//! ```text
//! cargo run --example kube-emulator -- --snapshot fixtures/demo/cluster.yaml >/tmp/kc &
//! sleep 5; KUBECONFIG=$(cat /tmp/kc) kubectl get pods -A
//! ```

#[path = "../tests/support/kube_emulator.rs"]
mod kube_emulator;

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;
use kube_emulator::{Emulator, EmulatorOptions, ListFault};

#[derive(Parser)]
#[command(about = "Serve Kubernetes snapshot files over a read-only, kube-apiserver-like HTTP API")]
struct Args {
    /// Snapshot file (YAML or JSON, `kubectl get -o yaml|json` output); repeatable.
    #[arg(long, required = true)]
    snapshot: Vec<PathBuf>,
    /// Port on 127.0.0.1 (0: any free port).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Largest page a list returns, whatever `limit` the client asks for.
    #[arg(long)]
    page_size: Option<usize>,
    /// Answer 403 for this resource (`pods`, or `plural.group`); repeatable.
    #[arg(long)]
    forbid: Vec<String>,
    /// Delay before every response, in milliseconds.
    #[arg(long, default_value_t = 0)]
    latency_ms: u64,
    /// Fail the first N list requests of each resource with 503.
    #[arg(long, default_value_t = 0)]
    fail_first: u32,
    /// Also serve this `group/version` (with the group's kinds), even without objects; repeatable.
    #[arg(long)]
    serve_version: Vec<String>,
    /// Serve every object of a kind under each served version of it, as a CRD with conversion.
    #[arg(long)]
    convert_versions: bool,
    /// Write keys in alphabetical order as `kubectl get -o json` does (`items` before `kind`);
    /// by default they come as kube-apiserver writes them (`kind` first).
    #[arg(long)]
    alphabetical_keys: bool,
    /// Break one resource's pagination: `pods=repeat` (pages repeat an item, every list),
    /// `pods=repeat-once`, `pods=loop` (a continue token that comes back), `pods=loop-fresh`
    /// (the same page under new tokens), `pods=expire` (every continued page 410),
    /// `pods=expire-once`.
    #[arg(long, value_parser = list_fault)]
    list_fault: Option<(String, ListFault)>,
}

fn list_fault(s: &str) -> Result<(String, ListFault), String> {
    let (plural, mode) = s.split_once('=').ok_or("expected RESOURCE=MODE")?;
    let fault = match mode {
        "repeat" => ListFault::RepeatItems { lists: u32::MAX },
        "repeat-once" => ListFault::RepeatItems { lists: 1 },
        "loop" => ListFault::LoopSameToken,
        "loop-fresh" => ListFault::LoopFreshTokens,
        "expire" => ListFault::Expire { times: u32::MAX },
        "expire-once" => ListFault::Expire { times: 1 },
        other => return Err(format!("unknown list fault {other:?}")),
    };
    Ok((plural.to_string(), fault))
}

fn main() {
    let args = Args::parse();
    let emulator = match Emulator::try_start(EmulatorOptions {
        snapshots: args.snapshot,
        port: args.port,
        page_size: args.page_size,
        forbidden: args.forbid,
        latency: Duration::from_millis(args.latency_ms),
        fail_first: args.fail_first,
        extra_versions: args.serve_version,
        convert_versions: args.convert_versions,
        log_to_stderr: true,
        alphabetical_keys: args.alphabetical_keys,
        list_fault: args.list_fault,
        bookmark_interval: Duration::ZERO,
    }) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("kube-emulator: {e}");
            std::process::exit(1);
        }
    };
    println!("{}", emulator.kubeconfig_path().display());
    let _ = std::io::stdout().flush();
    eprintln!(
        "kube-emulator: serving {} (Ctrl-C or SIGTERM stops it)",
        emulator.url()
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .expect("SIGTERM handler");
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    });
    drop(emulator); // deletes the kubeconfig
}
