//! A read-only Kubernetes API emulator for tests: it serves snapshot files (`kubectl get -o yaml`
//! or `-o json` output, multi-document YAML, `List`s) over plain HTTP the way kube-apiserver does,
//! so clients (the `kube` crate, the real `kubectl`) run unchanged against it. It answers legacy
//! discovery (`/api`, `/api/v1`, `/apis`, `/apis/<group>`, `/apis/<group>/<version>`, `/version`);
//! lists and gets of the built-in resources the project reads plus every group/version/kind in the
//! snapshot (an object only under its own `apiVersion` unless `convert_versions`; `secrets`
//! never), as typed lists whose items carry no `apiVersion`/`kind` (as the real server writes
//! them), sorted by namespace/name; `limit`/`continue` pagination (optionally capped by a page
//! size); equality label and field selectors; `meta.k8s.io/v1` `Table` (Name, Age) and
//! `PartialObjectMetadata` responses; watches, with bookmarks, resourceVersions and 410 Expired,
//! and changes made while it serves (kube_emulator_watch.rs); and errors as `Status` bodies: 404,
//! 403 for resources marked forbidden (still discovered, as with RBAC), 401 for resources whose
//! credentials a fault refuses (`/emulator/unauthorize`), 405 for writes, 410 for a bad
//! `continue` token, injected 503s (with `Retry-After: 0`) and latency, and the list faults of a
//! server that breaks pagination ([`ListFault`]: pages that repeat items, a continue token that
//! loops, tokens that expire). Aggregated discovery and
//! OpenAPI are not served (plain JSON / 404), so clients fall back to legacy discovery, as they do
//! with older servers. It is independent of the gpuledger library so that it cannot share its
//! bugs. `Emulator::start` runs it on a runtime in its own thread, so sync tests can use it;
//! dropping the handle stops it and deletes its kubeconfig.
#![allow(dead_code)] // the tests and the example each use part of the API

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::convert::Infallible;
use std::fmt;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response};
use serde_json::{Value, json};

#[path = "kube_emulator_watch.rs"]
mod watch;

/// What to serve and which faults to inject.
#[derive(Clone, Debug, Default)]
pub struct EmulatorOptions {
    /// Snapshot files: YAML (multi-document) or JSON (one or more values); `*List`s are unpacked.
    pub snapshots: Vec<PathBuf>,
    /// Port on 127.0.0.1; 0 picks a free one.
    pub port: u16,
    /// Caps the `limit` of list requests (lists without `limit` are never paginated, as in k8s).
    pub page_size: Option<usize>,
    /// Resources answered with 403: `plural` (any group) or `plural.group` (`pods`, `jobs.batch`).
    pub forbidden: Vec<String>,
    /// Delay before every response.
    pub latency: Duration,
    /// The first N list requests of each resource (group/version/plural) fail with 503.
    pub fail_first: u32,
    /// Extra served `group/version`s (with the group's kinds), even without objects.
    pub extra_versions: Vec<String>,
    /// Serve every object of a kind under each served version of that kind (`apiVersion`
    /// rewritten), as a real CRD with several served versions does. Off: only under its own.
    pub convert_versions: bool,
    /// Print every request (`GET /api/v1/pods?limit=500 -> 200`) on stderr.
    pub log_to_stderr: bool,
    /// Write every object's keys in alphabetical order, as `kubectl get -o json` does (a `List`'s
    /// `items` before its `kind`). Off: as kube-apiserver writes them, `kind`, `apiVersion` and
    /// `metadata` first (its Go structs' field order), so a client that streams a list by its kind
    /// is exercised both ways.
    pub alphabetical_keys: bool,
    /// A pagination fault on the lists of one resource (`plural`, any group).
    pub list_fault: Option<(String, ListFault)>,
    /// How often a watch that allows bookmarks gets one; zero: every second.
    pub bookmark_interval: Duration,
}

/// How a broken (or compacted) server paginates a resource's list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListFault {
    /// The first `lists` lists (from their first page) start each page but the first one item
    /// early: the previous page's last item comes again (as a list stitched from two snapshots).
    RepeatItems { lists: u32 },
    /// From the second page on, each page hands back the token it was asked with: the same page,
    /// the same token, forever.
    LoopSameToken,
    /// As `LoopSameToken`, but every token is new (a counter in it): only the content loops.
    LoopFreshTokens,
    /// The first `times` continued requests answer 410 Expired (etcd compacted the list's
    /// resourceVersion), as kube-apiserver does.
    Expire { times: u32 },
}

impl EmulatorOptions {
    pub fn snapshot(path: impl Into<PathBuf>) -> EmulatorOptions {
        let snapshots = vec![path.into()];
        EmulatorOptions {
            snapshots,
            ..EmulatorOptions::default()
        }
    }
}

/// One served request, as the server saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestRecord {
    pub method: String,
    /// Path and query, as sent (`/api/v1/pods?limit=7&continue=...`).
    pub target: String,
    /// The `Accept` header (a Table, `PartialObjectMetadataList`, plain JSON, ...).
    pub accept: String,
    pub status: u16,
}

impl RequestRecord {
    pub fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or_default()
    }

    /// A decoded query parameter.
    pub fn query(&self, key: &str) -> Option<String> {
        let q = self.target.split_once('?')?.1;
        let mut pairs = form_urlencoded::parse(q.as_bytes());
        pairs.find(|(k, _)| k == key).map(|(_, v)| v.into_owned())
    }
}

impl fmt::Display for RequestRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} -> {}", self.method, self.target, self.status)
    }
}

