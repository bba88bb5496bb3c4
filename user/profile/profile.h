/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The profile: what a recording leaves for an offline report (samples, process images,
 * kernel symbols, counters), in memory and in its versioned file format (docs/profile-format.md). */
#ifndef HSBPF_PROFILE_H
#define HSBPF_PROFILE_H

#include "lib/hashidx.h"
#include "lib/util.h"

#define PROFILE_MAGIC		"HSBPFPRF"
/* 2.0: sections packed (columns and zstd: lib/section_pack.h), which a 1.x reader cannot
 * skip; a 2.0 reader reads every 1.x file. The 1.x minors below are what a 1.x file has; a
 * 2.x file has them all */
#define PROFILE_VERSION_MAJOR	2
#define PROFILE_VERSION_MINOR	0
#define PROFILE_MAJOR_PACKED	2
/* 1.2: metadata strings are escaped (docs/profile-format.md) */
#define PROFILE_MINOR_ESCAPES	2
/* 1.3: call stacks (SEC_STACKS, SEC_FRAMES, SEC_STACK_SAMPLES) */
#define PROFILE_MINOR_STACKS	3
/* 1.4: threads, CPUs and time buckets in the sample keys; thread names (SEC_THREAD_COMMS,
 * SEC_SAMPLE_KEYS, SEC_STACK_SAMPLE_KEYS) */
#define PROFILE_MINOR_THREADS	4
/* 1.4: JIT symbols from perf map files (SEC_JITSYMS) */
#define PROFILE_MINOR_JIT	4
/* 1.6: mapping generations of the samples (SEC_SAMPLE_MAPS, SEC_STACK_SAMPLE_MAPS) */
#define PROFILE_MINOR_MAPS	6
/* 1.7: off-CPU time (sample flags HSBPF_KEY_OFFCPU and the state; META offcpu, STATS offcpu_*) */
#define PROFILE_MINOR_OFFCPU	7
/* 1.8: sampled allocations (sample flags HSBPF_KEY_MEMORY and the kind; META alloc_period,
 * STATS mem_*) */
#define PROFILE_MINOR_MEMORY	8
/* 1.9: Python frames in stacks (HSBPF_PY_FRAME) and their names (SEC_PYFRAMES) */
#define PROFILE_MINOR_PYTHON	9
/* 1.10: off-CPU blocks' wakers (SEC_STACK_SAMPLE_WAKERS; the sample keys' waker; STATS
 * offcpu_wakeups, offcpu_waker_lost, offcpu_unwoken) */
#define PROFILE_MINOR_WAKERS	10
/* 1.11: user frames as (object, offset): PROFILE_OBJ_FRAME, the objects as mappings of
 * PROFILE_OBJ_PID (profile__share_stacks) */
#define PROFILE_MINOR_OBJECTS	11
/* 2.0 (after 1.11): Python frames of a code object's generation at its address (HSBPF_PY_GEN: top nibbles
 * 0xc..0x8 beside 0xe; STATS py_gens) */
#define PROFILE_MINOR_PYGENS	12
#define BUILD_ID_MAX		20

