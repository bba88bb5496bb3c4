// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* memory_snapshot: the views of one recording's profile that record --snapshot-every writes, on
 * a profile made by hand: interval N's allocations and the live set at its end; the final
 * profile, every interval's allocations and the last live set; the keys' snap cleared, the
 * profile's own samples back after. */
#include <criterion/criterion.h>
#include "hsbpf.h"
#include "profile/profile.h"
#include "record/memory_snapshot.h"

static u32 mem(u32 kind)
{
	return HSBPF_KEY_MEMORY | kind << HSBPF_KEY_STATE_SHIFT;
}

/* allocations of 100 and 200 bytes in intervals 1 and 2, 100 and 300 live at their ends,
 * one on-CPU sample, flat and by stack */
static struct profile *recording(void)
{
	static const struct { u32 kind; u16 snap; u64 bytes; } s[] = {
		{ HSBPF_MEM_ALLOC, 1, 100 }, { HSBPF_MEM_ALLOC, 2, 200 }, { HSBPF_MEM_INUSE, 1, 100 },
		{ HSBPF_MEM_INUSE, 2, 300 },
	};
	struct profile *p = profile__new();

	cr_assert(p);
	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++) {
		struct profile_sample ps = { .pid = 1, .ip = 0x10 + i, .flags = mem(s[i].kind), .count = 1024,
					     .weight = s[i].bytes };
		struct profile_stack_sample ss = { .pid = 1, .flags = mem(s[i].kind), .count = 1024,
						   .weight = s[i].bytes };
		struct profile_sample_key k = { .tid = 7, .snap = s[i].snap };

		cr_assert_eq(profile__add_sample_keyed(p, &ps, &k), 0);
		cr_assert_eq(profile__add_stack_sample_keyed(p, &ss, &k), 0);
	}
	return p;
}

static u64 bytes(const struct profile *p, u32 kind, bool stacks)
{
	u64 sum = 0;

	for (size_t i = 0; i < (stacks ? p->nr_stack_samples : p->nr_samples); i++) {
		u32 flags = stacks ? p->stack_samples[i].flags : p->samples[i].flags;

		if (flags == mem(kind))
			sum += stacks ? p->stack_samples[i].weight : p->samples[i].weight;
	}
	return sum;
}

Test(memory_snapshot, views)
{
	static const struct { u32 snap; u64 alloc, inuse; size_t n; } cases[] = {
		{ 1, 100, 100, 2 }, { 2, 200, 300, 2 }, { 0, 300, 300, 3 },
	};
	struct profile *p = recording();

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct memory_view_saved saved;

		cr_assert_eq(memory_snapshot__view(p, cases[c].snap, 2, &saved), 0);
		for (int stacks = 0; stacks < 2; stacks++) {
			cr_expect_eq(bytes(p, HSBPF_MEM_ALLOC, stacks), cases[c].alloc, "view %u", cases[c].snap);
			cr_expect_eq(bytes(p, HSBPF_MEM_INUSE, stacks), cases[c].inuse, "view %u", cases[c].snap);
		}
		cr_expect_eq(p->nr_samples, cases[c].n);
		cr_expect_eq(p->nr_sample_keys, cases[c].n);
		cr_expect_eq(p->nr_stack_sample_keys, cases[c].n);
		for (size_t i = 0; i < p->nr_sample_keys; i++) {
			cr_expect_eq(p->sample_keys[i].snap, 0, "the views' keys are a recording's");
			cr_expect_eq(p->sample_keys[i].tid, 7, "the other keys stay");
		}
		memory_snapshot__restore(p, &saved);
		cr_expect_eq(p->nr_samples, 4, "the profile's own samples back");
		cr_expect_eq(p->sample_keys[3].snap, 2);
	}
	profile__free(p);
}

/* a sample that is not an allocation belongs to the final profile alone */
Test(memory_snapshot, other_samples_in_the_final_profile)
{
	struct profile *p = recording();
	struct profile_sample cpu = { .pid = 1, .ip = 0x99, .count = 1, .weight = 1000 };
	struct profile_sample_key k = { .tid = 7 };
	struct memory_view_saved saved;

	cr_assert_eq(profile__add_sample_keyed(p, &cpu, &k), 0);
	cr_assert_eq(memory_snapshot__view(p, 1, 2, &saved), 0);
	cr_expect_eq(p->nr_samples, 2);
	memory_snapshot__restore(p, &saved);
	cr_assert_eq(memory_snapshot__view(p, 0, 2, &saved), 0);
	cr_expect_eq(p->nr_samples, 4);
	memory_snapshot__restore(p, &saved);
	profile__free(p);
}
