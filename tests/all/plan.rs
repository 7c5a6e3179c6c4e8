//! The stagger planner: the seed example for both objectives, infeasible pools, per-node fit,
//! interruptible work, exact plans against brute force on tiny random instances, and the
//! `plan` command (its outputs and its errors).

use gpuledger::plan::{Bound, Job, Objective, Pool, Settings, plan};
use gpuledger::util::date::Timestamp;

use crate::support::{fixture, gpuledger, root};

const H: i64 = 3600;

fn t(s: &str) -> i64 {
    Timestamp::parse(s)
        .unwrap()
        .seconds_since(Timestamp::from_unix(0))
}

fn job(name: &str, gpus: u64, runtime_s: u64, ready: i64, deadline: Option<i64>) -> Job {
    Job {
        namespace: "ml".into(),
        kind: "Job".into(),
        name: name.into(),
        gpus_per_pod: gpus,
        pods: 1,
        runtime_s,
        earliest_start: ready,
        deadline,
        interruptible: false,
        source: None,
    }
}

fn seed() -> Vec<Job> {
    let (ready, due) = (t("2026-12-02T12:00:00Z"), t("2026-12-02T17:00:00Z"));
    ["a", "b", "c", "d"]
        .iter()
        .map(|n| job(n, 2, 3600, ready, Some(due)))
        .collect()
}

fn pool(gpus: u64) -> Pool {
    Pool {
        gpus,
        node_sizes: Vec::new(),
    }
}

fn starts(p: &gpuledger::plan::Plan) -> Vec<String> {
    p.jobs.iter().map(|j| j.start.to_string()).collect()
}

#[test]
fn the_seed_example_finishes_early_or_keeps_the_peak_low() {
    let now = t("2026-12-02T12:00:00Z");
    let p = plan(
        seed(),
        &pool(4),
        &Settings::new(Objective::Earliest, 900, now),
    );
    assert_eq!(
        starts(&p),
        [
            "2026-12-02T12:00:00Z",
            "2026-12-02T12:00:00Z",
            "2026-12-02T13:00:00Z",
            "2026-12-02T13:00:00Z"
        ]
    );
    assert!(p.feasible && p.exact);
    assert_eq!((p.peak, p.peak_all_at_once, p.gpu_hours), (4, 8, 8.0));
    assert_eq!(p.finish.unwrap().to_string(), "2026-12-02T14:00:00Z");
    assert_eq!(p.min_pool, Some(2));
    assert_eq!(
        p.lower_bound,
        Some(Bound::Finish(
            Timestamp::parse("2026-12-02T14:00:00Z").unwrap()
        ))
    );
    assert_eq!(p.gap, 0.0);

    let p = plan(
        seed(),
        &pool(4),
        &Settings::new(Objective::MinPeak, 900, now),
    );
    assert_eq!(
        starts(&p),
        [
            "2026-12-02T12:00:00Z",
            "2026-12-02T13:00:00Z",
            "2026-12-02T14:00:00Z",
            "2026-12-02T15:00:00Z"
        ]
    );
    assert_eq!((p.peak, p.peak_all_at_once, p.gpu_hours), (2, 8, 8.0));
    assert_eq!(p.finish.unwrap().to_string(), "2026-12-02T16:00:00Z");
    assert_eq!(p.lower_bound, Some(Bound::Gpus(2)));
    assert!(p.feasible && p.exact);
}

#[test]
fn a_pool_too_small_says_who_misses_by_how_much_and_what_pool_would_do() {
    let now = t("2026-12-02T12:00:00Z");
    let due = t("2026-12-02T14:00:00Z");
    let jobs: Vec<Job> = ["a", "b", "c", "d", "e", "f"]
        .iter()
        .map(|n| job(n, 2, 3600, now, Some(due)))
        .collect();
    let p = plan(
        jobs,
        &pool(4),
        &Settings::new(Objective::Earliest, 900, now),
    );
    assert!(!p.feasible);
    assert_eq!(p.missed.len(), 2);
    assert!(p.missed.iter().all(|m| m.late_s == Some(3600)));
    assert_eq!(p.min_pool, Some(6));
    let line = gpuledger::render::plan::verdict(&p);
    assert_eq!(
        line,
        "Staggered, 2 jobs still miss their deadline on 4 GPUs; 6 GPUs would meet all: buying is needed."
    );
    // A job that cannot make it even alone: no pool helps, and it says why.
    let p = plan(
        vec![job("slow", 1, 3 * 3600, now, Some(now + H))],
        &pool(4),
        &Settings::new(Objective::Earliest, 900, now),
    );
    assert_eq!((p.feasible, p.min_pool), (false, None));
    assert_eq!(p.missed[0].late_s, Some(2 * H));
}

