//! Watches on the API emulator, as kube-apiserver serves them, and the changes a test makes while
//! it serves.
//!
//! A watch (`?watch=true` or `?watch=1`, or the legacy `/watch/` path) is answered 200 at once and
//! then streams its events over chunked transfer encoding, one JSON object a line,
//! `{"type":"ADDED"|"MODIFIED"|"DELETED"|"BOOKMARK"|"ERROR","object":{…}}`, each flushed as it comes
//! (kubernetes/apiserver pkg/endpoints/handlers/watch.go @24b9d887, `WatchServer.HandleHTTP`; the
//! event is apimachinery's `metav1.WatchEvent`, `type` then `object`). What it sends follows the
//! API concepts page (kubernetes.io/docs/reference/using-api/api-concepts, "Efficient detection of
//! changes", "Watch bookmarks", "Resource versions"; restated in
//! /work/shared/reference/remote-dra-watch.md §3):
//! - no `resourceVersion` (or `"0"`): a synthetic ADDED for every object there is, then changes;
//! - `resourceVersion=N`: the changes after N only, replayed from the history; an N older than
//!   the history keeps (after [`Emulator::compact`], or past [`HISTORY`] changes) is one ERROR
//!   event carrying a `Status` 410 `Expired` "too old resource version: N (M)", inside the 200
//!   stream as the watch cache sends it (kubernetes/apiserver pkg/storage/cacher/cacher.go
//!   `newErrWatcher`, watch_cache_history.go), and the stream ends;
//! - `allowWatchBookmarks=true`: every [`super::EmulatorOptions::bookmark_interval`] a BOOKMARK
//!   whose object holds only its kind, apiVersion and `metadata.resourceVersion`: every change up
//!   to that version has been sent;
//! - `timeoutSeconds`: the stream ends after it, and clients watch again from their last version.
//!
//! Namespace, name, label and field selectors filter the events as they filter lists. Changes
//! come from the test ([`Emulator::apply`], [`Emulator::delete`]) or, from another process (the
//! example binary, scripts/bench.sh), from `POST /emulator/apply` (a JSON object or `List`),
//! `POST /emulator/delete` (an object naming apiVersion, kind, namespace and name),
//! `POST /emulator/compact` and `POST /emulator/end-watches`. Each change takes the next
//! resourceVersion, which lists then carry.
//!
//! Faults turned on and off while serving ([`Faults`]), from the test or by
//! `POST /emulator/<fault>` with `{"resource": "pods"}` (`plural` or `plural.group`): `forbid`
//! (403 on its lists, gets and watches, as a role that loses the verb) and `allow` (undoes it, and
//! a forbidden resource of the options too); `remove` (404 on its lists and watches, as a CRD
//! removed; discovery still names it) and `restore`. `POST /emulator/fail` with
//! `{"status": 500, "seconds": 3}` answers every list and watch with that status for that long.
//! A restart on the same port is a new emulator with `port` set.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use hyper::body::{Bytes, Frame, SizeHint};
use serde_json::{Value, json};
use tokio::sync::{broadcast, mpsc};

use super::{
    Data, Emulator, Reply, Req, State, field_match, flatten, label_match, render_one, resource_for,
    split_api_version, text,
};

/// Changes an open watch may fall behind by before it is ended (the client watches again).
pub(super) const CHANNEL: usize = 4096;
/// Changes kept for watches from an older resourceVersion; older ones are compacted away.
pub(super) const HISTORY: usize = 10_000;
/// Bookmarks when [`super::EmulatorOptions::bookmark_interval`] is zero.
const BOOKMARK_EVERY: Duration = Duration::from_secs(1);

/// Faults turned on and off while serving.
#[derive(Default)]
pub(super) struct Faults {
    pub forbidden: Vec<String>,
    /// Forbidden by the options, allowed since.
    pub allowed: Vec<String>,
    pub removed: Vec<String>,
    /// Answered 401 (the credentials refused for them), until allowed.
    pub unauthorized: Vec<String>,
    /// Lists and watches answer this status until then.
    pub fail: Option<(u16, std::time::Instant)>,
}

