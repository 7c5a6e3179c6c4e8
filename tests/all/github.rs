//! `gpuledger github comment` and `gpuledger github issue`, driven exactly as the Actions runner
//! drives a step — event payload, `GITHUB_*` variables, summary and output files — against a fake
//! GitHub (tests/support/github.rs) that keeps state like the real one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::Value;

use super::check::{PARKED_NOTHING, repo_with_feature_branch};
use super::drift::copy_dir;
use super::support::{Repo, fixture, gpuledger};
use crate::github_fake::{self, FakeGitHub, Issue, REPO, TOKEN};

/// Sets pull request 7 of the fake to the repository's `feature` head, as a push would.
fn sync_pull(hub: &FakeGitHub, r: &Repo) {
    hub.state()
        .add_pull(7, r.git(&["rev-parse", "feature"]).trim());
}

/// One runner job: its temp dir holds the event, the summary, the outputs and RUNNER_TEMP.
struct Job {
    tmp: tempfile::TempDir,
    api: String,
    /// `GITHUB_GRAPHQL_URL`; GitHub Enterprise Server runners are tested without it.
    graphql: Option<String>,
    /// Each run of a job is a new workflow run: 4242, 4243, …
    run: AtomicU64,
}

impl Job {
    fn new(hub: &FakeGitHub) -> Job {
        Job {
            tmp: tempfile::tempdir().unwrap(),
            api: hub.url(),
            graphql: Some(format!("{}/graphql", hub.url())),
            run: AtomicU64::new(4242),
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.tmp.path().join(name)
    }

    /// The `pull_request` payload for the repository's `main` → `feature`.
    fn pull_request(&self, r: &Repo, fork: bool) -> PathBuf {
        let text = std::fs::read_to_string(fixture("tests/fixtures/github/pull_request.json"))
            .unwrap()
            .replace("HEAD_SHA", r.git(&["rev-parse", "feature"]).trim())
            .replace("BASE_SHA", r.git(&["rev-parse", "main"]).trim())
            .replace(
                "HEAD_REPO",
                if fork {
                    "someone/gitops"
                } else {
                    "acme/gitops"
                },
            )
            .replace(
                "HEAD_LABEL",
                if fork {
                    "someone:feature"
                } else {
                    "acme:feature"
                },
            )
            .replace("HEAD_FORK", if fork { "true" } else { "false" });
        let p = self.path("event.json");
        std::fs::write(&p, text).unwrap();
        p
    }

    /// The binary with the runner's environment; the summary and output files start empty.
    fn run(&self, dir: &Path, event: &Path, event_name: &str, args: &[&str]) -> Output {
        std::fs::write(self.path("summary.md"), "").unwrap();
        std::fs::write(self.path("output"), "").unwrap();
        let mut c = gpuledger(dir);
        for (k, _) in std::env::vars() {
            if k.starts_with("GITHUB_") || k.starts_with("RUNNER_") {
                c.env_remove(k);
            }
        }
        if let Some(g) = &self.graphql {
            c.env("GITHUB_GRAPHQL_URL", g);
        }
        let run = self.run.fetch_add(1, Ordering::Relaxed);
        c.env("GITHUB_ACTIONS", "true")
            .env("CI", "true")
            .env("GITHUB_EVENT_NAME", event_name)
            .env("GITHUB_EVENT_PATH", event)
            .env("GITHUB_REPOSITORY", REPO)
            .env("GITHUB_API_URL", &self.api)
            .env("GITHUB_SERVER_URL", "https://github.com")
            .env("GITHUB_RUN_ID", run.to_string())
            .env("GITHUB_RUN_ATTEMPT", "1")
            .env("GITHUB_ACTOR", "alice")
            .env("GITHUB_WORKSPACE", dir)
            .env("GITHUB_STEP_SUMMARY", self.path("summary.md"))
            .env("GITHUB_OUTPUT", self.path("output"))
            .env("RUNNER_TEMP", self.tmp.path())
            .env("GITHUB_TOKEN", TOKEN)
            .args(args);
        let out = c.output().unwrap();
        let (o, e) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(
            !o.contains(TOKEN) && !e.contains(TOKEN),
            "the token was printed:\n{o}\n{e}"
        );
        out
    }

    fn summary(&self) -> String {
        std::fs::read_to_string(self.path("summary.md")).unwrap()
    }

    /// The `name<<DELIM … DELIM` blocks of the output file.
    fn outputs(&self) -> BTreeMap<String, String> {
        let text = std::fs::read_to_string(self.path("output")).unwrap();
        let mut out = BTreeMap::new();
        let mut lines = text.lines();
        while let Some(head) = lines.next() {
            let (name, delim) = head.split_once("<<").expect("heredoc form");
            let value: Vec<&str> = lines.by_ref().take_while(|l| *l != delim).collect();
            out.insert(name.to_string(), value.join("\n"));
        }
        out
    }
}

fn text(o: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn snapshot_file() -> String {
    fixture("tests/fixtures/drift/cluster.yaml")
        .display()
        .to_string()
}

/// A repository on `feature` (the working tree is the head) and a fake GitHub with pull request 7.
fn pr_setup() -> (Repo, FakeGitHub) {
    let r = repo_with_feature_branch();
    r.git(&["checkout", "-q", "feature"]);
    // The new model is put behind a public route: the comment shows the routing blast radius.
    r.write(
        "batch/new-model.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: new-model, namespace: research}\nspec:\n  replicas: 1\n  template:\n    metadata: {labels: {app: new-model}}\n    spec:\n      containers: [{name: main, resources: {limits: {nvidia.com/gpu: \"8\"}}}]\n",
    )
    .write(
        "batch/new-model-route.yaml",
        "apiVersion: v1\nkind: Service\nmetadata: {name: new-model, namespace: research}\nspec: {selector: {app: new-model}, ports: [{port: 80}]}\n---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: new-model\n  namespace: research\n  annotations: {alb.ingress.kubernetes.io/scheme: internet-facing, alb.ingress.kubernetes.io/group.name: models}\nspec:\n  ingressClassName: alb\n  rules:\n  - host: models.example.com\n    http: {paths: [{path: /new, pathType: Prefix, backend: {service: {name: new-model, port: {number: 80}}}}]}\n",
    )
    .commit("put the new model behind models.example.com/new");
    let hub = FakeGitHub::start();
    sync_pull(&hub, &r);
    (r, hub)
}

fn comment(job: &Job, r: &Repo, event: &Path, extra: &[&str]) -> Output {
    let snap = snapshot_file();
    let mut args = vec![
        "github",
        "comment",
        "--snapshot",
        &snap,
        "--scope",
        "prod",
        "--now",
        "2026-11-30",
    ];
    args.extend_from_slice(extra);
    job.run(r.path(), event, "pull_request", &args)
}

/// A body with the commit and time that vary per run replaced, for snapshots.
fn stable(body: &str, r: &Repo) -> String {
    let head = r.git(&["rev-parse", "feature"]);
    let head = head.trim();
    let base = r.git(&["rev-parse", "main"]);
    let base = base.trim();
    // Full shas first, then the 12-character one of the footer, then the 7-character ones of the
    // title line.
    let mut s = body
        .replace(head, "HEAD_SHA")
        .replace(&head[..12], "HEAD_SHORT")
        .replace(base, "BASE_SHA")
        .replace(&head[..7], "HEAD_7")
        .replace(&base[..7], "BASE_7");
    // The commit time, and the report digest (the report names the base commit).
    for (attr, with) in [("valid-at=\"", "VALID_AT"), ("report=\"", "REPORT_DIGEST")] {
        if let Some(i) = s.find(attr) {
            let from = i + attr.len();
            let end = s[from..].find('"').unwrap() + from;
            s.replace_range(from..end, with);
        }
    }
    s
}

#[test]
fn first_run_creates_the_comment_with_summary_outputs_and_warnings() {
    let (r, hub) = pr_setup();
    let job = Job::new(&hub);
    let event = job.pull_request(&r, false);
    let out = comment(&job, &r, &event, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));

    let s = hub.state();
    let comments = s.comments_on(7);
    assert_eq!(comments.len(), 1);
    let body = &comments[0].body;
    let head = r.git(&["rev-parse", "feature"]);
    // valid-at is the head commit's committer time, read from the repository.
    let committed = r.git(&["show", "-s", "--format=%ct", "feature"]);
    let committed: i64 = committed.trim().parse().unwrap();
    let first = body.lines().next().unwrap();
    assert!(
        first.starts_with(&format!(
            "<!-- gpuledger:comment scope=\"prod\" head=\"{}\" valid-at=\"",
            head.trim()
        )),
        "{first}"
    );
    let valid_at = first
        .split("valid-at=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap();
    assert_eq!(
        valid_at,
        gpuledger::util::date::Timestamp::from_unix(committed).to_string()
    );
    assert!(s.requests.iter().all(|q| q.authorized));
    insta::assert_snapshot!("pr_comment", stable(body, &r));
    drop(s);

    // The full report is in the job summary; the figures in the outputs match the JSON report.
    assert!(job.summary().contains("## GPU impact of this change"));
    let o = job.outputs();
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(&o["report_path"]).unwrap()).unwrap();
    let c = &report["check"];
    assert_eq!(o["gpu_delta"], "16");
    assert_eq!(
        o["drift"], "0",
        "new-model is the change, not drift it introduces"
    );
    assert_eq!(
        o["unmanaged_gpus"],
        c["capacity"]["unmanaged_live"].to_string()
    );
    assert_eq!(
        o["coverage"],
        format!("{:.1}", c["coverage_head"].as_f64().unwrap() * 100.0)
    );
    // Warnings on the manifests the change touches, with file and line.
    let stdout = String::from_utf8_lossy(&out.stdout);
    let warnings: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("::warning "))
        .collect();
    assert!(
        warnings.iter().any(
            |w| w.starts_with("::warning file=batch/new-model.yaml,line=")
                && w.contains("GPUs added")
                && !w.contains("introduces drift")
        ),
        "{stdout}"
    );
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("file=serving/") && w.contains("reshaped")),
        "{stdout}"
    );
}

