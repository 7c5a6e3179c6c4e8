//! The fork pull-request relay: a check report computed where the token is read-only (a fork's
//! `pull_request` run, which may run the fork's own code) and posted by a `workflow_run` run that
//! holds the write token and runs none of it (`gpuledger github comment --from-report FILE`).
//!
//! The file is the JSON report that `github comment` writes (its `report_path`), which also names
//! the pull request and head commit it was computed for. Everything in it is the fork's word, so
//! before anything is posted it must pass, in this order: a size bound (read no further than that),
//! the report schema (a typed parse of a check report, so its text goes through the same renderer
//! and the same escaping as a report computed here), the relay's own scope, and its claims against
//! what GitHub itself says: the head commit of the run that the `workflow_run` event names, the
//! pull requests GitHub lists for that run, and the pull request's head as the API has it. A report
//! that claims another pull request or another commit is refused; one whose pull request has moved
//! on since is not posted (the run for the newer commit will be).

use std::io::Read;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::api::Head;
use super::event::WorkflowRun;
use crate::report::CheckReport;

/// The largest relayed report read. A comment holds at most 20 parts of 60,000 characters and the
/// report's JSON is a few times its markdown: 8 MiB is far above any real report and bounds what a
/// hostile artifact can make the relay parse.
pub const MAX_BYTES: u64 = 8 * 1024 * 1024;

/// The pull request and head commit a report was computed for, as its run saw them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PullRef {
    pub number: u64,
    pub head_sha: String,
}

/// What `github comment` writes to its report file: the check report, plus `pull_request` (an
/// additive field; the schema stays `gpuledger.report/v1`).
#[derive(Debug, Serialize)]
pub struct Written<'a> {
    #[serde(flatten)]
    pub report: &'a CheckReport,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pull_request: Option<PullRef>,
}

#[derive(Debug, Deserialize)]
struct OnDisk {
    #[serde(flatten)]
    report: CheckReport,
    pull_request: Option<PullRef>,
}

/// A report read back for relaying, its claims not yet checked.
#[derive(Debug, Clone)]
pub struct Relayed {
    pub report: CheckReport,
    pub claims: PullRef,
}

/// Why a relayed report is not posted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    #[error("{0}")]
    Unreadable(String),
    #[error("{0}")]
    Lies(String),
}

/// Reads and parses the file: at most [`MAX_BYTES`], a check report of this schema that names its
/// pull request and head commit.
pub fn read(path: &Path) -> Result<Relayed, Refused> {
    let shown = path.display();
    let unreadable = |why: String| Refused::Unreadable(format!("{shown}: {why}"));
    let file = std::fs::File::open(path).map_err(|e| unreadable(format!("cannot open: {e}")))?;
    let mut bytes = Vec::new();
    file.take(MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| unreadable(format!("cannot read: {e}")))?;
    if u64::try_from(bytes.len()).unwrap_or(u64::MAX) > MAX_BYTES {
        return Err(unreadable(format!(
            "larger than {MAX_BYTES} bytes: not a report gpuledger wrote"
        )));
    }
    parse(&bytes).map_err(|e| unreadable(e.to_string()))
}

/// Why a report file's text is not a report that can be relayed.
#[derive(Debug, thiserror::Error)]
enum ParseError {
    /// `at` is the JSON path where it broke.
    #[error("not a gpuledger check report (line {}, at {at}): {source}", source.line())]
    NotAReport {
        at: String,
        #[source]
        source: serde_json::Error,
    },
    #[error("trailing data after the report: {0}")]
    Trailing(#[source] serde_json::Error),
    #[error(
        "names no pull_request: only the report file of `gpuledger github comment` (its report_path) can be relayed"
    )]
    NoPullRequest,
}

fn parse(bytes: &[u8]) -> Result<Relayed, ParseError> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let read: OnDisk =
        serde_path_to_error::deserialize(&mut de).map_err(|e| ParseError::NotAReport {
            at: e.path().to_string(),
            source: e.into_inner(),
        })?;
    de.end().map_err(ParseError::Trailing)?;
    let OnDisk {
        mut report,
        pull_request,
    } = read;
    let claims = pull_request.ok_or(ParseError::NoPullRequest)?;
    for rows in [
        &mut report.check.added,
        &mut report.check.removed,
        &mut report.check.reshaped,
    ] {
        rows.iter_mut().for_each(|r| r.rekey());
    }
    Ok(Relayed { report, claims })
}

