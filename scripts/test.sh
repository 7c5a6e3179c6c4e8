#!/usr/bin/env bash
# The whole test suite on a fresh machine: installs what the tests need when it is missing, then runs
# the format check, clippy and every test. `.ci/run` calls this script; so can you.
#
#   scripts/test.sh            # everything
#   scripts/test.sh demo       # extra arguments go to `cargo test` (a filter, --release, ...)
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '==> %s\n' "$*" >&2; }

# The Rust toolchain is the machine's own (rustup); nothing else is needed by the tests yet.
# Later components (Prometheus, the Helm engine) are installed here when the tests start using them.
command -v cargo >/dev/null || { say "cargo is not installed: install Rust with rustup first"; exit 2; }
rustup component list --installed 2>/dev/null | grep -q '^rustfmt' || rustup component add rustfmt clippy >/dev/null 2>&1 || true

say "cargo fmt --check"
cargo fmt --all -- --check

say "cargo clippy --all-targets -- -D warnings"
cargo clippy --all-targets --locked -- -D warnings

say "cargo test"
# Snapshot tests never rewrite their snapshots here: a difference is a failure.
INSTA_UPDATE=no cargo test --locked "$@"
