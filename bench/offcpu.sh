#!/usr/bin/env bash
# make bench-offcpu: what following every context switch costs. Two switch-heavy workloads,
# `perf bench sched pipe` (two processes passing a byte through pipes) and bench/futex_pool (thread
# pairs handing a futex back and forth), each run alone and under: hsbpf record --off-cpu -a
# (stacks dwarf), hsbpf record --off-cpu --wakers -a, and bcc's libbpf-tools offcputime (-a, its
# default) and wakeuptime. Each run under a tool is paired with a run alone just before it; the
# slowdown is the median of the pairs' ratios (this machine's speed drifts more than the effect),
# in wall time and in the workload's CPU time (user + system: a switch program runs in the
# switching task's time, so that figure holds whatever else the machine runs).
# The cost per switch (and per wake-up) is the kernel's own timing of each BPF program
# (kernel.bpf_stats_enabled=1: run_time_ns / run_cnt from bpftool prog show), read while the
# tool is still attached.
# floor (in the default TOOLS): bench/switch_floor, an empty program on sched_switch (tp_btf, as
# hsbpf's), what any tool attached there costs at least on this machine.
# More hsbpf variants for TOOLS: hsbpf-pP (--switch-sample P, e.g. hsbpf-p0.1: what a switch
# costs when a block is followed with probability P), hsbpf-kstack (no user stack: the
# unwinder's share of the switch, by HSBPF_BENCH_OFFCPU_STACKS=kernel), hsbpf-nostack (no stack
# at all: =none), hsbpf-fp (--call-graph fp).
# PART=size: the size of a busy machine's minute of off-CPU profile and report's time on it
# (bench/offcpu_size.sh).
set -euo pipefail
[ "${PART:-}" = size ] && exec "$(dirname "$0")/offcpu_size.sh"

HSBPF=${HSBPF:-./hsbpf}
OUT=${OUTPUT:-.output}/bench
POOL=${POOL:-$OUT/futex_pool}
REPS=${REPS:-5}
PIPE_LOOPS=${PIPE_LOOPS:-50000}
POOL_ROUNDS=${POOL_ROUNDS:-50000}
TOOLS=${TOOLS:-"floor hsbpf hsbpf-p0.1 hsbpf-wakers offcputime wakeuptime"}
SWITCH_FLOOR=${SWITCH_FLOOR:-$OUT/switch_floor}
mkdir -p "$OUT"

need() { command -v "$1" >/dev/null || { echo "bench: $1 is missing (scripts/install-deps.sh)" >&2; exit 1; }; }
need perf
need bpftool
need offcputime
need wakeuptime
need jq
[ "$(id -u)" -eq 0 ] || { echo "bench: run as root" >&2; exit 1; }

old_stats=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -qw kernel.bpf_stats_enabled=1
pid=""
cleanup() {
	[ -n "$pid" ] && kill -INT "$pid" 2>/dev/null || true
	sysctl -qw kernel.bpf_stats_enabled="$old_stats"
}
trap cleanup EXIT

stop() {
	kill -INT "$1" 2>/dev/null || true
	for _ in $(seq 100); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}
now() { date +%s%N; }

wait_for() {	# file, pattern: until the tool says it is ready
	for _ in $(seq 400); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done
	echo "bench: tool did not start: $(cat "$1")" >&2; exit 1
}

workload() {	# pipe | futex: runs it; its CPU seconds (user + system) into $OUT/offcpu-cpu
	case $1 in
	pipe) /usr/bin/time -f "%U %S" -o "$OUT/offcpu-cpu" perf bench sched pipe -l "$PIPE_LOOPS" >/dev/null 2>&1 ;;
	futex) /usr/bin/time -f "%U %S" -o "$OUT/offcpu-cpu" "$POOL" "$POOL_ROUNDS" 2 >/dev/null ;;
	esac
}

