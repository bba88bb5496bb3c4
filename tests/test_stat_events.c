// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* stat_events: -e lists, groups and their modifiers, the software, hardware and raw events, the
 * default set, and malformed lists with what their messages say. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "stat/stat_events.h"

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

/* the software counts work on every machine, VMs included; perf's short names too */
Test(stat_events, software_events)
{
	static const struct {
		const char *name;
		u64 config;
	} cases[] = {
		{ "task-clock", PERF_COUNT_SW_TASK_CLOCK },
		{ "cpu-clock", PERF_COUNT_SW_CPU_CLOCK },
		{ "context-switches", PERF_COUNT_SW_CONTEXT_SWITCHES },
		{ "cs", PERF_COUNT_SW_CONTEXT_SWITCHES },
		{ "cpu-migrations", PERF_COUNT_SW_CPU_MIGRATIONS },
		{ "migrations", PERF_COUNT_SW_CPU_MIGRATIONS },
		{ "page-faults", PERF_COUNT_SW_PAGE_FAULTS },
		{ "faults", PERF_COUNT_SW_PAGE_FAULTS },
		{ "minor-faults", PERF_COUNT_SW_PAGE_FAULTS_MIN },
		{ "major-faults", PERF_COUNT_SW_PAGE_FAULTS_MAJ },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct stat_events evs = { 0 };

		cr_assert_eq(stat_events__parse(&evs, cases[i].name), 0, "%s", cases[i].name);
		cr_expect_eq(evs.v[0].spec.type, PERF_TYPE_SOFTWARE, "%s", cases[i].name);
		cr_expect_eq(evs.v[0].spec.config, cases[i].config, "%s", cases[i].name);
		stat_events__free(&evs);
	}
}

/* the generic hardware events and raw codes, with :u and :k, alone and in groups */
Test(stat_events, hardware_and_raw_events)
{
	static const struct {
		const char *list;
		u32 type;
		u64 config;
		bool exclude_user, exclude_kernel;
	} cases[] = {
		{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, false, false },
		{ "instructions:u", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, false, true },
		{ "branch-misses:k", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, true, false },
		{ "cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES, false, false },
		{ "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, false, false },
		{ "bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES, false, false },
		{ "ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES, false, false },
		{ "stalled-cycles-frontend", PERF_TYPE_HARDWARE,
		  PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, false, false },
		{ "stalled-cycles-backend", PERF_TYPE_HARDWARE,
		  PERF_COUNT_HW_STALLED_CYCLES_BACKEND, false, false },
		{ "r01c4", PERF_TYPE_RAW, 0x1c4, false, false },
		{ "r00c0:u", PERF_TYPE_RAW, 0xc0, false, true },
		{ "{r00c0}:k", PERF_TYPE_RAW, 0xc0, true, false },
		{ "{ref-cycles,cycles}:u", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES, false, true },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct stat_events evs = { 0 };

		cr_assert_eq(stat_events__parse(&evs, cases[i].list), 0, "%s", cases[i].list);
		cr_expect_eq(evs.v[0].spec.type, cases[i].type, "%s", cases[i].list);
		cr_expect_eq(evs.v[0].spec.config, cases[i].config, "%s", cases[i].list);
		cr_expect_eq(evs.v[0].spec.exclude_user, cases[i].exclude_user, "%s", cases[i].list);
		cr_expect_eq(evs.v[0].spec.exclude_kernel, cases[i].exclude_kernel, "%s",
			     cases[i].list);
		cr_expect_eq(evs.nr_groups, 1, "%s", cases[i].list);
		stat_events__free(&evs);
	}
}

/* what the message says: the subject quoted, and what is wrong with it */
Test(stat_events, messages_say_what_is_wrong)
{
	static const struct {
		const char *list, *says;
	} cases[] = {
		{ "", "invalid event list '': an empty event name" },
		{ "cycles,,instructions", "invalid event list 'cycles,,instructions': an empty event name" },
		{ "{cycles,instructions", "invalid event group in '{cycles,instructions': no closing '}'" },
		{ "{cycles,{instructions}}", "groups do not nest" },
		{ "{}", "an empty group" },
		{ "{cycles}x", "'x' after '}'" },
		{ "{cycles}:", "bad modifiers after '}'" },
		{ "cycles}", "unexpected '}'" },
		{ "cycels", "unknown event 'cycels' (known: cpu-clock, task-clock" },
		{ "cycles:pp", "invalid event 'cycles:pp': precise levels are for sampling" },
		{ "lbr", "invalid event 'lbr': branch stacks are for sampling" },
		{ "{cycles:u,instructions}:k", "u and k together exclude everything" },
	};
	char *buf = NULL;
	size_t size = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct stat_events evs = { 0 };
		FILE *f = tmpfile();
		int saved = dup(STDERR_FILENO);

		cr_assert(f && saved >= 0);
		fflush(stderr);
		dup2(fileno(f), STDERR_FILENO);
		cr_expect_eq(stat_events__parse(&evs, cases[i].list), -EINVAL, "'%s'", cases[i].list);
		fflush(stderr);
		dup2(saved, STDERR_FILENO);
		close(saved);
		stat_events__free(&evs);
		rewind(f);
		cr_assert_geq(getdelim(&buf, &size, 0, f), 0);
		cr_expect(strstr(buf, cases[i].says), "'%s': '%s' does not say '%s'", cases[i].list,
			  buf, cases[i].says);
		fclose(f);
	}
	free(buf);
}
