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

use crate::config::Config;
use crate::intent::{Deadline, WorkClass};
use crate::k8s::object::{Body, Object};
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

/// The Jobs that are suspended (`spec.suspend`): they hold no GPU whatever their pods.
fn suspended_jobs(objects: &[Object]) -> std::collections::HashSet<(&str, &str)> {
    objects
        .iter()
        .filter_map(|o| match &o.body {
            Body::Job(j) if j.spec.suspend == Some(true) => {
                Some((o.namespace(), o.meta.name.as_str()))
            }
            _ => None,
        })
        .collect()
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

/// The batch workloads of the live fleet that hold no GPU yet — suspended Jobs (Kueue holds a job
/// suspended until it admits it), Jobs whose pods all wait for a node or for quota, and the roots
/// of Kueue Workloads not yet admitted — each planned from its intent as in Git ([`job_of`]). A
/// workload whose Kueue Workload holds quota is about to start and is already in the queue's
/// usage, so it is not waiting. With `queue`, only the work whose queue is that ClusterQueue (as
/// the inventory reads it: its Workload's LocalQueue, else its `kueue.x-k8s.io/queue-name`
/// label) is kept, and the rest is counted. When the input held no Pod (a dump of nodes and jobs),
/// only what holds no GPU whatever its pods is known to wait — a suspended Job, a Kueue Workload
/// not admitted — and any other batch workload is left out, saying why.
pub fn waiting(
    fleet: &LiveFleet<'_>,
    cfg: &Config,
    now_s: i64,
    queue: Option<&str>,
) -> Result<Waiting, Overflow> {
    // The inventory's own rows of the same fleet model: the waiting work is what it counts.
    let report = super::inventory::report(fleet, cfg, vec![])?;
    let pods_unread = fleet.unread.pods.is_some();
    let suspended = suspended_jobs(fleet.objects);
    let mut out = Waiting::default();
    for w in &report.workloads {
        if w.intent_facts.class != WorkClass::Batch || w.intent_facts.cron || w.pods_bound > 0 {
            continue;
        }
        let id = crate::workload::WorkloadId::new(&w.namespace, &w.api_group, &w.kind, &w.name);
        let i = fleet.find(&id);
        if i.is_some_and(|i| fleet.queues.reserved.contains(&i)) {
            continue;
        }
        let holds_none = (w.api_group == "batch"
            && w.kind == "Job"
            && suspended.contains(&(w.namespace.as_str(), w.name.as_str())))
            || i.is_some_and(|i| fleet.queues.waits.contains_key(&i));
        if pods_unread && !holds_none {
            out.left_out.push(format!(
                "{id}: the input holds no Pod, so whether it runs already is unknown"
            ));
            continue;
        }
        if let Some(q) = queue {
            let in_queue = i
                .and_then(|i| fleet.queues.waits.get(&i))
                .and_then(|x| x.queue.as_deref());
            if in_queue != Some(q) {
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
