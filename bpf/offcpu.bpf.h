/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Off-CPU time (record --off-cpu, --wall; docs/off-cpu.md): at each context switch the task
 * switched out, when it is in the target, has its user and kernel stacks unwound as a sample's
 * are, and the moment kept in its task storage with the state it blocked in; when it next runs,
 * the time it spent off the CPU is added to that stack's slot (count: blocks, weight: ns), in
 * the maps the on-CPU samples use, keyed as they are plus HSBPF_KEY_OFFCPU and the state.
 * Nothing per switch goes to user space, but in a program's first milliseconds, whose user
 * stacks go there to be unwound (as samples' do: late_stack), and their time after them. At the
 * start an iterator finds the tasks blocked then (their blocks count from the start, their user
 * stacks unwound when they are current again: at the syscall's exit); at the end one counts the
 * tasks still off the CPU up to the end; top --off-cpu splits the open blocks at each refresh.
 * With --wakers, the task that wakes a blocked one (sched_waking, run by the waker) has its
 * stacks unwound the same way and kept in the blocked task's storage, and the block is counted
 * under both stacks (waker_samples); a waker outside a -p or command target is announced to
 * user space the first time it is seen in its image (waker_news), to have its mappings read
 * while it runs. Included by profile.bpf.c; its programs load only when
 * asked. */
#ifndef HSBPF_OFFCPU_BPF_H
#define HSBPF_OFFCPU_BPF_H

#include "hsbpf.h"
#include "samples.bpf.h"
#include "stacks.bpf.h"

/* set by user space before load */
const volatile __u64 min_block_ns = 0;		/* --min-block: shorter blocks are left out */
const volatile __u64 max_block_ns = ~0ull;	/* --max-block: longer ones too */
const volatile bool offcpu_by_cgroup = false;	/* --cgroup: offcpu_cgroup[0]'s tasks only */
const volatile __u64 offcpu_cgroup_id = 0;	/* ... its id, for tasks that are not current */
const volatile bool offcpu_by_cpu = false;	/* -C: blocks that begin on these CPUs only */
const volatile __u64 offcpu_cpus[HSBPF_MAX_CPUS / 64] = {};	/* ... a bit each */
const volatile bool offcpu_wakers = false;	/* --wakers: each block joined to its waker's stacks */
/* bench/offcpu.sh's measure of the stacks' share of a switch (HSBPF_BENCH_OFFCPU_STACKS): the
 * switch-out's kernel stack, and its user stack (the unwinder), taken or not */
const volatile bool offcpu_kernel_stacks = true;
const volatile bool offcpu_user_stacks = true;
/* --switch-sample P: a switch-out is followed when a draw is below this (P * 2^32; 0: every
 * one), and its block's time weighs offcpu_sample_scale / 2^16 times as much (1 / P) */
const volatile __u32 offcpu_sample_below = 0;
const volatile __u64 offcpu_sample_scale = 1 << 16;
/* the recording's end (CLOCK_MONOTONIC), set before the flush iterator runs */
volatile __u64 offcpu_end_ns = 0;
/* its start: the switch program's first run (user space's moment after the attach when none
 * came first); the blocks under way then count from it. Not the moment before the attach: a
 * block that ended while the program was being attached would be lost from the start */
volatile __u64 offcpu_start_ns = 0;
/* blocks under way at the start not counted yet: 0 makes the syscall exit's program a test */
__s64 offcpu_underway_left = 0;
/* set from just before the switch program's attach to the end of the start's walk: a target
 * task switched in then with no record was off the CPU since before the attach */
volatile __u32 offcpu_starting = 0;

/* the kernel's task states (include/linux/sched.h), as /proc shows them */
#define OFFCPU_TASK_INTERRUPTIBLE	0x0001
#define OFFCPU_TASK_UNINTERRUPTIBLE	0x0002
#define OFFCPU_TASK_DEAD		0x0080
#define OFFCPU_STATE_BITS		0x00ff
/* the kernel stack from the tracepoint begins in this program and bpf_trace_run4 (which
 * __bpf_trace_sched_switch tail-calls): skipped, so that it begins at __schedule */
#define OFFCPU_SKIP_FRAMES		2
/* with another program on sched_switch (a second tool, a test run beside), the tracepoint's
 * static call goes through its iterator: one frame more to skip, else every off-CPU kernel
 * stack ends in __traceiter_sched_switch instead of __schedule */
extern const void __traceiter_sched_switch __ksym __weak;

static __always_inline bool offcpu_in_traceiter(__u64 ip)
{
	__u64 at = (__u64)&__traceiter_sched_switch;

	return at && ip - at < 512;
}

/* the kernel's interrupt entries (x86's hard interrupts: asm_sysvec_*, asm_common_interrupt)
 * and softirq entry (__do_softirq): a wake-up whose kernel stack passes one runs in an
 * interrupt (kallsyms has no per-CPU variable here: no preempt_count to read) */
extern const void __irqentry_text_start __ksym;
extern const void __irqentry_text_end __ksym;
extern const void __softirqentry_text_start __ksym;
extern const void __softirqentry_text_end __ksym;

/* a task off the CPU: since when, and under what key its time goes */
struct offcpu_task {
	__u64 start_ns;		/* 0: not off the CPU in the target */
	__u64 ip;		/* the flat histogram's address: where it left user space */
	__u32 ip_flags;
	__u32 underway;		/* blocked when the recording started: its user stack is unwound,
				 * and its time counted, when it is current again */
	__u64 end_ns;		/* ... the end of that block, when it ran again (0: not yet) */
	__u64 late_token;	/* its user stack went to user space to be unwound (a new program's
				 * first milliseconds): the time goes there too, under this token */
	__u64 seen;		/* met since the attach (switched out, found by the start's walk,
				 * switched in during the start): no block under way from the start
				 * to find (set by compare-and-swap, which the start's walk and the
				 * switch-in race for) */
	struct stack_key key;	/* process image, cgroup, thread, stacks, flags with the state */
	__u32 waker_tid;	/* --wakers: the thread that woke this block, when waker_known */
	__u32 waker_known;
	struct waker_id waker;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct offcpu_task);
} offcpu_tasks SEC(".maps");

/* --cgroup: the cgroup (its descendants too) whose tasks are the target */
struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} offcpu_cgroup SEC(".maps");

