//! The command line: subcommands and their flags (clap derive).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use gpuledger::input::{self, LiveSpec, MetricsSpec, RepoSpec, Timeouts};

use gpuledger::github::comment::Behavior;
use gpuledger::render::{Format, Style};
use gpuledger::util::date::Timestamp;

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
    #[command(after_help = INVENTORY_EXAMPLES)]
    Inventory(InventoryArgs),
    /// Desired state: render the GitOps repository (Argo CD, Flux, kustomize, Helm, plain YAML) and list
    /// the GPU workloads Git declares, per tenant and app.
    #[command(after_help = RENDER_EXAMPLES)]
    Render(RenderArgs),
    /// Drift in both directions: live GPU workloads without a match in Git (unmanaged), Git without
    /// live workloads (missing), different GPU shapes (changed), and the GitOps coverage of GPUs.
    #[command(after_help = DRIFT_EXAMPLES)]
    Drift(DriftArgs),
    /// Dump what gpuledger reads from the cluster into a kubectl-compatible List file, to analyse
    /// anywhere later with --snapshot.
    #[command(after_help = SNAPSHOT_EXAMPLES)]
    Snapshot(SnapshotArgs),
    /// Pre-merge check: what a change to the GitOps repository does to the GPUs, per tenant, and —
    /// with live state — the drift it resolves or introduces and whether it still fits the fleet.
    #[command(after_help = CHECK_EXAMPLES)]
    Check(CheckArgs),
    /// Post to GitHub: the check as a sticky pull-request comment, or the drift as a tracking issue
    /// (run by the action in action.yml, or by any CI with a token).
    #[command(subcommand)]
    Github(GithubCommand),
    /// Stagger planner: when each batch job should start so that every deadline is met within a
    /// GPU pool, the peak against starting everything at once, and the smallest pool that meets
    /// every deadline ("stagger or buy").
    #[command(after_help = PLAN_EXAMPLES)]
    Plan(PlanArgs),
    /// Documents whose counted facts regenerate: fill the gpuledger:fact and gpuledger:table
    /// markers of markdown files from a fresh report (--write), or list every marked fact whose
    /// text differs from it (--check).
    #[command(after_help = DOCS_EXAMPLES)]
    Docs(DocsArgs),
    /// Cost per verified outcome: what each workload, tenant and product line cost over a window
    /// (OpenCost), what it produced (outcome records or counters), cost per 1,000 verified
    /// outcomes with its interval, and whether it meets its quality threshold at all.
    #[command(after_help = COST_EXAMPLES)]
    Cost(CostArgs),
    /// Serving headroom: per serving workload, the capacity its load test measured at its latency
    /// objective against production's request rate from vLLM or Dynamo metrics: fits, near
    /// capacity, over, or unknown with why.
    #[command(after_help = HEADROOM_EXAMPLES)]
    Headroom(HeadroomArgs),
    /// Prometheus exporter: regenerate the inventory from the cluster every --interval and serve it
    /// as metrics on /metrics (and /healthz). Read-only; the last good report stays served while a
    /// refresh fails, with its age.
    #[command(after_help = SERVE_EXAMPLES)]
    Serve(ServeArgs),
    /// GPUs per tenant and product line over a window, from Prometheus (gpuledger's own series,
    /// else kube-state-metrics): start, end, change, rate per week, peak, and who grows fastest.
    #[command(after_help = TREND_EXAMPLES)]
    Trend(TrendArgs),
}

const TREND_EXAMPLES: &str = "Examples:
  gpuledger trend --prometheus http://prometheus.monitoring:9090
  gpuledger trend --prometheus http://prometheus.monitoring:9090 \\
      --window 90d --step 7d --format markdown -o trend.md

The history is Prometheus's: gpuledger_tenant_gpus when `gpuledger serve` is scraped there, else \
kube-state-metrics (kube_pod_container_resource_requests{resource=\"nvidia_com_gpu\"} by namespace, \
tenants from kube_namespace_labels: kube-state-metrics must expose the tenancy labels, e.g. \
--metric-labels-allowlist=namespaces=[tenant,product-line]). The output names the source used. \
Without history the trend is unknown, with why. Exit codes: 0 done, 2 error.";

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

    /// The end of the window (YYYY-MM-DD is its midnight UTC) [default: now].
    #[arg(long, value_name = "DATE|RFC3339", value_parser = Timestamp::parse_now)]
    pub now: Option<Timestamp>,

    /// Give up on Prometheus after this many seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 60)]
    pub timeout: u64,

    #[command(flatten)]
    pub output: OutputArgs,
}

const SERVE_EXAMPLES: &str = "Examples:
  # In the cluster (deploy/exporter.yaml), with the service account's read-only RBAC
  gpuledger serve --listen 0.0.0.0:9477 --interval 5m

  # From a laptop, with GPUs used from DCGM and drift against Git
  gpuledger serve --listen 127.0.0.1:9477 --context gpu-east \\
      --prometheus http://prometheus.monitoring:9090 --repo ~/src/gitops

