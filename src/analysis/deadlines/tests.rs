use super::*;
use crate::config::Config;
use crate::k8s::read::read_str;

fn t(s: &str) -> Timestamp {
    Timestamp::parse(s).unwrap()
}

fn job(name: &str, annotations: &str, status: &str, extra_meta: &str) -> String {
    format!(
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {name}\n  namespace: ml\n  annotations: {{{annotations}}}\n{extra_meta}spec:\n  template:\n    spec:\n      containers: [{{name: c, resources: {{limits: {{nvidia.com/gpu: 1}}}}}}]\nstatus: {status}\n---\n"
    )
}

const DONE: &str = "{conditions: [{type: Complete, status: 'True'}], completionTime: ";

/// Jobs with `completionTime` before and after their deadline, one failed, one still running past
/// its deadline, one running before it; a CronJob with a deadline two hours after each scheduled
/// start and two runs; a CronJob with a deadline and no run read.
fn fleet() -> String {
    let mut s = String::new();
    s += &job(
        "early",
        "gpuledger.io/deadline: '2026-12-01T12:00:00Z'",
        &format!("{DONE}'2026-12-01T11:00:00Z'}}"),
        "",
    );
    s += &job(
        "late",
        "gpuledger.io/deadline: '2026-12-01T12:00:00Z'",
        &format!("{DONE}'2026-12-01T12:30:00Z'}}"),
        "",
    );
    s += &job(
        "broken",
        "gpuledger.io/deadline: '2026-12-01T12:00:00Z'",
        "{conditions: [{type: Failed, status: 'True'}]}",
        "",
    );
    s += &job(
        "overdue",
        "gpuledger.io/deadline: '2026-12-01T13:00:00Z'",
        "{}",
        "",
    );
    s += &job(
        "pending",
        "gpuledger.io/deadline: '2026-12-03T13:00:00Z'",
        "{}",
        "",
    );
    s += &job(
        "nodeadline",
        "",
        &format!("{DONE}'2026-12-01T11:00:00Z'}}"),
        "",
    );
    for (name, cron) in [
        ("nightly", "gpuledger.io/deadline: 2h"),
        ("weekly", "gpuledger.io/deadline: 1h"),
    ] {
        s += &format!(
            "apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: {name}\n  namespace: ml\n  annotations: {{{cron}}}\nspec:\n  schedule: '0 0 * * *'\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          containers: [{{name: c, resources: {{limits: {{nvidia.com/gpu: 2}}}}}}]\n---\n"
        );
    }
    let owner =
        "  ownerReferences: [{apiVersion: batch/v1, kind: CronJob, name: nightly, uid: u}]\n";
    s += &job(
        "nightly-1",
        "batch.kubernetes.io/cronjob-scheduled-timestamp: '2026-12-01T00:00:00Z'",
        &format!("{DONE}'2026-12-01T01:59:00Z'}}"),
        owner,
    );
    // No scheduled-time annotation (before Kubernetes 1.32): the creation time is the start.
    s += &job(
        "nightly-2",
        "",
        &format!("{DONE}'2026-12-02T02:10:00Z'}}"),
        &format!("  creationTimestamp: '2026-12-02T00:00:00Z'\n{owner}"),
    );
    s
}

