/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The arithmetic of counting (hsbpf stat): multiplexed counts scaled by enabled over running
 * time with a 95% interval for the extrapolation, the statistics of repeated runs, and the
 * derived metrics. Plain numbers in and out, so that it is tested on recorded readings. The
 * model and its assumptions: README, "Counting: hsbpf stat". */
#ifndef HSBPF_STAT_MATH_H
#define HSBPF_STAT_MATH_H

#include <stdbool.h>
#include "lib/util.h"

/* a counter's reading, or what it gained between two readings: the count, and how long it
 * was enabled and actually counting (running), in ns */
struct stat_reading {
	u64 count;
	u64 enabled;
	u64 running;
};

/* One counter over a run, read at intervals (ticks): the totals, and the spread of the rate
 * it counted at (events per running ns) between reads, each read weighing its running time.
 * That spread is what the interval of an extrapolated count rests on. */
struct stat_acc {
	struct stat_reading total;
	u32 reads;		/* deltas that had running time */
	double weight;		/* their running time, ns */
	double rate;		/* the weighted mean rate, events per running ns */
	double m2;		/* sum of running * (rate_k - rate)^2 */
};

void stat_acc__add(struct stat_acc *a, const struct stat_reading *delta);

/* what a counter's readings say about its count */
struct stat_value {
	bool counted;		/* it ran (running > 0), or it was never enabled (a zero) */
	bool scaled;		/* multiplexed (running < enabled) and scaled: an extrapolation */
	double value;		/* count * enabled / running when scaled, else the count */
	double running_pct;	/* 100 * running / enabled (100 when never enabled) */
	bool has_ci;		/* an extrapolation with an interval (two reads or more) */
	double lo, hi;		/* its 95% interval */
};

/* The value of readings r: a whole run (pooled == the run's accumulator) or one interval of
 * it, whose interval borrows the rate spread of the run so far (pooled). The model: the
 * rate while the counter ran is a sample of its rate over the whole enabled time, read by
 * read, so that
 *     value = count * enabled / running
 *     var   = enabled^2 * (1 - running / enabled) * s2 / running
 * with s2 = m2 / (reads - 1) the running-weighted spread of the rates between reads of the
 * pooled accumulator, and the interval value +- t(0.975, reads - 1) * sqrt(var). Without
 * scale (--no-scale) the value is the raw count, with no interval. */
void stat__estimate(const struct stat_reading *r, const struct stat_acc *pooled, bool scale,
		    struct stat_value *out);

/* the two-sided 95% quantile of Student's t with df degrees of freedom (df >= 1) */
double stat__t95(u32 df);

/* a figure over repeated runs (-r): mean, sample standard deviation, the 95% interval of the
 * mean (Welford's sums: no cancellation on large counts) */
struct stat_runs {
	u32 n;
	double mean;
	double m2;
};

void stat_runs__add(struct stat_runs *s, double v);
double stat_runs__stddev(const struct stat_runs *s);
/* half the width of the 95% interval of the mean; 0 with fewer than two runs */
double stat_runs__ci95(const struct stat_runs *s);

/* Derived metrics, shown beside an event as perf does: the event's value over its base's,
 * times mult. The base is another event (instructions over cycles), or the elapsed time. */
enum stat_metric_base {
	STAT_BASE_EVENT,	/* base_type, base_config */
	STAT_BASE_CLOCK,	/* task-clock, or cpu-clock without it: CPU time in ns */
	STAT_BASE_ELAPSED,	/* wall-clock time of the run, ns */
};

struct stat_metric_def {
	u32 type;		/* the event's PERF_TYPE_* and config */
	u64 config;
	enum stat_metric_base base;
	u32 base_type;
	u64 base_config;
	double mult;
	const char *name;	/* "insn per cycle" */
	const char *unit;	/* "" or "%", or "/sec" (printed with K, M, G) */
};

/* the metric of an event; NULL when it has none */
const struct stat_metric_def *stat_metric__find(u32 type, u64 config);

struct stat_metric {
	const struct stat_metric_def *def;	/* NULL: no metric */
	double value;
	bool has_ci;
	double lo, hi;
};

/* num / den * mult, with an interval when either has one: relative errors combined as if
 * independent (delta method), which overstates it for two events of one group, whose
 * errors go together; den <= 0 gives no metric */
void stat_metric__ratio(const struct stat_metric_def *def, const struct stat_value *num,
			const struct stat_value *den, struct stat_metric *out);

#endif /* HSBPF_STAT_MATH_H */
