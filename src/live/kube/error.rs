//! Why a cluster read failed. A 403 on one resource is not here: it makes the read incomplete
//! ([`super::Missing`]), never an error. Each message names the cluster (or the kubeconfig) and
//! what to give instead.

use std::path::PathBuf;

use kube::config::{InferConfigError, KubeconfigError};

/// The text when there is no cluster to read at all: what to give instead.
const NO_CONFIG: &str = "no cluster to read: no --kubeconfig, no $KUBECONFIG, no ~/.kube/config, \
and not running in a cluster. Give a kubectl dump with `--snapshot FILE` (`gpuledger snapshot \
--output FILE` writes one on a machine that has cluster access), or a kubeconfig with `--kubeconfig FILE`";

/// A cluster read that could not be done.
#[derive(Debug, thiserror::Error)]
pub enum KubeError {
    #[error("{NO_CONFIG}")]
    NoConfig,
    #[error("cannot read kubeconfig {}: {source}", path.display())]
    ReadKubeconfig {
        path: PathBuf,
        #[source]
        source: KubeconfigError,
    },
    /// The kubeconfig `--kubeconfig` names reads but does not give a client configuration.
    #[error("kubeconfig {}: {source}", path.display())]
    Kubeconfig {
        path: PathBuf,
        #[source]
        source: KubeconfigError,
    },
    /// The default kubeconfig (`$KUBECONFIG`, `~/.kube/config`) with `--context`.
    #[error("kubeconfig: {0}")]
    DefaultKubeconfig(#[source] KubeconfigError),
    #[error("no cluster configuration (kubeconfig or in-cluster): {0}")]
    Infer(#[source] InferConfigError),
    /// `file` is the kubeconfig's path, or "the kubeconfig".
    #[error("{file} has no context {wanted:?}: it defines no contexts at all")]
    NoContexts { file: String, wanted: String },
    /// `known` is sorted.
    #[error("{file} has no context {wanted:?}; its contexts: {}", known.join(", "))]
    UnknownContext {
        file: String,
        wanted: String,
        known: Vec<String>,
    },
    #[error("cannot build a Kubernetes client: {0}")]
    Client(#[source] kube::Error),
    #[error("{cluster}: discovery failed: {source}")]
    Discovery {
        cluster: String,
        #[source]
        source: DiscoveryError,
    },
    /// `reason` is the last request's failure (`GET /api/v1/pods: 500 …`).
    #[error("{cluster}: listing {resource}: {reason}")]
    List {
        cluster: String,
        resource: String,
        reason: String,
    },
    #[error("a list task failed: {0}")]
    Task(#[source] tokio::task::JoinError),
    #[error("{cluster}: reading the cluster took longer than --timeout {seconds}s")]
    Timeout { cluster: String, seconds: u64 },
    /// A page `write_snapshot` could not read as JSON.
    #[error("{cluster}: {resource}: {source}")]
    Page {
        cluster: String,
        resource: String,
        #[source]
        source: serde_json::Error,
    },
    #[error("cannot write the snapshot: {0}")]
    Write(#[source] std::io::Error),
}

/// Why discovery (`/apis`, `/apis/<group>/<version>`) failed.
#[derive(Debug, thiserror::Error)]
pub enum DiscoveryError {
    /// `GET /apis` failed: the request's own message names the path.
    #[error("{0}")]
    Groups(String),
    #[error("discovery {path}: {reason}")]
    Request { path: String, reason: String },
    #[error("discovery {path}: {source}")]
    Parse {
        path: String,
        #[source]
        source: serde_json::Error,
    },
}
