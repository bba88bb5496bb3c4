// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* IP sampling: one handler per perf event overflow counts (process image, IP, cgroup) in a
 * hash map; tracepoints follow the target's forks and execs. Nothing is copied per sample. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "hsbpf.h"
#include "samples.bpf.h"
#include "stacks.bpf.h"

/* Tunables, set by user space before load */
const volatile bool filter_pids = false;	/* count only tgids ACTIVE in procs[] */
const volatile bool no_inherit = false;	/* record --no-inherit: with filter_pids, the targets'
					 * main threads only, and no child process followed */
const volatile bool random_periods = false;	/* weigh by measured interval, ask for re-arm */
const volatile bool exec_at_rename = false;	/* images begin at the exec's task_rename */

/* off-CPU time: its programs see the tunables above */
#include "offcpu.bpf.h"
/* sampled allocations, as well */
#include "memory.bpf.h"

#define HSBPF_E2BIG	7	/* a full map (vmlinux.h has no errno values) */

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, HSBPF_STAT_NR);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cpu_state);
} cpu_states SEC(".maps");

/* random periods: one ring per CPU, so that a token wakes the re-arm thread pinned to the
 * sample's CPU (a local wake-up and a local PERF_EVENT_IOC_PERIOD, no IPI); user space puts a
 * ring in each sampled CPU's slot */
struct rearm_ring {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, HSBPF_REARM_RING_BYTES);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, HSBPF_MAX_CPUS);
	__type(key, __u32);
	__array(values, struct rearm_ring);
} rearm SEC(".maps");

static __always_inline void stat_inc(__u32 slot)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &slot);

	if (v)
		*v += 1;	/* per-CPU slot: no atomic needed */
}

/* The event count since this CPU's last sample is the exact interval that ended here, even
 * when user space changed the period in between. */
static __always_inline __u64 measure(struct bpf_perf_event_data *ctx, __u64 *counter)
{
	struct bpf_perf_event_value val;
	struct cpu_state *st;
	__u32 zero = 0;
	__u64 interval;

	st = bpf_map_lookup_elem(&cpu_states, &zero);
	if (!st || bpf_perf_prog_read_value(ctx, &val, sizeof(val)))
		return ctx->sample_period;
	interval = val.counter - st->last_counter;
	st->last_counter = val.counter;
	st->seen++;
	*counter = val.counter;
	return interval;
}

/* ask user space for a fresh period on this CPU: one token per sample */
static __always_inline void rearm_request(__u64 counter, __u64 interval, bool counted)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct rearm_token *tok;
	void *ring;

	ring = bpf_map_lookup_elem(&rearm, &cpu);
	tok = ring ? bpf_ringbuf_reserve(ring, sizeof(*tok), 0) : NULL;
	if (!tok) {
		stat_inc(HSBPF_STAT_REARM_LOST);
		return;
	}
	tok->cpu = cpu;
	tok->counted = counted;
	tok->time_ns = bpf_ktime_get_ns();
	tok->counter = counter;
	tok->interval = interval;
	bpf_ringbuf_submit(tok, 0);
}

SEC("perf_event")
int hsbpf_sample(struct bpf_perf_event_data *ctx)
{
	__u64 weight, counter = 0;
	struct proc_state *proc;
	__u32 tgid;

	stat_inc(HSBPF_STAT_SAMPLES);
	/* measured before filtering: intervals are per CPU, whoever ran */
	weight = random_periods ? measure(ctx, &counter) : ctx->sample_period;

	tgid = bpf_get_current_pid_tgid() >> 32;
	proc = bpf_map_lookup_elem(&procs, &tgid);
	if (filter_pids && (!proc || proc->state != HSBPF_PID_ACTIVE ||
			    (no_inherit && (__u32)bpf_get_current_pid_tgid() != tgid))) {
		stat_inc(HSBPF_STAT_FILTERED);
		if (random_periods)
			rearm_request(counter, weight, false);
		return 0;
	}
	if (random_periods)
		rearm_request(counter, weight, true);

	if (!samples__count(tgid, PT_REGS_IP(&ctx->regs), proc, weight))
		stat_inc(HSBPF_STAT_DROPPED_FULL);
	if (call_graph != HSBPF_CALL_GRAPH_NONE)
		stacks__sample(ctx, tgid, proc, weight);
	return 0;
}

