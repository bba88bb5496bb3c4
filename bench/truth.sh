#!/usr/bin/env bash
# make bench-truth: the reference collector's slowdown against the native run on gzip -6 of a
# fixed 8 MB input, counting blocks only and blocks with edges, next to the bare emulator and
# to callgrind on the same work, and with the virtual PMU: PDIR (no clock) and classic cycles
# (the timing model, docs/virtual-pmu.md). Medians of REPS runs, interleaved.
set -euo pipefail

HSBPF=${HSBPF:-./hsbpf}
FIX=${FIXTURES:-.output/fixtures}
OUT=${OUTPUT:-.output}/bench
REPS=${REPS:-3}
MB=${MB:-8}
mkdir -p "$OUT"
"$FIX/gen-input" "$MB" > "$OUT/input.txt"
GZ="/usr/bin/gzip -6 -c $OUT/input.txt"

now() { date +%s%N; }
time_of() { local t0 t1; t0=$(now); "$@" >/dev/null 2>&1; t1=$(now); echo "$(( (t1 - t0) / 1000000 ))"; }
median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

declare -A ms
names=(native qemu blocks bcct edges ecct pdir cycles callgrind)
for r in $(seq "$REPS"); do
	ms[native]+=" $(time_of $GZ)"
	ms[qemu]+=" $(time_of qemu-x86_64 $GZ)"
	ms[blocks]+=" $(time_of "$HSBPF" truth --no-edges --no-cct -o "$OUT/b.truth" -- $GZ)"
	ms[bcct]+=" $(time_of "$HSBPF" truth --no-edges -o "$OUT/bc.truth" -- $GZ)"
	ms[edges]+=" $(time_of "$HSBPF" truth --no-cct -o "$OUT/e.truth" -- $GZ)"
	ms[ecct]+=" $(time_of "$HSBPF" truth -o "$OUT/ec.truth" -- $GZ)"
	ms[pdir]+=" $(time_of "$HSBPF" truth --vpmu insns --sampling pdir --period-mode prime \
		-o "$OUT/p.truth" --profile "$OUT/p.data" -- $GZ)"
	ms[cycles]+=" $(time_of "$HSBPF" truth --vpmu cycles -o "$OUT/c.truth" --profile "$OUT/c.data" -- $GZ)"
	ms[callgrind]+=" $(time_of valgrind --tool=callgrind --dump-instr=yes --collect-jumps=yes \
		--skip-plt=no --callgrind-out-file="$OUT/cg.out" $GZ)"
	echo "  round $r done" >&2
done
base=$(echo "${ms[native]}" | tr ' ' '\n' | grep . | median)
{
echo "| run | median ms | slowdown vs native |"
echo "|---|---|---|"
for n in "${names[@]}"; do
	m=$(echo "${ms[$n]}" | tr ' ' '\n' | grep . | median)
	label=$n
	case $n in
	native) label="gzip -6, native" ;;
	qemu) label="qemu-x86_64, no plugin" ;;
	blocks) label="hsbpf truth --no-edges --no-cct (block counts)" ;;
	bcct) label="hsbpf truth --no-edges (block counts, calling contexts)" ;;
	edges) label="hsbpf truth --no-cct (block and edge counts)" ;;
	ecct) label="hsbpf truth (block and edge counts, calling contexts)" ;;
	pdir) label="hsbpf truth --vpmu insns --sampling pdir (no clock)" ;;
	cycles) label="hsbpf truth --vpmu cycles (timing model)" ;;
	callgrind) label="callgrind --dump-instr=yes --collect-jumps=yes" ;;
	esac
	awk -v l="$label" -v m="$m" -v b="$base" 'BEGIN { printf "| %s | %d | %.1fx |\n", l, m, m / b }'
done
echo
echo "gzip -6 of $MB MB ($(stat -c %s "$OUT/input.txt") bytes), $REPS rounds; truth runs include hsbpf's"
echo "conversion of the counts to the truth file."
} | tee "$OUT/truth-results.md"
