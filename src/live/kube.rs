//! The live cluster through the Kubernetes API: read-only, concurrent, paginated.
//!
//! gpuledger lists exactly the resources its analyses read ([`RESOURCES`]) — never Secrets — each at
//! the version the API server prefers, so custom resources served in several versions (Dynamo
//! `v1alpha1` and `v1beta1`) are read once. Resources the server does not serve are simply absent.
//! A 403 marks the read incomplete and names the resource and the RBAC verb it needs; everything
//! else is still read. Requests are retried with backoff on 429 and 5xx, each has a timeout, and the
//! whole read has one too. Pages are parsed straight into the same lean [`crate::k8s::object::Object`]s
//! a snapshot file gives, so the analyses cannot tell the sources apart.
//!
//! The work follows the data: [`client`] builds the client from the kubeconfig (or the pod's
//! service account); [`request`] makes one GET with its timeout and retries; [`discover`] finds
//! which resources the cluster serves and where; [`list`] reads them into objects
//! ([`read_cluster`]) with [`pager`] checking every page (duplicates, loops, bounds), and [`snapshot`] writes them to a file instead ([`write_snapshot`]); [`watch`] keeps them current in a store for `serve` ([`watch_cluster`]). What
//! a read is about and what it hands over are [`types`]; why it failed is [`error`].

mod client;
mod discover;
mod error;
mod health;
mod list;
mod pager;
mod request;
mod snapshot;
mod types;
mod watch;

pub use client::register_kubeconfig_secrets;
pub use error::{DiscoveryError, KubeError};
pub use health::ResourceSync;
pub use list::read_cluster;
pub use snapshot::{SnapshotWritten, write_snapshot};
pub use types::{ClusterRead, ClusterSource, Missing, Origin, Progress, RESOURCES, Resource};
pub use watch::{Requests, Watched, WatchedFleet, watch_cluster};