/* The unwinder at any instruction, for the tests: attached as a uprobe at each instruction
 * of a fixture's functions, it unwinds from the probe's registers exactly as the sample
 * handler does from the sample's, and keeps the first stack seen at each address */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u64);
	__type(value, struct stack_frames);
} probe_stacks SEC(".maps");

SEC("uprobe")
int hsbpf_unwind_probe(struct pt_regs *ctx)
{
	__u32 zero = 0, tgid = bpf_get_current_pid_tgid() >> 32;
	struct stack_walk *st = bpf_map_lookup_elem(&unwind_scratch, &zero);
	struct proc_state *proc = bpf_map_lookup_elem(&procs, &tgid);
	__u64 ip = PT_REGS_IP(ctx);

	if (!st || bpf_map_lookup_elem(&probe_stacks, &ip))
		return 0;
	st->pid = tgid;
	st->tag = image_tag(proc);
	LEAF_REGS(st, ctx, DIRECT);
	unwind_user(st, ip, PT_REGS_SP(ctx), ctx->bp, false);
	bpf_map_update_elem(&probe_stacks, &ip, &st->user, BPF_NOEXIST);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(hsbpf_fork, struct task_struct *parent, struct task_struct *child)
{
	struct proc_state *pst, cst = {};
	__u32 ptgid, ctgid;

	ptgid = BPF_CORE_READ(parent, tgid);
	ctgid = BPF_CORE_READ(child, tgid);
	if (ptgid == ctgid)	/* a new thread: already covered by its tgid */
		return 0;
	offcpu_outside_waker_forget(ctgid);
	/* until user space copies them, a child unwinds through its parent's mappings */
	if (call_graph == HSBPF_CALL_GRAPH_DWARF && !maps_by_vma)
		bpf_map_update_elem(&unwind_parent, &ctgid, &ptgid, BPF_ANY);
	if (!filter_pids || no_inherit)
		return 0;
	pst = bpf_map_lookup_elem(&procs, &ptgid);
	if (!pst)
		return 0;
	/* the child runs its parent's image: exec_ns 0 sends user space to the fork record */
	cst.state = pst->state;
	cst.exec_pages = pst->exec_pages;	/* its parent's code: no change yet */
	if (bpf_map_update_elem(&procs, &ctgid, &cst, BPF_ANY))
		stat_inc(HSBPF_STAT_PIDS_FULL);
	return 0;
}

/* A new process image begins: its samples get a new exec tag from here on, and a command
 * armed before its exec starts counting */
static __always_inline void image_begin(__u32 tgid)
{
	struct proc_state *st, fresh = { .state = HSBPF_PID_ACTIVE };
	__u32 pages = bpf_get_current_task_btf()->mm->exec_vm;	/* the new mm's, so far */
	__u64 now = bpf_ktime_get_ns();

	offcpu_outside_waker_forget(tgid);
	st = bpf_map_lookup_elem(&procs, &tgid);
	if (st) {
		if (st->state == HSBPF_PID_ARMED)
			st->state = HSBPF_PID_ACTIVE;
		st->exec_ns = now;
		st->map_ns = 0;	/* the new image's mappings are all after its start */
		st->exec_pages = pages;
		return;
	}
	if (filter_pids)	/* not a target */
		return;
	fresh.exec_ns = now;
	fresh.exec_pages = pages;
	if (bpf_map_update_elem(&procs, &tgid, &fresh, BPF_ANY))
		stat_inc(HSBPF_STAT_EXEC_FULL);
}

/* The point of no return of an exec (kernels since 6.10): from here the task's mm may be the
 * new one, whose user stack the old registers do not describe (call graphs only) */
SEC("tp_btf/sched_prepare_exec")
int BPF_PROG(hsbpf_prepare_exec, struct task_struct *p, struct linux_binprm *bprm)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);
	__u64 mm = (__u64)BPF_CORE_READ(bprm, mm);

	bpf_map_update_elem(&execing, &tgid, &mm, BPF_ANY);
	return 0;
}

