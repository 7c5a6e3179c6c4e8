//! Kueue's objects into the admission model.
//!
//! ClusterQueues, Cohorts, LocalQueues and ResourceFlavors are read from their JSON specs
//! (`apis/kueue/v1beta2/clusterqueue_types.go`, `cohort_types.go`, `localqueue_types.go`,
//! `resourceflavor_types.go`; v1beta1 differs in the cohort's field, `spec.cohort`, and in
//! `flavorFungibility`'s values, `Borrow`/`Preempt` where v1beta2 says `MayStopSearch`). A quantity
//! that is not a whole number of GPUs is a [`Problem`] naming the field: that queue's figures are
//! unknown, the rest of the input is read. Workloads come typed (`crate::k8s::queue`).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde_json::Value;

use super::model::*;
use crate::k8s::object::{Body, Object};
use crate::k8s::queue::KueueWorkloadBody;
use crate::util::date::Timestamp;

fn spec_status(o: &Object) -> (&Value, &Value) {
    static NULL: Value = Value::Null;
    match &o.body {
        Body::WithStatus(spec, status) => (spec, status),
        _ => (&NULL, &NULL),
    }
}

/// A quantity of whole GPUs as Kubernetes writes it (`8`, `"8"`), or why it is not one.
fn whole(v: &Value) -> Result<u64, String> {
    let q: crate::k8s::quantity::Quantity =
        serde_json::from_value(v.clone()).map_err(|e| format!("{v} is not a quantity ({e})"))?;
    q.whole()
        .ok_or_else(|| format!("{v} is not a whole number of GPUs"))
}

/// The value at `keys` under `v` (null when any is missing): a path of JSON fields.
pub(super) fn at<'a>(v: &'a Value, keys: &[&str]) -> &'a Value {
    static NULL: Value = Value::Null;
    keys.iter().try_fold(v, |v, k| v.get(k)).unwrap_or(&NULL)
}

fn text(v: &Value) -> Option<&str> {
    v.as_str().filter(|s| !s.is_empty())
}

/// The GPU quota of each flavor of `spec.resourceGroups`, in order, with a problem per field that
/// does not read.
fn flavor_quotas(spec: &Value, object: &str, problems: &mut Vec<Problem>) -> Vec<FlavorQuota> {
    let mut out = Vec::new();
    let groups = spec["resourceGroups"].as_array().map(Vec::as_slice);
    for (g, group) in groups.unwrap_or_default().iter().enumerate() {
        let flavors = group["flavors"].as_array().map(Vec::as_slice);
        for (f, flavor) in flavors.unwrap_or_default().iter().enumerate() {
            let resources = flavor["resources"].as_array().map(Vec::as_slice);
            for (r, res) in resources.unwrap_or_default().iter().enumerate() {
                if res["name"] != GPU {
                    continue;
                }
                let at = format!("spec.resourceGroups[{g}].flavors[{f}].resources[{r}]");
                let mut field = |key: &str, required: bool| -> Option<u64> {
                    match &res[key] {
                        Value::Null if !required => None,
                        v => match whole(v) {
                            Ok(n) => Some(n),
                            Err(why) => {
                                problems.push(Problem {
                                    object: object.to_string(),
                                    field: format!("{at}.{key}"),
                                    why,
                                });
                                None
                            }
                        },
                    }
                };
                let nominal = field("nominalQuota", true);
                let borrowing_limit = field("borrowingLimit", false);
                let lending_limit = field("lendingLimit", false);
                out.push(FlavorQuota {
                    flavor: text(&flavor["name"]).unwrap_or_default().to_string(),
                    quota: Quota {
                        nominal: nominal.unwrap_or(0),
                        borrowing_limit,
                        lending_limit,
                    },
                });
            }
        }
    }
    out
}

