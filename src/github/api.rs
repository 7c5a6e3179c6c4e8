//! The few GitHub objects gpuledger reads, as typed models, and the calls it makes on one
//! repository, as typed methods over [`GitHub`](super::client::GitHub).
//!
//! The models are lenient on purpose: a list item that does not parse (no `id`, a `null` body) is
//! not ours and is skipped, never an error, and a field of an unexpected type reads as absent —
//! the same tolerance as reading the JSON by hand.

use serde::{Deserialize, Deserializer};
use serde_json::{Value, json};

use super::client::{GitHub, GitHubError};
use crate::util::date::Timestamp;

#[derive(Debug, Clone, Default, Deserialize)]
pub struct User {
    #[serde(default, deserialize_with = "text")]
    pub login: Option<String>,
}

/// A comment on an issue or pull request.
#[derive(Debug, Clone, Deserialize)]
pub struct IssueComment {
    pub id: u64,
    /// Present but possibly not text (then empty); a comment without one is skipped.
    #[serde(deserialize_with = "text")]
    pub node_id: Option<String>,
    #[serde(default)]
    pub user: Option<User>,
    pub body: Option<String>,
}

/// An issue; the issues API lists pull requests too, with a `pull_request` field.
#[derive(Debug, Clone, Deserialize)]
pub struct Issue {
    pub number: u64,
    pub state: String,
    #[serde(default, deserialize_with = "text")]
    pub state_reason: Option<String>,
    #[serde(default, deserialize_with = "present")]
    pub pull_request: bool,
    #[serde(default)]
    pub user: Option<User>,
    pub body: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct PullRequest {
    #[serde(default)]
    pub head: Option<Head>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct Head {
    #[serde(default, deserialize_with = "text")]
    pub sha: Option<String>,
    /// The branch, in `repo`.
    #[serde(default, rename = "ref", deserialize_with = "text")]
    pub branch: Option<String>,
    #[serde(default)]
    pub repo: Option<HeadRepo>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct HeadRepo {
    #[serde(default, deserialize_with = "text")]
    pub full_name: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct Commit {
    #[serde(default)]
    pub commit: Option<CommitDetail>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct CommitDetail {
    #[serde(default)]
    pub committer: Option<Signature>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct Signature {
    #[serde(default, deserialize_with = "text")]
    pub date: Option<String>,
}

/// What a create or update answers: where the thing now is.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Posted {
    #[serde(default, deserialize_with = "text")]
    pub html_url: Option<String>,
    /// Whatever GitHub put there (`null` included), shown as JSON.
    #[serde(default, deserialize_with = "any")]
    pub id: Option<Value>,
}

impl Posted {
    /// The page URL, else `id N`, else nothing.
    pub fn url(&self) -> String {
        self.html_url
            .clone()
            .or_else(|| self.id.as_ref().map(|id| format!("id {id}")))
            .unwrap_or_default()
    }
}

/// Anyone can paste a marker into a comment: ours only if written by the bot's login.
pub fn written_by(user: Option<&User>, login: &str) -> bool {
    user.and_then(|u| u.login.as_deref()) == Some(login)
}

/// A change to an issue: only the fields given are sent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IssueEdit {
    pub state: Option<&'static str>,
    pub state_reason: Option<&'static str>,
    pub body: Option<String>,
}

/// The calls the sync makes. A trait so the sync can be tested against an in-memory repository;
/// [`Repo`] is the real one.
#[allow(async_fn_in_trait)] // Used with concrete types on one thread; no `Send` bound is wanted.
pub trait Api {
    async fn pull_head(&self, pr: u64) -> Result<Option<String>, GitHubError>;
    async fn commit_time(&self, sha: &str) -> Result<Option<Timestamp>, GitHubError>;
    async fn comments(&self, pr: u64) -> Result<Vec<IssueComment>, GitHubError>;
    async fn create_comment(&self, pr: u64, body: &str) -> Result<Posted, GitHubError>;
    async fn update_comment(&self, id: u64, body: &str) -> Result<Posted, GitHubError>;
    async fn minimize_comment(&self, node_id: &str) -> Result<(), GitHubError>;
    async fn delete_comment(&self, id: u64) -> Result<(), GitHubError>;
    /// Issues with `label`, any state (pull requests included, as GitHub lists them).
    async fn issues(&self, label: &str) -> Result<Vec<Issue>, GitHubError>;
    async fn create_issue(
        &self,
        title: &str,
        body: &str,
        label: &str,
    ) -> Result<Posted, GitHubError>;
    async fn edit_issue(&self, number: u64, edit: &IssueEdit) -> Result<(), GitHubError>;
}

/// One repository (`owner/name`, already checked) through a client.
pub struct Repo<'a> {
    pub gh: &'a GitHub,
    pub slug: &'a str,
}

impl Repo<'_> {
    /// A pull request's head as the API has it now: commit, branch and repository.
    pub async fn pull(&self, pr: u64) -> Result<Head, GitHubError> {
        let v = self
            .gh
            .get(&format!("/repos/{}/pulls/{pr}", self.slug))
            .await?;
        Ok(lenient::<PullRequest>(v).head.unwrap_or_default())
    }
}

impl Api for Repo<'_> {
    async fn pull_head(&self, pr: u64) -> Result<Option<String>, GitHubError> {
        let v = self
            .gh
            .get(&format!("/repos/{}/pulls/{pr}", self.slug))
            .await?;
        Ok(lenient::<PullRequest>(v).head.and_then(|h| h.sha))
    }

    async fn commit_time(&self, sha: &str) -> Result<Option<Timestamp>, GitHubError> {
        let v = self
            .gh
            .get(&format!("/repos/{}/commits/{sha}", self.slug))
            .await?;
        Ok(lenient::<Commit>(v)
            .commit
            .and_then(|c| c.committer)
            .and_then(|c| c.date)
            .and_then(|d| Timestamp::parse(&d).ok()))
    }

    async fn comments(&self, pr: u64) -> Result<Vec<IssueComment>, GitHubError> {
        let items = self
            .gh
            .list(&format!("/repos/{}/issues/{pr}/comments", self.slug))
            .await?;
        Ok(parsed(items))
    }

    async fn create_comment(&self, pr: u64, body: &str) -> Result<Posted, GitHubError> {
        let path = format!("/repos/{}/issues/{pr}/comments", self.slug);
        let v = self.gh.post(&path, &json!({ "body": body })).await?;
        Ok(lenient(v))
    }

    async fn update_comment(&self, id: u64, body: &str) -> Result<Posted, GitHubError> {
        let path = format!("/repos/{}/issues/comments/{id}", self.slug);
        let v = self.gh.patch(&path, &json!({ "body": body })).await?;
        Ok(lenient(v))
    }

    async fn minimize_comment(&self, node_id: &str) -> Result<(), GitHubError> {
        self.gh
            .graphql(
                "minimizeComment",
                "mutation($id: ID!) { minimizeComment(input: {subjectId: $id, classifier: OUTDATED}) { minimizedComment { isMinimized } } }",
                json!({ "id": node_id }),
            )
            .await
            .map(|_| ())
    }

    async fn delete_comment(&self, id: u64) -> Result<(), GitHubError> {
        self.gh
            .delete(&format!("/repos/{}/issues/comments/{id}", self.slug))
            .await
    }

    async fn issues(&self, label: &str) -> Result<Vec<Issue>, GitHubError> {
        let path = format!(
            "/repos/{}/issues?state=all&labels={}",
            self.slug,
            form_urlencoded::byte_serialize(label.as_bytes()).collect::<String>()
        );
        Ok(parsed(self.gh.list(&path).await?))
    }

    async fn create_issue(
        &self,
        title: &str,
        body: &str,
        label: &str,
    ) -> Result<Posted, GitHubError> {
        let v = self
            .gh
            .post(
                &format!("/repos/{}/issues", self.slug),
                &json!({ "title": title, "body": body, "labels": [label] }),
            )
            .await?;
        Ok(lenient(v))
    }

    async fn edit_issue(&self, number: u64, edit: &IssueEdit) -> Result<(), GitHubError> {
        let mut fields = serde_json::Map::new();
        let mut put = |k: &str, v: Option<&str>| {
            if let Some(v) = v {
                fields.insert(k.to_string(), Value::String(v.to_string()));
            }
        };
        put("state", edit.state);
        put("state_reason", edit.state_reason);
        put("body", edit.body.as_deref());
        self.gh
            .patch(
                &format!("/repos/{}/issues/{number}", self.slug),
                &Value::Object(fields),
            )
            .await
            .map(|_| ())
    }
}

/// The items of a list that parse; the others cannot be ours.
fn parsed<T: for<'de> Deserialize<'de>>(items: Vec<Value>) -> Vec<T> {
    items
        .into_iter()
        .filter_map(|v| serde_json::from_value(v).ok())
        .collect()
}

/// An answer we only read optional fields of: one that does not parse has none of them.
fn lenient<T: for<'de> Deserialize<'de> + Default>(v: Value) -> T {
    serde_json::from_value(v).unwrap_or_default()
}

/// Any JSON value, read as text when it is text.
fn text<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::String(s) => Some(s),
        _ => None,
    })
}

