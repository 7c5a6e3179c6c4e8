//! The workload and its shape as every analysis names them: [`WorkloadId`] (the one key across
//! Git and the cluster), [`Role`]s and the [`GpuShape`] they make, the words for a change of
//! shape, and the live [`Workload`] with what its pods request. Plain data; how a shape is read
//! from a spec is [`super::kinds`], how workloads are assembled from objects [`super::owners`].

use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;

use crate::k8s::gpus::Gpus;

use super::claims::ClaimSummary;
use crate::k8s::object::Source;
use crate::util::date::Timestamp;
use crate::util::sum::{self, TooLarge};

/// namespace + API group + kind + name: the key that matches a workload across Git and the cluster.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct WorkloadId {
    pub namespace: String,
    pub group: String,
    pub kind: String,
    pub name: String,
}

impl WorkloadId {
    pub fn new(namespace: &str, group: &str, kind: &str, name: &str) -> WorkloadId {
        WorkloadId {
            namespace: namespace.to_string(),
            group: group.to_string(),
            kind: kind.to_string(),
            name: name.to_string(),
        }
    }

    /// The id once applied: a manifest without a namespace lands in `default`, as `kubectl apply`
    /// would put it, so Git and the cluster match on where the object really is.
    pub fn placed(mut self) -> WorkloadId {
        if self.namespace.is_empty() {
            self.namespace = "default".to_string();
        }
        self
    }
}

/// `namespace/Kind/name` (`Kind/name` when cluster-scoped): the one way a workload is named in text.
impl fmt::Display for WorkloadId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.namespace.is_empty() {
            write!(f, "{}/{}", self.kind, self.name)
        } else {
            write!(f, "{}/{}/{}", self.namespace, self.kind, self.name)
        }
    }
}

/// One role of a workload: `replicas × gpus_per_replica` whole GPUs, where a replica may span several
/// nodes (a multinode Dynamo service, a LeaderWorkerSet group).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Role {
    pub name: String,
    pub replicas: u64,
    pub gpus_per_replica: u64,
    /// Pods (nodes) per replica; 1 for ordinary pods.
    pub nodes_per_replica: u64,
    /// Replicas are owned by an autoscaler (a Dynamo scaling adapter or Planner, an HPA): a
    /// difference in replicas is not drift.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub autoscaled: bool,
    /// Per replica: which of its whole GPUs come through DRA claims, and what it declares besides
    /// whole GPUs (MIG slices, shared GPUs, other DRA devices) or cannot count. Its totals are the
    /// shape's [`GpuShape::devices`], which the reports show.
    #[serde(skip)]
    pub devices: DeviceDetail,
}

/// What a replica (or a whole shape) declares besides the whole GPUs its figure counts, and how
/// sure that figure is. Empty for a workload of plain `nvidia.com/gpu` limits.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeviceDetail {
    /// It declares devices through DRA claims (whole GPUs or not).
    pub through_claims: bool,
    /// Of the whole GPUs, those that come through DRA claims (the rest: the device plugin).
    pub gpus_from_claims: u64,
    /// Up to this many more whole GPUs: claim requests with alternatives (`firstAvailable`).
    pub gpus_more: u64,
    /// MIG slices and shared GPUs by resource name (`nvidia.com/mig-1g.10gb`), and DRA devices
    /// of other classes by class name; never whole GPUs.
    pub other: BTreeMap<String, u64>,
    /// Why the whole GPUs are not known exactly (then the figure is what is known).
    pub unknown: Vec<String>,
}

impl DeviceDetail {
    pub fn is_empty(&self) -> bool {
        self == &DeviceDetail::default()
    }

    /// `self += other`, checked.
    pub fn add(&mut self, other: &DeviceDetail) -> Result<(), TooLarge> {
        self.through_claims |= other.through_claims;
        sum::add_to(&mut self.gpus_from_claims, other.gpus_from_claims)?;
        sum::add_to(&mut self.gpus_more, other.gpus_more)?;
        for (k, n) in &other.other {
            sum::add_to(self.other.entry(k.clone()).or_insert(0), *n)?;
        }
        for u in &other.unknown {
            if !self.unknown.contains(u) {
                self.unknown.push(u.clone());
            }
        }
        Ok(())
    }

    /// `self × n`, checked; nothing times zero is known to be nothing.
    pub fn scaled(&self, n: u64) -> Result<DeviceDetail, TooLarge> {
        if n == 0 {
            return Ok(DeviceDetail::default());
        }
        Ok(DeviceDetail {
            through_claims: self.through_claims,
            gpus_from_claims: sum::mul(self.gpus_from_claims, n)?,
            gpus_more: sum::mul(self.gpus_more, n)?,
            other: self
                .other
                .iter()
                .map(|(k, v)| Ok((k.clone(), sum::mul(*v, n)?)))
                .collect::<Result<_, TooLarge>>()?,
            unknown: self.unknown.clone(),
        })
    }
}

