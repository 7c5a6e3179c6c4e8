//! One set of numbers: every command run on the same scenario — the drift fixture's cluster and
//! its repository with a feature branch — tells the same tenant for each workload, the same GPUs
//! and the same capacity verdict: `inventory`, `drift`, `render`, `check`, `cost`, `plan`, the drift
//! issue's body and the pull-request comment's body.

use std::collections::BTreeMap;

use serde_json::Value;

use super::check::repo_with_feature_branch;
use super::opencost_fake::{Answer, OpenCost};
use super::support::{Repo, fixture, gpuledger};

fn run(r: &Repo, args: &[&str]) -> String {
    let out = gpuledger(r.path()).args(args).output().unwrap();
    assert!(
        out.status.code().is_some_and(|c| c < 2),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn json(r: &Repo, args: &[&str]) -> Value {
    let out = run(r, &[args, &["--format", "json"]].concat());
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

/// `ns/Kind/name` of a report row.
fn id(w: &Value) -> String {
    format!(
        "{}/{}/{}",
        w["namespace"].as_str().unwrap(),
        w["kind"].as_str().unwrap(),
        w["name"].as_str().unwrap()
    )
}

/// The `| ns/Kind/name | tenant | …` rows of a markdown body: workload → tenant.
fn md_tenants(md: &str) -> BTreeMap<String, String> {
    md.lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let (w, t) = (cells.get(1)?, cells.get(2)?);
            (w.matches('/').count() == 2 && !w.contains(' '))
                .then(|| (w.to_string(), t.to_string()))
        })
        .collect()
}

#[test]
fn every_command_tells_the_same_tenants_gpus_and_verdict() {
    let r = repo_with_feature_branch();
    let snap = fixture("tests/fixtures/drift/cluster.yaml");
    let s = snap.to_str().unwrap();
    let now = ["--now", "2026-11-30"];

    // The live fleet: each workload's tenant and GPUs, the fleet's requested + pending and placeable.
    let inv = json(&r, &[&["inventory", "--snapshot", s][..], &now].concat());
    let live: BTreeMap<String, (Value, Value)> = inv["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| (id(w), (w["tenant"].clone(), w["gpus"].clone())))
        .collect();
    let gpus = &inv["fleet"]["gpus"];
    let (requested, pending, placeable) = (
        gpus["requested"].as_u64().unwrap(),
        gpus["pending"].as_u64().unwrap(),
        gpus["placeable"].as_u64().unwrap(),
    );
    assert!(live.contains_key("llm-prod/DynamoGraphDeployment/llama"));

    // drift: every row's tenant (and a live row's GPUs) as the inventory says; its own inventory
    // section is the same.
    let drift = json(
        &r,
        &[&["drift", "--repo", ".", "--snapshot", s][..], &now].concat(),
    );
    assert_eq!(drift["workloads"], inv["workloads"]);
    let mut tenant_of: BTreeMap<String, Value> = live
        .iter()
        .map(|(k, (t, _))| (k.clone(), t.clone()))
        .collect();
    let mut git_gpus: BTreeMap<String, Value> = BTreeMap::new();
    for cat in ["unmanaged", "missing", "changed", "in_sync", "accepted"] {
        for row in drift["drift"][cat].as_array().unwrap() {
            let k = id(row);
            match live.get(&k) {
                Some((t, g)) => {
                    assert_eq!(&row["tenant"], t, "drift {cat} {k}");
                    assert_eq!(&row["gpus"], g, "drift {cat} {k}");
                }
                None => {
                    tenant_of.insert(k.clone(), row["tenant"].clone());
                }
            }
            git_gpus.insert(k, row["gpus_git"].clone());
        }
    }

    // check with the live state: the tenants of what it changes, each side's GPUs as Git declares
    // them (drift at the base, render at the head), and the fit from the inventory's figures.
    let check = json(
        &r,
        &[
            &[
                "check", "--repo", ".", "--base", "main", "--head", "feature",
            ][..],
            &["--snapshot", s],
            &now,
        ]
        .concat(),
    );
    let c = &check["check"];
    let rendered = json(&r, &["render", "--repo", ".", "--ref", "feature"]);
    let declared: BTreeMap<String, (Value, Value)> = rendered["desired"]["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| (id(w), (w["tenant"].clone(), w["gpus_declared"].clone())))
        .collect();
    // Offline, Git alone names the tenant: the cluster's only where `check.tenancy` says it knows
    // more.
    let offline: BTreeMap<&str, &str> = c["tenancy"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["namespace"].as_str().unwrap(), t["git"].as_str().unwrap()))
        .collect();
    let mut changed = 0;
    for cat in ["added", "removed", "reshaped"] {
        for row in c[cat].as_array().unwrap() {
            changed += 1;
            let k = id(row);
            if let Some(t) = tenant_of.get(&k) {
                assert_eq!(&row["tenant"], t, "check {cat} {k}");
            }
            tenant_of.entry(k.clone()).or_insert(row["tenant"].clone());
            if let Some(g) = git_gpus.get(&k).filter(|_| cat != "added") {
                assert_eq!(&row["gpus_base"], g, "check {cat} {k}: base against drift");
            }
            if let Some((t, g)) = declared.get(&k) {
                assert_eq!(&row["gpus_head"], g, "check {cat} {k}: head against render");
                let ns = row["namespace"].as_str().unwrap();
                let want = offline
                    .get(ns)
                    .copied()
                    .unwrap_or(row["tenant"].as_str().unwrap());
                assert_eq!(t.as_str(), Some(want), "render {k}");
            }
        }
    }
    assert_eq!(changed, 4, "{c}");
    let cap = &c["capacity"];
    assert_eq!(
        cap["base_projected"].as_u64(),
        Some(requested + pending),
        "{cap}"
    );
    assert_eq!(cap["placeable"].as_u64(), Some(placeable), "{cap}");
    let projected = cap["projected"].as_u64().unwrap();
    assert_eq!(cap["fits"], projected <= placeable);

    // cost: the same tenants and GPUs per workload.
    let oc = OpenCost::start(&[("/allocation", Answer::fixture("allocation-gen2.json"))]);
    let cost = json(
        &r,
        &[
            &["cost", "--snapshot", s, "--opencost", &oc.url()][..],
            &["--window", "1h", "--now", "2026-11-30T12:00:00Z"],
        ]
        .concat(),
    );
    for w in cost["cost"]["workloads"].as_array().unwrap() {
        let k = w["name"].as_str().unwrap();
        let (t, g) = &live[k];
        assert_eq!(&w["tenant"], t, "cost {k}");
        assert_eq!(&w["gpus_requested"], g, "cost {k}");
    }
    assert!(!cost["cost"]["workloads"].as_array().unwrap().is_empty());

    // plan: its pool is the same placeable GPUs.
    let plan = json(
        &r,
        &[&["plan", "--repo", ".", "--snapshot", s][..], &now].concat(),
    );
    let pool = plan["sources"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|x| x.as_str().filter(|x| x.starts_with("pool:")))
        .unwrap()
        .to_string();
    assert!(
        pool.starts_with(&format!("pool: {placeable} placeable GPUs")),
        "{pool}"
    );

    // The drift issue and the pull-request comment, as posted.
    let gh = [
        "--github-repo",
        "acme/gitops",
        "--dry-run",
        "--scope",
        "prod",
    ];
    let issue = run(
        &r,
        &[
            &["github", "issue", "--repo", ".", "--snapshot", s][..],
            &gh,
            &now,
        ]
        .concat(),
    );
    let comment = run(
        &r,
        &[
            &[
                "github", "comment", "--repo", ".", "--base", "main", "--head", "feature",
            ][..],
            &["--snapshot", s, "--pr", "7"],
            &gh,
            &now,
        ]
        .concat(),
    );
    for (what, body) in [("issue", &issue), ("comment", &comment)] {
        let rows = md_tenants(body);
        assert!(!rows.is_empty(), "{what}: {body}");
        for (k, t) in rows {
            let want = tenant_of
                .get(&k)
                .unwrap_or_else(|| panic!("{what}: {k} unknown"));
            assert_eq!(want.as_str(), Some(t.as_str()), "{what} {k}");
        }
    }
    // The fit after and before, each labelled with its own figures.
    let fit = |need: u64| match placeable.checked_sub(need) {
        Some(spare) => format!("{spare} spare"),
        None => format!("over by {}", need - placeable),
    };
    let (before, spare_after) = (requested + pending, fit(projected));
    let already = if before > placeable { "already " } else { "" };
    assert!(
        comment.contains(&format!(
            "{projected} of {placeable} placeable GPUs after this change, {spare_after}; before it {before} ({requested} requested + {pending} pending), {already}{}",
            fit(before)
        )),
        "{comment}"
    );
}
