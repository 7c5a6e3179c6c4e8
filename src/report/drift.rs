//! Drift between Git (desired) and the cluster (live), both directions: unmanaged, missing, changed,
//! in sync, accepted, unknown — and the GitOps coverage of the GPUs requested.

use serde::Serialize;

use crate::workload::{Role, WorkloadId};

/// Drift between Git (desired) and the cluster (live), both directions.
#[derive(Debug, Clone, Serialize)]
pub struct Drift {
    /// `GitOps covers 30% of requested GPUs; 9 unmanaged workloads hold 212 GPUs; 2 missing; 1 changed`
    pub summary: String,
    /// GPUs requested by workloads that match Git / all GPUs requested; `null` when nothing is
    /// requested.
    pub coverage: Option<f64>,
    pub coverage_by_tenant: Vec<TenantCoverage>,
    /// Live GPU workloads with no match in Git.
    pub unmanaged: Vec<DriftRow>,
    /// In Git, not live.
    pub missing: Vec<DriftRow>,
    /// In both, with a different GPU shape.
    pub changed: Vec<DriftRow>,
    pub in_sync: Vec<DriftRow>,
    /// In Git and live in Git's shape, but waiting for its queue's quota (a suspended job, its
    /// Kueue Workload without quota; evicted or preempted and waiting again): not drift, and not
    /// running either. Each row's `queue_state` says which.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub queued: Vec<DriftRow>,
    /// Drift hidden by an accepted-drift rule that has not expired.
    pub accepted: Vec<DriftRow>,
    /// Live workloads whose tracking names an app that failed to render: neither unmanaged nor in
    /// sync, since what Git says of them could not be read (`app` names the failed app).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown: Vec<DriftRow>,
    /// Accepted-drift rules past their date: they hide nothing.
    pub expired: Vec<ExpiredRule>,
    /// The ref the desired state was rendered at.
    pub desired_at: String,
    /// True when some app failed to render: `missing` and `unmanaged` may then be overstated.
    pub desired_incomplete: bool,
}

impl Drift {
    /// Unaccepted drift exists: something unmanaged, missing or changed.
    pub fn drifting(&self) -> bool {
        !(self.unmanaged.is_empty() && self.missing.is_empty() && self.changed.is_empty())
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct TenantCoverage {
    pub tenant: String,
    pub gpus_requested: u64,
    pub gpus_managed: u64,
    pub coverage: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct DriftRow {
    pub namespace: String,
    pub api_group: String,
    pub kind: String,
    pub name: String,
    pub tenant: String,
    /// GPUs requested live (0 when missing).
    pub gpus: u64,
    /// GPUs declared in Git (0 when unmanaged; `null` when a DRA claim's GPUs cannot be counted).
    pub gpus_git: Option<u64>,
    /// The app that renders it from Git.
    pub app: Option<String>,
    /// The GitOps app the live object names in its tracking metadata (Argo CD, Flux).
    pub tracked_by: Option<String>,
    pub git: Option<Vec<Role>>,
    pub live: Option<Vec<Role>>,
    pub git_shape: Option<String>,
    pub live_shape: Option<String>,
    /// Replicas are owned by an autoscaler: only GPUs per replica and nodes are compared.
    pub autoscaled: bool,
    /// Unified diff of the GPU-relevant spec (changed only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// What differs from Git to live, role by role (`decode replicas 8 → 4, -32 GPUs`; changed
    /// only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub change: Option<String>,
    /// When the live object was created (RFC 3339), and its age in whole days at the report's
    /// date: how long an unmanaged workload has run outside Git.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub age_days: Option<i64>,
    /// For accepted rows: the category it would have had, and the rule.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accepted_as: Option<DriftCategory>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<AcceptedBy>,
    /// The manifest in Git (file:line).
    pub git_source: Option<String>,
    /// Where its Kueue Workload stands when it waits: `queued`, `evicted`, `preempted`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_state: Option<super::queues::QueueState>,
    /// More than one app in this cluster applies the object: Git's side is ambiguous, and the
    /// row compares with the first of these apps only.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ambiguous: Vec<String>,
}

impl DriftRow {
    pub fn workload_id(&self) -> WorkloadId {
        WorkloadId::new(&self.namespace, &self.api_group, &self.kind, &self.name)
    }

    /// How drift names a workload in text: the [`WorkloadId`]'s display.
    pub fn id(&self) -> String {
        self.workload_id().to_string()
    }
}

/// Where drift puts a workload. Accepted drift keeps the category it would have had
/// ([`DriftRow::accepted_as`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DriftCategory {
    /// Live, with no match in Git.
    Unmanaged,
    /// In Git, not live.
    Missing,
    /// In both, with a different GPU shape.
    Changed,
    InSync,
    /// In Git's shape, waiting for its queue's quota.
    Queued,
}

impl DriftCategory {
    pub fn as_str(self) -> &'static str {
        match self {
            DriftCategory::Unmanaged => "unmanaged",
            DriftCategory::Missing => "missing",
            DriftCategory::Changed => "changed",
            DriftCategory::InSync => "in_sync",
            DriftCategory::Queued => "queued",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct AcceptedBy {
    pub reason: String,
    pub owner: Option<String>,
    pub expires: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ExpiredRule {
    pub rule: String,
    pub reason: String,
    pub owner: Option<String>,
    pub expired: String,
    /// Workloads it would hide if it were still valid.
    pub would_match: Vec<String>,
}
