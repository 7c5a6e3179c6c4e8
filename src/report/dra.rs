//! What a report says about GPUs through Dynamic Resource Allocation: per workload, which of its
//! GPUs came through claims and which claims; for the fleet, which GPUs were read from
//! ResourceSlices and which were requested through claims. A person can then tell a "DRA claim"
//! figure from a "device plugin" one. Every section is absent when the input has no DRA objects,
//! so the reports of device-plugin fleets are unchanged.
//!
//! A GPU that cannot be counted (a claim with `allocationMode: All` before allocation, a share of
//! a device several claims may use, a template that is not in the input) is named in `uncounted`
//! with why; the figures beside it count the rest.

use std::collections::BTreeMap;

use serde::Serialize;

/// The fleet's figures through DRA.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct FleetDra {
    /// Of `gpus.capacity`, `gpus.allocatable` and `gpus.placeable`: the whole GPUs read from
    /// ResourceSlices, on nodes without device-plugin GPUs; the rest came from the device plugin.
    pub capacity_from_slices: u64,
    pub allocatable_from_slices: u64,
    pub placeable_from_slices: u64,
    /// The GPU nodes whose GPUs were read from ResourceSlices.
    pub nodes_from_slices: Vec<String>,
    /// Of `gpus.requested` and `gpus.pending`: the whole GPUs through DRA claims (a DRA-served
    /// `nvidia.com/gpu` limit included); the rest came through the device plugin.
    pub requested_from_claims: u64,
    pub pending_from_claims: u64,
    /// Claims counted (a template's one per pod), and of them allocated.
    pub claims: u64,
    pub claims_allocated: u64,
    /// DRA devices of other classes, never GPUs, by class.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub other_devices: Vec<OtherDeviceRow>,
    /// What could not be counted, and why: `requested` and `pending` count the rest.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub uncounted: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OtherDeviceRow {
    /// The device class (`gpu.example.com`, `gpu.nvidia.com (shared capacity)`).
    pub class: String,
    pub requested: u64,
    pub pending: u64,
}

/// A workload's figures through DRA.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct WorkloadDra {
    /// Of `gpus`, `gpus_pending` and `gpus_declared`: the whole GPUs through DRA claims; the rest
    /// through the device plugin.
    pub gpus_from_claims: u64,
    pub gpus_pending_from_claims: u64,
    pub gpus_declared_from_claims: u64,
    /// The most `gpus_declared` may be when a claim offers alternatives (`firstAvailable`);
    /// `null` when part of it cannot be counted (`uncounted` says why).
    pub gpus_declared_max: Option<u64>,
    /// DRA devices of other classes its pods hold or wait for, by class.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub other_devices: BTreeMap<String, u64>,
    /// Its claims, by kind and name.
    pub claims: Vec<ClaimRow>,
    /// For a shared ResourceClaim: the pods that use it (`namespace/name`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub consumers: Vec<String>,
    /// What could not be counted, and why: its figures count the rest.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub uncounted: Vec<String>,
}

/// The claims of one kind and name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ClaimRow {
    /// `template` (a claim per pod), `shared` (one ResourceClaim for all its consumers) or
    /// `extended-resource` (the scheduler's claim for a pod's `nvidia.com/gpu` limit).
    pub how: String,
    /// The ResourceClaimTemplate (template) or ResourceClaim.
    pub name: String,
    pub claims: u64,
    pub allocated: u64,
    /// Whole GPUs they hold (allocated) or ask for.
    pub gpus: u64,
    /// MIG slices by profile.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub mig: BTreeMap<String, u64>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub other_devices: BTreeMap<String, u64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub uncounted: Vec<String>,
}
