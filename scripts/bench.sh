#!/usr/bin/env bash
# Benchmarks gpuledger on synthetic fleets and repositories, each beside a peer on the same input.
#
#   scripts/bench.sh [--nodes N] [--pods N] [--apps N] [--no-build]
#                    [--only inventory|queues|render|drift|live|serve|plan|check|scaling]
#   (defaults: 5000 nodes, 100000 pods, 400 apps for check, every section; --no-build measures the
#   release binaries already in target/release)
#
# Builds the release binary and the synth-fleet and kube-emulator examples, generates each fleet
# once as bench-out/fleet-<nodes>n-<pods>p.json with its GitOps repository (one workload per 20
# pods) beside it (delete them to regenerate), then measures each command RUNS times (default 3,
# env RUNS=…; BASELINE=<another gpuledger binary> adds its render and check beside the check
# section's) and keeps the best wall time and the highest peak RSS. It uses /usr/bin/time when
# present, else a small python3 wrapper (a fresh python process per measurement, so the RSS is that
# command's alone). Nothing is installed but the live section's Rust peer, kubectl-view-allocations
# (`cargo install --locked` into bench-out/peers, once; its column is skipped when it cannot build).
#
# Sizes: inventory, drift and check at --pods/--nodes/--apps; live at a fifth of the fleet
# (20,000 pods by default) and the whole; serve at a tenth (10,000 pods), CUT_SECONDS (default 180)
# of watches cut every second, SERVE_SECONDS (default
# 60) at rest and as long under churn; scaling at a quarter, a half and the whole of each
# (25k/50k/100k pods, 100/200/400 apps by default).
#
# Output: the rows and PASS/FAIL checks on stdout, and one markdown file per section run,
# bench-out/bench-<section>.md (what was measured and how, its table, its checks);
# scripts/bench-readme.sh assembles those files into docs/performance.md.
#
# The PASS/FAIL lines are a report, not a test: the script exits 0 on FAIL, and non-zero only
# when a build, a generator or a measured command itself fails.
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
SECTIONS="inventory queues render drift live serve plan check scaling"

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
if [[ -n "$ONLY" && " $SECTIONS " != *" $ONLY "* ]]; then
  echo "bench.sh: unknown section: $ONLY (one of: $SECTIONS)" >&2
  exit 2
fi

cd "$(dirname "${BASH_SOURCE[0]}")/.."
OUT=bench-out
# PROFILE=debug measures the debug build instead (with --no-build: what `cargo build` left): the
# serve section's request counts do not depend on the build; every timing does.
PROFILE="${PROFILE:-release}"
GPULEDGER=target/"$PROFILE"/gpuledger
SYNTH=target/"$PROFILE"/examples/synth-fleet
mkdir -p "$OUT"
TMP="$(mktemp -d)"
# The live and serve sections' emulator holds a whole fleet in memory, and serve runs until
# killed: never leave them behind.
EMULATOR_PID=""
SERVE_PID=""
trap '[[ -z "$EMULATOR_PID" ]] || kill "$EMULATOR_PID" 2>/dev/null; [[ -z "$SERVE_PID" ]] || kill "$SERVE_PID" 2>/dev/null; rm -rf "$TMP"' EXIT

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

# Report rows and checks, printed at the end; each section also writes its own markdown file
# (section_begin … section_end).
ROWS=()
MD_ROWS=()
CHECKS=()
MD_TABLE=()
SEC_ROW0=0
SEC_CHECK0=0
SEC_LOAD=""
SEC_T0=0
row() {
  ROWS+=("$(printf '%-64s %12s %14s %10s' "$1" "$2" "$3" "$4")")
  MD_ROWS+=("| $1 | $2 | $3 | $4 |")
}
# check DESCRIPTION A OP B: compares two numbers with awk (OP is < or >).
check() {
  local desc="$1" verdict
  verdict=$(awk -v a="$2" -v b="$4" -v op="$3" \
    'BEGIN { ok = (op == "<") ? (a + 0 < b + 0) : (a + 0 > b + 0); print ok ? "PASS" : "FAIL" }')
  CHECKS+=("$verdict: $desc")
}

# ratio A B: A / B to two decimals.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 > 0) printf "%.2f", a / b; else print "-" }'; }