pub(super) fn cluster_queue(o: &Object) -> ClusterQueue {
    let (spec, status) = spec_status(o);
    let object = format!("ClusterQueue {}", o.meta.name);
    let mut problems = Vec::new();
    let flavors = flavor_quotas(spec, &object, &mut problems);
    let p = &spec["preemption"];
    let preemption = Preemption {
        within_cluster_queue: match p["withinClusterQueue"].as_str() {
            Some("LowerPriority") => WithinQueue::LowerPriority,
            Some("LowerOrNewerEqualPriority") => WithinQueue::LowerOrNewerEqualPriority,
            _ => WithinQueue::Never,
        },
        reclaim_within_cohort: match p["reclaimWithinCohort"].as_str() {
            Some("LowerPriority") => Reclaim::LowerPriority,
            Some("Any") => Reclaim::Any,
            _ => Reclaim::Never,
        },
        borrow_within_cohort: match at(p, &["borrowWithinCohort", "policy"]).as_str() {
            Some("LowerPriority") => BorrowWithinCohort::LowerPriority {
                max_priority_threshold: at(p, &["borrowWithinCohort", "maxPriorityThreshold"])
                    .as_i64(),
            },
            _ => BorrowWithinCohort::Never,
        },
    };
    let f = &spec["flavorFungibility"];
    let defaults = Fungibility::default();
    let fungibility = Fungibility {
        stop_when_borrowing: match f["whenCanBorrow"].as_str() {
            Some("TryNextFlavor") => false,
            Some(_) => true,
            None => defaults.stop_when_borrowing,
        },
        stop_when_preempting: match f["whenCanPreempt"].as_str() {
            Some("Preempt" | "MayStopSearch") => true,
            Some(_) => false,
            None => defaults.stop_when_preempting,
        },
    };
    let usage = flavor_usage(
        &status["flavorsUsage"],
        "flavorsUsage",
        &object,
        &mut problems,
    );
    let reserved = flavor_usage(
        &status["flavorsReservation"],
        "flavorsReservation",
        &object,
        &mut problems,
    );
    let mut bad = Vec::new();
    let namespace_selector = super::selector::read(&spec["namespaceSelector"], &mut bad);
    problems.extend(bad.into_iter().map(|(field, why)| Problem {
        object: object.clone(),
        field,
        why: why.to_string(),
    }));
    ClusterQueue {
        name: o.meta.name.clone(),
        namespace_selector,
        api_version: o
            .api_version
            .rsplit('/')
            .next()
            .unwrap_or_default()
            .to_string(),
        cohort: text(&spec["cohortName"])
            .or_else(|| text(&spec["cohort"]))
            .map(str::to_string),
        strategy: match spec["queueingStrategy"].as_str() {
            Some("StrictFIFO") => Strategy::StrictFifo,
            _ => Strategy::BestEffortFifo,
        },
        preemption,
        fungibility,
        flavors,
        usage,
        reserved,
        pending_workloads: status["pendingWorkloads"].as_u64(),
        stopped: spec["stopPolicy"]
            .as_str()
            .is_some_and(|p| p != "None" && !p.is_empty()),
        inactive: None,
        problems,
        reference_problems: Vec::new(),
    }
}

/// GPUs per flavor of a status list (`flavorsUsage`, `flavorsReservation`): `total` and
/// `borrowed`; `None` when the status has no such list.
fn flavor_usage(
    list: &Value,
    key: &str,
    object: &str,
    problems: &mut Vec<Problem>,
) -> Option<BTreeMap<String, Usage>> {
    let fs = list.as_array()?;
    let mut by: BTreeMap<String, Usage> = BTreeMap::new();
    for (i, fl) in fs.iter().enumerate() {
        let resources = fl["resources"].as_array().map(Vec::as_slice);
        for (j, r) in resources.unwrap_or_default().iter().enumerate() {
            if r["name"] != GPU {
                continue;
            }
            let mut read = |field: &str| match &r[field] {
                Value::Null => 0,
                v => whole(v).unwrap_or_else(|why| {
                    problems.push(Problem {
                        object: object.to_string(),
                        field: format!("status.{key}[{i}].resources[{j}].{field}"),
                        why,
                    });
                    0
                }),
            };
            let (total, borrowed) = (read("total"), read("borrowed"));
            let e = by
                .entry(text(&fl["name"]).unwrap_or_default().to_string())
                .or_default();
            e.total = e.total.saturating_add(total);
            e.borrowed = e.borrowed.saturating_add(borrowed);
        }
    }
    Some(by)
}

pub(super) fn cohort(o: &Object) -> Cohort {
    let (spec, _) = spec_status(o);
    let object = format!("Cohort {}", o.meta.name);
    let mut problems = Vec::new();
    let flavors = flavor_quotas(spec, &object, &mut problems);
    Cohort {
        name: o.meta.name.clone(),
        // v1beta2 `parentName`; the alpha API said `parent`.
        parent: text(&spec["parentName"])
            .or_else(|| text(&spec["parent"]))
            .map(str::to_string),
        flavors,
        problems,
        reference_problems: Vec::new(),
    }
}

