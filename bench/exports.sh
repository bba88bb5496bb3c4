#!/usr/bin/env bash
# make bench-exports: what the exports cost against the profile they come from and against
# report's own outputs. A python3 workload (recursion, json, re: deep interpreter stacks in
# libpython, libc and the kernel) recorded with -g; then, from the same profile, the text
# report (the baseline), folded stacks, pprof and speedscope: each one's size (and gzipped,
# for the text formats), wall time and peak RSS (median of REPS runs), and go tool pprof -top's
# time to read the pprof export.
set -euo pipefail

HSBPF=${HSBPF:-./hsbpf}
OUT=${OUTPUT:-.output}/bench/exports
REPS=${REPS:-3}
SECONDS_RUN=${SECONDS_RUN:-3}
mkdir -p "$OUT"
command -v python3 >/dev/null || { echo "bench: python3 is missing" >&2; exit 1; }
command -v go >/dev/null || { echo "bench: go is missing (scripts/install-deps.sh)" >&2; exit 1; }

cat > "$OUT/work.py" <<PY
import json, re, time
def fib(n): return n if n < 2 else fib(n - 1) + fib(n - 2)
end = time.process_time() + $SECONDS_RUN
while time.process_time() < end:
    fib(20); json.dumps([{"a": 1, "b": [1, 2, 3] * 100}] * 200); re.findall(r"(a+)+b", "a" * 16 + "c")
PY
"$HSBPF" record -g -o "$OUT/py.data" -- python3 "$OUT/work.py" 2>&1 | tail -1
prof_size=$(stat -c %s "$OUT/py.data")
samples=$("$HSBPF" report -i "$OUT/py.data" --limit 1 | sed -n 's/.*, \([0-9]*\) samples,.*/\1/p' | head -1)

median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
# wall seconds and max RSS KB of `hsbpf report ... -o FILE`, REPS times: "time rss"
measure() {
	local fmt=$1 file=$2 t r
	for _ in $(seq "$REPS"); do
		/usr/bin/time -f "%e %M" -o "$OUT/time" "$HSBPF" report -i "$OUT/py.data" $fmt -o "$file"
		cat "$OUT/time"
	done > "$OUT/times"
	t=$(awk '{print $1}' "$OUT/times" | median)
	r=$(awk '{print $2}' "$OUT/times" | median)
	echo "$t $r"
}

printf '\nprofile: %s samples, %s bytes (%s)\n\n' "$samples" "$prof_size" "$OUT/py.data"
printf '| output | size, bytes | x profile | gzipped | time, s | RSS, MB |\n|---|---|---|---|---|---|\n'
for spec in "text:--limit 0:txt" "folded:--format folded:folded" "pprof:--format pprof:pb.gz" \
	    "speedscope:--format speedscope:speedscope.json"; do
	IFS=: read -r name fmt ext <<< "$spec"
	file="$OUT/py.$ext"
	read -r t r <<< "$(measure "$fmt" "$file")"
	size=$(stat -c %s "$file")
	if [ "$name" = pprof ]; then gz="(is gzip)"; else gz=$(gzip -c "$file" | wc -c); fi
	awk -v n="$name" -v s="$size" -v p="$prof_size" -v g="$gz" -v t="$t" -v r="$r" \
		'BEGIN { printf "| %s | %d | %.2f | %s | %s | %.0f |\n", n, s, s / p, g, t, r / 1024 }'
done
gohome=$(mktemp -d)
/usr/bin/time -f "%e" -o "$OUT/time" env HOME="$gohome" GOCACHE="$gohome/cache" GOPATH="$gohome/path" \
	GOFLAGS=-mod=mod GOPROXY=off go tool pprof -top "$OUT/py.pb.gz" > /dev/null
printf '\ngo tool pprof -top on the pprof export: %s s\n' "$(cat "$OUT/time")"
rm -rf "$gohome"