/// A running emulator. Dropping it stops the server and deletes the kubeconfig.
pub struct Emulator {
    addr: SocketAddr,
    dir: tempfile::TempDir,
    kubeconfig: PathBuf,
    log: Arc<Mutex<Vec<RequestRecord>>>,
    state: Arc<State>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Emulator {
    /// Starts the emulator; panics (failing the test) if a snapshot cannot be read.
    pub fn start(opts: EmulatorOptions) -> Emulator {
        Emulator::try_start(opts).unwrap_or_else(|e| panic!("kube emulator: {e}"))
    }

    pub fn try_start(opts: EmulatorOptions) -> Result<Emulator, String> {
        let listener = std::net::TcpListener::bind(("127.0.0.1", opts.port))
            .map_err(|e| format!("bind 127.0.0.1:{}: {e}", opts.port))?;
        listener.set_nonblocking(true).map_err(|e| e.to_string())?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        let log = Arc::new(Mutex::new(Vec::new()));
        let state = Arc::new(State::new(opts, addr, log.clone())?);
        let served = state.clone();
        let dir = tempfile::Builder::new().prefix("kube-emulator").tempdir();
        let dir = dir.map_err(|e| e.to_string())?;
        let kubeconfig = dir.path().join("kubeconfig");
        std::fs::write(&kubeconfig, kubeconfig_yaml(&format!("http://{addr}")))
            .map_err(|e| format!("write {}: {e}", kubeconfig.display()))?;
        let (stop, stopped) = tokio::sync::oneshot::channel();
        let thread = std::thread::Builder::new()
            .name("kube-emulator".into())
            .spawn(move || {
                let rt = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(2)
                    .enable_all()
                    .build()
                    .expect("tokio runtime");
                rt.block_on(serve(listener, served, stopped));
                // Dropping the runtime cancels the connection tasks still open.
            })
            .map_err(|e| e.to_string())?;
        let (stop, thread) = (Some(stop), Some(thread));
        Ok(Emulator {
            addr,
            dir,
            kubeconfig,
            log,
            state,
            stop,
            thread,
        })
    }

    /// `http://127.0.0.1:<port>`
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// A kubeconfig: cluster, context and user `emulator`, bearer token `emulator-token`.
    pub fn kubeconfig_path(&self) -> &Path {
        &self.kubeconfig
    }

    /// The handle's temporary directory (holds the kubeconfig; a place for a kubectl cache).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Every request served so far, in order.
    pub fn requests(&self) -> Vec<RequestRecord> {
        self.log.lock().unwrap().clone()
    }

    pub fn clear_requests(&self) {
        self.log.lock().unwrap().clear();
    }
}

impl Drop for Emulator {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn kubeconfig_yaml(server: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: emulator\n  cluster:\n    \
         server: {server}\ncontexts:\n- name: emulator\n  context:\n    cluster: emulator\n    \
         user: emulator\n    namespace: default\ncurrent-context: emulator\nusers:\n- name: \
         emulator\n  user:\n    token: emulator-token\n"
    )
}

async fn serve(
    listener: std::net::TcpListener,
    state: Arc<State>,
    mut stop: tokio::sync::oneshot::Receiver<()>,
) {
    let listener = tokio::net::TcpListener::from_std(listener).expect("tokio listener");
    loop {
        let (stream, _) = tokio::select! {
            _ = &mut stop => return,
            accepted = listener.accept() => match accepted {
                Ok(conn) => conn,
                Err(_) => continue,
            },
        };
        let state = state.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| {
                let state = state.clone();
                async move { Ok::<_, Infallible>(state.handle(req).await) }
            });
            let io = hyper_util::rt::TokioIo::new(stream);
            let conn = hyper::server::conn::http1::Builder::new().serve_connection(io, service);
            let _ = conn.await;
        });
    }
}

/// Kinds the emulator knows, one a line: `group versions Kind plural scope shortNames [all]`,
/// scope `N`amespaced or `C`luster, `-` for none. Kinds with versions are always served there (the
/// built-ins the project reads); those with `-` only when a snapshot or `extra_versions` has them.
/// Plurals, scopes, short names and the `all` category as the upstream types and CRDs declare them.
const KINDS: &str = "\
core v1 Namespace namespaces C ns
core v1 Node nodes C no
core v1 Pod pods N po all
core v1 Service services N svc all
apps v1 Deployment deployments N deploy all
apps v1 ReplicaSet replicasets N rs all
apps v1 StatefulSet statefulsets N sts all
batch v1 CronJob cronjobs N cj all
batch v1 Job jobs N - all
autoscaling v2,v1 HorizontalPodAutoscaler horizontalpodautoscalers N hpa all
networking.k8s.io v1 Ingress ingresses N ing
networking.k8s.io v1 IngressClass ingressclasses C -
core - ConfigMap configmaps N cm
core - Endpoints endpoints N ep
core - Event events N ev
core - LimitRange limitranges N limits
core - PersistentVolume persistentvolumes C pv
core - PersistentVolumeClaim persistentvolumeclaims N pvc
core - ResourceQuota resourcequotas N quota
core - ServiceAccount serviceaccounts N sa
apps - DaemonSet daemonsets N ds all
networking.k8s.io - NetworkPolicy networkpolicies N netpol
policy - PodDisruptionBudget poddisruptionbudgets N pdb
scheduling.k8s.io - PriorityClass priorityclasses C pc
apiextensions.k8s.io - CustomResourceDefinition customresourcedefinitions C crd,crds
nvidia.com - DynamoGraphDeployment dynamographdeployments N -
nvidia.com - DynamoComponentDeployment dynamocomponentdeployments N -
leaderworkerset.x-k8s.io - LeaderWorkerSet leaderworkersets N lws
serving.kserve.io - InferenceService inferenceservices N isvc
serving.kserve.io - ServingRuntime servingruntimes N -
serving.kserve.io - ClusterServingRuntime clusterservingruntimes C -
gateway.networking.k8s.io - Gateway gateways N gtw
gateway.networking.k8s.io - GatewayClass gatewayclasses C gc
gateway.networking.k8s.io - HTTPRoute httproutes N -
gateway.networking.k8s.io - GRPCRoute grpcroutes N -
argoproj.io - Application applications N app,apps
argoproj.io - ApplicationSet applicationsets N appset,appsets
argoproj.io - AppProject appprojects N appproj,appprojs
ray.io - RayCluster rayclusters N -
resource.k8s.io - ResourceClaim resourceclaims N -
resource.k8s.io - ResourceClaimTemplate resourceclaimtemplates N -
resource.k8s.io - ResourceSlice resourceslices C -
resource.k8s.io - DeviceClass deviceclasses C -
ray.io - RayJob rayjobs N -
kueue.x-k8s.io - ClusterQueue clusterqueues C cq
kueue.x-k8s.io - LocalQueue localqueues N queue,queues,lq
kueue.x-k8s.io - Cohort cohorts C co
kueue.x-k8s.io - ResourceFlavor resourceflavors C flavor,flavors,rf
kueue.x-k8s.io - Workload workloads N kwl,kueueworkload,kueueworkloads
scheduling.run.ai - Queue queues C -
scheduling.run.ai - PodGroup podgroups N pg
ray.io - RayService rayservices N -
";

