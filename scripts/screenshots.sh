#!/usr/bin/env bash
# Regenerates the README's pictures from real output, as the marked facts regenerate its figures:
# no picture that the code no longer produces.
#
#   docs/images/pr-comment.png          the pull-request comment the demo prints (scripts/demo.sh:
#                                       `gpuledger check --format markdown` of its change, with its
#                                       Prometheus), rendered as GitHub renders it: cmark-gfm
#   docs/images/inventory-terminal.png  the demo (scripts/demo.sh) in an 80-column terminal (tmux):
#                                       the first screens of its inventory, colours and all
#   docs/images/trend.png               `gpuledger trend --format markdown` on the demo's Prometheus
#                                       (scripts/demo.sh), its mermaid chart drawn by mermaid itself
#
# Needs what the test suite does not, so CI does not install it: cmark-gfm, tmux and chromium
# (Debian: apt-get install cmark-gfm tmux chromium) and npm, which fetches mermaid into
# target/screenshots/ (pinned below). Look at the pictures before committing them.
set -euo pipefail
cd "$(dirname "$0")/.."

MERMAID_VERSION=11.17.2
say() { printf '==> %s\n' "$*" >&2; }
for tool in cmark-gfm tmux chromium npm git python3; do
    command -v "$tool" >/dev/null || { say "$tool is not installed (Debian: apt-get install cmark-gfm tmux chromium npm)"; exit 2; }
done

work=$(pwd)/target/screenshots
mkdir -p "$work" docs/images
if [ ! -f "$work/node_modules/mermaid/package.json" ] ||
    ! grep -q "\"version\": \"$MERMAID_VERSION\"" "$work/node_modules/mermaid/package.json"; then
    say "installing mermaid $MERMAID_VERSION from npm into $work"
    npm install --silent --prefix "$work" "mermaid@$MERMAID_VERSION" >/dev/null
