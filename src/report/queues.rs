//! What the admission queues hold: one row per queue and GPU flavor (Kueue ClusterQueues, KAI
//! Queues), the quota of each tenant, and a change's verdict against the queue it joins.

use serde::{Deserialize, Serialize};

use super::envelope::Unknown;

/// A number of GPUs that may be a fraction (a KAI queue's quota, a shared GPU): written as an
/// integer when it is one (`8`, not `8.0`), so Kueue's whole quotas read as they are written.
#[derive(Debug, Clone, Copy, Default, PartialEq, PartialOrd)]
pub struct Amount(pub f64);

impl Amount {
    #[allow(clippy::cast_precision_loss)]
    pub fn whole(n: u64) -> Amount {
        Amount(n as f64)
    }

    /// The integer it is, when it is one.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    fn integer(self) -> Option<u64> {
        (self.0.fract() == 0.0 && self.0 >= 0.0 && self.0 < 9_007_199_254_740_992.0)
            .then_some(self.0 as u64)
    }
}

impl Serialize for Amount {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.integer() {
            Some(n) => s.serialize_u64(n),
            None => s.serialize_f64(self.0),
        }
    }
}

impl<'de> Deserialize<'de> for Amount {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Amount, D::Error> {
        f64::deserialize(d).map(Amount)
    }
}

impl std::fmt::Display for Amount {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.integer() {
            Some(n) => write!(f, "{n}"),
            None => {
                let s = format!("{:.2}", self.0);
                f.write_str(s.trim_end_matches('0').trim_end_matches('.'))
            }
        }
    }
}

/// Why a KAI queue's nominal quota is `null`: a quota of −1 bounds nothing (KAI's "unlimited").
pub const KAI_NO_QUOTA: &str = "quota −1: KAI bounds nothing (unlimited)";

/// `ClusterQueue` (Kueue) or `KAIQueue` (KAI Scheduler).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum QueueKind {
    ClusterQueue,
    #[serde(rename = "KAIQueue")]
    KaiQueue,
    /// A Kueue Cohort's own quota (in a quota change).
    Cohort,
}

impl QueueKind {
    pub fn as_str(self) -> &'static str {
        match self {
            QueueKind::ClusterQueue => "ClusterQueue",
            QueueKind::KaiQueue => "KAIQueue",
            QueueKind::Cohort => "Cohort",
        }
    }
}

/// One queue's GPUs in one flavor. GPU counts are whole GPUs, but a KAI queue's quota and
/// allocation may be fractions of a GPU: every figure is a number, never rounded.
#[derive(Debug, Clone, Serialize)]
pub struct QueueRow {
    pub queue: String,
    pub kind: QueueKind,
    /// The Kueue cohort (or KAI parent queue) it borrows from and lends to.
    pub cohort: Option<String>,
    /// The ResourceFlavor; `null` for a KAI queue (and a Kueue queue with no GPU flavor that
    /// work waits in).
    pub flavor: Option<String>,
    /// The GPU models of the flavor's node labels; empty when it names none (any model).
    pub models: Vec<String>,
    pub nominal: Option<Amount>,
    /// `null` when unset: no limit (up to what the cohort has unused).
    pub borrowing_limit: Option<Amount>,
    /// `null` when unset: all unused nominal quota may be lent.
    pub lending_limit: Option<Amount>,
    /// GPUs of admitted work (`status.flavorsUsage`, KAI `status.allocated` of the leaf queue).
    pub admitted: Option<Amount>,
    /// Of `admitted`, GPUs above the nominal quota, lent by the cohort.
    pub borrowed: Option<Amount>,
    /// GPUs of work waiting for this queue's quota in this flavor.
    pub queued: Option<Amount>,
    pub workloads_queued: Option<u64>,
    /// The tenants whose namespaces submit to it (through LocalQueues; KAI: the pods naming it).
    pub tenants: Vec<String>,
    /// Why a figure is `null` (an unset limit is not unknown: it is no limit).
    #[serde(skip_serializing_if = "Unknown::is_empty")]
    pub unknown: Unknown,
}