/* --wakers: blocks under their stacks and their waker's (1 entry unless asked) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, struct waker_key);
	__type(value, struct sample_value);
} waker_samples SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct waker_key);
} waker_scratch SEC(".maps");

/* --wakers with a -p or command target: the processes outside it seen waking its blocks, each
 * with its image's tag (the moment it was first seen waking one); a new one is announced on
 * waker_news, so that user space reads its mappings while it runs (nothing else follows them).
 * An exec ends an image (its entry goes: the next wake-up is a new image's, announced anew), a
 * fork makes a new process (a reused pid's entry goes); LRU: a busy machine's old wakers make
 * room, announced again if they wake again. Small unless asked */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u64);
} waker_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} waker_news SEC(".maps");

/* the start iterator's kernel stack of a task: apart from unwind_scratch, which a sample may
 * use at the same time on this CPU (the iterator runs with interrupts on) */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct stack_frames);
} offcpu_kstack SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, HSBPF_OFFCPU_STAT_NR);
	__type(key, __u32);
	__type(value, __u64);
} offcpu_stats SEC(".maps");

static __always_inline void offcpu_stat(__u32 slot, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&offcpu_stats, &slot);

	if (v)
		*v += n;
}

/* -C: a block is followed when its task left one of the CPUs, as a sample is when it is taken
 * on one */
static __always_inline bool offcpu_on_cpus(__u32 cpu)
{
	if (!offcpu_by_cpu)
		return true;
	return cpu < HSBPF_MAX_CPUS && (offcpu_cpus[cpu / 64] >> (cpu % 64) & 1);
}

/* --switch-sample: whether this block is followed (a draw below the threshold), counted when
 * not; a skipped switch costs this draw */
static __always_inline bool offcpu_drawn(void)
{
	if (!offcpu_sample_below || bpf_get_prandom_u32() < offcpu_sample_below)
		return true;
	offcpu_stat(HSBPF_OFFCPU_UNSAMPLED, 1);
	return false;
}

/* a followed block's time weighed by 1 / P (--switch-sample), in 2^-16 steps: an unbiased
 * estimate of the time of the blocks it stands for */
static __always_inline __u64 offcpu_scaled(__u64 ns)
{
	if (!offcpu_sample_below)
		return ns;
	return (ns >> 16) * offcpu_sample_scale + ((ns & 0xffff) * offcpu_sample_scale >> 16);
}

/* a task of the target (the procs filter of a command or -p; --cgroup is tested apart) */
static __always_inline bool offcpu_in_target(struct task_struct *task, struct proc_state *proc)
{
	return !filter_pids || (proc && proc->state == HSBPF_PID_ACTIVE &&
				(!no_inherit || task->pid == task->tgid));
}

#define OFFCPU_CGROUP_DEPTH	32	/* a task deeper than this in the v2 tree is not tested */

/* --cgroup's test of a task that is not current (bpf_current_task_under_cgroup tests current
 * only): the cgroup or one of its descendants is the task's in the v2 hierarchy, read from the
 * ancestors its cgroup keeps (ancestors[0] the root, ancestors[level] itself) */
static __always_inline bool offcpu_task_in_cgroup(struct task_struct *task)
{
	struct cgroup *cg = BPF_CORE_READ(task, cgroups, dfl_cgrp);
	__u64 at = bpf_core_field_offset(struct cgroup, ancestors);
	int level = BPF_CORE_READ(cg, level);

	if (!cg || level < 0 || level >= OFFCPU_CGROUP_DEPTH)
		return false;
	for (int i = 0; i < OFFCPU_CGROUP_DEPTH; i++) {
		struct cgroup *a = NULL;

		if (i > level)
			break;
		if (bpf_probe_read_kernel(&a, sizeof(a), (void *)cg + at + i * sizeof(a)) || !a)
			return false;
		if (BPF_CORE_READ(a, kn, id) == offcpu_cgroup_id)
			return true;
	}
	return false;
}

/* a preempted task is runnable (R) whatever its state says: it was about to sleep */
static __always_inline __u32 offcpu_state(bool preempt, unsigned int state)
{
	if (preempt || !(state & OFFCPU_STATE_BITS))
		return HSBPF_OFFCPU_R;
	if (state & OFFCPU_TASK_INTERRUPTIBLE)
		return HSBPF_OFFCPU_S;
	if (state & OFFCPU_TASK_UNINTERRUPTIBLE)
		return HSBPF_OFFCPU_D;
	return HSBPF_OFFCPU_OTHER;
}