enum profile_section_type {
	SEC_META = 1,		/* key=value text */
	SEC_STATS = 2,		/* key=value text */
	SEC_SAMPLES = 3,	/* struct profile_sample[] */
	SEC_STRINGS = 4,	/* NUL-terminated strings, referenced by offset */
	SEC_MAPPINGS = 5,	/* struct profile_mapping[] */
	SEC_COMMS = 6,		/* struct profile_comm[] */
	SEC_FORKS = 7,		/* struct profile_fork[] */
	SEC_KSYMS = 8,		/* struct profile_ksym[], sorted by addr */
	SEC_CGROUPS = 9,	/* struct profile_cgroup[] */
	SEC_LBR = 10,		/* struct profile_lbr[] (format 1.1) */
	SEC_NSPIDS = 11,	/* struct profile_nspid[] (format 1.1) */
	SEC_STACKS = 12,	/* struct profile_stack[] (format 1.3) */
	SEC_FRAMES = 13,	/* u64[]: the stacks' frames (format 1.3) */
	SEC_STACK_SAMPLES = 14,	/* struct profile_stack_sample[] (format 1.3) */
	SEC_THREAD_COMMS = 17,	/* struct profile_thread_comm[] (format 1.4) */
	SEC_SAMPLE_KEYS = 18,	/* struct profile_sample_key[], one per SAMPLES record (1.4) */
	SEC_STACK_SAMPLE_KEYS = 19,	/* the same, one per STACK_SAMPLES record (1.4) */
	SEC_JITSYMS = 15,	/* struct profile_jitsym[] (format 1.4) */
	SEC_SAMPLE_MAPS = 20,	/* u64[]: map_ns, one per SAMPLES record (1.6) */
	SEC_STACK_SAMPLE_MAPS = 21,	/* the same, one per STACK_SAMPLES record (1.6) */
	SEC_PYFRAMES = 22,	/* struct profile_pyframe[] (1.9) */
	SEC_STACK_SAMPLE_WAKERS = 23,	/* struct profile_waker[], one per STACK_SAMPLES record (1.10) */
};

/* One aggregated slot of the kernel's sample map (bpf/hsbpf.h: sample_key + sample_value).
 * In the file, SAMPLES holds it without map_ns (48 bytes, as before 1.6), and SAMPLE_MAPS
 * the map_ns of each when any is set. */
struct profile_sample {
	u32 pid;
	u32 flags;		/* HSBPF_KEY_* */
	u64 ip;
	u64 cgroup_id;
	u64 exec_ns;
	u64 map_ns;		/* mapping generation: the mappings of its image at or before this
				 * time (CLOCK_MONOTONIC), 0: the image's latest (1.6) */
	u64 count;
	u64 weight;
};

/* SAMPLES and STACK_SAMPLES records in the file: the slots without map_ns, which SAMPLE_MAPS
 * and STACK_SAMPLE_MAPS carry beside them (1.6), so that older readers still read them */
struct profile_sample_rec {
	u32 pid, flags;
	u64 ip, cgroup_id, exec_ns, count, weight;
};

struct profile_stack_sample_rec {
	u32 pid, flags;
	u64 cgroup_id, exec_ns;
	u32 user, kernel;
	u64 count, weight;
};

/* a sample's finer keys (bpf/hsbpf.h: struct sample_extra): 0 for what was not recorded */
struct profile_sample_key {
	u32 tid;
	u16 cpu;
	u16 snap;		/* record --memory --snapshot-every: the interval (allocations) or
				 * snapshot (in use) of the sample, 1...; 0: none (never written: the
				 * snapshot files are split by it) */
	u32 time;		/* time bucket: [time * time_bucket_ns, + time_bucket_ns) after
				 * time_origin_ns */
	u32 waker;		/* an off-CPU block's waker thread (record --wakers), 0: none or
				 * an interrupt on an idle CPU (1.9; 0 before) */
};

/* record --wakers: the task that woke an off-CPU block, beside its stack sample (the thread is
 * the sample key's waker); its stacks are references into the stack table as the sample's */
struct profile_waker {
	u32 pid;		/* its process (0: none known, or idle) */
	u32 user;		/* index in stacks + 1; 0: no user stack */
	u64 exec_ns;		/* its process image and mapping generation, as a sample's */
	u64 map_ns;
	u32 kernel;		/* index in stacks + 1; 0: no kernel stack (and no waker) */
	u32 pad;
};

/* a thread's name from time_ns on: at the start, when it was made, or renamed
 * (prctl(PR_SET_NAME), pthread_setname_np, an exec) */
struct profile_thread_comm {
	u32 pid;
	u32 tid;
	u64 time_ns;
	u32 comm;		/* string offset */
	u32 pad;
};