/// A tenant's standing in the admission queues.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TenantQueues {
    /// Nominal GPU quota of the queues its namespaces submit to (through LocalQueues; KAI: the
    /// queues its pods name).
    pub gpus_quota: Amount,
    /// GPUs of its admitted queue work.
    pub gpus_admitted: Amount,
    /// GPUs its queues borrow from their cohort (preemptible where the lenders reclaim); `null`
    /// when a queue that borrows serves several tenants (`queues_unknown` says which).
    pub gpus_borrowed: Option<Amount>,
    #[serde(skip_serializing_if = "Unknown::is_empty")]
    pub queues_unknown: Unknown,
}

/// The quota diagnosis: work waits for quota while placeable GPUs it could use are free.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QuotaShortage {
    /// GPUs queued.
    pub queued: u64,
    /// Placeable GPUs free (after pending pods) on nodes of the models the queued work may use.
    pub free_for_queued: u64,
    /// The queues work waits in, each at or near its quota: `cq-a (h100: 16 of 16)`.
    pub queues: Vec<String>,
    /// GPUs their cohorts could lend them now.
    pub cohort_could_lend: u64,
    /// Placeable GPUs no queue's nominal quota covers (placeable − Σ nominal GPU quota); `null`
    /// when a quota is unknown.
    pub uncovered_placeable: Option<u64>,
}

/// Who runs beyond their quota: a tenant's GPUs borrowed from a cohort.
#[derive(Debug, Clone, Serialize)]
pub struct BorrowingRow {
    pub tenant: String,
    pub queue: String,
    pub borrowed: u64,
    /// The lenders reclaim (`preemption.reclaimWithinCohort` other than `Never` in a queue of the
    /// cohort): this work may be preempted.
    pub preemptible: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub contacts: Vec<String>,
}

/// The verdict of Kueue's (or KAI's) admission on a workload a change adds or reshapes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Fits the queue's unused nominal quota.
    Admits,
    /// Fits only by borrowing from the cohort, within the borrowing limit.
    Borrows,
    /// Fits only by preempting admitted work.
    Preempts,
    /// Can fit the queue, not now: it waits for work ahead of it or running in it.
    Waits,
    /// More than the queue can ever reach, in every flavor, even partially.
    Never,
    Unknown,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Admits => "admits",
            Verdict::Borrows => "borrows",
            Verdict::Preempts => "preempts",
            Verdict::Waits => "waits",
            Verdict::Never => "never",
            Verdict::Unknown => "unknown",
        }
    }
}

/// One workload a change adds or reshapes, against the queue it joins.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AdmissionRow {
    /// `namespace/Kind/name`.
    pub workload: String,
    /// The ClusterQueue (or KAI queue) it lands in; `null` when its LocalQueue is not known.
    pub queue: Option<String>,
    /// The flavor it would be admitted in (or waits for).
    pub flavor: Option<String>,
    /// Its GPUs at the head's shape (at full count).
    pub gpus: u64,
    pub verdict: Verdict,
    pub why: String,
    /// The cluster, when the repository drives several.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<String>,
}

/// A queue's GPU quota in one flavor, as one side of a change has it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct QuotaSide {
    pub nominal: Option<Amount>,
    pub borrowing_limit: Option<Amount>,
    pub lending_limit: Option<Amount>,
}

/// A change to a queue's GPU quota: what moves.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct QuotaChange {
    pub queue: String,
    pub kind: QueueKind,
    pub flavor: Option<String>,
    /// `null` when the queue is new.
    pub before: Option<QuotaSide>,
    /// `null` when the change removes it.
    pub after: Option<QuotaSide>,
    /// Admitted GPUs that would be above the nominal quota after the change and were not
    /// before: preemptible once the lenders reclaim. `null` without the live state.
    pub becomes_borrowed: Option<u64>,
    /// Queued GPUs that would then be admitted (in queue order, within the new quota). `null`
    /// without the live state.
    pub would_admit: Option<u64>,
    /// Why `becomes_borrowed` or `would_admit` is `null`.
    #[serde(default, skip_serializing_if = "Unknown::is_empty")]
    pub unknown: Unknown,
}

/// A drift row's standing in its queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QueueState {
    /// Suspended, waiting for its queue's quota.
    Queued,
    /// Evicted by Kueue (its reason is in the row's note).
    Evicted,
    /// Preempted to make room for other work.
    Preempted,
}