/// Group order in `/apis`: built-in groups first, like the real server, then the rest by name.
const GROUP_ORDER: &[&str] = &["apps", "autoscaling", "batch", "networking.k8s.io"];

/// The fields of a `KINDS` line.
fn known_kinds() -> impl Iterator<Item = [&'static str; 7]> {
    KINDS.lines().map(|line| {
        let mut f = ["-"; 7];
        line.split_whitespace()
            .zip(f.iter_mut())
            .for_each(|(s, d)| *d = s);
        if f[0] == "core" {
            f[0] = "";
        }
        f
    })
}

fn list_field(f: &str) -> Vec<String> {
    if f == "-" {
        Vec::new()
    } else {
        f.split(',').map(str::to_owned).collect()
    }
}

/// apimachinery's `UnsafeGuessKindToResource`: lowercase, then `s`→`ses`, `y`→`ies`, else `+s`.
fn guess_plural(kind: &str) -> String {
    let k = kind.to_lowercase();
    match k.strip_suffix('y') {
        _ if k.ends_with('s') => format!("{k}es"),
        Some(stem) => format!("{stem}ies"),
        None => format!("{k}s"),
    }
}

/// Kubernetes version priority: GA > beta > alpha, higher numbers first; others rank lowest.
fn version_rank(v: &str) -> (u8, u32, u32) {
    let rest = v.strip_prefix('v').unwrap_or("?");
    let digits = rest.chars().take_while(char::is_ascii_digit).count();
    let (major, tail) = (rest[..digits].parse::<u32>(), &rest[digits..]);
    let (tier, minor) = match tail {
        "" => (3, Ok(0)),
        _ if tail.starts_with("beta") => (2, tail[4..].parse::<u32>()),
        _ if tail.starts_with("alpha") => (1, tail[5..].parse::<u32>()),
        _ => (0, Ok(0)),
    };
    match (major, minor) {
        (Ok(major), Ok(minor)) if tier > 0 => (tier, major, minor),
        _ => (0, 0, 0),
    }
}

/// A string field, or "".
fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key].as_str().unwrap_or_default()
}

fn split_api_version(av: &str) -> (&str, &str) {
    av.split_once('/').unwrap_or(("", av))
}

struct Resource {
    group: String,
    version: String,
    kind: String,
    plural: String,
    namespaced: bool,
    short_names: Vec<String>,
    all: bool,
    /// Full objects by (namespace, name), the order the real server lists them in.
    objects: BTreeMap<(String, String), Value>,
}

impl Resource {
    fn api_version(&self) -> String {
        match self.group.as_str() {
            "" => self.version.clone(),
            g => format!("{g}/{}", self.version),
        }
    }

    /// `plural` or `plural.group`, as in Status messages.
    fn qualified(&self) -> String {
        match self.group.as_str() {
            "" => self.plural.clone(),
            g => format!("{}.{g}", self.plural),
        }
    }

    fn discovery(&self) -> Value {
        let mut r = json!({
            "name": self.plural, "singularName": self.kind.to_lowercase(),
            "namespaced": self.namespaced, "kind": self.kind, "verbs": ["get", "list", "watch"],
        });
        if !self.short_names.is_empty() {
            r["shortNames"] = json!(self.short_names);
        }
        if self.all {
            r["categories"] = json!(["all"]);
        }
        r
    }
}

type Resources = BTreeMap<(String, String, String), Resource>;

/// The resource for (group, version, kind), from `KINDS` or guessed, created when missing.
fn resource_for<'a>(
    rs: &'a mut Resources,
    g: &str,
    v: &str,
    kind: &str,
    ns: bool,
) -> &'a mut Resource {
    let known = known_kinds().find(|f| f[0] == g && f[2] == kind);
    let plural = known.map_or_else(|| guess_plural(kind), |f| f[3].to_owned());
    rs.entry((g.into(), v.into(), plural.clone()))
        .or_insert_with(|| Resource {
            group: g.into(),
            version: v.into(),
            kind: kind.into(),
            plural,
            namespaced: known.map_or(ns, |f| f[4] == "N"),
            short_names: known.map_or_else(Vec::new, |f| list_field(f[5])),
            all: known.is_some_and(|f| f[6] == "all"),
            objects: BTreeMap::new(),
        })
}

