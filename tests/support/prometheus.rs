//! The real Prometheus for integration tests, loaded with DCGM-shaped series.
//!
//! [`Prometheus::start`] writes the series as an OpenMetrics file (one gauge family per metric,
//! one sample a minute for the last 50 minutes, in time order, ending `# EOF`), turns it into TSDB
//! blocks with `promtool tsdb create-blocks-from openmetrics`, and starts `prometheus` on those
//! blocks in a temp dir, on a free port of 127.0.0.1, with no scrape targets and a 10-year
//! retention (so the backfilled blocks are never deleted under the test). An instant
//! `avg_over_time(…[1h])` at "now" sees every sample. It waits for `/-/ready`; dropping the handle
//! kills the server and deletes the dir. Both binaries come from Debian's `prometheus` package; a
//! machine without them fails the test with the fix, never skips it.
#![allow(dead_code)] // each test uses part of the API

use std::fmt::Write as _;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Minutes of history written before "now", one sample a minute.
pub const HISTORY_MINUTES: u64 = 50;

const MISSING: &str = "install Debian's prometheus package (scripts/test.sh does)";

/// One series: its metric name, labels, and the values of its samples, repeated in turn over the
/// history (one value: a constant series).
#[derive(Clone, Debug)]
pub struct Series<'a> {
    pub metric: &'a str,
    pub labels: Vec<(&'a str, &'a str)>,
    pub values: Vec<f64>,
    /// The minutes of the history (0 is the oldest) that have a sample: all of them unless
    /// [`Series::during`] says otherwise (a pod that started or ended inside the window).
    pub minutes: std::ops::Range<u64>,
}

