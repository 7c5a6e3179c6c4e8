//! Why something remote was not fetched: a [`Refusal`] of the safety policy (said as such: the
//! app is unknown because gpuledger chose not to fetch), or a [`FetchError`] of the source itself.
//! Every message names the source as its URL shows it, without credentials.

use std::net::IpAddr;

/// The policy said no, before or while fetching.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("not fetched: --offline")]
    Offline,
    #[error(
        "new source host {host}, not allowed by the base's configuration (the base does not use \
         it; render.remote.allow in the base's .gpuledger.yaml would allow it)"
    )]
    NewHost { host: String },
    #[error(
        "{}: refused (render.remote.private_networks allows a range)",
        resolves(host, ip, "a private address")
    )]
    Private { host: String, ip: IpAddr },
    #[error("{}: refused", resolves(host, ip, "a link-local or metadata address"))]
    Forbidden { host: String, ip: IpAddr },
    #[error("{url}: only https:// and http:// are fetched")]
    Scheme { url: String },
    #[error("{from} redirects from https to plain http ({to}): refused")]
    Downgrade { from: String, to: String },
    #[error("{url}: more than {max} redirects")]
    Redirects { url: String, max: usize },
    #[error("{url}: larger than {limit} bytes: refused")]
    TooLarge { url: String, limit: u64 },
    #[error("{url}: no answer within {seconds}s")]
    Timeout { url: String, seconds: u64 },
    #[error("more than {max} remote fetches in one render: refused")]
    Budget { max: usize },
}

/// A fetch that failed, or a source that says something gpuledger cannot use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    #[error(transparent)]
    Refused(#[from] Refusal),
    #[error("{url}: {status}{}", detail(.body))]
    Status {
        url: String,
        status: u16,
        body: String,
    },
    #[error("cannot reach {url}: {message}")]
    Unreachable { url: String, message: String },
    #[error("{url}: invalid URL: {message}")]
    Url { url: String, message: String },
    /// An index, manifest or archive that does not read as what it should be.
    #[error("{what}: {message}")]
    Invalid { what: String, message: String },
    #[error("{what}: digest {got} does not match {want}")]
    Digest {
        what: String,
        want: String,
        got: String,
    },
    #[error("chart {chart} has no version matching {wanted:?} in {source_url} (it has {have})")]
    NoVersion {
        chart: String,
        wanted: String,
        source_url: String,
        have: String,
    },
    #[error("chart {chart} is not in the index of {source_url}")]
    NoChart { chart: String, source_url: String },
    #[error("the cache at {dir}: {message}")]
    Cache { dir: String, message: String },
    #[error("git {url}: {message}")]
    Git { url: String, message: String },
}

/// `ghcr.io resolves to 10.0.0.5, a private address`, or `10.0.0.5:80 is a private address` for
/// an IP literal.
fn resolves(host: &str, ip: &IpAddr, what: &str) -> String {
    if host.trim_start_matches('[').starts_with(&ip.to_string()) {
        format!("{host} is {what}")
    } else {
        format!("{host} resolves to {ip}, {what}")
    }
}

fn detail(body: &str) -> String {
    let b = crate::util::text::line(body, 200);
    if b.is_empty() {
        String::new()
    } else {
        format!(" ({b})")
    }
}

impl FetchError {
    pub fn invalid(what: impl Into<String>, message: impl std::fmt::Display) -> FetchError {
        FetchError::Invalid {
            what: what.into(),
            message: message.to_string(),
        }
    }

    /// Whether gpuledger chose not to fetch (offline, a new host, a refused address), rather than
    /// the source failing.
    pub fn is_refusal(&self) -> bool {
        matches!(self, FetchError::Refused(_))
    }
}