/// Reads a snapshot file into objects, unpacking `List`s (typed lists lend their items a kind).
pub fn read_snapshot(path: &Path) -> Result<Vec<Value>, String> {
    let err = |e: &dyn fmt::Display| format!("{}: {e}", path.display());
    let text = std::fs::read_to_string(path).map_err(|e| err(&e))?;
    let docs: Vec<Value> = if text.trim_start().starts_with(['{', '[']) {
        let stream = serde_json::Deserializer::from_str(&text).into_iter::<Value>();
        stream.collect::<Result<_, _>>().map_err(|e| err(&e))?
    } else {
        let len = text.len();
        let options = serde_saphyr::options! {
            budget: serde_saphyr::budget! {
                max_events: len.saturating_mul(2).max(1_000_000),
                max_nodes: len.max(250_000),
                max_documents: len.max(1_024),
                max_total_scalar_bytes: len.max(64 << 20),
            },
        };
        serde_saphyr::from_multiple_with_options::<Value>(&text, options).map_err(|e| err(&e))?
    };
    let mut out = Vec::new();
    for doc in docs {
        flatten(doc, None, &mut out);
    }
    Ok(out)
}

fn flatten(mut doc: Value, list: Option<(&str, &str)>, out: &mut Vec<Value>) {
    if let Value::Array(items) = doc {
        return items.into_iter().for_each(|d| flatten(d, None, out));
    }
    let Value::Object(o) = &mut doc else { return };
    if let Some((av, kind)) = list {
        o.entry("apiVersion").or_insert_with(|| av.into());
        o.entry("kind").or_insert_with(|| kind.into());
    }
    let (kind, av) = (
        text(&doc, "kind").to_owned(),
        text(&doc, "apiVersion").to_owned(),
    );
    match (kind.strip_suffix("List"), doc.get_mut("items")) {
        (Some(item_kind), Some(Value::Array(items))) => {
            let typed = (!item_kind.is_empty()).then_some((av.as_str(), item_kind));
            std::mem::take(items)
                .into_iter()
                .for_each(|i| flatten(i, typed, out));
        }
        _ => out.push(doc),
    }
}

/// What changes while the emulator serves, behind one lock.
struct Data {
    /// By (group, version, plural).
    resources: Resources,
    /// The current resourceVersion: lists carry it, every change increments it.
    rv: u64,
    /// The changes watches from an older resourceVersion are replayed from, oldest first.
    history: std::collections::VecDeque<Arc<watch::Change>>,
    /// Changes at or below this resourceVersion are forgotten (compacted): a watch from an older
    /// version is answered 410 Expired.
    floor: u64,
}

struct State {
    /// The objects, the resourceVersion and the history of changes watches are served from.
    data: Mutex<Data>,
    /// Every change, as it happens, to the open watches (sent while `data` is locked).
    events: tokio::sync::broadcast::Sender<Arc<watch::Change>>,
    /// Bumped to end every open watch (as an API server restart would).
    watch_generation: tokio::sync::watch::Sender<u64>,
    opts: EmulatorOptions,
    addr: SocketAddr,
    /// Makes continue tokens of another emulator invalid here.
    instance: String,
    failures: Mutex<HashMap<String, u32>>,
    /// Faults a test turns on and off while serving (kube_emulator_watch.rs, `/emulator/…`).
    faults: Mutex<watch::Faults>,
    /// For the resource of `list_fault`: lists started, tokens handed out, 410s sent.
    fault_counts: Mutex<(u32, u64, u32)>,
    log: Arc<Mutex<Vec<RequestRecord>>>,
}

/// What a handler needs from the request besides its path.
struct Req {
    query: HashMap<String, String>,
    accept: String,
}

impl Req {
    /// A non-empty query parameter.
    fn q(&self, key: &str) -> Option<&str> {
        self.query
            .get(key)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }

    /// Whether the client's preferred media type (kubectl lists a Table first, then plain JSON)
    /// asks for `what`.
    fn wants(&self, what: &str) -> bool {
        self.accept
            .split(',')
            .next()
            .is_some_and(|a| a.contains(what))
    }
}

/// A response: status, JSON body, and whether to add `Retry-After: 0`.
struct Reply(u16, Value, bool);

impl Reply {
    fn ok(body: Value) -> Reply {
        Reply(200, body, false)
    }

    fn status(code: u16, reason: &str, message: &str, details: Value) -> Reply {
        let body = json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": message, "reason": reason, "details": details, "code": code,
        });
        Reply(code, body, code == 503)
    }

    fn not_found() -> Reply {
        let msg = "the server could not find the requested resource";
        Reply::status(404, "NotFound", msg, json!({}))
    }

    fn method_not_allowed() -> Reply {
        let msg = "the server does not allow this method on the requested resource";
        Reply::status(405, "MethodNotAllowed", msg, json!({}))
    }
}

