//! Glob patterns for paths and names, compiled once where they are read (a config rule, an Argo CD
//! directory include/exclude, an ApplicationSet git generator) and matched in time linear in the
//! text: `*` and `?` within a path segment, `**` across segments, `[abc]` classes and `{a,b}`
//! alternatives.
//!
//! Patterns come from repositories under review, so they are bounded: at most [`MAX_PATTERN_LEN`]
//! characters and [`MAX_ALTERNATIVES`] `{a,b}` expansions; beyond, compiling fails and says why.
//! Matching runs on `globset` (ripgrep's glob crate), which compiles a pattern to a finite
//! automaton: no backtracking, however many `*` or `**` a pattern holds.
//!
//! gpuledger uses one dialect for every caller; where upstream tools differ, gpuledger keeps its own
//! (the differences are pinned in the table test below):
//! - Argo CD directory `include`/`exclude` (argo-cd `reposerver/repository/repository.go`,
//!   `findManifests`/`getPotentiallyValidManifests`, through `util/glob/glob.go` =
//!   github.com/gobwas/glob without separators): [`Glob::crossing`] follows upstream, `*` crosses
//!   `/` and only the path relative to the source directory is matched. Which files a directory
//!   source deploys is Argo CD's decision, so here gpuledger does not keep a dialect of its own.
//! - ApplicationSet git `directories` (argo-cd `applicationset/generators/git.go`, `filterApps`,
//!   Go `path.Match`): `*` does not cross `/`, as here; upstream has no `**` and no `{a,b}`.
//! - ApplicationSet git `files` (argo-cd `util/git/client.go`, `LsFiles`: `git ls-files` pathspecs,
//!   or doublestar with the new file globbing): gpuledger follows doublestar, where `**` crosses
//!   segments and `*` does not.
//! - `.gpuledger.yaml` (`accepted_drift[].match`, `render.exclude`) is gpuledger's own.

use std::fmt;

use globset::{GlobBuilder, GlobMatcher};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Longest pattern accepted, in characters.
pub const MAX_PATTERN_LEN: usize = 1024;

/// Most `{a,b}` alternatives one pattern may expand to.
pub const MAX_ALTERNATIVES: usize = 256;

/// Why a pattern was not compiled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GlobError {
    #[error(
        "glob {pattern:?}: {len} characters is longer than the {MAX_PATTERN_LEN} allowed: refused"
    )]
    TooLong { pattern: String, len: usize },
    #[error(
        "glob {pattern:?}: expands to more than {MAX_ALTERNATIVES} {{a,b}} alternatives: refused"
    )]
    TooManyAlternatives { pattern: String },
    #[error("glob {pattern:?} is not valid: {reason}")]
    Invalid { pattern: String, reason: String },
}

/// A compiled glob pattern.
#[derive(Clone)]
pub struct Glob {
    source: String,
    matcher: GlobMatcher,
}

impl Glob {
    pub fn new(pattern: &str) -> Result<Glob, GlobError> {
        Glob::build(pattern, false)
    }

    /// A pattern in the dialect of Argo CD's directory `include`/`exclude` (argo-cd
    /// `util/glob/glob.go`: github.com/gobwas/glob compiled without separators): `*` and `?` match
    /// `/` too, `\` escapes, and the pattern is matched against the whole path relative to the
    /// source directory. Bounded as [`Glob::new`] is.
    pub fn crossing(pattern: &str) -> Result<Glob, GlobError> {
        Glob::build(pattern, true)
    }

    fn build(pattern: &str, crossing: bool) -> Result<Glob, GlobError> {
        let len = pattern.chars().count();
        if len > MAX_PATTERN_LEN {
            // The pattern itself may be huge: the message quotes only its start.
            let head: String = pattern.chars().take(40).collect();
            return Err(GlobError::TooLong {
                pattern: format!("{head}…"),
                len,
            });
        }
        if alternatives(pattern) > MAX_ALTERNATIVES {
            return Err(GlobError::TooManyAlternatives {
                pattern: pattern.to_string(),
            });
        }
        let normalized = if crossing {
            // Every `*` crosses `/` already.
            pattern.to_string()
        } else {
            normalize(pattern)
        };
        let glob = GlobBuilder::new(&normalized)
            .literal_separator(!crossing)
            // `\` is an ordinary character in the patterns gpuledger reads (paths, names), except
            // in gobwas patterns, where it escapes.
            .backslash_escape(crossing)
            .empty_alternates(true)
            .build()
            .map_err(|e| GlobError::Invalid {
                pattern: pattern.to_string(),
                reason: e.kind().to_string(),
            })?;
        Ok(Glob {
            source: pattern.to_string(),
            matcher: glob.compile_matcher(),
        })
    }

