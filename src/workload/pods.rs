//! The effective GPU request of a pod, by the scheduler's rules.
//!
//! Per container, the request of a resource is `requests[r]`, else `limits[r]` (for extended resources
//! a limit alone implies an equal request). The pod's request is the larger of what its app containers
//! need together and what the init phase needs at its peak, plus `spec.overhead`. Restartable sidecars
//! (init containers with `restartPolicy: Always`) keep running, so they add to the app phase and to
//! every init step that starts after them. All arithmetic is per GPU currency (see [`Gpus`]) and
//! checked: a sum that does not fit in 64 bits is [`TooLarge`], never a wrapped number.
//!
//! A pod also holds the devices of its own DRA claims (one per ResourceClaimTemplate it names;
//! [`super::claims`]): [`PodRule::gpus`] adds them to the device-plugin request, for pod
//! templates read with the input's claim templates and device classes at hand.

use crate::k8s::gpus::{GpuList, GpuResource, Gpus};
use crate::k8s::types::{Container, PodSpec, PodStatus, Resources};
use crate::util::sum::TooLarge;

use super::claims::{Devices, Dra};
use super::types::DeviceDetail;

/// A pod's whole GPUs and the rest of what it declares.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PodGpus {
    pub whole: u64,
    pub detail: DeviceDetail,
}

impl PodGpus {
    /// `self + other × n` (the workers of a group), checked.
    pub fn plus(&self, other: &PodGpus, n: u64) -> Result<PodGpus, TooLarge> {
        let mut out = self.clone();
        out.whole = crate::util::sum::add(out.whole, crate::util::sum::mul(other.whole, n)?)?;
        out.detail.add(&other.detail.scaled(n)?)?;
        Ok(out)
    }

    /// `self × n`, checked.
    pub fn scaled(&self, n: u64) -> Result<PodGpus, TooLarge> {
        PodGpus::default().plus(self, n)
    }
}

/// The detail of a pod's GPUs: its MIG slices and shared GPUs by resource name, and what its own
/// claims add (`claims`: GPUs through claims, other devices, what is unknown).
pub fn detail(gpus: &Gpus, claims: &Devices) -> DeviceDetail {
    let mut other = claims.other.clone();
    if gpus.shared > 0 {
        other.insert(GpuResource::Shared.to_string(), gpus.shared);
    }
    for (p, n) in gpus.mig.iter().filter(|(_, n)| **n > 0) {
        other.insert(GpuResource::Mig(p.clone()).to_string(), *n);
    }
    DeviceDetail {
        through_claims: !claims.is_empty(),
        gpus_from_claims: claims.gpus.whole,
        gpus_more: claims.more.whole,
        other,
        unknown: claims.unknown.clone(),
    }
}

/// How the GPUs of pod templates of one object are read: the device-plugin rule, plus the
/// devices of each template's own claims, looked up in the object's namespace.
#[derive(Clone, Copy)]
pub struct PodRule<'r, 'a> {
    pub dra: &'r Dra<'a>,
    pub ns: &'r str,
}

impl PodRule<'_, '_> {
    /// The whole GPUs of one pod of `spec`, and the rest.
    pub fn gpus(&self, spec: &PodSpec) -> Result<PodGpus, TooLarge> {
        self.with(pod_request(spec)?, spec)
    }

    /// `request` (a device-plugin request read by another rule) with `spec`'s claims added.
    pub fn with(&self, request: Gpus, spec: &PodSpec) -> Result<PodGpus, TooLarge> {
        self.claimed(request, spec, None)
    }

    /// The GPUs of a pod object: the claims made for it as allocated (a live pod, its `status`
    /// and `uid`), else as their templates ask. A pod in Git has no status: its templates count.
    pub fn pod(
        &self,
        spec: &PodSpec,
        status: &PodStatus,
        uid: Option<&str>,
    ) -> Result<PodGpus, TooLarge> {
        self.claimed(pod_request(spec)?, spec, Some((status, uid)))
    }

    fn claimed(
        &self,
        mut request: Gpus,
        spec: &PodSpec,
        live: Option<(&PodStatus, Option<&str>)>,
    ) -> Result<PodGpus, TooLarge> {
        let claims = self.dra.pod(self.ns, spec, live)?;
        request.add(&claims.own.gpus)?;
        Ok(PodGpus {
            whole: request.whole,
            detail: detail(&request, &claims.own),
        })
    }
}

/// Effective request of one container's resources.
pub fn container_request(r: &Resources) -> Gpus {
    let mut g = r.limits.to_gpus();
    for (res, n) in &r.requests.0 {
        g.set(res, *n);
    }
    g
}

fn is_sidecar(c: &Container) -> bool {
    c.restart_policy.as_deref() == Some("Always")
}

/// Effective GPU request of a pod (or of a pod template).
pub fn pod_request(spec: &PodSpec) -> Result<Gpus, TooLarge> {
    pod_request_parts(
        spec.containers
            .iter()
            .map(|c| container_request(&c.resources)),
        &spec.init_containers,
        &spec.overhead,
    )
}

