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
/* off-CPU time (record --off-cpu, --wall: bpf/offcpu.bpf.h): count is blocks, weight the ns
 * blocked; the state the task blocked in is in HSBPF_KEY_STATE_MASK (HSBPF_OFFCPU_*) */
#define HSBPF_KEY_OFFCPU	(1u << 1)
#define HSBPF_KEY_STATE_SHIFT	8
#define HSBPF_KEY_STATE_MASK	(0xfu << HSBPF_KEY_STATE_SHIFT)
/* sampled allocations (record --memory: bpf/memory.bpf.h): count is objects in 1/1024ths,
 * weight bytes, both estimated; the kind (HSBPF_MEM_ALLOC or _INUSE) is in
 * HSBPF_KEY_STATE_MASK */
#define HSBPF_KEY_MEMORY	(1u << 2)

/* The finer keys a sample may carry beside its process image: its thread, CPU and time
 * bucket. Each is filled only when asked (the key_tid, key_cpu and time_bucket_ns tunables
 * of samples.bpf.h) and 0 otherwise, so that a recording without them has as many slots as
 * before. 16 bytes, in sample_key and stack_key alike. */
struct sample_extra {
	__u32 tid;		/* the thread (kernel pid), with key_tid */
	__u16 cpu;		/* with key_cpu */
	__u16 snap;		/* record --memory --snapshot-every: an allocation's interval, a live
				 * one's snapshot (bpf/memory.bpf.h mem_snap) */
	__u32 time;		/* (ktime - time_origin_ns) / time_bucket_ns, with time_bucket_ns */
	__u32 waker;		/* an off-CPU block's: the thread that woke it, with offcpu_wakers */
};

/* One aggregation slot: a process image (pid plus the time of its last exec seen while
 * recording, 0 if none), its mapping generation (the time of the last change to its executable
 * memory while recording, 0 if none since the exec), an instruction pointer and the cgroup the task
 * ran in. */
