// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* pycodes: the code objects of a recording by (pid, address, generation), with known answers:
 * each generation of an address is an entry of its own, the last added is the newest, pids
 * and addresses apart; a frame never announced is read from memory only when no generation
 * of its address is known and it is the highest of the stacks' there. */
#include <criterion/criterion.h>
#include "python/pycodes.h"

TestSuite(pycodes);

#define AT	0x7f0000001230ull

Test(pycodes, each_generation_is_its_own_entry_and_the_last_is_the_newest)
{
	struct pycodes c = { 0 };
	struct pycode_ent *e;

	cr_assert_null(pycodes__newest(&c, 7, AT));
	e = pycodes__add(&c, 7, AT, 0);
	cr_assert(e);
	e->err = -ESRCH;
	cr_expect_eq(pycodes__newest(&c, 7, AT), pycodes__find(&c, 7, AT, 0));
	cr_assert(pycodes__add(&c, 7, AT, 1));
	cr_assert(pycodes__add(&c, 7, AT + 16, 0));
	cr_assert(pycodes__add(&c, 8, AT, 0));
	e = pycodes__find(&c, 7, AT, 0);
	cr_assert(e);
	cr_expect_eq(e->err, -ESRCH, "the entry kept what was set on it");
	cr_expect_not(e->newest);
	cr_expect_eq(pycodes__newest(&c, 7, AT)->gen, 1);
	cr_expect(pycodes__find(&c, 7, AT + 16, 0)->newest, "another address has its own");
	cr_expect(pycodes__find(&c, 8, AT, 0)->newest, "another process has its own");
	cr_expect_null(pycodes__find(&c, 7, AT, 2));
	/* the generations wrap: 5, then 0 again is added only by one who checked it is not
	 * there (pytrack: an announcement of a generation cached is another code object) */
	for (u32 g = 2; g < HSBPF_PY_GENS; g++)
		cr_assert(pycodes__add(&c, 7, AT, g));
	cr_expect_eq(pycodes__newest(&c, 7, AT)->gen, HSBPF_PY_GENS - 1);
	for (u32 g = 0; g < HSBPF_PY_GENS - 1; g++)
		cr_expect_not(pycodes__find(&c, 7, AT, g)->newest, "gen %u", g);
	pycodes__free(&c);
}

Test(pycodes, many_entries_stay_found)
{
	struct pycodes c = { 0 };

	for (u32 i = 0; i < 5000; i++)
		cr_assert(pycodes__add(&c, 1 + i % 3, AT + 16 * (i / 3 % 500), i / 1500));
	for (u32 i = 0; i < 5000; i++) {
		struct pycode_ent *e = pycodes__find(&c, 1 + i % 3, AT + 16 * (i / 3 % 500), i / 1500);

		cr_assert(e, "%u", i);
		/* 0-4999: generations 0-2 of every key, 3 of the first 500 (i % 1500 < 500) */
		cr_expect_eq(e->newest, i / 1500 == 3 || (i / 1500 == 2 && i % 1500 >= 500), "%u", i);
	}
	pycodes__free(&c);
}

Test(pycodes, an_unannounced_frame_is_read_only_as_the_newest)
{
	struct pycodes c = { 0 };

	/* nothing known at the address: the highest generation of the stacks' frames is read,
	 * a lower one is not (memory holds a newer code object than its) */
	cr_expect(pycodes__readable(&c, 7, AT, 0, 0));
	cr_expect(pycodes__readable(&c, 7, AT, 2, 2));
	cr_expect_not(pycodes__readable(&c, 7, AT, 1, 2));
	/* a generation known: an unannounced one is not read, whichever it is */
	cr_assert(pycodes__add(&c, 7, AT, 1));
	cr_expect_not(pycodes__readable(&c, 7, AT, 0, 0));
	cr_expect_not(pycodes__readable(&c, 7, AT, 2, 2));
	cr_expect(pycodes__readable(&c, 8, AT, 0, 0), "another process's address");
	pycodes__free(&c);
}
