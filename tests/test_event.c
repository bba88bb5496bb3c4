// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* event: names, modifiers and raw codes as perf spells them. */
#include <criterion/criterion.h>
#include "record/event.h"

Test(event, parse_table)
{
	static const struct {
		const char *name;
		u32 type;
		u64 config;
		u32 precise;
		bool clock, xu, xk;
	} cases[] = {
		{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 0, true, false, false },
		{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, 0, true, false, false },
		{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, 0, false, false, false },
		{ "cycles:ppp", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, 3, false, false, false },
		{ "instructions:pu", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, 1, false, false, true },
		{ "branches:k", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, 0, false, true, false },
		{ "r01c4", PERF_TYPE_RAW, 0x1c4, 0, false, false, false },
		{ "r20c4:pp", PERF_TYPE_RAW, 0x20c4, 2, false, false, false },
		{ "cpu-clock:u", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 0, true, false, true },
		{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, 0, false, false, false },
		{ "cs:k", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, 0, false, true, false },
		{ "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, 0, false, false, false },
		{ "page-faults:u", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, 0, false, false, true },
		{ "minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN, 0, false, false, false },
		{ "major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ, 0, false, false, false },
		{ "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, 0, false, false, false },
		{ "cache-references:u", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES, 0, false, false, true },
		{ "ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES, 0, false, false, false },
		{ "stalled-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND, 0, false, false, false },
		/* every software event perf list shows */
		{ "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, 0, false, false, false },
		{ "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, 0, false, false, false },
		{ "alignment-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS, 0, false, false, false },
		{ "emulation-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS, 0, false, false, false },
		{ "dummy", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY, 0, false, false, false },
		{ "bpf-output", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_BPF_OUTPUT, 0, false, false, false },
		{ "cgroup-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CGROUP_SWITCHES, 0, false, false, false },
		{ "cycles:u", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, 0, false, false, true },
		{ "instructions:ppp", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, 3, false, false, false },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct event_spec ev;

		cr_assert_eq(event__parse(cases[i].name, &ev), 0, "%s", cases[i].name);
		cr_expect_eq(ev.type, cases[i].type, "%s type", cases[i].name);
		cr_expect_eq(ev.config, cases[i].config, "%s config", cases[i].name);
		cr_expect_eq(ev.precise, cases[i].precise, "%s precise", cases[i].name);
		cr_expect_eq(ev.is_clock, cases[i].clock, "%s clock", cases[i].name);
		cr_expect_eq(ev.exclude_user, cases[i].xu, "%s :k", cases[i].name);
		cr_expect_eq(ev.exclude_kernel, cases[i].xk, "%s :u", cases[i].name);
	}
}

Test(event, rejects)
{
	static const char *bad[] = {
		"", "foo", "cycles:pppp", "cycles:x", "rZZ", "r", "cycles:uk",
		"context-switch", "{cycles}",
		"an-event-name-that-is-much-too-long-to-fit-in-the-buffer-we-keep-for-it",
	};
	struct event_spec ev;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect_eq(event__parse(bad[i], &ev), -EINVAL, "'%s' accepted", bad[i]);
}

/* perf's cpu-clock:ppp: a software event takes :p as perf does, without a precise level */
Test(event, software_events_drop_precise_as_perf_does)
{
	static const char *names[] = { "cpu-clock:p", "cpu-clock:ppp", "page-faults:pp", "task-clock:pu" };
	struct event_spec ev;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		cr_assert_eq(event__parse(names[i], &ev), 0, "'%s' refused", names[i]);
		cr_expect_eq(ev.type, PERF_TYPE_SOFTWARE);
		cr_expect_eq(ev.precise, 0, "'%s' kept a precise level", names[i]);
	}
	cr_assert_eq(event__parse("task-clock:pu", &ev), 0);
	cr_expect(ev.exclude_kernel, "the other modifiers stay");
}

Test(event, attr_carries_period_or_frequency)
{
	struct perf_event_attr a;
	struct event_spec ev;

	cr_assert_eq(event__parse("cycles:pp", &ev), 0);
	event__attr(&ev, 0, 4000, &a);
	cr_expect(a.freq);
	cr_expect_eq(a.sample_freq, 4000);
	cr_expect_eq(a.precise_ip, 2);
	cr_expect(a.disabled);
	event__attr(&ev, 100003, 0, &a);
	cr_expect_not(a.freq);
	cr_expect_eq(a.sample_period, 100003);
}
