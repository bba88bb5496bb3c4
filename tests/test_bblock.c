// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* bblock: blocks of known fixtures, stripped objects from exception frames, shared libraries,
 * and the address lookup. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include "symbols/bblock.h"
#include "symbols/elf_image.h"
#include "helpers.h"

TestSuite(bblock, .fini = cleanup_tmpdir);

static const struct elf_func *func(const struct elf_image *img, const char *name)
{
	for (size_t i = 0; i < img->nr_funcs; i++)
		if (!strcmp(img->funcs[i].name, name))
			return &img->funcs[i];
	return NULL;
}

/* counts.c's inner(): entry block, loop setup, the 4-instruction loop body, exit, and the
 * n <= 0 path: leaders at the entry, both jump targets and after each branch */
Test(bblock, loop_fixture_blocks)
{
	struct elf_image *img = elf_image__open(fixture("counts"));
	struct bblock_table *bt;
	const struct elf_func *f;
	const struct bblock *b;
	size_t n = 0;

	cr_assert(img);
	bt = bblock_table__build(img);
	cr_assert(bt);
	f = func(img, "inner");
	cr_assert(f);
	for (size_t i = 0; i < bt->nr; i++)
		n += bt->blocks[i].start >= f->addr && bt->blocks[i].start < f->addr + f->size;
	cr_expect_eq(n, 5, "inner() has %zu blocks", n);
	b = bblock_table__find(bt, f->addr);
	cr_assert(b);
	cr_expect_eq(b->start, f->addr);
	/* every instruction maps to the block that holds it, and blocks do not overlap */
	for (size_t i = 0; i < bt->nr_insns; i++) {
		b = bblock_table__find(bt, bt->insns[i]);
		cr_assert(b, "%#llx in no block", (unsigned long long)bt->insns[i]);
		cr_assert(bt->insns[i] >= b->start && bt->insns[i] <= b->last);
	}
	for (size_t i = 1; i < bt->nr; i++)
		cr_assert_geq(bt->blocks[i].start, bt->blocks[i - 1].end);
	cr_expect_null(bblock_table__find(bt, 0));
	bblock_table__free(bt);
	elf_image__close(img);
}

Test(bblock, calls_end_blocks)
{
	struct elf_image *img = elf_image__open(fixture("counts"));
	struct bblock_table *bt = bblock_table__build(img);
	const struct elf_func *m = func(img, "main");
	size_t blocks_in_main = 0;

	cr_assert(bt && m);
	for (size_t i = 0; i < bt->nr; i++)
		blocks_in_main += bt->blocks[i].start >= m->addr && bt->blocks[i].start < m->addr + m->size;
	/* two loops with a call each, a printf call and the epilogue: at least six */
	cr_expect_geq(blocks_in_main, 6);
	bblock_table__free(bt);
	elf_image__close(img);
}

/* without symbols the exception frames give the same functions, so the same blocks */
Test(bblock, stripped_object_same_blocks)
{
	char path[512], cmd[1200];
	struct elf_image *full = elf_image__open(fixture("hot7030")), *stripped;
	struct bblock_table *a, *b;
	size_t matched = 0, text = 0;

	snprintf(path, sizeof(path), "%s/hot7030.stripped", tmpdir());
	snprintf(cmd, sizeof(cmd), "strip -o %s %s", path, fixture("hot7030"));
	cr_assert_eq(system(cmd), 0);
	stripped = elf_image__open(path);
	cr_assert(full && stripped);
	cr_expect_eq(stripped->nr_funcs, 0, "strip left symbols");
	a = bblock_table__build(full);
	b = bblock_table__build(stripped);
	cr_assert(a && b);
	cr_expect(b->from_eh_frame);
	for (size_t i = 0; i < a->nr; i++) {
		const struct bblock *x = &a->blocks[i], *y;
		const struct elf_func *f = elf_image__func_at(full, x->start);

		if (!f || (strcmp(f->name, "work_70") && strcmp(f->name, "work_30") && strcmp(f->name, "main")))
			continue;
		text++;
		y = bblock_table__find(b, x->start);
		matched += y && y->start == x->start && y->last == x->last && y->ninsns == x->ninsns;
	}
	cr_expect_gt(text, 8);
	cr_expect_eq(matched, text, "%zu of %zu blocks found again without symbols", matched, text);
	bblock_table__free(a);
	bblock_table__free(b);
	elf_image__close(full);
	elf_image__close(stripped);
}

Test(bblock, shared_library)
{
	struct elf_image *img = elf_image__open("/lib/x86_64-linux-gnu/libc.so.6");
	struct bblock_table *bt;
	const struct elf_func *f;

	cr_assert(img, "no libc");
	bt = bblock_table__build(img);
	cr_assert(bt);
	cr_expect_gt(bt->nr, 10000);
	/* every exported function starts a block */
	for (size_t i = 0; i < img->nr_funcs; i++) {
		f = &img->funcs[i];
		cr_assert(bblock_table__find(bt, f->addr), "%s", f->name);
		cr_expect_eq(bblock_table__find(bt, f->addr)->start, f->addr, "%s", f->name);
	}
	bblock_table__free(bt);
	elf_image__close(img);
}
