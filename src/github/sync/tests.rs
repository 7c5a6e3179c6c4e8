//! The sync against an in-memory repository: what it writes, and the notes it returns.

use std::cell::RefCell;

use super::*;
use crate::doc::Text;
use crate::github::api::{Issue, IssueComment, Posted, User};
use crate::util::date::Timestamp;

const BOT: &str = "github-actions[bot]";
const HEAD: &str = "0123456789abcdef0123456789abcdef01234567";

#[derive(Default)]
struct Fake {
    head: Option<String>,
    comments: RefCell<Vec<IssueComment>>,
    issues: RefCell<Vec<Issue>>,
    next: RefCell<u64>,
    /// Another run creates an issue just before ours.
    race: bool,
    writes: RefCell<Vec<String>>,
}

fn user(login: &str) -> Option<User> {
    Some(User {
        login: Some(login.to_string()),
    })
}

impl Fake {
    fn id(&self) -> u64 {
        let mut n = self.next.borrow_mut();
        *n += 1;
        *n
    }
    fn comment(&self, by: &str, body: &str) -> u64 {
        let id = self.id();
        self.comments.borrow_mut().push(IssueComment {
            id,
            node_id: Some(format!("IC_{id}")),
            user: user(by),
            body: Some(body.to_string()),
        });
        id
    }
    fn issue(&self, open: bool, reason: Option<&str>, body: &str) -> u64 {
        let number = self.id();
        self.issues.borrow_mut().push(Issue {
            number,
            state: if open { "open" } else { "closed" }.into(),
            state_reason: reason.map(str::to_string),
            pull_request: false,
            user: user(BOT),
            body: Some(body.to_string()),
        });
        number
    }
    fn wrote(&self, w: String) {
        self.writes.borrow_mut().push(w);
    }
}

fn url(id: u64) -> Posted {
    Posted {
        html_url: Some(format!("https://github.test/{id}")),
        id: None,
    }
}

impl Api for Fake {
    async fn pull_head(&self, _: u64) -> Result<Option<String>, GitHubError> {
        Ok(self.head.clone())
    }
    async fn commit_time(&self, _: &str) -> Result<Option<Timestamp>, GitHubError> {
        Ok(None)
    }
    async fn comments(&self, _: u64) -> Result<Vec<IssueComment>, GitHubError> {
        Ok(self.comments.borrow().clone())
    }
    async fn create_comment(&self, on: u64, body: &str) -> Result<Posted, GitHubError> {
        self.wrote(format!("comment on {on}"));
        Ok(url(self.comment(BOT, body)))
    }
    async fn update_comment(&self, id: u64, body: &str) -> Result<Posted, GitHubError> {
        self.wrote(format!("update {id}"));
        for c in self.comments.borrow_mut().iter_mut().filter(|c| c.id == id) {
            c.body = Some(body.to_string());
        }
        Ok(url(id))
    }
    async fn minimize_comment(&self, node_id: &str) -> Result<(), GitHubError> {
        self.wrote(format!("minimize {node_id}"));
        Ok(())
    }
    async fn delete_comment(&self, id: u64) -> Result<(), GitHubError> {
        self.wrote(format!("delete {id}"));
        self.comments.borrow_mut().retain(|c| c.id != id);
        Ok(())
    }
    async fn issues(&self, _: &str) -> Result<Vec<Issue>, GitHubError> {
        Ok(self.issues.borrow().clone())
    }
    async fn create_issue(&self, _: &str, body: &str, _: &str) -> Result<Posted, GitHubError> {
        if self.race {
            self.issue(true, None, body);
        }
        let n = self.issue(true, None, body);
        self.wrote(format!("create issue {n}"));
        Ok(url(n))
    }
    async fn edit_issue(&self, number: u64, edit: &IssueEdit) -> Result<(), GitHubError> {
        self.wrote(format!(
            "edit {number} {:?} {:?} {}",
            edit.state,
            edit.state_reason,
            edit.body.is_some()
        ));
        for i in self
            .issues
            .borrow_mut()
            .iter_mut()
            .filter(|i| i.number == number)
        {
            if let Some(s) = edit.state {
                i.state = s.to_string();
            }
            i.state_reason = edit.state_reason.map(str::to_string);
            if let Some(b) = &edit.body {
                i.body = Some(b.clone());
            }
        }
        Ok(())
    }
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a test runtime")
        .block_on(f)
}