impl Faults {
    /// The injected failure of a list or watch of `id`, while one is on.
    pub(super) fn failing(&self, id: &str) -> Option<Reply> {
        let (status, until) = self.fail?;
        (std::time::Instant::now() < until).then(|| {
            let msg = format!("injected {status} for {id}");
            Reply::status(status, "InternalError", &msg, json!({}))
        })
    }

    fn set(&mut self, fault: &str, resource: String) {
        let drop = |list: &mut Vec<String>, r: &str| list.retain(|x| x != r);
        match fault {
            "forbid" => {
                drop(&mut self.allowed, &resource);
                self.forbidden.push(resource);
            }
            "allow" => {
                drop(&mut self.forbidden, &resource);
                drop(&mut self.unauthorized, &resource);
                self.allowed.push(resource);
            }
            "unauthorize" => self.unauthorized.push(resource),
            "remove" => self.removed.push(resource),
            _ => drop(&mut self.removed, &resource),
        }
    }
}

/// One change of one object under one served version.
pub(super) struct Change {
    pub rv: u64,
    /// (group, version, plural)
    pub resource: (String, String, String),
    pub namespace: String,
    pub name: String,
    /// `ADDED`, `MODIFIED` or `DELETED`.
    pub kind: &'static str,
    /// The object after the change (before it, for a deletion).
    pub object: Value,
}

/// An answer: a whole body, or a watch's stream of lines.
pub(super) enum Answer {
    Reply(Reply),
    Stream(mpsc::Receiver<Bytes>),
}

/// A response body: whole (with its length), or streamed chunk by chunk as a watch's events come.
pub(super) struct Body {
    full: Option<Bytes>,
    stream: Option<mpsc::Receiver<Bytes>>,
}

impl Body {
    pub(super) fn full(b: Bytes) -> Body {
        Body {
            full: Some(b),
            stream: None,
        }
    }

    pub(super) fn stream(rx: mpsc::Receiver<Bytes>) -> Body {
        Body {
            full: None,
            stream: Some(rx),
        }
    }
}

impl hyper::body::Body for Body {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = self.get_mut();
        if let Some(b) = this.full.take() {
            return Poll::Ready(Some(Ok(Frame::data(b))));
        }
        match &mut this.stream {
            Some(rx) => rx.poll_recv(cx).map(|b| b.map(|b| Ok(Frame::data(b)))),
            None => Poll::Ready(None),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.full.is_none() && self.stream.is_none()
    }

    fn size_hint(&self) -> SizeHint {
        match (&self.full, &self.stream) {
            (Some(b), None) => SizeHint::with_exact(b.len() as u64),
            (None, None) => SizeHint::with_exact(0),
            _ => SizeHint::default(),
        }
    }
}

/// What one watch sends.
struct Watch {
    resource: (String, String, String),
    kind: String,
    api_version: String,
    namespace: Option<String>,
    name: Option<String>,
    labels: Option<String>,
    fields: Option<String>,
    bookmarks: bool,
    timeout: Option<Duration>,
    req: Req,
}

impl Watch {
    fn matches(&self, namespace: &str, name: &str, obj: &Value) -> bool {
        self.namespace.as_deref().is_none_or(|ns| ns == namespace)
            && self.name.as_deref().is_none_or(|n| n == name)
            && self
                .labels
                .as_deref()
                .is_none_or(|s| label_match(obj, s) == Ok(true))
            && self
                .fields
                .as_deref()
                .is_none_or(|s| field_match(obj, s) == Ok(true))
    }

    fn wants(&self, c: &Change) -> bool {
        c.resource == self.resource && self.matches(&c.namespace, &c.name, &c.object)
    }
}

