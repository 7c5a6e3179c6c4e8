//! The flags of the commands about the repository and its changes: `render`, `check`, `plan`,
//! and `github comment` / `github issue`. The groups they share are [`super::shared`]'s.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::shared::{
    Clock, CostInputs, Format, LiveSource, Metrics, Output, RepoLocation, Repository, TrendColumn,
    parse_timestamp,
};
use gpuledger::github::comment::Behavior;
use gpuledger::plan::Objective;
use gpuledger::report::GateName;

pub const RENDER_EXAMPLES: &str = "Examples:
  # The working tree as it is, uncommitted changes included (a local check)
  gpuledger render --repo .

  # A branch, tag or sha, read from git without touching the work tree
  gpuledger render --repo ~/src/gitops --ref origin/main --format json

  # Argo CD apps whose repoURL is this repository under another name
  gpuledger render --repo . --repo-url https://github.com/acme/gitops

Renderers: kustomize (`kustomize build`, or `kubectl kustomize`) and `helm template`, found on PATH or \
through GPULEDGER_KUSTOMIZE / GPULEDGER_HELM. They never run plugins, exec functions, post-renderers \
or network fetches. Exit codes: 0 rendered, 2 when any app failed to render (the others are still \
reported).

Guide: docs/render.md.";
#[derive(Debug, Args)]
pub struct RenderArgs {
    #[command(flatten)]
    pub repo: Repository,

    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table, env = "GPULEDGER_FORMAT", help_heading = "Output")]
    pub format: Format,

    #[command(flatten)]
    pub output: Output,
}

pub const CHECK_EXAMPLES: &str = "Examples:
  # The working tree against main, on a laptop (a pre-push hook)
  gpuledger check --repo . --base origin/main

  # Two refs, against a snapshot, failing on capacity and new drift too
  gpuledger check --repo . --base main --head feature --snapshot fleet.json \\
      --fail-on capacity,drift-introduced,render-error

Exit codes: 0 no gate failed, 1 a --fail-on gate failed (capacity, drift-introduced, render-error, \
intent, stale-docs, headroom), 2 error.

Guide: docs/check.md.";
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The ref the change starts from (the target branch) [default: the pull request's base commit,
    /// when GitHub Actions runs it on a pull request].
    #[arg(long, value_name = "REF")]
    pub base: Option<String>,

    /// The ref with the change [default: the working tree, uncommitted changes included].
    #[arg(long, value_name = "REF")]
    pub head: Option<String>,

    /// Gates that make the check exit 1 when they fail: capacity, drift-introduced, render-error,
    /// intent (lints on the intent of the workloads the change adds or reshapes), stale-docs (a
    /// marked fact of the head's markdown differs from the live state: see `gpuledger docs`),
    /// headroom (a serving workload the change reshapes: production's p95 over, or near, the
    /// capacity of the load test the head names; needs live state and --prometheus),
    /// comma-separated (`--fail-on capacity,render-error`) or with the flag repeated. Giving the
    /// flag replaces the default, so list render-error to keep it; `none` for no gate. A gate that
    /// cannot be evaluated fails (capacity without live state), except headroom: an unknown
    /// headroom is said, not failed.
    #[arg(
        long,
        value_name = "GATES",
        value_enum,
        value_delimiter = ',',
        default_value = "render-error"
    )]
    pub fail_on: Vec<GateArg>,

    #[command(flatten)]
    pub repo: RepoLocation,

    /// Live state, for drift and capacity (without it the check stays offline).
    #[command(flatten)]
    pub live: LiveSource,

    /// With live state: Prometheus, for the tenants' trend (a GPUs/week column, as `gpuledger
    /// trend` computes it over --trend-window) and the GPUs busy and outcome counters of the cost
    /// section.
    #[command(flatten)]
    pub metrics: Metrics,

    #[command(flatten)]
    pub trend: TrendColumn,

    /// With live state: cost and outcomes, for allocated → busy → valuable of the tenants the
    /// change moves.
    #[command(flatten)]
    pub cost: CostInputs,

    #[command(flatten)]
    pub clock: Clock,

    /// Output format (of the report on standard output).
    #[arg(long, value_enum, default_value_t = Format::Table, env = "GPULEDGER_FORMAT", help_heading = "Output")]
    pub format: Format,

    #[command(flatten)]
    pub output: Output,
}