fn report(text: &str) -> Doc {
    let mut d = Doc::new();
    d.paragraph(Text::new().plain(text.to_string()));
    d
}

fn marker(posting: &str) -> Marker {
    let mut m = Marker::comment("prod", HEAD, Timestamp::from_unix(1_700_000_000));
    m.posting = Some(posting.to_string());
    m
}

/// The body a run would post for `text`.
fn body(text: &str, posting: &str) -> String {
    comment::bodies(&report(text), "\nfooter", &marker(posting), 3, "more")
        .into_iter()
        .next()
        .unwrap_or_default()
}

fn post(fake: &Fake, text: &str, behavior: Behavior) -> Vec<String> {
    let doc = report(text);
    let job = CommentJob {
        pr: 7,
        author: BOT,
        report: &doc,
        footer: "footer",
        overflow: "more",
        max_parts: 3,
        marker: marker("2.1"),
        local_time: true,
        behavior,
        skip_unchanged: false,
    };
    block_on(comment(fake, job)).unwrap_or_else(|e| vec![format!("error: {e}")])
}

fn writes(fake: &Fake) -> Vec<String> {
    fake.writes.borrow().clone()
}

#[test]
fn the_first_comment_is_created() {
    let fake = Fake {
        head: Some(HEAD.into()),
        ..Fake::default()
    };
    assert_eq!(
        post(&fake, "4 GPUs more", Behavior::Update),
        ["comment created: https://github.test/1"]
    );
    assert_eq!(writes(&fake), ["comment on 7"]);
}

#[test]
fn a_changed_report_updates_our_comment_in_place() {
    let fake = Fake::default();
    let id = fake.comment(BOT, &body("4 GPUs more", "1.1"));
    assert_eq!(
        post(&fake, "8 GPUs more", Behavior::Update),
        [format!("comment updated: https://github.test/{id}")]
    );
    assert_eq!(writes(&fake), [format!("update {id}")]);
}

#[test]
fn an_unchanged_report_writes_nothing() {
    let fake = Fake::default();
    fake.comment(BOT, &body("4 GPUs more", "1.1"));
    assert_eq!(
        post(&fake, "4 GPUs more", Behavior::Update),
        ["the comment for scope \"prod\" already says this: nothing posted"]
    );
    assert!(writes(&fake).is_empty());
}

#[test]
fn a_run_for_a_stale_head_posts_nothing() {
    let fake = Fake {
        head: Some("fedcba9876543210fedcba9876543210fedcba98".into()),
        ..Fake::default()
    };
    let done = post(&fake, "4 GPUs more", Behavior::Update);
    assert_eq!(done.len(), 1);
    assert!(
        done[0].starts_with("the pull request's head is now fedcba9")
            && done[0].ends_with(": nothing posted"),
        "{done:?}"
    );
    assert!(writes(&fake).is_empty());
}

#[test]
fn hide_and_new_and_delete_and_new_retire_the_earlier_comment() {
    let fake = Fake::default();
    let id = fake.comment(BOT, &body("4 GPUs more", "1.1"));
    assert_eq!(
        post(&fake, "8 GPUs more", Behavior::HideAndNew),
        [
            "comment created: https://github.test/2".to_string(),
            format!("earlier comment {id} hidden as outdated")
        ]
    );
    assert_eq!(
        writes(&fake),
        ["comment on 7".to_string(), format!("minimize IC_{id}")]
    );

    let fake = Fake::default();
    let id = fake.comment(BOT, &body("4 GPUs more", "1.1"));
    assert_eq!(
        post(&fake, "8 GPUs more", Behavior::DeleteAndNew),
        [
            "comment created: https://github.test/2".to_string(),
            format!("earlier comment {id} deleted")
        ]
    );
}

#[test]
fn a_marker_forged_by_another_author_is_ignored() {
    let fake = Fake::default();
    fake.comment("mallory", &body("4 GPUs more", "1.1"));
    assert_eq!(
        post(&fake, "4 GPUs more", Behavior::Update),
        ["comment created: https://github.test/2"]
    );
}

