//! GPUs used: DCGM activity per GPU, attributed to pods, workloads and tenants.
//!
//! A whole GPU is *busy* when its average engine activity over the window is above the threshold
//! (default 5%, `metrics.busy_threshold`); the activity-weighted *GPU-equivalents* add the averages
//! up (a GPU at 40% is 0.4). Activity is attributed through the pod DCGM names on each GPU; a GPU
//! with activity but no pod in the fleet is its own line, never silently dropped. MIG instances
//! are counted per profile, apart from whole GPUs. Without a metrics source, or when it fails,
//! `used` stays unknown with the reason: never 0.

use std::collections::{BTreeMap, HashMap};

use crate::k8s::object::Object;
use crate::live::prometheus::GpuActivity;
use crate::workload::owners::GpuPod;

/// What the metrics source gave.
#[derive(Debug, Clone)]
pub enum Metrics {
    NotConfigured,
    /// The source failed or had no DCGM series: the reason.
    Failed(String),
    Activity {
        gpus: Vec<GpuActivity>,
        threshold: f64,
        source: String,
    },
}

/// Busy GPUs and GPU-equivalents of one workload (or tenant, or the fleet).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Use {
    pub busy: u64,
    pub equivalents: f64,
}

/// A GPU with activity that no pod of the fleet accounts for.
#[derive(Debug, Clone)]
pub struct Unattributed {
    pub node: String,
    pub gpu: String,
    pub activity: f64,
    pub reason: String,
}

#[derive(Debug, Default)]
pub struct Attribution {
    /// By index into the workload list.
    pub per_workload: HashMap<usize, Use>,
    /// Whole GPUs, attributed or not.
    pub fleet: Use,
    /// Busy MIG instances by profile.
    pub mig_busy: BTreeMap<String, u64>,
    pub unattributed: Vec<Unattributed>,
}

pub fn attribute(
    gpus: &[GpuActivity],
    threshold: f64,
    pods: &[GpuPod],
    objects: &[Object],
) -> Attribution {
    let by_pod: HashMap<(&str, &str), Option<usize>> = pods
        .iter()
        .filter_map(|p| {
            let o = objects.get(p.object)?;
            Some(((o.namespace(), o.meta.name.as_str()), p.workload))
        })
        .collect();
    let mut a = Attribution::default();
    for g in gpus {
        let busy = g.activity > threshold;
        if let Some(profile) = &g.mig_profile {
            if busy {
                *a.mig_busy.entry(profile.clone()).or_default() += 1;
            }
            continue;
        }
        a.fleet.equivalents += g.activity;
        a.fleet.busy += u64::from(busy);
        let workload = match (g.namespace.as_deref(), g.pod.as_deref()) {
            (Some(ns), Some(pod)) => match by_pod.get(&(ns, pod)) {
                Some(Some(w)) => Ok(*w),
                Some(None) => Err(format!("pod {ns}/{pod} has finished")),
                None => Err(format!("pod {ns}/{pod} is not a GPU pod of the fleet")),
            },
            _ => Err("no pod on this GPU".to_string()),
        };
        match workload {
            Ok(w) => {
                let u = a.per_workload.entry(w).or_default();
                u.busy += u64::from(busy);
                u.equivalents += g.activity;
            }
            Err(reason) if busy => a.unattributed.push(Unattributed {
                node: g.node.clone().unwrap_or_else(|| "?".into()),
                gpu: g.gpu.clone(),
                activity: g.activity,
                reason,
            }),
            Err(_) => {}
        }
    }
    a.unattributed
        .sort_by(|x, y| (&x.node, &x.gpu).cmp(&(&y.node, &y.gpu)));
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::k8s::read::read_str;
    use crate::live::prometheus::GR_ENGINE_ACTIVE;
    use crate::workload::owners;

    fn gpu(pod: Option<&str>, gpu: &str, activity: f64, mig: Option<&str>) -> GpuActivity {
        GpuActivity {
            node: Some("n1".into()),
            gpu: gpu.into(),
            uuid: None,
            mig_profile: mig.map(str::to_string),
            mig_instance: None,
            namespace: pod.map(|_| "ml".to_string()),
            pod: pod.map(str::to_string),
            container: None,
            activity,
            metric: GR_ENGINE_ACTIVE,
        }
    }

    #[test]
    fn busy_equivalents_and_unattributed() {
        let objs = read_str(
            "apiVersion: v1\nkind: Pod\nmetadata: {name: a, namespace: ml}\nspec:\n  nodeName: n1\n  containers: [{resources: {limits: {nvidia.com/gpu: 2}}}]\n",
            "t",
        )
        .unwrap();
        let w = owners::build(&objs).unwrap();
        let gpus = [
            gpu(Some("a"), "0", 0.9, None),
            gpu(Some("a"), "1", 0.04, None),
            gpu(None, "2", 0.5, None),
            gpu(None, "3", 0.0, None),
            gpu(Some("gone"), "4", 0.7, None),
            gpu(Some("a"), "5", 0.3, Some("1g.10gb")),
        ];
        let a = attribute(&gpus, 0.05, &w.pods, &objs);
        let u = a.per_workload[&0];
        assert_eq!(u.busy, 1);
        assert!((u.equivalents - 0.94).abs() < 1e-9);
        assert_eq!(a.fleet.busy, 3, "busy whole GPUs, attributed or not");
        assert!((a.fleet.equivalents - 2.14).abs() < 1e-9);
        let un: Vec<&str> = a.unattributed.iter().map(|u| u.reason.as_str()).collect();
        assert_eq!(
            un,
            [
                "no pod on this GPU",
                "pod ml/gone is not a GPU pod of the fleet"
            ]
        );
        assert_eq!(a.mig_busy["1g.10gb"], 1);
    }
}
