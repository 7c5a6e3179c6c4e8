//! Chart versions and version ranges as Helm, Argo CD and Flux read them: Masterminds semver v3.
//!
//! Upstream: Masterminds/semver `version.go` (`NewVersion`, the lenient parser that takes `v1.2`
//! as 1.2.0; `StrictNewVersion`; `Compare`, prereleases by their dot-separated parts, numbers
//! below words, build metadata ignored) and `constraints.go` (`NewConstraint`: `A - B` ranges
//! rewritten to `>= A, <= B`, `||` between groups, `,` or spaces between the constraints of a
//! group; operators `=`, `!=`, `>`, `<`, `>=`/`=>`, `<=`/`=<`, `~`/`~>`, `^` and none; `x`, `X`
//! and `*` wildcards make a constraint "dirty"; a group without a prerelease in any of its
//! constraints never matches a prerelease). Written anew from those rules; the tests below are
//! the upstream README's examples.

use std::cmp::Ordering;

/// A semantic version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    pub major: u64,
    pub minor: u64,
    pub patch: u64,
    /// The prerelease, without its `-` (empty when none).
    pub pre: String,
    /// Build metadata, without its `+`: never compared.
    pub build: String,
}

impl Version {
    /// Masterminds `NewVersion`: an optional `v`, one to three numbers (no leading zeros), then
    /// an optional prerelease and build metadata.
    pub fn parse(s: &str) -> Option<Version> {
        let s = s.strip_prefix('v').unwrap_or(s);
        let (rest, build) = match s.split_once('+') {
            Some((r, b)) => (r, Some(b)),
            None => (s, None),
        };
        let (core, pre) = match rest.split_once('-') {
            Some((c, p)) => (c, Some(p)),
            None => (rest, None),
        };
        let nums: Vec<&str> = core.split('.').collect();
        if nums.is_empty() || nums.len() > 3 || !nums.iter().all(|n| numeric(n)) {
            return None;
        }
        let num = |i: usize| nums.get(i).map_or(Some(0), |n| n.parse::<u64>().ok());
        if let Some(p) = pre
            && !p.split('.').all(pre_part)
        {
            return None;
        }
        if let Some(b) = build
            && !b
                .split('.')
                .all(|x| !x.is_empty() && x.chars().all(ident_char))
        {
            return None;
        }
        Some(Version {
            major: num(0)?,
            minor: num(1)?,
            patch: num(2)?,
            pre: pre.unwrap_or_default().to_string(),
            build: build.unwrap_or_default().to_string(),
        })
    }

    /// Masterminds `StrictNewVersion`: three numbers, no `v`.
    pub fn parse_strict(s: &str) -> Option<Version> {
        if s.starts_with('v') {
            return None;
        }
        let core = s.split(['-', '+']).next().unwrap_or(s);
        if core.split('.').count() != 3 {
            return None;
        }
        Version::parse(s)
    }

    /// Flux's `version.ParseVersion` (fluxcd/pkg `version/version.go`): strict, but a leading `v`
    /// is allowed.
    pub fn parse_flux(s: &str) -> Option<Version> {
        Version::parse_strict(s.strip_prefix('v').unwrap_or(s))
    }

    fn cmp_core(&self, o: &Version) -> Ordering {
        (self.major, self.minor, self.patch).cmp(&(o.major, o.minor, o.patch))
    }
}

impl Ord for Version {
    fn cmp(&self, o: &Version) -> Ordering {
        self.cmp_core(o)
            .then_with(|| match (self.pre.is_empty(), o.pre.is_empty()) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                (false, false) => compare_pre(&self.pre, &o.pre),
            })
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, o: &Version) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

fn numeric(n: &str) -> bool {
    !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()) && (n == "0" || !n.starts_with('0'))
}

fn ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-'
}

/// A prerelease identifier: a number without leading zeros, or alphanumerics with a non-digit.
fn pre_part(p: &str) -> bool {
    !p.is_empty()
        && p.chars().all(ident_char)
        && (numeric(p) || p.chars().any(|c| !c.is_ascii_digit()))
}

