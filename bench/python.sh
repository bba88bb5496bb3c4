#!/usr/bin/env bash
# make bench-python: what Python's frames cost (docs/python.md). Debian's python3.11 runs a
# fixed amount of work at the bottom of 32 Python frames (tests/fixtures/python/pywork.py
# fixed: rec() 31 deep, then leaf()), recorded with -g at 99 Hz and 999 Hz with
# --python-frames=off (native frames only) and interleave, in pairs, alternated, REPS times.
# For each: the workload's own time (median, and the ratio of interleave's to off's, paired
# runs), and the BPF handler's stack cost per sample from the kernel's run-time statistics
# (STATS stack_ns / stack_samples), with its ratio. Then the same at VERSION_RATES for each
# pyenv build of 3.10-3.13 installed (VERSIONS="" for none): the per-sample cost per version.
set -euo pipefail

HSBPF=${HSBPF:-./hsbpf}
OUT=${OUTPUT:-.output}/bench/python
PY=${PY:-/usr/bin/python3.11}
WORK=${WORK:-tests/fixtures/python/pywork.py}
REPS=${REPS:-5}
ROUNDS=${ROUNDS:-15000}
RATES=${RATES:-"99 999"}
VERSIONS=${VERSIONS-"3.10 3.11 3.12 3.13"}
VERSION_RATES=${VERSION_RATES:-999}
PYENV=${PYENV:-/root/.pyenv/versions}
mkdir -p "$OUT"
[ -x "$PY" ] || { echo "bench: $PY is missing (scripts/install-deps.sh)" >&2; exit 1; }

old_stats=$(sysctl -n kernel.bpf_stats_enabled)
trap 'sysctl -q -w kernel.bpf_stats_enabled=$old_stats' EXIT
sysctl -q -w kernel.bpf_stats_enabled=1

stat_of() { grep -a -o "^$2=[0-9]*" "$1" | head -1 | cut -d= -f2; }
median() { sort -g | awk '{a[NR] = $1} END {print NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

# one run: the workload's seconds and the handler's stack ns per sample
run() {
	local py=$1 rate=$2 mode=$3 prof="$OUT/$2-$3.prof" secs
	secs=$("$HSBPF" record -g -F "$rate" --python-frames="$mode" -o "$prof" -- "$py" "$WORK" fixed "$ROUNDS" 2>/dev/null)
	local ns n
	ns=$(stat_of "$prof" stack_ns)
	n=$(stat_of "$prof" stack_samples)
	echo "$secs $(awk -v a="$ns" -v b="$n" 'BEGIN {print b ? a / b : 0}')"
}

# one interpreter at the given rates: off and interleave in alternated pairs, their medians
bench() {
	local label=$1 py=$2 rates=$3 rate so no si ni rs rn
	for rate in $rates; do
		: >"$OUT/$rate.pairs"
		for _ in $(seq "$REPS"); do
			read -r so no < <(run "$py" "$rate" off)
			read -r si ni < <(run "$py" "$rate" interleave)
			echo "$so $no $si $ni" >>"$OUT/$rate.pairs"
		done
		so=$(awk '{print $1}' "$OUT/$rate.pairs" | median)
		no=$(awk '{print $2}' "$OUT/$rate.pairs" | median)
		si=$(awk '{print $3}' "$OUT/$rate.pairs" | median)
		ni=$(awk '{print $4}' "$OUT/$rate.pairs" | median)
		rs=$(awk '{print $3 / $1}' "$OUT/$rate.pairs" | median)
		rn=$(awk '{print $2 ? $4 / $2 : 0}' "$OUT/$rate.pairs" | median)
		printf '%-14s %-6s %-11s %10.3f %10s %12.0f %10s\n' "$label" "$rate" off "$so" 1 "$no" 1
		printf '%-14s %-6s %-11s %10.3f %10.3f %12.0f %10.2f\n' "$label" "$rate" interleave "$si" "$rs" "$ni" "$rn"
	done
}

printf '%-14s %-6s %-11s %10s %10s %12s %10s\n' python rate mode "secs" "x off" "ns/sample" "x off"
bench "$(basename "$PY")" "$PY" "$RATES"
for v in $VERSIONS; do
	py=$(ls -d "$PYENV/$v".*/bin/"python$v" 2>/dev/null | head -1 || true)
	if [ -z "$py" ]; then
		echo "bench: no pyenv build of $v under $PYENV: not measured" >&2
		continue
	fi
	bench "pyenv $(basename "$(dirname "$(dirname "$py")")")" "$py" "$VERSION_RATES"
done
