/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What profile.bpf.c and lbr.bpf.c share: the IP histogram and the process table (one
 * definition, so that user space can hand one program's maps to the other), and the one way
 * a sample is counted into the histogram.
 *
 * The histogram is two maps: samples counts while live[0] is even, samples_odd while it is
 * odd. A recording never turns it; top does once per interval, then reads and empties the
 * map that was counting, so each interval costs what that interval sampled, not every key
 * ever seen, and its counts are already deltas. */
#ifndef HSBPF_SAMPLES_BPF_H
#define HSBPF_SAMPLES_BPF_H

#include "hsbpf.h"

/* the finer keys (struct sample_extra), set by user space before load: each one asked for
 * multiplies the slots a recording takes by the threads, CPUs or buckets a location sees */
const volatile bool key_tid = false;
const volatile bool key_cpu = false;
const volatile __u64 time_bucket_ns = 0;	/* 0: no time buckets */
const volatile __u64 time_origin_ns = 0;	/* CLOCK_MONOTONIC of bucket 0's start */

static __always_inline void samples__extra(struct sample_extra *x)
{
	if (key_tid)
		x->tid = (__u32)bpf_get_current_pid_tgid();
	if (key_cpu)
		x->cpu = bpf_get_smp_processor_id();
	if (time_bucket_ns)
		x->time = (bpf_ktime_get_ns() - time_origin_ns) / time_bucket_ns;
}

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, HSBPF_DEFAULT_ENTRIES);	/* resized by user space before load */
	__type(key, struct sample_key);
	__type(value, struct sample_value);
} samples SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, HSBPF_DEFAULT_ENTRIES);	/* 1 unless live: resized before load */
	__type(key, struct sample_key);
	__type(value, struct sample_value);
} samples_odd SEC(".maps");

/* [0]: the generation, turned by user space */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} live SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct proc_state);
} procs SEC(".maps");

/* add one sample to map: each call site names one map, so that the verifier can inline the
 * hash lookups (a map pointer chosen at run time would turn them into calls) */
static __always_inline bool samples__add(void *map, struct sample_key *key, __u64 weight)
{
	struct sample_value one = { 1, weight }, *val;

	val = bpf_map_lookup_elem(map, key);
	if (!val) {
		if (!bpf_map_update_elem(map, key, &one, BPF_NOEXIST))
			return true;
		/* another CPU inserted the key first, or the map is full */
		val = bpf_map_lookup_elem(map, key);
		if (!val)
			return false;
	}
	__sync_fetch_and_add(&val->count, 1);
	__sync_fetch_and_add(&val->weight, weight);
	return true;
}

/* count one sample of weight at ip in process tgid (proc: its procs[] entry, or NULL);
 * false when the map is full and the sample was dropped */
static __always_inline bool samples__count(__u32 tgid, __u64 ip, struct proc_state *proc,
					   __u64 weight)
{
	struct sample_key key = {};
	__u32 zero = 0, *gen = bpf_map_lookup_elem(&live, &zero);

	key.pid = tgid;
	key.ip = ip;
	/* x86-64: the kernel owns the upper canonical half */
	if ((__s64)ip < 0)
		key.flags |= HSBPF_KEY_KERNEL;
	key.cgroup_id = bpf_get_current_cgroup_id();
	if (proc) {
		key.exec_ns = proc->exec_ns;
		key.map_ns = proc->map_ns;
	}
	samples__extra(&key.x);
	if (gen && (*gen & 1))
		return samples__add(&samples_odd, &key, weight);
	return samples__add(&samples, &key, weight);
}

#endif /* HSBPF_SAMPLES_BPF_H */