Endpoints: /metrics (Prometheus text format: the report's gpuledger_* series and the exporter's \
own gpuledger_exporter_* health), /healthz (200 once a report has been computed, 503 before). A \
refresh that fails keeps the last good report; gpuledger_exporter_report_age_seconds says how old \
it is. Exit codes: 0 stopped by SIGTERM or Ctrl-C, 2 error (the address cannot be bound).";

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The address to serve on (`0.0.0.0:9477`, `127.0.0.1:9477`, `[::]:9477`).
    #[arg(long, value_name = "ADDR", default_value = "0.0.0.0:9477")]
    pub listen: std::net::SocketAddr,

    /// How often the report is regenerated (`30s`, `5m`, `1h`).
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = parse_duration)]
    pub interval: std::time::Duration,

    #[command(flatten)]
    pub live: LiveArgs,

    /// With --repo, the metrics hold drift against Git too.
    #[command(flatten)]
    pub repo: RepoArgs,

    /// One series per live workload too (`gpuledger_workload_gpus`; off by default: a large fleet
    /// has thousands).
    #[arg(long)]
    pub workload_series: bool,

    /// The config file [default: .gpuledger.yaml at the root of --repo, else in the current
    /// directory, else the defaults].
    #[arg(long, value_name = "FILE", env = "GPULEDGER_CONFIG")]
    pub config: Option<std::path::PathBuf>,
}

const DOCS_EXAMPLES: &str = "Examples:
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
report does not have, a file that is not UTF-8: file:line).";

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
    pub live: LiveArgs,

    /// The clock of the report (YYYY-MM-DD is its midnight UTC) [default: now].
    #[arg(long, value_name = "DATE|RFC3339", value_parser = Timestamp::parse_now)]
    pub now: Option<Timestamp>,

    #[command(flatten)]
    pub output: OutputArgs,
}

const COST_EXAMPLES: &str = "Examples:
  gpuledger cost --snapshot fleet.json \\
      --opencost http://opencost.opencost:9003 --window 24h
  gpuledger cost --opencost http://localhost:9003 --outcomes outcomes.csv \\
      --prometheus http://prometheus:9090 --format markdown -o cost.md

Outcome records (--outcomes; JSON lines, or CSV with a header): workload \
(namespace/Kind/name), start, end (RFC 3339; prorated by overlap with the \
window), results, and verified, or on_time with sample and sample_passed \
(a reviewed sample: Wilson 95% interval). A workload may instead name a \
counter of verified results in gpuledger.io/outcomes-metric (read from \
--prometheus). Idle, shared and outside costs follow `cost:` in \
.gpuledger.yaml, and the report states the rule. Exit codes: 0 done, 2 error \
(OpenCost failed, an outcome record does not read: its file:line is named).";

/// Where cost and outcomes come from.
#[derive(Debug, Args)]
pub struct CostInputArgs {
    /// The OpenCost API (its port 9003) for the cost per workload, tenant and product line over
    /// --window, ending --now (outcomes are counted over the same window).
    #[arg(long, value_name = "URL", env = "GPULEDGER_OPENCOST")]
    pub opencost: Option<String>,

    /// The environment variable holding a bearer token for OpenCost.
    #[arg(long, value_name = "VAR", default_value = "GPULEDGER_OPENCOST_TOKEN")]
    pub opencost_token_env: String,

    /// Outcome records: JSON lines, or CSV with a header (`gpuledger cost --help`).
    #[arg(long, value_name = "FILE")]
    pub outcomes: Option<PathBuf>,
}

impl CostInputArgs {
    /// Whether any cost or outcome input was given.
    pub fn given(&self) -> bool {
        self.opencost.is_some() || self.outcomes.is_some()
    }
}

#[derive(Debug, Args)]
pub struct CostArgs {
    #[command(flatten)]
    pub live: LiveArgs,

    #[command(flatten)]
    pub cost: CostInputArgs,

    /// The clock: the window ends here (YYYY-MM-DD is its midnight UTC) [default: now].
    #[arg(long, value_name = "DATE|RFC3339", value_parser = Timestamp::parse_now)]
    pub now: Option<Timestamp>,

    #[command(flatten)]
    pub output: OutputArgs,
}

const HEADROOM_EXAMPLES: &str = "Examples:
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
test that cannot be read names its file and line).";

#[derive(Debug, Args)]
pub struct HeadroomArgs {
    #[command(flatten)]
    pub live: LiveArgs,

    /// The repository the load-test paths are relative to (its working tree).
    #[arg(long, value_name = "PATH")]
    pub repo: Option<PathBuf>,

    /// Exit 1 when a workload's production p95 is above its tested capacity.
    #[arg(long)]
    pub fail_on_over: bool,

    #[command(flatten)]
    pub output: OutputArgs,
}

