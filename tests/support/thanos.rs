//! A Thanos-style querier in front of the real Prometheus, for tests of partial answers: it
//! forwards every GET to the Prometheus it fronts and answers with what that Prometheus said, plus
//! `"warnings": [...]`, as Thanos Query does when a store did not answer (`partial_response`), and
//! without the series of that store (those whose labels carry `dropped`). It speaks only HTTP/1.1
//! with `Connection: close`, on 127.0.0.1; dropping the handle stops it.
#![allow(dead_code)] // each test uses part of the API

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use super::get_server::GetServer;

/// A running querier.
pub struct PartialQuerier {
    server: GetServer,
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
        let warning = warning.to_string();
        let dropped = dropped.map(|(k, v)| (k.to_string(), v.to_string()));
        let server = GetServer::start(move |target| {
            let (status, body) = forward(upstream, target).unwrap_or((502, String::new()));
            let body = match serde_json::from_str::<serde_json::Value>(&body) {
                Ok(mut v) if v["status"] == "success" => {
                    if let (Some((k, val)), Some(result)) =
                        (&dropped, v["data"]["result"].as_array_mut())
                    {
                        result.retain(|s| s["metric"][k.as_str()] != val.as_str());
                    }
                    v["warnings"] = serde_json::json!([warning]);
                    v.to_string()
                }
                _ => body,
            };
            (status, body)
        });
        PartialQuerier { server }
    }

    /// `http://127.0.0.1:<port>`
    pub fn url(&self) -> String {
        self.server.url()
    }

    /// The request targets it forwarded, in order.
    pub fn asked(&self) -> Vec<String> {
        self.server.asked()
    }
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
