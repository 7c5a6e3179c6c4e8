//! The OpenCost stand-in the integration tests use (`tests/support/opencost.rs`, the one source of
//! both), as a program that `scripts/demo.sh` runs: it serves recorded OpenCost responses in
//! OpenCost's wire format on a free port of 127.0.0.1, prints its URL on the first line of standard
//! output, and serves until it is killed.
//!
//! ```sh
//! opencost_standin /allocation=fixtures/demo/opencost/allocation.json
//! ```
//!
//! Each argument is `PATH=FILE`: requests for PATH (the query is ignored, as the tests' stand-in
//! ignores it) answer 200 with FILE's contents; any other path answers OpenCost's 404 body.

#[path = "../tests/support/get_server.rs"]
mod get_server;
#[path = "../tests/support/opencost.rs"]
mod opencost;

use std::io::Write;

use opencost::{Answer, OpenCost};

fn main() {
    let mut routes = Vec::new();
    for arg in std::env::args().skip(1) {
        let Some((path, file)) = arg.split_once('=') else {
            eprintln!("opencost_standin: expected PATH=FILE, got {arg:?}");
            std::process::exit(2);
        };
        let body = std::fs::read_to_string(file).unwrap_or_else(|e| {
            eprintln!("opencost_standin: cannot read {file}: {e}");
            std::process::exit(2);
        });
        routes.push((path.to_string(), Answer::ok(body)));
    }
    let routes: Vec<(&str, Answer)> = routes
        .iter()
        .map(|(p, a)| (p.as_str(), a.clone()))
        .collect();
    let server = OpenCost::start(&routes);
    let mut out = std::io::stdout();
    let _ = writeln!(out, "{}", server.url());
    let _ = out.flush();
    loop {
        std::thread::park();
    }
}
