// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* slot_pool: first fit from a fresh pool is a bump allocator, freed ranges merge and are
 * reused only past their grace, a full pool says -ENOSPC. */
#include <criterion/criterion.h>
#include <errno.h>
#include "unwind/slot_pool.h"

#define GRACE 1000

Test(slot_pool, a_fresh_pool_hands_out_ranges_in_order_until_full)
{
	struct slot_pool *sp = slot_pool__new(100);
	u32 a, b, c;

	cr_assert(sp);
	cr_assert_eq(slot_pool__alloc(sp, 10, 0, &a), 0);
	cr_assert_eq(slot_pool__alloc(sp, 30, 0, &b), 0);
	cr_expect_eq(a, 0);
	cr_expect_eq(b, 10);
	cr_expect_eq(slot_pool__alloc(sp, 61, 0, &c), -ENOSPC);
	cr_assert_eq(slot_pool__alloc(sp, 60, 0, &c), 0);
	cr_expect_eq(c, 40);
	cr_expect_eq(slot_pool__used(sp), 100);
	cr_expect_eq(slot_pool__nr_ranges(sp), 0);
	cr_expect_eq(slot_pool__alloc(sp, 1, 0, &c), -ENOSPC);
	cr_expect_eq(slot_pool__alloc(sp, 0, 0, &c), 0, "nothing asked, nothing taken");
	slot_pool__free(sp);
}

Test(slot_pool, a_freed_range_waits_for_its_grace)
{
	struct slot_pool *sp = slot_pool__new(20);
	u32 a, b;

	cr_assert_eq(slot_pool__alloc(sp, 20, 0, &a), 0);
	cr_assert_eq(slot_pool__release(sp, 5, 5, 100, GRACE), 0);
	cr_expect_eq(slot_pool__used(sp), 15);
	cr_expect_eq(slot_pool__alloc(sp, 5, 100 + GRACE - 1, &b), -ENOSPC, "still in its grace");
	cr_assert_eq(slot_pool__alloc(sp, 5, 100 + GRACE, &b), 0);
	cr_expect_eq(b, 5);
	slot_pool__free(sp);
}

Test(slot_pool, freed_neighbours_merge_into_one_range)
{
	struct slot_pool *sp = slot_pool__new(30);
	u32 x[3], big;

	for (int i = 0; i < 3; i++)
		cr_assert_eq(slot_pool__alloc(sp, 10, 0, &x[i]), 0);
	cr_assert_eq(slot_pool__release(sp, x[0], 10, 0, GRACE), 0);
	cr_assert_eq(slot_pool__release(sp, x[2], 10, 0, GRACE), 0);
	cr_expect_eq(slot_pool__nr_ranges(sp), 2);
	cr_assert_eq(slot_pool__release(sp, x[1], 10, 50, GRACE), 0);
	cr_expect_eq(slot_pool__nr_ranges(sp), 1, "before, middle and after merged");
	cr_expect_eq(slot_pool__alloc(sp, 30, GRACE, &big), -ENOSPC, "the latest grace holds");
	cr_assert_eq(slot_pool__alloc(sp, 30, 50 + GRACE, &big), 0);
	cr_expect_eq(big, 0);
	cr_expect_eq(slot_pool__used(sp), 30);
	slot_pool__free(sp);
}

Test(slot_pool, first_fit_skips_ranges_too_small)
{
	struct slot_pool *sp = slot_pool__new(100);
	u32 a, b, c, d;

	cr_assert_eq(slot_pool__alloc(sp, 10, 0, &a), 0);	/* 0-9 */
	cr_assert_eq(slot_pool__alloc(sp, 10, 0, &b), 0);	/* 10-19 */
	cr_assert_eq(slot_pool__alloc(sp, 10, 0, &c), 0);	/* 20-29 */
	cr_assert_eq(slot_pool__release(sp, a, 10, 0, 0), 0);
	cr_assert_eq(slot_pool__alloc(sp, 15, 0, &d), 0);
	cr_expect_eq(d, 30, "the 10 free slots at 0 are too few");
	cr_assert_eq(slot_pool__alloc(sp, 4, 0, &d), 0);
	cr_expect_eq(d, 0);
	cr_expect_eq(slot_pool__used(sp), 39);
	(void)b;
	(void)c;
	slot_pool__free(sp);
}
