// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* offcpu: the options' checks, the states from sample flags, the totals, report's time view
 * (counts become microseconds) and the header's lines, on hand-built profiles; --switch-sample's
 * parsing, threshold and intervals. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "record/event.h"
#include "record/offcpu.h"
#include "profile/profile.h"
#include "record/session.h"

static u32 off(u32 state)
{
	return HSBPF_KEY_OFFCPU | state << HSBPF_KEY_STATE_SHIFT;
}

Test(offcpu, parses_microseconds)
{
	static const struct {
		const char *arg;
		int ok;
		u64 ns;
	} cases[] = {
		{ "0", 1, 0 }, { "1500", 1, 1500000 }, { "31536000000000", 1, 31536000000000000ull },
		{ "-5", 0, 0 }, { "1.5", 0, 0 }, { "", 0, 0 }, { "5ms", 0, 0 },
		{ "31536000000001", 0, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		u64 ns = 7;
		int err = offcpu__parse_us("--min-block", cases[i].arg, &ns);

		cr_expect_eq(err == 0, cases[i].ok, "'%s'", cases[i].arg);
		if (cases[i].ok)
			cr_expect_eq(ns, cases[i].ns, "'%s': %llu", cases[i].arg, (unsigned long long)ns);
	}
}

Test(offcpu, settles_options)
{
	struct event_spec clock = { .is_clock = true }, cycles = { .is_clock = false };
	struct sampler_params o;

	/* bounds without off-CPU time */
	o = (struct sampler_params){ .min_block_ns = 1000 };
	cr_expect_eq(offcpu__settle_opts(&o, &clock), -EINVAL);
	o = (struct sampler_params){};
	cr_expect_eq(offcpu__settle_opts(&o, &clock), 0);
	cr_expect_eq(o.call_graph, HSBPF_CALL_GRAPH_NONE, "on-CPU recordings keep their mode");
	/* min above max */
	o = (struct sampler_params){ .offcpu = OFFCPU_ONLY, .min_block_ns = 5000, .max_block_ns = 1000 };
	cr_expect_eq(offcpu__settle_opts(&o, &clock), -EINVAL);
	o = (struct sampler_params){ .offcpu = OFFCPU_ONLY, .min_block_ns = 1000, .max_block_ns = 1000 };
	cr_expect_eq(offcpu__settle_opts(&o, &clock), 0);
	/* no max: any min */
	o = (struct sampler_params){ .offcpu = OFFCPU_ONLY, .min_block_ns = 5000 };
	cr_expect_eq(offcpu__settle_opts(&o, &clock), 0);
	cr_expect_eq(o.call_graph, HSBPF_CALL_GRAPH_DWARF, "stacks are dwarf by default");
	o = (struct sampler_params){ .offcpu = OFFCPU_WALL, .call_graph = HSBPF_CALL_GRAPH_FP };
	cr_expect_eq(offcpu__settle_opts(&o, &clock), 0);
	cr_expect_eq(o.call_graph, HSBPF_CALL_GRAPH_FP);
	/* wall needs samples that weigh time */
	o = (struct sampler_params){ .offcpu = OFFCPU_WALL };
	cr_expect_eq(offcpu__settle_opts(&o, &cycles), -EINVAL);
	o = (struct sampler_params){ .offcpu = OFFCPU_ONLY };
	cr_expect_eq(offcpu__settle_opts(&o, &cycles), 0, "off-CPU alone samples nothing");
	o = (struct sampler_params){ .offcpu = OFFCPU_ONLY, .call_graph = HSBPF_CALL_GRAPH_LBR };
	cr_expect_eq(offcpu__settle_opts(&o, &clock), -EINVAL);
	o = (struct sampler_params){ .offcpu = OFFCPU_ONLY };
	cr_expect_eq(offcpu__settle_opts(&o, &(struct event_spec){ .branch_stack = true }), -EINVAL);
	/* wakers of off-CPU blocks only */
	o = (struct sampler_params){ .wakers = true };
	cr_expect_eq(offcpu__settle_opts(&o, &clock), -EINVAL);
	o = (struct sampler_params){ .offcpu = OFFCPU_WALL, .wakers = true };
	cr_expect_eq(offcpu__settle_opts(&o, &clock), 0);
	/* top --off-cpu shows off-CPU time alone; --wall is record's */
	o = (struct sampler_params){ .offcpu = OFFCPU_ONLY, .live = true };
	cr_expect_eq(offcpu__settle_opts(&o, &clock), 0);
	o = (struct sampler_params){ .offcpu = OFFCPU_WALL, .live = true };
	cr_expect_eq(offcpu__settle_opts(&o, &clock), -EINVAL);
}

Test(offcpu, states_from_flags)
{
	cr_expect_eq(offcpu__state(0), 0);
	cr_expect_eq(offcpu__state(HSBPF_KEY_KERNEL), 0);
	cr_expect_eq(offcpu__state(off(HSBPF_OFFCPU_S)), HSBPF_OFFCPU_S);
	cr_expect_eq(offcpu__state(off(HSBPF_OFFCPU_D) | HSBPF_KEY_KERNEL), HSBPF_OFFCPU_D);
	cr_expect_eq(offcpu__state(off(HSBPF_OFFCPU_R)), HSBPF_OFFCPU_R);
	cr_expect_str_eq(offcpu__state_name(0), "on-CPU");
	cr_expect_str_eq(offcpu__state_name(HSBPF_OFFCPU_S), "S");
	cr_expect_str_eq(offcpu__state_name(HSBPF_OFFCPU_D), "D");
	cr_expect_str_eq(offcpu__state_name(HSBPF_OFFCPU_R), "R");
	cr_expect_str_eq(offcpu__state_name(HSBPF_OFFCPU_OTHER), "other");
	cr_expect_str_eq(offcpu__state_name(15), "other");
}

/* a wall profile: 3 on-CPU samples of 1 ms, blocks of 20.0004 ms (S, 2 of them), 3 ms (D) and
 * 0.7 ms (R) */
static struct profile *wall_profile(void)
{
	struct profile *p = profile__new();
	const struct profile_sample s[] = {
		{ .pid = 1, .ip = 0x1000, .count = 3, .weight = 3000000 },
		{ .pid = 1, .ip = 0x2000, .flags = off(HSBPF_OFFCPU_S), .count = 2, .weight = 40000800 },
		{ .pid = 1, .ip = 0x3000, .flags = off(HSBPF_OFFCPU_D), .count = 1, .weight = 3000000 },
		{ .pid = 1, .ip = 0x4000, .flags = off(HSBPF_OFFCPU_R), .count = 1, .weight = 700499 },
	};
	const struct profile_stack_sample ss = { .pid = 1, .flags = off(HSBPF_OFFCPU_S) | HSBPF_KEY_KERNEL,
						 .count = 2, .weight = 40000800 };

	cr_assert(p);
	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
		cr_assert_eq(profile__add_sample(p, &s[i]), 0);
	cr_assert_eq(profile__add_stack_sample(p, &ss), 0);
	snprintf(p->meta.offcpu, sizeof(p->meta.offcpu), "wall");
	p->stats.offcpu_blocks = 4;
	return p;
}

Test(offcpu, totals_by_state)
{
	struct profile *p = wall_profile();
	struct offcpu_totals t;

	cr_expect(offcpu__in_profile(p));
	offcpu__totals(p, &t);
	cr_expect_eq(t.on_ns, 3000000);
	cr_expect_eq(t.off_ns, 43701299);
	cr_expect_eq(t.blocks, 4);
	cr_expect_eq(t.by_state[HSBPF_OFFCPU_S], 40000800);
	cr_expect_eq(t.by_state[HSBPF_OFFCPU_D], 3000000);
	cr_expect_eq(t.by_state[HSBPF_OFFCPU_R], 700499);
	profile__free(p);
}

Test(offcpu, counts_become_microseconds)
{
	struct profile *p = wall_profile();

	offcpu__count_time(p);
	cr_expect_eq(p->samples[0].count, 3000);
	cr_expect_eq(p->samples[1].count, 40001, "rounded down below a half");
	cr_expect_eq(p->samples[2].count, 3000);
	cr_expect_eq(p->samples[3].count, 700, "0.499 us rounds down");
	cr_expect_eq(p->stack_samples[0].count, 40001);
	cr_expect_eq(p->samples[1].weight, 40000800, "weights stay ns");
	profile__free(p);
	p = profile__new();
	cr_expect(!offcpu__in_profile(p), "an on-CPU profile has no time view");
	profile__free(p);
}

/* --off-cpu samples no event: the header's first line says what was measured, not the
 * recording's default event and period */
Test(offcpu, header_of_off_cpu_time_names_no_event)
{
	struct profile *p = wall_profile();
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	cr_assert(f);
	cr_expect(!offcpu__only(p), "--wall samples an event");
	snprintf(p->meta.offcpu, sizeof(p->meta.offcpu), "off");
	cr_expect(offcpu__only(p));
	offcpu__print_event(p, 43701, "# ", f);
	fclose(f);
	cr_expect_str_eq(buf, "# off-CPU time, measured at every context switch (sched_switch), not "
			 "sampled: 43.701 ms\n");
	free(buf);
	profile__free(p);
}

Test(offcpu, header_says_states_and_losses)
{
	struct profile *p = wall_profile();
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	cr_assert(f);
	p->meta.min_block_ns = 500000;
	p->stats.offcpu_short = 9;
	p->stats.offcpu_open = 2;
	p->stats.offcpu_underway = 5;
	p->stats.offcpu_underway_ns = 12345678;
	p->stats.offcpu_asleep = 7;
	p->stats.offcpu_no_storage = 1;
	p->stats.offcpu_full = 3;
	p->stats.offcpu_full_ns = 1500000;
	offcpu__print_header(p, "# ", f);
	fclose(f);
	cr_expect(strstr(buf, "# off-CPU 43.701 ms in 4 blocks, on-CPU 3.000 ms (wall: 46.701 ms); "
			 "by state: S 40.001 ms (91.5%), D 3.000 ms (6.9%), R 0.700 ms (1.6%)\n"), "%s", buf);
	cr_expect(strstr(buf, "# blocks kept: 500 us and longer; left out: 9 shorter, 0 longer\n"), "%s", buf);
	cr_expect(strstr(buf, "# 2 blocks were still open at the end"), "%s", buf);
	cr_expect(strstr(buf, "# 5 blocks were under way at the start: counted from it (12.346 ms)\n"), "%s", buf);
	cr_expect(strstr(buf, "# 7 threads were blocked from the start to the end: not counted"), "%s", buf);
	cr_expect(strstr(buf, "# WARNING: 1 switches were missed"), "%s", buf);
	cr_expect(strstr(buf, "# WARNING: 3 blocks (1.500 ms) were lost"), "%s", buf);
	free(buf);
	profile__free(p);
}

/* --wakers with -p or a command: the wakers outside the target read while they ran, and those
 * gone before; nothing of them without any */
Test(offcpu, header_says_outside_wakers)
{
	struct profile *p = wall_profile();
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	cr_assert(f);
	offcpu__print_header(p, "# ", f);
	fflush(f);
	cr_expect(!strstr(buf, "outside the target"), "%s", buf);
	p->stats.offcpu_wakers_read = 12;
	p->stats.offcpu_wakers_gone = 3;
	offcpu__print_header(p, "# ", f);
	fflush(f);
	cr_expect(strstr(buf, "# wakers outside the target: 12 read while they ran (mappings and name); 3 "
			 "gone before (exited or exec'd within a moment of their first wake-up: user "
			 "frames [unknown], name kept)\n"), "%s", buf);
	cr_expect(!strstr(buf, "not announced"), "%s", buf);
	p->stats.offcpu_wakers_unannounced = 1;
	offcpu__print_header(p, "# ", f);
	fclose(f);
	cr_expect(strstr(buf, "name kept); some not announced (the kernel's ring full): read at the end\n"),
		  "%s", buf);
	free(buf);
	profile__free(p);
}

Test(offcpu, parses_switch_sample)
{
	static const struct {
		const char *arg;
		int ok;
		double p;
	} cases[] = {
		{ "0.1", 1, 0.1 }, { "1", 1, 1 }, { "1/4", 1, 0.25 }, { "1/10000", 1, 0.0001 },
		{ "0.0001", 1, 0.0001 }, { "0", 0, 0 }, { "1.5", 0, 0 }, { "-0.5", 0, 0 }, { "1/0", 0, 0 },
		{ "1/10001", 0, 0 }, { "0.00009", 0, 0 }, { "x", 0, 0 }, { "", 0, 0 }, { "0.5x", 0, 0 },
		{ "nan", 0, 0 }, { "1/", 0, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		double p = 7;
		int err = offcpu__parse_sample(cases[i].arg, &p);

		cr_expect_eq(err == 0, cases[i].ok, "'%s'", cases[i].arg);
		if (cases[i].ok)
			cr_expect(p == cases[i].p, "'%s': %g", cases[i].arg, p);
	}
}

/* the switch program's threshold: P of the 32-bit draws below it; every block for 0 and 1 */
Test(offcpu, switch_sample_threshold)
{
	struct sampler_params o = { .switch_sample = 0.5 };
	struct event_spec clock = { .is_clock = true };
	struct profile_meta m = {};

	cr_expect_eq(offcpu__sample_below(0), 0);
	cr_expect_eq(offcpu__sample_below(1), 0);
	cr_expect_eq(offcpu__sample_below(0.5), 2147483648u);
	cr_expect_eq(offcpu__sample_below(0.1), 429496730u);
	cr_expect_eq(offcpu__sample_below(0.0001), 429497u);
	/* without off-CPU time: a usage error; with it, the meta says the probability drawn */
	cr_expect_eq(offcpu__settle_opts(&o, &clock), -EINVAL);
	o.offcpu = OFFCPU_ONLY;
	cr_expect_eq(offcpu__settle_opts(&o, &clock), 0);
	offcpu__fill_meta(&m, &o);
	cr_expect(m.offcpu_sample == 0.5, "%g", m.offcpu_sample);
	o.switch_sample = 1;
	offcpu__fill_meta(&m, &o);
	cr_expect(m.offcpu_sample == 0, "every block: %g", m.offcpu_sample);
}

/* the score interval of a sampled estimate, known answers; none without sampling */
Test(offcpu, switch_sample_intervals)
{
	struct profile *p = wall_profile();
	double lo, hi;

	offcpu__interval(p, 10, 100, OFFCPU_Z95, &lo, &hi);
	cr_expect(lo == 100 && hi == 100, "every block followed: %g to %g", lo, hi);
	cr_expect_eq(offcpu__ci95(p, 10), 0);
	p->meta.offcpu_sample = 0.5;
	offcpu__interval(p, 10, 100, OFFCPU_Z95, &lo, &hi);
	cr_expect(fabs(lo - 64.7376304) < 1e-6 && fabs(hi - 154.4696637) < 1e-6, "%.9g to %.9g", lo, hi);
	cr_expect(fabs(offcpu__ci95(p, 10) - 0.448660166) < 1e-8, "%.9g", offcpu__ci95(p, 10));
	offcpu__interval(p, 0, 0, OFFCPU_Z95, &lo, &hi);
	cr_expect(lo == 0 && hi == 0, "no blocks: %g to %g", lo, hi);
	p->meta.offcpu_sample = 0.1;
	offcpu__interval(p, 13, 399.603, OFFCPU_Z95, &lo, &hi);
	cr_expect(fabs(lo - 239.9237015) < 1e-6 && fabs(hi - 665.5555772) < 1e-6, "%.9g to %.9g", lo, hi);
	profile__free(p);
}

/* a sampled profile's header says it is an estimate, with its interval and the blocks drawn;
 * the start's race is said */
Test(offcpu, header_of_sampled_time)
{
	struct profile *p = wall_profile();
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	cr_assert(f);
	snprintf(p->meta.offcpu, sizeof(p->meta.offcpu), "off");
	p->meta.offcpu_sample = 0.1;
	p->stats.offcpu_blocks = 13;
	p->stats.offcpu_switches = 11;
	p->stats.offcpu_underway = 2;
	p->stats.offcpu_underway_early = 1;
	p->stats.offcpu_unsampled = 187;
	offcpu__print_event(p, 399603, "# ", f);
	offcpu__print_header(p, "# ", f);
	fclose(f);
	cr_expect(strstr(buf, "# off-CPU time, estimated from the blocks followed at random (--switch-sample "
			 "0.1: each weighs 10 times its time): 399.603 ms, 95% interval 239.924 to 665.556 ms "
			 "(13 blocks)\n"), "%s", buf);
	cr_expect(strstr(buf, "# blocks followed at random: 13 of 200 "), "%s", buf);
	cr_expect(strstr(buf, "# 1 of them ended before the start's walk met their thread"), "%s", buf);
	free(buf);
	profile__free(p);
}

/* report's time view keeps a sampled profile's blocks for the rows' intervals */
Test(offcpu, count_time_keeps_sampled_blocks)
{
	struct profile *p = wall_profile();

	static const u64 want[] = { 0, 2, 1, 1 };	/* the on-CPU sample has none */

	p->meta.offcpu_sample = 0.25;
	cr_assert_eq(offcpu__count_time(p), 0);
	cr_assert(p->offcpu_blocks);
	cr_assert_eq(p->nr_samples, 4);
	for (size_t i = 0; i < p->nr_samples; i++)
		cr_expect_eq(p->offcpu_blocks[i], want[i], "sample %zu", i);
	profile__free(p);
}
