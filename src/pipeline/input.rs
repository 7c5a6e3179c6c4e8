//! What a job reads, said once: the live fleet (snapshot files, or clusters through the API
//! with their timeouts), the GitOps repository (path, ref, renderer timeout), the metrics source,
//! and the config that goes with them — and the loaders that read each.
//!
//! The binary builds these specs from its flags; every command that reads a cluster gets the same
//! defaults from here ([`Timeouts::default`]). Loading is I/O (files, the API, git, renderers) and
//! hands over plain objects; the async parts run on the caller's runtime.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use super::read::{KAI_POD_GROUPS, KUEUE_WORKLOADS, ROUTE_RESOURCES, read_by, unread_in_files};
use crate::analysis::desired::desired;
use crate::analysis::live::Unread;
use crate::analysis::usage::Metrics;
use crate::config::Config;
use crate::desired::cache::RenderCache;
use crate::desired::follow;
use crate::desired::remote;
use crate::desired::render::{Renderer, Tools};
use crate::desired::{discover, tree::Tree};
use crate::k8s::object::Object;
use crate::k8s::read::read_snapshot;
use crate::live::kube::{ClusterRead, ClusterSource, Progress, WatchedFleet, read_cluster};
use crate::live::prometheus::{PromSource, gpu_activity};
use crate::report::{Desired, IncompleteInput, Known, LiveProvenance, LiveSourceKind};

use super::{Error, Result};

/// Seconds a whole cluster read may take, by default.
pub const DEFAULT_TIMEOUT_S: u64 = 120;
/// Seconds one API request may take, by default.
pub const DEFAULT_REQUEST_TIMEOUT_S: u64 = 30;
/// Objects per page when listing a resource.
const PAGE_SIZE: u32 = 500;

/// How long reading a cluster may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// The whole read.
    pub total: Duration,
    /// One request.
    pub request: Duration,
}

impl Default for Timeouts {
    fn default() -> Timeouts {
        Timeouts {
            total: Duration::from_secs(DEFAULT_TIMEOUT_S),
            request: Duration::from_secs(DEFAULT_REQUEST_TIMEOUT_S),
        }
    }
}

impl Timeouts {
    /// From whole seconds, each at least one.
    pub fn from_secs(total: u64, request: u64) -> Timeouts {
        Timeouts {
            total: Duration::from_secs(total.max(1)),
            request: Duration::from_secs(request.max(1)),
        }
    }
}

/// Where the live fleet comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum LiveSpec {
    /// `kubectl get -o yaml|json` dumps, read as one fleet.
    Snapshots(Vec<PathBuf>),
    /// The clusters themselves: the kubeconfig (default lookup when `None`) and its contexts (the
    /// current one when empty).
    Clusters {
        kubeconfig: Option<PathBuf>,
        contexts: Vec<String>,
        timeouts: Timeouts,
    },
    /// The clusters as `serve` keeps them: listed once, then watched ([`WatchedFleet`]).
    Watched(WatchedFleet),
}

/// Where the GitOps repository is and how to render it.
#[derive(Debug, Clone, PartialEq)]
pub struct RepoSpec {
    pub path: PathBuf,
    /// A branch, tag or sha; the working tree when `None`.
    pub git_ref: Option<String>,
    /// URLs that also name this repository (`--repo-url`).
    pub repo_urls: Vec<String>,
    /// How long one renderer invocation may take.
    pub render_timeout: Duration,
    /// `--cluster`: the one cluster of the repository this run is about.
    pub cluster: Option<String>,
    /// A name that picks a cluster when the repository has one of that name (GitHub's
    /// `--scope`), and is ignored otherwise.
    pub cluster_hint: Option<String>,
    /// `--offline` and `--cache-dir`: whether rendering may fetch, and where it keeps what it
    /// fetched.
    pub remote: remote::Options,
    /// The source hosts a check's base uses: its head fetches from these only (and
    /// `render.remote.allow`). `None` for a ref that is trusted (render, drift, a check's base).
    pub base_hosts: Option<BTreeSet<String>>,
}

impl RepoSpec {
    /// The same repository at another ref.
    pub fn at(&self, git_ref: Option<String>) -> RepoSpec {
        RepoSpec {
            git_ref,
            ..self.clone()
        }
    }
}

