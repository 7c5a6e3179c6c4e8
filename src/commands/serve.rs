//! `gpuledger serve`: a read-only Prometheus exporter. It regenerates the inventory (the same
//! computation as `inventory`, drift too with `--repo`) and keeps its exposition; `/metrics`
//! serves the last one, `/healthz` says whether there is one.
//!
//! A cluster is listed once and then watched (src/live/kube/watch.rs): its objects live in a
//! store, and a change to them regenerates the report within about a second ([`DEBOUNCE`] after
//! the change, so a burst of changes is one refresh), as kube-state-metrics follows a cluster.
//! `--interval` is then the refresh of what cannot be watched — Prometheus, OpenCost, Git — and
//! the longest a report goes unregenerated. Snapshot files are read again every `--interval`.
//!
//! Nothing is remembered between refreshes but the last good text: the history lives in the
//! Prometheus that scrapes us ("regenerate, don't remember"). A refresh that fails (the API server
//! is down, a timeout) keeps the last good report served, and the exporter's own series say so —
//! `gpuledger_exporter_last_refresh_success` drops to 0 and
//! `gpuledger_exporter_report_age_seconds` grows — so a stale figure is never mistaken for a fresh
//! one. An incomplete read (a 403) is not a failure: the report itself says what is missing
//! (`gpuledger_report_complete`), and unknown figures have no samples. Each watched resource's
//! state is its own and has its series (serve/sync.rs): while one is not synced (its watch or
//! list failing), the report served says `gpuledger_report_complete 0`. The log is gpuledger's
//! own lines (serve/log.rs): one per change of a resource's state, a refresh's failure or notes
//! when they change ([`Quiet`]); the client libraries' own warnings only with `--verbose`; JSON
//! lines with `--log-format json`.
//!
//! The HTTP side is a few lines of hyper (already in the tree through kube) on the one runtime;
//! the refresh loop runs on the main thread, which blocks on the runtime as `inventory` does.
//!
//! SIGTERM (the kubelet stopping the pod) or Ctrl-C between refreshes ends the wait at once; during
//! a refresh it abandons the refresh and exits at once, rather than waiting out `--timeout` on an
//! API server that does not answer while the kubelet's grace period (30 s by default) runs out. A
//! refresh only reads, so nothing is left half-written.

use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::{Method, Request, Response, StatusCode};
use tokio::runtime::Runtime;

use super::{Done, Exit, fleet_spec, signals};
use crate::cli::fleet::{LogFormat, ServeArgs};
use crate::cli::shared::Clock;
use crate::output::{Streams, error_lines};
use gpuledger::live::kube::{Watched, WatchedFleet, watch_cluster};
use gpuledger::pipeline::fleet::FleetSpec;
use gpuledger::pipeline::input::{self, LiveSpec};
use gpuledger::pipeline::{self, Context, Note};
use gpuledger::render::prometheus::{
    CONTENT_TYPE, Exposition, Family, Options, cluster_label, exposition_labelled,
};
use gpuledger::util::date::Timestamp;

pub mod log;
mod sync;

/// What the server serves, shared by the refresh loop and the connections.
#[derive(Debug, Default)]
struct State {
    /// The last good report's exposition, and when it was computed.
    report: Option<(String, Timestamp)>,
    /// The last refresh succeeded.
    last_ok: bool,
    refreshes_ok: u64,
    refreshes_failed: u64,
    /// How long the last refresh took.
    last_duration: Option<Duration>,
    interval: Duration,
    /// The watched clusters, whose API requests the exporter counts.
    watched: Vec<Watched>,
    /// The `cluster` label of every series ([`cluster_label`]).
    cluster: Option<String>,
}

/// How long a change to the watched objects settles before the report is regenerated.
const DEBOUNCE: Duration = Duration::from_millis(500);

impl State {
    fn labels(&self) -> Vec<(&'static str, String)> {
        self.cluster
            .iter()
            .map(|c| ("cluster", c.clone()))
            .collect()
    }