    pub fn is_match(&self, text: &str) -> bool {
        self.matcher.is_match(text)
    }

    pub fn as_str(&self) -> &str {
        &self.source
    }
}

/// A glob reads as the pattern it was written as (rules are shown by their patterns).
impl std::ops::Deref for Glob {
    type Target = str;

    fn deref(&self) -> &str {
        &self.source
    }
}

impl fmt::Debug for Glob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Glob({:?})", self.source)
    }
}

impl PartialEq for Glob {
    fn eq(&self, other: &Glob) -> bool {
        self.source == other.source
    }
}

/// A pattern in a config file is compiled when the file is read, so a refused one is an error
/// that names its line rather than a rule that silently never matches.
impl<'de> Deserialize<'de> for Glob {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Glob, D::Error> {
        let s = String::deserialize(d)?;
        Glob::new(&s).map_err(serde::de::Error::custom)
    }
}

impl Serialize for Glob {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.source)
    }
}

/// gpuledger's `**` matches any run of characters wherever it stands, and `**/` may also match
/// nothing. globset gives `**` that meaning only as a whole segment (`**/x`, `x/**`, `x/**/y`);
/// elsewhere (`a**`, `**.yaml`) it would mean `*`, so such a `**` is spelled as a whole segment
/// alternative instead: `a**` becomes `a{*,*/**}`, which crosses `/` as before. `**/**/` is `**/`.
fn normalize(pattern: &str) -> String {
    let mut p = pattern.to_string();
    while p.contains("**/**/") {
        p = p.replace("**/**/", "**/");
    }
    let chars: Vec<char> = p.chars().collect();
    let mut out = String::with_capacity(p.len());
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        if c == '*' && chars.get(i + 1) == Some(&'*') {
            let mut j = i;
            while chars.get(j) == Some(&'*') {
                j += 1;
            }
            let before_ok = i == 0 || chars.get(i - 1) == Some(&'/');
            let after_ok = matches!(chars.get(j), None | Some('/'));
            if before_ok && after_ok {
                out.push_str("**");
            } else {
                out.push_str("{*,*/**/*}");
            }
            i = j;
            continue;
        }
        out.push(c);
        i += 1;
    }
    out
}

