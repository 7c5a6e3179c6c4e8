#!/usr/bin/env bash
# Puts bench-out/bench.md (written by scripts/bench.sh) into README.md between the lines
# `<!-- bench:begin -->` and `<!-- bench:end -->`, so the Performance section's figures are the
# script's output, never typed by hand.
#
#   scripts/bench-readme.sh [FILE]   (default bench-out/bench.md)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
src="${1:-bench-out/bench.md}"
[[ -s "$src" ]] || { echo "bench-readme.sh: $src is missing: run scripts/bench.sh first" >&2; exit 2; }
if ! grep -q '^<!-- bench:begin -->$' README.md || ! grep -q '^<!-- bench:end -->$' README.md; then
  echo "bench-readme.sh: README.md has no bench markers" >&2
  exit 2
fi
python3 - "$src" <<'PY'
import sys
table = open(sys.argv[1]).read().strip("\n")
text = open("README.md").read()
head, rest = text.split("<!-- bench:begin -->\n", 1)
_, tail = rest.split("<!-- bench:end -->\n", 1)
open("README.md", "w").write(head + "<!-- bench:begin -->\n" + table + "\n<!-- bench:end -->\n" + tail)
PY
echo "bench-readme.sh: README.md updated from $src" >&2