pub(super) fn local_queue(o: &Object, problems: &mut Vec<Problem>) -> Option<LocalQueue> {
    let (spec, _) = spec_status(o);
    let Some(cq) = text(&spec["clusterQueue"]) else {
        problems.push(Problem {
            object: format!("LocalQueue {}/{}", o.namespace(), o.meta.name),
            field: "spec.clusterQueue".into(),
            why: "names no ClusterQueue".into(),
        });
        return None;
    };
    Some(LocalQueue {
        namespace: o.namespace().to_string(),
        name: o.meta.name.clone(),
        cluster_queue: cq.to_string(),
    })
}

pub(super) fn flavor(o: &Object) -> ResourceFlavor {
    let (spec, _) = spec_status(o);
    let node_labels = spec["nodeLabels"]
        .as_object()
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default();
    ResourceFlavor {
        name: o.meta.name.clone(),
        node_labels,
    }
}

/// Where a Workload stands (kueue `pkg/workload/workload.go`: `IsActive`, `IsFinished`,
/// `HasQuotaReservation`).
pub fn state(w: &KueueWorkloadBody) -> WorkloadState {
    if w.spec.active == Some(false) {
        return WorkloadState::Inactive;
    }
    if w.is_true("Finished") {
        return WorkloadState::Finished;
    }
    if !w.waits_for_quota() {
        return WorkloadState::Reserved;
    }
    let (reason, message) = w
        .condition("QuotaReserved")
        .map(|c| (c.reason.to_string(), c.message.to_string()))
        .unwrap_or_default();
    WorkloadState::Queued { reason, message }
}

pub(super) fn workload(i: usize, o: &Object) -> Option<QueueWorkload> {
    let Body::KueueWorkload(w) = &o.body else {
        return None;
    };
    let pod_sets = w
        .spec
        .pod_sets
        .iter()
        .map(|p| PodSetGpus {
            name: p.name.clone(),
            count: p.count.unwrap_or(1),
            min_count: p.min_count,
            // A pod set whose GPUs overflow is refused when the input is checked
            // (`workload::check`); here it reads as the most there can be.
            gpus_per_pod: crate::workload::pods::pod_request(&p.template.spec)
                .map_or(u64::MAX, |g| g.whole),
            node_selector: p.template.spec.node_selector.clone(),
            models: p.template.spec.gpu_models(),
        })
        .collect();
    let admission = w.status.admission.as_ref().map(|a| Admitted {
        cluster_queue: a.cluster_queue.clone(),
        pod_sets: a
            .pod_set_assignments
            .iter()
            .map(|p| AdmittedPodSet {
                name: p.name.clone(),
                flavor: p.gpu_flavor.clone(),
                count: p.count,
            })
            .collect(),
    });
    let reason_if = |t: &str| {
        w.condition(t).filter(|c| c.status == "True").map(|c| {
            if c.reason.is_empty() {
                t.to_string()
            } else {
                c.reason.to_string()
            }
        })
    };
    Some(QueueWorkload {
        object: i,
        namespace: o.meta.namespace.clone().unwrap_or_default(),
        name: o.meta.name.clone(),
        local_queue: w.spec.queue_name.clone().filter(|q| !q.is_empty()),
        priority: w.spec.priority.unwrap_or(0),
        priority_class: w
            .spec
            .priority_class_ref
            .as_ref()
            .map(|r| r.name.clone())
            .or_else(|| w.spec.priority_class_name.clone())
            .filter(|n| !n.is_empty()),
        created: o
            .meta
            .creation_timestamp
            .as_deref()
            .and_then(|t| Timestamp::parse(t).ok()),
        pod_sets,
        state: state(w),
        admission,
        evicted: reason_if("Evicted"),
        preempted: reason_if("Preempted"),
        owned_by_pod: o
            .meta
            .owner_references
            .iter()
            .any(|r| r.kind.as_str() == "Pod"),
        owner: o
            .meta
            .owner_references
            .iter()
            .find(|r| r.controller == Some(true))
            .or_else(|| o.meta.owner_references.first())
            .map(|r| format!("{}/{}/{}", o.namespace(), r.kind, r.name)),
    })
}

