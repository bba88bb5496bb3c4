/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The kernel side of a recording: loads the BPF programs, opens one sampling event per CPU,
 * re-arms randomized periods, and drains the maps into a profile. The only module that
 * includes a skeleton or touches a map fd. */
#ifndef HSBPF_SAMPLER_H
#define HSBPF_SAMPLER_H

#include "record/event.h"
#include "hsbpf.h"
#include "lib/period.h"
#include "profile/profile.h"

/* What record and top ask of the sampler as the user said it: a session passes it through
 * whole (struct session_opts embeds it as struct sampler_opts does: -fms-extensions) */
/* sampler_params.offcpu (user/record/offcpu.c: the options and the report's view) */
#define OFFCPU_NONE	0
#define OFFCPU_ONLY	1	/* --off-cpu: blocked time only */
#define OFFCPU_WALL	2	/* --wall: on-CPU samples and off-CPU time */

struct sampler_params {
	enum period_mode mode;
	u32 map_entries;	/* sample map slots; 0 for the default */
	u64 seed;		/* random periods */
	bool live;		/* read by intervals (sampler__take_interval), as top does */
	u64 live_samples;	/* live: the most samples one interval can take, 0 if not known;
				 * without map_entries the maps are sized for it (sampler.c) */
	bool stack_intervals;	/* live with stacks: the stacks drained by interval too
				 * (sampler__take_stacks), not kept for the whole run (the agent) */
	bool mappings_by_vma;	/* dwarf: the kernel finds every mapping from the sampled task's vma
				 * and its file's table (no per-process mappings from user space, no
				 * parent links at fork): the agent, whose cost is per process */
	u32 call_graph;		/* HSBPF_CALL_GRAPH_*, 0 for none (user/record/call_graph.h): stacks with
				 * each sample */
	u32 max_frames;		/* user frames per stack, 0 for the mode's default */
	/* finer sample keys (bpf/hsbpf.h: struct sample_extra) */
	bool key_tid;
	bool key_cpu;
	bool no_inherit;	/* record --no-inherit: the targets' main threads, no children */
	u64 time_bucket_ns;	/* 0: none */
	/* off-CPU time (bpf/offcpu.bpf.h, docs/off-cpu.md) */
	u32 offcpu;		/* OFFCPU_*: with ONLY, no sampling event */
	u64 min_block_ns;	/* blocks shorter are left out */
	u64 max_block_ns;	/* ... and longer, 0 for no bound */
	double switch_sample;	/* --switch-sample: the probability a block is followed, 0 for 1 */
	bool wakers;		/* --wakers: each block joined to the stacks of the task that woke it */
	/* sampled allocations (bpf/memory.bpf.h, docs/memory.md): the mean bytes between two
	 * samples, 0 for none; with it, no sampling event */
	u64 alloc_period;
	u32 python_frames;	/* --python-frames: enum hsbpf_py_mode (0: interleave) */
};

struct sampler_opts {
	union {
		struct sampler_params params;
		struct sampler_params;
	};
	struct event_spec ev;
	u64 period;		/* base period; 0 with freq */
	u64 freq;		/* -F for hardware events (clocks are turned into periods) */
	const int *cpus;
	int nr_cpus;
	bool filter_pids;	/* count only pids added with sampler__add_pid */
	int cgroup_fd;		/* >= 0: events count only inside this cgroup (in the kernel) */
	u64 cgroup_id;		/* ... and its id */
	u32 unwind_rows;	/* unwind table rows, 0 for HSBPF_UNWIND_ROWS */
	bool unwind_probe;	/* load the unwinder's uprobe (tests) */
	u64 time_origin_ns;	/* with time_bucket_ns: CLOCK_MONOTONIC of bucket 0 */
};


struct sampler;

/* open, configure and load; NULL with errno set, after reporting why */
struct sampler *sampler__open(const struct sampler_opts *opts);
/* open the per-CPU events and attach; sampling starts here */
int sampler__attach(struct sampler *s);
/* ARMED pids start counting at their next exec; ACTIVE ones at once */
int sampler__add_pid(struct sampler *s, u32 pid, bool armed);
/* stop the events (their programs stay attached until destroy) */
void sampler__stop(struct sampler *s);
/* copy the sample map and the counters into p */
int sampler__collect(struct sampler *s, struct profile *p);
/* every slot of the sample maps, in batches (fn's non-zero return stops the walk and is
 * returned) */