/* An executable mapping of a process, from the kernel's MMAP2 records or /proc/PID/maps */
struct profile_mapping {
	u32 pid;
	u32 path;		/* string offset */
	u64 time_ns;		/* CLOCK_MONOTONIC; 0 for mappings that predate the recording */
	u64 start;
	u64 len;
	u64 pgoff;
	u8 build_id[BUILD_ID_MAX];
	u8 build_id_size;
	u8 pad[3];
};

/* A process name, and with exec set, the start of a new process image */
struct profile_comm {
	u32 pid;
	u32 comm;		/* string offset */
	u64 time_ns;
	u32 exec;
	u32 pad;
};

/* A new process (not thread): it starts with its parent's image */
struct profile_fork {
	u32 pid;
	u32 ppid;
	u64 time_ns;
};

struct profile_ksym {
	u64 addr;
	u32 name;		/* string offset: "symbol" or "symbol [module]" */
	u32 pad;
};

struct profile_cgroup {
	u64 id;
	u32 path;		/* string offset, relative to the cgroup v2 mount */
	u32 pad;
};

/* a taken branch (kind 1, a = from, b = to) or a fall-through range (kind 2, a = first and b =
 * last instruction) seen in branch stacks, in a process image, with how often */
struct profile_lbr {
	u32 pid;
	u32 kind;
	u64 a, b;
	u64 exec_ns;
	u64 count;
};

/* a process in its own PID namespace: the PID it sees there */
struct profile_nspid {
	u32 pid;		/* host */
	u32 nspid;		/* innermost namespace */
};

/* A user frame (or a sample's ip) in a file, as (object, offset) rather than a process's address
 * (1.11, profile__share_stacks): the top nibble makes it non-canonical, as HSBPF_PY_FRAME's;
 * the object is the mapping of the pseudo-process PROFILE_OBJ_PID whose start is
 * PROFILE_OBJ_FRAME(object, 0), its len 2^PROFILE_OBJ_OFF_BITS and pgoff 0, so that a lookup of
 * the frame (profile__find_mapping) finds that mapping and ip - start + pgoff is the offset in
 * the file, as for any mapping. */
#define PROFILE_OBJ_TAG		0xd000000000000000ULL
#define PROFILE_OBJ_TAG_MASK	0xf000000000000000ULL
#define PROFILE_OBJ_OFF_BITS	36
#define PROFILE_OBJ_MAX		(1u << 24)
#define PROFILE_OBJ_PID		UINT32_MAX
#define PROFILE_OBJ_FRAME(obj, off) \
	(PROFILE_OBJ_TAG | (u64)(obj) << PROFILE_OBJ_OFF_BITS | (off))
#define PROFILE_IS_OBJ_FRAME(ip)	(((ip) & PROFILE_OBJ_TAG_MASK) == PROFILE_OBJ_TAG)
#define PROFILE_OBJ_INDEX(ip)	(((ip) & ~PROFILE_OBJ_TAG_MASK) >> PROFILE_OBJ_OFF_BITS)

/* One distinct call stack: frames[first, first + nr), the sampled frame first, then return
 * addresses. A user stack says how it ended (HSBPF_STACK_*, or PROFILE_STACK_LOST when the
 * kernel's stack map was full: the sample is kept, its frames are not). */
#define PROFILE_STACK_LOST	0xffff
struct profile_stack {
	u32 first;
	u32 nr;
	u16 end;
	u16 nr_fp;		/* frames found by frame pointer, for lack of a table */
	u32 pad;
};

/* samples with their stacks, per process image, cgroup, user stack and kernel stack */
struct profile_stack_sample {
	u32 pid;
	u32 flags;		/* HSBPF_KEY_* */
	u64 cgroup_id;
	u64 exec_ns;
	u64 map_ns;		/* as in profile_sample (1.6: the file's STACK_SAMPLE_MAPS) */
	u32 user;		/* index in stacks + 1; 0: no user stack */
	u32 kernel;		/* index in stacks + 1; 0: no kernel stack */
	u64 count;
	u64 weight;
};

