#!/usr/bin/env bash
# Installs the Helm engine the tests render charts with: Helm v4's own Go code as a C library,
# from the PyPI package helm-python-sdk, in a virtualenv (default `.venv/` at the repository root,
# git-ignored; GPULEDGER_VENV overrides it, a relative path being taken from the repository root).
# Idempotent: does nothing when the pinned version is already importable there. Prints the path of
# the `helm` stand-in that the tests run (tests/support/helm), which finds this virtualenv itself.
#
#   scripts/install-helm-engine.sh            # -> /path/to/repo/tests/support/helm
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

HELM_SDK_VERSION=0.2.2 # keep in step with SUPPORTED_SDK in tests/support/helm

say() { printf '==> %s\n' "$*" >&2; }

venv=${GPULEDGER_VENV:-.venv}
case $venv in
/*) ;;
*) venv=$repo/$venv ;;
esac
python=$venv/bin/python

# A virtualenv whose interpreter no longer runs (its base Python was removed) is made anew.
if [ -e "$python" ] && ! "$python" -c 'import sys' >/dev/null 2>&1; then
    say "the virtualenv at $venv is broken: recreating it"
    rm -rf "$venv"
fi
if [ ! -e "$python" ]; then
    command -v python3 >/dev/null || { say "python3 (3.10 or later) is required"; exit 2; }
    say "creating a virtualenv at $venv"
    python3 -m venv "$venv" || { say "python3 -m venv failed (on Debian: apt-get install python3-venv)"; exit 2; }
fi

if ! "$python" -c "import helm_python, sys; sys.exit(helm_python.__version__ != '$HELM_SDK_VERSION')" >/dev/null 2>&1; then
    say "installing helm-python-sdk==$HELM_SDK_VERSION (Helm v4 engine) into $venv"
    "$python" -m pip install --quiet --disable-pip-version-check "helm-python-sdk==$HELM_SDK_VERSION"
    "$python" -c "import helm_python; print('==> Helm engine', helm_python.helm_sdk_version(), 'ready')" >&2
fi

echo "$repo/tests/support/helm"
