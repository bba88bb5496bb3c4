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
