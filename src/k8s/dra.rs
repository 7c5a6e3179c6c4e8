//! Lean typed views of Dynamic Resource Allocation objects (`resource.k8s.io`): ResourceClaims,
//! ResourceClaimTemplates, DeviceClasses and ResourceSlices, with only the fields that count GPUs.
//!
//! Field names follow `kubernetes/api` `resource/v1/types.go` (v1 is v1beta2 copied on 2025-07-03).
//! The three served versions differ in two places, and both are read here into one shape:
//!
//! - a request's fields (`deviceClassName`, `count`, `allocationMode`, `adminAccess`, `selectors`,
//!   `capacity`) sit under `exactly` in v1beta2 and v1, and directly on the request in v1beta1
//!   (`resource/v1beta1/types.go`): [`DeviceRequest::exact`] gives either as one [`ExactRequest`];
//! - a ResourceSlice device keeps its attributes under `basic` in v1beta1 and directly on the
//!   device in v1beta2 and v1: [`SliceDevice::attrs`] gives either.
//!
//! Device attributes are kept only for the names the GPU count reads (the NVIDIA DRA driver's
//! `type`, `uuid`, `parentUUID`, `profile`, `productName`: kubernetes-sigs/dra-driver-nvidia-gpu
//! `site/content/docs/reference/resourceslice-attributes.md`); a slice advertising every possible
//! MIG partition of a GPU then costs a few strings per device.

use std::collections::BTreeMap;
use std::fmt;

use super::exact::exact;
use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};

/// `resource.k8s.io`
pub const GROUP: &str = "resource.k8s.io";

/// The annotation the scheduler puts on the claim it creates for a pod's extended resources
/// served by DRA (`kubernetes/api` `resource/v1/types.go`, KEP-5004). Its value is `"true"` in
/// the types and the pod's name in the KEP's text: any value counts.
pub const EXTENDED_RESOURCE_CLAIM: &str = "resource.kubernetes.io/extended-resource-claim";

/// The annotation a claim generated from a pod's template claim carries: the pod's
/// `spec.resourceClaims[].name` it was made for.
pub const POD_CLAIM_NAME: &str = "resource.kubernetes.io/pod-claim-name";

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct CelSelector {
    pub expression: String,
}

/// One selector of a request or a class; only CEL selectors exist.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct DeviceSelector {
    pub cel: Option<CelSelector>,
}

/// `capacity` of a request (consumable capacity): the amount of each capacity it takes of a
/// device that several claims may share. Kept as written, for the note that says so.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct CapacityRequirements {
    pub requests: BTreeMap<String, serde_json::Value>,
}

/// The fields of an exact request (`exactly`), of a subrequest (`firstAvailable[]`, which has no
/// `adminAccess`) and of a v1beta1 request, which all count devices the same way.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ExactRequest {
    /// The subrequest's name (empty for `exactly`).
    pub name: String,
    pub device_class_name: String,
    #[serde(deserialize_with = "exact")]
    pub selectors: Vec<DeviceSelector>,
    /// `ExactCount` (the default) or `All`.
    pub allocation_mode: Option<String>,
    /// Used with `ExactCount` only; defaults to 1.
    pub count: Option<u64>,
    pub admin_access: Option<bool>,
    pub capacity: Option<CapacityRequirements>,
}

/// One entry of `spec.devices.requests`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct DeviceRequest {
    pub name: String,
    pub exactly: Option<ExactRequest>,
    #[serde(deserialize_with = "exact")]
    pub first_available: Vec<ExactRequest>,
    // v1beta1: the exact request's fields on the request itself.
    device_class_name: String,
    #[serde(deserialize_with = "exact")]
    selectors: Vec<DeviceSelector>,
    allocation_mode: Option<String>,
    count: Option<u64>,
    admin_access: Option<bool>,
    capacity: Option<CapacityRequirements>,
}

