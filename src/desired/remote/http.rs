//! The one HTTP client remote fetching goes through, with the [`Policy`] built in.
//!
//! Every connection is checked where it is made: a host name is resolved here and each address it
//! resolves to is held to the policy before hyper may connect to it (so a host that resolves to a
//! metadata address is refused, and no second lookup can swap the address after the check); an
//! IP literal is checked before the request. Redirects are followed by hand, at most
//! [`MAX_REDIRECTS`], each hop checked again the same way, never from https down to http, and a
//! credential is attached to a request only when its host is the credential's own. Each request
//! has a deadline and a byte limit (the `Content-Length` a server announces, and what it really
//! sends). The client blocks: rendering is synchronous, so each call runs on the client's own
//! small runtime (from a thread of its own when the caller is already inside one).
//!
//! Built on the HTTP stack the crate already has (hyper 1, hyper-util, hyper-rustls with the
//! system's roots), as `src/live/http.rs` is.

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use std::time::Duration;

use base64::Engine;
use http::header::{
    ACCEPT, AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE, HeaderMap, HeaderValue, LOCATION,
    USER_AGENT,
};
use http::{Method, StatusCode};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Bytes;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::connect::dns::Name;
use hyper_util::rt::TokioExecutor;

use super::error::{FetchError, Refusal};
use super::policy::{Auth, MAX_REDIRECTS, Policy, authority};

/// Requests one render may make, at most: a hostile repository must not turn rendering into a
/// crawler of the hosts it is allowed.
pub const MAX_REQUESTS: usize = 2000;

/// A request: where, what it accepts, and how much of an answer is acceptable.
pub struct Req<'a> {
    pub method: Method,
    pub url: &'a str,
    pub accept: &'a [&'a str],
    /// A body and its content type (a POST).
    pub body: Option<(&'a str, Bytes)>,
    /// Bytes the answer may have.
    pub limit: u64,
    /// A bearer token for this exact host (an OCI registry's), instead of its configured
    /// credential.
    pub token: Option<(&'a str, &'a str)>,
}

