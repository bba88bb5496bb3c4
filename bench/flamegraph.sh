#!/usr/bin/env bash
# make bench-flamegraph: the flame graph of 100,000 distinct stacks: how long hsbpf takes to
# write it (beside report --format folded on the same profile, the baseline of resolving
# every frame), the page's size, and how long headless chromium takes to open it, beside a
# 7-frame page (what opening any page costs on this machine). Two profiles: random stacks
# of realistic fan-out, and the worst case for the page (every frame just wide enough).
set -euo pipefail

HSBPF=${HSBPF:-./hsbpf}
GEN=${GEN:-.output/tests/flame-fixtures}
OUT=${OUTPUT:-.output}/bench/flamegraph
N=${N:-100000}
RUNS=${RUNS:-5}
mkdir -p "$OUT/random" "$OUT/worst" "$OUT/small"
OUT=$(cd "$OUT" && pwd)
HERE=$(cd "$(dirname "$0")/.." && pwd)

"$GEN" "$OUT/random" --big "$N"
"$GEN" "$OUT/worst" --big-worst "$N"
"$GEN" "$OUT/small"
echo "# load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
for kind in random worst; do
	d=$OUT/$kind
	/usr/bin/time -f "$kind: report --format folded %U s CPU, %M KB" "$HSBPF" report -i "$d/big.data" \
		--format folded >/dev/null
	/usr/bin/time -f "$kind: flamegraph %U s CPU, %M KB" "$HSBPF" flamegraph -i "$d/big.data" \
		-o "$d/big.html"
	"$HSBPF" flamegraph -i "$d/big.data" -o "$d/big.svg" 2>/dev/null
	echo "$kind: html $(stat -c %s "$d/big.html") bytes, svg $(stat -c %s "$d/big.svg") bytes"
done
"$HSBPF" flamegraph -i "$OUT/small/base.data" -o "$OUT/small/small.html" 2>/dev/null
cd "$HERE/tests/browser"
for page in "$OUT/small/small.html" "$OUT/random/big.html" "$OUT/worst/big.html"; do
	node load-time.mjs "$page" "$RUNS"
done
