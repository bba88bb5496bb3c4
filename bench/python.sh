#!/usr/bin/env bash
# make bench-python: what Python's frames cost (docs/python.md). Debian's python3.11 runs a
# fixed amount of work at the bottom of 32 Python frames (tests/fixtures/python/pywork.py
# fixed: rec() 31 deep, then leaf()), recorded with -g at 99 Hz and 999 Hz with
# --python-frames=off (native frames only) and interleave, in pairs, alternated, REPS times.
# For each: the workload's own time (median, and the ratio of interleave's to off's, paired
# runs), and the BPF handler's stack cost per sample from the kernel's run-time statistics
# (STATS stack_ns / stack_samples), with its ratio.
set -euo pipefail

HSBPF=${HSBPF:-./hsbpf}
OUT=${OUTPUT:-.output}/bench/python
PY=${PY:-/usr/bin/python3.11}
WORK=${WORK:-tests/fixtures/python/pywork.py}
REPS=${REPS:-5}
ROUNDS=${ROUNDS:-15000}
RATES=${RATES:-"99 999"}
mkdir -p "$OUT"
[ -x "$PY" ] || { echo "bench: $PY is missing (scripts/install-deps.sh)" >&2; exit 1; }

old_stats=$(sysctl -n kernel.bpf_stats_enabled)
trap 'sysctl -q -w kernel.bpf_stats_enabled=$old_stats' EXIT
sysctl -q -w kernel.bpf_stats_enabled=1

stat_of() { grep -a -o "^$2=[0-9]*" "$1" | head -1 | cut -d= -f2; }
median() { sort -g | awk '{a[NR] = $1} END {print NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

# one run: the workload's seconds and the handler's stack ns per sample
run() {
	local rate=$1 mode=$2 prof="$OUT/$1-$2.prof" secs
	secs=$("$HSBPF" record -g -F "$rate" --python-frames="$mode" -o "$prof" -- "$PY" "$WORK" fixed "$ROUNDS" 2>/dev/null)
	local ns n
	ns=$(stat_of "$prof" stack_ns)
	n=$(stat_of "$prof" stack_samples)
	echo "$secs $(awk -v a="$ns" -v b="$n" 'BEGIN {print b ? a / b : 0}')"
}

printf '%-6s %-11s %10s %10s %12s %10s\n' rate mode "secs" "x off" "ns/sample" "x off"
for rate in $RATES; do
	: >"$OUT/$rate.pairs"
	for _ in $(seq "$REPS"); do
		read -r so no < <(run "$rate" off)
		read -r si ni < <(run "$rate" interleave)
		echo "$so $no $si $ni" >>"$OUT/$rate.pairs"
	done
	so=$(awk '{print $1}' "$OUT/$rate.pairs" | median)
	no=$(awk '{print $2}' "$OUT/$rate.pairs" | median)
	si=$(awk '{print $3}' "$OUT/$rate.pairs" | median)
	ni=$(awk '{print $4}' "$OUT/$rate.pairs" | median)
	rs=$(awk '{print $3 / $1}' "$OUT/$rate.pairs" | median)
	rn=$(awk '{print $2 ? $4 / $2 : 0}' "$OUT/$rate.pairs" | median)
	printf '%-6s %-11s %10.3f %10s %12.0f %10s\n' "$rate" off "$so" 1 "$no" 1
	printf '%-6s %-11s %10.3f %10.3f %12.0f %10.2f\n' "$rate" interleave "$si" "$rs" "$ni" "$rn"
done
