// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Counting per cgroup in the kernel: one set of counters per CPU, read at each context switch
 * that changes cgroup; what they gained since the last read goes to the cgroup the tasks that
 * ran meanwhile were in. perf's BPF cgroup counting (bperf_cgroup) does the same from a
 * cgroup-switches event. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "hsbpf.h"

/* Tunables, set by user space before load */
const volatile __u32 nr_events = 0;	/* counters per CPU */
const volatile __u32 cpu_stride = 1;	/* counters[] holds event i of CPU c at i * cpu_stride + c */
const volatile bool hierarchy = false;	/* --cgroup: every watched ancestor, itself included */
const volatile __u32 switch_events = 0;	/* bit i: counter i counts context switches */
/* cleared by user space before the counters stop: a switch read after they stop is not counted
 * by the kernel, so it must not be counted here either (it would add one to the cgroups'
 * sum); before they start, their enabled time does not grow (below) */
bool counting = false;

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
	__uint(max_entries, 1);		/* nr_events * cpu_stride, set before load */
} counters SEC(".maps");

/* this CPU's readings at its last read */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, HSBPF_COUNT_MAX_EVENTS);
	__type(key, __u32);
	__type(value, struct count_value);
} last SEC(".maps");

/* Whose counts a CPU's counters hold since its last read: the cgroup of the task switched in
 * then (the tasks switched in since, skipped, were in it too), and where they go. Kept apart
 * from the running task, whose cgroup may change under it. User space never reads it. */
struct owner {
	__u64 key;		/* cgroup id, or HSBPF_COUNT_IDLE */
	__u32 valid;
	__u32 nr_targets;
	__u64 targets[HSBPF_COUNT_MAX_LEVELS];
};

/* [0]: the CPU's owner; [1]: scratch, to compare another task's targets with it */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct owner);
} owners SEC(".maps");

/* --cgroup: the cgroups counted, with their descendants */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);		/* set before load */
	__type(key, __u64);
	__type(value, __u32);
} watched SEC(".maps");

/* what each (cgroup, counter) gained; per CPU, so that adding needs no atomics */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 1);		/* set before load */
	__type(key, struct cgroup_count_key);
	__type(value, struct count_value);
} counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, HSBPF_COUNT_STAT_NR);
	__type(key, __u32);
	__type(value, __u64);
} count_stats SEC(".maps");

/* kernels before 6.2 kept the ancestors' ids rather than the ancestors */
struct cgroup___ids {
	__u64 ancestor_ids[0];
} __attribute__((preserve_access_index));

static __always_inline void stat_inc(__u32 slot)
{
	__u64 *v = bpf_map_lookup_elem(&count_stats, &slot);

	if (v)
		*v += 1;	/* per-CPU slot: no atomic needed */
}

/* where a task's counts go: its cgroup, or with --per-cgroup the idle row (pid 0 is each CPU's
 * idle task, in the root cgroup, whose time would otherwise swamp the root's own tasks) */
static __always_inline __u64 task_key(struct task_struct *t)
{
	if (!hierarchy && !BPF_CORE_READ(t, pid))
		return HSBPF_COUNT_IDLE;
	return BPF_CORE_READ(t, cgroups, dfl_cgrp, kn, id);
}

static __always_inline __u64 ancestor_id(struct cgroup *cg, int level)
{
	if (bpf_core_field_exists(cg->ancestors))
		return BPF_CORE_READ(cg, ancestors[level], kn, id);
	return BPF_CORE_READ((struct cgroup___ids *)cg, ancestor_ids[level]);
}

/* the counts from now on are t's */
static __always_inline void owner_set(struct owner *o, struct task_struct *t)
{
	struct cgroup *cg;
	int level, n = 0;

	o->valid = 1;
	o->key = task_key(t);
	if (!hierarchy) {
		o->targets[0] = o->key;
		o->nr_targets = 1;
		return;
	}
	cg = BPF_CORE_READ(t, cgroups, dfl_cgrp);
	level = BPF_CORE_READ(cg, level);
	for (int l = 0; l < HSBPF_COUNT_MAX_LEVELS; l++) {
		__u64 id;

		if (l > level)
			break;
		id = ancestor_id(cg, l);
		if (bpf_map_lookup_elem(&watched, &id) && n < HSBPF_COUNT_MAX_LEVELS)
			o->targets[n++] = id;
	}
	o->nr_targets = n;
}

static __always_inline void add(__u64 cgroup_id, __u32 event, const struct count_value *d)
{
	struct cgroup_count_key key = { .cgroup_id = cgroup_id, .event = event };
	struct count_value *v = bpf_map_lookup_elem(&counts, &key);

	if (v) {
		v->counter += d->counter;
		v->enabled += d->enabled;
		v->running += d->running;
		return;
	}
	if (bpf_map_update_elem(&counts, &key, d, BPF_NOEXIST))
		stat_inc(HSBPF_COUNT_MAP_FULL);
}

