//! Queues and quotas (issue 45): a fleet whose batch work goes through Kueue or KAI Scheduler,
//! from a snapshot and through the API emulator (listed, and watched by `serve`) — the queued tier
//! beside pending, the queue rows, each tenant's quota, the quota diagnosis; what is unknown when
//! what waits was not read; a pull request judged against the queue it joins; drift that knows a
//! queue; and every upstream example read.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::kube_emulator::{Emulator, EmulatorOptions};
use super::serve_child::Serve;
use super::support::{Repo, fixture, gpuledger, inventory_json, root};

const FLEET: &str = "tests/fixtures/queues/fleet.yaml";
const KAI: &str = "tests/fixtures/queues/kai.yaml";

fn row<'a>(j: &'a Value, list: &str, key: &str, name: &str) -> &'a Value {
    j[list]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r[key] == name)
        .unwrap_or_else(|| panic!("no {list} row {name}: {:#}", j[list]))
}

fn queue_row<'a>(j: &'a Value, queue: &str, flavor: Option<&str>) -> &'a Value {
    j["queues"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["queue"] == queue && r["flavor"].as_str() == flavor)
        .unwrap_or_else(|| panic!("no queue row {queue} {flavor:?}: {:#}", j["queues"]))
}

/// The Kueue fleet: 68 GPUs wait for quota while 24 placeable GPUs they could use are free. Each
/// figure is read off the fixture by hand (its header says what it holds).
#[test]
fn a_kueue_fleet_has_a_queued_tier_its_queues_and_a_quota_problem() {
    let j = inventory_json(&["--snapshot", FLEET]);
    let g = &j["fleet"]["gpus"];
    // train-b2 8 + sweep-a2 6×8 + eval-r1 8 (Workloads without quota) + notebook-a4 4 (a pod
    // behind Kueue's gate, never also pending).
    assert_eq!(
        (
            g["requested"].as_u64(),
            g["pending"].as_u64(),
            g["queued"].as_u64()
        ),
        (Some(40), Some(0), Some(68)),
        "{g}"
    );
    let s = &j["fleet"]["shortage"];
    assert_eq!(s["kind"], "quota", "{s:#}");
    assert_eq!(s["quota"]["free_for_queued"], 24);
    // 64 placeable − (cq-a 16 + 8, cq-b 16, cq-research 8).
    assert_eq!(s["quota"]["uncovered_placeable"], 16);
    assert_eq!(s["quota"]["cohort_could_lend"], 0);
    let summary = s["summary"].as_str().unwrap();
    assert!(
        summary.contains("team-a/Job/sweep-a2: 48 GPUs, ExceedsMaxQuota"),
        "{summary}"
    );
    // Per model: the flavor each waits for (h100 first in cq-a), the pod's own selector.
    let h100 = row(&j["fleet"], "models", "model", "NVIDIA-H100-80GB-HBM3");
    let a100 = row(&j["fleet"], "models", "model", "NVIDIA-A100-SXM4-80GB");
    assert_eq!(
        (h100["queued"].as_u64(), a100["queued"].as_u64()),
        (Some(60), Some(8))
    );
    // Each queue per GPU flavor, in its order.
    let q = queue_row(&j, "cq-a", Some("h100"));
    assert_eq!(
        (
            &q["nominal"],
            &q["admitted"],
            &q["queued"],
            &q["workloads_queued"],
            &q["borrowing_limit"]
        ),
        (
            &Value::from(16),
            &Value::from(16),
            &Value::from(52),
            &Value::from(2),
            &Value::Null
        ),
        "{q:#}"
    );
    assert_eq!(q["models"], serde_json::json!(["NVIDIA-H100-80GB-HBM3"]));
    assert_eq!(q["tenants"], serde_json::json!(["alpha"]));
    let q = queue_row(&j, "cq-b", Some("h100"));
    assert_eq!(
        (&q["borrowing_limit"], &q["lending_limit"], &q["cohort"]),
        (&Value::from(0), &Value::from(4), &Value::from("ml-pool"))
    );
    assert_eq!(queue_row(&j, "cq-a", Some("a100"))["nominal"], 8);
    // Tenants: quota of the queues their namespaces submit to, admitted, queued.
    let alpha = row(&j, "tenants", "name", "alpha");
    assert_eq!(
        (
            &alpha["gpus_quota"],
            &alpha["gpus_admitted"],
            &alpha["gpus_borrowed"],
            &alpha["gpus_queued"]
        ),
        (
            &Value::from(24),
            &Value::from(16),
            &Value::from(0),
            &Value::from(52)
        )
    );
    // Workloads say where they wait and why they never will.
    let w = row(&j, "workloads", "name", "sweep-a2");
    assert_eq!(
        (&w["queue"], &w["queue_never"], &w["gpus_queued"]),
        (
            &Value::from("cq-a"),
            &Value::from("ExceedsMaxQuota"),
            &Value::from(48)
        )
    );
    assert_eq!(
        row(&j, "workloads", "name", "eval-r1")["queue_state"],
        "preempted"
    );
    // Every GPU in exactly one tier, summed over workloads as over the fleet.
    let sum = |k: &str| {
        j["workloads"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w[k].as_u64().unwrap())
            .sum::<u64>()
    };
    assert_eq!(
        (sum("gpus"), sum("gpus_pending"), sum("gpus_queued")),
        (40, 0, 68)
    );
}