impl<'a> Req<'a> {
    pub fn get(url: &'a str, accept: &'a [&'a str], limit: u64) -> Req<'a> {
        Req {
            method: Method::GET,
            url,
            accept,
            body: None,
            limit,
            token: None,
        }
    }
}

/// An answer, whatever its status, from the last hop.
#[derive(Debug)]
pub struct Got {
    pub status: StatusCode,
    /// The URL that answered (after redirects).
    pub url: url::Url,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Got {
    /// The body of a 2xx answer, or the status as an error naming `shown`.
    pub fn ok(self, shown: &str) -> Result<Got, FetchError> {
        if self.status.is_success() {
            return Ok(self);
        }
        Err(FetchError::Status {
            url: shown.to_string(),
            status: self.status.as_u16(),
            body: String::from_utf8_lossy(&self.body).into_owned(),
        })
    }
}

/// The resolver hyper connects through: every address is held to the policy first.
#[derive(Clone)]
struct Checked {
    policy: Arc<Policy>,
}

type Addrs = std::vec::IntoIter<SocketAddr>;

impl tower_service::Service<Name> for Checked {
    type Response = Addrs;
    type Error = Box<dyn std::error::Error + Send + Sync>;
    type Future = Pin<Box<dyn Future<Output = Result<Addrs, Self::Error>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, name: Name) -> Self::Future {
        let policy = self.policy.clone();
        Box::pin(async move {
            let host = name.as_str().to_string();
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let mut refused = None;
            let ok: Vec<SocketAddr> = found
                .into_iter()
                .filter(|a| match policy.address(&host, a.ip()) {
                    Ok(()) => true,
                    Err(r) => {
                        refused.get_or_insert(r);
                        false
                    }
                })
                .collect();
            match (ok.is_empty(), refused) {
                (true, Some(r)) => Err(Box::new(r) as Self::Error),
                _ => Ok(ok.into_iter()),
            }
        })
    }
}

type Tls = Client<HttpsConnector<HttpConnector<Checked>>, Full<Bytes>>;
type Plain = Client<HttpConnector<Checked>, Full<Bytes>>;

/// The client; one per render, shared by its threads.
pub struct Http {
    policy: Arc<Policy>,
    rt: tokio::runtime::Runtime,
    plain: Plain,
    tls: OnceLock<Result<Tls, String>>,
    requests: AtomicUsize,
}

impl Http {
    pub fn new(policy: Arc<Policy>) -> Result<Http, FetchError> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("gpuledger-fetch")
            .enable_all()
            .build()
            .map_err(|e| FetchError::Unreachable {
                url: "(the network)".into(),
                message: format!("cannot start the HTTP client: {e}"),
            })?;
        let plain = Client::builder(TokioExecutor::new()).build(connector(&policy));
        Ok(Http {
            policy,
            rt,
            plain,
            tls: OnceLock::new(),
            requests: AtomicUsize::new(0),
        })
    }

    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// Runs `f` on the client's runtime and waits for it.
    pub fn block<F>(&self, f: F) -> F::Output
    where
        F: Future + Send,
        F::Output: Send,
    {
        if tokio::runtime::Handle::try_current().is_ok() {
            // Inside a runtime, blocking on another one panics: wait from a thread of our own.
            std::thread::scope(|s| {
                s.spawn(|| self.rt.block_on(f))
                    .join()
                    .unwrap_or_else(|p| std::panic::resume_unwind(p))
            })
        } else {
            self.rt.block_on(f)
        }
    }

    /// Sends `req`, following redirects, within the policy's timeout.
    pub fn send(&self, req: &Req<'_>) -> Result<Got, FetchError> {
        let timeout = self.policy.timeout;
        let seconds = timeout.as_secs();
        let url = shown(req.url);
        self.block(async {
            tokio::time::timeout(timeout, self.exchange(req))
                .await
                .unwrap_or_else(|_| Err(Refusal::Timeout { url, seconds }.into()))
        })
    }

    async fn exchange(&self, req: &Req<'_>) -> Result<Got, FetchError> {
        let mut url = url::Url::parse(req.url).map_err(|e| FetchError::Url {
            url: shown(req.url),
            message: e.to_string(),
        })?;
        let mut method = req.method.clone();
        let mut body = req.body.clone();
        for _ in 0..=MAX_REDIRECTS {
            let n = self.requests.fetch_add(1, Ordering::Relaxed);
            if n >= MAX_REQUESTS {
                return Err(Refusal::Budget { max: MAX_REQUESTS }.into());
            }
            let got = self.hop(&url, &method, req, body.clone()).await?;
            let redirect = matches!(got.status.as_u16(), 301 | 302 | 303 | 307 | 308);
            let Some(location) = got
                .headers
                .get(LOCATION)
                .and_then(|l| l.to_str().ok())
                .filter(|_| redirect)
            else {
                return Ok(got);
            };
            let next = url.join(location).map_err(|e| FetchError::Url {
                url: shown(location),
                message: e.to_string(),
            })?;
            if url.scheme() == "https" && next.scheme() != "https" {
                return Err(Refusal::Downgrade {
                    from: shown(url.as_str()),
                    to: shown(next.as_str()),
                }
                .into());
            }
            if got.status == StatusCode::SEE_OTHER {
                method = Method::GET;
                body = None;
            }
            url = next;
        }
        Err(Refusal::Redirects {
            url: shown(req.url),
            max: MAX_REDIRECTS,
        }
        .into())
    }

    /// One request to one URL, no redirect followed.
    async fn hop(
        &self,
        url: &url::Url,
        method: &Method,
        req: &Req<'_>,
        body: Option<(&str, Bytes)>,
    ) -> Result<Got, FetchError> {
        let s = shown(url.as_str());
        if !matches!(url.scheme(), "http" | "https") {
            return Err(Refusal::Scheme { url: s }.into());
        }
        let host = authority(url).ok_or_else(|| FetchError::Url {
            url: s.clone(),
            message: "no host".into(),
        })?;
        // An IP literal never reaches the resolver: it is checked here.
        match url.host() {
            Some(url::Host::Ipv4(ip)) => self.policy.address(&host, ip.into())?,
            Some(url::Host::Ipv6(ip)) => self.policy.address(&host, ip.into())?,
            _ => {}
        }
        // The request line carries no userinfo: credentials come from the policy only.
        let mut clean = url.clone();
        let _ = clean.set_username("");
        let _ = clean.set_password(None);
        let mut r = http::Request::builder()
            .method(method.clone())
            .uri(clean.as_str())
            .header(USER_AGENT, concat!("gpuledger/", env!("CARGO_PKG_VERSION")));
        if !req.accept.is_empty() {
            r = r.header(ACCEPT, req.accept.join(", "));
        }
        let auth = match req.token {
            Some((h, token)) if h == host => Some(format!("Bearer {token}")),
            _ => self.policy.credential(&host).map(header_value),
        };
        if let Some(a) = auth {
            let mut v = HeaderValue::from_str(&a).map_err(|_| FetchError::Url {
                url: s.clone(),
                message: "the credential for this host is not a valid header value".into(),
            })?;
            v.set_sensitive(true);
            r = r.header(AUTHORIZATION, v);
        }
        let payload = match body {
            Some((ct, b)) => {
                r = r.header(CONTENT_TYPE, ct);
                b
            }
            None => Bytes::new(),
        };
        let request = r.body(Full::new(payload)).map_err(|e| FetchError::Url {
            url: s.clone(),
            message: e.to_string(),
        })?;
        let response = if url.scheme() == "https" {
            let tls = self.tls.get_or_init(|| tls_client(&self.policy));
            match tls {
                Ok(c) => c.request(request).await,
                Err(e) => {
                    return Err(FetchError::Unreachable {
                        url: s,
                        message: e.clone(),
                    });
                }
            }
        } else {
            self.plain.request(request).await
        }
        .map_err(|e| unreachable(&s, &e))?;
        let status = response.status();
        let headers = response.headers().clone();
        let announced = headers
            .get(CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if announced.is_some_and(|n| n > req.limit) {
            return Err(Refusal::TooLarge {
                url: s,
                limit: req.limit,
            }
            .into());
        }
        let limit = usize::try_from(req.limit).unwrap_or(usize::MAX);
        let body = Limited::new(response.into_body(), limit)
            .collect()
            .await
            .map_err(|e| {
                if e.downcast_ref::<http_body_util::LengthLimitError>()
                    .is_some()
                {
                    FetchError::from(Refusal::TooLarge {
                        url: s.clone(),
                        limit: req.limit,
                    })
                } else {
                    FetchError::Unreachable {
                        url: s.clone(),
                        message: crate::util::net::describe(e.as_ref()),
                    }
                }
            })?
            .to_bytes();
        Ok(Got {
            status,
            url: url.clone(),
            headers,
            body,
        })
    }
}

fn connector(policy: &Arc<Policy>) -> HttpConnector<Checked> {
    let mut c = HttpConnector::new_with_resolver(Checked {
        policy: policy.clone(),
    });
    c.enforce_http(false);
    c.set_nodelay(true);
    c.set_connect_timeout(Some(Duration::from_secs(15)));
    c
}

fn tls_client(policy: &Arc<Policy>) -> Result<Tls, String> {
    let https = hyper_rustls::HttpsConnectorBuilder::new()
        .with_provider_and_native_roots(rustls::crypto::ring::default_provider())
        .map_err(|e| format!("cannot set up TLS (no usable CA certificates?): {e}"))?
        .https_only()
        .enable_http1()
        .wrap_connector(connector(policy));
    Ok(Client::builder(TokioExecutor::new()).build(https))
}

/// `Authorization` for a configured credential.
fn header_value(a: &Auth) -> String {
    match a {
        Auth::Basic { username, password } => format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(format!("{username}:{password}"))
        ),
        Auth::Bearer(t) => format!("Bearer {t}"),
    }
}

/// A failed connection: the policy's refusal when that is what stopped it, else the cause.
fn unreachable(url: &str, e: &(dyn std::error::Error + 'static)) -> FetchError {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = cur {
        if let Some(r) = err.downcast_ref::<Refusal>() {
            return r.clone().into();
        }
        cur = err.source();
    }
    FetchError::Unreachable {
        url: url.to_string(),
        message: crate::util::net::explain(e),
    }
}

/// A URL as messages show it: without userinfo.
pub fn shown(url: &str) -> String {
    crate::util::redact::redact(url).into_owned()
}