const PLAN_EXAMPLES: &str = "Examples:
  gpuledger plan --jobs jobs.yaml --pool 16 --now 2026-12-02T12:00:00Z
  gpuledger plan --jobs jobs.yaml --pool 16 --node 8 --node 8 \\
      --objective min-peak --format markdown -o plan.md
  gpuledger plan --context prod --pending --queue batch

--pending plans the cluster's batch work that waits to start: Jobs that hold no GPU yet \
(suspended, or their pods all pending) and whose Kueue Workload, if any, is not admitted, each \
with its intent (gpuledger.io/runtime, deadline, earliest-start, interruptible).

jobs.yaml is a list of jobs: name, namespace (default `default`), kind (default Job), \
gpus_per_pod, pods (default 1), runtime (`1h30m`), earliest_start and deadline (RFC 3339; \
earliest_start defaults to --now), interruptible (default false). The plan is advice: hold a job \
until its start with Kueue's `kueue.x-k8s.io/admission-gated-by` or the Job's `spec.suspend`. \
Exit codes: 0 planned (deadlines met or not, see the verdict), 1 a deadline is missed and \
--fail-on-miss was given, 2 error (a bad jobs file names its line).";

#[derive(Debug, Args)]
pub struct PlanArgs {
    /// The jobs to plan: a YAML list (see below).
    #[arg(long, value_name = "FILE", required_unless_present_any = ["repo", "pending"])]
    pub jobs: Option<PathBuf>,

    /// Also plan the batch workloads of this GitOps repository whose intent gives their runtime
    /// (gpuledger.io/runtime, deadline, earliest-start, interruptible), as `render` finds them.
    #[command(flatten)]
    pub repo: RepoArgs,

    /// GPUs in the pool [default: from the cluster: the placeable GPUs minus what non-batch
    /// workloads hold, or the --queue's quota].
    #[arg(long, value_name = "N", required_unless_present_any = ["snapshot", "context", "kubeconfig"])]
    pub pool: Option<u64>,

    /// The cluster, for the pool, its nodes and --pending: what `kubectl get -o yaml|json` prints
    /// (repeat for several files).
    #[arg(long, short = 's', value_name = "FILE", conflicts_with_all = ["context", "kubeconfig"])]
    pub snapshot: Vec<PathBuf>,

    /// Read the cluster through the API with this kubeconfig context (instead of --snapshot).
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,

    /// The kubeconfig to read the cluster with [default: $KUBECONFIG, ~/.kube/config, or the
    /// in-cluster service account].
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,

    /// Give up reading the cluster after this many seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = input::DEFAULT_TIMEOUT_S)]
    pub timeout: u64,

    /// Also plan the cluster's batch work that waits to start (see below); with --queue, only
    /// the work queued to that ClusterQueue.
    #[arg(long)]
    pub pending: bool,

    /// The pool is this Kueue ClusterQueue's nvidia.com/gpu nominal quota minus its usage (from
    /// the cluster; v1beta1 and v1beta2).
    #[arg(long, value_name = "NAME")]
    pub queue: Option<String>,

    /// With --queue: add what the queue may borrow in its cohort (up to its borrowing limit and
    /// the cohort's unused quota).
    #[arg(long, requires = "queue")]
    pub borrow: bool,

    /// GPUs of one placeable node (repeat per node); a pod must fit on one [default: the pool is
    /// one node].
    #[arg(long, value_name = "GPUS")]
    pub node: Vec<u64>,

    /// After meeting every deadline: finish as early as possible, or use the fewest GPUs at once.
    #[arg(long, value_enum, default_value_t = gpuledger::plan::Objective::Earliest)]
    pub objective: gpuledger::plan::Objective,

    /// The time grid: jobs start on slot boundaries from --now (`15m`, `1h`).
    #[arg(long, value_name = "DURATION", default_value = "15m", value_parser = gpuledger::plan::file::parse_duration)]
    pub slot: u64,

    /// The clock: slot 0 starts here (YYYY-MM-DD is its midnight UTC) [default: now].
    #[arg(long, value_name = "DATE|RFC3339", value_parser = Timestamp::parse_now)]
    pub now: Option<Timestamp>,

    /// Exit 1 when a deadline is missed.
    #[arg(long)]
    pub fail_on_miss: bool,

    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Subcommand)]
pub enum GithubCommand {
    /// Run `check` and keep one sticky comment per --scope on the pull request with the result.
    #[command(after_help = COMMENT_EXAMPLES)]
    Comment(CommentArgs),
    /// Compute drift against the live state and keep one tracking issue per --scope: opened when
    /// drift appears, updated while it lasts, closed when it is gone, reopened when it returns.
    #[command(after_help = ISSUE_EXAMPLES)]
    Issue(IssueArgs),
}

const TOP_EXAMPLES: &str = "Examples:
  gpuledger inventory --snapshot fixtures/demo/cluster.yaml
  kubectl get nodes,namespaces,pods,deploy,rs,sts,jobs,cronjobs,svc,ingress \\
      -A -o json > fleet.json
  gpuledger inventory --snapshot fleet.json --format markdown -o inventory.md";