section_begin() {
  SEC_ROW0=${#MD_ROWS[@]}
  SEC_CHECK0=${#CHECKS[@]}
  MD_TABLE=()
  SEC_LOAD=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)
  SEC_T0=$SECONDS
  ROWS+=("" "[$1]")
}

# section_end NAME TITLE INPUTS: writes bench-out/bench-NAME.md: the section's title, how it was
# measured (the command that redoes it, its inputs, the build, runs, cores, the load average before
# the section started, the date), its table (MD_TABLE when the section set one, else the rows of the
# default table) and its checks.
section_end() {
  local name="$1" title="$2" inputs="$3" file="$OUT/bench-$1.md" cmd
  cmd="scripts/bench.sh --only $name"
  [[ "$NODES $PODS" == "5000 100000" ]] || cmd+=" --nodes $NODES --pods $PODS"
  [[ "$CHECK_APPS" == 400 ]] || cmd+=" --apps $CHECK_APPS"
  [[ "$RUNS" == 3 ]] || cmd="RUNS=$RUNS $cmd"
  [[ "$name" != serve || -z "${SERVE_SECONDS:-}" ]] || cmd="SERVE_SECONDS=$SERVE_SECONDS $cmd"
  [[ "$PROFILE" == release ]] || cmd="PROFILE=$PROFILE $cmd --no-build"
  {
    echo "### $title"
    echo
    echo "Measured by \`$cmd\` ($inputs; $PROFILE build, best of $RUNS runs, $(nproc) cores, load average $SEC_LOAD before the section, $(date -u +%Y-%m-%d)${BASELINE:+; baseline: $BASELINE}):"
    echo
    if ((${#MD_TABLE[@]})); then
      printf '%s\n' "${MD_TABLE[@]}"
    else
      echo "| what | best wall s | peak RSS MiB | input MiB |"
      echo "|---|---:|---:|---:|"
      printf '%s\n' "${MD_ROWS[@]:SEC_ROW0}"
    fi
    if ((${#CHECKS[@]} > SEC_CHECK0)); then
      echo
      printf -- '- %s\n' "${CHECKS[@]:SEC_CHECK0}"
    fi
  } >"$file"
  log "wrote $file (the section took $((SECONDS - SEC_T0)) s, generating inputs included)"
}

# ---------------------------------------------------------------------------------------------
# Setup: build, generate the snapshot
# ---------------------------------------------------------------------------------------------

setup() {
  if ((BUILD)); then
    log "building (cargo build --release --bin gpuledger --example synth-fleet --example kube-emulator)"
    cargo build --release --bin gpuledger --example synth-fleet --example kube-emulator
  fi
}

# ensure_fleet PODS NODES: sets FLEET (bench-out/fleet-<nodes>n-<pods>p.json, indented JSON in
# kubectl's key order) and FLEET_REPO (its GitOps repository, one workload per 20 pods, committed),
# generating both once. (synth-fleet writes fewer workloads when the fleet has fewer GPU
# Deployments and StatefulSets than that.)
FLEET=""
FLEET_REPO=""
ensure_fleet() {
  local pods="$1" nodes="$2"
  FLEET="$OUT/fleet-${nodes}n-${pods}p.json"
  FLEET_REPO="$OUT/drift-repo-${nodes}n-${pods}p"
  if [[ -s "$FLEET" && -d "$FLEET_REPO/.git" ]]; then
    log "reusing $FLEET (delete it to regenerate)"
    return
  fi
  log "generating $FLEET ($nodes nodes, $pods pods) and its GitOps repository ($((pods / 20)) workloads)"
  rm -rf "$FLEET_REPO"
  "$SYNTH" --nodes "$nodes" --pods "$pods" --format json --output "$FLEET.tmp" \
    --repo-out "$FLEET_REPO" --repo-workloads $((pods / 20))
  mv "$FLEET.tmp" "$FLEET"
  git -C "$FLEET_REPO" init -q
  git -C "$FLEET_REPO" add -A
  git -C "$FLEET_REPO" -c user.name=bench -c user.email=bench@example.com commit -q -m "synthetic repo"
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
  check "inventory ($label) peak memory at most $([[ "$max_share" == 1 ]] && echo "the file's size" || echo "$max_share of the file")" \
    "$ledger_rss" "<" "$(awk -v m="$mib" -v s="$max_share" 'BEGIN { split(s, f, "/"); print (f[2] ? m * f[1] / f[2] : m * s) + 0.001 }')"
}

section_inventory() {
  # The snapshot as kubectl writes a List (items before kind, as synth-fleet writes it), the same
  # with kind first (as kube-apiserver orders an object) and with every object's kind and
  # apiVersion last, each indented and compact; the same number of lean kubectl-shaped pods from a
  # second, independent generator (scripts/bench-pods.py: ~2 KB of compact JSON a pod, the
  # harder case for memory against the file); YAML at a tenth of the pods. Issue 36's targets, in
  # any key order: peak memory at most the compact file and half the indented one, at least 5x
  # faster than json.load. Derived files are made once and kept in bench-out/.
  section_begin inventory
  ensure_fleet "$PODS" "$NODES"
  local snapshot="$FLEET" stem="${FLEET%.json}"
  local compact="$stem-compact.json" kind_first="$stem-kind-first.json"
  local kind_first_compact="$stem-kind-first-compact.json"
  local kind_last="$stem-kind-last.json" kind_last_compact="$stem-kind-last-compact.json"
  local yaml_pods=$((PODS / 10)) yaml_nodes=$((NODES / 10))
  local yaml="$OUT/fleet-${yaml_nodes}n-${yaml_pods}p.yaml"
  if [[ ! -s "$compact" || ! -s "$kind_first" || ! -s "$kind_first_compact" || ! -s "$kind_last" || ! -s "$kind_last_compact" ]]; then
    log "writing the compact, kind-first and kind-last variants of $snapshot"
    python3 - "$snapshot" "$compact" "$kind_first" "$kind_first_compact" "$kind_last" "$kind_last_compact" <<'PY'
import json, sys
src, compact, kind_first, kind_first_compact, kind_last, kind_last_compact = sys.argv[1:]
doc = json.load(open(src))
json.dump(doc, open(compact, "w"), separators=(",", ":"))
TYPE = ("kind", "apiVersion", "metadata")
def first(o):
    if isinstance(o, dict):
        keys = [k for k in TYPE if k in o] + [k for k in o if k not in TYPE]
        return {k: first(o[k]) for k in keys}
    if isinstance(o, list):
        return [first(x) for x in o]
    return o
def last(o):
    if isinstance(o, dict):
        keys = [k for k in o if k not in TYPE[:2]] + [k for k in TYPE[:2] if k in o]
        return {k: last(o[k]) for k in keys}
    if isinstance(o, list):
        return [last(x) for x in o]
    return o
head = first(doc)
json.dump(head, open(kind_first, "w"), indent=4)
json.dump(head, open(kind_first_compact, "w"), separators=(",", ":"))
del head
tail = last(doc)
json.dump(tail, open(kind_last, "w"), indent=4)
json.dump(tail, open(kind_last_compact, "w"), separators=(",", ":"))
PY
  fi
  local lean="$OUT/pods-${PODS}p" order
  for order in kubectl kind-first kind-last; do
    if [[ ! -s "$lean-$order-compact.json" ]]; then
      log "generating $lean-$order-compact.json (scripts/bench-pods.py)"
      python3 scripts/bench-pods.py --pods "$PODS" --order "$order" "$lean-$order-compact.json"
    fi
  done
  if [[ ! -s "$lean-kind-last.json" ]]; then
    python3 scripts/bench-pods.py --pods "$PODS" --order kind-last --indent "$lean-kind-last.json"
  fi
  if [[ ! -s "$yaml" ]]; then
    log "generating $yaml ($yaml_nodes nodes, $yaml_pods pods)"
    "$SYNTH" --nodes "$yaml_nodes" --pods "$yaml_pods" --format yaml --output "$yaml"
  fi
  local py_json=(python3 -c 'import json,sys; json.load(open(sys.argv[1]))')
  inventory_pair "indented JSON, kubectl order" "$snapshot" 1/2 "${py_json[@]}"
  inventory_pair "indented JSON, kind first" "$kind_first" 1/2 "${py_json[@]}"
  inventory_pair "indented JSON, kind last" "$kind_last" 1/2 "${py_json[@]}"
  inventory_pair "compact JSON, kubectl order" "$compact" 1 "${py_json[@]}"
  inventory_pair "compact JSON, kind first" "$kind_first_compact" 1 "${py_json[@]}"
  inventory_pair "compact JSON, kind last" "$kind_last_compact" 1 "${py_json[@]}"
  inventory_pair "lean pods, compact JSON, kubectl order" "$lean-kubectl-compact.json" 1 "${py_json[@]}"
  inventory_pair "lean pods, compact JSON, kind first" "$lean-kind-first-compact.json" 1 "${py_json[@]}"
  inventory_pair "lean pods, compact JSON, kind last" "$lean-kind-last-compact.json" 1 "${py_json[@]}"
  inventory_pair "lean pods, indented JSON, kind last" "$lean-kind-last.json" 1/2 "${py_json[@]}"
  if python3 -c 'import yaml; yaml.CSafeLoader' 2>/dev/null; then
    local py_yaml=(python3 -c 'import yaml,sys; list(yaml.load_all(open(sys.argv[1]), Loader=yaml.CSafeLoader))')
    inventory_pair "YAML, $yaml_pods pods" "$yaml" 1 "${py_yaml[@]}"
    # The same objects as one List document, as `kubectl get -o yaml` writes a fleet (keys sorted,
    # items at the first column, strings quoted only where YAML needs it).
    local yaml_list="${yaml%.yaml}-list.yaml"
    if [[ ! -s "$yaml_list" ]]; then
      log "writing $yaml_list (the YAML fleet as one List)"
      python3 - "$yaml" "$yaml_list" <<'PY'
import sys, yaml
src, dst = sys.argv[1:]
items = [d for d in yaml.load_all(open(src), Loader=yaml.CSafeLoader) if d]
doc = {"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}
with open(dst, "w") as f:
    yaml.dump(doc, f, Dumper=yaml.CSafeDumper, default_flow_style=False, sort_keys=True, width=1 << 30)
PY
    fi
    inventory_pair "YAML List as kubectl writes it, $yaml_pods pods" "$yaml_list" 1 "${py_yaml[@]}"
  else
    log "YAML row skipped: python3 has no yaml.CSafeLoader (apt-get install python3-yaml)"
  fi
  section_end inventory "Inventory from a snapshot file, beside Python loading it" \
    "$NODES nodes and $PODS pods, $(mib_of_file "$snapshot") MiB of indented JSON from synth-fleet; $PODS lean pods from scripts/bench-pods.py, $(mib_of_file "$lean-kubectl-compact.json") MiB of compact JSON; YAML at $yaml_pods pods"
}

# ---------------------------------------------------------------------------------------------
# Section: admission at scale — the inventory of a fleet with and without its queues
# ---------------------------------------------------------------------------------------------

# splice_admission FLEET OUT ADMISSION...: OUT is FLEET (a List in kubectl's key order) with the
# admission objects scripts/bench-pods.py writes (--admission-only ADMISSION...) added at the end of
# its items, in FLEET's indentation.
splice_admission() {
  local fleet="$1" out="$2" items="$2.items"
  shift 2
  python3 scripts/bench-pods.py --pods 0 --order kubectl "$@" --admission-only "$items"
  python3 - "$fleet" "$items" "$out.tmp" <<'PY'
import shutil, sys
fleet, items, out = sys.argv[1:]
with open(fleet, "rb") as f:
    f.seek(0, 2)
    size = f.tell()
    f.seek(max(0, size - 4096))
    tail = f.read()
    end = size - len(tail) + tail.rindex(b"]")  # the end of items: only the List's kind and metadata follow
    f.seek(0)
    with open(out, "wb") as o:
        left = end
        while left:
            chunk = f.read(min(left, 1 << 24))
            o.write(chunk)
            left -= len(chunk)
        o.write(b",\n")
        with open(items, "rb") as i:
            shutil.copyfileobj(i, o, 1 << 24)
        o.write(f.read())
PY
  mv "$out.tmp" "$out"
  rm -f "$items"
}

# queues_pair LABEL BASE WITH: the inventory of BASE and of WITH (the same fleet and its queues),
# a row each and their ratio, and issue 45's check: the queues add at most 25%.
queues_pair() {
  local label="$1" base="$2" with="$3" base_wall base_rss with_wall with_rss
  measure "gpuledger inventory ($label)" \
    "$GPULEDGER" inventory --snapshot "$base" --format json --output /dev/null
  base_wall=$BEST_WALL base_rss=$PEAK_RSS_MIB
  row "gpuledger inventory, $label" "$base_wall" "$base_rss" "$(mib_of_file "$base")"
  measure "gpuledger inventory ($label + queues)" \
    "$GPULEDGER" inventory --snapshot "$with" --format json --output /dev/null
  with_wall=$BEST_WALL with_rss=$PEAK_RSS_MIB
  row "gpuledger inventory, $label + 2,000 queues, 100,000 Workloads" "$with_wall" "$with_rss" "$(mib_of_file "$with")"
  row "  ratio (with queues / without)" "$(ratio "$with_wall" "$base_wall")" "$(ratio "$with_rss" "$base_rss")" "$(ratio "$(wc -c <"$with")" "$(wc -c <"$base")")"
  check "2,000 ClusterQueues and 100,000 Workloads add at most 25% to the inventory ($label)" \
    "$with_wall" "<" "$(awk -v b="$base_wall" 'BEGIN { print b * 1.25 + 0.001 }')"
}

section_queues() {
  # Issue 45's scale: 2,000 ClusterQueues (a Cohort per 20, two GPU flavors, status usage), their
  # LocalQueues and 100,000 Kueue Workloads as Kueue writes them (a pod set with its template, four
  # in five admitted) added to a fleet: the lean pods of scripts/bench-pods.py (about 2 KB a pod,
  # compact: the Workloads about double the input) and synth-fleet's fleet (indented, as the
  # inventory section reads it). The ratio is the figure; the input's growth is beside it.
  section_begin queues
  ensure_fleet "$PODS" "$NODES"
  local lean="$OUT/pods-${PODS}p-kubectl-compact.json"
  local lean_q="$OUT/pods-${PODS}p-queues-2000q-100000w-compact.json"
  local fleet_q="${FLEET%.json}-queues-2000q-100000w.json"
  if [[ ! -s "$lean" ]]; then
    log "generating $lean (scripts/bench-pods.py)"
    python3 scripts/bench-pods.py --pods "$PODS" --order kubectl "$lean"
  fi
  if [[ ! -s "$lean_q" ]]; then
    log "generating $lean_q (scripts/bench-pods.py --queues 2000 --workloads 100000)"
    python3 scripts/bench-pods.py --pods "$PODS" --order kubectl --queues 2000 --workloads 100000 "$lean_q"
  fi
  if [[ ! -s "$fleet_q" ]]; then
    log "writing $fleet_q (the fleet with 2,000 queues and 100,000 Workloads, indented)"
    splice_admission "$FLEET" "$fleet_q" --indent --queues 2000 --workloads 100000
  fi
  queues_pair "lean pods, compact JSON" "$lean" "$lean_q"
  queues_pair "synth-fleet, indented JSON" "$FLEET" "$fleet_q"
  section_end queues "Admission at scale: a fleet with and without 2,000 ClusterQueues and 100,000 Workloads" \
    "$PODS lean pods from scripts/bench-pods.py, compact; $NODES nodes and $PODS pods from synth-fleet, indented; each with 2,000 ClusterQueues, 100 Cohorts, 2,000 LocalQueues and 100,000 Workloads from scripts/bench-pods.py"
}

# ---------------------------------------------------------------------------------------------
# Section: render a synthetic plain-YAML repository and a monorepo of kserve's shape, committed
# ---------------------------------------------------------------------------------------------

section_render() {
  section_begin render
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
  render_monorepo
  section_end render "Render of a plain-YAML repository and of a monorepo" \
    "$FILES plain-YAML files, committed; a monorepo of kserve/kserve's shape, committed"
}

# render_monorepo: a generated repository of kserve/kserve's shape (issue 36 §4): 170 roots, 20 of
# them kustomize overlays (a quarter over a base of two 2.4 MiB CRDs, the rest over small bases)
# and 150 plain directories (12 release bundles carrying the CRDs, 138 samples), 63 MiB,
# committed. gpuledger renders it beside the floor, `kubectl kustomize` once per kustomize root in
# a shell loop; targets: within 2x of the floor, peak RSS under 500 MB (476.8 MiB).
render_monorepo() {
  local repo="$OUT/monorepo" floor floor_rss report="$TMP/monorepo.json" counts
  if [[ ! -d "$repo/.git" ]]; then
    log "generating $repo (kserve's shape: 170 roots, large CRDs; committed)"
    rm -rf "$repo"
    python3 - "$repo" <<'PY'
import os, sys
root = sys.argv[1]
# kserve/kserve's shape: large CRDs in a kustomize base, overlays of it, release bundles and samples.
CRDS, CRD_PROPS, OVERLAYS, RELEASES, SAMPLES = 2, 800, 20, 12, 138

def yaml(v, ind=0):
    """Block YAML of dicts, lists, strings and numbers (what kubectl and gpuledger read)."""
    pad, out = "  " * ind, []
    for k, x in (v.items() if isinstance(v, dict) else enumerate(v)):
        head = f"{pad}{k}:" if isinstance(v, dict) else f"{pad}-"
        if isinstance(x, (dict, list)) and x:
            if isinstance(v, list) and isinstance(x, dict):
                sub = yaml(x, ind + 1).splitlines()
                out.append(f"{pad}- {sub[0].lstrip()}")
                out.extend(sub[1:])
            else:
                out.append(head)
                out.append(yaml(x, ind + 1))
        else:
            out.append(f'{head} "{x}"' if isinstance(x, str) else f"{head} {str(x).lower() if isinstance(x, bool) else x}")
    return "\n".join(out)

def schema(n, depth=0):
    """A CRD's OpenAPI schema as controller-gen writes it: properties with long descriptions,
    nested as a pod spec's are; about n properties per level below the top."""
    props = {}
    for i in range(n):
        d = {"description": f"Field {i} at depth {depth}: " + "what this field configures, its defaults and its constraints, as controller-gen copies them from the Go doc comment. " * 2,
             "type": "string"}
        if depth < 2 and i % 40 == 0:
            d = {"description": d["description"], "type": "object", "properties": schema(n // 8, depth + 1)}
        props[f"field{i:03d}"] = d
    return props

def crd(k, version):
    kind = f"Model{k}"
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"model{k}s.serving.example.com", "annotations": {"controller-gen.kubebuilder.io/version": version}},
            "spec": {"group": "serving.example.com", "names": {"kind": kind, "plural": f"model{k}s"}, "scope": "Namespaced",
                     "versions": [{"name": v, "served": True, "storage": v == "v1beta1",
                                   "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object", "properties": schema(CRD_PROPS)}}}}}
                                  for v in ("v1alpha1", "v1beta1")]}}

def manager(ns, gpus):
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "controller-manager", "namespace": ns},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "manager"}},
                     "template": {"metadata": {"labels": {"app": "manager"}},
                                  "spec": {"containers": [{"name": "manager", "image": "registry.example.com/manager:v1",
                                                           "resources": {"limits": {"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": gpus}}}]}}}}

