#!/usr/bin/env bash
# Run the whole suite N times while CPU hogs keep the other cores busy, and print how many
# times each test failed: the proof that the tests hold on a busy machine, as CI's is.
#   scripts/stress-test.sh [N]      (make stress-test N=10)
# Environment: HOGS (default: one per CPU but one), FILTER (a Criterion filter, e.g.
# 'live*/*'; default every test), TEST_BIN, HSBPF, FIXTURES, OUTPUT, LBR_DATA as `make test`
# sets them.
set -uo pipefail

runs=${1:-10}
hogs=${HOGS:-$(( $(nproc) - 1 ))}
filter=${FILTER:-}
test_bin=${TEST_BIN:?TEST_BIN: the test binary}
log_dir=$(mktemp -d /tmp/hsbpf-stress-XXXXXX)
hog_pids=()

stop_hogs() {
	for p in "${hog_pids[@]}"; do
		kill "$p" 2>/dev/null
	done
	wait 2>/dev/null
}
trap 'stop_hogs; exit 130' INT TERM
trap stop_hogs EXIT

for _ in $(seq 1 "$hogs"); do
	( while :; do :; done ) &
	hog_pids+=($!)
done
echo "stress-test: $runs runs of '${filter:-every test}' beside $hogs CPU hog(s) on $(nproc) CPUs; logs in $log_dir"

passed_runs=0
for i in $(seq 1 "$runs"); do
	log=$log_dir/run-$i.log
	start=$(date +%s)
	"$test_bin" --jobs 1 ${filter:+--filter "$filter"} >"$log" 2>&1
	status=$?
	synthesis=$(grep -a 'Synthesis' "$log" | sed 's/.*Synthesis: //')
	printf 'run %2d: %s (%ds)%s\n' "$i" "${synthesis:-no synthesis}" $(( $(date +%s) - start )) \
		"$([ $status -eq 0 ] && echo '' || echo ' FAILED')"
	[ $status -eq 0 ] && passed_runs=$((passed_runs + 1))
done

echo "stress-test: $passed_runs of $runs runs passed every test"
# per test: how many runs it failed in (tests absent from this list passed every run)
grep -ah '^\[FAIL\]' "$log_dir"/run-*.log | sed 's/: (.*//' | sort | uniq -c |
	awk -v n="$runs" '{ printf "  %s failed %d of %d runs\n", $3, $1, n }'
[ "$passed_runs" -eq "$runs" ]
