#!/usr/bin/env bash
# make soak: the agent for a long run (DURATION seconds, 2 h by default) with 1 s intervals
# while the machine churns: both CPUs busy, RATE short processes started and ended a second,
# and a "container" (its own PID and mount namespaces, unshare, in a cgroup of its own that is
# removed after it) coming and going every CONTAINER_EVERY seconds. Each interval's RSS, CPU
# and the kernel stack maps' entries (the agent's -v line) go to soak.dat, plotted with
# gnuplot into soak.png; at the end the first and last quarters are compared: flat means
# within 10% (RSS, map entries) or 0.5 points of CPU. Not part of make test.
set -euo pipefail

HSBPF=${HSBPF:-./hsbpf}
FIX=${FIXTURES:-.output/fixtures}
DURATION=${DURATION:-7200}
RATE=${RATE:-200}
CONTAINER_EVERY=${CONTAINER_EVERY:-5}
OUT=${SOAK_DIR:-.output/soak}

[ "$(id -u)" -eq 0 ] || { echo "soak: run as root" >&2; exit 1; }
command -v gnuplot >/dev/null || { echo "soak: gnuplot is missing (scripts/install-deps.sh)" >&2; exit 1; }
mkdir -p "$OUT"
rm -f "$OUT"/soak.dat "$OUT"/agent.err
# cgroup v2 where this machine mounts it (/sys/fs/cgroup, or /sys/fs/cgroup/unified in a hybrid
# layout): from mountinfo, whose fields after " - " are the type and the source
v2=$(awk '{ for (i = 7; i < NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") { print $5; exit } break } }' \
	/proc/self/mountinfo)
[ -n "$v2" ] || { echo "soak: no cgroup v2 mounted (/proc/self/mountinfo)" >&2; exit 1; }
cg=$v2/hsbpf-soak
pids=()
cleanup() {
	for p in "${pids[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	for d in "$cg"/c*; do [ -d "$d" ] && rmdir "$d" 2>/dev/null || true; done
	rmdir "$cg" 2>/dev/null || true
}
trap cleanup EXIT

"$FIX/busywork" 100000 2 >/dev/null & pids+=($!)
# RATE processes a second, each exec'ing a fresh program image
churn() {
	while :; do
		for _ in $(seq "$RATE"); do /bin/true & done
		wait
		sleep 1
	done
}
churn & pids+=($!)
# containers: new PID and mount namespaces in a new cgroup, a few seconds of work, then gone
containers() {
	local n=0
	mkdir -p "$cg"
	while :; do
		n=$((n + 1))
		mkdir -p "$cg/c$n"
		unshare --pid --fork --mount-proc sh -c \
			"echo \$\$ >/dev/null; i=0; while [ \$i -lt 200000 ]; do i=\$((i + 1)); done" &
		local c=$!
		echo "$c" >"$cg/c$n/cgroup.procs" 2>/dev/null || true
		sleep "$CONTAINER_EVERY"
		kill "$c" 2>/dev/null || true
		wait "$c" 2>/dev/null || true
		rmdir "$cg/c$n" 2>/dev/null || true
	done
}
containers & pids+=($!)

