/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The seam between bpf/ and user/: map keys, values and tunables shared by both sides.
 * Fixed-width types and explicit padding only: hash keys are compared as bytes. */
#ifndef HSBPF_H
#define HSBPF_H

#ifndef __VMLINUX_H__
#include <linux/types.h>	/* user space; BPF gets the types from vmlinux.h */
#endif

#define HSBPF_MAX_CPUS		512
#define HSBPF_DEFAULT_ENTRIES	(1u << 18)

/* sample_key.flags */
#define HSBPF_KEY_KERNEL	(1u << 0)	/* ip is a kernel address */

/* One aggregation slot: a process image (pid plus the time of its last exec seen while
 * recording, 0 if none), an instruction pointer and the cgroup the task ran in. */
struct sample_key {
	__u32 pid;		/* tgid, as the host sees it */
	__u32 flags;		/* HSBPF_KEY_* */
	__u64 ip;
	__u64 cgroup_id;	/* cgroup v2 id of the task, 0 without cgroup v2 */
	__u64 exec_ns;		/* CLOCK_MONOTONIC of the image's exec, 0: image older than the recording */
};

struct sample_value {
	__u64 count;		/* samples */
	__u64 weight;		/* sum of the periods that ended in these samples (ns or events) */
};

/* stats[] slots, per CPU */
enum hsbpf_stat {
	HSBPF_STAT_SAMPLES = 0,		/* samples seen by the handler */
	HSBPF_STAT_FILTERED,		/* not in the target (pid filter) */
	HSBPF_STAT_DROPPED_FULL,	/* in the target, but the sample map was full */
	HSBPF_STAT_DROPPED_RACE,	/* insert raced and the retry failed */
	HSBPF_STAT_REARM_LOST,		/* random periods: re-arm token lost (ring buffer full) */
	HSBPF_STAT_EXEC_FULL,		/* exec map full: that image falls back to exec_ns 0 */
	HSBPF_STAT_PIDS_FULL,		/* pid filter full: a forked child of the target is not followed */
	HSBPF_STAT_NR,
};

/* procs[] states: the command target is armed before its exec and counted after it */
#define HSBPF_PID_ARMED		1
#define HSBPF_PID_ACTIVE	2

/* procs[] values, one per process: with filter_pids the target processes (and nothing else);
 * otherwise the processes that exec'd while recording. One lookup per sample serves both. */
struct proc_state {
	__u32 state;		/* HSBPF_PID_* */
	__u32 pad;
	__u64 exec_ns;		/* CLOCK_MONOTONIC of its last exec while recording, 0 if none */
};

/* Ring buffer token for randomized periods: the handler asks user space to re-arm this
 * CPU's event with a fresh period, at most once per sample. Each CPU has its own ring. */
#define HSBPF_REARM_RING_BYTES	(64 * 1024)

struct rearm_token {
	__u32 cpu;
	__u32 counted;		/* the sample was in the target (its interval is a target's) */
	__u64 time_ns;		/* CLOCK_MONOTONIC at the sample */
	__u64 counter;		/* event count at the sample */
	__u64 interval;		/* event count since the previous sample on this CPU, 0 if first */
};

/* LBR: one taken branch (edge) or one fall-through range, in one process image */
#define HSBPF_LBR_MAX		32
#define HSBPF_LBR_MAX_SPAN	(1u << 20)

struct lbr_key {
	__u32 pid;
	__u32 kind;		/* HSBPF_LBR_EDGE or HSBPF_LBR_RANGE */
	__u64 a;		/* edge: from; range: first instruction (a branch target) */
	__u64 b;		/* edge: to; range: last instruction (the next branch's source) */
	__u64 exec_ns;
};

#define HSBPF_LBR_EDGE	1
#define HSBPF_LBR_RANGE	2

struct hsbpf_branch {
	__u64 from, to, flags;
};

/* lbr_stats[] slots, per CPU */
enum hsbpf_lbr_stat {
	HSBPF_LBR_SAMPLES = 0,	/* samples with a branch stack */
	HSBPF_LBR_ENTRIES,	/* branch entries read */
	HSBPF_LBR_UPDATES,	/* map updates made (runs of equal entries are merged first) */
	HSBPF_LBR_DROPPED,	/* an edge or range the full map could not take */
	HSBPF_LBR_INVALID,	/* ranges dropped: backwards, too long, or in the kernel */
	HSBPF_LBR_DUP_TOP,	/* duplicated newest entries dropped (Skylake-family erratum) */
	HSBPF_LBR_STAT_NR,
};

/* Per-CPU handler state for randomized periods */
struct cpu_state {
	__u64 last_counter;
	__u64 seen;
};

/* Counting per cgroup (bpf/stat_cgroup.bpf.c, hsbpf stat --per-cgroup and --cgroup): each
 * CPU's counters are read at the context switches that change cgroup, and what they counted
 * since the last read goes to the cgroup of the task switched out. */
#define HSBPF_COUNT_MAX_EVENTS	16	/* counters per CPU the program reads */
#define HSBPF_COUNT_MAX_LEVELS	16	/* cgroup depth walked for --cgroup's watched ancestors */
#define HSBPF_COUNT_IDLE	0	/* cgroup_count_key.cgroup_id of the idle task (--per-cgroup) */
/* cgroup_count_key.cgroup_id of counts whose cgroup is not known: the kernel did not run the
 * program for some switch (it skips a few in a thousand), or a task was moved while it ran */
#define HSBPF_COUNT_UNATTRIBUTED	(~0ULL)

struct cgroup_count_key {
	__u64 cgroup_id;	/* cgroup v2 id, or HSBPF_COUNT_IDLE */
	__u32 event;		/* index in the program's counters */
	__u32 pad;
};

/* a counter's reading, or what it gained: the count and its enabled and running times (ns) */
struct count_value {
	__u64 counter;
	__u64 enabled;
	__u64 running;
};

/* count_stats[] slots, per CPU */
enum hsbpf_count_stat {
	HSBPF_COUNT_SWITCHES = 0,	/* context switches seen */
	HSBPF_COUNT_READS,		/* of which changed cgroup: the counters were read */
	HSBPF_COUNT_UNSURE,		/* reads whose counts went unattributed */
	HSBPF_COUNT_FLUSHES,		/* reads asked by user space (the running task's share) */
	HSBPF_COUNT_READ_ERRORS,	/* a counter that could not be read: its delta waits */
	HSBPF_COUNT_MAP_FULL,		/* a (cgroup, event) the full map could not take: lost */
	HSBPF_COUNT_STAT_NR,
};

#endif /* HSBPF_H */