const COMMENT_EXAMPLES: &str = "Examples:
  # In a pull_request workflow (base, pull request, head and repository come
  # from the event)
  gpuledger github comment --repo . --snapshot fleet.json --scope gpu-east \\
      --fail-on capacity,render-error

  # Anywhere else: say which pull request, and see the comment first
  gpuledger github comment --repo . --base origin/main \\
      --github-repo acme/gitops --pr 42 \\
      --head-sha \"$(git rev-parse HEAD)\" --dry-run

The token is read from $GITHUB_TOKEN (or the variable --token-env names), never from a flag. \
Under GitHub Actions the full report also goes to the step summary, the figures to the step \
outputs (drift, unmanaged_gpus, coverage, gpu_delta, report_path), and warnings to the manifests \
whose workloads changed. The comment is always markdown; --format and --output choose the copy on \
standard output. A fork's (or Dependabot's) read-only token is not a failure: the report stays in \
the step summary with a warning. Exit codes: as `gpuledger check`, and 2 when GitHub refuses.";

const ISSUE_EXAMPLES: &str = "Examples:
  # Nightly, per cluster
  gpuledger github issue --repo . --context gpu-east --scope gpu-east
  gpuledger github issue --repo . --snapshot east.json --scope gpu-east \\
      --label gpu-drift

The issue is found by its label and hidden marker (list API, all states); overlapping runs converge \
on one open issue. Drift that cannot be known (an app failed to render, a resource could not be read) \
never closes the issue. Exit codes: 0 the issue is in step (drift or not), 2 error.";

/// Where to post and as whom; shared by `github comment` and `github issue`.
#[derive(Debug, Args)]
pub struct GithubArgs {
    /// The repository to post to, `owner/name` [default: $GITHUB_REPOSITORY].
    #[arg(
        long,
        value_name = "OWNER/NAME",
        env = "GITHUB_REPOSITORY",
        hide_env_values = true
    )]
    pub github_repo: Option<String>,

    /// The REST API base; GitHub Enterprise Server: `https://HOST/api/v3`.
    #[arg(
        long,
        value_name = "URL",
        env = "GITHUB_API_URL",
        hide_env_values = true,
        default_value = "https://api.github.com"
    )]
    pub api_url: String,

    /// The environment variable that holds the token.
    #[arg(long, value_name = "VAR", default_value = "GITHUB_TOKEN")]
    pub token_env: String,

    /// One comment or issue per scope, e.g. per cluster (letters, digits, `. _ - / :`).
    #[arg(long, value_name = "KEY", default_value = "default", value_parser = gpuledger::github::marker::check_scope)]
    pub scope: String,

    /// Only comments and issues written by this login count as ours (anyone can paste a marker).
    /// With a personal or app token, give its login (an app's is `NAME[bot]`).
    #[arg(long, value_name = "LOGIN", default_value = "github-actions[bot]")]
    pub author: String,

    /// Also write the JSON report here [default under Actions:
    /// $RUNNER_TEMP/gpuledger-report-SCOPE.json].
    #[arg(long, value_name = "FILE")]
    pub report_path: Option<PathBuf>,

    /// Print what would be posted; call nothing (no token needed).
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, Args)]
pub struct CommentArgs {
    #[command(flatten)]
    pub check: CheckArgs,

    #[command(flatten)]
    pub github: GithubArgs,

    /// The pull request number [default: from $GITHUB_EVENT_PATH].
    #[arg(long, value_name = "N")]
    pub pr: Option<u64>,

    /// Post this report instead of computing one: the JSON report file (`report_path`) that
    /// `github comment` wrote in a pull request's run whose token could not comment (a fork's). Its
    /// pull request and head commit must match the `workflow_run` event (or --pr and --head-sha),
    /// or nothing is posted; the repository is not read.
    #[arg(
        long,
        value_name = "FILE",
        conflicts_with_all = ["base", "head", "snapshot", "kubeconfig", "context"]
    )]
    pub from_report: Option<PathBuf>,

    /// The pull request's head commit [default: from $GITHUB_EVENT_PATH].
    #[arg(long, value_name = "SHA")]
    pub head_sha: Option<String>,

    /// When the head commit was made (RFC 3339) [default: its committer time, from --repo or the
    /// API]. Used when the pull request's current head cannot be read: a run never overwrites a
    /// comment for a later commit.
    #[arg(long, value_name = "TIME", value_parser = parse_timestamp)]
    pub valid_at: Option<Timestamp>,

    /// What to do with the earlier comment when the report changed.
    #[arg(long, value_enum, default_value_t = Behavior::Update)]
    pub behavior: Behavior,

    /// Post nothing when the change moves no GPUs and introduces no drift (an earlier comment is
    /// still brought up to date).
    #[arg(long)]
    pub skip_no_change: bool,

    /// A report longer than one comment is split over at most this many (1-20); past that it ends
    /// with a pointer to the job summary.
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..=20))]
    pub max_comments: u16,
}

