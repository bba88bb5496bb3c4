// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Free ranges of one of the kernel unwinder's arrays (rows, pages, objects): first fit, merged
 * with their neighbours, reused only after a grace period, so that unloaded tables make room
 * for new ones (slot_pool.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "unwind/slot_pool.h"

struct range {
	u32 first, nr;
	u64 ready_ns;		/* reusable from then on */
};

struct slot_pool {
	u32 capacity, used;
	struct range *free;	/* sorted by first, never adjacent (merged) */
	size_t nr, cap;
};

struct slot_pool *slot_pool__new(u32 capacity)
{
	struct slot_pool *sp = calloc(1, sizeof(*sp));

	if (!sp)
		return NULL;
	sp->capacity = capacity;
	if (capacity) {
		if (array__reserve((void **)&sp->free, &sp->cap, 1, sizeof(*sp->free))) {
			free(sp);
			errno = ENOMEM;
			return NULL;
		}
		sp->free[0] = (struct range){ 0, capacity, 0 };
		sp->nr = 1;
	}
	return sp;
}

void slot_pool__free(struct slot_pool *sp)
{
	if (!sp)
		return;
	free(sp->free);
	free(sp);
}

int slot_pool__alloc(struct slot_pool *sp, u32 nr, u64 now_ns, u32 *first)
{
	if (!nr) {
		*first = 0;
		return 0;
	}
	for (size_t i = 0; i < sp->nr; i++) {
		struct range *r = &sp->free[i];

		if (r->nr < nr || r->ready_ns > now_ns)
			continue;
		*first = r->first;
		r->first += nr;
		r->nr -= nr;
		if (!r->nr) {
			memmove(r, r + 1, (sp->nr - i - 1) * sizeof(*r));
			sp->nr--;
		}
		sp->used += nr;
		return 0;
	}
	return -ENOSPC;
}

int slot_pool__release(struct slot_pool *sp, u32 first, u32 nr, u64 now_ns, u64 grace_ns)
{
	u64 ready = now_ns + grace_ns;
	size_t i = 0;
	struct range *r;

	if (!nr)
		return 0;
	while (i < sp->nr && sp->free[i].first < first)
		i++;
	/* merged with the range before and the one after: the later grace holds for all */
	if (i > 0 && sp->free[i - 1].first + sp->free[i - 1].nr == first) {
		r = &sp->free[i - 1];
		r->nr += nr;
		r->ready_ns = r->ready_ns > ready ? r->ready_ns : ready;
		if (i < sp->nr && r->first + r->nr == sp->free[i].first) {
			r->nr += sp->free[i].nr;
			if (sp->free[i].ready_ns > r->ready_ns)
				r->ready_ns = sp->free[i].ready_ns;
			memmove(&sp->free[i], &sp->free[i + 1], (sp->nr - i - 1) * sizeof(*r));
			sp->nr--;
		}
	} else if (i < sp->nr && first + nr == sp->free[i].first) {
		r = &sp->free[i];
		r->first = first;
		r->nr += nr;
		r->ready_ns = r->ready_ns > ready ? r->ready_ns : ready;
	} else {
		if (array__reserve((void **)&sp->free, &sp->cap, sp->nr + 1, sizeof(*sp->free)))
			return -ENOMEM;
		memmove(&sp->free[i + 1], &sp->free[i], (sp->nr - i) * sizeof(*r));
		sp->free[i] = (struct range){ first, nr, ready };
		sp->nr++;
	}
	sp->used -= nr;
	return 0;
}

u32 slot_pool__used(const struct slot_pool *sp)
{
	return sp->used;
}

size_t slot_pool__nr_ranges(const struct slot_pool *sp)
{
	return sp->nr;
}
