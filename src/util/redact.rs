//! The one place secrets are taken out of text before gpuledger prints or posts it.
//!
//! Every secret gpuledger is handed — the GitHub token, the Prometheus token, the credentials of
//! the kubeconfig it reads — is [`register`]ed where it is read. [`redact`] then replaces each of
//! them, and the credentials of any `scheme://user:password@host` URL, with `***`; it runs on
//! everything that leaves the process: standard output and error, `--output` files, the step
//! summary and outputs, and every comment and issue body sent to GitHub. An upstream error body
//! that echoes a token back (an auth proxy, the API server) is therefore caught wherever it is
//! quoted, without each message having to remember.

use std::borrow::Cow;
use std::sync::RwLock;

/// What replaces a secret.
pub const MASK: &str = "***";

/// Shorter values are not treated as secrets: masking `a` or `1` everywhere would garble the
/// report and protect nothing.
const MIN_SECRET_LEN: usize = 6;

static SECRETS: RwLock<Vec<String>> = RwLock::new(Vec::new());

/// Remembers `secret` (trimmed) so that [`redact`] masks it from now on.
pub fn register(secret: &str) {
    let s = secret.trim();
    if s.chars().count() < MIN_SECRET_LEN {
        return;
    }
    let mut all = SECRETS.write().unwrap_or_else(|e| e.into_inner());
    if !all.iter().any(|x| x == s) {
        all.push(s.to_string());
        // The longest first, so a secret that contains another is masked whole.
        all.sort_by_key(|x| std::cmp::Reverse(x.len()));
    }
}

/// `text` with every registered secret and every URL's `user:password@` masked.
pub fn redact(text: &str) -> Cow<'_, str> {
    let all = SECRETS.read().unwrap_or_else(|e| e.into_inner());
    let mut out = Cow::Borrowed(text);
    for s in all.iter() {
        if out.contains(s.as_str()) {
            out = Cow::Owned(out.replace(s.as_str(), MASK));
        }
    }
    if out.contains("://") {
        out = Cow::Owned(userinfo(&out));
    }
    out
}

/// `value` with [`redact`] applied to every string in it (a request body about to be sent).
pub fn redact_json(value: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::String(s) => Value::String(redact(s).into_owned()),
        Value::Array(a) => Value::Array(a.iter().map(redact_json).collect()),
        Value::Object(m) => {
            Value::Object(m.iter().map(|(k, v)| (k.clone(), redact_json(v))).collect())
        }
        other => other.clone(),
    }
}

/// Masks the userinfo of every `scheme://userinfo@host` in `text`.
fn userinfo(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("://") {
        let (head, tail) = rest.split_at(i + 3);
        out.push_str(head);
        // The authority ends at the first `/`, `?`, `#`, whitespace or quote.
        let end = tail
            .find(|c: char| {
                matches!(c, '/' | '?' | '#' | '"' | '\'' | '<' | '>') || c.is_whitespace()
            })
            .unwrap_or(tail.len());
        let (authority, after) = tail.split_at(end);
        match authority.rfind('@') {
            Some(at) if at > 0 => {
                out.push_str(MASK);
                out.push_str(authority.get(at..).unwrap_or(""));
            }
            _ => out.push_str(authority),
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registered_secrets_and_url_credentials_are_masked() {
        register("ghp_0123456789abcdef");
        register("abc"); // too short to be a secret
        assert_eq!(
            redact("401 from proxy: token ghp_0123456789abcdef is not valid; abc"),
            "401 from proxy: token *** is not valid; abc"
        );
        assert_eq!(
            redact("GET https://admin:s3cr3t@10.0.0.1:6443/api failed, see http://h/x"),
            "GET https://***@10.0.0.1:6443/api failed, see http://h/x"
        );
        assert_eq!(redact("a@b.c ://@x"), "a@b.c ://@x");
        assert!(matches!(redact("nothing here"), Cow::Borrowed(_)));
    }
}
