//! One GET against the API server, as the readers need it: a timeout per request, a bound on the
//! answer's size, the answer's status read into what to do next ([`Failure`]: forbidden, not
//! served, an expired continue token, worth another try, or fatal), bounded retries with backoff,
//! and the paths of a resource's list pages.

use std::time::Duration;

use kube::Client;

use super::types::Resource;
use crate::util::retry::{self, Attempt, GaveUp, Schedule};
use crate::util::text::{MAX_MESSAGE_CHARS, line};

/// Why a request failed, for the retry decision.
pub(super) enum Failure {
    Forbidden(String),
    NotFound,
    /// 410 Gone: the list's continue token has expired (etcd compacted its resourceVersion).
    Expired(String),
    Retryable(String),
    Fatal(String),
}

/// An answer larger than this is refused, whatever the server sends: a page of 500 objects is a
/// few MB; the largest pages (a resource listed without `limit`) stay well below.
const MAX_ANSWER_BYTES: usize = 512 << 20;

/// Why an answer was not read.
enum NoAnswer {
    Kube(kube::Error),
    /// Longer than [`MAX_ANSWER_BYTES`]: not a page.
    TooLarge,
}

impl From<kube::Error> for NoAnswer {
    fn from(e: kube::Error) -> NoAnswer {
        NoAnswer::Kube(e)
    }
}

/// The body of a successful answer, read within [`MAX_ANSWER_BYTES`] (`kube::Client::request_text`
/// reads any size), or the API server's error as kube reads it.
async fn request_text(client: &Client, req: http::Request<Vec<u8>>) -> Result<String, NoAnswer> {
    use http_body_util::{BodyExt, Limited};
    let res = client.send(req.map(kube::client::Body::from)).await?;
    let status = res.status();
    let body = match Limited::new(res.into_body(), MAX_ANSWER_BYTES)
        .collect()
        .await
    {
        Ok(b) => b.to_bytes(),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => return Err(NoAnswer::TooLarge),
        Err(e) => return Err(NoAnswer::Kube(kube::Error::Service(e))),
    };
    let text = String::from_utf8(body.to_vec()).map_err(kube::Error::FromUtf8)?;
    if status.is_client_error() || status.is_server_error() {
        // What kube's own reader does: the Status body, else a Status made of the text.
        let st = serde_json::from_str::<kube::core::Status>(&text).unwrap_or_else(|_| {
            kube::core::Status::failure(text.trim(), "Failed to parse error data")
                .with_code(status.as_u16())
        });
        return Err(NoAnswer::Kube(kube::Error::Api(st.boxed())));
    }
    Ok(text)
}

async fn get(client: &Client, path: &str, timeout: Duration) -> Result<String, Failure> {
    let req = http::Request::get(path)
        .body(Vec::new())
        .map_err(|e| Failure::Fatal(e.to_string()))?;
    match tokio::time::timeout(timeout, request_text(client, req)).await {
        Err(_) => Err(Failure::Retryable(format!(
            "GET {path} timed out after {}s",
            timeout.as_secs_f64()
        ))),
        Ok(Ok(text)) => Ok(text),
        Ok(Err(NoAnswer::TooLarge)) => Err(Failure::Fatal(format!(
            "GET {path}: the answer is larger than {} MiB",
            MAX_ANSWER_BYTES >> 20
        ))),
        Ok(Err(NoAnswer::Kube(kube::Error::Api(status)))) => {
            // The server's message is quoted into the report: one bounded line, whatever it sent.
            let message = line(&status.message, MAX_MESSAGE_CHARS);
            match status.code {
                403 => Err(Failure::Forbidden(message)),
                404 => Err(Failure::NotFound),
                410 => Err(Failure::Expired(format!("GET {path}: 410 {message}"))),
                429 | 500 | 502 | 503 | 504 => Err(Failure::Retryable(format!(
                    "GET {path}: {} {message}",
                    status.code
                ))),
                c => Err(Failure::Fatal(format!("GET {path}: {c} {message}"))),
            }
        }
        Ok(Err(NoAnswer::Kube(e))) => {
            let text = format!(
                "GET {path}: {}",
                line(&crate::util::net::explain(&e), MAX_MESSAGE_CHARS)
            );
            // A TLS mismatch is a setting, not a passing fault: asking again cannot help.
            match crate::util::net::Cause::of(&e) {
                Some(crate::util::net::Cause::Tls) => Err(Failure::Fatal(text)),
                _ => Err(Failure::Retryable(text)),
            }
        }
    }
}

/// GET with bounded retries and exponential backoff on 429, 5xx, timeouts and connection errors
/// (what [`get`] calls retryable); a GET may always be repeated.
pub(super) async fn get_retrying(
    client: &Client,
    path: &str,
    timeout: Duration,
) -> Result<String, Failure> {
    let schedule = Schedule {
        attempts: 5,
        backoff: Duration::from_millis(200),
        max_backoff: Duration::from_secs(5),
        // The API server asks for no waits we read.
        max_wait: Duration::ZERO,
    };
    let outcome = retry::run(
        &schedule,
        |_| async {
            match get(client, path, timeout).await {
                Err(Failure::Retryable(e)) => Attempt::Again {
                    last: e,
                    asked: None,
                },
                other => Attempt::Done(other),
            }
        },
        |attempt, e, _| tracing::debug!(attempt, error = %e, "retrying"),
    )
    .await;
    outcome.unwrap_or_else(|gave_up| {
        let (GaveUp::Exhausted { attempts, last } | GaveUp::TooLong { attempts, last, .. }) =
            gave_up;
        Err(Failure::Fatal(format!(
            "{last} (gave up after {attempts} attempts)"
        )))
    })
}

fn list_path(group_version: &str, plural: &str) -> String {
    if group_version == "v1" {
        format!("/api/v1/{plural}")
    } else {
        format!("/apis/{group_version}/{plural}")
    }
}

/// The path of a resource's next page: the first without a token, then `continue=<token>`.
pub(super) fn page_path(
    group_version: &str,
    res: &Resource,
    page_size: u32,
    token: Option<&str>,
) -> String {
    let mut path = format!("{}?limit={page_size}", list_path(group_version, res.plural));
    if let Some(t) = token {
        path.push_str("&continue=");
        path.extend(form_urlencoded::byte_serialize(t.as_bytes()));
    }
    path
}
