#!/usr/bin/env bash
# The "unbiased by default" issue's case, measured: a program built without frame pointers
# whose loop calls one leaf through three paths, directly, through an extra frame and through
# libc's qsort comparator (`callpaths three`, tests/fixtures/stacks/callpaths.c), recorded with
# record -g -F 999 in fixed, phase (the default) and random mode, the modes alternated, REPS
# recordings each. Each path's share of the leaf's samples (weighed by their periods) with a
# 95% interval over the recordings, against the exact split of the leaf's instructions from
# hsbpf truth's calling-context tree. Prints markdown.
#   HSBPF=... FIXTURES=... bench/period_paths.sh     (PART=paths make bench-periods)
# Environment: PATHS_REPS (default 5), PATHS_SECONDS (CPU seconds per recording, default 3).
set -euo pipefail

hsbpf=${HSBPF:?}
fixtures=${FIXTURES:?}
here=$(cd "$(dirname "$0")" && pwd)
reps=${PATHS_REPS:-5}
secs=${PATHS_SECONDS:-3}
prog=$fixtures/stacks/callpaths
tmp=$(mktemp -d /tmp/hsbpf-period-paths-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# the path of a leaf frame from the frames under it (callers, innermost first), as a stack
# of names; prints "direct extra qsort other" shares
classify='
def path(callers):
    for f in callers:
        if f == "by_value":
            return "qsort"
        if f == "mid_a":
            return "extra"
        if f == "path_b":
            return "direct"
    return "other"

def shares(w):
    t = sum(w.values()) or 1
    return " ".join("%.6f" % (w.get(k, 0) / t) for k in ("direct", "extra", "qsort", "other"))
'

# the exact split: the leaf's own instructions in each calling context
"$hsbpf" truth -o "$tmp/t.truth" -- "$prog" three 0.3 >/dev/null 2>"$tmp/truth.log" ||
	{ cat "$tmp/truth.log" >&2; exit 1; }
"$hsbpf" truth -i "$tmp/t.truth" --what cct > "$tmp/cct"
exact=$(python3 -c "$classify"'
import sys
parent, name, self_ = {}, {}, {}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) < 11 or f[0] != "cct":
        continue
    node = (f[1], f[2])
    parent[node] = (f[1], f[3]) if f[3] != "-" else None
    name[node], self_[node] = f[10], int(f[6])
w = {}
for node, n in name.items():
    if n != "leaf":
        continue
    callers, p = [], parent[node]
    while p in name:
        callers.append(name[p])
        p = parent[p]
    k = path(callers)
    w[k] = w.get(k, 0) + self_[node]
print(shares(w))' "$tmp/cct")

# one recording's shares, from its stacks (script --aggregate: one block per stack, its
# period field the stack's total period)
record_shares() {
	"$hsbpf" record -g -F 999 --period-mode "$1" -o "$tmp/r.data" -- "$prog" three "$secs" \
		>/dev/null 2>"$tmp/record.log" || { cat "$tmp/record.log" >&2; return 1; }
	"$hsbpf" script --aggregate -i "$tmp/r.data" | python3 -c "$classify"'
import re, sys
w, period, frames = {}, 0, []

def block():
    names = [re.sub(r"\+0x[0-9a-f]+$", "", f) for f in frames]
    if "leaf" in names:
        k = path(names[names.index("leaf") + 1:])
        w[k] = w.get(k, 0) + period

for line in sys.stdin:
    if not line.strip():
        block()
        frames = []
    elif not line.startswith("\t"):
        period = int(line.split(":")[1].split()[0])
    else:
        frames.append(line.split()[1])
block()
print(shares(w))'
}

modes=(fixed phase random)
for m in "${modes[@]}"; do : > "$tmp/$m"; done
for r in $(seq 0 $(( reps - 1 ))); do
	for i in 0 1 2; do
		m=${modes[$(( (i + r) % 3 ))]}
		record_shares "$m" >> "$tmp/$m"
	done
done

read -r ed ee eq _ <<< "$exact"
pct() { awk -v v="$1" 'BEGIN { printf "%.1f", 100 * v }'; }
echo "| mode | direct (exact $(pct "$ed")%) | extra frame (exact $(pct "$ee")%) | qsort comparator (exact $(pct "$eq")%) | leaf samples on no known path | qsort: each recording |"
echo "|---|---|---|---|---|---|"
for m in "${modes[@]}"; do
	row="| $m"
	for col in 1 2 3 4; do
		# shellcheck disable=SC2046
		read -r mean lo hi _ < <(python3 "$here/ci.py" mean $(cut -d' ' -f"$col" "$tmp/$m"))
		row+=$(awk -v m="$mean" -v l="$lo" -v h="$hi" \
			'BEGIN { printf " | %.1f%% [%.1f, %.1f]", 100 * m, 100 * l, 100 * h }')
	done
	row+=" | $(awk '{ printf "%.1f ", 100 * $3 }' "$tmp/$m")|"
	echo "$row"
done
echo
echo "Command: PART=paths make bench-periods (PATHS_REPS=$reps PATHS_SECONDS=$secs; record -g -F 999 -- callpaths three $secs), $(date -u +%Y-%m-%d), $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg) at the end, kernel $(uname -r)"
