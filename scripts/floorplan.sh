#!/usr/bin/env bash
# Measure the code's floor plan: files per folder, functions over 80 lines, pairs of
# duplicated code, and the include graph between modules (cycles, and edges from the
# product into the accuracy harness). Run before and after a reorganization.
#   scripts/floorplan.sh
set -euo pipefail
cd "$(dirname "$0")/.."

echo "## files per folder (.c and .h)"
git ls-files 'user/*.[ch]' 'user/**/*.[ch]' 'bpf/*.[ch]' 'ref/*.[ch]' |
	xargs -n1 dirname | sort | uniq -c | awk '{ printf "%5d %s\n", $1, $2 }'

echo "## functions over 80 lines (body, brace to brace)"
git ls-files 'user/*.c' 'user/**/*.c' 'bpf/*.c' 'ref/*.c' | xargs awk '
	FNR == 1 { name = "" }
	/^[a-zA-Z_].*\(/ && !/;[ \t]*$/ { sig = $0 }
	/^\{/ { start = FNR; name = sig }
	/^\}/ && name != "" {
		n = FNR - start - 1
		if (n > 80) { sub(/\(.*/, "", name); sub(/.*[ *]/, "", name); printf "%5d %s:%s\n", n, FILENAME, name }
		name = ""
	}' | sort -rn | tee /tmp/floorplan.long
echo "total: $(wc -l < /tmp/floorplan.long)"

echo "## pairs of duplicated code (six lines or more)"
if command -v duplicates > /dev/null; then
	duplicates --most 1 --seconds 120 | sed -n 1p
	duplicates --most 200 --seconds 120 --repo user | sed -n 1p | sed 's/^/user\/ only: /'
fi

echo "## include graph between modules"
python3 - <<'PY'
import os, re, subprocess, sys
files = subprocess.run(["git", "ls-files", "user", "bpf"], capture_output=True, text=True).stdout.split()
files = [f for f in files if f.endswith((".c", ".h"))]
def mod(path):
    return os.path.splitext(path)[0]
heads = {os.path.basename(f): f for f in files if f.endswith(".h")}
edges = {}
for f in files:
    src = mod(f)
    for line in open(f, errors="replace"):
        m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
        if not m:
            continue
        inc = os.path.normpath(os.path.join(os.path.dirname(f), m.group(1)))
        if inc not in files:
            inc = heads.get(os.path.basename(m.group(1)))
            if inc is None:
                continue
        dst = mod(inc)
        if dst != src:
            edges.setdefault(src, set()).add(dst)
# cycles: strongly connected components with more than one module
index, low, stack, on, sccs, n = {}, {}, [], set(), [], [0]
sys.setrecursionlimit(10000)
def visit(v):
    index[v] = low[v] = n[0]; n[0] += 1; stack.append(v); on.add(v)
    for w in edges.get(v, ()):
        if w not in index:
            visit(w); low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop(); on.discard(w); comp.append(w)
            if w == v: break
        if len(comp) > 1: sccs.append(sorted(comp))
for v in list(edges):
    if v not in index: visit(v)
print("cycles:", len(sccs))
for c in sccs: print("  ", " -> ".join(c))
acc = [(s, d) for s, ds in edges.items() for d in ds
       if "/accuracy/" in d + "/" and "/accuracy/" not in s + "/"]
print("product -> accuracy edges:", len(acc))
for s, d in sorted(acc): print("  ", s, "->", d)
# the same between folders (floors)
fe = {}
for s, ds in edges.items():
    for d in ds:
        a, b = os.path.dirname(s), os.path.dirname(d)
        if a != b:
            fe.setdefault(a, {}).setdefault(b, []).append((s, d))
print("folder edges:")
for a in sorted(fe):
    print("  ", a, "->", ", ".join(sorted(fe[a])))
back = [(a, b) for a in fe for b in fe[a] if a in fe.get(b, {})]
print("folder pairs that include each other:", len(back) // 2)
for a, b in sorted(back):
    if a < b:
        print("  ", a, "<->", b, ":", "; ".join(f"{s}->{d}" for s, d in fe[a][b][:3]), "|",
              "; ".join(f"{s}->{d}" for s, d in fe[b][a][:3]))
PY
