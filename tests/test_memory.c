// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* memory: the sampling arithmetic the BPF side runs (bpf/memory_math.h with user/record/memory.c's
 * tables): the draws' mean and distribution, the weights against s/(1-exp(-s/period)); the
 * options; report's views on a hand-built profile; a slot's variance, which diff's intervals
 * take. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "record/memory.h"
#include "profile/profile.h"
#include "record/session.h"

static u32 log2_q16[HSBPF_MEM_LOG_N], g_q16[HSBPF_MEM_G_N];

static void tables(void)
{
	memory__fill_tables(log2_q16, g_q16);
}

TestSuite(memory, .init = tables);

/* every one of the 2^24 draws the random bits allow: their mean is the period, and the share
 * above the period is exp(-1), as an exponential distribution's */
Test(memory, draws_are_exponential)
{
	static const u64 periods[] = { 4096, 512 * 1024, 1ull << 30 };

	for (size_t k = 0; k < sizeof(periods) / sizeof(periods[0]); k++) {
		u64 period = periods[k], above = 0, n = 1u << HSBPF_MEM_RAND_BITS;
		double sum = 0;

		for (u64 v = 0; v < n; v++) {
			u64 d = mem_draw((u32)(v << (32 - HSBPF_MEM_RAND_BITS)), period, log2_q16);

			cr_assert_geq(d, 1);
			sum += d;
			above += d > period;
		}
		cr_expect_float_eq(sum / n / period, 1.0, 0.002, "period %llu: mean %.1f",
				   (unsigned long long)period, sum / n);
		cr_expect_float_eq((double)above / n, exp(-1), 0.001, "period %llu: %.4f above",
				   (unsigned long long)period, (double)above / n);
	}
}

/* a few draws by hand: the largest random word is the smallest draw, and U = 1/2 is ln 2 */
Test(memory, draws_known)
{
	u64 p = 1 << 20;

	cr_expect_eq(mem_draw(0xffffffffu, p, log2_q16), 1, "U = 1: at least one byte");
	cr_expect_float_eq((double)mem_draw(0x7fffff00u, p, log2_q16) / p, log(2), 1e-4);
	cr_expect_float_eq((double)mem_draw(0, p, log2_q16) / p, 24 * log(2), 1e-4);
}

/* s/(1-exp(-s/period)) and 1/p (in 1/1024ths) against libm */
Test(memory, weights)
{
	static const u64 sizes[] = { 1, 8, 64, 100, 4096, 65536, 300000, 524288, 1 << 20, 5 << 20,
				     16 << 20, 17 << 20, 1ull << 40 };
	u64 period = 512 * 1024;

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		double s = sizes[i], want = s / -expm1(-s / period);
		u64 w = mem_weight(sizes[i], period, g_q16);

		cr_expect_float_eq(w / want, 1.0, 1e-4, "size %llu: %llu, want %.1f",
				   (unsigned long long)sizes[i], (unsigned long long)w, want);
		cr_expect_float_eq(mem_objects(sizes[i], w) / 1024.0 / (want / s), 1.0, 2e-3,
				   "size %llu objects", (unsigned long long)sizes[i]);
	}
	cr_expect_eq(mem_weight(0, period, g_q16), 0);
	cr_expect_eq(mem_weight(32 * period, period, g_q16), 32 * period, "p is 1 past 32 periods");
}

