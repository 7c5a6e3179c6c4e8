//! Integration tests: the binary driven on fixture files, as a user or CI would run it.
//!
//! One test binary (faster to link) with a module per area.

mod argo_sources;
mod check;
mod check_headroom;
mod cli;
mod compare;
mod contacts;
mod corpus;
mod cost;
mod cost_window;
mod deadlines;
mod demo;
mod docs;
mod dra;
mod drift;
mod emulator;
mod emulator_watch;
mod errors;
mod exporter;
mod fleet_clusters;
mod follow;
mod fuzz;
mod git_faults;
mod github;
mod headroom;
mod helm_charts;
mod hostile;
mod injection;
mod install;
mod intent;
mod key_order;
mod kinds;
mod layout;
mod links;
mod list_faults;
mod live;
mod metrics_faults;
mod models;
mod one_truth;
mod pipeline;
mod plan;
mod projection;
mod prometheus;
mod provenance;
mod queues;
mod remote;
mod render;
mod routes;
mod sandbox;
mod serve_child;
mod serve_recovery;
mod serve_watch;
mod ship;
mod support;
mod trend;
mod unread;
mod used;

#[path = "../support/get_server.rs"]
mod get_server;
#[path = "../support/github.rs"]
mod github_fake;
#[path = "../support/kube_emulator.rs"]
mod kube_emulator;
#[path = "../support/opencost.rs"]
mod opencost_fake;
#[path = "../support/prometheus.rs"]
mod prometheus_harness;
#[path = "../support/remote.rs"]
mod remote_servers;
#[path = "../support/thanos.rs"]
mod thanos;
