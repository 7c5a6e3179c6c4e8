//! A small read-only HTTP client for the metrics and cost servers gpuledger asks: GET a path below a base URL with query parameters, an optional bearer token, and one
//! deadline for everything done through the client; the answer is the status and the whole body,
//! and what the status means is the caller's business.
//!
//! Errors name the server and its URL with any `user:password@` blanked out, and never the token.
//! Plain HTTP/1.1 on hyper; `https://` with rustls and the system's roots (`SSL_CERT_FILE`/
//! `SSL_CERT_DIR` are honoured), loaded only for `https://` so that a machine without CA
//! certificates can still read a plain-HTTP server.

use std::fmt;
use std::time::Duration;

use http::header::{ACCEPT, AUTHORIZATION, HeaderValue, USER_AGENT};
use http::{Request, StatusCode, Uri};
use http_body_util::{BodyExt, Empty, Limited};
use hyper::body::Bytes;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use tokio::time::Instant;

/// A response body beyond this is refused: no answer gpuledger asks for comes near it.
const MAX_BODY: usize = 64 * 1024 * 1024;

/// What the server answered, whatever the status.
#[derive(Debug)]
pub struct Response {
    pub status: StatusCode,
    pub body: Bytes,
}

/// A failure to get an answer at all, displayed as one line naming the server and its URL.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpError {
    service: &'static str,
    /// Already without userinfo.
    url: String,
    kind: ErrorKind,
}

#[derive(Debug, Clone, PartialEq)]
enum ErrorKind {
    InvalidUrl(String),
    /// Deliberately without the token.
    BadToken,
    Tls(String),
    Request(String),
    Unreachable(String),
    Timeout(Duration),
    Body(String),
}

impl fmt::Display for HttpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (service, url) = (self.service, &self.url);
        match &self.kind {
            ErrorKind::InvalidUrl(why) => write!(f, "invalid {service} URL {url}: {why}"),
            ErrorKind::BadToken => write!(
                f,
                "the {service} bearer token contains characters not allowed in an HTTP header"
            ),
            ErrorKind::Tls(e) => write!(
                f,
                "cannot set up TLS for {service} (no usable CA certificates?): {e}"
            ),
            ErrorKind::Request(e) => write!(f, "{service} at {url}: bad request: {e}"),
            ErrorKind::Unreachable(e) => write!(f, "cannot reach {service} at {url}: {e}"),
            ErrorKind::Timeout(d) => write!(
                f,
                "{service} at {url} did not answer within {}",
                duration_text(*d)
            ),
            ErrorKind::Body(e) => write!(f, "{service} at {url}: reading the response: {e}"),
        }
    }
}

impl std::error::Error for HttpError {}

/// A client for one server, good until its deadline.
pub struct Client {
    connector: Connector,
    service: &'static str,
    base: BaseUrl,
    auth: Option<HeaderValue>,
    /// `None` when the timeout is too large to be a point in time: then there is none.
    deadline: Option<Instant>,
    timeout: Duration,
}

enum Connector {
    Plain(hyper_util::client::legacy::Client<HttpConnector, Empty<Bytes>>),
    Tls(hyper_util::client::legacy::Client<HttpsConnector<HttpConnector>, Empty<Bytes>>),
}

impl Client {
    /// `service` names the server in messages (`cannot reach {service} at {url}`); `base_url` is
    /// where the paths of [`Client::get`] are appended; `bearer_token` is sent as
    /// `Authorization: Bearer …` with surrounding whitespace (a token file's newline) ignored;
    /// `timeout` runs from now, over every request made through the client.
    pub fn new(
        service: &'static str,
        base_url: &str,
        bearer_token: Option<&str>,
        timeout: Duration,
    ) -> Result<Client, HttpError> {
        let fail = |kind| HttpError {
            service,
            url: display_url(base_url),
            kind,
        };
        let base =
            BaseUrl::parse(base_url).map_err(|why| fail(ErrorKind::InvalidUrl(why.to_string())))?;
        let auth = authorization(bearer_token).map_err(|()| fail(ErrorKind::BadToken))?;
        let builder = hyper_util::client::legacy::Client::builder(TokioExecutor::new());
        let connector = if base.https {
            let connector = hyper_rustls::HttpsConnectorBuilder::new()
                .with_provider_and_native_roots(rustls::crypto::ring::default_provider())
                .map_err(|e| fail(ErrorKind::Tls(e.to_string())))?
                .https_only()
                .enable_http1()
                .build();
            Connector::Tls(builder.build(connector))
        } else {
            let mut connector = HttpConnector::new();
            connector.set_nodelay(true);
            Connector::Plain(builder.build(connector))
        };
        Ok(Client {
            connector,
            service,
            base,
            auth,
            deadline: Instant::now().checked_add(timeout),
            timeout,
        })
    }

