//! Reading the live side: the cluster through the Kubernetes API, GPU activity from metrics, cost
//! from OpenCost, and outcomes from the application.

pub mod http;
pub mod kube;
pub mod opencost;
pub mod outcomes;
pub mod prometheus;
pub mod range;
pub mod serving;
