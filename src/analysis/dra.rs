//! The DRA sections of the inventory: a workload's GPUs through claims (and what could not be
//! counted), and the fleet's GPUs read from ResourceSlices and requested through claims, so the
//! reports tell a "DRA claim" figure from a "device plugin" one.
//!
//! Pure, from the live fleet's model: the same holders ([`GpuPod`]) the fleet's `requested` and
//! `pending` add up, so `requested_from_claims` is a part of `requested` by construction.

use std::collections::BTreeMap;

use crate::k8s::object::{Kind, Object};
use crate::report::{ClaimRow, FleetDra, OtherDeviceRow, Unknown, WorkloadDra};
use crate::util::sum::{self, Named, Overflow};
use crate::workload::Workload;
use crate::workload::owners::{PodState, Workloads};

use super::nodes::GpuNode;

/// Whether the input has DRA objects: then the fleet's DRA section is written.
pub fn has_dra(objects: &[Object]) -> bool {
    objects.iter().any(|o| {
        matches!(
            o.typed_kind(),
            Kind::ResourceClaim
                | Kind::ResourceClaimTemplate
                | Kind::DeviceClass
                | Kind::ResourceSlice
        )
    })
}

/// A workload's DRA figures, or `None` when it holds and declares nothing through claims.
pub fn workload(w: &Workload) -> Option<WorkloadDra> {
    let d = &w.dra;
    let shape = &w.shape.devices;
    if d.is_empty() && !shape.through_claims && shape.unknown.is_empty() {
        return None;
    }
    let mut uncounted = d.unknown.clone();
    for u in &shape.unknown {
        if !uncounted.contains(u) {
            uncounted.push(u.clone());
        }
    }
    Some(WorkloadDra {
        gpus_from_claims: d.requested_from_claims,
        gpus_pending_from_claims: d.pending_from_claims,
        gpus_declared_from_claims: shape.gpus_from_claims,
        gpus_declared_max: w.shape.total_max(),
        other_devices: d.other.clone(),
        claims: d
            .claims
            .iter()
            .map(|c| ClaimRow {
                how: c.how.as_str().to_string(),
                name: c.name.clone(),
                claims: c.claims,
                allocated: c.allocated,
                gpus: c.devices.gpus.whole,
                mig: c.devices.gpus.mig.clone(),
                other_devices: c.devices.other.clone(),
                uncounted: c.devices.unknown.clone(),
            })
            .collect(),
        consumers: d.consumers.clone(),
        uncounted,
    })
}

/// The fleet's DRA figures, when the input has DRA objects (or a pod holds GPUs through claims).
/// Names in `unknown` the MIG capacity and allocatable dynamic MIG leaves open.
pub fn fleet(
    objects: &[Object],
    nodes: &BTreeMap<&str, GpuNode<'_>>,
    live: &Workloads<'_>,
    unknown: &mut Unknown,
) -> Result<Option<FleetDra>, Overflow> {
    const FLEET: &str = "the fleet";
    if let Some(why) = mig_capacity_unknown(nodes) {
        unknown.set("other_gpus.capacity", why.clone());
        unknown.set("other_gpus.allocatable", why);
    }
    let (holders, workloads) = (live.pods.as_slice(), live.list.as_slice());
    let incomplete_pools = &crate::workload::claims::SliceDevices::new(objects).incomplete;
    if !has_dra(objects) && !holders.iter().any(|p| p.dra.is_some()) {
        return Ok(None);
    }
    let mut f = FleetDra::default();
    for n in nodes.values().filter(|n| n.from_slices) {
        sum::add_to(&mut f.capacity_from_slices, n.capacity).named(FLEET, "GPU capacity")?;
        sum::add_to(&mut f.allocatable_from_slices, n.allocatable)
            .named(FLEET, "allocatable GPUs")?;
        sum::add_to(&mut f.placeable_from_slices, n.placeable_gpus())
            .named(FLEET, "placeable GPUs")?;
        f.nodes_from_slices.push(n.name.to_string());
        if n.dynamic_mig {
            f.uncounted.push(format!(
                "node {}: its slices advertise every possible MIG partition (dynamic MIG), so its MIG capacity by profile is not a fixed number",
                n.name
            ));
        }
    }
    let mut other: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    for p in holders {
        let Some(h) = &p.dra else { continue };
        let (slot, what) = match p.state {
            PodState::Bound => (
                &mut f.requested_from_claims,
                "GPUs requested through claims",
            ),
            PodState::Pending => (&mut f.pending_from_claims, "GPUs pending through claims"),
            // A queued pod's claims are not allocated: it holds nothing yet.
            PodState::Queued | PodState::Terminal => continue,
        };
        sum::add_to(slot, h.from_claims).named(FLEET, what)?;
        for (class, n) in &h.other {
            let e = other.entry(class).or_default();
            let slot = if p.state == PodState::Bound {
                &mut e.0
            } else {
                &mut e.1
            };
            sum::add_to(slot, *n).named(FLEET, "DRA devices of other classes")?;
        }
        for c in &h.claims {
            f.claims = sum::add(f.claims, 1).named(FLEET, "claims")?;
            f.claims_allocated = sum::add(f.claims_allocated, u64::from(c.allocated == Some(true)))
                .named(FLEET, "claims")?;
        }
    }
    f.other_devices = other
        .into_iter()
        .map(|(class, (requested, pending))| OtherDeviceRow {
            class: class.to_string(),
            requested,
            pending,
        })
        .collect();
    for w in workloads {
        for why in &w.dra.unknown {
            f.uncounted.push(format!("{}: {why}", w.id));
        }
    }
    for pool in incomplete_pools {
        f.uncounted.push(format!(
            "ResourceSlice pool {pool} is incomplete (fewer slices than its resourceSliceCount at its newest generation): its devices are under-counted"
        ));
    }
    Ok(Some(f))
}

