#!/usr/bin/env bash
# Benchmarks gpuledger on a synthetic fleet snapshot and prints a small report.
#
#   scripts/bench.sh [--nodes N] [--pods N] [--apps N] [--no-build]
#                    [--only inventory|render|drift|live|plan|check]
#   (defaults: 5000 nodes, 100000 pods, 400 apps for check, every section; --no-build measures the
#   release binaries already in target/release)
#
# Builds the release binary and the synth-fleet example, generates bench-out/fleet-<pods>.json once
# (delete it to regenerate, e.g. after changing --nodes), then measures each command RUNS times
# (default 3, env RUNS=…; BASELINE=<another gpuledger binary> adds its render and check beside the
# check section's) and keeps the best wall time and the highest peak RSS. It uses
# /usr/bin/time when present, else a small python3 wrapper (a fresh python process per
# measurement, so the RSS is that command's alone). Nothing is installed.
#
# The PASS/FAIL lines are a report, not a test: the script exits 0 on FAIL, and non-zero only
# when a build, the generator or a measured command itself fails.
#
# Layout: helpers, then one function per section (section_inventory today); add later sections
# (render, live cluster) as new section_* functions and call them from main at the bottom.
set -euo pipefail

NODES=5000
PODS=100000
FILES=2000
CHECK_APPS=400
BUILD=1
ONLY=""
RUNS="${RUNS:-3}"

usage() {
  sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'
}

while [[ $# -gt 0 ]]; do
  case "$1" in
    --nodes) NODES="${2:?--nodes needs a value}"; shift 2 ;;
    --pods) PODS="${2:?--pods needs a value}"; shift 2 ;;
    --only) ONLY="${2:?--only needs a section}"; shift 2 ;;
    --apps) CHECK_APPS="${2:?--apps needs a value}"; shift 2 ;;
    --no-build) BUILD=0; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "bench.sh: unknown argument: $1" >&2; usage >&2; exit 2 ;;
  esac
done

cd "$(dirname "${BASH_SOURCE[0]}")/.."
OUT=bench-out
SNAPSHOT="$OUT/fleet-$PODS.json"
GPULEDGER=target/release/gpuledger
SYNTH=target/release/examples/synth-fleet
mkdir -p "$OUT"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------

log() { echo "bench: $*" >&2; }

# File size in MiB.
mib_of_file() { awk -v b="$(wc -c <"$1")" 'BEGIN { printf "%.1f", b / 1048576 }'; }

# measure_once CMD...: runs CMD once, prints "<wall seconds> <max RSS KiB>". Exits on failure.
measure_once() {
  local log="$TMP/cmd.log" res="$TMP/time.out"
  if [[ -x /usr/bin/time ]]; then
    if ! /usr/bin/time -f '%e %M' -o "$res" "$@" >"$log" 2>&1; then
      echo "bench.sh: command failed: $*" >&2
      cat "$log" >&2
      exit 1
    fi
    tail -n 1 "$res"
  else
    if ! python3 - "$@" >"$res" 2>"$log" <<'PY'; then
import resource, subprocess, sys, time
start = time.perf_counter()
rc = subprocess.call(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=sys.stderr)
wall = time.perf_counter() - start
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
if sys.platform == "darwin":  # bytes there, KiB on Linux
    rss //= 1024
print(f"{wall:.3f} {rss}")
sys.exit(rc)
PY
      echo "bench.sh: command failed: $*" >&2
      cat "$log" >&2
      exit 1
    fi
    cat "$res"
  fi
}

# measure NAME CMD...: RUNS runs; sets BEST_WALL (s) and PEAK_RSS_MIB for the caller.
BEST_WALL=""
PEAK_RSS_MIB=""
measure() {
  local name="$1" out wall rss best="" peak=0 i
  shift
  log "measuring $name ($RUNS runs): $*"
  for ((i = 1; i <= RUNS; i++)); do
    out=$(measure_once "$@")
    read -r wall rss <<<"$out"
    [[ -n "$wall" && -n "$rss" ]] || { echo "bench.sh: no timing for: $*" >&2; exit 1; }
    log "  run $i: ${wall}s, $((rss / 1024)) MiB"
    best=$(awk -v a="$best" -v b="$wall" 'BEGIN { print (a == "" || b + 0 < a + 0) ? b : a }')
    ((rss > peak)) && peak=$rss
  done
  BEST_WALL="$best"
  PEAK_RSS_MIB=$(awk -v k="$peak" 'BEGIN { printf "%.1f", k / 1024 }')
}

