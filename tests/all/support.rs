//! Helpers shared by the integration tests.

use std::path::{Path, PathBuf};

use assert_cmd::Command;

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn fixture(rel: &str) -> PathBuf {
    root().join(rel)
}

/// The binary, run from the repository root with a clean environment for its own variables, so a
/// developer's `.gpuledger.yaml` or `GPULEDGER_*` never changes a test.
pub fn gpuledger(dir: &Path) -> Command {
    let mut c = assert_cmd::cargo::cargo_bin_cmd!("gpuledger");
    c.current_dir(dir)
        .env_remove("GPULEDGER_FORMAT")
        .env_remove("GPULEDGER_CONFIG")
        .env_remove("GPULEDGER_LOG")
        .env_remove("GPULEDGER_PROMETHEUS")
        .env_remove("GPULEDGER_OPENCOST")
        .env_remove("GPULEDGER_CACHE_DIR")
        .env_remove("KUBECONFIG")
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_REPOSITORY")
        .env_remove("GITHUB_API_URL")
        .env_remove("GITHUB_EVENT_PATH")
        .env_remove("GITHUB_TOKEN")
        // The table's layout follows the terminal: tests lay it out unlimited unless they say.
        .env_remove("COLUMNS")
        .env_remove("NO_COLOR");
    c
}

/// Runs `inventory` with JSON output on the given files and returns the parsed report.
pub fn inventory_json(args: &[&str]) -> serde_json::Value {
    let out = gpuledger(&root())
        .arg("inventory")
        .args(args)
        .args(["--format", "json"])
        .output()
        .expect("run gpuledger");
    assert!(
        out.status.success(),
        "gpuledger failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("valid JSON report")
}

/// A git repository in a temporary directory, built file by file and commit by commit.
pub struct Repo {
    pub dir: tempfile::TempDir,
}

impl Repo {
    pub fn new() -> Repo {
        let r = Repo {
            dir: tempfile::tempdir().unwrap(),
        };
        r.git(&["init", "-q", "-b", "main"]);
        r
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn git(&self, args: &[&str]) -> String {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(self.path())
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", self.path())
            .output()
            .expect("git");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub fn write(&self, rel: &str, text: &str) -> &Repo {
        let p = self.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
        self
    }

    pub fn remove(&self, rel: &str) -> &Repo {
        std::fs::remove_file(self.path().join(rel)).unwrap();
        self
    }

    pub fn commit(&self, msg: &str) -> &Repo {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "-m", msg]);
        self
    }

    /// A commit at a fixed time, so that its sha (which a report names) is the same in every run.
    pub fn commit_at(&self, msg: &str, date: &str) -> &Repo {
        self.git(&["add", "-A"]);
        let out = std::process::Command::new("git")
            .args(["commit", "-q", "-m", msg])
            .current_dir(self.path())
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .env("GIT_AUTHOR_DATE", date)
            .env("GIT_COMMITTER_DATE", date)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", self.path())
            .output()
            .expect("git");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        self
    }
}

/// Runs `gpuledger render` on `repo` with the real renderers: kustomize (or kubectl kustomize) from
/// PATH and the Helm engine's `helm` stand-in from tests/support (installed by scripts/test.sh).
pub fn render(repo: &Path, args: &[&str]) -> (i32, serde_json::Value, String) {
    let mut all = vec!["render", "--repo", "."];
    all.extend_from_slice(args);
    let (code, json, stderr) = with_renderers(repo, &all);
    assert!(!json.is_null(), "no JSON report; stderr:\n{stderr}");
    (code, json, stderr)
}

/// Runs gpuledger with `args` (a subcommand and its flags) and `--format json` in `repo`, with the
/// real renderers as [`render`] has them. The report is `null` when the command printed none (an
/// error).
pub fn with_renderers(repo: &Path, args: &[&str]) -> (i32, serde_json::Value, String) {
    let venv = std::env::var("GPULEDGER_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|_| root().join(".venv"));
    assert!(
        venv.join("bin/python").exists(),
        "the Helm engine is not installed at {}: run scripts/install-helm-engine.sh (scripts/test.sh does)",
        venv.display()
    );
    let path = format!(
        "{}:{}",
        venv.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = gpuledger(repo)
        .args(args)
        .args(["--format", "json"])
        .env("GPULEDGER_HELM", root().join("tests/support/helm"))
        .env_remove("GPULEDGER_KUSTOMIZE")
        .env("PATH", path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let json = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
    (out.status.code().unwrap_or(-1), json, stderr)
}

/// `namespace/Kind/name` → declared GPUs, for the desired workloads of a render report.
pub fn desired_gpus(r: &serde_json::Value) -> std::collections::BTreeMap<String, u64> {
    r["desired"]["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            (
                format!(
                    "{}/{}/{}",
                    w["namespace"].as_str().unwrap(),
                    w["kind"].as_str().unwrap(),
                    w["name"].as_str().unwrap()
                ),
                w["gpus_declared"].as_u64().unwrap(),
            )
        })
        .collect()
}