/// A gate `--fail-on` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum GateArg {
    /// The head's GPUs do not fit the placeable GPUs, or a tenant goes over its limit.
    Capacity,
    /// The change leaves drift behind once it syncs.
    DriftIntroduced,
    /// An app (or the configuration) failed to render at base or head.
    RenderError,
    /// Intent lints on the workloads the change adds or reshapes.
    Intent,
    /// A marked fact of the head's documents differs from the live state.
    StaleDocs,
    /// A serving workload the change reshapes: production's p95 is above (or within
    /// headroom.near_capacity of) the capacity of the load test the head names.
    Headroom,
    /// A workload the change adds or reshapes can never be admitted by its queue (more than
    /// nominal + borrowing limit in every flavor), or a quota change makes admitted work borrowed
    /// (preemptible) that was not.
    Quota,
    /// No gate.
    None,
}

impl CheckArgs {
    /// The gates asked for (`none` asks for none).
    pub fn gates(&self) -> Vec<GateName> {
        self.fail_on
            .iter()
            .filter_map(|g| match g {
                GateArg::Capacity => Some(GateName::Capacity),
                GateArg::DriftIntroduced => Some(GateName::DriftIntroduced),
                GateArg::RenderError => Some(GateName::RenderError),
                GateArg::Intent => Some(GateName::Intent),
                GateArg::StaleDocs => Some(GateName::StaleDocs),
                GateArg::Headroom => Some(GateName::Headroom),
                GateArg::Quota => Some(GateName::Quota),
                GateArg::None => None,
            })
            .collect()
    }
}

pub const PLAN_EXAMPLES: &str = "Examples:
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
--fail-on-miss was given, 2 error (a bad jobs file names its line).

Guide: docs/plan.md.";
#[derive(Debug, Args)]
pub struct PlanArgs {
    /// The jobs to plan: a YAML list (see below).
    #[arg(long, value_name = "FILE", required_unless_present_any = ["repo", "pending"])]
    pub jobs: Option<PathBuf>,

    /// GPUs in the pool [default: from the cluster: the placeable GPUs minus what non-batch
    /// workloads hold, or the --queue's quota].
    #[arg(long, value_name = "N", required_unless_present_any = ["snapshot", "context", "kubeconfig"])]
    pub pool: Option<u64>,

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
    #[arg(long, value_enum, default_value_t = ObjectiveArg::Earliest)]
    pub objective: ObjectiveArg,

    /// The time grid: jobs start on slot boundaries from --now (`15m`, `1h`).
    #[arg(long, value_name = "DURATION", default_value = "15m", value_parser = gpuledger::plan::file::parse_duration)]
    pub slot: u64,

    /// Exit 1 when a deadline is missed.
    #[arg(long)]
    pub fail_on_miss: bool,

    /// Also plan the batch workloads of this GitOps repository whose intent gives their runtime
    /// (gpuledger.io/runtime, deadline, earliest-start, interruptible), as `render` finds them.
    #[command(flatten)]
    pub repo: Repository,

    /// The cluster, for the pool, its nodes and --pending.
    #[command(flatten)]
    pub live: LiveSource,

    #[command(flatten)]
    pub clock: Clock,

    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table, env = "GPULEDGER_FORMAT", help_heading = "Output")]
    pub format: Format,

    #[command(flatten)]
    pub output: Output,
}

/// `--objective`: what the plan optimises after meeting every deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ObjectiveArg {
    /// Finish all work as early as possible (slack for retries).
    Earliest,
    /// The lowest peak of GPUs in use, then as early as possible.
    MinPeak,
}

impl From<ObjectiveArg> for Objective {
    fn from(o: ObjectiveArg) -> Objective {
        match o {
            ObjectiveArg::Earliest => Objective::Earliest,
            ObjectiveArg::MinPeak => Objective::MinPeak,
        }
    }
}

pub const COMMENT_EXAMPLES: &str = "Examples:
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
the step summary with a warning. Exit codes: as `gpuledger check`, and 2 when GitHub refuses.

Guide: docs/check.md, docs/github.md.";
pub const ISSUE_EXAMPLES: &str = "Examples:
  # Nightly, per cluster
  gpuledger github issue --repo . --context gpu-east --scope gpu-east
  gpuledger github issue --repo . --snapshot east.json --scope gpu-east \\
      --label gpu-drift

The issue is found by its label and hidden marker (list API, all states); overlapping runs converge \
on one open issue. Drift that cannot be known (an app failed to render, a resource could not be read) \
never closes the issue. Exit codes: 0 the issue is in step (drift or not), 2 error.