impl DeviceRequest {
    /// The request as one exact request: `exactly` (v1, v1beta2), or the fields on the request
    /// (v1beta1); `None` when the request offers alternatives instead (`firstAvailable`).
    pub fn exact(&self) -> Option<ExactRequest> {
        if let Some(e) = &self.exactly {
            return Some(e.clone());
        }
        if !self.first_available.is_empty() {
            return None;
        }
        Some(ExactRequest {
            name: String::new(),
            device_class_name: self.device_class_name.clone(),
            selectors: self.selectors.clone(),
            allocation_mode: self.allocation_mode.clone(),
            count: self.count,
            admin_access: self.admin_access,
            capacity: self.capacity.clone(),
        })
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct DeviceClaim {
    #[serde(deserialize_with = "exact")]
    pub requests: Vec<DeviceRequest>,
}

/// `spec` of a ResourceClaim, and `spec.spec` of a ResourceClaimTemplate (copied unchanged into
/// each claim made from it).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ClaimSpec {
    pub devices: DeviceClaim,
}

/// One allocated device: `status.allocation.devices.results[]`, one entry per device. `request`
/// names a subrequest as `<request>/<subrequest>`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct AllocationResult {
    pub request: String,
    pub driver: String,
    pub pool: String,
    pub device: String,
    pub admin_access: Option<bool>,
    /// Set when the device may be allocated to several claims (consumable capacity).
    #[serde(rename = "shareID")]
    pub share_id: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct AllocatedDevices {
    #[serde(deserialize_with = "exact")]
    pub results: Vec<AllocationResult>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct FieldRequirement {
    pub key: String,
    pub operator: String,
    #[serde(deserialize_with = "exact")]
    pub values: Vec<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct NodeSelectorTerm {
    #[serde(deserialize_with = "exact")]
    pub match_fields: Vec<FieldRequirement>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct NodeSelector {
    #[serde(deserialize_with = "exact")]
    pub node_selector_terms: Vec<NodeSelectorTerm>,
}

impl NodeSelector {
    /// The one node the selector names (`metadata.name In [node]`), as the scheduler writes it
    /// for devices local to a node.
    pub fn single_node(&self) -> Option<&str> {
        let [term] = self.node_selector_terms.as_slice() else {
            return None;
        };
        term.match_fields
            .iter()
            .find(|f| f.key == "metadata.name" && f.operator == "In" && f.values.len() == 1)
            .and_then(|f| f.values.first())
            .map(String::as_str)
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Allocation {
    pub devices: AllocatedDevices,
    pub node_selector: Option<NodeSelector>,
}

/// A consumer of a claim (`status.reservedFor[]`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ConsumerRef {
    pub resource: String,
    pub name: String,
    pub uid: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ClaimStatus {
    pub allocation: Option<Allocation>,
    #[serde(deserialize_with = "exact")]
    pub reserved_for: Vec<ConsumerRef>,
}

#[derive(Debug, Clone, Default)]
pub struct ClaimBody {
    pub spec: ClaimSpec,
    pub status: ClaimStatus,
}

/// `spec` of a ResourceClaimTemplate: its `metadata` (labels and annotations for the claims) is
/// not read.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ClaimTemplateSpec {
    pub spec: ClaimSpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct DeviceClassSpec {
    #[serde(deserialize_with = "exact")]
    pub selectors: Vec<DeviceSelector>,
    /// The extended resource (`nvidia.com/gpu`) that devices of this class serve to pods that ask
    /// for it in their limits (DRAExtendedResource).
    pub extended_resource_name: Option<String>,
}

/// The attributes of a device that the GPU count reads, by their name without a domain (a bare
/// name belongs to the driver's domain, `gpu.nvidia.com/uuid` is `uuid`). Each attribute sets
/// one of `string`, `int`, `bool`, `version`; only strings are read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeviceAttrs {
    /// `gpu`, `mig`, `vfio` (NVIDIA), `channel`, `daemon` (ComputeDomain).
    pub type_: Option<String>,
    pub uuid: Option<String>,
    /// The physical GPU of a MIG device.
    pub parent_uuid: Option<String>,
    /// A MIG device's profile (`1g.5gb`).
    pub profile: Option<String>,
    pub product_name: Option<String>,
}

impl<'de> Deserialize<'de> for DeviceAttrs {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize, Default)]
        #[serde(default)]
        struct Value {
            string: Option<String>,
        }
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = DeviceAttrs;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a map of device attributes")
            }
            fn visit_unit<E: de::Error>(self) -> Result<DeviceAttrs, E> {
                Ok(DeviceAttrs::default())
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<DeviceAttrs, A::Error> {
                let mut out = DeviceAttrs::default();
                while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    let name = key.rsplit('/').next().unwrap_or_default();
                    let slot = match name {
                        "type" => &mut out.type_,
                        "uuid" => &mut out.uuid,
                        "parentUUID" => &mut out.parent_uuid,
                        "profile" => &mut out.profile,
                        "productName" => &mut out.product_name,
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                            continue;
                        }
                    };
                    let v: Option<Value> = map.next_value()?;
                    // A qualified and a bare key for one attribute: the first wins.
                    if slot.is_none() {
                        *slot = v.and_then(|v| v.string);
                    }
                }
                Ok(out)
            }
        }
        d.deserialize_any(V)
    }
}

