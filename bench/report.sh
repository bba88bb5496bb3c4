#!/usr/bin/env bash
# make bench-report: hsbpf report against perf report --stdio on real programs' profiles,
# recorded by each tool on the same workload in this run: python3 (a JSON loop), xz -9,
# sqlite3 (a recursive query with a sort), and a -a recording of the machine while all three
# run. Each report is run RUNS times; the table gives the median wall time, user+system CPU,
# and peak RSS (/usr/bin/time), and the ratios (perf / hsbpf: above 1, hsbpf is faster or
# smaller). Both group by perf's default keys, comm,dso,sym. Target: 3x faster than perf
# report, and no more memory, on each.
#
# BASELINE=path/to/an/older/hsbpf adds its report of the same hsbpf profiles (the figures
# in docs/benchmarks.md compare with the commit before the report work).
#
# perf 6.1 against this kernel: `perf record` can abort at its end ("assertion failed at
# util/build-id.c:1010", then "stack smashing detected") and `perf report` and `perf script`
# abort the same way on every perf.data while some BPF programs are loaded on the machine
# (seen with the other hsbpf sessions' programs); record runs with -B --no-bpf-event, which
# avoids its part, and a report perf cannot give is said as such in the table.
set -euo pipefail

HSBPF=${HSBPF:-./hsbpf}
OUT=${OUTPUT:-.output}/bench/report
RUNS=${RUNS:-5}
SECS=${SECS:-4}
mkdir -p "$OUT"

need() { command -v "$1" >/dev/null || { echo "bench: $1 is missing (scripts/install-deps.sh)" >&2; exit 1; }; }
need perf
need python3
need xz
need sqlite3
[ -x /usr/bin/time ] || { echo "bench: /usr/bin/time is missing (package time)" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "bench: run as root" >&2; exit 1; }

# the build-id caches of this run only
export HSBPF_BUILDID_DIR=$OUT/buildid
export PERF_BUILDID_DIR=$OUT/perf-buildid

