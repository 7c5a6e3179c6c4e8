//! The GitHub Actions runtime as gpuledger sees it: the environment variables the runner sets and
//! the event payload at `GITHUB_EVENT_PATH`. Read once, through a lookup function, so tests (and a
//! laptop) can supply their own; every field is optional because the same binary also runs outside
//! Actions, where flags supply what the event would have.

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// What the runner tells a step.
#[derive(Debug, Clone, Default)]
pub struct Runtime {
    /// `GITHUB_ACTIONS=true`: workflow commands (annotations) are understood on stdout.
    pub in_actions: bool,
    pub event: Event,
    /// `owner/name` (`GITHUB_REPOSITORY`, else the event's `repository.full_name`).
    pub repository: Option<String>,
    /// REST base (`GITHUB_API_URL`, GHES: `https://HOST/api/v3`).
    pub api_url: Option<String>,
    pub graphql_url: Option<String>,
    pub server_url: Option<String>,
    pub run_id: Option<String>,
    pub run_attempt: Option<String>,
    /// Who triggered the run (`dependabot[bot]` gets a read-only token like a fork).
    pub actor: Option<String>,
    pub workspace: Option<PathBuf>,
    pub step_summary: Option<PathBuf>,
    pub output: Option<PathBuf>,
    pub runner_temp: Option<PathBuf>,
}

/// The parts of an event payload gpuledger uses (`pull_request`, `workflow_run`, `schedule`,
/// `workflow_dispatch`).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Event {
    pub pull_request: Option<PullRequest>,
    pub repository: Option<Repository>,
    /// A `workflow_run` event: the run that finished, whose report `--from-report` relays.
    pub workflow_run: Option<WorkflowRun>,
}

/// The run a `workflow_run` event is about. GitHub writes these fields, not the run's code: they
/// are what a relayed report's claims are checked against.
#[derive(Debug, Clone, Deserialize)]
pub struct WorkflowRun {
    /// The event that started that run (`pull_request`).
    pub event: String,
    /// The commit it ran on: the pull request's head.
    pub head_sha: String,
    pub head_branch: Option<String>,
    /// The repository the head lives in (a fork's, for a fork's pull request).
    pub head_repository: Option<Repository>,
    /// The pull requests of the base repository whose head this is. Empty for a fork's pull
    /// request (GitHub lists only branches of the base repository here).
    #[serde(default)]
    pub pull_requests: Vec<RunPullRequest>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct RunPullRequest {
    pub number: u64,
}

#[derive(Debug, Clone, Deserialize)]
pub struct PullRequest {
    pub number: u64,
    pub head: GitSide,
    pub base: GitSide,
}

#[derive(Debug, Clone, Deserialize)]
pub struct GitSide {
    pub sha: String,
    /// The repository the side lives in: a fork's head differs from the base repository.
    pub repo: Option<Repository>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Repository {
    pub full_name: String,
    #[serde(default)]
    pub fork: bool,
}

impl Runtime {
    /// Reads the runtime through `var` (`std::env::var` in the binary). A payload that cannot be
    /// read or parsed is an error naming the file: a half-understood event must not post to the
    /// wrong pull request.
    pub fn from_env(var: impl Fn(&str) -> Option<String>) -> Result<Runtime, EventError> {
        let get = |k: &str| var(k).filter(|v| !v.trim().is_empty());
        let event = match get("GITHUB_EVENT_PATH") {
            Some(p) => read_event(Path::new(&p))?,
            None => Event::default(),
        };
        let repository = get("GITHUB_REPOSITORY")
            .or_else(|| event.repository.as_ref().map(|r| r.full_name.clone()));
        Ok(Runtime {
            in_actions: get("GITHUB_ACTIONS").as_deref() == Some("true"),
            event,
            repository,
            api_url: get("GITHUB_API_URL"),
            graphql_url: get("GITHUB_GRAPHQL_URL"),
            server_url: get("GITHUB_SERVER_URL"),
            run_id: get("GITHUB_RUN_ID"),
            run_attempt: get("GITHUB_RUN_ATTEMPT"),
            actor: get("GITHUB_ACTOR"),
            workspace: get("GITHUB_WORKSPACE").map(PathBuf::from),
            step_summary: get("GITHUB_STEP_SUMMARY").map(PathBuf::from),
            output: get("GITHUB_OUTPUT").map(PathBuf::from),
            runner_temp: get("RUNNER_TEMP").map(PathBuf::from),
        })
    }