impl State {
    /// A watch request, answered; `None` when the request is not a watch.
    pub(super) fn watch(self: &Arc<Self>, path: &str, req: &Req) -> Option<Answer> {
        let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
        let (g, v, rest) = match segs.as_slice() {
            ["api", "v1", rest @ ..] => ("", "v1", rest),
            ["apis", g, v, rest @ ..] => (*g, *v, rest),
            _ => return None,
        };
        let (rest, legacy) = match rest {
            ["watch", rest @ ..] => (rest, true),
            _ => (rest, false),
        };
        if rest.is_empty() || !legacy && !matches!(req.q("watch"), Some("true" | "1")) {
            return None;
        }
        Some(self.start_watch(g, v, rest, req))
    }

    fn start_watch(self: &Arc<Self>, g: &str, v: &str, rest: &[&str], req: &Req) -> Answer {
        let d = self.data.lock().unwrap();
        let (r, ns, name) = match self.lookup(&d, g, v, rest, Some("watch")) {
            Ok(found) => found,
            Err(reply) => return Answer::Reply(reply),
        };
        let id = format!("{}/{}", r.api_version(), r.plural);
        if let Some(reply) = self.faults.lock().unwrap().failing(&id) {
            return Answer::Reply(reply);
        }
        let (labels, fields) = (req.q("labelSelector"), req.q("fieldSelector"));
        let probe = json!({});
        let bad = labels.map(|s| label_match(&probe, s)).and_then(Result::err);
        if let Some(e) = bad.or(fields.map(|s| field_match(&probe, s)).and_then(Result::err)) {
            return Answer::Reply(Reply::status(400, "BadRequest", &e, json!({})));
        }
        let w = Watch {
            resource: (g.into(), v.into(), r.plural.clone()),
            kind: r.kind.clone(),
            api_version: r.api_version(),
            namespace: ns.map(str::to_owned),
            name: name.map(str::to_owned),
            labels: labels.map(str::to_owned),
            fields: fields.map(str::to_owned),
            // A Table watch (kubectl's human output) gets no bookmarks, as it asks for none.
            bookmarks: req.q("allowWatchBookmarks") == Some("true") && !req.wants("as=Table"),
            timeout: req
                .q("timeoutSeconds")
                .and_then(|t| t.parse().ok())
                .filter(|&t| t > 0)
                .map(Duration::from_secs),
            req: Req {
                query: req.query.clone(),
                accept: req.accept.clone(),
            },
        };
        let mut first = Vec::new();
        let mut expired = false;
        match req.q("resourceVersion") {
            None | Some("0") => {
                for ((obj_ns, obj_name), obj) in &r.objects {
                    if w.matches(obj_ns, obj_name, obj) {
                        first.push(self.event_line("ADDED", &render_one(obj, &w.req)));
                    }
                }
            }
            Some(rv) => {
                let Ok(from) = rv.parse::<u64>() else {
                    let msg = format!("invalid resource version: {rv}");
                    return Answer::Reply(Reply::status(400, "BadRequest", &msg, json!({})));
                };
                if from < d.floor {
                    let msg = format!("too old resource version: {from} ({})", d.floor);
                    first.push(self.event_line("ERROR", &status_410(&msg)));
                    expired = true;
                } else {
                    for c in d.history.iter().filter(|c| c.rv > from && w.wants(c)) {
                        first.push(self.event_line(c.kind, &render_one(&c.object, &w.req)));
                    }
                }
            }
        }
        // Subscribed under the lock: no change falls between the replay and the stream.
        let events = self.events.subscribe();
        let ends = self.watch_generation.subscribe();
        drop(d);
        let (tx, rx) = mpsc::channel(64);
        let state = self.clone();
        tokio::spawn(async move {
            if let Some(tx) = send_all(tx, first).await
                && !expired
            {
                state.pump(w, events, ends, tx).await;
            }
        });
        Answer::Stream(rx)
    }