impl<'a> Series<'a> {
    /// A constant series.
    pub fn new(metric: &'a str, labels: &[(&'a str, &'a str)], value: f64) -> Series<'a> {
        Series::cycling(metric, labels, &[value])
    }

    /// A series whose samples take `values` in turn, oldest first.
    pub fn cycling(metric: &'a str, labels: &[(&'a str, &'a str)], values: &[f64]) -> Series<'a> {
        assert!(!values.is_empty(), "a series needs at least one value");
        Series {
            metric,
            labels: labels.to_vec(),
            values: values.to_vec(),
            minutes: 0..HISTORY_MINUTES,
        }
    }

    /// Samples only in `minutes` of the history (0 is the oldest, [`HISTORY_MINUTES`] the end).
    pub fn during(mut self, minutes: std::ops::Range<u64>) -> Series<'a> {
        assert!(
            minutes.start < minutes.end && minutes.end <= HISTORY_MINUTES,
            "{minutes:?} is not inside the history"
        );
        self.minutes = minutes;
        self
    }

    /// The mean of the samples written, which is what `avg_over_time` over the whole history
    /// must answer.
    pub fn mean(&self) -> f64 {
        let n = (self.minutes.end - self.minutes.start) as usize;
        self.minutes
            .clone()
            .map(|i| self.values[i as usize % self.values.len()])
            .sum::<f64>()
            / n as f64
    }
}

/// A running Prometheus. Dropping it kills the server and deletes its data.
pub struct Prometheus {
    child: Child,
    addr: SocketAddr,
    dir: tempfile::TempDir,
}

impl Prometheus {
    /// Backfills `series` and starts the server; panics (failing the test) when a binary is
    /// missing or the server does not become ready.
    pub fn start(series: &[Series<'_>]) -> Prometheus {
        Prometheus::start_scraping(series, &[])
    }

    /// As [`Prometheus::start`], and scraping `targets` (`127.0.0.1:PORT`, path `/metrics`) every
    /// second as job `gpuledger`.
    pub fn start_scraping(series: &[Series<'_>], targets: &[String]) -> Prometheus {
        Prometheus::start_with_rules(series, targets, &[])
    }

    /// As [`Prometheus::start_scraping`], and evaluating the recording rules of `rule_files`
    /// every second.
    pub fn start_with_rules(
        series: &[Series<'_>],
        targets: &[String],
        rule_files: &[PathBuf],
    ) -> Prometheus {
        let promtool = binary("promtool");
        let prometheus = binary("prometheus");
        let dir = tempfile::tempdir().expect("temp dir");
        let data = dir.path().join("data");
        std::fs::create_dir_all(&data).expect("data dir");
        if !series.is_empty() {
            let metrics = dir.path().join("series.om");
            std::fs::write(&metrics, openmetrics(series, now_secs())).expect("write series");
            let out = Command::new(&promtool)
                .args(["tsdb", "create-blocks-from", "openmetrics"])
                .arg(&metrics)
                .arg(&data)
                .output()
                .unwrap_or_else(|e| panic!("cannot run promtool: {e}; {MISSING}"));
            assert!(
                out.status.success(),
                "promtool tsdb create-blocks-from openmetrics failed:\n{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let config = dir.path().join("prometheus.yml");
        let scrape = if targets.is_empty() {
            "scrape_configs: []\n".to_string()
        } else {
            let list: Vec<String> = targets.iter().map(|t| format!("'{t}'")).collect();
            format!(
                "scrape_configs:\n- job_name: gpuledger\n  scrape_interval: 1s\n  static_configs:\n  - targets: [{}]\n",
                list.join(", ")
            )
        };
        let rules = if rule_files.is_empty() {
            String::new()
        } else {
            let list: Vec<String> = rule_files
                .iter()
                .map(|p| format!("'{}'", p.display()))
                .collect();
            format!(
                "  evaluation_interval: 1s\nrule_files: [{}]\n",
                list.join(", ")
            )
        };
        std::fs::write(
            &config,
            format!("global:\n  scrape_interval: 1m\n{rules}{scrape}"),
        )
        .expect("write config");

        // A free port can be taken by someone else between our probe and Prometheus's bind:
        // start again on a new one when that happens.
        let log_path = dir.path().join("prometheus.log");
        let mut failure = String::new();
        for _ in 0..5 {
            let addr = free_addr();
            let log = std::fs::File::create(&log_path).expect("log file");
            let mut child = Command::new(&prometheus)
                .arg(format!("--config.file={}", config.display()))
                .arg(format!("--storage.tsdb.path={}", data.display()))
                .arg("--storage.tsdb.retention.time=10y")
                .arg(format!("--web.listen-address={addr}"))
                .stdin(Stdio::null())
                .stdout(log.try_clone().expect("log file"))
                .stderr(log)
                .spawn()
                .unwrap_or_else(|e| panic!("cannot run prometheus: {e}; {MISSING}"));
            match wait_ready(&mut child, addr, &data, Duration::from_secs(60)) {
                Ok(()) => return Prometheus { child, addr, dir },
                Err(e) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    let log = std::fs::read_to_string(&log_path).unwrap_or_default();
                    failure = format!("{e}\n{log}");
                    if !failure.contains("address already in use") {
                        break;
                    }
                }
            }
        }
        panic!("prometheus did not become ready: {failure}");
    }

    /// `http://127.0.0.1:<port>`
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The `data.result` of an instant query, as JSON; panics when the query fails.
    pub fn query(&self, promql: &str) -> serde_json::Value {
        let q: String = form_urlencoded::byte_serialize(promql.as_bytes()).collect();
        let (status, body) =
            http_get(self.addr, &format!("/api/v1/query?query={q}")).expect("prometheus answers");
        assert_eq!(status, 200, "{promql}: {body}");
        let v: serde_json::Value = serde_json::from_str(&body).expect("JSON");
        v["data"]["result"].clone()
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Ready means `/-/ready` answers 200 and the server on the port is ours (its TSDB path is
/// `data`), not another test's that took the port in between.
fn wait_ready(
    child: &mut Child,
    addr: SocketAddr,
    data: &Path,
    within: Duration,
) -> Result<(), String> {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            return Err(format!("prometheus exited with {status}"));
        }
        if http_get(addr, "/-/ready").is_some_and(|(status, _)| status == 200) {
            let flags = http_get(addr, "/api/v1/status/flags")
                .map(|(_, body)| body)
                .unwrap_or_default();
            if flags.contains(&format!("\"{}\"", data.display())) {
                return Ok(());
            }
            return Err(format!(
                "another server answers on {addr}: address already in use"
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Err(format!("no 200 from /-/ready within {within:?}"))
}

fn binary(name: &str) -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("`{name}` is not on PATH: {MISSING}"))
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970")
        .as_secs()
}

fn free_addr() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    listener.local_addr().expect("local addr")
}

/// The OpenMetrics text: families grouped by metric name (OpenMetrics forbids interleaving them),
/// each series' samples oldest first, a minute apart, ending one minute before `now`.
pub fn openmetrics(series: &[Series<'_>], now: u64) -> String {
    let mut names: Vec<&str> = series.iter().map(|s| s.metric).collect();
    names.sort_unstable();
    names.dedup();
    let mut out = String::new();
    for name in names {
        writeln!(out, "# TYPE {name} gauge").unwrap();
        for s in series.iter().filter(|s| s.metric == name) {
            let labels: Vec<String> = s
                .labels
                .iter()
                .map(|(k, v)| format!("{k}=\"{}\"", escape(v)))
                .collect();
            let labels = if labels.is_empty() {
                String::new()
            } else {
                format!("{{{}}}", labels.join(","))
            };
            for i in s.minutes.clone() {
                let t = now - (HISTORY_MINUTES - i) * 60;
                let v = number(s.values[i as usize % s.values.len()]);
                writeln!(out, "{name}{labels} {v} {t}").unwrap();
            }
        }
    }
    out.push_str("# EOF\n");
    out
}

fn escape(v: &str) -> String {
    v.replace('\\', r"\\")
        .replace('"', "\\\"")
        .replace('\n', r"\n")
}

fn number(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else {
        format!("{v}")
    }
}

/// The status code and body of a plain HTTP/1.0 GET, or `None` when nothing answers.
pub fn http_get(addr: SocketAddr, path: &str) -> Option<(u16, String)> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(1)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    let status = response.split_whitespace().nth(1)?.parse().ok()?;
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    Some((status, body))
}
