//! The capacity projection judged per GPU model: a workload whose pod templates name a model
//! (`nvidia.com/gpu.product`, by node selector or required node affinity) can only run there, so
//! a change is held against that model's placeable GPUs too, not only the whole fleet's.
//! The fixture: 16 placeable H100s, 32 placeable L4s; `train` pinned to H100 (8 bound), `serve`
//! pinned to L4 (2×2 bound), `batch` unpinned (4 bound on an L4 node), and a pending pod that can
//! only run on an H100 (4).

use serde_json::Value;

use super::drift::copy_dir;
use super::support::{Repo, fixture, gpuledger};

const H100: &str = "NVIDIA-H100-80GB-HBM3";
const L4: &str = "NVIDIA-L4";

/// The fixture's repository on `main`, and a `feature` branch made by `change`.
fn repo(change: impl Fn(&Repo)) -> Repo {
    let r = Repo::new();
    copy_dir(&fixture("tests/fixtures/models/repo"), r.path());
    r.commit("gitops");
    r.git(&["checkout", "-q", "-b", "feature"]);
    change(&r);
    r.commit("the change");
    r.git(&["checkout", "-q", "main"]);
    r
}

/// Sets the replicas of `ml/<name>.yaml` on the current branch.
fn scale(r: &Repo, name: &str, from: u64, to: u64) {
    let path = format!("ml/{name}.yaml");
    let y = std::fs::read_to_string(r.path().join(&path)).unwrap();
    let old = format!("replicas: {from}\n");
    assert!(y.contains(&old), "{y}");
    r.write(&path, &y.replace(&old, &format!("replicas: {to}\n")));
}

fn snapshot() -> String {
    fixture("tests/fixtures/models/cluster.yaml")
        .to_str()
        .unwrap()
        .to_string()
}

/// `check --fail-on capacity` of main..feature against the fixture's cluster: its JSON and
/// whether it exited 0.
fn check(r: &Repo) -> (Value, bool) {
    let s = snapshot();
    let out = gpuledger(r.path())
        .args([
            "check", "--repo", ".", "--base", "main", "--head", "feature",
        ])
        .args([
            "--now",
            "2026-11-30",
            "--snapshot",
            &s,
            "--fail-on",
            "capacity",
        ])
        .args(["--format", "json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    (v, out.status.success())
}

fn model<'a>(cap: &'a Value, name: &str) -> &'a Value {
    cap["by_model"]
        .as_array()
        .unwrap_or_else(|| panic!("no by_model: {cap}"))
        .iter()
        .find(|m| m["model"] == name)
        .unwrap_or_else(|| panic!("no {name}: {cap}"))
}

