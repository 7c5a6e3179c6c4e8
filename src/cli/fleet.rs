//! The flags of the commands that read the fleet and report on it: `inventory`, `drift`, `cost`,
//! `headroom`, `docs`, `trend`, `serve` and `snapshot`. The groups they share are
//! [`super::shared`]'s.

use std::path::PathBuf;

use clap::Args;

use super::shared::{
    Clock, ConfigFile, CostInputs, Format, LiveSource, Metrics, Output, ReportFormat, Repository,
    TrendColumn, parse_duration, parse_interval,
};
use gpuledger::pipeline::input;

pub const INVENTORY_EXAMPLES: &str = "Examples:
  # The bundled demo fleet (no cluster needed)
  gpuledger inventory --snapshot fixtures/demo/cluster.yaml \\
      --config fixtures/demo/.gpuledger.yaml

  # The cluster of the current kubeconfig context (read-only: get and list)
  gpuledger inventory
  gpuledger inventory --kubeconfig ~/.kube/prod.yaml --context gpu-east \\
      --format markdown

  # Any kubectl dump works; several files are read as one fleet
  kubectl get nodes,namespaces -o yaml > nodes.yaml
  kubectl get pods,deploy,rs,sts,jobs,cronjobs,svc,ingress,hpa -A \\
      -o json > workloads.json
  gpuledger inventory --snapshot nodes.yaml --snapshot workloads.json

  # With cost per verified outcome (OpenCost, outcome records)
  gpuledger inventory --snapshot fleet.json \\
      --opencost http://opencost.opencost:9003 --outcomes outcomes.csv

  # Free GPUs per node and per GPU model; what would let stuck pods run
  gpuledger inventory --snapshot fleet.json --by node

  # Markdown for a pull request or an issue; JSON for scripts
  # (schema gpuledger.report/v1)
  gpuledger inventory --snapshot fleet.json --format markdown -o inventory.md
  gpuledger inventory --snapshot fleet.json --format json \\
      | jq '.tenants[] | {name, gpus_requested}'

Guide: docs/inventory.md, docs/placement.md (--by node), docs/demo.md (every feature on the bundled demo).";
#[derive(Debug, Args)]
pub struct InventoryArgs {
    #[command(flatten)]
    pub live: LiveSource,

    #[command(flatten)]
    pub metrics: Metrics,

    #[command(flatten)]
    pub trend: TrendColumn,

    /// With --repo, the report also holds drift against Git.
    #[command(flatten)]
    pub repo: Repository,

    /// With --opencost or --outcomes, the report also holds cost per verified outcome.
    #[command(flatten)]
    pub cost: CostInputs,

    #[command(flatten)]
    pub clock: Clock,

    /// Output format.
    #[arg(long, value_enum, default_value_t = ReportFormat::Table, env = "GPULEDGER_FORMAT", help_heading = "Output")]
    pub format: ReportFormat,

    /// With --format prometheus: one series per live workload too (`gpuledger_workload_gpus`;
    /// a large fleet has thousands, so it is off by default).
    #[arg(long, help_heading = "Output")]
    pub workload_series: bool,

    /// What the report is grouped by: tenants (the inventory), or nodes — free GPUs per node and
    /// per GPU model, and for pending pods that fit nowhere the nodes to drain or buy.
    #[arg(long, value_enum, default_value_t = By::Tenant, help_heading = "Output")]
    pub by: By,

    #[command(flatten)]
    pub output: Output,
}

/// How `inventory` groups the fleet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum By {
    /// Tenants, product lines, workloads, graphs and routes.
    Tenant,
    /// GPU nodes: allocatable, requested and free GPUs per node and per GPU model
    /// (like kubectl-view-allocations -g node).
    Node,
}

pub const DRIFT_EXAMPLES: &str = "Examples:
  gpuledger drift --repo ~/src/gitops --snapshot fleet.json
  gpuledger drift --repo . --ref origin/main --snapshot fleet.json \\
      --format markdown --output drift.md
  gpuledger drift --repo . --snapshot fleet.json --suggest-accept >rules.yaml

Exit codes: 0 no unaccepted drift (or --no-fail), 1 unaccepted drift, 2 error (an unreadable input, \
an app that failed to render).

