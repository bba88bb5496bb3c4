// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The agent's disk spool (user/agent/spool.c): requests come back oldest first, the bound
 * removes the oldest and counts them, a new run finds what an earlier one left in order. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "agent/spool.h"
#include "helpers.h"

TestSuite(spool, .fini = cleanup_tmpdir);

static void push_text(struct spool *s, const char *text)
{
	cr_assert_eq(spool__push(s, text, strlen(text)), 0);
}

/* the oldest's text, then it removed */
static void expect_pop(struct spool *s, const char *want)
{
	size_t len;
	u64 seq;
	u8 *buf;

	cr_assert_eq(spool__peek(s, &buf, &len, &seq), 0, "want %s", want);
	cr_expect_eq(len, strlen(want));
	cr_expect(!memcmp(buf, want, len), "%.*s, want %s", (int)len, buf, want);
	free(buf);
	spool__pop(s, seq);
}

Test(spool, gives_back_the_oldest_first)
{
	char dir[4096];
	struct spool *s;
	size_t len;
	u64 seq;
	u8 *buf;

	snprintf(dir, sizeof(dir), "%s/sp", tmpdir());
	s = spool__open(dir, 0);
	cr_assert(s);
	cr_expect_eq(spool__peek(s, &buf, &len, &seq), -ENOENT);
	push_text(s, "one");
	push_text(s, "two!");
	push_text(s, "three");
	cr_expect_eq(spool__count(s), 3);
	cr_expect_eq(spool__bytes(s), 12);
	expect_pop(s, "one");
	expect_pop(s, "two!");
	push_text(s, "four");
	expect_pop(s, "three");
	expect_pop(s, "four");
	cr_expect_eq(spool__count(s), 0);
	cr_expect_eq(spool__bytes(s), 0);
	cr_expect_eq(spool__dropped(s), 0);
	spool__free(s);
}

Test(spool, the_bound_drops_the_oldest_and_counts_them)
{
	char dir[4096], big[100];
	struct spool *s;

	memset(big, 'x', sizeof(big));
	snprintf(dir, sizeof(dir), "%s/sp", tmpdir());
	s = spool__open(dir, 250);
	cr_assert(s);
	for (int i = 0; i < 5; i++) {
		big[0] = '0' + i;
		cr_assert_eq(spool__push(s, big, sizeof(big)), 0);
	}
	/* 250 bytes hold two of 100 */
	cr_expect_eq(spool__count(s), 2);
	cr_expect_eq(spool__bytes(s), 200);
	cr_expect_eq(spool__dropped(s), 3);
	{
		char want[101] = "";

		memcpy(want, big, sizeof(big));
		want[0] = '3';
		expect_pop(s, want);
		want[0] = '4';
		expect_pop(s, want);
	}
	spool__free(s);
}

Test(spool, a_request_larger_than_the_bound_is_dropped_too)
{
	char dir[4096];
	struct spool *s;

	snprintf(dir, sizeof(dir), "%s/sp", tmpdir());
	s = spool__open(dir, 3);
	cr_assert(s);
	push_text(s, "toolong");
	cr_expect_eq(spool__count(s), 0);
	cr_expect_eq(spool__dropped(s), 1);
	spool__free(s);
}

Test(spool, a_new_run_finds_the_requests_left_in_order)
{
	char dir[4096];
	struct spool *s;

	snprintf(dir, sizeof(dir), "%s/sp", tmpdir());
	s = spool__open(dir, 0);
	cr_assert(s);
	for (int i = 0; i < 12; i++) {
		char text[16];

		snprintf(text, sizeof(text), "req%d", i);
		push_text(s, text);
	}
	expect_pop(s, "req0");
	spool__free(s);
	s = spool__open(dir, 0);
	cr_assert(s);
	cr_expect_eq(spool__count(s), 11);
	for (int i = 1; i < 12; i++) {
		char text[16];

		snprintf(text, sizeof(text), "req%d", i);
		expect_pop(s, text);
	}
	/* numbers go on after the ones found */
	push_text(s, "later");
	expect_pop(s, "later");
	spool__free(s);
}

/* the spool's order is its numbers', never a clock's: files written across a step of the wall
 * clock (their times going back a day, then forward) come back in the order pushed */
Test(spool, the_order_is_the_numbers_not_the_files_times)
{
	static const char *const texts[] = { "first", "second", "third" };
	static const time_t mtimes[] = { 1795768530, 1795768530 - 86400, 1795768530 + 3600 };
	char dir[4096];
	struct dirent *d;
	struct spool *s;
	DIR *dp;

	snprintf(dir, sizeof(dir), "%s/sp", tmpdir());
	s = spool__open(dir, 0);
	cr_assert(s);
	for (int i = 0; i < 3; i++)
		push_text(s, texts[i]);
	spool__free(s);
	dp = opendir(dir);
	cr_assert(dp);
	while ((d = readdir(dp))) {
		u64 seq = strtoull(d->d_name, NULL, 10);
		struct timespec ts[2];

		if (d->d_name[0] == '.')
			continue;
		cr_assert(seq < 3, "%s", d->d_name);
		ts[0] = ts[1] = (struct timespec){ .tv_sec = mtimes[seq] };
		cr_assert_eq(utimensat(dirfd(dp), d->d_name, ts, 0), 0);
	}
	closedir(dp);
	s = spool__open(dir, 0);
	cr_assert(s);
	for (int i = 0; i < 3; i++)
		expect_pop(s, texts[i]);
	spool__free(s);
}

Test(spool, a_popped_request_already_dropped_by_the_bound_leaves_the_newer)
{
	char dir[4096];
	struct spool *s;
	size_t len;
	u64 seq;
	u8 *buf;

	snprintf(dir, sizeof(dir), "%s/sp", tmpdir());
	s = spool__open(dir, 10);
	cr_assert(s);
	push_text(s, "aaaaa");
	cr_assert_eq(spool__peek(s, &buf, &len, &seq), 0);
	free(buf);
	/* while "aaaaa" is being sent, two more push it out */
	push_text(s, "bbbbb");
	push_text(s, "ccccc");
	spool__pop(s, seq);
	cr_expect_eq(spool__count(s), 2);
	expect_pop(s, "bbbbb");
	spool__free(s);
}
