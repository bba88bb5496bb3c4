/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The accuracy metrics of the literature, on plain arrays: NRMSE, sample coverage and order
 * deviation (Wu & Mencer), the accuracy error (Nowak, Yasin et al.), top-N overlap and rank
 * correlation. Definitions and readings: README, "The evaluator". */
#ifndef HSBPF_METRICS_H
#define HSBPF_METRICS_H

#include "lib/util.h"

/* one sampled IP: its samples, and the exact execution count of the block that holds it
 * (block -1 and r 0 for an IP outside every known block) */
struct metric_ip {
	u64 c;
	u64 r;
	long block;
};

/* one block: exact executions, its instructions, and the method's estimate of the instructions
 * it executed (0 if never sampled) */
struct metric_block {
	u64 count;
	u32 ninsns;
	double est_insns;
};

struct metrics {
	u64 ns;			/* samples behind the metrics */
	u64 ni;			/* instructions executed (truth) */
	size_t m;		/* distinct sampled IPs */
	double nrmse;
	double sc;
	double od;
	double ae;		/* accuracy error */
	double spearman;	/* estimated vs exact block instructions, over executed or sampled blocks */
	int top_blocks;		/* of the true top 20 blocks, how many the profile ranks in its top 20 */
	int top_funcs;		/* of the true top 10 functions, how many in the profile's top 10 */
};

/* ips[nr], blocks[nb]; fills every field but top_funcs */
int metrics__compute(const struct metric_ip *ips, size_t nr, const struct metric_block *blocks,
		     size_t nb, u64 ni, struct metrics *out);
/* how many of the true top n (by exact) are in the estimated top n; ties at the cut count in */
int metrics__top_overlap(const double *exact, const double *est, size_t nr, int n);
/* Spearman's rank correlation with average ranks for ties; 0 if undefined */
double metrics__spearman(const double *x, const double *y, size_t nr);

#endif