#[derive(Debug, Args)]
pub struct IssueArgs {
    #[command(flatten)]
    pub repo: RepoArgs,

    #[command(flatten)]
    pub live: LiveArgs,

    #[command(flatten)]
    pub github: GithubArgs,

    /// With --opencost or --outcomes, the issue's folded inventory also holds allocated → busy →
    /// valuable per tenant and workload.
    #[command(flatten)]
    pub cost: CostInputArgs,

    /// The label that marks tracking issues (created by GitHub when missing).
    #[arg(long, value_name = "NAME", default_value = "gpuledger-drift")]
    pub label: String,

    /// The issue title [default: "GPU drift: SCOPE"].
    #[arg(long, value_name = "TEXT")]
    pub title: Option<String>,

    /// The clock: accepted-drift rules are checked against its date and the live state's age
    /// against it (YYYY-MM-DD is its midnight UTC) [default: now].
    #[arg(long, value_name = "DATE|RFC3339", value_parser = Timestamp::parse_now)]
    pub now: Option<Timestamp>,

    #[command(flatten)]
    pub output: OutputArgs,
}

fn parse_timestamp(s: &str) -> Result<Timestamp, gpuledger::util::date::DateError> {
    Timestamp::parse(s)
}

const CHECK_EXAMPLES: &str = "Examples:
  # The working tree against main, on a laptop (a pre-push hook)
  gpuledger check --repo . --base origin/main

  # Two refs, against a snapshot, failing on capacity and new drift too
  gpuledger check --repo . --base main --head feature --snapshot fleet.json \\
      --fail-on capacity,drift-introduced,render-error

Exit codes: 0 no gate failed, 1 a --fail-on gate failed (capacity, drift-introduced, render-error), \
2 error.";

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The GitOps repository (its root directory).
    #[arg(long, value_name = "PATH", default_value = ".")]
    pub repo: PathBuf,

    /// The ref the change starts from (the target branch) [default: the pull request's base commit,
    /// when GitHub Actions runs it on a pull request].
    #[arg(long, value_name = "REF")]
    pub base: Option<String>,

    /// The ref with the change [default: the working tree, uncommitted changes included].
    #[arg(long, value_name = "REF")]
    pub head: Option<String>,

    /// A URL that names this repository in Argo CD `repoURL`s and Flux GitRepositories. Repeatable.
    #[arg(long, value_name = "URL")]
    pub repo_url: Vec<String>,

    /// Time limit for each kustomize or helm run, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 60)]
    pub render_timeout: u64,

    /// Only this cluster's desired state, when the repository drives several [default: the
    /// cluster --scope names, when there is one of that name].
    #[arg(long, value_name = "NAME")]
    pub cluster: Option<String>,

    /// Live state, for drift and capacity: snapshot files. (Or --kubeconfig/--context.)
    #[arg(long, short = 's', value_name = "FILE", conflicts_with_all = ["kubeconfig", "context"])]
    pub snapshot: Vec<PathBuf>,

    /// Read the live state from the cluster of this kubeconfig.
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,

    /// Read the live state from this kubeconfig context.
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,

    /// Gates that make the check exit 1 when they fail: capacity, drift-introduced, render-error,
    /// intent (lints on the intent of the workloads the change adds or reshapes), stale-docs (a
    /// marked fact of the head's markdown differs from the live state: see `gpuledger docs`),
    /// comma-separated (`--fail-on capacity,render-error`) or with the flag repeated. Giving the
    /// flag replaces the default, so list render-error to keep it; `none` for no gate. A gate that
    /// cannot be evaluated fails (capacity without live state).
    #[arg(
        long,
        value_name = "GATES",
        value_delimiter = ',',
        default_value = "render-error",
        value_parser = ["capacity", "drift-introduced", "render-error", "intent", "stale-docs", "none"]
    )]
    pub fail_on: Vec<String>,

    /// With live state: Prometheus (base URL), for the tenants' trend (a GPUs/week column, as
    /// `gpuledger trend` computes it over --trend-window) and the GPUs busy and outcome counters
    /// of the cost section.
    #[arg(long, value_name = "URL", env = "GPULEDGER_PROMETHEUS")]
    pub prometheus: Option<String>,

    /// The environment variable holding a bearer token for Prometheus (managed Prometheus).
    #[arg(long, value_name = "VAR", default_value = "GPULEDGER_PROMETHEUS_TOKEN")]
    pub prometheus_token_env: String,

    /// The window cost, outcomes and GPU activity are read over (`1h`, `24h`, `7d`).
    #[arg(long, value_name = "DURATION", default_value = "1h", value_parser = parse_duration)]
    pub window: std::time::Duration,

    /// With --prometheus: the window of the tenants' trend column.
    #[arg(long, value_name = "DURATION", default_value = "30d", value_parser = parse_duration)]
    pub trend_window: std::time::Duration,

    /// With --prometheus: the step of the trend column's history.
    #[arg(long, value_name = "DURATION", default_value = "1d", value_parser = parse_duration)]
    pub trend_step: std::time::Duration,

    /// With live state: cost and outcomes, for allocated → busy → valuable of the tenants the
    /// change moves.
    #[command(flatten)]
    pub cost: CostInputArgs,

    /// The clock: accepted-drift rules are checked against its date and the live state's age
    /// against it (YYYY-MM-DD is its midnight UTC) [default: now].
    #[arg(long, value_name = "DATE|RFC3339", value_parser = Timestamp::parse_now)]
    pub now: Option<Timestamp>,

    #[command(flatten)]
    pub output: OutputArgs,
}

