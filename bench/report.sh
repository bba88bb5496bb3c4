#!/usr/bin/env bash
# make bench-report: hsbpf report against perf report --stdio on real programs' profiles,
# recorded by each tool on the same workload in this run: python3 (a JSON loop), xz -9,
# sqlite3 (a recursive query with a sort), and a -a recording of the machine while all three
# run. Each report is run RUNS times; the table gives the median wall time, user+system CPU,
# and peak RSS (/usr/bin/time), and the ratios (perf / hsbpf: above 1, hsbpf is faster or
# smaller). Both group by perf's default keys, comm,dso,sym. Target: 3x faster than perf
# report, and no more memory, on each.
#
# perf 6.1 against this kernel: `perf record` aborts in its BPF-event side thread ("buffer
# overflow detected") unless --no-bpf-event is given, so it is; `perf report` is used as it
# is, and a profile it cannot read is said as such in the table.
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

# input for xz: 48 MB of programs and libraries
[ -s "$OUT/xz.in" ] || { cat /usr/lib/x86_64-linux-gnu/*.so* 2>/dev/null | head -c 48000000 >"$OUT/xz.in" || true; }

py_cmd=(python3 -c "
import json, time
end = time.time() + $SECS
n = 0
while time.time() < end:
    for i in range(2000):
        n += len(json.dumps({'a': i, 'b': [i, i * 2], 'c': str(i)}))
print(n)")
xz_cmd=(sh -c "xz -9 -T1 -c '$OUT/xz.in' >/dev/null")
sql_cmd=(sqlite3 :memory: "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c
	LIMIT 1500000) SELECT count(*), sum(length(printf('%08d', x * 7919 % 1000003))) FROM
	(SELECT x FROM c ORDER BY x * 7919 % 1000003);")

record() {	# name cmd...: both tools' profiles of one command
	local name=$1; shift
	"$HSBPF" record -F 999 -o "$OUT/$name.hsbpf" -- "$@" >/dev/null 2>"$OUT/$name.hsbpf.log"
	perf record -q --no-bpf-event -F 999 -o "$OUT/$name.perf" -- "$@" >/dev/null 2>"$OUT/$name.perf.log"
}

echo "bench: recording python3, xz, sqlite3, and -a while they run" >&2
record python3 "${py_cmd[@]}"
record xz "${xz_cmd[@]}"
record sqlite3 "${sql_cmd[@]}"
# the machine busy: the three workloads together, recorded whole by each tool in turn
busy() {
	"${py_cmd[@]}" >/dev/null & "${xz_cmd[@]}" & "${sql_cmd[@]}" >/dev/null & wait
}
busy & bpid=$!
"$HSBPF" record -a -F 999 -d "$SECS" -o "$OUT/all.hsbpf" >/dev/null 2>"$OUT/all.hsbpf.log"
wait $bpid
busy & bpid=$!
perf record -q --no-bpf-event -a -F 999 -o "$OUT/all.perf" -- sleep "$SECS" >/dev/null 2>"$OUT/all.perf.log"
wait $bpid

# median of RUNS runs of a command: "wall cpu rss_kb status"
measure() {
	local t=$OUT/time.txt st=0 runs=()
	for _ in $(seq "$RUNS"); do
		st=0
		/usr/bin/time -f "%e %U %S %M" -o "$t" "$@" >"$OUT/report.out" 2>"$OUT/report.err" || st=$?
		runs+=("$(awk -v st=$st '{ printf "%.3f %.3f %d %d\n", $1, $2 + $3, $4, st }' "$t")")
	done
	printf '%s\n' "${runs[@]}" | sort -n | awk -v n="$RUNS" '
		{ w[NR] = $1; c[NR] = $2; m[NR] = $3; if ($4) st = $4 }
		END { asort(c); asort(m); i = int((n + 1) / 2); print w[i], c[i], m[i], st + 0 }'
}

echo
echo "| profile | samples (hsbpf / perf) | hsbpf report s | perf report s | time ratio | hsbpf CPU s | perf CPU s | hsbpf RSS MB | perf RSS MB | memory ratio |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for name in python3 xz sqlite3 all; do
	read -r hw hc hm hs < <(measure "$HSBPF" report -i "$OUT/$name.hsbpf" --sort comm,dso,sym)
	read -r pw pc pm ps < <(measure perf report -i "$OUT/$name.perf" --stdio --sort comm,dso,sym)
	note=""
	[ "$ps" = 0 ] || note=" (perf report failed: $(head -c 80 "$OUT/report.err" | tr '\n' ' '))"
	hn=$("$HSBPF" report -i "$OUT/$name.hsbpf" 2>/dev/null | sed -n 's/.* \([0-9]*\) samples,.*/\1/p' | head -1)
	pn=$(perf report -i "$OUT/$name.perf" --stdio 2>/dev/null | sed -n 's/^# Samples: \([0-9.K]*\).*/\1/p' | head -1)
	[ "$name" = all ] && label="-a, ${SECS} s, busy" || label=$name
	awk -v l="$label" -v hn="${hn:-?}" -v pn="${pn:-?}" -v hw="$hw" -v pw="$pw" -v hc="$hc" \
	    -v pc="$pc" -v hm="$hm" -v pm="$pm" -v note="$note" 'BEGIN {
		printf "| %s | %s / %s | %.3f | %.3f%s | **%.1fx** | %.3f | %.3f | %.1f | %.1f | **%.2fx** |\n",
			l, hn, pn, hw, pw, note, pw / hw, hc, pc, hm / 1024, pm / 1024, pm / hm }'
done
echo
echo "$RUNS runs each, medians; ratios are perf / hsbpf (above 1: hsbpf faster, smaller)."
