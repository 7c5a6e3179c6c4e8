//! Workloads: the top-level owners of GPU pods, with their GPU shapes.
//!
//! A workload is identified by namespace + API group + kind + name ([`WorkloadId`], the one key
//! every analysis matches and names workloads by) and has a [`GpuShape`]: one or more [`Role`]s,
//! each `replicas × gpus_per_replica` (`decode 10×8 + prefill 10×8 = 160`). Two figures are kept
//! apart on purpose: the *declared* shape, read from the owner's spec when the object is present
//! (what it asks for), and the GPUs *requested* by its pods (what it holds). They differ while a
//! rollout is in progress, when pods are pending, or when an autoscaler moved replicas, and each
//! answers a different question.
//!
//! [`types`] holds the workload and its shape as plain data; [`pods`] computes a pod's effective
//! request, [`kinds`] the declared shape of each kind, and [`owners`] walks owner references (and,
//! when they are missing, the well-known [`labels`]) to the root and assembles the workloads. This
//! module re-exports the types and checks, as an object is read, that its GPU figures fit.

pub mod claims;
pub mod kinds;
pub mod labels;
pub mod owners;
pub mod pods;
mod types;

pub use types::{GpuShape, PodCounts, Role, Workload, WorkloadId, describe_change};

use crate::error::InputError;
use crate::k8s::object::{Body, Object};
use crate::util::sum::{Named, Overflow};

/// Checks, once, as an object is read, that every GPU figure of it fits in 64 bits: its pod
/// request (a pod) and its declared shape (a workload). A figure that does not is an input error
/// naming the object, so nothing downstream ever sees a wrapped number.
pub fn check(o: &Object) -> Result<(), Overflow> {
    if let Body::Pod(p) = &o.body {
        pods::pod_request(&p.spec).named(o, "the GPUs its containers request")?;
    }
    if let Some(shape) = kinds::declared_shape(o)? {
        let roles: Vec<String> = shape.roles.iter().map(Role::to_string).collect();
        shape.total().named(
            o,
            format_args!("the GPUs it declares ({})", roles.join(" + ")),
        )?;
    }
    Ok(())
}

/// Refuses, at the door, objects of which a GPU figure does not fit in 64 bits ([`check`]): the
/// error names the object's file, its line and the object.
pub fn check_all(objects: &[Object]) -> Result<(), InputError> {
    for o in objects {
        check(o).map_err(|e| InputError {
            file: o.source.file.to_string(),
            line: o.source.line,
            column: None,
            message: e.to_string(),
        })?;
    }
    Ok(())
}

/// The objects just read, once [`check_all`] passed them.
pub fn checked(objects: Vec<Object>) -> Result<Vec<Object>, InputError> {
    check_all(&objects)?;
    Ok(objects)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn role(name: &str, replicas: u64, gpus: u64) -> Role {
        Role {
            name: name.into(),
            replicas,
            gpus_per_replica: gpus,
            nodes_per_replica: 1,
            autoscaled: false,
            devices: Default::default(),
        }
    }

    #[test]
    fn a_change_says_what_changed_and_what_it_does_to_the_gpus() {
        let base = [role("decode", 8, 8), role("prefill", 4, 8)];
        let head = [role("decode", 10, 8), role("prefill", 4, 8)];
        assert_eq!(
            describe_change(&base, &head),
            "decode replicas 8 → 10, +16 GPUs"
        );
        assert_eq!(
            describe_change(&head, &base),
            "decode replicas 10 → 8, -16 GPUs"
        );
        assert_eq!(
            describe_change(&[role("main", 2, 4)], &[role("main", 1, 8)]),
            "main replicas 2 → 1, GPUs per replica 4 → 8, no change in GPUs"
        );
        assert_eq!(
            describe_change(&base[..1], &base),
            "prefill added (4×8), +32 GPUs"
        );
        assert_eq!(
            describe_change(&[], &[role("main", 1, 1)]),
            "main added (1×1), +1 GPU"
        );
        assert_eq!(describe_change(&base, &base), "");
    }
}