const SNAPSHOT_EXAMPLES: &str = "Examples:
  gpuledger snapshot --output fleet.json
  gpuledger snapshot --context gpu-east --output east.json
  gpuledger inventory --snapshot east.json

Reads exactly the resources listed in deploy/rbac.yaml (get and list; never Secrets), strips \
managedFields and the last-applied annotation, and writes one JSON List.";

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
    #[arg(long, value_name = "SECONDS", default_value_t = 30)]
    pub request_timeout: u64,

    /// No progress line (it only shows on a terminal anyway).
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

const DRIFT_EXAMPLES: &str = "Examples:
  gpuledger drift --repo ~/src/gitops --snapshot fleet.json
  gpuledger drift --repo . --ref origin/main --snapshot fleet.json \\
      --format markdown --output drift.md
  gpuledger drift --repo . --snapshot fleet.json --suggest-accept >rules.yaml

Exit codes: 0 no unaccepted drift (or --no-fail), 1 unaccepted drift, 2 error (an unreadable input, \
an app that failed to render).";

const RENDER_EXAMPLES: &str = "Examples:
  # The working tree as it is, uncommitted changes included (a local check)
  gpuledger render --repo .

  # A branch, tag or sha, read from git without touching the work tree
  gpuledger render --repo ~/src/gitops --ref origin/main --format json

  # Argo CD apps whose repoURL is this repository under another name
  gpuledger render --repo . --repo-url https://github.com/acme/gitops

Renderers: kustomize (`kustomize build`, or `kubectl kustomize`) and `helm template`, found on PATH or \
through GPULEDGER_KUSTOMIZE / GPULEDGER_HELM. They never run plugins, exec functions, post-renderers \
or network fetches. Exit codes: 0 rendered, 2 when any app failed to render (the others are still \
reported).";

const INVENTORY_EXAMPLES: &str = "Examples:
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

  # Markdown for a pull request or an issue; JSON for scripts
  # (schema gpuledger.report/v1)
  gpuledger inventory --snapshot fleet.json --format markdown -o inventory.md
  gpuledger inventory --snapshot fleet.json --format json \\
      | jq '.tenants[] | {name, gpus_requested}'";

/// Flags shared by the commands that read a fleet and write a report.
#[derive(Debug, Args)]
pub struct OutputArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table, env = "GPULEDGER_FORMAT")]
    pub format: Format,

    /// Show every row of every table (a terminal shows the first rows of long tables and counts
    /// the rest).
    #[arg(long)]
    pub all: bool,

    /// Write the report to FILE instead of standard output.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// The config file. Without it: `.gpuledger.yaml` at the root of --repo (render, drift, github
    /// issue, inventory --repo; `.` when the first three have no --repo), in the current directory
    /// (inventory without --repo), as committed at --base (check and github comment: a change
    /// cannot relax its own gates), else the defaults. A file given here applies to check's base
    /// and head alike.
    #[arg(long, value_name = "FILE", env = "GPULEDGER_CONFIG")]
    pub config: Option<PathBuf>,
}

impl OutputArgs {
    /// Refuses `--format prometheus` for a command whose report is not the fleet's (check,
    /// render, plan): it has no metrics form, and saying so beats an empty scrape.
    pub fn not_prometheus(&self, command: &str) -> anyhow::Result<()> {
        anyhow::ensure!(
            self.format != Format::Prometheus,
            "{command} has no Prometheus form: --format prometheus is for inventory and drift (and gpuledger serve)"
        );
        Ok(())
    }

    /// How a table is laid out for where it goes: on a terminal, at its width and in colour
    /// (unless `NO_COLOR` is set); through a pipe, at `COLUMNS` when set; into a file, unlimited.
    pub fn style(&self) -> Style {
        use std::io::IsTerminal;
        let to_file = self
            .output
            .as_deref()
            .is_some_and(|p| p != std::path::Path::new("-"));
        let tty = !to_file && std::io::stdout().is_terminal();
        let columns = || {
            std::env::var("COLUMNS")
                .ok()
                .and_then(|c| c.trim().parse::<usize>().ok())
                .filter(|c| *c > 0)
        };
        let width = if to_file {
            None
        } else if tty {
            columns().or_else(|| terminal_size::terminal_size().map(|(w, _)| usize::from(w.0)))
        } else {
            columns()
        };
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
            || std::env::var_os("TERM").is_some_and(|t| t == "dumb");
        Style {
            width,
            color: tty && !no_color,
            all: self.all,
        }
    }
}