Guide: docs/drift.md.";
#[derive(Debug, Args)]
pub struct DriftArgs {
    /// Exit 0 even when there is unaccepted drift.
    #[arg(long)]
    pub no_fail: bool,

    /// Print accepted-drift rules that would accept today's drift (to edit and commit to
    /// .gpuledger.yaml) instead of the report.
    #[arg(long)]
    pub suggest_accept: bool,

    #[command(flatten)]
    pub repo: Repository,

    #[command(flatten)]
    pub live: LiveSource,

    #[command(flatten)]
    pub metrics: Metrics,

    #[command(flatten)]
    pub trend: TrendColumn,

    #[command(flatten)]
    pub clock: Clock,

    /// Output format.
    #[arg(long, value_enum, default_value_t = ReportFormat::Table, env = "GPULEDGER_FORMAT", help_heading = "Output")]
    pub format: ReportFormat,

    #[command(flatten)]
    pub output: Output,
}

pub const COST_EXAMPLES: &str = "Examples:
  gpuledger cost --snapshot fleet.json \\
      --opencost http://opencost.opencost:9003 --window 24h
  gpuledger cost --opencost http://localhost:9003 --outcomes outcomes.csv \\
      --prometheus http://prometheus:9090 --format markdown -o cost.md
  gpuledger cost --opencost http://localhost:9003 --outcomes outcomes.csv \\
      --compare serve/Deployment/chat-h100 serve/Deployment/chat-l40s
  gpuledger cost --opencost http://localhost:9003 --prometheus http://prometheus:9090 \\
      --compare before=serve/Deployment/chat@2026-12-01T00:00:00Z..2026-12-02T00:00:00Z \\
                after=serve/Deployment/chat@2026-12-02T00:00:00Z..2026-12-03T00:00:00Z

Outcome records (--outcomes; JSON lines, or CSV with a header): workload \
(namespace/Kind/name), start, end (RFC 3339; prorated by overlap with the \
window), results, and verified, or on_time with sample and sample_passed \
(a reviewed sample: Wilson 95% interval). A workload may instead name a \
counter of verified results in gpuledger.io/outcomes-metric (read from \
--prometheus). Idle, shared and outside costs follow `cost:` in \
.gpuledger.yaml, and the report states the rule. Batch work with a \
gpuledger.io/deadline gets its deadline attainment: finished Jobs of the live \
state, and kube-state-metrics' Jobs over --window from --prometheus. \
--compare A B puts two configurations side by side (cost, verified outcomes, \
cost per 1,000 verified with its interval, latency against the objective, \
deadline attainment) with a verdict on whether the difference is real at this \
sample size. Exit codes: 0 done, 2 error (OpenCost failed, an outcome record \
does not read: its file:line is named).

Guide: docs/headroom-and-cost.md.";
#[derive(Debug, Args)]
pub struct CostArgs {
    #[command(flatten)]
    pub live: LiveSource,

    /// Two configurations side by side: two workloads (an A/B pair serving the same traffic) or
    /// one workload over two windows around a change. Each is [LABEL=]namespace/Kind/name, with
    /// @START..END (RFC 3339) for its own window; without one, --window ending now.
    #[arg(long, num_args = 2, value_names = ["A", "B"], help_heading = "Comparison")]
    pub compare: Option<Vec<String>>,

    #[command(flatten)]
    pub metrics: Metrics,

    #[command(flatten)]
    pub cost: CostInputs,

    #[command(flatten)]
    pub clock: Clock,

    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table, env = "GPULEDGER_FORMAT", help_heading = "Output")]
    pub format: Format,

    #[command(flatten)]
    pub output: Output,
}

pub const HEADROOM_EXAMPLES: &str = "Examples:
  gpuledger headroom --snapshot fleet.json --repo ~/src/gitops \\
      --prometheus http://prometheus:9090 --window 7d
  gpuledger headroom --context gpu-east --repo . --format markdown \\
      -o headroom.md

