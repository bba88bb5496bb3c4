/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Counting per cgroup in the kernel (hsbpf stat --per-cgroup, --cgroup): loads
 * bpf/stat_cgroup.bpf.c on the per-CPU counters it is given, attaches it to the context
 * switches, and reads what each cgroup gained. The only module that includes that skeleton
 * or touches its maps, as sampler.c is for the sampling programs. */
#ifndef HSBPF_STAT_CGROUP_H
#define HSBPF_STAT_CGROUP_H

#include "stat/stat_math.h"

struct stat_cgroup_opts {
	int nr_events;		/* at most STAT_CGROUP_MAX_EVENTS */
	const int *cpus;
	int nr_cpus;
	const int *fds;		/* fds[e * nr_cpus + i]: counter e on cpus[i], per CPU */
	u32 switch_events;	/* bit e: counter e counts context switches in kernel mode */
	/* --cgroup: count these cgroups, each with its descendants; none: each cgroup on its
	 * own (--per-cgroup), and the idle tasks apart */
	const u64 *watched;
	int nr_watched;
	u32 max_entries;	/* (cgroup, event) slots; 0 for the default */
};

#define STAT_CGROUP_MAX_EVENTS 16
#define STAT_CGROUP_IDLE 0	/* the cgroup id given to the idle tasks' counts */
/* the cgroup id given to counts whose cgroup is not known: the kernel does not run the
 * program for every context switch (a few in a thousand are not seen), and where one was
 * missed between two cgroups, what the counters gained in that stretch belongs to one of
 * them, or to a task moved to another cgroup while it ran */
#define STAT_CGROUP_UNATTRIBUTED (~0ULL)

struct stat_cgroup;

/* open, configure and load; NULL with errno set after saying why */
struct stat_cgroup *stat_cgroup__open(const struct stat_cgroup_opts *opts);
/* follow the context switches (and the tasks that move themselves to another cgroup) from
 * now on; each CPU's counts so far are the running task's */
int stat_cgroup__attach(struct stat_cgroup *s);
/* the counters are about to stop: the switches from now on are not theirs */
void stat_cgroup__stop(struct stat_cgroup *s);
/* have each CPU give what its counters gained since their last read to the task running
 * there, so that a read of the map is complete up to now */
int stat_cgroup__flush(struct stat_cgroup *s);
/* every (cgroup, event) the map holds, summed over the CPUs: what it gained since attach */
typedef int (*stat_cgroup_fn)(void *ctx, u64 cgroup_id, int event, const struct stat_reading *r);
int stat_cgroup__read(struct stat_cgroup *s, stat_cgroup_fn fn, void *ctx);

struct stat_cgroup_stats {
	u64 switches;		/* context switches seen */
	u64 reads;		/* that changed cgroup, and read the counters */
	u64 unsure;		/* reads whose counts went to the unattributed row */
	u64 flushes;
	u64 read_errors;
	u64 map_full;		/* (cgroup, event) slots that did not fit: their counts lost */
};

int stat_cgroup__stats(struct stat_cgroup *s, struct stat_cgroup_stats *st);
/* the switch program's run time (kernel.bpf_stats_enabled=1), -ENODATA when off */
int stat_cgroup__prog_stats(struct stat_cgroup *s, u64 *run_ns, u64 *run_cnt);
void stat_cgroup__destroy(struct stat_cgroup *s);

/* load the program in each configuration through the verifier; 0 if all pass */
int stat_cgroup__verify(void);

#endif /* HSBPF_STAT_CGROUP_H */
