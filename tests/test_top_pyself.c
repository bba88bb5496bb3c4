// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* top_pyself: the Python leaves of top's stack samples, given as totals since the start, made
 * into each interval's growth, sorted by group (the kernel side, reading the stack map, is
 * tests/test_live_python.c's top test). */
#include <criterion/criterion.h>
#include "hsbpf.h"
#include "report/top_pyself.h"

static struct top_pyleaf leaf(u32 pid, u32 tid, u64 stack, u64 count)
{
	return (struct top_pyleaf){ .pid = pid, .tid = tid, .stack = stack,
				    .frame = HSBPF_PY_FRAME(0x1000 * stack, 4), .count = count };
}

/* counts of one interval: the leaves' growth, by group */
Test(top_pyself, each_interval_is_the_growth_since_the_last)
{
	static const struct {
		u64 counts[3];		/* leaves a (pid 2), b (pid 1), c (pid 1, tid 5) so far */
		u64 growth[3];		/* sorted by group: b, c, a; 0 absent */
		size_t nr;
	} steps[] = {
		{ { 10, 5, 0 }, { 5, 0, 10 }, 2 },	/* first seen: all of it */
		{ { 10, 5, 0 }, { 0, 0, 0 }, 0 },	/* no growth, nothing */
		{ { 14, 5, 3 }, { 0, 3, 4 }, 2 },
		{ { 2, 6, 3 }, { 1, 0, 2 }, 2 },	/* a went down: made again in the kernel */
	};
	struct top_pyself *y = top_pyself__new();

	cr_assert(y);
	for (size_t s = 0; s < ARRAY_SIZE(steps); s++) {
		struct top_pyleaf in[3] = { leaf(2, 0, 1, steps[s].counts[0]),
					    leaf(1, 0, 2, steps[s].counts[1]),
					    leaf(1, 5, 3, steps[s].counts[2]) };
		const struct top_pyleaf *g;
		size_t nr, k = 0;

		top_pyself__begin(y);
		for (int i = 0; i < 3; i++)
			if (in[i].count)
				cr_assert_eq(top_pyself__add(y, &in[i]), 0);
		g = top_pyself__growth(y, &nr);
		cr_assert_eq(nr, steps[s].nr, "step %zu: %zu leaves grew", s, nr);
		for (int i = 0; i < 3; i++) {
			const struct top_pyleaf *want = &in[i == 0 ? 1 : i == 1 ? 2 : 0];

			if (!steps[s].growth[i])
				continue;
			cr_assert_lt(k, nr);
			cr_expect_eq(g[k].pid, want->pid, "step %zu, leaf %zu", s, k);
			cr_expect_eq(g[k].tid, want->tid, "step %zu, leaf %zu", s, k);
			cr_expect_eq(g[k].frame, want->frame, "step %zu, leaf %zu", s, k);
			cr_expect_eq(g[k].count, steps[s].growth[i], "step %zu, leaf %zu", s, k);
			k++;
		}
	}
	top_pyself__free(y);
}

/* what the flat samples lacked is grown again at the next adds, up to TOP_PYSELF_TRIES (3)
 * refreshes in a row, then given up */
Test(top_pyself, what_was_not_found_is_asked_again_three_times)
{
	static const struct {
		u64 count, found, growth;	/* so far; found of the growth; the growth seen */
	} steps[] = {
		{ 100, 60, 100 },	/* 40 asked again */
		{ 100, 10, 40 },	/* 30 of those not found: asked again (2) */
		{ 100, 0, 30 },		/* (3) */
		{ 100, 0, 30 },		/* not found a fourth time: given up */
		{ 100, 0, 0 },
		{ 150, 20, 50 },	/* 30 asked again */
		{ 160, 40, 40 },	/* 10 new and the 30 */
		{ 170, 0, 10 },		/* 10 new, none found: asked again */
		{ 175, 15, 15 },	/* 5 new and the 10: all found */
		{ 175, 0, 0 },
	};
	struct top_pyself *y = top_pyself__new();

	cr_assert(y);
	for (size_t s = 0; s < ARRAY_SIZE(steps); s++) {
		struct top_pyleaf in = leaf(1, 0, 1, steps[s].count);
		const struct top_pyleaf *g;
		size_t nr;

		top_pyself__begin(y);
		cr_assert_eq(top_pyself__add(y, &in), 0);
		g = top_pyself__growth(y, &nr);
		cr_assert_eq(nr, steps[s].growth ? 1 : 0, "step %zu", s);
		if (!nr)
			continue;
		cr_expect_eq(g[0].count, steps[s].growth, "step %zu: growth %llu", s,
			     (unsigned long long)g[0].count);
		top_pyself__taken(y, &g[0], steps[s].found);
	}
	top_pyself__free(y);
}
