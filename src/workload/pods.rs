//! The effective GPU request of a pod, by the scheduler's rules.
//!
//! Per container, the request of a resource is `requests[r]`, else `limits[r]` (for extended resources
//! a limit alone implies an equal request). The pod's request is the larger of what its app containers
//! need together and what the init phase needs at its peak, plus `spec.overhead`. Restartable sidecars
//! (init containers with `restartPolicy: Always`) keep running, so they add to the app phase and to
//! every init step that starts after them. All arithmetic is per GPU currency (see [`Gpus`]) and
//! checked: a sum that does not fit in 64 bits is [`TooLarge`], never a wrapped number.

use crate::k8s::gpus::{GpuList, Gpus};
use crate::k8s::types::{Container, PodSpec, Resources};
use crate::util::sum::TooLarge;

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