/// A hierarchical Cohort's own quota covers placeable GPUs as its queues' do: ml-pool holding 8
/// GPUs of h100 itself leaves 8 placeable GPUs covered by no quota, not 16.
#[test]
fn a_cohorts_own_quota_covers_placeable_gpus() {
    let fleet = std::fs::read_to_string(FLEET).unwrap();
    let own = "  kind: Cohort\n  metadata: {name: ml-pool}\n  spec:\n    resourceGroups:\n    - coveredResources: [nvidia.com/gpu]\n      flavors:\n      - name: h100\n        resources: [{name: nvidia.com/gpu, nominalQuota: 8}]\n";
    let with = fleet.replace(
        "  kind: Cohort\n  metadata: {name: ml-pool}\n  spec: {}\n",
        own,
    );
    assert_ne!(with, fleet, "the fixture's Cohort moved");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("fleet.yaml");
    std::fs::write(&file, with).unwrap();
    let j = inventory_json(&["--snapshot", file.to_str().unwrap()]);
    let q = &j["fleet"]["shortage"]["quota"];
    assert_eq!(q["uncovered_placeable"], 8, "{q:#}");
}

#[test]
fn kai_queues_pod_groups_and_gpu_shares() {
    let j = inventory_json(&["--snapshot", KAI]);
    let g = &j["fleet"]["gpus"];
    // llm-train-0's group is held by its queue (OverLimit): queued. vision-big-0's by the nodes:
    // pending.
    assert_eq!(
        (
            g["requested"].as_u64(),
            g["pending"].as_u64(),
            g["queued"].as_u64()
        ),
        (Some(12), Some(8), Some(4)),
        "{g}"
    );
    // One running half share; a quarter share in the held group is queued, on its own line.
    let share = row(&j["fleet"], "other_gpus", "resource", "gpu-fraction");
    assert_eq!(
        (
            share["requested"].as_u64(),
            share["queued"].as_u64(),
            share["gpu_equivalents"].as_f64()
        ),
        (Some(1), Some(1), Some(0.75))
    );
    let q = queue_row(&j, "research-llm", None);
    assert_eq!(
        (
            &q["kind"],
            &q["nominal"],
            &q["borrowing_limit"],
            &q["admitted"],
            &q["borrowed"],
            &q["queued"],
            &q["cohort"]
        ),
        (
            &Value::from("KAIQueue"),
            &Value::from(4),
            &Value::from(4),
            &Value::from(8),
            &Value::from(4),
            &Value::from(4.25),
            &Value::from("research")
        )
    );
    // A parent's allocation includes its children's (12.5 of which half a GPU is a share).
    assert_eq!(queue_row(&j, "research", None)["admitted"], 12.5);
    // limit −1: no borrowing limit; quota −1: no quota, said so.
    assert!(queue_row(&j, "research-vision", None)["borrowing_limit"].is_null());
    let d = queue_row(&j, "default", None);
    assert!(
        d["nominal"].is_null()
            && d["unknown"]["nominal"]
                .as_str()
                .unwrap()
                .contains("unlimited")
    );
    let t = row(&j, "tenants", "name", "research");
    assert_eq!(
        (&t["gpus_quota"], &t["gpus_admitted"], &t["gpus_borrowed"]),
        (&Value::from(8), &Value::from(12.5), &Value::from(4.5))
    );
}

