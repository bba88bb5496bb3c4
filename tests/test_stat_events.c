// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* stat_events: -e lists, groups and their modifiers, the default set, and malformed lists. */
#include <criterion/criterion.h>
#include "stat_events.h"

Test(stat_events, lists_and_groups)
{
	static const struct {
		const char *name;
		int group;
		bool leader;
	} want[] = {
		{ "task-clock", 0, true },
		{ "cycles:u", 1, true },
		{ "instructions:u", 1, false },
		{ "branches", 2, true },
		{ "branch-misses:k", 3, true },
		{ "cache-misses:k", 3, false },
		{ "r01c4", 4, true },
	};
	struct stat_events evs = { 0 };

	cr_assert_eq(stat_events__parse(&evs, "task-clock,{cycles,instructions}:u"), 0);
	/* a second -e adds to the first */
	cr_assert_eq(stat_events__parse(&evs, "branches,{branch-misses,cache-misses}:k,r01c4"), 0);
	cr_assert_eq(evs.n, (int)(sizeof(want) / sizeof(want[0])));
	cr_expect_eq(evs.nr_groups, 5);
	for (int i = 0; i < evs.n; i++) {
		cr_expect_str_eq(evs.v[i].spec.name, want[i].name, "event %d", i);
		cr_expect_eq(evs.v[i].group, want[i].group, "%s group", want[i].name);
		cr_expect_eq(evs.v[i].leader, want[i].leader, "%s leader", want[i].name);
	}
	cr_expect(evs.v[1].spec.exclude_kernel, "the group's :u reaches its events");
	cr_expect(evs.v[2].spec.exclude_kernel);
	cr_expect_eq(evs.v[6].spec.type, PERF_TYPE_RAW);
	cr_expect_eq(stat_events__find(&evs, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES,
				       &evs.v[2].spec), 1, "cycles:u for instructions:u");
	cr_expect_eq(stat_events__find(&evs, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES,
				       &evs.v[0].spec), -1, "no plain cycles");
	stat_events__free(&evs);
}

Test(stat_events, member_modifiers_join_the_groups)
{
	struct stat_events evs = { 0 };

	cr_assert_eq(stat_events__parse(&evs, "{cycles:u,instructions}:u"), 0);
	cr_expect_str_eq(evs.v[0].spec.name, "cycles:u", "one u is enough");
	cr_expect_str_eq(evs.v[1].spec.name, "instructions:u");
	stat_events__free(&evs);
	cr_expect_eq(stat_events__parse(&evs, "{cycles:u,instructions}:k"), -EINVAL,
		     "u and k together count nothing");
	stat_events__free(&evs);
}

Test(stat_events, the_default_set_is_perfs)
{
	static const char *const want[] = {
		"task-clock", "context-switches", "cpu-migrations", "page-faults", "cycles",
		"instructions", "branches", "branch-misses",
	};
	struct stat_events evs = { 0 };

	cr_assert_eq(stat_events__add_default(&evs), 0);
	cr_assert_eq(evs.n, 8);
	for (int i = 0; i < evs.n; i++) {
		cr_expect_str_eq(evs.v[i].spec.name, want[i]);
		cr_expect(evs.v[i].leader, "%s is on its own", want[i]);
	}
	stat_events__free(&evs);
}

Test(stat_events, malformed_lists)
{
	static const char *const bad[] = {
		"", ",", "cycles,", ",cycles", "cycles,,instructions", "{cycles,instructions",
		"cycles}", "{}", "{cycles,{instructions}}", "{cycles,}", "{,cycles}",
		"{cycles}x", "{cycles}:", "{cycles}:z", "cyc{les", "no-such-event",
		"{cycles,no-such-event}", "cycles:pp", "lbr", "task-clock:x",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct stat_events evs = { 0 };

		cr_expect_eq(stat_events__parse(&evs, bad[i]), -EINVAL, "'%s' accepted", bad[i]);
		stat_events__free(&evs);
	}
}

Test(stat_events, at_most_64)
{
	struct stat_events evs = { 0 };
	int err = 0;

	for (int i = 0; i < 64 && !err; i++)
		err = stat_events__parse(&evs, "page-faults");
	cr_expect_eq(err, 0);
	cr_expect_eq(stat_events__parse(&evs, "page-faults"), -EINVAL);
	stat_events__free(&evs);
}
