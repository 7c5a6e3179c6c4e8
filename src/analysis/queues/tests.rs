//! Kueue's and KAI's verdicts on one more workload, on queues written from their API types: each
//! verdict, the flavor order and fungibility, the two queueing strategies, partial admission, a
//! hierarchical cohort with quota of its own, a lending limit, preemption naming what it evicts,
//! and what a quota change moves.

use super::admit::{Live, decide, would_admit};
use super::change::{Joining, admission, gate, quota};
use crate::k8s::read::read_str;
use crate::queues::{Admission, Ask, PodSetGpus};
use crate::report::Known;
use crate::report::queues::Verdict;

fn flavor(name: &str, model: &str) -> String {
    format!(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {{name: {name}}}\nspec: {{nodeLabels: {{nvidia.com/gpu.product: {model}}}}}\n---\n"
    )
}

/// A ClusterQueue of every namespace: `spec` lines after `resourceGroups`, and GPU quota per
/// flavor (`nominalQuota: 8, borrowingLimit: 0`), and its reservation per flavor.
fn cq(name: &str, extra: &str, flavors: &[(&str, &str)], reserved: &[(&str, u64)]) -> String {
    let extra = if extra.contains("namespaceSelector") {
        extra.to_string()
    } else {
        format!("  namespaceSelector: {{}}\n{extra}")
    };
    let mut s = format!(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {{name: {name}}}\nspec:\n{extra}  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors:\n"
    );
    for (f, q) in flavors {
        s.push_str(&format!(
            "    - name: {f}\n      resources: [{{name: nvidia.com/gpu, {q}}}]\n"
        ));
    }
    if reserved.is_empty() {
        s.push_str("status: {flavorsReservation: []}\n");
    } else {
        s.push_str("status:\n  flavorsReservation:\n");
    }
    for (f, n) in reserved {
        s.push_str(&format!(
            "  - name: {f}\n    resources: [{{name: nvidia.com/gpu, total: \"{n}\"}}]\n"
        ));
    }
    s.push_str("---\n");
    s
}

fn lq(ns: &str, cq: &str) -> String {
    format!(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {{name: q, namespace: {ns}}}\nspec: {{clusterQueue: {cq}}}\n---\n"
    )
}

/// A Workload of `count` pods of `gpus` each: admitted to `cq`'s `flavor` (`Some`), else queued.
fn wl(
    ns: &str,
    name: &str,
    count: u64,
    gpus: u64,
    admitted: Option<(&str, &str)>,
    priority: i64,
    created: &str,
) -> String {
    let mut s = format!(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata:\n  name: {name}\n  namespace: {ns}\n  creationTimestamp: \"{created}\"\n  ownerReferences: [{{apiVersion: batch/v1, kind: Job, name: {name}, uid: u-{name}, controller: true}}]\nspec:\n  queueName: q\n  priority: {priority}\n  podSets:\n  - name: main\n    count: {count}\n    template:\n      spec:\n        containers: [{{name: c, resources: {{requests: {{nvidia.com/gpu: \"{gpus}\"}}}}}}]\nstatus:\n"
    );
    match admitted {
        Some((cq, f)) => s.push_str(&format!(
            "  conditions: [{{type: QuotaReserved, status: \"True\", reason: QuotaReserved}}, {{type: Admitted, status: \"True\"}}]\n  admission:\n    clusterQueue: {cq}\n    podSetAssignments: [{{name: main, count: {count}, flavors: {{nvidia.com/gpu: {f}}}}}]\n"
        )),
        None => s.push_str(
            "  conditions: [{type: QuotaReserved, status: \"False\", reason: WaitingForQuota}]\n",
        ),
    }
    s.push_str("---\n");
    s
}

fn admission_of(yaml: &str) -> Admission {
    Admission::read(&read_str(yaml, "queues.yaml").unwrap())
}

fn ask(ns: &str, count: u64, gpus: u64) -> Ask {
    Ask {
        id: format!("{ns}/Job/new"),
        namespace: ns.into(),
        local_queue: Some("q".into()),
        kai_queue: None,
        priority_class: None,
        pod_sets: vec![PodSetGpus {
            name: "main".into(),
            count,
            min_count: None,
            gpus_per_pod: gpus,
            node_selector: Default::default(),
            models: None,
        }],
    }
}