    /// Keeps a refresh's outcome: what to say, and whether it succeeded.
    fn record(
        &mut self,
        computed: pipeline::Result<pipeline::Run<gpuledger::report::Report>>,
        now: Timestamp,
        cluster: Option<&str>,
        opts: Options,
    ) -> (Vec<String>, bool) {
        let mut messages = Vec::new();
        match computed {
            Ok(c) => {
                if !self.last_ok && self.refreshes_failed > 0 {
                    messages.push("refresh succeeded again".into());
                }
                self.cluster = cluster_label(cluster, &c.report);
                let text = exposition_labelled(&c.report, opts, self.labels());
                self.report = Some((text, now));
                self.last_ok = true;
                self.refreshes_ok += 1;
                if self.cluster.is_none() && self.refreshes_ok == 1 {
                    messages.push(
                        "the series carry no cluster label (no kubeconfig context names the cluster): give --cluster NAME, or let the scraping Prometheus's target or external label name it".into(),
                    );
                }
                // What a one-off run would say (metrics unknown, incomplete) is said when it
                // changes ([`Quiet`]), so the log shows it without a scrape.
                messages.extend(
                    c.notes
                        .iter()
                        .filter(|n| !matches!(n, Note::ConfigUsed(_)))
                        .map(ToString::to_string),
                );
                (messages, true)
            }
            Err(e) => {
                self.last_ok = false;
                self.refreshes_failed += 1;
                messages.push(match &self.report {
                    Some((_, t)) => {
                        format!("refresh failed; still serving the report of {}", t.human())
                    }
                    None => "refresh failed; no report to serve yet".into(),
                });
                messages.extend(error_lines(&anyhow::Error::new(e)));
                (messages, false)
            }
        }
    }

    /// The exporter's own series, then the report's. Computed at scrape time, so the report's
    /// age is its age now.
    fn metrics(&self, now: Timestamp) -> String {
        let mut e = Exposition::labelled(self.labels());
        let mut ok = Family::gauge(
            "gpuledger_exporter_last_refresh_success",
            "1 when the last refresh of the report succeeded, 0 when it failed (the last good report is still served).",
        );
        ok.sample(&[], if self.last_ok { 1.0 } else { 0.0 });
        e.push(ok);
        let mut refreshes = Family::counter(
            "gpuledger_exporter_refreshes_total",
            "Refreshes of the report since the exporter started, by result.",
        );
        #[allow(clippy::cast_precision_loss)]
        refreshes
            .sample(&[("result", "success")], self.refreshes_ok as f64)
            .sample(&[("result", "failure")], self.refreshes_failed as f64);
        e.push(refreshes);
        let mut age = Family::gauge(
            "gpuledger_exporter_report_age_seconds",
            "Seconds since the report served was computed: past a few intervals, the figures are stale.",
        );
        let mut at = Family::gauge(
            "gpuledger_exporter_report_timestamp_seconds",
            "When the report served was computed, Unix time.",
        );
        if let Some((_, t)) = &self.report {
            #[allow(clippy::cast_precision_loss)]
            {
                age.sample(&[], now.seconds_since(*t).max(0) as f64);
                at.sample(&[], t.unix() as f64);
            }
        }
        e.push(age);
        e.push(at);
        let mut took = Family::gauge(
            "gpuledger_exporter_refresh_duration_seconds",
            "How long the last refresh took.",
        );
        took.sample(&[], self.last_duration.map(|d| d.as_secs_f64()));
        e.push(took);
        let mut interval = Family::gauge(
            "gpuledger_exporter_interval_seconds",
            "The longest between two refreshes (--interval); a watched cluster's changes refresh within seconds.",
        );
        interval.sample(&[], self.interval.as_secs_f64());
        e.push(interval);
        let mut requests = Family::counter(
            "gpuledger_exporter_api_requests_total",
            "Requests to the Kubernetes API by the watched clusters' stores since the exporter started, by verb: one list per resource, then watches (none counted when the clusters are not watched).",
        );
        if !self.watched.is_empty() {
            let sum = |f: fn(&Watched) -> u64| self.watched.iter().map(f).sum::<u64>();
            #[allow(clippy::cast_precision_loss)]
            requests
                .sample(
                    &[("verb", "list")],
                    sum(|w| w.requests().lists.load(Ordering::Relaxed)) as f64,
                )
                .sample(
                    &[("verb", "watch")],
                    sum(|w| w.requests().watches.load(Ordering::Relaxed)) as f64,
                );
        }
        e.push(requests);
        let (synced, ages, all_synced) = sync::families(&self.watched);
        e.push(synced);
        e.push(ages);
        let mut text = e.finish();
        if let Some((report, _)) = &self.report {
            text.push_str(&sync::served_report(report, all_synced));
        }
        text
    }
}

