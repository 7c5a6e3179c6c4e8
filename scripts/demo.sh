#!/usr/bin/env bash
# Every feature on the bundled demo fleet, from the clone, with real figures: a real Prometheus
# (Debian's) backfilled with the demo's DCGM activity, vLLM and Dynamo request counters and 30 days
# of gpuledger's own history, and the OpenCost stand-in the tests use serving the demo's recorded
# allocation. Then, against them:
#
#   inventory   GPUs requested and really used per tenant, serving headroom (the demo repository's
#               load tests against production rates), cost per verified outcome, the trend column
#   trend       GPUs per week per tenant, and the runway: when the free GPUs run out
#   inventory --by node   free GPUs per node, and what would let the stuck pods run
#
# Everything listens on 127.0.0.1 and stops when the script ends. Needs prometheus and promtool
# (Debian: apt-get install prometheus) and python3; scripts/test.sh installs both.
#
#   scripts/demo.sh              # terminal tables (COLUMNS sets the width)
#   scripts/demo.sh --format markdown
#   scripts/demo.sh --check      # also checks the figures against fixtures/demo/expected.json
#   scripts/demo.sh --out DIR    # also writes each report to DIR (inventory, trend, nodes)
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

say() { printf '==> %s\n' "$*" >&2; }
for tool in prometheus promtool python3; do
    command -v "$tool" >/dev/null || { say "$tool is not installed (Debian: apt-get install prometheus python3)"; exit 2; }
done

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
say "gpuledger inventory --prometheus … --opencost … --outcomes … --repo …"
show inventory "$bin" inventory "${demo[@]}" --repo fixtures/demo/repo --prometheus "$prom" \
    --opencost "$opencost" --outcomes "$tmp/outcomes.csv" --quiet "${args[@]}"
echo
say "gpuledger trend --prometheus … (and the runway)"
show trend "$bin" trend "${demo[@]}" --prometheus "$prom" "${args[@]}"
echo
say "gpuledger inventory --by node"
show nodes "$bin" inventory "${demo[@]}" --by node --quiet "${args[@]}"

if $check; then
    say "checking the figures against fixtures/demo/expected.json"
    "$bin" inventory "${demo[@]}" --repo fixtures/demo/repo --prometheus "$prom" \
        --opencost "$opencost" --outcomes "$tmp/outcomes.csv" --quiet --format json >"$tmp/inventory.json"
    "$bin" trend "${demo[@]}" --prometheus "$prom" --format json >"$tmp/trend.json"
    python3 fixtures/demo/check_demo.py fixtures/demo/expected.json "$tmp/inventory.json" "$tmp/trend.json" \
        README.md "$out/inventory" "$out/trend" "$out/nodes"
fi