#[test]
fn a_pod_must_fit_on_one_node() {
    let now = 0;
    let nodes = Pool {
        gpus: 8,
        node_sizes: vec![4, 4],
    };
    // Two pods of 3 fit (one per node); a third waits though 2 GPUs are free.
    let mut jobs = vec![job("a", 3, 3600, now, None), job("b", 3, 3600, now, None)];
    jobs.push(job("c", 3, 3600, now, None));
    let p = plan(jobs, &nodes, &Settings::new(Objective::Earliest, 3600, now));
    assert_eq!(p.finish.unwrap().to_string(), "1970-01-01T02:00:00Z");
    assert_eq!(p.peak, 6);
    // A pod larger than every node cannot run: missed, no late figure, and why.
    let p = plan(
        vec![job("big", 6, 3600, now, Some(now + 5 * H))],
        &nodes,
        &Settings::new(Objective::Earliest, 3600, now),
    );
    assert!(!p.feasible);
    assert_eq!(p.missed[0].late_s, None);
    assert!(
        p.missed[0]
            .reason
            .as_deref()
            .unwrap()
            .contains("fits on no node")
    );
    assert_eq!(p.min_pool, None);
}

#[test]
fn interruptible_work_fills_the_gaps_and_other_work_runs_in_one_piece() {
    let now = 0;
    // A 4-GPU pool; `long` holds 2 GPUs 12:00-14:00; `wide` needs 4 GPUs for an hour from 1h.
    let mut wide = job("wide", 4, 3600, H, Some(2 * H));
    wide.interruptible = false;
    let mut fill = job("fill", 4, 2 * 3600, 0, Some(3 * H));
    fill.interruptible = true;
    let p = plan(
        vec![wide, fill],
        &pool(4),
        &Settings::new(Objective::Earliest, 3600, now),
    );
    assert!(p.feasible, "{p:?}");
    let fill = p.jobs.iter().find(|j| j.name == "fill").unwrap();
    assert_eq!(fill.runs, vec![(0, 1), (2, 1)]);
    // Not interruptible: it cannot be split around `wide`, so it misses.
    let mut fill = job("fill", 4, 2 * 3600, 0, Some(3 * H));
    fill.interruptible = false;
    let p = plan(
        vec![job("wide", 4, 3600, H, Some(2 * H)), fill],
        &pool(4),
        &Settings::new(Objective::Earliest, 3600, now),
    );
    assert!(!p.feasible);
}

/// xorshift64*: seeded, so a failure reproduces.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Every way to run each job (whole hours, one node), and the best finish and peak among those
/// that meet every deadline within `cap` GPUs.
fn brute(jobs: &[Job], cap: u64, horizon: usize) -> (Option<usize>, Option<u64>) {
    let options: Vec<Vec<Vec<usize>>> = jobs
        .iter()
        .map(|j| {
            let r = (j.earliest_start / H) as usize;
            let p = (j.runtime_s / 3600) as usize;
            let last = j
                .deadline
                .map_or(horizon - 1, |d| (d / H) as usize - 1)
                .min(horizon - 1);
            let mut v = Vec::new();
            if j.interruptible {
                for mask in 0u32..(1 << (last + 1)) {
                    let slots: Vec<usize> = (0..=last).filter(|s| mask & (1 << s) != 0).collect();
                    if slots.len() == p && slots.iter().all(|s| *s >= r) {
                        v.push(slots);
                    }
                }
            } else {
                for s in r..=last {
                    if s + p <= last + 1 {
                        v.push((s..s + p).collect());
                    }
                }
            }
            v
        })
        .collect();
    let mut best = (None::<usize>, None::<u64>);
    let mut pick = vec![0usize; jobs.len()];
    if options.iter().any(|o| o.is_empty()) {
        return best;
    }
    loop {
        let mut used = vec![0u64; horizon + 1];
        for (i, o) in pick.iter().enumerate() {
            for s in &options[i][*o] {
                used[*s] += jobs[i].gpus();
            }
        }
        let peak = *used.iter().max().unwrap();
        if peak <= cap {
            let finish = pick
                .iter()
                .enumerate()
                .map(|(i, o)| options[i][*o].last().unwrap() + 1)
                .max()
                .unwrap();
            best.0 = Some(best.0.map_or(finish, |b| b.min(finish)));
            best.1 = Some(best.1.map_or(peak, |b| b.min(peak)));
        }
        let mut k = 0;
        loop {
            if k == pick.len() {
                return best;
            }
            pick[k] += 1;
            if pick[k] < options[k].len() {
                break;
            }
            pick[k] = 0;
            k += 1;
        }
    }
}

