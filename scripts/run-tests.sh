#!/usr/bin/env bash
# Run the test binary as `make test` does, keep its whole output in a log beside it, and end
# with every failed test's assertion messages again: a CI that shows only the last lines of a
# run still names what failed and why.
#   scripts/run-tests.sh TEST_BIN [criterion arguments...]
set -uo pipefail

test_bin=${1:?usage: run-tests.sh TEST_BIN [criterion arguments...]}
shift
log=$(dirname "$test_bin")/last-run.log

start=$(date +%s)
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
echo "tests: $(grep -a 'Synthesis' "$log" | sed 's/.*Synthesis: //' | tail -n 1)"
echo "tests: exit $status after $(( $(date +%s) - start )) s; whole output in $log"
exit "$status"