# Report rows and checks, printed at the end.
ROWS=()
MD_ROWS=()
CHECKS=()
row() {
  ROWS+=("$(printf '%-34s %12s %14s %10s' "$1" "$2" "$3" "$4")")
  MD_ROWS+=("| $1 | $2 | $3 | $4 |")
}
# check DESCRIPTION A OP B: compares two numbers with awk (OP is < or >).
check() {
  local desc="$1" verdict
  verdict=$(awk -v a="$2" -v b="$4" -v op="$3" \
    'BEGIN { ok = (op == "<") ? (a + 0 < b + 0) : (a + 0 > b + 0); print ok ? "PASS" : "FAIL" }')
  CHECKS+=("$verdict: $desc")
}

# ---------------------------------------------------------------------------------------------
# Setup: build, generate the snapshot
# ---------------------------------------------------------------------------------------------

setup() {
  if ((BUILD)); then
    log "building (cargo build --release --bin gpuledger --example synth-fleet --example kube-emulator)"
    cargo build --release --bin gpuledger --example synth-fleet --example kube-emulator
  fi
  if [[ "$ONLY" == render || "$ONLY" == plan || "$ONLY" == check ]]; then
    return
  fi
  if [[ ! -s "$SNAPSHOT" || ! -d "$OUT/drift-repo-$PODS/.git" ]]; then
    log "generating $SNAPSHOT ($NODES nodes, $PODS pods) and its GitOps repository"
    rm -rf "$OUT/drift-repo-$PODS"
    "$SYNTH" --nodes "$NODES" --pods "$PODS" --format json --output "$SNAPSHOT.tmp" \
      --repo-out "$OUT/drift-repo-$PODS" --repo-workloads 5000
    mv "$SNAPSHOT.tmp" "$SNAPSHOT"
    git -C "$OUT/drift-repo-$PODS" init -q
    git -C "$OUT/drift-repo-$PODS" add -A
    git -C "$OUT/drift-repo-$PODS" -c user.name=bench -c user.email=bench@example.com commit -q -m "synthetic repo"
  else
    log "reusing $SNAPSHOT (delete it to regenerate)"
  fi
  SNAPSHOT_MIB=$(mib_of_file "$SNAPSHOT")
}

# ---------------------------------------------------------------------------------------------
# Section: inventory from a snapshot file, against python's json.load of the same file
# ---------------------------------------------------------------------------------------------

# inventory_pair LABEL FILE LOADER...: gpuledger inventory on FILE beside LOADER (python merely
# loading it), a row each, and the checks of issue 19: at least 5x faster than the loader, and peak
# memory at most MAX_SHARE of the file (1/2 for indented JSON, the file for compact and YAML).
inventory_pair() {
  local label="$1" file="$2" max_share="$3" ledger_wall ledger_rss py_wall py_rss mib
  shift 3
  mib=$(mib_of_file "$file")
  measure "gpuledger inventory ($label)" \
    "$GPULEDGER" inventory --snapshot "$file" --format json --output /dev/null
  ledger_wall=$BEST_WALL ledger_rss=$PEAK_RSS_MIB
  row "gpuledger inventory, $label" "$ledger_wall" "$ledger_rss" "$mib"
  measure "python load ($label)" "$@" "$file"
  py_wall=$BEST_WALL py_rss=$PEAK_RSS_MIB
  row "python3 load, $label" "$py_wall" "$py_rss" "$mib"
  check "inventory ($label) at least 5x faster than python loading the file" \
    "$(awk -v a="$ledger_wall" 'BEGIN { print a * 5 }')" "<" "$py_wall"
  check "inventory ($label) peak memory at most $max_share of the file" \
    "$ledger_rss" "<" "$(awk -v m="$mib" -v s="$max_share" 'BEGIN { split(s, f, "/"); print (f[2] ? m * f[1] / f[2] : m * s) + 0.001 }')"
}

