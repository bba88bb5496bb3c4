#!/usr/bin/env bash
# make bench-agent: what the always-on agent costs the machine it profiles, in one run.
#
# Both CPUs busy (two busywork threads) and CHURN short processes started and ended a second
# (a shell loop of /bin/true: a node that runs jobs), the agent at its defaults (19 Hz per
# CPU, dwarf stacks, a profile every 10 s to a folder). After WARM seconds, over WINDOW
# seconds: its CPU (utime + stime from /proc, percent of one core) and RSS (VmRSS, and the
# peak VmHWM; and RssAnon, its own heap and stacks: the rest is mostly the files it maps to
# read symbols and tables, page cache). BASELINE=path/to/hsbpf measures another build the same
# way in the same run, alongside over the same window (an older commit: the before of a
# change). Next to them the OpenTelemetry eBPF profiler's stated ceiling (1% CPU, 250 MB),
# which is not packaged for Debian and is not built here.
#
# The profiles: the mean gzipped pprof per 10 s interval the agent wrote, against
# perf record -a -g at the same rate for 10 s, imported (hsbpf import) and written with the
# same pprof encoder (hsbpf report --format pprof).
#
# Start-up: from the agent's exec to its "sampling" line, and record -a -g's from exec to the
# start of sampling its profile states (meta start), both with the machine loaded as above.
#
# Lateness (issue 27): the column "late" counts the intervals whose profile file was written
# more than half an interval after its schedule (more than 1.5 intervals after the one
# before, from the files' times), of all. Then both agents again at --interval 1 -F 99 for
# LATE_WINDOW seconds while big programs new to them start: the C++ compiler's cc1plus (half
# a million rows of unwind table) and a JVM's libjvm.so, each again after their tables were
# released (3 intervals unmapped), so every start brings a table to build.
set -euo pipefail

HSBPF=${HSBPF:-./hsbpf}
FIX=${FIXTURES:-.output/fixtures}
WARM=${WARM:-20}
WINDOW=${WINDOW:-60}
CHURN=${CHURN:-20}
BASELINE=${BASELINE:-}
LATE_WINDOW=${LATE_WINDOW:-60}

need() { command -v "$1" >/dev/null || { echo "bench: $1 is missing (scripts/install-deps.sh)" >&2; exit 1; }; }
need perf
[ "$(id -u)" -eq 0 ] || { echo "bench: run as root" >&2; exit 1; }
[ -x "$FIX/busywork" ] || { echo "bench: $FIX/busywork is missing (make fixtures)" >&2; exit 1; }

