/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The paper's table of sampling methods (classic, precise with prime and randomized periods,
 * precise with the LBR IP fix, PDIR, LBR) on the virtual PMU and its timing model: one run
 * per workload under the reference collector with a PMU per method (or one run per method,
 * exp_opts.separate_runs: the same rows), each scored against the run's truth. */
#ifndef HSBPF_METHODS_H
#define HSBPF_METHODS_H

#include <stdio.h>
#include "experiment.h"

struct method {
	const char *name;
	const char *abbrev;	/* a column header of at most 8 */
	const char *event;	/* insns, branches, cycles */
	u64 period;
	int mode;		/* bit 0 prime, bit 1 random */
	const char *sampling;	/* on the timing model's clock; NULL: exact (LBR) */
	int lbr;
	const char *what;
};

#define METHODS_MAX 16	/* methods_table's size at most: callers' selection arrays */

extern const struct method methods_table[];
extern const size_t methods_nr;

struct method_row {
	const char *workload, *kind;
	const struct method *method;
	struct metrics m;
	double ipc;		/* the timing model's, 0 when the method needs no clock */
	double seconds;		/* the run under the collector */
	bool ok;
};

/* the methods named in list (comma-separated; NULL: all); 0, or -EINVAL (reported) */
int methods__select(const char *list, bool *selected);
/* every workload of o's set x every selected method; progress on stderr; rows in *out */
int methods__run(const struct exp_opts *o, const bool *selected, struct method_row **out, size_t *nr);
int methods__write_csv(const struct method_row *rows, size_t nr, const char *path);
/* the accuracy error of each workload (rows) by method (columns), as text */
void methods__print(FILE *f, const struct method_row *rows, size_t nr, const bool *selected);
/* accuracy error by method, per workload (log scale), PNG and SVG, through gnuplot */
int methods__plot(const char *dir, const struct method_row *rows, size_t nr, const bool *selected);

#endif
