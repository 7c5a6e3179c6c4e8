//! Remote sources for the render tests, real and on 127.0.0.1 only: a small HTTP/1.1 server that
//! serves a Helm repository's files (`index.yaml` and packaged charts) and remote manifests, git
//! repositories over smart HTTP through the real `git http-backend` (run as CGI, as a web server
//! runs it), and a few misbehaviours the fetch policy must survive (a redirect, a slow answer, an
//! oversized body); and Distribution's registry (Debian's `docker-registry`, run on a free port
//! with a configuration of the test's own, never its system service), to which charts are pushed
//! by the real Helm engine (`tests/support/charts.py` over helm-python-sdk). Every server stops
//! when its handle is dropped.
#![allow(dead_code)] // each test uses part of the API

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What a path answers.
#[derive(Clone, Debug)]
pub enum Route {
    /// 200 with these bytes.
    Bytes(Vec<u8>),
    /// A redirect (302) to this URL.
    Redirect(String),
    /// 200 with these bytes, after waiting this long.
    Slow(Duration, Vec<u8>),
    /// 200 with this many bytes, without announcing a length.
    Endless(u64),
    /// `git http-backend` for the repositories under this directory (the path below the route is
    /// the repository's).
    Git(PathBuf),
    /// A request to a git route: the repositories' directory and the path below the route.
    GitRequest(PathBuf, String),
}

/// A running HTTP server.
pub struct Server {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    routes: Arc<Mutex<BTreeMap<String, Route>>>,
    requests: Arc<Mutex<Vec<String>>>,
    /// `Authorization` headers received, by request line.
    authorizations: Arc<Mutex<Vec<String>>>,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    pub fn start() -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the test server");
        let addr = listener.local_addr().expect("local addr");
        let stop = Arc::new(AtomicBool::new(false));
        let routes: Arc<Mutex<BTreeMap<String, Route>>> = Arc::default();
        let requests: Arc<Mutex<Vec<String>>> = Arc::default();
        let authorizations: Arc<Mutex<Vec<String>>> = Arc::default();
        let thread = {
            let (stop, routes, requests, auth) = (
                stop.clone(),
                routes.clone(),
                requests.clone(),
                authorizations.clone(),
            );
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    if let Ok(s) = stream {
                        let (routes, requests, auth) =
                            (routes.clone(), requests.clone(), auth.clone());
                        std::thread::spawn(move || serve(s, &routes, &requests, &auth));
                    }
                }
            })
        };
        Server {
            addr,
            stop,
            routes,
            requests,
            authorizations,
            thread: Some(thread),
        }
    }

    /// `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `127.0.0.1:<port>`.
    pub fn host(&self) -> String {
        self.addr.to_string()
    }

    /// Serves `route` at `path` (and below it, for a git route).
    pub fn route(&self, path: &str, route: Route) -> &Server {
        self.routes.lock().unwrap().insert(path.to_string(), route);
        self
    }

    /// Serves every file under `dir` at `prefix/<relative path>`.
    pub fn dir(&self, prefix: &str, dir: &Path) -> &Server {
        for f in walk(dir) {
            let rel = f
                .strip_prefix(dir)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            let p = format!("{}/{rel}", prefix.trim_end_matches('/'));
            self.route(&p, Route::Bytes(std::fs::read(&f).unwrap()));
        }
        self
    }

    /// The request lines served so far (`GET /index.yaml`).
    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }

    /// The requests that carried an `Authorization` header (`GET /index.yaml: Bearer …`).
    pub fn authorizations(&self) -> Vec<String> {
        self.authorizations.lock().unwrap().clone()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = TcpStream::connect(self.addr);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

fn serve(
    s: TcpStream,
    routes: &Mutex<BTreeMap<String, Route>>,
    requests: &Mutex<Vec<String>>,
    authorizations: &Mutex<Vec<String>>,
) {
    let _ = s.set_read_timeout(Some(Duration::from_secs(30)));
    let mut reader = BufReader::new(match s.try_clone() {
        Ok(c) => c,
        Err(_) => return,
    });
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        return;
    }
    let mut parts = line.split_whitespace();
    let (method, target) = (
        parts.next().unwrap_or("").to_string(),
        parts.next().unwrap_or("/").to_string(),
    );
    let mut headers = BTreeMap::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).is_err() || h.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    let len: usize = headers
        .get("content-length")
        .and_then(|l| l.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; len];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    requests.lock().unwrap().push(format!("{method} {target}"));
    if let Some(a) = headers.get("authorization") {
        authorizations
            .lock()
            .unwrap()
            .push(format!("{method} {target}: {a}"));
    }
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    let route = {
        let r = routes.lock().unwrap();
        r.get(path).cloned().or_else(|| {
            // A git route serves every repository below it.
            r.iter()
                .filter(|(k, v)| matches!(v, Route::Git(_)) && path.starts_with(&format!("{k}/")))
                .max_by_key(|(k, _)| k.len())
                .and_then(|(k, v)| match v {
                    Route::Git(root) => {
                        Some(Route::GitRequest(root.clone(), path[k.len()..].to_string()))
                    }
                    _ => None,
                })
        })
    };
    let mut out = s;
    let answer = |out: &mut TcpStream, status: &str, extra: &str, body: &[u8]| {
        let _ = write!(
            out,
            "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n{extra}\r\n",
            body.len()
        );
        let _ = out.write_all(body);
    };
    match route {
        None => answer(&mut out, "404 Not Found", "", b"not found\n"),
        Some(Route::Bytes(b)) => answer(&mut out, "200 OK", "", &b),
        Some(Route::Redirect(to)) => {
            answer(&mut out, "302 Found", &format!("Location: {to}\r\n"), b"")
        }
        Some(Route::Slow(d, b)) => {
            std::thread::sleep(d);
            answer(&mut out, "200 OK", "", &b);
        }
        Some(Route::Endless(n)) => {
            let _ = write!(out, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n");
            let chunk = vec![b'x'; 64 * 1024];
            let mut left = n;
            while left > 0 {
                let k = left.min(chunk.len() as u64) as usize;
                if out.write_all(&chunk[..k]).is_err() {
                    break;
                }
                left -= k as u64;
            }
        }
        Some(Route::GitRequest(root, info)) => {
            git_cgi(&mut out, &method, &root, &info, query, &headers, &body);
        }
        Some(Route::Git(_)) => answer(&mut out, "404 Not Found", "", b"a repository, please\n"),
    }
}