A serving workload names its load test with the annotation gpuledger.io/load-test \
(a path in --repo: a vLLM bench serve, AIPerf/GenAI-Perf or GuideLLM JSON \
file, or a directory of them) and its objective with \
gpuledger.io/latency-objective (or an intent: rule in .gpuledger.yaml). A \
load test of another model, GPU type, GPU count, replica count or engine \
setting than the live workload is stale: capacity unknown, never scaled, unless a \
headroom.scale rule says `scale: per-replica`. The production rate is a \
completion rate from vllm:request_success_total or \
dynamo_frontend_requests_total over --window. Exit codes: 0 reported, 1 a \
workload is over capacity and --fail-on-over was given, 2 error (a load \
test that cannot be read names its file and line).

Guide: docs/headroom-and-cost.md.";
#[derive(Debug, Args)]
pub struct HeadroomArgs {
    /// The repository the load-test paths are relative to (its working tree).
    #[arg(long, value_name = "PATH")]
    pub repo: Option<PathBuf>,

    /// Exit 1 when a workload's production p95 is above its tested capacity.
    #[arg(long)]
    pub fail_on_over: bool,

    #[command(flatten)]
    pub live: LiveSource,

    #[command(flatten)]
    pub metrics: Metrics,

    #[command(flatten)]
    pub clock: Clock,

    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table, env = "GPULEDGER_FORMAT", help_heading = "Output")]
    pub format: Format,

    #[command(flatten)]
    pub output: Output,
}

pub const DOCS_EXAMPLES: &str = "Examples:
  # Which marked facts of the repository's markdown are stale (exit 1)
  gpuledger docs --check --repo . --snapshot fleet.json

  # Rewrite them from the live cluster
  gpuledger docs --write README.md docs/capacity.md --context gpu-east

  # A GitOps repository's documents, with drift against it (drift.coverage)
  gpuledger docs --check --repo . --drift --snapshot fleet.json

In a document (only the text between a marker and its closing comment is
rewritten):
  <!-- gpuledger:fact fleet.gpus.placeable int -->503<!-- /gpuledger:fact -->
  <!-- gpuledger:table tenants --><!-- /gpuledger:table -->

A fact is any field of the JSON report by path (fleet.gpus.placeable, \
tenants[name=chat].gpus_requested; a list is its length), in a format: plain \
(default), int (1,364), percent (85.5%), percent0 (86%). Tables: gpus, models, \
clusters, tenants, product-lines, idle, graphs, workloads, excluded-nodes, \
unplaceable, other-gpus, routes, namespaces. An unknown value (or an incomplete \
report) never replaces a document's text. Markers quoted in code are left alone. \
Exit codes: 0 every \
marked fact matches (--check) or the documents were written (--write); 1 a \
fact is stale or unknown (--check); 2 error (a malformed marker, a field the \
report does not have, a file that is not UTF-8: file:line).

Guide: docs/documents.md.";
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("mode").required(true).args(["write", "check"])))]
#[command(group(clap::ArgGroup::new("documents").required(true).multiple(true).args(["files", "docs_repo"])))]
pub struct DocsArgs {
    /// Rewrite the stale marked text of the documents (atomically: a temporary file, renamed).
    #[arg(long)]
    pub write: bool,

    /// List every marked fact whose text differs from the report, file:line, old → new; exit 1
    /// when one is stale or unknown.
    #[arg(long)]
    pub check: bool,

    /// The markdown documents.
    #[arg(value_name = "FILES")]
    pub files: Vec<PathBuf>,

    /// Every markdown file of this directory (a git repository: its tracked and untracked files,
    /// not the ignored ones) that holds a marker.
    #[arg(long = "repo", value_name = "DIR")]
    pub docs_repo: Option<PathBuf>,

    /// --repo is also the GitOps repository: render it (its working tree) and compare it with the
    /// live state, for the drift.* facts (drift.coverage, drift.unmanaged, …).
    #[arg(long, requires = "docs_repo")]
    pub drift: bool,

    /// Only this cluster's desired state, with --drift, when the repository drives several.
    #[arg(long, value_name = "NAME", requires = "drift")]
    pub cluster: Option<String>,

    #[command(flatten)]
    pub live: LiveSource,

    #[command(flatten)]
    pub metrics: Metrics,