def write(path, docs):
    os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
    with open(os.path.join(root, path), "w") as f:
        f.write("\n---\n".join(yaml(d) for d in docs) + "\n")

def kustomization(path, **fields):
    write(os.path.join(path, "kustomization.yaml"), [{"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization", **fields}])

# Kustomize: a base of large CRDs, rbac and manager bases, a default overlay of them, and overlays of it.
for k in range(CRDS):
    write(f"config/crd/full/model{k}.yaml", [crd(k, "v0.18.0")])
kustomization("config/crd/full", resources=[f"model{k}.yaml" for k in range(CRDS)])
write("config/rbac/role.yaml", [{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "manager"},
                                 "rules": [{"apiGroups": ["serving.example.com"], "resources": ["*"], "verbs": ["get", "list", "watch"]}]}])
kustomization("config/rbac", resources=["role.yaml"])
write("config/manager/manager.yaml", [manager("system", "0")])
kustomization("config/manager", resources=["manager.yaml"])
kustomization("config/default", namespace="serving-system", resources=["../crd/full", "../rbac", "../manager"])
# A quarter of the overlays install the CRDs (through the default overlay); the rest only the controller.
for o in range(OVERLAYS):
    bases = ["../../default"] if o % 4 == 0 else ["../../rbac", "../../manager"]
    kustomization(f"config/overlays/o{o:02d}", namespace=f"serving-{o:02d}", resources=bases,
                  images=[{"name": "registry.example.com/manager", "newTag": f"v{o}"}],
                  labels=[{"pairs": {"overlay": f"o{o:02d}"}}])