#[test]
fn exact_plans_match_brute_force_and_bounds_never_exceed_the_optimum() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for case in 0..300 {
        let cap = 1 + rng.below(5);
        let n = 1 + rng.below(4) as usize;
        let jobs: Vec<Job> = (0..n)
            .map(|i| {
                let r = rng.below(3) as i64;
                let p = 1 + rng.below(3);
                let mut j = job(
                    &format!("j{i}"),
                    1 + rng.below(cap),
                    p * 3600,
                    r * H,
                    (rng.below(4) > 0).then(|| (r + p as i64 + rng.below(3) as i64) * H),
                );
                j.interruptible = rng.below(3) == 0;
                j
            })
            .collect();
        let horizon = 12;
        let (finish, _) = brute(&jobs, cap, horizon);
        let (_, peak) = brute(&jobs, cap, horizon);
        let (_, min_pool) = brute(&jobs, u64::MAX, horizon);
        let e = plan(
            jobs.clone(),
            &pool(cap),
            &Settings::new(Objective::Earliest, 3600, 0),
        );
        let m = plan(
            jobs.clone(),
            &pool(cap),
            &Settings::new(Objective::MinPeak, 3600, 0),
        );
        let ctx = format!("case {case}: cap {cap} {jobs:?}");
        assert_eq!(e.feasible, finish.is_some(), "{ctx}\n{e:?}");
        assert_eq!(m.feasible, peak.is_some(), "{ctx}\n{m:?}");
        assert_eq!(e.min_pool, min_pool, "{ctx}");
        if let Some(f) = finish {
            assert!(e.exact, "{ctx}");
            let got = e.finish.unwrap().seconds_since(Timestamp::from_unix(0));
            assert_eq!(got, f as i64 * H, "{ctx}\n{e:?}");
            let Some(Bound::Finish(lb)) = e.lower_bound else {
                panic!("{ctx}")
            };
            assert!(
                lb.seconds_since(Timestamp::from_unix(0)) <= f as i64 * H,
                "{ctx}"
            );
        }
        if let Some(pk) = peak {
            assert!(m.exact, "{ctx}");
            assert_eq!(m.peak, pk, "{ctx}\n{m:?}");
            assert_eq!(m.lower_bound, Some(Bound::Gpus(pk)), "{ctx}");
        }
    }
}

#[test]
fn a_thousand_jobs_get_a_plan_with_a_proven_bound() {
    let mut rng = Rng(42);
    let jobs: Vec<Job> = (0..1000)
        .map(|i| {
            let r = rng.below(96) as i64 * 900;
            let p = 1 + rng.below(16);
            job(
                &format!("j{i}"),
                1 << rng.below(4),
                p * 900,
                r,
                Some(r + (p + rng.below(96)) as i64 * 900),
            )
        })
        .collect();
    let nodes = Pool {
        gpus: 256,
        node_sizes: vec![8; 32],
    };
    let p = plan(jobs, &nodes, &Settings::new(Objective::MinPeak, 900, 0));
    let Some(Bound::Gpus(lb)) = p.lower_bound else {
        panic!()
    };
    assert!(
        lb <= p.peak && p.gap >= 0.0 && p.gap < 1.0,
        "{lb} {} {}",
        p.peak,
        p.gap
    );
    assert_eq!(
        p.jobs.len() + p.missed.iter().filter(|m| m.late_s.is_none()).count(),
        1000
    );
}