    #[command(flatten)]
    pub clock: Clock,

    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table, env = "GPULEDGER_FORMAT", help_heading = "Output")]
    pub format: Format,

    #[command(flatten)]
    pub output: Output,
}

pub const TREND_EXAMPLES: &str = "Examples:
  gpuledger trend --prometheus http://prometheus.monitoring:9090
  gpuledger trend --prometheus http://prometheus.monitoring:9090 \\
      --window 90d --step 7d --format markdown -o trend.md
  # The runway against the cluster's free placeable GPUs now
  gpuledger trend --prometheus http://prometheus.monitoring:9090 --context gpu-east

The history is Prometheus's: gpuledger_tenant_gpus when `gpuledger serve` is scraped there, else \
kube-state-metrics (kube_pod_container_resource_requests{resource=\"nvidia_com_gpu\"} by namespace, \
tenants from kube_namespace_labels: kube-state-metrics must expose the tenancy labels, e.g. \
--metric-labels-allowlist=namespaces=[tenant,product-line]). The output names the source used. \
Without history the trend is unknown, with why. The runway: at the growth measured over the \
window, when the free placeable GPUs run out, for the fleet and per tenant (or \"not growing\"); \
free GPUs from the live state given (--snapshot, --kubeconfig, --context), else from \
gpuledger_fleet_free_placeable_gpus in the same Prometheus. Exit codes: 0 done, 2 error.

Guide: docs/metrics-and-trend.md.";
#[derive(Debug, Args)]
pub struct TrendArgs {
    /// The Prometheus to read the history from (base URL).
    #[arg(long, value_name = "URL", env = "GPULEDGER_PROMETHEUS")]
    pub prometheus: String,

    /// The environment variable holding a bearer token for Prometheus (managed Prometheus).
    #[arg(long, value_name = "VAR", default_value = "GPULEDGER_PROMETHEUS_TOKEN")]
    pub prometheus_token_env: String,

    /// How far back (`30d`, `12h`).
    #[arg(long, value_name = "DURATION", default_value = "30d", value_parser = parse_duration)]
    pub window: std::time::Duration,

    /// One point every (`1d`, `6h`).
    #[arg(long, value_name = "DURATION", default_value = "1d", value_parser = parse_duration)]
    pub step: std::time::Duration,

    /// Give up on Prometheus after this many seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 60)]
    pub timeout: u64,

    #[command(flatten)]
    pub runway: RunwayLive,

    #[command(flatten)]
    pub clock: Clock,

    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table, env = "GPULEDGER_FORMAT", help_heading = "Output")]
    pub format: Format,

    #[command(flatten)]
    pub output: Output,
}

/// Where `trend` counts the free placeable GPUs of the runway: optional, and never the cluster
/// unless named (the history alone needs no cluster).
#[derive(Debug, Args)]
#[command(next_help_heading = "Runway")]
pub struct RunwayLive {
    /// Count the free placeable GPUs in this snapshot (what `kubectl get … -o yaml|json` prints;
    /// repeatable). Without a live source they come from gpuledger_fleet_free_placeable_gpus in
    /// the same Prometheus, when `gpuledger serve` is scraped there.
    #[arg(long, short = 's', value_name = "FILE", conflicts_with_all = ["kubeconfig", "context"])]
    pub snapshot: Vec<PathBuf>,

    /// Count them in the cluster of this kubeconfig (read-only).
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,

    /// Count them in the cluster of this kubeconfig context.
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,
}

impl RunwayLive {
    /// The live state, only when one was named.
    pub fn spec(&self) -> Option<input::LiveSpec> {
        if !self.snapshot.is_empty() {
            Some(input::LiveSpec::Snapshots(self.snapshot.clone()))
        } else if self.kubeconfig.is_some() || self.context.is_some() {
            Some(input::LiveSpec::Clusters {
                kubeconfig: self.kubeconfig.clone(),
                contexts: self.context.iter().cloned().collect(),
                timeouts: input::Timeouts::from_secs(
                    input::DEFAULT_TIMEOUT_S,
                    input::DEFAULT_REQUEST_TIMEOUT_S,
                ),
            })
        } else {
            None
        }
    }
}

