/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* hsbpf experiment --stacks: each workload's exact calling-context tree and the virtual PMU's
 * exact sample stacks from one run under the reference collector, then hsbpf record and perf
 * record with frame pointers and with DWARF on the native run, each scored by the stack
 * metrics (stack_eval.h); a CSV, a table and gnuplot figures. */
#ifndef HSBPF_STACK_EXP_H
#define HSBPF_STACK_EXP_H

#include <stdio.h>
#include "experiment.h"

enum stack_collector {
	SC_VPMU,	/* the virtual PMU's exact stacks: the sanity row, the floor at its count */
	SC_HSBPF_FP,
	SC_HSBPF_DWARF,
	SC_PERF_FP,	/* perf record -g, through hsbpf import */
	SC_PERF_DWARF,	/* perf record --call-graph dwarf, through hsbpf import */
	SC_NR,
};

extern const char *const stack_collector_names[SC_NR];

struct stack_row {
	const char *workload, *kind;
	enum stack_collector collector;
	/* "ok", or why there is no score: "not unwound", "failed" */
	const char *status;
	u64 samples;		/* all samples of the profile (weights) */
	u64 with_stack;		/* ... of them with a user stack */
	double complete;	/* complete share, 0..1 */
	double incl_mae, incl_max;	/* inclusive-time error over the top functions, 0..1 */
	double caller_tv;	/* mean caller-split total variation over the top functions */
	size_t top;		/* functions scored (STACK_EXP_TOP, STACK_EXP_MIN_SHARE) */
	double seconds;		/* the collection's wall time (the truth run's for the vpmu row) */
};

/* the functions scored: the top STACK_EXP_TOP by exact inclusive time that have at least
 * STACK_EXP_MIN_SHARE of it */
#define STACK_EXP_TOP 10
#define STACK_EXP_MIN_SHARE 0.01

/* every workload of o's set x every collector; progress on stderr; rows in *out. 0, or
 * -errno when nothing could run (a workload's truth failing stops the experiment) */
int stack_exp__run(const struct exp_opts *o, struct stack_row **out, size_t *nr);
int stack_exp__write_csv(const struct stack_row *rows, size_t nr, const char *path);
/* a row per workload and collector: samples, complete share, errors */
void stack_exp__print(FILE *f, const struct stack_row *rows, size_t nr);
/* complete share, caller-split error and inclusive error by workload, a bar per collector,
 * PNG and SVG through gnuplot; -ENOENT when gnuplot failed (reported) */
int stack_exp__plot(const char *dir, const struct stack_row *rows, size_t nr);

#endif
