//! gpuledger: who holds the GPUs in a shared Kubernetes fleet, what they are worth, and whether Git
//! agrees.
//!
//! Data moves one way: readers ([`k8s::read`]) turn snapshots into plain [`k8s::object::Object`]s;
//! [`workload`] turns objects into workloads with GPU shapes; [`analysis`] computes the report
//! sections; [`report::Report`] is the one serializable result; [`render`] turns it into a table,
//! markdown or JSON. The library never prints: `main.rs` does.

pub mod analysis;
pub mod cli;
pub mod commands;
pub mod config;
pub mod desired;
pub mod doc;
pub mod error;
pub mod github;
pub mod k8s;
pub mod live;
pub mod render;
pub mod report;
pub mod util;
pub mod workload;
