#!/usr/bin/env bash
# make bench-stacks: what call stacks cost, beside the tools people use for them.
# A CPU-bound workload (bench/deep.c, -O2 -fomit-frame-pointer) at the bottom of stacks 8, 32
# and 128 frames deep, sampled at 1 kHz and 10 kHz by: hsbpf without stacks (the floor of
# sampling), hsbpf --call-graph fp and dwarf, perf record -g, perf record --call-graph dwarf,
# and bpftrace's @[ustack, kstack] = count(). For each: the wall-time overhead (median of the
# ratios of paired runs, the workload alone just before each: this machine drifts by more
# than the overhead), the share of samples whose user stack is complete (reaches _start), the
# output's size and the time to a report. hsbpf's BPF handler cost per sample comes from the
# kernel's run-time statistics. Then the share of complete stacks on Debian's python3 and xz,
# hsbpf against perf's DWARF mode, and the unwind tables' cost for libc and python3.
# bcc's profile is not in the table: Debian 12's libbpf-tools (0.26) has no profile
# (dpkg -L libbpf-tools | grep -i profile: nothing), and bpfcc-tools' needs kernel headers
# this kernel has no package for.
# perf records with --buildid-mmap: without it, perf 6.1 aborts (SIGABRT, "stack smashing
# detected" after "assertion failed at util/build-id.c:1010") at the end of perf record, in
# perf report and in perf script whenever another process had a perf event with
# attr.build_id open while the workload mapped its files (hsbpf's sideband has): the kernel
# sets PERF_RECORD_MISC_MMAP_BUILD_ID in a MMAP2 record it shares among the events and does
# not clear it, so perf's own records carry the flag over (major, minor, inode), and perf
# takes the device's major (254 here) for a build-id size. With --buildid-mmap perf's events
# ask for build-ids too, and every MMAP2 record it gets has the layout its flag says. A run
# that still aborts is shown as "perf crashed", not taken for 0%.
set -euo pipefail

HSBPF=${HSBPF:-./hsbpf}
OUT=${OUTPUT:-.output}/bench/stacks
DEEP=${DEEP:-.output/bench/deep}
TABLES=${TABLES:-.output/bench/unwind_tables}
REPS=${REPS:-3}
DEPTHS=${DEPTHS:-"8 32 128"}
RATES=${RATES:-"1000 10000"}
TOOLS=${TOOLS:-"hsbpf hsbpf-fp hsbpf-dwarf perf-g perf-dwarf bpftrace"}
mkdir -p "$OUT"

need() { command -v "$1" >/dev/null || { echo "bench: $1 is missing (scripts/install-deps.sh)" >&2; exit 1; }; }
need perf
need bpftrace
need python3
need xz
[ "$(id -u)" -eq 0 ] || { echo "bench: run as root" >&2; exit 1; }

old_stats=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -qw kernel.bpf_stats_enabled=1
trap 'sysctl -qw kernel.bpf_stats_enabled="$old_stats"' EXIT

now() { date +%s%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b - a) / 1e9 }'; }

# the workload's own wall time (it prints it), without a tool's start and finish
elapsed() { awk '/^elapsed_ns / { printf "%.4f", $2 / 1e9 }' "$1"; }

# about 1 s of work here
"$DEEP" 32 200 >"$OUT/alone"
ROUNDS=${ROUNDS:-$(awk '/^elapsed_ns / { print int(200 * 1e9 / $2) }' "$OUT/alone")}
[ "$ROUNDS" -ge 50 ] || ROUNDS=50

# the share of blocks of perf script -F ip,sym whose last frame is _start
perf_complete() {
	awk 'BEGIN { n = 0; c = 0 }
	     /^[^ \t]/ { next }
	     /^[ \t]*$/ { if (last != "") { n++; if (last == "_start") c++ } last = ""; next }
	     { last = $2 }
	     END { if (last != "") { n++; if (last == "_start") c++ } printf "%.1f", n ? 100 * c / n : 0 }'
}

# bpftrace's map: "@[\n frames...\n]: count" per stack; complete when _start is in it
bpftrace_complete() {
	awk 'BEGIN { n = 0; c = 0 }
	     /^@\[/ { start = 0; next }
	     /_start\+/ { start = 1 }
	     /^\]: / { n += $2; if (start) c += $2; start = 0 }
	     END { printf "%.1f", n ? 100 * c / n : 0 }'
}

# hsbpf's profile: complete share of user stacks (samples in an exec have none yet), handler
# ns per run (every run: those that filter out other processes' samples too), and the stack
# work's ns per sample with stacks (timed in the handler while bpf_stats_enabled is on)
hsbpf_numbers() {
	"$HSBPF" report -i "$1" --format json --limit 1 | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
e = d.get("stack_ends", {})
user = e.get("samples", 0) - e.get("no_user_stack", 0) - e.get("in_exec", 0)
print("%.1f %.0f %.0f" % (100.0 * e.get("complete", 0) / user if user else float("nan"),
                          d["handler_ns"] / d["handler_runs"] if d.get("handler_runs") else float("nan"),
                          d["stack_ns"] / d["stack_samples"] if d.get("stack_samples") and d.get("stack_ns") else float("nan")))'
}

