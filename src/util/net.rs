//! Why a connection to a server failed, in words a person can act on.
//!
//! HTTP clients (octocrab for GitHub, kube for the Kubernetes API) wrap the real cause several
//! layers deep: `ServiceError: client error (Connect)` says nothing, its sources say "dns error" or
//! "Connection refused". [`describe`] joins the chain into one line, without repeating a cause the
//! text above it already quotes, and [`Cause`] names the class (DNS, refused, TLS, timeout) with
//! what to check. Both clients use these, so GitHub and the API server fail in the same words.

use std::error::Error;
use std::fmt;

/// The class of a failed connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// The host name does not resolve.
    Dns,
    /// Nothing listens at the address (or a firewall rejects the connection).
    Refused,
    /// The TLS handshake failed: plain HTTP on one side and https on the other, or a certificate
    /// the client does not trust.
    Tls,
    /// No answer in time.
    Timeout,
}

impl Cause {
    /// The first class the chain of `e` shows, outermost first.
    pub fn of(e: &(dyn Error + 'static)) -> Option<Cause> {
        let mut current = Some(e);
        while let Some(err) = current {
            if let Some(io) = err.downcast_ref::<std::io::Error>() {
                match io.kind() {
                    std::io::ErrorKind::ConnectionRefused => return Some(Cause::Refused),
                    std::io::ErrorKind::TimedOut => return Some(Cause::Timeout),
                    _ => {}
                }
            }
            if let Some(c) = Cause::in_text(&err.to_string()) {
                return Some(c);
            }
            current = err.source();
        }
        None
    }

    /// The class a message names, for errors that only survive as text. The words are those of
    /// hyper-util (`dns error`), the OS (`Connection refused`) and rustls (`InvalidContentType`,
    /// `invalid peer certificate`).
    pub fn in_text(text: &str) -> Option<Cause> {
        let t = text.to_ascii_lowercase();
        if t.contains("dns error")
            || t.contains("failed to lookup address")
            || t.contains("name or service not known")
            || t.contains("no such host")
        {
            Some(Cause::Dns)
        } else if t.contains("connection refused") {
            Some(Cause::Refused)
        } else if t.contains("invalidcontenttype")
            || t.contains("corrupt message")
            || t.contains("peer certificate")
            || t.contains("tls handshake")
            || t.contains("client sent an http request to an https server")
            || t.contains("invalid http version parsed")
        {
            Some(Cause::Tls)
        } else if t.contains("timed out") || t.contains("deadline has elapsed") {
            Some(Cause::Timeout)
        } else {
            None
        }
    }
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Cause::Dns => "DNS failure: the host name does not resolve (check the server address)",
            Cause::Refused => {
                "connection refused: nothing listens at that address and port (is the server up, \
                 the port right, a tunnel open?)"
            }
            Cause::Tls => {
                "TLS mismatch: the handshake failed (an https URL for a plain-HTTP server or the \
                 reverse, or a certificate that is not trusted)"
            }
            Cause::Timeout => "timeout: the server did not answer in time",
        })
    }
}

/// `e` and its sources, one line, `: `-separated; a source whose text the line already holds is
/// not repeated.
pub fn describe(e: &(dyn Error + 'static)) -> String {
    let mut s = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !text.is_empty() && !s.contains(&text) {
            s.push_str(": ");
            s.push_str(&text);
        }
        source = cause.source();
    }
    s
}

/// [`describe`], led by the class of the failure when it has one:
/// `connection refused: … (error: source: …)`.
pub fn explain(e: &(dyn Error + 'static)) -> String {
    let text = describe(e);
    match Cause::of(e) {
        Some(c) => format!("{c} ({text})"),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Wrap(&'static str, Option<Box<dyn Error + 'static>>);
    impl fmt::Display for Wrap {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.0)
        }
    }
    impl Error for Wrap {
        fn source(&self) -> Option<&(dyn Error + 'static)> {
            self.1.as_deref()
        }
    }

    #[test]
    fn the_class_is_read_from_deep_in_the_chain() {
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        let e = Wrap("client error (Connect)", Some(Box::new(refused)));
        assert_eq!(Cause::of(&e), Some(Cause::Refused));
        let e = Wrap(
            "client error (Connect)",
            Some(Box::new(Wrap("dns error: failed to lookup address", None))),
        );
        assert_eq!(Cause::of(&e), Some(Cause::Dns));
        assert!(explain(&e).starts_with("DNS failure"));
        assert_eq!(
            Cause::in_text("received corrupt message of type InvalidContentType"),
            Some(Cause::Tls)
        );
        assert_eq!(Cause::of(&Wrap("nothing to see", None)), None);
    }

    #[test]
    fn a_cause_already_quoted_is_not_repeated() {
        let e = Wrap(
            "cannot read x: gone",
            Some(Box::new(Wrap("gone", Some(Box::new(Wrap("deeper", None)))))),
        );
        assert_eq!(describe(&e), "cannot read x: gone: deeper");
    }
}
