/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What hsbpf stat shows, before it is formatted: one row per event of a set (the whole
 * target, or a cgroup) for a run, an interval or repeated runs, each with its value, the
 * interval of that value, and the derived metric beside it. */
#ifndef HSBPF_STAT_REPORT_H
#define HSBPF_STAT_REPORT_H

#include "stat/stat.h"

enum stat_row_status {
	STAT_ROW_COUNTED,
	STAT_ROW_NOT_SUPPORTED,		/* the machine cannot count it */
	STAT_ROW_NOT_COUNTED,		/* enabled, but never on the PMU (never scheduled) */
};

struct stat_row {
	const struct stat_event *event;	/* NULL: the elapsed time */
	enum stat_set_kind kind;
	const char *cgroup;		/* the set's cgroup path (raw: escape it to print) */
	u64 cgroup_id;
	double time_s;			/* -I: the interval's end, s since the start; < 0 otherwise */
	enum stat_row_status status;
	/* the value (ns for clocks; s for the elapsed time); over repeated runs the mean, and
	 * v.lo..v.hi the 95% interval of the mean */
	struct stat_value v;
	struct stat_reading raw;	/* over repeated runs: their means */
	u32 runs;
	double stddev;			/* of the value between runs; 0 for one */
	struct stat_metric metric;
};

/* the rows of one set, rows[nr events]: its readings r (a run's totals or one interval's),
 * the run's accumulators pooled (for the spread of the rates), and the time they cover
 * (for utilisation); status says which events could not be counted */
void stat_report__rows(const struct stat_events *evs, const enum stat_counter_status *status,
		       const struct stat_reading *r, const struct stat_acc *pooled, u64 elapsed_ns,
		       bool no_scale, struct stat_row *rows);

/* the sets of a run in the order to show them: --cgroup's as given, --per-cgroup's by path
 * with the idle tasks and the total last; order[run->nr_sets] */
void stat_report__order(const struct stat_run *run, bool by_name, size_t *order);

/* Rows over repeated runs (-r), set by set (a set is its kind and cgroup id): each figure's
 * mean, standard deviation and 95% interval of the mean. A set missing from a run counted
 * nothing in it: a zero. One run gives that run's rows as they are. */
struct stat_repeats;

struct stat_repeats *stat_repeats__new(const struct stat_events *evs, bool no_scale);
int stat_repeats__add(struct stat_repeats *rp, const struct stat_run *run);
u32 stat_repeats__runs(const struct stat_repeats *rp);
size_t stat_repeats__nr_sets(const struct stat_repeats *rp);
/* set i's rows[nr events], sets numbered in the order they were first seen */
void stat_repeats__rows(const struct stat_repeats *rp, size_t i, struct stat_row *rows);
/* the sets in the order to show them, as stat_report__order; order[nr sets] */
void stat_repeats__order(const struct stat_repeats *rp, bool by_name, size_t *order);
/* the elapsed time, in s */
void stat_repeats__elapsed(const struct stat_repeats *rp, struct stat_row *row);
void stat_repeats__free(struct stat_repeats *rp);

#endif /* HSBPF_STAT_REPORT_H */