Guide: docs/drift.md, docs/github.md.";
/// Where to post and as whom; shared by `github comment` and `github issue`.
#[derive(Debug, Args)]
#[command(next_help_heading = "GitHub")]
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

impl GithubArgs {
    /// The scope as a report's title names it: `default` (no `--scope` given) names nothing, and
    /// the live state's context stands in.
    pub fn named_scope(&self) -> Option<String> {
        (self.scope != "default").then(|| self.scope.clone())
    }
}

#[derive(Debug, Args)]
pub struct CommentArgs {
    /// The pull request number [default: from $GITHUB_EVENT_PATH].
    #[arg(long, value_name = "N", help_heading = "GitHub")]
    pub pr: Option<u64>,

    /// Post this report instead of computing one: the JSON report file (`report_path`) that
    /// `github comment` wrote in a pull request's run whose token could not comment (a fork's). Its
    /// pull request and head commit must match the `workflow_run` event (or --pr and --head-sha),
    /// or nothing is posted; the repository is not read.
    #[arg(
        long,
        value_name = "FILE",
        conflicts_with_all = ["base", "head", "snapshot", "kubeconfig", "context"],
        help_heading = "GitHub"
    )]
    pub from_report: Option<PathBuf>,

    /// The pull request's head commit [default: from $GITHUB_EVENT_PATH].
    #[arg(long, value_name = "SHA", help_heading = "GitHub")]
    pub head_sha: Option<String>,

    /// When the head commit was made (RFC 3339) [default: its committer time, from --repo or the
    /// API]. Used when the pull request's current head cannot be read: a run never overwrites a
    /// comment for a later commit.
    #[arg(long, value_name = "TIME", value_parser = parse_timestamp, help_heading = "GitHub")]
    pub valid_at: Option<gpuledger::util::date::Timestamp>,

    /// What to do with the earlier comment when the report changed.
    #[arg(long, value_enum, default_value_t = BehaviorArg::Update, help_heading = "GitHub")]
    pub behavior: BehaviorArg,

    /// Post nothing when the change moves no GPUs and introduces no drift (an earlier comment is
    /// still brought up to date).
    #[arg(long, help_heading = "GitHub")]
    pub skip_no_change: bool,

    /// A report longer than one comment is split over at most this many (1-20); past that it ends
    /// with a pointer to the job summary.
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..=20), help_heading = "GitHub")]
    pub max_comments: u16,

    #[command(flatten)]
    pub github: GithubArgs,

    #[command(flatten)]
    pub check: CheckArgs,
}

/// `--behavior`: what to do with the earlier comment when the report changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BehaviorArg {
    /// Edit the existing comment in place.
    Update,
    /// Post a new comment each time the report changes.
    New,
    /// Post a new comment and minimize the earlier one as outdated.
    HideAndNew,
    /// Post a new comment and delete the earlier one.
    DeleteAndNew,
}

impl From<BehaviorArg> for Behavior {
    fn from(b: BehaviorArg) -> Behavior {
        match b {
            BehaviorArg::Update => Behavior::Update,
            BehaviorArg::New => Behavior::New,
            BehaviorArg::HideAndNew => Behavior::HideAndNew,
            BehaviorArg::DeleteAndNew => Behavior::DeleteAndNew,
        }
    }
}

#[derive(Debug, Args)]
pub struct IssueArgs {
    /// The label that marks tracking issues (created by GitHub when missing).
    #[arg(
        long,
        value_name = "NAME",
        default_value = "gpuledger-drift",
        help_heading = "GitHub"
    )]
    pub label: String,

    /// The issue title [default: "GPU drift: SCOPE"].
    #[arg(long, value_name = "TEXT", help_heading = "GitHub")]
    pub title: Option<String>,

    #[command(flatten)]
    pub github: GithubArgs,

    #[command(flatten)]
    pub repo: Repository,

    #[command(flatten)]
    pub live: LiveSource,

    #[command(flatten)]
    pub metrics: Metrics,

    #[command(flatten)]
    pub trend: TrendColumn,

    /// With --opencost or --outcomes, the issue's folded inventory also holds allocated → busy →
    /// valuable per tenant and workload.
    #[command(flatten)]
    pub cost: CostInputs,

    #[command(flatten)]
    pub clock: Clock,

    /// Output format (of the copy written with --output).
    #[arg(long, value_enum, default_value_t = Format::Table, env = "GPULEDGER_FORMAT", help_heading = "Output")]
    pub format: Format,

    #[command(flatten)]
    pub output: Output,
}
