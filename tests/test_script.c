// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* hsbpf script's text: a profile made by hand (its own kernel symbols, a module's, user frames
 * in no mapping, a lost stack, two threads), so that every line printed is known. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report/callchain.h"
#include "hsbpf.h"
#include "profile/profile.h"
#include "export/script_out.h"
#include "symbols/symbolizer.h"

#define K 0xffffffff81000000ull
#define MS 1000000ull

static s64 kstack(struct profile *p, const u64 *rel, u32 nr)
{
	u64 ips[8];

	for (u32 i = 0; i < nr; i++)
		ips[i] = K + rel[i];
	return profile__add_stack(p, ips, nr, 0, 0);
}

/* thread 7: leaf <- mid <- entry in the kernel, 2 samples; a lost user stack, 1. Thread 8
 * ("worker"): a module's function over two unknown user frames, 1. A 1 ms mean period. */
static struct profile *made_profile(void)
{
	struct profile *p = profile__new();
	u64 user[2] = { 0x401000, 0x401100 };
	s64 a, b, u, lost;

	cr_assert(p);
	cr_assert_eq(profile__add_comm(p, 7, 0, "proc", false), 0);
	cr_assert_eq(profile__add_thread_comm(p, 7, 8, 0, "worker"), 0);
	cr_assert_eq(profile__add_ksym(p, K, "k_start"), 0);
	cr_assert_eq(profile__add_ksym(p, K + 0x80, "k_leaf"), 0);
	cr_assert_eq(profile__add_ksym(p, K + 0x1000, "k_mid"), 0);
	cr_assert_eq(profile__add_ksym(p, K + 0x2000, "k_entry"), 0);
	cr_assert_eq(profile__add_ksym(p, K + 0x3000, "k_mod [mymod]"), 0);
	cr_assert_eq(profile__add_ksym(p, K + 0x4000, ""), 0);
	a = kstack(p, (u64[]){ 0x100, 0x1005, 0x2005 }, 3);
	b = kstack(p, (u64[]){ 0x3010 }, 1);
	u = profile__add_stack(p, user, 2, HSBPF_STACK_DEPTH, 0);
	lost = profile__add_stack(p, NULL, 0, PROFILE_STACK_LOST, 0);
	cr_assert(a >= 0 && b >= 0 && u >= 0 && lost >= 0);
	/* the worker's first, to see that blocks go by thread */
	cr_assert_eq(profile__add_stack_sample_keyed(p, &(struct profile_stack_sample){ .pid = 7,
			.flags = HSBPF_KEY_KERNEL, .kernel = b + 1, .user = u + 1, .count = 1, .weight = MS },
			&(struct profile_sample_key){ .tid = 8 }), 0);
	cr_assert_eq(profile__add_stack_sample_keyed(p, &(struct profile_stack_sample){ .pid = 7,
			.flags = HSBPF_KEY_KERNEL, .kernel = a + 1, .count = 2, .weight = 2 * MS },
			&(struct profile_sample_key){ .tid = 7 }), 0);
	cr_assert_eq(profile__add_stack_sample_keyed(p, &(struct profile_stack_sample){ .pid = 7,
			.user = lost + 1, .count = 1, .weight = MS }, &(struct profile_sample_key){ .tid = 7 }), 0);
	snprintf(p->meta.event, sizeof(p->meta.event), "cpu-clock");
	snprintf(p->meta.unit, sizeof(p->meta.unit), "ns");
	snprintf(p->meta.call_graph, sizeof(p->meta.call_graph), "dwarf");
	snprintf(p->meta.sample_keys, sizeof(p->meta.sample_keys), "tid");
	p->meta.period = MS;
	p->meta.start_mono_ns = 5000000000ull;
	p->meta.duration_ns = 4 * MS;
	profile__finish(p);
	return p;
}

static char *script(struct profile *p, bool aggregate)
{
	struct symbolizer *sy = symbolizer__new(p);
	struct callchain *cc = sy ? callchain__new(p, sy) : NULL;
	struct script_opts o = { .aggregate = aggregate };
	char *text = NULL;
	size_t len;
	FILE *out = open_memstream(&text, &len);

	cr_assert(cc && out);
	cr_assert_eq(script_out__print(cc, sy, &o, out), 0);
	fclose(out);
	callchain__free(cc);
	symbolizer__free(sy);
	return text;
}

#define WORKER_BLOCK							\
	"worker     7/8         5.000000:    1000000 cpu-clock: \n"		\
	"\tffffffff81003010 k_mod+0x10 ([mymod])\n"			\
	"\t          401000 [unknown] ([unknown])\n"		\
	"\t          401100 [unknown] ([unknown])\n"		\
	"\n"

/* a block per sample: the kernel's return addresses as they are, with their offsets; each
 * thread's times one mean period apart from the recording's start; the lost stack a header */
