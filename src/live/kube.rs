//! The live cluster through the Kubernetes API: read-only, concurrent, paginated.
//!
//! gpuledger lists exactly the resources its analyses read ([`RESOURCES`]) — never Secrets — each at
//! the version the API server prefers, so custom resources served in several versions (Dynamo
//! `v1alpha1` and `v1beta1`) are read once. Resources the server does not serve are simply absent.
//! A 403 marks the read incomplete and names the resource and the RBAC verb it needs; everything
//! else is still read. Requests are retried with backoff on 429 and 5xx, each has a timeout, and the
//! whole read has one too. Pages are parsed straight into the same lean [`Object`]s a snapshot file
//! gives, so the analyses cannot tell the sources apart.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use kube::Client;
use kube::config::{KubeConfigOptions, Kubeconfig};
use serde::Deserialize;

use crate::k8s::object::Object;
use crate::k8s::read::{SnapshotMeta, read_page};
use crate::util::date::Timestamp;
use crate::util::retry::{self, Attempt, GaveUp, Schedule};
use crate::util::text::{MAX_MESSAGE_CHARS, line};

/// A resource gpuledger lists: API group (`""` for core) and plural name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resource {
    pub group: &'static str,
    pub plural: &'static str,
    /// Core and built-in resources are always served; the others only where their CRD is installed.
    pub builtin: bool,
}

const fn r(group: &'static str, plural: &'static str, builtin: bool) -> Resource {
    Resource {
        group,
        plural,
        builtin,
    }
}

/// Everything the tool reads from a cluster, and nothing else. `deploy/rbac.yaml` grants exactly
/// `get` and `list` on these (a test keeps the two in step).
pub const RESOURCES: &[Resource] = &[
    r("", "nodes", true),
    r("", "namespaces", true),
    r("", "pods", true),
    r("", "services", true),
    r("apps", "replicasets", true),
    r("apps", "deployments", true),
    r("apps", "statefulsets", true),
    r("batch", "jobs", true),
    r("batch", "cronjobs", true),
    r("networking.k8s.io", "ingresses", true),
    r("networking.k8s.io", "ingressclasses", true),
    r("autoscaling", "horizontalpodautoscalers", true),
    r("nvidia.com", "dynamographdeployments", false),
    r("nvidia.com", "dynamocomponentdeployments", false),
    r("leaderworkerset.x-k8s.io", "leaderworkersets", false),
    r("serving.kserve.io", "inferenceservices", false),
    r("gateway.networking.k8s.io", "gateways", false),
    r("gateway.networking.k8s.io", "httproutes", false),
    r("argoproj.io", "applications", false),
    r("kueue.x-k8s.io", "clusterqueues", false),
    r("kueue.x-k8s.io", "localqueues", false),
    r("kueue.x-k8s.io", "workloads", false),
];

impl Resource {
    pub fn label(&self) -> String {
        if self.group.is_empty() {
            self.plural.to_string()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }
}

/// Where the cluster is and how patient to be with it.
#[derive(Debug, Clone)]
pub struct ClusterSource {
    /// A kubeconfig file; otherwise `KUBECONFIG`, `~/.kube/config`, or the in-cluster config.
    pub kubeconfig: Option<PathBuf>,
    pub context: Option<String>,
    /// Per request.
    pub request_timeout: Duration,
    /// For the whole read.
    pub timeout: Duration,
    pub page_size: u32,
}

/// Progress of a read, shared with whoever shows it.
#[derive(Debug, Default)]
pub struct Progress {
    pub resources_total: AtomicU64,
    pub resources_done: AtomicU64,
    pub objects: AtomicU64,
}

/// A resource that could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Missing {
    /// `pods`, `dynamographdeployments.nvidia.com`
    pub resource: String,
    pub reason: String,
}

