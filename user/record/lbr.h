/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* From branch stacks to what the LBR estimator needs: taken-branch edges and fall-through
 * ranges (the code between one branch's target and the next branch's source ran once), in
 * offsets into one object, validated as AutoFDO and the literature do. */
#ifndef HSBPF_LBR_H
#define HSBPF_LBR_H

#include "lib/hashidx.h"
#include "record/perf_data.h"

#define LBR_MAX_SPAN (1u << 20)

struct lbr_pair {
	u64 a, b;	/* range: begin, end (inclusive); edge: from, to */
	u64 count;
};

struct lbr_table {
	struct lbr_pair *pairs;	/* in the order they were first seen */
	size_t nr, cap;
	struct hashidx idx;
};

struct lbr_stats {
	u64 samples;		/* with a branch stack */
	u64 entries;		/* branch entries seen */
	u64 entries_in;		/* entries with both ends in the object, duplicates included */
	u64 edges;		/* the same, less the duplicated newest entries: counted as edges */
	u64 ranges;		/* ranges counted */
	u64 backwards;		/* dropped: ran backwards */
	u64 too_long;		/* dropped: more than 1 MiB */
	u64 outside;		/* dropped: an end outside the object (kernel, other objects) */
	u64 dup_top;		/* dropped: the duplicated newest entry (Skylake erratum) */
};

/* an address to an offset in the object, or false */
typedef bool (*lbr_map_fn)(void *ctx, u32 pid, u64 addr, u64 *off);

struct lbr_agg {
	struct lbr_table ranges, edges, ips;	/* ips: a = offset, b = 0 */
	struct lbr_stats st;
	lbr_map_fn map;
	void *map_ctx;
};

void lbr__init(struct lbr_agg *g, lbr_map_fn map, void *ctx);
void lbr__free(struct lbr_agg *g);
/* one sample: its IP (counted if in the object) and its branch stack, entry 0 newest */
int lbr__add(struct lbr_agg *g, const struct perf_sample *s);
/* the count of one pair, 0 if absent */
u64 lbr_table__get(const struct lbr_table *t, u64 a, u64 b);

#endif
