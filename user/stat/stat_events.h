/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The events hsbpf stat counts: the lists of -e, with groups written {a,b} that the PMU
 * schedules together, or perf stat's default set. */
#ifndef HSBPF_STAT_EVENTS_H
#define HSBPF_STAT_EVENTS_H

#include "record/event.h"

/* more would not fit on any PMU at once, and bounds what a run keeps per event */
#define STAT_MAX_EVENTS 64

struct stat_event {
	struct event_spec spec;
	int group;		/* index of its group: a lone event is a group of one */
	bool leader;		/* the first of its group */
};

struct stat_events {
	struct stat_event *v;
	int n;
	int nr_groups;
	size_t cap;
};

/* add the events of one -e argument ("task-clock,{cycles,instructions}:u"): a group's
 * modifiers apply to each of its events; 0, or -EINVAL after saying what is wrong */
int stat_events__parse(struct stat_events *evs, const char *list);
/* perf stat's default set: task-clock, context-switches, cpu-migrations, page-faults,
 * cycles, instructions, branches, branch-misses */
int stat_events__add_default(struct stat_events *evs);
/* the index of the first event of that type and config with the same :u/:k, or -1 */
int stat_events__find(const struct stat_events *evs, u32 type, u64 config,
		      const struct event_spec *like);
void stat_events__free(struct stat_events *evs);

#endif /* HSBPF_STAT_EVENTS_H */
