//! The flag groups several commands share, each declared once with its own help heading (live
//! state, repository, metrics, trend column, cost inputs, clock, output), and how each becomes the
//! library's input spec. A command flattens the groups it needs; its own flags stay with it.
//!
//! Formats are per command family: the fleet reports (`inventory`, `drift`) also have Prometheus's
//! text exposition; every other report has table, markdown and JSON only, so a format a command
//! cannot write cannot be typed.

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{Args, ValueEnum};
use gpuledger::pipeline::input::{
    self, CostSpec, LiveSpec, MetricsSpec, OpenCostSpec, RepoSpec, Timeouts, TrendSpec,
};
use gpuledger::render::{self, Style};
use gpuledger::util::date::Timestamp;

/// Where the live fleet comes from: snapshot files, or the cluster itself.
#[derive(Debug, Args)]
#[command(next_help_heading = "Live state")]
pub struct LiveSource {
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
    /// when it is repeated, as one fleet: the totals add the clusters up, a Clusters table gives
    /// one row each, tenants merge by name, and workloads are listed with their cluster; every
    /// other command reads one cluster.
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
}

impl LiveSource {
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

    /// The live state only when one was named: a command for which the cluster is optional
    /// (`check`, `plan`) stays offline without a snapshot, a kubeconfig or a context.
    pub fn given(&self) -> Option<LiveSpec> {
        let named =
            !self.snapshot.is_empty() || self.kubeconfig.is_some() || !self.context.is_empty();
        named.then(|| self.spec())
    }

    /// Whether a progress line would only get in the way: asked to be quiet, or reading files.
    pub fn quiet(&self) -> bool {
        self.quiet || !self.snapshot.is_empty()
    }
}

/// Where the GitOps repository is and how to render it (without the ref: `check` has two).
#[derive(Debug, Args)]
#[command(next_help_heading = "Repository")]
pub struct RepoLocation {
    /// The GitOps repository (its root directory) [default: .; inventory and serve render none
    /// without it].
    #[arg(long, value_name = "PATH")]
    pub repo: Option<PathBuf>,

    /// A URL that names this repository in Argo CD `repoURL`s and Flux GitRepositories (besides its
    /// git remotes). Repeatable.
    #[arg(long, value_name = "URL")]
    pub repo_url: Vec<String>,

    /// Time limit for each kustomize or helm run, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 60)]
    pub render_timeout: u64,

    /// Only this cluster's desired state, when the repository drives several (Flux
    /// `clusters/<name>`, Argo CD destinations, `clusters:` in .gpuledger.yaml) [default: the
    /// cluster --scope names, when there is one of that name].
    #[arg(long, value_name = "NAME")]
    pub cluster: Option<String>,

    /// Fetch nothing: charts from Helm repositories and OCI registries, chart dependencies and
    /// kustomize's remote bases are not rendered, and every app that needs one is unknown, with
    /// that reason.
    #[arg(long)]
    pub offline: bool,

    /// Where fetched charts, blobs and git objects are kept, by digest [default:
    /// $XDG_CACHE_HOME/gpuledger, else ~/.cache/gpuledger].
    #[arg(long, value_name = "DIR", env = "GPULEDGER_CACHE_DIR")]
    pub cache_dir: Option<PathBuf>,
}

impl RepoLocation {
    /// The repository at `git_ref` (`.` when no --repo was given; the working tree when no ref).
    pub fn spec(&self, git_ref: Option<String>) -> RepoSpec {
        RepoSpec {
            path: self.repo.clone().unwrap_or_else(|| PathBuf::from(".")),
            git_ref,
            repo_urls: self.repo_url.clone(),
            render_timeout: Duration::from_secs(self.render_timeout),
            cluster: self.cluster.clone(),
            cluster_hint: None,
            remote: gpuledger::desired::remote::Options {
                offline: self.offline,
                cache_dir: self.cache_dir.clone(),
            },
            base_hosts: None,
        }
    }
}

/// The repository at one ref.
#[derive(Debug, Args)]
pub struct Repository {
    #[command(flatten)]
    pub at: RepoLocation,

    /// Render this branch, tag or commit instead of the working tree.
    #[arg(long = "ref", value_name = "REF", help_heading = "Repository")]
    pub git_ref: Option<String>,
}

