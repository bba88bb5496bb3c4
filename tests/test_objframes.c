// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* objframes: user frames as (object, offset) (profile__share_stacks, format 1.11): two
 * processes of one program share their stacks, every frame still names its object and offset,
 * the slots that become one are summed; a 1.10 profile (tests/data) still reads, and reads the
 * same once shared. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "helpers.h"
#include "hsbpf.h"
#include "profile/profile.h"
#include "report/callchain.h"
#include "symbols/symbolizer.h"

#define PROG "/usr/bin/prog"
#define LIBC "/usr/lib/libc.so.6"

/* pids 10 and 20 run PROG and LIBC at different addresses (ASLR); pid 20 also has JIT code */
static struct profile *two_processes(void)
{
	struct profile *p = profile__new();
	u8 id[20] = { 0xab, 0xcd };
	/* the same call path in each: prog's main+0x10 calls libc's read (pc at offset 0x2040) */
	u64 a[] = { 0x7f0000002040, 0x555500001010 + 0x400, 0x555500001010 + 0x500 };
	u64 b[] = { 0x7f1000002040, 0x565600001010 + 0x400, 0x565600001010 + 0x500 };
	u64 jit[] = { 0x10000040, 0x565600001010 + 0x500 };
	u64 k[] = { 0xffffffff81000100 };
	s64 sa, sb, sj, sk;

	cr_assert(p);
	strcpy(p->meta.offcpu, "off");
	cr_assert(!profile__add_mapping(p, 10, 0, 0x555500000000, 0x10000, 0, PROG, id, 20));
	cr_assert(!profile__add_mapping(p, 10, 0, 0x7f0000000000, 0x100000, 0x1000, LIBC, NULL, 0));
	cr_assert(!profile__add_mapping(p, 20, 0, 0x565600000000, 0x10000, 0, PROG, id, 20));
	cr_assert(!profile__add_mapping(p, 20, 0, 0x7f1000000000, 0x100000, 0x1000, LIBC, NULL, 0));
	cr_assert(!profile__add_mapping(p, 20, 0, 0x10000000, 0x1000, 0, "//anon", NULL, 0));
	cr_assert(!profile__add_comm(p, 10, 0, "prog", false));
	cr_assert(!profile__add_comm(p, 20, 0, "prog", false));
	sa = profile__add_stack(p, a, 3, HSBPF_STACK_COMPLETE, 0);
	sb = profile__add_stack(p, b, 3, HSBPF_STACK_COMPLETE, 0);
	sj = profile__add_stack(p, jit, 2, HSBPF_STACK_COMPLETE, 0);
	sk = profile__add_stack(p, k, 1, HSBPF_STACK_COMPLETE, 0);
	cr_assert(sa >= 0 && sb >= 0 && sj >= 0 && sk >= 0);
	cr_assert(!profile__add_stack_sample(p, &(struct profile_stack_sample){
		.pid = 10, .flags = HSBPF_KEY_OFFCPU, .user = sa + 1, .kernel = sk + 1, .count = 2, .weight = 200 }));
	cr_assert(!profile__add_stack_sample(p, &(struct profile_stack_sample){
		.pid = 20, .flags = HSBPF_KEY_OFFCPU, .user = sb + 1, .kernel = sk + 1, .count = 3, .weight = 300 }));
	/* the same slot of pid 20 in two mapping generations: one once the stack is the object's */
	cr_assert(!profile__add_stack_sample(p, &(struct profile_stack_sample){
		.pid = 20, .flags = HSBPF_KEY_OFFCPU, .map_ns = 5, .user = sb + 1, .kernel = sk + 1, .count = 1, .weight = 50 }));
	cr_assert(!profile__add_stack_sample(p, &(struct profile_stack_sample){
		.pid = 20, .flags = HSBPF_KEY_OFFCPU, .user = sj + 1, .count = 1, .weight = 7 }));
	cr_assert(!profile__add_sample(p, &(struct profile_sample){
		.pid = 10, .flags = HSBPF_KEY_OFFCPU, .ip = a[0], .count = 2, .weight = 200 }));
	cr_assert(!profile__add_sample(p, &(struct profile_sample){
		.pid = 20, .flags = HSBPF_KEY_OFFCPU, .ip = b[0], .count = 4, .weight = 350 }));
	cr_assert(!profile__add_sample(p, &(struct profile_sample){
		.pid = 20, .flags = HSBPF_KEY_OFFCPU, .ip = jit[0], .count = 1, .weight = 7 }));
	profile__finish(p);
	return p;
}

/* the object's path and the file offset a frame of (pid) stands for */
static const char *where(const struct profile *p, u32 pid, u64 ip, u64 *off)
{
	const struct profile_mapping *m = profile__find_mapping(p, pid, 0, 0, ip);

	if (!m)
		return NULL;
	*off = ip - m->start + m->pgoff;
	return profile__str(p, m->path);
}

