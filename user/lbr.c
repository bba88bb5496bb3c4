// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Branch-stack aggregation. Ranges [entry[i].to, entry[i-1].from] for i >= 1, kept when
 * forward, at most 1 MiB and inside the object; a newest entry identical to the next one is
 * the Skylake-family duplicate (kept only as a short backward branch, which real loops make);
 * the newest range is not ended at the sampled IP (it may lie before the newest target when
 * the sample is not precise). */
#include <stdlib.h>
#include <string.h>
#include "lbr.h"

static u64 pair_hash(u64 a, u64 b)
{
	u64 h = (a * 0x9E3779B97F4A7C15ull) ^ (b + 0x632BE59BD9B4E019ull + (a << 6));

	return h ^ (h >> 31);
}

static int table_add(struct lbr_table *t, u64 a, u64 b, u64 n)
{
	size_t i;

	if (t->nr * 2 >= t->cap) {
		size_t ncap = t->cap ? t->cap * 2 : 1024;
		struct lbr_pair *ns = calloc(ncap, sizeof(*ns));

		if (!ns)
			return -ENOMEM;
		for (size_t j = 0; j < t->cap; j++) {
			if (!t->slots[j].count)
				continue;
			i = pair_hash(t->slots[j].a, t->slots[j].b) & (ncap - 1);
			while (ns[i].count)
				i = (i + 1) & (ncap - 1);
			ns[i] = t->slots[j];
		}
		free(t->slots);
		t->slots = ns;
		t->cap = ncap;
	}
	for (i = pair_hash(a, b) & (t->cap - 1); t->slots[i].count; i = (i + 1) & (t->cap - 1)) {
		if (t->slots[i].a == a && t->slots[i].b == b) {
			t->slots[i].count += n;
			return 0;
		}
	}
	t->slots[i] = (struct lbr_pair){ a, b, n };
	t->nr++;
	return 0;
}

u64 lbr_table__get(const struct lbr_table *t, u64 a, u64 b)
{
	if (!t->cap)
		return 0;
	for (size_t i = pair_hash(a, b) & (t->cap - 1); t->slots[i].count; i = (i + 1) & (t->cap - 1))
		if (t->slots[i].a == a && t->slots[i].b == b)
			return t->slots[i].count;
	return 0;
}

void lbr__init(struct lbr_agg *g, lbr_map_fn map, void *ctx)
{
	memset(g, 0, sizeof(*g));
	g->map = map;
	g->map_ctx = ctx;
}

void lbr__free(struct lbr_agg *g)
{
	free(g->ranges.slots);
	free(g->edges.slots);
	free(g->ips.slots);
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