impl Role {
    /// `replicas × gpus_per_replica`, checked.
    pub fn gpus(&self) -> Result<u64, TooLarge> {
        sum::mul(self.replicas, self.gpus_per_replica)
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {}×{}",
            self.name, self.replicas, self.gpus_per_replica
        )?;
        if self.nodes_per_replica > 1 {
            write!(f, " ({} nodes each)", self.nodes_per_replica)?;
        }
        if self.autoscaled {
            f.write_str(" (autoscaled)")?;
        }
        Ok(())
    }
}

/// The GPU roles of a workload, sorted by name. Roles without whole GPUs (a frontend, a MIG-only
/// role) are left out of `roles`; what every role declares besides whole GPUs is in `devices`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct GpuShape {
    pub roles: Vec<Role>,
    /// Σ replicas × each role's [`Role::devices`], roles without whole GPUs included.
    #[serde(skip)]
    pub devices: DeviceDetail,
}

impl GpuShape {
    pub fn new(mut roles: Vec<Role>) -> GpuShape {
        let mut devices = DeviceDetail::default();
        for r in &roles {
            let total = r.devices.scaled(r.replicas).and_then(|d| devices.add(&d));
            if total.is_err() {
                devices.unknown.push(format!(
                    "role {}: its devices per replica × {} replicas {TooLarge}",
                    r.name, r.replicas
                ));
            }
        }
        roles.retain(|r| r.gpus_per_replica > 0);
        roles.sort_by(|a, b| a.name.cmp(&b.name));
        // Two services that map to the same role name (two "worker"s) stay two roles, but a reader
        // must be able to tell them apart, so they keep their order and get a numeric suffix.
        for group in roles.chunk_by_mut(|a, b| a.name == b.name) {
            if group.len() > 1 {
                for (k, r) in group.iter_mut().enumerate() {
                    r.name = format!("{}-{}", r.name, k + 1);
                }
            }
        }
        GpuShape { roles, devices }
    }

    /// The most whole GPUs the shape may take (`total()` plus what alternatives may add), or
    /// `None` when some of it cannot be counted.
    pub fn total_max(&self) -> Option<u64> {
        if !self.devices.unknown.is_empty() {
            return None;
        }
        sum::add(self.total().ok()?, self.devices.gpus_more).ok()
    }

    /// The whole GPUs it declares: [`GpuShape::total`], or `None` when a DRA claim's GPUs cannot be
    /// counted (`devices.unknown` says why) — unknown, never the smaller figure.
    pub fn declared(&self) -> Result<Option<u64>, TooLarge> {
        if !self.devices.unknown.is_empty() {
            return Ok(None);
        }
        self.total().map(Some)
    }

    /// Σ replicas × GPUs per replica, checked. Shapes read from an object were checked when it was
    /// read ([`check`]), so for them this never fails.
    pub fn total(&self) -> Result<u64, TooLarge> {
        self.roles
            .iter()
            .try_fold(0, |acc, r| sum::add(acc, r.gpus()?))
    }

    /// True when some role asks for GPUs per replica, even at zero replicas (a graph scaled to zero
    /// still declares GPUs), or for MIG slices, shared GPUs or other DRA devices, or for GPUs it
    /// cannot count.
    pub fn declares_gpus(&self) -> bool {
        !self.roles.is_empty() || !self.devices.other.is_empty() || !self.devices.unknown.is_empty()
    }
}

impl fmt::Display for GpuShape {
    /// `decode 10×8 + prefill 10×8 = 160`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, r) in self.roles.iter().enumerate() {
            if i > 0 {
                f.write_str(" + ")?;
            }
            write!(f, "{r}")?;
        }
        match self.total() {
            Ok(n) => write!(f, " = {n}"),
            Err(e) => write!(f, " = {e}"),
        }
    }
}

