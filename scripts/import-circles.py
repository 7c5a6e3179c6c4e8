#!/usr/bin/env python3
"""Import circles in src/: a one-way flow has none.

Reads every `.rs` file of src/ up to its first `#[cfg(test)]` (tests may reach anywhere), finds
the paths it names (`use` lines and paths written inline: `crate::a::b`, `super::x`, `self::y`,
and in the binary `gpuledger::…`), resolves each to the file that defines the module, and looks
for circles at two levels:

  files    a file that names another which (directly or through others) names it back;
  folders  for every folder, the same between its entries (files and subfolders, a subfolder
           standing for everything below it): `analysis/` naming `report/` which names
           `analysis/` is a circle even when no two files form one.

A module's `mod.rs` (or `foo.rs` beside `foo/`) declaring its children with `mod x;` is not an
import; naming a child's item (`pub use x::Y`, `x::Y` in a type) is. Prints each circle with one
line that shows it (`a.rs:12 uses b`) and exits 1 when there is any, 0 otherwise.

    scripts/import-circles.py            # check src/
    scripts/import-circles.py --graph    # also print every edge
"""

import os
import re
import sys
from collections import defaultdict

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
SRC = os.path.join(ROOT, "src")
# The library's crate root and the binary's: `crate::` means a different tree in each.
LIB_ROOT = "lib.rs"
BIN_ROOT = "main.rs"
BIN_DIRS = ("cli", "commands")
BIN_FILES = ("main.rs", "output.rs", "cli.rs")

PATH_RE = re.compile(r"\b(crate|super|self|gpuledger)((?:::[A-Za-z_][A-Za-z0-9_]*)+)")
USE_GROUP_RE = re.compile(r"\buse\s+([^;]+);", re.S)
MOD_DECL_RE = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+([a-z_][a-z0-9_]*)\s*;", re.M)


