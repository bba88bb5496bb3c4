// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* table_worker: a job built on the worker's thread gives the table the same file gives when
 * built here, rows and all; a file that is not the build named is -ESTALE and a missing one
 * its errno; jobs come back in the order given, none before it is finished, and the worker
 * stops with jobs still queued without leaking them (make test-asan). */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "helpers.h"
#include "symbols/build_id.h"
#include "unwind/table_worker.h"
#include "unwind/unwind_table.h"

#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"

/* the next finished job, waited for up to 60 s (a loaded machine) */
static struct table_job *wait_take(struct table_worker *w)
{
	struct table_job *j = NULL;

	for (int i = 0; i < 6000 && !(j = table_worker__take(w)); i++)
		usleep(10000);
	cr_assert(j, "the worker finished no job within 60 s");
	return j;
}

static struct table_job *job_for(const char *path)
{
	u8 bid[BUILD_ID_MAX];
	size_t n = 0;
	struct table_job *j;

	cr_assert_eq(build_id__read(path, bid, sizeof(bid), &n), 0, "%s has no build-id", path);
	j = table_job__new(path, path, bid, (u8)n);
	cr_assert(j);
	return j;
}

Test(table_worker, a_table_built_there_is_the_table_built_here)
{
	struct table_worker *w = table_worker__new();
	struct unwind_table *here;
	struct table_job *j;

	cr_assert(w);
	cr_assert_eq(unwind_table__build_path(LIBC, &here), 0);
	table_worker__submit(w, job_for(LIBC));
	cr_expect_eq(table_worker__busy(w), 1);
	j = wait_take(w);
	cr_expect_eq(table_worker__busy(w), 0);
	cr_assert_eq(j->err, 0, "%s", strerror(-j->err));
	cr_assert(j->table);
	cr_expect_str_eq(j->path, LIBC);
	cr_expect_eq(j->table->nr_rows, here->nr_rows);
	cr_expect_eq(j->table->nr_pages, here->nr_pages);
	cr_expect_eq(j->table->base, here->base);
	cr_expect_eq(j->table->end, here->end);
	cr_expect_eq(j->table->nr_segs, here->nr_segs);
	cr_expect_eq(memcmp(j->table->rows, here->rows, here->nr_rows * sizeof(*here->rows)), 0);
	cr_expect_eq(memcmp(j->table->pages, here->pages, here->nr_pages * sizeof(*here->pages)), 0);
	cr_expect_gt(j->build_ns, 0);
	table_job__free(j);
	unwind_table__free(here);
	table_worker__free(w);
}

Test(table_worker, another_build_is_stale_and_a_missing_file_says_why)
{
	struct table_job *j = job_for(LIBC), *gone;
	u8 other[BUILD_ID_MAX] = { 1, 2, 3, 4 };

	j->build_id[0] ^= 0xff;
	table_job__run(j);
	cr_expect_eq(j->err, -ESTALE);
	cr_expect_null(j->table);
	table_job__free(j);

	gone = table_job__new("/nonexistent/lib.so", "/nonexistent/lib.so", other, 0);
	cr_assert(gone);
	table_job__run(gone);
	cr_expect_eq(gone->err, -ENOENT, "%d", gone->err);
	cr_expect_null(gone->table);
	table_job__free(gone);
}

/* the agent names where to read an object when a process maps it (through that process's
 * root) and the worker reads it later: a process gone meanwhile leaves the path as this
 * process sees it, still checked against the build-id; a deleted file has no other way in.
 * Before, the missing root made the job "another build" for good: a compiler run again and
 * again never got its table (a fresh-clone CI). */
Test(table_worker, a_process_gone_before_the_job_ran_leaves_the_path)
{
	u8 bid[BUILD_ID_MAX];
	size_t n = 0;
	struct table_job *j, *stale, *deleted;

	cr_assert_eq(build_id__read(LIBC, bid, sizeof(bid), &n), 0);
	j = table_job__new(LIBC, "/proc/999999999/root" LIBC, bid, (u8)n);
	cr_assert(j);
	table_job__run(j);
	cr_expect_eq(j->err, 0, "%s", strerror(-j->err));
	cr_expect_not_null(j->table);
	cr_expect_str_eq(j->open_path, LIBC);
	table_job__free(j);

	stale = table_job__new(LIBC, "/proc/999999999/root" LIBC, bid, (u8)n);
	cr_assert(stale);
	stale->build_id[0] ^= 0xff;
	table_job__run(stale);
	cr_expect_eq(stale->err, -ESTALE, "%d", stale->err);
	table_job__free(stale);

	deleted = table_job__new(LIBC " (deleted)", "/proc/999999999/map_files/1000-2000", bid, (u8)n);
	cr_assert(deleted);
	table_job__run(deleted);
	cr_expect_eq(deleted->err, -ENOENT, "%d", deleted->err);
	cr_expect_null(deleted->table);
	table_job__free(deleted);
}

Test(table_worker, the_vdso_is_built_from_our_own)
{
	struct table_job *j = table_job__new("[vdso]", "[vdso]", NULL, 0);

	cr_assert(j);
	table_job__run(j);
	cr_expect_eq(j->err, 0, "%s", strerror(-j->err));
	cr_expect(j->table && j->table->nr_rows > 0);
	table_job__free(j);
}

Test(table_worker, jobs_come_back_in_order_and_none_before_it_is_done)
{
	const char *paths[] = { LIBC, "/nonexistent/a.so", fixture("hot7030"), "/nonexistent/b.so" };
	struct table_worker *w = table_worker__new();

	cr_assert(w);
	cr_expect_null(table_worker__take(w), "a job nobody gave");
	for (size_t i = 0; i < 4; i++) {
		struct table_job *j = table_job__new(paths[i], paths[i], NULL, 0);

		cr_assert(j);
		table_worker__submit(w, j);
	}
	cr_expect_eq(table_worker__busy(w), 4);
	for (size_t i = 0; i < 4; i++) {
		struct table_job *j = wait_take(w);

		cr_expect_str_eq(j->path, paths[i]);
		cr_expect_eq(!j->err, i % 2 == 0, "%s: %d", paths[i], j->err);
		table_job__free(j);
	}
	cr_expect_eq(table_worker__busy(w), 0);
	cr_expect_null(table_worker__take(w));
	table_worker__free(w);
}

Test(table_worker, it_stops_with_jobs_queued)
{
	struct table_worker *w = table_worker__new();

	cr_assert(w);
	for (int i = 0; i < 8; i++)
		table_worker__submit(w, table_job__new(LIBC, LIBC, NULL, 0));
	/* the one in hand finished, the others freed unbuilt */
	table_worker__free(w);
}