fn verdict(yaml: &str, a: &Ask) -> (Verdict, String, Option<String>) {
    let adm = admission_of(yaml);
    let d = decide(&Live::new(&adm), a);
    (d.verdict, d.why, d.flavor)
}

/// Two queues in one cohort, 16 H100 each; `a` may borrow without limit, `b` may not borrow.
fn cohort(extra_a: &str, reserved_a: u64, reserved_b: u64) -> String {
    flavor("h100", "H100")
        + &cq(
            "cq-a",
            &format!("  cohortName: pool\n{extra_a}"),
            &[("h100", "nominalQuota: 16")],
            &[("h100", reserved_a)],
        )
        + &cq(
            "cq-b",
            "  cohortName: pool\n",
            &[("h100", "nominalQuota: 16, borrowingLimit: 0")],
            &[("h100", reserved_b)],
        )
        + &lq("team-a", "cq-a")
        + &lq("team-b", "cq-b")
}

#[test]
fn admits_within_unused_nominal_quota() {
    let (v, why, f) = verdict(&cohort("", 8, 0), &ask("team-a", 1, 8));
    assert_eq!(v, Verdict::Admits, "{why}");
    assert_eq!(f.as_deref(), Some("h100"));
}

#[test]
fn borrows_what_the_cohort_leaves_unused() {
    // cq-a is at its 16; cq-b leaves 16 unused and lends it (no lending limit).
    let (v, why, _) = verdict(&cohort("", 16, 0), &ask("team-a", 1, 8));
    assert_eq!(v, Verdict::Borrows, "{why}");
    // cq-b may not borrow (borrowingLimit 0): the same ask waits there.
    let (v, why, _) = verdict(&cohort("", 16, 16), &ask("team-b", 1, 8));
    assert_eq!(v, Verdict::Waits, "{why}");
    assert!(
        why.contains("cq-b is at 16 of its 16 in flavor h100"),
        "{why}"
    );
    assert!(why.contains("borrowing limit 0"), "{why}");
}

#[test]
fn never_when_more_than_the_queue_can_ever_reach() {
    // cq-b can reach its 16 (borrowing limit 0); cq-a the cohort's 32.
    let (v, why, _) = verdict(&cohort("", 0, 0), &ask("team-b", 3, 8));
    assert_eq!(v, Verdict::Never, "{why}");
    assert!(
        why.contains("24 GPUs in flavor h100 > the most cq-b can ever reach there (16)"),
        "{why}"
    );
    let (v, _, _) = verdict(&cohort("", 0, 0), &ask("team-a", 4, 8));
    assert_eq!(v, Verdict::Borrows);
    let (v, _, _) = verdict(&cohort("", 0, 0), &ask("team-a", 5, 8));
    assert_eq!(v, Verdict::Never);
}

#[test]
fn preempts_lower_priority_work_of_its_own_queue_and_names_it() {
    let yaml = cohort(
        "  preemption: {withinClusterQueue: LowerPriority}\n",
        16,
        16,
    ) + &wl(
        "team-a",
        "old-low",
        1,
        8,
        Some(("cq-a", "h100")),
        0,
        "2026-12-01T00:00:00Z",
    ) + &wl(
        "team-a",
        "new-low",
        1,
        8,
        Some(("cq-a", "h100")),
        0,
        "2026-12-02T00:00:00Z",
    );
    let adm = admission_of(&yaml);
    let mut a = ask("team-a", 1, 8);
    // A workload of the same priority evicts nothing: it waits.
    let d = decide(&Live::new(&adm), &a);
    assert_eq!(d.verdict, Verdict::Waits, "{}", d.why);
    // Of higher priority (a class the live Workloads resolve), it evicts the newest of the lowest.
    let yaml = yaml
        + &wl("team-x", "high", 0, 8, None, 100, "2026-12-01T00:00:00Z").replace(
            "  priority: 100\n",
            "  priority: 100\n  priorityClassRef: {group: kueue.x-k8s.io, kind: WorkloadPriorityClass, name: urgent}\n",
        );
    let adm = admission_of(&yaml);
    a.priority_class = Some("urgent".into());
    let d = decide(&Live::new(&adm), &a);
    assert_eq!(d.verdict, Verdict::Preempts, "{}", d.why);
    assert!(d.why.contains("evicting team-a/new-low"), "{}", d.why);
    assert!(!d.why.contains("old-low"), "{}", d.why);
}