# Plain directories: release bundles (every CRD, version-stamped, with the manager) and samples.
for r in range(RELEASES):
    v = f"v0.{r // 3 + 5}.{r % 3}"
    write(f"install/{v}/bundle.yaml", [crd(k, v) for k in range(CRDS)] + [manager("serving-system", "0")])
for s in range(SAMPLES):
    write(f"docs/samples/s{s:03d}/workload.yaml", [manager(f"team-{s % 12:02d}", str((0, 1, 2, 4)[s % 4]))])
PY
    git -C "$repo" init -q
    git -C "$repo" add -A
    git -C "$repo" -c user.name=bench -c user.email=bench@example.com commit -q -m "synthetic monorepo"
  fi
  if command -v kubectl >/dev/null; then
    # The loop is the inner shell's: its $1 and $d expand there, not here.
    # shellcheck disable=SC2016
    measure "kubectl kustomize per kustomize root (floor)" \
      bash -c 'for d in "$1"/config/overlays/*/; do kubectl kustomize "$d" >/dev/null; done' floor "$repo"
    floor=$BEST_WALL
    floor_rss=$PEAK_RSS_MIB
    row "kubectl kustomize once per kustomize root (20, shell loop)" "$floor" "$floor_rss" "-"
  else
    log "monorepo floor skipped: no kubectl"
    floor=""
  fi
  measure "gpuledger render (monorepo)" \
    "$GPULEDGER" render --repo "$repo" --ref HEAD --format json --output "$report"
  counts=$(python3 -c 'import json, sys
apps = json.load(open(sys.argv[1]))["desired"]["apps"]
print(len(apps), sum(a["status"] == "rendered" for a in apps))' "$report")
  row "gpuledger render, monorepo @HEAD (${counts% *} roots, ${counts#* } rendered)" "$BEST_WALL" "$PEAK_RSS_MIB" \
    "$(du -sm "$repo" --exclude=.git | cut -f1)"
  [[ -z "$floor" ]] || check "gpuledger render of the monorepo within 2x of kubectl kustomize per root ($(ratio "$BEST_WALL" "$floor")x)" \
    "$BEST_WALL" "<" "$(awk -v f="$floor" 'BEGIN { print 2 * f }')"
  check "gpuledger render of the monorepo: peak RSS under 500 MB (476.8 MiB)" "$PEAK_RSS_MIB" "<" 476.8
  check "gpuledger render of the monorepo: every root rendered (${counts#* } of ${counts% *})" "${counts#* }" ">" "$((${counts% *} - 1))"
}