/// Where a read went: the kubeconfig context and the API server, without credentials.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// The context named or current in the kubeconfig; `in-cluster` inside a pod; `None` when the
    /// kubeconfig names none.
    pub context: Option<String>,
    /// `https://10.0.0.1:6443`: scheme, host, port and path, never user info or a query.
    pub server: String,
}

/// What was read from one cluster.
#[derive(Debug)]
pub struct ClusterRead {
    /// The context (or `in-cluster`) and the server.
    pub name: String,
    pub origin: Origin,
    /// When the read started (the clock of the machine that read it).
    pub read_at: Timestamp,
    pub objects: Vec<Object>,
    /// Resources that were not read (forbidden): the report is incomplete without them.
    pub missing: Vec<Missing>,
}

async fn client(src: &ClusterSource) -> Result<(Client, String, Origin), String> {
    let options = KubeConfigOptions {
        context: src.context.clone(),
        ..Default::default()
    };
    let (mut config, context) = match &src.kubeconfig {
        Some(path) => {
            let kc = Kubeconfig::read_from(path)
                .map_err(|e| format!("cannot read kubeconfig {}: {e}", path.display()))?;
            known_context(&kc, src.context.as_deref(), &path.display().to_string())?;
            let current = src.context.clone().or_else(|| kc.current_context.clone());
            let config = kube::Config::from_custom_kubeconfig(kc, &options)
                .await
                .map_err(|e| format!("kubeconfig {}: {e}", path.display()))?;
            (config, current)
        }
        None if src.context.is_some() => {
            if no_config_anywhere() {
                return Err(NO_CONFIG.into());
            }
            if let Ok(kc) = Kubeconfig::read() {
                known_context(&kc, src.context.as_deref(), "the kubeconfig")?;
            }
            (
                kube::Config::from_kubeconfig(&options)
                    .await
                    .map_err(|e| format!("kubeconfig: {e}"))?,
                src.context.clone(),
            )
        }
        None => {
            let config = kube::Config::infer().await.map_err(|e| {
                if no_config_anywhere() {
                    NO_CONFIG.to_string()
                } else {
                    format!("no cluster configuration (kubeconfig or in-cluster): {e}")
                }
            })?;
            // `infer` prefers the kubeconfig and falls back to the pod's service account.
            let context = match Kubeconfig::read() {
                Ok(kc) => kc.current_context,
                Err(_) => Some("in-cluster".to_string()),
            };
            (config, context)
        }
    };
    let origin = Origin {
        context,
        server: public_url(&config.cluster_url),
    };
    config.read_timeout = Some(src.request_timeout);
    config.connect_timeout = Some(src.request_timeout);
    let name = format!(
        "{} ({})",
        src.context
            .clone()
            .unwrap_or_else(|| "current context".into()),
        config.cluster_url
    );
    let client =
        Client::try_from(config).map_err(|e| format!("cannot build a Kubernetes client: {e}"))?;
    Ok((client, name, origin))
}

/// The server's URL as it may be written into a report or a snapshot: scheme, host, port and path,
/// never user info (`https://user:pass@host`) or a query that could carry a token.
fn public_url(uri: &http::Uri) -> String {
    let scheme = uri.scheme_str().unwrap_or("https");
    let host = uri.host().unwrap_or("");
    let port = uri.port_u16().map(|p| format!(":{p}")).unwrap_or_default();
    let path = uri.path().trim_end_matches('/');
    format!("{scheme}://{host}{port}{path}")
}

const NO_CONFIG: &str = "no cluster to read: no --kubeconfig, no $KUBECONFIG, no ~/.kube/config, \
and not running in a cluster. Give a kubectl dump with `--snapshot FILE` (`gpuledger snapshot \
--output FILE` writes one on a machine that has cluster access), or a kubeconfig with `--kubeconfig FILE`";

