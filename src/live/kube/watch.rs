//! A cluster kept current by watching it, for `gpuledger serve`: each served resource is listed
//! once (by [`super::list`], so the pages are checked as a one-off read's are), then watched from
//! the list's resourceVersion with bookmarks, and the objects live in a store the pipeline reads
//! as it would read a list ([`Watched::read`]): the same lean objects, in the same order, with the
//! same missing resources. API load follows the change, not the size of the fleet — what
//! kube-state-metrics does with client-go's reflectors.
//!
//! The watch follows kube-apiserver's rules (kubernetes.io/docs/reference/using-api/api-concepts,
//! restated in /work/shared/reference/remote-dra-watch.md §3): the resume point is the
//! resourceVersion of the last event or bookmark; a watch that ends (its `timeoutSeconds`, a
//! dropped connection) resumes there; a 410 (`Expired`, or `Gone` from older servers), as an
//! ERROR event in the stream or as the answer, drops the resource's objects and lists it again
//! (client-go tools/cache/reflector.go `isExpiredError`). kube's own `watch` request and event
//! types carry the wire format; kube::runtime's `watcher` is not used: its initial list has no
//! duplicate, loop or bounds checks and holds every object as a `DynamicObject`, where this one
//! keeps the checked lean objects.
//!
//! A resource that may be listed but not watched (an RBAC role from before `serve` watched: `get`
//! and `list` only) is listed again every `poll` instead; one that may not be listed is missing
//! (the report says so) and is tried again every `poll` (at most [`MAX_BACKOFF`] apart), as a role
//! may be fixed while serving. A watch that ends in an error lists its resource again, with
//! backoff; each resource's state (synced, failing, refused, gone) is its own ([`super::health`]),
//! and what it says is the current answer's, never an earlier one's.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt as _;
use kube::Client;
use kube::api::{Api, ApiResource, DynamicObject, WatchEvent, WatchParams};

use super::client::{client, client_reading};
use super::discover::discover_counted;
use super::error::KubeError;
use super::health::{FRESH, Health, ResourceSync, Sync, short_cause};
use super::list::list;
use super::request::Failure;
use super::types::{ClusterRead, ClusterSource, Missing, Origin, Progress, RESOURCES, Resource};
use crate::k8s::object::Object;
use crate::k8s::read::read_page;
use crate::util::date::Timestamp;

/// What a watch asks the server for: it ends the stream after this, and the watch resumes (kube's
/// watcher's default, below the server's 5-minute cap on `timeoutSeconds`).
const WATCH_SECONDS: u32 = 290;
/// A watch silent past its timeout and this much is a dead connection: resume.
const SILENCE_MARGIN: Duration = Duration::from_secs(30);
/// Waits before trying again after a failure, growing up to [`MAX_BACKOFF`].
const BACKOFF: [Duration; 6] = [
    Duration::from_millis(500),
    Duration::from_secs(1),
    Duration::from_secs(2),
    Duration::from_secs(4),
    Duration::from_secs(8),
    Duration::from_secs(16),
];
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// API requests made since the store started, by verb (`gpuledger_exporter_api_requests_total`).
#[derive(Debug, Default)]
pub struct Requests {
    pub lists: AtomicU64,
    pub watches: AtomicU64,
}

/// One resource in the store.
#[derive(Default)]
struct Held {
    /// By (namespace, name): the order a list comes in.
    objects: BTreeMap<(String, String), Object>,
    /// Listed at least once (complete or not).
    listed: bool,
    /// Why the resource is (partly) unread, when it is.
    missing: Option<String>,
    /// Why its first list failed, when it did and nothing was listed since.
    failed: Option<String>,
    /// Why the resource is not being followed right now (the API server cannot be reached, a
    /// list again failed): its objects may be stale, so a read fails until a list or a watch
    /// succeeds again.
    broken: Option<String>,
    /// Whether its objects are current, and why not.
    health: Health,
}

