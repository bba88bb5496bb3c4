/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The counting perf events of hsbpf stat: each event (each group together) opened on every
 * task, CPU, or cgroup and CPU of the target; enabled, disabled and read as sums. An event
 * the machine cannot count is marked not supported, and the others go on. */
#ifndef HSBPF_STAT_COUNTERS_H
#define HSBPF_STAT_COUNTERS_H

#include <sys/types.h>
#include "stat/stat_events.h"
#include "stat/stat_math.h"

struct stat_counters_opts {
	const struct stat_events *events;
	/* per task: these threads, and (inherited) every task they start */
	const pid_t *tids;
	int nr_tids;
	bool enable_on_exec;	/* a held command: counting starts at its exec */
	/* or per CPU; with cgroup_fds, once per cgroup on each CPU (perf's cgroup events) */
	const int *cpus;
	int nr_cpus;
	const int *cgroup_fds;
	int nr_cgroups;
};

enum stat_counter_status {
	STAT_COUNTER_OK,
	STAT_COUNTER_NOT_SUPPORTED,	/* the kernel or the PMU does not have it */
};

struct stat_counters;

/* open every event on every unit of the target, disabled; NULL with errno set after saying
 * why (an event that is not supported is not an error: see stat_counters__status) */
struct stat_counters *stat_counters__open(const struct stat_counters_opts *opts);
enum stat_counter_status stat_counters__status(const struct stat_counters *c, int event);
/* how many events are counted (supported) */
int stat_counters__nr_ok(const struct stat_counters *c);
int stat_counters__enable(struct stat_counters *c);
int stat_counters__disable(struct stat_counters *c);
/* each event's reading now, summed over the units of cgroup (0 without cgroups):
 * out[nr events]; 0 or -errno after saying which read failed */
int stat_counters__read(struct stat_counters *c, int cgroup, struct stat_reading *out);
/* the fd of event on the i-th CPU (per-CPU counters without cgroups), -1 if not open */
int stat_counters__cpu_fd(const struct stat_counters *c, int event, int i);
void stat_counters__close(struct stat_counters *c);

#endif /* HSBPF_STAT_COUNTERS_H */