fi
tmp=$(mktemp -d)
session=gpuledger-screenshots-$$
cleanup() {
    tmux kill-session -t "$session" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT

# An HTML page, as GitHub shows a comment or a file: its markdown through cmark-gfm (with the
# extensions github.com enables), GitHub's light colours, mermaid blocks drawn by mermaid.
page() { # markdown html width
    {
        cat <<EOF
<!doctype html><html><head><meta charset="utf-8">
<script src="$work/node_modules/mermaid/dist/mermaid.min.js"></script>
<style>
body { margin: 0; background: #fff; }
.box { width: $3px; margin: 16px; border: 1px solid #d1d9e0; border-radius: 6px; padding: 16px 24px;
  font: 14px/1.5 -apple-system, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif; color: #1f2328; }
h2 { font-size: 1.5em; border-bottom: 1px solid #d1d9e0; padding-bottom: .3em; margin: 0 0 16px; }
h3 { font-size: 1.25em; margin: 24px 0 16px; }
table { border-collapse: collapse; margin: 0 0 16px; display: block; overflow: auto; }
th, td { border: 1px solid #d1d9e0; padding: 6px 13px; }
th { font-weight: 600; } tr:nth-child(2n) { background: #f6f8fa; }
code { font: 85% ui-monospace, SFMono-Regular, Menlo, monospace; background: #eff1f3; padding: .2em .4em; border-radius: 6px; }
p, ul, details { margin: 0 0 16px; } em { color: #59636e; }
blockquote { margin: 0 0 16px; padding: 0 1em; color: #59636e; border-left: .25em solid #d1d9e0; }
summary { cursor: pointer; }
pre.mermaid { background: none; text-align: center; }
</style></head><body><div class="box">
EOF
        # mermaid blocks become <pre class="mermaid"> for mermaid.run, as GitHub draws them.
        cmark-gfm --unsafe --extension table --extension autolink --extension strikethrough \
            --extension tasklist "$1" |
            python3 -c 'import html, re, sys
t = sys.stdin.read()
print(re.sub(r"<pre><code class=\"language-mermaid\">(.*?)</code></pre>",
             lambda m: "<pre class=\"mermaid\">" + m.group(1) + "</pre>", t, flags=re.S))'
        cat <<'EOF'
</div><script>
// Folded sections shown open: the picture shows what a reader sees on a click.
document.querySelectorAll("details").forEach((d) => { d.open = true; });
mermaid.initialize({ startOnLoad: false, theme: "default" });
mermaid.run().finally(() => {
  const box = document.querySelector(".box").getBoundingClientRect();
  document.title = "height:" + Math.ceil(box.bottom + 16);
});
</script></body></html>
EOF
    } >"$2"
}

# A picture of an HTML page, cut to its height (measured by a first, headless run).
shoot() { # html png width
    local height
    height=$(chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --virtual-time-budget=10000 \
        --window-size="$3,200" --dump-dom "file://$1" 2>/dev/null | sed -n 's/.*<title>height:\([0-9]*\)<\/title>.*/\1/p')
    [ -n "$height" ] || { say "could not measure $1"; exit 1; }
    chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --virtual-time-budget=10000 \
        --window-size="$3,$height" --screenshot="$2" "file://$1" 2>/dev/null
    say "wrote $2 (${3}x$height)"
}

# The demo, as markdown: its pull-request comment, its trend and docs/demo.md come from this run.
say "the demo as markdown (scripts/demo.sh --format markdown)"
scripts/demo.sh --format markdown --out "$tmp/demo" >/dev/null 2>&1

# 1. The pull-request comment: the demo's pull request (two more decode replicas of the chat
# model, checked against the demo fleet and its Prometheus), as GitHub renders the comment.
say "the pull-request comment (the demo's gpuledger check)"
page "$tmp/demo/check" "$tmp/comment.html" 860
shoot "$tmp/comment.html" docs/images/pr-comment.png 942

# 2. The demo in an 80-column terminal: tmux runs scripts/demo.sh (the README's demo command), and
# its screen (with colours) is drawn as a terminal draws it: the first screens of the inventory.
say "the terminal inventory (scripts/demo.sh in tmux, 80 columns)"
rows=56
tmux new-session -d -s "$session" -x 80 -y 400 "scripts/demo.sh 2>&1; touch '$tmp/done'; sleep 600"
for _ in $(seq 1 600); do
    [ -f "$tmp/done" ] && break
    sleep 1
done
[ -f "$tmp/done" ] || { say "scripts/demo.sh did not finish in tmux"; exit 1; }
# The demo opens with check and drift; the picture is its inventory, from its heading on.
tmux capture-pane -t "$session" -p -e -S - -E - |
    awk -v rows="$rows" '/==> gpuledger inventory --prometheus/ { on = 1 } on && n++ < rows' >"$tmp/terminal.ansi"
[ -s "$tmp/terminal.ansi" ] || { say "the demo printed no inventory in tmux"; exit 1; }
python3 - "$tmp/terminal.ansi" "$tmp/terminal.html" <<'EOF'
import html, re, sys
src, dst = sys.argv[1:3]
out, bold, red = [], False, False
for part in re.split(r"(\x1b\[[0-9;]*m)", open(src).read().rstrip("\n")):
    m = re.fullmatch(r"\x1b\[([0-9;]*)m", part)
    if m:
        for code in (m.group(1) or "0").split(";"):
            bold = True if code == "1" else False if code in ("0", "22") else bold
            red = True if code == "31" else False if code in ("0", "39") else red
        continue
    if part:
        style = ("font-weight:bold;" if bold else "") + ("color:#ff6b6b;" if red else "")
        text = html.escape(part)
        out.append(f'<span style="{style}">{text}</span>' if style else text)
open(dst, "w").write(f"""<!doctype html><html><head><meta charset="utf-8"><style>
body {{ margin: 0; background: #fff; }}
.term {{ display: inline-block; margin: 16px; border-radius: 8px; background: #1e1e1e; color: #e6e6e6;
  box-shadow: 0 2px 8px rgba(0,0,0,.25); }}
.bar {{ height: 28px; border-radius: 8px 8px 0 0; background: #3a3a3a; color: #bbb; font: 13px sans-serif;
  line-height: 28px; text-align: center; }}
pre {{ margin: 0; padding: 10px 14px; font: 14px/1.35 "DejaVu Sans Mono", monospace; width: 80ch; }}
</style></head><body><div class="term"><div class="bar">scripts/demo.sh — 80×{len(open(src).read().splitlines())}</div><pre>{''.join(out)}</pre></div>
<script>document.title = "height:" + Math.ceil(document.querySelector(".term").getBoundingClientRect().bottom + 16);</script></body></html>""")
EOF
shoot "$tmp/terminal.html" docs/images/inventory-terminal.png 760

# 3. The trend on the demo's Prometheus, as markdown with its chart.
say "the trend (the demo's, as markdown)"
page "$tmp/demo/trend" "$tmp/trend.html" 860
shoot "$tmp/trend.html" docs/images/trend.png 942

# 4. docs/demo.md: the demo's whole output, as markdown (GitHub draws its charts).
{
    cat <<'HEAD'
# The demo's output

What `scripts/demo.sh --format markdown` printed — the pull-request comment of the demo's change,
the drift in both directions, the inventory with GPUs really used, serving headroom and cost per
verified outcome, the trend with its runway, and the per-node view — written by
`scripts/screenshots.sh`. The servers' addresses and the dates are those of the run that wrote
it; the figures are the same on every run (`scripts/demo.sh --check` checks them against
`fixtures/demo/expected.json`).

HEAD
    for part in check drift inventory trend nodes; do
        cat "$tmp/demo/$part"
        echo
    done
} >docs/demo.md
say "wrote docs/demo.md"
