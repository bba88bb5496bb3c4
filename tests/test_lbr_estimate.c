// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* lbr_estimate: fall-through ranges over counts.c's inner() give each block they run through
 * their count; ranges across functions, objects or backwards are left out; the scale is the
 * sampled weight over the ranges seen. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <string.h>
#include <sys/stat.h>
#include "symbols/elf_image.h"
#include "helpers.h"
#include "hsbpf.h"
#include "report/lbr_estimate.h"

#define BASE 0x555555554000ull

static const struct elf_func *func(const struct elf_image *img, const char *name)
{
	for (size_t i = 0; i < img->nr_funcs; i++)
		if (!strcmp(img->funcs[i].name, name))
			return &img->funcs[i];
	return NULL;
}

static void add_range(struct profile *p, u32 pid, u64 a, u64 b, u64 count)
{
	struct profile_lbr l = { .pid = pid, .kind = HSBPF_LBR_RANGE, .a = a, .b = b, .count = count };

	cr_assert_eq(profile__add_lbr(p, &l), 0);
}

/* "/other" cannot be opened: its warning is expected */
Test(lbr_estimate, ranges_count_the_blocks_they_run_through, .init = cr_redirect_stderr)
{
	const char *bin = fixture("counts");
	struct elf_image *img = elf_image__open(bin);
	struct profile *p = profile__new();
	struct profile_lbr edge = { .pid = 8, .kind = HSBPF_LBR_EDGE, .count = 100 };
	const struct elf_func *inner, *copy;
	const struct bblock *first, *last;
	struct bblock_table *bt;
	struct symbolizer *sy;
	struct stat st;
	double *execs;
	u64 used;

	cr_assert(img && p);
	bt = bblock_table__build(img);
	inner = func(img, "inner");
	copy = func(img, "copy");
	cr_assert(bt && inner && copy);
	first = bblock_table__find(bt, inner->addr);
	last = bblock_table__find(bt, inner->addr + inner->size - 1);
	cr_assert(first && last && last > first);
	cr_assert_eq(stat(bin, &st), 0);
	/* the PIE mapped whole: its text's file offsets are its addresses */
	profile__add_mapping(p, 8, 0, BASE, st.st_size, 0, bin, NULL, 0);
	profile__add_mapping(p, 9, 0, BASE, st.st_size, 0, "/other", NULL, 0);
	profile__add_comm(p, 8, 0, "counts", false);
	profile__finish(p);
	add_range(p, 8, BASE + first->start, BASE + last->last, 3);	/* all of inner() */
	add_range(p, 8, BASE + first->start, BASE + first->last, 4);	/* its entry block */
	add_range(p, 8, BASE + inner->addr, BASE + copy->addr, 50);	/* two functions */
	add_range(p, 8, BASE + last->last, BASE + first->start, 60);	/* backwards */
	add_range(p, 9, BASE + first->start, BASE + last->last, 70);	/* another object */
	edge.a = BASE + first->start;
	edge.b = BASE + last->last;
	cr_assert_eq(profile__add_lbr(p, &edge), 0);		/* not a range */
	sy = symbolizer__new(p);
	execs = calloc(bt->nr, sizeof(*execs));
	cr_assert(sy && execs);

	lbr_estimate__block_execs(p, sy, bin, bt, execs, &used);
	cr_expect_eq(used, 2);
	for (size_t i = 0; i < bt->nr; i++) {
		const struct bblock *b = &bt->blocks[i];
		double want = b == first ? 7 : b > first && b <= last ? 3 : 0;

		cr_expect_eq(execs[i], want, "block %#llx: %g, not %g", (unsigned long long)b->start,
			     execs[i], want);
	}
	free(execs);
	symbolizer__free(sy);
	bblock_table__free(bt);
	elf_image__close(img);
	profile__free(p);
}

Test(lbr_estimate, scale_is_the_sampled_weight_over_the_ranges)
{
	struct profile *p = profile__new();
	struct profile_sample s = { .pid = 1, .ip = 0x1000, .count = 2, .weight = 6000 };
	struct profile_lbr edge = { .pid = 1, .kind = HSBPF_LBR_EDGE, .count = 1000 };

	cr_assert(p);
	cr_expect_eq(lbr_estimate__scale(p), 1.0, "nothing sampled");
	cr_assert_eq(profile__add_sample(p, &s), 0);
	cr_expect_eq(lbr_estimate__scale(p), 1.0, "no ranges");
	cr_assert_eq(profile__add_lbr(p, &edge), 0);
	cr_expect_eq(lbr_estimate__scale(p), 1.0, "edges are no ranges");
	add_range(p, 1, 0x1000, 0x1010, 10);
	add_range(p, 1, 0x2000, 0x2010, 20);
	cr_expect_eq(lbr_estimate__scale(p), 200.0);	/* 6000 / 30 */
	profile__free(p);
}
