// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Self for Python code: the evaluation loop's own samples moved to the innermost Python frame
 * of their stacks (pyself.h). The stack samples whose leaf is a Python frame say how many of
 * a thread's samples in the loop were which function's; that many are taken from the flat
 * samples in the loop of the same group (process image, cgroup, thread, CPU, time bucket) and
 * given to the Python frames, so totals stay the flat histogram's. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "hsbpf.h"
#include "report/pyself.h"

/* what a flat sample and a stack sample must share to be the same samples (no padding:
 * compared as bytes) */
struct group {
	u32 pid, flags;
	u64 cgroup_id, exec_ns;
	u32 tid, cpu, time, waker;
};

struct move {
	struct group g;
	u64 map_ns, frame, count, weight;
};

/* a group's moves: [first, first + nr) of the sorted moves; how many samples they want
 * and how many the flat samples gave */
struct pool {
	struct group g;
	size_t first, nr;
	u64 want, given;
};

bool pyself__leaf(const struct profile *p, const struct profile_stack_sample *ss)
{
	const struct profile_stack *k = profile__stack(p, ss->kernel), *u = profile__stack(p, ss->user);

	if ((k && k->nr) || !u || !u->nr)
		return false;
	return HSBPF_PY_IS_FRAME(profile__frames(p, u)[0]);
}

static struct group group_of(u32 pid, u32 flags, u64 cgroup_id, u64 exec_ns,
			     const struct profile_sample_key *k)
{
	return (struct group){
		.pid = pid, .flags = flags & ~HSBPF_KEY_KERNEL, .cgroup_id = cgroup_id,
		.exec_ns = exec_ns, .tid = k->tid, .cpu = k->cpu, .time = k->time, .waker = k->waker,
	};
}

static int cmp_move(const void *a, const void *b)
{
	return memcmp(&((const struct move *)a)->g, &((const struct move *)b)->g, sizeof(struct group));
}

static int cmp_pool(const void *key, const void *b)
{
	return memcmp(key, &((const struct pool *)b)->g, sizeof(struct group));
}

/* the stack samples whose own time is a Python frame's, sorted by group */
static int gather(const struct profile *p, struct move **out, size_t *nr)
{
	struct move *v = NULL;
	size_t n = 0, cap = 0;

	for (size_t i = 0; i < p->nr_stack_samples; i++) {
		const struct profile_stack_sample *ss = &p->stack_samples[i];

		if (!ss->count || !pyself__leaf(p, ss))
			continue;
		if (array__reserve((void **)&v, &cap, n + 1, sizeof(*v))) {
			free(v);
			return -ENOMEM;
		}
		v[n++] = (struct move){
			.g = group_of(ss->pid, ss->flags, ss->cgroup_id, ss->exec_ns,
				      profile__stack_sample_key(p, i)),
			.map_ns = ss->map_ns, .count = ss->count, .weight = ss->weight,
			.frame = profile__frames(p, profile__stack(p, ss->user))[0],
		};
	}
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_move);
	*out = v;
	*nr = n;
	return 0;
}

/* one pool per group of the sorted moves */
static struct pool *make_pools(const struct move *v, size_t n, size_t *nr)
{
	struct pool *pools = calloc(n + 1, sizeof(*pools));
	size_t np = 0;

	if (!pools)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (!np || memcmp(&pools[np - 1].g, &v[i].g, sizeof(v[i].g)))
			pools[np++] = (struct pool){ .g = v[i].g, .first = i };
		pools[np - 1].nr++;
		pools[np - 1].want += v[i].count;
	}
	*nr = np;
	return pools;
}

/* weight's share of count's t samples */
static u64 share(u64 weight, u64 t, u64 count)
{
	return count ? (u64)((double)weight * t / count + 0.5) : 0;
}

static bool in_eval_loop(struct symbolizer *sy, const struct profile_sample *s)
{
	struct sym_result r;

	if (s->flags & HSBPF_KEY_KERNEL || HSBPF_PY_IS_FRAME(s->ip))
		return false;
	symbolizer__resolve(sy, s, &r);
	return r.sym && !strcmp(r.sym, PYSELF_EVAL_LOOP);
}

int pyself__samples(const struct profile *p, struct symbolizer *sy, struct pyself_sample **out,
		    size_t *nr)
{
	struct pyself_sample *o = NULL;
	struct move *v = NULL;
	struct pool *pools = NULL;
	size_t nv = 0, np = 0, n = 0;
	int err;

	*out = NULL;
	*nr = 0;
	err = gather(p, &v, &nv);
	if (err || !nv)
		goto out;
	err = -ENOMEM;
	pools = make_pools(v, nv, &np);
	o = calloc(p->nr_samples + nv + 1, sizeof(*o));
	if (!pools || !o)
		goto out;
	/* the evaluation loop's samples of each group, as many as its stacks want */
	for (size_t i = 0; i < p->nr_samples; i++) {
		struct pyself_sample *x = &o[n];
		struct pool *pl;
		u64 t;

		x->s = p->samples[i];
		x->k = *profile__sample_key(p, i);
		if (in_eval_loop(sy, &x->s)) {
			struct group g = group_of(x->s.pid, x->s.flags, x->s.cgroup_id, x->s.exec_ns, &x->k);

			pl = bsearch(&g, pools, np, sizeof(*pools), cmp_pool);
			t = pl ? pl->want - pl->given : 0;
			t = t < x->s.count ? t : x->s.count;
			if (pl)
				pl->given += t;
			x->s.weight -= share(x->s.weight, t, x->s.count);
			x->s.count -= t;
		}
		n += x->s.count != 0;
	}
	/* ... given to the Python frames, each its stacks' count (the last of a group less when
	 * the flat samples held fewer) */
	for (size_t i = 0; i < np; i++) {
		u64 left = pools[i].given;

		for (size_t j = pools[i].first; j < pools[i].first + pools[i].nr && left; j++) {
			const struct move *m = &v[j];
			u64 t = m->count < left ? m->count : left;

			o[n].s = (struct profile_sample){
				.pid = m->g.pid, .flags = m->g.flags, .ip = m->frame, .cgroup_id = m->g.cgroup_id,
				.exec_ns = m->g.exec_ns, .map_ns = m->map_ns, .count = t,
				.weight = share(m->weight, t, m->count),
			};
			o[n++].k = (struct profile_sample_key){
				.tid = m->g.tid, .cpu = m->g.cpu, .time = m->g.time, .waker = m->g.waker,
			};
			left -= t;
		}
	}
	*out = o;
	*nr = n;
	o = NULL;
	err = 0;
out:
	free(o);
	free(pools);
	free(v);
	return err;
}
