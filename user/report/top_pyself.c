// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The Python leaves of top's stack samples, as each interval's growth (top_pyself.h): the
 * count each stack sample had at the last refresh, indexed by the leaf, and the first frame of
 * each user stack of a Python process seen, indexed by its hash, so that a refresh reads the
 * stack-sample map once and looks a stack up in the kernel only the first time it sees it,
 * and only for the processes the Python unwinder reads (a machine's other stacks are many). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "hsbpf.h"
#include "lib/hashidx.h"
#include "record/sampler.h"
#include "report/top_pyself.h"

/* what identifies a leaf: everything but its count */
#define LEAF_KEY offsetof(struct top_pyleaf, count)

/* a user stack's first frame, when it is a Python frame (else 0) */
struct first {
	u64 hash, frame;
};

struct top_pyself {
	struct top_pyleaf *last;	/* each leaf's count at its last add, less what is asked again */
	u64 *again;			/* ... of it, what is asked again */
	u8 *tries;			/* ... the refreshes in a row it has been asked again */
	size_t nr_last, cap_last, cap_again, cap_tries;
	struct hashidx last_index;
	struct top_pyleaf *growth;	/* the interval's */
	size_t nr_growth, cap_growth;
	bool sorted;
	struct first *firsts;
	size_t nr_firsts, cap_firsts;
	struct hashidx first_index;
	struct stack_frames *frames;	/* a stack read from the kernel */
	/* the Python processes of the last read: a process that exited since is read once more,
	 * its last interval's stacks with it (the tracker forgets it at its exit) */
	u32 *last_pids;
	size_t nr_last_pids;
};

struct top_pyself *top_pyself__new(void)
{
	struct top_pyself *y = calloc(1, sizeof(*y));

	if (y)
		y->frames = malloc(sizeof(*y->frames));
	if (!y || !y->frames) {
		free(y);
		errno = ENOMEM;
		return NULL;
	}
	return y;
}

void top_pyself__free(struct top_pyself *y)
{
	if (!y)
		return;
	free(y->last);
	free(y->again);
	free(y->tries);
	hashidx__free(&y->last_index);
	free(y->growth);
	free(y->firsts);
	hashidx__free(&y->first_index);
	free(y->frames);
	free(y->last_pids);
	free(y);
}

void top_pyself__begin(struct top_pyself *y)
{
	y->nr_growth = 0;
	y->sorted = true;
}

static bool same_leaf(const void *key, u32 pos, void *ctx)
{
	return !memcmp(key, &((const struct top_pyself *)ctx)->last[pos], LEAF_KEY);
}

int top_pyself__add(struct top_pyself *y, const struct top_pyleaf *l)
{
	u64 hash = hashidx__hash(l, LEAF_KEY, 0), before = 0;
	s64 pos = hashidx__find(&y->last_index, hash, l, same_leaf, y);
	struct top_pyleaf *g;

	if (pos < 0) {
		if (array__reserve((void **)&y->last, &y->cap_last, y->nr_last + 1, sizeof(*y->last)) ||
		    array__reserve((void **)&y->again, &y->cap_again, y->nr_last + 1, sizeof(*y->again)) ||
		    array__reserve((void **)&y->tries, &y->cap_tries, y->nr_last + 1, sizeof(*y->tries)) ||
		    hashidx__insert(&y->last_index, hash, y->nr_last))
			return -ENOMEM;
		pos = y->nr_last++;
		y->again[pos] = 0;
		y->tries[pos] = 0;
	} else {
		before = y->last[pos].count;
	}
	y->last[pos] = *l;
	if (l->count == before)
		return 0;
	if (array__reserve((void **)&y->growth, &y->cap_growth, y->nr_growth + 1, sizeof(*y->growth)))
		return -ENOMEM;
	g = &y->growth[y->nr_growth++];
	*g = *l;
	g->count = l->count > before ? l->count - before : l->count;
	y->sorted = y->nr_growth == 1;
	return 0;
}

static bool same_first(const void *key, u32 pos, void *ctx)
{
	return *(const u64 *)key == ((const struct top_pyself *)ctx)->firsts[pos].hash;
}

/* the user stack's first frame if it is a Python frame, else 0: read from the kernel once */
static int first_frame(struct top_pyself *y, struct sampler *s, u64 stack, u64 *frame)
{
	u64 hash = hashidx__hash_u64(stack, 0);
	s64 pos = hashidx__find(&y->first_index, hash, &stack, same_first, y);
	u64 f = 0;

	if (pos >= 0) {
		*frame = y->firsts[pos].frame;
		return 0;
	}
	if (!sampler__stack(s, stack, y->frames) && y->frames->nr && HSBPF_PY_IS_FRAME(y->frames->ip[0]))
		f = y->frames->ip[0];
	if (array__reserve((void **)&y->firsts, &y->cap_firsts, y->nr_firsts + 1, sizeof(*y->firsts)) ||
	    hashidx__insert(&y->first_index, hash, y->nr_firsts))
		return -ENOMEM;
	y->firsts[y->nr_firsts++] = (struct first){ stack, f };
	*frame = f;
	return 0;
}

struct read_ctx {
	struct top_pyself *y;
	struct sampler *s;
	u32 *pids;		/* the Python processes: only their stacks are looked up */
	size_t nr_pids;
	size_t nr_read;
};

static int cmp_u32(const void *a, const void *b)
{
	u32 x = *(const u32 *)a, y = *(const u32 *)b;

	return x < y ? -1 : x > y;
}

static int take_stack_sample(void *ctx, const struct stack_key *k, const struct sample_value *v)
{
	struct read_ctx *r = ctx;
	struct top_pyleaf l;
	u64 frame;
	int err;

	r->nr_read++;
	/* the CPU's samples in user space: off-CPU blocks and allocations are not the loop's */
	if (k->kernel || !k->user || k->user == HSBPF_STACK_LOST_HASH ||
	    k->flags & (HSBPF_KEY_KERNEL | HSBPF_KEY_OFFCPU | HSBPF_KEY_MEMORY) ||
	    !bsearch(&k->pid, r->pids, r->nr_pids, sizeof(*r->pids), cmp_u32))
		return 0;
	err = first_frame(r->y, r->s, k->user, &frame);
	if (err || !frame)
		return err;
	l = (struct top_pyleaf){
		.pid = k->pid, .flags = k->flags, .cgroup_id = k->cgroup_id, .exec_ns = k->exec_ns,
		.tid = k->x.tid, .map_ns = k->map_ns, .stack = k->user, .frame = frame, .count = v->count,
	};
	return top_pyself__add(r->y, &l);
}

/* pids and the last read's, sorted, in a new array (*nr set); NULL without memory */
static u32 *with_last(const struct top_pyself *y, const u32 *pids, size_t nr, size_t *out)
{
	u32 *all = malloc((nr + y->nr_last_pids + 1) * sizeof(*all));
	size_t n = 0;

	if (!all)
		return NULL;
	if (nr)
		memcpy(all, pids, nr * sizeof(*pids));
	if (y->nr_last_pids)
		memcpy(all + nr, y->last_pids, y->nr_last_pids * sizeof(*all));
	qsort(all, nr + y->nr_last_pids, sizeof(*all), cmp_u32);
	for (size_t i = 0; i < nr + y->nr_last_pids; i++)
		if (!n || all[n - 1] != all[i])
			all[n++] = all[i];
	*out = n;
	return all;
}

int top_pyself__read(struct top_pyself *y, struct sampler *s)
{
	struct read_ctx r = { y, s };
	u32 *now = NULL;
	size_t nr_now = 0;
	int err = sampler__py_pids(s, &now, &nr_now);

	if (!err) {
		r.pids = with_last(y, now, nr_now, &r.nr_pids);
		err = r.pids ? 0 : -ENOMEM;
	}
	if (!err && r.nr_pids)
		err = sampler__read_stack_samples(s, take_stack_sample, &r);
	debug("Python's Self: %zu stack samples read, %zu stacks looked up so far", r.nr_read,
	      y->nr_firsts);
	if (err == -ENOMEM)
		error("cannot follow Python's Self: %s", strerror(ENOMEM));
	free(r.pids);
	if (!err) {
		free(y->last_pids);
		y->last_pids = now;
		y->nr_last_pids = nr_now;
		now = NULL;
	}
	free(now);
	return err;
}

/* by group, then by stack: the same order each time */
static int cmp_leaf(const void *a, const void *b)
{
	return memcmp(a, b, LEAF_KEY);
}

const struct top_pyleaf *top_pyself__growth(struct top_pyself *y, size_t *nr)
{
	if (!y->sorted)
		qsort(y->growth, y->nr_growth, sizeof(*y->growth), cmp_leaf);
	y->sorted = true;
	*nr = y->nr_growth;
	return y->growth;
}

void top_pyself__taken(struct top_pyself *y, const struct top_pyleaf *l, u64 n)
{
	u64 hash = hashidx__hash(l, LEAF_KEY, 0);
	s64 pos = hashidx__find(&y->last_index, hash, l, same_leaf, y);
	u64 left = n < l->count ? l->count - n : 0, old;

	if (pos < 0)
		return;
	/* what was found is what was asked again first; what was asked again and is still
	 * not found is asked again, up to TOP_PYSELF_TRIES refreshes in a row (a loaded
	 * machine reads the stacks more than an interval after their flat samples), then
	 * given up (a flat map that was full) */
	old = y->again[pos] > n ? y->again[pos] - n : 0;
	if (!left) {
		y->tries[pos] = 0;
	} else if (y->tries[pos] >= TOP_PYSELF_TRIES) {
		left = left > old ? left - old : 0;
		y->tries[pos] = left ? 1 : 0;
	} else {
		y->tries[pos]++;
	}
	if (left > y->last[pos].count)
		left = y->last[pos].count;
	y->last[pos].count -= left;
	y->again[pos] = left;
}