/// Masterminds `comparePrerelease`: part by part, a missing part lowest, numbers below words.
fn compare_pre(a: &str, b: &str) -> Ordering {
    let (pa, pb): (Vec<&str>, Vec<&str>) = (a.split('.').collect(), b.split('.').collect());
    for i in 0..pa.len().max(pb.len()) {
        let (x, y) = (pa.get(i).copied(), pb.get(i).copied());
        let o = match (x, y) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Less,
            (Some(_), None) => Ordering::Greater,
            (Some(x), Some(y)) => match (x.parse::<u64>(), y.parse::<u64>()) {
                (Ok(x), Ok(y)) => x.cmp(&y),
                (Ok(_), Err(_)) => Ordering::Less,
                (Err(_), Ok(_)) => Ordering::Greater,
                (Err(_), Err(_)) => x.cmp(y),
            },
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    TildeOrEqual,
    NotEqual,
    Greater,
    Less,
    GreaterEqual,
    LessEqual,
    Tilde,
    Caret,
}

/// One constraint: the operator, its version, and which parts were wildcards.
#[derive(Debug, Clone)]
struct One {
    op: Op,
    v: Version,
    dirty: bool,
    minor_dirty: bool,
    patch_dirty: bool,
}

/// A version range (`^1.2`, `>=1.0.0 <2.0.0`, `1.2.x || 2.x`), or one exact version.
#[derive(Debug, Clone)]
pub struct Constraint {
    /// OR of ANDs.
    groups: Vec<Vec<One>>,
}

/// Why a range does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("improper constraint: {0:?}")]
pub struct BadConstraint(pub String);

const OPS: [(&str, Op); 12] = [
    ("!=", Op::NotEqual),
    (">=", Op::GreaterEqual),
    ("=>", Op::GreaterEqual),
    ("<=", Op::LessEqual),
    ("=<", Op::LessEqual),
    ("~>", Op::Tilde),
    ("=", Op::TildeOrEqual),
    (">", Op::Greater),
    ("<", Op::Less),
    ("~", Op::Tilde),
    ("^", Op::Caret),
    ("", Op::TildeOrEqual),
];

impl Constraint {
    pub fn parse(s: &str) -> Result<Constraint, BadConstraint> {
        let rewritten = rewrite_ranges(s);
        let mut groups = Vec::new();
        for part in rewritten.split("||") {
            let mut group = Vec::new();
            let mut rest = part.trim_start();
            if rest.trim().is_empty() {
                return Err(BadConstraint(part.to_string()));
            }
            while !rest.is_empty() {
                let (one, after) = one(rest).ok_or_else(|| BadConstraint(part.to_string()))?;
                group.push(one);
                // Constraints of a group are separated by spaces or a comma.
                let trimmed = after.trim_start();
                let trimmed = match trimmed.strip_prefix(',') {
                    Some(t) => t.trim_start(),
                    None if trimmed.len() == after.len() && !trimmed.is_empty() => {
                        return Err(BadConstraint(part.to_string()));
                    }
                    None => trimmed,
                };
                rest = trimmed;
            }
            groups.push(group);
        }
        Ok(Constraint { groups })
    }

    /// Whether `v` satisfies the range (Masterminds `Check`).
    pub fn matches(&self, v: &Version) -> bool {
        self.groups.iter().any(|g| {
            let include_pre = g.iter().any(|c| !c.v.pre.is_empty());
            g.iter().all(|c| c.check(v, include_pre))
        })
    }
}

/// `1.2 - 1.4.5` → `>= 1.2, <= 1.4.5` (Masterminds `rewriteRange`: spaces on both sides of `-`).
fn rewrite_ranges(s: &str) -> String {
    let tokens: Vec<&str> = s.split_whitespace().collect();
    if !tokens.contains(&"-") {
        return s.to_string();
    }
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while let Some(t) = tokens.get(i) {
        if tokens.get(i + 1) == Some(&"-")
            && let Some(hi) = tokens.get(i + 2)
        {
            out.push(format!(">= {t}, <= {hi}"));
            i += 3;
            continue;
        }
        out.push((*t).to_string());
        i += 1;
    }
    out.join(" ")
}

fn is_x(s: &str) -> bool {
    matches!(s, "x" | "X" | "*")
}

/// One constraint at the start of `s`, and what follows it.
fn one(s: &str) -> Option<(One, &str)> {
    let (op, rest) = OPS
        .iter()
        .find_map(|(text, op)| s.strip_prefix(text).map(|r| (*op, r)))?;
    let rest = rest.trim_start();
    let end = rest
        .find(|c: char| c.is_whitespace() || c == ',' || c == '|')
        .unwrap_or(rest.len());
    let (word, after) = rest.split_at(end);
    if word.is_empty() {
        return None;
    }
    let w = word.strip_prefix('v').unwrap_or(word);
    let (no_build, _) = w.split_once('+').unwrap_or((w, ""));
    let (core, pre) = match no_build.split_once('-') {
        Some((c, p)) => (c, format!("-{p}")),
        None => (no_build, String::new()),
    };
    let parts: Vec<&str> = core.split('.').collect();
    if parts.len() > 3
        || parts
            .iter()
            .any(|p| p.is_empty() || !(is_x(p) || p.chars().all(|c| c.is_ascii_digit())))
    {
        return None;
    }
    let major = parts.first().copied().unwrap_or("");
    let minor = parts.get(1).copied();
    let patch = parts.get(2).copied();
    let (text, dirty, minor_dirty, patch_dirty) = if is_x(major) {
        (format!("0.0.0{pre}"), true, false, false)
    } else if minor.is_none_or(is_x) {
        (format!("{major}.0.0{pre}"), true, true, false)
    } else if patch.is_none_or(is_x) {
        (
            format!("{major}.{}.0{pre}", minor.unwrap_or("0")),
            true,
            false,
            true,
        )
    } else {
        (word.to_string(), false, false, false)
    };
    let v = Version::parse(&text)?;
    Some((
        One {
            op,
            v,
            dirty,
            minor_dirty,
            patch_dirty,
        },
        after,
    ))
}

impl One {
    fn check(&self, v: &Version, include_pre: bool) -> bool {
        if !v.pre.is_empty() && !include_pre {
            return false;
        }
        let c = &self.v;
        match self.op {
            Op::TildeOrEqual if self.dirty => self.tilde(v),
            Op::TildeOrEqual => v.cmp(c) == Ordering::Equal,
            Op::NotEqual => self.not_equal(v),
            Op::Greater => {
                if !self.dirty {
                    return v > c;
                }
                if v.major != c.major {
                    return v.major > c.major;
                }
                if self.minor_dirty {
                    return false;
                }
                if self.patch_dirty {
                    return v.minor > c.minor;
                }
                v > c
            }
            Op::Less => v < c,
            Op::GreaterEqual => v >= c,
            Op::LessEqual => {
                if !self.dirty {
                    return v <= c;
                }
                !(v.major > c.major
                    || (v.major == c.major && v.minor > c.minor && !self.minor_dirty))
            }
            Op::Tilde => self.tilde(v),
            Op::Caret => {
                if v < c {
                    return false;
                }
                if c.major > 0 || self.minor_dirty {
                    return v.major == c.major;
                }
                if v.major > 0 {
                    return false;
                }
                if c.minor > 0 || self.patch_dirty {
                    return v.minor == c.minor;
                }
                if v.minor > 0 {
                    return false;
                }
                v.patch == c.patch
            }
        }
    }

    fn tilde(&self, v: &Version) -> bool {
        let c = &self.v;
        if v < c {
            return false;
        }
        if c.major == 0 && c.minor == 0 && c.patch == 0 && !self.minor_dirty && !self.patch_dirty {
            return true;
        }
        v.major == c.major && (v.minor == c.minor || self.minor_dirty)
    }

    fn not_equal(&self, v: &Version) -> bool {
        let c = &self.v;
        if self.dirty {
            if c.major != v.major {
                return true;
            }
            if c.minor != v.minor && !self.minor_dirty {
                return true;
            }
            if self.minor_dirty {
                return false;
            }
            if c.patch != v.patch && !self.patch_dirty {
                return true;
            }
            if self.patch_dirty {
                return (!v.pre.is_empty() || !c.pre.is_empty())
                    && compare_pre(&v.pre, &c.pre) != Ordering::Equal;
            }
        }
        v.cmp(c) != Ordering::Equal
    }
}

/// Helm's `isVersionRange` (helm `pkg/repo/v1/index.go`): whether a version string is a range
/// rather than one version.
pub fn is_range(s: &str) -> bool {
    if s.contains(['^', '~', '<', '>', '=', '!', '*']) || s.contains("||") || s.contains(" - ") {
        return true;
    }
    let core = s.split(['-', '+']).next().unwrap_or(s);
    core.split('.').any(|p| p == "x" || p == "X")
}

/// The highest of `candidates` that satisfies `wanted` (a range or a version), with the rules the
/// callers share: an exact string match wins; an empty `wanted` is `*` (the latest stable);
/// candidates `parse` does not accept are skipped. Returns the candidate as written.
pub fn highest<'a>(
    candidates: impl IntoIterator<Item = &'a str>,
    wanted: &str,
    parse: fn(&str) -> Option<Version>,
) -> Result<Option<&'a str>, BadConstraint> {
    let candidates: Vec<&str> = candidates.into_iter().collect();
    if !wanted.is_empty()
        && let Some(exact) = candidates.iter().find(|c| **c == wanted)
    {
        return Ok(Some(exact));
    }
    let range = Constraint::parse(if wanted.trim().is_empty() {
        "*"
    } else {
        wanted
    })?;
    Ok(candidates
        .into_iter()
        .filter_map(|c| parse(c).map(|v| (v, c)))
        .filter(|(v, _)| range.matches(v))
        .max_by(|a, b| a.0.cmp(&b.0))
        .map(|(_, c)| c))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(range: &str, v: &str) -> bool {
        Constraint::parse(range)
            .unwrap()
            .matches(&Version::parse(v).unwrap())
    }

    #[test]
    fn versions_parse_and_order_as_masterminds_does() {
        assert_eq!(Version::parse("v1.2").unwrap().patch, 0);
        assert!(Version::parse("01.2.3").is_none());
        assert!(Version::parse("1.2.3.4").is_none());
        assert!(Version::parse_strict("1.2").is_none());
        assert!(Version::parse_strict("v1.2.3").is_none());
        assert!(Version::parse_flux("v1.2.3").is_some());
        let order = [
            "1.0.0-alpha",
            "1.0.0-alpha.1",
            "1.0.0-alpha.beta",
            "1.0.0-beta",
            "1.0.0-beta.2",
            "1.0.0-beta.11",
            "1.0.0-rc.1",
            "1.0.0",
            "1.0.1",
        ];
        for w in order.windows(2) {
            assert!(
                Version::parse(w[0]).unwrap() < Version::parse(w[1]).unwrap(),
                "{w:?}"
            );
        }
        assert_eq!(
            Version::parse("1.2.3+a")
                .unwrap()
                .cmp(&Version::parse("1.2.3+b").unwrap()),
            Ordering::Equal
        );
    }

    /// The README's ranges (Masterminds/semver README.md, "Checking Version Constraints").
    #[test]
    fn ranges_match_as_the_readme_says() {
        assert!(m("^1.2.3", "1.9.0") && !m("^1.2.3", "2.0.0") && !m("^1.2.3", "1.2.2"));
        assert!(m("^0.2.3", "0.2.9") && !m("^0.2.3", "0.3.0"));
        assert!(m("^0.0.3", "0.0.3") && !m("^0.0.3", "0.0.4"));
        assert!(m("~1.2.3", "1.2.9") && !m("~1.2.3", "1.3.0"));
        assert!(m("~1", "1.9.9") && !m("~1", "2.0.0"));
        assert!(m("1.2.x", "1.2.7") && !m("1.2.x", "1.3.0"));
        assert!(m("*", "9.9.9") && !m("*", "1.0.0-beta"));
        assert!(m("*-0", "1.0.0-beta"));
        assert!(m(">=1.2.3", "1.2.4") && !m(">=1.2.3", "1.2.4-beta"));
        assert!(m(">=1.2.3-0", "1.2.4-beta"));
        assert!(m("1.2 - 1.4.5", "1.4.5") && !m("1.2 - 1.4.5", "1.4.6"));
        assert!(m(">= 1.2, < 3.0.0 || >= 4.2.3", "4.5.0"));
        assert!(!m(">= 1.2, < 3.0.0 || >= 4.2.3", "3.5.0"));
        assert!(m(">=4.0.0 <5.0.0", "4.3.1") && !m(">=4.0.0 <5.0.0", "5.0.0"));
        assert!(m("4.0.x", "4.0.9"));
        assert!(m("!=4.1", "4.2.0") && !m("!=4.1", "4.1.5"));
        assert!(m(">11", "12.0.0") && !m(">11", "11.9.0"));
        assert!(m("<=1.2", "1.2.9") && !m("<=1.2", "1.3.0"));
        assert!(m("1.2.3", "1.2.3+build") && !m("1.2.3", "1.2.4"));
        assert!(Constraint::parse("nonsense").is_err());
        assert!(Constraint::parse("").is_err());
        assert!(Constraint::parse(">=1.0.0 <").is_err());
    }

    #[test]
    fn the_highest_match_wins_and_an_exact_string_first() {
        let tags = ["1.0.0", "1.2.0", "1.10.0", "2.0.0-rc.1", "latest", "v1.3.0"];
        let pick = |w: &str| highest(tags, w, Version::parse).unwrap();
        assert_eq!(pick("^1"), Some("1.10.0"));
        assert_eq!(pick(""), Some("1.10.0"));
        assert_eq!(pick("latest"), Some("latest"));
        assert_eq!(pick(">=2.0.0-0"), Some("2.0.0-rc.1"));
        assert_eq!(pick("~1.3"), Some("v1.3.0"));
        assert_eq!(pick("3.x"), None);
        assert_eq!(
            highest(tags, "^1", Version::parse_strict).unwrap(),
            Some("1.10.0")
        );
        assert!(is_range("^1") && is_range("1.x") && is_range(">=1 <2") && !is_range("1.2.3"));
        assert!(!is_range("1.2.3-rc.1"));
    }
}
