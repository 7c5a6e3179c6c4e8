//! Stamps the git commit gpuledger was built from into `GPULEDGER_COMMIT`, for `--version`: a
//! release asset, an image or a `cargo install` can then be traced to its source. Where it comes
//! from, first found wins: `GPULEDGER_GIT_COMMIT` (the release workflow and the Dockerfile set it,
//! since neither builds inside a git checkout), `git rev-parse HEAD` in a checkout, and the
//! `.cargo_vcs_info.json` that `cargo package` writes into a crate. Nothing found reads "unknown",
//! never an empty or made-up commit.

use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=GPULEDGER_GIT_COMMIT");
    let commit = from_env()
        .or_else(from_git)
        .or_else(from_vcs_info)
        .unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=GPULEDGER_COMMIT={commit}");
}

/// A full or abbreviated hex object name, shortened to 12 characters.
fn short(sha: &str) -> Option<String> {
    let sha = sha.trim();
    let ok = sha.len() >= 7 && sha.chars().all(|c| c.is_ascii_hexdigit());
    ok.then(|| {
        sha.chars()
            .take(12)
            .collect::<String>()
            .to_ascii_lowercase()
    })
}

fn from_env() -> Option<String> {
    short(&std::env::var("GPULEDGER_GIT_COMMIT").ok()?)
}

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(env_dir())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn env_dir() -> String {
    std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".to_string())
}

fn from_git() -> Option<String> {
    // Only a checkout whose top is this crate: a crate unpacked inside some other repository (a
    // vendored copy, cargo's registry cache under a dotfiles repo) must not take that repo's commit.
    let top = git(&["rev-parse", "--show-toplevel"])?;
    let here = Path::new(&env_dir()).canonicalize().ok()?;
    if Path::new(&top).canonicalize().ok()? != here {
        return None;
    }
    // Rebuilt when HEAD moves: the HEAD file itself and the branch it points to (worktrees keep
    // them in different directories, which `--git-path` resolves).
    for name in ["HEAD", "packed-refs"] {
        if let Some(p) = git(&["rev-parse", "--git-path", name]) {
            println!("cargo:rerun-if-changed={}", absolute(&p));
        }
    }
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"])
        && let Some(p) = git(&["rev-parse", "--git-path", &branch])
    {
        println!("cargo:rerun-if-changed={}", absolute(&p));
    }
    short(&git(&["rev-parse", "HEAD"])?)
}

fn absolute(p: &str) -> String {
    let path = Path::new(p);
    if path.is_absolute() {
        p.to_string()
    } else {
        Path::new(&env_dir()).join(path).display().to_string()
    }
}

fn from_vcs_info() -> Option<String> {
    let text = std::fs::read_to_string(Path::new(&env_dir()).join(".cargo_vcs_info.json")).ok()?;
    // {"git": {"sha1": "…"}, "path_in_vcs": ""}: a plain search keeps serde out of the build script.
    let at = text.find("\"sha1\"")?;
    let rest = text.get(at + 6..)?;
    let start = rest.find('"')? + 1;
    let rest = rest.get(start..)?;
    short(rest.get(..rest.find('"')?)?)
}
