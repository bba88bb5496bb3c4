// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Fall-through ranges to block executions, for eval, report --sort bb and annotate. */
#include <string.h>
#include "hsbpf.h"
#include "report/lbr_estimate.h"

/* The LBR estimator: every fall-through range ran each block between its first and its
 * last instruction once per occurrence. Ranges are kept inside one function of the object; the
 * executions are then scaled so that their instructions add up to the exact total. */
void lbr_estimate__block_execs(const struct profile *p, struct symbolizer *sy, const char *path,
			       const struct bblock_table *bt, double *execs, u64 *used)
{
	*used = 0;
	for (size_t i = 0; i < p->nr_lbr; i++) {
		const struct profile_lbr *l = &p->lbr[i];
		struct profile_sample sa = { .pid = l->pid, .ip = l->a, .exec_ns = l->exec_ns };
		struct profile_sample sb = { .pid = l->pid, .ip = l->b, .exec_ns = l->exec_ns };
		const struct bblock *first, *last;
		struct sym_result ra, rb;

		if (l->kind != HSBPF_LBR_RANGE)
			continue;
		symbolizer__resolve(sy, &sa, &ra);
		symbolizer__resolve(sy, &sb, &rb);
		if (strcmp(ra.dso, path) || strcmp(rb.dso, path) || ra.vaddr > rb.vaddr)
			continue;
		first = bblock_table__find(bt, ra.vaddr);
		last = bblock_table__find(bt, rb.vaddr);
		if (!first || !last || first->func != last->func)
			continue;	/* outside the object's functions, or across two */
		for (const struct bblock *b = first; b <= last; b++)
			execs[b - bt->blocks] += l->count;
		(*used)++;
	}
}

double lbr_estimate__scale(const struct profile *p)
{
	u64 ranges = 0, weight = profile__total_weight(p);

	for (size_t i = 0; i < p->nr_lbr; i++)
		if (p->lbr[i].kind == HSBPF_LBR_RANGE)
			ranges += p->lbr[i].count;
	return ranges && weight ? (double)weight / ranges : 1.0;
}