Test(memory, parses_periods)
{
	static const struct {
		const char *arg;
		int ok;
		u64 bytes;
	} cases[] = {
		{ "1", 1, 1 }, { "524288", 1, 524288 }, { "512K", 1, 524288 }, { "4m", 1, 4 << 20 },
		{ "1G", 1, 1 << 30 }, { "1073741824", 1, 1 << 30 }, { "0", 0, 0 }, { "0K", 0, 0 },
		{ "2G", 0, 0 }, { "1073741825", 0, 0 }, { "", 0, 0 }, { "K", 0, 0 }, { "-5", 0, 0 },
		{ "1.5M", 0, 0 }, { "12KB", 0, 0 }, { "99999999999999999999", 0, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		u64 b = 7;
		int err = memory__parse_period(cases[i].arg, &b);

		cr_expect_eq(err == 0, cases[i].ok, "'%s'", cases[i].arg);
		if (cases[i].ok)
			cr_expect_eq(b, cases[i].bytes, "'%s': %llu", cases[i].arg, (unsigned long long)b);
	}
}

Test(memory, settles_options)
{
	struct session_opts o = { .alloc_period = 4096 };

	cr_expect_eq(memory__settle_opts(&o), 0);
	cr_expect_eq(o.call_graph, HSBPF_CALL_GRAPH_DWARF, "stacks are dwarf by default");
	o = (struct session_opts){ .alloc_period = 4096, .call_graph = HSBPF_CALL_GRAPH_FP };
	cr_expect_eq(memory__settle_opts(&o), 0);
	cr_expect_eq(o.call_graph, HSBPF_CALL_GRAPH_FP);
	o = (struct session_opts){ .alloc_period = 4096, .call_graph = HSBPF_CALL_GRAPH_LBR };
	cr_expect_eq(memory__settle_opts(&o), -EINVAL);
	o = (struct session_opts){ .alloc_period = 4096, .offcpu = 1 };
	cr_expect_eq(memory__settle_opts(&o), -EINVAL);
	/* a cgroup's processes too (record --memory --cgroup) */
	o = (struct session_opts){ .alloc_period = 4096, .cgroup = "/sys/fs/cgroup/x" };
	cr_expect_eq(memory__settle_opts(&o), 0);
	o = (struct session_opts){};
	cr_expect_eq(memory__settle_opts(&o), 0);
	cr_expect_eq(o.call_graph, HSBPF_CALL_GRAPH_NONE, "on-CPU recordings keep their mode");
}

Test(memory, views)
{
	enum memory_view v;

	for (int i = 0; i < MEMORY_VIEW_NR; i++) {
		cr_expect_eq(memory__parse_view(memory__view_name(i), &v), 0);
		cr_expect_eq(v, (enum memory_view)i);
	}
	cr_expect_eq(memory__parse_view("space", &v), -EINVAL);
}

static u32 mem(u32 kind)
{
	return HSBPF_KEY_MEMORY | kind << HSBPF_KEY_STATE_SHIFT;
}

/* each view keeps its kind's samples, counting bytes or objects (rounded from 1/1024ths) */
Test(memory, selects_a_view)
{
	static const struct {
		enum memory_view view;
		u64 counts[2];
		size_t n;
	} cases[] = {
		{ MEMORY_ALLOC_SPACE, { 3000, 5000 }, 2 },
		{ MEMORY_ALLOC_OBJECTS, { 2, 3 }, 2 },
		{ MEMORY_INUSE_SPACE, { 700 }, 1 },
		{ MEMORY_INUSE_OBJECTS, { 1 }, 1 },
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct profile *p = profile__new();
		struct profile_sample s[] = {
			{ .pid = 1, .ip = 0x10, .flags = mem(HSBPF_MEM_ALLOC), .count = 2048, .weight = 3000 },
			{ .pid = 1, .ip = 0x20, .flags = mem(HSBPF_MEM_ALLOC), .count = 3000, .weight = 5000 },
			{ .pid = 1, .ip = 0x10, .flags = mem(HSBPF_MEM_INUSE), .count = 1000, .weight = 700 },
		};
		struct profile_stack_sample ss = { .pid = 1, .flags = mem(HSBPF_MEM_INUSE), .count = 512,
						   .weight = 700 };

		cr_assert(p);
		p->meta.alloc_period = 4096;
		for (size_t i = 0; i < 3; i++)
			cr_assert_eq(profile__add_sample(p, &s[i]), 0);
		cr_assert_eq(profile__add_stack_sample(p, &ss), 0);
		memory__select(p, cases[c].view);
		cr_expect_eq(p->nr_samples, cases[c].n, "%s", memory__view_name(cases[c].view));
		for (size_t i = 0; i < p->nr_samples && i < cases[c].n; i++)
			cr_expect_eq(p->samples[i].count, cases[c].counts[i], "%s [%zu]",
				     memory__view_name(cases[c].view), i);
		cr_expect_eq(p->nr_stack_samples, cases[c].view >= MEMORY_INUSE_SPACE);
		cr_expect_str_eq(p->meta.memory_view, memory__view_name(cases[c].view));
		profile__free(p);
	}
}

Test(memory, bytes)
{
	char b[32];

	cr_expect_str_eq(memory__bytes(0, b, sizeof(b)), "0 B");
	cr_expect_str_eq(memory__bytes(1023, b, sizeof(b)), "1023 B");
	cr_expect_str_eq(memory__bytes(1536, b, sizeof(b)), "1.5 KiB");
	cr_expect_str_eq(memory__bytes(70 << 20, b, sizeof(b)), "70.0 MiB");
}

/* a slot's variance: n allocations of s bytes, each sampled with p = 1 - exp(-s/T), weighing
 * s/p: bytes B = n s, variance B s (1 - p)/p; objects n, variance n (1 - p)/p */
Test(memory, variance)
{
	static const struct { double n, s, period; } cases[] = {
		{ 1000, 64, 65536 }, { 256, 65536, 65536 }, { 30, 1 << 20, 524288 }, { 1, 4096, 524288 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		double n = cases[i].n, sz = cases[i].s, p = -expm1(-sz / cases[i].period);
		u64 objects = llround(n * 1024), bytes = llround(n * sz);

		cr_expect_float_eq(memory__variance(objects, bytes, cases[i].period, false),
				   bytes * sz * (1 - p) / p, 1e-6 * bytes * sz, "case %zu bytes", i);
		cr_expect_float_eq(memory__variance(objects, bytes, cases[i].period, true),
				   n * (1 - p) / p, 1e-6 * n, "case %zu objects", i);
	}
	cr_expect_eq(memory__variance(0, 100, 4096, false), 0);
	cr_expect_eq(memory__variance(1024, 0, 4096, false), 0);
	/* far larger than the period: sampled surely, counted exactly */
	cr_expect_leq(memory__variance(1024, 1ull << 40, 4096, false), 1e-6);
}

/* diff's view: the counts as memory__select's, the weights the variances */
Test(memory, selects_with_variance)
{
	struct profile *p = profile__new();
	struct profile_sample s = { .pid = 1, .ip = 0x10, .flags = mem(HSBPF_MEM_INUSE), .count = 4096,
				    .weight = 4 * 65536 };
	double want = memory__variance(4096, 4 * 65536, 65536, false);

	cr_assert(p);
	p->meta.alloc_period = 65536;
	cr_assert_eq(profile__add_sample(p, &s), 0);
	s.flags = mem(HSBPF_MEM_ALLOC);
	cr_assert_eq(profile__add_sample(p, &s), 0);
	memory__select_variance(p, MEMORY_INUSE_SPACE);
	cr_assert_eq(p->nr_samples, 1);
	cr_expect_eq(p->samples[0].count, 4 * 65536);
	cr_expect_eq(p->samples[0].weight, llround(want));
	cr_expect_gt(want, 0);
	profile__free(p);
}