struct Shared {
    name: String,
    origin: Origin,
    started: Timestamp,
    /// By position in [`RESOURCES`].
    held: Mutex<BTreeMap<usize, (Resource, Held)>>,
    /// Missing at discovery (forbidden groups).
    discovery_missing: Vec<Missing>,
    /// Bumped at every change of the store.
    changes: tokio::sync::watch::Sender<u64>,
    requests: Requests,
    /// How often a resource that cannot be watched is listed.
    poll: Duration,
}

/// A cluster's objects, kept current by list and watch. Cloning shares the store.
#[derive(Clone)]
pub struct Watched {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Watched {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Watched({})", self.shared.name)
    }
}

impl PartialEq for Watched {
    fn eq(&self, other: &Watched) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }
}

/// Starts watching the cluster `src` names: discovery now, then one task per served resource on
/// the current runtime. `poll` is how often a resource that cannot be watched is listed again.
pub async fn watch_cluster(src: ClusterSource, poll: Duration) -> Result<Watched, KubeError> {
    let (lister, name, origin) = client(&src).await?;
    let (watcher, _, _) = client_reading(&src, None).await?;
    let progress = Progress::default();
    let (served, discovery_missing) =
        discover_counted(&lister, &name, src.request_timeout, &progress).await?;
    let mut held = BTreeMap::new();
    for (res, _) in served.values() {
        let at = RESOURCES
            .iter()
            .position(|r| r == res)
            .unwrap_or(usize::MAX);
        held.insert(at, (*res, Held::default()));
    }
    let shared = Arc::new(Shared {
        name: name.clone(),
        origin,
        started: Timestamp::now(),
        held: Mutex::new(held),
        discovery_missing,
        changes: tokio::sync::watch::channel(0).0,
        requests: Requests::default(),
        poll,
    });
    let src = Arc::new(src);
    let label: Arc<str> = Arc::from(name.as_str());
    for (res, gv) in served.into_values() {
        let follow = Follow {
            shared: shared.clone(),
            lister: lister.clone(),
            watcher: watcher.clone(),
            res,
            gv,
            src: src.clone(),
            label: label.clone(),
            poll,
        };
        tokio::spawn(follow.run());
    }
    Ok(Watched { shared })
}

impl Watched {
    /// The store as a read of the cluster, once every resource has been listed (or failed to
    /// be) — within the source's overall timeout from the start. A resource whose first list
    /// failed fails the read, as it fails a one-off read; so does one no longer followed (its
    /// watch broke and cannot start again): a stale store is never served as a fresh read.
    pub async fn read(&self, timeout: Duration) -> Result<ClusterRead, KubeError> {
        let mut changes = self.shared.changes.subscribe();
        let wait = async {
            loop {
                if let Some(read) = self.try_read() {
                    return read;
                }
                if changes.changed().await.is_err() {
                    return self
                        .try_read()
                        .unwrap_or_else(|| Err(self.timed_out(timeout)));
                }
            }
        };
        tokio::time::timeout(timeout, wait)
            .await
            .unwrap_or_else(|_| Err(self.timed_out(timeout)))
    }

    fn timed_out(&self, timeout: Duration) -> KubeError {
        KubeError::Timeout {
            cluster: self.shared.name.clone(),
            seconds: timeout.as_secs(),
        }
    }

    /// The read, when every resource has been listed; `None` while some have not.
    fn try_read(&self) -> Option<Result<ClusterRead, KubeError>> {
        let held = self.shared.held.lock().unwrap_or_else(|e| e.into_inner());
        let mut missing = self.shared.discovery_missing.clone();
        let mut objects = Vec::new();
        for (res, h) in held.values() {
            if let Some(why) = h.failed.as_ref().or(h.broken.as_ref()) {
                return Some(Err(KubeError::List {
                    cluster: self.shared.name.clone(),
                    resource: res.label(),
                    reason: why.clone(),
                }));
            }
            if !h.listed && h.missing.is_none() {
                return None;
            }
            if let Some(why) = &h.missing {
                missing.push(Missing {
                    resource: res.label(),
                    reason: why.clone(),
                });
            }
            objects.extend(h.objects.values().cloned());
        }
        missing.sort_by(|a, b| a.resource.cmp(&b.resource));
        Some(Ok(ClusterRead {
            name: self.shared.name.clone(),
            origin: self.shared.origin.clone(),
            read_at: Timestamp::now(),
            objects,
            missing,
        }))
    }

