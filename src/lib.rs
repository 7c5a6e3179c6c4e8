//! gpuledger: who holds the GPUs in a shared Kubernetes fleet, what they are worth, and whether Git
//! agrees.
//!
//! Data moves one way: readers ([`k8s::read`], [`live`], [`desired`]) turn snapshots, clusters and
//! repositories into plain [`k8s::object::Object`]s; [`workload`] turns objects into workloads with
//! GPU shapes; [`analysis`] computes the report sections; [`report`] holds the serializable
//! reports, one per kind; [`render`] builds each report as [`doc`] blocks, laid out as a terminal
//! table or markdown (or the report as JSON). [`pipeline`] runs one job end to end (specs in, a
//! report with its notes and outcome out). The library never prints: the binary (`src/main.rs`,
//! its `cli` and `commands`) turns flags into specs, runs a pipeline job, renders and delivers.
//!
//! Everything here reads input someone else wrote, so nothing may panic on it: indexing and string
//! slicing that could go out of range or split a character are refused outside tests (use `get`,
//! iterators, `split_once`), and GPU arithmetic is checked ([`util::sum`]).

#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

pub mod analysis;
pub mod config;
pub mod desired;
pub mod doc;
pub mod error;
pub mod facts;
pub mod github;
pub mod intent;
pub mod k8s;
pub mod live;
pub mod pipeline;
pub mod plan;
pub mod queues;
pub mod render;
pub mod report;
pub mod util;
pub mod workload;
