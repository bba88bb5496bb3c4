#!/usr/bin/env bash
# A/B of the dwarf handler's cost: two hsbpf binaries, alternated run by run on the same
# workload (bench/deep at DEPTH frames, about SECS seconds of work, 3 by default: a run's mean
# needs thousands of samples, a few of which the shared machine's host stalls), each recording
# --call-graph dwarf at each rate; prints the medians (and all runs) of the stack work's ns per
# unwound sample, timed in the handler while kernel.bpf_stats_enabled is on, as
# make bench-stacks reports it. Paired and repeated, because the machine is shared.
#   bench/stacks_ab.sh OLD_HSBPF NEW_HSBPF   (as root; PAIRS, DEPTH, RATES, SECS, DEEP)
set -euo pipefail
A=$1 B=$2
DEEP=${DEEP:-.output/bench/deep}
PAIRS=${PAIRS:-7}
DEPTH=${DEPTH:-32}
RATES=${RATES:-"1000 10000"}
SECS=${SECS:-3}
OUT=$(mktemp -d)
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -qw kernel.bpf_stats_enabled=1
trap 'sysctl -qw kernel.bpf_stats_enabled="$old_stats"; rm -rf "$OUT"' EXIT

"$DEEP" "$DEPTH" 200 >"$OUT/alone"
ROUNDS=$(awk -v s="$SECS" '/^elapsed_ns / { r = int(s * 200 * 1e9 / $2); print r < 50 ? 50 : r }' "$OUT/alone")

# ns per unwound sample and the share of complete stacks of one profile
numbers() {
	"$1" report -i "$2" --format json --limit 1 | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
e = d.get("stack_ends", {})
user = e.get("samples", 0) - e.get("no_user_stack", 0) - e.get("in_exec", 0)
print("%.0f %.1f" % (d["stack_ns"] / d["stack_samples"], 100.0 * e.get("complete", 0) / user if user else 0))'
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

for rate in $RATES; do
	: >"$OUT/a.$rate"; : >"$OUT/b.$rate"
	for i in $(seq "$PAIRS"); do
		# alternate which goes first
		if [ $((i % 2)) -eq 1 ]; then order="a b"; else order="b a"; fi
		for w in $order; do
			bin=$A; [ "$w" = b ] && bin=$B
			"$bin" record --call-graph dwarf -c $((1000000000 / rate)) -o "$OUT/p" -- "$DEEP" "$DEPTH" "$ROUNDS" >/dev/null 2>&1
			numbers "$bin" "$OUT/p" >>"$OUT/$w.$rate"
		done
	done
	ma=$(awk '{ print $1 }' "$OUT/a.$rate" | median)
	mb=$(awk '{ print $1 }' "$OUT/b.$rate" | median)
	echo "depth $DEPTH, $rate Hz: old $ma ns, new $mb ns per unwound sample (medians of $PAIRS; new/old $(awk -v a="$ma" -v b="$mb" 'BEGIN { printf "%.2f", b / a }'))"
	echo "  old: $(awk '{ printf "%s(%s%%) ", $1, $2 }' "$OUT/a.$rate")"
	echo "  new: $(awk '{ printf "%s(%s%%) ", $1, $2 }' "$OUT/b.$rate")"
done