    /// Bumped at every change of the store: a refresh waits on it.
    pub fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.shared.changes.subscribe()
    }

    /// The API requests made so far.
    pub fn requests(&self) -> &Requests {
        &self.shared.requests
    }

    /// When the store started.
    pub fn started(&self) -> Timestamp {
        self.shared.started
    }

    /// Each served resource's sync state, in [`RESOURCES`] order. One that may be listed but not
    /// watched is confirmed every poll: it stays synced while its lists come.
    pub fn sync(&self) -> Vec<ResourceSync> {
        let fresh = FRESH.max(self.shared.poll + SILENCE_MARGIN);
        let held = self.shared.held.lock().unwrap_or_else(|e| e.into_inner());
        held.values()
            .map(|(res, h)| ResourceSync {
                resource: res.label(),
                synced: h.health.synced(fresh),
                age: h.health.age(),
            })
            .collect()
    }

    /// The cluster's name, as its reads name it.
    pub fn name(&self) -> &str {
        &self.shared.name
    }
}

/// The task that keeps one resource current.
struct Follow {
    shared: Arc<Shared>,
    lister: Client,
    watcher: Client,
    res: Resource,
    gv: String,
    src: Arc<ClusterSource>,
    label: Arc<str>,
    poll: Duration,
}

/// How a watch ended.
enum Ended {
    /// Resume from the version reached.
    Resume,
    /// 410 (or 404: the kind is gone): list again.
    Expired,
    /// Watching is forbidden (or not offered): list again every `poll`.
    CannotWatch(String),
    /// Another failure: wait, then list again.
    Failed(String),
}

/// How a list ended.
enum Listed {
    /// Listed: the version to watch from, when the list gave one.
    Ok(Option<String>),
    /// Refused (401/403) or gone (404): try again every `poll`.
    Unreadable,
    /// Failed (unreachable, timeout, 5xx): try again with backoff.
    Failed,
}

impl Follow {
    /// Changes the resource's entry in the store, and says the store changed.
    fn with<T>(&self, f: impl FnOnce(&mut Held) -> T) -> T {
        let out = self.with_quietly(f);
        self.shared.changes.send_modify(|n| *n += 1);
        out
    }

    fn with_quietly<T>(&self, f: impl FnOnce(&mut Held) -> T) -> T {
        let mut held = self.shared.held.lock().unwrap_or_else(|e| e.into_inner());
        let at = RESOURCES
            .iter()
            .position(|r| *r == self.res)
            .unwrap_or(usize::MAX);
        let h = &mut held
            .entry(at)
            .or_insert_with(|| (self.res, Held::default()))
            .1;
        f(h)
    }

    async fn run(self) {
        let mut failures = 0usize;
        // The last watch was refused: the list after it comes at once (a role that lost the
        // verb shows now, not a poll later), and the next watch a poll after that list.
        let mut refused_watch = false;
        loop {
            let version = match self.list().await {
                Listed::Ok(v) => {
                    failures = 0;
                    v
                }
                Listed::Unreadable => {
                    failures = 0;
                    tokio::time::sleep(self.poll.min(MAX_BACKOFF)).await;
                    continue;
                }
                Listed::Failed => {
                    failures += 1;
                    tokio::time::sleep(backoff(failures)).await;
                    continue;
                }
            };
            let Some(mut version) = version else {
                failures = 0;
                tokio::time::sleep(self.poll).await;
                continue;
            };
            if std::mem::take(&mut refused_watch) {
                tokio::time::sleep(self.poll).await;
            }
            loop {
                match self.watch(&mut version).await {
                    Ended::Resume => failures = 0,
                    Ended::Expired => break,
                    Ended::CannotWatch(why) => {
                        tracing::debug!(resource = %self.res.label(), %why, "listing every poll");
                        refused_watch = true;
                        break;
                    }
                    Ended::Failed(why) => {
                        let cause = short_cause(&why);
                        let line = format!("watch ended ({cause}); relisting with backoff");
                        self.with(|h| {
                            h.broken = Some(why.clone());
                            h.health.set(
                                Sync::Failing(cause),
                                &self.label,
                                &self.res.label(),
                                &line,
                            );
                        });
                        failures += 1;
                        tracing::debug!(resource = %self.res.label(), %why, "listing again");
                        tokio::time::sleep(backoff(failures)).await;
                        break;
                    }
                }
            }
        }
    }

