//! A Thanos-style querier in front of the real Prometheus, for tests of partial answers: it
//! forwards every GET to the Prometheus it fronts and answers with what that Prometheus said, plus
//! `"warnings": [...]`, as Thanos Query does when a store did not answer (`partial_response`), and
//! without the series of that store (those whose labels carry `dropped`). It speaks only HTTP/1.1
//! with `Connection: close`, on 127.0.0.1; dropping the handle stops it.
#![allow(dead_code)] // each test uses part of the API

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// A running querier.
pub struct PartialQuerier {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    asked: Arc<Mutex<Vec<String>>>,
    thread: Option<JoinHandle<()>>,
}

impl PartialQuerier {
    /// Fronts the Prometheus at `upstream` (`http://127.0.0.1:PORT`); every answer with
    /// `"status":"success"` gets `warning` and loses the series labelled `dropped` (`(label,
    /// value)`), as a store that timed out would lose them.
    pub fn start(upstream: &str, warning: &str, dropped: Option<(&str, &str)>) -> PartialQuerier {
        let upstream: SocketAddr = upstream
            .trim_start_matches("http://")
            .parse()
            .expect("http://ADDR");
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the querier");
        let addr = listener.local_addr().expect("local addr");
        let stop = Arc::new(AtomicBool::new(false));
        let asked = Arc::new(Mutex::new(Vec::new()));
        let warning = warning.to_string();
        let dropped = dropped.map(|(k, v)| (k.to_string(), v.to_string()));
        let thread = {
            let (stop, asked) = (stop.clone(), asked.clone());
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    if let Ok(s) = stream {
                        answer(s, upstream, &warning, dropped.as_ref(), &asked);
                    }
                }
            })
        };
        PartialQuerier {
            addr,
            stop,
            asked,
            thread: Some(thread),
        }
    }

    /// `http://127.0.0.1:<port>`
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The request targets it forwarded, in order.
    pub fn asked(&self) -> Vec<String> {
        self.asked.lock().expect("asked").clone()
    }
}

impl Drop for PartialQuerier {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn answer(
    stream: TcpStream,
    upstream: SocketAddr,
    warning: &str,
    dropped: Option<&(String, String)>,
    asked: &Mutex<Vec<String>>,
) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let Ok(clone) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(clone);
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() || line.is_empty() {
        return;
    }
    loop {
        let mut h = String::new();
        match reader.read_line(&mut h) {
            Ok(0) | Err(_) => break,
            Ok(_) if h.trim().is_empty() => break,
            Ok(_) => {}
        }
    }
    let target = line.split_whitespace().nth(1).unwrap_or("/").to_string();
    asked.lock().expect("asked").push(target.clone());
    let (status, body) = forward(upstream, &target).unwrap_or((502, String::new()));
    let body = match serde_json::from_str::<serde_json::Value>(&body) {
        Ok(mut v) if v["status"] == "success" => {
            if let (Some((k, val)), Some(result)) = (dropped, v["data"]["result"].as_array_mut()) {
                result.retain(|s| s["metric"][k.as_str()] != val.as_str());
            }
            v["warnings"] = serde_json::json!([warning]);
            v.to_string()
        }
        _ => body,
    };
    let mut stream = stream;
    let _ = write!(
        stream,
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.flush();
}

/// The status and body of `GET target` on the upstream (HTTP/1.0, so the body ends at close).
fn forward(upstream: SocketAddr, target: &str) -> Option<(u16, String)> {
    let mut s = TcpStream::connect_timeout(&upstream, Duration::from_secs(2)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    write!(s, "GET {target} HTTP/1.0\r\nHost: {upstream}\r\n\r\n").ok()?;
    let mut response = String::new();
    s.read_to_string(&mut response).ok()?;
    let status = response.split_whitespace().nth(1)?.parse().ok()?;
    let body = response.split_once("\r\n\r\n")?.1.to_string();
    Some((status, body))
}