section_inventory() {
  # The snapshot as kubectl writes a List (items before kind, as synth-fleet writes it), the same
  # with kind first (as kube-apiserver orders an object), each indented and compact; YAML at a
  # tenth of the pods. Derived files are made once and kept in bench-out/.
  local compact="$OUT/fleet-$PODS-compact.json" kind_first="$OUT/fleet-$PODS-kind-first.json"
  local kind_first_compact="$OUT/fleet-$PODS-kind-first-compact.json"
  local yaml_pods=$((PODS / 10)) yaml_nodes=$((NODES / 10))
  local yaml="$OUT/fleet-$yaml_pods.yaml"
  if [[ ! -s "$compact" || ! -s "$kind_first" || ! -s "$kind_first_compact" ]]; then
    log "writing the compact and kind-first variants of $SNAPSHOT"
    python3 - "$SNAPSHOT" "$compact" "$kind_first" "$kind_first_compact" <<'PY'
import json, sys
src, compact, kind_first, kind_first_compact = sys.argv[1:]
doc = json.load(open(src))
json.dump(doc, open(compact, "w"), separators=(",", ":"))
def first(o):
    if isinstance(o, dict):
        keys = [k for k in ("kind", "apiVersion", "metadata") if k in o] + [k for k in o if k not in ("kind", "apiVersion", "metadata")]
        return {k: first(o[k]) for k in keys}
    if isinstance(o, list):
        return [first(x) for x in o]
    return o
doc = first(doc)
json.dump(doc, open(kind_first, "w"), indent=4)
json.dump(doc, open(kind_first_compact, "w"), separators=(",", ":"))
PY
  fi
  if [[ ! -s "$yaml" ]]; then
    log "generating $yaml ($yaml_nodes nodes, $yaml_pods pods)"
    "$SYNTH" --nodes "$yaml_nodes" --pods "$yaml_pods" --format yaml --output "$yaml"
  fi
  local py_json=(python3 -c 'import json,sys; json.load(open(sys.argv[1]))')
  inventory_pair "indented JSON, kubectl order" "$SNAPSHOT" 1/2 "${py_json[@]}"
  inventory_pair "indented JSON, kind first" "$kind_first" 1/2 "${py_json[@]}"
  inventory_pair "compact JSON, kubectl order" "$compact" 1 "${py_json[@]}"
  inventory_pair "compact JSON, kind first" "$kind_first_compact" 1 "${py_json[@]}"
  if python3 -c 'import yaml; yaml.CSafeLoader' 2>/dev/null; then
    inventory_pair "YAML, $yaml_pods pods" "$yaml" 1 \
      python3 -c 'import yaml,sys; list(yaml.load_all(open(sys.argv[1]), Loader=yaml.CSafeLoader))'
  else
    log "YAML row skipped: python3 has no yaml.CSafeLoader (apt-get install python3-yaml)"
  fi
}

# ---------------------------------------------------------------------------------------------
# Section: render a synthetic plain-YAML repository at a committed ref
# ---------------------------------------------------------------------------------------------

