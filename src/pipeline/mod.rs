//! The pipeline: one function per job (inventory, drift, check, render, cost, headroom, trend,
//! plan, facts), each taking the input specs ([`input`]) and returning a typed [`Run`] — the
//! report, the notes a person should read beside it, and how the run ended — or a typed
//! [`Error`]. The binary only turns flags into specs, calls a job, renders and delivers.
//!
//! Every job assembles its report in one place: what was read and from where (sources and
//! provenance), whether the report is complete, and which notes go with it are set by the steps in
//! [`fleet`], so two commands given the same inputs say the same things the same way.
//!
//! This file holds what every job shares and uses none of them; the jobs are its children.

pub mod check;
mod check_headroom;
pub mod commits;
pub mod compare;
pub mod cost;
pub mod deadlines;
pub mod drift;
pub mod facts;
pub mod fleet;
pub mod headroom;
pub mod input;
pub mod inventory;
pub mod plan;
mod read;
pub mod render;
pub mod trend;

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use tokio::runtime::Runtime;

use crate::github::event::Runtime as Actions;
use crate::live::kube::Progress;

/// What a job runs with: the one async runtime (made by the binary), the progress counters a
/// terminal shows, and the CI runtime (to name the checked-out commit as Actions checked it out).
pub struct Context<'a> {
    pub rt: &'a Runtime,
    pub progress: Arc<Progress>,
    pub actions: Actions,
}

/// What a job produced.
#[derive(Debug)]
pub struct Run<R> {
    pub report: R,
    /// What a person should know besides the report (standard error).
    pub notes: Vec<Note>,
    pub outcome: Outcome,
}

/// How a job ended, which the binary maps to its exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    /// Done, nothing the user asked to fail on (exit 0).
    Clean,
    /// Findings the user asked to fail on: drift, a failed gate, a missed deadline (exit 1).
    Findings,
    /// An input could not be read or rendered: the report is written but incomplete (exit 2).
    Incomplete,
}

impl Outcome {
    /// The worse of two outcomes.
    pub fn and(self, other: Outcome) -> Outcome {
        self.max(other)
    }
}

/// A line for standard error: what a person should know besides the report.
#[derive(Debug, Clone, PartialEq)]
pub enum Note {
    /// The config file that was read.
    ConfigUsed(String),
    /// The report went to this file.
    Written(PathBuf),
    /// GPU activity could not be read.
    MetricsUnknown(String),
    /// A resource that could not be read: `what` is the report, the live state or the snapshot.
    Incomplete {
        what: &'static str,
        resource: String,
        reason: String,
    },
    /// Apps (or the repository) that failed to render.
    RenderFailed(Vec<String>),
    /// Gates that failed.
    GatesFailed(Vec<String>),
    /// Anything else (what was posted to GitHub, a dry run).
    Say(String),
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Note::ConfigUsed(p) => write!(f, "using config {p}"),
            Note::Written(p) => write!(f, "report written to {}", p.display()),
            Note::MetricsUnknown(why) => write!(f, "GPUs used are unknown: {why}"),
            Note::Incomplete {
                what,
                resource,
                reason,
            } => write!(f, "{what} incomplete: {resource}: {reason}"),
            Note::RenderFailed(failed) => {
                write!(
                    f,
                    "{} failed to render: {}",
                    failed.len(),
                    failed.join("; ")
                )
            }
            Note::GatesFailed(g) => write!(f, "failed gates: {}", g.join(", ")),
            Note::Say(s) => f.write_str(s),
        }
    }
}

/// Why a job could not produce a report at all (exit 2). A partial input is not an error: the
/// report says what is missing and the [`Outcome`] is [`Outcome::Incomplete`].
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file that cannot be read or understood (a snapshot, the config, the repository's files).
    #[error(transparent)]
    Input(#[from] crate::error::Error),
    /// A total that does not fit in 64 bits.
    #[error(transparent)]
    Overflow(#[from] crate::util::sum::Overflow),
    #[error("cannot read the current directory")]
    CurrentDir(#[source] std::io::Error),
    /// The flags ask for something the job cannot do (two clusters where it reads one, a missing
    /// base ref): the message says what to give instead.
    #[error("{0}")]
    Usage(String),
    #[error("cannot read the cluster: {0}")]
    Cluster(String),
    #[error("--repo {}: not a directory", .0.display())]
    NotADirectory(PathBuf),
    #[error("cannot read the repository {}", path.display())]
    Repository {
        path: PathBuf,
        #[source]
        source: crate::error::Error,
    },
    /// Nothing renders where `--repo` points: the wrong directory, a subdirectory, a missing ref.
    #[error(
        "nothing to render in {} ({at}): no Kubernetes manifest, kustomization, Helm chart, Argo CD \
         Application or Flux Kustomization was found there; give --repo the GitOps repository's \
         root, or list what to render under render.roots in .gpuledger.yaml",
        dir.display()
    )]
    NothingToRender { dir: PathBuf, at: String },
    /// A repository that did not render completely where a job needs all of it.
    #[error("{0}")]
    Incomplete(String),
    #[error("cannot read the outcome records {}", path.display())]
    OutcomeRecords {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Prometheus could not be read where a job needs it (`trend`).
    #[error("{0}")]
    Prometheus(String),
    /// The GitHub Actions runtime could not be read (its event payload).
    #[error("{0}")]
    Actions(String),
    /// A Kueue ClusterQueue that cannot give a pool.
    #[error("{0}")]
    Queue(String),
    /// The markdown documents of a repository could not be read.
    #[error("{what}")]
    Documents {
        what: String,
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
