// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Stacks unwound in user space from the copy the kernel sends: a real process stopped three
 * calls deep (its registers by ptrace, its stack copied as the kernel copies it) unwinds
 * through its callers; what is past the kept copies is counted and keeps its pc; an off-CPU
 * block's copy and its time are joined by token. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>
#include "record/late_stacks.h"

TestSuite(late_stacks, .timeout = 60);

static __attribute__((noinline)) void chain3(void)
{
	raise(SIGSTOP);
	__asm__ volatile("" ::: "memory");	/* no tail call */
}

static __attribute__((noinline)) void chain2(void)
{
	chain3();
	__asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void chain1(void)
{
	chain2();
	__asm__ volatile("" ::: "memory");
}

/* the executable mappings of pid, as the sideband would have brought them */
static void add_maps(struct profile *p, pid_t pid)
{
	char path[64], line[4200], name[4096];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	cr_assert(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, off;
		char perms[8];

		name[0] = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095s", &lo, &hi, perms, &off, name) < 4 ||
		    perms[2] != 'x' || name[0] != '/')
			continue;
		cr_assert_eq(profile__add_mapping(p, pid, 0, lo, hi - lo, off, name, NULL, 0), 0);
	}
	fclose(f);
}

/* the stack from sp, as much as can be read up to the whole copy */
static u32 copy_stack(pid_t pid, u64 sp, u8 *buf)
{
	for (u32 size = HSBPF_LATE_STACK_BYTES; size >= 256; size /= 2) {
		struct iovec local = { buf, size }, remote = { (void *)sp, size };

		if (process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)size)
			return size;
	}
	return 0;
}

static bool in_func(u64 ret, void (*fn)(void))
{
	/* a return address is after the call, inside the caller's few instructions */
	return ret - 1 >= (u64)fn && ret - 1 < (u64)fn + 64;
}

Test(late_stacks, a_stopped_process_unwinds_through_its_callers)
{
	struct late_stack *l = calloc(1, sizeof(*l));
	struct late_stacks *ls = late_stacks__new();
	struct profile *p = profile__new();
	struct user_regs_struct r;
	const struct profile_stack *st;
	const u64 *ips;
	pid_t pid;
	int status;
	long word;
	u32 k;

	cr_assert(l && ls && p);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (!pid) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		chain1();
		_exit(0);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFSTOPPED(status) && WSTOPSIG(status) == SIGSTOP);
	cr_assert_eq(ptrace(PTRACE_GETREGS, pid, NULL, &r), 0);

	l->key.pid = pid;
	l->weight = 1;
	l->ip = r.rip;
	{
		const u64 gpr[16] = { r.rax, r.rdx, r.rcx, r.rbx, r.rsi, r.rdi, r.rbp, r.rsp,
				      r.r8, r.r9, r.r10, r.r11, r.r12, r.r13, r.r14, r.r15 };

		memcpy(l->regs, gpr, sizeof(gpr));
	}
	/* stopped in raise's kill syscall: the pc follows the syscall instruction */
	word = ptrace(PTRACE_PEEKTEXT, pid, (void *)(r.rip - 2), NULL);
	l->in_syscall = (long)r.orig_rax >= 0 && (word & 0xffff) == 0x050f;
	cr_expect(l->in_syscall, "orig_rax %lld, bytes %lx", (long long)r.orig_rax, word & 0xffff);
	l->size = copy_stack(pid, r.rsp, l->data);
	cr_assert_gt(l->size, 0);
	add_maps(p, pid);

	cr_assert_eq(late_stacks__add(ls, p, l), 0);
	cr_assert_eq(late_stacks__resolve(ls, p), 0);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);

	cr_assert_eq(p->nr_stack_samples, 1);
	cr_expect_eq(p->stats.stack_late_unwound, 1);
	st = profile__stack(p, p->stack_samples[0].user);
	cr_assert(st);
	ips = profile__frames(p, st);
	cr_expect_eq(ips[0], r.rip);
	/* somewhere under raise's frames: chain3, chain2, chain1, one after the other */
	for (k = 1; k < st->nr && !in_func(ips[k], chain3); k++)
		;
	cr_assert_lt(k + 2, st->nr, "chain3 not found in %u frames (end %u)", st->nr, st->end);
	cr_expect(in_func(ips[k + 1], chain2), "frame %u: %llx", k + 1, (unsigned long long)ips[k + 1]);
	cr_expect(in_func(ips[k + 2], chain1), "frame %u: %llx", k + 2, (unsigned long long)ips[k + 2]);
	late_stacks__free(ls);
	profile__free(p);
	free(l);
}

