//! The GitHub REST and GraphQL client: octocrab for the transport (TLS, auth header, base URL for
//! GitHub Enterprise Server), and our own bounded retry loop on top, because the decisions that
//! matter are ours: 5xx and 429 are retried with backoff honouring `retry-after` (and a rate-limit
//! 403's `x-ratelimit-reset`); a 403 that is not a rate limit is a permission answer — the
//! read-only token of a fork's pull request — and comes back as [`GitHubError::Forbidden`] so the
//! caller can fall back instead of failing. Errors name the method and path, never the token.

use std::time::Duration;

use http::{HeaderMap, Method, StatusCode};
use http_body_util::BodyExt;
use octocrab::Octocrab;
use serde_json::Value;

use crate::util::retry::{self, Attempt, GaveUp, Schedule};

#[derive(Debug, thiserror::Error)]
pub enum GitHubError {
    #[error(
        "{method} {path}: GitHub refused ({status}): {message}. The token may not do this: a pull request from a fork gets a read-only token, and the workflow needs the permissions listed in docs/github.md"
    )]
    Forbidden {
        method: Method,
        path: String,
        status: u16,
        message: String,
    },
    #[error("{method} {path}: GitHub answered {status}: {message}")]
    Status {
        method: Method,
        path: String,
        status: u16,
        message: String,
    },
    #[error("{method} {path}: {last} (gave up after {attempts} attempts)")]
    Exhausted {
        method: Method,
        path: String,
        attempts: u32,
        last: String,
    },
    #[error("GraphQL {operation}: {message}")]
    GraphQl { operation: String, message: String },
    #[error("{method} {path}: unexpected answer: {message}")]
    BadResponse {
        method: Method,
        path: String,
        message: String,
    },
    #[error("cannot set up the GitHub client for {api}: {message}")]
    Setup { api: String, message: String },
}

/// A request that got no answer to judge: it carries no token (octocrab's errors describe the
/// connection, and the auth header is never part of a URL).
#[derive(Debug, thiserror::Error)]
enum Transport {
    #[error("cannot build the request: {0}")]
    Build(#[source] octocrab::Error),
    /// `reason` explains the connection failure ([`crate::util::net::explain`]).
    #[error("cannot reach {api}: {reason}")]
    Unreachable { api: String, reason: String },
    #[error("the answer broke off: {0}")]
    BrokeOff(String),
    #[error("no answer within {0}s")]
    NoAnswer(u64),
}

impl GitHubError {
    pub fn is_forbidden(&self) -> bool {
        matches!(self, GitHubError::Forbidden { .. })
    }