/* a JIT function from a perf map file (/tmp/perf-PID.map): [start, start + size) in pid, the
 * map file's line number (a later line wins over an earlier one at the same address) */
struct profile_jitsym {
	u32 pid;
	u32 name;		/* string offset */
	u64 start;
	u32 size;
	u32 line;
	u64 time_ns;		/* CLOCK_MONOTONIC when the file was read */
};

/* a Python frame of pid's stacks (HSBPF_PY_KEY of its tagged value: code object and
 * instruction offset) named: its function (qualified name), file and line (0: unknown) */
struct profile_pyframe {
	u32 pid;
	u32 name;		/* string offset */
	u32 file;		/* string offset */
	u32 line;
	u64 frame;
};

struct profile_meta {
	char event[64];		/* as the user wrote it, e.g. "cpu-clock" */
	u32 event_type;		/* perf_event_attr.type */
	u64 event_config;
	u32 precise;
	u64 period;		/* the base period (ns for clocks, events otherwise) */
	u64 freq;		/* -F as asked, 0 for -c */
	char period_mode[16];	/* fixed, prime, random, prime-random */
	char unit[8];		/* "ns" or "events": the unit of weights */
	char target[1024];	/* "command: ARGS" (quoted as a shell would), "pid: ...", "all", "cgroup: ..." */
	char host[64];
	char kernel[64];
	u64 start_realtime_ns;
	u64 start_mono_ns;
	u64 duration_ns;
	u32 nr_cpus;
	char version[32];	/* hsbpf that wrote it */
	char call_graph[8];	/* "", "fp", "dwarf", "lbr" (format 1.3) */
	u32 max_frames;		/* user frames a stack could have */
	char sample_keys[32];	/* the finer keys recorded: "tid", "cpu", "time", comma-separated (1.4) */
	u64 time_bucket_ns;	/* with "time": a bucket's length (1.4) */
	u64 time_origin_ns;	/* ... and bucket 0's start, CLOCK_MONOTONIC */
	/* "rename": exec_ns tags were taken at the exec's rename, a moment before the kernel's
	 * COMM record that starts the image; "" (or absent): at or after it */
	char exec_tags[8];
	/* off-CPU time (1.7): "off" (blocked time only), "wall" (on-CPU samples and off-CPU
	 * time), "" (on-CPU samples only); the bounds of the blocks kept, in ns (0: none) */
	char offcpu[8];
	u64 min_block_ns;
	u64 max_block_ns;
	/* --switch-sample: the probability a block was followed with, its time weighed 1 / it;
	 * 0 (or absent): every block followed */
	double offcpu_sample;
	/* sampled allocations (1.8): the mean bytes between samples, 0 for none */
	u64 alloc_period;
	/* report's view of them (memory__select), never written; "all" for the four at once
	 * (memory__select_all), memory_first the one shown first */
	char memory_view[16];
	char memory_first[16];
};

