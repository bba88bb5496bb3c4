#!/usr/bin/env bash
# What randomized periods deliver: hot7030 recorded with --period-mode random at several base
# periods, alone and beside CPU hogs on every other core, REPS times each; every interval from
# the -v log, against its draw. Prints one table row per (period, load).
#   HSBPF=... FIXTURES=... bench/periods.sh      (make bench-periods)
# Then the default (phase) against fixed and random on the phaselock fixture, a loop in step
# with the 999 Hz period that spends half of it in pl_a: pl_a's share, and the CPU each sample
# costs (the handler's, from the kernel's BPF statistics, plus the restart or re-arm thread's).
# Then the modes' cost as programs see it (bench/period_cost.sh), the issue's three call paths
# under each mode (bench/period_paths.sh) and prime against random on fragmented, repeated
# (bench/period_noise.sh): PART=cost, paths or noise runs one of them alone.
# Environment: PERIODS (ns, default "1000000 500000 200000"), REPS (default 3), SECONDS_CPU (2),
# PART (all, intervals, phase, cost, paths or noise), PHASE_SECONDS (10), GAPS (phase's mean
# restart gaps to sweep, ns, default "250000000"); the other scripts' own, in their heads.
set -euo pipefail

hsbpf=${HSBPF:?}
fixtures=${FIXTURES:?}
periods=${PERIODS:-1000000 500000 200000}
reps=${REPS:-3}
secs=${SECONDS_CPU:-2}
tmp=$(mktemp -d /tmp/hsbpf-periods-XXXXXX)
hogs=()

stop_hogs() {
	for p in "${hogs[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null || true
	hogs=()
}
trap 'stop_hogs; rm -rf "$tmp"' EXIT
part=${PART:-all}
here=$(cd "$(dirname "$0")" && pwd)
case $part in
cost|paths|noise) exec "$here/period_$part.sh" ;;
all|intervals|phase) ;;
*) echo "bench: PART is all, intervals, phase, cost, paths or noise, not '$part'" >&2; exit 2 ;;
esac

# the target's armed intervals (a re-arm aimed at them) of one or more -v logs, as
# "measured |measured - drawn|" lines
armed() {
	sed -n '/debug: interval cpu=.* target=1/{/ drawn=-/d;s/.* measured=\([0-9]*\) drawn=\([0-9]*\) .*/\1 \2/p}' "$@" |
		awk '{ print $1, ($1 > $2 ? $1 - $2 : $2 - $1) }'
}

# value at quantile q of a sorted column file
quantile() {
	awk -v q="$2" '{ v[NR] = $1 } END { print NR ? v[int(q * (NR - 1)) + 1] : 0 }' "$1"
}

# n, mean and quartiles of measured/base, |measured - drawn| median/p90/p99 (us), share short
# and long of the window
summarize() {
	local base=$1
	shift
	armed "$@" > "$tmp/armed"
	cut -d' ' -f1 "$tmp/armed" | sort -n > "$tmp/m"
	cut -d' ' -f2 "$tmp/armed" | sort -n > "$tmp/e"
	awk -v base="$base" -v q1="$(quantile "$tmp/m" .25)" -v q2="$(quantile "$tmp/m" .5)" \
		-v q3="$(quantile "$tmp/m" .75)" -v e50="$(quantile "$tmp/e" .5)" \
		-v e90="$(quantile "$tmp/e" .9)" -v e99="$(quantile "$tmp/e" .99)" '
	{ n++; sum += $1; if ($1 < base - base / 50) short++; if ($1 > base + base / 4) long++ }
	END {
		if (!n) { print "| 0 | - | - | - | - | - |"; exit }
		printf "| %d | %.4f (1.0625) | %.4f %.4f %.4f | %.1f / %.1f / %.1f | %.2f%% | %.2f%% |\n",
			n, sum / n / base, q1 / base, q2 / base, q3 / base, e50 / 1000, e90 / 1000,
			e99 / 1000, 100 * short / n, 100 * long / n
	}' "$tmp/m"
}

