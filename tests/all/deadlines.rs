//! Deadline attainment end to end: finished Jobs in a snapshot against their deadlines (a
//! CronJob's after each scheduled start, a Job's own instant), in `cost` and `plan --pending`; and
//! the runs kube-state-metrics remembers, from the real Prometheus.

use gpuledger::util::date::Timestamp;
use serde_json::Value;

use super::prometheus_harness::{Prometheus, Series};
use super::support::{fixture, gpuledger, root};

const CLUSTER: &str = "tests/fixtures/deadlines/cluster.yaml";

fn run(args: &[&str]) -> Value {
    let out = gpuledger(&root())
        .args(args)
        .arg("--snapshot")
        .arg(fixture(CLUSTER))
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn row<'a>(rows: &'a Value, name: &str) -> &'a Value {
    rows.as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == name)
        .unwrap_or_else(|| panic!("no row {name} in {rows:#}"))
}

#[test]
fn cost_counts_finished_jobs_against_their_deadlines() {
    let r = run(&["cost", "--now", "2026-12-02T13:00:00Z"]);
    let d = &r["deadlines"];
    assert_eq!(d["sources"][0], "the live state's Jobs");
    let nightly = row(&d["workloads"], "ml/CronJob/nightly");
    assert_eq!(nightly["runs"], 2);
    assert_eq!(nightly["met"], 1);
    assert_eq!(nightly["attainment"], 0.5);
    // Newest deadline first: the run scheduled 2026-12-02 00:00, due 02:00, finished 02:45.
    assert_eq!(nightly["last"][0]["job"], "ml/nightly-29001440");
    assert_eq!(nightly["last"][0]["deadline"], "2026-12-02T02:00:00Z");
    assert_eq!(nightly["last"][0]["outcome"], "late");
    assert_eq!(nightly["last"][0]["late_s"], 45 * 60);
    assert_eq!(nightly["last"][1]["outcome"], "met");
    assert_eq!(
        row(&d["workloads"], "ml/Job/report-early")["attainment"],
        1.0
    );
    let late = row(&d["workloads"], "ml/Job/report-late");
    assert_eq!(late["attainment"], 0.0);
    assert_eq!(late["last"][0]["finished"], "2026-12-02T12:30:00Z");
    assert_eq!(
        row(&d["workloads"], "ml/Job/report-failed")["last"][0]["outcome"],
        "failed"
    );
    // Declared, no finished run: null with why, never 0%.
    let weekly = row(&d["workloads"], "ml/CronJob/weekly");
    assert_eq!(weekly["runs"], 0);
    assert!(weekly["attainment"].is_null());
    assert!(
        weekly["unknown"]["attainment"]
            .as_str()
            .unwrap()
            .contains("no finished run")
    );
    let ml = row(&d["tenants"], "ml");
    assert_eq!(
        (ml["runs"].as_u64(), ml["met"].as_u64()),
        (Some(5), Some(2))
    );
    let [lo, hi] = [&ml["interval"][0], &ml["interval"][1]].map(|v| v.as_f64().unwrap());
    assert!(lo < 0.4 && 0.4 < hi, "{lo} {hi}");
}

