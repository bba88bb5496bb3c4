#!/usr/bin/env bash
# make bench-stat: what counting costs.
# 1. Per call: enabling, disabling and reading counters, rdpmc, per-cgroup counting's flush
#    and map read (bench/stat_cost.c), in ns per call.
# 2. Per-cgroup counting in the kernel (hsbpf stat --cgroup, one counter set per CPU read at
#    the switches that change cgroup) against one perf event per cgroup, event and CPU
#    (hsbpf stat --cgroup-events, and perf stat --for-each-cgroup), for N = 1, 10, 100 counted
#    cgroups, on a context-switch-heavy workload: two pairs of processes passing a byte over
#    pipes, each pair on one CPU and its two processes in two cgroups, so that every switch
#    crosses cgroups. What a method adds to a switch is spent on the workload's CPUs: the
#    figure is the workload's CPU time (wall time on this shared machine varies threefold from
#    run to run; CPU time by a few percent). Each run under a tool is paired with a run of the
#    workload alone just before it, and the overhead is the median of the pairs' ratios.
#    The counts are compared in one run: the kernel's inside hsbpf's perf events inside perf stat's.
set -euo pipefail

HSBPF=${HSBPF:-./hsbpf}
OUT=${OUTPUT:-.output}/bench
PP=$OUT/pingpong
COST=$OUT/stat_cost
REPS=${REPS:-5}
NS=${NS:-"1 10 100"}
EV=task-clock,context-switches,page-faults

need() { command -v "$1" >/dev/null || { echo "bench: $1 is missing (scripts/install-deps.sh)" >&2; exit 1; }; }
need perf
[ "$(id -u)" -eq 0 ] || { echo "bench: run as root" >&2; exit 1; }