typedef int (*sampler_sample_fn)(void *ctx, const struct profile_sample *s,
				 const struct profile_sample_key *k);
/* live reads (opts.live): start counting into the other map, wait until no handler still
 * counts into this one, then read and empty it: each slot holds what its key gained since
 * the last call */
int sampler__take_interval(struct sampler *s, sampler_sample_fn fn, void *ctx);
/* the kernel counters so far (samples, filtered, dropped, ...), as totals */
int sampler__read_counters(struct sampler *s, struct profile_stats *st);
/* how many slots a sample map has */
u32 sampler__capacity(const struct sampler *s);
void sampler__destroy(struct sampler *s);

/* the sample handler's run-time statistics (kernel.bpf_stats_enabled=1); -ENODATA if off */
int sampler__prog_stats(struct sampler *s, u64 *run_ns, u64 *run_cnt);
/* turn those statistics on for as long as the returned fd is open (top shows the handler's
 * cost); -errno when the kernel refuses */
int sampler__enable_run_stats(void);

/* Call stacks: what the kernel's unwinder follows (user/record/unwind.c decides what goes in) */
struct unwind_table;
/* an object's rows and pages into the global arrays; -ENOSPC when they are full */
int sampler__unwind_add_object(struct sampler *s, const struct unwind_table *t, u32 *obj);
/* an object's table unloaded: its slots are reused by later tables after a grace period
 * (the inode entries naming it must be gone first: sampler__unwind_forget_inode) */
int sampler__unwind_remove_object(struct sampler *s, u32 obj);
/* the slots the tables take: objects, rows and pages (the arrays' occupancy) */
void sampler__unwind_usage(const struct sampler *s, u32 *objs, u32 *rows, u32 *pages);
/* the object array's BPF map id (tests read it back), 0 if unknown */
u32 sampler__unwind_objs_map_id(const struct sampler *s);
int sampler__unwind_map(struct sampler *s, const struct unwind_map_key *k, const struct unwind_mapping *m);
int sampler__unwind_unmap(struct sampler *s, const struct unwind_map_key *k);
/* an object's table by its file's identity, for mappings not in the trie yet */
int sampler__unwind_inode(struct sampler *s, const struct unwind_inode_key *k, const struct unwind_inode *v);
int sampler__unwind_forget_inode(struct sampler *s, const struct unwind_inode_key *k);
/* the kernel finds every mapping from the task's vma (sampler_params.mappings_by_vma) */
bool sampler__maps_by_vma(const struct sampler *s);
/* a forked child's mappings are now its own */
void sampler__unwind_forget_parent(struct sampler *s, u32 pid);
/* exec tags are taken at the exec's rename, a moment before the kernel's COMM record of the
 * exec (profile__settle_exec_tags moves them onto it); false: after it, at sched_process_exec */
bool sampler__exec_tags_before_comm(const struct sampler *s);
/* when pid's current image was exec'd (CLOCK_MONOTONIC), 0 if before the recording; its low
 * 32 bits are the tag the kernel keys the image's mappings with */
u64 sampler__image_exec_ns(struct sampler *s, u32 pid);
/* every stack sample (fn's non-zero return stops the walk), and the stacks by hash */
typedef int (*sampler_stack_fn)(void *ctx, const struct stack_key *k, const struct sample_value *v);
int sampler__read_stack_samples(struct sampler *s, sampler_stack_fn fn, void *ctx);
int sampler__stack(struct sampler *s, u64 hash, struct stack_frames *out);
/* stack_intervals: after sampler__take_interval, every stack sample of the interval it ended,
 * taken out of the kernel (fn as above), then the interval's stacks by hash while
 * sampler__end_stacks has not emptied their maps. 0 or -errno (said) */
int sampler__take_stacks(struct sampler *s, sampler_stack_fn fn, void *ctx);
int sampler__interval_stack(struct sampler *s, u64 hash, struct stack_frames *out);
int sampler__end_stacks(struct sampler *s);
/* the entries in the stack maps now (both generations'), for bounds and tests */
u64 sampler__stack_occupancy(struct sampler *s);
/* the stacks so far into p, replacing p's (top); -ENOENT without call graphs */
int sampler__collect_stacks(struct sampler *s, struct profile *p);
int sampler__read_stack_counters(struct sampler *s, u64 out[HSBPF_STACK_STAT_NR]);
/* the samples the kernel sent to be unwound in user space, each passed to fn (whose non-zero
 * return stops) as l, and the off-CPU blocks' times that follow their copies as b (one of the
 * two is NULL); 0 without dwarf call graphs */
