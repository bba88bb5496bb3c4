#!/usr/bin/env bash
# Run the test binary as `make test` does, keep its whole output in a log beside it, and end
# with every failed test's assertion messages again: a CI that shows only the last lines of a
# run still names what failed and why.
#
# A test that failed on an assertion is run once more, alone; the run passes if each such test
# passes then, and says which failed first (flaky) at its end and in flaky.log beside the log.
# Not run again: a crash or a timeout, any sanitizer report, more than MAX_AGAIN failures (a
# change that broke things). The live tests compare samples with what the kernel and a noisy
# VM give them: a tolerance of 4 standard deviations is missed by chance in ~1 run of 16,000,
# but the VM's sampling is not always binomial (docs/python.md, Limits), and with ~750 tests a
# rare miss comes once in a few runs; two misses in a row of the same test do not.
#   scripts/run-tests.sh TEST_BIN [criterion arguments...]
set -uo pipefail

test_bin=${1:?usage: run-tests.sh TEST_BIN [criterion arguments...]}
shift
dir=$(dirname "$test_bin")
log=$dir/last-run.log
max_again=${MAX_AGAIN:-5}

start=$(date +%s)
rm -f "$log.again"
"$test_bin" "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}

# Criterion prints a failed test's assertion lines ("[----] ...") just before its "[FAIL]"
# line; other tests' own messages may come between, so keep the last [----] lines only.
failures=$(awk '
	/^\[----\]/ { buf[n++ % 24] = $0; next }
	/^\[FAIL\]/ {
		first = n > 24 ? n - 24 : 0
		for (i = first; i < n; i++) print "  " buf[i % 24]
		print "  " $0
		n = 0
	}' "$log")
if [ -n "$failures" ]; then
	echo "tests: what failed, again:"
	printf '%s\n' "$failures"
fi
synthesis=$(grep -a 'Synthesis' "$log" | sed 's/.*Synthesis: //' | tail -n 1)
echo "tests: $synthesis"

failed=$(grep -a '^\[FAIL\]' "$log" | sed 's/^\[FAIL\] \([^:]*\)::\([^:]*\):.*/\1\/\2/')
nr_failed=$(printf '%s' "$failed" | grep -c . || true)
if [ "$status" -ne 0 ] && [ "$nr_failed" -gt 0 ] && [ "$nr_failed" -le "$max_again" ] &&
   ! grep -a -q '^\[FAIL\].*\(CRASH\|Timed out\)' "$log" &&
   ! grep -a -q 'Sanitizer\|runtime error:' "$log"; then
	again_ok=1
	for t in $failed; do
		echo "tests: $t failed: running it again, alone"
		"$test_bin" --jobs 1 --filter "$t" 2>&1 | tee -a "$log.again"
		if [ "${PIPESTATUS[0]}" -eq 0 ]; then
			echo "$(date -u +%FT%TZ) $t failed, then passed alone" >>"$dir/flaky.log"
			echo "tests: FLAKY: $t failed, then passed alone (its first failure is above)"
		else
			again_ok=0
			echo "tests: $t failed again"
		fi
	done
	[ "$again_ok" -eq 1 ] && status=0
fi
# Criterion exits 1 on a warning ([WARN]: cr_log_warn, a crash in a fixture's teardown) with
# every test passed: say so rather than end on a synthesis without a failure
if [ "$status" -ne 0 ] && [ "$nr_failed" -eq 0 ]; then
	echo "tests: the test binary exited $status with no test failed: Criterion's warnings ([WARN]" \
	     "lines) fail a run: $(grep -a -c '^\[WARN\]' "$log") in $log"
	grep -a '^\[WARN\]' "$log" | head -n 20
fi
echo "tests: exit $status after $(( $(date +%s) - start )) s; whole output in $log"
exit "$status"
