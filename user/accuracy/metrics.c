// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Metric arithmetic. Order levels are dense ranks (equal counts share a level, level 1 is the
 * highest); ranks for Spearman are average ranks. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "metrics.h"

struct ranked {
	double v;
	size_t i;
};

static int cmp_desc(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	return x->v < y->v ? 1 : x->v > y->v ? -1 : 0;
}

/* dense levels of values, highest = 1 */
static int dense_levels(const double *v, size_t n, u64 *level)
{
	struct ranked *r = malloc((n ? n : 1) * sizeof(*r));
	u64 lv = 0;

	if (!r)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		r[i] = (struct ranked){ v[i], i };
	qsort(r, n, sizeof(*r), cmp_desc);
	for (size_t i = 0; i < n; i++) {
		if (!i || r[i].v != r[i - 1].v)
			lv++;
		level[r[i].i] = lv;
	}
	free(r);
	return 0;
}

/* average ranks (1-based) */
static int avg_ranks(const double *v, size_t n, double *rank)
{
	struct ranked *r = malloc((n ? n : 1) * sizeof(*r));

	if (!r)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		r[i] = (struct ranked){ v[i], i };
	qsort(r, n, sizeof(*r), cmp_desc);
	for (size_t i = 0; i < n;) {
		size_t j = i;

		while (j + 1 < n && r[j + 1].v == r[i].v)
			j++;
		for (size_t k = i; k <= j; k++)
			rank[r[k].i] = (i + j) / 2.0 + 1;
		i = j + 1;
	}
	free(r);
	return 0;
}

double metrics__spearman(const double *x, const double *y, size_t n)
{
	double *rx = malloc((n ? n : 1) * sizeof(double)), *ry = malloc((n ? n : 1) * sizeof(double));
	double mx = 0, my = 0, sxy = 0, sxx = 0, syy = 0, rho = 0;

	if (!rx || !ry || n < 2 || avg_ranks(x, n, rx) || avg_ranks(y, n, ry))
		goto out;
	for (size_t i = 0; i < n; i++) {
		mx += rx[i];
		my += ry[i];
	}
	mx /= n;
	my /= n;
	for (size_t i = 0; i < n; i++) {
		sxy += (rx[i] - mx) * (ry[i] - my);
		sxx += (rx[i] - mx) * (rx[i] - mx);
		syy += (ry[i] - my) * (ry[i] - my);
	}
	if (sxx > 0 && syy > 0)
		rho = sxy / sqrt(sxx * syy);
out:
	free(rx);
	free(ry);
	return rho;
}

int metrics__top_overlap(const double *exact, const double *est, size_t n, int top)
{
	struct ranked *a = malloc((n ? n : 1) * sizeof(*a)), *b = malloc((n ? n : 1) * sizeof(*b));
	double cut;
	int hits = 0;

	if (!a || !b) {
		free(a);
		free(b);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		a[i] = (struct ranked){ exact[i], i };
		b[i] = (struct ranked){ est[i], i };
	}
	qsort(a, n, sizeof(*a), cmp_desc);
	qsort(b, n, sizeof(*b), cmp_desc);
	/* the estimated top n, ties at the cut included; only items the method saw at all */
	cut = n >= (size_t)top ? b[top - 1].v : 0;
	for (int k = 0; k < top && (size_t)k < n; k++) {
		if (a[k].v <= 0)
			break;
		if (est[a[k].i] > 0 && est[a[k].i] >= cut)
			hits++;
	}
	free(a);
	free(b);
	return hits;
}

int metrics__compute(const struct metric_ip *ips, size_t nr, const struct metric_block *blocks,
		     size_t nb, u64 ni, struct metrics *o)
{
	double *sv = NULL, *bv = NULL, *ex = NULL, *es = NULL, lo = INFINITY, hi = -INFINITY;
	double sum_sq = 0, sum_od = 0, sum_r = 0, ae = 0;
	u64 *slv = NULL, *blv = NULL, zero_level;
	size_t nbv = 0;
	int err = -ENOMEM;

	memset(o, 0, sizeof(*o));
	o->ni = ni;
	o->m = nr;
	for (size_t i = 0; i < nr; i++)
		o->ns += ips[i].c;
	if (!o->ns || !ni)
		return -EINVAL;
	sv = calloc(nr + 1, sizeof(*sv));
	slv = calloc(nr + 1, sizeof(*slv));
	bv = calloc(nb + 1, sizeof(*bv));
	blv = calloc(nb + 2, sizeof(*blv));
	ex = calloc(nb + 1, sizeof(*ex));
	es = calloc(nb + 1, sizeof(*es));
	if (!sv || !slv || !bv || !blv || !ex || !es)
		goto out;

	/* NRMSE and SC */
	for (size_t i = 0; i < nr; i++) {
		double s = (double)ips[i].c / o->ns, r = (double)ips[i].r / ni;

		sum_sq += s * (s - r) * (s - r);
		sum_r += ips[i].r;
		lo = fmin(lo, fmin(s, r));
		hi = fmax(hi, fmax(s, r));
		sv[i] = ips[i].c;
	}
	o->nrmse = hi > lo ? sqrt(sum_sq) / (hi - lo) : 0;
	o->sc = sum_r / ni;

	/* OD: sampled levels among sampled IPs; exact levels among all blocks' counts, where an
	 * IP outside every block has count 0, a level below every executed block */
	for (size_t b = 0; b < nb; b++)
		if (blocks[b].count)
			bv[nbv++] = blocks[b].count;
	bv[nbv] = 0;
	if (dense_levels(sv, nr, slv) || dense_levels(bv, nbv + 1, blv))
		goto out;
	zero_level = blv[nbv];
	for (size_t i = 0; i < nr; i++) {
		u64 rl = zero_level;

		if (ips[i].r) {
			/* the level of this count among the blocks' counts */
			for (size_t b = 0; b < nbv; b++)
				if (bv[b] == (double)ips[i].r) {
					rl = blv[b];
					break;
				}
		}
		double d = (double)slv[i] - (double)rl;

		sum_od += (double)ips[i].c / o->ns * d * d;
	}
	o->od = sqrt(sum_od) / nr;

	/* AE over every block; blocks the method never saw have estimate 0 */
	for (size_t b = 0; b < nb; b++) {
		double ref = (double)blocks[b].count * blocks[b].ninsns;

		ae += fabs(blocks[b].est_insns - ref);
		ex[b] = ref;
		es[b] = blocks[b].est_insns;
	}
	o->ae = ae / ni;
	o->spearman = metrics__spearman(ex, es, nb);
	o->top_blocks = metrics__top_overlap(ex, es, nb, 20);
	err = 0;
out:
	free(sv);
	free(slv);
	free(bv);
	free(blv);
	free(ex);
	free(es);
	return err;
}
