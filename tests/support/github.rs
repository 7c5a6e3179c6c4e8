//! A fake GitHub for the integration tests: a wiremock server with one stateful responder that
//! speaks the REST and GraphQL shapes gpuledger uses — issue comments (list with `Link`
//! pagination, create, edit, delete), issues (list by label and state, create, edit), a pull
//! request's head, a commit's date, and the `minimizeComment` mutation — and keeps every request
//! (with its time) for assertions. It serves github.com's layout, or GitHub Enterprise Server's
//! (`/api/v3` for REST, `/api/graphql`).
//!
//! Faults are injected per request: a queue of canned answers (502, 429 with `retry-after`, the
//! 403 a fork's read-only token gets) served before the state is touched, a read-only switch, and a
//! delay on issue lists to make two runs overlap, and a comment or issue deleted by someone between
//! a run's list and its edit (`vanish_on_edit`: 404 for a comment, 410 for an issue, as GitHub).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use wiremock::matchers::any;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

pub const TOKEN: &str = "ghs_fake-token-for-tests-0123456789";
pub const REPO: &str = "acme/gitops";
/// The login behind [`TOKEN`], as Actions' token is.
pub const BOT: &str = "github-actions[bot]";

#[derive(Debug, Clone)]
pub struct Comment {
    pub id: u64,
    pub issue: u64,
    pub body: String,
    pub minimized: bool,
    pub user: String,
}

#[derive(Debug, Clone)]
pub struct Issue {
    pub number: u64,
    pub title: String,
    pub body: String,
    pub state: String,
    pub state_reason: Option<String>,
    pub labels: Vec<String>,
    pub pull_request: bool,
    pub user: String,
    /// Pull requests: the head commit.
    pub head_sha: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Logged {
    pub method: String,
    pub path: String,
    pub query: String,
    pub authorized: bool,
    pub at: Instant,
}

#[derive(Debug, Default)]
pub struct State {
    pub comments: Vec<Comment>,
    pub issues: Vec<Issue>,
    pub requests: Vec<Logged>,
    /// Served, in order, before anything else (and not applied to the state).
    pub faults: VecDeque<ResponseTemplate>,
    /// Served, in order, to POST requests before anything else.
    pub post_faults: VecDeque<ResponseTemplate>,
    /// Every write is refused like a fork's read-only token.
    pub read_only: bool,
    pub list_delay: Duration,
    /// The next edit (PATCH) of a comment or an issue finds it deleted: the comment or issue is
    /// removed and the edit answered 404 (comment) or 410 "This issue was deleted" (issue).
    pub vanish_on_edit: bool,
    /// Commits the API knows: sha → committer date.
    pub commits: Vec<(String, String)>,
    /// The repository every pull request's head lives in (a fork's); `None`: this repository.
    pub head_repo: Option<String>,
    next_id: u64,
    /// The highest issue number given: GitHub never gives a deleted issue's number again.
    last_number: u64,
    base: String,
    /// `/api/v3` on GitHub Enterprise Server.
    prefix: String,
}

impl State {
    fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// Issue numbers are shared by issues and pull requests, as on GitHub, and never reused.
    fn number(&mut self) -> u64 {
        let max = self.issues.iter().map(|i| i.number).max().unwrap_or(0);
        self.last_number = self.last_number.max(max) + 1;
        self.last_number
    }

    pub fn add_issue(
        &mut self,
        title: &str,
        body: &str,
        state: &str,
        labels: &[&str],
        pr: bool,
    ) -> u64 {
        let number = self.number();
        self.issues.push(Issue {
            number,
            title: title.into(),
            body: body.into(),
            state: state.into(),
            state_reason: None,
            labels: labels.iter().map(|l| l.to_string()).collect(),
            pull_request: pr,
            user: BOT.into(),
            head_sha: None,
        });
        number
    }

