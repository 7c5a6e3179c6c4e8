#!/usr/bin/env bash
# Installs the released gpuledger binary for the version in Cargo.toml beside this script (the
# action's own source, at the ref the workflow pinned) into ROOT/bin, after checking it against the
# release's SHA256SUMS file. The composite action runs exactly this script; so can you.
#
#   scripts/install-gpuledger.sh ROOT
#
# Exit status, which the action acts on:
#   0  installed and verified;
#   3  this version has no release asset for this platform (no release, or no build for it): the
#      caller may build from source instead, and must say so;
#   2  anything else, a checksum mismatch first of all: a tampered or truncated download is never
#      installed and never falls back to a build that would hide it.
#
# Environment (all optional):
#   GPULEDGER_SOURCE       the source tree whose Cargo.toml names the version (default: this repository)
#   GPULEDGER_RELEASE_URL  where the release's files are (default: Cargo.toml's `repository`
#                          + /releases/download/v<version>); a mirror, or the tests' fake server
#   GPULEDGER_TARGET       the target triple of the asset (default: this machine's)
set -euo pipefail

say() { printf '==> %s\n' "$*" >&2; }
missing() { say "$*"; exit 3; }
die() { say "$*"; exit 2; }

[ $# -eq 1 ] || die "usage: $0 ROOT (gpuledger goes to ROOT/bin/gpuledger)"
root=$1
source_dir=${GPULEDGER_SOURCE:-$(cd "$(dirname "$0")/.." && pwd)}
manifest=$source_dir/Cargo.toml
[ -f "$manifest" ] || die "no Cargo.toml at $source_dir"

# The [package] table's own keys only: a dependency's `version = ` must not be taken for ours.
package_key() {
    awk -v key="$1" '
        /^\[/ { in_package = ($0 == "[package]") }
        in_package && $1 == key && $2 == "=" {
            value = $0
            sub(/^[^=]*=[ \t]*"/, "", value)
            sub(/".*$/, "", value)
            print value
            exit
        }' "$manifest"
}
version=$(package_key version)
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.+-]+)?$ ]] || die "no usable package version in $manifest: '$version'"

target=${GPULEDGER_TARGET:-}
if [ -z "$target" ]; then
    case "$(uname -s)/$(uname -m)" in
    Linux/x86_64 | Linux/amd64) target=x86_64-unknown-linux-musl ;;
    Linux/aarch64 | Linux/arm64) target=aarch64-unknown-linux-musl ;;
    Darwin/arm64 | Darwin/aarch64) target=aarch64-apple-darwin ;;
    Darwin/x86_64) target=x86_64-apple-darwin ;;
    *) missing "no release build for $(uname -s) $(uname -m)" ;;
    esac
fi
[[ $target =~ ^[a-z0-9_.-]+$ ]] || die "not a target triple: '$target'"

base=${GPULEDGER_RELEASE_URL:-}
if [ -z "$base" ]; then
    repository=$(package_key repository)
    [[ $repository =~ ^https://[A-Za-z0-9.-]+/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$ ]] ||
        die "Cargo.toml names no repository to download releases from: '$repository'"
    base=$repository/releases/download/v$version
fi
base=${base%/}
# Only HTTPS, redirects included, unless the caller deliberately named a plain-HTTP mirror (the
# tests' local server): the checksum guards the content either way.
case $base in
https://*) protocols='=https' ;;
http://*) protocols='=http,https' ;;
*) die "GPULEDGER_RELEASE_URL must be an http(s) URL: '$base'" ;;
esac

asset=gpuledger-v$version-$target.tar.gz
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Downloads $1 (a file name under the release) to $work/$1; 404 means "not released".
fetch() {
    local code
    code=$(curl --silent --show-error --location --proto "$protocols" --proto-redir "$protocols" \
        --retry 3 --retry-delay 2 --connect-timeout 20 --max-time 300 \
        --output "$work/$1" --write-out '%{http_code}' "$base/$1") ||
        die "cannot download $base/$1 (curl exit $?)"
    case $code in
    200) ;;
    404) missing "gpuledger $version has no release file $1 at $base" ;;
    *) die "downloading $base/$1: HTTP $code" ;;
    esac
}

if command -v sha256sum >/dev/null; then
    sha256() { sha256sum "$1" | cut -d' ' -f1; }
elif command -v shasum >/dev/null; then
    sha256() { shasum -a 256 "$1" | cut -d' ' -f1; }
else
    die "neither sha256sum nor shasum is installed: cannot verify the download"
fi

say "downloading gpuledger $version ($target) from $base"
fetch SHA256SUMS
fetch "$asset"

# `<sha256>  <name>` (or `*<name>` in binary mode), exactly one line for our asset.
expected=$(awk -v name="$asset" '$2 == name || $2 == "*" name { print $1 }' "$work/SHA256SUMS")
[ -n "$expected" ] || die "SHA256SUMS of gpuledger $version lists no $asset: refusing to install an unlisted file"
[ "$(printf '%s\n' "$expected" | wc -l)" -eq 1 ] || die "SHA256SUMS lists $asset more than once"
[[ $expected =~ ^[0-9a-fA-F]{64}$ ]] || die "SHA256SUMS has no valid checksum for $asset: '$expected'"
actual=$(sha256 "$work/$asset")
if [ "$(printf '%s' "$expected" | tr 'A-F' 'a-f')" != "$actual" ]; then
    die "checksum mismatch for $asset: SHA256SUMS says $expected, the download is $actual; not installed"
fi

mkdir -p "$work/unpacked"
tar -xzf "$work/$asset" -C "$work/unpacked" gpuledger ||
    die "$asset holds no gpuledger binary"
if [ ! -f "$work/unpacked/gpuledger" ] || [ -L "$work/unpacked/gpuledger" ]; then
    die "$asset: gpuledger is not a regular file"
fi
chmod 755 "$work/unpacked/gpuledger"
# The binary must be the version the action's source names, or the checksums belong to another
# release than the one asked for.
reported=$("$work/unpacked/gpuledger" --version 2>/dev/null | head -n1) ||
    die "the downloaded gpuledger does not run on this machine"
case $reported in
"gpuledger $version" | "gpuledger $version "*) ;;
*) die "the downloaded binary says '$reported', not gpuledger $version" ;;
esac

mkdir -p "$root/bin"
mv -f "$work/unpacked/gpuledger" "$root/bin/gpuledger"
say "installed $reported at $root/bin/gpuledger (sha256 $actual, verified against SHA256SUMS)"
