// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* jitmap: perf map files parsed (bad lines counted, never fatal), read again only when they
 * change, kept in the profile's JITSYMS section, and named by the symbolizer. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "helpers.h"
#include "jitmap.h"
#include "symbolizer.h"

TestSuite(jitmap, .fini = cleanup_tmpdir);

static const char good_and_bad[] =
	"7f0000001000 80 JS:*hotLoop /tmp/hot.js:1:17\n"
	"0x7f0000002000 0x40 LazyCompile:~coldLoop /tmp/hot.js:2:18\n"
	"\n"					/* empty: skipped, not counted */
	"7f0000003000 10\n"			/* no name */
	"zz 10 name\n"				/* not hex */
	"7f0000004000 0 zero_size\n"		/* covers nothing */
	"7f0000005000 100000000 too_large\n"	/* 4 GB */
	"ffffffffffffff00 1000 wraps\n"
	"7f0000006000 20 Builtin:ArgumentsAdaptor\r\n"	/* CRLF */
	"7f0000001010 8 JS:*inner_later\n"	/* inside hotLoop: a later line wins */
	"7f0000007000 20 _ZN2v88internal6String11WriteToFlatIhEEvS1_\n";

Test(jitmap, lines_parsed_and_bad_ones_counted)
{
	struct profile *p = profile__new();
	struct jitmap_stats st = {};
	const struct profile_jitsym *j;

	cr_assert_eq(jitmap__parse(p, 42, 7, good_and_bad, strlen(good_and_bad), &st), 0);
	cr_expect_eq(st.syms, 5);
	cr_expect_eq(st.malformed, 5);
	profile__finish(p);
	j = profile__find_jitsym(p, 42, 0x7f0000001000);
	cr_assert(j);
	cr_expect_str_eq(profile__str(p, j->name), "JS:*hotLoop /tmp/hot.js:1:17");
	cr_expect_eq(j->size, 0x80);
	cr_expect_eq(j->time_ns, 7);
	j = profile__find_jitsym(p, 42, 0x7f0000001014);
	cr_expect_str_eq(profile__str(p, j->name), "JS:*inner_later");
	j = profile__find_jitsym(p, 42, 0x7f0000001018);	/* past inner_later: hotLoop again */
	cr_expect_str_eq(profile__str(p, j->name), "JS:*hotLoop /tmp/hot.js:1:17");
	j = profile__find_jitsym(p, 42, 0x7f000000203f);
	cr_expect_str_eq(profile__str(p, j->name), "LazyCompile:~coldLoop /tmp/hot.js:2:18");
	cr_expect_null(profile__find_jitsym(p, 42, 0x7f0000002040));	/* one past the end */
	cr_expect_null(profile__find_jitsym(p, 43, 0x7f0000001000));	/* another process */
	j = profile__find_jitsym(p, 42, 0x7f0000006000);
	cr_expect_str_eq(profile__str(p, j->name), "Builtin:ArgumentsAdaptor");
	profile__free(p);
}

static void write_map(const char *dir, u32 pid, const char *text)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/perf-%u.map", dir, pid);
	write_bytes(path, text, strlen(text));
}

/* read from a folder, again only when changed; a line being written waits; a link is not
 * followed; the section survives a write and a read */
Test(jitmap, files_read_when_changed_and_saved_in_the_profile)
{
	const char *dir = tmpdir();
	struct jitmaps *j = jitmaps__new(dir);
	struct profile *p = profile__new(), *q;
	char path[512], link[512];

	write_map(dir, 100, "1000 10 first\n2000 10 seco");
	cr_assert_eq(jitmaps__read(j, p, 100, 1), 0);
	cr_expect_eq(p->nr_jitsyms, 1);
	cr_expect_eq(p->stats.jit_malformed, 1, "an unterminated last line is not taken");
	cr_expect_eq(p->stats.jit_maps, 1);
	cr_assert_eq(jitmaps__read(j, p, 100, 2), 0);	/* unchanged: not read again */
	cr_expect_eq(p->nr_jitsyms, 1);
	cr_expect_eq(profile__find_jitsym(p, 100, 0x1000)->time_ns, 1);
	write_map(dir, 100, "1000 10 first\n2000 10 second\n");
	cr_assert_eq(jitmaps__read(j, p, 100, 3), 0);
	cr_expect_eq(p->nr_jitsyms, 2, "the new read replaces the old");
	cr_expect_eq(p->stats.jit_malformed, 0, "the line is complete now");
	cr_expect_eq(p->stats.jit_maps, 1);
	cr_expect_eq(jitmaps__read(j, p, 101, 3), -ENOENT);
	/* a scan finds every map file of the folder */
	write_map(dir, 102, "5000 10 other\nbad line\n");
	cr_assert_eq(jitmaps__scan(j, p, 4), 0);
	cr_expect(profile__find_jitsym(p, 102, 0x5008));
	cr_expect_eq(p->stats.jit_malformed, 1);
	/* a link in a world-writable folder is not followed */
	snprintf(path, sizeof(path), "%s/perf-100.map", dir);
	snprintf(link, sizeof(link), "%s/perf-103.map", dir);
	cr_assert_eq(symlink(path, link), 0);
	cr_expect_eq(jitmaps__read(j, p, 103, 5), -ELOOP);
	cr_expect_null(profile__find_jitsym(p, 103, 0x1000));

	snprintf(path, sizeof(path), "%s/p.data", dir);
	cr_assert_eq(profile__write(p, path), 0);
	cr_assert_eq(profile__read(path, &q), 0);
	cr_expect_eq(q->nr_jitsyms, 3);
	cr_expect_str_eq(profile__str(q, profile__find_jitsym(q, 100, 0x2004)->name), "second");
	profile__free(q);
	profile__free(p);
	jitmaps__free(j);
}

/* JIT code in an anonymous mapping is named from the map file, demangled when mangled */
Test(jitmap, symbolizer_names_jit_code)
{
	struct profile *p = profile__new();
	struct jitmap_stats st = {};
	struct symbolizer *sy;
	struct profile_sample s = { .pid = 42, .ip = 0x7f0000001004, .count = 1 };
	struct sym_result r;

	profile__add_mapping(p, 42, 0, 0x7f0000000000, 0x10000, 0, "//anon", NULL, 0);
	profile__add_comm(p, 42, 0, "node", false);
	cr_assert_eq(jitmap__parse(p, 42, 0, good_and_bad, strlen(good_and_bad), &st), 0);
	profile__finish(p);
	sy = symbolizer__new(p);
	symbolizer__resolve(sy, &s, &r);
	cr_expect_str_eq(r.sym, "JS:*hotLoop /tmp/hot.js:1:17");
	cr_expect_eq(r.sym_off, 4);
	cr_expect_str_eq(r.dso, "[JIT] perf-42.map");
	s.ip = 0x7f0000007008;
	symbolizer__resolve(sy, &s, &r);
	cr_expect_str_eq(r.sym, "v8::internal::String::WriteToFlat<unsigned char>");
	s.ip = 0x7f0000009000;	/* in the mapping, no symbol */
	symbolizer__resolve(sy, &s, &r);
	cr_expect_str_eq(r.sym, "[unknown]");
	cr_expect_eq(symbolizer__missing(sy), 0, "//anon is not a file to open");
	symbolizer__free(sy);
	profile__free(p);
}
