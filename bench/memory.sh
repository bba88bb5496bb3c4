#!/usr/bin/env bash
# make bench-memory: what record --memory costs a malloc-heavy program, beside heaptrack and an
# every-call bpftrace uprobe, in one run (docs/memory.md, "What the uprobes cost"), and what
# a long recording weighs.
#
# 1. Slowdown. bench/malloc_loop (small objects, 16-256 bytes, batches of 64 freed together:
#    glibc's tcache, a few ns a malloc+free pair) with 1 and 2 threads, its own clock around
#    the loops (no tool's start-up in it), run alone and under: record --memory at the default
#    period (session uprobes where the kernel has them), the same with
#    HSBPF_MEMORY_PROBES=classic (a uprobe and a uretprobe on every call), heaptrack
#    (LD_PRELOAD, every call exactly), and bpftrace 'uprobe:libc:malloc { @ = count() }'. The
#    methods alternate within each block (REPS blocks) so that drift and other sessions' load
#    fall on all alike; a method's figure is its median over the blocks of ns per pair and of
#    the ratio to the block's run alone.
# 2. A long recording (MEM_SECONDS, default 60): malloc_loop started first, record --memory -p
#    on it for that long; the profile's size and report's time.
# Prints markdown.  HSBPF=... OUTPUT=... bench/memory.sh
# Environment: REPS (default 3), CALLS (mallocs a thread, default 2000000), MEM_SECONDS.
set -euo pipefail

hsbpf=${HSBPF:?}
out=${OUTPUT:-.output}/bench
loop=$out/malloc_loop
reps=${REPS:-3}
calls=${CALLS:-2000000}
secs=${MEM_SECONDS:-60}
libc=$(ldd "$loop" | awk '/libc.so.6/ { print $3 }')
tmp=$(mktemp -d /tmp/hsbpf-bench-memory-XXXXXX)
bg=
cleanup() {
	[ -n "$bg" ] && kill "$bg" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

need() { command -v "$1" >/dev/null || { echo "bench: $1 is missing (scripts/install-deps.sh)" >&2; exit 1; }; }
need heaptrack
need bpftrace
[ "$(id -u)" -eq 0 ] || { echo "bench: run as root" >&2; exit 1; }
[ -n "$libc" ] || { echo "bench: no libc.so.6 in $loop" >&2; exit 1; }

methods=(alone session classic heaptrack bpftrace)

# one run of method $1 with $2 threads: prints its ns per malloc+free pair and thread
run_one() {
	local cmd=("$loop" "$calls" "$2") f=$tmp/run.out
	case $1 in
	alone) "${cmd[@]}" > "$f" ;;
	session) "$hsbpf" record --memory -o "$tmp/p.hsbpf" -- "${cmd[@]}" > "$f" 2> "$tmp/err" ;;
	classic) HSBPF_MEMORY_PROBES=classic "$hsbpf" record --memory -o "$tmp/p.hsbpf" -- "${cmd[@]}" \
		> "$f" 2> "$tmp/err" ;;
	heaptrack) heaptrack -o "$tmp/ht" "${cmd[@]}" > "$f" 2> "$tmp/err"; rm -f "$tmp"/ht* ;;
	bpftrace) bpftrace -e "uprobe:$libc:malloc { @ = count(); }" -c "${cmd[*]}" > "$f" 2> "$tmp/err" ;;
	esac
	awk '/^ns_per_call/ { print $2 }' "$f"
}

median() { sort -g | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "## record --memory against heaptrack and bpftrace ($(date -u +%F), $(uname -r), $(nproc) CPUs)"
echo
echo "malloc_loop $calls calls a thread; median of $reps blocks; ns per malloc+free pair and thread."
echo
echo "| threads | method | ns per pair | slowdown |"
echo "|--|--|--|--|"
for threads in 1 2; do
	: > "$tmp/ns"
	for ((r = 0; r < reps; r++)); do
		base=$(run_one alone "$threads")
		for m in "${methods[@]}"; do
			[ "$m" = alone ] && ns=$base || ns=$(run_one "$m" "$threads")
			[ -n "$ns" ] || { echo "bench: $m gave no figure: $(cat "$tmp/err")" >&2; exit 1; }
			echo "$m $ns $(awk -v a="$ns" -v b="$base" 'BEGIN { print a / b }')" >> "$tmp/ns"
		done
	done
	for m in "${methods[@]}"; do
		ns=$(awk -v m="$m" '$1 == m { print $2 }' "$tmp/ns" | median)
		ratio=$(awk -v m="$m" '$1 == m { print $3 }' "$tmp/ns" | median)
		printf '| %d | %s | %.0f | %.1fx |\n' "$threads" "$m" "$ns" "$ratio"
	done
done

echo
echo "## A ${secs} s recording (record --memory -p, the default period)"
echo
"$loop" 1000000000000 1 > /dev/null &
bg=$!
"$hsbpf" record --memory -p "$bg" -d "$secs" -o "$tmp/long.hsbpf" 2> "$tmp/err" ||
	{ echo "bench: record failed: $(cat "$tmp/err")" >&2; exit 1; }
kill "$bg"
wait "$bg" 2>/dev/null || true
bg=
t0=$(date +%s.%N)
"$hsbpf" report -i "$tmp/long.hsbpf" > "$tmp/report.txt"
t1=$(date +%s.%N)
"$hsbpf" report -i "$tmp/long.hsbpf" --format pprof -o "$tmp/long.pb.gz"
t2=$(date +%s.%N)
awk -v s="$(stat -c %s "$tmp/long.hsbpf")" -v p="$(stat -c %s "$tmp/long.pb.gz")" -v r="$(echo "$t1 - $t0" | bc)" \
	-v q="$(echo "$t2 - $t1" | bc)" 'BEGIN {
	printf "- profile: %.1f KiB; report: %.3f s; pprof export: %.3f s (%.1f KiB)\n", s / 1024, r, q, p / 1024 }'
grep '^# sampled allocations' "$tmp/report.txt" | sed 's/^# /- /'
