//! KAI Scheduler's objects into the admission model.
//!
//! A `Queue` (`scheduling.run.ai/v2`, `pkg/apis/scheduling/v2/queue_types.go` and `resources.go`)
//! gives each resource a `quota` (guaranteed), a `limit` (the most it may hold; −1 is no limit,
//! and an omitted one is 0: the CRD has no default, `deployments/kai-scheduler/crds/
//! scheduling.run.ai_queues.yaml`) and an `overQuotaWeight`, all floats: GPUs may be fractions.
//! `status.allocated` is a resource list; a parent's includes its children's
//! (`pkg/queuecontroller/controllers/resource_updater/resource_updater.go`), so only leaves are
//! ever added up. A `PodGroup` (`v2alpha2/podgroup_types.go`) is held by its queue when a
//! scheduling condition's reason is `OverLimit`, `NonPreemptibleOverQuota` or
//! `QueueDoesNotExist` (checked before any node is tried: `pkg/scheduler/actions/common/
//! allocate.go`); `PodSchedulingErrors` is the nodes, and its pods are pending as any pod is.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::model::*;
use crate::k8s::object::{Body, Object};

pub use crate::k8s::queue::POD_GROUP_ANNOTATION;

fn float(v: &Value, at: &str, object: &str, problems: &mut Vec<Problem>) -> Option<f64> {
    match v {
        Value::Null => None,
        Value::Number(n) => n.as_f64(),
        Value::String(s) => match s.trim().parse::<f64>() {
            Ok(f) if f.is_finite() => Some(f),
            _ => {
                problems.push(Problem {
                    object: object.to_string(),
                    field: at.to_string(),
                    why: format!("{s:?} is not a number"),
                });
                None
            }
        },
        other => {
            problems.push(Problem {
                object: object.to_string(),
                field: at.to_string(),
                why: format!("{other} is not a number"),
            });
            None
        }
    }
}

pub(super) fn queue(o: &Object) -> KaiQueue {
    static NULL: Value = Value::Null;
    let (spec, status) = match &o.body {
        Body::WithStatus(spec, status) => (spec, status),
        _ => (&NULL, &NULL),
    };
    let object = format!("Queue {}", o.meta.name);
    let mut problems = Vec::new();
    let gpu = super::kueue::at(spec, &["resources", "gpu"]);
    let quota = float(
        &gpu["quota"],
        "spec.resources.gpu.quota",
        &object,
        &mut problems,
    );
    // Omitted: 0, as the scheduler reads it; −1: no limit.
    let limit = float(
        &gpu["limit"],
        "spec.resources.gpu.limit",
        &object,
        &mut problems,
    )
    .or(Some(0.0))
    .filter(|l| *l >= 0.0);
    let over_quota_weight = float(
        &gpu["overQuotaWeight"],
        "spec.resources.gpu.overQuotaWeight",
        &object,
        &mut problems,
    );
    let allocated = match super::kueue::at(status, &["allocated", crate::k8s::gpus::GPU]) {
        Value::Null if status["allocated"].is_object() => Some(0.0),
        Value::Null => None,
        v => match serde_json::from_value::<crate::k8s::quantity::Quantity>(v.clone()) {
            Ok(q) => Some(q.as_f64()),
            Err(e) => {
                problems.push(Problem {
                    object: object.clone(),
                    field: "status.allocated[nvidia.com/gpu]".into(),
                    why: format!("{v} is not a quantity ({e})"),
                });
                None
            }
        },
    };
    KaiQueue {
        name: o.meta.name.clone(),
        parent: spec["parentQueue"]
            .as_str()
            .filter(|p| !p.is_empty())
            .map(str::to_string),
        quota: quota.or(Some(0.0)),
        limit,
        over_quota_weight,
        allocated,
        problems,
        reference_problems: Vec::new(),
    }
}

pub(super) fn pod_group(i: usize, o: &Object) -> Option<PodGroup> {
    let Body::PodGroup(g) = &o.body else {
        return None;
    };
    let held_by_queue = g.held_by_queue();
    Some(PodGroup {
        object: i,
        namespace: o.namespace().to_string(),
        name: o.meta.name.clone(),
        queue: g.spec.queue.clone(),
        held_by_queue,
    })
}

/// A parent a queue names that no Queue was read for, and parents that lead back to a queue: its
/// figures are unknown (KAI skips jobs of such queues: `pkg/scheduler/actions/utils/
/// input_jobs.go`).
pub(super) fn check_tree(a: &mut Admission) {
    let names: BTreeSet<String> = a.kai_queues.iter().map(|q| q.name.clone()).collect();
    let parent: BTreeMap<String, String> = a
        .kai_queues
        .iter()
        .filter_map(|q| Some((q.name.clone(), q.parent.clone()?)))
        .collect();
    for q in &mut a.kai_queues {
        if let Some(p) = &q.parent
            && !names.contains(p)
        {
            q.reference_problems.push(Problem {
                object: format!("Queue {}", q.name),
                field: "spec.parentQueue".into(),
                why: format!("no Queue {p} was read"),
            });
        }
        let mut at = q.name.as_str();
        let mut steps = 0;
        while let Some(p) = parent.get(at) {
            steps += 1;
            if p == &q.name || steps > parent.len() {
                q.reference_problems.push(Problem {
                    object: format!("Queue {}", q.name),
                    field: "spec.parentQueue".into(),
                    why: "its parents lead back to it (a queue cycle)".into(),
                });
                break;
            }
            at = p;
        }
    }
}

/// Whether queue `name` has children (only leaves schedule, and only leaves' allocations add up).
pub fn is_leaf(a: &Admission, name: &str) -> bool {
    !a.kai_queues
        .iter()
        .any(|q| q.parent.as_deref() == Some(name))
}