Test(script, each_sample_is_a_block_of_perf_script_text)
{
	struct profile *p = made_profile();
	char *text = script(p, false);

	cr_expect_str_eq(text,
		"proc     7/7         5.000000:    1000000 cpu-clock: \n"
		"\tffffffff81000100 k_leaf+0x80 ([kernel.kallsyms])\n"
		"\tffffffff81001005 k_mid+0x5 ([kernel.kallsyms])\n"
		"\tffffffff81002005 k_entry+0x5 ([kernel.kallsyms])\n"
		"\n"
		"proc     7/7         5.001000:    1000000 cpu-clock: \n"
		"\tffffffff81000100 k_leaf+0x80 ([kernel.kallsyms])\n"
		"\tffffffff81001005 k_mid+0x5 ([kernel.kallsyms])\n"
		"\tffffffff81002005 k_entry+0x5 ([kernel.kallsyms])\n"
		"\n"
		"proc     7/7         5.002000:    1000000 cpu-clock: \n"
		"\n"
		WORKER_BLOCK);
	free(text);
	profile__free(p);
}

/* one block per distinct stack, count x period in the period field; the next block of the
 * thread as many periods later as the stack had samples */
Test(script, aggregate_prints_each_stack_once_with_its_weight)
{
	struct profile *p = made_profile();
	char *text = script(p, true);

	cr_expect_str_eq(text,
		"proc     7/7         5.000000:    2000000 cpu-clock: \n"
		"\tffffffff81000100 k_leaf+0x80 ([kernel.kallsyms])\n"
		"\tffffffff81001005 k_mid+0x5 ([kernel.kallsyms])\n"
		"\tffffffff81002005 k_entry+0x5 ([kernel.kallsyms])\n"
		"\n"
		"proc     7/7         5.002000:    1000000 cpu-clock: \n"
		"\n"
		WORKER_BLOCK);
	free(text);
	profile__free(p);
}

/* without thread keys: the PID alone, as perf prints one number */
Test(script, without_thread_keys_the_header_has_the_pid)
{
	struct profile *p = made_profile();
	char *text;

	p->meta.sample_keys[0] = 0;
	text = script(p, false);
	cr_expect(!strncmp(text, "proc     7     5.000000:    1000000 cpu-clock: \n", 48), "%s", text);
	free(text);
	profile__free(p);
}

/* the time step: the mean period of clock events, else the duration over the samples; in
 * whole microseconds, at least one */
Test(script, the_time_step_is_the_mean_period)
{
	struct profile *p = made_profile();

	cr_expect_eq(script_out__step(p), MS);
	p->stack_samples[0].weight = MS + 2400;	/* 4.0024 ms over 4 samples */
	cr_expect_eq(script_out__step(p), MS + 1000);
	snprintf(p->meta.unit, sizeof(p->meta.unit), "events");
	p->meta.duration_ns = 40 * MS;
	cr_expect_eq(script_out__step(p), 10 * MS);
	p->meta.duration_ns = 400;
	cr_expect_eq(script_out__step(p), 1000);
	profile__free(p);
}

/* with time buckets, a thread's blocks follow them: the stack of bucket 2 before that of 5 */
Test(script, blocks_follow_the_time_buckets)
{
	struct profile *p = profile__new();
	u64 ips[] = { K + 0x100 }, ips2[] = { K + 0x1005 };
	s64 a, b;
	char *text;

	cr_assert(p);
	cr_assert_eq(profile__add_comm(p, 7, 0, "proc", false), 0);
	cr_assert_eq(profile__add_ksym(p, K, "k_start"), 0);
	cr_assert_eq(profile__add_ksym(p, K + 0x80, "k_leaf"), 0);
	cr_assert_eq(profile__add_ksym(p, K + 0x1000, "k_mid"), 0);
	cr_assert_eq(profile__add_ksym(p, K + 0x2000, ""), 0);
	a = profile__add_stack(p, ips, 1, 0, 0);
	b = profile__add_stack(p, ips2, 1, 0, 0);
	cr_assert(a >= 0 && b >= 0);
	cr_assert_eq(profile__add_stack_sample_keyed(p, &(struct profile_stack_sample){ .pid = 7,
			.flags = HSBPF_KEY_KERNEL, .kernel = a + 1, .count = 1, .weight = MS },
			&(struct profile_sample_key){ .tid = 7, .time = 5 }), 0);
	cr_assert_eq(profile__add_stack_sample_keyed(p, &(struct profile_stack_sample){ .pid = 7,
			.flags = HSBPF_KEY_KERNEL, .kernel = b + 1, .count = 1, .weight = MS },
			&(struct profile_sample_key){ .tid = 7, .time = 2 }), 0);
	snprintf(p->meta.event, sizeof(p->meta.event), "cpu-clock");
	snprintf(p->meta.unit, sizeof(p->meta.unit), "ns");
	snprintf(p->meta.sample_keys, sizeof(p->meta.sample_keys), "tid,time");
	p->meta.start_mono_ns = 5000000000ull;
	profile__finish(p);
	text = script(p, false);
	cr_expect_str_eq(text,
		"proc     7/7         5.000000:    1000000 cpu-clock: \n"
		"\tffffffff81001005 k_mid+0x5 ([kernel.kallsyms])\n"
		"\n"
		"proc     7/7         5.001000:    1000000 cpu-clock: \n"
		"\tffffffff81000100 k_leaf+0x80 ([kernel.kallsyms])\n"
		"\n");
	free(text);
	profile__free(p);
}