    /// Pull request `number` with its head commit.
    pub fn add_pull(&mut self, number: u64, head: &str) {
        self.issues.retain(|i| i.number != number);
        self.issues.push(Issue {
            number,
            title: format!("pull request {number}"),
            body: String::new(),
            state: "open".into(),
            state_reason: None,
            labels: vec![],
            pull_request: true,
            user: "alice".into(),
            head_sha: Some(head.into()),
        });
    }

    /// A comment by the bot.
    pub fn add_comment(&mut self, issue: u64, body: &str) -> u64 {
        self.add_comment_by(issue, body, BOT)
    }

    pub fn add_comment_by(&mut self, issue: u64, body: &str, user: &str) -> u64 {
        let id = self.id();
        self.comments.push(Comment {
            id,
            issue,
            body: body.into(),
            minimized: false,
            user: user.into(),
        });
        id
    }

    pub fn comments_on(&self, issue: u64) -> Vec<&Comment> {
        self.comments.iter().filter(|c| c.issue == issue).collect()
    }

    pub fn writes(&self) -> Vec<&Logged> {
        self.requests.iter().filter(|r| r.method != "GET").collect()
    }
}

pub struct FakeGitHub {
    /// Serves as long as it lives.
    _server: MockServer,
    state: Arc<Mutex<State>>,
    _rt: tokio::runtime::Runtime,
}

impl FakeGitHub {
    /// github.com's layout.
    pub fn start() -> FakeGitHub {
        FakeGitHub::serve("")
    }

    /// GitHub Enterprise Server's layout: REST under `/api/v3`, GraphQL at `/api/graphql`.
    pub fn start_enterprise() -> FakeGitHub {
        FakeGitHub::serve("/api/v3")
    }

    fn serve(prefix: &str) -> FakeGitHub {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let state = Arc::new(Mutex::new(State {
            next_id: 1000,
            ..State::default()
        }));
        let server = rt.block_on(async {
            let server = MockServer::start().await;
            Mock::given(any())
                .respond_with(Hub(state.clone()))
                .mount(&server)
                .await;
            server
        });
        {
            let mut s = state.lock().unwrap();
            s.base = format!("{}{prefix}", server.uri());
            s.prefix = prefix.to_string();
        }
        FakeGitHub {
            _server: server,
            state,
            _rt: rt,
        }
    }

    /// The REST base, as `GITHUB_API_URL` would give it.
    pub fn url(&self) -> String {
        self.state.lock().unwrap().base.clone()
    }

    pub fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap()
    }
}

struct Hub(Arc<Mutex<State>>);

fn json_response(status: u16, body: Value) -> ResponseTemplate {
    ResponseTemplate::new(status)
        .insert_header("content-type", "application/json; charset=utf-8")
        .set_body_json(body)
}

pub fn fork_forbidden() -> ResponseTemplate {
    json_response(
        403,
        json!({
            "message": "Resource not accessible by integration",
            "documentation_url": "https://docs.github.com/rest/issues/comments#create-an-issue-comment",
            "status": "403"
        }),
    )
}

pub fn bad_gateway() -> ResponseTemplate {
    ResponseTemplate::new(502)
        .insert_header("content-type", "text/html")
        .set_body_string("<html><body><h1>502 Bad Gateway</h1></body></html>")
}

/// A primary rate limit: no requests left until `reset` (epoch seconds).
pub fn rate_limited(reset: u64) -> ResponseTemplate {
    json_response(
        403,
        json!({ "message": "API rate limit exceeded for installation ID 1234.",
                "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api" }),
    )
    .insert_header("x-ratelimit-limit", "5000")
    .insert_header("x-ratelimit-remaining", "0")
    .insert_header("x-ratelimit-reset", reset.to_string().as_str())
}

pub fn too_many(retry_after: u64) -> ResponseTemplate {
    json_response(
        429,
        json!({ "message": "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
                "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api" }),
    )
    .insert_header("retry-after", retry_after.to_string().as_str())
}

