#!/usr/bin/env bash
# make bench-top: the live view's own CPU at a 1-second refresh with 100,000 distinct sampled
# keys (target: under 5% of one core), next to a baseline (hsbpf record on the same events,
# which reads no map until it ends) and the peers (perf top, bpftrace printing its map each
# second), all in one run on the same workload.
#
# The workload is two copies of bench/sled: 1,600 functions of 64 one-byte nops, run straight
# through, so that every sample can land on its own instruction: each copy offers 102,400
# distinct IPs, and at 9,999 Hz on both CPUs the sample map holds 100,000 keys after ~15 s
# and goes on growing. Each tool starts fresh; hsbpf top is measured from the refresh at
# which it has seen 100,000 keys, for WINDOW seconds; the others over a window of the same
# length after the same warm-up (bpftrace with room for 262,144 keys, like hsbpf's map).
set -euo pipefail

HSBPF=${HSBPF:-./hsbpf}
OUT=${OUTPUT:-.output}/bench
SLED=$OUT/sled
WINDOW=${WINDOW:-10}
KEYS=${KEYS:-100000}
HZ=${HZ:-9999}
mkdir -p "$OUT"

need() { command -v "$1" >/dev/null || { echo "bench: $1 is missing (scripts/install-deps.sh)" >&2; exit 1; }; }
need perf
need bpftrace
[ "$(id -u)" -eq 0 ] || { echo "bench: run as root" >&2; exit 1; }
[ -x "$SLED" ] || { echo "bench: $SLED is missing (make bench-top builds it)" >&2; exit 1; }

pids=()
cleanup() {
	for p in "${pids[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done
	rm -f "$OUT/perf-top.stdin"
}
trap cleanup EXIT

"$SLED" & pids+=($!)
"$SLED" & pids+=($!)

# SIGINT, then SIGKILL if the tool has not gone within 10 s (bpftrace 0.17 can miss a SIGINT
# that lands while it attaches)
stop() {
	kill -INT "$1" 2>/dev/null || true
	for _ in $(seq 100); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
rss_kb() { awk '/VmRSS/ { print $2 }' "/proc/$1/status"; }
hz=$(getconf CLK_TCK)
# percent of one core between two tick counts over ms milliseconds
pct() { awk -v a="$1" -v b="$2" -v ms="$3" -v hz="$hz" 'BEGIN { printf "%.2f", 100 * (b - a) / hz / (ms / 1000) }'; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
slots() { { grep -ao 'keys [0-9,]*' "$1" || true; } | tail -1 | tr -d ', ' | sed 's/keys//'; }

# hsbpf top: wait for KEYS keys, then WINDOW refreshes
log=$OUT/top.log
"$HSBPF" top --stdio -F "$HZ" -d 1 --rows 25 >"$log" 2>&1 & tp=$!; pids+=($tp)
t_start=$(now_ms)
for _ in $(seq 120); do
	s=$(slots "$log"); [ -n "$s" ] && [ "$s" -ge "$KEYS" ] && break
	sleep 0.5
done
s0=$(slots "$log")
[ -n "$s0" ] && [ "$s0" -ge "$KEYS" ] || { echo "bench: the map never held $KEYS keys ($s0)" >&2; exit 1; }
warm=$(( $(now_ms) - t_start ))
c0=$(ticks "$tp"); t0=$(now_ms)
sleep "$WINDOW"
c1=$(ticks "$tp"); t1=$(now_ms)
s1=$(slots "$log"); rss=$(rss_kb "$tp")
stop "$tp"
top_cpu=$(pct "$c0" "$c1" $((t1 - t0)))
self=$(grep -ao 'hsbpf [0-9.]*% CPU + BPF [0-9.]*%' "$log" | tail -"$WINDOW" |
	awk '{ c += $2; b += $6 } END { printf "%.2f %.2f", c / NR, b / NR }')

# the others: the same warm-up, the same window
measure() {	# name, pid
	local c0 c1 t0 t1
	sleep "$(awk -v ms="$warm" 'BEGIN { print ms / 1000 }')"
	c0=$(ticks "$2"); t0=$(now_ms)
	sleep "$WINDOW"
	c1=$(ticks "$2"); t1=$(now_ms)
	printf '%s %s %s\n' "$1" "$(pct "$c0" "$c1" $((t1 - t0)))" "$(rss_kb "$2")"
}

"$HSBPF" record -a -F "$HZ" -o "$OUT/top-baseline.data" 2>"$OUT/record.log" & p=$!; pids+=($p)
base=$(measure record "$p"); stop "$p"

# perf top reads keys from stdin: give it a FIFO this script holds open and never writes to
# (no helper process to find and stop afterwards; every process stopped is one this started)
rm -f "$OUT/perf-top.stdin"; mkfifo "$OUT/perf-top.stdin"; exec 3<>"$OUT/perf-top.stdin"
perf top --stdio -e cpu-clock -F "$HZ" -a -d 1 <"$OUT/perf-top.stdin" >"$OUT/perf-top.log" 2>&1 & p=$!; pids+=($p)
perf_res=$(measure "perf-top" "$p"); stop "$p"
exec 3>&-

BPFTRACE_MAP_KEYS_MAX=262144 bpftrace -q -e "profile:hz:$HZ { @[pid, reg(\"ip\")] = count(); } interval:s:1 { print(@); }" \
	>/dev/null 2>"$OUT/bpftrace.log" & p=$!; pids+=($p)
bt=$(measure bpftrace "$p"); stop "$p"

echo
echo "hsbpf top's own CPU, $HZ Hz on 2 CPUs, 1 s refresh, two sleds of 102,400 IPs each"
echo "(warm-up ${warm} ms to $s0 keys; window $WINDOW s; keys at its end: $s1)"
printf '%-34s %12s %10s\n' tool "CPU (% core)" "RSS (MB)"
printf '%-34s %12s %10.1f\n' "hsbpf top (this run)" "$top_cpu" "$(awk -v k="$rss" 'BEGIN { print k / 1024 }')"
read -r sc sb <<<"$self"
printf '%-34s %12s %10s\n' "  as its header said (BPF $sb%)" "$sc" "-"
for r in "$base" "$perf_res" "$bt"; do
	read -r name cpu kb <<<"$r"
	case $name in
	record) name="baseline: hsbpf record -a" ;;
	perf-top) name="perf top --stdio" ;;
	bpftrace) name="bpftrace, print(@) each second" ;;
	esac
	printf '%-34s %12s %10.1f\n' "$name" "$cpu" "$(awk -v k="${kb:-0}" 'BEGIN { print k / 1024 }')"
done
awk -v c="$top_cpu" 'BEGIN { printf "target: under 5%% of one core: %s\n", (c < 5) ? "met" : "NOT met" }'