#[test]
fn the_command_prints_the_plan_in_every_format() {
    let out = gpuledger(&root())
        .args(["plan", "--jobs"])
        .arg(fixture("fixtures/plan/seed.yaml"))
        .args([
            "--pool",
            "4",
            "--now",
            "2026-12-02T12:00:00Z",
            "--format",
            "json",
        ])
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let p = &v["plan"];
    assert_eq!(v["schema"], "gpuledger.report/v1");
    assert_eq!(p["objective"], "earliest");
    assert_eq!(
        (p["peak"].as_u64(), p["peak_all_at_once"].as_u64()),
        (Some(4), Some(8))
    );
    assert_eq!(p["finish"], "2026-12-02T14:00:00Z");
    assert_eq!(p["jobs"][2]["start"], "2026-12-02T13:00:00Z");
    assert_eq!(p["jobs"][2]["slack_s"], 3 * 3600);
    // Exactly the fields the product spec lists (serde_json sorts them).
    let keys: Vec<&str> = p.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "feasible",
            "finish",
            "gap",
            "gpu_hours",
            "jobs",
            "lower_bound",
            "min_pool",
            "missed",
            "objective",
            "peak",
            "peak_all_at_once",
            "pool"
        ]
    );
    let md = gpuledger(&root())
        .args(["plan", "--jobs"])
        .arg(fixture("fixtures/plan/seed.yaml"))
        .args([
            "--pool",
            "4",
            "--now",
            "2026-12-02T12:00:00Z",
            "--objective",
            "min-peak",
        ])
        .args(["--format", "markdown"])
        .assert()
        .success();
    let md = String::from_utf8(md.get_output().stdout.clone()).unwrap();
    insta::assert_snapshot!("plan_seed_min_peak_markdown", md);
    let table = gpuledger(&root())
        .args(["plan", "--jobs"])
        .arg(fixture("fixtures/plan/seed.yaml"))
        .args(["--pool", "4", "--now", "2026-12-02T12:00:00Z"])
        .env("COLUMNS", "80")
        .assert()
        .success();
    let table = String::from_utf8(table.get_output().stdout.clone()).unwrap();
    insta::assert_snapshot!("plan_seed_table", table);
}

#[test]
fn a_bad_jobs_file_names_its_line_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    for (text, want) in [
        (
            "- name: a\n  gpus_per_pod: 1\n  runtime: forever\n",
            "jobs.yaml:3: runtime: \"forever\" is not a duration",
        ),
        (
            "- name: a\n  gpus_per_pod: 1\n  runtime: 1h\n  earliest_start: 2026-12-02T12:00:00Z\n  deadline: 2026-12-02T11:00:00Z\n",
            "jobs.yaml:5: job a: the deadline is not after the earliest start",
        ),
        (
            "- name: a\n  gpus_per_pod: 1\n  runtime: 1h\n  deadline: tomorrow\n",
            "jobs.yaml:4: deadline: \"tomorrow\" is not a time",
        ),
    ] {
        std::fs::write(dir.path().join("jobs.yaml"), text).unwrap();
        let out = gpuledger(dir.path())
            .args(["plan", "--jobs", "jobs.yaml", "--pool", "4"])
            .assert()
            .code(2);
        let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
        assert!(err.contains(want), "{err}");
        assert!(out.get_output().stdout.is_empty());
    }
}

