#!/usr/bin/env bash
# What randomized periods deliver: hot7030 recorded with --period-mode random at several base
# periods, alone and beside CPU hogs on every other core, REPS times each; every interval from
# the -v log, against its draw. Prints one table row per (period, load).
#   HSBPF=... FIXTURES=... bench/periods.sh      (make bench-periods)
# Environment: PERIODS (ns, default "1000000 500000 200000"), REPS (default 3), SECONDS_CPU (2).
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