/* past what is kept, a sample keeps its pc, ended "no mapping", and is counted */
Test(late_stacks, past_the_kept_copies_samples_keep_their_pc_counted)
{
	struct late_stack *l = calloc(1, sizeof(*l));
	struct late_stacks *ls = late_stacks__new();
	struct profile *p = profile__new();
	size_t kept = 0, lone = 0;

	cr_assert(l && ls && p);
	l->key.pid = 4242;	/* no mappings: unwound, each ends at its pc */
	l->ip = 0x1234;
	l->weight = 10;
	for (int i = 0; i < LATE_STACKS_MAX + 3; i++)
		cr_assert_eq(late_stacks__add(ls, p, l), 0);
	cr_expect_eq(p->stats.stack_late_dropped, 3);
	cr_expect_eq(p->nr_stack_samples, 3);
	cr_assert_eq(late_stacks__resolve(ls, p), 0);
	cr_expect_eq(p->stats.stack_late_unwound, LATE_STACKS_MAX);
	cr_assert_eq(p->nr_stack_samples, LATE_STACKS_MAX + 3);
	for (size_t i = 0; i < p->nr_stack_samples; i++) {
		const struct profile_stack *st = profile__stack(p, p->stack_samples[i].user);

		cr_assert(st);
		cr_expect_eq(st->nr, 1);
		cr_expect_eq(profile__frames(p, st)[0], 0x1234);
		cr_expect_eq(st->end, HSBPF_STACK_NO_MAPPING);
		cr_expect_eq(p->stack_samples[i].weight, 10);
		if (i < 3)
			lone++;
		else
			kept++;
	}
	cr_expect_eq(kept, LATE_STACKS_MAX);
	cr_expect_eq(lone, 3);
	late_stacks__free(ls);
	profile__free(p);
	free(l);
}

/* an off-CPU block's copy comes at its switch-out with weight 0, its time at its switch-in under
 * the copy's token: the two are counted as one stack sample, once unwound; a copy without its
 * time (a block the bounds left out) is no sample; a time whose copy was not kept keeps its pc */
Test(late_stacks, off_cpu_blocks_join_their_copies_by_token)
{
	struct late_stack *l = calloc(1, sizeof(*l));
	struct late_stacks *ls = late_stacks__new();
	struct profile *p = profile__new();
	struct late_block b = { .token = 0x11, .ns = 20000000, .ip = 0x5678 };

	cr_assert(l && ls && p);
	l->key.pid = 4242;
	l->key.flags = HSBPF_KEY_OFFCPU;
	l->ip = 0x1234;
	l->token = 0x11;
	cr_assert_eq(late_stacks__add(ls, p, l), 0);
	l->token = 0x22;	/* no time comes for it */
	cr_assert_eq(late_stacks__add(ls, p, l), 0);
	cr_assert_eq(late_stacks__add_block(ls, p, &b), 0);
	cr_expect_eq(p->nr_stack_samples, 0, "a copy's time waits for its unwinding");
	b.token = 0x33;		/* its copy was never kept */
	b.ns = 5000;
	b.key.pid = 4243;
	b.key.flags = HSBPF_KEY_OFFCPU;
	cr_assert_eq(late_stacks__add_block(ls, p, &b), 0);
	cr_assert_eq(p->nr_stack_samples, 1);
	cr_expect_eq(p->stack_samples[0].pid, 4243);
	cr_expect_eq(p->stack_samples[0].weight, 5000);
	cr_expect_eq(profile__frames(p, profile__stack(p, p->stack_samples[0].user))[0], 0x5678);
	cr_assert_eq(late_stacks__resolve(ls, p), 0);
	cr_assert_eq(p->nr_stack_samples, 2, "the copy without a time is no sample");
	cr_expect_eq(p->stack_samples[1].pid, 4242);
	cr_expect_eq(p->stack_samples[1].flags, HSBPF_KEY_OFFCPU);
	cr_expect_eq(p->stack_samples[1].count, 1);
	cr_expect_eq(p->stack_samples[1].weight, 20000000);
	cr_expect_eq(profile__frames(p, profile__stack(p, p->stack_samples[1].user))[0], 0x1234);
	cr_expect_eq(p->stats.stack_late_unwound, 1);
	late_stacks__free(ls);
	profile__free(p);
	free(l);
}
