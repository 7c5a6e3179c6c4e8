//! The pipeline as a library: each job run from its specs, without the binary, on the bundled demo
//! and the test scenarios — the typed report, its kind, the notes and the outcome. The CLI tests
//! check the command line; these check what the commands are built on.

use std::path::PathBuf;
use std::sync::Arc;

use gpuledger::live::kube::Progress;
use gpuledger::pipeline::check::CheckJob;
use gpuledger::pipeline::fleet::{FleetSpec, Signals};
use gpuledger::pipeline::input::{LiveSpec, RepoSpec};
use gpuledger::pipeline::plan::PlanJob;
use gpuledger::pipeline::{self, Context, Error, Note, Outcome};
use gpuledger::report::{GateName, Kind};
use gpuledger::util::date::Timestamp;
use serde_json::Value;

use super::check::repo_with_feature_branch;
use super::drift;
use super::support::fixture;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn context(rt: &tokio::runtime::Runtime) -> Context<'_> {
    Context {
        rt,
        progress: Arc::new(Progress::default()),
        actions: Default::default(),
    }
}

fn now() -> Option<Timestamp> {
    Some(Timestamp::parse_now("2026-11-30").unwrap())
}

fn snapshot(rel: &str) -> LiveSpec {
    LiveSpec::Snapshots(vec![fixture(rel)])
}

fn repo_at(path: PathBuf, git_ref: Option<&str>) -> RepoSpec {
    RepoSpec {
        path,
        git_ref: git_ref.map(str::to_string),
        repo_urls: Vec::new(),
        render_timeout: std::time::Duration::from_secs(60),
        cluster: None,
        cluster_hint: None,
        // The fixtures name no remote source; nothing may reach the network.
        remote: gpuledger::desired::remote::Options {
            offline: true,
            cache_dir: None,
        },
        base_hosts: None,
    }
}

fn expected() -> Value {
    serde_json::from_str(&std::fs::read_to_string(fixture("fixtures/demo/expected.json")).unwrap())
        .unwrap()
}

#[test]
fn the_demo_inventory_matches_the_oracle_through_the_library() {
    let rt = runtime();
    let spec = FleetSpec {
        config: Some(fixture("fixtures/demo/.gpuledger.yaml")),
        now: now(),
        ..FleetSpec::new(snapshot("fixtures/demo/cluster.yaml"))
    };
    let run = pipeline::inventory::run(&spec, &context(&rt)).unwrap();
    let (r, e) = (&run.report, expected());
    assert_eq!(r.kind, Kind::Inventory);
    assert_eq!(run.outcome, Outcome::Clean);
    let g = &r.fleet.gpus;
    for (name, got) in [
        ("capacity", g.capacity),
        ("allocatable", g.allocatable),
        ("placeable", g.placeable),
        ("requested", g.requested),
        ("pending", g.pending),
        ("gpu_nodes", r.fleet.gpu_nodes),
        ("gpu_namespaces", r.fleet.gpu_namespaces),
        ("public_routes", r.fleet.public_routes),
    ] {
        assert_eq!(Some(got), e[name].as_u64(), "fleet {name}");
    }
    // Without a metrics source, used is unknown with its reason in the report (a source that was
    // never asked for is no failure, so no note).
    assert_eq!(g.used, None);
    assert!(r.fleet.unknown["gpus.used"].contains("no metrics source"));
    assert!(
        run.notes
            .iter()
            .any(|n| matches!(n, Note::ConfigUsed(p) if p.ends_with(".gpuledger.yaml")))
    );
    // The tenants add up to the fleet: one resolution, one sum.
    let tenants: u64 = r.tenants.iter().map(|t| t.gpus_requested).sum();
    assert_eq!(tenants, g.requested);
    let provenance = r.provenance.as_ref().unwrap();
    assert_eq!(provenance.reported_at, now());
}

#[test]
fn drift_is_a_finding_and_the_fixture_drifts_in_every_category() {
    let rt = runtime();
    let r = drift::repo();
    let spec = FleetSpec {
        repo: Some(repo_at(r.path().to_path_buf(), None)),
        now: now(),
        ..FleetSpec::new(snapshot("tests/fixtures/drift/cluster.yaml"))
    };
    let run = pipeline::drift::run(&spec, false, &context(&rt)).unwrap();
    assert_eq!(run.report.kind, Kind::Drift);
    assert_eq!(run.outcome, Outcome::Findings);
    let d = run.report.drift.as_ref().unwrap();
    assert!(d.drifting());
    for (name, rows) in [
        ("unmanaged", &d.unmanaged),
        ("missing", &d.missing),
        ("changed", &d.changed),
        ("in_sync", &d.in_sync),
    ] {
        assert!(!rows.is_empty(), "the fixture has {name} drift");
    }
    // Asked not to fail, the same drift is a clean run with the same report.
    let quiet = pipeline::drift::run(&spec, true, &context(&rt)).unwrap();
    assert_eq!(quiet.outcome, Outcome::Clean);
    assert_eq!(
        serde_json::to_value(&quiet.report.drift).unwrap(),
        serde_json::to_value(&run.report.drift).unwrap()
    );
}

