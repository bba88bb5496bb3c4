// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* table_cache: a table written to the build-id cache and read back is the table built, rows,
 * pages and chunks; a damaged file (a byte changed, cut short, counts that do not add up,
 * a page pointing past the rows under a right checksum) is refused, and one in the cache
 * removed so that the table built again takes its place; a cache not ours is not
 * read; a job with a cache reads the table the first job of that build kept, even where the
 * file at hand is no longer that build, and a job without a build-id by the file's. */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "helpers.h"
#include "lib/hashidx.h"
#include "symbols/build_id.h"
#include "unwind/table_cache.h"
#include "unwind/table_worker.h"
#include "unwind/unwind_table.h"

TestSuite(table_cache, .fini = cleanup_tmpdir);

#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"

static void expect_same(const struct unwind_table *a, const struct unwind_table *b)
{
	cr_assert_eq(a->nr_rows, b->nr_rows);
	cr_assert_eq(a->nr_pages, b->nr_pages);
	cr_expect_eq(a->base, b->base);
	cr_expect_eq(a->end, b->end);
	cr_expect_eq(a->nr_segs, b->nr_segs);
	cr_expect_eq(memcmp(a->segs, b->segs, sizeof(a->segs)), 0);
	cr_expect_eq(memcmp(&a->st, &b->st, sizeof(a->st)), 0);
	cr_expect_eq(memcmp(a->rows, b->rows, a->nr_rows * sizeof(*a->rows)), 0);
	cr_expect_eq(memcmp(a->pages, b->pages, a->nr_pages * sizeof(*a->pages)), 0);
	cr_assert_eq(!a->subs, !b->subs);
	if (a->subs)
		cr_expect_eq(memcmp(a->subs, b->subs, a->nr_pages * sizeof(*a->subs)), 0);
}

Test(table_cache, encoded_and_decoded_is_the_table_built)
{
	struct unwind_table *t, *back;
	size_t size;
	u8 *buf;

	cr_assert_eq(unwind_table__build_path(LIBC, &t), 0);
	cr_assert_eq(table_cache__encode(t, &buf, &size), 0);
	cr_assert_eq(table_cache__decode(buf, size, &back), 0);
	expect_same(t, back);
	/* the lookups answer alike */
	for (u64 a = t->base; a < t->end; a += 97)
		cr_assert_eq(unwind_table__find(t, a) ? unwind_table__find(t, a)->pc : ~0u,
			     unwind_table__find(back, a) ? unwind_table__find(back, a)->pc : ~0u);
	unwind_table__free(back);
	free(buf);
	unwind_table__free(t);
}

/* the checksum again over the bytes after it (as table_cache.c computes it), for a file made
 * inconsistent on purpose */
static void reseal(u8 *buf, size_t size)
{
	u64 sum = hashidx__hash(buf + 16, size - 16, 0x6873627075776e74ull);

	memcpy(buf + 8, &sum, sizeof(sum));
}

Test(table_cache, a_damaged_file_is_refused)
{
	struct unwind_table *t, *back = (void *)1;
	size_t size, head;
	u8 *buf, *copy;
	u64 nr_rows;

	cr_assert_eq(unwind_table__build_path(LIBC, &t), 0);
	cr_assert_eq(table_cache__encode(t, &buf, &size), 0);
	head = size - t->nr_rows * sizeof(*t->rows) - t->nr_pages * (sizeof(*t->pages) + sizeof(*t->subs));
	copy = malloc(size);
	cr_assert(copy);
	/* a byte of a row changed */
	memcpy(copy, buf, size);
	copy[head + 5] ^= 0x40;
	cr_expect_eq(table_cache__decode(copy, size, &back), -EBADMSG);
	cr_expect_null(back);
	/* cut short, and shorter than its head */
	cr_expect_eq(table_cache__decode(buf, size - 1, &back), -EBADMSG);
	cr_expect_eq(table_cache__decode(buf, 10, &back), -EBADMSG);
	/* another magic (another format) */
	memcpy(copy, buf, size);
	copy[7] = '9';
	cr_expect_eq(table_cache__decode(copy, size, &back), -EBADMSG);
	/* counts that do not add up to the size, resealed */
	memcpy(copy, buf, size);
	memcpy(&nr_rows, copy + 40, sizeof(nr_rows));	/* after magic, checksum, 2 u32, base, end */
	cr_assert_eq(nr_rows, t->nr_rows, "the head's layout changed: update this test");
	nr_rows++;
	memcpy(copy + 40, &nr_rows, sizeof(nr_rows));
	reseal(copy, size);
	cr_expect_eq(table_cache__decode(copy, size, &back), -EBADMSG);
	/* a page pointing past the rows, resealed: the checksum is right, the table is not */
	memcpy(copy, buf, size);
	{
		struct unwind_page pg = { .first = (u32)t->nr_rows, .nr = 2 };

		memcpy(copy + head + t->nr_rows * sizeof(*t->rows), &pg, sizeof(pg));
	}
	reseal(copy, size);
	cr_expect_eq(table_cache__decode(copy, size, &back), -EBADMSG);
	/* and the untouched bytes still read */
	cr_expect_eq(table_cache__decode(buf, size, &back), 0);
	unwind_table__free(back);
	free(copy);
	free(buf);
	unwind_table__free(t);
}