pub const SERVE_EXAMPLES: &str = "Examples:
  # In the cluster (deploy/exporter.yaml), with the service account's read-only RBAC
  gpuledger serve --listen 0.0.0.0:9477 --interval 5m

  # From a laptop, with GPUs used from DCGM and drift against Git
  gpuledger serve --listen 127.0.0.1:9477 --context gpu-east \\
      --prometheus http://prometheus.monitoring:9090 --repo ~/src/gitops

The cluster is listed once, then watched (RBAC: get, list, watch): a change shows in the \
metrics within seconds. Every series carries a `cluster` label, so that one Prometheus (or \
Thanos, Mimir) can hold the exporters of several clusters: --cluster NAME (with --repo, also \
the cluster whose desired state is compared), else the kubeconfig context read (several joined \
by `+`); none in a pod, where the scraping Prometheus's target or external label names it. Endpoints: /metrics (Prometheus text format: the report's gpuledger_* \
series and the exporter's own gpuledger_exporter_* health), /healthz (200 once a report has been \
computed, 503 before). A refresh that fails keeps the last good report; \
gpuledger_exporter_report_age_seconds says how old it is. Exit codes: 0 stopped by SIGTERM or Ctrl-C, 2 error (the address cannot be bound).

Guide: docs/metrics-and-trend.md.";
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The address to serve on (`0.0.0.0:9477`, `127.0.0.1:9477`, `[::]:9477`).
    #[arg(long, value_name = "ADDR", default_value = "0.0.0.0:9477")]
    pub listen: std::net::SocketAddr,

    /// The longest between two refreshes, and how often what cannot be watched (Prometheus, Git,
    /// snapshot files) is read again; a watched cluster's changes refresh within seconds (`30s`,
    /// `5m`, `1h`; `250ms` for a soak test).
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = parse_interval)]
    pub interval: std::time::Duration,

    /// One series per live workload too (`gpuledger_workload_gpus`; off by default: a large fleet
    /// has thousands).
    #[arg(long)]
    pub workload_series: bool,

    /// Print the Kubernetes client's and HTTP library's own warnings (`eof in poll`) and
    /// gpuledger's debug lines too; by default only gpuledger's own lines, one per change of a
    /// watched resource's state.
    #[arg(short, long)]
    pub verbose: bool,

    /// `text`, or `json`: one JSON object a line (`level`, `message`, and `cluster`, `resource`,
    /// `event` for a watched resource's state), for a pod's log collector.
    #[arg(long, value_name = "FORMAT", value_enum, default_value = "text")]
    pub log_format: LogFormat,

    #[command(flatten)]
    pub live: LiveSource,

    #[command(flatten)]
    pub metrics: Metrics,

    #[command(flatten)]
    pub trend: TrendColumn,

    /// With --repo, the metrics hold drift against Git too.
    #[command(flatten)]
    pub repo: Repository,

    #[command(flatten)]
    pub config: ConfigFile,
}

/// How `serve` writes its log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

pub const SNAPSHOT_EXAMPLES: &str = "Examples:
  gpuledger snapshot --output fleet.json
  gpuledger snapshot --context gpu-east --output east.json
  gpuledger inventory --snapshot east.json

Reads exactly the resources listed in deploy/rbac.yaml (get and list; never Secrets), strips \
managedFields and the last-applied annotation, and writes one JSON List.

Guide: docs/inventory.md.";
#[derive(Debug, Args)]
pub struct SnapshotArgs {
    /// The file to write.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: PathBuf,

    /// The kubeconfig to read the cluster with [default: $KUBECONFIG, ~/.kube/config, or the
    /// in-cluster service account].
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,

    /// The kubeconfig context [default: the current context].
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,

    /// Give up reading the cluster after this many seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 300)]
    pub timeout: u64,

    /// Time limit for each API request, in seconds (retried with backoff on 429 and 5xx).
    #[arg(long, value_name = "SECONDS", default_value_t = input::DEFAULT_REQUEST_TIMEOUT_S)]
    pub request_timeout: u64,

    /// No progress line (it only shows on a terminal anyway).
    #[arg(long, short = 'q')]
    pub quiet: bool,
}