    /// The link to this run's page, where the step summary holds the full report.
    pub fn run_url(&self) -> Option<String> {
        let (server, repo, run) = (
            self.server_url.as_deref()?,
            self.repository.as_deref()?,
            self.run_id.as_deref()?,
        );
        Some(format!(
            "{}/{repo}/actions/runs/{run}",
            server.trim_end_matches('/')
        ))
    }

    /// A run whose token GitHub makes read-only whatever the workflow asks for: a pull request
    /// from a fork, or one Dependabot triggered.
    pub fn read_only_token(&self) -> bool {
        self.from_fork() || self.actor.as_deref() == Some("dependabot[bot]")
    }

    /// A pull request from a fork.
    pub fn from_fork(&self) -> bool {
        let Some(pr) = &self.event.pull_request else {
            return false;
        };
        match (&pr.head.repo, &pr.base.repo) {
            (Some(h), Some(b)) => h.full_name != b.full_name,
            (Some(h), None) => h.fork,
            _ => false,
        }
    }
}

/// An event payload (`GITHUB_EVENT_PATH`) that cannot be used; the message names the file.
#[derive(Debug, thiserror::Error)]
pub enum EventError {
    #[error("cannot read the event payload {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}:{}: not a GitHub event payload: {source}", path.display(), source.line())]
    Parse {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
}

fn read_event(path: &Path) -> Result<Event, EventError> {
    let text = std::fs::read_to_string(path).map_err(|source| EventError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|source| EventError::Parse {
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, String)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        move |k| pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
    }

    #[test]
    fn pull_request_event_gives_number_shas_and_fork() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("event.json");
        std::fs::write(
            &p,
            r#"{"action":"synchronize","number":7,"pull_request":{"number":7,
              "head":{"sha":"abc","ref":"feature","repo":{"full_name":"someone/gitops","fork":true}},
              "base":{"sha":"def","ref":"main","repo":{"full_name":"acme/gitops","fork":false}}},
              "repository":{"full_name":"acme/gitops","fork":false}}"#,
        )
        .unwrap();
        let rt = Runtime::from_env(env(&[
            ("GITHUB_EVENT_PATH", p.display().to_string()),
            ("GITHUB_ACTIONS", "true".into()),
            ("GITHUB_SERVER_URL", "https://github.com".into()),
            ("GITHUB_RUN_ID", "42".into()),
        ]))
        .unwrap();
        let pr = rt.event.pull_request.as_ref().unwrap();
        assert_eq!(
            (pr.number, pr.head.sha.as_str(), pr.base.sha.as_str()),
            (7, "abc", "def")
        );
        assert_eq!(rt.repository.as_deref(), Some("acme/gitops"));
        assert!(rt.in_actions && rt.from_fork());
        assert_eq!(
            rt.run_url().as_deref(),
            Some("https://github.com/acme/gitops/actions/runs/42")
        );
    }

    #[test]
    fn bad_payload_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("event.json");
        std::fs::write(&p, "{\"pull_request\": {\"number\": \"x\"}}").unwrap();
        let err = Runtime::from_env(env(&[("GITHUB_EVENT_PATH", p.display().to_string())]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("event.json:1"), "{err}");
    }

    #[test]
    fn outside_actions_everything_is_empty() {
        let rt = Runtime::from_env(|_| None).unwrap();
        assert!(!rt.in_actions && rt.event.pull_request.is_none() && rt.run_url().is_none());
    }
}