/// How many patterns `{a,b}` groups expand to (nested groups included), saturating.
fn alternatives(pattern: &str) -> usize {
    // One frame per open group: (alternatives of the finished branches, of the current branch).
    let mut stack: Vec<(usize, usize)> = vec![(0, 1)];
    for c in pattern.chars() {
        match c {
            '{' => stack.push((0, 1)),
            ',' if stack.len() > 1 => {
                if let Some(top) = stack.last_mut() {
                    *top = (top.0.saturating_add(top.1), 1);
                }
            }
            '}' if stack.len() > 1 => {
                if let Some((done, cur)) = stack.pop()
                    && let Some(top) = stack.last_mut()
                {
                    top.1 = top.1.saturating_mul(done.saturating_add(cur));
                }
            }
            _ => {}
        }
    }
    stack.first().map_or(1, |f| f.1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, text: &str) -> bool {
        Glob::new(pattern).is_ok_and(|g| g.is_match(text))
    }

    /// Argo CD directory include/exclude (gobwas without separators) against the path relative
    /// to the source directory → expected, as upstream decides.
    #[test]
    fn argo_directory_dialect() {
        let rows: &[(&str, &str, bool)] = &[
            ("*.yaml", "a.yaml", true),
            ("*.yaml", "sub/a.yaml", true),
            ("sub/*.yaml", "sub/a.yaml", true),
            ("sub/*", "sub/x/a.yaml", true),
            ("a.yaml", "sub/a.yaml", false),
            ("{a,b}.yaml", "b.yaml", true),
            ("{a,b}.yaml", "x/b.yaml", false),
            ("*{a,b}.yaml", "x/b.yaml", true),
            ("*-crd.yaml", "gpu.yaml", false),
            ("[a-c]x.yaml", "bx.yaml", true),
            ("[!a-c]x.yaml", "bx.yaml", false),
            ("?.json", "a.json", true),
            ("a?b.json", "a/b.json", true),
        ];
        for (pattern, text, expected) in rows {
            assert_eq!(
                Glob::crossing(pattern).is_ok_and(|g| g.is_match(text)),
                *expected,
                "{pattern:?} against {text:?}"
            );
        }
        assert!(Glob::crossing(&"{a,b}".repeat(12)).is_err());
    }

    /// Pattern × text → expected, per kind of caller. Rows marked "upstream differs" are where
    /// gpuledger keeps its own behaviour (see the module comment).
    #[test]
    fn table() {
        let rows: &[(&str, &str, &str, bool)] = &[
            // ApplicationSet git directories (Go path.Match: `*` stays within a segment).
            ("appset-dir", "apps/*", "apps/x", true),
            ("appset-dir", "apps/*", "apps/x/y", false),
            ("appset-dir", "apps/*", "apps", false),
            ("appset-dir", "apps/?", "apps/x", true),
            ("appset-dir", "apps/**", "apps/x/y", true), // upstream differs: no `**` in path.Match
            ("appset-dir", "apps/{a,b}", "apps/b", true), // upstream differs: no `{a,b}`
            ("appset-dir", "*/gpu", "team/gpu", true),
            // ApplicationSet git files (doublestar).
            ("appset-files", "**/config.json", "config.json", true),
            ("appset-files", "**/config.json", "a/b/config.json", true),
            ("appset-files", "**/config.json", "a/bconfig.json", false),
            (
                "appset-files",
                "clusters/*/config.yaml",
                "clusters/a/config.yaml",
                true,
            ),
            (
                "appset-files",
                "clusters/*/config.yaml",
                "clusters/a/b/config.yaml",
                false,
            ),
            (
                "appset-files",
                "clusters/**/config.yaml",
                "clusters/config.yaml",
                true,
            ),
            (
                "appset-files",
                "clusters/**/config.yaml",
                "clusters/a/b/config.yaml",
                true,
            ),
            // `.gpuledger.yaml` accepted-drift match fields (namespaces, kinds, names).
            ("config-match", "loadtest-*", "loadtest-7", true),
            ("config-match", "loadtest-*", "prod", false),
            ("config-match", "llama-*-prod", "llama-70b-prod", true),
            ("config-match", "v?", "v1", true),
            ("config-match", "v?", "v12", false),
            ("config-match", "*", "", true),
            ("config-match", "a", "ab", false),
            ("config-match", "Deployment", "Deployment", true),
            ("config-match", "deployment", "Deployment", false),
            // `.gpuledger.yaml` render.exclude (paths; a plain directory also excludes what is
            // under it, which discover adds on top of the glob).
            ("config-exclude", "examples/**", "examples/a/b.yaml", true),
            ("config-exclude", "examples/**", "examples", false),
            ("config-exclude", "**/test/*.yaml", "a/test/x.yaml", true),
            ("config-exclude", "**/test/*.yaml", "test/x.yaml", true),
            ("config-exclude", "b/examples/**", "b/x.yaml", false),
            // gpuledger's own `**` inside a segment matches across segments.
            ("engine", "apps**", "apps/x/y", true),
            ("engine", "apps**", "apps", true),
            ("engine", "**.yaml", "x/y.yaml", true),
            ("engine", "a/**/**/b", "a/b", true),
            ("engine", "**", "any/thing", true),
            ("engine", "a\\b", "a\\b", true),
        ];
        for (caller, pattern, text, expected) in rows {
            assert_eq!(
                matches(pattern, text),
                *expected,
                "{caller}: {pattern:?} against {text:?}"
            );
        }
    }

    #[test]
    fn refused_patterns_say_why() {
        let e = Glob::new(&"a".repeat(MAX_PATTERN_LEN + 1)).unwrap_err();
        assert!(
            e.to_string().contains("longer than the 1024 allowed"),
            "{e}"
        );
        assert!(Glob::new(&"a".repeat(MAX_PATTERN_LEN)).is_ok());
        let e = Glob::new(&"{a,b}".repeat(12)).unwrap_err();
        assert!(e.to_string().contains("alternatives"), "{e}");
        assert!(
            Glob::new(&"{a,b}".repeat(8)).is_ok(),
            "2^8 = 256 is allowed"
        );
        assert_eq!(alternatives("{a,{b,c}}{x,y}"), 6);
    }

    #[test]
    fn hostile_patterns_stay_fast() {
        // Exponential backtracking would make these hang, not merely slow.
        let deep = format!("{}x.json", "d/".repeat(16));
        assert!(!matches(&format!("{}y.txt", "**/".repeat(12)), &deep));
        assert!(matches(&format!("{}*.json", "**/".repeat(12)), &deep));
        assert!(!matches(&"*a".repeat(40), &"a".repeat(39)));
        let stars = format!("{}b", "a*".repeat(500));
        let text = "a".repeat(100_000);
        assert!(!matches(&stars, &text));
        assert!(matches(&stars, &format!("{text}b")));
        let many = format!("{}x", "**/a/".repeat(200));
        assert!(!matches(&many, &"a/".repeat(50_000)));
        assert!(matches(&many, &format!("{}x", "a/".repeat(50_000))));
        let inner = format!("{}b", "a**".repeat(50));
        assert!(!matches(&inner, &"a/".repeat(50_000)));
    }
}