/// True when kube has nothing to infer a cluster from: no `KUBECONFIG`, no `~/.kube/config`, no
/// in-cluster service account environment.
fn no_config_anywhere() -> bool {
    let kubeconfig_env = std::env::var_os("KUBECONFIG").is_some_and(|v| !v.is_empty());
    let home_config = std::env::var_os("HOME")
        .map(|h| PathBuf::from(h).join(".kube/config"))
        .is_some_and(|p| p.exists());
    let in_cluster = std::env::var_os("KUBERNETES_SERVICE_HOST").is_some();
    !kubeconfig_env && !home_config && !in_cluster
}

/// A context that is not in the kubeconfig is named with the ones that are.
fn known_context(kc: &Kubeconfig, context: Option<&str>, file: &str) -> Result<(), String> {
    let Some(wanted) = context else {
        return Ok(());
    };
    let mut names: Vec<&str> = kc.contexts.iter().map(|c| c.name.as_str()).collect();
    if names.contains(&wanted) {
        return Ok(());
    }
    names.sort_unstable();
    Err(if names.is_empty() {
        format!("{file} has no context {wanted:?}: it defines no contexts at all")
    } else {
        format!(
            "{file} has no context {wanted:?}; its contexts: {}",
            names.join(", ")
        )
    })
}

/// Why a request failed, for the retry decision.
enum Failure {
    Forbidden(String),
    NotFound,
    Retryable(String),
    Fatal(String),
}

async fn get(client: &Client, path: &str, timeout: Duration) -> Result<String, Failure> {
    let req = http::Request::get(path)
        .body(Vec::new())
        .map_err(|e| Failure::Fatal(e.to_string()))?;
    match tokio::time::timeout(timeout, client.request_text(req)).await {
        Err(_) => Err(Failure::Retryable(format!(
            "GET {path} timed out after {}s",
            timeout.as_secs_f64()
        ))),
        Ok(Ok(text)) => Ok(text),
        Ok(Err(kube::Error::Api(status))) => {
            // The server's message is quoted into the report: one bounded line, whatever it sent.
            let message = line(&status.message, MAX_MESSAGE_CHARS);
            match status.code {
                403 => Err(Failure::Forbidden(message)),
                404 => Err(Failure::NotFound),
                429 | 500 | 502 | 503 | 504 => Err(Failure::Retryable(format!(
                    "GET {path}: {} {message}",
                    status.code
                ))),
                c => Err(Failure::Fatal(format!("GET {path}: {c} {message}"))),
            }
        }
        Ok(Err(e)) => {
            let text = format!(
                "GET {path}: {}",
                line(&crate::util::net::explain(&e), MAX_MESSAGE_CHARS)
            );
            // A TLS mismatch is a setting, not a passing fault: asking again cannot help.
            match crate::util::net::Cause::of(&e) {
                Some(crate::util::net::Cause::Tls) => Err(Failure::Fatal(text)),
                _ => Err(Failure::Retryable(text)),
            }
        }
    }
}

/// GET with bounded retries and exponential backoff on 429, 5xx, timeouts and connection errors
/// (what [`get`] calls retryable); a GET may always be repeated.
async fn get_retrying(client: &Client, path: &str, timeout: Duration) -> Result<String, Failure> {
    let schedule = Schedule {
        attempts: 5,
        backoff: Duration::from_millis(200),
        max_backoff: Duration::from_secs(5),
        // The API server asks for no waits we read.
        max_wait: Duration::ZERO,
    };
    let outcome = retry::run(
        &schedule,
        |_| async {
            match get(client, path, timeout).await {
                Err(Failure::Retryable(e)) => Attempt::Again {
                    last: e,
                    asked: None,
                },
                other => Attempt::Done(other),
            }
        },
        |attempt, e, _| tracing::debug!(attempt, error = %e, "retrying"),
    )
    .await;
    outcome.unwrap_or_else(|gave_up| {
        let (GaveUp::Exhausted { attempts, last } | GaveUp::TooLong { attempts, last, .. }) =
            gave_up;
        Err(Failure::Fatal(format!(
            "{last} (gave up after {attempts} attempts)"
        )))
    })
}