    /// Streams the changes a watch wants, and its bookmarks, until its timeout, the client going
    /// away, [`Emulator::end_watches`], or the watch falling [`CHANNEL`] changes behind.
    async fn pump(
        &self,
        w: Watch,
        mut events: broadcast::Receiver<Arc<Change>>,
        mut ends: tokio::sync::watch::Receiver<u64>,
        mut tx: mpsc::Sender<Bytes>,
    ) {
        let deadline = w.timeout.map(|t| tokio::time::Instant::now() + t);
        let every = match self.opts.bookmark_interval {
            Duration::ZERO => BOOKMARK_EVERY,
            d => d,
        };
        let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
        loop {
            let until_deadline = async {
                match deadline {
                    Some(d) => tokio::time::sleep_until(d).await,
                    None => std::future::pending().await,
                }
            };
            let lines = tokio::select! {
                () = until_deadline => return,
                _ = ends.changed() => return,
                () = tx.closed() => return,
                got = events.recv() => match got {
                    Ok(c) if w.wants(&c) => {
                        vec![self.event_line(c.kind, &render_one(&c.object, &w.req))]
                    }
                    Ok(_) => continue,
                    Err(_) => return, // fell behind (or the server stops): the client watches again
                },
                _ = tick.tick(), if w.bookmarks => {
                    // Every change up to the current version was broadcast under the lock: those
                    // still queued for this watch go first, then the bookmark.
                    let mut lines = Vec::new();
                    let d = self.data.lock().unwrap();
                    loop {
                        match events.try_recv() {
                            Ok(c) if w.wants(&c) => {
                                lines.push(self.event_line(c.kind, &render_one(&c.object, &w.req)));
                            }
                            Ok(_) => {}
                            Err(broadcast::error::TryRecvError::Empty) => break,
                            Err(_) => return,
                        }
                    }
                    let rv = d.rv;
                    drop(d);
                    let obj = json!({
                        "kind": w.kind, "apiVersion": w.api_version,
                        "metadata": {"resourceVersion": rv.to_string()},
                    });
                    lines.push(self.event_line("BOOKMARK", &obj));
                    lines
                }
            };
            match send_all(tx, lines).await {
                Some(back) => tx = back,
                None => return,
            }
        }
    }

    /// One event, as a line of the stream: `type` first, as `metav1.WatchEvent` declares it.
    fn event_line(&self, kind: &str, object: &Value) -> Bytes {
        Bytes::from(format!(
            "{{\"type\":\"{kind}\",\"object\":{}}}\n",
            self.encode(object)
        ))
    }

    /// Creates or replaces an object (ADDED or MODIFIED): it takes the next resourceVersion.
    /// With `convert_versions` it changes under every served version of its kind.
    pub(super) fn apply(&self, mut obj: Value) -> Result<u64, String> {
        let (av, kind) = (
            text(&obj, "apiVersion").to_owned(),
            text(&obj, "kind").to_owned(),
        );
        let name = text(&obj["metadata"], "name").to_owned();
        if av.is_empty() || kind.is_empty() || name.is_empty() {
            return Err("an object without apiVersion, kind or name".into());
        }
        let (g, v) = split_api_version(&av);
        if g.is_empty() && kind == "Secret" {
            return Err("the emulator never serves Secrets".into());
        }
        let mut d = self.data.lock().unwrap();
        d.rv += 1;
        let rv = d.rv;
        obj["metadata"]["resourceVersion"] = rv.to_string().into();
        let has_ns = obj["metadata"]["namespace"].is_string();
        let own = resource_for(&mut d.resources, g, v, &kind, has_ns);
        let namespace = if own.namespaced {
            text(&obj["metadata"], "namespace").to_owned()
        } else {
            String::new()
        };
        let own_key = (own.group.clone(), own.version.clone(), own.plural.clone());
        let mut changes = Vec::new();
        for (key, r) in d.resources.iter_mut() {
            let other_version = r.group == g && r.kind == kind && self.opts.convert_versions;
            if *key != own_key && !other_version {
                continue;
            }
            let mut o = obj.clone();
            o["apiVersion"] = r.api_version().into();
            let old = r
                .objects
                .insert((namespace.clone(), name.clone()), o.clone());
            changes.push(Change {
                rv,
                resource: key.clone(),
                namespace: namespace.clone(),
                name: name.clone(),
                kind: if old.is_some() { "MODIFIED" } else { "ADDED" },
                object: o,
            });
        }
        for c in changes {
            self.record(&mut d, c);
        }
        Ok(rv)
    }