# ---------------------------------------------------------------------------------------------
# Section: drift of the synthetic fleet against a 5,000-workload repository
# ---------------------------------------------------------------------------------------------

section_drift() {
  section_begin drift
  ensure_fleet "$PODS" "$NODES"
  local log="$TMP/drift.log" join_ms workloads
  workloads=$(git -C "$FLEET_REPO" ls-files | wc -l)
  measure "gpuledger drift" \
    "$GPULEDGER" drift --repo "$FLEET_REPO" --ref HEAD --snapshot "$FLEET" --no-fail --format json --output /dev/null
  row "gpuledger drift (whole run)" "$BEST_WALL" "$PEAK_RSS_MIB" "$(mib_of_file "$FLEET")"
  GPULEDGER_LOG=gpuledger=debug "$GPULEDGER" drift --repo "$FLEET_REPO" --ref HEAD --snapshot "$FLEET" \
    --no-fail --format json --output /dev/null 2>"$log"
  join_ms=$(sed -n 's/.*elapsed_ms=\([0-9.]*\).*drift join.*/\1/p; s/.*drift join.*elapsed_ms=\([0-9.]*\).*/\1/p' "$log" | head -n 1)
  [[ -n "$join_ms" ]] || { echo "bench.sh: no drift join timing in the debug log" >&2; cat "$log" >&2; exit 1; }
  row "  of which the drift join" "$(awk -v m="$join_ms" 'BEGIN { printf "%.3f", m / 1000 }')" "" ""
  check "drift join ($PODS pods against $workloads workloads) under 1 s" "$join_ms" "<" 1000
  section_end drift "Drift of a fleet against its GitOps repository" \
    "$NODES nodes and $PODS pods against a repository of $workloads workloads, both from synth-fleet"
}

# ---------------------------------------------------------------------------------------------
# Section: the live inventory through the Kubernetes API emulator, beside kubectl get pods
# ---------------------------------------------------------------------------------------------

# live_at PODS NODES: the emulator serving that fleet (kind-first keys, as kube-apiserver writes
# them; kubectl's alphabetical order is tested in tests/all/live.rs and tests/all/emulator.rs),
# gpuledger's whole live inventory beside kubectl get pods and kubectl-view-allocations (pods and
# nodes only), with issue 19's checks.
live_at() {
  local pods="$1" nodes="$2" out="$TMP/emulator.out" kubeconfig i ledger ledger_rss kubectl_wall need_mib avail_mib
  local peer=bench-out/peers/bin/kubectl-view-allocations
  ensure_fleet "$pods" "$nodes"
  log "starting the API emulator on $FLEET (loading takes a while)"
  : >"$out"
  target/"$PROFILE"/examples/kube-emulator --snapshot "$FLEET" --port 0 --page-size 500 --convert-versions \
    >"$out" 2>/dev/null &
  EMULATOR_PID=$!
  for ((i = 0; i < 600; i++)); do
    [[ -s "$out" ]] && break
    kill -0 "$EMULATOR_PID" 2>/dev/null || { echo "bench.sh: the emulator exited" >&2; exit 1; }
    sleep 1
  done
  kubeconfig=$(head -n 1 "$out")
  [[ -n "$kubeconfig" ]] || { echo "bench.sh: the emulator printed no kubeconfig" >&2; exit 1; }
  measure "gpuledger inventory (live, $pods pods, every resource)" \
    "$GPULEDGER" inventory --kubeconfig "$kubeconfig" --quiet --timeout 3600 --format json --output /dev/null
  ledger=$BEST_WALL ledger_rss=$PEAK_RSS_MIB
  row "gpuledger inventory --kubeconfig, $pods pods (every resource)" "$BEST_WALL" "$PEAK_RSS_MIB" ""
  # kubectl holds the whole list as objects: about 95 KiB a pod (1.9 GiB at 20,000 pods here).
  # Beside the emulator, which holds the fleet too, it can exhaust the machine's memory and bring
  # the OOM killer onto other processes: it is skipped, with a row saying so, when the memory
  # available now is below 100 KiB a pod.
  kubectl_wall=""
  need_mib=$((pods * 100 / 1024)) avail_mib=$(awk '/^MemAvailable:/ { printf "%d", $2 / 1024 }' /proc/meminfo 2>/dev/null)
  if ((${avail_mib:-0} >= need_mib)); then
    # The inner shell expands $1, the kubeconfig passed after it.
    # shellcheck disable=SC2016
    measure "kubectl get pods -A -o json ($pods pods)" \
      sh -c 'kubectl --kubeconfig "$1" get pods -A -o json >/dev/null' sh "$kubeconfig"
    row "kubectl get pods -A -o json, $pods pods" "$BEST_WALL" "$PEAK_RSS_MIB" ""
    kubectl_wall=$BEST_WALL
  else
    log "kubectl get pods skipped at $pods pods: it needs about $need_mib MiB, ${avail_mib:-unknown} MiB available beside the emulator"
    row "kubectl get pods -A -o json, $pods pods: skipped, needs about $need_mib MiB, ${avail_mib:-unknown} MiB available" "-" "-" ""
  fi
  if [[ -x "$peer" ]]; then
    # The Rust peer, pods and nodes only; without --ignore-taints it hides tainted GPU nodes.
    # shellcheck disable=SC2016
    measure "kubectl-view-allocations ($pods pods; pods and nodes)" \
      sh -c 'KUBECONFIG="$1" "$2" --ignore-taints -r nvidia.com/gpu >/dev/null' sh "$kubeconfig" "$peer"
    row "kubectl-view-allocations -r nvidia.com/gpu, $pods pods (pods and nodes)" "$BEST_WALL" "$PEAK_RSS_MIB" ""
    check "live inventory of $pods pods (every resource) within kubectl-view-allocations' time (pods and nodes)" \
      "$ledger" "<" "$(awk -v w="$BEST_WALL" 'BEGIN { print w + 0.0005 }')"
    check "live inventory of $pods pods: peak memory below kubectl-view-allocations'" "$ledger_rss" "<" "$PEAK_RSS_MIB"
  fi
  if [[ -n "$kubectl_wall" ]]; then
    check "live inventory of $pods pods (every resource) faster than kubectl get pods -A -o json" "$ledger" "<" "$kubectl_wall"
  fi
  kill "$EMULATOR_PID" 2>/dev/null || true
  wait "$EMULATOR_PID" 2>/dev/null || true
  EMULATOR_PID=""
}

