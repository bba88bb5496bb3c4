#!/usr/bin/env bash
# make bench: wall-time overhead of sampling a CPU-bound workload at 1 kHz and 10 kHz per CPU,
# for the floor (same per-CPU events, empty BPF program), hsbpf, perf record and bpftrace.
# Each run under a tool is paired with a run of the workload alone just before it, and the
# overhead is the median of the pairs' ratios: this machine's speed drifts by several percent
# over minutes, more than the overhead at 1 kHz, and pairing cancels the drift.
# Also: hsbpf's handler cost per sample, profile size against perf.data, report time.
set -euo pipefail

HSBPF=${HSBPF:-./hsbpf}
FIX=${FIXTURES:-.output/fixtures}
OUT=${OUTPUT:-.output}/bench
FLOOR=$OUT/floor
REPS=${REPS:-5}
ITERS=${ITERS:-}
RATES=${RATES:-"1000 10000"}
mkdir -p "$OUT"

need() { command -v "$1" >/dev/null || { echo "bench: $1 is missing (scripts/install-deps.sh)" >&2; exit 1; }; }
need perf
need bpftrace
[ "$(id -u)" -eq 0 ] || { echo "bench: run as root" >&2; exit 1; }

old_stats=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -qw kernel.bpf_stats_enabled=1
pids=()
cleanup() {
	for p in "${pids[@]:-}"; do [ -n "$p" ] && kill -INT "$p" 2>/dev/null || true; done
	sysctl -qw kernel.bpf_stats_enabled="$old_stats"
}
trap cleanup EXIT

# SIGINT, then SIGKILL if the tool has not gone within 10 s (bpftrace 0.17 can miss a SIGINT
# that lands while it attaches)
stop() {
	kill -INT "$1" 2>/dev/null || true
	for _ in $(seq 100); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}
now() { date +%s%N; }
workload() { "$FIX/busywork" "$ITERS" 2 >/dev/null; }

# about 2 s of work on this machine
if [ -z "$ITERS" ]; then
	t0=$(now); "$FIX/busywork" 100 2 >/dev/null; t1=$(now)
	ITERS=$(( 200 * 1000000000 / (t1 - t0) ))
	[ "$ITERS" -ge 20 ] || ITERS=20
fi

wait_for() {	# file, pattern: until the tool says it is ready
	for _ in $(seq 200); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done
	echo "bench: tool did not start: $(cat "$1")" >&2; exit 1
}

# run the workload under one tool; prints seconds
measure() {
	local tool=$1 rate=$2 period=$(( 1000000000 / $2 )) pid="" t0 t1 log=$OUT/$1.log
	: >"$log"
	case $tool in
	none) ;;
	floor)
		"$FLOOR" "$period" >"$log" 2>&1 & pid=$!; wait_for "$log" ready ;;
	hsbpf)
		"$HSBPF" record -v -a -c "$period" -o "$OUT/hsbpf-$rate.data" 2>"$log" & pid=$!
		wait_for "$log" "recording" ;;
	perf)
		perf record -q -a -e cpu-clock -c "$period" -o "$OUT/perf-$rate.data" 2>"$log" & pid=$!
		sleep 1.5 ;;
	bpftrace)
		bpftrace -e "profile:hz:$rate { @[pid, reg(\"ip\")] = count(); }" >"$log" 2>&1 & pid=$!
		wait_for "$log" Attaching; sleep 0.5 ;;
	esac
	pids=("$pid")
	t0=$(now); workload; t1=$(now)
	if [ -n "$pid" ]; then stop "$pid"; fi
	pids=()
	echo "$t0 $t1" | awk '{ printf "%.4f\n", ($2 - $1) / 1e9 }'
}

median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