#[derive(Deserialize)]
struct GroupList {
    #[serde(default)]
    groups: Vec<Group>,
}

#[derive(Deserialize)]
struct Group {
    name: String,
    #[serde(rename = "preferredVersion")]
    preferred: Option<GroupVersion>,
    #[serde(default)]
    versions: Vec<GroupVersion>,
}

#[derive(Deserialize, Clone)]
struct GroupVersion {
    #[serde(rename = "groupVersion")]
    group_version: String,
}

#[derive(Deserialize)]
struct ResourceList {
    #[serde(default)]
    resources: Vec<ApiResource>,
}

#[derive(Deserialize)]
struct ApiResource {
    name: String,
}

/// [`discover`], with the failure naming the cluster and the resource count shown as progress.
async fn discover_counted(
    client: &Client,
    name: &str,
    timeout: Duration,
    progress: &Progress,
) -> Result<(BTreeMap<&'static str, (Resource, String)>, Vec<Missing>), String> {
    let (served, missing) = discover(client, timeout)
        .await
        .map_err(|e| format!("{name}: discovery failed: {e}"))?;
    progress
        .resources_total
        .store(crate::util::sum::count(served.len()), Ordering::Relaxed);
    Ok((served, missing))
}

/// The group/version to list each wanted resource at: the server's preferred version of the group
/// when it serves the resource there, else the first served version that does. A group version
/// the server forbids us to discover makes its resources missing (the report says so); any other
/// failure ends the read.
async fn discover(
    client: &Client,
    timeout: Duration,
) -> Result<(BTreeMap<&'static str, (Resource, String)>, Vec<Missing>), String> {
    let message = |f: Failure| match f {
        Failure::Forbidden(m) | Failure::Retryable(m) | Failure::Fatal(m) => m,
        Failure::NotFound => "not found".into(),
    };
    let groups: GroupList = serde_json::from_str(
        &get_retrying(client, "/apis", timeout)
            .await
            .map_err(message)?,
    )
    .map_err(|e| format!("discovery /apis: {e}"))?;
    let mut out = BTreeMap::new();
    let mut missing = Vec::new();
    // Each group version is fetched once, however many of its resources we want.
    let mut lists: BTreeMap<String, Option<Vec<String>>> = BTreeMap::new();
    for res in RESOURCES {
        if res.group.is_empty() {
            out.insert(res.plural, (*res, "v1".to_string()));
            continue;
        }
        let Some(g) = groups.groups.iter().find(|g| g.name == res.group) else {
            continue;
        };
        let mut candidates: Vec<GroupVersion> = g.preferred.iter().cloned().collect();
        candidates.extend(g.versions.iter().cloned());
        for gv in candidates {
            let gv = gv.group_version;
            if !lists.contains_key(&gv) {
                let path = format!("/apis/{gv}");
                let names = match get_retrying(client, &path, timeout).await {
                    Ok(text) => serde_json::from_str::<ResourceList>(&text)
                        .map(|l| l.resources.into_iter().map(|r| r.name).collect())
                        .map_err(|e| format!("discovery {path}: {e}"))?,
                    Err(Failure::NotFound) => Vec::new(),
                    Err(Failure::Forbidden(m)) => {
                        missing.push(Missing {
                            resource: res.label(),
                            reason: format!("forbidden: discovery of {gv} is not allowed ({m})"),
                        });
                        lists.insert(gv.clone(), None);
                        continue;
                    }
                    Err(f) => return Err(format!("discovery {path}: {}", message(f))),
                };
                lists.insert(gv.clone(), Some(names));
            }
            if lists
                .get(&gv)
                .and_then(Option::as_ref)
                .is_some_and(|names| names.iter().any(|n| n == res.plural))
            {
                out.insert(res.plural, (*res, gv));
                break;
            }
        }
    }
    Ok((out, missing))
}