/// Where the GitOps repository is and how to render it.
#[derive(Debug, Args)]
pub struct RepoArgs {
    /// The GitOps repository (its root directory) [render and drift default: .].
    #[arg(long, value_name = "PATH")]
    pub repo: Option<PathBuf>,

    /// Render this branch, tag or commit instead of the working tree.
    #[arg(long = "ref", value_name = "REF")]
    pub git_ref: Option<String>,

    /// A URL that names this repository in Argo CD `repoURL`s and Flux GitRepositories (besides its
    /// git remotes). Repeatable.
    #[arg(long, value_name = "URL")]
    pub repo_url: Vec<String>,

    /// Time limit for each kustomize or helm run, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 60)]
    pub render_timeout: u64,

    /// Only this cluster's desired state, when the repository drives several (Flux
    /// `clusters/<name>`, Argo CD destinations, `clusters:` in .gpuledger.yaml).
    #[arg(long, value_name = "NAME")]
    pub cluster: Option<String>,
}

#[derive(Debug, Args)]
pub struct RenderArgs {
    #[command(flatten)]
    pub repo: RepoArgs,

    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Args)]
pub struct DriftArgs {
    #[command(flatten)]
    pub repo: RepoArgs,

    #[command(flatten)]
    pub live: LiveArgs,

    /// Exit 0 even when there is unaccepted drift.
    #[arg(long)]
    pub no_fail: bool,

    /// Print accepted-drift rules that would accept today's drift (to edit and commit to
    /// .gpuledger.yaml) instead of the report.
    #[arg(long)]
    pub suggest_accept: bool,

    /// The clock: accepted-drift rules are checked against its date and the live state's age
    /// against it (YYYY-MM-DD is its midnight UTC) [default: now].
    #[arg(long, value_name = "DATE|RFC3339", value_parser = Timestamp::parse_now)]
    pub now: Option<Timestamp>,

    #[command(flatten)]
    pub output: OutputArgs,
}

/// Where the live fleet comes from: snapshot files, or the cluster itself.
#[derive(Debug, Args)]
pub struct LiveArgs {
    /// A cluster snapshot: what `kubectl get … -o yaml|json` prints (objects, Lists, several
    /// documents). Repeat the flag to read several files as one fleet; `-` reads standard input.
    /// Without it, the cluster is read through the Kubernetes API.
    #[arg(long, short = 's', value_name = "FILE", conflicts_with_all = ["kubeconfig", "context"])]
    pub snapshot: Vec<PathBuf>,

    /// The kubeconfig to read the cluster with [default: $KUBECONFIG, ~/.kube/config, or the
    /// in-cluster service account].
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,

    /// The kubeconfig context [default: the current context]. inventory reads several clusters
    /// when it is repeated, as one fleet: the totals add the clusters up, a Clusters table gives one row each, tenants
    /// merge by name, and workloads are listed with their cluster.
    #[arg(long, value_name = "NAME")]
    pub context: Vec<String>,

    /// Give up reading the cluster after this many seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = input::DEFAULT_TIMEOUT_S)]
    pub timeout: u64,

    /// Time limit for each API request, in seconds (retried with backoff on 429 and 5xx).
    #[arg(long, value_name = "SECONDS", default_value_t = input::DEFAULT_REQUEST_TIMEOUT_S)]
    pub request_timeout: u64,

    /// No progress line while reading the cluster (it only shows on a terminal anyway).
    #[arg(long, short = 'q')]
    pub quiet: bool,

    /// Prometheus (base URL): DCGM exporter metrics for the GPUs really used; vLLM and Dynamo
    /// metrics for serving headroom (headroom, inventory).
    #[arg(long, value_name = "URL", env = "GPULEDGER_PROMETHEUS")]
    pub prometheus: Option<String>,

    /// The environment variable holding a bearer token for Prometheus (managed Prometheus).
    #[arg(long, value_name = "VAR", default_value = "GPULEDGER_PROMETHEUS_TOKEN")]
    pub prometheus_token_env: String,

    /// The window GPU activity is averaged over (`30m`, `1h`, `7d`), and serving request rates
    /// are read over.
    #[arg(long, value_name = "DURATION", default_value = "1h", value_parser = parse_duration)]
    pub window: std::time::Duration,

    /// With --prometheus: the window of the tenant table's trend column (GPUs per week, as
    /// `gpuledger trend` computes it).
    #[arg(long, value_name = "DURATION", default_value = "30d", value_parser = parse_duration)]
    pub trend_window: std::time::Duration,

    /// With --prometheus: the step of the trend column's history.
    #[arg(long, value_name = "DURATION", default_value = "1d", value_parser = parse_duration)]
    pub trend_step: std::time::Duration,
}

