//! Reading the live side: the cluster through the Kubernetes API, and GPU activity from metrics.

pub mod http;
pub mod kube;
pub mod prometheus;
pub mod range;