/// What one object names that the input does not hold: a LocalQueue's ClusterQueue, a
/// ClusterQueue's flavor, an admission's flavor, a cohort cycle. Each is a problem of the object
/// that names it: the figures of that queue are unknown.
pub(super) fn check_references(a: &mut Admission) {
    let queues: BTreeSet<String> = a.cluster_queues.iter().map(|q| q.name.clone()).collect();
    let flavors: BTreeSet<String> = a.flavors.iter().map(|f| f.name.clone()).collect();
    for l in &a.local_queues {
        if !queues.contains(&l.cluster_queue) && !a.cluster_queues.is_empty() {
            a.reference_problems.push(Problem {
                object: format!("LocalQueue {}/{}", l.namespace, l.name),
                field: "spec.clusterQueue".into(),
                why: format!("no ClusterQueue {} was read", l.cluster_queue),
            });
        }
    }
    // A flavor a queue names must exist for the queue to admit at all (Kueue marks it inactive,
    // `FlavorNotFound`); flavors are only checked when the input holds some (a dump of queues
    // alone names them without their objects).
    if !flavors.is_empty() {
        for q in &mut a.cluster_queues {
            let missing: Vec<&str> = q
                .flavors
                .iter()
                .map(|f| f.flavor.as_str())
                .filter(|f| !flavors.contains(*f))
                .collect();
            if !missing.is_empty() {
                q.inactive = Some(format!(
                    "FlavorNotFound: no ResourceFlavor {} exists",
                    missing.join(", ")
                ));
            }
        }
    }
    let flavors_of: HashMap<String, BTreeSet<String>> = a
        .cluster_queues
        .iter()
        .map(|q| {
            (
                q.name.clone(),
                q.flavors.iter().map(|f| f.flavor.clone()).collect(),
            )
        })
        .collect();
    let mut unknown_flavor: Vec<(String, Problem)> = Vec::new();
    for w in &a.workloads {
        let Some(adm) = &w.admission else { continue };
        let Some(known) = flavors_of.get(adm.cluster_queue.as_str()) else {
            continue;
        };
        for p in &adm.pod_sets {
            if let Some(f) = &p.flavor
                && !known.contains(f.as_str())
            {
                unknown_flavor.push((
                    adm.cluster_queue.to_string(),
                    Problem {
                        object: format!("Workload {}/{}", w.namespace, w.name),
                        field: format!("status.admission.podSetAssignments[{}].flavors", p.name),
                        why: format!(
                            "flavor {f} is not a GPU flavor of ClusterQueue {}",
                            adm.cluster_queue
                        ),
                    },
                ));
            }
        }
    }
    // What is admitted to that queue cannot be told: its figures are unknown.
    for (queue, p) in unknown_flavor {
        if let Some(q) = a.cluster_queues.iter_mut().find(|q| q.name == queue) {
            q.reference_problems.push(p);
        }
    }
    cohort_cycles(a);
}

/// A cohort whose parents lead back to itself, or lead up more than 64 levels: every queue under
/// it is unknown (Kueue itself refuses to admit in a cycle; no real tree is that deep).
fn cohort_cycles(a: &mut Admission) {
    const MAX_DEPTH: usize = 64;
    let parent: HashMap<&str, &str> = a
        .cohorts
        .iter()
        .filter_map(|c| Some((c.name.as_str(), c.parent.as_deref()?)))
        .collect();
    let mut broken: BTreeMap<String, &'static str> = BTreeMap::new();
    for c in &a.cohorts {
        let mut at = c.name.as_str();
        for step in 0..=MAX_DEPTH {
            let Some(p) = parent.get(at) else { break };
            if *p == c.name {
                broken.insert(
                    c.name.clone(),
                    "its parents lead back to it (a cohort cycle)",
                );
                break;
            }
            if step == MAX_DEPTH {
                broken.insert(c.name.clone(), "its parents lead up more than 64 levels");
            }
            at = p;
        }
    }
    for c in &mut a.cohorts {
        if let Some(why) = broken.get(&c.name) {
            c.reference_problems.push(Problem {
                object: format!("Cohort {}", c.name),
                field: "spec.parentName".into(),
                why: (*why).into(),
            });
        }
    }
}