section_render() {
  local repo="$OUT/repo-$FILES"
  if [[ ! -d "$repo/.git" ]]; then
    log "generating $repo ($FILES plain-YAML files, committed)"
    rm -rf "$repo"
    python3 - "$repo" "$FILES" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    team = f"team-{i % 40:02d}"
    d = os.path.join(root, "apps", team, f"svc-{i:04d}")
    os.makedirs(d, exist_ok=True)
    gpus = (0, 1, 2, 4, 8)[i % 5]
    with open(os.path.join(d, "workload.yaml"), "w") as f:
        f.write(f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: svc-{i:04d}
  namespace: {team}
  labels: {{app: svc-{i:04d}, tenant: {team}, product-line: line-{i % 7}}}
spec:
  replicas: {1 + i % 4}
  selector: {{matchLabels: {{app: svc-{i:04d}}}}}
  template:
    metadata: {{labels: {{app: svc-{i:04d}}}}}
    spec:
      containers:
      - name: main
        image: registry.example.com/svc:{i}
        args: [--port, "8000", --model, /models/m-{i}]
        env: [{{name: A, value: "1"}}, {{name: B, value: "2"}}]
        ports: [{{containerPort: 8000}}]
        resources:
          requests: {{cpu: "4", memory: 16Gi, nvidia.com/gpu: "{gpus}"}}
          limits: {{cpu: "8", memory: 32Gi, nvidia.com/gpu: "{gpus}"}}
---
apiVersion: v1
kind: Service
metadata: {{name: svc-{i:04d}, namespace: {team}}}
spec:
  selector: {{app: svc-{i:04d}}}
  ports: [{{port: 80, targetPort: 8000}}]
""")
PY
    git -C "$repo" init -q
    git -C "$repo" add -A
    git -C "$repo" -c user.name=bench -c user.email=bench@example.com commit -q -m "synthetic repo"
  fi
  measure "gpuledger render ($FILES files)" \
    "$GPULEDGER" render --repo "$repo" --ref HEAD --format json --output /dev/null
  row "gpuledger render, $FILES files @HEAD" "$BEST_WALL" "$PEAK_RSS_MIB" "$(du -sm "$repo" --exclude=.git | cut -f1)"
  check "gpuledger render of $FILES plain-YAML files under 2 s" "$BEST_WALL" "<" 2
}

# ---------------------------------------------------------------------------------------------
# Section: drift of the synthetic fleet against a 5,000-workload repository
# ---------------------------------------------------------------------------------------------

section_drift() {
  local repo="$OUT/drift-repo-$PODS" log="$TMP/drift.log" join_ms
  measure "gpuledger drift" \
    env GPULEDGER_LOG=gpuledger=debug "$GPULEDGER" drift --repo "$repo" --ref HEAD --snapshot "$SNAPSHOT" \
    --no-fail --format json --output /dev/null
  row "gpuledger drift (whole run)" "$BEST_WALL" "$PEAK_RSS_MIB" "$SNAPSHOT_MIB"
  GPULEDGER_LOG=gpuledger=debug "$GPULEDGER" drift --repo "$repo" --ref HEAD --snapshot "$SNAPSHOT" \
    --no-fail --format json --output /dev/null 2>"$log"
  join_ms=$(sed -n 's/.*elapsed_ms=\([0-9.]*\).*drift join.*/\1/p; s/.*drift join.*elapsed_ms=\([0-9.]*\).*/\1/p' "$log" | head -n 1)
  [[ -n "$join_ms" ]] || { echo "bench.sh: no drift join timing in the debug log" >&2; cat "$log" >&2; exit 1; }
  row "  of which the drift join" "$(awk -v m="$join_ms" 'BEGIN { printf "%.3f", m / 1000 }')" "" ""
  check "drift join (100k pods against 5,000 workloads) under 1 s" "$join_ms" "<" 1000
}

# ---------------------------------------------------------------------------------------------
# Section: the live inventory through the Kubernetes API emulator, beside kubectl get pods
# ---------------------------------------------------------------------------------------------

section_live() {
  local out="$TMP/emulator.out" kubeconfig pid i
  log "starting the API emulator on $SNAPSHOT (loading takes a while)"
  target/release/examples/kube-emulator --snapshot "$SNAPSHOT" --port 0 --page-size 500 --convert-versions \
    >"$out" 2>/dev/null &
  pid=$!
  # The emulator holds the whole fleet in memory: never leave it behind, whatever happens.
  trap 'kill "$pid" 2>/dev/null; rm -rf "$TMP"' EXIT
  for ((i = 0; i < 600; i++)); do
    [[ -s "$out" ]] && break
    kill -0 "$pid" 2>/dev/null || { echo "bench.sh: the emulator exited" >&2; exit 1; }
    sleep 1
  done
  kubeconfig=$(head -n 1 "$out")
  [[ -n "$kubeconfig" ]] || { kill "$pid"; echo "bench.sh: the emulator printed no kubeconfig" >&2; exit 1; }
  measure "gpuledger inventory (live, every resource)" \
    "$GPULEDGER" inventory --kubeconfig "$kubeconfig" --quiet --timeout 3600 --format json --output /dev/null
  local ledger=$BEST_WALL ledger_rss=$PEAK_RSS_MIB
  row "gpuledger inventory --kubeconfig" "$BEST_WALL" "$PEAK_RSS_MIB" ""
  # The inner shell expands $1, the kubeconfig passed after it.
  # shellcheck disable=SC2016
  measure "kubectl get pods -A -o json" \
    sh -c 'kubectl --kubeconfig "$1" get pods -A -o json >/dev/null' sh "$kubeconfig"
  row "kubectl get pods -A -o json" "$BEST_WALL" "$PEAK_RSS_MIB" ""
  local kubectl_wall=$BEST_WALL
  # The Rust peer, pods and nodes only; without --ignore-taints it hides tainted GPU nodes.
  local peer=bench-out/peers/bin/kubectl-view-allocations
  if [[ ! -x "$peer" ]]; then
    log "installing kubectl-view-allocations into bench-out/peers (once)"
    cargo install --locked kubectl-view-allocations --root bench-out/peers >"$TMP/peer.log" 2>&1 ||
      log "kubectl-view-allocations did not build: its column is skipped ($(tail -n 1 "$TMP/peer.log"))"
  fi
  if [[ -x "$peer" ]]; then
    # shellcheck disable=SC2016
    measure "kubectl-view-allocations (pods and nodes)" \
      sh -c 'KUBECONFIG="$1" "$2" --ignore-taints -r nvidia.com/gpu >/dev/null' sh "$kubeconfig" "$peer"
    row "kubectl-view-allocations -r gpu" "$BEST_WALL" "$PEAK_RSS_MIB" ""
    check "live inventory (every resource) within kubectl-view-allocations' time (pods and nodes)" \
      "$ledger" "<" "$(awk -v w="$BEST_WALL" 'BEGIN { print w + 0.0005 }')"
    check "live inventory peak memory below kubectl-view-allocations'" "$ledger_rss" "<" "$PEAK_RSS_MIB"
  fi
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  check "live inventory (every resource) faster than kubectl get pods -A -o json" "$ledger" "<" "$kubectl_wall"
}

# ---------------------------------------------------------------------------------------------
# Section: the stagger planner on synthetic batch work (issue 15: 1,000 jobs on 15-minute slots
# over 48 h with the gap printed in under 2 s; 40 jobs exactly in under 1 s)
# ---------------------------------------------------------------------------------------------

# plan_jobs N SEED FILE: N jobs released over the first 24 h, 1-4 h long, 1-8 GPUs per pod and
# 1-2 pods, each due 2-24 h after its release (all within 48 h), a quarter interruptible.
plan_jobs() {
  python3 - "$1" "$2" "$3" <<'PY'
import random, sys
n, seed, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
rnd = random.Random(seed)
t0 = 1796212800  # 2026-12-02T12:00:00Z
def ts(s):
    import datetime
    return datetime.datetime.fromtimestamp(s, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
with open(out, "w") as f:
    for i in range(n):
        ready = t0 + rnd.randrange(96) * 900
        run = rnd.randrange(4, 17) * 900
        due = min(ready + run + rnd.randrange(2, 21) * 3600, t0 + 48 * 3600)
        f.write(f"- name: job-{i}\n  namespace: team-{i % 7}\n  gpus_per_pod: {rnd.choice([1, 2, 4, 8])}\n"
                f"  pods: {rnd.choice([1, 1, 1, 2])}\n  runtime: {run // 60}m\n"
                f"  earliest_start: {ts(ready)}\n  deadline: {ts(due)}\n"
                f"  interruptible: {'true' if rnd.random() < 0.25 else 'false'}\n")
PY
}

# plan_gap FILE: the plan's gap and whether every deadline was met, from its JSON.
plan_gap() {
  python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["plan"]; print(p["gap"], p["feasible"], p["peak"], p["lower_bound"])' "$1"
}

section_plan() {
  local nodes=() i objective gap
  for i in $(seq 1 40); do nodes+=(--node 8); done
  plan_jobs 1000 1 "$TMP/jobs-1000.yaml"
  plan_jobs 40 2 "$TMP/jobs-40.yaml"
  for objective in earliest min-peak; do
    measure "gpuledger plan (1,000 jobs, $objective)" \
      "$GPULEDGER" plan --jobs "$TMP/jobs-1000.yaml" --pool 320 "${nodes[@]}" \
      --now 2026-12-02T12:00:00Z --objective "$objective" --format json --output "$TMP/plan.json"
    row "gpuledger plan, 1,000 jobs, $objective" "$BEST_WALL" "$PEAK_RSS_MIB" "-"
    log "1,000 jobs, $objective: gap, feasible, peak, lower bound: $(plan_gap "$TMP/plan.json")"
    check "plan of 1,000 jobs ($objective, 48 h, 15-minute slots) with its gap in under 2 s" \
      "$BEST_WALL" "<" 2
    measure "gpuledger plan (40 jobs, $objective)" \
      "$GPULEDGER" plan --jobs "$TMP/jobs-40.yaml" --pool 64 "${nodes[@]:0:16}" \
      --now 2026-12-02T12:00:00Z --objective "$objective" --format json --output "$TMP/plan.json"
    row "gpuledger plan, 40 jobs, $objective" "$BEST_WALL" "$PEAK_RSS_MIB" "-"
    gap=$(plan_gap "$TMP/plan.json")
    log "40 jobs, $objective: gap, feasible, peak, lower bound: $gap"
    check "plan of 40 jobs ($objective) in under 1 s" "$BEST_WALL" "<" 1
    check "plan of 40 jobs ($objective) exact (gap 0)" "${gap%% *}" "<" 0.0005
  done
}

# ---------------------------------------------------------------------------------------------
# Section: check of a one-app change on an ApplicationSet repository (issue 19 §3: check costs at
# most 2× rendering the changed app plus a fixed overhead beyond rendering the base once; a
# no-change check renders nothing twice)
# ---------------------------------------------------------------------------------------------

section_check() {
  local repo="$OUT/check-repo-$CHECK_APPS" half=$((CHECK_APPS / 2)) render_wall floor one no_change changed
  if [[ ! -d "$repo/.git" ]]; then
    log "generating $repo (an ApplicationSet over $half kustomize apps and $half plain apps)"
    rm -rf "$repo"
    python3 - "$repo" "$half" <<'PY'
import os, sys
root, half = sys.argv[1], int(sys.argv[2])
def write(rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
def deploy(name, gpus):
    return f"""apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}, labels: {{app: {name}}}}}