tools="floor hsbpf perf bpftrace"
declare -A ratios alone under
echo "bench: busywork $ITERS M iterations x 2 threads, $REPS rounds, rates: $RATES Hz per CPU" >&2
for r in $(seq "$REPS"); do
	for rate in $RATES; do
		for tool in $tools; do
			b=$(measure none "$rate")
			t=$(measure "$tool" "$rate")
			ratios[$tool-$rate]="${ratios[$tool-$rate]:-} $(awk -v t="$t" -v b="$b" 'BEGIN { printf "%.5f", t / b }')"
			alone[$tool-$rate]="${alone[$tool-$rate]:-} $b"
			under[$tool-$rate]="${under[$tool-$rate]:-} $t"
			echo "  round $r  $rate Hz  $tool  ${t}s (alone ${b}s)" >&2
		done
	done
done

base_rate=${RATES%% *}
handler() {	# ns per run of a BPF program, from its own statistics
	awk -F'[ =]' '/run_cnt/ { if ($2) printf "%.0f", $4 / $2 }' "$1"
}
med_of() { echo "$1" | tr ' ' '\n' | grep . | median; }

{
echo "| rate per CPU | tool | median s alone | median s under tool | overhead (median of paired ratios) | overhead / floor | overhead / perf record |"
echo "|---|---|---|---|---|---|---|"
for rate in $RATES; do
	declare -A ov=()
	for tool in $tools; do
		ov[$tool]=$(awk -v m="$(med_of "${ratios[$tool-$rate]}")" 'BEGIN { printf "%.5f", m - 1 }')
	done
	for tool in $tools; do
		awk -v r="$rate" -v t="$tool" -v a="$(med_of "${alone[$tool-$rate]}")" -v u="$(med_of "${under[$tool-$rate]}")" \
		    -v o="${ov[$tool]}" -v f="${ov[floor]}" -v p="${ov[perf]}" 'BEGIN {
			rf = (f > 0.002) ? sprintf("%.2fx", o / f) : "n/a (floor within noise)";
			rp = (p > 0.002) ? sprintf("%.2fx", o / p) : "n/a (perf within noise)";
			printf "| %d Hz | %s | %.3f | %.3f | %.2f%% | %s | %s |\n", r, t, a, u, 100 * o, rf, rp }'
	done
done
echo
for rate in $RATES; do
	hj=$("$HSBPF" report -i "$OUT/hsbpf-$rate.data" --format json --limit 1)
	hcost=$(echo "$hj" | awk -F'"handler_ns":' '{ split($2, a, ","); ns = a[1] } END { print ns }')
	hruns=$(echo "$hj" | awk -F'"handler_runs":' '{ split($2, a, ","); n = a[1] } END { print n }')
	echo "- $rate Hz: hsbpf handler $(awk -v n="$hcost" -v c="$hruns" 'BEGIN { if (c) printf "%.0f", n / c; else print "?" }') ns per sample over $hruns samples (kernel BPF run-time statistics)"
done
fcost=$(handler "$OUT/floor.log")
echo "- empty program (floor), last run: ${fcost:-?} ns per sample"
hs=$(stat -c %s "$OUT/hsbpf-$base_rate.data"); ps=$(stat -c %s "$OUT/perf-$base_rate.data")
echo "- profile size at $base_rate Hz (one ${ITERS}M-iteration run, whole machine): hsbpf $hs bytes, perf.data $ps bytes ($(awk -v a="$ps" -v b="$hs" 'BEGIN { printf "%.0f", a / b }')x larger)"
t0=$(now); for _ in 1 2 3; do "$HSBPF" report -i "$OUT/hsbpf-$base_rate.data" >/dev/null; done; t1=$(now)
t2=$(now); for _ in 1 2 3; do perf report -i "$OUT/perf-$base_rate.data" --stdio >/dev/null 2>&1; done; t3=$(now)
awk -v a="$t0" -v b="$t1" -v c="$t2" -v d="$t3" 'BEGIN {
	h = (b - a) / 3e9; p = (d - c) / 3e9;
	printf "- report time on that profile: hsbpf report %.3f s, perf report %.3f s (%.1fx)\n", h, p, p / h }'
} | tee "$OUT/results.md"
