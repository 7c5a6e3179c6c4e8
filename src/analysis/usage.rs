//! GPUs used: DCGM activity per GPU, scoped to this fleet's cluster, attributed to pods, workloads
//! and tenants.
//!
//! A whole GPU is *busy* when its average engine activity over the window is above the threshold
//! (default 5%, `metrics.busy_threshold`); the activity-weighted *GPU-equivalents* add the averages
//! up (a GPU at 40% is 0.4). A GPU counts once however many pods held it in the window: its busy
//! count goes to the workload of the pod with the largest part of its activity that is a pod of
//! the fleet (the replacement, not the pod that left), its equivalents to each pod by its part. A
//! GPU with activity but no pod in the fleet is its own line, never silently dropped. MIG
//! instances are counted per profile, apart from whole GPUs.
//!
//! Unknown is never idle. Which series are this fleet's is decided first ([`scope`]): with
//! `metrics.cluster_selector` the query already chose; otherwise, when the series carry several
//! clusters' labels, the one whose DCGM hostnames are this fleet's nodes is taken, and when none or
//! several are, `used` is unknown with the reason. Then a GPU whose samples cannot be read (see
//! [`crate::live::prometheus`]) and every GPU of a GPU node with no series at all are unknown:
//! the fleet's `used` is a lower bound that says why (`partial`), and a workload with a pod on such
//! a GPU or node has its use unknown (`null`), not a smaller number. A Prometheus answer with
//! `warnings` (a partial response) makes `used` partial too. Without a metrics source, or when it
//! fails, `used` stays unknown with the reason: never 0.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::k8s::object::{Body, Object};
use crate::live::prometheus::{DcgmRead, GpuActivity, GpuId, UnsoundGpu};
use crate::report::{NoMetricsNode, UnattributedRow, Unknown, UnknownGpuRow};
use crate::workload::owners::{GpuPod, PodState};

