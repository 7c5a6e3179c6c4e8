//! Reading admission objects: both Kueue API versions, the fields a parser must survive, and each
//! bad input named by object and field instead of read as 0.

use super::*;
use crate::k8s::read::read_str;

fn read(yaml: &str) -> Admission {
    Admission::read(&read_str(yaml, "q.yaml").unwrap())
}

const V1BETA1: &str = "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: old}\nspec:\n  cohort: pool\n  queueingStrategy: StrictFIFO\n  flavorFungibility: {whenCanBorrow: Borrow, whenCanPreempt: Preempt}\n  preemption:\n    reclaimWithinCohort: LowerPriority\n    borrowWithinCohort: {policy: LowerPriority, maxPriorityThreshold: 100}\n  resourceGroups:\n  - coveredResources: [cpu, memory, nvidia.com/gpu]\n    flavors:\n    - name: h100\n      resources:\n      - {name: cpu, nominalQuota: 300m}\n      - {name: memory, nominalQuota: 36Gi}\n      - {name: nvidia.com/gpu, nominalQuota: \"8\", borrowingLimit: 2, lendingLimit: 4}\nstatus:\n  flavorsUsage:\n  - name: h100\n    resources:\n    - {name: cpu, total: 100m}\n    - {name: nvidia.com/gpu, total: \"10\", borrowed: \"2\"}\n";

#[test]
fn a_v1beta1_queue_reads_as_v1beta2_does() {
    let a = read(V1BETA1);
    let q = a.cluster_queue("old").unwrap();
    assert_eq!(q.cohort.as_deref(), Some("pool"));
    assert_eq!(q.strategy, Strategy::StrictFifo);
    // v1beta1's Borrow and Preempt are v1beta2's MayStopSearch.
    assert!(q.fungibility.stop_when_borrowing && q.fungibility.stop_when_preempting);
    assert_eq!(q.preemption.reclaim_within_cohort, Reclaim::LowerPriority);
    assert_eq!(
        q.preemption.borrow_within_cohort,
        BorrowWithinCohort::LowerPriority {
            max_priority_threshold: Some(100)
        }
    );
    // Only GPUs are quota here; cpu and memory are skipped without being read.
    assert_eq!(
        q.flavors,
        [FlavorQuota {
            flavor: "h100".into(),
            quota: Quota {
                nominal: 8,
                borrowing_limit: Some(2),
                lending_limit: Some(4)
            }
        }]
    );
    let u = q.usage.as_ref().unwrap()["h100"];
    assert_eq!((u.total, u.borrowed), (10, 2));
    assert!(q.problems.is_empty());
    // Defaults: BestEffortFIFO, borrow then stop, try the next flavor before preempting.
    let a = read(&V1BETA1.replace("  queueingStrategy: StrictFIFO\n  flavorFungibility: {whenCanBorrow: Borrow, whenCanPreempt: Preempt}\n", ""));
    let q = a.cluster_queue("old").unwrap();
    assert_eq!(q.strategy, Strategy::BestEffortFifo);
    assert!(q.fungibility.stop_when_borrowing && !q.fungibility.stop_when_preempting);
}

#[test]
fn a_quantity_that_does_not_read_is_named_never_zero() {
    let a = read(&V1BETA1.replace("nominalQuota: \"8\"", "nominalQuota: eight"));
    let p = &a.cluster_queue("old").unwrap().problems;
    assert_eq!(p.len(), 1, "{p:?}");
    assert_eq!(p[0].object, "ClusterQueue old");
    assert_eq!(
        p[0].field,
        "spec.resourceGroups[0].flavors[0].resources[2].nominalQuota"
    );
    // A fraction of a GPU is no quota of whole GPUs.
    let a = read(&V1BETA1.replace("borrowingLimit: 2", "borrowingLimit: 500m"));
    let p = &a.cluster_queue("old").unwrap().problems;
    assert!(p[0].why.contains("not a whole number of GPUs"), "{p:?}");
    assert!(p[0].field.ends_with("borrowingLimit"));
}