    /// Marks the resource's objects current (an event, a bookmark, an accepted watch).
    fn confirm(&self) {
        self.with_quietly(|h| {
            h.health.confirm();
            h.health.catch_up(&self.label, &self.res.label());
        });
    }

    /// Lists the resource into the store, which says why when it fails.
    async fn list(&self) -> Listed {
        self.shared.requests.lists.fetch_add(1, Ordering::Relaxed);
        let progress = Arc::new(Progress::default());
        let listed = list(
            self.lister.clone(),
            self.res,
            self.gv.clone(),
            self.src.clone(),
            progress,
            self.label.clone(),
        )
        .await;
        let (cluster, label) = (&*self.label, self.res.label());
        match listed {
            Ok(l) => {
                let version = l.resource_version.clone();
                self.with(|h| {
                    h.health.set(Sync::Synced, cluster, &label, "synced again");
                    h.objects = l
                        .objects
                        .into_iter()
                        .map(|o| ((o.namespace().to_string(), o.meta.name.clone()), o))
                        .collect();
                    h.listed = true;
                    h.missing = l.incomplete;
                    h.failed = None;
                    h.broken = None;
                });
                Listed::Ok(version)
            }
            Err(Failure::Forbidden(msg)) => {
                let why =
                    format!("forbidden: the RBAC verb `list` on `{label}` is missing ({msg})");
                self.refused(403, why, "forbidden (403): its figures are unknown");
                Listed::Unreadable
            }
            Err(Failure::Fatal(e)) if e.contains(": 401 ") => {
                let why = format!("unauthorized: the credentials are refused ({e})");
                self.refused(401, why, "unauthorized (401): its figures are unknown");
                Listed::Unreadable
            }
            Err(Failure::NotFound) => {
                // Not served after all (a CRD removed): nothing to read, as a one-off read.
                self.with(|h| {
                    h.health.set(
                        Sync::Gone,
                        cluster,
                        &label,
                        "not served (404): none exist, its figures are 0 until it is served again",
                    );
                    h.objects.clear();
                    h.listed = true;
                    h.missing = None;
                    h.failed = None;
                    h.broken = None;
                });
                Listed::Unreadable
            }
            Err(Failure::Expired(e) | Failure::Retryable(e) | Failure::Fatal(e)) => {
                tracing::debug!(resource = %label, error = %e, "list failed");
                let cause = short_cause(&e);
                let line = format!("list failed ({cause}); retrying with backoff");
                // Before a first list, the read fails as a one-off read would; after one, the
                // last state is kept while the list is tried again.
                self.with(|h| {
                    h.health.set(Sync::Failing(cause), cluster, &label, &line);
                    if h.listed {
                        h.broken = Some(e);
                    } else {
                        h.failed = Some(e);
                    }
                });
                Listed::Failed
            }
        }
    }

    /// The list was refused: the resource's objects are unknown (missing from the read, no
    /// earlier error kept), at once.
    fn refused(&self, code: u16, why: String, line: &str) {
        self.with(|h| {
            h.health
                .set(Sync::Refused(code), &self.label, &self.res.label(), line);
            h.objects.clear();
            h.missing = Some(why);
            h.failed = None;
            h.broken = None;
        });
    }

