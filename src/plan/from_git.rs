//! Jobs for the planner from the desired state: the batch workloads whose intent says how long they
//! run ([`crate::intent`]), each with the GPUs its shape declares. What cannot be planned from Git
//! is said, not dropped silently: batch work without a runtime, a CronJob (it runs on its
//! schedule), a deadline that is only relative.

use super::Job;
use crate::intent::{Deadline, WorkClass};
use crate::report::{DesiredWorkloadRow, WorkloadRow};

/// The plannable jobs of `workloads`, and one line for each batch workload left out and why.
pub fn jobs(workloads: &[DesiredWorkloadRow], now_s: i64) -> (Vec<Job>, Vec<String>) {
    let mut jobs = Vec::new();
    let mut left_out = Vec::new();
    for w in workloads {
        match job_of(&w.workload, now_s) {
            Ok(Some(job)) => jobs.push(job),
            Ok(None) => {}
            Err(why) => left_out.push(why),
        }
    }
    (jobs, left_out)
}

/// The job a batch workload's intent describes: `Ok(None)` for work that is not batch or holds no
/// GPUs, `Err` with the line that says why batch work cannot be planned. Shared by Git and the
/// live cluster's waiting work, so both read intent the same way.
pub fn job_of(x: &WorkloadRow, now_s: i64) -> Result<Option<Job>, String> {
    if x.intent_facts.class != WorkClass::Batch {
        return Ok(None);
    }
    let label = format!("{}/{}/{}", x.namespace, x.kind, x.name);
    let Some(intent) = &x.intent else {
        return Err(format!(
            "{label}: declares no intent (gpuledger.io/runtime, deadline)"
        ));
    };
    let Some(runtime_s) = intent.runtime_s else {
        return Err(format!("{label}: no gpuledger.io/runtime"));
    };
    if x.intent_facts.cron {
        return Err(format!(
            "{label}: a CronJob runs on its schedule; plan its runs as jobs in a file"
        ));
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