#[test]
fn reclaims_from_a_queue_that_borrows() {
    // cq-b lends: cq-a borrowed 8 of cq-b's quota; cq-b now needs its nominal back.
    let yaml = flavor("h100", "H100")
        + &cq(
            "cq-a",
            "  cohortName: pool\n",
            &[("h100", "nominalQuota: 8")],
            &[("h100", 16)],
        )
        + &cq(
            "cq-b",
            "  cohortName: pool\n  preemption: {reclaimWithinCohort: Any}\n",
            &[("h100", "nominalQuota: 16")],
            &[("h100", 8)],
        )
        + &lq("team-a", "cq-a")
        + &lq("team-b", "cq-b")
        + &wl(
            "team-a",
            "a-1",
            1,
            8,
            Some(("cq-a", "h100")),
            0,
            "2026-12-01T00:00:00Z",
        )
        + &wl(
            "team-a",
            "a-2",
            1,
            8,
            Some(("cq-a", "h100")),
            0,
            "2026-12-02T00:00:00Z",
        )
        + &wl(
            "team-b",
            "b-1",
            1,
            8,
            Some(("cq-b", "h100")),
            0,
            "2026-12-01T00:00:00Z",
        );
    let (v, why, _) = verdict(&yaml, &ask("team-b", 1, 8));
    assert_eq!(v, Verdict::Preempts, "{why}");
    assert!(why.contains("evicting team-a/a-2"), "{why}");
    // Without reclaim the same ask waits.
    let (v, _, _) = verdict(
        &yaml.replace("preemption: {reclaimWithinCohort: Any}", "preemption: {}"),
        &ask("team-b", 1, 8),
    );
    assert_eq!(v, Verdict::Waits);
}

#[test]
fn flavors_in_order_and_fungibility() {
    // h100 first (full, borrowable from the cohort), a100 second (free).
    let two = |fungibility: &str| {
        flavor("h100", "H100")
            + &flavor("a100", "A100")
            + &cq(
                "cq-a",
                &format!("  cohortName: pool\n{fungibility}"),
                &[("h100", "nominalQuota: 8"), ("a100", "nominalQuota: 8")],
                &[("h100", 8)],
            )
            + &cq(
                "cq-b",
                "  cohortName: pool\n",
                &[("h100", "nominalQuota: 8")],
                &[],
            )
            + &lq("team-a", "cq-a")
    };
    // Kueue's default stops at the first flavor that fits, even by borrowing.
    let (v, why, f) = verdict(&two(""), &ask("team-a", 1, 4));
    assert_eq!((v, f.as_deref()), (Verdict::Borrows, Some("h100")), "{why}");
    // whenCanBorrow: TryNextFlavor prefers a flavor without borrowing.
    let (v, why, f) = verdict(
        &two("  flavorFungibility: {whenCanBorrow: TryNextFlavor}\n"),
        &ask("team-a", 1, 4),
    );
    assert_eq!((v, f.as_deref()), (Verdict::Admits, Some("a100")), "{why}");
    // A pod pinned to A100 skips the h100 flavor.
    let mut pinned = ask("team-a", 1, 4);
    pinned.pod_sets[0]
        .node_selector
        .insert("nvidia.com/gpu.product", "A100");
    let (v, _, f) = verdict(&two(""), &pinned);
    assert_eq!((v, f.as_deref()), (Verdict::Admits, Some("a100")));
    // Pinned to a model no flavor has: never.
    pinned.pod_sets[0]
        .node_selector
        .insert("nvidia.com/gpu.product", "L4");
    let (v, why, _) = verdict(&two(""), &pinned);
    assert_eq!(v, Verdict::Never, "{why}");
}

#[test]
fn strict_fifo_blocks_behind_its_head_best_effort_passes_it() {
    let queue = |strategy: &str| {
        flavor("h100", "H100")
            + &cq(
                "cq-a",
                &format!("  queueingStrategy: {strategy}\n"),
                &[("h100", "nominalQuota: 16")],
                &[("h100", 8)],
            )
            + &lq("team-a", "cq-a")
            // A head of 16 that does not fit the 8 left.
            + &wl("team-a", "big-head", 2, 8, None, 0, "2026-12-01T00:00:00Z")
    };
    let (v, why, _) = verdict(&queue("BestEffortFIFO"), &ask("team-a", 1, 4));
    assert_eq!(v, Verdict::Admits, "{why}");
    let (v, why, _) = verdict(&queue("StrictFIFO"), &ask("team-a", 1, 4));
    assert_eq!(v, Verdict::Waits, "{why}");
    assert!(
        why.contains("StrictFIFO") && why.contains("team-a/big-head"),
        "{why}"
    );
}

