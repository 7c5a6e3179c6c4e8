//! Jobs and a pool for the planner ([`crate::plan`]) from what gpuledger already knows, so that
//! Git and the live cluster read intent the same way.
//!
//! From the desired state: the batch workloads whose intent says how long they run
//! ([`crate::intent`]), each with the GPUs its shape declares. What cannot be planned from Git is
//! said, not dropped silently: batch work without a runtime, a CronJob (it runs on its schedule), a
//! deadline that is only relative.
//!
//! From the live state: the batch pool, the placeable GPUs minus what non-batch workloads
//! (serving: Deployments, StatefulSets, LeaderWorkerSets, Dynamo graphs, KServe, …) hold on the
//! placeable GPU nodes — what batch work already runs is part of the pool, as the plan is advice
//! about when to start, not an admission decision — and the batch work that waits to start.
//!
//! Pure: objects and report rows in, planner jobs out. The planner itself is [`crate::plan`].

use std::collections::HashMap;

use crate::config::Config;
use crate::intent::{Deadline, WorkClass};
use crate::k8s::object::{Body, Kind, Object};
use crate::plan::{Job, Pool};
use crate::report::{DesiredWorkloadRow, WorkloadRow};
use crate::util::sum::{self, Named, Overflow};

use super::live::LiveFleet;

/// Why a batch workload cannot be planned: one line naming it (`namespace/Kind/name`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LeftOut {
    #[error("{0}: declares no intent (gpuledger.io/runtime, deadline)")]
    NoIntent(String),
    #[error("{0}: no gpuledger.io/runtime")]
    NoRuntime(String),
    #[error("{0}: a CronJob runs on its schedule; plan its runs as jobs in a file")]
    Cron(String),
}

/// The plannable jobs of `workloads`, and one line for each batch workload left out and why.
pub fn jobs(workloads: &[DesiredWorkloadRow], now_s: i64) -> (Vec<Job>, Vec<String>) {
    let mut jobs = Vec::new();
    let mut left_out = Vec::new();
    for w in workloads {
        match job_of(&w.workload, now_s) {
            Ok(Some(job)) => jobs.push(job),
            Ok(None) => {}
            Err(why) => left_out.push(why.to_string()),
        }
    }
    (jobs, left_out)
}

/// The job a batch workload's intent describes: `Ok(None)` for work that is not batch or holds no
/// GPUs, `Err` with the line that says why batch work cannot be planned. Shared by Git and the
/// live cluster's waiting work, so both read intent the same way.
pub fn job_of(x: &WorkloadRow, now_s: i64) -> Result<Option<Job>, LeftOut> {
    if x.intent_facts.class != WorkClass::Batch {
        return Ok(None);
    }
    let label = format!("{}/{}/{}", x.namespace, x.kind, x.name);
    let Some(intent) = &x.intent else {
        return Err(LeftOut::NoIntent(label));
    };
    let Some(runtime_s) = intent.runtime_s else {
        return Err(LeftOut::NoRuntime(label));
    };
    if x.intent_facts.cron {
        return Err(LeftOut::Cron(label));
    }
    let deadline = match &intent.deadline {
        Some(Deadline::At(t)) => Some(t.unix()),
        Some(Deadline::AfterStart { .. }) | None => None,
    };
    // A job of several roles starts as one: its pods are counted at the largest per-pod size,
    // which never plans it smaller than it is.
    let gpus_per_pod = x
        .roles
        .iter()
        .map(|r| r.gpus_per_replica.div_ceil(r.nodes_per_replica.max(1)))
        .max()
        .unwrap_or(0);
    let pods = x
        .roles
        .iter()
        .map(|r| r.replicas.saturating_mul(r.nodes_per_replica.max(1)))
        .fold(0u64, u64::saturating_add);
    if gpus_per_pod == 0 || pods == 0 {
        return Ok(None);
    }
    Ok(Some(Job {
        namespace: x.namespace.clone(),
        kind: x.kind.clone(),
        name: x.name.clone(),
        gpus_per_pod,
        pods,
        runtime_s,
        earliest_start: intent.earliest_start.map_or(now_s, |t| t.unix()),
        deadline,
        interruptible: intent.interruptible.unwrap_or(false),
        source: x.source.clone(),
    }))
}

/// The pool, and a sentence saying how it was computed.
pub fn batch_pool(fleet: &LiveFleet<'_>) -> Result<(Pool, String), Overflow> {
    let node_sizes = fleet
        .nodes
        .values()
        .map(|n| n.placeable_gpus())
        .filter(|g| *g > 0)
        .collect();
    let held: u64 = fleet
        .workloads
        .list
        .iter()
        .filter(|w| w.intent_facts.class != WorkClass::Batch)
        .map(|w| w.requested.whole)
        .fold(0, u64::saturating_add);
    let placeable = sum::sum(fleet.nodes.values().map(|n| n.placeable_gpus()))
        .named("the fleet", "placeable GPUs")?;
    let free = placeable.saturating_sub(held);
    Ok((
        Pool {
            gpus: free,
            node_sizes,
        },
        format!("pool: {placeable} placeable GPUs − {held} held by non-batch workloads = {free}"),
    ))
}

