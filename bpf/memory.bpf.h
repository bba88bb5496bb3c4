/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Sampled allocations (record --memory; docs/memory.md): uprobes on glibc's malloc, calloc,
 * realloc, aligned_alloc, posix_memalign and free. Each thread keeps in its task storage the
 * bytes left to its next sample, drawn from an exponential distribution of mean alloc_period
 * (bpf/memory_math.h); an allocation subtracts its size, and only one that reaches zero is
 * sampled: its user stack unwound at the call (as a sample's is), and at its return its bytes
 * and objects (what it stands for) added to its stack's slot in the maps the on-CPU samples
 * use, keyed HSBPF_KEY_MEMORY | HSBPF_MEM_ALLOC, and its address remembered in mem_live until
 * freed. At the end an iterator adds what is still live as HSBPF_MEM_INUSE. Included by
 * profile.bpf.c; its programs load only when asked.
 *
 * Two ways to see a call's return (docs/memory.md, "What the uprobes cost"): session uprobes
 * (hsbpf_mem_*_session, Linux 6.13: one program at the entry and the return, and an entry that
 * returns 1 has no return probe, so an unsampled malloc costs one trap), or where the kernel
 * has none, a uprobe at the entry and a uretprobe on every call (hsbpf_mem_return). */
#ifndef HSBPF_MEMORY_BPF_H
#define HSBPF_MEMORY_BPF_H

#include "hsbpf.h"
#include "memory_math.h"
#include "samples.bpf.h"
#include "stacks.bpf.h"

/* set by user space before load (user/record/memory.c fills the tables) */
const volatile __u64 alloc_period = 512 * 1024;
const volatile __u32 mem_log2_q16[HSBPF_MEM_LOG_N] = {};
const volatile __u32 mem_g_q16[HSBPF_MEM_G_N] = {};
/* record --memory --snapshot-every: the interval now (1, 2...; 0 without snapshots), in the
 * key of every allocation counted and of every live one a flush counts; turned by user space
 * after each snapshot's flush */
volatile __u32 mem_snap;
/* --cgroup: only the tasks of mem_cgroup[0] (its descendants too) are counted */
const volatile bool mem_by_cgroup = false;
/* a flush of a snapshot, not the end's: the end's counters (INUSE_END...) left alone */
volatile __u32 mem_flush_snapshot;

/* a thread's sampling state */
struct mem_task {
	__s64 left;		/* bytes to the next sample */
	__u64 busy_sp;		/* the sp at the entry of the call whose return is awaited: calls
				 * deeper are glibc's own (realloc's malloc), not counted again */
	__u64 size;		/* the sampled call's, until it returns */
	__u64 out;		/* posix_memalign's pointer to the result */
	__u32 init;
	__u32 pending;		/* the call in progress is sampled */
	__u64 ip;		/* its caller */
	struct stack_key key;
};

/* session uprobes: at the return (weak: a kernel without them loads the classic programs) */
extern bool bpf_session_is_return(void) __ksym __weak;

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct mem_task);
} mem_tasks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, HSBPF_MEM_LIVE);
	__type(key, struct mem_addr);
	__type(value, struct mem_live);
} mem_live SEC(".maps");

/* --cgroup: the cgroup whose tasks are the target; a task that joins it while recording is
 * counted from then on, the probes being on every process's libc */
struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} mem_cgroup SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, HSBPF_MEM_STAT_NR);
	__type(key, __u32);
	__type(value, __u64);
} mem_stats SEC(".maps");

static __always_inline void mem_stat(__u32 slot, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&mem_stats, &slot);

	if (v)
		*v += n;
}

/* objects and bytes into map's slot for key (each call site names one map) */
static __always_inline bool mem_add(void *map, const void *key, __u64 objects, __u64 bytes)
{
	struct sample_value one = { objects, bytes }, *val;

	val = bpf_map_lookup_elem(map, key);
	if (!val) {
		if (!bpf_map_update_elem(map, key, &one, BPF_NOEXIST))
			return true;
		val = bpf_map_lookup_elem(map, key);
		if (!val)
			return false;
	}
	__sync_fetch_and_add(&val->count, objects);
	__sync_fetch_and_add(&val->weight, bytes);
	return true;
}

/* one sampled allocation (or live one) of the given kind: flat (top: into the map of the
 * interval counting, as samples are) and by stack */
