#!/usr/bin/env bash
# Assembles the section files scripts/bench.sh writes (bench-out/bench-<section>.md) into docs/performance.md
# between the lines `<!-- bench:begin -->` and `<!-- bench:end -->`, in a fixed order, so the
# Performance section's figures are the script's output, never typed by hand. A section without a
# file is left out (run `scripts/bench.sh`, or `--only <section>` for each, first).
#
#   scripts/bench-readme.sh [DIR]   (default bench-out)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
dir="${1:-bench-out}"
order=(inventory queues live serve drift render check scaling plan)
files=()
for section in "${order[@]}"; do
  if [[ -s "$dir/bench-$section.md" ]]; then
    files+=("$dir/bench-$section.md")
    if grep -q -- '--pods\|--nodes\|--apps' "$dir/bench-$section.md"; then
      echo "bench-readme.sh: warning: $dir/bench-$section.md was measured at other than the default sizes" >&2
    fi
  else
    echo "bench-readme.sh: no $dir/bench-$section.md: section $section left out" >&2
  fi
done
((${#files[@]})) || { echo "bench-readme.sh: no section files in $dir: run scripts/bench.sh first" >&2; exit 2; }
if ! grep -q '^<!-- bench:begin -->$' docs/performance.md || ! grep -q '^<!-- bench:end -->$' docs/performance.md; then
  echo "bench-readme.sh: docs/performance.md has no bench markers" >&2
  exit 2
fi
python3 - "${files[@]}" <<'PY'
import sys
body = "\n\n".join(open(p).read().strip("\n") for p in sys.argv[1:])
text = open("docs/performance.md").read()
head, rest = text.split("<!-- bench:begin -->\n", 1)
_, tail = rest.split("<!-- bench:end -->\n", 1)
open("docs/performance.md", "w").write(head + "<!-- bench:begin -->\n" + body + "\n<!-- bench:end -->\n" + tail)
PY
echo "bench-readme.sh: docs/performance.md updated from ${files[*]}" >&2