struct profile_stats {
	u64 samples;		/* handler invocations */
	u64 filtered;		/* outside the target */
	u64 dropped_full;	/* sample map full */
	u64 rearm_lost;		/* random periods: re-arm requests lost */
	u64 exec_full;
	u64 pids_full;
	u64 sideband_lost;	/* mmap/comm/fork records the kernel could not deliver */
	u64 rearms;		/* random periods: re-arms done */
	u64 rearm_late;		/* ... whose token came too late to meet the drawn interval */
	u64 rearm_failed;	/* ... whose PERF_EVENT_IOC_PERIOD failed */
	u64 rearm_cpu_ns;	/* CPU time the re-arm threads took, all CPUs */
	u64 intervals;		/* random periods: measured intervals of the target ... */
	u64 interval_sum;
	u64 interval_min;
	u64 interval_max;
	double interval_sumsq;
	u64 interval_repeats;	/* consecutive equal intervals on one CPU */
	u64 interval_outside;	/* outside the promised window (rearm__in_window) */
	u64 intervals_armed;	/* ... that a re-arm aimed at: their error against the draw */
	u64 interval_err_sum;	/* sum of |measured - drawn| */
	u64 interval_err_max;
	u64 bpf_run_ns;		/* handler run time, with kernel.bpf_stats_enabled=1 */
	u64 bpf_run_cnt;
	/* call stacks (format 1.3) */
	u64 stack_samples;	/* samples whose stacks were collected */
	u64 stack_frames;	/* user frames unwound */
	u64 stack_fp_frames;	/* ... of them by frame pointer, for lack of a table */
	u64 stacks_full;	/* new stacks the stack map could not take (the samples kept) */
	u64 stack_keys_full;	/* samples the stack-sample map could not take (in the flat histogram only) */
	u64 kernel_stack_err;	/* kernel stacks bpf_get_stack could not take */
	u64 stack_ns;		/* with kernel.bpf_stats_enabled=1: the handler's time on stacks */
	u64 unwind_objects;	/* object files with an unwind table in the kernel */
	u64 unwind_objects_no_cfi;	/* ... without unwind information (frame pointers) */
	u64 unwind_objects_failed;	/* ... that could not be read */
	u64 unwind_objects_full;	/* ... that did not fit the kernel's tables (frame pointers) */
	u64 unwind_rows;
	u64 unwind_table_bytes;
	u64 unwind_build_ns;	/* time spent building and loading the tables */
	u64 unwind_map_full;	/* executable mappings the kernel's map could not take */
	/* JIT code (format 1.4) */
	u64 jit_maps;		/* perf map files read (of the processes kept, when not -a) */
	u64 jit_syms;		/* ... their symbols kept */
	u64 jit_malformed;	/* ... their lines that could not be read (skipped) */
	/* stacks unwound in user space from a copy, for lack of tables at sample time (1.5) */
	u64 stack_late;		/* samples the kernel sent */
	u64 stack_late_full;	/* ... it could not send (the ring full): as the kernel ended them */
	u64 stack_late_unwound;	/* ... unwound here */
	u64 stack_late_dropped;	/* ... past what is kept: their sampled pc alone */
	/* perf map files not trusted, or not read whole (1.6) */
	u64 jit_ignored;	/* owned by neither root nor the process's user, a link, not a file */
	u64 jit_capped;		/* read up to the bounds only (jitmap.h) */
	/* Python's frames (1.9, docs/python.md) */
	u64 py_samples;		/* samples with Python frames */
	u64 py_frames;		/* ... those frames */
	u64 py_cut;		/* ... whose chain was cut at HSBPF_PY_MAX_FRAMES */
	u64 py_bad;		/* ... cut at unreadable memory or a loop */
	u64 py_no_thread;	/* samples of a Python process whose thread state was not found */
	u64 py_codes_lost;	/* code objects the kernel had no room to announce */
	u64 py_unnamed;		/* Python frames of the stacks kept that have no name */
	u64 py_reused;		/* addresses whose frames were left unnamed: two code objects
				 * aggregated under one frame */
	u64 py_gens;		/* code objects at a reused address named apart (generation > 0) */
	/* off-CPU time (1.7, docs/off-cpu.md) */
	u64 offcpu_switches;	/* switch-outs of the target: stacks taken */
	u64 offcpu_blocks;	/* blocks counted */
	u64 offcpu_short;	/* left out: shorter than --min-block */
	u64 offcpu_long;	/* left out: longer than --max-block */
	u64 offcpu_no_storage;	/* switches missed: no task storage for the task (or, at the
				 * switch-in, none found: its block lost) */
	u64 offcpu_full;	/* blocks lost: the sample or stack-sample map was full */
	u64 offcpu_full_ns;	/* ... their time */
	u64 offcpu_open;	/* still off the CPU at the end: counted up to it */
	u64 offcpu_underway;	/* off the CPU at the start: counted from it when it ran again */
	u64 offcpu_underway_ns;	/* ... their time */
	u64 offcpu_asleep;	/* off the CPU from the start to the end: not counted */
	u64 offcpu_wakeups;	/* --wakers: wake-ups of the target's blocked tasks (1.10) */
	u64 offcpu_waker_lost;	/* ... whose waker's stacks were not kept (map full, late stack) */
	u64 offcpu_unwoken;	/* blocks (not preempted) whose wake-up was not seen */
	u64 offcpu_unsampled;	/* --switch-sample: blocks the draw left out */
	u64 offcpu_underway_early;	/* ... of offcpu_underway, ended before the start's walk met
					 * their task: found at their switch-in */
	/* --wakers, -p or a command: processes outside the target that woke its blocks, their
	 * mappings and name read while they ran (each image of theirs once), gone before (exited
	 * or exec'd before the read: their user frames stay [unknown]), not announced (read at
	 * the end, as before) */
	u64 offcpu_wakers_read;
	u64 offcpu_wakers_gone;
	u64 offcpu_wakers_unannounced;
	/* sampled allocations (1.8, docs/memory.md) */
	u64 mem_calls;		/* allocation calls of the target */
	u64 mem_bytes;		/* ... the bytes they asked for, exactly */
	u64 mem_sampled;	/* sampled allocations */
	u64 mem_freed;		/* ... freed while recording */
	u64 mem_failed;		/* sampled calls that returned no memory */
	u64 mem_live_full;	/* lost: the address map was full (never counted in use) */
	u64 mem_full;		/* lost: the sample maps were full */
	u64 mem_no_storage;	/* calls missed: no task storage */
	u64 mem_inuse_end;	/* sampled allocations live at the end */
	u64 mem_inuse_exited;	/* ... of processes that had exited (leaked at their exit) */
};