impl Repository {
    /// The repository to render (`.` when no --repo was given).
    pub fn spec(&self) -> RepoSpec {
        self.at.spec(self.git_ref.clone())
    }

    /// The repository, only when --repo names one (inventory and serve render nothing otherwise).
    pub fn given(&self) -> Option<RepoSpec> {
        self.at.repo.is_some().then(|| self.spec())
    }
}

/// A Prometheus with DCGM (GPUs used), vLLM and Dynamo (serving) metrics.
#[derive(Debug, Args)]
#[command(next_help_heading = "Metrics")]
pub struct Metrics {
    /// Prometheus (base URL): DCGM exporter metrics for the GPUs really used; vLLM and Dynamo
    /// metrics for serving headroom; outcome counters for cost.
    #[arg(long, value_name = "URL", env = "GPULEDGER_PROMETHEUS")]
    pub prometheus: Option<String>,

    /// The environment variable holding a bearer token for Prometheus (managed Prometheus).
    #[arg(long, value_name = "VAR", default_value = "GPULEDGER_PROMETHEUS_TOKEN")]
    pub prometheus_token_env: String,

    /// The window GPU activity is averaged over (`30m`, `1h`, `7d`), serving request rates are
    /// read over, and cost and outcomes are counted over.
    #[arg(long, value_name = "DURATION", default_value = "1h", value_parser = parse_duration)]
    pub window: Duration,
}

impl Metrics {
    /// The Prometheus to read, with its token from the environment; `request_timeout` bounds each
    /// query.
    pub fn spec(&self, request_timeout: u64) -> Option<MetricsSpec> {
        self.prometheus.as_ref().map(|url| MetricsSpec {
            url: url.clone(),
            token: token(&self.prometheus_token_env),
            window: self.window,
            timeout: Duration::from_secs(request_timeout.max(1)),
        })
    }
}

/// The tenant table's GPUs-per-week column, from Prometheus's history.
#[derive(Debug, Args)]
#[command(next_help_heading = "Trend column")]
pub struct TrendColumn {
    /// With --prometheus: the window of the tenant table's trend column (GPUs per week, as
    /// `gpuledger trend` computes it).
    #[arg(long, value_name = "DURATION", default_value = "30d", value_parser = parse_duration)]
    pub trend_window: Duration,

    /// With --prometheus: the step of the trend column's history.
    #[arg(long, value_name = "DURATION", default_value = "1d", value_parser = parse_duration)]
    pub trend_step: Duration,
}

impl TrendColumn {
    pub fn spec(&self) -> TrendSpec {
        TrendSpec {
            window: self.trend_window,
            step: self.trend_step,
        }
    }
}

/// Where cost and outcomes come from.
#[derive(Debug, Args)]
#[command(next_help_heading = "Cost inputs")]
pub struct CostInputs {
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

impl CostInputs {
    /// The cost inputs, when any was given.
    pub fn spec(&self) -> Option<CostSpec> {
        (self.opencost.is_some() || self.outcomes.is_some()).then(|| CostSpec {
            opencost: self.opencost.as_ref().map(|url| OpenCostSpec {
                url: url.clone(),
                token: token(&self.opencost_token_env),
            }),
            outcomes: self.outcomes.clone(),
        })
    }
}

/// The report's clock.
#[derive(Debug, Args)]
#[command(next_help_heading = "Clock")]
pub struct Clock {
    /// The clock: accepted-drift rules are checked against its date, the live state's age against
    /// it, and windows end at it (YYYY-MM-DD is its midnight UTC) [default: now].
    #[arg(long, value_name = "DATE|RFC3339", value_parser = Timestamp::parse_now)]
    pub now: Option<Timestamp>,
}

/// The configuration file.
#[derive(Debug, Args)]
#[command(next_help_heading = "Output")]
pub struct ConfigFile {
    /// The config file. Without it: `.gpuledger.yaml` at the root of --repo (render, drift, github
    /// issue, inventory --repo; `.` when the first three have no --repo), in the current directory
    /// (inventory without --repo), as committed at --base (check and github comment: a change
    /// cannot relax its own gates), else the defaults. A file given here applies to check's base
    /// and head alike.
    #[arg(long, value_name = "FILE", env = "GPULEDGER_CONFIG")]
    pub config: Option<PathBuf>,
}

/// Where a report goes and how it is laid out (the format is each command's: [`Format`],
/// [`ReportFormat`]).
#[derive(Debug, Args)]
#[command(next_help_heading = "Output")]
pub struct Output {
    /// Show every row of every table (a terminal shows the first rows of long tables and counts
    /// the rest).
    #[arg(long)]
    pub all: bool,

