//! A `gpuledger serve` child for the exporter's tests: started on a free port of 127.0.0.1 with
//! the given arguments (no KUBECONFIG or GPULEDGER_CONFIG from the environment), asked over HTTP,
//! killed when dropped.

use std::collections::BTreeMap;
use std::net::{SocketAddr, TcpListener};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::prometheus_harness::http_get;
use super::support::root;

pub struct Serve {
    pub child: Child,
    pub addr: SocketAddr,
    /// Where its standard error goes, when kept ([`Serve::start_logged`]).
    log: Option<tempfile::NamedTempFile>,
}

impl Serve {
    /// `gpuledger serve --listen ADDR ARGS…`, once it answers `/healthz`.
    pub fn start(args: &[&str]) -> Serve {
        Serve::spawn(args, None)
    }

    /// As [`Serve::start`], keeping its standard error for [`Serve::log`].
    pub fn start_logged(args: &[&str]) -> Serve {
        Serve::spawn(args, Some(tempfile::NamedTempFile::new().unwrap()))
    }

    fn spawn(args: &[&str], log: Option<tempfile::NamedTempFile>) -> Serve {
        let stderr = match &log {
            Some(f) => Stdio::from(f.reopen().unwrap()),
            None => Stdio::null(),
        };
        let addr = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_gpuledger"))
            .current_dir(root())
            .args(["serve", "--listen", &addr.to_string()])
            .args(args)
            .env_remove("KUBECONFIG")
            .env_remove("GPULEDGER_CONFIG")
            .env_remove("GPULEDGER_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .unwrap();
        let s = Serve { child, addr, log };
        s.wait_for(Duration::from_secs(60), |_| true, "/healthz");
        s
    }

    /// What it wrote on standard error so far (empty unless started with
    /// [`Serve::start_logged`]).
    pub fn log(&self) -> String {
        self.log
            .as_ref()
            .map(|f| std::fs::read_to_string(f.path()).unwrap())
            .unwrap_or_default()
    }

    /// Polls its log until a line holds `text`; the log.
    pub fn wait_for_log(&self, text: &str, within: Duration) -> String {
        let start = Instant::now();
        loop {
            let log = self.log();
            if log.contains(text) {
                return log;
            }
            assert!(
                start.elapsed() < within,
                "no {text:?} in the log after {within:?}:\n{log}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The status and body of `GET path`.
    pub fn get(&self, path: &str) -> Option<(u16, String)> {
        http_get(self.addr, path)
    }

    /// Polls `path` until it answers 200 and `ok` holds for the body.
    pub fn wait_for(&self, within: Duration, ok: impl Fn(&str) -> bool, path: &str) -> String {
        let deadline = Instant::now() + within;
        loop {
            if let Some((200, body)) = self.get(path)
                && ok(&body)
            {
                return body;
            }
            assert!(
                Instant::now() < deadline,
                "no good answer on {path} in {within:?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The exposition, once it holds a report (`series` among its samples).
    pub fn metrics_with(&self, series: &str) -> String {
        self.wait_for(Duration::from_secs(60), |t| t.contains(series), "/metrics")
    }

    /// The samples of `/metrics`, by series; empty while there is no report.
    pub fn samples(&self) -> BTreeMap<String, f64> {
        let Some((200, text)) = self.get("/metrics") else {
            return BTreeMap::new();
        };
        text.lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| l.rsplit_once(' '))
            .filter_map(|(k, v)| Some((k.to_string(), v.parse().ok()?)))
            .collect()
    }

    /// Polls until `series` has the value `want`; how long that took.
    pub fn wait_for_value(&self, series: &str, want: f64, within: Duration) -> Duration {
        let start = Instant::now();
        loop {
            let got = self.samples().get(series).copied();
            if got == Some(want) {
                return start.elapsed();
            }
            assert!(
                start.elapsed() < within,
                "{series} is {got:?}, not {want}, after {within:?}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