impl State {
    fn new(
        opts: EmulatorOptions,
        addr: SocketAddr,
        log: Arc<Mutex<Vec<RequestRecord>>>,
    ) -> Result<State, String> {
        let mut resources = Resources::new();
        for f in known_kinds() {
            for v in list_field(f[1]) {
                resource_for(&mut resources, f[0], &v, f[2], true);
            }
        }
        let mut by_gvk: BTreeMap<(String, String, String), Vec<Value>> = BTreeMap::new();
        let mut max_rv = 0u64;
        for path in &opts.snapshots {
            for obj in read_snapshot(path)? {
                let (av, kind, meta) = (
                    text(&obj, "apiVersion"),
                    text(&obj, "kind"),
                    &obj["metadata"],
                );
                if av.is_empty() || kind.is_empty() || text(meta, "name").is_empty() {
                    let p = path.display();
                    return Err(format!("{p}: an object without apiVersion, kind or name"));
                }
                let (g, v) = split_api_version(av);
                if g.is_empty() && kind == "Secret" {
                    continue; // never serve secrets
                }
                max_rv = max_rv.max(text(meta, "resourceVersion").parse().unwrap_or(0));
                let key = (g.to_owned(), v.to_owned(), kind.to_owned());
                by_gvk.entry(key).or_default().push(obj);
            }
        }
        let group_kinds: BTreeSet<(String, String)> = by_gvk
            .keys()
            .map(|(g, _, k)| (g.clone(), k.clone()))
            .collect();
        for ((g, v, kind), objs) in by_gvk {
            let has_ns = objs.iter().any(|o| o["metadata"]["namespace"].is_string());
            let r = resource_for(&mut resources, &g, &v, &kind, has_ns);
            for obj in objs {
                let ns = if r.namespaced {
                    text(&obj["metadata"], "namespace")
                } else {
                    ""
                };
                let key = (ns.to_owned(), text(&obj["metadata"], "name").to_owned());
                r.objects.insert(key, obj); // a later copy replaces an earlier one
            }
        }
        for gv in &opts.extra_versions {
            let (g, v) = split_api_version(gv);
            let mut kinds: BTreeSet<String> = group_kinds
                .iter()
                .filter(|k| k.0 == g)
                .map(|k| k.1.clone())
                .collect();
            kinds.extend(known_kinds().filter(|f| f[0] == g).map(|f| f[2].to_owned()));
            for kind in kinds {
                resource_for(&mut resources, g, v, &kind, true);
            }
        }
        if opts.convert_versions {
            let mut all = Vec::new();
            for r in resources.values() {
                let (g, kind) = (&r.group, &r.kind);
                all.extend(
                    r.objects
                        .iter()
                        .map(|(k, o)| (g.clone(), kind.clone(), k.clone(), o.clone())),
                );
            }
            for (g, kind, key, mut obj) in all {
                for r in resources
                    .values_mut()
                    .filter(|r| r.group == g && r.kind == kind)
                {
                    obj["apiVersion"] = r.api_version().into();
                    r.objects.entry(key.clone()).or_insert_with(|| obj.clone());
                }
            }
        }
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let rv = if max_rv > 0 { max_rv + 1 } else { 12345 };
        Ok(State {
            data: Mutex::new(Data {
                resources,
                rv,
                history: std::collections::VecDeque::new(),
                floor: 0,
            }),
            events: tokio::sync::broadcast::channel(watch::CHANNEL).0,
            watch_generation: tokio::sync::watch::channel(0).0,
            addr,
            instance: format!("{:x}", nanos ^ u128::from(addr.port())),
            failures: Mutex::new(HashMap::new()),
            faults: Mutex::new(watch::Faults::default()),
            fault_counts: Mutex::new((0, 0, 0)),
            log,
            opts,
        })
    }

    async fn handle(self: Arc<Self>, req: Request<Incoming>) -> Response<watch::Body> {
        use http_body_util::BodyExt as _;
        if !self.opts.latency.is_zero() {
            tokio::time::sleep(self.opts.latency).await;
        }
        let (parts, body) = req.into_parts();
        let (uri, method) = (&parts.uri, parts.method.as_str().to_owned());
        let target = uri.path_and_query().map_or("/", |p| p.as_str()).to_owned();
        let accept = parts.headers.get("accept").and_then(|a| a.to_str().ok());
        let query = form_urlencoded::parse(uri.query().unwrap_or("").as_bytes()).into_owned();
        let r = Req {
            query: query.collect(),
            accept: accept.unwrap_or_default().to_owned(),
        };
        let answer = match method.as_str() {
            "GET" => match self.watch(uri.path(), &r) {
                Some(watch) => watch,
                None => watch::Answer::Reply(self.route(uri.path(), &r)),
            },
            "POST" if uri.path().starts_with("/emulator/") => {
                let bytes = body.collect().await.map(|b| b.to_bytes());
                let bytes = bytes.unwrap_or_default();
                watch::Answer::Reply(self.control(uri.path(), &bytes))
            }
            _ => {
                // Read what the client sends before refusing it: a reply while it still writes
                // would close the connection under it (a broken pipe instead of the 405).
                let _ = body.collect().await;
                watch::Answer::Reply(Reply::method_not_allowed())
            }
        };
        let status = match &answer {
            watch::Answer::Reply(Reply(status, ..)) => *status,
            watch::Answer::Stream(_) => 200,
        };
        let record = RequestRecord {
            method,
            target,
            accept: r.accept,
            status,
        };
        if self.opts.log_to_stderr {
            eprintln!("{record}");
        }
        self.log.lock().unwrap().push(record);
        let mut resp = Response::builder().status(status);
        resp = resp.header("Content-Type", "application/json");
        resp = resp.header("Cache-Control", "no-cache, private");
        let body = match answer {
            watch::Answer::Stream(rx) => watch::Body::stream(rx),
            watch::Answer::Reply(Reply(_, body, retry)) => {
                if retry {
                    resp = resp.header("Retry-After", "0");
                }
                watch::Body::full(Bytes::from(self.encode(&body)))
            }
        };
        resp.body(body).expect("response")
    }

    /// A value as this emulator writes JSON ([`EmulatorOptions::alphabetical_keys`]).
    fn encode(&self, v: &Value) -> String {
        if self.opts.alphabetical_keys {
            v.to_string()
        } else {
            api_server_order(v)
        }
    }