/// A 422 as GitHub words a validation error: the reason is in `errors[].message`.
pub fn validation_failed(reason: &str) -> ResponseTemplate {
    json_response(
        422,
        json!({ "message": "Validation Failed", "errors": [{ "resource": "IssueComment", "code": "custom", "field": "body", "message": reason }], "documentation_url": "https://docs.github.com/rest" }),
    )
}

fn not_found() -> ResponseTemplate {
    json_response(
        404,
        json!({ "message": "Not Found", "documentation_url": "https://docs.github.com/rest" }),
    )
}

impl Respond for Hub {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let mut s = self.0.lock().unwrap();
        let authorized = req
            .headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v == format!("Bearer {TOKEN}"));
        s.requests.push(Logged {
            method: req.method.as_str().to_string(),
            path: req.url.path().to_string(),
            query: req.url.query().unwrap_or("").to_string(),
            authorized,
            at: Instant::now(),
        });
        if !authorized {
            return json_response(
                401,
                json!({ "message": "Bad credentials", "documentation_url": "https://docs.github.com/rest" }),
            );
        }
        if let Some(fault) = s.faults.pop_front() {
            return fault;
        }
        let method = req.method.as_str();
        if method == "POST"
            && let Some(fault) = s.post_faults.pop_front()
        {
            return fault;
        }
        if s.read_only && method != "GET" {
            return fork_forbidden();
        }
        let full = req.url.path().to_string();
        let graphql = if s.prefix.is_empty() {
            "/graphql"
        } else {
            "/api/graphql"
        };
        let path = if full == graphql {
            "/graphql".to_string()
        } else {
            match full.strip_prefix(s.prefix.as_str()) {
                Some(p) if p.starts_with('/') => p.to_string(),
                _ => return not_found(),
            }
        };
        let query: Vec<(String, String)> = req
            .url
            .query_pairs()
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        let q = |k: &str| query.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        let body: Value = req.body_json().unwrap_or(Value::Null);
        let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
        let path = full;
        let base = s.base.clone();
        // Link headers carry the full path already.
        let root = base
            .strip_suffix(s.prefix.as_str())
            .unwrap_or(&base)
            .to_string();
        let repo_ok =
            segs.len() >= 3 && segs[0] == "repos" && format!("{}/{}", segs[1], segs[2]) == REPO;

        if method == "POST" && segs == ["graphql"] {
            let query = body["query"].as_str().unwrap_or("");
            let compact: String = query.split_whitespace().collect::<Vec<_>>().join(" ");
            if !compact.contains("minimizeComment(input: {subjectId: $id, classifier: OUTDATED})") {
                return json_response(
                    200,
                    json!({ "errors": [{ "message": format!("unexpected query in the fake: {query}") }] }),
                );
            }
            let id = body["variables"]["id"].as_str().unwrap_or("").to_string();
            let Some(c) = s.comments.iter_mut().find(|c| format!("IC_{}", c.id) == id) else {
                return json_response(
                    200,
                    json!({ "data": null, "errors": [{ "type": "NOT_FOUND", "message": format!("Could not resolve to a node with the global id of '{id}'.") }] }),
                );
            };
            c.minimized = true;
            return json_response(
                200,
                json!({ "data": { "minimizeComment": { "minimizedComment": { "isMinimized": true } } } }),
            );
        }
        if !repo_ok {
            return not_found();
        }
        match (method, &segs[3..]) {
            ("GET", ["pulls", n]) => {
                let n: u64 = n.parse().unwrap_or(0);
                match s.issues.iter().find(|i| i.number == n && i.pull_request) {
                    Some(p) => json_response(
                        200,
                        json!({ "number": n, "state": p.state, "head": { "sha": p.head_sha, "ref": "feature", "repo": { "full_name": s.head_repo.as_deref().unwrap_or(REPO) } }, "base": { "ref": "main" } }),
                    ),
                    None => not_found(),
                }
            }
            ("GET", ["commits", sha]) => match s.commits.iter().find(|(c, _)| c == sha) {
                Some((c, date)) => json_response(
                    200,
                    json!({ "sha": c, "commit": { "committer": { "name": "t", "date": date }, "message": "m" } }),
                ),
                None => json_response(
                    422,
                    json!({ "message": format!("No commit found for SHA: {sha}") }),
                ),
            },
            ("GET", ["issues", n, "comments"]) => {
                let n: u64 = n.parse().unwrap_or(0);
                let all: Vec<Value> = s
                    .comments_on(n)
                    .iter()
                    .map(|c| comment_json(c, &base))
                    .collect();
                page(&all, &q, &root, &path, &query, Duration::ZERO)
            }
            ("POST", ["issues", n, "comments"]) => {
                let n: u64 = n.parse().unwrap_or(0);
                if !s.issues.iter().any(|i| i.number == n) {
                    return not_found();
                }
                let text = body["body"].as_str().unwrap_or("").to_string();
                if text.chars().count() > 65_536 {
                    return json_response(
                        422,
                        json!({ "message": "Validation Failed", "errors": [{ "resource": "IssueComment", "code": "custom", "field": "body", "message": "body is too long (maximum is 65536 characters)" }] }),
                    );
                }
                let id = s.add_comment_by(n, &text, BOT);
                let c = s.comments.iter().find(|c| c.id == id).unwrap().clone();
                json_response(201, comment_json(&c, &base))
            }
            ("PATCH", ["issues", "comments", id]) => {
                let id: u64 = id.parse().unwrap_or(0);
                if std::mem::take(&mut s.vanish_on_edit) {
                    s.comments.retain(|c| c.id != id);
                }
                let Some(c) = s.comments.iter_mut().find(|c| c.id == id) else {
                    return not_found();
                };
                c.body = body["body"].as_str().unwrap_or("").to_string();
                let c = c.clone();
                json_response(200, comment_json(&c, &base))
            }
            ("DELETE", ["issues", "comments", id]) => {
                let id: u64 = id.parse().unwrap_or(0);
                let before = s.comments.len();
                s.comments.retain(|c| c.id != id);
                if s.comments.len() == before {
                    return not_found();
                }
                ResponseTemplate::new(204)
            }
            ("GET", ["issues"]) => {
                let state = q("state").unwrap_or_else(|| "open".into());
                let labels: Vec<String> = q("labels")
                    .map(|l| l.split(',').map(str::to_string).collect())
                    .unwrap_or_default();
                let all: Vec<Value> = s
                    .issues
                    .iter()
                    .filter(|i| state == "all" || i.state == state)
                    .filter(|i| labels.iter().all(|l| i.labels.contains(l)))
                    .rev() // newest first, as GitHub lists them
                    .map(|i| issue_json(i, &base))
                    .collect();
                let delay = s.list_delay;
                page(&all, &q, &root, &path, &query, delay)
            }
            ("POST", ["issues"]) | ("PATCH", ["issues", _])
                if body["body"]
                    .as_str()
                    .is_some_and(|b| b.chars().count() > 65_536) =>
            {
                json_response(
                    422,
                    json!({ "message": "Validation Failed", "errors": [{ "resource": "Issue", "code": "custom", "field": "body", "message": "body is too long (maximum is 65536 characters)" }] }),
                )
            }
            ("POST", ["issues"]) => {
                let labels: Vec<String> = body["labels"]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .filter_map(|l| l.as_str().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default();
                let labels: Vec<&str> = labels.iter().map(String::as_str).collect();
                let n = s.add_issue(
                    body["title"].as_str().unwrap_or(""),
                    body["body"].as_str().unwrap_or(""),
                    "open",
                    &labels,
                    false,
                );
                let i = s.issues.iter().find(|i| i.number == n).unwrap().clone();
                json_response(201, issue_json(&i, &base))
            }
            ("PATCH", ["issues", n]) => {
                let n: u64 = n.parse().unwrap_or(0);
                if std::mem::take(&mut s.vanish_on_edit) && s.issues.iter().any(|i| i.number == n) {
                    s.issues.retain(|i| i.number != n);
                    return json_response(
                        410,
                        json!({ "message": "This issue was deleted", "documentation_url": "https://docs.github.com/rest" }),
                    );
                }
                let Some(i) = s.issues.iter_mut().find(|i| i.number == n) else {
                    return not_found();
                };
                if let Some(b) = body["body"].as_str() {
                    i.body = b.to_string();
                }
                if let Some(t) = body["title"].as_str() {
                    i.title = t.to_string();
                }
                if let Some(st) = body["state"].as_str() {
                    i.state = st.to_string();
                    i.state_reason = match st {
                        "open" => Some("reopened".into()),
                        _ => body["state_reason"]
                            .as_str()
                            .map(str::to_string)
                            .or(Some("completed".into())),
                    };
                }
                let i = i.clone();
                json_response(200, issue_json(&i, &base))
            }
            _ => not_found(),
        }
    }
}

