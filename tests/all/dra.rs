//! GPUs through Dynamic Resource Allocation: a fleet whose GPUs are published in ResourceSlices
//! and handed out through ResourceClaims and ResourceClaimTemplates (tests/fixtures/dra), read
//! from a snapshot and through the Kubernetes API emulator (checked with the real kubectl), with
//! the figures worked out by hand from the rules in the fixture's comments:
//!
//! | holder | GPUs | why |
//! |---|---|---|
//! | Deployment ml/trainer | 2 | a template claim per pod, 2 pods × 1 |
//! | Pod ml/two-ctr | 1 | two containers on one claim |
//! | Pod ml/two-req | 2 pending + 1 MIG 1g.5gb pending | two requests in one claim, not allocated |
//! | Pod ml/monitor | 0 | admin access to every GPU of n-dra holds none |
//! | Pod ml/flex | 2 | firstAvailable (4 or 2): the allocation chose 2 |
//! | Pod ml/all-live | 2 | allocationMode All, allocated: both GPUs of n-all |
//! | Pod ml/mig-pod | 1 MIG 3g.20gb | profile from the allocated device |
//! | ResourceClaim serve/shared-gpu | 1 | shared by web-a and web-b, counted once |
//! | Pod serve/ext | 1 | an nvidia.com/gpu limit served by DRA, counted once |
//! | Pod serve/dp-pod | 2 | the device plugin |
//!
//! Capacity: n-dp 4 (device plugin) + n-dra 8 + n-all 2 + n-mig 2 (dynamic MIG: 2 physical GPUs
//! under 26 advertised devices) = 16, 12 of them from slices.

use std::collections::BTreeMap;
use std::process::Command;

use serde_json::Value;

use super::kube_emulator::{Emulator, EmulatorOptions};
use super::support::{fixture, gpuledger, root};

const CLUSTER: &str = "tests/fixtures/dra/cluster.yaml";
const V1BETA1: &str = "tests/fixtures/dra/v1beta1.yaml";

fn snapshot_inventory(file: &str, format: &str) -> String {
    let out = gpuledger(&root())
        .args(["inventory", "--format", format, "--snapshot"])
        .arg(fixture(file))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// `namespace/Kind/name` → (GPUs, pending, GPUs through claims, pending through claims).
fn workloads(r: &Value) -> BTreeMap<String, (u64, u64, u64, u64)> {
    r["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            let n = |v: &Value| v.as_u64().unwrap_or(0);
            (
                format!(
                    "{}/{}/{}",
                    w["namespace"].as_str().unwrap(),
                    w["kind"].as_str().unwrap(),
                    w["name"].as_str().unwrap()
                ),
                (
                    n(&w["gpus"]),
                    n(&w["gpus_pending"]),
                    n(&w["dra"]["gpus_from_claims"]),
                    n(&w["dra"]["gpus_pending_from_claims"]),
                ),
            )
        })
        .collect()
}

fn workload<'a>(r: &'a Value, id: &str) -> &'a Value {
    r["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| format!("{}/{}/{}", w["namespace"], w["kind"], w["name"]).replace('"', "") == id)
        .unwrap_or_else(|| panic!("no workload {id}"))
}