/// `90s`, `30m`, `1h`, `2d`.
fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    let s = s.trim();
    let split = s
        .find(|c: char| !c.is_ascii_digit())
        .ok_or("a unit is needed: s, m, h or d")?;
    let (n, unit) = s.split_at(split);
    let n: u64 = n
        .parse()
        .map_err(|_| format!("{s:?} is not a duration such as 30m or 1h"))?;
    let secs = match unit {
        "s" => n,
        "m" => n * 60,
        "h" => n * 3600,
        "d" => n * 86_400,
        _ => return Err(format!("{s:?}: the unit must be s, m, h or d")),
    };
    if secs == 0 {
        return Err("the window must be longer than zero".into());
    }
    Ok(std::time::Duration::from_secs(secs))
}

#[derive(Debug, Args)]
pub struct InventoryArgs {
    #[command(flatten)]
    pub live: LiveArgs,

    /// With --repo, the report also holds drift against Git.
    #[command(flatten)]
    pub repo: RepoArgs,

    /// With --opencost or --outcomes, the report also holds cost per verified outcome.
    #[command(flatten)]
    pub cost: CostInputArgs,

    /// The clock: accepted-drift rules are checked against its date and the live state's age
    /// against it (YYYY-MM-DD is its midnight UTC) [default: now].
    #[arg(long, value_name = "DATE|RFC3339", value_parser = Timestamp::parse_now)]
    pub now: Option<Timestamp>,

    /// With --format prometheus: one series per live workload too (`gpuledger_workload_gpus`;
    /// a large fleet has thousands, so it is off by default).
    #[arg(long)]
    pub workload_series: bool,

    #[command(flatten)]
    pub output: OutputArgs,
}

impl LiveArgs {
    /// What to read: the snapshot files, or the clusters with these timeouts.
    pub fn spec(&self) -> LiveSpec {
        if self.snapshot.is_empty() {
            LiveSpec::Clusters {
                kubeconfig: self.kubeconfig.clone(),
                contexts: self.context.clone(),
                timeouts: Timeouts::from_secs(self.timeout, self.request_timeout),
            }
        } else {
            LiveSpec::Snapshots(self.snapshot.clone())
        }
    }

    /// The Prometheus to read GPU activity from, with its token from the environment.
    pub fn metrics(&self) -> Option<MetricsSpec> {
        self.prometheus.as_ref().map(|url| MetricsSpec {
            url: url.clone(),
            token: std::env::var(&self.prometheus_token_env)
                .ok()
                .filter(|t| !t.trim().is_empty())
                .inspect(|t| gpuledger::util::redact::register(t)),
            window: self.window,
            timeout: std::time::Duration::from_secs(self.request_timeout.max(1)),
        })
    }
}

impl RepoArgs {
    /// The repository to render (`.` when no --repo was given).
    pub fn spec(&self) -> RepoSpec {
        RepoSpec {
            path: self.repo.clone().unwrap_or_else(|| PathBuf::from(".")),
            git_ref: self.git_ref.clone(),
            repo_urls: self.repo_url.clone(),
            render_timeout: std::time::Duration::from_secs(self.render_timeout),
            cluster: self.cluster.clone(),
            cluster_hint: None,
        }
    }
}

impl CheckArgs {
    /// The metric and cost side of the live inputs, as the report commands take it (the cluster
    /// itself is read by [`CheckArgs::live`]).
    pub fn metrics_live(&self) -> LiveArgs {
        LiveArgs {
            snapshot: Vec::new(),
            kubeconfig: None,
            context: Vec::new(),
            timeout: input::DEFAULT_TIMEOUT_S,
            request_timeout: input::DEFAULT_REQUEST_TIMEOUT_S,
            quiet: true,
            prometheus: self.prometheus.clone(),
            prometheus_token_env: self.prometheus_token_env.clone(),
            window: self.window,
            trend_window: self.trend_window,
            trend_step: self.trend_step,
        }
    }

    /// The live state, only when asked for: a laptop check without a cluster stays offline. A
    /// cluster is read with the same default timeouts as every other command.
    pub fn live(&self) -> Option<LiveSpec> {
        if !self.snapshot.is_empty() {
            Some(LiveSpec::Snapshots(self.snapshot.clone()))
        } else if self.kubeconfig.is_some() || self.context.is_some() {
            Some(LiveSpec::Clusters {
                kubeconfig: self.kubeconfig.clone(),
                contexts: self.context.iter().cloned().collect(),
                timeouts: Timeouts::default(),
            })
        } else {
            None
        }
    }

    /// The gates asked for (`none` asks for none).
    pub fn gates(&self) -> Vec<String> {
        self.fail_on
            .iter()
            .filter(|g| *g != "none")
            .cloned()
            .collect()
    }

    /// The repository at the head ref (the base is [`RepoSpec::at`] the base ref).
    pub fn repo(&self) -> RepoSpec {
        RepoSpec {
            path: self.repo.clone(),
            git_ref: self.head.clone(),
            repo_urls: self.repo_url.clone(),
            render_timeout: std::time::Duration::from_secs(self.render_timeout),
            cluster: self.cluster.clone(),
            cluster_hint: None,
        }
    }
}