static __always_inline bool mem_count(const struct stack_key *sk, __u64 ip, __u32 kind, __u64 objects,
				      __u64 bytes)
{
	__u32 zero = 0, *gen = bpf_map_lookup_elem(&live, &zero);
	struct sample_key flat = {};
	struct stack_key key = *sk;
	bool ok;

	key.flags = HSBPF_KEY_MEMORY | kind << HSBPF_KEY_STATE_SHIFT;
	key.x.snap = mem_snap;
	flat.pid = key.pid;
	flat.flags = key.flags;
	flat.ip = ip;
	flat.cgroup_id = key.cgroup_id;
	flat.exec_ns = key.exec_ns;
	flat.map_ns = key.map_ns;
	flat.x = key.x;
	if (gen && (*gen & 1))
		ok = mem_add(&samples_odd, &flat, objects, bytes);
	else
		ok = mem_add(&samples, &flat, objects, bytes);
	if (!ok)
		return false;
	return call_graph == HSBPF_CALL_GRAPH_NONE || mem_add(&stack_samples, &key, objects, bytes);
}

/* the user stack at the call into t->key */
static __always_inline void mem_stack(struct pt_regs *ctx, __u32 tgid, struct proc_state *proc,
				      struct mem_task *t)
{
	struct stack_walk *st;
	__u32 zero = 0;

	st = bpf_map_lookup_elem(&unwind_scratch, &zero);
	if (!st)
		return;
	LEAF_REGS(st, ctx, DIRECT);
	st->pid = tgid;
	st->tag = image_tag(proc);
	unwind_user(st, ctx->ip, ctx->sp, ctx->bp, false);
	t->key.user = st->hash | 1;
	if (!stacks__store_user(st, &t->key.user, false)) {
		stack_stat_add(HSBPF_STACK_STAT_STACKS_FULL, 1);
		t->key.user = HSBPF_STACK_LOST_HASH;
	}
}

/* a call asking for size bytes (out: posix_memalign's result pointer, else 0); nests: the
 * function may call malloc itself (realloc, the memalign family), whose call is then not
 * counted again, so its return is awaited whether sampled or not. True when the return is
 * to be seen: a sampled call, or one that nests */
static __always_inline bool mem_enter(struct pt_regs *ctx, __u64 size, __u64 out, bool nests)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct proc_state *proc = bpf_map_lookup_elem(&procs, &tgid);
	struct mem_task *t;

	if (filter_pids && (!proc || proc->state != HSBPF_PID_ACTIVE))
		return false;
	if (mem_by_cgroup && bpf_current_task_under_cgroup(&mem_cgroup, 0) != 1)
		return false;
	t = bpf_task_storage_get(&mem_tasks, bpf_get_current_task_btf(), 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!t) {
		mem_stat(HSBPF_MEM_NO_STORAGE, 1);
		return false;
	}
	/* within another counted call: deeper, or jumped to (realloc of NULL ends in a jmp to
	 * malloc, at the same sp) */
	if (t->busy_sp && ctx->sp <= t->busy_sp)
		return false;
	t->busy_sp = nests ? ctx->sp : 0;
	t->pending = 0;
	mem_stat(HSBPF_MEM_CALLS, 1);
	mem_stat(HSBPF_MEM_BYTES, size);
	if (!t->init) {
		t->left = mem_draw(bpf_get_prandom_u32(), alloc_period, mem_log2_q16);
		t->init = 1;
	}
	t->left -= size;
	if (t->left > 0)
		return nests;
	/* sampled: the next sample is a fresh draw from the end of this allocation */
	t->busy_sp = ctx->sp;
	t->left = mem_draw(bpf_get_prandom_u32(), alloc_period, mem_log2_q16);
	t->pending = 1;
	t->size = size;
	t->out = out;
	t->ip = 0;
	bpf_probe_read_user(&t->ip, sizeof(t->ip), (void *)ctx->sp);	/* the return address */
	__builtin_memset(&t->key, 0, sizeof(t->key));
	t->key.pid = tgid;
	t->key.cgroup_id = bpf_get_current_cgroup_id();
	t->key.exec_ns = proc ? proc->exec_ns : 0;
	t->key.map_ns = proc ? proc->map_ns : 0;
	samples__extra(&t->key.x);
	if (call_graph != HSBPF_CALL_GRAPH_NONE)
		mem_stack(ctx, tgid, proc, t);
	return true;
}