typedef int (*sampler_late_fn)(void *ctx, const struct late_stack *l, const struct late_block *b);
int sampler__consume_late(struct sampler *s, sampler_late_fn fn, void *ctx);
/* a Python process image the kernel's unwinder reads (NULL: no longer) */
int sampler__py_proc(struct sampler *s, u32 pid, u32 tag, const struct hsbpf_py_proc *v);
/* the pids of the processes the Python unwinder reads now (py_procs' keys), sorted and unique:
 * *pids malloc'd (NULL when none), 0 or -ENOMEM */
int sampler__py_pids(struct sampler *s, u32 **pids, size_t *nr);
/* the code objects the kernel saw first since the last call, each to fn */
typedef int (*sampler_py_code_fn)(void *ctx, const struct hsbpf_py_code_event *e);
int sampler__consume_py_codes(struct sampler *s, sampler_py_code_fn fn, void *ctx);
/* --wakers with a -p or command target: the processes outside it seen waking its blocks for
 * the first time in an image since the last call, each to fn with its image's tag
 * (waker_id.exec_ns) and name; 0 otherwise. The ring's epoll fd (-1 without it): readable when one is
 * announced */
typedef int (*sampler_waker_fn)(void *ctx, const struct waker_news *n);
int sampler__consume_waker_news(struct sampler *s, sampler_waker_fn fn, void *ctx);
int sampler__waker_news_fd(struct sampler *s);
/* the image tag the kernel holds now for an outside waker: 0, or -ENOENT when it has none (its
 * process exec'd or a new one has its pid since) */
int sampler__waker_tag(struct sampler *s, u32 pid, u64 *tag);
/* tests: the unwinder at an instruction (a uprobe at file_off of path), and what it found */
struct bpf_link;
int sampler__attach_unwind_probe(struct sampler *s, const char *path, u64 file_off, struct bpf_link **link);
int sampler__probe_stack(struct sampler *s, u64 ip, struct stack_frames *out);

/* the off-CPU counters so far (HSBPF_OFFCPU_*), as totals */
int sampler__read_offcpu_counters(struct sampler *s, u64 out[HSBPF_OFFCPU_STAT_NR]);
/* CLOCK_MONOTONIC when off-CPU time began to be followed (blocks under way count from it), 0
 * without off-CPU time */
u64 sampler__offcpu_start(const struct sampler *s);

/* the allocator's probes on libc's malloc family, for process pid (-1: all) */
int sampler__attach_memory(struct sampler *s, const char *libc, int pid);
/* the sampled allocations live now into the sample maps, as in use (HSBPF_MEM_INUSE), keyed by
 * the interval ending (sample_extra.snap); then the next interval begins: allocations counted
 * from now on carry its number. The first interval is 1 after the first call of
 * sampler__memory_intervals (0 without: one interval, the recording). Any time while
 * recording, as often as wanted (each call adds the live set's slots once more); the end's
 * counters (mem_inuse_end) are the final collect's alone. The interval now ending into *snap;
 * 0, or -errno after saying so */
int sampler__memory_snapshot(struct sampler *s, u32 *snap);
/* numbered intervals from now on: the first is 1 (call before attaching, for the first to be
 * the recording's start) */
void sampler__memory_intervals(struct sampler *s);

/* top --memory: every sampled allocation not freed yet, fn(ctx, its address, what it stands for);
 * fn returns 1 to forget it (its process has exited: its live set is dropped), 0 to keep it,
 * -errno to stop the walk. 0 or -errno (said) */
typedef int (*sampler_alloc_fn)(void *ctx, const struct mem_addr *a, const struct mem_live *v);
int sampler__walk_live_allocs(struct sampler *s, sampler_alloc_fn fn, void *ctx);
/* the allocator probes' counters so far (HSBPF_MEM_*), as totals: 0 or -errno (said) */
int sampler__read_memory_counters(struct sampler *s, u64 c[HSBPF_MEM_STAT_NR]);

/* load every BPF program in every configuration through the verifier; 0 if all pass */
int sampler__verify_all(void);

/* the floor for benchmarks: an empty program on the same per-CPU events */
struct sampler *sampler__open_empty(const struct sampler_opts *opts);

#endif /* HSBPF_SAMPLER_H */