pub fn run(args: &ServeArgs, cx: &Context<'_>) -> anyhow::Result<Done> {
    let rt = cx.rt;
    anyhow::ensure!(
        !args
            .live
            .snapshot
            .iter()
            .any(|p| p == std::path::Path::new("-")),
        "serve re-reads its snapshots every --interval: standard input (`-`) can be read only once; give a file"
    );
    let streams = Streams::from_env();
    let say = Say {
        json: args.log_format == LogFormat::Json,
    };
    let state = Arc::new(Mutex::new(State {
        interval: args.interval,
        cluster: args.repo.at.cluster.clone(),
        ..State::default()
    }));
    let refreshing = Arc::new(AtomicBool::new(false));
    let mut stop = Stop::listen(rt, refreshing.clone(), say)?;
    let listener = rt
        .block_on(tokio::net::TcpListener::bind(args.listen))
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    let addr = listener.local_addr().unwrap_or(args.listen);
    rt.spawn(accept(listener, state.clone()));
    say.lines(&streams, "info", &[format!(
        "serving /metrics and /healthz on http://{addr}, refreshing on every change of a watched cluster and every {}s",
        args.interval.as_secs_f64()
    )]);
    let opts = Options {
        workloads: args.workload_series,
    };
    let mut spec = fleet_spec(
        &args.live,
        signals(&args.live, &args.metrics, Some(&args.trend), None),
        &Clock { now: None },
        args.config.config.as_deref(),
    );
    spec.repo = args.repo.given();
    let mut watch = Watching::default();
    let mut quiet = Quiet::default();
    loop {
        // Marked before the check, and the signal task sends before it looks at the mark: a
        // signal either stops the loop here or finds the refresh marked.
        refreshing.store(true, Ordering::SeqCst);
        if stop.signalled() {
            break;
        }
        if let Some(fleet) = watch.start(&spec, args.interval, cx, &streams, say) {
            spec.live = LiveSpec::Watched(fleet.clone());
            state
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .watched = fleet.clusters.iter().map(|(_, w)| w.clone()).collect();
        }
        let started = Instant::now();
        let computed = pipeline::inventory::run(&spec, cx);
        refreshing.store(false, Ordering::SeqCst);
        let took = started.elapsed();
        let now = Timestamp::now();
        let (messages, ok) = {
            let mut s = state
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            s.last_duration = Some(took);
            s.record(computed, now, args.repo.at.cluster.as_deref(), opts)
        };
        if quiet.should_say(&messages, ok) {
            say.lines(&streams, if ok { "info" } else { "warn" }, &messages);
        }
        if rt.block_on(stop.within(args.interval, &mut watch.changes)) {
            break;
        }
    }
    let mut notes = vec![Note::Say("stopped".into())];
    if say.json {
        say.lines(&streams, "info", &["stopped".into()]);
        notes.clear();
    }
    Ok(Done {
        stdout: None,
        commands: Vec::new(),
        notes,
        exit: Exit::Clean,
    })
}

/// What a refresh says is said when it changes, not at every refresh: a refresh that fails as the
/// last one did, or says the same notes, is quiet; a changed failure is told at most every
/// [`Quiet::EVERY`] (the watched resources' own lines say what changes meanwhile).
#[derive(Default)]
struct Quiet {
    last: Vec<String>,
    /// The last refresh said was a success, and when it was said.
    ok: Option<bool>,
    at: Option<Instant>,
}