"$HSBPF" agent -v --interval 1 --output-dir "$OUT/profiles" --max-files 60 2>"$OUT/agent.err" & a=$!
pids+=($a)
hz=$(getconf CLK_TCK)
start=$(date +%s)
last_ticks=$(awk '{ print $14 + $15 }' "/proc/$a/stat")
seen=0
echo "# t_s rss_mb cpu_pct stack_map_entries samples unwind_tables unwind_rows" >"$OUT/soak.dat"
while [ $(( $(date +%s) - start )) -lt "$DURATION" ]; do
	sleep 1
	kill -0 "$a" 2>/dev/null || { echo "soak: the agent died" >&2; tail "$OUT/agent.err" >&2; exit 1; }
	t=$(( $(date +%s) - start ))
	ticks=$(awk '{ print $14 + $15 }' "/proc/$a/stat")
	rss=$(awk '/VmRSS/ { print $2 }' "/proc/$a/status")
	# an interval's first -v line (its second gives its times)
	line=$(grep -a "debug: interval [0-9]*: [0-9]* samples" "$OUT/agent.err" | tail -1 || true)
	n=$(grep -ac "debug: interval [0-9]*: [0-9]* samples" "$OUT/agent.err" || true)
	entries=$(echo "$line" | sed -n 's/.*bytes, \([0-9]*\) stack map entries.*/\1/p')
	samples=$(echo "$line" | sed -n 's/.*: \([0-9]*\) samples.*/\1/p')
	tables=$(echo "$line" | sed -n 's/.* \([0-9]*\) unwind tables (\([0-9]*\) rows).*/\1 \2/p')
	[ "$n" -gt "$seen" ] || continue
	seen=$n
	awk -v t="$t" -v r="$rss" -v a="$last_ticks" -v b="$ticks" -v hz="$hz" -v e="${entries:-0}" \
	    -v s="${samples:-0}" -v u="${tables:-0 0}" \
	    'BEGIN { printf "%d %.1f %.2f %d %d %s\n", t, r / 1024, 100 * (b - a) / hz, e, s, u }' \
	    >>"$OUT/soak.dat"
	last_ticks=$ticks
done
kill -TERM "$a"; wait "$a" || true
# intervals the agent did not take (its numbering has a gap, or fewer than the seconds run)
missed=$(grep -a "debug: interval [0-9]*: [0-9]* samples" "$OUT/agent.err" | sed 's/.*interval \([0-9]*\):.*/\1/' |
	 awk -v d="$DURATION" '{ n++; last = $1 } END { m = d - n - 10; print (m > 0 ? m : 0) }')

gnuplot <<PLOT
set terminal png size 1200,900
set output "$OUT/soak.png"
set multiplot layout 3,1 title "hsbpf agent soak: 1 s intervals, $RATE processes/s, containers every $CONTAINER_EVERY s"
set xlabel "seconds"
set ylabel "RSS (MB)"
plot "$OUT/soak.dat" using 1:2 with lines title "RSS"
set ylabel "CPU (% of a core)"
plot "$OUT/soak.dat" using 1:3 with lines title "CPU per interval"
set ylabel "entries"
plot "$OUT/soak.dat" using 1:4 with lines title "stack map entries after the drain", \
     "$OUT/soak.dat" using 1:5 with lines title "samples per interval", \
     "$OUT/soak.dat" using 1:(\$7 / 1000) with lines title "unwind table rows in the kernel (thousands)"
unset multiplot
PLOT

# flat: the last quarter against the second (the first is the warm-up)
awk -v missed="$missed" 'NR > 1 { t[++n] = $1; r[n] = $2; c[n] = $3; e[n] = $4; w[n] = $7 }
END {
	q = int(n / 4); if (q < 1) { print "soak: too short to judge"; exit 1 }
	for (i = q + 1; i <= 2 * q; i++) { r1 += r[i]; c1 += c[i]; e1 += e[i]; w1 += w[i] }
	for (i = n - q + 1; i <= n; i++) { r2 += r[i]; c2 += c[i]; e2 += e[i]; w2 += w[i] }
	r1 /= q; r2 /= q; c1 /= q; c2 /= q; e1 /= q; e2 /= q; w1 /= q; w2 /= q
	printf "%d intervals plotted, about %d not taken by the agent (10 s of start-up allowed)\n", n, missed
	printf "RSS MB: %.1f -> %.1f; CPU %%: %.2f -> %.2f; stack map entries: %.0f -> %.0f; unwind rows: %.0f -> %.0f\n", r1, r2, c1, c2, e1, e2, w1, w2
	flat = (r2 <= r1 * 1.1) && (c2 <= c1 + 0.5) && (e2 <= e1 * 1.1 + 50)
	print flat ? "flat" : "NOT flat"
	exit flat ? 0 : 1
}' "$OUT/soak.dat"
echo "plot: $OUT/soak.png, data: $OUT/soak.dat"