/// What differs between two shapes, role by role, and what it does to the GPUs:
/// `decode replicas 8 → 10, +16 GPUs`; `prefill added (4×8), +32 GPUs`. Empty when the roles are
/// the same. A reader sees the change, not two shapes to compare by eye.
pub fn describe_change(from: &[Role], to: &[Role]) -> String {
    let mut parts = Vec::new();
    let mut names: Vec<&str> = from.iter().chain(to).map(|r| r.name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    for name in names {
        let (a, b) = (
            from.iter().find(|r| r.name == name),
            to.iter().find(|r| r.name == name),
        );
        match (a, b) {
            (Some(a), Some(b)) => {
                let mut d = Vec::new();
                for (what, x, y) in [
                    ("replicas", a.replicas, b.replicas),
                    ("GPUs per replica", a.gpus_per_replica, b.gpus_per_replica),
                    (
                        "nodes per replica",
                        a.nodes_per_replica,
                        b.nodes_per_replica,
                    ),
                ] {
                    if x != y {
                        d.push(format!("{what} {x} → {y}"));
                    }
                }
                if !d.is_empty() {
                    parts.push(format!("{name} {}", d.join(", ")));
                }
            }
            (Some(a), None) => parts.push(format!(
                "{name} removed ({}×{})",
                a.replicas, a.gpus_per_replica
            )),
            (None, Some(b)) => parts.push(format!(
                "{name} added ({}×{})",
                b.replicas, b.gpus_per_replica
            )),
            (None, None) => {}
        }
    }
    if parts.is_empty() {
        return String::new();
    }
    let total = |roles: &[Role]| -> i128 {
        roles
            .iter()
            .map(|r| i128::from(r.replicas) * i128::from(r.gpus_per_replica))
            .sum()
    };
    let delta = total(to) - total(from);
    let gpus = match delta {
        0 => "no change in GPUs".to_string(),
        1 => "+1 GPU".to_string(),
        -1 => "-1 GPU".to_string(),
        d => format!("{d:+} GPUs"),
    };
    format!("{}, {gpus}", parts.join("; "))
}

/// Pod counts of a workload: how many of its GPU pods are bound, and how many wait.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct PodCounts {
    pub bound: u64,
    pub pending: u64,
    /// Held by admission (a scheduling gate, a pod group its queue holds).
    #[serde(skip_serializing_if = "is_zero")]
    pub queued: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A live workload: the root owner of GPU pods, or a root object that declares GPUs.
#[derive(Debug, Clone)]
pub struct Workload {
    pub id: WorkloadId,
    /// The API version of the root object, when known.
    pub api_version: Option<String>,
    /// Whether the root object itself is in the input (otherwise it was inferred from owner
    /// references or well-known labels).
    pub object_present: bool,
    /// Labels of the root object, or of the topmost object found when the root is missing.
    pub labels: crate::k8s::types::LabelMap,
    /// Declared shape from the root object's spec, or inferred from its pods when the root is absent.
    pub shape: GpuShape,
    /// True when `shape` was read from the spec rather than inferred from pods.
    pub shape_from_spec: bool,
    /// True when the spec is of a kind gpuledger does not model and `shape` is the GPUs its pod
    /// templates request ([`super::kinds::shape_is_guess`]).
    pub shape_guessed: bool,
    /// GPUs requested by bound, non-terminal pods.
    pub requested: Gpus,
    /// GPUs requested by unbound, non-terminal pods.
    pub pending: Gpus,
    /// GPUs waiting for its queue's quota: its pods held by admission, else its Kueue Workloads
    /// that wait (a suspended job has no pod). Never also in `pending`.
    pub queued: Gpus,
    pub pods: PodCounts,
    pub source: Option<Source>,
    /// When its topmost object found was created (live objects only; unreadable → `None`).
    pub created: Option<Timestamp>,
    /// The root object's `gpuledger.io/*` intent annotations, as written.
    pub intent_annotations: crate::k8s::types::Labels,
    /// What the root object says elsewhere that bears on its intent.
    pub intent_facts: crate::intent::Facts,
    /// What its pods (or, for a shared ResourceClaim, the claim) hold through DRA.
    pub dra: LiveDevices,
}

/// What a live workload holds through DRA claims: which of its GPUs came through them, what else
/// they hold, what cannot be counted, and the claims themselves. Empty for a workload of plain
/// `nvidia.com/gpu` limits served by the device plugin.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LiveDevices {
    /// Of the whole GPUs `requested`, those through DRA claims (a DRA-served `nvidia.com/gpu`
    /// limit included); the rest came from the device plugin.
    pub requested_from_claims: u64,
    /// The same of `pending`.
    pub pending_from_claims: u64,
    /// Up to this many more whole GPUs: claims with alternatives not allocated yet.
    pub gpus_more: u64,
    /// DRA devices of other classes held or waited for, by class.
    pub other: BTreeMap<String, u64>,
    /// Why its whole GPUs are not known exactly.
    pub unknown: Vec<String>,
    /// Its claims, by kind and name.
    pub claims: Vec<ClaimSummary>,
    /// For a shared ResourceClaim: the pods that use it (`namespace/name`), sorted.
    pub consumers: Vec<String>,
}

impl LiveDevices {
    pub fn is_empty(&self) -> bool {
        self == &LiveDevices::default()
    }
}