/// What waits was not read: the queued tier is unknown (never 0), the shortage unknown (never
/// "none"), and the command exits 2 — from a dump without Workloads, and from a cluster that
/// forbids listing them.
#[test]
fn queued_is_unknown_where_what_waits_was_not_read() {
    let text = std::fs::read_to_string(fixture(FLEET)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("no-workloads.yaml");
    let items: Vec<&str> = text
        .split("\n- ")
        .filter(|i| !i.contains("kind: Workload"))
        .collect();
    std::fs::write(&dump, items.join("\n- ")).unwrap();
    let check = |args: &[&str]| {
        let out = gpuledger(&root())
            .args(["inventory", "--format", "json"])
            .args(args)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(2),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let j: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(
            j["fleet"]["gpus"]["queued"].is_null(),
            "{:#}",
            j["fleet"]["gpus"]
        );
        assert_eq!(j["fleet"]["shortage"]["kind"], "unknown");
        assert!(j["tenants"][0]["gpus_queued"].is_null());
        assert!(j["queues"][0]["queued"].is_null());
        j
    };
    let j = check(&["--snapshot", dump.to_str().unwrap()]);
    assert!(
        j["fleet"]["unknown"]["gpus.queued"]
            .as_str()
            .unwrap()
            .contains("no Kueue Workload")
    );
    let emu = Emulator::start(EmulatorOptions {
        snapshots: vec![fixture(FLEET)],
        forbidden: vec!["workloads.kueue.x-k8s.io".into()],
        ..EmulatorOptions::default()
    });
    let j = check(&["--kubeconfig", emu.kubeconfig_path().to_str().unwrap()]);
    assert!(
        j["fleet"]["unknown"]["gpus.queued"]
            .as_str()
            .unwrap()
            .contains("workloads.kueue.x-k8s.io could not be listed")
    );
    // A fleet without any admission object: 0 queued, known.
    let j = inventory_json(&[
        "--snapshot",
        "tests/fixtures/split-nodes.yaml",
        "--snapshot",
        "tests/fixtures/split-pods.json",
    ]);
    assert_eq!(j["fleet"]["gpus"]["queued"], 0);
    assert_eq!(j["queues"], serde_json::json!([]));
}

/// The API emulator serves the queues as kube-apiserver would (the real kubectl reads them), and
/// a read through it gives the snapshot's figures; `serve` watches them: a Workload admitted
/// while serving leaves the queued tier within seconds.
#[test]
fn the_same_figures_through_the_api_and_serve_follows_a_workload_by_watch() {
    let emu = Emulator::start(EmulatorOptions {
        snapshots: vec![fixture(FLEET)],
        bookmark_interval: Duration::from_millis(500),
        // cq-b and train-b1's Workload are v1beta1: served under both versions, as a cluster
        // whose CRDs serve both does.
        convert_versions: true,
        ..EmulatorOptions::default()
    });
    let kubeconfig = emu.kubeconfig_path().display().to_string();
    let out = std::process::Command::new("kubectl")
        .args([
            "--kubeconfig",
            &kubeconfig,
            "get",
            "clusterqueues,workloads",
            "-A",
            "-o",
            "name",
        ])
        .output()
        .expect("kubectl");
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        listed.contains("clusterqueue.kueue.x-k8s.io/cq-b"),
        "{listed}"
    );
    assert!(
        listed.contains("workload.kueue.x-k8s.io/job-train-b2-9e0f3"),
        "{listed}"
    );
    let api = inventory_json(&["--kubeconfig", &kubeconfig]);
    let snap = inventory_json(&["--snapshot", FLEET]);
    for k in ["gpus", "shortage", "models"] {
        assert_eq!(api["fleet"][k], snap["fleet"][k], "{k}");
    }
    assert_eq!(api["queues"], snap["queues"]);
    // The cluster is read whole (its routes are known: none); the dump holds no Service.
    let tenants = |j: &Value| {
        let mut t = j["tenants"].clone();
        for r in t.as_array_mut().unwrap() {
            r.as_object_mut().unwrap().remove("public_routes");
        }
        t
    };
    assert_eq!(tenants(&api), tenants(&snap));

    let serve = Serve::start(&["--interval", "1h", "--kubeconfig", &kubeconfig]);
    const QUEUED: &str = "gpuledger_fleet_gpus{cluster=\"emulator\",tier=\"queued\"}";
    const CQ_B: &str = "gpuledger_queue_gpus{cluster=\"emulator\",queue=\"cq-b\",kind=\"ClusterQueue\",flavor=\"h100\",state=\"queued\"}";
    serve.wait_for_value(QUEUED, 68.0, Duration::from_secs(60));
    assert_eq!(serve.samples()[CQ_B], 8.0);
    // Kueue admits train-b2: its Workload reserves quota.
    let mut wl = emu
        .object(
            "kueue.x-k8s.io/v1beta2",
            "Workload",
            "team-b",
            "job-train-b2-9e0f3",
        )
        .unwrap();
    wl["status"]["conditions"] =
        serde_json::json!([{"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved"}]);
    wl["status"]["admission"] = serde_json::json!({"clusterQueue": "cq-b", "podSetAssignments": [{"name": "main", "count": 1, "flavors": {"nvidia.com/gpu": "h100"}}]});
    emu.apply(wl);
    let took = serve.wait_for_value(QUEUED, 60.0, Duration::from_secs(10));
    eprintln!("serve followed the admitted Workload in {took:?}");
    let start = Instant::now();
    while serve.samples().get(CQ_B) != Some(&0.0) {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{:?}",
            serve.samples().get(CQ_B)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A GitOps repository that keeps cq-a in Git, at base and at a head that raises its H100 quota
/// to 24 and adds four jobs. Against the live Kueue fleet: a job too large for cq-b ever,
/// one that waits (cq-b at its 16, borrowing limit 0, no preemption), one that the raised quota
/// admits, and one without a queue label that lands in team-a's `default` LocalQueue.
fn queue_repo() -> Repo {
    let r = Repo::new();
    let cq = |nominal: u64| {
        format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {{name: cq-a}}\nspec:\n  cohortName: ml-pool\n  namespaceSelector: {{}}\n  preemption: {{reclaimWithinCohort: Any, withinClusterQueue: LowerPriority}}\n  resourceGroups:\n  - coveredResources: [cpu, nvidia.com/gpu]\n    flavors:\n    - name: h100\n      resources:\n      - {{name: cpu, nominalQuota: \"256\"}}\n      - {{name: nvidia.com/gpu, nominalQuota: {nominal}}}\n    - name: a100\n      resources:\n      - {{name: cpu, nominalQuota: \"64\"}}\n      - {{name: nvidia.com/gpu, nominalQuota: \"8\"}}\n"
        )
    };
    let job = |ns: &str, name: &str, queue: Option<&str>, par: u64, gpus: u64| {
        let label = queue
            .map(|q| format!(", labels: {{kueue.x-k8s.io/queue-name: {q}}}"))
            .unwrap_or_default();
        format!(
            "apiVersion: batch/v1\nkind: Job\nmetadata: {{name: {name}, namespace: {ns}{label}}}\nspec:\n  parallelism: {par}\n  suspend: true\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{{name: main, image: trainer, resources: {{limits: {{nvidia.com/gpu: \"{gpus}\"}}}}}}]\n---\n"
        )
    };
    r.write("queues/cq-a.yaml", &cq(16))
        .write(
            "jobs/train-b1.yaml",
            &job("team-b", "train-b1", Some("team-b"), 2, 8),
        )
        .commit("gitops");
    r.git(&["checkout", "-q", "-b", "feature"]);
    r.write("queues/cq-a.yaml", &cq(24))
        .write(
            "jobs/new.yaml",
            &(job("team-b", "train-b3", Some("team-b"), 2, 8)
                + &job("team-b", "huge-b4", Some("team-b"), 5, 8)
                + &job("team-a", "small-a5", Some("default"), 1, 4)
                + &job("team-a", "plain-a6", None, 1, 2)),
        )
        .commit("raise cq-a to 24 H100 and add four jobs");
    r.git(&["checkout", "-q", "main"]);
    r
}

fn check(r: &Repo, extra: &[&str], format: &str) -> (i32, String, String) {
    let out = gpuledger(r.path())
        .args([
            "check",
            "--repo",
            ".",
            "--base",
            "main",
            "--head",
            "feature",
            "--now",
            "2026-12-07",
            "--fail-on",
            "quota",
            "--format",
            format,
        ])
        .args(extra)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_pull_request_is_judged_against_the_queue_it_joins() {
    let r = queue_repo();
    let live = fixture(FLEET).display().to_string();
    let (code, out, err) = check(&r, &["--snapshot", &live], "json");
    let j: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {err}"));
    let c = &j["check"];
    let verdict = |w: &str| {
        let a = row(c, "admission", "workload", w);
        (
            a["verdict"].as_str().unwrap().to_string(),
            a["queue"].clone(),
            a["why"].as_str().unwrap().to_string(),
        )
    };
    let (v, q, why) = verdict("team-b/Job/huge-b4");
    assert_eq!((v.as_str(), q), ("never", Value::from("cq-b")), "{why}");
    assert!(
        why.contains("40 GPUs in flavor h100 > the most cq-b can ever reach there (16)"),
        "{why}"
    );
    let (v, _, why) = verdict("team-b/Job/train-b3");
    assert_eq!(v, "waits", "{why}");
    assert!(
        why.contains("cq-b is at 16 of its 16 in flavor h100"),
        "{why}"
    );
    // The head's quota (24) is laid over the live queue: cq-a has room for both team-a jobs.
    assert_eq!(verdict("team-a/Job/small-a5").0, "admits");
    let (v, q, _) = verdict("team-a/Job/plain-a6");
    assert_eq!(
        (v.as_str(), q),
        ("admits", Value::from("cq-a")),
        "no label: team-a's default LocalQueue"
    );
    // The quota moved: nothing becomes borrowed; the pod waiting in cq-a (4) would be admitted.
    let m = &c["quota"][0];
    assert_eq!(
        (
            &m["queue"],
            &m["flavor"],
            &m["before"]["nominal"],
            &m["after"]["nominal"]
        ),
        (
            &Value::from("cq-a"),
            &Value::from("h100"),
            &Value::from(16),
            &Value::from(24)
        )
    );
    assert_eq!(
        (m["becomes_borrowed"].as_u64(), m["would_admit"].as_u64()),
        (Some(0), Some(4))
    );
    let gate = c["gates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["name"] == "quota")
        .unwrap();
    assert_eq!(
        (&gate["failed"], &gate["unknown"]),
        (&Value::from(true), &Value::from(false)),
        "{gate}"
    );
    assert_eq!(code, 1, "{err}");
    assert!(
        c["summary"]
            .as_str()
            .unwrap()
            .contains("queues: 2 admits, 1 waits, 1 never"),
        "{}",
        c["summary"]
    );

    // The comment leads with the queue's verdict, before the nodes' fit.
    let (_, md, _) = check(&r, &["--snapshot", &live], "markdown");
    let sentence = md
        .lines()
        .find(|l| l.starts_with("**Adds"))
        .unwrap_or_else(|| panic!("{md}"));
    let queue_at = sentence
        .find("team-b/Job/huge-b4 (40 GPUs) joins cq-b: never")
        .unwrap_or_else(|| panic!("{sentence}"));
    assert!(queue_at < sentence.find("nodes:").unwrap(), "{sentence}");
    assert!(
        md.contains("### Against its queue") && md.contains("### Quota moved"),
        "{md}"
    );

    // Offline: what the queues hold is not known; the gate fails closed.
    let (code, out, _) = check(&r, &[], "json");
    let j: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        row(&j["check"], "admission", "workload", "team-b/Job/huge-b4")["verdict"],
        "unknown"
    );
    // plain-a6 names no queue: without the live state, no row.
    assert!(
        j["check"]["admission"]
            .as_array()
            .unwrap()
            .iter()
            .all(|a| a["workload"] != "team-a/Job/plain-a6")
    );
    assert!(j["check"]["quota"][0]["becomes_borrowed"].is_null());
    assert_eq!(code, 1);
}

/// Drift knows a queue: a job in Git's shape whose Workload waits is queued, not in sync; one
/// preempted and waiting again says so.
#[test]
fn drift_says_a_job_is_queued_not_in_sync() {
    let r = Repo::new();
    let job = |ns: &str, name: &str, queue: &str, par: u64, gpus: u64| {
        format!(
            "apiVersion: batch/v1\nkind: Job\nmetadata: {{name: {name}, namespace: {ns}, labels: {{kueue.x-k8s.io/queue-name: {queue}}}}}\nspec:\n  parallelism: {par}\n  completions: {par}\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{{name: main, image: trainer:1, resources: {{limits: {{nvidia.com/gpu: \"{gpus}\"}}}}}}]\n---\n"
        )
    };
    r.write(
        "jobs.yaml",
        &(job("team-b", "train-b2", "team-b", 1, 8)
            + &job("research", "eval-r1", "main", 1, 8)
            + &job("team-a", "train-a1", "default", 2, 8)),
    )
    .commit("jobs");
    let out = gpuledger(r.path())
        .args([
            "drift",
            "--repo",
            ".",
            "--snapshot",
            &fixture(FLEET).display().to_string(),
            "--format",
            "json",
            "--now",
            "2026-12-07",
        ])
        .output()
        .unwrap();
    let j: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    let d = &j["drift"];
    let queued: Vec<(&str, &str)> = d["queued"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap(),
                r["queue_state"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        queued,
        [("eval-r1", "preempted"), ("train-b2", "queued")],
        "{d:#}"
    );
    assert!(
        d["in_sync"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["name"] == "train-a1")
    );
    assert!(
        d["missing"].as_array().unwrap().is_empty(),
        "{:#}",
        d["missing"]
    );
    assert!(
        d["summary"]
            .as_str()
            .unwrap()
            .contains("2 workloads waiting for queue quota"),
        "{}",
        d["summary"]
    );
}

/// Every upstream example under `shared/corpus/queues` reads, and the figures the API types give
/// them come out: the GPU quota and the KAI queue tree.
#[test]
fn every_upstream_queue_example_reads() {
    let dir = root().join("../shared/corpus/queues");
    assert!(
        dir.is_dir(),
        "the corpus is not beside the repository: {}",
        dir.display()
    );
    let mut read = 0;
    for sub in ["kueue", "kai"] {
        for f in std::fs::read_dir(dir.join(sub)).unwrap() {
            let path = f.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            let objs = gpuledger::k8s::read::read_str(&text, &path.display().to_string())
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let a = gpuledger::queues::Admission::read(&objs);
            for q in &a.cluster_queues {
                assert!(
                    q.problems.is_empty(),
                    "{}: {:?}",
                    path.display(),
                    q.problems
                );
            }
            read += 1;
        }
    }
    assert_eq!(read, 40);
    // Queues alone: the fleet is unknown (no nodes, no pods, nothing of what waits), the queues
    // are read.
    let queues = |file: &str| -> Value {
        let out = gpuledger(&root())
            .args(["inventory", "--format", "json", "--snapshot", file])
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(2),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let j = queues("../shared/corpus/queues/kueue/provisioning-provisioning-setup.yaml");
    assert_eq!(
        queue_row(&j, "cluster-queue", Some("default-flavor"))["nominal"],
        9
    );
    let j = queues("../shared/corpus/queues/kai/priority-example-limited-queue.yaml");
    let t = queue_row(&j, "test", None);
    assert_eq!(
        (&t["nominal"], &t["borrowing_limit"], &t["cohort"]),
        (&Value::from(1), &Value::from(0), &Value::from("default"))
    );
}

/// A queue whose quota does not read: its figures are unknown, named by object and field; the rest
/// of the fleet is reported; the command exits 2. Never a panic, never 0.
#[test]
fn a_bad_quota_is_named_and_the_rest_reported() {
    let text = std::fs::read_to_string(fixture(FLEET)).unwrap().replace(
        "{name: nvidia.com/gpu, nominalQuota: 16, borrowingLimit: 0, lendingLimit: 4}",
        "{name: nvidia.com/gpu, nominalQuota: sixteen, borrowingLimit: 0, lendingLimit: 4}",
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.yaml");
    std::fs::write(&file, text).unwrap();
    let out = gpuledger(&root())
        .args([
            "inventory",
            "--format",
            "json",
            "--snapshot",
            file.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    let b = queue_row(&j, "cq-b", Some("h100"));
    assert!(b["nominal"].is_null() && b["admitted"].is_null(), "{b:#}");
    // Its limits are unknown too, not "no limit".
    assert!(
        b["borrowing_limit"].is_null() && b["unknown"]["borrowing_limit"].is_string(),
        "{b:#}"
    );
    assert!(
        b["unknown"]["nominal"]
            .as_str()
            .unwrap()
            .contains("spec.resourceGroups[0].flavors[0].resources[0].nominalQuota"),
        "{b:#}"
    );
    assert_eq!(queue_row(&j, "cq-a", Some("h100"))["nominal"], 16);
    assert_eq!(j["fleet"]["gpus"]["queued"], 68);
    let inc = &j["incomplete"][0];
    assert_eq!(inc["resource"], "ClusterQueue cq-b");
}

/// Every verdict, in the JSON and in the comment: a live fleet with one queue set up for each
/// (written from the API types) and a change that adds a job to each.
#[test]
fn every_verdict_in_the_json_and_the_comment() {
    let cq = |name: &str, extra: &str, quota: &str, used: u64| {
        format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {{name: {name}}}\nspec:\n  namespaceSelector: {{}}\n{extra}  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors:\n    - name: h100\n      resources: [{{name: nvidia.com/gpu, {quota}}}]\nstatus:\n  flavorsReservation:\n  - name: h100\n    resources: [{{name: nvidia.com/gpu, total: \"{used}\"}}]\n---\n"
        )
    };
    let lq = |ns: &str, cq: &str| {
        format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {{name: q, namespace: {ns}}}\nspec: {{clusterQueue: {cq}}}\n---\n"
        )
    };
    let wl = |ns: &str, name: &str, cq: Option<&str>, prio: i64, class: &str| {
        let status = match cq {
            Some(cq) => format!("  conditions: [{{type: QuotaReserved, status: \"True\"}}]\n  admission:\n    clusterQueue: {cq}\n    podSetAssignments: [{{name: main, count: 1, flavors: {{nvidia.com/gpu: h100}}}}]\n"),
            None => "  conditions: [{type: QuotaReserved, status: \"False\", reason: WaitingForQuota}]\n".into(),
        };
        format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata:\n  name: {name}\n  namespace: {ns}\n  creationTimestamp: \"2026-12-01T00:00:00Z\"\n  ownerReferences: [{{apiVersion: batch/v1, kind: Job, name: {name}, uid: u-{name}, controller: true}}]\nspec:\n  queueName: q\n  priority: {prio}\n  priorityClassRef: {{group: kueue.x-k8s.io, kind: WorkloadPriorityClass, name: {class}}}\n  podSets: [{{name: main, count: 1, template: {{spec: {{containers: [{{name: c, resources: {{requests: {{nvidia.com/gpu: 8}}}}}}]}}}}}}]\nstatus:\n{status}---\n"
        )
    };
    let live = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: h100}\nspec: {nodeLabels: {nvidia.com/gpu.product: H100}}\n---\n".to_string()
        + &cq("cq-admit", "", "nominalQuota: 8", 0)
        + &cq("cq-lend", "  cohortName: pool\n", "nominalQuota: 8", 0)
        + &cq("cq-borrow", "  cohortName: pool\n", "nominalQuota: 4", 4)
        + &cq("cq-pre", "  preemption: {withinClusterQueue: LowerPriority}\n", "nominalQuota: 8", 8)
        + &cq("cq-wait", "", "nominalQuota: 8", 8)
        + &cq("cq-never", "", "nominalQuota: 8", 0)
        + &cq("cq-bad", "", "nominalQuota: plenty", 0)
        + &["admit", "borrow", "pre", "wait", "never", "bad"].map(|t| lq(&format!("team-{t}"), &format!("cq-{t}"))).concat()
        + &wl("team-pre", "low", Some("cq-pre"), 0, "batch")
        // A Workload of the urgent class, elsewhere: it says what `urgent` resolves to.
        + &wl("team-never", "urgent-elsewhere", None, 1000, "urgent");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("live.yaml");
    std::fs::write(&file, live).unwrap();
    let r = Repo::new();
    r.write("README.md", "jobs\n").commit("empty");
    r.git(&["checkout", "-q", "-b", "feature"]);
    let job = |team: &str, gpus: u64, extra: &str| {
        format!(
            "apiVersion: batch/v1\nkind: Job\nmetadata: {{name: j, namespace: team-{team}, labels: {{kueue.x-k8s.io/queue-name: q{extra}}}}}\nspec:\n  suspend: true\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{{name: c, image: t, resources: {{limits: {{nvidia.com/gpu: \"{gpus}\"}}}}}}]\n---\n"
        )
    };
    r.write(
        "jobs.yaml",
        &(job("admit", 4, "")
            + &job("borrow", 4, "")
            + &job("pre", 8, ", kueue.x-k8s.io/priority-class: urgent")
            + &job("wait", 8, "")
            + &job("never", 16, "")
            + &job("bad", 1, "")),
    )
    .commit("a job for each queue");
    r.git(&["checkout", "-q", "main"]);
    let (code, out, err) = check(&r, &["--snapshot", file.to_str().unwrap()], "json");
    let j: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {err}"));
    let verdicts: Vec<(String, String)> = j["check"]["admission"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["workload"].as_str().unwrap().into(),
                a["verdict"].as_str().unwrap().into(),
            )
        })
        .collect();
    let want = [
        ("team-admit/Job/j", "admits"),
        ("team-bad/Job/j", "unknown"),
        ("team-borrow/Job/j", "borrows"),
        ("team-never/Job/j", "never"),
        ("team-pre/Job/j", "preempts"),
        ("team-wait/Job/j", "waits"),
    ]
    .map(|(w, v)| (w.to_string(), v.to_string()));
    assert_eq!(verdicts, want, "{:#}", j["check"]["admission"]);
    let pre = row(&j["check"], "admission", "workload", "team-pre/Job/j");
    assert!(
        pre["why"]
            .as_str()
            .unwrap()
            .contains("evicting team-pre/low"),
        "{pre}"
    );
    assert_eq!(code, 1, "the gate fails on the never: {err}");
    let (_, md, _) = check(&r, &["--snapshot", file.to_str().unwrap()], "markdown");
    for v in ["admits", "borrows", "preempts", "waits", "never", "unknown"] {
        assert!(
            md.contains(&format!("| **{v}** |")),
            "{v} not in the comment:\n{md}"
        );
    }
}
