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
            Step::Update { id, body } => {
                let p = api.update_comment(id, &body).await?;
                format!("comment updated: {}", p.url())
            }
            Step::Minimize { id, node_id } => {
                api.minimize_comment(&node_id).await?;
                format!("earlier comment {id} hidden as outdated")
            }
            Step::Delete { id } => {
                api.delete_comment(id).await?;
                format!("earlier comment {id} deleted")
            }
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
    let found = find_issues(api, &job).await?;
    let mut created = false;
    for step in issue::plan(&found, job.now) {
        created |= matches!(step, issue::Step::Create { .. });
        done.push(apply(api, &job, step).await?);
    }
    if created {
        // Another run may have created one at the same time: converge on the lowest number.
        let found = find_issues(api, &job).await?;
        for step in issue::plan(&found, job.now) {
            done.push(apply(api, &job, step).await?);
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

async fn apply<A: Api>(
    api: &A,
    job: &IssueJob<'_>,
    step: issue::Step,
) -> Result<String, GitHubError> {
    let edit = |state: Option<&'static str>, state_reason, body: Option<String>| IssueEdit {
        state,
        state_reason,
        body,
    };
    Ok(match step {
        issue::Step::Create { body } => {
            let p = api.create_issue(job.title, &body, job.label).await?;
            format!("drift issue opened: {}", p.url())
        }
        issue::Step::Edit { number, body } => {
            api.edit_issue(number, &edit(None, None, Some(body)))
                .await?;
            format!("drift issue #{number} updated")
        }
        issue::Step::Reopen { number, body } => {
            api.edit_issue(number, &edit(Some("open"), None, Some(body)))
                .await?;
            format!("drift issue #{number} reopened: the drift is back")
        }
        issue::Step::Close { number, body } => {
            api.edit_issue(number, &edit(Some("closed"), Some("completed"), Some(body)))
                .await?;
            format!("drift issue #{number} closed: no drift left")
        }
        issue::Step::CloseDuplicate { number, of } => {
            api.create_comment(
                number,
                &format!("Duplicate of #{of} (two runs overlapped)."),
            )
            .await?;
            api.edit_issue(number, &edit(Some("closed"), Some("not_planned"), None))
                .await?;
            format!("duplicate drift issue #{number} closed in favour of #{of}")
        }
        issue::Step::Comment { number, text } => {
            api.create_comment(number, &text).await?;
            format!("commented on drift issue #{number}")
        }
    })
}

#[cfg(test)]
mod tests;
