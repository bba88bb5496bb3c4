#!/usr/bin/env bash
# Is a prime period's lead over a randomized one on `fragmented` noise? The virtual PMU's
# precise-prime and precise-random methods (hsbpf experiment --methods, docs/virtual-pmu.md)
# on the fragmented kernel, NOISE_RUNS times. One emulation is deterministic for a given
# environment, so each run adds a variable of a different length to the workload's
# environment (37 bytes more each run): that moves the start-up work by a few instructions and with it where every
# period falls, which is how the environment resamples a run (docs/virtual-pmu.md,
# "Reproducible, for a given environment"); an environment that moves nothing repeats a run
# exactly and is not counted. Prints AE and NRMSE per method with 95% intervals over the
# distinct runs, and the paired difference random - prime. Markdown.
#   HSBPF=... bench/period_noise.sh     (PART=noise make bench-periods)
# Environment: NOISE_RUNS (default 6), NOISE_QUICK (1: the kernel at 1/16 of its work, about
# 5 s a run; default 0, full size, about 1.5 min of CPU a run), NOISE_WORKLOAD (fragmented).
set -euo pipefail

hsbpf=${HSBPF:?}
here=$(cd "$(dirname "$0")" && pwd)
runs=${NOISE_RUNS:-6}
quick=${NOISE_QUICK:-0}
workload=${NOISE_WORKLOAD:-fragmented}
tmp=$(mktemp -d /tmp/hsbpf-period-noise-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

args=(experiment --methods --method "precise-prime,precise-random" --only "$workload")
[ "$quick" = 1 ] && args+=(--quick)
: > "$tmp/rows"
# an environment that moves nothing repeats an earlier run to the last digit: such a run is
# not a new draw, so runs are added until NOISE_RUNS distinct ones (at most 3 x as many)
tried=0
while [ "$(wc -l < "$tmp/rows")" -lt "$runs" ] && [ "$tried" -lt $(( 3 * runs )) ]; do
	tried=$(( tried + 1 ))
	env HSBPF_BENCH_PAD="$(printf "%0$(( 37 * tried ))d" 0)" "$hsbpf" "${args[@]}" -o "$tmp/run" \
		>/dev/null 2>"$tmp/log" || { cat "$tmp/log" >&2; exit 1; }
	# "ae_prime nrmse_prime ae_random nrmse_random"
	row=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		{ v[$(col["method"])] = $(col["ae"]) " " $(col["nrmse"]) }
		END { print v["precise-prime"], v["precise-random"] }' "$tmp/run/methods.csv")
	grep -qxF "$row" "$tmp/rows" || echo "$row" >> "$tmp/rows"
done
runs=$(wc -l < "$tmp/rows")

ci() {
	# shellcheck disable=SC2046
	python3 "$here/ci.py" mean $(awk "{ printf \"%.6f \", $1 }" "$tmp/rows")
}

echo "| metric | precise-prime: mean [95% interval] | precise-random | random - prime [95% interval] | random lower in | each run: prime / random |"
echo "|---|---|---|---|---|---|"
for metric in AE NRMSE; do
	# awk's columns, expanded by awk
	# shellcheck disable=SC2016
	p='$1' r='$3'
	# shellcheck disable=SC2016
	[ $metric = NRMSE ] && p='$2' r='$4'
	read -r pm plo phi _ < <(ci "$p")
	read -r rm rlo rhi _ < <(ci "$r")
	read -r dm dlo dhi _ < <(ci "$r - $p")
	wins=$(awk "$r < $p { n++ } END { print n + 0 }" "$tmp/rows")
	each=$(awk "{ printf \"%.3f/%.3f \", $p, $r }" "$tmp/rows")
	printf "| %s | %.4f [%.4f, %.4f] | %.4f [%.4f, %.4f] | %+.4f [%+.4f, %+.4f] | %d of %d runs | %s|\n" \
		"$metric" "$pm" "$plo" "$phi" "$rm" "$rlo" "$rhi" "$dm" "$dlo" "$dhi" "$wins" "$runs" "$each"
done
echo
echo "Command: PART=noise make bench-periods (NOISE_RUNS=$runs: $tried environments for $runs distinct runs; NOISE_QUICK=$quick NOISE_WORKLOAD=$workload), $(date -u +%Y-%m-%d), $(nproc) CPUs, kernel $(uname -r)"
