#!/usr/bin/env bash
# PART=size make bench-offcpu: the profile of a busy machine's minute of off-CPU time, and how
# long report takes on it (issue 26: under 1 MB, under 0.1 s). One load (two compiler loops,
# one every SPAWN_GAP seconds each, beside long-lived services: a futex pool and a Python
# poller), recorded at the same time by: this hsbpf (record --off-cpu -a), this hsbpf with
# --per-thread, BASE (an older hsbpf, e.g. main's, when given) and perf record -e
# sched:sched_switch -a -g (perf's nearest: every switch copied to user space; Debian's perf
# has no --off-cpu). Then each report, timed REPS times (the median of the wall and of the CPU
# time: on a machine this busy the wall time is mostly waiting for a CPU). Last, what reading
# and writing the new profile costs (bench/profile_io).
set -euo pipefail

HSBPF=${HSBPF:-./hsbpf}
OUT=${OUTPUT:-.output}/bench
POOL=${POOL:-$OUT/futex_pool}
SECS=${SECS:-60}
SPAWN_GAP=${SPAWN_GAP:-0.2}
REPS=${REPS:-5}
BASE=${BASE:-}
SRC=${SRC:-bench/deep.c}
PROFILE_IO=${PROFILE_IO:-$OUT/profile_io}
mkdir -p "$OUT"
[ "$(id -u)" -eq 0 ] || { echo "bench: run as root" >&2; exit 1; }
command -v perf >/dev/null || { echo "bench: perf is missing (scripts/install-deps.sh)" >&2; exit 1; }

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

end=$((SECONDS + SECS + 4))
for i in 1 2; do
	( while [ $SECONDS -lt $end ]; do cc -O2 -c "$SRC" -o "$OUT/offsize$i.o"; sleep "$SPAWN_GAP"; done ) &
	pids+=($!)
done
( while [ $SECONDS -lt $end ]; do "$POOL" 20000 2 >/dev/null; done ) & pids+=($!)
/usr/bin/python3.11 -c "
import select, time
end = time.monotonic() + $SECS + 4
while time.monotonic() < end:
    select.select([], [], [], 0.01)" & pids+=($!)
sleep 1

rec=()
"$HSBPF" record --no-buildid-cache --off-cpu -a -d "$SECS" -o "$OUT/offsize-new.data" 2>"$OUT/offsize-new.log" & rec+=($!)
"$HSBPF" record --no-buildid-cache --off-cpu --per-thread -a -d "$SECS" -o "$OUT/offsize-tid.data" \
	2>"$OUT/offsize-tid.log" & rec+=($!)
if [ -n "$BASE" ]; then
	"$BASE" record --no-buildid-cache --off-cpu -a -d "$SECS" -o "$OUT/offsize-base.data" \
		2>"$OUT/offsize-base.log" & rec+=($!)
fi
perf record -q -e sched:sched_switch -a -g -o "$OUT/offsize-perf.data" -- sleep "$SECS" \
	>/dev/null 2>"$OUT/offsize-perf.log" & rec+=($!)
for r in "${rec[@]}"; do wait "$r"; done


median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
report_time() {	# command...: the median wall seconds of REPS runs, and of their CPU (user + system)
	: >"$OUT/offsize-times"
	for _ in $(seq "$REPS"); do
		/usr/bin/time -f "%e %U %S" -o "$OUT/offsize-time" "$@" >/dev/null 2>&1
		cat "$OUT/offsize-time" >>"$OUT/offsize-times"
	done
	printf '%s s | %s s' "$(awk '{ print $1 }' "$OUT/offsize-times" | median)" \
		"$(awk '{ printf "%.2f\n", $2 + $3 }' "$OUT/offsize-times" | median)"
}
row() {	# name, file, report command...
	local name=$1 file=$2
	shift 2
	printf '| %s | %.2f MB | %s |\n' "$name" "$(stat -c %s "$file" | awk '{ print $1 / 1e6 }')" \
		"$(report_time "$@")"
}

echo "60 s of a busy machine ($SECS s here, load average $(cut -d' ' -f1-3 /proc/loadavg))"
echo "| recorder | profile | report: wall (median of $REPS) | report: CPU, user + system |"
echo "|---|---|---|---|"
row "hsbpf record --off-cpu -a" "$OUT/offsize-new.data" "$HSBPF" report -i "$OUT/offsize-new.data" --stdio
row "... --per-thread" "$OUT/offsize-tid.data" "$HSBPF" report -i "$OUT/offsize-tid.data" --stdio
[ -n "$BASE" ] && row "$BASE (before)" "$OUT/offsize-base.data" "$BASE" report -i "$OUT/offsize-base.data" --stdio
row "perf record -e sched:sched_switch -a -g" "$OUT/offsize-perf.data" \
	perf report -i "$OUT/offsize-perf.data" --stdio
for f in new tid base; do
	[ -f "$OUT/offsize-$f.data" ] && printf '%s: %s gzip -6\n' "$f" \
		"$(gzip -6 -c "$OUT/offsize-$f.data" | wc -c | awk '{ printf "%.2f MB", $1 / 1e6 }')"
done
if [ -x "$PROFILE_IO" ]; then
	echo "new profile, read and written back: $("$PROFILE_IO" "$OUT/offsize-new.data" "$REPS")"
fi