fn list_path(group_version: &str, plural: &str) -> String {
    if group_version == "v1" {
        format!("/api/v1/{plural}")
    } else {
        format!("/apis/{group_version}/{plural}")
    }
}

/// The path of a resource's next page: the first without a token, then `continue=<token>`.
fn page_path(group_version: &str, res: &Resource, page_size: u32, token: Option<&str>) -> String {
    let mut path = format!("{}?limit={page_size}", list_path(group_version, res.plural));
    if let Some(t) = token {
        path.push_str("&continue=");
        path.extend(form_urlencoded::byte_serialize(t.as_bytes()));
    }
    path
}

/// Lists one resource, page by page, pipelined: a page is parsed on a blocking thread while the
/// next one downloads (its `continue` token is read first, without building the page's objects).
async fn list(
    client: Client,
    res: Resource,
    group_version: String,
    src: Arc<ClusterSource>,
    progress: Arc<Progress>,
    label: Arc<str>,
) -> Result<Vec<Object>, Failure> {
    let mut objects = Vec::new();
    let what = format!("{label}: {}", res.label());
    let first = page_path(&group_version, &res, src.page_size, None);
    let mut text = Some(get_retrying(&client, &first, src.request_timeout).await?);
    while let Some(page_text) = text.take() {
        let token = match continue_token(&page_text) {
            Ok(t) => t,
            // The reader's own error says where in the page it broke.
            Err(e) => {
                let why = read_page(&page_text, &what).err().map(|r| r.to_string());
                return Err(Failure::Fatal(format!(
                    "cannot parse {}: {}",
                    res.label(),
                    why.unwrap_or_else(|| e.to_string())
                )));
            }
        };
        let source = what.clone();
        let parse = tokio::task::spawn_blocking(move || {
            let (objects, next) = read_page(&page_text, &source)?;
            Ok::<_, crate::error::InputError>((crate::workload::checked(objects)?, next))
        });
        let fetch = async {
            match &token {
                Some(t) => {
                    let path = page_path(&group_version, &res, src.page_size, Some(t));
                    get_retrying(&client, &path, src.request_timeout)
                        .await
                        .map(Some)
                }
                None => Ok(None),
            }
        };
        let (parsed, fetched) = tokio::join!(parse, fetch);
        let (page, _) = parsed
            .map_err(|e| Failure::Fatal(format!("parsing {} stopped: {e}", res.label())))?
            .map_err(|e| Failure::Fatal(format!("cannot parse {}: {e}", res.label())))?;
        progress
            .objects
            .fetch_add(crate::util::sum::count(page.len()), Ordering::Relaxed);
        objects.extend(page);
        text = fetched?;
    }
    Ok(objects)
}

/// A list's `metadata.continue`, read without building its items.
fn continue_token(text: &str) -> Result<Option<String>, serde_json::Error> {
    #[derive(Deserialize)]
    struct Meta {
        #[serde(rename = "continue", default)]
        token: Option<String>,
    }
    #[derive(Deserialize)]
    struct Head {
        #[serde(default)]
        metadata: Option<Meta>,
    }
    let head: Head = serde_json::from_str(text)?;
    Ok(head
        .metadata
        .and_then(|m| m.token)
        .filter(|t| !t.is_empty()))
}

/// Reads every resource of [`RESOURCES`] the cluster serves.
pub async fn read_cluster(
    src: ClusterSource,
    progress: Arc<Progress>,
) -> Result<ClusterRead, String> {
    let overall = src.timeout;
    let (client, name, origin) = client(&src).await?;
    let read_at = Timestamp::now();
    match tokio::time::timeout(overall, read_inner(client, name.clone(), src, progress)).await {
        Ok(r) => r.map(|(objects, missing)| ClusterRead {
            name,
            origin,
            read_at,
            objects,
            missing,
        }),
        Err(_) => Err(format!(
            "{name}: reading the cluster took longer than --timeout {}s",
            overall.as_secs()
        )),
    }
}