    /// What the request was about is gone: a 404 (a comment deleted), or a 410 (an issue
    /// deleted: "This issue was deleted").
    pub fn is_gone(&self) -> bool {
        matches!(
            self,
            GitHubError::Status {
                status: 404 | 410,
                ..
            }
        )
    }
}

/// How hard to try: attempts in all, the first backoff (doubled each time), and the longest wait
/// we accept from `retry-after` before giving up instead.
#[derive(Debug, Clone, Copy)]
pub struct Retry {
    pub attempts: u32,
    pub backoff: Duration,
    pub max_wait: Duration,
    pub request_timeout: Duration,
}

impl Retry {
    /// The backoff doubles from `backoff` up to 30 s between attempts.
    fn schedule(&self) -> Schedule {
        Schedule {
            attempts: self.attempts,
            backoff: self.backoff,
            max_backoff: Duration::from_secs(30),
            max_wait: self.max_wait,
        }
    }
}

impl Default for Retry {
    fn default() -> Self {
        Retry {
            attempts: 5,
            backoff: Duration::from_secs(1),
            max_wait: Duration::from_secs(60),
            request_timeout: Duration::from_secs(30),
        }
    }
}

/// Lists longer than this many pages of 100 are refused rather than cut.
pub const MAX_PAGES: usize = 100;

pub struct GitHub {
    octo: Octocrab,
    api: String,
    graphql: String,
    retry: Retry,
}

/// One answer: status, headers, parsed JSON body (`Null` when empty).
struct Answer {
    status: StatusCode,
    headers: HeaderMap,
    body: Value,
}

impl GitHub {
    /// `api`: the REST base (`https://api.github.com`, `https://HOST/api/v3`); `graphql`: the
    /// GraphQL endpoint (`GITHUB_GRAPHQL_URL`), derived from `api` when not given. Must be called
    /// inside a tokio runtime.
    pub fn new(
        api: &str,
        graphql: Option<&str>,
        token: &str,
        retry: Retry,
    ) -> Result<GitHub, GitHubError> {
        let api = api.trim_end_matches('/').to_string();
        let setup = |message: String| GitHubError::Setup {
            api: api.clone(),
            message,
        };
        let uri: http::Uri = api
            .parse()
            .map_err(|_| setup("not a URL (expected e.g. https://api.github.com)".into()))?;
        let (Some(scheme), Some(host)) = (uri.scheme_str(), uri.authority()) else {
            return Err(setup(
                "not an absolute URL (expected e.g. https://api.github.com)".into(),
            ));
        };
        // The token must not cross the network in clear text; plain HTTP is for a local stand-in.
        let loopback = matches!(
            uri.host(),
            Some("localhost" | "127.0.0.1" | "[::1]" | "::1")
        );
        if scheme != "https" && !(scheme == "http" && loopback) {
            return Err(setup(
                "the API must be reached over https (plain http only on localhost)".into(),
            ));
        }
        let token = token.trim();
        if token.is_empty() || http::HeaderValue::from_str(&format!("Bearer {token}")).is_err() {
            return Err(setup(
                "the token is empty or holds characters a header cannot carry".into(),
            ));
        }
        let graphql = graphql.map_or_else(|| graphql_for(&api), str::to_string);
        // The base is the host alone: every request is an absolute URL, and octocrab would put a
        // base path (GHES `/api/v3`) in front of any URL outside it — GraphQL is `/api/graphql`.
        let octo = Octocrab::builder()
            .base_uri(format!("{scheme}://{host}"))
            .map_err(|e| setup(e.to_string()))?
            .personal_token(token.to_string())
            .set_connect_timeout(Some(Duration::from_secs(10)))
            .set_read_timeout(Some(retry.request_timeout))
            .build()
            .map_err(|e| setup(e.to_string()))?;
        Ok(GitHub {
            octo,
            api,
            graphql,
            retry,
        })
    }

    pub async fn get(&self, path: &str) -> Result<Value, GitHubError> {
        Ok(self.send(Method::GET, path, None).await?.body)
    }

    /// Creates something. Not retried after a 5xx or a timeout: GitHub may have created it
    /// already, and a retry would post it twice. Refusals before processing (429, rate limits)
    /// are retried.
    pub async fn post(&self, path: &str, body: &Value) -> Result<Value, GitHubError> {
        Ok(self.send(Method::POST, path, Some(body)).await?.body)
    }

    pub async fn patch(&self, path: &str, body: &Value) -> Result<Value, GitHubError> {
        Ok(self.send(Method::PATCH, path, Some(body)).await?.body)
    }

    pub async fn delete(&self, path: &str) -> Result<(), GitHubError> {
        self.send(Method::DELETE, path, None).await.map(|_| ())
    }

    /// Every item of a paginated list (`per_page=100`, following `Link: rel="next"`); more than
    /// [`MAX_PAGES`] pages is an error.
    pub async fn list(&self, path: &str) -> Result<Vec<Value>, GitHubError> {
        let sep = if path.contains('?') { '&' } else { '?' };
        let mut next = Some(format!("{path}{sep}per_page=100"));
        let mut items = Vec::new();
        let mut pages = 0;
        while let Some(page) = next.take() {
            pages += 1;
            let answer = self.send(Method::GET, &page, None).await?;
            match answer.body {
                Value::Array(a) => items.extend(a),
                other => {
                    return Err(GitHubError::BadResponse {
                        method: Method::GET,
                        path: page,
                        message: format!("expected a list, got {}", kind_of(&other)),
                    });
                }
            }
            next = next_link(&answer.headers).map(|url| self.relative(&url));
            if next.is_some() && pages == MAX_PAGES {
                // Stopping silently could miss our comment or issue and post a second one.
                return Err(GitHubError::BadResponse {
                    method: Method::GET,
                    path: path.to_string(),
                    message: format!("more than {MAX_PAGES} pages of {} items", items.len()),
                });
            }
        }
        Ok(items)
    }