    /// One watch from `version`, applying its events to the store and moving `version` on.
    async fn watch(&self, version: &mut String) -> Ended {
        let ar = ApiResource {
            group: self.res.group.to_string(),
            version: self.gv.rsplit('/').next().unwrap_or_default().to_string(),
            api_version: self.gv.clone(),
            kind: String::new(),
            plural: self.res.plural.to_string(),
        };
        let api: Api<DynamicObject> = Api::all_with(self.watcher.clone(), &ar);
        // Bookmarks are on by default (`allowWatchBookmarks=true`).
        let params = WatchParams::default().timeout(WATCH_SECONDS);
        self.shared.requests.watches.fetch_add(1, Ordering::Relaxed);
        let stream = match api.watch(&params, version).await {
            Ok(s) => {
                self.confirm();
                if self.with_quietly(|h| h.broken.take().is_some()) {
                    self.shared.changes.send_modify(|n| *n += 1);
                }
                s
            }
            // 410, or 404: the kind is no longer served (the list says so).
            Err(kube::Error::Api(s)) if is_expired(s.code, &s.reason) || s.code == 404 => {
                return Ended::Expired;
            }
            Err(kube::Error::Api(s)) if matches!(s.code, 403 | 405) => {
                return Ended::CannotWatch(format!("{} {}", s.code, s.message));
            }
            Err(e) => return Ended::Failed(crate::util::net::explain(&e)),
        };
        let mut stream = std::pin::pin!(stream);
        let silence = Duration::from_secs(u64::from(WATCH_SECONDS)) + SILENCE_MARGIN;
        loop {
            let event = match tokio::time::timeout(silence, stream.next()).await {
                Err(_) => return Ended::Failed("the watch fell silent".into()),
                Ok(None) => return Ended::Resume,
                Ok(Some(Err(e))) => return Ended::Failed(crate::util::net::explain(&e)),
                Ok(Some(Ok(e))) => e,
            };
            match event {
                WatchEvent::Added(o) | WatchEvent::Modified(o) => {
                    if let Some(v) = o.metadata.resource_version.clone() {
                        *version = v;
                    }
                    match self.object(&o) {
                        Ok(obj) => self.with(|h| {
                            let key = (obj.namespace().to_string(), obj.meta.name.clone());
                            h.objects.insert(key, obj);
                            h.health.confirm();
                        }),
                        // An object the reader refuses is one a list would have failed on: list
                        // again, and the store says what the list says.
                        Err(why) => return Ended::Failed(why),
                    }
                }
                WatchEvent::Deleted(o) => {
                    if let Some(v) = o.metadata.resource_version.clone() {
                        *version = v;
                    }
                    let key = (
                        o.metadata.namespace.clone().unwrap_or_default(),
                        o.metadata.name.clone().unwrap_or_default(),
                    );
                    self.with(|h| {
                        h.health.confirm();
                        h.objects.remove(&key)
                    });
                }
                WatchEvent::Bookmark(b) => {
                    *version = b.metadata.resource_version;
                    self.confirm();
                }
                WatchEvent::Error(s) if is_expired(s.code, &s.reason) => return Ended::Expired,
                WatchEvent::Error(s) => return Ended::Failed(format!("{} {}", s.code, s.message)),
            }
        }
    }

    /// A watched object as the lean object a list page gives, read by the same reader.
    fn object(&self, o: &DynamicObject) -> Result<Object, String> {
        let text = serde_json::to_string(o).map_err(|e| e.to_string())?;
        let what = format!("{}: {}", self.label, self.res.label());
        let (objects, _) = read_page(&text, &what).map_err(|e| e.to_string())?;
        let mut objects = crate::workload::checked(objects).map_err(|e| e.to_string())?;
        objects
            .pop()
            .ok_or_else(|| format!("{what}: a watch event without an object"))
    }
}

/// 410 Expired (or `Gone`, from servers before 1.16 — client-go `isExpiredError`).
fn is_expired(code: u16, reason: &str) -> bool {
    code == 410 || reason == "Expired" || reason == "Gone"
}

fn backoff(failures: usize) -> Duration {
    let at = failures.saturating_sub(1);
    BACKOFF.get(at).copied().unwrap_or(MAX_BACKOFF)
}

/// The clusters `serve` keeps current: each context (`None`: the current one) with its store,
/// and how long a read may wait for the stores' first lists.
#[derive(Debug, Clone, PartialEq)]
pub struct WatchedFleet {
    /// The contexts asked for (empty: the current one), as a cluster read names them.
    pub contexts: Vec<String>,
    pub clusters: Vec<(Option<String>, Watched)>,
    pub timeout: Duration,
}