async fn read_inner(
    client: Client,
    name: String,
    src: ClusterSource,
    progress: Arc<Progress>,
) -> Result<(Vec<Object>, Vec<Missing>), String> {
    let (served, mut missing) =
        discover_counted(&client, &name, src.request_timeout, &progress).await?;
    let src = Arc::new(src);
    let label: Arc<str> = Arc::from(name.as_str());
    let mut tasks = tokio::task::JoinSet::new();
    for (_, (res, gv)) in served {
        let (client, src, progress, label) =
            (client.clone(), src.clone(), progress.clone(), label.clone());
        tasks.spawn(async move {
            let r = list(client, res, gv, src, progress.clone(), label).await;
            progress.resources_done.fetch_add(1, Ordering::Relaxed);
            (res, r)
        });
    }
    let mut by_resource: BTreeMap<usize, Vec<Object>> = BTreeMap::new();
    while let Some(joined) = tasks.join_next().await {
        let (res, r) = joined.map_err(|e| format!("a list task failed: {e}"))?;
        let order = RESOURCES
            .iter()
            .position(|x| *x == res)
            .unwrap_or(usize::MAX);
        match r {
            Ok(objs) => {
                by_resource.insert(order, objs);
            }
            Err(Failure::Forbidden(msg)) => missing.push(Missing {
                resource: res.label(),
                reason: format!(
                    "forbidden: the RBAC verb `list` on `{}` is missing ({msg})",
                    res.label()
                ),
            }),
            Err(Failure::NotFound) => {} // not served after all
            Err(Failure::Retryable(e) | Failure::Fatal(e)) => {
                return Err(format!("{name}: listing {}: {e}", res.label()));
            }
        }
    }
    missing.sort_by(|a, b| a.resource.cmp(&b.resource));
    // Objects in the order of RESOURCES, as a snapshot would hold them.
    let objects = by_resource.into_values().flatten().collect();
    Ok((objects, missing))
}

/// What `write_snapshot` wrote.
#[derive(Debug)]
pub struct SnapshotWritten {
    pub name: String,
    /// What the snapshot says about where and when it was read.
    pub meta: SnapshotMeta,
    pub objects: u64,
    pub missing: Vec<Missing>,
}