# one run of the workload under a tool: prints "seconds size complete report_s handler_ns
# stack_ns script_s" (report_s: the CPU seconds of hsbpf report, which prints call graphs when
# the profile has stacks, or of perf report -g --stdio; script_s: of perf script, perf's rows)
run_under() {
	local tool=$1 depth=$2 rate=$3 period=$(( 1000000000 / $3 )) t0 t1 out size c="" h u=- r s=-
	rm -f "$OUT"/run.*
	case $tool in
	hsbpf|hsbpf-fp|hsbpf-dwarf)
		local g=""
		[ "$tool" = hsbpf-fp ] && g="--call-graph fp"
		[ "$tool" = hsbpf-dwarf ] && g="--call-graph dwarf"
		out=$OUT/run.hsbpf
		t0=$(now)
		# shellcheck disable=SC2086
		"$HSBPF" record $g -c "$period" -o "$out" -- "$DEEP" "$depth" "$ROUNDS" >"$OUT/run.out" 2>/dev/null
		t1=$(now)
		r=$(cpu_secs "$OUT/run.report" "$HSBPF" report -i "$out") || r=failed
		read -r c h u < <(hsbpf_numbers "$out")
		[ "$tool" = hsbpf ] && c=- && u=-
		;;
	perf-g|perf-dwarf)
		local g="-g"
		[ "$tool" = perf-dwarf ] && g="--call-graph dwarf"
		out=$OUT/run.perf
		t0=$(now)
		# shellcheck disable=SC2086
		perf record -q --buildid-mmap $g -F "$rate" -o "$out" -- "$DEEP" "$depth" "$ROUNDS" >"$OUT/run.out" 2>/dev/null || true
		t1=$(now)
		r=$(cpu_secs "$OUT/run.report" perf report -g --stdio -i "$out") || { r=crashed; c="perf crashed"; }
		if s=$(cpu_secs "$OUT/run.script" perf script -i "$out" -F ip,sym); then
			[ -n "$c" ] || c=$(perf_complete <"$OUT/run.script")
		else
			s=crashed; c="perf crashed"
		fi
		h=-
		;;
	bpftrace)
		out=$OUT/run.bt
		t0=$(now)
		bpftrace -o "$out" -e "profile:hz:$rate /comm == \"deep\"/ { @[ustack, kstack] = count(); }" \
			-c "$DEEP $depth $ROUNDS" >"$OUT/run.out" 2>&1
		t1=$(now)
		r=0.000
		c=$(bpftrace_complete <"$out")
		h=-
		;;
	esac
	size=$(stat -c %s "$out" 2>/dev/null || echo 0)
	# every field there, so that the runs' columns line up (a failed report: "-")
	c=${c:--}; h=${h:--}; u=${u:--}; r=${r:--}; s=${s:--}
	echo "$(elapsed "$OUT/run.out") $size ${c// /_} $r $h $u $s"
}