section_live() {
  section_begin live
  local small=$((PODS / 5)) small_nodes=$((NODES / 5)) peer=bench-out/peers/bin/kubectl-view-allocations
  local peer_note="kubectl-view-allocations from \`cargo install --locked\`"
  if [[ ! -x "$peer" ]]; then
    log "installing kubectl-view-allocations into bench-out/peers (once)"
    cargo install --locked kubectl-view-allocations --root bench-out/peers >"$TMP/peer.log" 2>&1 ||
      log "kubectl-view-allocations did not build: its rows and checks are skipped ($(tail -n 1 "$TMP/peer.log"))"
  fi
  if [[ -x "$peer" ]]; then
    peer_note+=" $("$peer" --version 2>/dev/null | awk '{ print $NF }')"
  else
    peer_note="kubectl-view-allocations skipped: it did not build"
  fi
  live_at "$small" "$small_nodes"
  live_at "$PODS" "$NODES"
  section_end live "Live inventory through the Kubernetes API emulator" \
    "$small and $PODS pods ($small_nodes and $NODES nodes) from synth-fleet served by examples/kube-emulator, kind-first keys, pages of 500; kubectl $(kubectl version --client 2>/dev/null | head -n 1 | awk '{ print $NF }'); $peer_note"
}

# ---------------------------------------------------------------------------------------------
# Section: serve's load on the API server (issue 36): requests per minute at rest and under churn,
# beside kube-state-metrics' behaviour as the model (it cannot run here: a written row)
# ---------------------------------------------------------------------------------------------