def strip_comments_and_strings(text):
    """Removes comments, string and char literals (paths in them are not imports)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    if text[i] == "\n":
                        out.append("\n")
                    i += 1
        elif c == "r" and re.match(r'r#*"', text[i:i + 10]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'r(#*)"', text[i:])
            end = '"' + m.group(1)
            j = text.find(end, i + len(m.group(0)))
            j = n if j < 0 else j + len(end)
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append("\n" * text.count("\n", i, j))
            i = j + 1
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", text[i:i + 4]) or text.startswith("'\\u{", i):
            j = text.find("'", i + 1 + (1 if text[i + 1] == "\\" else 0))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def above_tests(text):
    m = re.search(r"^\s*#\[cfg\(test\)\]", text, re.M)
    return text[: m.start()] if m else text


def module_of(rel):
    """`analysis/inventory.rs` -> ['analysis', 'inventory']; `k8s/mod.rs` -> ['k8s']."""
    parts = rel[:-3].split("/")
    if parts[-1] == "mod":
        parts = parts[:-1]
    if parts in (["lib"], ["main"]):
        return []
    return parts


def in_binary(rel):
    return rel in BIN_FILES or rel.split("/")[0] in BIN_DIRS


def collect():
    files = {}
    for dirpath, _, names in os.walk(SRC):
        for name in names:
            if name.endswith(".rs"):
                full = os.path.join(dirpath, name)
                rel = os.path.relpath(full, SRC).replace(os.sep, "/")
                # tests.rs beside a module holds its tests only.
                if name == "tests.rs":
                    continue
                with open(full, encoding="utf-8") as f:
                    files[rel] = f.read()
    return files


def index(files):
    """(binary?, module path tuple) -> file."""
    idx = {}
    for rel in files:
        idx[(in_binary(rel), tuple(module_of(rel)))] = rel
    return idx


def expand_use(tree):
    """Expands a use tree (`a::{b, c::{d, e}}`) into paths."""
    tree = re.sub(r"\s+", "", tree)
    out = []

    def walk(prefix, t):
        if "{" not in t:
            for part in split_top(t):
                out.append(prefix + part)
            return
        for part in split_top(t):
            if "{" in part:
                head, body = part.split("{", 1)
                walk(prefix + head, body[:-1])
            else:
                out.append(prefix + part)

    def split_top(t):
        parts, depth, cur = [], 0, ""
        for ch in t:
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            if ch == "," and depth == 0:
                parts.append(cur)
                cur = ""
            else:
                cur += ch
        if cur:
            parts.append(cur)
        return parts

    walk("", tree)
    return [re.sub(r"\bas\b.*$", "", p) for p in out]


def resolve(rel, path, idx):
    """The file a path names from `rel`, or None (an external crate, a std item)."""
    binary = in_binary(rel)
    here = module_of(rel)
    segs = path.split("::")
    head = segs[0]
    if head == "crate":
        base, rest = [], segs[1:]
    elif head == "gpuledger":
        binary, base, rest = False, [], segs[1:]
    elif head in ("super", "self"):
        base = list(here)
        # In `foo.rs` or `foo/mod.rs` the module is `foo`; `super` is its parent.
        rest = segs
        while rest and rest[0] in ("super", "self"):
            if rest[0] == "super":
                base = base[:-1]
            rest = rest[1:]
    else:
        return None
    best = None
    mod = list(base)
    if (binary, tuple(mod)) in idx:
        best = idx[(binary, tuple(mod))]
    for s in rest:
        mod.append(s)
        f = idx.get((binary, tuple(mod)))
        if f is None:
            break
        best = f
    return best


def edges(files, idx):
    out = defaultdict(dict)  # file -> {target file: line}
    for rel, text in files.items():
        body = strip_comments_and_strings(above_tests(text))
        decls = set(MOD_DECL_RE.findall(body))
        seen = []
        for m in USE_GROUP_RE.finditer(body):
            line = body.count("\n", 0, m.start()) + 1
            for p in expand_use(m.group(1)):
                seen.append((p, line))
        for m in PATH_RE.finditer(body):
            line = body.count("\n", 0, m.start()) + 1
            seen.append((m.group(1) + m.group(2), line))
        # `use foo::Bar` or `foo::bar()` where `foo` is a child declared here.
        for m in USE_GROUP_RE.finditer(body):
            line = body.count("\n", 0, m.start()) + 1
            for p in expand_use(m.group(1)):
                first = p.split("::")[0]
                if first in decls:
                    seen.append(("self::" + p, line))
        for child in decls:
            for m in re.finditer(r"(?<![\w:])" + child + r"((?:::[A-Za-z_][A-Za-z0-9_]*)+)", body):
                line = body.count("\n", 0, m.start()) + 1
                seen.append(("self::" + child + m.group(1), line))
        for p, line in seen:
            target = resolve(rel, p, idx)
            if target and target != rel and target not in out[rel]:
                out[rel][target] = line
    return out


def sccs(nodes, adj):
    index_of, low, stack, on, result = {}, {}, [], set(), []
    counter = [0]

    def strong(v):
        index_of[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(adj.get(v, ())):
            if w not in index_of:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index_of[w])
        if low[v] == index_of[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                result.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index_of:
            strong(v)
    return result


def entry(rel, folder):
    """The entry of `folder` that holds `rel` (a file name or a subfolder), or None outside it."""
    prefix = folder + "/" if folder else ""
    if not rel.startswith(prefix):
        return None
    rest = rel[len(prefix):]
    first = rest.split("/")[0]
    if "/" in rest:
        return first + "/"
    # `foo.rs` beside `foo/` is the same module as the folder.
    stem = first[:-3]
    if os.path.isdir(os.path.join(SRC, prefix + stem)):
        return stem + "/"
    return first


def main():
    graph = "--graph" in sys.argv
    files = collect()
    idx = index(files)
    e = edges(files, idx)
    problems = []
    if graph:
        for a in sorted(e):
            for b, line in sorted(e[a].items()):
                print(f"{a}:{line} -> {b}")
    for comp in sccs(files.keys(), {a: set(b) for a, b in e.items()}):
        shown = [f"{a}:{e[a][b]} uses {b}" for a in comp for b in sorted(e[a]) if b in comp]
        problems.append("files: " + " <-> ".join(comp) + "\n    " + "\n    ".join(shown))
    folders = {""}
    for rel in files:
        parts = rel.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            folders.add("/".join(parts[:i]))
    for folder in sorted(folders):
        adj = defaultdict(set)
        why = {}
        for a, targets in e.items():
            ea = entry(a, folder)
            if ea is None:
                continue
            for b, line in targets.items():
                eb = entry(b, folder)
                if eb is None or ea == eb:
                    continue
                adj[ea].add(eb)
                why.setdefault((ea, eb), f"{a}:{line} uses {b}")
        nodes = set(adj) | {x for s in adj.values() for x in s}
        for comp in sccs(nodes, adj):
            if all(not c.endswith("/") for c in comp):
                continue  # a circle of files only: reported above
            shown = [why[(a, b)] for a in comp for b in sorted(adj[a]) if b in comp]
            name = folder + "/" if folder else "src/"
            problems.append(f"folders in {name}: " + " <-> ".join(comp) + "\n    " + "\n    ".join(shown))
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} import circle(s) in src/")
        return 1
    print("no import circles in src/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