#[test]
fn runs_against_their_deadlines_per_workload_and_tenant() {
    let objects = read_str(&fleet(), "t").unwrap();
    let cfg = Config::default();
    let tenancy = Resolver::new(&cfg.tenancy, &objects);
    let runs = live_runs(&objects, &cfg.intent, &tenancy);
    let declared = vec![
        ("ml/CronJob/nightly".to_string(), "ml".to_string()),
        ("ml/CronJob/weekly".to_string(), "ml".to_string()),
    ];
    let d = attainment(
        &runs,
        &declared,
        &Scope::default(),
        t("2026-12-02T12:00:00Z"),
    );
    let by = |n: &str| d.workloads.iter().find(|w| w.name == n).unwrap();

    let early = by("ml/Job/early");
    assert_eq!((early.runs, early.met, early.missed), (1, 1, 0));
    assert_eq!(early.attainment, Some(1.0));
    let late = by("ml/Job/late");
    assert_eq!((late.runs, late.met), (1, 0));
    assert_eq!(
        late.attainment,
        Some(0.0),
        "a late run is a known miss, 0% known"
    );
    assert_eq!(late.last[0].outcome, RunOutcome::Late);
    assert_eq!(late.last[0].late_s, Some(1800));
    assert_eq!(by("ml/Job/broken").last[0].outcome, RunOutcome::Failed);
    let overdue = by("ml/Job/overdue");
    assert_eq!(overdue.last[0].outcome, RunOutcome::RunningLate);
    assert_eq!(overdue.last[0].late_s, Some(23 * 3600));
    let pending = by("ml/Job/pending");
    assert_eq!(
        pending.runs, 0,
        "a run before its deadline is not counted yet"
    );
    assert_eq!(pending.attainment, None);
    assert!(
        d.workloads.iter().all(|w| w.name != "ml/Job/nodeadline"),
        "a Job without a deadline is not batch work with one"
    );

    let nightly = by("ml/CronJob/nightly");
    assert_eq!((nightly.runs, nightly.met, nightly.missed), (2, 1, 1));
    assert_eq!(nightly.attainment, Some(0.5));
    assert_eq!(nightly.last[0].job, "ml/nightly-2", "newest deadline first");
    assert_eq!(nightly.last[0].deadline, "2026-12-02T02:00:00Z");
    assert_eq!(nightly.last[1].outcome, RunOutcome::Met);
    let [lo, hi] = nightly.interval.unwrap();
    assert!(lo < 0.5 && hi > 0.5);

    // Declared, no run read: unknown with why, never 0%.
    let weekly = by("ml/CronJob/weekly");
    assert_eq!(weekly.runs, 0);
    assert_eq!(weekly.attainment, None);
    assert!(weekly.unknown["attainment"].contains("no finished run"));
    let last: Vec<&str> = d.workloads[d.workloads.len() - 2..]
        .iter()
        .map(|w| w.name.as_str())
        .collect();
    assert_eq!(
        last,
        ["ml/CronJob/weekly", "ml/Job/pending"],
        "unknown last"
    );

    // The tenant: 6 runs, 2 met.
    let ml = d.tenants.iter().find(|t| t.name == "ml").unwrap();
    assert_eq!((ml.runs, ml.met, ml.missed), (6, 2, 4));
}

#[test]
fn a_window_counts_the_runs_whose_deadline_falls_in_it() {
    let objects = read_str(&fleet(), "t").unwrap();
    let cfg = Config::default();
    let tenancy = Resolver::new(&cfg.tenancy, &objects);
    let runs = live_runs(&objects, &cfg.intent, &tenancy);
    let scope = Scope {
        window: Some((t("2026-12-02T00:00:00Z"), t("2026-12-02T12:00:00Z"))),
        ..Scope::default()
    };
    let d = attainment(&runs, &[], &scope, t("2026-12-02T12:00:00Z"));
    assert_eq!(d.workloads.len(), 1);
    assert_eq!(d.workloads[0].name, "ml/CronJob/nightly");
    assert_eq!(d.workloads[0].runs, 1);
    assert_eq!(d.window_start.as_deref(), Some("2026-12-02T00:00:00Z"));
}

#[test]
fn kube_state_metrics_runs_take_their_cronjobs_deadline_and_yield_to_the_live_state() {
    let objects = read_str(&fleet(), "t").unwrap();
    let cfg = Config::default();
    let tenancy = Resolver::new(&cfg.tenancy, &objects);
    let day = |d: i64, h: i64| t("2026-11-01T00:00:00Z").unix() + d * 86400 + h * 3600;
    let jobs = vec![
        // Deleted by the cluster, remembered by kube-state-metrics.
        KsmJob {
            namespace: "ml".into(),
            job: "nightly-0".into(),
            created: Some(day(0, 0)),
            completed: Some(day(0, 1)),
            failed: false,
            cron_owner: Some("nightly".into()),
        },
        KsmJob {
            namespace: "ml".into(),
            job: "nightly-00".into(),
            created: Some(day(1, 0)),
            completed: None,
            failed: true,
            cron_owner: Some("nightly".into()),
        },
        // Also live: counted once, as the live state has it.
        KsmJob {
            namespace: "ml".into(),
            job: "nightly-2".into(),
            created: Some(day(31, 0)),
            completed: Some(day(31, 1)),
            failed: false,
            cron_owner: Some("nightly".into()),
        },
        // A Job with no deadline anywhere.
        KsmJob {
            namespace: "ml".into(),
            job: "adhoc".into(),
            created: Some(day(0, 0)),
            completed: Some(day(0, 1)),
            ..KsmJob::default()
        },
    ];
    let mut runs = live_runs(&objects, &cfg.intent, &tenancy);
    runs.extend(ksm_runs(&jobs, &objects, &cfg.intent, &tenancy));
    let d = attainment(&runs, &[], &Scope::default(), t("2026-12-02T12:00:00Z"));
    let nightly = d
        .workloads
        .iter()
        .find(|w| w.name == "ml/CronJob/nightly")
        .unwrap();
    assert_eq!((nightly.runs, nightly.met, nightly.missed), (4, 2, 2));
    let late = nightly
        .last
        .iter()
        .find(|r| r.job == "ml/nightly-2")
        .unwrap();
    assert_eq!(late.source, "live");
    assert_eq!(late.outcome, RunOutcome::Late);
    assert!(d.workloads.iter().all(|w| !w.name.contains("adhoc")));
}