    /// The base URL as messages show it: trimmed, without a trailing `/` or userinfo.
    pub fn shown_url(&self) -> &str {
        &self.base.shown
    }

    pub fn has_token(&self) -> bool {
        self.auth.is_some()
    }

    /// GETs `path` (below the base URL's own path) with `query` form-encoded; any status is an
    /// answer, only no answer (or an unreadable one) is an error.
    pub async fn get(&self, path: &str, query: &[(&str, &str)]) -> Result<Response, HttpError> {
        let exchange = self.exchange(path, query);
        match self.deadline {
            Some(deadline) => tokio::time::timeout_at(deadline, exchange)
                .await
                .unwrap_or_else(|_| Err(self.error(ErrorKind::Timeout(self.timeout)))),
            None => exchange.await,
        }
    }

    async fn exchange(&self, path: &str, query: &[(&str, &str)]) -> Result<Response, HttpError> {
        let endpoint = self.base.join(path);
        // Parsed once more so that a path the caller got wrong is an error, not a panic in hyper.
        endpoint
            .parse::<Uri>()
            .map_err(|e| self.error(ErrorKind::InvalidUrl(e.to_string())))?;
        let uri = if query.is_empty() {
            endpoint
        } else {
            let params = form_urlencoded::Serializer::new(String::new())
                .extend_pairs(query)
                .finish();
            format!("{endpoint}?{params}")
        };
        let mut req = Request::get(uri.as_str())
            .header(ACCEPT, "application/json")
            .header(USER_AGENT, concat!("gpuledger/", env!("CARGO_PKG_VERSION")));
        if let Some(auth) = &self.auth {
            req = req.header(AUTHORIZATION, auth.clone());
        }
        let req = req
            .body(Empty::new())
            .map_err(|e| self.error(ErrorKind::Request(e.to_string())))?;
        let response = match &self.connector {
            Connector::Plain(c) => c.request(req).await,
            Connector::Tls(c) => c.request(req).await,
        }
        .map_err(|e| self.error(ErrorKind::Unreachable(chain(&e))))?;
        let status = response.status();
        let body = Limited::new(response.into_body(), MAX_BODY)
            .collect()
            .await
            .map_err(|e| self.error(ErrorKind::Body(chain(e.as_ref()))))?
            .to_bytes();
        Ok(Response { status, body })
    }

    fn error(&self, kind: ErrorKind) -> HttpError {
        HttpError {
            service: self.service,
            url: self.base.shown.clone(),
            kind,
        }
    }
}

/// Why a base URL is refused: the reason alone, which [`HttpError`] puts after the URL.
#[derive(Debug, thiserror::Error)]
enum BadUrl {
    #[error("{0}")]
    Syntax(#[source] http::uri::InvalidUri),
    #[error("it must start with http:// or https://")]
    Scheme,
    #[error("no host")]
    NoHost,
    #[error("credentials in the URL are not sent; use a bearer token")]
    Credentials,
    #[error("give the base URL, without a query")]
    Query,
}

/// `http(s)://host[:port][/prefix]`, checked once so that every request can append to it.
#[derive(Debug, PartialEq)]
struct BaseUrl {
    /// Without a trailing `/`.
    base: String,
    shown: String,
    https: bool,
}

impl BaseUrl {
    /// Credentials and query strings in the base URL are refused: the first would never be sent,
    /// the second never kept. The error is the reason alone.
    fn parse(url: &str) -> Result<BaseUrl, BadUrl> {
        let uri: Uri = url.trim().parse().map_err(BadUrl::Syntax)?;
        let https = match uri.scheme_str() {
            Some("https") => true,
            Some("http") => false,
            _ => return Err(BadUrl::Scheme),
        };
        let Some(authority) = uri.authority() else {
            return Err(BadUrl::NoHost);
        };
        if authority.as_str().contains('@') {
            return Err(BadUrl::Credentials);
        }
        if uri.query().is_some() {
            return Err(BadUrl::Query);
        }
        let prefix = uri.path().trim_end_matches('/');
        let scheme = if https { "https" } else { "http" };
        Ok(BaseUrl {
            base: format!("{scheme}://{authority}{prefix}"),
            shown: display_url(url),
            https,
        })
    }

