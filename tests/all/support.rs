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
        .env_remove("GPULEDGER_LOG");
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
