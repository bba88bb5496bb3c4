#!/bin/sh
# Merge the method tables of several `hsbpf experiment --methods --only NAME -o DIR` runs (one
# workload each, so that each finished run is kept however the session ends) into one CSV and
# draw its AE figure as `experiment --methods` does (gnuplot, log scale, floor 1e-4).
# usage: scripts/methods-merge.sh OUT.csv OUT.png DIR...
set -eu
[ $# -ge 3 ] || { echo "usage: $0 OUT.csv OUT.png DIR..." >&2; exit 2; }
csv=$1 png=$2
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
first=1
for d in "$@"; do
	f=$d/methods.csv
	[ -f "$f" ] || { echo "$0: no $f (skipped)" >&2; continue; }
	if [ $first = 1 ]; then
		cat "$f" >"$tmp/all.csv"
		first=0
	else
		tail -n +2 "$f" >>"$tmp/all.csv"
	fi
done
[ $first = 0 ] || { echo "$0: no table to merge" >&2; exit 1; }
cp "$tmp/all.csv" "$csv"
# rows: workloads in order; columns: the methods in the order of the first workload's rows
awk -F, 'NR > 1 {
	if (!($1 in seen)) { seen[$1] = 1; w[++nw] = $1 }
	if (!($3 in mseen)) { mseen[$3] = 1; m[++nm] = $3 }
	ae[$1, $3] = $10 < 1e-4 ? 1e-4 : $10
} END {
	printf "workload"
	for (j = 1; j <= nm; j++) printf " %s", m[j]
	printf "\n"
	for (i = 1; i <= nw; i++) {
		printf "%s", w[i]
		for (j = 1; j <= nm; j++) printf " %s", ((w[i], m[j]) in ae) ? ae[w[i], m[j]] : "NaN"
		printf "\n"
	}
	print nm > "/dev/stderr"
}' "$tmp/all.csv" >"$tmp/ae.dat" 2>"$tmp/ncols"
ncols=$(cat "$tmp/ncols")
gnuplot <<EOF
set style data histogram
set style histogram cluster gap 1
set style fill solid border -1
set key outside right top
set xtics rotate by -30
set grid ytics
set logscale y
set yrange [5e-5:2]
set ylabel 'accuracy error'
set terminal pngcairo size 1000,480
set output '$png'
set title 'Accuracy error by sampling method on the virtual PMU (Haswell timing model; log scale, floor 1e-4)'
plot for [c=2:$((ncols + 1))] '$tmp/ae.dat' using c:xtic(1) title columnheader
EOF