    fn route(&self, path: &str, req: &Req) -> Reply {
        let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
        let d = self.data.lock().unwrap();
        let rs = &d.resources;
        match segs.as_slice() {
            ["version"] => Reply::ok(version_info()),
            ["api"] => Reply::ok(json!({
                "kind": "APIVersions", "versions": ["v1"],
                "serverAddressByClientCIDRs": [
                    {"clientCIDR": "0.0.0.0/0", "serverAddress": self.addr.to_string()},
                ],
            })),
            ["apis"] => {
                let groups = groups(rs);
                Reply::ok(json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}))
            }
            ["api", "v1"] => resource_list(rs, "", "v1"),
            ["apis", g] => match groups(rs).into_iter().find(|x| x["name"] == *g) {
                Some(mut group) => {
                    group["kind"] = "APIGroup".into();
                    group["apiVersion"] = "v1".into();
                    Reply::ok(group)
                }
                None => Reply::not_found(),
            },
            ["apis", g, v] => resource_list(rs, g, v),
            ["api", "v1", rest @ ..] => self.resource(&d, "", "v1", rest, req),
            ["apis", g, v, rest @ ..] => self.resource(&d, g, v, rest, req),
            _ => Reply::not_found(), // /openapi/v2, /openapi/v3, /healthz, ...
        }
    }
}

/// Every non-core group with its versions, preferred (highest priority) first.
fn groups(rs: &Resources) -> Vec<Value> {
    let mut groups: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (g, v, _) in rs.keys().filter(|k| !k.0.is_empty()) {
        groups.entry(g).or_default().insert(v);
    }
    let mut names: Vec<&str> = groups.keys().copied().collect();
    names.sort_by_key(|g| (GROUP_ORDER.iter().position(|o| o == g).unwrap_or(99), *g));
    let mut out = Vec::new();
    for g in names {
        let mut versions: Vec<&str> = groups[g].iter().copied().collect();
        versions.sort_by(|a, b| version_rank(b).cmp(&version_rank(a)).then(a.cmp(b)));
        let gv = |v: &&str| json!({"groupVersion": format!("{g}/{v}"), "version": v});
        let versions: Vec<Value> = versions.iter().map(gv).collect();
        out.push(json!({"name": g, "versions": versions, "preferredVersion": versions[0]}));
    }
    out
}

fn resource_list(rs: &Resources, g: &str, v: &str) -> Reply {
    let rs: Vec<&Resource> = rs
        .values()
        .filter(|r| r.group == g && r.version == v)
        .collect();
    let Some(first) = rs.first() else {
        return Reply::not_found();
    };
    let resources: Vec<Value> = rs.iter().map(|r| r.discovery()).collect();
    Reply::ok(json!({
        "kind": "APIResourceList", "apiVersion": "v1", "groupVersion": first.api_version(),
        "resources": resources,
    }))
}