struct sample_key {
	__u32 pid;		/* tgid, as the host sees it */
	__u32 flags;		/* HSBPF_KEY_* */
	__u64 ip;
	__u64 cgroup_id;	/* cgroup v2 id of the task, 0 without cgroup v2 */
	__u64 exec_ns;		/* CLOCK_MONOTONIC of the image's exec, 0: image older than the recording */
	__u64 map_ns;		/* CLOCK_MONOTONIC just after the last change to the image's
				 * executable memory (after the kernel's MMAP2 record of it), 0:
				 * none since exec_ns */
	struct sample_extra x;	/* thread, CPU, time bucket: 0 unless asked */
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
	HSBPF_STAT_EXEC_FULL,		/* procs full at an exec or an executable mmap: that image
					 * falls back to exec_ns and map_ns 0 */
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
	__u32 exec_pages;	/* its pages of executable memory (mm->exec_vm) when last seen */
	__u64 exec_ns;		/* CLOCK_MONOTONIC of its last exec while recording, 0 if none */
	__u64 map_ns;		/* of the last change to its executable memory since, 0 if none */
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

/* ---- call stacks unwound in the kernel from .eh_frame / .debug_frame ---- */

#define HSBPF_MAX_FRAMES	256	/* user frames per stack; the kernel's come from bpf_get_stack */
#define HSBPF_SHORT_FRAMES	32	/* stacks up to this deep are stored in the short map */

/* call_graph (a tunable of profile.bpf.c); user space knows each mode by its row in
 * user/record/call_graph.c */
#define HSBPF_CALL_GRAPH_NONE	0
#define HSBPF_CALL_GRAPH_FP	1
#define HSBPF_CALL_GRAPH_DWARF	2
#define HSBPF_CALL_GRAPH_LBR	3	/* the LBR's call-stack mode: up to 32 callers, no tables */

/* default capacities of the unwind maps */
#define HSBPF_UNWIND_ROWS	(1u << 21)	/* 32 MB: a busy machine's objects took 1.1 M */
#define HSBPF_UNWIND_PAGES	(1u << 18)	/* 1 GB of code */
#define HSBPF_UNWIND_OBJS	4096
#define HSBPF_UNWIND_MAPS	(1u << 19)	/* address prefixes of every process's mappings */
#define HSBPF_UNWIND_PARENTS	16384		/* forked children whose mappings are not copied yet */
#define HSBPF_EXECING		4096		/* processes inside an exec at once */
#define HSBPF_PROBE_STACKS	65536		/* the unwinder's test: one stack per address */
/* distinct stacks, preallocated (about 320 bytes a short one, 2.1 KB a long one: 21 MB and
 * 8.6 MB); --map-entries N makes them N / 4 and N / 64 */
#define HSBPF_DEFAULT_STACKS	(1u << 16)
#define HSBPF_LONG_STACKS	4096		/* distinct stacks deeper than HSBPF_SHORT_FRAMES */
#define HSBPF_UNWIND_PAGE_SHIFT	12	/* the page index maps 4 KB of code to its rows */

/* unwind_row.cfa: how to find the canonical frame address (the caller's stack pointer) */
#define HSBPF_CFA_NONE		0	/* no unwind information here */
#define HSBPF_CFA_END		1	/* the outermost frame: the return address is undefined */
#define HSBPF_CFA_REG		2	/* base = register cfa_reg; cfa = base + cfa_off */
#define HSBPF_CFA_PLT		3	/* ld's PLT rule: rsp + 8, + 8 when (pc & 15) >= cfa_off */
#define HSBPF_CFA_STALE		4	/* the rules here describe another frame (libgcc installing an
					 * exception handler's context): the walk ends */

/* unwind_row.flags */
#define HSBPF_ROW_DEREF		(1u << 0)	/* cfa = *(base + cfa_off) (signal and realigned frames) */
#define HSBPF_ROW_SIGNAL	(1u << 1)	/* a signal trampoline: the caller's pc is not a return address */

/* unwind_row.ra and .rbp: where the caller's return address and frame pointer were saved */
#define HSBPF_SAVED_SAME	0	/* rbp only: unchanged (the ABI's default for callee-saved) */
#define HSBPF_SAVED_CFA		1	/* at cfa + off */
#define HSBPF_SAVED_BASE	2	/* at base + off (the CFA rule's register, before any deref) */
#define HSBPF_SAVED_UNDEF	3	/* rbp only: lost */

/* DWARF register numbers on x86-64 that rows name: 0-15 are rax, rdx, rcx, rbx, rsi, rdi, rbp,
 * rsp, r8-r15; beyond the sampled frame only rbp and rsp are known */
#define HSBPF_DWARF_RBP		6
#define HSBPF_DWARF_RSP		7
#define HSBPF_DWARF_LAST_GPR	15

/* One row of an object's unwind table: the rules in force from pc (relative to the object's
 * table base) to the next row's pc. 16 bytes. */
struct unwind_row {
	__u32 pc;
	__u8 cfa;		/* HSBPF_CFA_* */
	__u8 cfa_reg;		/* DWARF register number, with HSBPF_CFA_REG */
	__u8 flags;		/* HSBPF_ROW_* */
	__u8 saved;		/* low nibble: ra's HSBPF_SAVED_*, high nibble: rbp's */
	__s32 cfa_off;
	__s16 ra_off;
	__s16 rbp_off;
};

/* the rows of one 4 KB page of an object's code: the row in force at the page's start, then
 * every row that starts inside it */
struct unwind_page {
	__u32 first;		/* index in the global row array */
	__u32 nr;		/* 0: no unwind information in this page */
};

/* the rows of a page by 256 bytes of its code: for each 256-byte chunk, the row in force at its
 * start as an offset from the page's first row. A lookup then searches the rows of one chunk
 * (one or two cache lines of rows) instead of halving over the page's */
#define HSBPF_UNWIND_SUB_SHIFT	8
#define HSBPF_UNWIND_SUBS	(1u << (HSBPF_UNWIND_PAGE_SHIFT - HSBPF_UNWIND_SUB_SHIFT))

struct unwind_subpage {
	__u16 first[HSBPF_UNWIND_SUBS];	/* a page holds at most 4,097 rows */
};

/* one object's table in the global arrays */
struct unwind_obj {
	__u64 base;		/* ELF address of row pc 0 and of page 0 */
	__u64 end;		/* first ELF address past the rows' code */
	__u32 first_page;	/* index in the global page array */
	__u32 nr_pages;
};

#define HSBPF_UNWIND_NO_OBJ	0xffffffffu	/* a mapping without a table: frame pointers */

/* The mapping of an address in a process image, found by longest prefix: the key's data is
 * the pid, the image's exec tag and the address, all big-endian, so that an image's mappings
 * are never taken for those of the image an exec replaced it with. prefixlen = 64 + the bits
 * of the address an entry covers. */
struct unwind_map_key {
	__u32 prefixlen;
	__u32 pid_be;
	__u32 tag_be;		/* (__u32)procs[pid].exec_ns: 0 for an image older than the recording */
	__u32 addr_hi_be;
	__u32 addr_lo_be;
};

struct unwind_mapping {
	__u64 start, end;	/* the whole mapping: frames in it need no second lookup */
	__u64 bias;		/* an address less bias is the object's ELF address */
	__u32 obj;		/* index in the object array, or HSBPF_UNWIND_NO_OBJ */
	__u32 pad;
};

/* An object's table by the file's identity, for a mapping the sideband has not brought yet (a
 * program's first milliseconds): the kernel finds the sampled task's vma (bpf_find_vma), and
 * its file's (device, inode) here. dev is the kernel's encoding (major << 20 | minor). */
#define HSBPF_INODE_SEGS	4

struct unwind_inode_key {
	__u64 dev;
	__u64 ino;
};

struct unwind_inode {
	__u32 obj;		/* index in the object array */
	__u32 nr_segs;
	struct {
		__u64 offset, vaddr, filesz;	/* an executable PT_LOAD segment */
	} seg[HSBPF_INODE_SEGS];
};

/* how a user stack ended (stack_frames.end) */
enum hsbpf_stack_end {
	HSBPF_STACK_COMPLETE = 0,	/* the outermost frame: _start, a thread's start */
	HSBPF_STACK_NO_USER,		/* no user stack: a kernel thread, or idle */
	HSBPF_STACK_NO_MAPPING,		/* a pc in no mapping known yet, and no frame pointer to follow */
	HSBPF_STACK_NO_INFO,		/* no unwind information, and no frame pointer to follow */
	HSBPF_STACK_UNSUPPORTED,	/* a rule the kernel's unwinder does not follow */
	HSBPF_STACK_UNREADABLE,		/* stack memory that could not be read */
	HSBPF_STACK_DEPTH,		/* HSBPF_MAX_FRAMES reached */
	HSBPF_STACK_LOOP,		/* the stack pointer went down: a corrupt or cyclic stack */
	HSBPF_STACK_FP_END,		/* --call-graph fp: the frame-pointer chain ended */
	HSBPF_STACK_IN_EXEC,		/* in an exec past its point of no return: the old user stack
					 * is gone, the new program has none yet (no frames) */
	HSBPF_STACK_EH_INSTALL,		/* in libgcc's install of a handler's context, where the
					 * frame's saved registers are already the handler's */
	HSBPF_STACK_NR,
};

/* one distinct stack, stored once under the 64-bit hash of its frames: in the short map with
 * HSBPF_SHORT_FRAMES slots (most stacks, 264 bytes) or the long one */
struct stack_frames {
	__u32 nr;		/* frames in ip[], the sampled one first */
	__u16 end;		/* user stacks: HSBPF_STACK_* */
	__u16 nr_fp;		/* user stacks: frames found by frame pointer, for lack of a table */
	__u64 ip[HSBPF_MAX_FRAMES];
};

/* a stack the kernel could not store (its map full, or its bucket busy): the sample is
 * counted, its frames are lost. Real hashes are odd and never this. */
#define HSBPF_STACK_LOST_HASH	2

/* a sample with its stacks: per process image, cgroup, user stack and kernel stack */
struct stack_key {
	__u32 pid;
	__u32 flags;		/* HSBPF_KEY_KERNEL: the sample was taken in the kernel */
	__u64 cgroup_id;
	__u64 exec_ns;
	__u64 map_ns;		/* mapping generation, as in sample_key */
	__u64 user;		/* hash of the user stack in stacks[], 0 for none */
	__u64 kernel;		/* hash of the kernel stack in stacks[], 0 for none */
	struct sample_extra x;	/* thread, CPU, time bucket: 0 unless asked */
};

/* A sample whose user stack met a pc in no mapping the kernel knows yet (a new program's first
 * milliseconds, before user space has read its mappings and built their tables): instead of
 * counting it truncated, the kernel sends its registers and a copy of its stack to user space,
 * which unwinds it with the same rules once the tables exist (user/record/late_stacks.c). Rare by
 * design; the ring's size bounds it, and a full ring leaves the sample as the kernel ended it. */
#define HSBPF_LATE_STACK_BYTES	16384		/* the user stack copied from the sampled sp */
#define HSBPF_LATE_KERNEL_FRAMES 128
#define HSBPF_LATE_RING		(1u << 22)	/* 4 MB: about 230 such samples in flight */

struct late_stack {
	struct stack_key key;	/* user and kernel 0: the stacks come with the record */
	__u64 weight;
	__u64 ip;		/* the sampled user pc */
	__u64 regs[HSBPF_DWARF_LAST_GPR + 1];	/* its registers, DWARF order */
	__u64 stack_top;	/* the process's first stack pointer */
	__u32 size;		/* bytes of stack copied from regs[rsp] (0: none could be read) */
	__u32 kernel_nr;	/* kernel frames, for a sample taken in the kernel */
	__u32 in_syscall;	/* ip follows a syscall instruction: looked up as a return address */
	__u32 pad;
	__u64 token;		/* an off-CPU block's (0 for a sample): its time comes later, in a
				 * struct late_block with this token */
	__u64 kernel[HSBPF_LATE_KERNEL_FRAMES];
	__u8 data[HSBPF_LATE_STACK_BYTES];
};

/* An off-CPU block whose stack went to user space as a late_stack at the switch-out: its time,
 * known only at the switch-in, follows in the same ring under the copy's token. The key and pc
 * count it with its pc alone if user space could not keep the copy. */
struct late_block {
	__u64 token;
	__u64 ns;
	__u64 ip;
	struct stack_key key;
};

/* stack_stats[] slots, per CPU */
enum hsbpf_stack_stat {
	HSBPF_STACK_STAT_SAMPLES = 0,	/* samples with stacks collected */
	HSBPF_STACK_STAT_FRAMES,	/* user frames unwound */
	HSBPF_STACK_STAT_FP_FRAMES,	/* ... of them by frame pointer */
	HSBPF_STACK_STAT_STACKS_FULL,	/* a new stack the stack map could not take: counted, unnamed */
	HSBPF_STACK_STAT_KEYS_FULL,	/* a sample the stack-sample map could not take: dropped */
	HSBPF_STACK_STAT_KERNEL_ERR,	/* bpf_get_stack failed for a kernel stack */
	HSBPF_STACK_STAT_NS,		/* with time_stacks: time spent on stacks (unwinding, storing) */
	HSBPF_STACK_STAT_LATE,		/* samples sent to user space to unwind from a stack copy */
	HSBPF_STACK_STAT_LATE_FULL,	/* ... that found the ring full: kept as the kernel ended them */
	HSBPF_STACK_STAT_PY_SAMPLES,	/* samples of a Python process whose thread had Python frames */
	HSBPF_STACK_STAT_PY_FRAMES,	/* Python frames read */
	HSBPF_STACK_STAT_PY_CUT,	/* ... stacks cut at HSBPF_PY_MAX_FRAMES or out of room */
	HSBPF_STACK_STAT_PY_BAD,	/* ... stacks cut at unreadable memory or a loop */
	HSBPF_STACK_STAT_PY_NO_THREAD,	/* samples of a Python process whose thread state was not found */
	HSBPF_STACK_STAT_PY_CODES_LOST,	/* code objects py_codes had no room to announce */
	HSBPF_STACK_STAT_NR,
};

/* ---- off-CPU time (bpf/offcpu.bpf.h) ---- */

/* the state a task was switched out in */
enum hsbpf_offcpu_state {
	HSBPF_OFFCPU_S = 1,		/* interruptible sleep: waits for an event */
	HSBPF_OFFCPU_D,			/* uninterruptible: disk, a lock, page-in */
	HSBPF_OFFCPU_R,			/* runnable: preempted, or yielded; waits for a CPU */
	HSBPF_OFFCPU_OTHER,		/* stopped, traced, parked */
	HSBPF_OFFCPU_NR,
};

/* offcpu_stats[] slots, per CPU */
enum hsbpf_offcpu_stat {
	HSBPF_OFFCPU_SWITCHES = 0,	/* switch-outs of the target: stacks taken, time kept */
	HSBPF_OFFCPU_BLOCKS,		/* blocks counted when the task ran again */
	HSBPF_OFFCPU_SHORT,		/* shorter than min_block_ns: left out */
	HSBPF_OFFCPU_LONG,		/* longer than max_block_ns: left out */
	HSBPF_OFFCPU_NO_STORAGE,	/* no task storage for the task: its switch was missed (a
					 * switch-in's: found at its next switch-out, block lost) */
	HSBPF_OFFCPU_FULL,		/* a block the full sample or stack-sample map could not take */
	HSBPF_OFFCPU_FULL_NS,		/* ... its time */
	HSBPF_OFFCPU_OPEN,		/* still blocked when the recording ended: counted to the end */
	HSBPF_OFFCPU_UNDERWAY,		/* blocked when it started: counted from the start */
	HSBPF_OFFCPU_UNDERWAY_NS,	/* ... their time */
	HSBPF_OFFCPU_ASLEEP,		/* blocked from its start to its end: never ran, not counted */
	HSBPF_OFFCPU_WAKEUPS,		/* --wakers: wake-ups of a blocked target task seen */
	HSBPF_OFFCPU_WAKER_LOST,	/* ... whose waker's stacks could not be kept (the waker-sample
					 * map full, or the block's stack unwound in user space: a
					 * program's first milliseconds): counted without them */
	HSBPF_OFFCPU_UNWOKEN,		/* ... blocks not preempted whose wake-up was not seen */
	HSBPF_OFFCPU_UNSAMPLED,		/* --switch-sample: blocks of the target the draw left out */
	HSBPF_OFFCPU_UNDERWAY_EARLY,	/* under way at the start, ended before the start's walk
					 * reached their task: found at their switch-in */
	HSBPF_OFFCPU_WAKER_UNANNOUNCED,	/* --wakers, -p or a command: a process outside the target
					 * seen waking that waker_news could not announce (ring full):
					 * its mappings read at the end, if it still runs */
	HSBPF_OFFCPU_STAT_NR,
};

/* --wakers: the task that woke a block (sched_waking, in the waker's context), its process
 * image and its stacks' hashes (0: none, as a kernel thread's user stack) */
struct waker_id {
	__u32 pid;		/* its tgid; its thread is the blocked key's x.waker */
	__u32 pad;
	__u64 exec_ns;
	__u64 map_ns;
	__u64 user;
	__u64 kernel;
};

/* --wakers with a -p or command target: a process outside the target seen waking one of its
 * blocks for the first time in its image (waker_news ring), so that user space reads its
 * mappings while it runs; tag is its waker_id.exec_ns, the moment it was first seen */
struct waker_news {
	__u32 pid;
	__u32 pad;
	__u64 tag;
	char comm[16];		/* its process's name then (its main thread's): kept if it is gone */
};

#define HSBPF_WAKER_PROCS	8192		/* outside wakers' images known at once (LRU) */
#define HSBPF_WAKER_NEWS_BYTES	(64 * 1024)	/* 1,600 announcements between reads */

/* the waker_samples map: a block's stacks joined to its waker's (blocks with no waker known
 * go to stack_samples as without --wakers) */
struct waker_key {
	struct stack_key key;
	struct waker_id w;
};

/* ---- sampled allocations (bpf/memory.bpf.h, docs/memory.md) ---- */

/* a memory sample's kind, in its flags' state bits */
enum hsbpf_mem_kind {
	HSBPF_MEM_ALLOC = 1,		/* allocated while recording */
	HSBPF_MEM_INUSE,		/* still allocated at the end (or at its process's exit) */
};

#define HSBPF_MEM_LIVE		(1u << 16)	/* sampled allocations remembered until freed */

/* mem_live[] keys and values: a sampled allocation not yet freed */
struct mem_addr {
	__u32 pid;
	__u32 pad;
	__u64 addr;
};

struct mem_live {
	struct stack_key key;	/* its stacks, flags HSBPF_KEY_MEMORY | HSBPF_MEM_ALLOC */
	__u64 ip;		/* the flat histogram's address: malloc's caller */
	__u64 size;		/* the bytes asked for */
	__u64 weight;		/* the bytes it stands for */
	__u64 objects;		/* the objects it stands for, in 1/1024ths */
};

/* mem_stats[] slots, per CPU */
enum hsbpf_mem_stat {
	HSBPF_MEM_CALLS = 0,		/* allocation calls of the target seen */
	HSBPF_MEM_BYTES,		/* ... the bytes they asked for */
	HSBPF_MEM_SAMPLED,		/* sampled allocations counted */
	HSBPF_MEM_FREED,		/* sampled allocations freed while recording */
	HSBPF_MEM_FAILED,		/* sampled calls that returned no memory */
	HSBPF_MEM_LIVE_FULL,		/* sampled allocations the address map could not take:
					 * counted as allocated, never as in use */
	HSBPF_MEM_FULL,			/* sampled allocations the sample maps could not take */
	HSBPF_MEM_NO_STORAGE,		/* calls missed: no task storage for the thread */
	HSBPF_MEM_INUSE_END,		/* sampled allocations still live at the end */
	HSBPF_MEM_INUSE_EXITED,		/* ... of processes that had exited */
	HSBPF_MEM_STAT_NR,
};

/* Python's own frames (record -g of a CPython process: bpf/python.bpf.h, user/python/).
 * A Python frame sits in stack_frames.ip[] as a tagged value that is never a real address
 * (the top nibble makes it non-canonical on x86-64): the code object's address (8-aligned,
 * user space, < 2^47) shifted right by 3, and the instruction's offset in code units.
 * User space turns (pid, code object, offset) into the function, file and line.
 * The top nibble also says the code object's generation at its address: a code object freed
 * and its address given to another (pymalloc reuses a freed block at once) gets the next
 * generation, so that the kernel aggregates the two apart and each is named. Generation 0's
 * nibble is 0xe (the only one before generations: older profiles hold only it); generation g
 * > 0's is 0xd - g (0xc..0x8): 0xd is PROFILE_OBJ_FRAME's (user/profile/profile.h), 0xf the
 * kernel's, 0 a user address's. After the last generation the next reuse wraps to 0. */
#define HSBPF_PY_TAG		0xe000000000000000ULL
#define HSBPF_PY_TAG_MASK	0xf000000000000000ULL
#define HSBPF_PY_GENS		6
#define HSBPF_PY_NIBBLE(ip)	((__u32)((__u64)(ip) >> 60))
#define HSBPF_PY_GEN_TAG(gen)	((gen) ? (__u64)(0xd - (gen)) << 60 : HSBPF_PY_TAG)
#define HSBPF_PY_OFF_BITS	16
#define HSBPF_PY_FRAME_GEN(code, off, gen) \
	(HSBPF_PY_GEN_TAG(gen) | (((__u64)(code) >> 3) << HSBPF_PY_OFF_BITS) | \
	 ((__u64)(off) & ((1u << HSBPF_PY_OFF_BITS) - 1)))
#define HSBPF_PY_FRAME(code, off)	HSBPF_PY_FRAME_GEN(code, off, 0)
#define HSBPF_PY_IS_FRAME(ip) \
	(HSBPF_PY_NIBBLE(ip) == 0xe || \
	 (HSBPF_PY_NIBBLE(ip) >= 0xd - (HSBPF_PY_GENS - 1) && HSBPF_PY_NIBBLE(ip) <= 0xc))
/* a Python frame's generation, and the frame with another one */
#define HSBPF_PY_GEN(ip)	(HSBPF_PY_NIBBLE(ip) == 0xe ? 0u : 0xd - HSBPF_PY_NIBBLE(ip))
#define HSBPF_PY_WITH_GEN(ip, gen) (((__u64)(ip) & ~HSBPF_PY_TAG_MASK) | HSBPF_PY_GEN_TAG(gen))
#define HSBPF_PY_CODE(ip)	((((ip) & ~HSBPF_PY_TAG_MASK) >> HSBPF_PY_OFF_BITS) << 3)
#define HSBPF_PY_OFF(ip)	((__u32)((ip) & HSBPF_PY_OFF_MASK))
/* the native frame the Python frames of one evaluation loop's call replace or follow:
 * its frames end at the entry frame (3.11: is_entry; 3.12+: the owner's C-stack shim), which
 * carries HSBPF_PY_ENTRY in its offset's top bit (offsets are below 32,768 code units) */
#define HSBPF_PY_ENTRY		(1u << (HSBPF_PY_OFF_BITS - 1))
#define HSBPF_PY_OFF_MASK	(HSBPF_PY_ENTRY - 1)
#define HSBPF_PY_IS_ENTRY(ip)	(HSBPF_PY_IS_FRAME(ip) && ((ip) & HSBPF_PY_ENTRY))
/* a frame with no entry bit: how the namer keys it */
#define HSBPF_PY_KEY(ip)	((ip) & ~(__u64)HSBPF_PY_ENTRY)
#define HSBPF_PY_MAX_FRAMES	64	/* Python frames read per sample; deeper is counted cut */

/* One CPython minor version's layout, as the unwinder (BPF) and the namer (user space) read
 * it: byte offsets into the runtime's structures, HSBPF_PY_ABSENT where the version has no
 * such field. From the table in user/python/pyoffsets_table.c (checked against the
 * interpreter's debug information in a test), the interpreter's own debug information where
 * it has some, and 3.13's _Py_DebugOffsets in _PyRuntime (user/python/pyoffsets.c). */
#define HSBPF_PY_ABSENT		0xffff
/* 3.13's _Py_THREAD_ATTACHED (a #define: no DWARF says it), a thread state's state while its
 * thread runs in it */
#define HSBPF_PY_THREAD_ATTACHED	1
struct hsbpf_py_offsets {
	__u16 major, minor;
	/* _PyRuntimeState */
	__u16 runtime_interp_head;	/* interpreters.head */
	__u16 runtime_tstate_current;	/* 3.10, 3.11: gilstate.tstate_current, the state
					 * holding the GIL */
	/* PyInterpreterState */
	__u16 interp_next;		/* next (subinterpreters) */
	__u16 interp_threads_head;	/* threads.head (3.11+), tstate_head (3.10) */
	/* PyThreadState */
	__u16 tstate_next;
	__u16 tstate_thread_id;		/* pthread_self(): the thread's fs base */
	__u16 tstate_native_thread_id;	/* the kernel's tid (3.11+) */
	__u16 tstate_state;		/* 3.13+: state, HSBPF_PY_THREAD_ATTACHED while it runs */
	__u16 tstate_cframe;		/* 3.11, 3.12: cframe, whose current_frame ... */
	__u16 cframe_current_frame;
	__u16 tstate_current_frame;	/* 3.13+: current_frame; 3.10: frame (a PyFrameObject) */
	/* _PyInterpreterFrame (3.10: PyFrameObject) */
	__u16 frame_code;		/* f_code; 3.13: f_executable */
	__u16 frame_previous;		/* previous; 3.10: f_back */
	__u16 frame_instr;		/* prev_instr (3.11, 3.12), instr_ptr (3.13), f_lasti (3.10) */
	__u16 frame_is_entry;		/* 3.11: is_entry */
	__u16 frame_owner;		/* 3.11+: owner (3.12+: FRAME_OWNED_BY_CSTACK marks the entry) */
	__u16 owned_by_cstack;		/* that owner's value */
	/* PyCodeObject */
	__u16 code_adaptive;		/* co_code_adaptive: where the instructions start (3.11+) */
	__u16 code_code;		/* co_code: a bytes object (3.10) */
	__u16 code_qualname;		/* co_qualname (3.11+) */
	__u16 code_name;
	__u16 code_filename;
	__u16 code_firstlineno;
	__u16 code_linetable;		/* a bytes object */
	/* PyUnicodeObject / PyBytesObject */
	__u16 unicode_state;		/* the state bit field (compact, ascii, kind) */
	__u16 unicode_ascii_data;	/* a compact ASCII string's first byte */
	__u16 unicode_compact_data;	/* a compact non-ASCII string's first byte */
	__u16 bytes_size;		/* ob_size */
	__u16 bytes_data;		/* ob_sval */
	__u16 code_firsttraceable;	/* 3.11: _co_firsttraceable, an int (frames before it are
					 * incomplete: not yet Python code, as tracebacks skip them) */
};

/* --python-frames: where a group of Python frames goes in a stack */
enum hsbpf_py_mode {
	HSBPF_PY_INTERLEAVE = 0,	/* before (inner to) its evaluation loop's native frame */
	HSBPF_PY_REPLACE,		/* instead of it */
	HSBPF_PY_OFF_MODE,		/* native frames only */
};

/* py_procs' value: a CPython process the unwinder reads (its key is the pid). The evaluation
 * loop's address range marks the native frames a group of Python frames goes with. */
struct hsbpf_py_proc {
	__u64 runtime;			/* &_PyRuntime in the process */
	__u64 eval_start, eval_end;	/* _PyEval_EvalFrameDefault, runtime addresses */
	__u64 code_type;		/* &PyCode_Type where a frame's code field may hold
					 * another object (3.13's f_executable); else 0 */
	struct hsbpf_py_offsets off;
};
#define HSBPF_PY_PROCS		1024	/* Python processes followed at once */

/* py_codes' record: a code object the kernel saw in a new stack for the first time, for user
 * space to name while its process lives */
struct hsbpf_py_code_event {
	__u32 pid;
	__u32 gen;		/* its generation at that address (HSBPF_PY_GEN) */
	__u64 code;
};
#define HSBPF_PY_CODES_RING	(256 * 1024)

#endif /* HSBPF_H */