/// A Prometheus with DCGM metrics.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricsSpec {
    pub url: String,
    /// The bearer token's value (read from the environment by the binary; never printed).
    pub token: Option<String>,
    pub window: Duration,
    pub timeout: Duration,
}

/// Where cost and outcomes come from: OpenCost, outcome records, or both.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CostSpec {
    pub opencost: Option<OpenCostSpec>,
    /// Outcome records (JSON lines or CSV).
    pub outcomes: Option<PathBuf>,
}

/// An OpenCost API.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenCostSpec {
    pub url: String,
    /// The bearer token's value (read from the environment by the binary; never printed).
    pub token: Option<String>,
}

/// The tenant table's trend column: the history's window and step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrendSpec {
    pub window: Duration,
    pub step: Duration,
}

/// The config: `explicit`, else `.gpuledger.yaml` at the repository root (when a repository is
/// given) or in the current directory, else the defaults. Returns the file used.
pub fn config(explicit: Option<&Path>, repo: Option<&Path>) -> Result<(Config, Option<PathBuf>)> {
    let dir = match repo {
        Some(r) => r.to_path_buf(),
        None => std::env::current_dir().map_err(Error::CurrentDir)?,
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
    /// Where and when each source was read (one per snapshot file, or the cluster); not yet aged
    /// (see [`crate::report::Provenance::new`]).
    pub provenance: Vec<LiveProvenance>,
    /// What the input did not hold: figures that need it are unknown.
    pub unread: Unread,
}

impl LivePart {
    /// What this source did not hold: the kinds a dump lacks, and the resources a cluster read was
    /// forbidden to list.
    pub fn unread(&self) -> Unread {
        let forbidden = |r: &str| {
            self.incomplete
                .iter()
                .find(|m| m.resource == r)
                .map(|m| format!("{} could not be listed: {}", m.resource, m.reason))
        };
        let routes = || forbidden(ROUTE_RESOURCES[0]).or_else(|| forbidden(ROUTE_RESOURCES[1]));
        Unread {
            nodes: forbidden("nodes").or_else(|| self.unread.nodes.clone()),
            pods: forbidden("pods").or_else(|| self.unread.pods.clone()),
            routes: routes().or_else(|| self.unread.routes.clone()),
            queued: forbidden(KUEUE_WORKLOADS)
                .or_else(|| forbidden(KAI_POD_GROUPS))
                .or_else(|| self.unread.queued.clone()),
        }
    }

    /// What a report whose headline is the fleet's figures misses: the resources not listed, and
    /// the nodes or pods a dump did not hold.
    pub fn fleet_incomplete(&self) -> Vec<IncompleteInput> {
        self.incomplete_needing(&[
            ("nodes", &self.unread.nodes),
            ("pods", &self.unread.pods),
            (KUEUE_WORKLOADS, &self.unread.queued),
        ])
    }

    /// What a report about workloads (cost, headroom) misses: the resources not listed, and the
    /// pods a dump did not hold (it needs no node).
    pub fn workloads_incomplete(&self) -> Vec<IncompleteInput> {
        self.incomplete_needing(&[("pods", &self.unread.pods)])
    }

    fn incomplete_needing(&self, needed: &[(&str, &Option<String>)]) -> Vec<IncompleteInput> {
        let mut all = self.incomplete.clone();
        for &(resource, why) in needed {
            if let Some(reason) = why
                && !all.iter().any(|m| m.resource == resource)
            {
                all.push(IncompleteInput {
                    resource: resource.to_string(),
                    reason: reason.clone(),
                });
            }
        }
        all
    }
}

/// A live source before it is aged against the report's clock.
fn live_source(
    source: LiveSourceKind,
    name: String,
    context: Option<String>,
    server: Option<String>,
    read_at: Known<crate::util::date::Timestamp>,
    version: Option<String>,
) -> LiveProvenance {
    let mut unknown = crate::report::Unknown::default();
    let (read_at, read_at_unknown) = match read_at {
        Known::Value(t) => (Some(t), None),
        Known::Unknown(why) => {
            unknown.set("read_at", why.clone());
            unknown.set("age_seconds", why.clone());
            (None, Some(why))
        }
    };
    LiveProvenance {
        source,
        name,
        context,
        server,
        read_at,
        read_at_unknown,
        unknown,
        age_seconds: None,
        stale: false,
        stale_after: String::new(),
        gpuledger_version: version,
    }
}

/// The live fleet: every object of every snapshot file, or what each cluster serves.
pub struct Live {
    pub parts: Vec<LivePart>,
    /// The snapshot files, or the clusters.
    pub sources: Vec<String>,
}

impl Live {
    /// The one cluster (or snapshot set) of a single-cluster command.
    pub fn single(mut self, what: &str) -> Result<(LivePart, Vec<String>)> {
        if self.parts.len() != 1 {
            return Err(Error::Usage(format!(
                "{what} reads one cluster at a time: give a single --context"
            )));
        }
        Ok((self.parts.remove(0), self.sources))
    }
}

/// Reads the live fleet.
pub async fn live(spec: &LiveSpec, progress: &Arc<Progress>) -> Result<Live> {
    match spec {
        LiveSpec::Snapshots(paths) => {
            let mut objects = Vec::new();
            let mut provenance = Vec::new();
            let mut files = Vec::new();
            for path in paths {
                let snap = read_snapshot(path)?;
                files.push((
                    snap.meta.resources.clone(),
                    snap.objects.iter().flat_map(read_by).collect(),
                ));
                crate::workload::check_all(&snap.objects).map_err(crate::error::Error::from)?;
                tracing::debug!(file = %path.display(), objects = snap.objects.len(), "read snapshot");
                crate::k8s::read::append(&mut objects, snap.objects);
                let m = snap.meta;
                let plain_dump = m.is_empty();
                let read_at = match (m.read_at, m.read_at_invalid) {
                    (Some(t), _) => Known::Value(t),
                    (None, Some(why)) => Known::Unknown(why),
                    (None, None) if plain_dump => {
                        Known::Unknown("a kubectl dump carries no read time".to_string())
                    }
                    (None, None) => Known::Unknown("the snapshot names no read time".to_string()),
                };
                provenance.push(live_source(
                    LiveSourceKind::Snapshot,
                    path.display().to_string(),
                    m.context,
                    m.server,
                    read_at,
                    m.version,
                ));
            }
            Ok(Live {
                parts: vec![LivePart {
                    name: None,
                    objects,
                    incomplete: Vec::new(),
                    provenance,
                    unread: unread_in_files(&files),
                }],
                sources: paths.iter().map(|p| p.display().to_string()).collect(),
            })
        }
        LiveSpec::Clusters {
            kubeconfig,
            contexts,
            timeouts,
        } => {
            let contexts: Vec<Option<String>> = if contexts.is_empty() {
                vec![None]
            } else {
                contexts.iter().cloned().map(Some).collect()
            };
            let mut parts = Vec::new();
            let mut sources = Vec::new();
            for context in contexts {
                let src = cluster_source(kubeconfig.clone(), context.clone(), *timeouts);
                let read = read_cluster(src, progress.clone())
                    .await
                    .map_err(|e| Error::Cluster(e.to_string()))?;
                let (source, part) = cluster_part(context, read);
                sources.push(source);
                parts.push(part);
            }
            Ok(Live { parts, sources })
        }
        LiveSpec::Watched(fleet) => {
            let (mut parts, mut sources) = (Vec::new(), Vec::new());
            for (context, watched) in &fleet.clusters {
                let read = watched
                    .read(fleet.timeout)
                    .await
                    .map_err(|e| Error::Cluster(e.to_string()))?;
                let (source, part) = cluster_part(context.clone(), read);
                sources.push(source);
                parts.push(part);
            }
            Ok(Live { parts, sources })
        }
    }
}

/// One cluster's read as a part of the live fleet, and how the run names its source.
fn cluster_part(context: Option<String>, read: ClusterRead) -> (String, LivePart) {
    let source = format!("cluster {}", read.name);
    let provenance = vec![live_source(
        LiveSourceKind::Cluster,
        read.name.clone(),
        read.origin.context.clone(),
        Some(read.origin.server.clone()),
        Known::Value(read.read_at),
        Some(env!("CARGO_PKG_VERSION").to_string()),
    )];
    let incomplete: Vec<IncompleteInput> = read
        .missing
        .into_iter()
        .map(|m| IncompleteInput {
            resource: m.resource,
            reason: m.reason,
        })
        .collect();
    let part = LivePart {
        provenance,
        name: Some(context.unwrap_or_else(|| read.name.clone())),
        objects: read.objects,
        unread: Unread::default(),
        incomplete,
    };
    (source, part)
}

/// The API source for one context.
pub fn cluster_source(
    kubeconfig: Option<PathBuf>,
    context: Option<String>,
    timeouts: Timeouts,
) -> ClusterSource {
    crate::live::kube::register_kubeconfig_secrets(kubeconfig.as_deref());
    ClusterSource {
        kubeconfig,
        context,
        request_timeout: timeouts.request,
        timeout: timeouts.total,
        page_size: PAGE_SIZE,
    }
}

/// What the renders of one run share: the render cache (`check` renders base and head through
/// one, so what is identical at both renders once) and the fetcher (a chart both use is fetched
/// once), whose policy is the applied configuration's `render.remote`.
pub struct RenderRun {
    pub cache: RenderCache,
    pub fetcher: Arc<remote::Fetcher>,
}

impl RenderRun {
    pub fn new(cfg: &Config, spec: &RepoSpec) -> RenderRun {
        RenderRun {
            cache: RenderCache::new(),
            fetcher: Arc::new(remote::Fetcher::new(&cfg.render.remote, &spec.remote)),
        }
    }
}

/// The desired state at the spec's ref (or the working tree). `live` objects, when given, lend
/// their Namespace labels to tenancy.
pub fn desired_state(spec: &RepoSpec, cfg: &Config, live: &[Object]) -> Result<Desired> {
    desired_state_cached(spec, cfg, live, &RenderRun::new(cfg, spec))
}

/// [`desired_state`], sharing the cache and fetcher of `run` with other renders of the same run.
/// What the ref's kustomizations name remotely is fetched and mounted first; the charts its apps
/// name are fetched as the apps are followed.
pub fn desired_state_cached(
    spec: &RepoSpec,
    cfg: &Config,
    live: &[Object],
    run: &RenderRun,
) -> Result<Desired> {
    let repo = spec.path.as_path();
    if !repo.is_dir() {
        return Err(Error::NotADirectory(repo.to_path_buf()));
    }
    let mut tree =
        Tree::open(repo, spec.git_ref.as_deref()).map_err(|source| Error::Repository {
            path: repo.to_path_buf(),
            source,
        })?;
    let remote = remote::Remote::new(
        run.fetcher.clone(),
        spec.remote.offline,
        spec.base_hosts.clone(),
        &cfg.render.remote.allow,
    );
    remote::bases::mount(&mut tree, &remote);
    let start = discover::plan(&tree, &cfg.render, &cfg.clusters, &spec.repo_urls);
    let tools = Tools::detect(spec.render_timeout);
    let mut renderer = Renderer::new(&tree, &tools, &run.cache);
    let mut rendered = follow::render_all(start, &mut renderer, &remote);
    pick_cluster(&mut rendered, spec, !live.is_empty())?;
    let mut d = desired(&rendered, cfg, live)?;
    d.source_hosts = remote.hosts();
    Ok(d)
}

/// Keeps the part of the desired state that belongs to the cluster this run is about: the one
/// `--cluster` names (which must exist), else the scope's when the repository has a cluster of
/// that name, else the repository's only one. A live state is one cluster, so comparing it with a
/// repository that drives several needs to know which.
fn pick_cluster(
    rendered: &mut crate::desired::Rendered,
    spec: &RepoSpec,
    compared_with_live: bool,
) -> Result<()> {
    let clusters = rendered.clusters();
    let list = || clusters.iter().cloned().collect::<Vec<_>>().join(", ");
    match (&spec.cluster, &spec.cluster_hint) {
        (Some(c), _) => {
            if !clusters.contains(c) {
                return Err(Error::Usage(format!(
                    "--cluster {c}: the repository ({}) {}",
                    rendered.label,
                    if clusters.is_empty() {
                        "names no clusters: no Flux root under clusters/<name>/, no Argo CD \
                         destination, nothing under clusters: in .gpuledger.yaml"
                            .to_string()
                    } else {
                        format!("drives {} only", list())
                    }
                )));
            }
            rendered.keep_cluster(c);
        }
        (None, Some(h)) if clusters.contains(h) => rendered.keep_cluster(h),
        _ if clusters.len() == 1 => {
            rendered.cluster = clusters.first().cloned();
        }
        _ if compared_with_live && clusters.len() > 1 => {
            return Err(Error::Usage(format!(
                "the repository ({}) drives {} clusters ({}) and a live state is one cluster: pass \
                 --cluster NAME, or name the context or snapshot of each cluster under clusters: \
                 in .gpuledger.yaml",
                rendered.label,
                clusters.len(),
                list()
            )));
        }
        _ => {}
    }
    Ok(())
}

/// Completes `--cluster` and the live source from `clusters:` in the configuration: a context or
/// snapshot that a configured cluster names picks that cluster, and a cluster picked without a
/// live source is read from its configured context or snapshot.
pub fn cluster_live(spec: &mut RepoSpec, live: &mut LiveSpec, cfg: &Config) {
    match (&spec.cluster, &mut *live) {
        (
            Some(name),
            LiveSpec::Clusters {
                kubeconfig: None,
                contexts,
                ..
            },
        ) if contexts.is_empty() => {
            if let Some(c) = cfg.clusters.get(name) {
                if let Some(s) = &c.snapshot {
                    *live = LiveSpec::Snapshots(vec![s.clone()]);
                } else if let Some(ctx) = &c.context {
                    contexts.push(ctx.clone());
                }
            }
        }
        (None, LiveSpec::Snapshots(files)) => {
            spec.cluster = cfg
                .clusters
                .iter()
                .find(|(_, c)| c.snapshot.as_ref().is_some_and(|s| files.contains(s)))
                .map(|(n, _)| n.clone());
        }
        (None, LiveSpec::Clusters { contexts, .. })
        | (None, LiveSpec::Watched(WatchedFleet { contexts, .. })) => {
            spec.cluster = cfg
                .clusters
                .iter()
                .find(|(_, c)| c.context.as_ref().is_some_and(|x| contexts.contains(x)))
                .map(|(n, _)| n.clone());
        }
        _ => {}
    }
}

/// A repository in which nothing renders is an error that says where gpuledger looked, never
/// "everything is unmanaged" or an empty table (wrong `--repo`, a subdirectory, a missing ref).
pub fn ensure_rendered(d: &Desired, spec: &RepoSpec) -> Result<()> {
    if d.apps.is_empty() {
        return Err(Error::NothingToRender {
            dir: std::fs::canonicalize(&spec.path).unwrap_or_else(|_| spec.path.clone()),
            at: d.at.clone(),
        });
    }
    Ok(())
}

/// GPU activity from Prometheus, or why it is unknown (never an error: `used` is then unknown).
pub async fn metrics(spec: Option<&MetricsSpec>, cfg: &Config) -> Metrics {
    let Some(m) = spec else {
        return Metrics::NotConfigured;
    };
    let src = PromSource {
        url: m.url.clone(),
        bearer_token: m.token.clone(),
        window: m.window,
        timeout: m.timeout,
        cluster_selector: cfg.metrics.cluster_selector.clone(),
    };
    match gpu_activity(&src).await {
        Ok(read) => Metrics::Activity {
            read,
            threshold: cfg.metrics.busy_threshold,
            source: format!(
                "{} (DCGM, {}s window, busy above {:.0}% activity)",
                m.url.split('@').next_back().unwrap_or(&m.url),
                m.window.as_secs(),
                cfg.metrics.busy_threshold * 100.0
            ),
        },
        Err(e) => Metrics::Failed(e.to_string()),
    }
}

/// What did not render (failed, or not rendered: then what it declares is unknown), for the exit
/// code and a note.
pub fn render_failures(d: &Desired) -> Vec<String> {
    d.apps
        .iter()
        .filter(|a| a.unknown())
        .map(|a| match a.status {
            crate::report::AppStatus::NotRendered => {
                format!("{} {} (not rendered)", a.kind, a.name)
            }
            _ => format!("{} {}", a.kind, a.name),
        })
        .chain(d.problems.iter().cloned())
        .collect()
}