#[test]
fn best_effort_admits_the_work_ahead_that_fits_first() {
    let yaml = flavor("h100", "H100")
        + &cq("cq-a", "", &[("h100", "nominalQuota: 16")], &[("h100", 8)])
        + &lq("team-a", "cq-a")
        // Ahead, and fits the 8 left: it is admitted first.
        + &wl("team-a", "ahead", 1, 8, None, 0, "2026-12-01T00:00:00Z");
    let (v, why, _) = verdict(&yaml, &ask("team-a", 1, 4));
    assert_eq!(v, Verdict::Waits, "{why}");
    assert!(why.contains("admitted first: team-a/ahead"), "{why}");
    let adm = admission_of(&yaml);
    assert_eq!(would_admit(&Live::new(&adm), "cq-a").get("h100"), Some(&8));
}

#[test]
fn partial_admission_takes_the_most_pods_that_fit() {
    let yaml = flavor("h100", "H100")
        + &cq("cq-a", "", &[("h100", "nominalQuota: 16")], &[("h100", 6)])
        + &lq("team-a", "cq-a");
    let mut a = ask("team-a", 20, 1);
    let (v, _, _) = verdict(&yaml, &a);
    assert_eq!(v, Verdict::Never);
    a.pod_sets[0].min_count = Some(5);
    let (v, why, _) = verdict(&yaml, &a);
    assert_eq!(v, Verdict::Admits, "{why}");
    assert!(why.contains("partially: 10 of its 20 pods"), "{why}");
    // Its minimum (12) fits the queue (16), not the 10 free now: it waits, never only when even
    // partially it cannot.
    a.pod_sets[0].min_count = Some(12);
    let (v, why, _) = verdict(&yaml, &a);
    assert_eq!(v, Verdict::Waits, "{why}");
    assert!(why.contains("its minimum 12 of 20 pods"), "{why}");
    a.pod_sets[0].min_count = Some(17);
    let (v, _, _) = verdict(&yaml, &a);
    assert_eq!(v, Verdict::Never);
}

#[test]
fn two_pod_sets_together_beyond_reach_never_fit() {
    let yaml = flavor("h100", "H100")
        + &cq("cq-a", "", &[("h100", "nominalQuota: 12")], &[])
        + &lq("team-a", "cq-a");
    let mut a = ask("team-a", 1, 8);
    a.pod_sets.push(PodSetGpus {
        name: "worker".into(),
        ..a.pod_sets[0].clone()
    });
    // 8 + 8 > 12: Kueue adds the earlier pod sets' assumed usage before it compares.
    let (v, why, _) = verdict(&yaml, &a);
    assert_eq!(v, Verdict::Never, "{why}");
    assert!(
        why.contains("16 GPUs in flavor h100 > the most cq-a can ever reach there (12)"),
        "{why}"
    );
}

#[test]
fn a_reshaped_job_is_not_behind_its_own_workload() {
    let yaml = flavor("h100", "H100")
        + &cq("cq-a", "  queueingStrategy: StrictFIFO\n", &[("h100", "nominalQuota: 16")], &[])
        + &lq("team-a", "cq-a")
        // The live shape of the job the change reshapes waits (it asks 24).
        + &wl("team-a", "new", 3, 8, None, 0, "2026-12-01T00:00:00Z");
    let adm = admission_of(&yaml);
    let live = Live::new(&adm);
    // Reshaped to 8: it is not queued behind its own old Workload.
    let d = decide(&live.without("team-a/Job/new"), &ask("team-a", 1, 8));
    assert_eq!(d.verdict, Verdict::Admits, "{}", d.why);
    // Another job is.
    let mut other = ask("team-a", 1, 8);
    other.id = "team-a/Job/other".into();
    let d = decide(&live, &other);
    assert_eq!(d.verdict, Verdict::Waits, "{}", d.why);
}

