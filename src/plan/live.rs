//! The batch pool of a cluster, from its objects: the placeable GPUs minus what non-batch
//! workloads (serving: Deployments, StatefulSets, LeaderWorkerSets, Dynamo graphs, KServe, …)
//! hold, on the placeable GPU nodes. What batch work already runs is part of the pool: the plan is
//! advice about when to start, not an admission decision.

use super::Pool;
use crate::config::Config;
use crate::intent::WorkClass;
use crate::k8s::object::Object;
use crate::util::sum::Overflow;

/// The pool, and a sentence saying how it was computed.
pub fn batch_pool(objects: &[Object], cfg: &Config) -> Result<(Pool, String), Overflow> {
    let nodes = crate::analysis::nodes::gpu_nodes(objects, cfg);
    let node_sizes = nodes
        .values()
        .map(|n| n.placeable_gpus())
        .filter(|g| *g > 0)
        .collect();
    let report = crate::analysis::inventory::inventory(objects, cfg, vec![])?;
    let held: u64 = report
        .workloads
        .iter()
        .filter(|w| w.intent_facts.class != WorkClass::Batch)
        .map(|w| w.gpus)
        .fold(0, u64::saturating_add);
    let placeable = report.fleet.gpus.placeable;
    let free = placeable.saturating_sub(held);
    Ok((
        Pool {
            gpus: free,
            node_sizes,
        },
        format!("pool: {placeable} placeable GPUs − {held} held by non-batch workloads = {free}"),
    ))
}