#[test]
fn references_to_what_was_not_read_are_problems() {
    let lq = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: q, namespace: ns}\nspec: {clusterQueue: gone}\n---\n";
    let flavor =
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: a100}\n---\n";
    let wl = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: w, namespace: ns}\nspec:\n  queueName: q\n  podSets: [{name: main, count: 1, template: {spec: {containers: [{name: c}]}}}]\nstatus:\n  conditions: [{type: QuotaReserved, status: \"True\"}]\n  admission:\n    clusterQueue: old\n    podSetAssignments: [{name: main, flavors: {nvidia.com/gpu: b200}}]\n";
    let a = read(&format!("{V1BETA1}---\n{lq}{flavor}{wl}"));
    let named: Vec<String> = a.all_problems().map(ToString::to_string).collect();
    assert!(
        named.contains(
            &"LocalQueue ns/q spec.clusterQueue: no ClusterQueue gone was read".to_string()
        ),
        "{named:?}"
    );
    assert!(
        named.iter().any(|p| p.starts_with(
            "Workload ns/w status.admission.podSetAssignments[main].flavors: flavor b200"
        )),
        "{named:?}"
    );
    // The queue names a flavor that does not exist: Kueue holds it inactive.
    assert!(
        a.cluster_queue("old")
            .unwrap()
            .inactive
            .as_deref()
            .unwrap()
            .contains("FlavorNotFound"),
    );
}

#[test]
fn workload_states_from_their_conditions() {
    let wl = |active: &str, conditions: &str| {
        format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {{name: w, namespace: ns, ownerReferences: [{{apiVersion: batch/v1, kind: Job, name: j, uid: u, controller: true}}]}}\nspec:\n  queueName: q\n{active}  podSets: [{{name: main, count: 3, minCount: 1, template: {{spec: {{containers: [{{name: c, resources: {{limits: {{nvidia.com/gpu: 2}}}}}}]}}}}}}]\nstatus:\n  conditions: {conditions}\n"
        )
    };
    let one = |active: &str, conditions: &str| read(&wl(active, conditions)).workloads.remove(0);
    let w = one("", "[]");
    assert!(w.is_queued());
    assert_eq!((w.gpus(), w.pod_sets[0].min_count), (6, Some(1)));
    assert_eq!(w.owner.as_deref(), Some("ns/Job/j"));
    assert_eq!(
        one("  active: false\n", "[]").state,
        WorkloadState::Inactive
    );
    assert_eq!(
        one("", "[{type: Finished, status: \"True\"}]").state,
        WorkloadState::Finished
    );
    let w = one(
        "",
        "[{type: QuotaReserved, status: \"False\", reason: ExceedsMaxQuota, message: m}]",
    );
    assert!(w.never_fits());
    // The legacy reason: only the message tells.
    let w = one(
        "",
        "[{type: QuotaReserved, status: \"False\", reason: Pending, message: \"couldn't assign flavors to pod set main: insufficient quota for nvidia.com/gpu in flavor h100, previously considered podsets requests (0) + current podset request (6) > maximum capacity (4)\"}]",
    );
    assert!(w.never_fits());
    let w = one(
        "",
        "[{type: QuotaReserved, status: \"False\", reason: Pending}, {type: Evicted, status: \"True\", reason: Preempted}, {type: Preempted, status: \"True\", reason: InCohortReclamation}]",
    );
    assert!(w.is_queued() && !w.never_fits());
    assert_eq!(w.preempted.as_deref(), Some("InCohortReclamation"));
}

#[test]
fn a_kai_queue_tree_with_its_special_values() {
    let q = |name: &str, parent: &str, gpu: &str| {
        format!(
            "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {{name: {name}}}\nspec:\n  {parent}resources:\n    gpu: {gpu}\n---\n"
        )
    };
    let a = read(
        &(q("top", "", "{quota: -1, limit: -1}")
            + &q("leaf", "parentQueue: top\n  ", "{quota: 0.5}")
            + &q(
                "orphan",
                "parentQueue: nowhere\n  ",
                "{quota: 1, limit: lots}",
            )),
    );
    let top = a.kai_queue("top").unwrap();
    assert_eq!((top.quota, top.limit), (Some(-1.0), None));
    // An omitted limit is 0 (the CRD has no default): nothing over it is allowed.
    let leaf = a.kai_queue("leaf").unwrap();
    assert_eq!(
        (leaf.quota, leaf.limit, leaf.parent.as_deref()),
        (Some(0.5), Some(0.0), Some("top"))
    );
    assert!(kai::is_leaf(&a, "leaf") && !kai::is_leaf(&a, "top"));
    let orphan: Vec<String> = a
        .kai_queue("orphan")
        .unwrap()
        .all_problems()
        .map(ToString::to_string)
        .collect();
    assert!(
        orphan
            .iter()
            .any(|p| p.contains("spec.resources.gpu.limit")),
        "{orphan:?}"
    );
    assert!(
        orphan
            .iter()
            .any(|p| p.contains("no Queue nowhere was read")),
        "{orphan:?}"
    );
}

#[test]
fn a_job_asks_its_queue_with_its_template_and_annotations() {
    let job = read_str("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: train\n  namespace: ml\n  labels: {kueue.x-k8s.io/queue-name: team, kueue.x-k8s.io/priority-class: urgent}\n  annotations: {kueue.x-k8s.io/job-min-parallelism: \"5\"}\nspec:\n  parallelism: 20\n  template:\n    metadata:\n      labels: {kai.scheduler/queue: ignored-here}\n    spec:\n      nodeSelector: {nvidia.com/gpu.product: H100}\n      containers: [{name: c, resources: {limits: {nvidia.com/gpu: 1}}}]\n", "j.yaml").unwrap();
    let roles = crate::workload::kinds::declared_shape(&job[0])
        .unwrap()
        .unwrap()
        .roles;
    let a = Ask::of(&job[0], "ml/Job/train".into(), &roles);
    assert_eq!(a.local_queue.as_deref(), Some("team"));
    assert_eq!(a.priority_class.as_deref(), Some("urgent"));
    assert_eq!(a.kai_queue.as_deref(), Some("ignored-here"));
    let ps = &a.pod_sets[0];
    assert_eq!((ps.count, ps.min_count, ps.gpus_per_pod), (20, Some(5), 1));
    assert_eq!(
        ps.models.as_ref().unwrap().iter().collect::<Vec<_>>(),
        ["H100"]
    );
    assert_eq!(a.gpus(), 20);
}
