//! How a report names the commits it read: the ref as given, the commit's short sha and subject,
//! and a sentence people read (`origin/main (abc1234 "Fix x")`, `working tree on top of …`, `merge
//! of … into …` on Actions' pull-request checkout). Read with git2; nothing is run.

use std::path::Path;

use crate::report::GitProvenance;

/// How the working tree was checked out, to name its commit: locally it may hold uncommitted
/// changes; under GitHub Actions it is a commit (on a pull request, the head or the merge of the
/// head into the base), and it is never called "working tree" there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Checkout<'a> {
    Local,
    Actions {
        /// The pull request's head sha (`pull_request.head.sha`), on a pull_request event.
        pr_head: Option<&'a str>,
    },
}

/// Characters of a commit subject shown in a report.
const SUBJECT_CHARS: usize = 72;

/// One side of Git as a report names it: the ref as given, the commit's short sha and subject
/// (read with git2), and how people read it. `git_ref` `None` is the working tree.
pub fn git_side(
    repo: &Path,
    side: &str,
    git_ref: Option<&str>,
    checkout: Checkout<'_>,
) -> GitProvenance {
    let git = git2::Repository::discover(repo).ok();
    let short = |sha: &str| sha.get(..7).unwrap_or(sha).to_string();
    let subject = |c: &git2::Commit<'_>| {
        c.summary()
            .ok()
            .flatten()
            .map(|s| {
                // One line, cut with an ellipsis: a long subject must not push the line off screen.
                let s: String = s.chars().filter(|c| !c.is_control()).collect();
                let s = s.trim();
                if s.chars().count() > SUBJECT_CHARS {
                    s.chars().take(SUBJECT_CHARS - 1).collect::<String>() + "…"
                } else {
                    s.to_string()
                }
            })
            .filter(|s| !s.is_empty())
    };
    let named = |sha: &str, subj: Option<&str>| match subj {
        Some(s) => format!("{sha} \"{s}\""),
        None => sha.to_string(),
    };
    let mut out = GitProvenance {
        side: side.to_string(),
        git_ref: git_ref.map(str::to_string),
        commit: None,
        subject: None,
        working_tree: git_ref.is_none(),
        describe: String::new(),
    };
    let commit = match (git.as_ref(), git_ref) {
        (Some(g), Some(r)) => g
            .revparse_single(r)
            .ok()
            .and_then(|o| o.peel_to_commit().ok()),
        (Some(g), None) => g.head().ok().and_then(|h| h.peel_to_commit().ok()),
        (None, _) => None,
    };
    let Some(c) = commit else {
        out.describe = match (git_ref, checkout) {
            (Some(r), _) => r.to_string(),
            (None, Checkout::Local) => "working tree (not a git repository)".to_string(),
            (None, Checkout::Actions { pr_head: Some(h) }) => short(h),
            (None, Checkout::Actions { pr_head: None }) => "the checkout (no git history)".into(),
        };
        return out;
    };
    let full = c.id().to_string();
    let sha = short(&full);
    let subj = subject(&c);
    let this = named(&sha, subj.as_deref());
    out.describe = match (git_ref, checkout) {
        // A ref that is the sha itself says nothing more than the sha.
        (Some(r), _) if full.starts_with(r) => this.clone(),
        (Some(r), _) => format!("{r} ({this})"),
        (None, Checkout::Local) => format!("working tree on top of {this}"),
        (None, Checkout::Actions { pr_head: Some(h) }) if full == h => this.clone(),
        (None, Checkout::Actions { pr_head: Some(h) })
            if c.parent_count() == 2 && c.parent_id(1).is_ok_and(|p| p.to_string() == h) =>
        {
            // actions/checkout's default for a pull request: the merge of its head into the base.
            let head = git
                .as_ref()
                .and_then(|g| g.find_commit(c.parent_id(1).ok()?).ok());
            let base = c
                .parent_id(0)
                .map(|p| short(&p.to_string()))
                .unwrap_or_default();
            format!(
                "merge of {} into {base}",
                named(&short(h), head.as_ref().and_then(subject).as_deref())
            )
        }
        (None, Checkout::Actions { pr_head: Some(h) }) => {
            format!("{this} (the pull request's head is {})", short(h))
        }
        (None, Checkout::Actions { pr_head: None }) => this.clone(),
    };
    out.commit = Some(sha);
    out.subject = subj;
    out
}