/* one block of ns into map's slot for key (each call site names one map: inlined lookups) */
static __always_inline bool offcpu_add(void *map, const void *key, __u64 ns)
{
	struct sample_value one = { 1, ns }, *val;

	val = bpf_map_lookup_elem(map, key);
	if (!val) {
		if (!bpf_map_update_elem(map, key, &one, BPF_NOEXIST))
			return true;
		val = bpf_map_lookup_elem(map, key);	/* another CPU was first, or full */
		if (!val)
			return false;
	}
	__sync_fetch_and_add(&val->count, 1);
	__sync_fetch_and_add(&val->weight, ns);
	return true;
}

/* a block whose stack user space unwinds: its time follows the copy, under its token (false
 * when the ring is full: the block keeps the stack the kernel ended) */
static __always_inline bool offcpu_late_block(struct offcpu_task *t, __u64 token, __u64 ns)
{
	struct late_block *b = bpf_ringbuf_reserve(&late_stacks, sizeof(*b), 0);

	if (!b) {
		stack_stat_add(HSBPF_STACK_STAT_LATE_FULL, 1);
		return false;
	}
	b->token = token;
	b->ns = ns;
	b->ip = t->ip;
	b->key = t->key;
	bpf_ringbuf_submit(b, 0);
	return true;
}

/* the block under its stacks and its waker's; false when the map is full (counted: the block
 * goes to stack_samples without them) */
static __always_inline bool offcpu_add_waker(struct offcpu_task *t, __u64 ns)
{
	struct waker_key *wk;
	__u32 zero = 0;

	/* the key is too big for the BPF stack beside the caller's: a per-CPU scratch */
	wk = bpf_map_lookup_elem(&waker_scratch, &zero);
	if (!wk)
		return false;
	wk->key = t->key;
	wk->w = t->waker;
	if (offcpu_add(&waker_samples, wk, ns))
		return true;
	offcpu_stat(HSBPF_OFFCPU_WAKER_LOST, 1);
	return false;
}

/* the time from t->start_ns to now into the maps (top: the flat map of the interval counting) */
static __always_inline void offcpu_add_span(struct offcpu_task *t, __u64 now)
{
	__u64 ns = now - t->start_ns, token = t->late_token;
	__u32 zero = 0, *gen = bpf_map_lookup_elem(&live, &zero);
	struct sample_key flat = {};
	bool ok;

	t->late_token = 0;
	if (ns < min_block_ns) {
		offcpu_stat(HSBPF_OFFCPU_SHORT, 1);
		return;
	}
	if (ns > max_block_ns) {
		offcpu_stat(HSBPF_OFFCPU_LONG, 1);
		return;
	}
	ns = offcpu_scaled(ns);
	if (offcpu_wakers && t->waker_known)
		t->key.x.waker = t->waker_tid;
	else if (offcpu_wakers && (t->ip_flags & HSBPF_KEY_STATE_MASK) >> HSBPF_KEY_STATE_SHIFT != HSBPF_OFFCPU_R)
		offcpu_stat(HSBPF_OFFCPU_UNWOKEN, 1);
	flat.pid = t->key.pid;
	flat.flags = t->ip_flags;
	flat.ip = t->ip;
	flat.cgroup_id = t->key.cgroup_id;
	flat.exec_ns = t->key.exec_ns;
	flat.map_ns = t->key.map_ns;
	flat.x = t->key.x;
	if (gen && (*gen & 1))
		ok = offcpu_add(&samples_odd, &flat, ns);
	else
		ok = offcpu_add(&samples, &flat, ns);
	if (ok && call_graph != HSBPF_CALL_GRAPH_NONE) {
		if (token && offcpu_late_block(t, token, ns)) {
			/* its stack is unwound in user space, where no waker's stack goes */
			if (offcpu_wakers && t->waker_known)
				offcpu_stat(HSBPF_OFFCPU_WAKER_LOST, 1);
		} else if (!(offcpu_wakers && t->waker_known && offcpu_add_waker(t, ns))) {
			ok = offcpu_add(&stack_samples, &t->key, ns);
		}
	}
	if (ok) {
		offcpu_stat(HSBPF_OFFCPU_BLOCKS, 1);
	} else {
		offcpu_stat(HSBPF_OFFCPU_FULL, 1);
		offcpu_stat(HSBPF_OFFCPU_FULL_NS, ns);
	}
}

/* the nr frames of a kernel stack in f stored under their hash: the hash, or
 * HSBPF_STACK_LOST_HASH when the map is full (the switch's, the start's and the waker's) */
static __always_inline __u64 offcpu_store_kernel(struct stack_frames *f, __u32 nr)
{
	__u64 h = 0x13198A2E03707344ull;

	f->nr = nr;
	f->end = 0;
	f->nr_fp = 0;
	for (__u32 i = 0; i < HSBPF_MAX_FRAMES && i < nr; i++)
		h = stack_mix(h, f->ip[i]);
	h |= 1;
	if (!stacks__store(h, f)) {
		stack_stat_add(HSBPF_STACK_STAT_STACKS_FULL, 1);
		return HSBPF_STACK_LOST_HASH;
	}
	return h;
}

