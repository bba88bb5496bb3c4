// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* layout: docs/layout.md is what scripts/layout.sh makes of the files' opening comments now,
 * so the map of the code cannot go stale (`make layout` writes it again). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include "helpers.h"

Test(layout, docs_layout_md_is_current)
{
	struct run_result *r = malloc(sizeof(*r));

	cr_assert(r);
	run(r, "scripts/layout.sh | diff -u docs/layout.md -");
	cr_expect_eq(r->status, 0, "docs/layout.md is not current: run make layout\n%.3000s%s", r->out, r->err);
	free(r);
}

/* Criterion exits 1 when a test logs a warning (cr_log_warn), even with every test passed: a
 * retry said as a warning failed the run with nothing failed. The tests say such things with
 * cr_log_info */
Test(layout, tests_log_no_criterion_warnings)
{
	struct run_result *r = malloc(sizeof(*r));

	cr_assert(r);
	run(r, "grep -n 'cr_log_warn\\|CR_LOG_WARNING' --exclude=test_layout.c tests/*.c tests/*.h");
	cr_expect_eq(r->status, 1, "tests that log Criterion warnings (the run then exits 1): %s%s",
		     r->out, r->err);
	free(r);
}