/// What the metrics source gave.
#[derive(Debug, Clone)]
pub enum Metrics {
    NotConfigured,
    /// The source failed or had no DCGM series: the reason.
    Failed(String),
    Activity {
        read: DcgmRead,
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

#[derive(Debug, Default)]
pub struct Attribution {
    /// By index into the workload list.
    pub per_workload: HashMap<usize, Use>,
    /// Workloads with a pod on an unknown GPU or on a GPU node without metrics: their use is
    /// unknown.
    pub unknown_workloads: BTreeSet<usize>,
    /// Whole GPUs, attributed or not, of the GPUs whose activity is known.
    pub fleet: Use,
    /// Busy MIG instances by profile.
    pub mig_busy: BTreeMap<String, u64>,
    /// Busy GPUs no pod of the fleet accounts for.
    pub unattributed: Vec<UnattributedRow>,
    /// GPU nodes of the fleet without a DCGM series in the window, with their GPUs.
    pub no_metrics: Vec<NoMetricsNode>,
    pub unknown_gpus: Vec<UnknownGpuRow>,
    /// Why `fleet.busy` is a lower bound; empty when it is the count.
    pub partial: Vec<String>,
    /// Which cluster's series were read, and how that was decided; `None` when the question did
    /// not arise (one cluster, no cluster labels, no selector).
    pub scope: Option<String>,
}

impl Attribution {
    /// Writes why figures are partial (`gpus.used`) or unknown (`workloads.gpus_used`) into the
    /// fleet's maps.
    pub fn note(&self, unknown: &mut Unknown, partial: &mut Unknown) {
        if !self.partial.is_empty() {
            partial.set("gpus.used", self.partial.join("; "));
        }
        if !self.unknown_workloads.is_empty() {
            unknown.set(
                "workloads.gpus_used",
                "unknown for workloads with a pod on a GPU node without DCGM series or on a GPU whose samples cannot be read (see no_metrics_nodes, unknown_gpus)",
            );
        }
    }
}

/// The cluster labels of a GPU as PromQL would write them (`cluster="prod-a"`).
fn scope_text(scope: &BTreeMap<String, String>) -> String {
    if scope.is_empty() {
        return "(no cluster label)".into();
    }
    scope
        .iter()
        .map(|(k, v)| format!("{k}={v:?}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// Which cluster's series are this fleet's.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Scope {
    /// The cluster labels to keep; `None`: every series.
    pub keep: Option<BTreeMap<String, String>>,
    /// How that was decided, for the report; `None` when the question did not arise.
    pub statement: Option<String>,
}

/// Which cluster's GPUs are this fleet's, or why that cannot be told. `nodes` are the fleet's
/// node names.
pub fn scope(read: &DcgmRead, nodes: &BTreeSet<&str>) -> Result<Scope, String> {
    let ids = read
        .gpus
        .iter()
        .map(|g| &g.id)
        .chain(read.unsound.iter().map(|u| &u.id));
    let mut hosts: BTreeMap<&BTreeMap<String, String>, BTreeSet<&str>> = BTreeMap::new();
    for id in ids {
        let h = hosts.entry(&id.scope).or_default();
        h.extend(id.node.as_deref());
    }
    let configured = read
        .selector
        .as_ref()
        .map(|s| format!("metrics.cluster_selector {{{s}}}"));
    let clusters: Vec<String> = hosts.keys().map(|s| scope_text(s)).collect();
    if hosts.len() <= 1 {
        let one = hosts
            .keys()
            .next()
            .filter(|s| !s.is_empty())
            .map(|s| format!("one cluster in the DCGM series ({})", scope_text(s)));
        let statement = match (configured, one) {
            (Some(c), Some(o)) => Some(format!("{c}: {o}")),
            (c, o) => c.or(o),
        };
        return Ok(Scope {
            keep: None,
            statement,
        });
    }
    let ours: Vec<&BTreeMap<String, String>> = hosts
        .iter()
        .filter(|(_, h)| h.iter().any(|n| nodes.contains(n)))
        .map(|(s, _)| *s)
        .collect();
    let prefix = configured
        .map(|c| format!("{c} still matches "))
        .unwrap_or_default();
    match ours.as_slice() {
        [one] => Ok(Scope {
            keep: Some((*one).clone()),
            statement: Some(format!(
                "{} (detected: {prefix}DCGM series of {} clusters ({}); only this one names this fleet's nodes; set metrics.cluster_selector to choose)",
                scope_text(one),
                clusters.len(),
                clusters.join(", ")
            )),
        }),
        _ => Err(format!(
            "{prefix}DCGM series of {} clusters ({}), and their node names do not tell which is this fleet ({} of them name its nodes): set metrics.cluster_selector (e.g. cluster=\"…\")",
            clusters.len(),
            clusters.join(", "),
            ours.len()
        )),
    }
}

/// What is known about the fleet's GPUs. `gpu_nodes` are the fleet's GPU nodes with their whole
/// GPUs (their names also tell this cluster's series apart). `Err` is why `used` is unknown
/// altogether.
pub fn attribute(
    read: &DcgmRead,
    threshold: f64,
    pods: &[GpuPod],
    objects: &[Object],
    gpu_nodes: &BTreeMap<&str, u64>,
) -> Result<Attribution, String> {
    let names: BTreeSet<&str> = gpu_nodes.keys().copied().collect();
    let Scope { keep, statement } = scope(read, &names)?;
    let ours = |id: &GpuId| keep.as_ref().is_none_or(|k| *k == id.scope);
    let gpus: Vec<&GpuActivity> = read.gpus.iter().filter(|g| ours(&g.id)).collect();
    let unsound: Vec<&UnsoundGpu> = read.unsound.iter().filter(|u| ours(&u.id)).collect();
    let by_pod: HashMap<(&str, &str), Option<usize>> = pods
        .iter()
        .filter_map(|p| {
            let o = objects.get(p.object)?;
            Some(((o.namespace(), o.meta.name.as_str()), p.workload))
        })
        .collect();
    let resolve = |ns: Option<&str>, pod: Option<&str>| match (ns, pod) {
        (Some(ns), Some(pod)) => match by_pod.get(&(ns, pod)) {
            Some(Some(w)) => Ok(*w),
            Some(None) => Err(format!("pod {ns}/{pod} has finished")),
            None => Err(format!("pod {ns}/{pod} is not a GPU pod of the fleet")),
        },
        _ => Err("no pod on this GPU".to_string()),
    };
    let mut a = Attribution {
        scope: statement,
        ..Attribution::default()
    };
    for g in &gpus {
        let busy = g.activity > threshold;
        if let Some(profile) = &g.id.mig_profile {
            if busy {
                *a.mig_busy.entry(profile.clone()).or_default() += 1;
            }
            continue;
        }
        a.fleet.equivalents += g.activity;
        a.fleet.busy += u64::from(busy);
        let mut owner: Option<usize> = None;
        // Why a busy GPU is nobody's: the pod with the largest part of it, else no pod at all.
        let mut why: Option<String> = None;
        for h in &g.holders {
            match resolve(h.namespace.as_deref(), h.pod.as_deref()) {
                Ok(w) => {
                    a.per_workload.entry(w).or_default().equivalents += h.activity;
                    owner = owner.or(Some(w));
                }
                Err(reason) if h.pod.is_some() && why.is_none() => why = Some(reason),
                Err(_) => {}
            }
        }
        match owner {
            Some(w) if busy => a.per_workload.entry(w).or_default().busy += 1,
            Some(_) => {}
            None if busy => a.unattributed.push(UnattributedRow {
                node: g.id.node.clone().unwrap_or_else(|| "?".into()),
                gpu: g.id.gpu.clone(),
                activity: g.activity,
                reason: why.unwrap_or_else(|| "no pod on this GPU".into()),
            }),
            None => {}
        }
    }
    a.unattributed
        .sort_by(|x, y| (&x.node, &x.gpu).cmp(&(&y.node, &y.gpu)));

    // GPUs whose samples cannot be read: unknown, and so is every workload named on them.
    for u in &unsound {
        for h in &u.holders {
            if let Ok(w) = resolve(h.namespace.as_deref(), h.pod.as_deref()) {
                a.unknown_workloads.insert(w);
            }
        }
        a.unknown_gpus.push(UnknownGpuRow {
            node: u.id.node.clone().unwrap_or_else(|| "?".into()),
            gpu: match &u.id.mig_instance {
                Some(i) => format!("{} (MIG instance {i})", u.id.gpu),
                None => u.id.gpu.clone(),
            },
            reason: u.reason.clone(),
        });
    }
    if !a.unknown_gpus.is_empty() {
        let n = a.unknown_gpus.len();
        a.partial.push(format!(
            "{n} GPU{} read NaN, ±Inf or out-of-range samples in every DCGM activity metric: unknown, not idle",
            if n == 1 { "" } else { "s" }
        ));
    }

    // GPU nodes without a series: their GPUs are unknown, and so is every workload on them.
    let named: Vec<Option<&str>> = gpus
        .iter()
        .map(|g| g.id.node.as_deref())
        .chain(unsound.iter().map(|u| u.id.node.as_deref()))
        .collect();
    if named.iter().any(Option::is_none) {
        a.partial.push(
            "some DCGM series name no node (no Hostname label), so GPU nodes without series cannot be found".into(),
        );
    } else {
        let seen: BTreeSet<&str> = named.into_iter().flatten().collect();
        a.no_metrics = gpu_nodes
            .iter()
            .filter(|(n, _)| !seen.contains(*n))
            .map(|(n, gpus)| NoMetricsNode {
                node: n.to_string(),
                gpus: *gpus,
            })
            .collect();
    }
    if !a.no_metrics.is_empty() {
        let dark: BTreeSet<&str> = a.no_metrics.iter().map(|n| n.node.as_str()).collect();
        for p in pods.iter().filter(|p| p.state == PodState::Bound) {
            let on_dark = objects.get(p.object).is_some_and(|o| match &o.body {
                Body::Pod(b) => b
                    .spec
                    .node_name
                    .as_deref()
                    .is_some_and(|n| dark.contains(n)),
                _ => false,
            });
            if on_dark && let Some(w) = p.workload {
                a.unknown_workloads.insert(w);
            }
        }
        let total: u64 = a
            .no_metrics
            .iter()
            .map(|n| n.gpus)
            .fold(0, u64::saturating_add);
        let names: Vec<&str> = dark.into_iter().collect();
        a.partial.push(format!(
            "{} GPU node{} {} no DCGM series in the window ({}): {total} GPUs unknown, not idle",
            names.len(),
            if names.len() == 1 { "" } else { "s" },
            if names.len() == 1 { "has" } else { "have" },
            names.join(", ")
        ));
    }
    if !read.warnings.is_empty() {
        a.partial.push(format!(
            "Prometheus answered with warnings (a partial response): {}",
            read.warnings.join("; ")
        ));
    }
    if gpus.is_empty() {
        return Err(format!(
            "no readable DCGM activity for this fleet's GPUs: {}",
            a.partial.join("; ")
        ));
    }
    Ok(a)
}

#[cfg(test)]
mod tests;