impl State {
    /// The resource a path names (`[namespaces, ns,] plural[, name]` after the group/version),
    /// its namespace and name; 404 for what is not served, 403 for a forbidden resource (`verb`
    /// in the message, or `get`/`list` by the path when `None`).
    fn lookup<'a, 'p>(
        &self,
        d: &'a Data,
        g: &str,
        v: &str,
        rest: &[&'p str],
        verb: Option<&str>,
    ) -> Result<(&'a Resource, Option<&'p str>, Option<&'p str>), Reply> {
        let (ns, plural, name) = match *rest {
            ["namespaces", ns, plural] => (Some(ns), plural, None),
            ["namespaces", ns, plural, name] => (Some(ns), plural, Some(name)),
            [plural] => (None, plural, None),
            [plural, name] => (None, plural, Some(name)),
            _ => return Err(Reply::not_found()), // subresources
        };
        let key = (g.to_owned(), v.to_owned(), plural.to_owned());
        let Some(r) = d.resources.get(&key) else {
            return Err(Reply::not_found());
        };
        if ns.is_some() && !r.namespaced || name.is_some() && ns.is_none() && r.namespaced {
            return Err(Reply::not_found());
        }
        let faults = self.faults.lock().unwrap();
        let names = |list: &[String]| list.contains(&r.plural) || list.contains(&r.qualified());
        if names(&faults.removed) {
            return Err(Reply::not_found());
        }
        if names(&faults.unauthorized) {
            // kube-apiserver's answer to credentials it refuses.
            return Err(Reply::status(
                401,
                "Unauthorized",
                "Unauthorized",
                json!({}),
            ));
        }
        let f = &self.opts.forbidden;
        let allowed = names(&faults.allowed);
        if !allowed && (names(f) || names(&faults.forbidden)) {
            let by_path = if name.is_some() { "get" } else { "list" };
            return Err(forbidden(r, verb.unwrap_or(by_path), ns, name));
        }
        Ok((r, ns, name))
    }

    fn resource(&self, d: &Data, g: &str, v: &str, rest: &[&str], req: &Req) -> Reply {
        let (r, ns, name) = match self.lookup(d, g, v, rest, None) {
            Ok(found) => found,
            Err(reply) => return reply,
        };
        let plural = r.plural.as_str();
        if let Some(name) = name {
            let key = (ns.unwrap_or_default().to_owned(), name.to_owned());
            let Some(obj) = r.objects.get(&key) else {
                let mut details = json!({"name": name, "kind": plural});
                if !g.is_empty() {
                    details["group"] = g.into();
                }
                let msg = format!("{} \"{name}\" not found", r.qualified());
                return Reply::status(404, "NotFound", &msg, details);
            };
            return Reply::ok(render_one(obj, req));
        }
        let id = format!("{}/{plural}", r.api_version());
        if let Some(reply) = self.faults.lock().unwrap().failing(&id) {
            return reply;
        }
        let mut failures = self.failures.lock().unwrap();
        let n = failures.entry(id.clone()).or_insert(0);
        if *n < self.opts.fail_first {
            *n += 1;
            let msg = format!("injected failure {n} of {} for {id}", self.opts.fail_first);
            let details = json!({"retryAfterSeconds": 0});
            return Reply::status(503, "ServiceUnavailable", &msg, details);
        }
        drop(failures);
        self.list(d, r, ns, req)
    }

    fn list(&self, d: &Data, r: &Resource, ns: Option<&str>, req: &Req) -> Reply {
        let (labels, fields) = (req.q("labelSelector"), req.q("fieldSelector"));
        let mut items = Vec::new();
        for ((obj_ns, _), obj) in &r.objects {
            if ns.is_some_and(|ns| ns != obj_ns) {
                continue;
            }
            let l = labels.map_or(Ok(true), |s| label_match(obj, s));
            match (l, fields.map_or(Ok(true), |s| field_match(obj, s))) {
                (Ok(true), Ok(true)) => items.push(obj),
                (Err(e), _) | (_, Err(e)) => {
                    return Reply::status(400, "BadRequest", &e, json!({}));
                }
                _ => {}
            }
        }
        // The list a continue token belongs to: another resource, namespace or selector is refused.
        let (l, f, ns) = (labels.unwrap_or(""), fields.unwrap_or(""), ns.unwrap_or(""));
        let list_id = format!(
            "{}/{}/{}/{ns}?{l}&{f}",
            self.instance,
            r.api_version(),
            r.plural
        );
        let expired = || {
            let msg = "The provided continue parameter is too old to display a consistent \
                       list result. You can start a new list without the continue parameter.";
            Reply::status(410, "Expired", msg, json!({}))
        };
        let fault = self
            .opts
            .list_fault
            .as_ref()
            .filter(|(plural, _)| *plural == r.plural)
            .map(|(_, f)| *f);
        let mut counts = self.fault_counts.lock().unwrap();
        let continued = req.q("continue");
        if fault.is_some() && continued.is_none() {
            counts.0 += 1;
        }
        if let (Some(ListFault::Expire { times }), Some(_)) = (fault, continued)
            && counts.2 < times
        {
            counts.2 += 1;
            return expired();
        }
        let start = match continued.map(|t| decode_continue(t, &list_id)) {
            None => 0,
            Some(Some(start)) if start <= items.len() => start,
            Some(_) => return expired(),
        };
        // Where this page starts and where the next one does.
        let served_from = match fault {
            Some(ListFault::RepeatItems { lists }) if start > 0 && counts.0 <= lists => start - 1,
            _ => start,
        };
        let limit = req
            .q("limit")
            .and_then(|l| l.parse::<usize>().ok())
            .filter(|&l| l > 0);
        let limit = match (limit, self.opts.page_size) {
            (Some(l), Some(p)) => Some(l.min(p.max(1))),
            (l, _) => l,
        };
        let end = limit.map_or(items.len(), |l| (served_from + l).min(items.len()));
        let next = match fault {
            Some(ListFault::LoopSameToken | ListFault::LoopFreshTokens) if start > 0 => start,
            _ => end,
        };
        let mut meta = json!({"resourceVersion": d.rv.to_string()});
        if end < items.len() {
            let rv = d.rv.to_string();
            let mut token =
                json!({"v": "meta.k8s.io/v1", "rv": rv, "start": next, "list": list_id});
            if fault == Some(ListFault::LoopFreshTokens) {
                counts.1 += 1;
                token["n"] = counts.1.into();
            }
            meta["continue"] = BASE64.encode(token.to_string()).into();
            if labels.is_none() && fields.is_none() {
                meta["remainingItemCount"] = (items.len() - end).into(); // as the real server
            }
        }
        drop(counts);
        let page = &items[served_from..end];
        let (kind, api_version, items): (String, String, Vec<Value>) = if req.wants("as=Table") {
            return Reply::ok(table(page, meta, req));
        } else if req.wants("as=PartialObjectMetadataList") {
            let items = page.iter().map(|o| partial(o)).collect();
            (
                "PartialObjectMetadataList".into(),
                "meta.k8s.io/v1".into(),
                items,
            )
        } else {
            // Typed list items carry no apiVersion/kind on the real server.
            let strip = |o: &&Value| {
                let mut o = (*o).clone();
                o.as_object_mut()
                    .map(|m| (m.remove("apiVersion"), m.remove("kind")));
                o
            };
            (
                format!("{}List", r.kind),
                r.api_version(),
                page.iter().map(strip).collect(),
            )
        };
        Reply::ok(
            json!({"kind": kind, "apiVersion": api_version, "metadata": meta, "items": items}),
        )
    }
}

/// JSON as kube-apiserver writes it: an object's `kind`, `apiVersion` and `metadata` first, then
/// its other keys (Go encodes a struct's fields in declaration order; TypeMeta and ObjectMeta lead
/// every API type), at every depth, so a list's `items` come after its `kind`.
fn api_server_order(v: &Value) -> String {
    let mut out = String::new();
    write_ordered(v, &mut out);
    out
}

fn write_ordered(v: &Value, out: &mut String) {
    match v {
        Value::Object(m) => {
            const FIRST: [&str; 3] = ["kind", "apiVersion", "metadata"];
            out.push('{');
            let keys = FIRST
                .iter()
                .filter_map(|k| m.get_key_value(*k))
                .chain(m.iter().filter(|(k, _)| !FIRST.contains(&k.as_str())));
            for (n, (k, v)) in keys.enumerate() {
                if n > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                write_ordered(v, out);
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (n, v) in a.iter().enumerate() {
                if n > 0 {
                    out.push(',');
                }
                write_ordered(v, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

fn decode_continue(token: &str, list_id: &str) -> Option<usize> {
    let v: Value = serde_json::from_slice(&BASE64.decode(token).ok()?).ok()?;
    let start = v["start"].as_u64().filter(|_| v["list"] == list_id)?;
    usize::try_from(start).ok()
}

fn partial(obj: &Value) -> Value {
    let meta = &obj["metadata"];
    json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": meta})
}

fn render_one(obj: &Value, req: &Req) -> Value {
    if req.wants("as=Table") {
        let meta = json!({"resourceVersion": obj["metadata"]["resourceVersion"]});
        table(&[obj], meta, req)
    } else if req.wants("as=PartialObjectMetadata") {
        partial(obj)
    } else {
        obj.clone()
    }
}

/// A `meta.k8s.io/v1` Table with the columns the server prints for CRDs: Name and Age.
fn table(objs: &[&Value], meta: Value, req: &Req) -> Value {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let mut rows = Vec::new();
    for o in objs {
        let created = parse_rfc3339(text(&o["metadata"], "creationTimestamp"));
        let age = created.map_or_else(|| "<unknown>".into(), |t| human_age(now - t));
        let mut row = json!({"cells": [o["metadata"]["name"], age]});
        match req.q("includeObject") {
            Some("None") => {}
            Some("Object") => row["object"] = (*o).clone(),
            _ => row["object"] = partial(o),
        }
        rows.push(row);
    }
    let column = |name: &str, format: &str, description: &str| {
        let mut c = json!({"name": name, "type": "string", "format": format, "priority": 0});
        c["description"] = description.into();
        c
    };
    let name = "Name must be unique within a namespace.";
    let age = "CreationTimestamp is the server time when this object was created.";
    json!({
        "kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": meta, "rows": rows,
        "columnDefinitions": [column("Name", "name", name), column("Age", "", age)],
    })
}

/// `2024-11-14T09:30:00Z` → Unix seconds (UTC, as the API server writes it).
fn parse_rfc3339(s: &str) -> Option<i64> {
    if s.len() < 20 || s.as_bytes()[10] != b'T' || !s.ends_with('Z') {
        return None;
    }
    let n = |r: std::ops::Range<usize>| s.get(r)?.parse::<i64>().ok();
    let (y, m, d) = (n(0..4)?, n(5..7)?, n(8..10)?);
    let (hh, mm, ss) = (n(11..13)?, n(14..16)?, n(17..19)?);
    // Days from civil (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let days = era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468;
    Some(days * 86_400 + hh * 3600 + mm * 60 + ss)
}

/// kubectl's `duration.HumanDuration`, roughly: `45s`, `3m`, `5h`, `12d`, `2y40d`.
fn human_age(secs: i64) -> String {
    let s = secs.max(0);
    let (m, h, d) = (s / 60, s / 3600, s / 86_400);
    match () {
        _ if s < 120 => format!("{s}s"),
        _ if m < 10 => format!("{m}m{}s", s % 60),
        _ if h < 3 => format!("{m}m"),
        _ if h < 8 => format!("{h}h{}m", m % 60),
        _ if h < 48 => format!("{h}h"),
        _ if h < 192 => format!("{d}d{}h", h % 24),
        _ if d < 365 * 2 => format!("{d}d"),
        _ if d < 365 * 8 => format!("{}y{}d", d / 365, d % 365),
        _ => format!("{}y", d / 365),
    }
}

/// Equality-based label selectors: `a=b`, `a==b`, `a!=b`, `a`, `!a`, comma-separated.
fn label_match(obj: &Value, sel: &str) -> Result<bool, String> {
    let labels = &obj["metadata"]["labels"];
    for term in sel.split(',').map(str::trim) {
        if term.contains('(') {
            return Err(format!(
                "the emulator supports only equality label selectors: {sel}"
            ));
        }
        let ok = if let Some((k, v)) = term.split_once("!=") {
            labels[k.trim()].as_str() != Some(v.trim())
        } else if let Some((k, v)) = term.split_once('=') {
            labels[k.trim()].as_str() == Some(v.trim_start_matches('=').trim())
        } else if let Some(k) = term.strip_prefix('!') {
            labels.get(k.trim()).is_none()
        } else {
            labels.get(term).is_some()
        };
        if !ok {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Field selectors `path=value`, `path==value`, `path!=value` on any dotted path (missing = "").
fn field_match(obj: &Value, sel: &str) -> Result<bool, String> {
    for term in sel.split(',').map(str::trim) {
        let (path, want, eq) = match (term.split_once("!="), term.split_once('=')) {
            (Some((p, v)), _) => (p, v, false),
            (None, Some((p, v))) => (p, v.trim_start_matches('='), true),
            (None, None) => return Err(format!("invalid field selector: {term}")),
        };
        let got = match path.trim().split('.').fold(obj, |v, k| &v[k]) {
            Value::Null => String::new(),
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        if (got == want.trim()) != eq {
            return Ok(false);
        }
    }
    Ok(true)
}

fn version_info() -> Value {
    json!({
        "major": "1", "minor": "33", "gitVersion": "v1.33.0",
        "gitCommit": "0000000000000000000000000000000000000000", "gitTreeState": "clean",
        "buildDate": "2025-04-23T00:00:00Z", "goVersion": "go1.24.2", "compiler": "gc",
        "platform": "linux/amd64",
    })
}

fn forbidden(r: &Resource, verb: &str, ns: Option<&str>, name: Option<&str>) -> Reply {
    let subject = name.map_or(r.qualified(), |n| format!("{} \"{n}\"", r.qualified()));
    let scope = ns.map_or("at the cluster scope".into(), |ns| {
        format!("in the namespace \"{ns}\"")
    });
    let msg = format!(
        "{subject} is forbidden: User \"system:serviceaccount:gpuledger:gpuledger\" cannot {verb} \
         resource \"{}\" in API group \"{}\" {scope}",
        r.plural, r.group
    );
    let mut details = json!({"kind": r.plural});
    if !r.group.is_empty() {
        details["group"] = r.group.clone().into();
    }
    if let Some(n) = name {
        details["name"] = n.into();
    }
    Reply::status(403, "Forbidden", &msg, details)
}