/* The exec renames the task (begin_new_exec, past the point of no return and the switch to
 * the new mm, before the new program is loaded): the new image begins here. The loading that
 * follows (elf_load, its page clearing, the interpreter) is the new image's, as perf counts it
 * by comm; sched_process_exec fires only after it. The kernel writes its COMM record just
 * after this tracepoint, so tags come a moment before the record that names the image: user
 * space settles them on it (profile__settle_exec_tags). A rename outside an exec (prctl,
 * /proc/PID/comm) is no new image. */
SEC("tp_btf/task_rename")
int BPF_PROG(hsbpf_exec_rename, struct task_struct *tsk, const char *comm)
{
	if (BPF_CORE_READ_BITFIELD_PROBED(tsk, in_execve))
		image_begin(BPF_CORE_READ(tsk, tgid));
	return 0;
}

/* The new program's registers are set: its user stack begins. Where the exec's rename cannot
 * be told apart, the image begins here. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(hsbpf_exec, struct task_struct *p)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);

	if (call_graph != HSBPF_CALL_GRAPH_NONE)
		bpf_map_delete_elem(&execing, &tgid);
	if (!exec_at_rename)
		image_begin(tgid);
	return 0;
}

/* A new mapping generation: the process's executable memory changed (a library loaded or
 * unloaded: dlopen, dlclose, the loader). The mmap_lock tracepoint fires as the lock taken for
 * the change is released, after the kernel's MMAP2 record of it; the process's pages of
 * executable memory (mm->exec_vm) tell whether the change was to code. Samples taken from here
 * on carry this time, so user space names each by the newest mapping at or before it: code
 * loaded in turn at one address is told apart. A process whose code does not change while
 * recording keeps map_ns 0, and so the keys it had without this program. (sys_exit would see
 * the mmap calls themselves, but enabling it sends every syscall of the machine through the
 * tracing slow path: dd bs=1 took 0.79 s of system time instead of 0.43.) Read releases count
 * too: munmap downgrades its lock and releases it as a reader, and a library unloaded, then
 * another of the same size loaded, would otherwise leave the pages as they were. */
SEC("tp_btf/mmap_lock_released")
int BPF_PROG(hsbpf_mmap_unlock, struct mm_struct *mm, bool write)
{
	struct proc_state *st, fresh = { .state = HSBPF_PID_ACTIVE };
	__u32 tgid, pages;

	if (bpf_get_current_task_btf()->mm != mm)
		return 0;
	pages = mm->exec_vm;
	tgid = bpf_get_current_pid_tgid() >> 32;
	st = bpf_map_lookup_elem(&procs, &tgid);
	if (st) {
		if (st->exec_pages != pages) {
			st->exec_pages = pages;
			st->map_ns = bpf_ktime_get_ns();
		}
		return 0;
	}
	if (filter_pids || !write)	/* not a target; or no change (readers: after one) */
		return 0;
	/* first seen: its pages so far, no generation yet */
	fresh.exec_pages = pages;
	if (bpf_map_update_elem(&procs, &tgid, &fresh, BPF_NOEXIST) == -HSBPF_E2BIG)
		stat_inc(HSBPF_STAT_EXEC_FULL);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(hsbpf_exit, struct task_struct *p)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);

	/* only when the last thread is gone: a reused pid must inherit neither the image nor
	 * the target's filter entry */
	if (BPF_CORE_READ(p, signal, live.counter) != 0)
		return 0;
	bpf_map_delete_elem(&procs, &tgid);
	if (call_graph != HSBPF_CALL_GRAPH_NONE)
		bpf_map_delete_elem(&execing, &tgid);	/* an exec that failed past its point of no return */
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