fn any<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// True when the field is there at all, whatever it holds (`null` included).
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    serde::de::IgnoredAny::deserialize(d).map(|_| true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_items_are_read_as_leniently_as_by_hand() {
        let comments: Vec<IssueComment> = parsed(vec![
            json!({"id": 1, "node_id": "IC_1", "user": {"login": "bot"}, "body": "a"}),
            json!({"id": 2, "node_id": null, "body": "b"}),
            json!({"id": 3, "body": "no node id"}),
            json!({"node_id": "x", "body": "no id"}),
            json!({"id": 5, "node_id": "IC_5", "body": 7}),
        ]);
        let ids: Vec<u64> = comments.iter().map(|c| c.id).collect();
        assert_eq!(ids, [1, 2]);
        assert_eq!(comments[1].node_id, None);
        assert!(written_by(comments[0].user.as_ref(), "bot"));
        assert!(!written_by(comments[1].user.as_ref(), "bot"));

        let issues: Vec<Issue> = parsed(vec![
            json!({"number": 1, "state": "open", "state_reason": 3, "body": "x"}),
            json!({"number": 2, "state": "open", "pull_request": null, "body": "x"}),
        ]);
        assert_eq!(issues[0].state_reason, None);
        assert!(!issues[0].pull_request);
        assert!(issues[1].pull_request);
    }

    #[test]
    fn a_posted_thing_is_named_by_its_url_else_its_id() {
        let p: Posted = lenient(json!({"html_url": "https://x/1", "id": 1}));
        assert_eq!(p.url(), "https://x/1");
        assert_eq!(lenient::<Posted>(json!({"id": 9})).url(), "id 9");
        assert_eq!(lenient::<Posted>(Value::Null).url(), "");
    }

    #[test]
    fn odd_answers_have_no_head_or_date() {
        let p: PullRequest = lenient(json!({"head": "main"}));
        assert!(p.head.is_none());
        let c: Commit = lenient(json!({"commit": {"committer": {"date": 5}}}));
        assert_eq!(
            c.commit.and_then(|c| c.committer).and_then(|s| s.date),
            None
        );
    }
}