#[test]
fn render_and_drift_read_the_same_desired_state() {
    let rt = runtime();
    let r = drift::repo();
    let repo = repo_at(r.path().to_path_buf(), None);
    let rendered = pipeline::render::run(&repo, None).unwrap();
    assert_eq!(rendered.report.kind, Kind::Render);
    assert_eq!(rendered.outcome, Outcome::Clean);
    let spec = FleetSpec {
        repo: Some(repo),
        now: now(),
        ..FleetSpec::new(snapshot("tests/fixtures/drift/cluster.yaml"))
    };
    let drifted = pipeline::drift::run(&spec, true, &context(&rt)).unwrap();
    let d = drifted.report.drift.unwrap();
    // Every desired workload is missing, changed, in sync or accepted: none is lost between the
    // two jobs, and each carries the GPUs render declares for it.
    let git: Option<u64> = [&d.missing, &d.changed, &d.in_sync, &d.accepted]
        .iter()
        .flat_map(|rows| rows.iter())
        .map(|row| row.gpus_git)
        .sum();
    assert_eq!(git, rendered.report.desired.gpus_declared);
}

#[test]
fn a_check_of_a_feature_branch_offline_and_its_gates() {
    let rt = runtime();
    let r = repo_with_feature_branch();
    let job = CheckJob {
        repo: repo_at(r.path().to_path_buf(), Some("feature")),
        base: Some("main".into()),
        live: None,
        signals: Signals::default(),
        gates: vec![GateName::RenderError, GateName::Capacity],
        config: None,
        now: now(),
        scope: None,
    };
    let run = pipeline::check::run(&job, &context(&rt)).unwrap();
    let c = &run.report.check;
    assert_eq!(run.report.kind, Kind::Check);
    assert_eq!(c.gpu_delta, Some(c.gpus_head as i64 - c.gpus_base as i64));
    assert!(
        c.gpu_delta.unwrap() > 0,
        "the branch adds GPUs: {}",
        c.summary
    );
    // Offline, capacity cannot be judged: the gate fails closed, with why in `unknown`.
    let capacity = c.gates.iter().find(|g| g.name == "capacity").unwrap();
    assert!(capacity.failed && capacity.unknown);
    assert!(c.unknown.contains_key("capacity"));
    assert_eq!(run.outcome, Outcome::Findings);
    assert!(
        run.notes
            .iter()
            .any(|n| matches!(n, Note::GatesFailed(g) if g == &["capacity".to_string()]))
    );
}

#[test]
fn a_check_without_a_base_says_what_to_give() {
    let rt = runtime();
    let r = repo_with_feature_branch();
    let job = CheckJob {
        repo: repo_at(r.path().to_path_buf(), None),
        base: None,
        live: None,
        signals: Signals::default(),
        gates: Vec::new(),
        config: None,
        now: now(),
        scope: None,
    };
    let err = pipeline::check::run(&job, &context(&rt)).unwrap_err();
    assert!(matches!(err, Error::Usage(_)));
    assert!(err.to_string().contains("--base is required"), "{err}");
}

#[test]
fn the_seed_plan_staggers_four_jobs_on_four_gpus() {
    let rt = runtime();
    let job = PlanJob {
        jobs_file: Some(fixture("fixtures/plan/seed.yaml")),
        repo: None,
        live: None,
        pending: false,
        queue: None,
        borrow: false,
        pool: Some(4),
        nodes: Vec::new(),
        objective: gpuledger::plan::Objective::Earliest,
        slot_s: 15 * 60,
        fail_on_miss: true,
        config: None,
        now: Some(Timestamp::parse_now("2026-12-02T12:00:00Z").unwrap()),
    };
    let run = pipeline::plan::run(&job, &context(&rt)).unwrap();
    let p = &run.report.plan;
    assert_eq!(run.report.kind, Kind::Plan);
    assert_eq!(run.outcome, Outcome::Clean);
    assert!(p.feasible);
    assert_eq!((p.peak, p.peak_all_at_once), (4, 8));
}

#[test]
fn a_snapshot_that_does_not_exist_is_an_error_naming_it() {
    let rt = runtime();
    let spec = FleetSpec::new(LiveSpec::Snapshots(vec![PathBuf::from(
        "no/such/fleet.json",
    )]));
    let err = pipeline::inventory::run(&spec, &context(&rt)).unwrap_err();
    assert!(err.to_string().contains("no/such/fleet.json"), "{err}");
}