/// Writes everything [`read_cluster`] would read as one kubectl-compatible `List` (JSON), with
/// `managedFields` and the last-applied annotation stripped, so a snapshot taken anywhere can be
/// analysed anywhere. Items are streamed to `out` page by page. The list's own
/// `metadata.annotations` say where and when it was read ([`SnapshotMeta`]): kubectl ignores a
/// list's metadata when it reads the file back, and a report can say how old its live state is.
pub async fn write_snapshot(
    src: ClusterSource,
    progress: Arc<Progress>,
    out: &mut (dyn std::io::Write + Send),
) -> Result<SnapshotWritten, String> {
    let overall = src.timeout;
    let (client, name, origin) = client(&src).await?;
    let meta = SnapshotMeta {
        context: origin.context,
        server: Some(origin.server),
        read_at: Some(Timestamp::now()),
        read_at_invalid: None,
        version: Some(env!("CARGO_PKG_VERSION").to_string()),
    };
    let work = async {
        let (served, mut missing) =
            discover_counted(&client, &name, src.request_timeout, &progress).await?;
        let io = |e: std::io::Error| format!("cannot write the snapshot: {e}");
        let header = serde_json::json!({"annotations": meta.annotations()});
        out.write_all(b"{\"apiVersion\": \"v1\", \"kind\": \"List\", \"metadata\": ")
            .map_err(io)?;
        serde_json::to_writer(&mut *out, &header).map_err(|e| io(e.into()))?;
        out.write_all(b", \"items\": [\n").map_err(io)?;
        let mut written = 0u64;
        for (_, (res, gv)) in served {
            let mut token: Option<String> = None;
            loop {
                let path = page_path(&gv, &res, src.page_size, token.as_deref());
                let text = match get_retrying(&client, &path, src.request_timeout).await {
                    Ok(t) => t,
                    Err(Failure::Forbidden(msg)) => {
                        missing.push(Missing {
                            resource: res.label(),
                            reason: format!(
                                "forbidden: the RBAC verb `list` on `{}` is missing ({msg})",
                                res.label()
                            ),
                        });
                        break;
                    }
                    Err(Failure::NotFound) => break,
                    Err(Failure::Retryable(e) | Failure::Fatal(e)) => {
                        return Err(format!("{name}: listing {}: {e}", res.label()));
                    }
                };
                let mut page: serde_json::Value = serde_json::from_str(&text)
                    .map_err(|e| format!("{name}: {}: {e}", res.label()))?;
                let api_version = page
                    .get("apiVersion")
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or(&gv)
                    .to_string();
                let kind = page
                    .get("kind")
                    .and_then(serde_json::Value::as_str)
                    .and_then(|k| k.strip_suffix("List"))
                    .unwrap_or("")
                    .to_string();
                let items = match page.get_mut("items").map(serde_json::Value::take) {
                    Some(serde_json::Value::Array(items)) => items,
                    _ => Vec::new(),
                };
                for mut item in items {
                    strip(&mut item, &api_version, &kind);
                    if written > 0 {
                        out.write_all(b",\n").map_err(io)?;
                    }
                    serde_json::to_writer(&mut *out, &item).map_err(|e| io(e.into()))?;
                    written += 1;
                }
                progress.objects.store(written, Ordering::Relaxed);
                token = page
                    .get("metadata")
                    .and_then(|m| m.get("continue"))
                    .and_then(serde_json::Value::as_str)
                    .filter(|c| !c.is_empty())
                    .map(str::to_string);
                if token.is_none() {
                    break;
                }
            }
            progress.resources_done.fetch_add(1, Ordering::Relaxed);
        }
        out.write_all(b"\n]}\n").map_err(io)?;
        out.flush().map_err(io)?;
        missing.sort_by(|a, b| a.resource.cmp(&b.resource));
        Ok(SnapshotWritten {
            name: name.clone(),
            meta: meta.clone(),
            objects: written,
            missing,
        })
    };
    match tokio::time::timeout(overall, work).await {
        Ok(r) => r,
        Err(_) => Err(format!(
            "{name}: reading the cluster took longer than --timeout {}s",
            overall.as_secs()
        )),
    }
}

/// Gives a list item its apiVersion and kind back and drops what only costs bytes.
fn strip(item: &mut serde_json::Value, api_version: &str, kind: &str) {
    let Some(obj) = item.as_object_mut() else {
        return;
    };
    if !obj.contains_key("apiVersion") {
        obj.insert("apiVersion".into(), api_version.into());
    }
    if !obj.contains_key("kind") && !kind.is_empty() {
        obj.insert("kind".into(), kind.into());
    }
    if let Some(meta) = obj.get_mut("metadata").and_then(|m| m.as_object_mut()) {
        meta.remove("managedFields");
        if let Some(a) = meta.get_mut("annotations").and_then(|a| a.as_object_mut()) {
            a.remove("kubectl.kubernetes.io/last-applied-configuration");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::public_url;

    #[test]
    fn the_server_url_never_carries_credentials() {
        let url = |s: &str| public_url(&s.parse::<http::Uri>().unwrap());
        assert_eq!(
            url("https://user:secret@10.0.0.1:6443/?token=x"),
            "https://10.0.0.1:6443"
        );
        assert_eq!(
            url("https://api.example.com/k8s/clusters/c-1/"),
            "https://api.example.com/k8s/clusters/c-1"
        );
        assert_eq!(url("http://127.0.0.1:8080"), "http://127.0.0.1:8080");
    }
}