if [ "$part" != phase ]; then
echo "| base period | load | armed intervals | mean / base (designed) | quartiles / base (designed 1.0313 1.0625 1.0938) | abs(measured - drawn) median / p90 / p99, us | short of the window | long of the window | re-arm CPU per sample |"
echo "|---|---|---|---|---|---|---|---|---|"
for period in $periods; do
	for load in quiet "hogs on $(( $(nproc) - 1 )) CPUs"; do
		if [ "$load" != quiet ]; then
			for _ in $(seq 1 $(( $(nproc) - 1 ))); do
				( while :; do :; done ) &
				hogs+=($!)
			done
		fi
		logs=()
		cost=""
		for r in $(seq 1 "$reps"); do
			log=$tmp/$period-$r-${load%% *}.log
			"$hsbpf" record -v --period-mode random -c "$period" -o "$tmp/p.data" -- \
				"$fixtures/hot7030" "$secs" >/dev/null 2>"$log"
			logs+=("$log")
			cost+=$(sed -n 's/.*re-arms, \([0-9.]*\) us of CPU each.*/\1/p' "$log")" "
		done
		stop_hogs
		row=$(summarize "$period" "${logs[@]}")
		echo "| $((period / 1000)) us | $load ${row%|} | ${cost% } us |"
	done
done
echo
echo "Command: make bench-periods (PERIODS='$periods' REPS=$reps SECONDS_CPU=$secs), $(date -u +%Y-%m-%d), $(nproc) CPUs, kernel $(uname -r)"
fi
[ "$part" = intervals ] && exit 0

# one recording of phaselock: "share handler_ns_per_run rearm_ns_per_run"
phase_run() {
	local log=$tmp/phase.log
	"$@" >/dev/null 2>"$log"
	"$hsbpf" report --format json -i "$tmp/ph.data" 2>/dev/null | python3 -c '
import json, re, sys
d = json.load(sys.stdin)
a = sum(r["samples"] for r in d["rows"] if r["symbol"] == "pl_a")
b = sum(r["samples"] for r in d["rows"] if r["symbol"] == "pl_b")
m = re.search(r"(\d+) re-arms, ([0-9.]+) us of CPU each", open(sys.argv[1]).read())
rearm = int(m.group(1)) * float(m.group(2)) * 1000 if m else 0
# the timer fires on every sampled CPU, target running or not: duration x 999 x CPUs samples
fired = d["duration_s"] * 999 * int(sys.argv[2])
runs = d["handler_runs"] or fired
print(a / max(a + b, 1), d["handler_ns"] / runs, rearm / fired)' "$log" "$(nproc)"
}

psecs=${PHASE_SECONDS:-10}
# the handler's run time is counted only while the kernel's BPF statistics are on
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -qw kernel.bpf_stats_enabled=1
trap 'sysctl -qw kernel.bpf_stats_enabled="$old_stats"; stop_hogs; rm -rf "$tmp"' EXIT
loop=$(( 1000000000 / 999 ))
echo
echo "| mode | pl_a share (true 0.5): mean, each run | handler ns / sample | restart or re-arm thread ns / sample (of all the timer's samples) | total ns / sample | / fixed |"
echo "|---|---|---|---|---|---|"
fixed_total=""
for mode in fixed ${GAPS:-250000000} random; do
	shares="" hsum=0 rsum=0
	for r in $(seq 1 "$reps"); do
		case $mode in
		fixed|random) set -- "$hsbpf" record -v -F 999 --period-mode "$mode" ;;
		*) set -- env HSBPF_PHASE_GAP_NS="$mode" "$hsbpf" record -v -F 999 ;;
		esac
		read -r sh h re < <(phase_run "$@" -o "$tmp/ph.data" -- "$fixtures/phaselock" "$loop" 0.5 "$psecs")
		shares+=$(printf "%.3f " "$sh")
		hsum=$(awk -v a="$hsum" -v b="$h" 'BEGIN { print a + b }')
		rsum=$(awk -v a="$rsum" -v b="$re" 'BEGIN { print a + b }')
	done
	name=$mode
	[ "$mode" != fixed ] && [ "$mode" != random ] && name="phase (gap $((mode / 1000000)) ms)"
	total=$(awk -v h="$hsum" -v r="$rsum" -v n="$reps" 'BEGIN { print (h + r) / n }')
	[ -z "$fixed_total" ] && fixed_total=$total
	awk -v name="$name" -v s="$shares" -v h="$hsum" -v r="$rsum" -v n="$reps" -v t="$total" -v f="$fixed_total" 'BEGIN {
		k = split(s, v, " "); for (i = 1; i <= k; i++) m += v[i]
		printf "| %s | %.3f: %s | %.0f | %.0f | %.0f | %.3fx |\n", name, m / k, s, h / n, r / n, t, t / f }'
done
echo
echo "Command: PART=phase make bench-periods (REPS=$reps PHASE_SECONDS=$psecs GAPS='${GAPS:-250000000}'), $(date -u +%Y-%m-%d), $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg), kernel $(uname -r)"
[ "$part" = phase ] && exit 0
for p in cost paths noise; do
	echo
	"$here/period_$p.sh"
done