    /// Deletes an object (under every version it is served in): the next resourceVersion, or
    /// `None` when there is no such object.
    pub(super) fn delete(
        &self,
        api_version: &str,
        kind: &str,
        ns: &str,
        name: &str,
    ) -> Option<u64> {
        let (g, _) = split_api_version(api_version);
        let mut d = self.data.lock().unwrap();
        let rv = d.rv + 1;
        let mut changes = Vec::new();
        for (key, r) in d.resources.iter_mut() {
            if r.group != g || r.kind != kind {
                continue;
            }
            let ns = if r.namespaced { ns } else { "" };
            if let Some(mut old) = r.objects.remove(&(ns.to_owned(), name.to_owned())) {
                old["metadata"]["resourceVersion"] = rv.to_string().into();
                changes.push(Change {
                    rv,
                    resource: key.clone(),
                    namespace: ns.to_owned(),
                    name: name.to_owned(),
                    kind: "DELETED",
                    object: old,
                });
            }
        }
        if changes.is_empty() {
            return None;
        }
        d.rv = rv;
        for c in changes {
            self.record(&mut d, c);
        }
        Some(rv)
    }

    /// Keeps a change for watches from older versions (forgetting the oldest past [`HISTORY`])
    /// and sends it to the open ones, under the lock.
    fn record(&self, d: &mut Data, c: Change) {
        let c = Arc::new(c);
        d.history.push_back(c.clone());
        while d.history.len() > HISTORY {
            if let Some(old) = d.history.pop_front() {
                d.floor = d.floor.max(old.rv);
            }
        }
        let _ = self.events.send(c); // no watch open: nobody to tell
    }

    /// Forgets the history, as etcd compaction does: a watch from any version before the current
    /// one is answered 410 Expired.
    pub(super) fn compact(&self) {
        let mut d = self.data.lock().unwrap();
        d.floor = d.rv;
        d.history.clear();
    }

    /// `POST /emulator/<what>`: the changes of another process.
    pub(super) fn control(&self, path: &str, body: &[u8]) -> Reply {
        let bad =
            |e: &dyn std::fmt::Display| Reply::status(400, "BadRequest", &e.to_string(), json!({}));
        match path {
            "/emulator/apply" => {
                let doc: Value = match serde_json::from_slice(body) {
                    Ok(v) => v,
                    Err(e) => return bad(&e),
                };
                let mut objects = Vec::new();
                flatten(doc, None, &mut objects);
                let mut rv = 0;
                for o in objects {
                    match self.apply(o) {
                        Ok(n) => rv = n,
                        Err(e) => return bad(&e),
                    }
                }
                Reply::ok(json!({"resourceVersion": rv.to_string()}))
            }
            "/emulator/delete" => {
                let o: Value = match serde_json::from_slice(body) {
                    Ok(v) => v,
                    Err(e) => return bad(&e),
                };
                let meta = &o["metadata"];
                let (av, kind) = (text(&o, "apiVersion"), text(&o, "kind"));
                match self.delete(av, kind, text(meta, "namespace"), text(meta, "name")) {
                    Some(rv) => Reply::ok(json!({"resourceVersion": rv.to_string()})),
                    None => Reply::not_found(),
                }
            }
            "/emulator/compact" => {
                self.compact();
                Reply::ok(json!({}))
            }
            "/emulator/end-watches" => {
                self.watch_generation.send_modify(|g| *g += 1);
                Reply::ok(json!({}))
            }
            "/emulator/forbid"
            | "/emulator/allow"
            | "/emulator/remove"
            | "/emulator/restore"
            | "/emulator/unauthorize" => {
                let o: Value = serde_json::from_slice(body).unwrap_or_default();
                let Some(resource) = o["resource"].as_str() else {
                    return bad(&"give {\"resource\": \"plural\"}");
                };
                let fault = path.trim_start_matches("/emulator/");
                self.faults.lock().unwrap().set(fault, resource.to_string());
                // As an API server does when a role or a CRD changes under a watch.
                if fault != "allow" && fault != "restore" {
                    self.watch_generation.send_modify(|g| *g += 1);
                }
                Reply::ok(json!({}))
            }
            "/emulator/fail" => {
                let o: Value = serde_json::from_slice(body).unwrap_or_default();
                let (Some(status), Some(seconds)) = (o["status"].as_u64(), o["seconds"].as_f64())
                else {
                    return bad(&"give {\"status\": 500, \"seconds\": 3}");
                };
                let until = std::time::Instant::now() + Duration::from_secs_f64(seconds);
                self.faults.lock().unwrap().fail = Some((status as u16, until));
                self.watch_generation.send_modify(|g| *g += 1);
                Reply::ok(json!({}))
            }
            _ => Reply::not_found(),
        }
    }
}

