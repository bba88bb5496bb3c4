/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* One counting run (hsbpf stat): the target (a command started here, processes, the machine,
 * cgroups, every cgroup), its counters opened and enabled, read at intervals until the
 * target ends or a signal comes, and the counts gathered by set: the whole target, or one
 * set per cgroup. */
#ifndef HSBPF_STAT_H
#define HSBPF_STAT_H

#include <signal.h>
#include <sys/resource.h>
#include "stat/stat_cgroup.h"
#include "stat/stat_counters.h"
#include "stat/stat_events.h"
#include "stat/stat_math.h"

struct stat_opts {
	const struct stat_events *events;
	bool all;			/* -a */
	const char *pids;		/* -p list */
	const char *const *cgroups;	/* --cgroup, each with its descendants */
	int nr_cgroups;
	bool per_cgroup;		/* --per-cgroup: every cgroup of the machine on its own */
	bool cgroup_events;		/* --cgroup by perf's cgroup events instead of BPF */
	char **argv;			/* a command: the target, or what times the others */
	u64 interval_ns;		/* -I; 0 for none */
	u32 map_entries;		/* per-cgroup map slots; 0 for the default */
	/* a count of ending signals, bumped by the caller's handler */
	const volatile sig_atomic_t *interrupts;
};

/* reads a second while hardware counters may be multiplexed: enough reads for the spread of
 * their rates (the extrapolation's interval) at a cost of a read(2) per counter */
#define STAT_TICK_NS 100000000ull

enum stat_set_kind {
	STAT_SET_TARGET,	/* the whole target */
	STAT_SET_CGROUP,	/* one cgroup (--cgroup: with its descendants) */
	STAT_SET_IDLE,		/* --per-cgroup: the idle tasks */
	STAT_SET_UNATTRIBUTED,	/* counted in the kernel, cgroup not known (stat_cgroup.h) */
	STAT_SET_TOTAL,		/* --per-cgroup: the same counters read whole, as -a would */
};

/* the counts of one set over a run, event by event */
struct stat_set {
	enum stat_set_kind kind;
	u64 id;				/* cgroup id */
	char *name;			/* cgroup path below the mount ("/" for the root), or NULL */
	struct stat_acc *acc;		/* [nr events]: the run so far */
	struct stat_reading *last;	/* [nr events]: cumulative at the last read */
	struct stat_reading *iv;	/* [nr events]: the current -I interval */
};

struct stat_run {
	int nr_events;
	enum stat_counter_status status[STAT_MAX_EVENTS];
	u64 elapsed_ns;
	struct stat_set *sets;
	size_t nr_sets;
	int child_status;		/* the command's wait status, -1 if none */
	bool command_stopped;		/* stat ended it (a signal): its status is not its own */
	bool command_killed;		/* stopped by a signal, it needed SIGKILL */
	bool has_rusage;
	struct rusage rusage;		/* the command's, and its reaped children's */
	bool has_bpf_stats;
	struct stat_cgroup_stats bpf;	/* per-cgroup counting's own statistics */
	u64 bpf_run_ns, bpf_run_cnt;	/* its switch program's time (kernel.bpf_stats_enabled) */
};

/* after each -I interval: the sets' iv hold what it counted; t_ns is its end, since the start */
typedef int (*stat_interval_fn)(void *ctx, const struct stat_run *run, u64 t_ns, u64 len_ns);

/* 0 when the options make sense together; -EINVAL after saying why */
int stat_opts__check(const struct stat_opts *o);
/* one run from opening to the last read: 0, or -errno after saying why (a command that
 * cannot be started, a cgroup that does not exist, a counter that cannot be opened) */
int stat__run(const struct stat_opts *o, stat_interval_fn fn, void *ctx, struct stat_run *run);
void stat_run__free(struct stat_run *run);

#endif /* HSBPF_STAT_H */