/// `git http-backend` as CGI (git's `Documentation/git-http-backend.txt`): the request in the
/// environment and on standard input, the response's headers (with `Status:`) and body on
/// standard output.
fn git_cgi(
    out: &mut TcpStream,
    method: &str,
    root: &Path,
    path_info: &str,
    query: &str,
    headers: &BTreeMap<String, String>,
    body: &[u8],
) {
    let mut child = Command::new("git")
        .arg("http-backend")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("GIT_PROJECT_ROOT", root)
        .env("GIT_HTTP_EXPORT_ALL", "1")
        .env("REQUEST_METHOD", method)
        .env("PATH_INFO", path_info)
        .env("QUERY_STRING", query)
        .env("REMOTE_ADDR", "127.0.0.1")
        .env(
            "CONTENT_TYPE",
            headers.get("content-type").cloned().unwrap_or_default(),
        )
        .env("CONTENT_LENGTH", body.len().to_string())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("git http-backend");
    let mut stdin = child.stdin.take().unwrap();
    let body = body.to_vec();
    let feed = std::thread::spawn(move || {
        let _ = stdin.write_all(&body);
    });
    let mut raw = Vec::new();
    child.stdout.take().unwrap().read_to_end(&mut raw).unwrap();
    let _ = feed.join();
    let _ = child.wait();
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| (i, 4))
        .or_else(|| raw.windows(2).position(|w| w == b"\n\n").map(|i| (i, 2)));
    let Some((at, n)) = split else {
        let _ = write!(
            out,
            "HTTP/1.1 500 Internal Server Error\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
        );
        return;
    };
    let head = String::from_utf8_lossy(&raw[..at]).into_owned();
    let payload = &raw[at + n..];
    let mut status = "200 OK".to_string();
    let mut lines = Vec::new();
    for l in head.lines() {
        match l.split_once(':') {
            Some((k, v)) if k.eq_ignore_ascii_case("status") => status = v.trim().to_string(),
            Some(_) => lines.push(l.to_string()),
            None => {}
        }
    }
    let _ = write!(
        out,
        "HTTP/1.1 {status}\r\n{}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        lines.join("\r\n"),
        payload.len()
    );
    let _ = out.write_all(payload);
}

/// Distribution's registry (`docker-registry` from Debian), on a free port of 127.0.0.1, storing
/// in a temporary directory.
pub struct Registry {
    child: Child,
    pub host: String,
    _dir: tempfile::TempDir,
}

impl Registry {
    pub fn start() -> Registry {
        let bin = which("docker-registry").unwrap_or_else(|| {
            panic!(
                "docker-registry is not installed: the OCI chart tests run Distribution's real \
                 registry (apt-get install docker-registry; scripts/test.sh does)"
            )
        });
        let dir = tempfile::tempdir().unwrap();
        let port = {
            let l = TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let cfg = dir.path().join("config.yml");
        std::fs::write(
            &cfg,
            format!(
                "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {}\nhttp:\n  addr: 127.0.0.1:{port}\n",
                dir.path().join("data").display()
            ),
        )
        .unwrap();
        let child = Command::new(bin)
            .arg("serve")
            .arg(&cfg)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start docker-registry");
        let host = format!("127.0.0.1:{port}");
        let r = Registry {
            child,
            host: host.clone(),
            _dir: dir,
        };
        let start = Instant::now();
        while TcpStream::connect(&host).is_err() {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "docker-registry did not start on {host}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        r
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn which(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// The Helm engine's Python (the virtualenv scripts/test.sh makes).
fn venv_python() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let venv = std::env::var("GPULEDGER_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|_| root.join(".venv"));
    let venv = if venv.is_relative() {
        root.join(venv)
    } else {
        venv
    };
    let py = venv.join("bin/python");
    assert!(
        py.exists(),
        "the Helm engine is not installed at {}: run scripts/install-helm-engine.sh",
        venv.display()
    );
    py
}

/// Packages chart directories with the Helm engine into `into`, writes a Helm repository index
/// there, and pushes the archives named in `push` to `oci://<registry>/<path>`; returns the
/// archives' file names.
pub fn charts(charts: &[&Path], into: &Path, push: &[(&str, String)]) -> Vec<String> {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/support/charts.py");
    let mut cmd = Command::new(venv_python());
    cmd.arg(script).arg(into);
    for c in charts {
        cmd.arg(c);
    }
    for (tgz, remote) in push {
        cmd.arg(format!("push:{tgz}={remote}"));
    }
    let out = cmd.output().expect("run charts.py");
    assert!(
        out.status.success(),
        "charts.py: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

/// A bare git repository under `root` named `name`, holding `repo`'s commits and tags.
pub fn publish_git(repo: &Path, root: &Path, name: &str) {
    let dest = root.join(name);
    let out = Command::new("git")
        .args(["clone", "-q", "--bare"])
        .arg(repo)
        .arg(&dest)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
