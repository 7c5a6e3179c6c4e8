//! Running a comment plan or an issue plan against GitHub: list what is ours (by the bot's login
//! and an exact marker), plan with the pure [`comment::plan`] / [`issue::plan`], apply the steps,
//! and — after creating an issue — list and plan again, so two overlapping runs converge on one.
//!
//! The lines returned are the notes the command prints, one per thing done.

use super::api::{Api, IssueEdit, written_by};
use super::client::GitHubError;
use super::comment::{self, Behavior, Existing, Plan, Step};
use super::issue::{self, Found, Now};
use super::marker::Marker;
use crate::doc::Doc;

/// One sticky comment posting for a pull request.
pub struct CommentJob<'a> {
    pub pr: u64,
    /// Comments by anyone else are not ours, whatever marker they carry.
    pub author: &'a str,
    pub report: &'a Doc,
    /// The footer markdown, closing the last part.
    pub footer: &'a str,
    pub overflow: &'a str,
    pub max_parts: usize,
    /// Our marker; its `valid_at` is taken from the API when `local_time` is false.
    pub marker: Marker,
    /// Whether the head commit's time came from the local clone.
    pub local_time: bool,
    pub behavior: Behavior,
    /// `--skip-no-change` and the report has no change: post nothing unless we posted before.
    pub skip_unchanged: bool,
}

pub async fn comment<A: Api>(api: &A, job: CommentJob<'_>) -> Result<Vec<String>, GitHubError> {
    let CommentJob {
        pr,
        author,
        report,
        footer,
        overflow,
        max_parts,
        marker: mut ours,
        local_time,
        behavior,
        skip_unchanged,
    } = job;
    // The pull request's head now: a run for an older commit posts nothing.
    let pr_head = api.pull_head(pr).await?;
    if !local_time {
        // Not in the local clone (a shallow fetch): the commit's own time, from the API.
        let head = ours.head.clone().unwrap_or_default();
        if let Some(t) = api.commit_time(&head).await? {
            ours.valid_at = Some(t);
        }
    }
    let bodies = comment::bodies(report, &format!("\n{footer}"), &ours, max_parts, overflow);
    let existing: Vec<Existing> = api
        .comments(pr)
        .await?
        .into_iter()
        .filter(|c| written_by(c.user.as_ref(), author))
        .filter_map(|c| {
            let body = c.body?;
            Some(Existing {
                id: c.id,
                node_id: c.node_id.unwrap_or_default(),
                marker: Marker::find(&body)?,
                body,
            })
        })
        .collect();
    let has_ours = existing.iter().any(|e| e.marker.same_thread(&ours));
    if skip_unchanged && !has_ours {
        return Ok(vec![
            "no GPU change and no drift introduced: nothing posted (--skip-no-change)".to_string(),
        ]);
    }
    let steps = match comment::plan(&existing, &bodies, &ours, behavior, pr_head.as_deref()) {
        Plan::Skip(why) => return Ok(vec![format!("{why}: nothing posted")]),
        Plan::Steps(s) => s,
    };
    let mut done = Vec::new();
    for step in steps {
        done.push(match step {
            Step::Create { body } => {
                let p = api.create_comment(pr, &body).await?;
                format!("comment created: {}", p.url())
            }
            // Deleted between the list and the edit: the pull request gets a fresh one now,
            // not on the next run.
            Step::Update { id, body } => match api.update_comment(id, &body).await {
                Ok(p) => format!("comment updated: {}", p.url()),
                Err(e) if e.is_gone() => {
                    let p = api.create_comment(pr, &body).await?;
                    format!(
                        "comment {id} was deleted while this run edited it: comment created: {}",
                        p.url()
                    )
                }
                Err(e) => return Err(e),
            },
            Step::Minimize { id, node_id } => {
                api.minimize_comment(&node_id).await?;
                format!("earlier comment {id} hidden as outdated")
            }
            Step::Delete { id } => match api.delete_comment(id).await {
                Ok(()) => format!("earlier comment {id} deleted"),
                Err(e) if e.is_gone() => format!("earlier comment {id} was already deleted"),
                Err(e) => return Err(e),
            },
        });
    }
    Ok(done)
}

/// The tracking issue of one scope.
pub struct IssueJob<'a> {
    pub author: &'a str,
    pub label: &'a str,
    pub title: &'a str,
    pub now: &'a Now,
}

