//! Flux's `.sourceignore`: the files source-controller leaves out of a GitRepository's artifact, so
//! that no Flux Kustomization ever sees them.
//!
//! It follows fluxcd/pkg `sourceignore/sourceignore.go`: the default patterns (VCS files, images and
//! archives, CI configuration such as `.gitlab-ci.yml` and `.github/`, `.sops.yaml`), then the
//! patterns of every `.sourceignore` in the tree, each scoped to its own directory; gitignore
//! semantics as go-git's `plumbing/format/gitignore` has them: the last matching pattern decides, a
//! `!` pattern includes again, a trailing `/` matches directories only, a pattern with a `/`
//! inside is anchored to its file's directory and one without matches at any depth, and a match on
//! a directory ignores everything below it.
//!
//! Patterns come from the repository under review, so each is compiled once by
//! [`crate::util::glob`] (bounded length, linear-time matching); one that does not compile is
//! skipped, as git skips a line it cannot read.

use crate::util::glob::Glob;

use super::tree::Tree;

/// The ignore file's name.
pub const FILE: &str = ".sourceignore";

/// source-controller's defaults (`ExcludeVCS`, `ExcludeExt`, `ExcludeCI`, `ExcludeExtra`).
const DEFAULTS: [&str; 24] = [
    ".git/",
    ".gitignore",
    ".gitmodules",
    ".gitattributes",
    "*.jpg",
    "*.jpeg",
    "*.gif",
    "*.png",
    "*.wmv",
    "*.flv",
    "*.tar.gz",
    "*.zip",
    ".github/",
    ".circleci/",
    ".travis.yml",
    ".gitlab-ci.yml",
    "appveyor.yml",
    ".drone.yml",
    "cloudbuild.yaml",
    "codeship-services.yml",
    "codeship-steps.yml",
    "**/.goreleaser.yml",
    "**/.sops.yaml",
    "**/.flux.yaml",
];

struct Pattern {
    glob: Glob,
    include: bool,
    dir_only: bool,
}

/// The ignore patterns of one repository, in order.
pub struct SourceIgnore {
    patterns: Vec<Pattern>,
}

impl SourceIgnore {
    /// The defaults and every `.sourceignore` of `tree`.
    pub fn load(tree: &Tree) -> SourceIgnore {
        let mut patterns: Vec<Pattern> = DEFAULTS.iter().filter_map(|p| parse(p, "")).collect();
        let files: Vec<&str> = tree
            .files_under("")
            .filter(|f| *f == FILE || f.ends_with(&format!("/{FILE}")))
            .collect();
        for f in files {
            let domain = f.strip_suffix(FILE).unwrap_or("").trim_end_matches('/');
            let Ok(bytes) = tree.read(f) else { continue };
            for line in String::from_utf8_lossy(bytes).lines() {
                if line.starts_with('#') || line.trim().is_empty() {
                    continue;
                }
                patterns.extend(parse(line, domain));
            }
        }
        SourceIgnore { patterns }
    }

    /// Whether the file at `path` (a tree path) is left out of the artifact.
    pub fn ignores(&self, path: &str) -> bool {
        // The file itself, then each directory above it: a directory that is ignored takes what is
        // below it along (git does not descend into it).
        let dirs: Vec<&str> = path
            .match_indices('/')
            .filter_map(|(i, _)| path.get(..i))
            .collect();
        if dirs.iter().any(|d| self.decide(d, true) == Some(true)) {
            return true;
        }
        self.decide(path, false) == Some(true)
    }

    /// The last pattern that matches `path` decides: `Some(true)` ignored, `Some(false)` included.
    fn decide(&self, path: &str, is_dir: bool) -> Option<bool> {
        self.patterns
            .iter()
            .rev()
            .find(|p| (is_dir || !p.dir_only) && p.glob.is_match(path))
            .map(|p| !p.include)
    }
}

/// One gitignore line scoped to `domain` (a tree directory, `""` for the root).
fn parse(line: &str, domain: &str) -> Option<Pattern> {
    let line = line.trim_end();
    let (include, line) = match line.strip_prefix('!') {
        Some(rest) => (true, rest),
        None => (false, line),
    };
    let (dir_only, line) = match line.strip_suffix('/') {
        Some(rest) => (true, rest),
        None => (false, line),
    };
    if line.is_empty() {
        return None;
    }
    let anchored = line.trim_start_matches('/').contains('/') || line.starts_with('/');
    let body = line.trim_start_matches('/');
    let scoped = match (domain.is_empty(), anchored) {
        (true, true) => body.to_string(),
        (true, false) => format!("**/{body}"),
        (false, true) => format!("{domain}/{body}"),
        (false, false) => format!("{domain}/**/{body}"),
    };
    Some(Pattern {
        glob: Glob::new(&scoped).ok()?,
        include,
        dir_only,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ignore(lines: &[(&str, &str)]) -> SourceIgnore {
        let mut patterns: Vec<Pattern> = DEFAULTS.iter().filter_map(|p| parse(p, "")).collect();
        for (domain, l) in lines {
            patterns.extend(parse(l, domain));
        }
        SourceIgnore { patterns }
    }

    #[test]
    fn defaults_leave_out_ci_files_and_images_anywhere_flux_does() {
        let i = ignore(&[]);
        assert!(i.ignores(".gitlab-ci.yml"));
        assert!(i.ignores(".github/workflows/ci.yaml"));
        assert!(i.ignores("apps/logo.png"));
        assert!(i.ignores("apps/prod/.sops.yaml"));
        assert!(!i.ignores("apps/prod/deploy.yaml"));
        // Without a slash a pattern matches at any depth.
        assert!(i.ignores("apps/.gitlab-ci.yml"));
    }

    #[test]
    fn patterns_are_scoped_to_their_file_and_the_last_match_decides() {
        let i = ignore(&[
            ("", "*.tmpl.yaml"),
            ("", "/drafts/"),
            ("apps", "local/"),
            ("apps", "!keep.tmpl.yaml"),
        ]);
        assert!(i.ignores("x/a.tmpl.yaml"));
        assert!(!i.ignores("apps/keep.tmpl.yaml"));
        assert!(i.ignores("drafts/gpu.yaml"));
        assert!(!i.ignores("apps/drafts/gpu.yaml"), "anchored at the root");
        assert!(i.ignores("apps/a/local/gpu.yaml"));
        assert!(!i.ignores("other/local/gpu.yaml"), "scoped to apps/");
        // A directory-only pattern never matches a file of that name.
        assert!(!i.ignores("apps/local"));
    }
}
