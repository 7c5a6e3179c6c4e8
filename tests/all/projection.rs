//! The capacity projection of `check` is the cluster after the change syncs: what the inventory
//! counts now (requested + pending), with only the workloads the change touches moved from their
//! base shape to their head shape.

use serde_json::Value;

use super::drift::copy_dir;
use super::support::{Repo, fixture, gpuledger};

/// The drift fixture's repository on `main`, and a `feature` branch made by `change`.
fn repo(change: impl Fn(&Repo)) -> Repo {
    let r = Repo::new();
    copy_dir(&fixture("tests/fixtures/drift/repo"), r.path());
    r.commit("gitops");
    r.git(&["checkout", "-q", "-b", "feature"]);
    change(&r);
    r.commit("the change");
    r.git(&["checkout", "-q", "main"]);
    r
}

fn json(r: &Repo, args: &[&str]) -> Value {
    let out = gpuledger(r.path())
        .args(args)
        .args(["--format", "json"])
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)))
}

fn snapshot() -> String {
    fixture("tests/fixtures/drift/cluster.yaml")
        .to_str()
        .unwrap()
        .to_string()
}

fn check(r: &Repo, live: bool) -> Value {
    let s = snapshot();
    let mut args = vec![
        "check",
        "--repo",
        ".",
        "--base",
        "main",
        "--head",
        "feature",
        "--now",
        "2026-11-30",
    ];
    if live {
        args.extend(["--snapshot", s.as_str()]);
    }
    json(r, &args)
}

/// A change that touches no workload projects exactly what the inventory counts.
#[test]
fn a_readme_only_change_projects_what_the_inventory_counts() {
    let r = repo(|r| {
        r.write("README.md", "# the fleet\n");
    });
    let inv = json(&r, &["inventory", "--snapshot", &snapshot()]);
    let gpus = &inv["fleet"]["gpus"];
    let now = gpus["requested"].as_u64().unwrap() + gpus["pending"].as_u64().unwrap();
    let c = check(&r, true);
    let cap = &c["check"]["capacity"];
    assert_eq!(cap["projected"].as_u64(), Some(now), "{cap}");
    assert_eq!(cap["base_projected"].as_u64(), Some(now), "{cap}");
    assert_eq!(cap["placeable"], gpus["placeable"], "{cap}");
    assert_eq!(cap["live_requested"], gpus["requested"]);
    assert_eq!(cap["fits"], now <= gpus["placeable"].as_u64().unwrap());
    assert_eq!(cap["moved"], serde_json::json!([]));
    // Offline there is no cluster to project: unknown, with why.
    let c = check(&r, false);
    assert!(c["check"]["capacity"].is_null());
    assert_eq!(c["check"]["capacity_unknown"], "no live state given");
}

/// A scale-up moves only the graph it reshapes, by what it does to its shape; what
/// holds no GPUs now (a finished Job, a parked model, a CronJob between runs) stays out.
#[test]
fn a_scale_up_moves_only_the_workload_it_reshapes() {
    let r = repo(|r| {
        let overlay =
            std::fs::read_to_string(r.path().join("serving/overlays/prod/kustomization.yaml"))
                .unwrap();
        r.write(
            "serving/overlays/prod/kustomization.yaml",
            &overlay.replace("value: 8", "value: 10"),
        );
    });
    let inv = json(&r, &["inventory", "--snapshot", &snapshot()]);
    let gpus = &inv["fleet"]["gpus"];
    let now = gpus["requested"].as_u64().unwrap() + gpus["pending"].as_u64().unwrap();
    let llama = inv["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["namespace"] == "llm-prod" && w["name"] == "llama")
        .unwrap();
    let held = llama["gpus"].as_u64().unwrap() + llama["gpus_pending"].as_u64().unwrap();
    let c = check(&r, true);
    let reshaped = c["check"]["reshaped"].as_array().unwrap();
    assert_eq!(reshaped.len(), 1, "{reshaped:?}");
    let (base, head) = (
        reshaped[0]["gpus_base"].as_u64().unwrap(),
        reshaped[0]["gpus_head"].as_u64().unwrap(),
    );
    // The cluster runs the graph below Git's shape: the change moves it by head − base.
    assert!(
        held > 0 && held < base && head > base,
        "{held} {base} {head}"
    );
    let after = held + head - base;
    let cap = &c["check"]["capacity"];
    assert_eq!(cap["base_projected"].as_u64(), Some(now), "{cap}");
    assert_eq!(cap["projected"].as_u64(), Some(now + head - base), "{cap}");
    assert_eq!(
        cap["moved"],
        serde_json::json!([format!(
            "llm-prod/DynamoGraphDeployment/llama {held} → {after}"
        )]),
        "{cap}"
    );
}