/* a kernel stack of got bytes in f, stored under its hash into t->key.kernel */
static __always_inline void offcpu_kernel_stack(struct stack_frames *f, long got, struct offcpu_task *t)
{
	if (got <= 0) {
		stack_stat_add(HSBPF_STACK_STAT_KERNEL_ERR, 1);
		return;
	}
	t->key.kernel = offcpu_store_kernel(f, got / sizeof(__u64));
}

/* the user stack of task (current) from the registers it saved at its entry to the kernel,
 * unwound into st->user, its hash in st->hash; false for none (a kernel thread, or with
 * syscall_only a task that entered the kernel otherwise: an interrupt's wake-up) */
static __always_inline bool offcpu_walk_user(struct task_struct *task, __u32 tgid,
					    struct proc_state *proc, struct stack_walk *st,
					    __u64 ip, bool syscall_only)
{
	struct pt_regs *regs;
	__u16 insn = 0;
	bool in_syscall;

	if (!BPF_CORE_READ(task, mm))
		return false;
	if (in_exec(task, tgid)) {
		if (syscall_only)
			return false;
		st->user.nr = 0;
		st->user.nr_fp = 0;
		st->user.end = HSBPF_STACK_IN_EXEC;
		st->hash = stack_mix(0x243F6A8885A308D3ull, (__u64)HSBPF_STACK_IN_EXEC << 32);
		return true;
	}
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	/* blocked in a syscall: the saved pc follows it, looked up as a return address */
	in_syscall = (long)BPF_CORE_READ(regs, orig_ax) >= 0 &&
		     !bpf_probe_read_user(&insn, sizeof(insn), (void *)(ip - 2)) && insn == 0x050f;
	if (syscall_only && !in_syscall)
		return false;
	LEAF_REGS(st, regs, BPF_CORE_READ);
	st->pid = tgid;
	st->tag = image_tag(proc);
	unwind_user(st, ip, st->leaf[HSBPF_DWARF_RSP], st->leaf[HSBPF_DWARF_RBP], in_syscall);
	return true;
}

/* st->user stored under st->hash: the key's reference to it */
static __always_inline __u64 offcpu_store_user(struct stack_walk *st)
{
	__u64 h = st->hash | 1;

	if (!stacks__store_user(st, &h, false)) {
		stack_stat_add(HSBPF_STACK_STAT_STACKS_FULL, 1);
		return HSBPF_STACK_LOST_HASH;
	}
	return h;
}

/* the user stack of task, which is current, from the registers saved at its entry to the
 * kernel, into t->key.user */
static __always_inline void offcpu_user_stack(struct stack_walk *st, struct task_struct *task, __u32 tgid,
					      struct proc_state *proc, struct offcpu_task *t, __u64 now)
{
	if (!offcpu_walk_user(task, tgid, proc, st, t->ip, false))	/* a kernel thread */
		return;
	/* a program too new for its tables (as a sample's, stacks__sample_one): the copy goes to
	 * user space now, while the task's memory is current's; the stack ended here is still
	 * stored, for a block whose time finds the ring full */
	if (late_unwind && call_graph == HSBPF_CALL_GRAPH_DWARF && st->user.end == HSBPF_STACK_NO_MAPPING) {
		__u64 token = stack_mix(now, (__u64)task->pid << 32 | tgid) | 1;

		if (late_stack(st, &t->key, 0, t->ip, token))
			t->late_token = token;
	}
	t->key.user = offcpu_store_user(st);
}

/* the first frame of an interrupt's entry in a kernel stack, or nr for none */
static __always_inline __u32 offcpu_interrupt_frame(const struct stack_frames *k, __u32 nr)
{
	__u64 irq0 = (__u64)&__irqentry_text_start, irq1 = (__u64)&__irqentry_text_end;
	__u64 soft0 = (__u64)&__softirqentry_text_start, soft1 = (__u64)&__softirqentry_text_end;

	for (__u32 i = 0; i < HSBPF_MAX_FRAMES && i < nr; i++) {
		__u64 ip = k->ip[i];

		if ((ip >= irq0 && ip < irq1) || (ip >= soft0 && ip < soft1))
			return i;
	}
	return nr;
}

/* the waker's kernel stack from sched_waking (its path to the wake-up), stored: its hash, HSBPF_STACK_LOST_HASH when the map is full, 0 for none; with
 * irq, a stack that passes an interrupt's entry ends there (what the interrupt found running
 * is not its caller), and *irq says so */
static __always_inline __u64 offcpu_waker_kernel_stack(void *ctx, struct stack_walk *st, bool *irq)
{
	long got = bpf_get_stack(ctx, st->kernel.ip, sizeof(st->kernel.ip),
				 OFFCPU_SKIP_FRAMES & BPF_F_SKIP_FIELD_MASK);
	__u32 nr;

	if (got <= 0) {
		stack_stat_add(HSBPF_STACK_STAT_KERNEL_ERR, 1);
		return 0;
	}
	nr = got / sizeof(__u64);
	if (irq) {
		__u32 at = offcpu_interrupt_frame(&st->kernel, nr);

		*irq = at < nr;
		if (*irq)
			nr = at + 1;
	}
	return offcpu_store_kernel(&st->kernel, nr);
}