/* the counted call returns (a deeper one's return is ignored) */
static __always_inline int mem_exit(struct pt_regs *ctx)
{
	struct mem_task *t = bpf_task_storage_get(&mem_tasks, bpf_get_current_task_btf(), 0, 0);
	struct mem_addr a = {};
	struct mem_live v = {};
	__u64 addr = PT_REGS_RC(ctx);

	/* the return's sp is the entry's plus the return address */
	if (!t || !t->busy_sp || ctx->sp <= t->busy_sp)
		return 0;
	t->busy_sp = 0;
	if (!t->pending)
		return 0;
	t->pending = 0;
	if (t->out) {
		addr = 0;
		if (PT_REGS_RC(ctx) == 0)
			bpf_probe_read_user(&addr, sizeof(addr), (void *)t->out);
	}
	if (!addr) {
		mem_stat(HSBPF_MEM_FAILED, 1);
		return 0;
	}
	v.key = t->key;
	v.key.flags = HSBPF_KEY_MEMORY | HSBPF_MEM_ALLOC << HSBPF_KEY_STATE_SHIFT;
	v.ip = t->ip;
	v.size = t->size;
	v.weight = mem_weight(t->size, alloc_period, mem_g_q16);
	v.objects = mem_objects(t->size, v.weight);
	mem_stat(HSBPF_MEM_SAMPLED, 1);
	if (!mem_count(&v.key, v.ip, HSBPF_MEM_ALLOC, v.objects, v.weight))
		mem_stat(HSBPF_MEM_FULL, 1);
	a.pid = t->key.pid;
	a.addr = addr;
	if (bpf_map_update_elem(&mem_live, &a, &v, BPF_ANY))
		mem_stat(HSBPF_MEM_LIVE_FULL, 1);
	return 0;
}

/* ptr freed: forgotten if it was sampled (one hash lookup for the others) */
static __always_inline void mem_forget(__u64 ptr)
{
	struct mem_addr a = {};

	if (!ptr)
		return;
	a.pid = bpf_get_current_pid_tgid() >> 32;
	a.addr = ptr;
	if (!bpf_map_delete_elem(&mem_live, &a))
		mem_stat(HSBPF_MEM_FREED, 1);
}

/* A classic uprobe's entry returns 0 (its uretprobe, hsbpf_mem_return, sees every call); a
 * session's entry returns 1 for no return probe, and its return is the same program's. */
#define MEM_PROBE(name, nests, args, before, size, out)					\
SEC("uprobe")										\
int BPF_KPROBE(hsbpf_mem_##name, args)							\
{											\
	before;										\
	mem_enter(ctx, size, out, nests);						\
	return 0;									\
}											\
											\
SEC("uprobe")										\
int BPF_KPROBE(hsbpf_mem_##name##_session, args)					\
{											\
	if (bpf_session_is_return())							\
		return mem_exit(ctx);							\
	before;										\
	return !mem_enter(ctx, size, out, nests);					\
}

#define MEM_ARGS2(a, b)		a, b
#define MEM_ARGS3(a, b, c)	a, b, c

MEM_PROBE(malloc, false, __u64 size, , size, 0)
MEM_PROBE(calloc, false, MEM_ARGS2(__u64 n, __u64 size), , n * size, 0)
/* realloc frees its pointer (when it moves it, or shrinks in place: the new size counts) */
MEM_PROBE(realloc, true, MEM_ARGS2(__u64 ptr, __u64 size), mem_forget(ptr), size, 0)
/* aligned_alloc and memalign */
MEM_PROBE(aligned_alloc, true, MEM_ARGS2(__u64 align, __u64 size), , size, 0)
MEM_PROBE(posix_memalign, true, MEM_ARGS3(__u64 out, __u64 align, __u64 size), , size, out ? out : 1)

SEC("uretprobe")
int hsbpf_mem_return(struct pt_regs *ctx)
{
	return mem_exit(ctx);
}

SEC("uprobe")
int BPF_KPROBE(hsbpf_mem_free, __u64 ptr)
{
	mem_forget(ptr);
	return 0;
}

/* at the end (or at a snapshot, mem_flush_snapshot): the sampled allocations still live, in
 * use (of an exited process: leaked), under the interval's tag */
SEC("iter/bpf_map_elem")
int hsbpf_mem_flush(struct bpf_iter__bpf_map_elem *ctx)
{
	struct mem_addr *a = ctx->key;
	struct mem_live *v = ctx->value;
	__u32 pid;

	if (!a || !v)
		return 0;
	pid = a->pid;
	if (!mem_flush_snapshot) {
		mem_stat(HSBPF_MEM_INUSE_END, 1);
		if (filter_pids && !bpf_map_lookup_elem(&procs, &pid))
			mem_stat(HSBPF_MEM_INUSE_EXITED, 1);
	}
	if (!mem_count(&v->key, v->ip, HSBPF_MEM_INUSE, v->objects, v->weight))
		mem_stat(HSBPF_MEM_FULL, 1);
	return 0;
}

#endif /* HSBPF_MEMORY_BPF_H */