/* Read this CPU's counters and give what they gained since the last read to the owner, or
 * when it is not certain to be theirs to the unattributed row. At a switch the kernel is about
 * to count it, after this tracepoint: counted here instead, so that a switch belongs to the
 * task switched out, as with perf's cgroup events. */
static __always_inline void account(struct owner *o, bool at_switch, bool certain)
{
	__u32 cpu = bpf_get_smp_processor_id();
	__u32 nr_targets = certain ? o->nr_targets : 1;

	for (__u32 i = 0; i < HSBPF_COUNT_MAX_EVENTS && i < nr_events; i++) {
		struct bpf_perf_event_value now;
		struct count_value d, *prev;
		__u32 key = i;

		prev = bpf_map_lookup_elem(&last, &key);
		if (!prev)
			continue;
		if (bpf_perf_event_read_value(&counters, i * cpu_stride + cpu, &now, sizeof(now))) {
			stat_inc(HSBPF_COUNT_READ_ERRORS);
			continue;
		}
		/* the kernel counts this switch only if the counter counts: it is set going
		 * after attach (at a command's exec, even later), and its enabled time then
		 * grows between reads */
		if (at_switch && counting && now.enabled != prev->enabled &&
		    (switch_events & (1u << i)))
			now.counter++;
		d.counter = now.counter - prev->counter;
		d.enabled = now.enabled - prev->enabled;
		d.running = now.running - prev->running;
		prev->counter = now.counter;
		prev->enabled = now.enabled;
		prev->running = now.running;
		if (!d.counter && !d.enabled)
			continue;
		for (__u32 t = 0; t < HSBPF_COUNT_MAX_LEVELS && t < nr_targets; t++)
			add(certain ? o->targets[t] : HSBPF_COUNT_UNATTRIBUTED, i, &d);
	}
}

static __always_inline struct owner *owner_slot(__u32 slot)
{
	return bpf_map_lookup_elem(&owners, &slot);
}

/* whether the counts since the last read are all the owner's though the running task is not
 * its: with --cgroup, when the task counts toward the same watched cgroups */
static __always_inline bool same_targets(const struct owner *o, struct task_struct *t)
{
	struct owner *x = owner_slot(1);

	if (!hierarchy || !x)
		return false;
	owner_set(x, t);
	if (x->nr_targets != o->nr_targets)
		return false;
	for (__u32 i = 0; i < HSBPF_COUNT_MAX_LEVELS && i < x->nr_targets; i++)
		if (x->targets[i] != o->targets[i])
			return false;
	return true;
}

/* a read while t runs: certain when t is the owner's (its cgroup the one it was switched in
 * with); else the kernel skipped a switch of this CPU, or t was moved while it ran, and the
 * counts since the last read are the owner's and t's in a proportion no one knows */
static __always_inline void account_running(struct owner *o, struct task_struct *t,
					    bool at_switch)
{
	bool certain = task_key(t) == o->key || same_targets(o, t);

	if (!certain)
		stat_inc(HSBPF_COUNT_UNSURE);
	account(o, at_switch, certain);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(hsbpf_count_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct owner *o = owner_slot(0);

	stat_inc(HSBPF_COUNT_SWITCHES);
	if (!o)
		return 0;
	if (!o->valid)		/* the first switch on this CPU: the counts so far are prev's */
		owner_set(o, prev);
	/* from a task of the owner's cgroup to another: the counts go to the same place at the
	 * next read, which is saved (and the switch the kernel counts lands there too) */
	if (task_key(prev) == o->key && task_key(next) == o->key)
		return 0;
	stat_inc(HSBPF_COUNT_READS);
	account_running(o, prev, true);
	owner_set(o, next);
	return 0;
}

/* A task that moves itself to another cgroup (a shell's echo $$ > cgroup.procs, then exec: how
 * containers start) is counted in the new one from then on. Runs with interrupts off (the
 * tracepoint is under a spinlock). */
SEC("tp_btf/cgroup_attach_task")
int BPF_PROG(hsbpf_count_attach, struct cgroup *dst, const char *path, struct task_struct *task,
	     bool threadgroup)
{
	struct owner *o = owner_slot(0);

	if (!o || !o->valid || task != bpf_get_current_task_btf() || task_key(task) == o->key)
		return 0;
	stat_inc(HSBPF_COUNT_READS);
	account(o, false, true);
	owner_set(o, task);
	return 0;
}

/* run by user space on each CPU (BPF_PROG_TEST_RUN with a CPU: an IPI to that CPU) before it
 * reads the map, so that the counts of the task running there now are in it too; the first
 * one, before the counters are enabled, names each CPU's owner */
SEC("raw_tp")
int hsbpf_count_flush(void *ctx)
{
	struct task_struct *cur = (struct task_struct *)bpf_get_current_task();
	struct owner *o = owner_slot(0);

	stat_inc(HSBPF_COUNT_FLUSHES);
	if (!o)
		return 0;
	if (o->valid)
		account_running(o, cur, false);
	/* from here on, the running task's cgroup as it is now */
	owner_set(o, cur);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