/* the task runs again (or the recording ends) at now: its block is counted */
static __always_inline void offcpu_account(struct offcpu_task *t, __u64 now)
{
	offcpu_add_span(t, now);
	t->start_ns = 0;
}

/* the switched-out task's kernel stack (from the tracepoint: the scheduler's callers) and user
 * stack into t->key */
static __always_inline void offcpu_stacks(void *ctx, struct task_struct *task, __u32 tgid,
					  struct proc_state *proc, struct offcpu_task *t, __u64 now)
{
	struct stack_walk *st;
	__u32 zero = 0;
	long got;

	st = bpf_map_lookup_elem(&unwind_scratch, &zero);
	if (!st)
		return;
	if (offcpu_kernel_stacks) {
		got = bpf_get_stack(ctx, st->kernel.ip, sizeof(st->kernel.ip),
				    OFFCPU_SKIP_FRAMES & BPF_F_SKIP_FIELD_MASK);
		if (got > 0 && offcpu_in_traceiter(st->kernel.ip[0]))
			got = bpf_get_stack(ctx, st->kernel.ip, sizeof(st->kernel.ip),
					    (OFFCPU_SKIP_FRAMES + 1) & BPF_F_SKIP_FIELD_MASK);
		offcpu_kernel_stack(&st->kernel, got, t);
	}
	if (offcpu_user_stacks)
		offcpu_user_stack(st, task, tgid, proc, t, now);
}

/* a block under way at the start ends (at end_ns): counted, with the user stack st holds (its
 * task is current, in the same entry to the kernel as when it blocked) or none (st NULL) */
static __always_inline void offcpu_underway_done(struct offcpu_task *t, struct stack_walk *st,
						 struct task_struct *task, __u64 end_ns)
{
	__u32 tgid = task->tgid;
	struct proc_state *proc = bpf_map_lookup_elem(&procs, &tgid);

	if (st && call_graph != HSBPF_CALL_GRAPH_NONE)
		offcpu_user_stack(st, task, tgid, proc, t, bpf_ktime_get_ns());
	t->underway = 0;
	__sync_fetch_and_add(&offcpu_underway_left, -1);
	offcpu_stat(HSBPF_OFFCPU_UNDERWAY, 1);
	offcpu_stat(HSBPF_OFFCPU_UNDERWAY_NS, offcpu_scaled(end_ns - t->start_ns));
	offcpu_account(t, end_ns);
}

/* next runs again: a block under way at the start ends. A kernel thread's, or one in a fault
 * (not a syscall), is counted now, without a user stack; one in a syscall waits for the task
 * to be current, in that syscall still: at its exit (hsbpf_offcpu_sys_exit) or its next
 * switch-out, whichever is first (a wait in a loop, as futex's or poll's) */
static __always_inline void offcpu_underway_end(struct offcpu_task *t, struct task_struct *next, __u64 now)
{
	struct pt_regs *regs;

	if (next->mm) {
		regs = (struct pt_regs *)bpf_task_pt_regs(next);
		if ((long)BPF_CORE_READ(regs, orig_ax) >= 0) {
			t->end_ns = now;
			return;
		}
	}
	offcpu_underway_done(t, NULL, next, now);
}

/* a block under way at the start (its task off the CPU since before the attach, in state): it
 * begins at the start, with the kernel stack the kernel gives for a task not running (as the
 * switch's, from the scheduler's callers), in f; its user stack waits until the task is current
 * again (offcpu_underway_end). The start's walk's, and the switch-in's during the start */
static __always_inline void offcpu_underway_begin(struct offcpu_task *t, struct task_struct *task,
						  struct proc_state *proc, __u32 state,
						  struct stack_frames *f)
{
	struct pt_regs *regs;

	t->late_token = 0;
	__builtin_memset(&t->key, 0, sizeof(t->key));
	t->key.pid = task->tgid;
	t->key.flags = HSBPF_KEY_OFFCPU | HSBPF_KEY_KERNEL | state << HSBPF_KEY_STATE_SHIFT;
	t->key.cgroup_id = BPF_CORE_READ(task, cgroups, dfl_cgrp, kn, id);
	t->key.exec_ns = proc ? proc->exec_ns : 0;
	t->key.map_ns = proc ? proc->map_ns : 0;
	if (key_tid)
		t->key.x.tid = task->pid;
	if (key_cpu)
		t->key.x.cpu = BPF_CORE_READ(task, thread_info.cpu);
	if (time_bucket_ns)
		t->key.x.time = (offcpu_start_ns - time_origin_ns) / time_bucket_ns;
	t->ip_flags = HSBPF_KEY_OFFCPU | state << HSBPF_KEY_STATE_SHIFT;
	t->ip = 0;
	if (call_graph != HSBPF_CALL_GRAPH_NONE && f)
		offcpu_kernel_stack(f, bpf_get_task_stack(task, f->ip, sizeof(f->ip), 0), t);
	if (task->mm) {
		regs = (struct pt_regs *)bpf_task_pt_regs(task);
		t->ip = BPF_CORE_READ(regs, ip);
	} else if (f && f->nr) {
		t->ip = f->ip[0];
		t->ip_flags |= HSBPF_KEY_KERNEL;
	}
	t->underway = 1;
	t->end_ns = 0;
	t->start_ns = offcpu_start_ns;
	__sync_fetch_and_add(&offcpu_underway_left, 1);
}