#[test]
fn a_hierarchical_cohort_lends_its_own_quota() {
    let cohort = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: research}\nspec:\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors:\n    - name: h100\n      resources: [{name: nvidia.com/gpu, nominalQuota: 8}]\n---\n";
    let yaml = flavor("h100", "H100")
        + cohort
        + &cq(
            "cq-a",
            "  cohortName: research\n",
            &[("h100", "nominalQuota: 4")],
            &[("h100", 4)],
        )
        + &lq("team-a", "cq-a");
    let (v, why, _) = verdict(&yaml, &ask("team-a", 1, 8));
    assert_eq!(v, Verdict::Borrows, "{why}");
    // The cohort tree holds 12: 9 more waits for the 4 in use, 13 can never fit.
    let (v, _, _) = verdict(&yaml, &ask("team-a", 1, 9));
    assert_eq!(v, Verdict::Waits);
    let (v, _, _) = verdict(&yaml, &ask("team-a", 1, 13));
    assert_eq!(v, Verdict::Never);
}

#[test]
fn a_lending_limit_keeps_quota_home() {
    let yaml = flavor("h100", "H100")
        + &cq(
            "cq-a",
            "  cohortName: pool\n",
            &[("h100", "nominalQuota: 16, lendingLimit: 4")],
            &[],
        )
        + &cq(
            "cq-b",
            "  cohortName: pool\n",
            &[("h100", "nominalQuota: 0")],
            &[],
        )
        + &lq("team-b", "cq-b");
    // cq-b reaches only what cq-a lends.
    let (v, _, _) = verdict(&yaml, &ask("team-b", 1, 4));
    assert_eq!(v, Verdict::Borrows);
    let (v, why, _) = verdict(&yaml, &ask("team-b", 1, 5));
    assert_eq!(v, Verdict::Never, "{why}");
}

/// Kueue admits only the namespaces a ClusterQueue's selector selects: unset selects none,
/// terms select by the Namespace's labels (and its name, which the API server makes a label);
/// where the Namespace was not read, whether it is selected is unknown.
#[test]
fn a_namespace_selector_decides_who_may_submit() {
    let ns = |name: &str, labels: &str| {
        format!(
            "apiVersion: v1\nkind: Namespace\nmetadata: {{name: {name}, labels: {{{labels}}}}}\n---\n"
        )
    };
    let base = |selector: &str| {
        flavor("h100", "H100")
            + &cq("team", selector, &[("h100", "nominalQuota: 8")], &[])
            + &lq("ml", "team")
            + &lq("web", "team")
    };
    let unset = base("");
    let unset = unset.replace("  namespaceSelector: {}\n", "");
    let (v, why, _) = verdict(&unset, &ask("ml", 1, 4));
    assert_eq!(v, Verdict::Never, "{why}");
    assert!(why.contains("selects no namespace"), "{why}");

    let by_label = base("  namespaceSelector: {matchLabels: {gpu: \"yes\"}}\n");
    let labelled = by_label.clone() + &ns("ml", "gpu: \"yes\"") + &ns("web", "tier: web");
    assert_eq!(verdict(&labelled, &ask("ml", 1, 4)).0, Verdict::Admits);
    let (v, why, _) = verdict(&labelled, &ask("web", 1, 4));
    assert_eq!(v, Verdict::Never, "{why}");
    assert!(why.contains("namespace web is not selected"), "{why}");
    // No Namespace read: unknown, never a guess either way.
    let (v, why, _) = verdict(&by_label, &ask("ml", 1, 4));
    assert_eq!(v, Verdict::Unknown, "{why}");
    assert!(why.contains("no Namespace was read"), "{why}");

    // By name through the label every namespace carries, and NotIn.
    let by_name = base(
        "  namespaceSelector:\n    matchExpressions: [{key: kubernetes.io/metadata.name, operator: NotIn, values: [web]}]\n",
    ) + &ns("ml", "")
        + &ns("web", "");
    assert_eq!(verdict(&by_name, &ask("ml", 1, 4)).0, Verdict::Admits);
    assert_eq!(verdict(&by_name, &ask("web", 1, 4)).0, Verdict::Never);
    let a = admission_of(&by_name);
    assert_eq!(
        a.namespaces_of("team").into_iter().collect::<Vec<_>>(),
        ["ml"]
    );
}

