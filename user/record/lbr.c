// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Branch-stack aggregation. Ranges [entry[i].to, entry[i-1].from] for i >= 1, kept when
 * forward, at most 1 MiB and inside the object; a newest entry identical to the next one is
 * the Skylake-family duplicate (kept only as a short backward branch, which real loops make);
 * the newest range is not ended at the sampled IP (it may lie before the newest target when
 * the sample is not precise). */
#include <stdlib.h>
#include <string.h>
#include "record/lbr.h"

static u64 pair_hash(u64 a, u64 b)
{
	return hashidx__hash_u64(b, hashidx__hash_u64(a, 0));
}

static bool same_pair(const void *key, u32 pos, void *ctx)
{
	const struct lbr_pair *k = key, *p = &((const struct lbr_table *)ctx)->pairs[pos];

	return p->a == k->a && p->b == k->b;
}

static int table_add(struct lbr_table *t, u64 a, u64 b, u64 n)
{
	struct lbr_pair key = { a, b, n };
	u64 hash = pair_hash(a, b);
	s64 pos = hashidx__find(&t->idx, hash, &key, same_pair, t);
	int err;

	if (pos >= 0) {
		t->pairs[pos].count += n;
		return 0;
	}
	if (array__reserve((void **)&t->pairs, &t->cap, t->nr + 1, sizeof(*t->pairs)))
		return -ENOMEM;
	err = hashidx__insert(&t->idx, hash, t->nr);
	if (err)
		return err;
	t->pairs[t->nr++] = key;
	return 0;
}

u64 lbr_table__get(const struct lbr_table *t, u64 a, u64 b)
{
	struct lbr_pair key = { a, b, 0 };
	s64 pos = hashidx__find(&t->idx, pair_hash(a, b), &key, same_pair, (void *)t);

	return pos >= 0 ? t->pairs[pos].count : 0;
}

static void table_free(struct lbr_table *t)
{
	free(t->pairs);
	hashidx__free(&t->idx);
}

void lbr__init(struct lbr_agg *g, lbr_map_fn map, void *ctx)
{
	memset(g, 0, sizeof(*g));
	g->map = map;
	g->map_ctx = ctx;
}

void lbr__free(struct lbr_agg *g)
{
	table_free(&g->ranges);
	table_free(&g->edges);
	table_free(&g->ips);
	memset(g, 0, sizeof(*g));
}

int lbr__add(struct lbr_agg *g, const struct perf_sample *s)
{
	const struct perf_branch *e = s->branches;
	u64 n = s->nr_branches, off, first = 0;
	int err = 0;

	if (g->map(g->map_ctx, s->pid, s->ip, &off))
		err = table_add(&g->ips, off, 0, 1);
	if (!n || err)
		return err;
	g->st.samples++;
	g->st.entries += n;
	/* the duplicated newest entry: real execution cannot take the same branch twice in a
	 * row without running its target first, unless it jumps back onto itself (a tight loop) */
	if (n >= 2 && e[0].from == e[1].from && e[0].to == e[1].to &&
	    !(e[0].to <= e[0].from && e[0].from - e[0].to <= 0x1000)) {
		g->st.dup_top++;
		first = 1;
	}
	for (u64 i = 0; i < n && !err; i++) {
		u64 f, t;

		if (!g->map(g->map_ctx, s->pid, e[i].from, &f) || !g->map(g->map_ctx, s->pid, e[i].to, &t))
			continue;
		g->st.entries_in++;
		if (i < first)
			continue;
		g->st.edges++;
		err = table_add(&g->edges, f, t, 1);
	}
	for (u64 i = first + 1; i < n && !err; i++) {
		u64 begin, end;

		if (!g->map(g->map_ctx, s->pid, e[i].to, &begin) ||
		    !g->map(g->map_ctx, s->pid, e[i - 1].from, &end)) {
			g->st.outside++;
			continue;
		}
		if (begin > end) {
			g->st.backwards++;
			continue;
		}
		if (end - begin > LBR_MAX_SPAN) {
			g->st.too_long++;
			continue;
		}
		g->st.ranges++;
		err = table_add(&g->ranges, begin, end, 1);
	}
	return err;
}