#[test]
fn reruns_update_in_place_skip_identical_and_never_overwrite_a_newer_commit() {
    let (r, hub) = pr_setup();
    let job = Job::new(&hub);
    let event = job.pull_request(&r, false);
    assert_eq!(comment(&job, &r, &event, &[]).status.code(), Some(0));
    let id = hub.state().comments_on(7)[0].id;

    // Same commit, same report: nothing is written.
    let writes = hub.state().writes().len();
    let out = comment(&job, &r, &event, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        hub.state().writes().len(),
        writes,
        "identical body re-posted"
    );
    assert!(text(&out).contains("already says this"), "{}", text(&out));

    // A new commit on the branch: the same comment is edited.
    r.write(
        "batch/new-model.yaml",
        &std::fs::read_to_string(r.path().join("batch/new-model.yaml"))
            .unwrap()
            .replace("replicas: 1", "replicas: 2"),
    )
    .commit("two replicas");
    sync_pull(&hub, &r);
    let event = job.pull_request(&r, false);
    let out = comment(&job, &r, &event, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let s = hub.state();
    let comments = s.comments_on(7);
    assert_eq!(comments.len(), 1);
    assert_eq!(comments[0].id, id);
    assert!(
        comments[0].body.contains("Adds 24 GPUs"),
        "{}",
        comments[0].body
    );
    assert_eq!(
        s.writes()
            .last()
            .map(|w| (w.method.as_str(), w.path.clone())),
        Some(("PATCH", format!("/repos/{REPO}/issues/comments/{id}")))
    );
    drop(s);

    // A late run for an older commit (no longer the pull request's head) leaves it alone.
    let before = hub.state().comments_on(7)[0].body.clone();
    let writes = hub.state().writes().len();
    let older = r.git(&["rev-parse", "feature~1"]);
    let out = comment(&job, &r, &event, &["--head-sha", older.trim()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("head is now"), "{}", text(&out));
    assert_eq!(hub.state().writes().len(), writes);
    assert_eq!(hub.state().comments_on(7)[0].body, before);
}

/// A push that changes no GPUs: the report is the same, so nothing new is posted even with
/// `--behavior new`; the comment's marker and footer move to the new head, silently.
#[test]
fn a_new_commit_with_the_same_report_posts_nothing_new() {
    let (r, hub) = pr_setup();
    let job = Job::new(&hub);
    let event = job.pull_request(&r, false);
    let first = comment(&job, &r, &event, &["--behavior", "new"]);
    assert_eq!(first.status.code(), Some(0), "{}", text(&first));
    r.write("README.md", "# gitops\n").commit("docs only");
    sync_pull(&hub, &r);
    let event = job.pull_request(&r, false);
    let out = comment(&job, &r, &event, &["--behavior", "new"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let s = hub.state();
    let c = s.comments_on(7);
    assert_eq!(c.len(), 1, "an unchanged report was posted again");
    let head = r.git(&["rev-parse", "feature"]);
    assert!(c[0].body.contains(&format!("head=\"{}\"", head.trim())));
    assert!(c[0].body.contains("runs/4243"), "footer not refreshed");
}

/// Anyone can paste a marker: only the bot's own comments count.
#[test]
fn a_forged_marker_is_ignored() {
    let (r, hub) = pr_setup();
    let forged = "<!-- gpuledger:comment scope=\"prod\" head=\"x\" valid-at=\"2099-01-01T00:00:00Z\" -->\nlgtm";
    let mallory = hub.state().add_comment_by(7, forged, "mallory");
    let job = Job::new(&hub);
    let event = job.pull_request(&r, false);
    let out = comment(&job, &r, &event, &["--behavior", "delete-and-new"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let s = hub.state();
    let c = s.comments_on(7);
    assert_eq!(c.len(), 2);
    assert_eq!((c[0].id, c[0].body.as_str()), (mallory, forged));
    assert!(c[1].body.contains("+16 GPUs"));
}

/// Our comment on the second page of a busy pull request is found through the `Link` header.
#[test]
fn the_comment_is_found_past_the_first_page() {
    let (r, hub) = pr_setup();
    for i in 0..130 {
        hub.state()
            .add_comment_by(7, &format!("review comment {i}"), "alice");
    }
    let job = Job::new(&hub);
    let event = job.pull_request(&r, false);
    assert_eq!(comment(&job, &r, &event, &[]).status.code(), Some(0));
    let id = hub.state().comments_on(7).last().unwrap().id;
    r.write(
        "batch/extra.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: extra, namespace: research}\nspec:\n  replicas: 1\n  template:\n    spec:\n      containers: [{name: main, resources: {limits: {nvidia.com/gpu: \"1\"}}}]\n",
    )
    .commit("extra");
    sync_pull(&hub, &r);
    let event = job.pull_request(&r, false);
    let out = comment(&job, &r, &event, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let s = hub.state();
    let all = s.comments_on(7);
    assert_eq!(all.len(), 131, "a second comment was posted");
    assert_eq!(all.last().unwrap().id, id);
    assert!(all.last().unwrap().body.contains("Adds 17 GPUs"));
    assert!(
        s.requests
            .iter()
            .any(|q| q.path.ends_with("/issues/7/comments") && q.query.contains("page=2"))
    );
}

/// GitHub Enterprise Server: REST under /api/v3, GraphQL at /api/graphql (derived from
/// GITHUB_API_URL), hide-and-new end to end.
#[test]
fn enterprise_server_paths() {
    let r = repo_with_feature_branch();
    r.git(&["checkout", "-q", "feature"]);
    let hub = FakeGitHub::start_enterprise();
    sync_pull(&hub, &r);
    let old = seed_old_report(&hub);
    let mut job = Job::new(&hub);
    job.graphql = None;
    assert!(job.api.ends_with("/api/v3"));
    let event = job.pull_request(&r, false);
    let out = comment(&job, &r, &event, &["--behavior", "hide-and-new"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let s = hub.state();
    assert!(s.comments_on(7).iter().any(|c| c.id == old && c.minimized));
    assert!(s.requests.iter().any(|q| q.path == "/api/graphql"));
    assert!(
        s.requests
            .iter()
            .all(|q| q.path == "/api/graphql" || q.path.starts_with("/api/v3/"))
    );
}

#[test]
fn scope_prod_never_touches_scope_non_prod() {
    let (r, hub) = pr_setup();
    let other = "<!-- gpuledger:comment scope=\"non-prod\" head=\"abc\" valid-at=\"2030-01-01T00:00:00Z\" -->\nnon-prod report";
    let also = "<!-- gpuledger:comment scope=\"prod-eu\" head=\"abc\" valid-at=\"2030-01-01T00:00:00Z\" -->\nprod-eu report";
    let human = "Looks good, but see <!-- gpuledger:comment scope=\"prod\" --> below";
    let ids: Vec<u64> = [other, also, human]
        .iter()
        .map(|b| hub.state().add_comment(7, b))
        .collect();
    let job = Job::new(&hub);
    let event = job.pull_request(&r, false);
    let out = comment(&job, &r, &event, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let s = hub.state();
    let comments = s.comments_on(7);
    assert_eq!(comments.len(), 4);
    for (id, body) in ids.iter().zip([other, also, human]) {
        assert_eq!(comments.iter().find(|c| c.id == *id).unwrap().body, body);
    }
    assert!(
        comments[3]
            .body
            .starts_with("<!-- gpuledger:comment scope=\"prod\"")
    );
}

/// An earlier report for an older commit of the same scope.
fn seed_old_report(hub: &FakeGitHub) -> u64 {
    hub.state().add_comment(
        7,
        "<!-- gpuledger:comment scope=\"prod\" head=\"1111111111111111111111111111111111111111\" valid-at=\"2020-01-01T00:00:00Z\" -->\n## GPU impact of this change\n\n**+0 GPUs**\n",
    )
}

/// Runs the check once with `behavior` over an earlier report; returns the fake and that
/// report's id.
fn over_an_old_report(behavior: &str) -> (FakeGitHub, u64) {
    let (r, hub) = pr_setup();
    let old = seed_old_report(&hub);
    let job = Job::new(&hub);
    let event = job.pull_request(&r, false);
    let out = comment(&job, &r, &event, &["--behavior", behavior]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    (hub, old)
}

#[test]
fn behaviour_new_keeps_the_old_comment() {
    let (hub, old) = over_an_old_report("new");
    let s = hub.state();
    let c = s.comments_on(7);
    assert_eq!(c.len(), 2);
    assert!(c[0].id == old && !c[0].minimized);
    assert!(c[1].body.contains("+16 GPUs"));
}

#[test]
fn behaviour_hide_and_new_minimizes_the_old_comment() {
    let (hub, old) = over_an_old_report("hide-and-new");
    let s = hub.state();
    let c = s.comments_on(7);
    assert_eq!(c.len(), 2);
    assert!(c[0].id == old && c[0].minimized, "old comment not hidden");
    assert!(!c[1].minimized && c[1].body.contains("+16 GPUs"));
    assert!(
        s.requests
            .iter()
            .any(|q| q.method == "POST" && q.path == "/graphql")
    );
}

#[test]
fn behaviour_delete_and_new_deletes_the_old_comment() {
    let (hub, old) = over_an_old_report("delete-and-new");
    let s = hub.state();
    let c = s.comments_on(7);
    assert_eq!(c.len(), 1);
    assert_ne!(c[0].id, old);
    assert!(
        s.requests
            .iter()
            .any(|q| q.method == "DELETE"
                && q.path == format!("/repos/{REPO}/issues/comments/{old}"))
    );
}

#[test]
fn skip_no_change_posts_nothing_for_a_change_without_gpus() {
    let r = repo_with_feature_branch();
    // A feature branch that only touches a README.
    r.git(&["checkout", "-q", "-b", "docs", "main"]);
    r.write("README.md", "# gitops\n").commit("docs");
    r.git(&["branch", "-f", "feature", "docs"]);
    r.git(&["checkout", "-q", "feature"]);
    let hub = FakeGitHub::start();
    sync_pull(&hub, &r);
    let job = Job::new(&hub);
    let event = job.pull_request(&r, false);
    let out = comment(&job, &r, &event, &["--skip-no-change"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        text(&out).contains("nothing posted (--skip-no-change)"),
        "{}",
        text(&out)
    );
    assert!(hub.state().comments_on(7).is_empty());
    assert!(hub.state().writes().is_empty());
    // The summary still has the report.
    assert!(
        job.summary().contains("**Keeps the declared GPUs at"),
        "{}",
        job.summary()
    );

    // An earlier report on the pull request is brought up to date rather than left stale.
    let old = seed_old_report(&hub);
    let out = comment(&job, &r, &event, &["--skip-no-change"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let s = hub.state();
    assert_eq!(s.comments_on(7).len(), 1);
    assert_eq!(s.comments_on(7)[0].id, old);
    assert!(
        s.comments_on(7)[0]
            .body
            .contains("**Keeps the declared GPUs at")
    );
}

#[test]
fn a_fork_read_only_token_degrades_to_summary_and_warning() {
    let (r, hub) = pr_setup();
    hub.state().read_only = true;
    let job = Job::new(&hub);
    let event = job.pull_request(&r, true);
    let out = comment(&job, &r, &event, &["--fail-on", "render-error"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "a 403 is not a failure: {}",
        text(&out)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("::warning title=gpuledger::cannot comment on acme/gitops#7")),
        "{stdout}"
    );
    assert!(hub.state().comments_on(7).is_empty());
    assert!(job.summary().contains("## GPU impact of this change"));
    assert_eq!(job.outputs()["gpu_delta"], "16");
}

/// A read-only token on a pull request from the same repository is a configuration error (the
/// workflow lacks `pull-requests: write`): it fails, it is not hidden as a warning.
#[test]
fn a_read_only_token_without_a_fork_is_an_error() {
    let (r, hub) = pr_setup();
    hub.state().read_only = true;
    let job = Job::new(&hub);
    let event = job.pull_request(&r, false);
    let out = comment(&job, &r, &event, &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("Resource not accessible by integration")
            && text(&out).contains("docs/github.md"),
        "{}",
        text(&out)
    );
    assert!(
        job.summary().contains("## GPU impact"),
        "the report is kept"
    );
}

#[test]
fn a_rate_limit_403_is_waited_out_and_retried() {
    let (r, hub) = pr_setup();
    let reset = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 1;
    hub.state()
        .faults
        .push_back(github_fake::rate_limited(reset));
    let job = Job::new(&hub);
    let event = job.pull_request(&r, false);
    let out = comment(&job, &r, &event, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(hub.state().comments_on(7).len(), 1);
}

#[test]
fn a_502_then_success_is_retried() {
    let (r, hub) = pr_setup();
    hub.state().faults.push_back(github_fake::bad_gateway());
    let job = Job::new(&hub);
    let event = job.pull_request(&r, false);
    let out = comment(&job, &r, &event, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let s = hub.state();
    assert_eq!(s.comments_on(7).len(), 1);
    let (first, second) = (&s.requests[0], &s.requests[1]);
    assert_eq!(
        (first.method.as_str(), second.method.as_str()),
        ("GET", "GET")
    );
    assert_eq!(first.path, second.path, "the 502 was not retried");
    let same = s.requests.iter().filter(|q| q.path == first.path).count();
    assert_eq!(same, 2, "retried more than once");
}

/// A 502 on a create may come after GitHub created it: not repeated (a second comment would be
/// worse than an error; the next run converges).
#[test]
fn a_502_on_a_create_is_not_repeated() {
    let (r, hub) = pr_setup();
    hub.state()
        .post_faults
        .push_back(github_fake::bad_gateway());
    let job = Job::new(&hub);
    let event = job.pull_request(&r, false);
    let out = comment(&job, &r, &event, &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("GitHub answered 502"), "{}", text(&out));
    let posts = hub
        .state()
        .requests
        .iter()
        .filter(|q| q.method == "POST")
        .count();
    assert_eq!(posts, 1);
    // The next run posts it.
    let out = comment(&job, &r, &event, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(hub.state().comments_on(7).len(), 1);
}

#[test]
fn a_429_waits_for_retry_after() {
    let (r, hub) = pr_setup();
    hub.state().faults.push_back(github_fake::too_many(3));
    let job = Job::new(&hub);
    let event = job.pull_request(&r, false);
    let out = comment(&job, &r, &event, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let s = hub.state();
    assert_eq!(s.comments_on(7).len(), 1);
    // The refused request and its retry are the first two, 3 s apart at least.
    let (first, second) = (&s.requests[0], &s.requests[1]);
    assert_eq!(
        (first.path.as_str(), first.method.as_str()),
        (second.path.as_str(), second.method.as_str())
    );
    let gap = second.at.duration_since(first.at);
    assert!(gap >= Duration::from_secs(3), "retried after {gap:?}");
}

#[test]
fn errors_are_clear_and_never_show_the_token() {
    let (r, hub) = pr_setup();
    let job = Job::new(&hub);
    let event = job.pull_request(&r, false);
    // GitHub down for good: bounded retries, then exit 2 naming the call.
    for _ in 0..5 {
        hub.state().faults.push_back(github_fake::bad_gateway());
    }
    let out = comment(&job, &r, &event, &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("GET /repos/acme/gitops/pulls/7")
            && text(&out).contains("gave up after 5 attempts"),
        "{}",
        text(&out)
    );
    // The report was kept before GitHub was called.
    assert!(job.summary().contains("## GPU impact"));
    // No token at all.
    let snap = snapshot_file();
    let mut cmd = gpuledger(r.path());
    let out = cmd
        .env_remove("GITHUB_TOKEN")
        .env("GITHUB_EVENT_PATH", &event)
        .env("GITHUB_API_URL", hub.url())
        .args([
            "github",
            "comment",
            "--snapshot",
            &snap,
            "--github-repo",
            REPO,
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out).contains("no token in $GITHUB_TOKEN"),
        "{}",
        text(&out)
    );
}

#[test]
fn dry_run_prints_the_comment_and_calls_nothing() {
    let (r, hub) = pr_setup();
    let job = Job::new(&hub);
    let event = job.pull_request(&r, false);
    let out = comment(&job, &r, &event, &["--dry-run"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // Under Actions the printed comment is quoted: no line of it acts as a workflow command.
    let stdout = String::from_utf8_lossy(&out.stdout);
    let (first, rest) = stdout.split_once('\n').unwrap();
    let token = first.strip_prefix("::stop-commands::").expect(first);
    assert!(
        rest.starts_with("<!-- gpuledger:comment scope=\"prod\""),
        "{stdout}"
    );
    assert!(rest.ends_with(&format!("::{token}::\n")), "{stdout}");
    assert!(hub.state().requests.is_empty());
}

// ---- the drift issue ----

fn drift_repo() -> Repo {
    let r = Repo::new();
    copy_dir(&fixture("tests/fixtures/drift/repo"), r.path());
    // At a fixed time: the report names the commit, and the snapshot must not change with it.
    r.commit_at("gitops", "2026-11-30T09:00:00Z");
    r
}

fn issue_run(job: &Job, r: &Repo, extra: &[&str]) -> Output {
    let snap = snapshot_file();
    let event = fixture("tests/fixtures/github/schedule.json");
    let mut args = vec![
        "github",
        "issue",
        "--snapshot",
        &snap,
        "--scope",
        "gpu-east",
        "--now",
        "2026-11-30",
    ];
    args.extend_from_slice(extra);
    job.run(r.path(), &event, "schedule", &args)
}

fn tracking(hub: &FakeGitHub) -> Vec<Issue> {
    hub.state()
        .issues
        .iter()
        .filter(|i| {
            i.body
                .starts_with("<!-- gpuledger:issue scope=\"gpu-east\"")
        })
        .cloned()
        .collect()
}

#[test]
fn issue_is_created_updated_closed_and_reopened() {
    let r = drift_repo();
    let hub = FakeGitHub::start();
    // A pull request and an unrelated issue under the same label must not confuse it.
    hub.state().add_issue(
        "bump",
        "<!-- gpuledger:issue scope=\"gpu-east\" drift=\"0\" -->",
        "open",
        &["gpuledger-drift"],
        true,
    );
    hub.state().add_issue(
        "other scope",
        "<!-- gpuledger:issue scope=\"gpu-west\" drift=\"0\" -->\nx",
        "open",
        &["gpuledger-drift"],
        false,
    );
    let job = Job::new(&hub);

    // Drift appears: one issue, labelled, leading with the counts and the tenant table.
    let out = issue_run(&job, &r, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let issues: Vec<Issue> = tracking(&hub)
        .into_iter()
        .filter(|i| !i.pull_request)
        .collect();
    assert_eq!(issues.len(), 1);
    let first = &issues[0];
    assert_eq!(
        (first.title.as_str(), first.state.as_str()),
        ("GPU drift: gpu-east", "open")
    );
    assert_eq!(first.labels, ["gpuledger-drift"]);
    let body = &first.body;
    let pos = |s: &str| body.find(s).unwrap_or_else(|| panic!("{s} not in {body}"));
    // Drift leads; the inventory is folded below it.
    assert!(pos("## GPU drift against Git") < pos("### Unmanaged"));
    assert!(pos("### Unmanaged") < pos("<summary>Fleet inventory"));
    assert!(pos("<summary>Fleet inventory") < pos("### Tenants"));
    assert!(
        !body.contains("### Workloads"),
        "the issue is not the whole inventory"
    );
    // Manifests link to their blobs at the repository's commit.
    let body = body.replace(r.git(&["rev-parse", "HEAD"]).trim(), "HEAD_SHA");
    insta::assert_snapshot!("drift_issue", body);
    // Found through the list API by label, all states; never the search API.
    let s = hub.state();
    assert!(s.requests.iter().any(|q| q.method == "GET"
        && q.path == format!("/repos/{REPO}/issues")
        && q.query.contains("state=all")
        && q.query.contains("labels=gpuledger-drift")));
    assert!(s.requests.iter().all(|q| !q.path.starts_with("/search")));
    drop(s);
    let o = job.outputs();
    assert_eq!(
        (o["drift"].as_str(), o["unmanaged_gpus"].as_str()),
        ("5", "10")
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("::warning file=parked/model.yaml,line="),
        "{stdout}"
    );

    // Nothing changed: nothing written.
    let writes = hub.state().writes().len();
    assert_eq!(issue_run(&job, &r, &[]).status.code(), Some(0));
    assert_eq!(hub.state().writes().len(), writes);

    // The drift set changes (the parked model is gone from Git): body edited, a short comment.
    r.write("parked/model.yaml", PARKED_NOTHING)
        .commit("unpark");
    assert_eq!(issue_run(&job, &r, &[]).status.code(), Some(0));
    let now = tracking(&hub)
        .into_iter()
        .find(|i| i.number == first.number)
        .unwrap();
    assert_ne!(now.body, first.body);
    let comments: Vec<String> = hub
        .state()
        .comments_on(first.number)
        .iter()
        .map(|c| c.body.clone())
        .collect();
    assert_eq!(comments.len(), 1);
    assert!(
        comments[0].starts_with("The drift changed: "),
        "{comments:?}"
    );

    // Every drift accepted: closed as completed, with a comment.
    let accept = gpuledger(r.path())
        .args([
            "drift",
            "--repo",
            ".",
            "--snapshot",
            &snapshot_file(),
            "--now",
            "2026-11-30",
            "--suggest-accept",
        ])
        .output()
        .unwrap();
    let cfg = std::fs::read_to_string(r.path().join(".gpuledger.yaml")).unwrap();
    let accepted = cfg.replacen(
        "accepted_drift:\n",
        &format!(
            "accepted_drift:\n{}",
            String::from_utf8_lossy(&accept.stdout).replace("accepted_drift:\n", "")
        ),
        1,
    );
    r.write(".gpuledger.yaml", &accepted).commit("accept");
    let out = issue_run(&job, &r, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let closed = tracking(&hub)
        .into_iter()
        .find(|i| i.number == first.number)
        .unwrap();
    assert_eq!(
        (closed.state.as_str(), closed.state_reason.as_deref()),
        ("closed", Some("completed"))
    );
    assert_eq!(job.outputs()["drift"], "0");

    // Drift returns: the same issue is reopened, never a second one.
    r.write(".gpuledger.yaml", &cfg).commit("revert");
    let out = issue_run(&job, &r, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let all: Vec<Issue> = tracking(&hub)
        .into_iter()
        .filter(|i| !i.pull_request)
        .collect();
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].state, "open");
    let last = hub
        .state()
        .comments_on(first.number)
        .last()
        .unwrap()
        .body
        .clone();
    assert!(last.starts_with("Drift is back: "), "{last}");
    // The other scope's issue was never touched.
    let west = hub
        .state()
        .issues
        .iter()
        .find(|i| i.title == "other scope")
        .unwrap()
        .clone();
    assert_eq!(
        (west.state.as_str(), west.body.ends_with("\nx")),
        ("open", true)
    );
}

#[test]
fn two_overlapping_runs_leave_one_open_issue() {
    let r = drift_repo();
    let hub = FakeGitHub::start();
    // Both runs list before either creates.
    hub.state().list_delay = Duration::from_millis(1500);
    let (a, b) = (Job::new(&hub), Job::new(&hub));
    let (oa, ob) = std::thread::scope(|s| {
        let ta = s.spawn(|| issue_run(&a, &r, &[]));
        let tb = s.spawn(|| issue_run(&b, &r, &[]));
        (ta.join().unwrap(), tb.join().unwrap())
    });
    assert_eq!(oa.status.code(), Some(0), "{}", text(&oa));
    assert_eq!(ob.status.code(), Some(0), "{}", text(&ob));
    let issues = tracking(&hub);
    let open: Vec<&Issue> = issues.iter().filter(|i| i.state == "open").collect();
    assert_eq!(open.len(), 1, "{issues:#?}");
    assert_eq!(
        open[0].number,
        issues.iter().map(|i| i.number).min().unwrap()
    );
    // The runs did overlap: each created an issue, and the later one was closed as a duplicate.
    assert_eq!(issues.len(), 2, "{issues:#?}");
    let dup = issues.iter().find(|i| i.state != "open").unwrap();
    assert_eq!(dup.state_reason.as_deref(), Some("not_planned"));
    let said: Vec<String> = hub
        .state()
        .comments_on(dup.number)
        .iter()
        .map(|c| c.body.clone())
        .collect();
    assert!(
        said.iter()
            .any(|c| c.starts_with(&format!("Duplicate of #{}", open[0].number))),
        "{said:?}"
    );
    // A later run finds the one issue and changes nothing.
    hub.state().list_delay = Duration::ZERO;
    let writes = hub.state().writes().len();
    assert_eq!(issue_run(&a, &r, &[]).status.code(), Some(0));
    assert_eq!(hub.state().writes().len(), writes);
}

#[test]
fn unknown_drift_never_closes_the_issue() {
    let r = drift_repo();
    let hub = FakeGitHub::start();
    let job = Job::new(&hub);
    assert_eq!(issue_run(&job, &r, &[]).status.code(), Some(0));
    // An app that fails to render: drift is unknown, the open issue stays as it is.
    r.write(
        "serving/overlays/prod/kustomization.yaml",
        "resources: [missing.yaml]\n",
    )
    .commit("break");
    let writes = hub.state().writes().len();
    let out = issue_run(&job, &r, &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("left as it is"), "{}", text(&out));
    assert_eq!(hub.state().writes().len(), writes);
    assert_eq!(tracking(&hub)[0].state, "open");
}

#[test]
fn issue_from_a_workflow_dispatch_event_and_a_dry_run() {
    let r = drift_repo();
    let hub = FakeGitHub::start();
    let job = Job::new(&hub);
    let snap = snapshot_file();
    let event = fixture("tests/fixtures/github/workflow_dispatch.json");
    let out = job.run(
        r.path(),
        &event,
        "workflow_dispatch",
        &[
            "github",
            "issue",
            "--snapshot",
            &snap,
            "--scope",
            "gpu-east",
            "--dry-run",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("<!-- gpuledger:issue scope=\"gpu-east\"")
    );
    assert!(hub.state().requests.is_empty());
    assert!(job.summary().contains("## GPU fleet inventory"));
}

/// 300 workloads whose GPU shape differs between Git and the cluster: every one has a diff in a
/// fence inside `<details>`. The issue body stays under the limit and parses back whole.
#[test]
fn a_300_workload_drift_stays_valid_markdown_under_the_limit() {
    let r = Repo::new();
    let mut cluster = String::from(
        "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata: {name: gpu-0}\n  status:\n    capacity: {nvidia.com/gpu: \"8000\"}\n    allocatable: {nvidia.com/gpu: \"8000\"}\n    conditions: [{type: Ready, status: \"True\"}]\n",
    );
    for i in 0..300 {
        let name = format!("model-{i:03}");
        r.write(
            &format!("apps/{name}.yaml"),
            &format!("apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}, namespace: serving}}\nspec:\n  replicas: 1\n  template:\n    spec:\n      containers: [{{name: main, resources: {{limits: {{nvidia.com/gpu: \"1\"}}}}}}]\n"),
        );
        cluster.push_str(&format!(
            "- apiVersion: apps/v1\n  kind: Deployment\n  metadata: {{name: {name}, namespace: serving, uid: d-{i}}}\n  spec:\n    replicas: 2\n    template:\n      spec:\n        containers: [{{name: main, resources: {{limits: {{nvidia.com/gpu: \"2\"}}}}}}]\n\
- apiVersion: apps/v1\n  kind: ReplicaSet\n  metadata: {{name: {name}-5f7, namespace: serving, uid: rs-{i}, ownerReferences: [{{apiVersion: apps/v1, kind: Deployment, name: {name}, uid: d-{i}, controller: true}}]}}\n  spec:\n    replicas: 2\n    template:\n      spec:\n        containers: [{{name: main, resources: {{limits: {{nvidia.com/gpu: \"2\"}}}}}}]\n"
        ));
        for p in 0..2 {
            cluster.push_str(&format!(
                "- apiVersion: v1\n  kind: Pod\n  metadata: {{name: {name}-5f7-{p}, namespace: serving, ownerReferences: [{{apiVersion: apps/v1, kind: ReplicaSet, name: {name}-5f7, uid: rs-{i}, controller: true}}]}}\n  spec:\n    nodeName: gpu-0\n    containers: [{{name: main, resources: {{limits: {{nvidia.com/gpu: \"2\"}}}}}}]\n  status: {{phase: Running}}\n"
            ));
        }
    }
    r.commit("300 models");
    let hub = FakeGitHub::start();
    let job = Job::new(&hub);
    let snap = job.path("cluster.yaml");
    std::fs::write(&snap, cluster).unwrap();
    let event = fixture("tests/fixtures/github/schedule.json");
    let out = job.run(
        r.path(),
        &event,
        "schedule",
        &[
            "github",
            "issue",
            "--snapshot",
            snap.to_str().unwrap(),
            "--scope",
            "gpu-east",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let issues = tracking(&hub);
    assert_eq!(issues.len(), 1);
    let body = &issues[0].body;
    assert!(
        body.contains("300 changed") || body.contains("Changed: GPU shape differs (300)"),
        "{}",
        &body[..2000]
    );
    assert!(
        body.chars().count() <= 60_000,
        "{} chars",
        body.chars().count()
    );
    assert!(body.contains("job summary](https://github.com/acme/gitops/actions/runs/4242)"));
    well_formed(body);
    // The summary has room for all of it.
    let summary = job.summary();
    assert!(summary.len() > 60_000 && summary.len() <= 1024 * 1024);
    well_formed(&summary);
    assert_eq!(
        summary
            .matches("<summary>Diff of serving/Deployment/model-")
            .count(),
        300
    );
}

/// Parses `md` with an independent CommonMark parser: every fenced block is closed by a fence,
/// and `<details>` opens and closes in order.
fn well_formed(md: &str) {
    use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag};
    let mut depth: i64 = 0;
    for (event, range) in Parser::new_ext(md, Options::ENABLE_TABLES).into_offset_iter() {
        match event {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(_))) => {
                let block = &md[range];
                let open = block.lines().next().unwrap().trim_start();
                let ch = open.chars().next().unwrap();
                let len = open.chars().take_while(|c| *c == ch).count();
                let last = block.trim_end().lines().last().unwrap().trim();
                assert!(
                    last.len() >= len && last.chars().all(|c| c == ch) && block.lines().count() > 1,
                    "unclosed fence: {}",
                    &block[..block.len().min(200)]
                );
            }
            Event::Html(h) | Event::InlineHtml(h) => {
                depth += h.matches("<details").count() as i64;
                depth -= h.matches("</details>").count() as i64;
                assert!(depth >= 0, "</details> without <details>");
            }
            _ => {}
        }
    }
    assert_eq!(depth, 0, "unbalanced <details>");
}

/// A change that adds 1,200 GPU workloads: the comment is split into numbered parts, each under
/// the limit and whole (tables keep their header, `<details>` reopen); a later commit that keeps
/// ten of them edits the first part and deletes the rest.
#[test]
fn a_long_report_is_split_into_numbered_comments_and_shrinks_back() {
    let (r, hub) = pr_setup();
    let many: String = (0..1200)
        .map(|i| format!("---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: batch-inference-replica-{i:04}, namespace: research}}\nspec:\n  replicas: 1\n  template:\n    spec:\n      containers: [{{name: main, resources: {{limits: {{nvidia.com/gpu: \"1\"}}}}}}]\n"))
        .collect();
    r.write("batch/many.yaml", &many).commit("many models");
    sync_pull(&hub, &r);
    let job = Job::new(&hub);
    let event = job.pull_request(&r, false);
    let out = comment(&job, &r, &event, &["--max-comments", "5"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let parts: Vec<String> = hub
        .state()
        .comments_on(7)
        .iter()
        .map(|c| c.body.clone())
        .collect();
    assert!(
        parts.len() >= 2 && parts.len() <= 5,
        "{} parts",
        parts.len()
    );
    let n = parts.len();
    let mut rows = 0;
    for (i, p) in parts.iter().enumerate() {
        assert!(
            p.chars().count() <= 60_000,
            "part {i}: {} chars",
            p.chars().count()
        );
        assert!(p.starts_with("<!-- gpuledger:comment scope=\"prod\" head=\""));
        assert!(
            p.lines()
                .next()
                .unwrap()
                .contains(&format!("part=\"{}/{n}\"", i + 1))
        );
        assert!(p.contains(&format!("**gpuledger report, part {} of {n}**", i + 1)));
        well_formed(p);
        rows += p
            .matches("| research/Deployment/batch-inference-replica-")
            .count();
    }
    assert_eq!(rows, 1200, "every added workload is in exactly one part");
    assert!(
        parts[0].contains("| tenant | base | head | delta |"),
        "the summary leads"
    );
    assert!(
        parts[1].contains("(continued)</summary>"),
        "{}",
        &parts[1][..parts[1].len().min(1500)]
    );

    // Too many for the allowed parts: the last one points at the job summary.
    let hub2 = FakeGitHub::start();
    sync_pull(&hub2, &r);
    let job2 = Job::new(&hub2);
    let out = comment(&job2, &r, &event, &["--max-comments", "1"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let only: Vec<String> = hub2
        .state()
        .comments_on(7)
        .iter()
        .map(|c| c.body.clone())
        .collect();
    assert_eq!(only.len(), 1);
    assert!(only[0].contains("the full report is in the [job summary](https://github.com/acme/gitops/actions/runs/4242)._\n<sub>gpuledger"));
    well_formed(&only[0]);

    // Shrinks back: the first part is edited, the others deleted.
    let first_id = hub.state().comments_on(7)[0].id;
    let few: String = many
        .split("---\n")
        .filter(|d| !d.is_empty())
        .take(10)
        .map(|d| format!("---\n{d}"))
        .collect();
    r.write("batch/many.yaml", &few).commit("fewer models");
    sync_pull(&hub, &r);
    let event = job.pull_request(&r, false);
    let out = comment(&job, &r, &event, &["--max-comments", "5"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let s = hub.state();
    let left = s.comments_on(7);
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].id, first_id);
    assert!(!left[0].body.contains("part="), "{}", &left[0].body[..200]);
    assert_eq!(
        s.requests.iter().filter(|q| q.method == "DELETE").count(),
        n - 1
    );
}

/// docs/github.md shows the comment and the issue as these tests produce them: the quoted examples
/// there must be the snapshots, word for word (commit ids filled in).
#[test]
fn the_docs_show_the_current_comment_and_issue() {
    let docs = std::fs::read_to_string(fixture("docs/github.md")).unwrap();
    for (snap, fill) in [
        (
            "tests/all/snapshots/all__github__pr_comment.snap",
            [
                ("HEAD_SHA", "9f1c2d7e4b5a69880c1d2e3f4a5b6c7d8e9f0a1b"),
                ("HEAD_SHORT", "9f1c2d7e4b5a"),
                ("BASE_SHA", "3b6e0d1c2a4f5e6d7c8b9a0f1e2d3c4b5a697887"),
                ("REPORT_DIGEST", "5c1d0f3a9e2b7c44"),
                ("HEAD_7", "9f1c2d7"),
                ("BASE_7", "3b6e0d1"),
            ],
        ),
        (
            "tests/all/snapshots/all__github__drift_issue.snap",
            [
                ("HEAD_SHA", "9f1c2d7e4b5a69880c1d2e3f4a5b6c7d8e9f0a1b"),
                ("", ""),
                ("", ""),
                ("", ""),
                ("", ""),
                ("", ""),
            ],
        ),
    ] {
        let text = std::fs::read_to_string(fixture(snap)).unwrap();
        let mut body = text.splitn(3, "---\n").nth(2).unwrap().to_string();
        for (from, to) in fill.iter().filter(|(f, _)| !f.is_empty()) {
            body = body.replace(from, to);
        }
        let content = body.split_once('\n').unwrap().1.trim_end();
        let quoted: Vec<String> = content
            .lines()
            .map(|l| format!("> {l}").trim_end().to_string())
            .collect();
        assert!(
            docs.contains(&quoted.join("\n")),
            "docs/github.md does not show the current {snap}: run scripts/update-docs-examples.py"
        );
    }
}

/// The first block under the title, as GitHub reads the body: the verdict (a caution alert when a
/// gate failed, else the bold headline) — never a table, a footnote or a figure without its verdict.
fn first_block_after_title(body: &str) -> String {
    use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
    let opts = Options::ENABLE_TABLES | Options::ENABLE_GFM;
    let mut depth = 0;
    let mut seen_title = false;
    let mut out = String::new();
    for e in Parser::new_ext(body, opts) {
        match &e {
            Event::Start(Tag::Heading { .. }) if depth == 0 && !seen_title => {
                seen_title = true;
                depth += 1;
                continue;
            }
            Event::Html(_) if depth == 0 => continue,
            Event::Start(t) => {
                if seen_title {
                    out.push_str(&format!("{t:?}|"));
                }
                depth += 1;
            }
            Event::End(t) => {
                depth -= 1;
                if depth == 0 && matches!(t, TagEnd::Heading(_)) {
                    out.clear();
                } else if seen_title && depth == 0 {
                    return out;
                }
            }
            Event::Text(t) | Event::Code(t) if seen_title && depth > 0 => out.push_str(t),
            _ => {}
        }
    }
    out
}

#[test]
fn the_verdict_is_the_first_block_of_the_comment_and_the_issue() {
    // A failed gate: a caution alert right under the title, naming the gate.
    let (r, hub) = pr_setup();
    let job = Job::new(&hub);
    let event = job.pull_request(&r, false);
    let out = comment(&job, &r, &event, &["--dry-run", "--fail-on", "capacity"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let body = String::from_utf8_lossy(&out.stdout);
    let first = first_block_after_title(&body);
    assert!(
        first.starts_with("BlockQuote(Some(Caution))|"),
        "{first}\n{body}"
    );
    assert!(first.contains("Gate capacity failed"), "{first}");
    // No failed gate: the headline (bold) leads.
    let out = comment(&job, &r, &event, &["--dry-run", "--fail-on", "none"]);
    let body = String::from_utf8_lossy(&out.stdout);
    let first = first_block_after_title(&body);
    assert!(
        first.starts_with("Paragraph|Strong|Adds 16 GPUs"),
        "{first}\n{body}"
    );

    // The drift issue leads with drift, the inventory folded under it.
    let r = drift_repo();
    let out = issue_run(&job, &r, &["--dry-run"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let body = String::from_utf8_lossy(&out.stdout);
    let first = first_block_after_title(&body);
    assert!(
        first.starts_with("Paragraph|Strong|GitOps covers 88%"),
        "{first}\n{body}"
    );
}

/// The `workflow_run` payload of the relay: the fork's `pull_request` run on `head` finished.
/// GitHub lists no pull request for a fork's run, so `pull_requests` is empty.
fn workflow_run_event(job: &Job, head: &str) -> PathBuf {
    let event = serde_json::json!({
        "action": "completed",
        "workflow_run": {
            "id": 5151,
            "event": "pull_request",
            "status": "completed",
            "conclusion": "success",
            "head_sha": head,
            "head_branch": "feature",
            "head_repository": {"full_name": "someone/gitops", "fork": true},
            "repository": {"full_name": REPO, "fork": false},
            "pull_requests": []
        },
        "repository": {"full_name": REPO, "fork": false}
    });
    let p = job.path("workflow_run.json");
    std::fs::write(&p, event.to_string()).unwrap();
    p
}

/// The fork's run: `github comment` cannot post with its read-only token and leaves the report file
/// (its `report_path`), the artifact the relay downloads. Returns that file's text.
fn fork_report(hub: &FakeGitHub, r: &Repo) -> String {
    // The API knows the fork's commit (through the pull request's ref): the relay, with no
    // checkout, takes its time from there.
    let head = r.git(&["rev-parse", "feature"]).trim().to_string();
    hub.state()
        .commits
        .push((head, "2026-11-30T10:00:00Z".to_string()));
    hub.state().read_only = true;
    let job = Job::new(hub);
    let event = job.pull_request(r, true);
    let out = comment(&job, r, &event, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    hub.state().read_only = false;
    let path = job.outputs()["report_path"].clone();
    std::fs::read_to_string(path).unwrap()
}

/// The relay's run: no checkout (an empty workspace), the report file, the write token.
fn relay(hub: &FakeGitHub, report: &str, head: &str, extra: &[&str]) -> (Output, Job) {
    let job = Job::new(hub);
    let file = job.path("report.json");
    std::fs::write(&file, report).unwrap();
    let event = workflow_run_event(&job, head);
    let empty = tempfile::tempdir().unwrap();
    let file = file.display().to_string();
    let mut args = vec![
        "github",
        "comment",
        "--from-report",
        &file,
        "--scope",
        "prod",
    ];
    args.extend_from_slice(extra);
    let out = job.run(empty.path(), &event, "workflow_run", &args);
    (out, job)
}

#[test]
fn a_fork_report_is_relayed_to_its_pull_request() {
    let (r, hub) = pr_setup();
    hub.state().head_repo = Some("someone/gitops".into());
    let report = fork_report(&hub, &r);
    let head = r.git(&["rev-parse", "feature"]).trim().to_string();
    let claims: Value = serde_json::from_str(&report).unwrap();
    assert_eq!(claims["pull_request"]["number"], 7);
    assert_eq!(claims["pull_request"]["head_sha"], head.as_str());

    let (out, job) = relay(&hub, &report, &head, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let posted: Vec<String> = hub
        .state()
        .comments_on(7)
        .iter()
        .map(|c| c.body.clone())
        .collect();
    assert_eq!(posted.len(), 1, "{}", text(&out));
    let body = &posted[0];
    assert!(
        body.starts_with(&format!(
            "<!-- gpuledger:comment scope=\"prod\" head=\"{head}\""
        )),
        "{body}"
    );
    assert!(body.contains("## GPU impact of this change"), "{body}");
    assert!(job.summary().contains("## GPU impact of this change"));
    assert_eq!(job.outputs()["gpu_delta"], "16");
    // Relayed again (a re-run of the relay, as the example runs it): not posted twice.
    let (out, _) = relay(&hub, &report, &head, &["--skip-no-change"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(hub.state().comments_on(7).len(), 1);
}

#[test]
fn a_report_that_lies_about_its_pull_request_is_refused() {
    let (r, hub) = pr_setup();
    hub.state().head_repo = Some("someone/gitops".into());
    // Another pull request of the repository, on another head.
    hub.state()
        .add_pull(9, "0123456789abcdef0123456789abcdef01234567");
    let report = fork_report(&hub, &r);
    let head = r.git(&["rev-parse", "feature"]).trim().to_string();
    // Pull request 9 comes from another fork: not the same branch moved on.
    hub.state().head_repo = Some("mallory/gitops".into());
    let mut forged: Value = serde_json::from_str(&report).unwrap();
    forged["pull_request"]["number"] = 9.into();
    let (out, _) = relay(&hub, &forged.to_string(), &head, &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("claims pull request #9, whose head is 0123456789ab"),
        "{}",
        text(&out)
    );
    // The head commit it claims must be the one the run checked.
    let mut forged: Value = serde_json::from_str(&report).unwrap();
    forged["pull_request"]["head_sha"] = "0123456789abcdef0123456789abcdef01234567".into();
    let (out, _) = relay(&hub, &forged.to_string(), &head, &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("claims head commit"), "{}", text(&out));
    hub.state().head_repo = Some("someone/gitops".into());
    // Not a check report of this schema, or another scope than the relay posts.
    let other = report.replace("gpuledger.report/v1", "gpuledger.report/v2");
    let (out, _) = relay(&hub, &other, &head, &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("gpuledger.report/v2"), "{}", text(&out));
    let (out, _) = relay(&hub, &report, &head, &["--scope", "staging"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("scope"), "{}", text(&out));
    for n in [7, 9] {
        assert!(hub.state().comments_on(n).is_empty(), "posted on #{n}");
    }
}

#[test]
fn a_relayed_report_is_escaped_like_any_other() {
    let (r, hub) = pr_setup();
    hub.state().head_repo = Some("someone/gitops".into());
    let report = fork_report(&hub, &r);
    let head = r.git(&["rev-parse", "feature"]).trim().to_string();
    // The fork rewrites its report's text: markup, a fake marker and a mention.
    let mut forged: Value = serde_json::from_str(&report).unwrap();
    // The comment's opening sentence is made of the report's fields (a tenant's name among them).
    forged["check"]["tenants"][0]["name"] =
        "<!-- gpuledger:comment scope=\"prod\" --> <img src=x onerror=alert(1)> @acme/admins [x](javascript:alert(1))"
            .into();
    let (out, _) = relay(&hub, &forged.to_string(), &head, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let body = hub.state().comments_on(7)[0].body.clone();
    // The same escaping as a report computed here: no tag, no mention, no link, one marker.
    assert!(!body.contains("<img") && body.contains("&lt;img"), "{body}");
    assert!(!body.contains("@acme/admins"), "{body}");
    assert!(body.contains("\\[x\\](javascript:"), "{body}");
    assert_eq!(body.matches("<!-- gpuledger:comment").count(), 1, "{body}");
}

/// Issue 34, item 5: the sticky comment deleted by someone between this run's list and its edit
/// (GitHub answers the PATCH 404): the pull request gets a fresh comment in the same run.
#[test]
fn a_comment_deleted_between_list_and_edit_is_posted_afresh_in_the_same_run() {
    let (r, hub) = pr_setup();
    let job = Job::new(&hub);
    let event = job.pull_request(&r, false);
    assert_eq!(comment(&job, &r, &event, &[]).status.code(), Some(0));
    let id = hub.state().comments_on(7)[0].id;
    // An older report in it (so this run edits it), and it vanishes at the edit.
    {
        let mut s = hub.state();
        let c = s.comments.iter_mut().find(|c| c.id == id).unwrap();
        let at = c.body.find("report=\"").unwrap() + "report=\"".len();
        c.body.replace_range(at..at + 4, "0000");
        s.vanish_on_edit = true;
    }
    let out = comment(&job, &r, &event, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        text(&out).contains(&format!(
            "comment {id} was deleted while this run edited it: comment created"
        )),
        "{}",
        text(&out)
    );
    let s = hub.state();
    let comments = s.comments_on(7);
    assert_eq!(comments.len(), 1);
    assert_ne!(comments[0].id, id);
    assert!(comments[0].body.contains("## GPU impact"));
    let writes: Vec<(String, String)> = s
        .writes()
        .iter()
        .rev()
        .take(2)
        .map(|w| (w.method.clone(), w.path.clone()))
        .collect();
    assert_eq!(
        writes,
        [
            (
                "POST".to_string(),
                format!("/repos/{REPO}/issues/7/comments")
            ),
            (
                "PATCH".to_string(),
                format!("/repos/{REPO}/issues/comments/{id}")
            ),
        ]
    );
}

/// The tracking issue deleted between the list and its edit (410 "This issue was deleted"): a
/// fresh issue carries the report in the same run, and the steps left on the old one are skipped.
#[test]
fn a_tracking_issue_deleted_between_list_and_edit_is_opened_afresh() {
    let r = drift_repo();
    let hub = FakeGitHub::start();
    let job = Job::new(&hub);
    assert_eq!(issue_run(&job, &r, &[]).status.code(), Some(0));
    let first = tracking(&hub)[0].number;
    // The drift set changes (an edit and a comment are due), and the issue is deleted.
    r.write("parked/model.yaml", PARKED_NOTHING)
        .commit("unpark");
    hub.state().vanish_on_edit = true;
    let out = issue_run(&job, &r, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        text(&out).contains(&format!(
            "drift issue #{first} was deleted while this run edited it: drift issue opened"
        )),
        "{}",
        text(&out)
    );
    let now = tracking(&hub);
    assert_eq!(now.len(), 1, "{now:?}");
    assert_ne!(now[0].number, first);
    assert_eq!(now[0].state, "open");
    assert!(now[0].body.contains("## GPU drift against Git"));
    // No comment went to the deleted issue.
    assert!(hub.state().comments_on(first).is_empty());
}

/// A 422 says why in `errors[].message`, not in `message` ("Validation Failed"): the error shows it.
#[test]
fn a_422_shows_githubs_reason() {
    let (r, hub) = pr_setup();
    hub.state()
        .post_faults
        .push_back(github_fake::validation_failed(
            "body contains a forbidden word",
        ));
    let job = Job::new(&hub);
    let event = job.pull_request(&r, false);
    let out = comment(&job, &r, &event, &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out)
            .contains("GitHub answered 422: Validation Failed: body contains a forbidden word"),
        "{}",
        text(&out)
    );
}

/// `--head REF` names the comment: the marker, the footer and every blob link use the commit the
/// check judged, not the one checked out (a link to a file the change adds would 404).
#[test]
fn a_comment_for_head_ref_names_that_commit_wherever_the_checkout_is() {
    let r = repo_with_feature_branch();
    // The checkout is main; the change judged is feature.
    let feature = r.git(&["rev-parse", "feature"]).trim().to_string();
    let main = r.git(&["rev-parse", "main"]).trim().to_string();
    let snap = snapshot_file();
    let run = |extra: &[&str]| {
        let mut cmd = gpuledger(r.path());
        cmd.args([
            "github", "comment", "--repo", ".", "--base", "main", "--head", "feature",
        ])
        .args(["--snapshot", &snap, "--now", "2026-11-30", "--pr", "7"])
        .args(["--github-repo", "acme/fleet", "--dry-run"])
        .args(extra);
        for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("GITHUB_")) {
            cmd.env_remove(k);
        }
        cmd.output().unwrap()
    };
    let out = run(&[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let body = String::from_utf8_lossy(&out.stdout);
    let marker = body.lines().next().unwrap();
    assert!(marker.contains(&format!("head=\"{feature}\"")), "{marker}");
    // A file only the change adds links at the judged commit.
    assert!(
        body.contains(&format!("blob/{feature}/batch/new-model.yaml")),
        "{body}"
    );
    assert!(!body.contains(&format!("blob/{main}/")), "{body}");
    assert!(body.contains(&feature[..12]), "the footer names it: {body}");
    // A head sha that is not the judged commit is refused, not posted under the wrong name.
    let out = run(&["--head-sha", &main]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("did not judge"), "{}", text(&out));
}