Test(objframes, processes_of_one_program_share_their_stacks)
{
	struct profile *p = two_processes();
	const struct profile_stack *u;
	u64 off;

	cr_assert_eq(profile__share_stacks(p), 0);
	/* one user stack for both processes, one for the JIT one, one kernel stack */
	cr_assert_eq(p->nr_stacks, 3);
	cr_assert_eq(p->nr_stack_samples, 3, "pid 20's two generations are one slot now");
	cr_assert_eq(p->stack_samples[0].user, p->stack_samples[1].user);
	cr_assert_eq(p->stack_samples[1].count, 4);
	cr_assert_eq(p->stack_samples[1].weight, 350);
	cr_assert_eq(p->stack_samples[1].map_ns, 0);
	u = profile__stack(p, p->stack_samples[0].user);
	cr_assert(u && u->nr == 3);
	for (u32 j = 0; j < 3; j++)
		cr_assert(PROFILE_IS_OBJ_FRAME(profile__frames(p, u)[j]), "frame %u", j);
	/* each frame names its object and its offset in the file, whatever the process */
	cr_assert_str_eq(where(p, 10, profile__frames(p, u)[0], &off), LIBC);
	cr_assert_eq(off, 0x3040);
	cr_assert_str_eq(where(p, 99, profile__frames(p, u)[1], &off), PROG);
	cr_assert_eq(off, 0x1410);
	cr_assert_eq(profile__find_mapping(p, 10, 0, 0, profile__frames(p, u)[1])->build_id[0], 0xab);
	/* JIT code stays an address of its process, its mapping kept */
	u = profile__stack(p, p->stack_samples[2].user);
	cr_assert_eq(profile__frames(p, u)[0], 0x10000040);
	cr_assert(PROFILE_IS_OBJ_FRAME(profile__frames(p, u)[1]));
	cr_assert_str_eq(where(p, 20, 0x10000040, &off), "//anon");
	/* the flat samples: the same ips as the stacks' first frames */
	cr_assert_eq(p->samples[0].ip, profile__frames(p, profile__stack(p, p->stack_samples[0].user))[0]);
	cr_assert_eq(p->samples[0].ip, p->samples[1].ip);
	cr_assert_eq(p->samples[2].ip, 0x10000040);
	/* the processes' file mappings went: two objects and the JIT mapping are left */
	cr_assert_eq(p->nr_mappings, 3);
	/* shared again: nothing changes */
	cr_assert_eq(profile__share_stacks(p), 0);
	cr_assert_eq(p->nr_stacks, 3);
	profile__free(p);
}

Test(objframes, shared_stacks_round_trip_as_1_11)
{
	struct profile *p = two_processes(), *q = NULL;
	char path[512];
	u64 off;

	cr_assert_eq(profile__share_stacks(p), 0);
	snprintf(path, sizeof(path), "%s/shared.hsbpf", tmpdir());
	cr_assert_eq(profile__write(p, path), 0);
	cr_assert_eq(profile__read(path, &q), 0);
	cr_assert_eq(q->nr_stacks, p->nr_stacks);
	cr_assert_eq(q->nr_frames, p->nr_frames);
	cr_assert_eq(q->nr_mappings, p->nr_mappings);
	cr_assert_str_eq(where(q, 20, q->frames[0], &off), LIBC);
	cr_assert_eq(off, 0x3040);
	profile__free(p);
	profile__free(q);
	cleanup_tmpdir();
}

/* report's folded stacks of p (symbolized against this machine's files, as any reader) */
static char *folded(const struct profile *p)
{
	struct symbolizer *sy = symbolizer__new(p);
	struct callchain *cc = sy ? callchain__new(p, sy) : NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	cr_assert(cc && f);
	cr_assert_eq(callchain__print_folded(cc, f), 0);
	fclose(f);
	callchain__free(cc);
	symbolizer__free(sy);
	return buf;
}

Test(objframes, a_1_10_profile_reads_and_reads_the_same_shared)
{
	struct profile *p = NULL;
	char *before, *after;
	size_t stacks;

	/* hsbpf record --off-cpu -- sh -c 'sleep 0.05; sleep 0.05' by a 1.10 hsbpf */
	cr_assert_eq(profile__read("tests/data/offcpu-1.10.hsbpf", &p), 0);
	for (size_t i = 0; i < p->nr_frames; i++)
		cr_assert(!PROFILE_IS_OBJ_FRAME(p->frames[i]));
	stacks = p->nr_stacks;
	before = folded(p);
	cr_assert(strstr(before, "sleep;") && strstr(before, "sh;"));
	cr_assert_eq(profile__share_stacks(p), 0);
	cr_assert_lt(p->nr_stacks, stacks, "the two sleeps' stacks are one");
	after = folded(p);
	cr_assert_str_eq(after, before);
	free(before);
	free(after);
	profile__free(p);
}

/* profile__sort_by_process: records in (pid, exec_ns) order, ties as they were, their keys
 * and wakers with them */
Test(objframes, records_sorted_by_process)
{
	static const u32 pids[] = { 30, 10, 30, 20, 10 };
	static const u64 execs[] = { 2, 9, 1, 5, 9 };
	static const size_t want[] = { 1, 4, 3, 2, 0 };	/* the records' order once sorted */
	struct profile *p = profile__new();

	cr_assert(p);
	for (size_t i = 0; i < 5; i++) {
		struct profile_sample s = { .pid = pids[i], .exec_ns = execs[i], .ip = 0x1000 + i,
					    .count = 1 };
		struct profile_stack_sample ss = { .pid = pids[i], .exec_ns = execs[i],
						   .kernel = 0, .count = 1 + i };
		struct profile_sample_key k = { .tid = 100 + i };
		struct profile_waker w = { .pid = 200 + i };

		cr_assert_eq(profile__add_sample_keyed(p, &s, &k), 0);
		cr_assert_eq(profile__add_stack_sample_waker(p, &ss, &k, &w), 0);
	}
	cr_assert_eq(profile__sort_by_process(p), 0);
	for (size_t i = 0; i < 5; i++) {
		cr_expect_eq(p->samples[i].ip, 0x1000 + want[i], "sample %zu", i);
		cr_expect_eq(profile__sample_key(p, i)->tid, 100 + want[i], "key %zu", i);
		cr_expect_eq(p->stack_samples[i].count, 1 + want[i], "stack sample %zu", i);
		cr_expect_eq(profile__stack_sample_key(p, i)->tid, 100 + want[i]);
		cr_expect_eq(profile__stack_sample_waker(p, i)->pid, 200 + want[i]);
	}
	profile__free(p);
}