/// v1beta1's `basic` device.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct BasicDevice {
    pub attributes: DeviceAttrs,
    pub consumes_counters: Vec<IgnoredAny>,
}

/// One device of a ResourceSlice.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct SliceDevice {
    pub name: String,
    attributes: DeviceAttrs,
    basic: Option<BasicDevice>,
    consumes_counters: Vec<IgnoredAny>,
    /// With per-device node selection, the node of this device.
    pub node_name: Option<String>,
    /// The device may be allocated to several claims at once (consumable capacity).
    pub allow_multiple_allocations: Option<bool>,
}

impl SliceDevice {
    /// The device's attributes, wherever its API version keeps them.
    pub fn attrs(&self) -> &DeviceAttrs {
        match &self.basic {
            Some(b) if self.attributes == DeviceAttrs::default() => &b.attributes,
            _ => &self.attributes,
        }
    }

    /// Whether the device is a partition that consumes counters shared with others (dynamic
    /// MIG: every possible partition is advertised, and only some can exist at once).
    pub fn consumes_counters(&self) -> bool {
        !self.consumes_counters.is_empty()
            || self
                .basic
                .as_ref()
                .is_some_and(|b| !b.consumes_counters.is_empty())
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ResourcePool {
    pub name: String,
    pub generation: i64,
    pub resource_slice_count: i64,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct SliceSpec {
    pub driver: String,
    pub pool: ResourcePool,
    pub node_name: Option<String>,
    pub all_nodes: Option<bool>,
    #[serde(deserialize_with = "exact")]
    pub devices: Vec<SliceDevice>,
    /// Counter sets shared by the devices of the pool (partitionable devices).
    pub shared_counters: Vec<IgnoredAny>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_v1beta1_request_reads_like_a_v1_one() {
        let v1: DeviceRequest = serde_json::from_str(
            r#"{"name":"gpu","exactly":{"deviceClassName":"gpu.nvidia.com","count":2}}"#,
        )
        .unwrap();
        let beta: DeviceRequest =
            serde_json::from_str(r#"{"name":"gpu","deviceClassName":"gpu.nvidia.com","count":2}"#)
                .unwrap();
        for r in [v1, beta] {
            let e = r.exact().unwrap();
            assert_eq!(
                (e.device_class_name.as_str(), e.count),
                ("gpu.nvidia.com", Some(2))
            );
        }
        let alternatives: DeviceRequest = serde_json::from_str(
            r#"{"name":"gpu","firstAvailable":[{"name":"a","deviceClassName":"x"}]}"#,
        )
        .unwrap();
        assert!(alternatives.exact().is_none());
        assert_eq!(alternatives.first_available[0].name, "a");
    }

    #[test]
    fn device_attributes_bare_qualified_and_basic() {
        let v1: SliceDevice = serde_json::from_str(
            r#"{"name":"gpu-0-mig-1g.5gb-0","attributes":{"type":{"string":"mig"},"gpu.nvidia.com/parentUUID":{"string":"GPU-1"},"profile":{"string":"1g.5gb"},"index":{"int":0},"resource.kubernetes.io/pcieRoot":{"string":"pci0000:00"}},"consumesCounters":[{"counterSet":"gpu-0"}]}"#,
        )
        .unwrap();
        let a = v1.attrs();
        assert_eq!(a.type_.as_deref(), Some("mig"));
        assert_eq!(a.parent_uuid.as_deref(), Some("GPU-1"));
        assert_eq!(a.profile.as_deref(), Some("1g.5gb"));
        assert!(v1.consumes_counters());
        let beta: SliceDevice = serde_json::from_str(
            r#"{"name":"gpu-0","basic":{"attributes":{"type":{"string":"gpu"},"uuid":{"string":"GPU-0"}}}}"#,
        )
        .unwrap();
        assert_eq!(beta.attrs().uuid.as_deref(), Some("GPU-0"));
        assert!(!beta.consumes_counters());
    }

    #[test]
    fn the_node_of_an_allocation() {
        let a: Allocation = serde_json::from_str(
            r#"{"devices":{"results":[{"request":"gpu","driver":"gpu.nvidia.com","pool":"n1","device":"gpu-0"}]},"nodeSelector":{"nodeSelectorTerms":[{"matchFields":[{"key":"metadata.name","operator":"In","values":["n1"]}]}]}}"#,
        )
        .unwrap();
        assert_eq!(a.node_selector.unwrap().single_node(), Some("n1"));
        assert_eq!(a.devices.results[0].device, "gpu-0");
    }
}