tmp=$(mktemp -d /tmp/hsbpf-bench-agent-XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

"$FIX/busywork" 100000 2 >/dev/null & pids+=($!)
churn() { while :; do for _ in $(seq "$CHURN"); do /bin/true; done; sleep 1; done; }
churn & pids+=($!)

hz=$(getconf CLK_TCK)
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
mono_ms() { awk '{ printf "%d", $1 * 1000 }' /proc/uptime; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# the agents measured side by side over the same window (the machine's load drifts from one
# minute to the next: measured one after the other, the second met another machine); each
# samples the other too, alike. Prints "name cpu% rss_mb hwm_mb start_ms kb_per_interval"
names=(); bins=(); apids=(); started=()
# late intervals of a folder's profiles at an interval of $2 s: "late/N worst_gap_s"
late_files() {
	find "$1" -name '*.pb.gz' -printf '%T@\n' | sort -n |
		awk -v iv="$2" 'NR > 1 { g = $1 - p; if (g > 1.5 * iv) late++; if (g > w) w = g }
				{ p = $1; n++ } END { printf "%d/%d %.2f", late, n, w }'
}
start_agent() {	# name, binary, more options
	local dir=$tmp/$1 t0 a st=""
	mkdir -p "$dir/out"
	t0=$(now_ms)
	# SIGQUIT ignored: other recordings' ends ask whatever maps libjvm.so for a perf map
	# with jcmd, whose SIGQUIT would end an agent reading libjvm.so (fixed since, not in
	# older builds)
	perl -e '$SIG{QUIT} = "IGNORE"; exec @ARGV' "$2" agent --output-dir "$dir/out" ${3:-} 2>"$dir/err" & a=$!
	pids+=($a)
	for _ in $(seq 300); do
		grep -q "sampling" "$dir/err" 2>/dev/null && { st=$(( $(now_ms) - t0 )); break; }
		sleep 0.05
	done
	[ -n "$st" ] || { cat "$dir/err" >&2; echo "bench: $1 never started" >&2; exit 1; }
	names+=("$1"); apids+=("$a"); started+=("$st")
}
measure_all() {
	local c0=() c1=() t0 t1 i
	sleep "$WARM"
	for a in "${apids[@]}"; do c0+=($(ticks "$a")); done
	t0=$(now_ms)
	sleep "$WINDOW"
	for a in "${apids[@]}"; do c1+=($(ticks "$a")); done
	t1=$(now_ms)
	for i in "${!apids[@]}"; do
		local a=${apids[$i]} dir=$tmp/${names[$i]} rss hwm anon kb_int
		rss=$(kb "$a" VmRSS); hwm=$(kb "$a" VmHWM); anon=$(kb "$a" RssAnon)
		kill -TERM "$a"; wait "$a" || true
		# the full intervals only: the first and the last are shorter
		kb_int=$(ls -l "$dir/out" | awk 'NR > 1 { print $5 }' | sed '1d;$d' |
			 awk '{ s += $1; n++ } END { printf "%.1f", n ? s / n / 1024 : 0 }')
		late=$(late_files "$dir/out" 10 | cut -d' ' -f1)
		awk -v n="${names[$i]}" -v a="${c0[$i]}" -v b="${c1[$i]}" -v ms=$((t1 - t0)) -v hz="$hz" \
		    -v r="$rss" -v h="$hwm" -v an="$anon" -v st="${started[$i]}" -v k="$kb_int" -v l="$late" \
		    'BEGIN { printf "%-10s %8.2f %8.1f %8.1f %8.1f %10d %10s %8s\n", n, 100 * (b - a) / hz / (ms / 1000),
			     r / 1024, h / 1024, an / 1024, st, k, l }'
	done
}

# both agents at 1 s intervals while new big programs start (see the top); prints
# "name late/N worst_gap_s"
late_phase() {
	local end i dir
	names=(); apids=(); started=()
	start_agent late-hsbpf "$HSBPF" "-F 99 --interval 1"
	[ -n "$BASELINE" ] && start_agent late-base "$BASELINE" "-F 99 --interval 1"
	printf '#include <bits/stdc++.h>\nint main() { std::vector<int> v; std::sort(v.begin(), v.end()); }\n' >"$tmp/big.cc"
	end=$(( $(now_ms) + LATE_WINDOW * 1000 ))
	while [ "$(now_ms)" -lt "$end" ]; do
		g++ -O2 -c "$tmp/big.cc" -o "$tmp/big.o"
		sleep 4
		if command -v java >/dev/null && [ -f "$FIX/jit/Hot.class" ]; then
			timeout 3 java -cp "$FIX/jit" Hot "$tmp/ready" >/dev/null 2>&1 || true
		fi
		sleep 4
	done
	for i in "${!apids[@]}"; do
		kill -TERM "${apids[$i]}"; wait "${apids[$i]}" || true
		dir=$tmp/${names[$i]}
		printf "%-10s %12s %10s\n" "${names[$i]}" $(late_files "$dir/out" 1)
	done
}

echo "the agent at 19 Hz -a -g, both CPUs busy, $CHURN processes/s; CPU and RSS over ${WINDOW} s after ${WARM} s"
[ -n "$BASELINE" ] && echo "(the baseline alongside, over the same window)"
printf "%-10s %8s %8s %8s %8s %10s %10s %8s\n" "agent" "CPU %" "RSS MB" "peak MB" "anon MB" "start ms" "KB/10 s" "late"
start_agent hsbpf "$HSBPF"
[ -n "$BASELINE" ] && start_agent baseline "$BASELINE"
measure_all
echo "OTel eBPF profiler (stated ceiling)   1.00    250.0"

echo "lateness at --interval 1 -F 99 over ${LATE_WINDOW} s, g++ (cc1plus) and a JVM started every 8 s:"
printf "%-10s %12s %10s\n" "agent" "late > 0.5 s" "worst gap"
late_phase

# perf record -a -g for one interval, converted with the same encoder
perf record -q -a -g -F 19 -o "$tmp/perf.data" -- sleep 10 2>/dev/null
"$HSBPF" import "$tmp/perf.data" -o "$tmp/perf.hsbpf" >/dev/null 2>&1 || true
"$HSBPF" report -i "$tmp/perf.hsbpf" --format pprof -o "$tmp/perf.pb.gz" >/dev/null 2>&1 || true
{ perf script -i "$tmp/perf.data" 2>/dev/null || true; } | gzip -c >"$tmp/perf.script.gz"
awk -v a="$(stat -c %s "$tmp/perf.pb.gz")" -v b="$(stat -c %s "$tmp/perf.data")" \
    -v c="$(stat -c %s "$tmp/perf.script.gz")" \
    'BEGIN { printf "perf record -a -g -F 19, 10 s: pprof %.1f KB (perf.data %.1f KB, perf script gzipped %.1f KB)\n",
	     a / 1024, b / 1024, c / 1024 }'

# record -a -g: exec to the start of sampling (its -v line), and the wall time of -d 1
t0=$(now_ms)
started=""
"$HSBPF" record -v -a -g -d 1 -o "$tmp/r.hsbpf" 2>&1 >/dev/null |
	while IFS= read -r line; do
		case $line in *"sampling started"*) echo $(( $(now_ms) - t0 )) >"$tmp/started";; esac
	done
t1=$(now_ms)
[ -s "$tmp/started" ] && started=$(cat "$tmp/started")
echo "record -a -g -d 1 under load: sampling after ${started:-?} ms, $((t1 - t0)) ms wall"