/// One page of a list (`per_page`, default 30; `page`, default 1) with GitHub's `Link` header.
fn page(
    all: &[Value],
    q: &dyn Fn(&str) -> Option<String>,
    base: &str,
    path: &str,
    query: &[(String, String)],
    delay: Duration,
) -> ResponseTemplate {
    let per: usize = q("per_page")
        .and_then(|v| v.parse().ok())
        .unwrap_or(30)
        .clamp(1, 100);
    let p: usize = q("page").and_then(|v| v.parse().ok()).unwrap_or(1).max(1);
    let items: Vec<Value> = all.iter().skip((p - 1) * per).take(per).cloned().collect();
    let mut r = json_response(200, Value::Array(items));
    if p * per < all.len() {
        let mut next: Vec<String> = query
            .iter()
            .filter(|(k, _)| k != "page")
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        next.push(format!("page={}", p + 1));
        let last = all.len().div_ceil(per);
        let link = format!(
            "<{base}{path}?{}>; rel=\"next\", <{base}{path}?page={last}>; rel=\"last\"",
            next.join("&")
        );
        r = r.insert_header("link", link.as_str());
    }
    if !delay.is_zero() {
        r = r.set_delay(delay);
    }
    r
}

fn comment_json(c: &Comment, base: &str) -> Value {
    let kind = if c.user.ends_with("[bot]") {
        "Bot"
    } else {
        "User"
    };
    json!({
        "id": c.id,
        "node_id": format!("IC_{}", c.id),
        "url": format!("{base}/repos/{REPO}/issues/comments/{}", c.id),
        "html_url": format!("https://github.com/{REPO}/pull/{}#issuecomment-{}", c.issue, c.id),
        "issue_url": format!("{base}/repos/{REPO}/issues/{}", c.issue),
        "body": c.body,
        "user": { "login": c.user, "id": 41898282, "type": kind },
        "created_at": "2026-11-30T10:00:00Z",
        "updated_at": "2026-11-30T10:00:00Z",
        "author_association": "NONE"
    })
}

fn issue_json(i: &Issue, base: &str) -> Value {
    let mut v = json!({
        "id": 5_000_000 + i.number,
        "node_id": format!("I_{}", i.number),
        "number": i.number,
        "url": format!("{base}/repos/{REPO}/issues/{}", i.number),
        "html_url": format!("https://github.com/{REPO}/issues/{}", i.number),
        "title": i.title,
        "body": i.body,
        "state": i.state,
        "state_reason": i.state_reason,
        "labels": i.labels.iter().map(|l| json!({ "name": l, "color": "ededed" })).collect::<Vec<_>>(),
        "user": { "login": i.user, "type": if i.user.ends_with("[bot]") { "Bot" } else { "User" } },
        "comments": 0,
        "created_at": "2026-11-30T10:00:00Z"
    });
    if i.pull_request {
        v["pull_request"] = json!({ "url": format!("{base}/repos/{REPO}/pulls/{}", i.number) });
    }
    v
}