# run a command, its output into FILE; print its CPU seconds (user + system: on a shared machine
# the wall time of a report is mostly waiting for a CPU); its exit status
cpu_secs() {
	local file=$1 st
	shift
	# perf stat's task-clock (the command's CPU time, its children's too), the mean of
	# REPORT_RUNS runs: a 30 ms report is a few ticks of the shell's 1 ms CPU times
	perf stat -x, -r "${REPORT_RUNS:-3}" -e task-clock -o "$OUT/time" -- "$@" >"$file" 2>/dev/null
	st=$?
	awk -F, '$3 == "task-clock" { printf "%.3f", $1 / 1000 }' "$OUT/time"
	return $st
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# the runs' lines, one per run, column by column: the median of a numeric column (the lower
# middle for an even count, so that it is one run's figure); a word (perf crashed, failed) in
# any run is shown instead
median_cols() {
	awk '{ for (i = 1; i <= NF; i++) v[i, NR] = $i; if (NF > nf) nf = NF }
	     END { for (i = 1; i <= nf; i++) {
			n = 0; word = ""
			for (r = 1; r <= NR; r++)
				if (v[i, r] ~ /^-?[0-9.]+$/) x[++n] = v[i, r] + 0
				else if (v[i, r] != "-" && v[i, r] != "nan") word = v[i, r]
			if (n == 0 || word != "") { out = word != "" ? word : v[i, NR] } else {
				for (a = 1; a <= n; a++) for (b = a + 1; b <= n; b++) if (x[b] < x[a]) { t = x[a]; x[a] = x[b]; x[b] = t }
				m = x[int((n + 1) / 2)]
				out = (v[i, NR] ~ /\./) ? sprintf("%.3f", m) : sprintf("%d", m)
				if (i == 3 || i == 6 || i == 5) out = (v[i, NR] ~ /\./) ? sprintf("%.1f", m) : sprintf("%.0f", m)
			}
			printf "%s%s", out, (i < nf ? " " : "\n")
		} }'
}

echo "# make bench-stacks: $(date -u +%F), $(nproc) CPUs, kernel $(uname -r), $ROUNDS rounds (~1 s), REPS=$REPS"
echo
echo "| depth | rate | tool | overhead | complete stacks | output | report -g (CPU) | perf script (CPU) | handler/run | stacks/sample |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for depth in $DEPTHS; do
	for rate in $RATES; do
		for tool in $TOOLS; do
			ratios=(); runs=()
			for _ in $(seq "$REPS"); do
				"$DEEP" "$depth" "$ROUNDS" >"$OUT/alone"
				last=$(run_under "$tool" "$depth" "$rate")
				runs+=("$last")
				ratios+=("$(awk -v a="$(elapsed "$OUT/alone")" -v b="${last%% *}" 'BEGIN { printf "%.4f", b / a }')")
			done
			# every figure the median of the runs' (a run's handler mean can be a few
			# host stalls; one run alone misleads): the numbers of columns 2 to 7
			read -r _ size c rep h u sc <<<"$(printf '%s\n' "${runs[@]}" | median_cols)"
			ov=$(printf '%s\n' "${ratios[@]}" | median)
			case $c in -|perf*) ;; *) c="$c%" ;; esac
			printf "| %s | %s Hz | %s | %.3fx | %s | %s KB | %s s | %s | %s | %s |\n" "$depth" "$rate" "$tool" "$ov" \
				"${c//_/ }" "$(( size / 1024 ))" "$rep" "$( [ "$sc" = - ] && echo - || echo "$sc s")" \
				"$( [ "$h" = - ] && echo - || echo "$h ns")" \
				"$( [ "$u" = - ] || [ "$u" = nan ] && echo - || echo "$u ns")"
		done
	done
done

echo
echo "## Complete stacks on real programs (1 kHz, hsbpf -g against perf --call-graph dwarf)"
echo
echo "Debian's /usr/bin/python3 (a JSON loop for S seconds of CPU) and xz -6 (base64 text of about"
echo "S seconds' work); complete: the user stack reaches _start (hsbpf: of the samples with a user"
echo "stack; those in the exec that starts the program have none yet)."
echo
echo "| program | CPU s | samples | hsbpf dwarf | perf dwarf | hsbpf profile | perf.data |"
echo "|---|---|---|---|---|---|---|"
XZ_MB_PER_S=${XZ_MB_PER_S:-1400000}	# bytes of base64 input per second of xz -6 here
for secs in ${REAL_SECS:-1.5 10}; do
	head -c "$(awk -v s="$secs" -v r="$XZ_MB_PER_S" 'BEGIN { printf "%d", s * r * 3 / 4 }')" /dev/urandom | base64 >"$OUT/xz.in"
	pyprog="import json, time
d = list(range(2000))
while time.process_time() < $secs: json.loads(json.dumps(d))"
	for prog in "/usr/bin/python3" "xz"; do
		# the program itself is the command, so that its tables are built before it runs
		if [ "$prog" = xz ]; then cmd=(xz -6 -T1 -c "$OUT/xz.in"); else cmd=(/usr/bin/python3 -c "$pyprog"); fi
		"$HSBPF" record -g -o "$OUT/real.hsbpf" -- "${cmd[@]}" >/dev/null 2>&1
		read -r hc _ _ < <(hsbpf_numbers "$OUT/real.hsbpf")
		n=$("$HSBPF" report -i "$OUT/real.hsbpf" --format json --limit 1 | /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["stack_ends"]["samples"])')
		perf record -q --buildid-mmap --call-graph dwarf -o "$OUT/real.perf" -- "${cmd[@]}" >/dev/null 2>&1 || true
		if perf script -i "$OUT/real.perf" -F ip,sym >"$OUT/real.script" 2>/dev/null; then
			pc="$(perf_complete <"$OUT/real.script")%"
		else
			pc="perf crashed"
		fi
		name=${prog%% *}
		printf "| %s | %s | %s | %s%% | %s | %s KB | %s KB |\n" "${name##*/}" "$secs" "$n" "$hc" "$pc" \
			"$(( $(stat -c %s "$OUT/real.hsbpf") / 1024 ))" "$(( $(stat -c %s "$OUT/real.perf" 2>/dev/null || echo 0) / 1024 ))"
	done
done

echo
echo "## Unwind tables (built once per object, as record builds them)"
echo
"$TABLES" /usr/lib/x86_64-linux-gnu/libc.so.6 "$(readlink -f /usr/bin/python3)" "$(readlink -f "$(command -v xz)")"