/// Sends lines in order; the sender back, or `None` when the client has gone.
async fn send_all(tx: mpsc::Sender<Bytes>, lines: Vec<Bytes>) -> Option<mpsc::Sender<Bytes>> {
    for line in lines {
        tx.send(line).await.ok()?;
    }
    Some(tx)
}

fn status_410(message: &str) -> Value {
    json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": message, "reason": "Expired", "code": 410,
    })
}

/// Changing the served objects from a test.
impl Emulator {
    /// Creates or replaces an object (a full object with apiVersion, kind and metadata.name);
    /// returns its new resourceVersion. Panics (failing the test) on an object it cannot serve.
    pub fn apply(&self, obj: Value) -> u64 {
        self.state
            .apply(obj)
            .unwrap_or_else(|e| panic!("kube emulator: {e}"))
    }

    /// Deletes an object; its deletion's resourceVersion, `None` when there is none.
    pub fn delete(
        &self,
        api_version: &str,
        kind: &str,
        namespace: &str,
        name: &str,
    ) -> Option<u64> {
        self.state.delete(api_version, kind, namespace, name)
    }

    /// A served object (under its own apiVersion), to change and apply.
    pub fn object(
        &self,
        api_version: &str,
        kind: &str,
        namespace: &str,
        name: &str,
    ) -> Option<Value> {
        let (g, v) = split_api_version(api_version);
        let d = self.state.data.lock().unwrap();
        let r = d
            .resources
            .values()
            .find(|r| r.group == g && r.version == v && r.kind == kind)?;
        let ns = if r.namespaced { namespace } else { "" };
        r.objects.get(&(ns.to_owned(), name.to_owned())).cloned()
    }

    /// The current resourceVersion.
    pub fn resource_version(&self) -> u64 {
        self.state.data.lock().unwrap().rv
    }

    /// Forgets the history of changes (etcd compaction): watches from an older version get 410.
    pub fn compact(&self) {
        self.state.compact();
    }

    /// Ends every open watch (as an API server restart does); clients watch again.
    pub fn end_watches(&self) {
        self.state.watch_generation.send_modify(|g| *g += 1);
    }

    /// Turns a fault on or off (`forbid`, `allow`, `remove`, `restore`) for a resource (`plural`
    /// or `plural.group`), as `POST /emulator/<fault>` does: open watches end.
    pub fn fault(&self, fault: &str, resource: &str) {
        let body = json!({ "resource": resource }).to_string();
        let Reply(status, ..) = self
            .state
            .control(&format!("/emulator/{fault}"), body.as_bytes());
        assert_eq!(status, 200, "{fault} {resource}");
    }

    /// Every list and watch answers `status` for `seconds` (open watches end).
    pub fn fail_for(&self, status: u16, seconds: f64) {
        let body = json!({ "status": status, "seconds": seconds }).to_string();
        let Reply(code, ..) = self.state.control("/emulator/fail", body.as_bytes());
        assert_eq!(code, 200);
    }
}
