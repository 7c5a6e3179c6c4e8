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

use super::get_server::GetServer;

/// A running stand-in.
pub struct OpenCost {
    server: GetServer,
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
        let server = GetServer::start(move |target| {
            let path = target.split('?').next().unwrap_or("/");
            let answer = routes.get(path).cloned().unwrap_or_else(|| {
                Answer::status(
                    404,
                    format!(
                        r#"{{"code":404,"status":"","data":null,"message":"404 page not found: {path}"}}"#
                    ),
                )
            });
            (answer.status, answer.body)
        });
        OpenCost { server }
    }

    /// `http://127.0.0.1:<port>`
    pub fn url(&self) -> String {
        self.server.url()
    }

    /// The request targets (path and query) it was asked for, in order.
    pub fn requests(&self) -> Vec<String> {
        self.server.asked()
    }
}
