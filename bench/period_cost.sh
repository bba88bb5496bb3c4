#!/usr/bin/env bash
# The period modes' cost as the program sees it: the slowdown of real programs recorded at
# -F 999 in fixed, phase (the default) and random mode against an unprofiled run, in one run,
# the modes alternated block by block (each block: unprofiled, fixed, phase, random, the
# order rotated every block) so that the machine's drift and other sessions' load fall on
# every mode alike. Workloads: xz -9 on a fixed input, python3 running a fixed loop, and the
# phaselock fixture (a fixed time: its cost is per spin). The slowdown is in the program's
# CPU time, which the interrupts landing in it are charged to and other sessions' load is not
# (wall time beside it). Each mode's slowdown is the mean of its ratios to its block's
# unprofiled run; the default's cost relative to fixed's is (phase's slowdown - 1) /
# (fixed's - 1), with a 95% bootstrap interval over the blocks. Prints markdown.
#   HSBPF=... FIXTURES=... bench/period_cost.sh     (PART=cost make bench-periods)
# Environment: COST_REPS (blocks, default 10), XZ_MB (input, default 3), PY_ITERS (default
# 30000000), PL_SECONDS (phaselock, default 2), WORKLOADS (default "xz python3 phaselock").
set -euo pipefail

hsbpf=${HSBPF:?}
fixtures=${FIXTURES:?}
here=$(cd "$(dirname "$0")" && pwd)
reps=${COST_REPS:-10}
xz_mb=${XZ_MB:-3}
py_iters=${PY_ITERS:-30000000}
pl_secs=${PL_SECONDS:-2}
workloads=${WORKLOADS:-xz python3 phaselock}
modes=(none fixed phase random)
tmp=$(mktemp -d /tmp/hsbpf-period-cost-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

command -v xz >/dev/null || { echo "bench: xz is missing" >&2; exit 1; }
"$fixtures/gen-input" "$xz_mb" > "$tmp/input"
printf 'x = 0\nfor i in range(%d):\n    x += i * i %% 7\n' "$py_iters" > "$tmp/loop.py"

# the measuring wrapper, run under record as the command: writes the workload's cost to $1 as
# "WALL,CPU", its wall time and its CPU time (user + system, which includes the interrupts
# that land in it: no IRQ time accounting here) in s, or for phaselock, which runs for a
# fixed time, both per million spins
cat > "$tmp/measure" <<'END'
#!/usr/bin/env bash
out=$1 what=$2
shift 2
TIMEFORMAT='%R %U %S'
{ time "$@" > /dev/null 2> "$out.err"; } 2> "$out.time"
read -r wall user sys < "$out.time"
n=1
[ "$what" = spins ] && n=$(awk '/ spins$/ { print $1 / 1e6 }' "$out.err")
awk -v w="$wall" -v u="$user" -v s="$sys" -v n="$n" \
	'BEGIN { printf "%.6f,%.6f\n", w / n, (u + s) / n }' > "$out"
END
chmod +x "$tmp/measure"

workload_cmd() {
	case $1 in
	xz) echo "time xz -9 -T1 -c $tmp/input" ;;
	python3) echo "time /usr/bin/python3 $tmp/loop.py" ;;
	phaselock) echo "spins $fixtures/phaselock 1001001 0.5 $pl_secs" ;;
	esac
}

# one run: prints its "WALL,CPU"
run_one() {
	local mode=$1 w=$2 out=$tmp/cost
	# shellcheck disable=SC2046
	if [ "$mode" = none ]; then
		"$tmp/measure" "$out" $(workload_cmd "$w")
	else
		"$hsbpf" record -F 999 --period-mode "$mode" -o "$tmp/r.data" -- \
			"$tmp/measure" "$out" $(workload_cmd "$w") >/dev/null 2>"$tmp/record.log" ||
			{ cat "$tmp/record.log" >&2; return 1; }
	fi
	cat "$out"
}

for w in $workloads; do
	: > "$tmp/$w.costs"
	for b in $(seq 0 $(( reps - 1 ))); do
		line=""
		for i in 0 1 2 3; do
			m=${modes[$(( (i + b) % 4 ))]}
			line+="$m=$(run_one "$m" "$w") "
		done
		echo "$line" >> "$tmp/$w.costs"
	done
done

ci() {
	python3 "$here/ci.py" "$@"
}

echo "| workload | mode | CPU time: slowdown against unprofiled, mean [95% interval] | overhead / fixed's overhead [95% interval] | overhead - fixed's, points [95% interval] | wall time: slowdown [95% interval] |"
echo "|---|---|---|---|---|---|"
for w in $workloads; do
	# per block: the unprofiled CPU time, each mode's CPU time / the block's unprofiled one,
	# then the same for wall time
	awk '{
		for (i = 1; i <= NF; i++) {
			split($i, kv, "="); split(kv[2], v, ","); w[kv[1]] = v[1]; c[kv[1]] = v[2]
		}
		printf "%.6f %.6f %.6f %.6f %.6f %.6f %.6f\n", c["none"], c["fixed"] / c["none"],
			c["phase"] / c["none"], c["random"] / c["none"], w["fixed"] / w["none"],
			w["phase"] / w["none"], w["random"] / w["none"] }' "$tmp/$w.costs" > "$tmp/$w.ratios"
	case $w in
	xz) label="xz -9 -T1, $xz_mb MB" ;;
	python3) label="python3, a $py_iters-iteration loop" ;;
	phaselock) label="phaselock, $pl_secs s (per spin)" ;;
	esac
	[ "$w" != phaselock ] &&
		label+=" (alone $(awk '{ s += $1 } END { printf "%.2f", s / NR }' "$tmp/$w.ratios") s of CPU)"
	for col in 2 3 4; do
		m=${modes[$(( col - 1 ))]}
		# shellcheck disable=SC2046
		read -r mean lo hi _ < <(ci mean $(cut -d' ' -f"$col" "$tmp/$w.ratios"))
		# shellcheck disable=SC2046
		read -r wm wlo whi _ < <(ci mean $(cut -d' ' -f"$(( col + 3 ))" "$tmp/$w.ratios"))
		rel="-" diff="-"
		if [ "$m" != fixed ]; then
			# shellcheck disable=SC2046
			read -r r rlo rhi _ < <(ci ratio $(awk -v c="$col" \
				'{ printf "%.6f,%.6f ", $c - 1, $2 - 1 }' "$tmp/$w.ratios"))
			rel=$(printf "%.2fx [%.2f, %.2f]" "$r" "$rlo" "$rhi")
			# shellcheck disable=SC2046
			read -r d dlo dhi _ < <(ci mean $(awk -v c="$col" \
				'{ printf "%.6f ", 100 * ($c - $2) }' "$tmp/$w.ratios"))
			diff=$(printf "%+.2f [%+.2f, %+.2f]" "$d" "$dlo" "$dhi")
		fi
		printf "| %s | %s | %.4f [%.4f, %.4f] | %s | %s | %.4f [%.4f, %.4f] |\n" \
			"$label" "$m" "$mean" "$lo" "$hi" "$rel" "$diff" "$wm" "$wlo" "$whi"
	done
done
echo
echo "Command: PART=cost make bench-periods (COST_REPS=$reps XZ_MB=$xz_mb PY_ITERS=$py_iters PL_SECONDS=$pl_secs), $(date -u +%Y-%m-%d), $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg) at the end, kernel $(uname -r)"