    fn join(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
}

/// The URL as shown in messages: trimmed, and with any `user:password@` blanked out.
pub fn display_url(url: &str) -> String {
    let url = url.trim().trim_end_matches('/');
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = rest.get(..authority_end).unwrap_or(rest);
    match authority.rfind('@') {
        Some(at) => format!("{scheme}://***@{}", rest.get(at + 1..).unwrap_or_default()),
        None => url.to_string(),
    }
}

/// The header for a bearer token; `Err` deliberately carries nothing of the token.
fn authorization(token: Option<&str>) -> Result<Option<HeaderValue>, ()> {
    let Some(token) = token.map(str::trim).filter(|t| !t.is_empty()) else {
        return Ok(None);
    };
    let mut value = HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| ())?;
    value.set_sensitive(true);
    Ok(Some(value))
}

/// An error and its causes on one line: hyper's top-level message alone ("client error
/// (Connect)") does not say what happened.
fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out
}

/// The start of a body that is not what the caller expected (an HTML error page from a proxy),
/// on one line.
pub fn excerpt(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(200) {
        Some((cut, _)) => format!("{}…", line.get(..cut).unwrap_or_default()),
        None => line,
    }
}

/// A duration for messages, in the largest unit that divides it exactly (`1h`, `90m`, `45s`,
/// `1500ms`), or `0s` below one millisecond.
pub fn duration_text(d: Duration) -> String {
    let ms = d.as_millis();
    if ms == 0 {
        return "0s".into();
    }
    let unit = [(3_600_000, "h"), (60_000, "m"), (1000, "s")]
        .into_iter()
        .find(|(size, _)| ms.is_multiple_of(*size));
    match unit {
        Some((size, name)) => format!("{}{name}", ms / size),
        None => format!("{ms}ms"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint(url: &str) -> Result<String, String> {
        BaseUrl::parse(url)
            .map(|b| b.join("/api/v1/query"))
            .map_err(|why| format!("invalid URL {}: {why}", display_url(url)))
    }

    #[test]
    fn urls() {
        assert_eq!(
            endpoint("http://prom:9090").unwrap(),
            "http://prom:9090/api/v1/query"
        );
        assert_eq!(
            endpoint(" https://h/prometheus/ ").unwrap(),
            "https://h/prometheus/api/v1/query"
        );
        assert!(
            endpoint("prom:9090")
                .unwrap_err()
                .contains("http:// or https://")
        );
        assert!(
            endpoint("ftp://prom")
                .unwrap_err()
                .contains("http:// or https://")
        );
        let e = endpoint("https://admin:hunter2@prom").unwrap_err();
        assert!(!e.contains("hunter2") && e.contains("***@prom"), "{e}");
        assert!(
            endpoint("http://prom/?x=1")
                .unwrap_err()
                .contains("without a query")
        );
        assert_eq!(display_url("https://u:p@h:1/x/"), "https://***@h:1/x");
        // Multi-byte text around the markers must not split a character.
        assert_eq!(display_url("é://ü@ö/ä"), "é://***@ö/ä");
        assert_eq!(display_url("ü"), "ü");
    }

    #[test]
    fn errors_name_the_service_and_never_the_credentials() {
        let e = Client::new("Srv", "https://u:hunter2@h", None, Duration::from_secs(1))
            .err()
            .unwrap();
        assert_eq!(
            e.to_string(),
            "invalid Srv URL https://***@h: credentials in the URL are not sent; use a bearer token"
        );
        let e = Client::new(
            "Srv",
            "http://h",
            Some("bad\ntoken"),
            Duration::from_secs(1),
        )
        .err()
        .unwrap()
        .to_string();
        assert!(!e.contains("token\n") && !e.contains("bad"), "{e}");
        assert_eq!(
            e,
            "the Srv bearer token contains characters not allowed in an HTTP header"
        );
    }

    #[test]
    fn tokens_become_sensitive_headers() {
        assert!(authorization(Some("bad\ntoken")).is_err());
        let v = authorization(Some(" abc\n")).unwrap().unwrap();
        assert_eq!(v.to_str().unwrap(), "Bearer abc");
        assert!(v.is_sensitive());
        assert_eq!(authorization(Some("  ")).unwrap(), None);
    }

    #[test]
    fn excerpts_are_one_line_and_cut_on_characters() {
        assert_eq!(
            excerpt(b"<html>\n<h1>401</h1>\n</html>"),
            "<html> <h1>401</h1> </html>"
        );
        let long = "ä".repeat(300);
        assert_eq!(excerpt(long.as_bytes()), format!("{}…", "ä".repeat(200)));
    }

    #[test]
    fn durations() {
        let d = |s| duration_text(Duration::from_secs(s));
        assert_eq!(d(3600), "1h");
        assert_eq!(d(5400), "90m");
        assert_eq!(d(45), "45s");
        assert_eq!(duration_text(Duration::from_millis(1500)), "1500ms");
        assert_eq!(duration_text(Duration::from_micros(10)), "0s");
    }
}