impl Quiet {
    const EVERY: Duration = Duration::from_secs(60);

    fn should_say(&mut self, messages: &[String], ok: bool) -> bool {
        let changed_kind = self.ok != Some(ok);
        let due = self.at.is_none_or(|t| t.elapsed() >= Quiet::EVERY);
        if messages == self.last.as_slice() && !changed_kind {
            return false;
        }
        if !changed_kind && !ok && !due {
            return false;
        }
        self.last = messages.to_vec();
        self.ok = Some(ok);
        self.at = Some(Instant::now());
        true
    }
}

/// serve's own messages, as text (`gpuledger: …`) or JSON lines ([`log::json_line`]).
#[derive(Clone, Copy)]
struct Say {
    json: bool,
}

impl Say {
    fn lines(self, streams: &Streams, level: &str, lines: &[String]) {
        if !self.json {
            return streams.messages(lines);
        }
        for l in lines {
            let text = gpuledger::util::text::line(l, gpuledger::util::text::MAX_MESSAGE_CHARS);
            streams.stderr(&format!("{}\n", log::json_line(level, "serve", &text)));
        }
    }
}

/// SIGTERM (Kubernetes stopping the pod) and Ctrl-C, listened for from the start by a task of
/// its own: between refreshes it ends the wait; during one (`refreshing`) it exits the process at
/// once, abandoning the refresh.
struct Stop {
    signalled: tokio::sync::watch::Receiver<bool>,
}

impl Stop {
    fn listen(rt: &Runtime, refreshing: Arc<AtomicBool>, say: Say) -> anyhow::Result<Stop> {
        let _entered = rt.enter();
        let (tx, rx) = tokio::sync::watch::channel(false);
        #[cfg(unix)]
        let signal = {
            use tokio::signal::unix::{SignalKind, signal};
            let mut term = signal(SignalKind::terminate()).context("cannot listen for SIGTERM")?;
            let mut interrupt =
                signal(SignalKind::interrupt()).context("cannot listen for SIGINT")?;
            async move {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = interrupt.recv() => {}
                }
            }
        };
        #[cfg(not(unix))]
        let signal = async {
            let _ = tokio::signal::ctrl_c().await;
        };
        rt.spawn(async move {
            signal.await;
            let _ = tx.send(true);
            if refreshing.load(Ordering::SeqCst) {
                say.lines(&Streams::from_env(), "info", &[
                    "stopped during a refresh: the refresh is abandoned (it only reads; nothing is left half-written)".to_string(),
                ]);
                std::process::exit(0);
            }
        });
        Ok(Stop { signalled: rx })
    }

    /// A signal came.
    fn signalled(&self) -> bool {
        *self.signalled.borrow()
    }

    /// Waits `interval`, or until one of `changes` moves and [`DEBOUNCE`] more pass; true when
    /// a signal came first (or had come before).
    async fn within(
        &mut self,
        interval: Duration,
        changes: &mut [tokio::sync::watch::Receiver<u64>],
    ) -> bool {
        if self.signalled() {
            return true;
        }
        let changed = async {
            if changes.is_empty() {
                return std::future::pending().await;
            }
            let each = changes.iter_mut().map(|c| Box::pin(c.changed()));
            let _ = futures_util::future::select_all(each).await;
        };
        tokio::select! {
            () = tokio::time::sleep(interval) => return false,
            changed = self.signalled.changed() => return changed.is_ok(),
            () = changed => {}
        }
        tokio::select! {
            () = tokio::time::sleep(DEBOUNCE) => false,
            changed = self.signalled.changed() => changed.is_ok(),
        }
    }
}

/// The clusters serve watches, started at the first refresh and again at the next one for those
/// that could not be (the refresh then reads them once, and says why that fails).
#[derive(Default)]
struct Watching {
    /// Started, by context.
    started: Vec<(Option<String>, Watched)>,
    /// The live source is not clusters (snapshot files), or every cluster is watched.
    settled: bool,
    changes: Vec<tokio::sync::watch::Receiver<u64>>,
}