#[test]
fn unknown_where_the_queue_is_not_known() {
    let (v, why, _) = verdict(&cohort("", 0, 0), &ask("team-c", 1, 1));
    assert_eq!(v, Verdict::Never, "{why}");
    assert!(why.contains("LocalQueue team-c/q does not exist"), "{why}");
    let broken =
        cohort("", 0, 0).replace("nominalQuota: 16, borrowingLimit: 0", "nominalQuota: lots");
    let (v, why, _) = verdict(&broken, &ask("team-b", 1, 1));
    assert_eq!(v, Verdict::Unknown, "{why}");
    assert!(why.contains("nominalQuota"), "{why}");
    // Without the live state: unknown, and the gate fails closed.
    let rows = admission(
        &Known::Unknown("no live state".into()),
        &[],
        &[Joining {
            ask: &ask("team-a", 1, 1),
            reshaped: false,
            cluster: None,
        }],
    );
    assert_eq!(rows[0].verdict, Verdict::Unknown);
    let g = gate(&rows, &[]);
    assert!(g.failed && g.unknown, "{g:?}");
}

#[test]
fn kai_limits_and_quota() {
    let yaml = "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: dept}\nspec:\n  resources:\n    gpu: {quota: 8, limit: 12}\nstatus:\n  allocated: {nvidia.com/gpu: \"8\"}\n---\napiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: team}\nspec:\n  parentQueue: dept\n  resources:\n    gpu: {quota: 4, limit: -1}\nstatus:\n  allocated: {nvidia.com/gpu: \"2\"}\n";
    let adm = admission_of(yaml);
    let kai = |gpus: u64| {
        let mut a = ask("ml", 1, gpus);
        a.local_queue = None;
        a.kai_queue = Some("team".into());
        decide(&Live::new(&adm), &a)
    };
    assert_eq!(kai(2).verdict, Verdict::Admits);
    // Over the team's quota, within the parent's limit: runs over quota (preemptible).
    assert_eq!(kai(4).verdict, Verdict::Borrows);
    // The parent's limit of 12 holds 8: 5 more waits, 13 never fits.
    let d = kai(5);
    assert_eq!(d.verdict, Verdict::Waits, "{}", d.why);
    assert!(d.why.contains("OverLimit"), "{}", d.why);
    assert_eq!(kai(13).verdict, Verdict::Never);
    // Only leaf queues schedule.
    let mut parent = ask("ml", 1, 1);
    parent.local_queue = None;
    parent.kai_queue = Some("dept".into());
    let d = decide(&Live::new(&adm), &parent);
    assert_eq!(d.verdict, Verdict::Never, "{}", d.why);
}

#[test]
fn a_quota_change_moves_borrowing_and_admits_what_waits() {
    let base = flavor("h100", "H100")
        + &cq(
            "cq-a",
            "  cohortName: pool\n",
            &[("h100", "nominalQuota: 16")],
            &[],
        )
        + &cq(
            "cq-b",
            "  cohortName: pool\n",
            &[("h100", "nominalQuota: 16")],
            &[],
        );
    let head_more = base.replacen("nominalQuota: 16", "nominalQuota: 24", 1);
    let head_less = base.replacen("nominalQuota: 16", "nominalQuota: 8", 1);
    let live_yaml = flavor("h100", "H100")
        + &cq(
            "cq-a",
            "  cohortName: pool\n",
            &[("h100", "nominalQuota: 16")],
            &[("h100", 16)],
        )
        + &cq(
            "cq-b",
            "  cohortName: pool\n",
            &[("h100", "nominalQuota: 16")],
            &[("h100", 16)],
        )
        + &lq("team-a", "cq-a")
        + &wl("team-a", "waiting", 1, 8, None, 0, "2026-12-01T00:00:00Z");
    let live = admission_of(&live_yaml);
    let objs = |y: &str| read_str(y, "git.yaml").unwrap();
    let rows = quota(&objs(&base), &objs(&head_more), &Known::Value(&live));
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].queue, "cq-a");
    assert_eq!(rows[0].becomes_borrowed, Some(0));
    assert_eq!(rows[0].would_admit, Some(8));
    let rows = quota(&objs(&base), &objs(&head_less), &Known::Value(&live));
    assert_eq!(rows[0].becomes_borrowed, Some(8));
    assert!(gate(&[], &rows).failed);
    // Offline: the spec moves, what it moves is unknown.
    let rows = quota(
        &objs(&base),
        &objs(&head_less),
        &Known::Unknown("offline".into()),
    );
    assert_eq!(rows[0].becomes_borrowed, None);
    assert!(rows[0].unknown.contains_key("would_admit"));
}