#[test]
fn skip_no_change_posts_nothing_unless_we_posted_before() {
    let fake = Fake::default();
    let doc = report("no change");
    let job = |m| CommentJob {
        pr: 7,
        author: BOT,
        report: &doc,
        footer: "footer",
        overflow: "more",
        max_parts: 3,
        marker: m,
        local_time: true,
        behavior: Behavior::Update,
        skip_unchanged: true,
    };
    let done = block_on(comment(&fake, job(marker("2.1")))).unwrap_or_default();
    assert_eq!(
        done,
        ["no GPU change and no drift introduced: nothing posted (--skip-no-change)"]
    );
    assert!(writes(&fake).is_empty());
}

fn now(drifting: bool, digest: &str, text: &str) -> Now {
    let mut marker = Marker::issue("prod", digest);
    marker.report = Some(crate::github::marker::digest([text]));
    Now {
        drifting,
        body: format!("{}\n{text}", marker.render()),
        marker,
        summary: "2 unmanaged".into(),
    }
}

fn keep(fake: &Fake, now: &Now) -> Vec<String> {
    let job = IssueJob {
        author: BOT,
        label: "gpu-drift",
        title: "GPU drift: prod",
        now,
    };
    block_on(issue(fake, job)).unwrap_or_else(|e| vec![format!("error: {e}")])
}

#[test]
fn drift_opens_the_tracking_issue() {
    let fake = Fake::default();
    assert_eq!(
        keep(&fake, &now(true, "d1", "report")),
        ["drift issue opened: https://github.test/1"]
    );
    assert_eq!(writes(&fake), ["create issue 1"]);
}

#[test]
fn a_changed_report_edits_and_an_unchanged_one_does_nothing() {
    let fake = Fake::default();
    let n = fake.issue(true, None, &now(true, "d1", "old").body);
    assert_eq!(
        keep(&fake, &now(true, "d1", "new")),
        [format!("drift issue #{n} updated")]
    );
    assert_eq!(writes(&fake), [format!("edit {n} None None true")]);
    assert_eq!(
        keep(&fake, &now(true, "d1", "new")),
        ["the tracking issue for scope \"prod\" is up to date"]
    );
    assert_eq!(writes(&fake).len(), 1);
}

#[test]
fn no_drift_closes_and_drift_back_reopens() {
    let fake = Fake::default();
    let n = fake.issue(true, None, &now(true, "d1", "old").body);
    assert_eq!(
        keep(&fake, &now(false, "d0", "clean")),
        [
            format!("commented on drift issue #{n}"),
            format!("drift issue #{n} closed: no drift left")
        ]
    );
    assert_eq!(
        writes(&fake).last().cloned(),
        Some(format!(
            "edit {n} Some(\"closed\") Some(\"completed\") true"
        ))
    );
    assert_eq!(
        keep(&fake, &now(true, "d1", "back")),
        [
            format!("drift issue #{n} reopened: the drift is back"),
            format!("commented on drift issue #{n}")
        ]
    );
}

#[test]
fn overlapping_creates_converge_on_the_lowest_number() {
    let fake = Fake {
        race: true,
        ..Fake::default()
    };
    assert_eq!(
        keep(&fake, &now(true, "d1", "report")),
        [
            "drift issue opened: https://github.test/2",
            "duplicate drift issue #2 closed in favour of #1"
        ]
    );
    assert_eq!(
        writes(&fake),
        [
            "create issue 2",
            "comment on 2",
            "edit 2 Some(\"closed\") Some(\"not_planned\") false"
        ]
    );
}

#[test]
fn issues_by_others_and_pull_requests_are_not_ours() {
    let fake = Fake::default();
    let body = now(true, "d1", "report").body;
    fake.issue(true, None, &body);
    for i in fake.issues.borrow_mut().iter_mut() {
        i.user = user("mallory");
    }
    let n = fake.issue(true, None, &body);
    for i in fake
        .issues
        .borrow_mut()
        .iter_mut()
        .filter(|i| i.number == n)
    {
        i.pull_request = true;
    }
    assert_eq!(
        keep(&fake, &now(true, "d1", "report")),
        ["drift issue opened: https://github.test/3"]
    );
}
