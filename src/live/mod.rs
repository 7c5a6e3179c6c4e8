//! Reading the live side: the cluster through the Kubernetes API, GPU activity and serving rates
//! from metrics, cost from OpenCost, outcomes from the application, and the load tests serving
//! workloads name. Everything here does I/O and hands over plain data; the analyses that use it
//! import from here, never the other way.

pub mod http;
pub mod jobs;
pub mod kube;
pub mod loadtest;
pub mod opencost;
pub mod outcomes;
pub mod prometheus;
pub mod range;
pub mod serving;