mnt=$(awk '{ for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") { print $5; exit } break } }' /proc/self/mountinfo)
[ -n "$mnt" ] || { echo "bench: no cgroup v2 mount" >&2; exit 1; }
top=hsbpf-bench-stat-$$
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
cleanup() {
	sysctl -qw kernel.bpf_stats_enabled="$old_stats"
	for d in "$mnt/$top"/*/; do [ -d "$d" ] && rmdir "$d" 2>/dev/null || true; done
	rmdir "$mnt/$top" 2>/dev/null || true
}
trap cleanup EXIT
sysctl -qw kernel.bpf_stats_enabled=1
mkdir -p "$OUT" "$mnt/$top"
for i in $(seq 100); do mkdir "$mnt/$top/c$i"; done

median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

cpu_first=$(cut -d, -f1 /sys/devices/system/cpu/online | cut -d- -f1)
cpu_last=$(tr ',' '\n' </sys/devices/system/cpu/online | tail -1 | sed 's/.*-//')

# the workload for N cgroups: pair 1 in c1 and c2 on the first CPU, pair 2 in c3 and c4
# (modulo N) on the last
workload_script() {
	local n=$1 rounds=$2 f=$OUT/stat-workload-$1.sh
	local a=$(( 0 % n + 1 )) b=$(( 1 % n + 1 )) c=$(( 2 % n + 1 )) d=$(( 3 % n + 1 ))
	cat >"$f" <<-EOF
	$PP $rounds $mnt/$top/c$a $mnt/$top/c$b $cpu_first >$OUT/stat-pp1 &
	$PP $rounds $mnt/$top/c$c $mnt/$top/c$d $cpu_last >$OUT/stat-pp2 &
	wait
	EOF
	echo "$f"
}
# the CPU time (ns) of both pairs, added
took() { echo $(( $(cut -d' ' -f2 "$OUT/stat-pp1") + $(cut -d' ' -f2 "$OUT/stat-pp2") )); }

cg_args() { for i in $(seq "$1"); do printf -- '--cgroup %s/c%d ' "$top" "$i"; done; }
cg_list() { seq "$1" | sed "s|^|$top/c|" | paste -sd, -; }

# one run of the workload under a tool; prints the CPU time it took, ns
measure() {
	local tool=$1 n=$2 script=$3 log=$OUT/stat-$1.log
	case $tool in
	alone) sh "$script" ;;
	bpf) $HSBPF stat -v -e $EV $(cg_args "$n") -o "$OUT/stat-bpf.txt" -- sh "$script" 2>"$log" ;;
	events) $HSBPF stat -e $EV $(cg_args "$n") --cgroup-events -o "$OUT/stat-events.txt" -- sh "$script" 2>"$log" ;;
	perf) perf stat -a -e $EV --for-each-cgroup "$(cg_list "$n")" -o "$OUT/stat-perf.txt" -- sh "$script" 2>"$log" ;;
	esac
	took
}

# about 1 s of CPU for the two pairs together
rounds=${ROUNDS:-}
if [ -z "$rounds" ]; then
	s=$(workload_script 1 5000)
	sh "$s"
	rounds=$(( 5000 * 1000000000 / $(took) ))
	[ "$rounds" -ge 2000 ] || rounds=2000
fi

echo "bench: per call" >&2
"$COST" | tee "$OUT/stat-cost.md"
echo >&2
echo "bench: $rounds rounds x 2 pairs per run, $REPS rounds of pairs, N = $NS counted cgroups" >&2

declare -A ratio under alone_t prog
tools="bpf events perf"
for n in $NS; do
	s=$(workload_script "$n" "$rounds")
	for r in $(seq "$REPS"); do
		for tool in $tools; do
			a=$(measure alone "$n" "$s")
			t=$(measure "$tool" "$n" "$s")
			ratio[$tool-$n]="${ratio[$tool-$n]:-} $(awk -v t="$t" -v a="$a" 'BEGIN { printf "%.5f", t / a }')"
			under[$tool-$n]="${under[$tool-$n]:-} $t"
			alone_t[$tool-$n]="${alone_t[$tool-$n]:-} $a"
			if [ "$tool" = bpf ]; then
				ns=$(sed -n 's/.*ran [0-9]* times, \([0-9.]*\) ns each.*/\1/p' "$OUT/stat-bpf.log")
				prog[$n]="${prog[$n]:-} ${ns:-0}"
			fi
			echo "  N=$n round $r $tool: $(awk -v t="$t" -v a="$a" 'BEGIN { printf "%.3f s of CPU (alone %.3f s)", t / 1e9, a / 1e9 }')" >&2
		done
	done
done

med_of() { echo "$1" | tr ' ' '\n' | grep . | median; }

# agreement, in one run: perf stat --for-each-cgroup outermost, hsbpf stat --cgroup-events
# inside it, and the kernel's counts (hsbpf stat --cgroup) inside both; the four cgroups that
# work. Prints the largest relative difference of the kernel's counts from perf stat's and
# from hsbpf's perf events, per event, and the unattributed share
agree() {
	local n=$1 s=$2
	perf stat -a -x, -e $EV --for-each-cgroup "$(cg_list "$n")" -o "$OUT/stat-agree-perf.csv" -- \
		$HSBPF stat -e $EV $(cg_args "$n") --cgroup-events --format csv -o "$OUT/stat-agree-ev.csv" -- \
		$HSBPF stat -v -e $EV $(cg_args "$n") --format csv -o "$OUT/stat-agree-bpf.csv" -- sh "$s" \
		2>"$OUT/stat-agree.log" >/dev/null
	awk -F, '
		FNR == 1 { file++ }
		file < 3 && $2 == "cgroup" && $5 == "counted" { c = $3; sub(/^\//, "", c); v[file, c, $4] = $6 }
		file == 1 && $2 == "unattributed" { u[$4] = $6 }
		file == 3 && NF >= 4 && $1 ~ /^[0-9.]+$/ { v[3, $4, $3] = $1 }
		function rel(a, b) { d = (a - b) / b; return d < 0 ? -d : d }
		END {
			for (k in v) {
				split(k, f, SUBSEP)
				if (f[1] != 1 || v[k] == 0) continue
				c = f[2]; ev = f[3]; b = v[k]
				if (rel(v[3, c, ev], b) > dp[ev]) dp[ev] = rel(v[3, c, ev], b)
				if (rel(v[2, c, ev], b) > de[ev]) de[ev] = rel(v[2, c, ev], b)
				sum[ev] += b
			}
			printf "%.3f%% %.3f%% %.3f%% %.3f%% %.3f%% %.3f%%\n",
				100 * dp["context-switches"], 100 * dp["task-clock"],
				100 * de["context-switches"], 100 * de["task-clock"],
				sum["context-switches"] ? 100 * u["context-switches"] / sum["context-switches"] : 0,
				sum["task-clock"] ? 100 * u["task-clock"] / sum["task-clock"] : 0
		}' "$OUT/stat-agree-bpf.csv" "$OUT/stat-agree-ev.csv" "$OUT/stat-agree-perf.csv"
}

# the median over rounds of the CPU time under a tool over that under perf stat in the same
# round of the same N
vs_perf() {
	local n=$1 tool=$2
	paste <(echo "${under[$tool-$n]}" | tr ' ' '\n' | grep .) <(echo "${under[perf-$n]}" | tr ' ' '\n' | grep .) |
		awk '{ print $1 / $2 }' | median
}

{
echo
echo "| counted cgroups | method | workload alone (median s of CPU) | under the tool (median s of CPU) | overhead (median of paired ratios) | added per context switch | CPU time / perf stat's (median of the rounds' ratios) |"
echo "|---|---|---|---|---|---|---|"
for n in $NS; do
	for tool in $tools; do
		awk -v n="$n" -v t="$tool" -v m="$(med_of "${ratio[$tool-$n]}")" -v a="$(med_of "${alone_t[$tool-$n]}")" \
		    -v u="$(med_of "${under[$tool-$n]}")" -v sw="$(( 4 * rounds ))" -v vp="$(vs_perf "$n" "$tool")" 'BEGIN {
			name = t == "bpf" ? "in the kernel (hsbpf stat --cgroup)" : \
			       t == "events" ? "perf events per cgroup (hsbpf stat --cgroup-events)" : \
			       "perf events per cgroup (perf stat --for-each-cgroup)"
			printf "| %d | %s | %.3f | %.3f | %+.1f%% | %.0f ns | %.3fx |\n", n, name, a / 1e9, u / 1e9, \
				100 * (m - 1), (m - 1) * a / sw, vp }'
	done
done
echo
for n in $NS; do
	echo "- N=$n: the switch program took $(med_of "${prog[$n]}") ns a run (median of the runs' kernel statistics)"
done
echo
echo "Counts of the four working cgroups in one run, the kernel's (hsbpf stat --cgroup) against perf stat --for-each-cgroup and against hsbpf's own per-cgroup perf events (--cgroup-events), largest relative difference over the cgroups:"
echo
echo "| counted cgroups | context-switches vs perf stat | task-clock vs perf stat | context-switches vs hsbpf --cgroup-events | task-clock vs hsbpf --cgroup-events | unattributed share: context-switches | task-clock |"
echo "|---|---|---|---|---|---|---|"
for n in $NS; do
	read -r pcs ptc dcs dtc ucs utc < <(agree "$n" "$(workload_script "$n" "$rounds")")
	echo "| $n | $pcs | $ptc | $dcs | $dtc | $ucs | $utc |"
done
} | tee "$OUT/stat-results.md"