/// The cluster's batch work that waits to start, as planner jobs.
#[derive(Debug, Default)]
pub struct Waiting {
    pub jobs: Vec<Job>,
    /// One line per waiting batch workload that cannot be planned, and why.
    pub left_out: Vec<String>,
    /// Waiting batch workloads outside the `--queue` asked for.
    pub other_queues: usize,
}

/// What Kueue says of one workload: its Workload's LocalQueue and whether it holds quota.
struct KueueState<'a> {
    local_queue: Option<&'a str>,
    admitted: bool,
}

/// The batch workloads of `objects` that hold no GPU yet — suspended Jobs (Kueue holds a job
/// suspended until it admits it), Jobs whose pods all wait for a node, and the roots of Kueue
/// Workloads not yet admitted — each planned from its intent as in Git ([`job_of`]). A workload
/// whose Kueue Workload holds quota (`QuotaReserved` or `Admitted`) is about to start and is
/// already in the queue's usage, so it is not waiting. With `queue`, only the work whose
/// LocalQueue (the Workload's `spec.queueName`, else the `kueue.x-k8s.io/queue-name` label) points
/// to that ClusterQueue is kept, and the rest is counted.
///
/// Kueue's field and condition names: `apis/kueue/v1beta1/workload_types.go` (and v1beta2):
/// `spec.queueName`, conditions `QuotaReserved`, `Admitted`, `Finished`; `apis/kueue/v1beta1/
/// localqueue_types.go`: `spec.clusterQueue`.
pub fn waiting(
    fleet: &LiveFleet<'_>,
    cfg: &Config,
    now_s: i64,
    queue: Option<&str>,
) -> Result<Waiting, Overflow> {
    let objects = fleet.objects;
    // The inventory's own rows of the same fleet model: the waiting work is what it counts.
    let report = super::inventory::report(fleet, cfg, vec![])?;
    let kueue = kueue_states(objects);
    let cluster_queue_of = |ns: &str, local: &str| -> Option<&str> {
        objects.iter().find_map(|o| {
            let Body::WithStatus(spec, _) = &o.body else {
                return None;
            };
            (o.typed_kind() == Kind::LocalQueue
                && o.meta.namespace.as_deref() == Some(ns)
                && o.meta.name == local)
                .then(|| spec["clusterQueue"].as_str())
                .flatten()
        })
    };
    let mut out = Waiting::default();
    for w in &report.workloads {
        if w.intent_facts.class != WorkClass::Batch || w.intent_facts.cron || w.pods_bound > 0 {
            continue;
        }
        let key = (w.namespace.as_str(), w.kind.as_str(), w.name.as_str());
        let state = kueue.get(&key);
        if state.is_some_and(|s| s.admitted) {
            continue;
        }
        if let Some(q) = queue {
            let label = root_label(objects, key, QUEUE_LABEL);
            let local = state.and_then(|s| s.local_queue).or(label);
            if local.and_then(|l| cluster_queue_of(&w.namespace, l)) != Some(q) {
                out.other_queues += 1;
                continue;
            }
        }
        match job_of(w, now_s) {
            Ok(Some(job)) => out.jobs.push(job),
            Ok(None) => {}
            Err(why) => out.left_out.push(why.to_string()),
        }
    }
    Ok(out)
}

/// The label a Kueue-managed job names its LocalQueue with.
const QUEUE_LABEL: &str = "kueue.x-k8s.io/queue-name";

fn root_label<'a>(
    objects: &'a [Object],
    (ns, kind, name): (&str, &str, &str),
    key: &str,
) -> Option<&'a str> {
    objects
        .iter()
        .find(|o| o.meta.namespace.as_deref() == Some(ns) && o.kind == kind && o.meta.name == name)
        .and_then(|o| o.meta.labels.get(key))
        .map(crate::k8s::types::Text::as_str)
}

/// Each Kueue Workload's state, keyed by the object that owns it (namespace, kind, name).
fn kueue_states(objects: &[Object]) -> HashMap<(&str, &str, &str), KueueState<'_>> {
    let mut out = HashMap::new();
    for o in objects {
        let Body::WithStatus(spec, status) = &o.body else {
            continue;
        };
        if o.typed_kind() != Kind::KueueWorkload {
            continue;
        }
        let Some(ns) = o.meta.namespace.as_deref() else {
            continue;
        };
        let holds = |t: &str| {
            status["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|c| c["type"] == t && c["status"] == "True")
        };
        let state = KueueState {
            local_queue: spec["queueName"].as_str().filter(|q| !q.is_empty()),
            admitted: holds("QuotaReserved") || holds("Admitted"),
        };
        if holds("Finished") {
            continue;
        }
        for owner in &o.meta.owner_references {
            out.insert(
                (ns, owner.kind.as_str(), owner.name.as_str()),
                KueueState { ..state },
            );
        }
    }
    out
}