# the BPF programs a process holds (their ids in its file descriptors' fdinfo): this
# machine's bpftool does not list programs' owners
prog_ids() {
	grep -h '^prog_id:' /proc/"$1"/fdinfo/* 2>/dev/null | awk '{ print $2 }' | sort -un
}

# the tool's BPF programs' run counts and times: "name runs ns" lines
prog_stats() {
	local id
	for id in $(prog_ids "$1"); do
		bpftool prog show id "$id" -j 2>/dev/null |
			jq -r '"\(.name) \(.run_cnt // 0) \(.run_time_ns // 0)"' || true
	done
}

# until the tool holds its programs (offcputime's stdout is buffered in a file), and a moment
# for it to attach them
wait_progs() {
	for _ in $(seq 400); do
		[ -n "$(prog_ids "$1")" ] && { sleep 1; return 0; }
		kill -0 "$1" 2>/dev/null || break
		sleep 0.05
	done
	echo "bench: tool did not start: $(cat "$2")" >&2; exit 1
}

# the workload under one tool (none: alone); prints its wall and CPU seconds, and keeps the
# programs' stats
measure() {
	local tool=$1 w=$2 t0 t1 log=$OUT/offcpu-$1.log
	: >"$log"
	pid=""
	case $tool in
	none) ;;
	floor)
		"$SWITCH_FLOOR" >"$log" 2>&1 & pid=$!
		wait_for "$log" ready ;;
	hsbpf)
		"$HSBPF" record -v --no-buildid-cache --off-cpu -a -o "$OUT/offcpu-hsbpf.data" 2>"$log" & pid=$!
		wait_for "$log" "recording" ;;
	hsbpf-wakers)
		"$HSBPF" record -v --no-buildid-cache --off-cpu --wakers -a -o "$OUT/offcpu-wakers.data" 2>"$log" & pid=$!
		wait_for "$log" "recording" ;;
	hsbpf-p*)
		"$HSBPF" record -v --no-buildid-cache --off-cpu --switch-sample "${tool#hsbpf-p}" -a \
			-o "$OUT/offcpu-$tool.data" 2>"$log" & pid=$!
		wait_for "$log" "recording" ;;
	hsbpf-kstack|hsbpf-nostack)
		HSBPF_BENCH_OFFCPU_STACKS=$([ "$tool" = hsbpf-kstack ] && echo kernel || echo none) \
			"$HSBPF" record -v --no-buildid-cache --off-cpu -a -o "$OUT/offcpu-$tool.data" 2>"$log" & pid=$!
		wait_for "$log" "recording" ;;
	hsbpf-fp)
		"$HSBPF" record -v --no-buildid-cache --off-cpu --call-graph fp -a -o "$OUT/offcpu-$tool.data" 2>"$log" & pid=$!
		wait_for "$log" "recording" ;;
	offcputime)
		offcputime >"$log" 2>&1 & pid=$!
		wait_progs "$pid" "$log" ;;
	wakeuptime)
		wakeuptime >"$log" 2>&1 & pid=$!
		wait_progs "$pid" "$log" ;;
	esac
	t0=$(now); workload "$w"; t1=$(now)
	if [ -n "$pid" ]; then
		prog_stats "$pid" >"$OUT/offcpu-$tool-$w.progs" || true
		stop "$pid"
	fi
	pid=""
	awk -v a="$t0" -v b="$t1" '{ printf "%.4f %.3f\n", (b - a) / 1e9, $1 + $2 }' "$OUT/offcpu-cpu"
}

median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
med_of() { echo "$1" | tr ' ' '\n' | grep . | median; }

declare -A ratios alone under cratios calone cunder runs ns
echo "bench: perf bench sched pipe -l $PIPE_LOOPS, futex_pool $POOL_ROUNDS rounds x 2 pairs; $REPS rounds; tools: $TOOLS" >&2
for r in $(seq "$REPS"); do
	for w in pipe futex; do
		for tool in $TOOLS; do
			read -r b cb < <(measure none "$w")
			read -r t ct < <(measure "$tool" "$w")
			ratios[$tool-$w]="${ratios[$tool-$w]:-} $(awk -v t="$t" -v b="$b" 'BEGIN { printf "%.5f", t / b }')"
			alone[$tool-$w]="${alone[$tool-$w]:-} $b"
			under[$tool-$w]="${under[$tool-$w]:-} $t"
			cratios[$tool-$w]="${cratios[$tool-$w]:-} $(awk -v t="$ct" -v b="$cb" 'BEGIN { printf "%.5f", t / (b > 0 ? b : 0.001) }')"
			calone[$tool-$w]="${calone[$tool-$w]:-} $cb"
			cunder[$tool-$w]="${cunder[$tool-$w]:-} $ct"
			# the programs' runs and time over all rounds
			while read -r name n t_ns; do
				runs[$tool-$w-$name]=$(( ${runs[$tool-$w-$name]:-0} + n ))
				ns[$tool-$w-$name]=$(( ${ns[$tool-$w-$name]:-0} + t_ns ))
			done <"$OUT/offcpu-$tool-$w.progs"
			echo "  round $r  $w  $tool  ${t}s, CPU ${ct}s (alone ${b}s, CPU ${cb}s)" >&2
		done
	done
done

{
echo "| workload | tool | median wall s alone / under | wall slowdown | median CPU s alone / under | CPU time added |"
echo "|---|---|---|---|---|---|"
for w in pipe futex; do
	for tool in $TOOLS; do
		awk -v w="$w" -v t="$tool" -v a="$(med_of "${alone[$tool-$w]}")" -v u="$(med_of "${under[$tool-$w]}")" \
		    -v m="$(med_of "${ratios[$tool-$w]}")" -v ca="$(med_of "${calone[$tool-$w]}")" \
		    -v cu="$(med_of "${cunder[$tool-$w]}")" -v cm="$(med_of "${cratios[$tool-$w]}")" 'BEGIN {
			printf "| %s | %s | %.3f / %.3f | %+.1f%% | %.3f / %.3f | %+.1f%% |\n",
			       w == "pipe" ? "perf bench sched pipe" : "futex_pool", t, a, u, 100 * (m - 1),
			       ca, cu, 100 * (cm - 1) }'
	done
done
echo
echo "(slowdowns: the median of the paired ratios; CPU time: the workload's user + system seconds,"
echo "where the switch programs' time is spent, whatever else the machine runs)"
echo
echo "BPF programs (kernel.bpf_stats_enabled: run_time_ns / run_cnt, over every run of each, whole machine):"
echo
for key in $(printf '%s\n' "${!runs[@]}" | sort); do
	n=${runs[$key]}
	[ "$n" -gt 0 ] || continue
	awk -v k="$key" -v n="$n" -v t="${ns[$key]}" 'BEGIN {
		split(k, a, "-"); printf "- %s: %.0f ns per run over %d runs\n", k, t / n, n }'
done
} | tee "$OUT/offcpu-results.md"