/// The same rule for specs whose app containers are not plain [`Container`]s (Dynamo templates).
pub fn pod_request_parts(
    app: impl Iterator<Item = Gpus>,
    init_containers: &[Container],
    overhead: &GpuList,
) -> Result<Gpus, TooLarge> {
    let mut app_sum = Gpus::default();
    for g in app {
        app_sum.add(&g)?;
    }
    let mut sidecars = Gpus::default();
    let mut init_peak = Gpus::default();
    for c in init_containers {
        let req = container_request(&c.resources);
        if is_sidecar(c) {
            sidecars.add(&req)?;
            init_peak.max_with(&sidecars);
        } else {
            let mut step = sidecars.clone();
            step.add(&req)?;
            init_peak.max_with(&step);
        }
    }
    let mut total = app_sum;
    total.add(&sidecars)?;
    total.max_with(&init_peak);
    total.add(&overhead.to_gpus())?;
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(yaml: &str) -> PodSpec {
        serde_saphyr::from_str(yaml).unwrap()
    }

    #[test]
    fn limit_alone_implies_request() {
        let s = spec("containers:\n- name: a\n  resources:\n    limits: {nvidia.com/gpu: 4}\n");
        assert_eq!(pod_request(&s).unwrap().whole, 4);
    }

    #[test]
    fn request_wins_over_limit_and_containers_add() {
        let s = spec(
            "containers:\n- resources: {requests: {nvidia.com/gpu: 2}, limits: {nvidia.com/gpu: 2}}\n- resources: {limits: {nvidia.com/gpu: \"3\", cpu: 500m}}\n- resources: {}\n",
        );
        assert_eq!(pod_request(&s).unwrap().whole, 5);
    }

    #[test]
    fn init_container_peak_can_dominate() {
        let s = spec(
            "initContainers:\n- resources: {limits: {nvidia.com/gpu: 8}}\ncontainers:\n- resources: {limits: {nvidia.com/gpu: 2}}\n",
        );
        assert_eq!(pod_request(&s).unwrap().whole, 8);
    }

    #[test]
    fn restartable_sidecars_add_to_both_phases() {
        // sidecar 1, then a normal init container of 4 (peak 1 + 4 = 5), app 2 (+ sidecar 1 = 3).
        let s = spec(
            "initContainers:\n- restartPolicy: Always\n  resources: {limits: {nvidia.com/gpu: 1}}\n- resources: {limits: {nvidia.com/gpu: 4}}\ncontainers:\n- resources: {limits: {nvidia.com/gpu: 2}}\n",
        );
        assert_eq!(pod_request(&s).unwrap().whole, 5);
        // A normal init container before the sidecar does not see it: peak max(4, 1) and app 2 + 1 = 3.
        let s = spec(
            "initContainers:\n- resources: {limits: {nvidia.com/gpu: 4}}\n- restartPolicy: Always\n  resources: {limits: {nvidia.com/gpu: 1}}\ncontainers:\n- resources: {limits: {nvidia.com/gpu: 2}}\n",
        );
        assert_eq!(pod_request(&s).unwrap().whole, 4);
        // Sidecars alone: app 2 + sidecar 3 = 5.
        let s = spec(
            "initContainers:\n- restartPolicy: Always\n  resources: {limits: {nvidia.com/gpu: 3}}\ncontainers:\n- resources: {limits: {nvidia.com/gpu: 2}}\n",
        );
        assert_eq!(pod_request(&s).unwrap().whole, 5);
    }

    #[test]
    fn overhead_is_added() {
        let s = spec(
            "overhead: {nvidia.com/gpu: 1}\ncontainers:\n- resources: {limits: {nvidia.com/gpu: 2}}\n",
        );
        assert_eq!(pod_request(&s).unwrap().whole, 3);
    }

    #[test]
    fn sums_that_overflow_are_errors() {
        let s = spec(
            "containers:\n- resources: {limits: {nvidia.com/gpu: 8Ei}}\n- resources: {limits: {nvidia.com/gpu: 8Ei}}\n",
        );
        assert_eq!(pod_request(&s), Err(TooLarge));
        let s = spec(
            "overhead: {nvidia.com/gpu: 8Ei}\ncontainers:\n- resources: {limits: {nvidia.com/gpu: 8Ei}}\n",
        );
        assert_eq!(pod_request(&s), Err(TooLarge));
    }

    #[test]
    fn mig_and_shared_stay_apart() {
        let s = spec(
            "containers:\n- resources: {limits: {nvidia.com/mig-1g.10gb: 2}}\n- resources: {limits: {nvidia.com/gpu.shared: 1}}\n",
        );
        let g = pod_request(&s).unwrap();
        assert_eq!((g.whole, g.shared, g.mig["1g.10gb"]), (0, 1, 2));
    }
}
