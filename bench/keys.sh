#!/usr/bin/env bash
# make bench-keys: what the finer sample keys cost. For each key set (none: --no-per-thread,
# as recordings were before threads; tid: the default; cpu; time; all), the sample handler's
# run time per sample (kernel BPF statistics) on the workers fixture at 4999 Hz, and the slots
# (distinct keys) a recording of the fixture and one of the whole machine for 3 s take. The
# key sets run in turn within each repetition, so the machine's drift hits them alike;
# medians over REPS.
set -euo pipefail

HSBPF=${HSBPF:-./hsbpf}
FIX=${FIXTURES:-.output/fixtures}
OUT=${OUTPUT:-.output}/bench
REPS=${REPS:-5}
mkdir -p "$OUT"
[ "$(id -u)" -eq 0 ] || { echo "bench: run as root" >&2; exit 1; }

old_stats=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -qw kernel.bpf_stats_enabled=1
trap 'sysctl -qw kernel.bpf_stats_enabled="$old_stats"' EXIT

declare -A OPTS=([none]="--no-per-thread" [tid]="" [cpu]="--per-cpu" [time]="--time-buckets"
		 [all]="--per-cpu --time-buckets")
SETS="none tid cpu time all"
meta() { strings "$1" | grep -a "^$2=" | cut -d= -f2; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

for rep in $(seq "$REPS"); do
	for set in $SETS; do
		# shellcheck disable=SC2086
		"$HSBPF" record -F 4999 ${OPTS[$set]} -o "$OUT/keys.data" -- "$FIX/workers" 0.5 \
			>/dev/null 2>"$OUT/keys.err"
		ns=$(meta "$OUT/keys.data" bpf_run_ns)
		cnt=$(meta "$OUT/keys.data" bpf_run_cnt)
		echo "$set ns $(awk -v a="$ns" -v b="$cnt" 'BEGIN {printf "%.1f", a / b}')"
		echo "$set slots $(grep -o 'in [0-9]* slots' "$OUT/keys.err" | cut -d' ' -f2)"
		# shellcheck disable=SC2086
		"$HSBPF" record -a -d 3 ${OPTS[$set]} -o "$OUT/keys.data" 2>"$OUT/keys.err"
		echo "$set aslots $(grep -o 'in [0-9]* slots' "$OUT/keys.err" | cut -d' ' -f2)"
	done
done >"$OUT/keys.raw"

printf '| keys | record options | handler ns/sample (median) | slots, workers fixture | slots, -a for 3 s |\n'
printf '|---|---|---|---|---|\n'
for set in $SETS; do
	ns=$(awk -v s="$set" '$1 == s && $2 == "ns" {print $3}' "$OUT/keys.raw" | median)
	sl=$(awk -v s="$set" '$1 == s && $2 == "slots" {print $3}' "$OUT/keys.raw" | median)
	as=$(awk -v s="$set" '$1 == s && $2 == "aslots" {print $3}' "$OUT/keys.raw" | median)
	printf '| %s | %s | %s | %s | %s |\n' "$set" "${OPTS[$set]:-(default)}" "$ns" "$sl" "$as"
done