#[test]
fn plan_pending_says_how_the_last_runs_did() {
    let r = run(&["plan", "--pending", "--now", "2026-12-02T13:00:00Z"]);
    assert_eq!(r["plan"]["jobs"][0]["name"], "finetune");
    let nightly = row(&r["deadlines"]["workloads"], "ml/CronJob/nightly");
    assert_eq!(nightly["attainment"], 0.5);
    let out = gpuledger(&root())
        .args(["plan", "--pending", "--now", "2026-12-02T13:00:00Z"])
        .arg("--snapshot")
        .arg(fixture(CLUSTER))
        .args(["--format", "markdown"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("### How the last runs did"), "{text}");
    assert!(
        text.contains("2 of 5 runs met their deadline (40%)"),
        "{text}"
    );
}

#[test]
fn kube_state_metrics_remembers_the_runs_the_cluster_deleted() {
    let now = Timestamp::now().unix();
    let at = |minutes_ago: i64| (now - minutes_ago * 60) as f64;
    let (a, b) = (at(200), at(150));
    let (a_done, c) = (at(100), at(190));
    let jobs = [
        ("nightly-a", a),
        ("nightly-b", b),
        ("nightly-c", c),
        ("nightly-29001440", at(1000)),
    ];
    let mut series: Vec<Series<'_>> = Vec::new();
    for (job, created) in jobs {
        let labels = [("namespace", "ml"), ("job_name", job)];
        series.push(Series::new("kube_job_created", &labels, created));
        series.push(Series::new(
            "kube_job_owner",
            &[
                ("namespace", "ml"),
                ("job_name", job),
                ("owner_kind", "CronJob"),
                ("owner_name", "nightly"),
                ("owner_is_controller", "true"),
            ],
            1.0,
        ));
    }
    // a: created 200 min ago, done 100 min ago: due 2h after its start, met.
    series.push(Series::new(
        "kube_job_status_completion_time",
        &[("namespace", "ml"), ("job_name", "nightly-a")],
        a_done,
    ));
    // b: failed. c: still running past its deadline (created 190 min ago, due 70 min ago).
    series.push(Series::new(
        "kube_job_failed",
        &[
            ("namespace", "ml"),
            ("job_name", "nightly-b"),
            ("condition", "true"),
        ],
        1.0,
    ));
    series.push(Series::new(
        "kube_job_failed",
        &[
            ("namespace", "ml"),
            ("job_name", "nightly-a"),
            ("condition", "true"),
        ],
        0.0,
    ));
    // The live Job, also remembered: counted once, as the live state has it.
    series.push(Series::new(
        "kube_job_status_completion_time",
        &[("namespace", "ml"), ("job_name", "nightly-29001440")],
        at(999),
    ));
    let prom = Prometheus::start(&series);
    let r = run(&["cost", "--prometheus", &prom.url(), "--window", "1h"]);
    let d = &r["deadlines"];
    assert!(
        d["sources"][1]
            .as_str()
            .unwrap()
            .starts_with("kube-state-metrics' Jobs over the 1h"),
        "{d:#}"
    );
    let nightly = row(&d["workloads"], "ml/CronJob/nightly");
    let outcome = |job: &str| {
        nightly["last"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["job"] == format!("ml/{job}"))
            .unwrap_or_else(|| panic!("no run {job} in {nightly:#}"))
            .clone()
    };
    assert_eq!(outcome("nightly-a")["outcome"], "met");
    assert_eq!(outcome("nightly-a")["source"], "kube-state-metrics");
    assert_eq!(outcome("nightly-b")["outcome"], "failed");
    assert_eq!(outcome("nightly-c")["outcome"], "running-late");
    let live = outcome("nightly-29001440");
    assert_eq!(live["source"], "live");
    assert_eq!(live["outcome"], "late");
    // 2 live runs + 3 remembered ones; a and the live 2026-12-01 run met.
    assert_eq!(nightly["runs"], 5);
    assert_eq!(nightly["met"], 2);
}

#[test]
fn a_prometheus_that_fails_leaves_the_live_runs_counted_and_says_why() {
    let r = run(&[
        "cost",
        "--prometheus",
        "http://127.0.0.1:9",
        "--now",
        "2026-12-02T13:00:00Z",
    ]);
    let d = &r["deadlines"];
    assert!(
        d["unknown"]["kube_state_metrics"]
            .as_str()
            .unwrap()
            .contains("127.0.0.1:9"),
        "{d:#}"
    );
    assert_eq!(row(&d["workloads"], "ml/CronJob/nightly")["runs"], 2);
}

#[test]
fn the_drift_report_says_how_batch_work_met_its_deadlines() {
    // A repository that declares the nightly CronJob as the cluster runs it.
    let repo = tempfile::tempdir().unwrap();
    std::fs::write(
        repo.path().join("nightly.yaml"),
        "apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: nightly\n  namespace: ml\n  annotations: {gpuledger.io/deadline: 2h, gpuledger.io/runtime: 1h}\nspec:\n  schedule: \"0 0 * * *\"\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          containers: [{name: train, resources: {limits: {nvidia.com/gpu: \"2\"}}}]\n",
    )
    .unwrap();
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .args(["-c", "user.email=t@example.com", "-c", "user.name=t"])
            .args(args)
            .current_dir(repo.path())
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&["commit", "-qm", "nightly"]);
    let out = gpuledger(&root())
        .arg("drift")
        .arg("--repo")
        .arg(repo.path())
        .arg("--snapshot")
        .arg(fixture(CLUSTER))
        .args([
            "--now",
            "2026-12-02T13:00:00Z",
            "--no-fail",
            "--format",
            "markdown",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("### Deadline attainment"), "{text}");
    assert!(
        text.contains("| `ml/CronJob/nightly` | ml | 2 | 1 | 50% (9%–91%) | late 45m, met |"),
        "{text}"
    );
    assert!(
        text.contains("| `ml/CronJob/weekly` | ml | 0 | 0 | unknown |"),
        "{text}"
    );
}