/* the start is in progress and next runs again with no record: off the CPU since before the
 * attach (unless it is newer), and the start's walk has not met it (it would miss it now: it
 * runs). Its block is under way from the start, as the walk would have found it. Its state:
 * R for a task in user space (preempted: it entered no syscall); in a syscall or a kernel
 * thread, D when its last block was uninterruptible (sched_contributes_to_load, which the
 * scheduler sets at every block: a D, not a D that does not count, TASK_NOLOAD), else S. A
 * task preempted inside a syscall, runnable, is taken for its last block's S or D. The
 * record, or NULL for a task not of the target */
static __always_inline struct offcpu_task *offcpu_underway_early(struct task_struct *next)
{
	__u32 tgid = next->tgid, state = HSBPF_OFFCPU_S, zero = 0;
	struct proc_state *proc;
	struct offcpu_task *t;
	struct stack_walk *st;
	struct pt_regs *regs;

	if (!next->pid || next->start_time >= offcpu_start_ns)
		return NULL;
	proc = bpf_map_lookup_elem(&procs, &tgid);
	if (!offcpu_in_target(next, proc) || !offcpu_on_cpus(BPF_CORE_READ(next, thread_info.cpu)))
		return NULL;
	if (offcpu_by_cgroup && !offcpu_task_in_cgroup(next))
		return NULL;
	t = bpf_task_storage_get(&offcpu_tasks, next, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	/* the walk met it first (on another CPU, this moment), or the draw leaves it out */
	if (!t || __sync_val_compare_and_swap(&t->seen, 0, 1) || !offcpu_drawn())
		return t;
	if (next->mm) {
		regs = (struct pt_regs *)bpf_task_pt_regs(next);
		if ((long)BPF_CORE_READ(regs, orig_ax) < 0)
			state = HSBPF_OFFCPU_R;
	}
	if (state == HSBPF_OFFCPU_S && BPF_CORE_READ_BITFIELD_PROBED(next, sched_contributes_to_load))
		state = HSBPF_OFFCPU_D;
	/* the switch's scratch: its own switch-out's stacks are taken after this */
	st = bpf_map_lookup_elem(&unwind_scratch, &zero);
	offcpu_underway_begin(t, next, proc, state, st ? &st->kernel : NULL);
	offcpu_stat(HSBPF_OFFCPU_UNDERWAY_EARLY, 1);
	return t;
}

/* prev leaves the CPU at now: when it is in the target, its stacks and the moment are kept */
static __always_inline void offcpu_switch_out(void *ctx, struct task_struct *prev, bool preempt,
					      unsigned int prev_state, __u64 now)
{
	__u32 tgid = prev->tgid, state = offcpu_state(preempt, prev_state);
	struct proc_state *proc;
	struct offcpu_task *t;
	struct pt_regs *regs;
	bool followed;
	__u64 ip = 0;

	/* idle, and a task's last switch as it exits, never run again */
	if (!prev->pid || (prev_state & OFFCPU_TASK_DEAD))
		return;
	proc = bpf_map_lookup_elem(&procs, &tgid);
	if (!offcpu_in_target(prev, proc))
		return;
	if (offcpu_by_cgroup && bpf_current_task_under_cgroup(&offcpu_cgroup, 0) != 1)
		return;
	followed = offcpu_on_cpus(bpf_get_smp_processor_id()) && offcpu_drawn();
	/* a block not followed (-C, --switch-sample) costs no more, but during the start: its task
	 * is marked met (it was not off the CPU since before the attach). A block under way at the
	 * start that it would have ended waits for its syscall's exit, or the next followed
	 * switch-out, with its end already kept */
	if (!followed && !offcpu_starting)
		return;
	t = bpf_task_storage_get(&offcpu_tasks, prev, 0, followed || offcpu_starting ?
				 BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
	if (!t) {
		if (followed)
			offcpu_stat(HSBPF_OFFCPU_NO_STORAGE, 1);
		return;
	}
	t->seen = 1;
	if (t->underway && t->end_ns) {	/* blocks again in the syscall it was blocked in */
		__u32 zero = 0;

		offcpu_underway_done(t, bpf_map_lookup_elem(&unwind_scratch, &zero), prev, t->end_ns);
	}
	if (!followed)
		return;
	/* its last block still open: the switch-in that ended it was missed (the task storage's
	 * lookup failed, its per-CPU lock busy with another program on that CPU) */
	if (t->start_ns && !t->underway)
		offcpu_stat(HSBPF_OFFCPU_NO_STORAGE, 1);
	offcpu_stat(HSBPF_OFFCPU_SWITCHES, 1);
	t->late_token = 0;
	t->underway = 0;
	t->end_ns = 0;
	t->waker_known = 0;
	__builtin_memset(&t->key, 0, sizeof(t->key));
	t->key.pid = tgid;
	t->key.flags = HSBPF_KEY_OFFCPU | HSBPF_KEY_KERNEL | state << HSBPF_KEY_STATE_SHIFT;
	t->key.cgroup_id = bpf_get_current_cgroup_id();	/* current is still prev */
	t->key.exec_ns = proc ? proc->exec_ns : 0;
	t->key.map_ns = proc ? proc->map_ns : 0;
	samples__extra(&t->key.x);
	/* the flat histogram's address: where a process left user space; a kernel thread's, the
	 * scheduler's caller */
	t->ip_flags = HSBPF_KEY_OFFCPU | state << HSBPF_KEY_STATE_SHIFT;
	if (prev->mm) {
		regs = (struct pt_regs *)bpf_task_pt_regs(prev);
		ip = BPF_CORE_READ(regs, ip);
	} else if (bpf_get_stack(ctx, &ip, sizeof(ip), OFFCPU_SKIP_FRAMES & BPF_F_SKIP_FIELD_MASK) > 0) {
		if (offcpu_in_traceiter(ip))
			bpf_get_stack(ctx, &ip, sizeof(ip), (OFFCPU_SKIP_FRAMES + 1) & BPF_F_SKIP_FIELD_MASK);
		t->ip_flags |= HSBPF_KEY_KERNEL;
	}
	t->ip = ip;
	if (call_graph != HSBPF_CALL_GRAPH_NONE)
		offcpu_stacks(ctx, prev, tgid, proc, t, now);
	t->start_ns = now;
}

/* every context switch: the task that runs again ends its block, the one that leaves starts
 * one */
SEC("tp_btf/sched_switch")
int BPF_PROG(hsbpf_offcpu_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	__u64 now = bpf_ktime_get_ns();
	struct offcpu_task *t = bpf_task_storage_get(&offcpu_tasks, next, 0, 0);

	if (!offcpu_start_ns)
		__sync_val_compare_and_swap(&offcpu_start_ns, 0, now);
	if (!t && offcpu_starting)
		t = offcpu_underway_early(next);
	if (t && t->start_ns) {
		if (!t->underway)
			offcpu_account(t, now);
		else if (!t->end_ns)
			offcpu_underway_end(t, next, now);
	}
	offcpu_switch_out(ctx, prev, preempt, prev_state, now);
	return 0;
}

/* the image tag of tgid, a process outside the target waking one of its blocks (-p or a
 * command: with -a and --cgroup every process's mappings are read at the start): the moment it
 * was first seen, announced to user space then; 0 when it could not be (the ring full: the
 * next wake-up tries again), as before, its mappings read at the end if it runs still */
static __always_inline __u64 offcpu_outside_waker(struct task_struct *cur, __u32 tgid)
{
	struct waker_news *n;
	__u64 now, *tag;

	if (!filter_pids)
		return 0;
	tag = bpf_map_lookup_elem(&waker_procs, &tgid);
	if (tag)
		return *tag;
	now = bpf_ktime_get_ns();
	if (bpf_map_update_elem(&waker_procs, &tgid, &now, BPF_NOEXIST)) {
		tag = bpf_map_lookup_elem(&waker_procs, &tgid);	/* another CPU's, this moment */
		return tag ? *tag : 0;
	}
	n = bpf_ringbuf_reserve(&waker_news, sizeof(*n), 0);
	if (!n) {
		bpf_map_delete_elem(&waker_procs, &tgid);
		offcpu_stat(HSBPF_OFFCPU_WAKER_UNANNOUNCED, 1);
		return 0;
	}
	n->pid = tgid;
	n->pad = 0;
	n->tag = now;
	BPF_CORE_READ_STR_INTO(&n->comm, cur, group_leader, comm);
	bpf_ringbuf_submit(n, 0);
	return now;
}

/* a new image (exec) or a new process (fork, a pid maybe reused) of tgid: no outside waker's
 * tag of before is its */
static __always_inline void offcpu_outside_waker_forget(__u32 tgid)
{
	if (offcpu_wakers && filter_pids)
		bpf_map_delete_elem(&waker_procs, &tgid);
}

/* --wakers: p is woken by current (the waker, in its syscall; or whatever an interrupt found
 * running); when p is a blocked task of the target, current's stacks are kept for its block */
SEC("tp_btf/sched_waking")
int BPF_PROG(hsbpf_offcpu_waking, struct task_struct *p)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	struct offcpu_task *t = bpf_task_storage_get(&offcpu_tasks, p, 0, 0);
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid, zero = 0;
	struct proc_state *proc;
	struct stack_walk *st;
	struct pt_regs *regs;
	bool irq = false;

	if (!t || !t->start_ns || cur == p)
		return 0;
	offcpu_stat(HSBPF_OFFCPU_WAKEUPS, 1);
	__builtin_memset(&t->waker, 0, sizeof(t->waker));
	t->waker_known = 1;
	st = bpf_map_lookup_elem(&unwind_scratch, &zero);
	if (!st)
		return 0;
	/* an interrupt's (a timer's expiry, a device's completion): whatever task it found
	 * running did not wake the block; the interrupt's kernel stack says who did */
	t->waker.kernel = offcpu_waker_kernel_stack(ctx, st, &irq);
	if (irq)
		pid_tgid = 0;
	tgid = pid_tgid >> 32;
	proc = tgid ? bpf_map_lookup_elem(&procs, &tgid) : NULL;
	t->waker_tid = (__u32)pid_tgid;
	t->waker.pid = tgid;
	t->waker.exec_ns = proc ? proc->exec_ns : 0;
	t->waker.map_ns = proc ? proc->map_ns : 0;
	/* an interrupt, idle, or a kernel thread: no user stack */
	if (!(pid_tgid >> 32) || !BPF_CORE_READ(cur, mm))
		return 0;
	regs = (struct pt_regs *)bpf_task_pt_regs(cur);
	if (offcpu_walk_user(cur, tgid, proc, st, BPF_CORE_READ(regs, ip), true)) {
		t->waker.user = offcpu_store_user(st);
		if (!proc)
			t->waker.exec_ns = offcpu_outside_waker(cur, tgid);
	} else {
		/* not in a syscall: an interrupt (a timer's expiry) found current in user space,
		 * and woke the task on its own; its kernel stack says which */
		t->waker_tid = 0;
		t->waker.pid = 0;
		t->waker.exec_ns = 0;
		t->waker.map_ns = 0;
	}
	return 0;
}

/* a syscall returns: if it was blocked when the recording started, its task is current at
 * last, its user stack as it was then. Interrupts are on here: the walk has a slot of
 * unwind_scratch of its own, which a sample does not touch. (No program can run where every
 * task resumes, finish_task_switch: fentry is not allowed everywhere, kprobes not built in
 * every kernel; and a syscall's exit is where a blocked task next has its memory current) */
SEC("tp_btf/sys_exit")
int BPF_PROG(hsbpf_offcpu_sys_exit, struct pt_regs *regs, long ret)
{
	struct task_struct *task;
	struct offcpu_task *t;
	__u32 slot = UNWIND_SLOT_RESUME;
	struct stack_walk *st;

	if (!offcpu_underway_left)
		return 0;
	task = bpf_get_current_task_btf();
	t = bpf_task_storage_get(&offcpu_tasks, task, 0, 0);
	if (!t || !t->underway || !t->end_ns)
		return 0;
	st = bpf_map_lookup_elem(&unwind_scratch, &slot);
	if (st)
		st->slot = slot;
	offcpu_underway_done(t, st, task, t->end_ns);
	return 0;
}

/* at the start (the switch program attached): each task of the target blocked then has its
 * block begin at the start, with its kernel stack (as the switch's, from __schedule) and state;
 * its user stack waits until the task is current again (offcpu_underway_end) */
SEC("iter/task")
int hsbpf_offcpu_start(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct proc_state *proc;
	struct stack_frames *f;
	struct offcpu_task *t;
	__u32 tgid, zero = 0;
	unsigned int raw;

	if (!task || !task->pid)
		return 0;
	raw = task->__state;
	/* on a CPU, or on its way off one: its switch-out is followed. Runnable (R) counts: on a
	 * loaded machine a wait for a CPU lasts milliseconds */
	if ((raw & OFFCPU_TASK_DEAD) || task->on_cpu)
		return 0;
	tgid = task->tgid;
	proc = bpf_map_lookup_elem(&procs, &tgid);
	if (!offcpu_in_target(task, proc))
		return 0;
	if (!offcpu_on_cpus(BPF_CORE_READ(task, thread_info.cpu)))	/* the CPU it left */
		return 0;
	if (offcpu_by_cgroup && !offcpu_task_in_cgroup(task))
		return 0;
	t = bpf_task_storage_get(&offcpu_tasks, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!t) {
		offcpu_stat(HSBPF_OFFCPU_NO_STORAGE, 1);
		return 0;
	}
	/* switched out since the start (followed or not), or switched in during it */
	if (__sync_val_compare_and_swap(&t->seen, 0, 1) || !offcpu_drawn())
		return 0;
	f = bpf_map_lookup_elem(&offcpu_kstack, &zero);
	offcpu_underway_begin(t, task, proc, offcpu_state(false, raw), f);
	return 0;
}

/* top --off-cpu, before each read: the blocks still open count up to now, and go on from now,
 * so that a long sleep shows in every interval it spans, not in the one it ends in. (Not
 * atomic with the switch program, still attached: a block ending on another CPU at this
 * moment may count the same microseconds twice) */
SEC("iter/task")
int hsbpf_offcpu_split(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct offcpu_task *t;
	__u64 now = bpf_ktime_get_ns();

	if (!task)
		return 0;
	t = bpf_task_storage_get(&offcpu_tasks, task, 0, 0);
	if (!t || !t->start_ns || t->underway || now <= t->start_ns)
		return 0;
	offcpu_add_span(t, now);
	t->start_ns = now;
	return 0;
}

/* at the end (the switch program detached): the tasks still off the CPU count up to then; one
 * blocked since the start never ran: its stack was never current's, it is not counted */
SEC("iter/task")
int hsbpf_offcpu_flush(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct offcpu_task *t;

	if (!task)
		return 0;
	t = bpf_task_storage_get(&offcpu_tasks, task, 0, 0);
	if (!t || !t->start_ns || offcpu_end_ns <= t->start_ns)
		return 0;
	if (t->underway && !t->end_ns) {
		offcpu_stat(HSBPF_OFFCPU_ASLEEP, 1);
		t->start_ns = 0;
		return 0;
	}
	if (t->underway) {	/* ran again, and still running: no user stack */
		offcpu_underway_done(t, NULL, task, t->end_ns);
		return 0;
	}
	offcpu_stat(HSBPF_OFFCPU_OPEN, 1);
	offcpu_account(t, offcpu_end_ns);
	return 0;
}

#endif /* HSBPF_OFFCPU_BPF_H */
