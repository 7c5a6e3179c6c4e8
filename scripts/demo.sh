#!/usr/bin/env bash
# The bundled demo fleet, from the clone, with real figures: gpuledger's main job first — a pull
# request checked and the drift listed — then every other report. A real Prometheus (Debian's)
# backfilled with the demo's DCGM activity, vLLM and Dynamo request counters and 30 days of
# gpuledger's own history, and the OpenCost stand-in the tests use serving the demo's recorded
# allocation. Then, against them:
#
#   check       the sticky pull-request comment: a change to the demo's GitOps repository (two
#               more decode replicas of the chat model) checked against the fleet, serving headroom
#               at the head's shape judged against production's rates
#   drift       the drift issue: Git against the live fleet, in both directions
#   inventory   GPUs requested and really used per tenant, serving headroom (the demo repository's
#               load tests against production rates), cost per verified outcome, the trend column
#   trend       GPUs per week per tenant, and the runway: when the free GPUs run out
#   inventory --by node   free GPUs per node, and what would let the stuck pods run
#
# Everything listens on 127.0.0.1 and stops when the script ends. Installs what it needs when it is
# missing (prometheus and promtool, python3, git: scripts/lib/install.sh, as scripts/test.sh does).
#
#   scripts/demo.sh              # terminal output (COLUMNS sets the width)
#   scripts/demo.sh --format markdown
#   scripts/demo.sh --check      # also checks the figures against fixtures/demo/expected.json
#   scripts/demo.sh --out DIR    # also writes each report to DIR (check, drift, inventory, trend,
#                                # nodes)
set -euo pipefail
cd "$(dirname "$0")/.."

check=false
out=
args=()
while [ $# -gt 0 ]; do
    case $1 in
        --check) check=true ;;
        --out) out=$2; shift ;;
        *) args+=("$1") ;;
    esac
    shift
done

# shellcheck source=scripts/lib/install.sh
. scripts/lib/install.sh
need_prometheus "the demo runs the real server with the demo's series"
need_python3 "the demo's series and its checks are written by python3"
need_git "the demo's pull request is a branch of the demo's repository"
command -v cargo >/dev/null || { say "cargo is not installed: install Rust with rustup first"; exit 2; }

cargo build --quiet --locked --bin gpuledger --example opencost_standin
bin=target/debug/gpuledger
standin=target/debug/examples/opencost_standin

tmp=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    rm -rf "$tmp"
}
trap cleanup EXIT

# The series end now: Prometheus answers over the last hour and the last 30 days.
now=$(date -u +%s)
python3 fixtures/demo/signals.py --now "$now" --out "$tmp"
promtool tsdb create-blocks-from openmetrics "$tmp/series.om" "$tmp/data" >/dev/null

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
ready() { python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=1)' "$1" 2>/dev/null; }

printf 'global:\n  scrape_interval: 1m\nscrape_configs: []\n' >"$tmp/prometheus.yml"
port=$(free_port)
prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/data" \
    --storage.tsdb.retention.time=10y --web.listen-address="127.0.0.1:$port" >"$tmp/prometheus.log" 2>&1 &
pids+=($!)
prom=http://127.0.0.1:$port
for _ in $(seq 1 120); do
    ready "$prom/-/ready" && break
    sleep 0.5
done
ready "$prom/-/ready" || { say "prometheus did not start:"; cat "$tmp/prometheus.log" >&2; exit 1; }

"$standin" /allocation=fixtures/demo/opencost/allocation.json >"$tmp/opencost.url" &
pids+=($!)
for _ in $(seq 1 50); do
    [ -s "$tmp/opencost.url" ] && break
    sleep 0.1
done
opencost=$(head -n1 "$tmp/opencost.url")
[ -n "$opencost" ] || { say "the OpenCost stand-in did not start"; exit 1; }

demo=(--snapshot fixtures/demo/cluster.yaml --config fixtures/demo/.gpuledger.yaml
    --now "$(date -u -d "@$now" +%Y-%m-%dT%H:%M:%SZ)")
# The demo's GitOps repository as a git repository: main is fixtures/demo/repo, and the branch
# more-chat is a pull request that gives the chat model's decode worker two more replicas.
repo=$tmp/repo
here=$(pwd)
cp -r fixtures/demo/repo "$repo"
(
    cd "$repo"
    # A fixed author and date: the commits, and so every report naming them, are the same each run.
    export GIT_AUTHOR_DATE=2025-06-02T09:00:00Z GIT_COMMITTER_DATE=2025-06-02T09:00:00Z
    git_c=(git -c user.name=demo -c user.email=demo@example.com -c commit.gpgsign=false)
    git init -q -b main
    git add -A
    "${git_c[@]}" commit -qm "the demo's GitOps repository"
    git checkout -qb more-chat
    python3 "$here/fixtures/demo/signals.py" --pull-request .
    "${git_c[@]}" commit -qam "chat: two more decode replicas"
    git checkout -q main
)
# drift exits 1 on unaccepted drift, which the demo has on purpose: --no-fail shows it and goes on.
pr=(--repo "$repo" --base main --head more-chat "${demo[@]}" --prometheus "$prom")
drifted=(--repo "$repo" "${demo[@]}" --no-fail)
say "Prometheus (DCGM, vLLM, Dynamo, 30 days of history): $prom"
say "OpenCost stand-in: $opencost"

# Each report on standard output, and into $out/NAME when --out is given (--check reads them).
if $check && [ -z "$out" ]; then
    out=$tmp/shown
fi
show() {
    local name=$1
    shift
    if [ -n "$out" ]; then
        mkdir -p "$out"
        "$@" | tee "$out/$name"
    else
        "$@"
    fi
}
# gpuledger's main job first: the pull request (the demo repository with one branch: two more
# decode replicas of the chat model: signals.py's PULL_REQUEST, the change the README's picture
# shows), then the drift.
say "gpuledger check --base main --head more-chat --prometheus … (the pull-request comment)"
show check "$bin" check "${pr[@]}" "${args[@]}"
echo
say "gpuledger drift --no-fail (the drift issue: Git against the fleet, both directions)"
show drift "$bin" drift "${drifted[@]}" "${args[@]}"
echo
say "gpuledger inventory --prometheus … --opencost … --outcomes … --repo …"
show inventory "$bin" inventory "${demo[@]}" --repo "$repo" --prometheus "$prom" \
    --opencost "$opencost" --outcomes "$tmp/outcomes.csv" --quiet "${args[@]}"
echo
say "gpuledger trend --prometheus … (and the runway)"
show trend "$bin" trend "${demo[@]}" --prometheus "$prom" "${args[@]}"
echo
say "gpuledger inventory --by node"
show nodes "$bin" inventory "${demo[@]}" --by node --quiet "${args[@]}"

if $check; then
    say "checking the figures against fixtures/demo/expected.json"
    "$bin" inventory "${demo[@]}" --repo "$repo" --prometheus "$prom" \
        --opencost "$opencost" --outcomes "$tmp/outcomes.csv" --quiet --format json >"$tmp/inventory.json"
    "$bin" trend "${demo[@]}" --prometheus "$prom" --format json >"$tmp/trend.json"
    "$bin" check "${pr[@]}" --format json >"$tmp/check.json"
    "$bin" drift "${drifted[@]}" --format json >"$tmp/drift.json"
    python3 fixtures/demo/check_demo.py fixtures/demo/expected.json "$tmp/inventory.json" "$tmp/trend.json" \
        "$tmp/check.json" "$tmp/drift.json" README.md "$out/check" "$out/drift" "$out/inventory" "$out/trend" "$out/nodes"
fi