# api_counts FROM TO: the emulator's request log lines FROM+1..TO (GET lines only), as
# "<lists> <watches> <discovery>". A resource path is /api/v1/<plural> or /apis/<g>/<v>/<plural>
# (gpuledger reads every namespace at once); anything shorter is discovery.
api_counts() {
  sed -n "$(($1 + 1)),$2p" "$TMP/emulator.err" | awk '
    $1 != "GET" { next }
    {
      target = $2; path = target; sub(/\?.*/, "", path)
      n = split(path, seg, "/") - 1
      resource = (path ~ /^\/api\//) ? n >= 3 : (path ~ /^\/apis\//) ? n >= 4 : 0
      if (!resource) d++
      else if (target ~ /[?&]watch=(true|1)/) w++
      else l++
    }
    END { printf "%d %d %d\n", l, w, d }'
}

# requested_gpus PORT: serve's gpuledger_fleet_gpus{tier="requested"} now (empty before a report).
requested_gpus() {
  curl -s "http://127.0.0.1:$1/metrics" | awk '/^gpuledger_fleet_gpus\{.*tier="requested"/ { print $NF }'
}

section_serve() {
  section_begin serve
  local pods=$((PODS / 10)) nodes=$((NODES / 10)) secs="${SERVE_SECONDS:-60}" out="$TMP/emulator.out"
  local kubeconfig server port i n0 n1 start_counts rest_counts churn_counts r0 r1 t0 seen resources
  ensure_fleet "$pods" "$nodes"
  : >"$out"
  target/"$PROFILE"/examples/kube-emulator --snapshot "$FLEET" --port 0 --page-size 500 --convert-versions \
    >"$out" 2>"$TMP/emulator.err" &
  EMULATOR_PID=$!
  for ((i = 0; i < 600; i++)); do
    [[ -s "$out" ]] && break
    kill -0 "$EMULATOR_PID" 2>/dev/null || { echo "bench.sh: the emulator exited" >&2; exit 1; }
    sleep 1
  done
  kubeconfig=$(head -n 1 "$out")
  server=$(awk '/server:/ { print $2; exit }' "$kubeconfig")
  # Two versions of one running GPU pod, one GPU apart: the churn applies them in turn.
  python3 - "$FLEET" "$TMP/pod-a.json" "$TMP/pod-b.json" <<'PY'
import json, sys
items = json.load(open(sys.argv[1]))["items"]
for o in items:
    if o.get("kind") != "Pod" or o.get("status", {}).get("phase") != "Running" or not o["spec"].get("nodeName"):
        continue
    res = o["spec"]["containers"][0].get("resources", {})
    n = res.get("limits", {}).get("nvidia.com/gpu")
    if n is None:
        continue
    for path, gpus in ((sys.argv[2], int(n) + 1), (sys.argv[3], int(n))):
        for side in ("requests", "limits"):
            res.setdefault(side, {})["nvidia.com/gpu"] = str(gpus)
        json.dump(o, open(path, "w"))
    sys.exit(0)
sys.exit("no running GPU pod in the fleet")
PY
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  n0=$(wc -l <"$TMP/emulator.err")
  log "serve on $FLEET: until its first report"
  "$GPULEDGER" serve --listen "127.0.0.1:$port" --interval 5m --kubeconfig "$kubeconfig" --quiet \
    >"$TMP/serve.log" 2>&1 &
  SERVE_PID=$!
  for ((i = 0; i < 1200; i++)); do
    [[ -n "$(requested_gpus "$port")" ]] && break
    kill -0 "$SERVE_PID" 2>/dev/null || { echo "bench.sh: serve exited" >&2; cat "$TMP/serve.log" >&2; exit 1; }
    sleep 0.5
  done
  sleep 2 # the watches start after the lists
  n1=$(wc -l <"$TMP/emulator.err")
  start_counts=$(api_counts "$n0" "$n1")
  resources=$(awk '$1 == "GET" && $2 ~ /[?&]watch=(true|1)/ { p = $2; sub(/\?.*/, "", p); print p }' "$TMP/emulator.err" | sort -u | wc -l)
  log "at rest for $secs s"
  n0=$n1
  sleep "$secs"
  n1=$(wc -l <"$TMP/emulator.err")
  rest_counts=$(api_counts "$n0" "$n1")
  # One change, and how long until the metrics show it.
  r0=$(requested_gpus "$port")
  curl -s -X POST --data-binary @"$TMP/pod-a.json" "$server/emulator/apply" >/dev/null
  t0=$(date +%s.%N)
  seen=""
  for ((i = 0; i < 600; i++)); do
    r1=$(requested_gpus "$port")
    if [[ -n "$r1" && "$r1" != "$r0" ]]; then
      seen=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
      break
    fi
    sleep 0.05
  done
  log "under churn (one change a second) for $secs s"
  n0=$(wc -l <"$TMP/emulator.err")
  for ((i = 0; i < secs; i++)); do
    if ((i % 2)); then
      curl -s -X POST --data-binary @"$TMP/pod-a.json" "$server/emulator/apply" >/dev/null
    else
      curl -s -X POST --data-binary @"$TMP/pod-b.json" "$server/emulator/apply" >/dev/null
    fi
    sleep 1
  done
  n1=$(wc -l <"$TMP/emulator.err")
  churn_counts=$(api_counts "$n0" "$n1")

  # Soak (issue 48): every watch cut once a second for CUT_SECONDS (default 180), as a flapping API
  # server or load balancer does; serve's memory and open file descriptors stay flat, every
  # resource stays synced, and its log says nothing (a watch that ends is resumed).
  local cuts="${CUT_SECONDS:-180}" rss0 rss1 fd0 fd1 unsynced log0 log1
  log "serve: every watch cut once a second for $cuts s"
  log0=$(wc -l <"$TMP/serve.log")
  for ((i = 0; i < 10; i++)); do curl -s -X POST "$server/emulator/end-watches" >/dev/null; sleep 1; done
  rss0=$(awk '/^VmRSS:/ { print $2 }' "/proc/$SERVE_PID/status")
  fd0=$(find "/proc/$SERVE_PID/fd" -mindepth 1 -maxdepth 1 | wc -l)
  for ((i = 10; i < cuts; i++)); do curl -s -X POST "$server/emulator/end-watches" >/dev/null; sleep 1; done
  sleep 2
  rss1=$(awk '/^VmRSS:/ { print $2 }' "/proc/$SERVE_PID/status")
  fd1=$(find "/proc/$SERVE_PID/fd" -mindepth 1 -maxdepth 1 | wc -l)
  unsynced=$(curl -s "http://127.0.0.1:$port/metrics" | awk '/^gpuledger_exporter_resource_synced\{/ && $NF != 1 { n++ } END { print n + 0 }')
  log1=$(wc -l <"$TMP/serve.log")
  kill "$SERVE_PID" "$EMULATOR_PID" 2>/dev/null || true
  wait "$SERVE_PID" "$EMULATOR_PID" 2>/dev/null || true
  SERVE_PID="" EMULATOR_PID=""

  local sl sw sd rl rw cl cw per_min_rest per_min_churn ksm_rest serve_model relist_5m relist_30s
  read -r sl sw sd <<<"$start_counts"
  read -r rl rw _ <<<"$rest_counts"
  read -r cl cw _ <<<"$churn_counts"
  per_min_rest=$(awk -v n=$((rl + rw)) -v s="$secs" 'BEGIN { printf "%.1f", n * 60 / s }')
  per_min_churn=$(awk -v n=$((cl + cw)) -v s="$secs" 'BEGIN { printf "%.1f", n * 60 / s }')
  # client-go's reflector (kube-state-metrics' informers) lists each resource once, then watches
  # with a timeoutSeconds random in [5, 10) minutes (minWatchTimeout, kubernetes/kubernetes
  # staging/src/k8s.io/client-go/tools/cache/reflector.go): about one request per resource every
  # 7.5 minutes, however much changes. serve's watches (kube-rs) ask for 290 s.
  ksm_rest=$(awk -v r="$resources" 'BEGIN { printf "%.1f", r / 7.5 }')
  serve_model=$(awk -v r="$resources" 'BEGIN { printf "%.1f", r * 60 / 290 }')
  relist_5m=$(awk -v l="$sl" 'BEGIN { printf "%.1f", l / 5 }')
  relist_30s=$((sl * 2))
  MD_TABLE=(
    "| what | API requests at start (lists + discovery) | per minute at rest | per minute under churn (a change a second) |"
    "|---|---:|---:|---:|"
    "| gpuledger serve, measured ($pods pods, $resources resources watched) | $sl + $sd, then $sw watches | $per_min_rest ($rl lists, $rw watches in $secs s); about $serve_model over a longer window (each watch renewed every 290 s) | $per_min_churn ($cl lists, $cw watches in $secs s) |"
    "| kube-state-metrics, the model (client-go informers: one list per resource, then a watch renewed every 5-10 min) | $resources lists (+ pages) | about $ksm_rest | about $ksm_rest (changes ride the open watches) |"
    "| serve relisting every --interval (before watching), from the lists measured at start | $sl | $relist_5m at 5m, $relist_30s at 30s | the same |"
  )
  row "serve: a change in the metrics after (s)" "${seen:--}" "" ""
  MD_TABLE+=("" "A pod's GPU request changed while serving showed in \`/metrics\` after ${seen:-(not within 30 s)} s.")
  check "serve makes no list at rest after its start" "$rl" "<" 1
  check "serve makes no list under churn: changes come on the watches" "$cl" "<" 1
  check "serve's requests per minute under churn within the kube-state-metrics model's plus one a resource" \
    "$per_min_churn" "<" "$(awk -v k="$ksm_rest" -v r="$resources" 'BEGIN { print k + r + 0.05 }')"
  check "serve's requests per minute under churn no more than at rest plus one a resource (load follows change, not size)" \
    "$per_min_churn" "<" "$(awk -v a="$per_min_rest" -v s="$serve_model" -v r="$resources" 'BEGIN { print (a > s ? a : s) + r + 0.05 }')"
  [[ -n "$seen" ]] && check "a change shows in serve's metrics within 2 s" "$seen" "<" 2
  MD_TABLE+=("" "Every watch cut once a second for $cuts s: serve's RSS $((rss0 / 1024)) → $((rss1 / 1024)) MiB, open file descriptors $fd0 → $fd1, $unsynced resources not synced at the end, $((log1 - log0)) log lines.")
  check "serve's RSS flat over $cuts s of watches cut every second (within 20% + 8 MiB)" \
    "$rss1" "<" "$(awk -v r="$rss0" 'BEGIN { print r * 1.2 + 8192 }')"
  check "serve's open file descriptors flat over the cuts (within 5)" "$fd1" "<" "$((fd0 + 6))"
  check "every resource synced after the cuts" "$unsynced" "<" 1
  check "no log line for a watch that ends cleanly" "$((log1 - log0))" "<" 1
  section_end serve "serve's load on the API server: at rest and under churn" \
    "$pods pods ($nodes nodes) from synth-fleet served by examples/kube-emulator (pages of 500), its request log counted; $secs s at rest, then $secs s of one pod changed a second through the emulator's POST /emulator/apply; kube-state-metrics cannot run here, so its row is client-go's reflector behaviour written out"
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
  section_begin plan
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
  section_end plan "Stagger planner" \
    "seeded synthetic jobs: 1,000 on 320 GPUs over 40 nodes and 40 on 64 GPUs over 16 nodes, 48 h on 15-minute slots"
}

# ---------------------------------------------------------------------------------------------
# Section: check of a one-app change on an ApplicationSet repository (issue 19 §3: check costs at
# most 2× rendering the changed app plus a fixed overhead beyond rendering the base once; a
# no-change check renders nothing twice)
# ---------------------------------------------------------------------------------------------

# make_check_repo APPS: sets CHECK_REPO to bench-out/check-repo-APPS, an ApplicationSet over APPS/2
# kustomize apps (apps/k-*) and APPS/2 plain apps (apps/p-*) on branch main, and a branch `change`
# where one kustomize app has one replica more; generated once.
CHECK_REPO=""
make_check_repo() {
  local apps="$1" half=$(($1 / 2)) repo changed
  repo="$OUT/check-repo-$apps"
  CHECK_REPO="$repo"
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
}

section_check() {
  section_begin check
  local repo render_wall floor one no_change
  make_check_repo "$CHECK_APPS"
  repo="$CHECK_REPO"
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
  section_end check "Pre-merge check of a one-app change" \
    "an ApplicationSet over $((CHECK_APPS / 2)) kustomize and $((CHECK_APPS / 2)) plain apps, one kustomize app changed on the head branch; $(kubectl version --client 2>/dev/null | grep -i kustomize)"
}

# ---------------------------------------------------------------------------------------------
# Section: scaling (issue 19 §4): inventory, drift, render and check at 1x, 2x and 4x the input,
# each beside its peer on the same input, and whether each grows linearly or better
# ---------------------------------------------------------------------------------------------

# scale_row NAME T1 T2 T4: a row of the scaling table (seconds at 1x, 2x, 4x, and 4x/1x).
scale_row() {
  local r
  r=$(ratio "$4" "$2")
  ROWS+=("$(printf '%-64s %9s %9s %9s %7s' "$1" "$2" "$3" "$4" "$r")")
  MD_TABLE+=("| $1 | $2 | $3 | $4 | $r |")
}

# scale_check NAME T1 T4: linear or better is 4x/1x at most 4, with 25% for noise.
scale_check() {
  check "$1 grows linearly or better: 4x/1x $(ratio "$3" "$2") at most 5" "$3" "<" "$(awk -v a="$2" 'BEGIN { print a * 5 + 0.0005 }')"
}

section_scaling() {
  section_begin scaling
  local f pods nodes apps repo
  local inv=() py=() drift=() render=() loop=() one=() pods_at=() apps_at=() workloads_at=()
  local py_json=(python3 -c 'import json,sys; json.load(open(sys.argv[1]))')
  for f in 1 2 4; do
    pods=$((PODS * f / 4)) nodes=$((NODES * f / 4))
    pods_at+=("$pods")
    ensure_fleet "$pods" "$nodes"
    workloads_at+=("$(git -C "$FLEET_REPO" ls-files | wc -l)")
    measure "gpuledger inventory ($pods pods)" \
      "$GPULEDGER" inventory --snapshot "$FLEET" --format json --output /dev/null
    inv+=("$BEST_WALL")
    measure "python3 json.load ($pods pods)" "${py_json[@]}" "$FLEET"
    py+=("$BEST_WALL")
    measure "gpuledger drift ($pods pods, ${workloads_at[-1]} workloads)" \
      "$GPULEDGER" drift --repo "$FLEET_REPO" --ref HEAD --snapshot "$FLEET" --no-fail --format json --output /dev/null
    drift+=("$BEST_WALL")
  done
  for f in 1 2 4; do
    apps=$((CHECK_APPS * f / 4))
    apps_at+=("$apps")
    make_check_repo "$apps"
    repo="$CHECK_REPO"
    measure "gpuledger render --ref main ($apps apps)" \
      "$GPULEDGER" render --repo "$repo" --ref main --format json --output /dev/null
    render+=("$BEST_WALL")
    # The peer: what a CI script without gpuledger does, kubectl kustomize on each kustomize app.
    # shellcheck disable=SC2016
    measure "kubectl kustomize loop over $((apps / 2)) kustomize apps" \
      sh -c 'for d in "$1"/apps/k-*/; do kubectl kustomize "$d" >/dev/null || exit 1; done' sh "$repo"
    loop+=("$BEST_WALL")
    measure "gpuledger check ($apps apps, one changed)" \
      "$GPULEDGER" check --repo "$repo" --base main --head change --format json --output /dev/null
    one+=("$BEST_WALL")
  done
  ROWS+=("$(printf '%-64s %9s %9s %9s %7s' "wall s at" 1x 2x 4x 4x/1x)")
  MD_TABLE+=("| wall time, s | 1x | 2x | 4x | 4x/1x |" "|---|---:|---:|---:|---:|")
  local p="${pods_at[0]}/${pods_at[1]}/${pods_at[2]} pods" a="${apps_at[0]}/${apps_at[1]}/${apps_at[2]} apps"
  scale_row "gpuledger inventory, $p" "${inv[@]}"
  scale_row "gpuledger drift, $p" "${drift[@]}"
  scale_row "python3 json.load of the same file (peer of both)" "${py[@]}"
  scale_row "gpuledger render --ref main, $a" "${render[@]}"
  scale_row "gpuledger check, $a, one changed" "${one[@]}"
  scale_row "kubectl kustomize on each kustomize app (peer of both)" "${loop[@]}"
  scale_check "inventory" "${inv[0]}" "${inv[2]}"
  scale_check "drift" "${drift[0]}" "${drift[2]}"
  scale_check "render" "${render[0]}" "${render[2]}"
  scale_check "check" "${one[0]}" "${one[2]}"
  section_end scaling "Scaling: 1x, 2x and 4x the input" \
    "fleets of ${pods_at[0]}, ${pods_at[1]} and ${pods_at[2]} pods with $((NODES / 4)), $((NODES / 2)) and $NODES nodes and GitOps repositories of ${workloads_at[0]}, ${workloads_at[1]} and ${workloads_at[2]} workloads, from synth-fleet; the check section's ApplicationSet repository at ${apps_at[0]}, ${apps_at[1]} and ${apps_at[2]} apps, half kustomize, one changed"
}

# ---------------------------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------------------------

setup
for section in $SECTIONS; do
  if [[ -z "$ONLY" || "$ONLY" == "$section" ]]; then
    "section_$section"
  fi
done

echo
echo "gpuledger bench: $NODES nodes, $PODS pods, $CHECK_APPS apps for check, best of $RUNS runs"
printf '%-64s %12s %14s %10s' "what" "best wall s" "peak RSS MiB" "file MiB"
printf '%s\n' "" "${ROWS[@]}"
echo
printf '%s\n' "${CHECKS[@]}"