struct strtab {
	char *buf;
	size_t len, cap;
	struct hashidx idx;	/* the offset of each distinct string, for deduplication */
};

struct profile {
	struct profile_meta meta;
	struct profile_stats stats;
	struct profile_sample *samples;
	size_t nr_samples, cap_samples;
	/* report's time view of a --switch-sample profile (offcpu__count_time): each sample's
	 * blocks, before its count became time; NULL otherwise, never written */
	u64 *offcpu_blocks;
	struct profile_mapping *mappings;
	size_t nr_mappings, cap_mappings;
	struct profile_comm *comms;
	size_t nr_comms, cap_comms;
	struct profile_fork *forks;
	size_t nr_forks, cap_forks;
	struct profile_ksym *ksyms;
	size_t nr_ksyms, cap_ksyms;
	struct profile_cgroup *cgroups;
	size_t nr_cgroups, cap_cgroups;
	struct profile_lbr *lbr;
	size_t nr_lbr, cap_lbr;
	struct profile_nspid *nspids;
	size_t nr_nspids, cap_nspids;
	struct profile_stack *stacks;
	size_t nr_stacks, cap_stacks;
	u64 *frames;
	size_t nr_frames, cap_frames;
	struct profile_stack_sample *stack_samples;
	size_t nr_stack_samples, cap_stack_samples;
	/* format 1.4: parallel to samples and stack_samples when any key is set (else empty) */
	struct profile_sample_key *sample_keys;
	size_t nr_sample_keys, cap_sample_keys;
	struct profile_sample_key *stack_sample_keys;
	size_t nr_stack_sample_keys, cap_stack_sample_keys;
	/* format 1.9: parallel to stack_samples when any block has a waker (else empty) */
	struct profile_waker *stack_sample_wakers;
	size_t nr_stack_sample_wakers, cap_stack_sample_wakers;
	struct profile_thread_comm *thread_comms;
	size_t nr_thread_comms, cap_thread_comms;
	struct profile_jitsym *jitsyms;		/* sorted by (pid, start, line) */
	size_t nr_jitsyms, cap_jitsyms;
	struct profile_pyframe *pyframes;	/* sorted by (pid, frame) */
	size_t nr_pyframes, cap_pyframes;
	struct strtab strs;
	/* in memory only: a report's filters took samples out (sample_filter__apply), so the
	 * stats that cannot follow them are the whole profile's and say so */
	bool filtered;
	u64 filtered_out;	/* ... the samples taken out */
};

