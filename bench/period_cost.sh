#!/usr/bin/env bash
# The period modes' cost, measured well above the noise: real programs run alone and under
# record in fixed, phase (the default) and random mode at two rates (-c in ns of cpu-clock:
# 10 kHz, where a sample's cost is a large part of the program's CPU, and 999 Hz), in one run,
# blocks of runs alternated (each block: every workload alone and in every mode at every rate,
# the order rotated every block) so that the machine's drift and other sessions' load fall on
# every mode alike. Each run gives the program's CPU time (the workload's rusage, user +
# system: the timer interrupts and the BPF handler that land in it are charged to it, this
# kernel has no IRQ time accounting; other sessions' load is not), record's own CPU while the
# program ran (every hsbpf thread's run time from /proc/PID/task/*/schedstat: the restart or
# re-arm threads), the program's samples, the handler's run time (kernel.bpf_stats_enabled)
# and the restarts. One more mode, phase with a 1 ms mean gap at 10 kHz (250 times the
# default's restarts), prices one restart. bench/period_cost.py makes the tables.
#   HSBPF=... FIXTURES=... bench/period_cost.sh     (PART=cost make bench-periods)
# Environment: COST_BLOCKS (default 12), COST_RATES (periods in ns, default "100000 1001001"),
# XZ_MB (xz's input, default 1), PY_ITERS (python3.11's loop, default 12000000), PL_SECONDS
# (phaselock, default 1), WORKLOADS (default "phaselock xz python3"), COST_RUNS (keep the raw
# runs in this file).
set -euo pipefail

hsbpf=${HSBPF:?}
fixtures=${FIXTURES:?}
here=$(cd "$(dirname "$0")" && pwd)
blocks=${COST_BLOCKS:-12}
rates=${COST_RATES:-100000 1001001}
xz_mb=${XZ_MB:-1}
py_iters=${PY_ITERS:-12000000}
pl_secs=${PL_SECONDS:-1}
workloads=${WORKLOADS:-phaselock xz python3}
dose_gap=1000000
default_gap=250000000	# PERIOD_PHASE_GAP_NS, user/lib/period.h
python=/usr/bin/python3.11
tmp=$(mktemp -d /tmp/hsbpf-period-cost-XXXXXX)
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
trap 'sysctl -qw kernel.bpf_stats_enabled="$old_stats"; rm -rf "$tmp"' EXIT
# the handler's run time is counted only while the kernel's BPF statistics are on (the same
# few ns on every mode's handler)
sysctl -qw kernel.bpf_stats_enabled=1

command -v xz >/dev/null || { echo "bench: xz is missing" >&2; exit 1; }
[ -x "$python" ] || { echo "bench: $python is missing" >&2; exit 1; }
"$fixtures/gen-input" "$xz_mb" > "$tmp/input"
printf 'x = 0\nfor i in range(%d):\n    x += i * i %% 7\n' "$py_iters" > "$tmp/loop.py"

# the measuring wrapper, run under record as the command (or alone): writes "CPU PROF N WALL"
# to $1, the workload's CPU time (user + system) and record's CPU while it ran (its parent's
# threads' run time, when the parent is hsbpf), in s, per N units of work (phaselock runs
# for a fixed time: millions of its spins; else 1), and its wall time
cat > "$tmp/measure" <<'END'
#!/usr/bin/env bash
out=$1 what=$2
shift 2
prof() {
	if [ "$(cat /proc/$PPID/comm 2>/dev/null)" = hsbpf ]; then
		cat /proc/$PPID/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%.0f\n", s }'
	else
		echo 0
	fi
}
p0=$(prof)
TIMEFORMAT='%3U %3S %3R'
{ time "$@" > /dev/null 2> "$out.err"; } 2> "$out.time"
p1=$(prof)
read -r user sys wall < "$out.time"
n=1
[ "$what" = spins ] && n=$(awk '/ spins$/ { print $1 / 1e6 }' "$out.err")
awk -v u="$user" -v s="$sys" -v w="$wall" -v p0="$p0" -v p1="$p1" -v n="$n" \
	'BEGIN { printf "%.6f %.9f %.6f %.3f\n", (u + s) / n, (p1 - p0) / 1e9 / n, n, w }' > "$out"
