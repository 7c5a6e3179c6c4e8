//! Loading the two sides every command compares: the live fleet (snapshot files) and the desired
//! state (a rendered GitOps repository), plus the config that goes with them.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;

use crate::analysis::desired::desired;
use crate::analysis::usage::Metrics;
use crate::cli::{LiveArgs, RepoArgs};
use crate::config::Config;
use crate::desired::render::{Tools, render_all};
use crate::desired::{discover, tree::Tree};
use crate::k8s::object::Object;
use crate::k8s::read::read_objects;
use crate::live::kube::{ClusterSource, Progress, read_cluster};
use crate::live::prometheus::{PromSource, gpu_activity};
use crate::report::IncompleteInput;
use crate::report::{AppStatus, Desired};

/// The config: `--config`, else `.gpuledger.yaml` at the repository root (when a repository is
/// given) or in the current directory, else the defaults. Returns a note naming the file used.
pub fn config(
    explicit: Option<&Path>,
    repo: Option<&Path>,
) -> anyhow::Result<(Config, Option<PathBuf>)> {
    let dir = match repo {
        Some(r) => r.to_path_buf(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    Ok(Config::discover(explicit, &dir)?)
}

/// One cluster's worth of live objects (or all snapshot files together).
pub struct LivePart {
    /// The cluster, when read through the API.
    pub name: Option<String>,
    pub objects: Vec<Object>,
    /// Resources the cluster would not let us list.
    pub incomplete: Vec<IncompleteInput>,
}

/// The live fleet: every object of every snapshot file, or what each cluster serves.
pub struct Live {
    pub parts: Vec<LivePart>,
    /// The snapshot files, or the clusters.
    pub sources: Vec<String>,
}

pub fn live(args: &LiveArgs, progress: &Arc<Progress>) -> anyhow::Result<Live> {
    if !args.snapshot.is_empty() {
        let mut objects = Vec::new();
        for path in &args.snapshot {
            let objs = read_objects(path)?;
            tracing::debug!(file = %path.display(), objects = objs.len(), "read snapshot");
            objects.extend(objs);
        }
        let sources = args
            .snapshot
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        return Ok(Live {
            parts: vec![LivePart {
                name: None,
                objects,
                incomplete: Vec::new(),
            }],
            sources,
        });
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let contexts: Vec<Option<String>> = if args.context.is_empty() {
        vec![None]
    } else {
        args.context.iter().cloned().map(Some).collect()
    };
    let mut parts = Vec::new();
    let mut sources = Vec::new();
    for context in contexts {
        let src = ClusterSource {
            kubeconfig: args.kubeconfig.clone(),
            context: context.clone(),
            request_timeout: Duration::from_secs(args.request_timeout.max(1)),
            timeout: Duration::from_secs(args.timeout.max(1)),
            page_size: 500,
        };
        let read = runtime
            .block_on(read_cluster(src, progress.clone()))
            .map_err(|e| anyhow::anyhow!("cannot read the cluster: {e}"))?;
        sources.push(format!("cluster {}", read.name));
        parts.push(LivePart {
            name: Some(context.unwrap_or_else(|| read.name.clone())),
            objects: read.objects,
            incomplete: read
                .missing
                .into_iter()
                .map(|m| IncompleteInput {
                    resource: m.resource,
                    reason: m.reason,
                })
                .collect(),
        });
    }
    Ok(Live { parts, sources })
}

impl Live {
    /// The one cluster (or snapshot set) of a single-cluster command.
    pub fn single(mut self, what: &str) -> anyhow::Result<(LivePart, Vec<String>)> {
        anyhow::ensure!(
            self.parts.len() == 1,
            "{what} reads one cluster at a time: give a single --context"
        );
        Ok((self.parts.remove(0), self.sources))
    }
}

/// The desired state at `--ref` (or the working tree). `live` objects, when given, lend their
/// Namespace labels to tenancy.
pub fn desired_state(
    args: &RepoArgs,
    repo: &Path,
    cfg: &Config,
    live: &[Object],
) -> anyhow::Result<Desired> {
    anyhow::ensure!(repo.is_dir(), "--repo {}: not a directory", repo.display());
    let tree = Tree::open(repo, args.git_ref.as_deref())
        .with_context(|| format!("cannot read the repository {}", repo.display()))?;
    let plan = discover::plan(&tree, &cfg.render, &args.repo_url);
    let tools = Tools::detect(Duration::from_secs(args.render_timeout));
    let rendered = render_all(&tree, plan, &tools);
    Ok(desired(&rendered, cfg, live))
}

/// GPU activity from Prometheus, or why it is unknown (never an error: `used` is then unknown).
pub fn metrics(args: &LiveArgs, cfg: &Config) -> Metrics {
    let Some(url) = &args.prometheus else {
        return Metrics::NotConfigured;
    };
    let src = PromSource {
        url: url.clone(),
        bearer_token: std::env::var(&args.prometheus_token_env)
            .ok()
            .filter(|t| !t.trim().is_empty()),
        window: args.window,
        timeout: Duration::from_secs(args.request_timeout.max(1)),
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => return Metrics::Failed(format!("cannot start the async runtime: {e}")),
    };
    match runtime.block_on(gpu_activity(&src)) {
        Ok(gpus) => Metrics::Activity {
            gpus,
            threshold: cfg.metrics.busy_threshold,
            source: format!(
                "{} (DCGM, {}s window, busy above {:.0}% activity)",
                url.split('@').next_back().unwrap_or(url),
                args.window.as_secs(),
                cfg.metrics.busy_threshold * 100.0
            ),
        },
        Err(e) => Metrics::Failed(e),
    }
}

/// What failed to render, for the exit code and a note.
pub fn render_failures(d: &Desired) -> Vec<String> {
    d.apps
        .iter()
        .filter(|a| a.status == AppStatus::Error)
        .map(|a| format!("{} {}", a.kind, a.name))
        .chain(d.problems.iter().cloned())
        .collect()
}
