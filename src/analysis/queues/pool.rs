//! A Kueue ClusterQueue as the planner's pool (`gpuledger plan --queue`), read as the inventory
//! reads it: per GPU flavor, its unused nominal quota — with `--borrow`, what Kueue would let it
//! take now, its cohort's unused quota within its borrowing limit ([`super::tree`]) — on the
//! placeable nodes of the flavors' GPU models.

use super::admit::Live;
use crate::queues::Admission;

/// A `--queue` that names no ClusterQueue of the live state, or one whose quota is unknown.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QueueError {
    #[error("--queue {name}: the live state holds no Kueue ClusterQueue")]
    NoQueues { name: String },
    /// `known` are the ClusterQueues there are, by name.
    #[error("--queue {name}: no ClusterQueue of that name (there are: {})", known.join(", "))]
    Unknown { name: String, known: Vec<String> },
    #[error("--queue {name}: its quota is unknown: {why}")]
    Unreadable { name: String, why: String },
}

/// The queue's pool: its free GPUs, the GPU models of its flavors (empty: any model), and a
/// sentence saying how.
pub struct QueuePool {
    pub gpus: u64,
    pub models: Vec<String>,
    pub text: String,
}

/// The GPUs ClusterQueue `name` can give batch work now.
pub fn pool(a: &Admission, name: &str, borrow: bool) -> Result<QueuePool, QueueError> {
    let Some(cq) = a.cluster_queue(name) else {
        let known: Vec<String> = a.cluster_queues.iter().map(|q| q.name.clone()).collect();
        let name = name.to_string();
        return Err(if known.is_empty() {
            QueueError::NoQueues { name }
        } else {
            QueueError::Unknown { name, known }
        });
    };
    if let Some(p) = cq.all_problems().next() {
        return Err(QueueError::Unreadable {
            name: name.into(),
            why: p.to_string(),
        });
    }
    let live = Live::new(a);
    let usage = live.usage_now();
    let q = live
        .tree
        .queue(name)
        .filter(|&q| live.tree.sound(q))
        .ok_or_else(|| QueueError::Unreadable {
            name: name.into(),
            why: "its cohort's parents lead back to it (a cohort cycle)".into(),
        })?;
    let mut gpus = 0u64;
    let mut parts = Vec::new();
    let mut models = Vec::new();
    let mut any_model = false;
    for f in &cq.flavors {
        let used = live.reserved(name, &f.flavor);
        let own = f.quota.nominal.saturating_sub(used);
        let free = if borrow {
            u64::try_from(live.tree.available(q, &f.flavor, &usage)).unwrap_or(0)
        } else {
            own
        };
        gpus = gpus.saturating_add(free);
        let model = a.flavor(&f.flavor).and_then(|rf| rf.model());
        match model {
            Some(m) => models.push(m.to_string()),
            None => any_model = true,
        }
        let mut part = format!(
            "{}{}: nominal {}, {used} in use",
            f.flavor,
            model.map(|m| format!(" ({m})")).unwrap_or_default(),
            f.quota.nominal
        );
        if borrow {
            part.push_str(&format!(
                ", +{} borrowable{}",
                free.saturating_sub(own),
                match (&cq.cohort, f.quota.borrowing_limit) {
                    (None, _) => " (no cohort to borrow from)".to_string(),
                    (Some(c), Some(l)) => format!(" in cohort {c}, borrowing limit {l}"),
                    (Some(c), None) => format!(" in cohort {c}"),
                }
            ));
        }
        part.push_str(&format!(" = {free}"));
        parts.push(part);
    }
    if any_model {
        models.clear();
    }
    models.sort();
    models.dedup();
    Ok(QueuePool {
        gpus,
        models,
        text: format!(
            "ClusterQueue {name} ({}): {}",
            cq.api_version,
            if parts.is_empty() {
                "no GPU quota".to_string()
            } else {
                parts.join("; ")
            }
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::k8s::read::read_str;

    const QUEUES: &str = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: team-a}\nspec:\n  cohortName: ml-pool\n  resourceGroups:\n  - coveredResources: [cpu, nvidia.com/gpu]\n    flavors:\n    - name: h100\n      resources:\n      - {name: cpu, nominalQuota: 100}\n      - {name: nvidia.com/gpu, nominalQuota: 8, borrowingLimit: 4}\n    - name: a100\n      resources:\n      - {name: cpu, nominalQuota: 10}\n      - {name: nvidia.com/gpu, nominalQuota: \"4\", borrowingLimit: 0}\nstatus:\n  flavorsUsage:\n  - name: h100\n    resources: [{name: nvidia.com/gpu, total: \"2\"}]\n---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: team-b}\nspec:\n  cohort: ml-pool\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors:\n    - name: h100\n      resources: [{name: nvidia.com/gpu, nominalQuota: 16}]\nstatus:\n  flavorsUsage:\n  - name: h100\n    resources: [{name: nvidia.com/gpu, total: 10}]\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: h100}\nspec: {nodeLabels: {nvidia.com/gpu.product: H100}}\n";

    #[test]
    fn nominal_quota_borrowing_and_usage_per_flavor_in_both_versions() {
        let objs = read_str(QUEUES, "queues.yaml").unwrap();
        let a = Admission::read(&objs);
        // v1beta2: h100 8 − 2 + a100 4 − 0.
        let p = pool(&a, "team-a", false).unwrap();
        assert_eq!(p.gpus, 10, "{}", p.text);
        // a100 names no model: any model.
        assert!(p.models.is_empty());
        // Borrowing: the cohort holds 8 + 16 in h100 with 12 in use; team-a may take its 6
        // unused and 4 more (its limit); a100 borrows nothing (limit 0; nobody lends a100).
        let p = pool(&a, "team-a", true).unwrap();
        assert_eq!(p.gpus, 10 + 4, "{}", p.text);
        assert!(
            p.text.contains("+4 borrowable in cohort ml-pool"),
            "{}",
            p.text
        );
        // v1beta1 without a borrowing limit: all the cohort leaves unused in h100 (24 − 12).
        let p = pool(&a, "team-b", true).unwrap();
        assert_eq!(p.gpus, 12, "{}", p.text);
        assert_eq!(p.models, ["H100"]);
        let e = pool(&a, "team-c", false).err().unwrap().to_string();
        assert!(e.contains("there are: team-a, team-b"), "{e}");
    }
}