/// The pull request to post to, from the report's claims checked against the `workflow_run` event
/// (or, outside one, `--pr` and `--head-sha`, which the caller trusts) and the relay's scope.
pub fn check_claims(
    relayed: &Relayed,
    run: Option<&WorkflowRun>,
    pr_flag: Option<u64>,
    head_flag: Option<&str>,
    scope: &str,
) -> Result<u64, Refused> {
    let lies = |why: String| Refused::Lies(why);
    let claims = &relayed.claims;
    let head = match (run, head_flag) {
        (Some(r), _) => {
            if r.event != "pull_request" {
                return Err(lies(format!(
                    "the workflow run was started by a {:?} event, not a pull request",
                    r.event
                )));
            }
            r.head_sha.as_str()
        }
        (None, Some(h)) => h,
        (None, None) => {
            return Err(Refused::Unreadable(
                "--from-report needs the workflow_run event (GITHUB_EVENT_PATH) or --head-sha: the report's own claims are never enough"
                    .to_string(),
            ));
        }
    };
    if !claims.head_sha.eq_ignore_ascii_case(head) {
        return Err(lies(format!(
            "the report claims head commit {}, but the run it came from checked {head}",
            short(&claims.head_sha)
        )));
    }
    if let Some(r) = run
        && !r.pull_requests.is_empty()
        && !r.pull_requests.iter().any(|p| p.number == claims.number)
    {
        let listed: Vec<String> = r
            .pull_requests
            .iter()
            .map(|p| format!("#{}", p.number))
            .collect();
        return Err(lies(format!(
            "the report claims pull request #{}, but the run belongs to {}",
            claims.number,
            listed.join(", ")
        )));
    }
    if let Some(n) = pr_flag
        && n != claims.number
    {
        return Err(lies(format!(
            "the report claims pull request #{}, not #{n} (--pr)",
            claims.number
        )));
    }
    let named = relayed.report.provenance.scope.as_deref();
    if let Some(named) = named
        && named != scope
    {
        return Err(lies(format!(
            "the report is for scope {named:?}, this relay posts scope {scope:?}"
        )));
    }
    Ok(claims.number)
}

/// What the pull request's head, as the API has it now, says about the claims.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Post,
    /// The same pull request has a newer head: nothing to post, and no lie.
    Moved(String),
}

/// The pull request must be the one whose head the run checked: the same commit, or the same branch
/// of the same repository moved on to a newer one.
pub fn check_pull(
    relayed: &Relayed,
    pull: &Head,
    run: Option<&WorkflowRun>,
) -> Result<Verdict, Refused> {
    let claims = &relayed.claims;
    let Some(now) = pull.sha.as_deref() else {
        return Err(Refused::Lies(format!(
            "pull request #{} has no head commit in the API",
            claims.number
        )));
    };
    if now.eq_ignore_ascii_case(&claims.head_sha) {
        return Ok(Verdict::Post);
    }
    let same_branch = run.is_some_and(|r| {
        let repo = r.head_repository.as_ref().map(|h| h.full_name.as_str());
        let pull_repo = pull.repo.as_ref().and_then(|h| h.full_name.as_deref());
        repo.is_some()
            && repo == pull_repo
            && r.head_branch.is_some()
            && r.head_branch == pull.branch
    });
    if same_branch {
        return Ok(Verdict::Moved(format!(
            "pull request #{} has moved on to {}, this report is for {}",
            claims.number,
            short(now),
            short(&claims.head_sha)
        )));
    }
    Err(Refused::Lies(format!(
        "the report claims pull request #{}, whose head is {}, not the commit {} the run checked",
        claims.number,
        short(now),
        short(&claims.head_sha)
    )))
}