# input for xz: 48 MB of programs and libraries, compressed for SECS seconds
[ -s "$OUT/xz.in" ] || { cat /usr/lib/x86_64-linux-gnu/*.so* 2>/dev/null | head -c 48000000 >"$OUT/xz.in" || true; }

py_cmd=(python3 -c "
import json, time
end = time.time() + $SECS
n = 0
while time.time() < end:
    for i in range(2000):
        n += len(json.dumps({'a': i, 'b': [i, i * 2], 'c': str(i)}))
print(n)")
xz_cmd=(sh -c "timeout $SECS xz -9 -T1 -c '$OUT/xz.in' >/dev/null; exit 0")
sql_cmd=(sh -c "timeout $SECS sqlite3 :memory: \"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL
	SELECT x + 1 FROM c LIMIT 50000000) SELECT count(*), sum(length(printf('%08d', x * 7919 %
	1000003))) FROM (SELECT x FROM c ORDER BY x * 7919 % 1000003);\" >/dev/null; exit 0")

record() {	# name cmd...: both tools' profiles of one command
	local name=$1; shift
	"$HSBPF" record -F 999 -o "$OUT/$name.hsbpf" -- "$@" >/dev/null 2>"$OUT/$name.hsbpf.log"
	perf record -q -B --no-bpf-event -F 999 -o "$OUT/$name.perf" -- "$@" >/dev/null \
		2>"$OUT/$name.perf.log" || echo "bench: perf record of $name failed ($?)" >&2
}

if [ "${REUSE:-0}" = 1 ] && [ -s "$OUT/all.hsbpf" ]; then
	echo "bench: REUSE=1: the profiles of the last run" >&2
else
echo "bench: recording python3, xz, sqlite3, and -a while they run" >&2
record python3 "${py_cmd[@]}"
record xz "${xz_cmd[@]}"
record sqlite3 "${sql_cmd[@]}"
# the machine busy: the three workloads together, recorded whole by each tool in turn
busy() {
	"${py_cmd[@]}" >/dev/null & "${xz_cmd[@]}" & "${sql_cmd[@]}" & wait
}
busy & bpid=$!
"$HSBPF" record -a -F 999 -d "$SECS" -o "$OUT/all.hsbpf" >/dev/null 2>"$OUT/all.hsbpf.log"
wait $bpid
busy & bpid=$!
perf record -q -B --no-bpf-event -a -F 999 -o "$OUT/all.perf" -- sleep "$SECS" >/dev/null \
	2>"$OUT/all.perf.log" || echo "bench: perf record -a failed ($?)" >&2
wait $bpid
fi

# medians of RUNS runs of a command, each column on its own: "wall cpu rss_kb status"
measure() {
	local t=$OUT/time.txt st runs=$OUT/runs.txt mid=$(((RUNS + 1) / 2)) worst=0
	: >"$runs"
	for _ in $(seq "$RUNS"); do
		st=0
		/usr/bin/time -f "%e %U %S %M" -o "$t" "$@" >"$OUT/report.out" 2>"$OUT/report.err" || st=$?
		[ "$st" = 0 ] || worst=$st
		awk '{ printf "%.3f %.3f %d\n", $1, $2 + $3, $4 }' "$t" >>"$runs"
	done
	for col in 1 2 3; do
		cut -d' ' -f$col "$runs" | sort -n | sed -n "${mid}p"
	done | tr '\n' ' '
	echo "$worst"
}

cols() {	# label wall cpu rss_kb status: "s | CPU s | MB" or the failure
	if [ "$5" != 0 ]; then
		echo "fails ($(grep -m1 -o 'assertion failed[^ ]* at [^ ]*\|stack smashing\|Segmentation\|Error[^.]*' "$OUT/report.err.$1" | head -1 || echo "status $5")) | | "
	else
		awk -v w="$2" -v c="$3" -v m="$4" 'BEGIN { printf "%.3f | %.3f | %.1f", w, c, m / 1024 }'
	fi
}

echo
base_head="" base_rule=""
if [ -n "${BASELINE:-}" ]; then
	base_head=" baseline s | baseline CPU s | baseline MB | CPU: baseline / hsbpf |"
	base_rule="---|---|---|---|"
fi
echo "| profile | samples | hsbpf report s | CPU s | peak MB |$base_head perf report s | CPU s | peak MB | CPU: perf / hsbpf | memory: perf / hsbpf |"
echo "|---|---|---|---|---|$base_rule---|---|---|---|---|"
for name in python3 xz sqlite3 all; do
	read -r hw hc hm hs < <(measure "$HSBPF" report -i "$OUT/$name.hsbpf" --sort comm,dso,sym)
	cp "$OUT/report.err" "$OUT/report.err.h"
	read -r pw pc pm ps < <(measure perf report -i "$OUT/$name.perf" --stdio --sort comm,dso,sym)
	cp "$OUT/report.err" "$OUT/report.err.p"
	hn=$("$HSBPF" report -i "$OUT/$name.hsbpf" 2>/dev/null | sed -n 's/.* \([0-9]*\) samples,.*/\1/p' | head -1)
	[ "$name" = all ] && label="-a, ${SECS} s, busy" || label=$name
	row="| $label | ${hn:-?} | $(cols h "$hw" "$hc" "$hm" "$hs") |"
	if [ -n "${BASELINE:-}" ]; then
		read -r bw bc bm bs < <(measure "$BASELINE" report -i "$OUT/$name.hsbpf" --sort comm,dso,sym)
		cp "$OUT/report.err" "$OUT/report.err.b"
		row+=" $(cols b "$bw" "$bc" "$bm" "$bs") | $(awk -v b="$bc" -v h="$hc" 'BEGIN { printf "**%.1fx**", b / h }') |"
	fi
	row+=" $(cols p "$pw" "$pc" "$pm" "$ps") |"
	if [ "$ps" = 0 ]; then
		row+=" $(awk -v p="$pc" -v h="$hc" -v pm="$pm" -v hm="$hm" 'BEGIN { printf "**%.1fx** | **%.2fx**", p / h, pm / hm }') |"
	else
		row+=" - | - |"
	fi
	echo "$row"
done
echo
echo "$RUNS runs each, medians; CPU is user + system. Both tools group by comm,dso,sym."
