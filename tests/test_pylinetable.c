// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* pylinetable__line against CPython 3.11's own answers: a function's co_linetable and the
 * line co_positions() gives each of its code units (taken from Debian's python3.11). */
#include <criterion/criterion.h>
#include <errno.h>
#include "python/pyoffsets.h"

/* def f(a, b):                 (line 1)
 *     x = a + b
 *
 *     if x > 10:
 *         return [i * i
 *                 for i in range(x)]
 *     y = (a
 *          * b)
 *     return y */
static const uint8_t table[] = {
	0x80, 0x00, 0xd8, 0x08, 0x09, 0x88, 0x41, 0x89, 0x05, 0x80, 0x41, 0xe0, 0x07, 0x08, 0x88, 0x32,
	0x82, 0x76, 0x80, 0x76, 0xf0, 0x02, 0x01, 0x10, 0x23, 0xf0, 0x00, 0x01, 0x10, 0x23, 0xdd, 0x19,
	0x1e, 0x98, 0x71, 0x99, 0x18, 0x9c, 0x18, 0xf0, 0x03, 0x01, 0x10, 0x23, 0xf1, 0x00, 0x01, 0x10,
	0x23, 0xf4, 0x00, 0x01, 0x10, 0x23, 0xf0, 0x00, 0x01, 0x09, 0x23, 0xe0, 0x09, 0x0a, 0xd8, 0x0b,
	0x0c, 0xf1, 0x03, 0x01, 0x0a, 0x0d, 0x80, 0x41, 0xe0, 0x0b, 0x0c, 0x80, 0x48,
};
static const int lines[] = {
	1, 2, 2, 2, 2, 2, 4, 4, 4, 4, 4, 4, 5, 5, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6,
	5, 5, 5, 5, 5, 5, 5, 5, 5, 7, 8, 7, 7, 7, 9, 9,
};

Test(pylinetable, every_code_unit_has_the_line_co_positions_gives)
{
	for (uint32_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		int line = -1;

		cr_assert_eq(pylinetable__line(3, 11, table, sizeof(table), 1, i, &line), 0, "unit %u", i);
		cr_expect_eq(line, lines[i], "unit %u: line %d, co_positions says %d", i, line, lines[i]);
	}
}

Test(pylinetable, past_the_table_and_no_location_have_no_line)
{
	/* one entry of kind 15 (no location) for 2 units, then one of kind 13 (+3) for 1 */
	static const uint8_t t[] = { 0x80 | 15 << 3 | 1, 0x80 | 13 << 3 | 0, 0x06 };
	int line = 0;

	cr_expect_eq(pylinetable__line(3, 11, t, sizeof(t), 10, 0, &line), -ENOENT);
	cr_expect_eq(pylinetable__line(3, 11, t, sizeof(t), 10, 1, &line), -ENOENT);
	cr_expect_eq(pylinetable__line(3, 11, t, sizeof(t), 10, 2, &line), 0);
	cr_expect_eq(line, 13);
	cr_expect_eq(pylinetable__line(3, 11, t, sizeof(t), 10, 3, &line), -ENOENT);
	cr_expect_eq(pylinetable__line(3, 11, table, sizeof(table), 1, 1000, &line), -ENOENT);
}

Test(pylinetable, a_corrupt_table_or_an_older_version_is_refused)
{
	static const uint8_t bad[] = { 0x05, 0x80 };
	int line = 0;

	cr_expect_eq(pylinetable__line(3, 11, bad, sizeof(bad), 1, 0, &line), -EINVAL);
	cr_expect_eq(pylinetable__line(3, 9, table, sizeof(table), 1, 0, &line), -ENOTSUP);
	cr_expect_eq(pylinetable__line(3, 11, NULL, 0, 1, 0, &line), -ENOENT);
}

Test(pylinetable, version_310_reads_its_own_format)
{
	/* 3.10's (start delta in bytes, line delta) pairs: 4 bytes at line 1 + 2, 6 at + 1 more */
	static const uint8_t t310[] = { 4, 2, 6, 1 };
	int line = 0, line310 = 0;

	cr_assert_eq(pylinetable__line_310(t310, sizeof(t310), 1, 3, &line310), 0);
	cr_assert_eq(pylinetable__line(3, 10, t310, sizeof(t310), 1, 3, &line), 0);
	cr_expect_eq(line, line310);
	cr_expect_eq(line, 4, "instruction 3 (byte 6) is in the second range");
}