fn short(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::github::api::HeadRepo;
    use crate::github::event::{Repository, RunPullRequest};

    const HEAD: &str = "9f1c2d7aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

    fn relayed(number: u64, head: &str, scope: Option<&str>) -> Relayed {
        let mut v: serde_json::Value =
            serde_json::from_str(include_str!("../../tests/fixtures/relay/check.json")).unwrap();
        v["pull_request"] = serde_json::json!({ "number": number, "head_sha": head });
        v["provenance"]["scope"] = serde_json::json!(scope);
        parse(v.to_string().as_bytes()).unwrap()
    }

    fn run(prs: &[u64]) -> WorkflowRun {
        WorkflowRun {
            event: "pull_request".into(),
            head_sha: HEAD.into(),
            head_branch: Some("feature".into()),
            head_repository: Some(Repository {
                full_name: "someone/gitops".into(),
                fork: true,
            }),
            pull_requests: prs
                .iter()
                .map(|&number| RunPullRequest { number })
                .collect(),
        }
    }

    #[test]
    fn claims_must_match_the_run() {
        let r = relayed(7, HEAD, Some("gpu-east"));
        assert_eq!(
            check_claims(&r, Some(&run(&[])), None, None, "gpu-east"),
            Ok(7)
        );
        assert_eq!(
            check_claims(&r, Some(&run(&[7])), None, None, "gpu-east"),
            Ok(7)
        );
        let lie = |r: &Relayed, run: Option<&WorkflowRun>, scope: &str| {
            matches!(
                check_claims(r, run, None, None, scope),
                Err(Refused::Lies(_))
            )
        };
        assert!(lie(
            &relayed(7, &"1".repeat(40), Some("gpu-east")),
            Some(&run(&[])),
            "gpu-east"
        ));
        assert!(lie(&r, Some(&run(&[8])), "gpu-east"));
        assert!(lie(&r, Some(&run(&[])), "gpu-west"));
        let mut push = run(&[]);
        push.event = "push".into();
        assert!(lie(&r, Some(&push), "gpu-east"));
        // Without an event the caller's flags stand in; without either nothing is trusted.
        assert_eq!(
            check_claims(&r, None, Some(7), Some(HEAD), "gpu-east"),
            Ok(7)
        );
        assert!(matches!(
            check_claims(&r, None, None, None, "gpu-east"),
            Err(Refused::Unreadable(_))
        ));
    }

    #[test]
    fn the_pull_request_head_decides() {
        let r = relayed(7, HEAD, None);
        let head = |sha: &str, repo: &str, branch: &str| Head {
            sha: Some(sha.into()),
            branch: Some(branch.into()),
            repo: Some(HeadRepo {
                full_name: Some(repo.into()),
            }),
        };
        let run = run(&[]);
        assert_eq!(
            check_pull(&r, &head(HEAD, "someone/gitops", "feature"), Some(&run)),
            Ok(Verdict::Post)
        );
        assert!(matches!(
            check_pull(&r, &head("abc", "someone/gitops", "feature"), Some(&run)),
            Ok(Verdict::Moved(_))
        ));
        // Another pull request (another branch or repository): the report lies about its number.
        assert!(matches!(
            check_pull(&r, &head("abc", "acme/gitops", "feature"), Some(&run)),
            Err(Refused::Lies(_))
        ));
        assert!(matches!(
            check_pull(&r, &head("abc", "someone/gitops", "other"), Some(&run)),
            Err(Refused::Lies(_))
        ));
    }

    #[test]
    fn only_a_check_report_with_its_pull_request_is_read() {
        let text = include_str!("../../tests/fixtures/relay/check.json");
        let err = parse(text.as_bytes()).unwrap_err().to_string();
        assert!(err.contains("names no pull_request"), "{err}");
        let other = text.replace("gpuledger.report/v1", "gpuledger.report/v9");
        let err = parse(other.as_bytes()).unwrap_err().to_string();
        assert!(err.contains("schema") && err.contains("v9"), "{err}");
        let err = parse(b"{\"schema\": \"gpuledger.report/v1\", \"fleet\": {}}")
            .unwrap_err()
            .to_string();
        assert!(err.contains("not a gpuledger check report"), "{err}");
        let err = parse(format!("{text} {{}}").as_bytes())
            .unwrap_err()
            .to_string();
        assert!(err.contains("trailing"), "{err}");
    }

    #[test]
    fn an_oversized_file_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("big.json");
        let f = std::fs::File::create(&p).unwrap();
        f.set_len(MAX_BYTES + 1).unwrap();
        let err = read(&p).unwrap_err().to_string();
        assert!(err.contains("larger than"), "{err}");
    }
}