/// Why the fleet's MIG capacity by profile is unknown: a node advertises every possible MIG
/// partition in its slices (dynamic MIG), so which profiles it offers is decided at allocation.
pub fn mig_capacity_unknown(nodes: &BTreeMap<&str, GpuNode<'_>>) -> Option<String> {
    let dynamic: Vec<&str> = nodes
        .values()
        .filter(|n| n.dynamic_mig)
        .map(|n| n.name)
        .collect();
    (!dynamic.is_empty()).then(|| {
        format!(
            "MIG capacity by profile is no fixed number on nodes with dynamic MIG ({}): their DRA slices advertise every possible partition",
            dynamic.join(", ")
        )
    })
}

/// Adds a cluster's DRA figures to the total of several clusters, naming its nodes and reasons.
pub fn merge(
    into: &mut Option<FleetDra>,
    from: Option<&FleetDra>,
    cluster: &str,
) -> Result<(), Overflow> {
    const ALL: &str = "the clusters together";
    let Some(from) = from else { return Ok(()) };
    let t = into.get_or_insert_with(FleetDra::default);
    for (acc, n, what) in [
        (
            &mut t.capacity_from_slices,
            from.capacity_from_slices,
            "GPU capacity",
        ),
        (
            &mut t.allocatable_from_slices,
            from.allocatable_from_slices,
            "allocatable GPUs",
        ),
        (
            &mut t.placeable_from_slices,
            from.placeable_from_slices,
            "placeable GPUs",
        ),
        (
            &mut t.requested_from_claims,
            from.requested_from_claims,
            "GPUs requested through claims",
        ),
        (
            &mut t.pending_from_claims,
            from.pending_from_claims,
            "GPUs pending through claims",
        ),
        (&mut t.claims, from.claims, "claims"),
        (&mut t.claims_allocated, from.claims_allocated, "claims"),
    ] {
        sum::add_to(acc, n).named(ALL, what)?;
    }
    t.nodes_from_slices.extend(
        from.nodes_from_slices
            .iter()
            .map(|n| format!("{cluster}/{n}")),
    );
    t.uncounted
        .extend(from.uncounted.iter().map(|u| format!("{cluster}: {u}")));
    for o in &from.other_devices {
        match t.other_devices.iter_mut().find(|x| x.class == o.class) {
            Some(x) => {
                sum::add_to(&mut x.requested, o.requested).named(ALL, "DRA devices")?;
                sum::add_to(&mut x.pending, o.pending).named(ALL, "DRA devices")?;
            }
            None => t.other_devices.push(o.clone()),
        }
    }
    t.other_devices.sort_by(|a, b| a.class.cmp(&b.class));
    Ok(())
}
