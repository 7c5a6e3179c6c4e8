//! Hidden markers: the one HTML comment at the top of every comment and issue gpuledger writes, and
//! the only way it finds them again. A marker names what it is (`comment` or `issue`), the scope
//! (one per cluster, say), and for comments the head commit, the `valid-at` time of that commit and
//! the part number; for issues a digest of the drift set, so a changed set can be announced.
//!
//! Matching is exact, attribute by attribute: scope `prod` never matches `non-prod` or `prod-eu`
//! (substring matching is the classic sticky-comment bug). Scopes are restricted to a safe alphabet
//! so a scope can never close the HTML comment or forge another attribute.

use std::fmt::Write;

use crate::util::date::Timestamp;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Comment,
    Issue,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Comment => "comment",
            Kind::Issue => "issue",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marker {
    pub kind: Kind,
    pub scope: String,
    /// Comments: the pull request's head commit the report was computed for.
    pub head: Option<String>,
    /// Comments: when that commit was made; a run for an older commit never overwrites.
    pub valid_at: Option<Timestamp>,
    /// Comments: which run posted it; the parts of one posting share it.
    pub posting: Option<String>,
    /// Comments split over several parts: `(index from 1, total)`.
    pub part: Option<(usize, usize)>,
    /// A digest of the report's text (without marker and footer).
    pub report: Option<String>,
    /// Issues: a digest of the drift set, to notice when it changes.
    pub digest: Option<String>,
}

const PREFIX: &str = "<!-- gpuledger:";

/// A scope that is not one: the text, and what a scope may hold.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a scope: use 1-100 letters, digits, '.', '_', '-', '/' or ':'")]
pub struct BadScope(String);

/// A scope is 1–100 characters of letters, digits and `. _ - / :`.
pub fn check_scope(s: &str) -> Result<String, BadScope> {
    let ok = !s.is_empty()
        && s.len() <= 100
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/' | ':'));
    if ok {
        Ok(s.to_string())
    } else {
        Err(BadScope(s.to_string()))
    }
}

fn safe(v: &str) -> bool {
    v.chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/' | ':' | '+'))
}

impl Marker {
    pub fn comment(scope: &str, head: &str, valid_at: Timestamp) -> Marker {
        Marker {
            kind: Kind::Comment,
            scope: scope.to_string(),
            head: Some(head.to_string()),
            valid_at: Some(valid_at),
            posting: None,
            part: None,
            report: None,
            digest: None,
        }
    }

    pub fn issue(scope: &str, digest: &str) -> Marker {
        Marker {
            kind: Kind::Issue,
            scope: scope.to_string(),
            head: None,
            valid_at: None,
            posting: None,
            part: None,
            report: None,
            digest: Some(digest.to_string()),
        }
    }

    /// Same kind and exactly the same scope.
    pub fn same_thread(&self, other: &Marker) -> bool {
        self.kind == other.kind && self.scope == other.scope
    }

    /// The marker line (no newline). Values that are not in the safe alphabet are left out rather
    /// than written: a marker must parse back to what it says.
    pub fn render(&self) -> String {
        let mut out = format!("{PREFIX}{} scope=\"{}\"", self.kind.as_str(), self.scope);
        if let Some(h) = self.head.as_deref().filter(|h| safe(h)) {
            let _ = write!(out, " head=\"{h}\"");
        }
        if let Some(t) = self.valid_at {
            let _ = write!(out, " valid-at=\"{t}\"");
        }
        if let Some(p) = self.posting.as_deref().filter(|p| safe(p)) {
            let _ = write!(out, " posting=\"{p}\"");
        }
        if let Some((i, n)) = self.part {
            let _ = write!(out, " part=\"{i}/{n}\"");
        }
        if let Some(r) = self.report.as_deref().filter(|r| safe(r)) {
            let _ = write!(out, " report=\"{r}\"");
        }
        if let Some(d) = self.digest.as_deref().filter(|d| safe(d)) {
            let _ = write!(out, " drift=\"{d}\"");
        }
        out.push_str(" -->");
        out
    }