pub async fn issue<A: Api>(api: &A, job: IssueJob<'_>) -> Result<Vec<String>, GitHubError> {
    let mut done = Vec::new();
    let mut run = IssueRun::default();
    let found = find_issues(api, &job).await?;
    for step in issue::plan(&found, job.now) {
        done.extend(apply(api, &job, step, &mut run).await?);
    }
    if run.created {
        // Another run may have created one at the same time: converge on the lowest number.
        let found = find_issues(api, &job).await?;
        for step in issue::plan(&found, job.now) {
            done.extend(apply(api, &job, step, &mut run).await?);
        }
    }
    if done.is_empty() {
        done.push(format!(
            "the tracking issue for scope {:?} is up to date",
            job.now.marker.scope
        ));
    }
    Ok(done)
}

/// What the steps of one run have done so far.
#[derive(Default)]
struct IssueRun {
    /// An issue was opened: list and plan again.
    created: bool,
    /// Issues found deleted while this run acted on them: their other steps are skipped.
    gone: std::collections::BTreeSet<u64>,
}

async fn find_issues<A: Api>(api: &A, job: &IssueJob<'_>) -> Result<Vec<Found>, GitHubError> {
    Ok(api
        .issues(job.label)
        .await?
        .into_iter()
        // The issues API lists pull requests too.
        .filter(|i| !i.pull_request && written_by(i.user.as_ref(), job.author))
        .filter_map(|i| {
            let body = i.body?;
            Some(Found {
                number: i.number,
                open: i.state == "open",
                state_reason: i.state_reason,
                marker: Marker::find(&body)?,
                body,
            })
        })
        .collect())
}

/// Applies one step: the note it leaves, none when it is skipped (its issue is gone). An issue
/// deleted between the list and the step (404 or 410) is opened afresh with the body the step
/// carried, in this run; one whose step had no body to carry (a comment, closing) is noted.
async fn apply<A: Api>(
    api: &A,
    job: &IssueJob<'_>,
    step: issue::Step,
    run: &mut IssueRun,
) -> Result<Option<String>, GitHubError> {
    if step.number().is_some_and(|n| run.gone.contains(&n)) {
        return Ok(None);
    }
    let edit = |state: Option<&'static str>, state_reason, body: Option<String>| IssueEdit {
        state,
        state_reason,
        body,
    };
    let number = step.number().unwrap_or_default();
    let (result, fresh) = match step {
        issue::Step::Create { body } => {
            run.created = true;
            let p = api.create_issue(job.title, &body, job.label).await?;
            return Ok(Some(format!("drift issue opened: {}", p.url())));
        }
        issue::Step::Edit { number, body } => (
            api.edit_issue(number, &edit(None, None, Some(body.clone())))
                .await
                .map(|()| format!("drift issue #{number} updated")),
            Some(body),
        ),
        issue::Step::Reopen { number, body } => (
            api.edit_issue(number, &edit(Some("open"), None, Some(body.clone())))
                .await
                .map(|()| format!("drift issue #{number} reopened: the drift is back")),
            Some(body),
        ),
        issue::Step::Close { number, body } => (
            api.edit_issue(number, &edit(Some("closed"), Some("completed"), Some(body)))
                .await
                .map(|()| format!("drift issue #{number} closed: no drift left")),
            None,
        ),
        issue::Step::CloseDuplicate { number, of } => {
            (close_duplicate(api, number, of).await, None)
        }
        issue::Step::Comment { number, text } => (
            api.create_comment(number, &text)
                .await
                .map(|_| format!("commented on drift issue #{number}")),
            None,
        ),
    };
    match result {
        Ok(note) => Ok(Some(note)),
        Err(e) if e.is_gone() => {
            run.gone.insert(number);
            match fresh {
                Some(body) => {
                    run.created = true;
                    let p = api.create_issue(job.title, &body, job.label).await?;
                    Ok(Some(format!(
                        "drift issue #{number} was deleted while this run edited it: drift issue opened: {}",
                        p.url()
                    )))
                }
                None => Ok(Some(format!(
                    "drift issue #{number} is gone (deleted): nothing left to do on it"
                ))),
            }
        }
        Err(e) => Err(e),
    }
}

async fn close_duplicate<A: Api>(api: &A, number: u64, of: u64) -> Result<String, GitHubError> {
    api.create_comment(
        number,
        &format!("Duplicate of #{of} (two runs overlapped)."),
    )
    .await?;
    let edit = IssueEdit {
        state: Some("closed"),
        state_reason: Some("not_planned"),
        body: None,
    };
    api.edit_issue(number, &edit).await?;
    Ok(format!(
        "duplicate drift issue #{number} closed in favour of #{of}"
    ))
}

#[cfg(test)]
mod tests;