static void libc_id(u8 *bid, size_t *n)
{
	cr_assert_eq(build_id__read(LIBC, bid, BUILD_ID_MAX, n), 0);
}

Test(table_cache, kept_and_read_back_from_the_build_id_cache)
{
	char dir[PATH_MAX];
	struct unwind_table *t, *back;
	u8 bid[BUILD_ID_MAX];
	size_t n;

	snprintf(dir, sizeof(dir), "%s/cache", tmpdir());
	libc_id(bid, &n);
	cr_assert_eq(unwind_table__build_path(LIBC, &t), 0);
	cr_expect_eq(table_cache__load(dir, bid, n, &back), -ENOENT, "an empty cache");
	cr_assert_eq(table_cache__store(dir, bid, n, t), 0);
	cr_assert_eq(table_cache__load(dir, bid, n, &back), 0);
	expect_same(t, back);
	unwind_table__free(back);
	/* another build-id: none */
	bid[0] ^= 1;
	cr_expect_eq(table_cache__load(dir, bid, n, &back), -ENOENT);
	bid[0] ^= 1;
	/* a damaged file is refused and removed, and the table kept again in its place */
	{
		struct run_result *r = malloc(sizeof(*r));
		char hex[2 * BUILD_ID_MAX + 1];

		cr_assert(r);
		build_id__hex(bid, n, hex, sizeof(hex));
		cr_assert_eq(run(r, "f=$(ls %s/%.2s/%s/unwind-*) && printf x | dd of=$f bs=1 seek=300 "
				 "conv=notrunc 2>/dev/null", dir, hex, hex + 2), 0, "%s", r->err);
		free(r);
		cr_expect_eq(table_cache__load(dir, bid, n, &back), -EBADMSG);
		cr_expect_eq(table_cache__load(dir, bid, n, &back), -ENOENT, "the damaged file stays");
		cr_assert_eq(table_cache__store(dir, bid, n, t), 0);
		cr_assert_eq(table_cache__load(dir, bid, n, &back), 0);
		expect_same(t, back);
		unwind_table__free(back);
	}
	/* a cache whose root others may write is not read */
	cr_assert_eq(chmod(dir, 0777), 0);
	cr_expect_eq(table_cache__load(dir, bid, n, &back), -EPERM);
	cr_expect_null(back);
	cr_assert_eq(chmod(dir, 0700), 0);
	unwind_table__free(t);
}

Test(table_cache, a_job_reads_the_table_the_first_of_its_build_kept)
{
	char dir[PATH_MAX];
	u8 bid[BUILD_ID_MAX];
	struct table_job *a, *b, *c;
	size_t n;

	snprintf(dir, sizeof(dir), "%s/cache", tmpdir());
	libc_id(bid, &n);
	a = table_job__new(LIBC, LIBC, bid, (u8)n);
	cr_assert(a);
	a->cache = dir;
	table_job__run(a);
	cr_assert_eq(a->err, 0, "%s", strerror(-a->err));
	cr_expect(!a->cached, "built: nothing was kept yet");
	/* the second reads it even from a path that is another file now: the table is the
	 * build's, whatever is at hand */
	b = table_job__new(LIBC, "/nonexistent/libc.so.6", bid, (u8)n);
	cr_assert(b);
	b->cache = dir;
	table_job__run(b);
	cr_assert_eq(b->err, 0, "%s", strerror(-b->err));
	cr_expect(b->cached);
	expect_same(a->table, b->table);
	/* an object known by its path alone (no build-id given): the file's own names it */
	c = table_job__new(LIBC, LIBC, NULL, 0);
	cr_assert(c);
	c->cache = dir;
	table_job__run(c);
	cr_assert_eq(c->err, 0, "%s", strerror(-c->err));
	cr_expect(c->cached);
	expect_same(a->table, c->table);
	table_job__free(a);
	table_job__free(b);
	table_job__free(c);
}
