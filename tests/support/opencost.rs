//! An OpenCost stand-in for integration tests: a small HTTP/1.1 server on 127.0.0.1 that answers
//! each path with a recorded response, in OpenCost's wire format, and remembers what it was asked.
//!
//! OpenCost cannot run here (its allocation data needs a cluster and its Prometheus), so the tests
//! serve responses recorded in its real format instead — both field generations (GPU averages at
//! the top level, and inside `gpuAllocation`), a `NaN` body, a 500 — and drive them through
//! gpuledger's production HTTP client. A path the test did not record answers 404 with OpenCost's
//! error body, as a server without `/inferenceCost` does. Dropping the handle stops the server.
#![allow(dead_code)] // each test uses part of the API

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// A running stand-in.
pub struct OpenCost {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    requests: Arc<Mutex<Vec<String>>>,
    thread: Option<JoinHandle<()>>,
}

/// What one path answers: a status and a body.
#[derive(Clone, Debug)]
pub struct Answer {
    pub status: u16,
    pub body: String,
}

impl Answer {
    pub fn ok(body: impl Into<String>) -> Answer {
        Answer {
            status: 200,
            body: body.into(),
        }
    }

    pub fn status(status: u16, body: impl Into<String>) -> Answer {
        Answer {
            status,
            body: body.into(),
        }
    }

    /// A recorded response from tests/fixtures/opencost.
    pub fn fixture(name: &str) -> Answer {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/opencost")
            .join(name);
        Answer::ok(std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!("cannot read {}: {e}", path.display());
        }))
    }
}

impl OpenCost {
    /// Serves `routes` (path without query → answer) until dropped.
    pub fn start(routes: &[(&str, Answer)]) -> OpenCost {
        let routes: BTreeMap<String, Answer> = routes
            .iter()
            .map(|(p, a)| (p.to_string(), a.clone()))
            .collect();
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the stand-in");
        let addr = listener.local_addr().expect("local addr");
        let stop = Arc::new(AtomicBool::new(false));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let thread = {
            let (stop, requests) = (stop.clone(), requests.clone());
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    if let Ok(s) = stream {
                        serve(s, &routes, &requests);
                    }
                }
            })
        };
        OpenCost {
            addr,
            stop,
            requests,
            thread: Some(thread),
        }
    }

    /// `http://127.0.0.1:<port>`
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The request targets (path and query) it was asked for, in order.
    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().expect("requests").clone()
    }
}

impl Drop for OpenCost {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Wakes the accept loop so that it sees the flag.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve(stream: TcpStream, routes: &BTreeMap<String, Answer>, requests: &Mutex<Vec<String>>) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let mut reader = BufReader::new(match stream.try_clone() {
        Ok(s) => s,
        Err(_) => return,
    });
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() || line.is_empty() {
        return;
    }
    // The headers end at the first empty line; a GET has no body.
    loop {
        let mut h = String::new();
        match reader.read_line(&mut h) {
            Ok(0) | Err(_) => break,
            Ok(_) if h.trim().is_empty() => break,
            Ok(_) => {}
        }
    }
    let target = line.split_whitespace().nth(1).unwrap_or("/").to_string();
    requests.lock().expect("requests").push(target.clone());
    let path = target.split('?').next().unwrap_or("/");
    let answer = routes.get(path).cloned().unwrap_or_else(|| {
        Answer::status(
            404,
            format!(
                r#"{{"code":404,"status":"","data":null,"message":"404 page not found: {path}"}}"#
            ),
        )
    });
    let reason = match answer.status {
        200 => "OK",
        404 => "Not Found",
        500 => "Internal Server Error",
        _ => "Status",
    };
    let mut stream = stream;
    let _ = write!(
        stream,
        "HTTP/1.1 {} {reason}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
        answer.status,
        answer.body.len(),
        answer.body
    );
    let _ = stream.flush();
}