    /// Write the report to FILE instead of standard output.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,

    #[command(flatten)]
    pub config: ConfigFile,
}

impl Output {
    pub fn config(&self) -> Option<&Path> {
        self.config.config.as_deref()
    }

    /// How a table is laid out for where it goes: on a terminal, at its width and in colour
    /// (unless `NO_COLOR` is set); through a pipe, at `COLUMNS` when set; into a file, unlimited.
    pub fn style(&self) -> Style {
        use std::io::IsTerminal;
        let to_file = self.output.as_deref().is_some_and(|p| p != Path::new("-"));
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

/// `--format` of every report but the fleet's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Aligned columns for a terminal.
    Table,
    /// GitHub-flavoured markdown (PR comments, issues, job summaries).
    Markdown,
    /// The versioned report (schema gpuledger.report/v1).
    Json,
}

impl From<Format> for render::Format {
    fn from(f: Format) -> render::Format {
        match f {
            Format::Table => render::Format::Table,
            Format::Markdown => render::Format::Markdown,
            Format::Json => render::Format::Json,
        }
    }
}

/// `--format` of the fleet reports (`inventory`, `drift`): also Prometheus's text exposition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    /// Aligned columns for a terminal.
    Table,
    /// GitHub-flavoured markdown (PR comments, issues, job summaries).
    Markdown,
    /// The versioned report (schema gpuledger.report/v1).
    Json,
    /// Prometheus text exposition (`gpuledger serve` serves it).
    Prometheus,
}

impl ReportFormat {
    /// The layout for people or JSON; `None` for Prometheus's exposition.
    pub fn text(self) -> Option<render::Format> {
        match self {
            ReportFormat::Table => Some(render::Format::Table),
            ReportFormat::Markdown => Some(render::Format::Markdown),
            ReportFormat::Json => Some(render::Format::Json),
            ReportFormat::Prometheus => None,
        }
    }
}

/// A bearer token from the environment variable `var`, registered with the redactor.
pub fn token(var: &str) -> Option<String> {
    std::env::var(var)
        .ok()
        .filter(|t| !t.trim().is_empty())
        .inspect(|t| gpuledger::util::redact::register(t))
}

/// A duration flag that does not read.
#[derive(Debug, thiserror::Error)]
pub enum DurationError {
    #[error("a unit is needed: s, m, h or d")]
    NoUnit,
    #[error("{0:?} is not a duration such as 30m or 1h")]
    NotANumber(String),
    #[error("{0:?}: the unit must be s, m, h or d")]
    Unit(String),
    #[error("the window must be longer than zero")]
    Zero,
}

/// `90s`, `30m`, `1h`, `2d`.
pub fn parse_duration(s: &str) -> Result<Duration, DurationError> {
    let s = s.trim();
    let split = s
        .find(|c: char| !c.is_ascii_digit())
        .ok_or(DurationError::NoUnit)?;
    let (n, unit) = s.split_at(split);
    let n: u64 = n
        .parse()
        .map_err(|_| DurationError::NotANumber(s.to_string()))?;
    let unit = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return Err(DurationError::Unit(s.to_string())),
    };
    let secs = n
        .checked_mul(unit)
        .ok_or_else(|| DurationError::NotANumber(s.to_string()))?;
    if secs == 0 {
        return Err(DurationError::Zero);
    }
    Ok(Duration::from_secs(secs))
}

/// A refresh interval: a [`parse_duration`], or milliseconds (`250ms`: short enough for a soak
/// test to run thousands of refreshes).
pub fn parse_interval(s: &str) -> Result<Duration, DurationError> {
    match s.trim().strip_suffix("ms") {
        Some(ms) => match ms.parse::<u64>() {
            Ok(0) => Err(DurationError::Zero),
            Ok(ms) => Ok(Duration::from_millis(ms)),
            Err(_) => Err(DurationError::NotANumber(s.to_string())),
        },
        None => parse_duration(s),
    }
}

pub fn parse_timestamp(s: &str) -> Result<Timestamp, gpuledger::util::date::DateError> {
    Timestamp::parse(s)
}