    /// A GraphQL call; `errors` in the answer are an error.
    pub async fn graphql(
        &self,
        operation: &str,
        query: &str,
        variables: Value,
    ) -> Result<Value, GitHubError> {
        let body = serde_json::json!({ "query": query, "variables": variables });
        let url = self.graphql.clone();
        // Only idempotent mutations (minimizing) go through here: safe to repeat.
        let answer = self.attempt(Method::POST, &url, Some(&body), true).await?;
        if let Some(errors) = answer.body.get("errors").and_then(Value::as_array)
            && !errors.is_empty()
        {
            let message = errors
                .iter()
                .filter_map(|e| e.get("message").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("; ");
            return Err(GitHubError::GraphQl {
                operation: operation.to_string(),
                message,
            });
        }
        Ok(answer.body.get("data").cloned().unwrap_or(Value::Null))
    }

    /// A path under the API base, or an absolute URL as given (GraphQL, `Link` headers).
    fn url(&self, path: &str) -> String {
        if path.starts_with("http://") || path.starts_with("https://") {
            path.to_string()
        } else {
            format!("{}{path}", self.api)
        }
    }

    /// `Link` URLs are absolute; shown in errors relative to the API base.
    fn relative(&self, url: &str) -> String {
        url.strip_prefix(self.api.as_str())
            .map(str::to_string)
            .unwrap_or_else(|| url.to_string())
    }

    async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Answer, GitHubError> {
        let idempotent = method != Method::POST;
        self.attempt(method, path, body, idempotent).await
    }

    async fn attempt(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        idempotent: bool,
    ) -> Result<Answer, GitHubError> {
        let outcome = retry::run(
            &self.retry.schedule(),
            |attempts| {
                let method = method.clone();
                async move {
                    let answer = tokio::time::timeout(
                        self.retry.request_timeout,
                        self.once(method.clone(), path, body),
                    )
                    .await
                    .unwrap_or_else(|_| {
                        Err(Transport::NoAnswer(self.retry.request_timeout.as_secs()))
                    });
                    self.judge(method, path, idempotent, attempts, answer)
                }
            },
            |attempt, last, delay| {
                tracing::warn!(
                    "{method} {path}: {last}; retrying in {}ms (attempt {attempt} of {})",
                    delay.as_millis(),
                    self.retry.attempts
                );
            },
        )
        .await;
        outcome.unwrap_or_else(|gave_up| {
            let (attempts, last) = match gave_up {
                GaveUp::Exhausted { attempts, last } => (attempts, last),
                GaveUp::TooLong {
                    attempts,
                    last,
                    asked,
                } => (
                    attempts,
                    format!(
                        "{last}; GitHub asks to wait {}s, longer than the {}s we wait",
                        asked.as_secs(),
                        self.retry.max_wait.as_secs()
                    ),
                ),
            };
            Err(GitHubError::Exhausted {
                method: method.clone(),
                path: path.to_string(),
                attempts,
                last,
            })
        })
    }

    /// Whether one answer ends the loop: 429 and rate limits are refusals before processing and
    /// always retried; a 5xx or a lost answer only when the request may be repeated.
    fn judge(
        &self,
        method: Method,
        path: &str,
        idempotent: bool,
        attempts: u32,
        answer: Result<Answer, Transport>,
    ) -> Attempt<Answer, GitHubError> {
        let a = match answer {
            Ok(a) if a.status.is_success() => return Attempt::Done(Ok(a)),
            Ok(a) => a,
            Err(e) if !idempotent => {
                return Attempt::Done(Err(GitHubError::Exhausted {
                    method,
                    path: path.to_string(),
                    attempts,
                    last: format!("{e}; not repeated, as GitHub may have acted on it"),
                }));
            }
            Err(e) => {
                return Attempt::Again {
                    last: e.to_string(),
                    asked: None,
                };
            }
        };
        let message = message_of(&a.body, a.status);
        let limited = is_rate_limited(&a);
        let refused = a.status == StatusCode::TOO_MANY_REQUESTS || limited;
        if !(refused || (idempotent && a.status.is_server_error())) {
            let status = a.status.as_u16();
            let path = path.to_string();
            return Attempt::Done(Err(if a.status == StatusCode::FORBIDDEN {
                GitHubError::Forbidden {
                    method,
                    path,
                    status,
                    message,
                }
            } else {
                GitHubError::Status {
                    method,
                    path,
                    status,
                    message,
                }
            }));
        }
        let asked = asked_wait(&a.headers).or_else(|| {
            // A secondary rate limit without a time: GitHub asks for a minute at least.
            limited.then(|| self.retry.max_wait.min(Duration::from_secs(60)))
        });
        Attempt::Again {
            last: format!("GitHub answered {}: {message}", a.status.as_u16()),
            asked,
        }
    }

    /// One request; a failure to get an answer is a [`Transport`] error.
    async fn once(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Answer, Transport> {
        let url = self.url(path);
        let request = http::Request::builder()
            .method(method)
            .uri(url.as_str())
            .header(http::header::ACCEPT, "application/vnd.github+json")
            .header("X-GitHub-Api-Version", "2022-11-28");
        // Nothing gpuledger posts carries a secret it knows, whatever the text quotes.
        let body = body.map(crate::util::redact::redact_json);
        let request = self
            .octo
            .build_request(request, body.as_ref())
            .map_err(Transport::Build)?;
        let response = self
            .octo
            .execute(request)
            .await
            .map_err(|e| Transport::Unreachable {
                api: self.api.clone(),
                reason: crate::util::net::explain(&e),
            })?;
        let (parts, body) = response.into_parts();
        let bytes = body
            .collect()
            .await
            .map_err(|e| Transport::BrokeOff(crate::util::net::explain(&e)))?
            .to_bytes();
        let body = if bytes.iter().all(u8::is_ascii_whitespace) {
            Value::Null
        } else {
            serde_json::from_slice(&bytes).unwrap_or_else(|_| {
                Value::String(
                    String::from_utf8_lossy(bytes.get(..300).unwrap_or(&bytes)).into_owned(),
                )
            })
        };
        Ok(Answer {
            status: parts.status,
            headers: parts.headers,
            body,
        })
    }
}

/// The GraphQL endpoint next to a REST base: `https://api.github.com/graphql`, and on GitHub
/// Enterprise Server `https://HOST/api/graphql` for `https://HOST/api/v3`.
fn graphql_for(api: &str) -> String {
    match api.strip_suffix("/api/v3") {
        Some(host) => format!("{host}/api/graphql"),
        None => format!("{api}/graphql"),
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "nothing",
        Value::Object(_) => "an object",
        Value::String(_) => "text",
        _ => "a scalar",
    }
}

/// What GitHub said: its `message`, and each of its `errors[]` (a validation error's reason is
/// there, not in `message`, which only says "Validation Failed"). An `errors[]` entry is an
/// object with a `message` (code `custom`), else `resource`, `field` and `code` (`missing_field`,
/// `invalid`, `already_exists`…), or a plain string (GitHub's REST "client errors",
/// docs.github.com/en/rest/using-the-rest-api/troubleshooting-the-rest-api). One bounded line.
fn message_of(body: &Value, status: StatusCode) -> String {
    let message = body
        .get("message")
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| body.as_str().map(str::to_string))
        .unwrap_or_else(|| status.canonical_reason().unwrap_or("error").to_string());
    let errors: Vec<String> = body
        .get("errors")
        .and_then(Value::as_array)
        .map(|errors| errors.iter().filter_map(error_text).collect())
        .unwrap_or_default();
    let text = if errors.is_empty() {
        message
    } else {
        format!("{message}: {}", errors.join("; "))
    };
    crate::util::text::line(&text, crate::util::text::MAX_MESSAGE_CHARS)
}

/// One entry of a GitHub error's `errors[]`.
fn error_text(e: &Value) -> Option<String> {
    if let Some(s) = e.as_str() {
        return Some(s.to_string());
    }
    if let Some(m) = e.get("message").and_then(Value::as_str) {
        return Some(m.to_string());
    }
    let part = |k: &str| e.get(k).and_then(Value::as_str);
    let what = [part("resource"), part("field")]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(".");
    match part("code") {
        Some(code) if what.is_empty() => Some(code.to_string()),
        Some(code) => Some(format!("{what} {code}")),
        None => (!what.is_empty()).then_some(what),
    }
}

/// A 403 that is a rate limit (primary: no requests left; secondary: `retry-after` or the message).
fn is_rate_limited(a: &Answer) -> bool {
    a.status == StatusCode::FORBIDDEN
        && (a.headers.contains_key("retry-after")
            || header(&a.headers, "x-ratelimit-remaining") == Some("0")
            || message_of(&a.body, a.status)
                .to_ascii_lowercase()
                .contains("rate limit"))
}

fn header<'a>(h: &'a HeaderMap, name: &str) -> Option<&'a str> {
    h.get(name).and_then(|v| v.to_str().ok())
}

