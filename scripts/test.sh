#!/usr/bin/env bash
# The whole test suite on a fresh machine: installs what the tests need when it is missing, then runs
# the format check, clippy and every test. `.ci/run` calls this script; so can you.
#
#   scripts/test.sh            # everything
#   scripts/test.sh demo       # extra arguments go to `cargo test` (a filter, --release, ...)
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '==> %s\n' "$*" >&2; }

# The Rust toolchain is the machine's own (rustup).
command -v cargo >/dev/null || { say "cargo is not installed: install Rust with rustup first"; exit 2; }
rustup component list --installed 2>/dev/null | grep -q '^rustfmt' || rustup component add rustfmt clippy >/dev/null 2>&1 || true

# Kustomize: the real one, standalone or built into kubectl (on the machine image). No package
# registry here ships it, so a machine without either fails loudly instead of skipping tests.
if ! command -v kustomize >/dev/null && ! command -v kubectl >/dev/null; then
    say "neither kustomize nor kubectl is on PATH: the render tests need the real kustomize"
    exit 2
fi

# The real Helm engine (Helm v4 as a C library, PyPI helm-python-sdk) in .venv, behind the
# tests/support/helm stand-in for `helm template`.
command -v python3 >/dev/null || { say "installing python3"; apt-get update -qq && apt-get install -y -qq python3 python3-venv; }
scripts/install-helm-engine.sh >/dev/null

# Prometheus: the real server, loaded with DCGM-shaped series through promtool (Debian's package
# ships both). The package may start its own service on :9090; the tests use free ports of their own.
if ! command -v prometheus >/dev/null || ! command -v promtool >/dev/null; then
    say "installing prometheus (the metrics tests run the real server)"
    apt-get update -qq && apt-get install -y -qq --no-install-recommends prometheus
fi

say "cargo fmt --check"
cargo fmt --all -- --check

say "cargo clippy --all-targets -- -D warnings"
cargo clippy --all-targets --locked -- -D warnings

say "cargo test"
# Snapshot tests never rewrite their snapshots here: a difference is a failure.
log=$(mktemp)
trap 'rm -f "$log"' EXIT
set +e
INSTA_UPDATE=no cargo test --locked "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
# One closing line for the whole suite, summed over the test binaries.
awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($i ~ /^passed/) p += $(i-1); if ($i ~ /^failed/) f += $(i-1) } }
     END { printf "tests: %d passed, %d failed\n", p, f }' "$log"
exit "$status"
