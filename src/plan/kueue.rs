//! A Kueue ClusterQueue as the planner's pool: the `nvidia.com/gpu` nominal quota over its
//! flavors, optionally what it may borrow in its cohort, minus what it uses now.
//!
//! Both API versions are read (kueue `apis/kueue/v1beta1/clusterqueue_types.go` and
//! `apis/kueue/v1beta2/clusterqueue_types.go`): the cohort is `spec.cohort` in v1beta1 and
//! `spec.cohortName` in v1beta2; `resourceGroups[].flavors[].resources[]` carry `nominalQuota` and
//! `borrowingLimit` (null: no limit, up to the cohort's unused quota); `status.flavorsUsage[]
//! .resources[].total` is what admitted workloads use.

use serde_json::Value;

use crate::k8s::object::{Body, Kind, Object};

pub const GPU: &str = "nvidia.com/gpu";

/// A whole-GPU quantity as Kubernetes writes it (`4`, `"4"`), read by the project's quantity
/// parser; anything else is not a whole number of GPUs.
fn quantity(v: &Value) -> Option<u64> {
    serde_json::from_value::<crate::k8s::quantity::Quantity>(v.clone())
        .ok()?
        .whole()
}

fn gpu_resources(spec: &Value) -> impl Iterator<Item = &Value> {
    spec["resourceGroups"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|g| g["flavors"].as_array().into_iter().flatten())
        .flat_map(|f| f["resources"].as_array().into_iter().flatten())
        .filter(|r| r["name"] == GPU)
}

struct Queue<'a> {
    name: &'a str,
    api_version: &'a str,
    cohort: Option<&'a str>,
    nominal: u64,
    /// `None` when any GPU resource sets no borrowing limit.
    borrowing_limit: Option<u64>,
    usage: u64,
}

fn queue(o: &Object) -> Option<Queue<'_>> {
    let Body::WithStatus(spec, status) = &o.body else {
        return None;
    };
    let cohort = spec["cohortName"]
        .as_str()
        .or_else(|| spec["cohort"].as_str())
        .filter(|c| !c.is_empty());
    let nominal = gpu_resources(spec)
        .filter_map(|r| quantity(&r["nominalQuota"]))
        .fold(0u64, u64::saturating_add);
    let limits: Vec<Option<u64>> = gpu_resources(spec)
        .map(|r| quantity(&r["borrowingLimit"]))
        .collect();
    let borrowing_limit = if limits.iter().any(Option::is_none) {
        None
    } else {
        Some(limits.into_iter().flatten().fold(0u64, u64::saturating_add))
    };
    let usage = status["flavorsUsage"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|f| f["resources"].as_array().into_iter().flatten())
        .filter(|r| r["name"] == GPU)
        .filter_map(|r| quantity(&r["total"]))
        .fold(0u64, u64::saturating_add);
    Some(Queue {
        name: &o.meta.name,
        api_version: &o.api_version,
        cohort,
        nominal,
        borrowing_limit,
        usage,
    })
}

/// A `--queue` that names no ClusterQueue of the live state.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QueueError {
    #[error("--queue {name}: the live state holds no Kueue ClusterQueue")]
    NoQueues { name: String },
    /// `known` are the ClusterQueues there are, in the order read.
    #[error("--queue {name}: no ClusterQueue of that name (there are: {})", known.join(", "))]
    Unknown { name: String, known: Vec<String> },
}

/// The GPUs the ClusterQueue `name` can give batch work now, and a sentence saying how.
pub fn pool(objects: &[Object], name: &str, borrow: bool) -> Result<(u64, String), QueueError> {
    let queues: Vec<Queue<'_>> = objects
        .iter()
        .filter(|o| o.typed_kind() == Kind::ClusterQueue)
        .filter_map(queue)
        .collect();
    let Some(q) = queues.iter().find(|q| q.name == name) else {
        let known: Vec<String> = queues.iter().map(|q| q.name.to_string()).collect();
        let name = name.to_string();
        return Err(if known.is_empty() {
            QueueError::NoQueues { name }
        } else {
            QueueError::Unknown { name, known }
        });
    };
    let mut text = format!(
        "ClusterQueue {} ({}): nominal quota {} {GPU}",
        q.name, q.api_version, q.nominal
    );
    let mut gpus = q.nominal;
    if borrow {
        match q.cohort {
            None => text.push_str(", no cohort to borrow from"),
            Some(cohort) => {
                // What the other queues of the cohort leave unused is all there is to borrow.
                let unused: u64 = queues
                    .iter()
                    .filter(|o| o.name != q.name && o.cohort == Some(cohort))
                    .map(|o| o.nominal.saturating_sub(o.usage))
                    .fold(0u64, u64::saturating_add);
                let borrowable = q.borrowing_limit.map_or(unused, |l| l.min(unused));
                gpus = gpus.saturating_add(borrowable);
                text.push_str(&format!(
                    ", +{borrowable} borrowable in cohort {cohort} ({unused} unused there{})",
                    q.borrowing_limit
                        .map(|l| format!(", borrowing limit {l}"))
                        .unwrap_or_default()
                ));
            }
        }
    }
    let free = gpus.saturating_sub(q.usage);
    text.push_str(&format!(", −{} in use = {free}", q.usage));
    Ok((free, text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::k8s::read::read_str;

    const QUEUES: &str = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: team-a}\nspec:\n  cohortName: ml-pool\n  resourceGroups:\n  - coveredResources: [cpu, nvidia.com/gpu]\n    flavors:\n    - name: h100\n      resources:\n      - {name: cpu, nominalQuota: 100}\n      - {name: nvidia.com/gpu, nominalQuota: 8, borrowingLimit: 4}\n    - name: a100\n      resources:\n      - {name: nvidia.com/gpu, nominalQuota: \"4\", borrowingLimit: 0}\nstatus:\n  flavorsUsage:\n  - name: h100\n    resources: [{name: nvidia.com/gpu, total: \"2\"}]\n---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: team-b}\nspec:\n  cohort: ml-pool\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors:\n    - name: h100\n      resources: [{name: nvidia.com/gpu, nominalQuota: 16}]\nstatus:\n  flavorsUsage:\n  - name: h100\n    resources: [{name: nvidia.com/gpu, total: 10}]\n";

    #[test]
    fn nominal_quota_borrowing_and_usage_in_both_versions() {
        let objs = read_str(QUEUES, "queues.yaml").unwrap();
        // v1beta2: 8 + 4 nominal, 2 in use.
        let (gpus, text) = pool(&objs, "team-a", false).unwrap();
        assert_eq!(gpus, 10, "{text}");
        // Borrowing: team-b leaves 6 unused, the limits allow 4.
        let (gpus, text) = pool(&objs, "team-a", true).unwrap();
        assert_eq!(gpus, 14, "{text}");
        assert!(text.contains("+4 borrowable in cohort ml-pool"), "{text}");
        // v1beta1, no borrowing limit: up to what team-a leaves unused (12 − 2).
        let (gpus, _) = pool(&objs, "team-b", true).unwrap();
        assert_eq!(gpus, 16 + 10 - 10);
        let e = pool(&objs, "team-c", false).unwrap_err().to_string();
        assert!(e.contains("there are: team-a, team-b"), "{e}");
    }
}