END
chmod +x "$tmp/measure"

workload_cmd() {
	case $1 in
	xz) echo "time xz -9 -T1 -c $tmp/input" ;;
	python3) echo "time $python $tmp/loop.py" ;;
	phaselock) echo "spins $fixtures/phaselock 1001001 0.5 $pl_secs" ;;
	*) echo "bench: unknown workload '$1'" >&2; return 1 ;;
	esac
}

# one run: prints "CPU PROF SAMPLES HANDLER_NS HANDLER_RUNS RESTARTS", each per unit of work
# (restarts or re-arms: the stop summary's over the recording, the workload's part of it by
# its wall time)
run_one() {
	local mode=$1 rate=$2 w=$3 out=$tmp/cost gap=""
	local cmd
	cmd=$(workload_cmd "$w")
	if [ "$mode" = none ]; then
		# shellcheck disable=SC2086
		"$tmp/measure" "$out" $cmd
		echo "$(cut -d' ' -f1,2 "$out") 0 0 0 0"
		return
	fi
	[ "$mode" = dose ] && gap=$dose_gap
	local pm=$mode
	[ "$mode" = dose ] && pm=phase
	# other sessions may turn the statistics off: on again for each run (a run whose handler
	# reports no runs is left out of the handler's column)
	sysctl -qw kernel.bpf_stats_enabled=1
	# shellcheck disable=SC2086
	HSBPF_PHASE_GAP_NS=$gap "$hsbpf" record -v --no-buildid-cache -c "$rate" --period-mode "$pm" \
		-o "$tmp/r.data" -- "$tmp/measure" "$out" $cmd >/dev/null 2>"$tmp/record.log" ||
		{ grep -v 'debug: interval' "$tmp/record.log" >&2; return 1; }
	"$python" -c '
import re, sys
cpu, prof, n, wall = (float(x) for x in open(sys.argv[1]).read().split())
log = open(sys.argv[2]).read()
samples = int(re.search(r"hsbpf: (\d+) samples in", log).group(1))
d = re.search(r"recorded for ([0-9.]+) s; the handler ran (\d+) times, (\d+) ns", log)
# the restarts (phase) or re-arms (random) of the stop summary, over the recording: the
# workload'"'"'s part of them by its wall time against the recording'"'"'s
m = re.search(r"randomized periods: (\d+) re-arms", log)
print(cpu, prof, samples / n, int(d.group(3)) / n, int(d.group(2)) / n,
      int(m.group(1)) * min(wall / float(d.group(1)), 1) / n if m else 0)' "$out" "$tmp/record.log"
}

# the modes of one workload's block: alone, then each mode at each rate, the dose at 10 kHz
runs=${COST_RUNS:-$tmp/runs}
: > "$runs"
for b in $(seq 0 $(( blocks - 1 ))); do
	for w in $workloads; do
		list=("none 0")
		for rate in $rates; do
			for m in fixed phase random; do list+=("$m $rate"); done
		done
		list+=("dose 100000")
		k=${#list[@]}
		for i in $(seq 0 $(( k - 1 ))); do
			read -r m rate <<< "${list[$(( (i + b) % k ))]}"
			echo "$b $w $m $rate $(run_one "$m" "$rate" "$w")" >> "$runs"
		done
	done
done

"$python" "$here/period_cost.py" "$runs" "$dose_gap" "$default_gap"
echo
echo "Command: PART=cost make bench-periods (COST_BLOCKS=$blocks COST_RATES='$rates' XZ_MB=$xz_mb PY_ITERS=$py_iters PL_SECONDS=$pl_secs), $(date -u +%Y-%m-%d), $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg) at the end, kernel $(uname -r)"