struct profile *profile__new(void);
void profile__free(struct profile *p);

/* string table: add returns the offset (deduplicated), or -ENOMEM */
s64 profile__intern(struct profile *p, const char *s);
const char *profile__str(const struct profile *p, u32 off);
/* drop the strings nothing refers to any more (those of the processes a recording did not
 * keep, of JIT symbols read again); -ENOMEM leaves the profile as it was */
int profile__compact_strings(struct profile *p);

int profile__add_sample(struct profile *p, const struct profile_sample *s);
/* the same with its finer keys (k NULL or all 0: none) */
int profile__add_sample_keyed(struct profile *p, const struct profile_sample *s,
			      const struct profile_sample_key *k);
int profile__add_stack_sample_keyed(struct profile *p, const struct profile_stack_sample *s,
				    const struct profile_sample_key *k);
/* the finer keys of samples[i] and stack_samples[i] (all 0 when none were recorded) */
const struct profile_sample_key *profile__sample_key(const struct profile *p, size_t i);
const struct profile_sample_key *profile__stack_sample_key(const struct profile *p, size_t i);
/* a stack sample with its waker (record --wakers): the key's waker is its thread; 0 or -ENOMEM */
int profile__add_stack_sample_waker(struct profile *p, const struct profile_stack_sample *s,
				    const struct profile_sample_key *k, const struct profile_waker *w);
/* the waker of stack_samples[i], NULL for none */
const struct profile_waker *profile__stack_sample_waker(const struct profile *p, size_t i);
int profile__add_thread_comm(struct profile *p, u32 pid, u32 tid, u64 time_ns, const char *comm);
/* the name thread tid of pid had at time_ns (its latest at or before, else its first), or
 * NULL when none was recorded; needs profile__finish */
const char *profile__thread_name(const struct profile *p, u32 pid, u32 tid, u64 time_ns);
/* the latest name of thread tid in whichever process had it, else its process's from a block
 * it woke, or NULL (a waker's: its key has no process) */
const char *profile__tid_name(const struct profile *p, u32 tid);
/* whether a finer key was recorded: "tid", "cpu" or "time" */
bool profile__has_key(const struct profile *p, const char *key);
int profile__add_mapping(struct profile *p, u32 pid, u64 time_ns, u64 start, u64 len,
			 u64 pgoff, const char *path, const u8 *build_id, u8 build_id_size);
int profile__add_comm(struct profile *p, u32 pid, u64 time_ns, const char *comm, bool exec);
int profile__add_fork(struct profile *p, u32 pid, u32 ppid, u64 time_ns);
int profile__add_ksym(struct profile *p, u64 addr, const char *name);
int profile__add_cgroup(struct profile *p, u64 id, const char *path);
int profile__add_lbr(struct profile *p, const struct profile_lbr *l);
int profile__add_nspid(struct profile *p, u32 pid, u32 nspid);
int profile__add_jitsym(struct profile *p, u32 pid, u64 start, u32 size, const char *name,
			u32 line, u64 time_ns);
/* forget pid's JIT symbols (a newer read of its map file replaces them) */
void profile__drop_jitsyms(struct profile *p, u32 pid);
/* sorts the JIT symbols alone (a recording's other tables keep their order until the end:
 * the unwinder and the namespace scan follow them by index) */
void profile__sort_jitsyms(struct profile *p);
/* name a Python frame of pid (appended: profile__finish or profile__sort_pyframes sorts them) */
int profile__add_pyframe(struct profile *p, u32 pid, u64 frame, const char *name, const char *file,
			 u32 line);