/// The fixture's figures, whichever way it was read.
fn assert_dra_figures(r: &Value) {
    let g = &r["fleet"]["gpus"];
    assert_eq!(
        [
            &g["capacity"],
            &g["allocatable"],
            &g["placeable"],
            &g["requested"],
            &g["pending"]
        ],
        [16, 16, 16, 11, 2]
    );
    assert_eq!(r["fleet"]["gpu_nodes"], 4);
    let d = &r["fleet"]["dra"];
    assert_eq!(d["capacity_from_slices"], 12);
    assert_eq!(d["allocatable_from_slices"], 12);
    assert_eq!(d["placeable_from_slices"], 12);
    assert_eq!(
        d["nodes_from_slices"],
        serde_json::json!(["n-all", "n-dra", "n-mig"])
    );
    assert_eq!(d["requested_from_claims"], 9);
    assert_eq!(d["pending_from_claims"], 2);
    // trainer 2, two-ctr, two-req, flex, all-live, mig-pod, shared-gpu, ext; the admin claim
    // holds nothing and is not counted.
    assert_eq!(
        (&d["claims"], &d["claims_allocated"]),
        (&9.into(), &8.into())
    );
    // Dynamic MIG: n-mig's partitions are not a fixed capacity, and say so.
    let uncounted = d["uncounted"].as_array().unwrap();
    assert_eq!(uncounted.len(), 1, "{uncounted:?}");
    assert!(
        uncounted[0].as_str().unwrap().contains("node n-mig")
            && uncounted[0].as_str().unwrap().contains("dynamic MIG"),
        "{uncounted:?}"
    );

    let want: BTreeMap<String, (u64, u64, u64, u64)> = [
        ("ml/Deployment/trainer", (2, 0, 2, 0)),
        ("ml/Pod/two-ctr", (1, 0, 1, 0)),
        ("ml/Pod/two-req", (0, 2, 0, 2)),
        ("ml/Pod/flex", (2, 0, 2, 0)),
        ("ml/Pod/all-live", (2, 0, 2, 0)),
        ("ml/Pod/mig-pod", (0, 0, 0, 0)),
        ("serve/ResourceClaim/shared-gpu", (1, 0, 1, 0)),
        ("serve/Pod/ext", (1, 0, 1, 0)),
        ("serve/Pod/dp-pod", (2, 0, 0, 0)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    assert_eq!(workloads(r), want);

    // A template's claims are one row per template, one claim per pod.
    let trainer = &workload(r, "ml/Deployment/trainer")["dra"]["claims"];
    assert_eq!(
        trainer,
        &serde_json::json!([{"how": "template", "name": "one-gpu", "claims": 2, "allocated": 2, "gpus": 2}])
    );
    // The shared claim names its consumers; they hold nothing of their own.
    let shared = &workload(r, "serve/ResourceClaim/shared-gpu");
    assert_eq!(
        shared["dra"]["consumers"],
        serde_json::json!(["serve/web-a", "serve/web-b"])
    );
    assert_eq!(shared["pods_bound"], 2);
    // The extended-resource claim is the limit, counted once and named.
    let ext = &workload(r, "serve/Pod/ext")["dra"]["claims"][0];
    assert_eq!(
        (&ext["how"], &ext["name"]),
        (
            &"extended-resource".into(),
            &"ext-extended-resources-e7".into()
        )
    );
    // MIG by profile, from the allocated device and from the request's selector.
    assert_eq!(
        workload(r, "ml/Pod/mig-pod")["other_gpus"]["nvidia.com/mig-3g.20gb"],
        1
    );
    assert_eq!(
        workload(r, "ml/Pod/two-req")["other_gpus"]["nvidia.com/mig-1g.5gb"],
        1
    );
    let mig: BTreeMap<String, (u64, u64)> = r["fleet"]["other_gpus"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["resource"].as_str().unwrap().to_string(),
                (
                    o["requested"].as_u64().unwrap(),
                    o["pending"].as_u64().unwrap(),
                ),
            )
        })
        .collect();
    assert_eq!(mig.get("nvidia.com/mig-3g.20gb"), Some(&(1, 0)));
    // With dynamic MIG no profile has a fixed capacity: unknown, with why, never 0.
    for o in r["fleet"]["other_gpus"].as_array().unwrap() {
        assert!(o["capacity"].is_null() && o["allocatable"].is_null(), "{o}");
    }
    let why = r["fleet"]["unknown"]["other_gpus.capacity"]
        .as_str()
        .unwrap();
    assert!(why.contains("dynamic MIG (n-mig)"), "{why}");
    assert_eq!(mig.get("nvidia.com/mig-1g.5gb"), Some(&(0, 1)));

    // Tenants: the shared claim's GPU is its namespace's tenant's, once.
    let tenants: BTreeMap<&str, (u64, u64)> = r["tenants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap(),
                (
                    t["gpus_requested"].as_u64().unwrap(),
                    t["gpus_pending"].as_u64().unwrap(),
                ),
            )
        })
        .collect();
    assert_eq!(
        tenants,
        BTreeMap::from([("research", (7, 2)), ("serving", (4, 0))])
    );
    // The nodes read from slices are GPU models too.
    let models: BTreeMap<&str, u64> = r["fleet"]["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["model"].as_str().unwrap(),
                m["capacity"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(models.get("NVIDIA H100 80GB HBM3"), Some(&8));
    assert_eq!(models.get("NVIDIA L4"), Some(&2));
}

#[test]
fn a_dra_fleet_from_a_snapshot_counts_claims_once_and_slices_as_gpus() {
    assert_dra_figures(&json(&snapshot_inventory(CLUSTER, "json")));
}

#[test]
fn the_table_and_the_metrics_tell_dra_from_the_device_plugin() {
    let text = snapshot_inventory(CLUSTER, "table");
    for want in [
        "12 read from DRA ResourceSlices",
        "9 through DRA claims, the rest through the device plugin",
        "GPUs through Dynamic Resource Allocation",
        "ext-extended-resources-e7",
        "Part of what DRA hands out could not be counted",
    ] {
        assert!(text.contains(want), "{want:?} not in:\n{text}");
    }
    let metrics = snapshot_inventory(CLUSTER, "prometheus");
    for want in [
        "gpuledger_fleet_gpus_by_source{tier=\"capacity\",source=\"dra\"} 12\n",
        "gpuledger_fleet_gpus_by_source{tier=\"capacity\",source=\"device-plugin\"} 4\n",
        "gpuledger_fleet_gpus_by_source{tier=\"requested\",source=\"dra\"} 9\n",
        "gpuledger_fleet_gpus_by_source{tier=\"requested\",source=\"device-plugin\"} 2\n",
        "gpuledger_fleet_dra_claims{state=\"allocated\"} 8\n",
        "gpuledger_fleet_dra_uncounted 1\n",
    ] {
        assert!(metrics.contains(want), "{want:?} not in:\n{metrics}");
    }
}

/// Runs the real kubectl against the emulator.
fn kubectl(emu: &Emulator, args: &[&str]) -> String {
    let out = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(emu.kubeconfig_path())
        .arg("--cache-dir")
        .arg(emu.dir().join("kubectl-cache"))
        .args(args)
        .env_remove("KUBECONFIG")
        .output()
        .unwrap_or_else(|e| panic!("kubectl is required (install it on PATH): {e}"));
    assert!(
        out.status.success(),
        "kubectl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `kind/name` of every document of `kind` in `file`, by a text scan (not the tool's parser).
fn names_in(file: &str, kind: &str, resource: &str) -> Vec<String> {
    let text = std::fs::read_to_string(fixture(file)).unwrap();
    let mut out: Vec<String> = text
        .split("\n---\n")
        .filter(|d| d.lines().any(|l| l == format!("kind: {kind}")))
        .map(|d| {
            let name = d.lines().find_map(|l| l.strip_prefix("  name: ")).unwrap();
            format!("{resource}/{name}")
        })
        .collect();
    out.sort();
    out
}

fn live(emu: &Emulator, format: &str) -> String {
    let out = gpuledger(&root())
        .args(["inventory", "--format", format, "--kubeconfig"])
        .arg(emu.kubeconfig_path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn a_dra_fleet_through_the_api_is_its_snapshot() {
    let emu = Emulator::start(EmulatorOptions::snapshot(fixture(CLUSTER)));
    // kubectl sees the DRA objects the fixture holds, cluster-scoped and namespaced.
    for (kind, resource, scope) in [
        ("ResourceSlice", "resourceslice.resource.k8s.io", &[][..]),
        ("DeviceClass", "deviceclass.resource.k8s.io", &[][..]),
        (
            "ResourceClaim",
            "resourceclaim.resource.k8s.io",
            &["-A"][..],
        ),
        (
            "ResourceClaimTemplate",
            "resourceclaimtemplate.resource.k8s.io",
            &["-A"][..],
        ),
    ] {
        let plural = match kind {
            "DeviceClass" => "deviceclasses".to_string(),
            k => format!("{}s", k.to_lowercase()),
        };
        let mut args = vec!["get", plural.as_str(), "-o", "name"];
        args.extend(scope);
        let mut got: Vec<String> = kubectl(&emu, &args).lines().map(String::from).collect();
        got.sort();
        assert_eq!(got, names_in(CLUSTER, kind, resource), "{kind}");
    }
    // gpuledger lists them through the same API and counts as from the file.
    let r = json(&live(&emu, "json"));
    assert_dra_figures(&r);
    assert_eq!(r["complete"], true);
    for p in [
        "resourceclaims",
        "resourceclaimtemplates",
        "resourceslices",
        "deviceclasses",
    ] {
        assert!(
            emu.requests().iter().any(|q| q
                .path()
                .starts_with(&format!("/apis/resource.k8s.io/v1/{p}"))),
            "{p} was not listed"
        );
    }
    // `snapshot` writes them too, and its file reads back to the same figures.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("fleet.json");
    let out = gpuledger(&root())
        .args(["snapshot", "--kubeconfig"])
        .arg(emu.kubeconfig_path())
        .arg("--output")
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let written = json(&std::fs::read_to_string(&file).unwrap());
    let kinds: std::collections::BTreeSet<&str> = written["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|o| o["kind"].as_str())
        .collect();
    for k in [
        "ResourceClaim",
        "ResourceClaimTemplate",
        "ResourceSlice",
        "DeviceClass",
    ] {
        assert!(kinds.contains(k), "{k} not in the snapshot: {kinds:?}");
    }
    let back = gpuledger(&root())
        .args(["inventory", "--format", "json", "--snapshot"])
        .arg(&file)
        .output()
        .unwrap();
    assert_dra_figures(&json(&String::from_utf8(back.stdout).unwrap()));
}

#[test]
fn a_v1beta1_cluster_is_read_like_a_v1_one() {
    // A 1.32/1.33 cluster serves resource.k8s.io at v1beta1: exact fields on the request, a
    // device's attributes under `basic`.
    let emu = Emulator::start(EmulatorOptions::snapshot(fixture(V1BETA1)));
    let got = kubectl(&emu, &["get", "resourceslices", "-o", "name"]);
    assert_eq!(got, "resourceslice.resource.k8s.io/n1-gpu.nvidia.com-b1\n");
    let r = json(&live(&emu, "json"));
    assert!(
        emu.requests().iter().any(|q| q
            .path()
            .starts_with("/apis/resource.k8s.io/v1beta1/resourceclaims")),
        "claims not listed at v1beta1"
    );
    let from_file = json(&snapshot_inventory(V1BETA1, "json"));
    for r in [&r, &from_file] {
        let g = &r["fleet"]["gpus"];
        // 3 GPUs on n1 from its slice; train: 2 pods × 1 claim of 1; solo: a claim of 2 allocated.
        assert_eq!(
            [
                &g["capacity"],
                &g["allocatable"],
                &g["requested"],
                &g["pending"]
            ],
            [3, 3, 3, 1]
        );
        assert_eq!(r["fleet"]["dra"]["requested_from_claims"], 3);
        assert_eq!(r["fleet"]["dra"]["pending_from_claims"], 1);
    }
}

/// The upstream DRA manifests in `../shared/corpus/dra` (the NVIDIA DRA driver's demo specs and
/// the example driver's): per file, each GPU workload as `namespace/Kind/name declared/pending`
/// with its other devices, worked out by hand from the rules (no pod is bound: all is pending or
/// declared; a file without pods leaves pending unknown). A missing corpus fails, as in `corpus.rs`.
const CORPUS: &[(&str, &[&str], &str)] = &[
    ("admin-access.yaml", &[], "admin access holds no device"),
    (
        "channel-injection-all.yaml",
        &[],
        "a ComputeDomain's channels are not GPUs",
    ),
    (
        "gpu-job-rct.yaml",
        &["/Job/gpu-job-rct 1/null"],
        "parallelism 1 × a 1-GPU template claim",
    ),
    (
        "gpu-test1.yaml",
        &["gpu-test1/Pod/pod1 1/1", "gpu-test1/Pod/pod2 1/1"],
        "a template claim per pod",
    ),
    (
        "gpu-test2.yaml",
        &["gpu-test2/Pod/pod 1/1"],
        "two containers on one claim",
    ),
    (
        "gpu-test3.yaml",
        &["gpu-test3/ResourceClaim/single-gpu 1/1"],
        "one claim shared by two pods, once",
    ),
    (
        "gpu-test4.yaml",
        &[
            "gpu-test4/Deployment/pod 0/null nvidia.com/mig-1g.5gb=8 nvidia.com/mig-2g.10gb=4 nvidia.com/mig-3g.20gb=4",
        ],
        "4 replicas × four MIG requests by profile",
    ),
    (
        "gpu-test5.yaml",
        &["gpu-test5/Pod/pod0 2/2"],
        "two requests in one claim; sharing within the claim",
    ),
    (
        "gpu-test6.yaml",
        &["gpu-test6/Deployment/pod 4/null"],
        "4 replicas × 1",
    ),
    ("gpu-test8.yaml", &["gpu-test8/Pod/gpu-pod 2/2"], "count 2"),
    (
        "imex-test1.yaml",
        &[
            "imex-test1/Deployment/deployment0 2/null",
            "imex-test1/Deployment/deployment1 2/null",
            "imex-test1/Deployment/deployment2 2/null",
            "imex-test1/Deployment/deployment3 2/null",
        ],
        "2 replicas × 1 GPU each; the shared IMEX channel claims are not GPUs",
    ),
    (
        "memory-sharing.yaml",
        &[
            "gpu-share-memory/Deployment/memory-sharing null/null gpu.nvidia.com (shared capacity)=2 uncounted",
        ],
        "a share of a GPU's memory: whole GPUs unknown",
    ),
    (
        "mig-1g-12gb.yaml",
        &["extended-resource-mig-1g12gb/Pod/mig-1g12gb-pod 0/0 nvidia.com/mig-1g.12gb=1"],
        "an extended-resource MIG limit",
    ),
    (
        "nvbandwidth-test-job.yaml",
        &["/MPIJob/nvbandwidth-test 8/null"],
        "4 workers × 2; channels are not GPUs",
    ),
    (
        "prioritized-alternatives.yaml",
        &[
            "prioritized-alternatives/Pod/pod0 0/0 gpu.example.com=1",
            "prioritized-alternatives/Pod/pod1 0/0 gpu.example.com=1",
        ],
        "firstAvailable of another driver's class: other devices, never GPUs",
    ),
];

#[test]
fn the_dra_corpus_counts_as_read_by_hand() {
    let dir = std::env::var_os("GPULEDGER_CORPUS")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| root().join("../shared/corpus"))
        .join("dra");
    assert!(
        dir.is_dir(),
        "no DRA corpus at {}: set GPULEDGER_CORPUS",
        dir.display()
    );
    for (file, want, why) in CORPUS {
        let out = gpuledger(&root())
            .args(["inventory", "--format", "json", "--snapshot"])
            .arg(dir.join(file))
            .output()
            .unwrap();
        // The manifests hold no Node: the report is incomplete for that (exit 2).
        let r = json(&String::from_utf8(out.stdout).unwrap());
        let unread: Vec<&str> = r["incomplete"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|m| m["resource"].as_str())
            .collect();
        // Those without a Pod leave what is pending unknown too (`null`, never 0).
        assert!(
            out.status.code() == Some(2) && unread.contains(&"nodes"),
            "{file}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let got: Vec<String> = r["workloads"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| {
                let mut s = format!(
                    "{}/{}/{} {}/{}",
                    w["namespace"].as_str().unwrap(),
                    w["kind"].as_str().unwrap(),
                    w["name"].as_str().unwrap(),
                    w["gpus_declared"],
                    w["gpus_pending"]
                );
                for (k, n) in w["other_gpus_declared"].as_object().into_iter().flatten() {
                    s.push_str(&format!(" {k}={n}"));
                }
                if w["dra"]["uncounted"]
                    .as_array()
                    .is_some_and(|u| !u.is_empty())
                {
                    s.push_str(" uncounted");
                }
                s
            })
            .collect();
        let mut got = got;
        got.sort();
        assert_eq!(got, *want, "{file}: {why}");
    }
}

/// The fixture's repository (tests/fixtures/dra/repo) as a git repository: `main` without the
/// sweep, `sweep` adding it (allocationMode All: unknown offline), `two` asking the trainer's
/// claim template for 2 GPUs instead of 1.
fn repo() -> super::support::Repo {
    let r = super::support::Repo::new();
    super::drift::copy_dir(&fixture("tests/fixtures/dra/repo"), r.path());
    let sweep = std::fs::read_to_string(r.path().join("ml/sweep.yaml")).unwrap();
    let trainer = std::fs::read_to_string(r.path().join("ml/trainer.yaml")).unwrap();
    r.remove("ml/sweep.yaml").commit("base");
    r.git(&["checkout", "-q", "-b", "sweep"]);
    r.write("ml/sweep.yaml", &sweep)
        .commit("a sweep on every GPU of a node");
    r.git(&["checkout", "-q", "-b", "two", "main"]);
    let two = trainer.replace(
        "exactly: {deviceClassName: gpu.nvidia.com}",
        "exactly: {deviceClassName: gpu.nvidia.com, count: 2}",
    );
    assert_ne!(two, trainer);
    r.write("ml/trainer.yaml", &two)
        .commit("two GPUs a trainer");
    r.git(&["checkout", "-q", "sweep"]);
    r
}

fn run(r: &super::support::Repo, args: &[&str]) -> Value {
    let out = gpuledger(r.path())
        .args(args)
        .args(["--now", "2026-11-30", "--format", "json"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        !text.is_empty(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    json(&text)
}

#[test]
fn a_claim_template_in_git_is_compared_with_the_live_claims() {
    let r = repo();
    let snapshot = fixture(CLUSTER);
    let snapshot = snapshot.to_str().unwrap();
    let d = run(
        &r,
        &["drift", "--repo", ".", "--no-fail", "--snapshot", snapshot],
    );
    let d = &d["drift"];
    let ids = |cat: &str| -> Vec<String> {
        d[cat]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| {
                format!(
                    "{}/{}/{} {}",
                    x["namespace"], x["kind"], x["name"], x["gpus"]
                )
                .replace('"', "")
            })
            .collect()
    };
    // The trainer's template claims (2 pods × 1) and the shared claim (once) are as in Git.
    assert_eq!(
        ids("in_sync"),
        [
            "ml/Deployment/trainer 2",
            "serve/ResourceClaim/shared-gpu 1"
        ]
    );
    // The sweep is not live; what it would take is unknown, not "no GPUs".
    let missing = &d["missing"][0];
    assert_eq!(missing["name"], "sweep");
    assert_eq!(missing["git_shape"], "unknown GPUs (DRA: see uncounted)");
    assert!(missing["gpus_git"].is_null(), "{missing}");
    // So is every sum it is part of: the workload's, its tenant's and the repository's declared
    // GPUs are null with why, never the smaller figure.
    let out = gpuledger(r.path())
        .args(["render", "--repo", ".", "--format", "json"])
        .output()
        .unwrap();
    let r = json(&String::from_utf8_lossy(&out.stdout));
    let desired = &r["desired"];
    let sweep = desired["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["name"] == "sweep")
        .unwrap();
    assert!(sweep["gpus_declared"].is_null(), "{sweep}");
    let tenant = desired["tenants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == sweep["tenant"])
        .unwrap();
    assert!(tenant["gpus_declared"].is_null(), "{tenant}");
    assert!(
        desired["gpus_declared"].is_null(),
        "{}",
        desired["gpus_declared"]
    );
    let why = desired["unknown"]["gpus_declared"]
        .as_str()
        .unwrap_or_default();
    assert!(why.contains("ml/Job/sweep"), "{why}");
    // The web pods use the shared claim: they are its consumers, not unmanaged GPU workloads.
    assert!(
        !ids("unmanaged").iter().any(|x| x.contains("web")),
        "{:?}",
        ids("unmanaged")
    );
}

#[test]
fn the_check_counts_a_claim_templates_gpus_and_leaves_all_unknown() {
    let r = repo();
    let snapshot = fixture(CLUSTER);
    let snapshot = snapshot.to_str().unwrap();
    let check = |head: &str| {
        let j = run(
            &r,
            &[
                "check",
                "--repo",
                ".",
                "--base",
                "main",
                "--head",
                head,
                "--snapshot",
                snapshot,
            ],
        );
        j["check"].clone()
    };
    // Two GPUs a claim instead of one: the trainer's 2 replicas need 2 more.
    let two = check("two");
    assert_eq!(
        (&two["gpus_base"], &two["gpus_head"], &two["gpu_delta"]),
        (&3.into(), &5.into(), &2.into())
    );
    assert_eq!(two["reshaped"].as_array().unwrap().len(), 1);
    assert!(
        two["capacity_unknown"].is_null(),
        "{}",
        two["capacity_unknown"]
    );
    // A workload whose claim takes every GPU of a node: the delta and the fit are unknown, with why.
    let sweep = check("sweep");
    assert!(sweep["gpu_delta"].is_null());
    for field in ["gpu_delta", "capacity"] {
        let why = sweep["unknown"][field].as_str().unwrap_or_default();
        assert!(
            why.contains("ml/Job/sweep") && why.contains("allocationMode All"),
            "{field}: {why}"
        );
    }
    assert!(sweep["capacity"].is_null());
}

#[test]
fn without_the_pods_the_gpus_through_claims_are_unknown_not_zero() {
    // A dump of everything but the pods: the slices still give capacity, but what the claims
    // hold for pods is unknown.
    let text = std::fs::read_to_string(fixture(CLUSTER)).unwrap();
    let docs: Vec<&str> = text
        .split("\n---\n")
        .filter(|d| !d.lines().any(|l| l == "kind: Pod"))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("no-pods.yaml");
    std::fs::write(&file, docs.join("\n---\n")).unwrap();
    let out = gpuledger(&root())
        .args(["inventory", "--format", "json", "--snapshot"])
        .arg(&file)
        .output()
        .unwrap();
    let r = json(&String::from_utf8(out.stdout).unwrap());
    let d = &r["fleet"]["dra"];
    assert_eq!(d["capacity_from_slices"], 12);
    for k in [
        "requested_from_claims",
        "pending_from_claims",
        "claims",
        "claims_allocated",
    ] {
        assert!(d[k].is_null(), "{k}: {}", d[k]);
        assert!(r["fleet"]["unknown"][format!("dra.{k}")].is_string(), "{k}");
    }
    assert!(r["fleet"]["gpus"]["requested"].is_null());
}

#[test]
fn the_planners_pool_counts_slice_gpus_and_claimed_gpus() {
    // 16 placeable GPUs (12 from slices) less the 11 the fleet's workloads hold (9 through claims).
    let out = gpuledger(&root())
        .args([
            "plan",
            "--jobs",
            "fixtures/plan/seed.yaml",
            "--snapshot",
            CLUSTER,
        ])
        .args(["--now", "2026-12-02T12:00:00Z", "--format", "json"])
        .output()
        .unwrap();
    let r = json(&String::from_utf8(out.stdout).unwrap());
    assert_eq!(
        r["plan"]["pool"],
        5,
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        r["sources"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s == "pool: 16 placeable GPUs − 11 held by non-batch workloads = 5"),
        "{}",
        r["sources"]
    );
}

/// Several clusters through several contexts: the fleet's DRA figures are the sum of each
/// cluster's, its nodes and what could not be counted name their cluster, and a device-plugin
/// cluster adds GPUs but nothing through DRA.
#[test]
fn several_clusters_add_their_dra_figures() {
    let emus = [
        (
            "a",
            Emulator::start(EmulatorOptions::snapshot(fixture(CLUSTER))),
        ),
        (
            "b",
            Emulator::start(EmulatorOptions::snapshot(fixture(CLUSTER))),
        ),
        (
            "dp",
            Emulator::start(EmulatorOptions::snapshot(fixture(
                "tests/fixtures/drift/cluster.yaml",
            ))),
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    let kc = dir.path().join("kubeconfig");
    let (mut clusters, mut contexts) = (String::new(), String::new());
    for (name, emu) in &emus {
        clusters.push_str(&format!(
            "- {{name: {name}, cluster: {{server: \"{}\"}}}}\n",
            emu.url()
        ));
        contexts.push_str(&format!(
            "- {{name: {name}, context: {{cluster: {name}, user: u}}}}\n"
        ));
    }
    std::fs::write(
        &kc,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n{clusters}contexts:\n{contexts}current-context: a\nusers: [{{name: u, user: {{token: t}}}}]\n"
        ),
    )
    .unwrap();
    let out = gpuledger(&root())
        .args(["inventory", "--format", "json", "--kubeconfig"])
        .arg(&kc)
        .args(["--context", "a", "--context", "b", "--context", "dp"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = json(&String::from_utf8(out.stdout).unwrap());
    let alone = json(&snapshot_inventory(CLUSTER, "json"));
    let dp = json(&snapshot_inventory(
        "tests/fixtures/drift/cluster.yaml",
        "json",
    ));
    assert!(dp["fleet"]["dra"].is_null(), "{}", dp["fleet"]["dra"]);
    // Each cluster's section is that cluster read alone.
    assert_eq!(r["clusters"][0]["fleet"]["dra"], alone["fleet"]["dra"]);
    assert_eq!(r["clusters"][1]["fleet"]["dra"], alone["fleet"]["dra"]);
    let (d, one) = (&r["fleet"]["dra"], &alone["fleet"]["dra"]);
    for k in [
        "capacity_from_slices",
        "allocatable_from_slices",
        "placeable_from_slices",
        "requested_from_claims",
        "pending_from_claims",
        "claims",
        "claims_allocated",
    ] {
        assert_eq!(d[k], 2 * one[k].as_u64().unwrap(), "{k}");
    }
    assert_eq!(
        d["nodes_from_slices"],
        serde_json::json!([
            "a/n-all", "a/n-dra", "a/n-mig", "b/n-all", "b/n-dra", "b/n-mig"
        ])
    );
    let uncounted: Vec<&str> = d["uncounted"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u.as_str().unwrap())
        .collect();
    assert_eq!(uncounted.len(), 2, "{uncounted:?}");
    assert!(uncounted[0].starts_with("a: ") && uncounted[1].starts_with("b: "));
    assert!(uncounted.iter().all(|u| u.contains("node n-mig")));
    // The fleet's GPUs: both DRA clusters and the device-plugin one.
    for k in ["capacity", "requested", "pending"] {
        let want = 2 * alone["fleet"]["gpus"][k].as_u64().unwrap()
            + dp["fleet"]["gpus"][k].as_u64().unwrap();
        assert_eq!(r["fleet"]["gpus"][k], want, "{k}");
    }
    // The shared claim is one allocation per cluster, and says which.
    let shared: Vec<(&str, u64)> = r["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["name"] == "shared-gpu")
        .map(|w| (w["cluster"].as_str().unwrap(), w["gpus"].as_u64().unwrap()))
        .collect();
    assert_eq!(shared, [("a", 1), ("b", 1)]);
}
