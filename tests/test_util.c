// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* util: the parsers every command's options go through. */
#include <criterion/criterion.h>
#include "util.h"

/* record -d's bounds: whatever passes becomes a deadline in ns without overflowing */
Test(util, parse_seconds)
{
	static const struct {
		const char *s;
		int err;
		double v;
	} cases[] = {
		{ "1", 0, 1 },
		{ "0.5", 0, 0.5 },
		{ "2e3", 0, 2000 },
		{ "+3", 0, 3 },
		{ "0.001", 0, 0.001 },
		{ "31536000", 0, 31536000 },
		{ "0", -EINVAL },
		{ "-1", -EINVAL },
		{ "-0", -EINVAL },
		{ "0.0001", -EINVAL },	/* below the minimum */
		{ "31536001", -EINVAL },	/* above the maximum */
		{ "1e10", -EINVAL },
		{ "1.8e10", -EINVAL },	/* where the ns deadline used to overflow */
		{ "1e400", -EINVAL },	/* ERANGE: inf */
		{ "1e-400", -EINVAL },	/* ERANGE: 0 */
		{ "inf", -EINVAL },
		{ "infinity", -EINVAL },
		{ "-inf", -EINVAL },
		{ "nan", -EINVAL },
		{ "0x10", -EINVAL },
		{ "0x1p4", -EINVAL },
		{ " 2", -EINVAL },
		{ "2 ", -EINVAL },
		{ "2s", -EINVAL },
		{ "", -EINVAL },
		{ ".", -EINVAL },
		{ "e", -EINVAL },
		{ "1..2", -EINVAL },
	};
	double v;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		v = -42;
		cr_expect_eq(parse_seconds(cases[i].s, 0.001, 365 * 86400.0, &v), cases[i].err, "'%s'",
			     cases[i].s);
		if (!cases[i].err)
			cr_expect_eq(v, cases[i].v, "'%s': %g", cases[i].s, v);
		else
			cr_expect_eq(v, -42, "'%s': written on failure", cases[i].s);
	}
	cr_expect_eq(parse_seconds(NULL, 0, 1, &v), -EINVAL);
}