    /// The marker of a body we wrote: its first line, parsed strictly. Anything else — a marker
    /// quoted further down, an unknown attribute, a malformed value — is not ours.
    pub fn find(body: &str) -> Option<Marker> {
        let line = body.lines().next()?.trim_end();
        let inner = line.strip_prefix(PREFIX)?.strip_suffix("-->")?.trim_end();
        let (kind, mut rest) = inner.split_once(' ')?;
        let kind = match kind {
            "comment" => Kind::Comment,
            "issue" => Kind::Issue,
            _ => return None,
        };
        let mut m = Marker {
            kind,
            scope: String::new(),
            head: None,
            valid_at: None,
            posting: None,
            part: None,
            report: None,
            digest: None,
        };
        while !rest.is_empty() {
            let (key, after) = rest.split_once("=\"")?;
            let (value, after) = after.split_once('"')?;
            rest = after.trim_start();
            match key.trim() {
                "scope" => m.scope = check_scope(value).ok()?,
                "head" if safe(value) => m.head = Some(value.to_string()),
                "valid-at" => m.valid_at = Some(Timestamp::parse(value).ok()?),
                "part" => {
                    let (i, n) = value.split_once('/')?;
                    let (i, n) = (i.parse().ok()?, n.parse().ok()?);
                    if i == 0 || i > n {
                        return None;
                    }
                    m.part = Some((i, n));
                }
                "posting" if safe(value) => m.posting = Some(value.to_string()),
                "report" if safe(value) => m.report = Some(value.to_string()),
                "drift" if safe(value) => m.digest = Some(value.to_string()),
                _ => return None,
            }
        }
        (!m.scope.is_empty()).then_some(m)
    }
}

/// FNV-1a over the lines, as 16 hex digits: stable across runs and platforms, enough to notice
/// that a set changed (not a security boundary).
pub fn digest<'a>(lines: impl IntoIterator<Item = &'a str>) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for line in lines {
        for b in line.bytes().chain(std::iter::once(b'\n')) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{h:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Timestamp {
        Timestamp::parse(s).unwrap()
    }

    #[test]
    fn round_trip() {
        let mut m = Marker::comment("prod", "0123abcd", t("2026-11-30T10:00:00Z"));
        m.part = Some((2, 3));
        m.posting = Some("4242.1".into());
        m.report = Some("00ff".into());
        let line = m.render();
        assert_eq!(
            line,
            "<!-- gpuledger:comment scope=\"prod\" head=\"0123abcd\" valid-at=\"2026-11-30T10:00:00Z\" posting=\"4242.1\" part=\"2/3\" report=\"00ff\" -->"
        );
        assert_eq!(Marker::find(&format!("{line}\nbody")), Some(m));
        let i = Marker::issue("gpu-east/prod", "00ff");
        assert_eq!(Marker::find(&i.render()), Some(i));
    }

    #[test]
    fn scopes_match_exactly() {
        let prod = Marker::find(&Marker::issue("prod", "1").render()).unwrap();
        let non_prod = Marker::find(&Marker::issue("non-prod", "1").render()).unwrap();
        let prod_eu = Marker::find(&Marker::issue("prod-eu", "1").render()).unwrap();
        assert!(prod.same_thread(&Marker::issue("prod", "2")));
        assert!(!non_prod.same_thread(&prod) && !prod_eu.same_thread(&prod));
        let comment = Marker::comment("prod", "a", t("2026-11-30T10:00:00Z"));
        assert!(!comment.same_thread(&prod), "a comment is not an issue");
    }

    #[test]
    fn only_a_strict_first_line_counts() {
        for body in [
            "hello\n<!-- gpuledger:issue scope=\"prod\" -->",
            "<!-- gpuledger:issue scope=\"prod\" extra=\"1\" -->",
            "<!-- gpuledger:issue scope=\"pr od\" -->",
            "<!-- gpuledger:issue scope=\"prod\"",
            "<!-- gpuledger:other scope=\"prod\" -->",
            "<!-- gpuledger:comment scope=\"prod\" part=\"3/2\" -->",
            "<!-- gpuledger:comment scope=\"prod\" valid-at=\"yesterday\" -->",
            "",
        ] {
            assert_eq!(Marker::find(body), None, "{body}");
        }
    }

    #[test]
    fn scope_alphabet() {
        assert!(check_scope("gpu-east/prod_1.a:b").is_ok());
        for bad in ["", "a\"b", "a -->", "x y", &"a".repeat(101)] {
            assert!(check_scope(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn digest_is_stable_and_order_sensitive() {
        assert_eq!(digest(["a", "b"]), digest(["a", "b"]));
        assert_ne!(digest(["a", "b"]), digest(["b", "a"]));
        assert_ne!(digest(["ab"]), digest(["a", "b"]));
        assert_eq!(digest(["a"]).len(), 16);
    }
}
