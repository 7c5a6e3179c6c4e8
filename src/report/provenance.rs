//! Provenance: what a report is about and where and when its inputs were read — the scope (cluster),
//! each live source with its read time and age, and each side of Git compared.

use serde::{Deserialize, Serialize};

use super::envelope::Unknown;
use crate::config::Age;
use crate::util::date::Timestamp;

/// What a report is about, where its inputs came from and when they were read: the scope (cluster)
/// its title names, each live source with its read time and age, and each side of Git compared.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Provenance {
    /// The cluster or scope (`gpu-east`): GitHub's `--scope`, else the live state's context;
    /// `null` when neither is known.
    pub scope: Option<String>,
    /// The report's clock (`--now`, else the system clock), RFC 3339 UTC.
    pub reported_at: Option<Timestamp>,
    /// One entry per snapshot file or cluster read; empty without live state.
    pub live: Vec<LiveProvenance>,
    /// `desired` (drift, inventory), or `base` and `head` (check).
    pub git: Vec<GitProvenance>,
}

impl Provenance {
    /// Ages every live source against `now`: past `stale_after` it is stale. Pure: the clock is
    /// passed in.
    pub fn new(
        scope: Option<String>,
        live: Vec<LiveProvenance>,
        git: Vec<GitProvenance>,
        now: Timestamp,
        stale_after: Age,
    ) -> Provenance {
        let scope = scope.or_else(|| {
            let contexts: std::collections::BTreeSet<&str> =
                live.iter().filter_map(|l| l.context.as_deref()).collect();
            (!contexts.is_empty()).then(|| contexts.into_iter().collect::<Vec<_>>().join(", "))
        });
        let live = live
            .into_iter()
            .map(|mut l| {
                l.stale_after = stale_after.to_string();
                l.age_seconds = l.read_at.map(|t| now.seconds_since(t));
                l.stale = l
                    .age_seconds
                    .is_some_and(|a| u64::try_from(a).is_ok_and(|a| a > stale_after.0));
                l
            })
            .collect();
        Provenance {
            scope,
            reported_at: Some(now),
            live,
            git,
        }
    }
}

/// Whether the live state came from a snapshot file or from the cluster itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LiveSourceKind {
    Snapshot,
    Cluster,
}

/// Where and when one live source was read.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LiveProvenance {
    pub source: LiveSourceKind,
    /// The snapshot file as given, or the cluster (`context (server)`).
    pub name: String,
    pub context: Option<String>,
    /// The API server URL, without credentials.
    pub server: Option<String>,
    /// When the read started, RFC 3339 UTC; `null` when unknown (`read_at_unknown` says why).
    pub read_at: Option<Timestamp>,
    pub read_at_unknown: Option<String>,
    /// Why a figure is `null` (`read_at`, `age_seconds`); `read_at_unknown` says the same.
    #[serde(default)]
    pub unknown: Unknown,
    /// Seconds from `read_at` to the report's clock; `null` when `read_at` is unknown.
    pub age_seconds: Option<i64>,
    /// Older than `stale_after` at report time.
    pub stale: bool,
    /// The threshold (`snapshot.stale_after` in the config), as written (`24h`).
    pub stale_after: String,
    /// The gpuledger version that wrote the snapshot.
    pub gpuledger_version: Option<String>,
}

/// One side of Git a report compares.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GitProvenance {
    /// `base`, `head` or `desired`.
    pub side: String,
    /// The ref as given (`origin/main`, a sha); `null` for the working tree.
    #[serde(rename = "ref")]
    pub git_ref: Option<String>,
    /// The commit's short sha (the commit the working tree is on, for the working tree).
    pub commit: Option<String>,
    /// Its subject line.
    pub subject: Option<String>,
    /// The working tree was rendered (uncommitted changes included, outside Actions).
    pub working_tree: bool,
    /// How people read it: `origin/main (abc1234 "Fix x")`, `working tree on top of abc1234
    /// "Fix x"`, `merge of def5678 "Add y" into abc1234`.
    pub describe: String,
}