impl Watching {
    /// The watched fleet, when it has just become complete.
    fn start(
        &mut self,
        spec: &FleetSpec,
        poll: Duration,
        cx: &Context<'_>,
        streams: &Streams,
        say: Say,
    ) -> Option<WatchedFleet> {
        if self.settled {
            return None;
        }
        // The contexts the refresh would read: `clusters:` of the configuration may name them.
        let mut live = spec.live.clone();
        if let Some(repo) = &spec.repo {
            let repo_path = Some(repo.path.as_path());
            let mut notes = Vec::new();
            if let Ok((cfg, _)) =
                pipeline::fleet::config(spec.config.as_deref(), repo_path, &mut notes)
            {
                input::cluster_live(&mut repo.clone(), &mut live, &cfg);
            }
        }
        let LiveSpec::Clusters {
            kubeconfig,
            contexts,
            timeouts,
        } = live
        else {
            self.settled = true;
            return None;
        };
        let wanted: Vec<Option<String>> = if contexts.is_empty() {
            vec![None]
        } else {
            contexts.iter().cloned().map(Some).collect()
        };
        for context in wanted {
            if self.started.iter().any(|(c, _)| *c == context) {
                continue;
            }
            let src = input::cluster_source(kubeconfig.clone(), context.clone(), timeouts);
            match cx.rt.block_on(watch_cluster(src, poll)) {
                Ok(w) => {
                    self.changes.push(w.changes());
                    self.started.push((context, w));
                }
                Err(e) => {
                    let mut lines = vec!["cannot watch the cluster yet; reading it once".into()];
                    lines.extend(error_lines(&anyhow::Error::new(e)));
                    say.lines(streams, "warn", &lines);
                    return None;
                }
            }
        }
        self.settled = true;
        Some(WatchedFleet {
            contexts,
            clusters: self.started.clone(),
            timeout: timeouts.total,
        })
    }
}

async fn accept(listener: tokio::net::TcpListener, state: Arc<Mutex<State>>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            // A transient accept error (out of file descriptors): try again shortly.
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        let state = state.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| {
                let state = state.clone();
                async move { Ok::<_, Infallible>(answer(&req, &state)) }
            });
            let io = hyper_util::rt::TokioIo::new(stream);
            // A slow or broken client only ends its own connection.
            let _ = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(Duration::from_secs(10))
                .serve_connection(io, service)
                .await;
        });
    }
}

fn answer(req: &Request<Incoming>, state: &Mutex<State>) -> Response<Full<Bytes>> {
    let s = state
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if req.method() != Method::GET && req.method() != Method::HEAD {
        return text(
            StatusCode::METHOD_NOT_ALLOWED,
            "read-only: GET only\n".into(),
        );
    }
    match req.uri().path() {
        "/metrics" => {
            let mut r = text(StatusCode::OK, s.metrics(Timestamp::now()));
            if let Ok(v) = hyper::header::HeaderValue::from_str(CONTENT_TYPE) {
                r.headers_mut().insert(hyper::header::CONTENT_TYPE, v);
            }
            r
        }
        "/healthz" => match &s.report {
            Some(_) if s.last_ok => text(StatusCode::OK, "ok\n".into()),
            Some((_, t)) => text(
                StatusCode::OK,
                format!(
                    "ok: the last refresh failed; serving the report of {}\n",
                    t.human()
                ),
            ),
            None => text(
                StatusCode::SERVICE_UNAVAILABLE,
                "no report yet: the first refresh has not succeeded\n".into(),
            ),
        },
        "/" => text(
            StatusCode::OK,
            "gpuledger exporter: /metrics, /healthz\n".into(),
        ),
        _ => text(
            StatusCode::NOT_FOUND,
            "not found: /metrics, /healthz\n".into(),
        ),
    }
}

fn text(status: StatusCode, body: String) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from(body)));
    *r.status_mut() = status;
    if let Ok(v) = hyper::header::HeaderValue::from_str("text/plain; charset=utf-8") {
        r.headers_mut().insert(hyper::header::CONTENT_TYPE, v);
    }
    r
}