/// The seed example declared as intent on four Jobs in a GitOps repository: `plan --repo` finds
/// them as `render` does and plans them as the jobs file does; a batch Job without a runtime is
/// said to be left out.
#[test]
fn plan_from_intent_in_git() {
    let r = crate::support::Repo::new();
    for name in ["eval-a", "eval-b", "eval-c", "eval-d"] {
        r.write(
            &format!("batch/{name}.yaml"),
            &format!(
                "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {name}\n  namespace: ml\n  annotations:\n    gpuledger.io/runtime: 1h\n    gpuledger.io/earliest-start: \"2026-12-02T12:00:00Z\"\n    gpuledger.io/deadline: \"2026-12-02T17:00:00Z\"\nspec:\n  template:\n    spec:\n      containers: [{{name: main, resources: {{limits: {{nvidia.com/gpu: \"2\"}}}}}}]\n"
            ),
        );
    }
    r.write(
        "batch/vague.yaml",
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: vague\n  namespace: ml\n  annotations: {gpuledger.io/deadline: \"2026-12-02T17:00:00Z\"}\nspec:\n  template:\n    spec:\n      containers: [{name: main, resources: {limits: {nvidia.com/gpu: \"1\"}}}]\n",
    )
    .commit("seed as intent");
    let out = gpuledger(r.path())
        .args([
            "plan",
            "--repo",
            ".",
            "--pool",
            "4",
            "--now",
            "2026-12-02T12:00:00Z",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let p = &j["plan"];
    assert_eq!(p["feasible"], true);
    assert_eq!(p["peak"], 4);
    assert_eq!(p["peak_all_at_once"], 8);
    assert_eq!(p["finish"], "2026-12-02T14:00:00Z");
    let mut starts: Vec<&str> = p["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["start"].as_str().unwrap())
        .collect();
    starts.sort();
    assert_eq!(
        starts,
        [
            "2026-12-02T12:00:00Z",
            "2026-12-02T12:00:00Z",
            "2026-12-02T13:00:00Z",
            "2026-12-02T13:00:00Z"
        ]
    );
    assert!(
        err.contains("not planned: ml/Job/vague: no gpuledger.io/runtime"),
        "{err}"
    );
}

/// The pool from a cluster snapshot: its placeable GPUs minus what serving holds, or a Kueue
/// ClusterQueue's quota (v1beta1 and v1beta2) with and without borrowing; its nodes from the
/// snapshot's placeable GPU nodes.
#[test]
fn the_pool_from_a_snapshot_and_a_kueue_cluster_queue() {
    let dir = tempfile::tempdir().unwrap();
    let node = |name: &str| {
        format!(
            "apiVersion: v1\nkind: Node\nmetadata: {{name: {name}, labels: {{nvidia.com/gpu.product: H100}}}}\nstatus:\n  capacity: {{nvidia.com/gpu: \"4\"}}\n  allocatable: {{nvidia.com/gpu: \"4\"}}\n  conditions: [{{type: Ready, status: \"True\"}}]\n---\n"
        )
    };
    let snapshot = format!(
        "{}{}apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: chat, namespace: serving, uid: d1}}\nspec:\n  replicas: 1\n  template:\n    spec:\n      containers: [{{name: main, resources: {{limits: {{nvidia.com/gpu: \"2\"}}}}}}]\n---\napiVersion: v1\nkind: Pod\nmetadata: {{name: chat-0, namespace: serving, ownerReferences: [{{apiVersion: apps/v1, kind: Deployment, name: chat, uid: d1, controller: true}}]}}\nspec:\n  nodeName: gpu-a\n  containers: [{{name: main, resources: {{limits: {{nvidia.com/gpu: \"2\"}}}}}}]\nstatus: {{phase: Running}}\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {{name: batch}}\nspec:\n  cohortName: pool\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors:\n    - name: h100\n      resources: [{{name: nvidia.com/gpu, nominalQuota: 2, borrowingLimit: 2}}]\n---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {{name: other}}\nspec:\n  cohort: pool\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors:\n    - name: h100\n      resources: [{{name: nvidia.com/gpu, nominalQuota: 4}}]\n",
        node("gpu-a"),
        node("gpu-b")
    );
    std::fs::write(dir.path().join("fleet.yaml"), snapshot).unwrap();
    let plan = |extra: &[&str]| {
        let out = gpuledger(dir.path())
            .args([
                "plan",
                "--jobs",
                fixture("fixtures/plan/seed.yaml").to_str().unwrap(),
                "--snapshot",
                "fleet.yaml",
                "--now",
                "2026-12-02T12:00:00Z",
                "--format",
                "json",
            ])
            .args(extra)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(0), "{err}");
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    // 8 placeable − 2 held by the serving Deployment = 6: three 2-GPU jobs at once.
    let j = plan(&[]);
    assert_eq!(j["plan"]["pool"], 6, "{:#}", j);
    assert_eq!(j["plan"]["peak"], 6);
    assert!(
        j["sources"]
            .to_string()
            .contains("8 placeable GPUs − 2 held"),
        "{}",
        j["sources"]
    );
    // The queue's 2 GPUs: one job at a time, done 16:00, still in time.
    let j = plan(&["--queue", "batch"]);
    assert_eq!(j["plan"]["pool"], 2);
    assert_eq!(j["plan"]["finish"], "2026-12-02T16:00:00Z");
    // Borrowing 2 more from the cohort (the other queue leaves 4 unused): two at a time.
    let j = plan(&["--queue", "batch", "--borrow"]);
    assert_eq!(j["plan"]["pool"], 4);
    assert_eq!(j["plan"]["finish"], "2026-12-02T14:00:00Z");
}

/// The cluster's waiting batch work through the API emulator and from the same file as a
/// snapshot: the same plan. Suspended Jobs queued to the ClusterQueue are planned from their
/// intent on its free quota (4 nominal − 2 used = 2); the admitted and the running job are not
/// waiting; a job without intent and one in another queue are named, not planned.
#[test]
fn waiting_work_of_a_kueue_queue_through_the_api_and_a_snapshot() {
    use super::kube_emulator::{Emulator, EmulatorOptions};
    let file = fixture("fixtures/plan/kueue-cluster.yaml");
    let emu = Emulator::start(EmulatorOptions {
        snapshots: vec![file.clone()],
        // Both ClusterQueue versions are served, as a cluster with both CRD versions does.
        convert_versions: true,
        ..EmulatorOptions::default()
    });
    let plan = |cluster: &[&std::ffi::OsStr]| {
        let out = gpuledger(&root())
            .args(["plan", "--pending", "--queue", "batch", "--format", "json"])
            .args(["--now", "2026-12-02T12:00:00Z"])
            .args(cluster)
            .env_remove("KUBECONFIG")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(0), "{err}");
        (
            serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap(),
            err,
        )
    };
    let (api, api_err) = plan(&["--kubeconfig".as_ref(), emu.kubeconfig_path().as_os_str()]);
    let (snap, snap_err) = plan(&["--snapshot".as_ref(), file.as_os_str()]);
    assert_eq!(api["plan"], snap["plan"]);
    assert_eq!(api_err, snap_err);
    let p = &api["plan"];
    assert_eq!(p["pool"], 2, "{p:#}");
    assert_eq!(p["finish"], "2026-12-02T14:00:00Z");
    assert_eq!(p["peak"], 2);
    assert_eq!(p["peak_all_at_once"], 4);
    let names: Vec<&str> = p["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["train-1", "train-2"]);
    assert!(
        api["sources"]
            .to_string()
            .contains("waiting batch work: 2 jobs"),
        "{}",
        api["sources"]
    );
    assert!(
        api_err.contains("not planned: team-a/Job/no-intent: declares no intent"),
        "{api_err}"
    );
    assert!(
        api_err.contains("1 waiting batch workload queued to other ClusterQueues than batch"),
        "{api_err}"
    );
    // Without --queue the pool is the cluster's: 8 placeable − 0 held by non-batch work, and
    // every waiting job with a runtime is planned, team-b's eval too.
    let out = gpuledger(&root())
        .args([
            "plan",
            "--pending",
            "--format",
            "json",
            "--now",
            "2026-12-02T12:00:00Z",
        ])
        .args(["--snapshot".as_ref(), file.as_os_str()])
        .output()
        .unwrap();
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["plan"]["pool"], 8, "{:#}", j["plan"]);
    assert_eq!(j["plan"]["jobs"].as_array().unwrap().len(), 3);
}

/// A dump of nodes and jobs without pods, with the pool given: a suspended Job holds no GPU
/// whatever its pods, so it is planned; a Job that is not suspended may be running, so it is left
/// out, saying why — never refused for the pods the plan does not need.
#[test]
fn waiting_work_from_a_dump_without_pods_when_the_pool_is_given() {
    let job = |name: &str, suspend: bool| {
        format!(
            "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {name}\n  namespace: team-a\n  annotations: {{gpuledger.io/runtime: 1h}}\nspec:\n  suspend: {suspend}\n  template:\n    spec:\n      containers: [{{name: main, resources: {{limits: {{nvidia.com/gpu: \"4\"}}}}}}]\n---\n"
        )
    };
    let dump = "apiVersion: v1\nkind: Node\nmetadata: {name: gpu-a, labels: {nvidia.com/gpu.product: H100}}\nstatus:\n  capacity: {nvidia.com/gpu: \"8\"}\n  allocatable: {nvidia.com/gpu: \"8\"}\n  conditions: [{type: Ready, status: \"True\"}]\n---\n".to_string()
        + &job("waits", true)
        + &job("maybe-running", false);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("dump.yaml");
    std::fs::write(&file, dump).unwrap();
    let plan = |extra: &[&str]| {
        gpuledger(&root())
            .args(["plan", "--pending", "--format", "json"])
            .args(["--now", "2026-12-02T12:00:00Z", "--snapshot"])
            .arg(&file)
            .args(extra)
            .output()
            .unwrap()
    };
    let out = plan(&["--pool", "16"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = j["plan"]["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["waits"], "{:#}", j["plan"]);
    assert_eq!(j["plan"]["pool"], 16);
    assert!(
        err.contains("not planned: team-a/Job/maybe-running: the input holds no Pod"),
        "{err}"
    );
    // Without the pool, what non-batch work holds is unknown: refused, saying so.
    let out = plan(&[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("holds no Pod"));
}

/// "Started at once" is each job started as soon as it may: two jobs ready at 12:00 and two ready
/// at 14:00 never run together, so starting each at its earliest needs 4 GPUs, not 8.
#[test]
fn started_at_once_means_each_job_at_its_earliest_start() {
    let now = t("2026-12-02T12:00:00Z");
    let later = t("2026-12-02T14:00:00Z");
    let due = t("2026-12-02T18:00:00Z");
    let jobs = vec![
        job("a", 2, 3600, now, Some(due)),
        job("b", 2, 3600, now, Some(due)),
        job("c", 2, 3600, later, Some(due)),
        job("d", 2, 3600, later, Some(due)),
    ];
    let p = plan(
        jobs,
        &pool(8),
        &Settings::new(Objective::Earliest, 900, now),
    );
    assert_eq!(p.peak_all_at_once, 4, "{p:?}");
    // A job that ends as another starts does not overlap it: back to back is still 2.
    let p = plan(
        vec![
            job("a", 2, 3600, now, None),
            job("b", 2, 3600, now + H, None),
        ],
        &pool(8),
        &Settings::new(Objective::Earliest, 900, now),
    );
    assert_eq!(p.peak_all_at_once, 2);
    // The seed's four jobs, all ready now: 8, as the seed says.
    let p = plan(
        seed(),
        &pool(4),
        &Settings::new(Objective::Earliest, 900, now),
    );
    assert_eq!(p.peak_all_at_once, 8);
}

/// A pool smaller than a pod is a pool to grow, not a pod too large: the smallest pool is searched
/// on the nodes at their real size (8 GPUs), not capped at the pool's 4.
#[test]
fn the_smallest_pool_is_searched_on_nodes_at_their_real_size() {
    let now = t("2026-12-02T12:00:00Z");
    let nodes = Pool {
        gpus: 4,
        node_sizes: vec![8, 8],
    };
    let big = Job {
        gpus_per_pod: 8,
        ..job("big", 8, 3600, now, Some(now + 4 * H))
    };
    let p = plan(
        vec![big.clone()],
        &nodes,
        &Settings::new(Objective::Earliest, 900, now),
    );
    assert!(!p.feasible);
    assert_eq!(p.min_pool, Some(8), "{p:?}");
    assert_eq!(
        p.missed[0].reason.as_deref(),
        Some("it needs 8 GPUs at once, more than the pool's 4")
    );
    assert_eq!(
        p.verdict(),
        "Job ml/big cannot run on the pool's 4 GPUs: it needs 8 GPUs at once, more than the pool's 4; 8 GPUs would meet its deadline: buying is needed."
    );
    // Two of them due in 1h on two nodes of 8: 16 GPUs, each pod on its own node.
    let p = plan(
        vec![
            Job {
                name: "x".into(),
                deadline: Some(now + H),
                ..big.clone()
            },
            Job {
                name: "y".into(),
                deadline: Some(now + H),
                ..big.clone()
            },
        ],
        &nodes,
        &Settings::new(Objective::Earliest, 900, now),
    );
    assert_eq!(p.min_pool, Some(16), "{p:?}");
    // Larger than every node: no pool helps, and it says why.
    let p = plan(
        vec![Job {
            gpus_per_pod: 10,
            ..big
        }],
        &nodes,
        &Settings::new(Objective::Earliest, 900, now),
    );
    assert_eq!(p.min_pool, None);
    assert_eq!(
        p.missed[0].reason.as_deref(),
        Some("a pod of 10 GPUs fits on no node (the largest has 8)")
    );
}

/// Nothing to plan, and a plan of one job, read as plain sentences: no "done nothing to run", no
/// "GPU-hours: -0", no "Peak: 0 … Plan: optimal".
#[test]
fn an_empty_plan_and_a_plan_of_one_job_read_as_sentences() {
    let dir = tempfile::tempdir().unwrap();
    let run = |jobs: &str, format: &str| {
        std::fs::write(dir.path().join("jobs.yaml"), jobs).unwrap();
        let out = gpuledger(dir.path())
            .args(["plan", "--jobs", "jobs.yaml", "--pool", "4"])
            .args(["--now", "2026-12-02T12:00:00Z", "--format", format])
            .env("COLUMNS", "100")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    for format in ["markdown", "table"] {
        let text = run("[]\n", format);
        assert!(
            text.contains("Nothing to plan: no batch job was given."),
            "{text}"
        );
        for bad in ["-0", "nothing to run", "Peak", "optimal"] {
            assert!(!text.contains(bad), "{bad} in {text}");
        }
    }
    let json: serde_json::Value = serde_json::from_str(&run("[]\n", "json")).unwrap();
    assert_eq!(json["plan"]["gpu_hours"].to_string(), "0.0");

    let one = "- {name: grade, namespace: ml, gpus_per_pod: 2, runtime: 1h, deadline: \"2026-12-02T17:00:00Z\"}\n";
    let text = run(one, "markdown");
    assert!(
        text.contains("**Job ml/grade fits the pool: 2 of 4 GPUs from 2026-12-02 12:00 UTC to 2026-12-02 13:00 UTC, 4h before its deadline.**"),
        "{text}"
    );
    assert!(text.contains("GPU plan: 1 job on 4 GPUs"), "{text}");

    let too_big = "- {name: huge, namespace: ml, gpus_per_pod: 8, runtime: 1h, deadline: \"2026-12-02T17:00:00Z\"}\n";
    let text = run(too_big, "markdown");
    assert!(
        text.contains("Job ml/huge cannot run on the pool's 4 GPUs: it needs 8 GPUs at once, more than the pool's 4; 8 GPUs would meet its deadline: buying is needed."),
        "{text}"
    );
    for bad in ["Peak: 0", "optimal"] {
        assert!(!text.contains(bad), "{bad} in {text}");
    }
}

/// One set of numbers: the plan's pool on a snapshot starts from the inventory's placeable GPUs of
/// the same fleet, minus what the inventory's serving workloads hold.
#[test]
fn the_plan_pool_is_the_inventory_placeable_minus_serving() {
    let snapshot = fixture("fixtures/plan/kueue-cluster.yaml");
    let out = gpuledger(&root())
        .args(["inventory", "--format", "json", "--snapshot"])
        .arg(&snapshot)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let inv: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let placeable = inv["fleet"]["gpus"]["placeable"]
        .as_u64()
        .unwrap_or_else(|| panic!("{:#}", inv["fleet"]));
    let out = gpuledger(&root())
        .args([
            "plan",
            "--format",
            "json",
            "--now",
            "2026-12-02T12:00:00Z",
            "--pending",
            "--snapshot",
        ])
        .arg(&snapshot)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let plan: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let how = plan["sources"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s.as_str())
        .find(|s| s.starts_with("pool: "))
        .unwrap_or_else(|| panic!("{:#}", plan["sources"]))
        .to_string();
    assert!(
        how.starts_with(&format!("pool: {placeable} placeable GPUs − ")),
        "{how} vs inventory {placeable}"
    );
    let held: u64 = how
        .split(" − ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap();
    assert_eq!(plan["plan"]["pool"].as_u64(), Some(placeable - held));
}
