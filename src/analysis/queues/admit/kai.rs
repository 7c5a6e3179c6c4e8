//! KAI Scheduler's admission of one workload: its queue's limit and quota, and its parents'
//! (`pkg/scheduler/plugins/proportion/capacity_policy/`).

use super::decision::Decision;
use crate::queues::{Admission, Ask};
use crate::report::queues::Verdict;

/// KAI: a queue admits within its limit (and those of its parents); above its quota the work is
/// over quota (preemptible), what KAI calls borrowing; above the limit it waits, and more than
/// the limit holds is never (`pkg/scheduler/plugins/proportion/capacity_policy/`).
pub(super) fn kai(a: &Admission, ask: &Ask) -> Decision {
    let name = ask.kai_queue.clone().unwrap_or_default();
    let queue = Some(name.clone());
    let Some(q) = a.kai_queue(&name) else {
        return if a.kai_queues.is_empty() {
            Decision::unknown(queue, "no KAI Queue was read")
        } else {
            Decision {
                queue,
                flavor: None,
                verdict: Verdict::Never,
                why: format!("KAI Queue {name} does not exist (QueueDoesNotExist)"),
            }
        };
    };
    if let Some(p) = q.all_problems().next() {
        return Decision::unknown(queue, format!("the queue's quota is unknown: {p}"));
    }
    // Only leaf queues schedule (`pkg/scheduler/actions/utils/input_jobs.go`).
    if !crate::queues::is_kai_leaf(a, &name) {
        return Decision {
            queue,
            flavor: None,
            verdict: Verdict::Never,
            why: format!("KAI Queue {name} has child queues: KAI schedules only leaf queues' jobs"),
        };
    }
    #[allow(clippy::cast_precision_loss)]
    let need = ask.gpus() as f64;
    // The queue and its parents: the tightest limit binds.
    let mut chain = vec![q];
    while let Some(p) = chain
        .last()
        .and_then(|q| q.parent.as_deref())
        .and_then(|p| a.kai_queue(p))
    {
        if chain.len() > a.kai_queues.len() {
            break;
        }
        chain.push(p);
    }
    for c in &chain {
        let Some(limit) = c.limit else { continue };
        if need > limit {
            return Decision {
                queue,
                flavor: None,
                verdict: Verdict::Never,
                why: format!("{need} GPUs > the limit of KAI Queue {} ({limit})", c.name),
            };
        }
        let Some(allocated) = c.allocated else {
            return Decision::unknown(
                queue,
                format!("KAI Queue {} reports no status.allocated", c.name),
            );
        };
        if allocated + need > limit {
            return Decision {
                queue,
                flavor: None,
                verdict: Verdict::Waits,
                why: format!(
                    "KAI Queue {} has {allocated} of its limit {limit} allocated, {need} needed (OverLimit)",
                    c.name
                ),
            };
        }
    }
    let Some(allocated) = q.allocated else {
        return Decision::unknown(
            queue,
            format!("KAI Queue {name} reports no status.allocated"),
        );
    };
    match q.quota {
        Some(quota) if quota >= 0.0 && allocated + need > quota => Decision {
            queue,
            flavor: None,
            verdict: Verdict::Borrows,
            why: format!(
                "over KAI Queue {name}'s quota ({allocated} + {need} > {quota}): runs preemptible, within its limit (a non-preemptible job — priority 100 or more — waits instead: NonPreemptibleOverQuota)"
            ),
        },
        _ => Decision {
            queue,
            flavor: None,
            verdict: Verdict::Admits,
            why: format!(
                "within KAI Queue {name}'s quota ({allocated} + {need} ≤ {})",
                q.quota.map_or("unlimited".into(), |n| n.to_string())
            ),
        },
    }
}