/// `retry-after: SECONDS`, else `x-ratelimit-reset: EPOCH` when no requests are left.
fn asked_wait(h: &HeaderMap) -> Option<Duration> {
    if let Some(secs) = header(h, "retry-after").and_then(|v| v.trim().parse::<u64>().ok()) {
        return Some(Duration::from_secs(secs));
    }
    if header(h, "x-ratelimit-remaining") == Some("0") {
        let reset: u64 = header(h, "x-ratelimit-reset")?.trim().parse().ok()?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?
            .as_secs();
        return Some(Duration::from_secs(reset.saturating_sub(now) + 1));
    }
    None
}

/// The `rel="next"` URL of a `Link` header.
fn next_link(h: &HeaderMap) -> Option<String> {
    header(h, "link")?.split(',').find_map(|part| {
        let (url, params) = part.split_once(';')?;
        params
            .split(';')
            .any(|p| p.trim() == "rel=\"next\"")
            .then(|| {
                url.trim()
                    .trim_start_matches('<')
                    .trim_end_matches('>')
                    .to_string()
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_never_travels_in_clear_text_and_must_fit_a_header() {
        let err = |api: &str, token: &str| {
            GitHub::new(api, None, token, Retry::default())
                .err()
                .map(|e| e.to_string())
        };
        let e = err("http://ghe.acme.internal/api/v3", "t").unwrap();
        assert!(e.contains("https"), "{e}");
        let e = err("https://api.github.com", "ghp_x\u{7f}\n").unwrap();
        assert!(e.contains("header") && !e.contains("ghp_x"), "{e}");
        assert!(err("https://api.github.com", "  ").is_some());
        assert!(err("not a url", "t").is_some());
    }

    #[test]
    fn graphql_endpoint_for_github_and_enterprise_server() {
        assert_eq!(
            graphql_for("https://api.github.com"),
            "https://api.github.com/graphql"
        );
        assert_eq!(
            graphql_for("https://ghe.acme.internal/api/v3"),
            "https://ghe.acme.internal/api/graphql"
        );
    }

    #[test]
    fn next_link_is_found_among_others() {
        let mut h = HeaderMap::new();
        h.insert(
            "link",
            "<https://api.github.com/repos/a/b/issues?page=3>; rel=\"last\", <https://api.github.com/repos/a/b/issues?page=2>; rel=\"next\""
                .parse()
                .unwrap(),
        );
        assert_eq!(
            next_link(&h).as_deref(),
            Some("https://api.github.com/repos/a/b/issues?page=2")
        );
        assert_eq!(next_link(&HeaderMap::new()), None);
    }

    #[test]
    fn waits_come_from_retry_after_or_the_reset_time() {
        let mut h = HeaderMap::new();
        h.insert("retry-after", "7".parse().unwrap());
        assert_eq!(asked_wait(&h), Some(Duration::from_secs(7)));
        let mut h = HeaderMap::new();
        h.insert("x-ratelimit-remaining", "5".parse().unwrap());
        h.insert("x-ratelimit-reset", "1".parse().unwrap());
        assert_eq!(asked_wait(&h), None, "requests are left");
    }

    #[test]
    fn an_error_carries_each_of_githubs_errors() {
        let body = serde_json::json!({
            "message": "Validation Failed",
            "errors": [
                {"resource": "IssueComment", "code": "custom", "field": "body", "message": "body is too long"},
                {"resource": "Issue", "field": "title", "code": "missing_field"},
                "labels must be strings",
                {"code": "invalid"}
            ],
            "documentation_url": "https://docs.github.com/rest"
        });
        assert_eq!(
            message_of(&body, StatusCode::UNPROCESSABLE_ENTITY),
            "Validation Failed: body is too long; Issue.title missing_field; labels must be strings; invalid"
        );
        let plain = serde_json::json!({"message": "Not Found"});
        assert_eq!(message_of(&plain, StatusCode::NOT_FOUND), "Not Found");
        assert_eq!(
            message_of(&Value::Null, StatusCode::BAD_GATEWAY),
            "Bad Gateway"
        );
    }
}