/// Scaling the H100-pinned workload past the H100s fails the capacity gate, naming the model,
/// although the whole fleet still has room.
#[test]
fn a_change_past_one_models_placeable_fails_though_the_fleet_fits() {
    let r = repo(|r| scale(r, "train", 1, 2));
    let (c, ok) = check(&r);
    let cap = &c["check"]["capacity"];
    // The whole fleet: 20 now (8 + 4 + 4 bound, 4 pending), 28 after, of 48.
    assert_eq!(cap["placeable"], 48, "{cap}");
    assert_eq!(cap["base_projected"], 20, "{cap}");
    assert_eq!(cap["projected"], 28, "{cap}");
    // H100: 8 bound + 4 pending that can only run there, 20 after, of 16.
    let h = model(cap, H100);
    assert_eq!(
        (
            &h["placeable"],
            &h["now"],
            &h["after"],
            &h["fits"],
            &h["touched"]
        ),
        (
            &16.into(),
            &12.into(),
            &20.into(),
            &false.into(),
            &true.into()
        ),
        "{cap}"
    );
    assert_eq!(h["nodes"], 2, "{cap}");
    assert_eq!(cap["fits"], false, "{cap}");
    assert!(!ok, "the capacity gate must fail: {c}");
    let gate = c["check"]["gates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["name"] == "capacity")
        .unwrap();
    assert_eq!(gate["failed"], true, "{gate}");
    let why = gate["why"].as_str().unwrap();
    assert!(
        why.contains(&format!(
            "{H100}: needs 20 of 16 placeable (now 12), over by 4"
        )),
        "{why}"
    );
    let summary = c["check"]["summary"].as_str().unwrap();
    // Said inside the summary's parentheses, with none of its own.
    assert!(
        summary.contains(&format!("(needs 20 {H100} of 16 placeable, now 12)")),
        "{summary}"
    );
    // The markdown says it too.
    let s = snapshot();
    let md = gpuledger(r.path())
        .args([
            "check", "--repo", ".", "--base", "main", "--head", "feature",
        ])
        .args([
            "--now",
            "2026-11-30",
            "--snapshot",
            &s,
            "--fail-on",
            "capacity",
        ])
        .output()
        .unwrap();
    let md = String::from_utf8_lossy(&md.stdout);
    assert!(
        md.contains(&format!("(needs 20 {H100} of 16 placeable, now 12)")),
        "{md}"
    );
}

/// Scaling the L4-pinned workload within the L4s passes, judged against the L4s.
#[test]
fn a_change_within_its_models_placeable_passes() {
    let r = repo(|r| scale(r, "serve", 2, 4));
    let (c, ok) = check(&r);
    let cap = &c["check"]["capacity"];
    // L4: serve's 4 and batch's 4 (unpinned, bound on an L4 node); serve moves 4 → 8.
    let l = model(cap, L4);
    assert_eq!(
        (
            &l["placeable"],
            &l["now"],
            &l["after"],
            &l["fits"],
            &l["touched"]
        ),
        (
            &32.into(),
            &8.into(),
            &12.into(),
            &true.into(),
            &true.into()
        ),
        "{cap}"
    );
    // The H100s are listed, unmoved and untouched.
    let h = model(cap, H100);
    assert_eq!(
        (&h["now"], &h["after"], &h["touched"]),
        (&12.into(), &12.into(), &false.into())
    );
    assert_eq!(cap["fits"], true, "{cap}");
    assert!(ok, "{c}");
}

/// An unpinned workload is judged against the whole fleet only: it moves no model's figures,
/// even when it needs more than one model has.
#[test]
fn an_unpinned_change_is_judged_against_the_whole_fleet() {
    let r = repo(|r| scale(r, "batch", 1, 6));
    let (c, ok) = check(&r);
    let cap = &c["check"]["capacity"];
    assert_eq!(cap["projected"], 40, "{cap}");
    assert_eq!(cap["fits"], true, "{cap}");
    for m in cap["by_model"].as_array().unwrap() {
        assert_eq!(m["touched"], false, "{cap}");
        assert_eq!(m["now"], m["after"], "{cap}");
    }
    assert!(ok, "{c}");
}

/// A workload pinned to a model no node has cannot be placed: 0 placeable is a read figure.
#[test]
fn a_workload_pinned_to_a_model_no_node_has_cannot_be_placed() {
    let r = repo(|r| {
        let y = std::fs::read_to_string(r.path().join("ml/train.yaml")).unwrap();
        r.write(
            "ml/b200.yaml",
            &y.replace("name: train", "name: b200")
                .replace("app: train", "app: b200")
                .replace(H100, "NVIDIA-B200"),
        );
    });
    let (c, ok) = check(&r);
    let cap = &c["check"]["capacity"];
    let b = model(cap, "NVIDIA-B200");
    assert_eq!(
        (
            &b["nodes"],
            &b["placeable"],
            &b["now"],
            &b["after"],
            &b["fits"]
        ),
        (&0.into(), &0.into(), &0.into(), &8.into(), &false.into()),
        "{cap}"
    );
    assert!(c["check"]["capacity_unknown"].is_null(), "{c}");
    assert!(!ok, "{c}");
    let summary = c["check"]["summary"].as_str().unwrap();
    assert!(summary.contains("no node read has that model"), "{summary}");
}

/// A README-only change projects exactly what the inventory counts, per model too.
#[test]
fn a_readme_only_change_projects_the_inventorys_figures_per_model() {
    let r = repo(|r| {
        r.write("README.md", "# the fleet\n");
    });
    let inv = gpuledger(r.path())
        .args(["inventory", "--snapshot", &snapshot(), "--format", "json"])
        .output()
        .unwrap();
    let inv: Value = serde_json::from_slice(&inv.stdout).unwrap();
    let models = inv["fleet"]["models"].as_array().unwrap();
    assert_eq!(models.len(), 2, "{models:?}");
    let h = models.iter().find(|m| m["model"] == H100).unwrap();
    // The pending pod that can only run on an H100 is that model's pending.
    assert_eq!(
        (&h["requested"], &h["pending"]),
        (&8.into(), &4.into()),
        "{h}"
    );
    let (c, ok) = check(&r);
    let cap = &c["check"]["capacity"];
    let by_model = cap["by_model"].as_array().unwrap();
    assert_eq!(by_model.len(), models.len(), "{cap}");
    for m in models {
        let p = model(cap, m["model"].as_str().unwrap());
        let now = m["requested"].as_u64().unwrap() + m["pending"].as_u64().unwrap();
        assert_eq!(p["placeable"], m["placeable"], "{p} {m}");
        assert_eq!(
            (p["now"].as_u64(), p["after"].as_u64()),
            (Some(now), Some(now)),
            "{p}"
        );
        assert_eq!(p["touched"], false, "{p}");
    }
    assert!(ok, "{c}");
}