spec:
  replicas: 2
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      containers:
      - name: main
        image: registry.example.com/{name}:1
        resources: {{limits: {{nvidia.com/gpu: "{gpus}"}}}}
"""
write("bootstrap/appset.yaml", """apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: apps, namespace: argocd}
spec:
  generators:
  - git:
      repoURL: https://example.com/fleet.git
      revision: HEAD
      directories: [{path: apps/*}]
  template:
    metadata: {name: '{{path.basename}}'}
    spec:
      project: default
      source: {repoURL: https://example.com/fleet.git, targetRevision: HEAD, path: '{{path}}'}
      destination: {server: https://kubernetes.default.svc, namespace: '{{path.basename}}'}
""")
for i in range(half):
    k = f"k-{i:03d}"
    write(f"apps/{k}/kustomization.yaml", "resources: [deploy.yaml, service.yaml]\ncommonLabels: {team: t%d}\n" % (i % 20))
    write(f"apps/{k}/deploy.yaml", deploy(k, 1 + i % 8))
    write(f"apps/{k}/service.yaml", f"apiVersion: v1\nkind: Service\nmetadata: {{name: {k}}}\nspec: {{selector: {{app: {k}}}, ports: [{{port: 80}}]}}\n")
    p = f"p-{i:03d}"
    write(f"apps/{p}/deploy.yaml", deploy(p, 1 + i % 4))
PY
    git -C "$repo" init -q -b main
    git -C "$repo" remote add origin https://example.com/fleet.git
    git -C "$repo" add -A
    git -C "$repo" -c user.name=bench -c user.email=bench@example.com commit -q -m "synthetic repo"
    git -C "$repo" checkout -q -b change
    changed=$(printf 'k-%03d' $((half / 2)))
    sed -i 's/replicas: 2/replicas: 3/' "$repo/apps/$changed/deploy.yaml"
    git -C "$repo" -c user.name=bench -c user.email=bench@example.com commit -q -am "$changed: 3 replicas"
    git -C "$repo" checkout -q main
  fi
  # The floor: kustomize on one app directory by hand (mostly the process start).
  measure "kubectl kustomize (one app, by hand)" kubectl kustomize "$repo/apps/k-000"
  floor=$BEST_WALL
  row "kubectl kustomize, one app" "$floor" "$PEAK_RSS_MIB" "-"
  measure "gpuledger render --ref main ($CHECK_APPS apps)" \
    "$GPULEDGER" render --repo "$repo" --ref main --format json --output /dev/null
  render_wall=$BEST_WALL
  row "gpuledger render, $CHECK_APPS apps @main" "$BEST_WALL" "$PEAK_RSS_MIB" "-"
  measure "gpuledger check (one app changed)" \
    "$GPULEDGER" check --repo "$repo" --base main --head change --format json --output /dev/null
  one=$BEST_WALL
  row "gpuledger check, 1 of $CHECK_APPS changed" "$BEST_WALL" "$PEAK_RSS_MIB" "-"
  measure "gpuledger check (no change)" \
    "$GPULEDGER" check --repo "$repo" --base main --head main --format json --output /dev/null
  no_change=$BEST_WALL
  row "gpuledger check, no change" "$BEST_WALL" "$PEAK_RSS_MIB" "-"
  # Another build of gpuledger beside it (BASELINE=path, e.g. main's binary before a change).
  if [[ -n "${BASELINE:-}" ]]; then
    measure "baseline render --ref main" \
      "$BASELINE" render --repo "$repo" --ref main --format json --output /dev/null
    row "baseline render, $CHECK_APPS apps @main" "$BEST_WALL" "$PEAK_RSS_MIB" "-"
    measure "baseline check (one app changed)" \
      "$BASELINE" check --repo "$repo" --base main --head change --format json --output /dev/null
    row "baseline check, 1 of $CHECK_APPS changed" "$BEST_WALL" "$PEAK_RSS_MIB" "-"
  fi
  log "check beyond one render: one app changed $(awk -v a="$one" -v b="$render_wall" 'BEGIN { printf "%.2f", a - b }') s, no change $(awk -v a="$no_change" -v b="$render_wall" 'BEGIN { printf "%.2f", a - b }') s; 2x floor $(awk -v f="$floor" 'BEGIN { printf "%.2f", 2 * f }') s"
  # The fixed overhead: reading the tree and computing the report a second time, 1 s.
  check "check of a one-app change within one render + 2x the one-app floor + 1 s" \
    "$one" "<" "$(awk -v r="$render_wall" -v f="$floor" 'BEGIN { print r + 2 * f + 1 }')"
  check "check of no change within one render + 1 s (nothing rendered twice)" \
    "$no_change" "<" "$(awk -v r="$render_wall" 'BEGIN { print r + 1 }')"
}

# Later sections go here, each adding rows and checks.

# ---------------------------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------------------------

setup
if [[ -z "$ONLY" || "$ONLY" == inventory ]]; then
  section_inventory
fi
if [[ -z "$ONLY" || "$ONLY" == render ]]; then
  section_render
fi
if [[ -z "$ONLY" || "$ONLY" == drift ]]; then
  section_drift
fi
if [[ -z "$ONLY" || "$ONLY" == live ]]; then
  section_live
fi
if [[ -z "$ONLY" || "$ONLY" == plan ]]; then
  section_plan
fi
if [[ -z "$ONLY" || "$ONLY" == check ]]; then
  section_check
fi

echo
echo "gpuledger bench: $SNAPSHOT ($NODES nodes, $PODS pods), best of $RUNS runs"
printf '%-34s %12s %14s %10s\n' "what" "best wall s" "peak RSS MiB" "file MiB"
printf '%s\n' "${ROWS[@]}"
echo
printf '%s\n' "${CHECKS[@]}"

# The same as markdown, for the README's Performance section (scripts/bench-readme.sh puts it
# between the README's bench markers).
{
  case "$ONLY" in
    check) input="$CHECK_APPS apps" ;;
    render | plan) input="synthetic repositories and jobs" ;;
    *) input="$NODES nodes, $PODS pods, $CHECK_APPS apps for check" ;;
  esac
  echo "Measured by \`scripts/bench.sh${ONLY:+ --only $ONLY}\` ($input; release build, best of $RUNS runs, $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown), $(date -u +%Y-%m-%d)${BASELINE:+; baseline: $BASELINE}):"
  echo
  echo "| what | best wall s | peak RSS MiB | input MiB |"
  echo "|---|---:|---:|---:|"
  printf '%s\n' "${MD_ROWS[@]}"
  echo
  printf -- '- %s\n' "${CHECKS[@]}"
} >"$OUT/bench.md"
log "wrote $OUT/bench.md"
