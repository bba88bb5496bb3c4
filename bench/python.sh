#!/usr/bin/env bash
# make bench-python: what Python's frames cost (docs/python.md). Debian's python3.11 runs a
# fixed amount of work at the bottom of 32 Python frames (tests/fixtures/python/pywork.py
# fixed: rec() 31 deep, then leaf()), recorded with -g at 99 Hz and 999 Hz with
# --python-frames=off (native frames only) and interleave, in pairs, alternated, REPS times.
# For each: the workload's own time (median, and the ratio of interleave's to off's, paired
# runs), and the BPF handler's stack cost per sample from the kernel's run-time statistics
# (STATS stack_ns / stack_samples), with its ratio. Then the same at VERSION_RATES for each
# pyenv build of 3.10-3.13 installed (VERSIONS="" for none): the per-sample cost per version.
# BASELINE=path/to/another/hsbpf: its interleave run beside each pair (a third run, alternated),
# its row "base" with the same ratios to off; and a code object's address reused
# (tests/fixtures/python/pyreuse.py, alpha() then bravo() at one address, 999 Hz, REPS runs
# each, alternated): the stack ns/sample of each binary, the reused address's stacks going the
# kernel's slow path (docs/python.md, Limits: Reused addresses) in one and not the other.
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
BASELINE=${BASELINE:-}
REUSE=${REUSE:-tests/fixtures/python/pyreuse.py}
mkdir -p "$OUT"
[ -x "$PY" ] || { echo "bench: $PY is missing (scripts/install-deps.sh)" >&2; exit 1; }

old_stats=$(sysctl -n kernel.bpf_stats_enabled)
trap 'sysctl -q -w kernel.bpf_stats_enabled=$old_stats' EXIT
sysctl -q -w kernel.bpf_stats_enabled=1

stat_of() { grep -a -o "^$2=[0-9]*" "$1" | head -1 | cut -d= -f2; }
median() { sort -g | awk '{a[NR] = $1} END {print NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

# one run: the workload's seconds and the handler's stack ns per sample (BIN: which hsbpf)
run() {
	local py=$1 rate=$2 mode=$3 prof="$OUT/$2-$3.prof" secs
	secs=$("${BIN:-$HSBPF}" record -g -F "$rate" --python-frames="$mode" -o "$prof" -- "$py" "$WORK" fixed "$ROUNDS" 2>/dev/null)
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
			sb=0 nb=0
			[ -z "$BASELINE" ] || read -r sb nb < <(BIN=$BASELINE run "$py" "$rate" interleave)
			echo "$so $no $si $ni $sb $nb" >>"$OUT/$rate.pairs"
		done
		so=$(awk '{print $1}' "$OUT/$rate.pairs" | median)
		no=$(awk '{print $2}' "$OUT/$rate.pairs" | median)
		si=$(awk '{print $3}' "$OUT/$rate.pairs" | median)
		ni=$(awk '{print $4}' "$OUT/$rate.pairs" | median)
		rs=$(awk '{print $3 / $1}' "$OUT/$rate.pairs" | median)
		rn=$(awk '{print $2 ? $4 / $2 : 0}' "$OUT/$rate.pairs" | median)
		printf '%-14s %-6s %-11s %10.3f %10s %12.0f %10s\n' "$label" "$rate" off "$so" 1 "$no" 1
		printf '%-14s %-6s %-11s %10.3f %10.3f %12.0f %10.2f\n' "$label" "$rate" interleave "$si" "$rs" "$ni" "$rn"
		[ -n "$BASELINE" ] || continue
		printf '%-14s %-6s %-11s %10.3f %10.3f %12.0f %10.2f\n' "$label" "$rate" "base" \
			"$(awk '{print $5}' "$OUT/$rate.pairs" | median)" "$(awk '{print $5 / $1}' "$OUT/$rate.pairs" | median)" \
			"$(awk '{print $6}' "$OUT/$rate.pairs" | median)" "$(awk '{print $2 ? $6 / $2 : 0}' "$OUT/$rate.pairs" | median)"
	done
}

# a reused address: pyreuse.py's stack ns per sample with one hsbpf (BIN)
reuse_run() {
	local prof="$OUT/reuse.prof" ns n
	"${BIN:-$HSBPF}" record -g -F 999 -o "$prof" -- "$PY" "$REUSE" "$OUT/reuse.out" 1.2 0.8 >/dev/null 2>&1
	ns=$(stat_of "$prof" stack_ns)
	n=$(stat_of "$prof" stack_samples)
	awk -v a="$ns" -v b="$n" 'BEGIN {print b ? a / b : 0}'
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
if [ -n "$BASELINE" ]; then
	: >"$OUT/reuse.pairs"
	for _ in $(seq "$REPS"); do
		echo "$(reuse_run) $(BIN=$BASELINE reuse_run)" >>"$OUT/reuse.pairs"
	done
	printf 'reused address (%s, 999 Hz): stack ns/sample %.0f, base %.0f, x base %.2f\n' \
		"$(basename "$REUSE")" "$(awk '{print $1}' "$OUT/reuse.pairs" | median)" \
		"$(awk '{print $2}' "$OUT/reuse.pairs" | median)" \
		"$(awk '{print $2 ? $1 / $2 : 0}' "$OUT/reuse.pairs" | median)"
fi
