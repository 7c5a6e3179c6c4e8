//! The command line: the subcommands, each with its flags (clap derive). Clap lives here only:
//! the library takes plain input specs, which the flag groups of [`shared`] build.
//!
//! This file is the façade: it names the subcommands and nothing below uses it. [`fleet`] holds
//! the flags of the commands that read the fleet, [`change`] those about the repository and its
//! changes; both build on [`shared`].

pub mod change;
pub mod fleet;
pub mod shared;

use clap::{Parser, Subcommand};

use change::{CheckArgs, CommentArgs, IssueArgs, PlanArgs, RenderArgs};
use fleet::{
    CostArgs, DocsArgs, DriftArgs, HeadroomArgs, InventoryArgs, ServeArgs, SnapshotArgs, TrendArgs,
};

#[derive(Debug, Parser)]
#[command(
    name = "gpuledger",
    // The commit comes from build.rs: a binary can be traced to the source it was built from.
    version = concat!(env!("CARGO_PKG_VERSION"), " (commit ", env!("GPULEDGER_COMMIT"), ")"),
    about = "Who holds the GPUs in a shared Kubernetes fleet, and whether Git agrees",
    long_about = "gpuledger reads a Kubernetes GPU fleet (from the cluster, read-only, or from a kubectl dump) and \
reports, per tenant, the GPUs bought, offered, placeable, requested and pending, the workloads and \
Dynamo graphs that hold them, and the public routes in front of them; it renders a GitOps \
repository and compares it with what runs (drift), and checks a change before it merges.\n\nExit codes: 0 success; 1 findings: unaccepted drift (`drift`, unless --no-fail) or a failed \
--fail-on gate (`check`, `github comment`); 2 error.",
    after_help = TOP_EXAMPLES
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
// Parsed once per run: the size of its largest variant (check's flags) costs nothing.
#[allow(clippy::large_enum_variant)]
pub enum Command {
    /// Fleet inventory: GPU tiers, requested vs pending, tenants, workloads, Dynamo graphs, public routes.
    #[command(after_help = fleet::INVENTORY_EXAMPLES)]
    Inventory(InventoryArgs),
    /// Desired state: render the GitOps repository (Argo CD, Flux, kustomize, Helm, plain YAML) and list
    /// the GPU workloads Git declares, per tenant and app.
    #[command(after_help = change::RENDER_EXAMPLES)]
    Render(RenderArgs),
    /// Drift in both directions: live GPU workloads without a match in Git (unmanaged), Git without
    /// live workloads (missing), different GPU shapes (changed), and the GitOps coverage of GPUs.
    #[command(after_help = fleet::DRIFT_EXAMPLES)]
    Drift(DriftArgs),
    /// Dump what gpuledger reads from the cluster into a kubectl-compatible List file, to analyse
    /// anywhere later with --snapshot.
    #[command(after_help = fleet::SNAPSHOT_EXAMPLES)]
    Snapshot(SnapshotArgs),
    /// Pre-merge check: what a change to the GitOps repository does to the GPUs, per tenant, and —
    /// with live state — the drift it resolves or introduces and whether it still fits the fleet.
    #[command(after_help = change::CHECK_EXAMPLES)]
    Check(CheckArgs),
    /// Post to GitHub: the check as a sticky pull-request comment, or the drift as a tracking issue
    /// (run by the action in action.yml, or by any CI with a token).
    #[command(subcommand)]
    Github(GithubCommand),
    /// Stagger planner: when each batch job should start so that every deadline is met within a
    /// GPU pool, the peak against starting everything at once, and the smallest pool that meets
    /// every deadline ("stagger or buy").
    #[command(after_help = change::PLAN_EXAMPLES)]
    Plan(PlanArgs),
    /// Documents whose counted facts regenerate: fill the gpuledger:fact and gpuledger:table
    /// markers of markdown files from a fresh report (--write), or list every marked fact whose
    /// text differs from it (--check).
    #[command(after_help = fleet::DOCS_EXAMPLES)]
    Docs(DocsArgs),
    /// Cost per verified outcome: what each workload, tenant and product line cost over a window
    /// (OpenCost), what it produced (outcome records or counters), cost per 1,000 verified
    /// outcomes with its interval, and whether it meets its quality threshold at all.
    #[command(after_help = fleet::COST_EXAMPLES)]
    Cost(CostArgs),
    /// Serving headroom: per serving workload, the capacity its load test measured at its latency
    /// objective against production's request rate from vLLM or Dynamo metrics: fits, near
    /// capacity, over, or unknown with why.
    #[command(after_help = fleet::HEADROOM_EXAMPLES)]
    Headroom(HeadroomArgs),
    /// Prometheus exporter: regenerate the inventory from the cluster every --interval and serve it
    /// as metrics on /metrics (and /healthz). Read-only; the last good report stays served while a
    /// refresh fails, with its age.
    #[command(after_help = fleet::SERVE_EXAMPLES)]
    Serve(ServeArgs),
    /// GPUs per tenant and product line over a window, from Prometheus (gpuledger's own series,
    /// else kube-state-metrics): start, end, change, rate per week, peak, and who grows fastest.
    #[command(after_help = fleet::TREND_EXAMPLES)]
    Trend(TrendArgs),
}

#[derive(Debug, Subcommand)]
pub enum GithubCommand {
    /// Run `check` and keep one sticky comment per --scope on the pull request with the result.
    #[command(after_help = change::COMMENT_EXAMPLES)]
    Comment(CommentArgs),
    /// Compute drift against the live state and keep one tracking issue per --scope: opened when
    /// drift appears, updated while it lasts, closed when it is gone, reopened when it returns.
    #[command(after_help = change::ISSUE_EXAMPLES)]
    Issue(IssueArgs),
}

const TOP_EXAMPLES: &str = "Examples:
  gpuledger inventory --snapshot fixtures/demo/cluster.yaml
  kubectl get nodes,namespaces,pods,deploy,rs,sts,jobs,cronjobs,svc,ingress \\
      -A -o json > fleet.json
  gpuledger inventory --snapshot fleet.json --format markdown -o inventory.md

Guide: docs/README.md (the manual, one page per command).";