/* sorts the Python frames' names alone (profile__find_pyframe searches them) */
void profile__sort_pyframes(struct profile *p);
/* the name of pid's Python frame (tagged, with or without its entry bit), or NULL */
const struct profile_pyframe *profile__find_pyframe(const struct profile *p, u32 pid, u64 frame);
/* the JIT symbol of pid holding ip (the latest line among overlapping ones), or NULL */
const struct profile_jitsym *profile__find_jitsym(const struct profile *p, u32 pid, u64 ip);
/* a distinct stack (the caller deduplicates): its index, or -ENOMEM */
s64 profile__add_stack(struct profile *p, const u64 *ips, u32 nr, u16 end, u16 nr_fp);
int profile__add_stack_sample(struct profile *p, const struct profile_stack_sample *s);
/* the stack of a stack sample's reference (user or kernel), NULL for none */
const struct profile_stack *profile__stack(const struct profile *p, u32 ref);
static inline const u64 *profile__frames(const struct profile *p, const struct profile_stack *st)
{
	return p->frames + st->first;
}
/* the PID pid has inside its own namespace, or 0 when it lives in the host's */
u32 profile__nspid(const struct profile *p, u32 pid);

/* Process images: the mappings a pid had between two execs; a forked child starts with its
 * parent's image. The lookups search the tables profile__finish sorts. */
/* the mapping of (pid, exec_ns) holding ip, or NULL; with map_ns (the sample's mapping
 * generation, 0: none), the newest holding ip at or before map_ns */
const struct profile_mapping *profile__find_mapping(const struct profile *p, u32 pid, u64 exec_ns,
						 u64 map_ns, u64 ip);
/* the mapping of ip in pid at time t (perf's clock, as the mappings' times), inherited
 * across forks as for find_mapping */
const struct profile_mapping *profile__mapping_at(const struct profile *p, u32 pid, u64 t, u64 ip);
/* the command name of (pid, exec_ns): "swapper" for pid 0, "[unknown]" when none was recorded */
const char *profile__comm(const struct profile *p, u32 pid, u64 exec_ns);

/* user frames and samples' ips in files as (object, offset), each distinct stack once, the
 * objects added as mappings of PROFILE_OBJ_PID and the processes' file mappings dropped
 * (objframes.c); a program's stacks are then shared by its processes. 0 or -ENOMEM (the
 * profile as it was) */
int profile__share_stacks(struct profile *p);
/* the samples and the stack samples (with their keys and wakers) in the order of their
 * processes and images, (pid, exec_ns), else as they were: what a machine's many processes
 * need to pack small (format 2.0's columns). 0 or -ENOMEM */
int profile__sort_by_process(struct profile *p);

/* keep the process history (mappings, comms, forks) of these pids, of the pids that have
 * samples, and of their fork ancestors; drop the rest, and leave the tables sorted
 * (profile__finish). 0 or -ENOMEM (nothing dropped) */
int profile__keep_pids(struct profile *p, const u32 *pids, size_t nr_pids);
/* sorts the tables the readers search (ksyms by address, per-pid events by time) */
void profile__finish(struct profile *p);
/* the same but for the kernel symbols, which have not changed since the last sort (a live
 * session's sideband grows by processes, mostly: its 200,000 kernel symbols are read once) */
void profile__finish_processes(struct profile *p);

u64 profile__total_samples(const struct profile *p);
u64 profile__total_weight(const struct profile *p);

/* atomic write: temporary file in the same folder, mode 0600, then rename; a device or a
 * FIFO is written in place */
int profile__write(struct profile *p, const char *path);
/* the same to an outfile opened earlier (record opens it before sampling); commits it, or
 * discards it on failure */
struct outfile;
int profile__write_out(struct profile *p, struct outfile *o);
/* validates everything; reports what is wrong once and returns -EINVAL, -ENOENT, ... */
int profile__read(const char *path, struct profile **out);
/* the same, on a buffer (the fuzz target and the corruption tests use it) */
int profile__parse(const void *buf, size_t size, const char *name, struct profile **out);

#endif /* HSBPF_PROFILE_H */
