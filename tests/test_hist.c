// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* hist: grouping by keys, ordering, the Wilson interval, and the low-confidence mark. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "report/hist.h"
#include "symbols/inline.h"

static void add(struct hist *h, u32 pid, const char *sym, const char *dso, u64 count)
{
	struct hist_sample s = {
		.pid = pid, .count = count, .weight = count * 10,
		.r = { .sym = sym, .dso = dso, .comm = pid == 1 ? "one" : "two" },
	};

	cr_assert_eq(hist__add(h, &s), 0);
}

Test(hist, groups_by_symbol_and_sorts)
{
	enum sort_key k = SORT_SYM;
	struct hist *h = hist__new(&k, 1);

	add(h, 1, "b", "/x", 5);
	add(h, 2, "a", "/x", 5);
	add(h, 1, "c", "/x", 9);
	add(h, 2, "b", "/x", 1);
	add(h, 2, "b", "/y", 1);	/* same name, other object: another row */
	hist__sort(h);
	cr_assert_eq(h->nr_rows, 4);
	cr_expect_eq(h->total, 21);
	cr_expect_str_eq(h->rows[0].sym, "c");
	cr_expect_str_eq(h->rows[1].sym, "b");	/* 6 */
	cr_expect_eq(h->rows[1].count, 6);
	cr_expect_eq(h->rows[1].weight, 60);
	cr_expect_str_eq(h->rows[2].sym, "a");
	cr_expect_str_eq(h->rows[3].dso, "/y");
	/* adding after a sort still finds the rows */
	add(h, 1, "a", "/x", 100);
	cr_expect_eq(h->nr_rows, 4);
	hist__free(h);
}

Test(hist, multiple_keys)
{
	enum sort_key keys[2];
	int n;
	struct hist *h;

	cr_assert_eq(hist__parse_sort("comm,sym", keys, &n), 0);
	cr_assert_eq(n, 2);
	h = hist__new(keys, n);
	add(h, 1, "f", "/x", 1);
	add(h, 2, "f", "/x", 1);
	add(h, 1, "f", "/x", 1);
	cr_expect_eq(h->nr_rows, 2);
	hist__free(h);
	cr_expect_eq(hist__parse_sort("sym,bogus", keys, &n), -EINVAL);
	cr_expect_eq(hist__parse_sort("", keys, &n), -EINVAL);
}

/* a line inlined at two call sites, or into two functions, makes a row for each: the row says
 * where and into what (a deep.c helper l4 inlined into l2 and into l3 made one row, labelled
 * with whichever came first) */
Test(hist, inlined_line_rows_by_call_site_and_function)
{
	static const struct inline_frame in_l2[] = { { "l4", "deep.c", 6 }, { "l2", "deep.c", 7 } },
					 in_l3[] = { { "l4", "deep.c", 5 }, { "l3", "deep.c", 8 } },
					 in_l3_too[] = { { "l4", "deep.c", 5 }, { "l3", "deep.c", 8 },
							 { "l1", "deep.c", 9 } },
					 other_site[] = { { "l4", "deep.c", 12 }, { "l3", "deep.c", 8 } };
	const struct inline_frame *chains[] = { in_l2, in_l3, in_l3_too, other_site, in_l2 };
	int depth[] = { 2, 2, 3, 2, 2 };
	enum sort_key k = SORT_LINE;
	struct hist *h = hist__new(&k, 1);

	for (int i = 0; i < 5; i++) {
		struct hist_sample hs = {
			.pid = 1, .count = 1,
			.r = { .sym = "work", .dso = "/deep", .file = "deep.c", .line = 4,
			       .inl = chains[i], .nr_inl = depth[i] },
		};

		cr_assert_eq(hist__add(h, &hs), 0);
	}
	hist__sort(h);
	/* in l2 at :6 (twice); in l3 at :5 (the same row whatever is above l3); at :12 */
	cr_assert_eq(h->nr_rows, 3);
	cr_expect_eq(h->rows[0].count, 2);
	cr_expect_eq(h->rows[1].count, 2);
	cr_expect_eq(h->rows[2].count, 1);
	hist__free(h);
}

Test(hist, wilson_interval_known_values)
{
	/* 50 of 100: Wilson 95% interval [0.4038, 0.5962] */
	cr_expect(fabs(hist__ci95(50, 100) - 0.09617) < 1e-4, "%f", hist__ci95(50, 100));
	/* 0 of 100: [0, 0.0370], half-width 0.0185 */
	cr_expect(fabs(hist__ci95(0, 100) - 0.01849) < 1e-4, "%f", hist__ci95(0, 100));
	cr_expect_eq(hist__ci95(0, 0), 0);
	/* shrinks as 1/sqrt(n) */
	cr_expect(fabs(hist__ci95(5000, 10000) * 10 - hist__ci95(50, 100)) < 3e-3);
}

Test(hist, low_confidence_mark)
{
	cr_expect(hist__low_confidence(3, 10000));
	cr_expect(hist__low_confidence(14, 10000));
	cr_expect_not(hist__low_confidence(20, 10000));
	cr_expect_not(hist__low_confidence(7000, 10000));
}

Test(hist, text_fits_100_columns_and_json_has_fields)
{
	enum sort_key k = SORT_SYM;
	struct hist *h = hist__new(&k, 1);
	struct profile *p = profile__new();
	char *buf = NULL, line[512];
	size_t len = 0;
	FILE *f;

	add(h, 1, "a_very_long_symbol_name_that_goes_on_and_on_template_instantiation_of_something",
	    "/usr/lib/x86_64-linux-gnu/a/very/long/path/to/libsomething.so.1.2.3", 10);
	add(h, 1, "short", "/x", 3);
	hist__sort(h);
	f = open_memstream(&buf, &len);
	hist__print(h, p, OUT_TEXT, 0, f);
	fclose(f);
	f = fmemopen(buf, len, "r");
	while (fgets(line, sizeof(line), f)) {
		/* count characters, not bytes */
		size_t cols = 0;

		for (char *c = line; *c && *c != '\n'; c++)
			cols += ((unsigned char)*c & 0xc0) != 0x80;
		cr_expect_leq(cols, 100, "line too wide: %s", line);
	}
	fclose(f);
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	hist__print(h, p, OUT_JSON, 0, f);
	fclose(f);
	for (const char *field = "event\0period\0total_samples\0dropped\0symbol\0dso\0samples\0percent\0ci95\0";
	     *field; field += strlen(field) + 1) {
		char quoted[64];

		snprintf(quoted, sizeof(quoted), "\"%s\":", field);
		cr_expect(strstr(buf, quoted), "JSON lacks %s", field);
	}
	free(buf);
	profile__free(p);
	hist__free(h);
}

/* perf map files ignored (untrusted) or capped are said in the header, and in JSON; none: nothing */
Test(hist, perf_maps_ignored_and_capped_in_the_header)
{
	enum sort_key k = SORT_SYM;
	struct hist *h = hist__new(&k, 1);
	struct profile *p = profile__new();
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	add(h, 1, "short", "/x", 3);
	hist__sort(h);
	f = open_memstream(&buf, &len);
	hist__print(h, p, OUT_TEXT, 0, f);
	fclose(f);
	cr_expect_null(strstr(buf, "perf map"), "%s", buf);
	free(buf);
	buf = NULL;
	p->stats.jit_ignored = 2;
	p->stats.jit_capped = 1;
	f = open_memstream(&buf, &len);
	hist__print(h, p, OUT_TEXT, 0, f);
	fclose(f);
	cr_expect(strstr(buf, "# WARNING: 2 perf map files were ignored as untrusted"), "%s", buf);
	cr_expect(strstr(buf, "# WARNING: 1 perf map files were too large"), "%s", buf);
	for (char *l = buf, *nl; (nl = strchr(l, '\n')); l = nl + 1)
		cr_expect_leq(nl - l, 100, "line too wide: %.*s", (int)(nl - l), l);
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	hist__print(h, p, OUT_JSON, 0, f);
	fclose(f);
	cr_expect(strstr(buf, "\"jit_ignored\":2"), "%s", buf);
	cr_expect(strstr(buf, "\"jit_capped\":1"), "%s", buf);
	free(buf);
	profile__free(p);
	hist__free(h);
}

Test(hist, prepend_key_moves_or_inserts)
{
	enum sort_key keys[HIST_MAX_KEYS];
	int n;

	cr_assert_eq(hist__parse_sort("sym,pid", keys, &n), 0);
	cr_assert_eq(hist__prepend_key(keys, &n, SORT_CGROUP), 0);
	cr_expect_eq(n, 3);
	cr_expect(keys[0] == SORT_CGROUP && keys[1] == SORT_SYM && keys[2] == SORT_PID);
	cr_assert_eq(hist__prepend_key(keys, &n, SORT_PID), 0);
	cr_expect_eq(n, 3, "a key already there is moved, not repeated");
	cr_expect(keys[0] == SORT_PID && keys[1] == SORT_CGROUP && keys[2] == SORT_SYM);
	n = HIST_MAX_KEYS;
	for (int i = 0; i < n; i++)
		keys[i] = SORT_SYM;
	cr_expect_eq(hist__prepend_key(keys, &n, SORT_CGROUP), -E2BIG);
}

/* the text of a two-key report's title line */
static void titles(enum sort_key a, enum sort_key b, char *out, size_t size)
{
	enum sort_key keys[2] = { a, b };
	struct hist *h = hist__new(keys, 2);
	struct profile *p = profile__new();
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	add(h, 1, "work_70", "/usr/lib/x86_64-linux-gnu/libsomething.so.1", 10);
	hist__sort(h);
	f = open_memstream(&buf, &len);
	hist__print(h, p, OUT_TEXT, 0, f);
	fclose(f);
	/* the first line that is not a # comment */
	for (char *l = buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (*l != '#') {
			snprintf(out, size, "%.*s", (int)strcspn(l, "\n"), l);
			break;
		}
	}
	free(buf);
	profile__free(p);
	hist__free(h);
}

static int occurrences(const char *s, const char *w)
{
	int n = 0;

	for (const char *q = strstr(s, w); q; q = strstr(q + 1, w))
		n++;
	return n;
}

/* with two keys every key's columns fit, and the object is shown once */
Test(hist, two_keys_keep_their_columns)
{
	char t[512];

	titles(SORT_SYM, SORT_PID, t, sizeof(t));
	cr_expect(strstr(t, "Symbol") && strstr(t, "Object") && strstr(t, "Pid") && strstr(t, "Command"),
		  "%s", t);
	titles(SORT_DSO, SORT_SYM, t, sizeof(t));
	cr_expect_eq(occurrences(t, "Object"), 1, "%s", t);
	cr_expect(strstr(t, "Symbol"), "%s", t);
	titles(SORT_COMM, SORT_SYM, t, sizeof(t));
	cr_expect(strstr(t, "Command") && strstr(t, "Symbol") && strstr(t, "Object"), "%s", t);
	titles(SORT_IP, SORT_PID, t, sizeof(t));
	cr_expect(strstr(t, "Address") && strstr(t, "Pid"), "%s", t);
}

/* objects are cut from the left, keeping the file name (liblzma and libc stay apart); the
 * target command is wrapped to the table's width, its words whole */
Test(hist, long_objects_keep_their_names_and_the_command_wraps)
{
	enum sort_key k[2] = { SORT_DSO, SORT_SYM };
	struct hist *h = hist__new(k, 2);
	struct profile *p = profile__new();
	char *buf = NULL, *at;
	size_t len = 0, off;
	FILE *f;

	add(h, 1, "lzma_decode", "/usr/lib/x86_64-linux-gnu/liblzma.so.5.4.1", 10);
	add(h, 1, "memcpy", "/usr/lib/x86_64-linux-gnu/libc.so.6", 5);
	hist__sort(h);
	off = snprintf(p->meta.target, sizeof(p->meta.target), "command:");
	for (int i = 0; i < 30; i++) {
		p->meta.target[off++] = ' ';
		cr_assert(str__shell_quote(i % 2 ? "it's a word" : "plain", p->meta.target,
					   sizeof(p->meta.target), &off));
	}
	f = open_memstream(&buf, &len);
	hist__print(h, p, OUT_TEXT, 0, f);
	fclose(f);
	cr_expect(strstr(buf, "\u2026/liblzma.so.5.4.1 "), "%s", buf);
	cr_expect(strstr(buf, "\u2026/libc.so.6 "), "%s", buf);
	cr_expect(strstr(buf, "# target command: plain 'it'\\''s a word' plain"), "%s", buf);
	/* every line of the header within 100 columns; the continuation lines indented */
	for (char *l = buf; (at = strchr(l, '\n')); l = at + 1) {
		size_t cols = 0;

		for (char *c = l; c < at; c++)
			cols += ((unsigned char)*c & 0xc0) != 0x80;
		cr_expect_leq(cols, 100, "%.*s", (int)(at - l), l);
	}
	cr_expect(strstr(buf, "\n#   "), "%s", buf);
	/* the words were not split: each quoted word reads back whole */
	cr_expect_eq(strstr(buf, "'it'\\''s\n"), NULL, "%s", buf);
	free(buf);
	profile__free(p);
	hist__free(h);
}

/* perf's srcfile: a file's lines and functions are one row, a sample without a line another */
Test(hist, srcfile_groups_the_lines_of_a_file)
{
	static const struct { const char *file; int line; const char *sym; u64 count; } samples[] = {
		{ "/src/a.c", 1, "f", 5 }, { "/src/a.c", 9, "g", 4 }, { "/src/b.c", 3, "h", 2 },
		{ NULL, 0, "k", 1 },
	};
	enum sort_key k;
	struct hist *h;
	struct profile *p = profile__new();
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	cr_assert_eq(hist__parse_sort("srcfile", &k, &(int){ 0 }), 0);
	cr_assert_eq(k, SORT_SRCFILE);
	h = hist__new(&k, 1);
	for (size_t i = 0; i < ARRAY_SIZE(samples); i++) {
		struct hist_sample s = {
			.pid = 1, .count = samples[i].count,
			.r = { .sym = samples[i].sym, .dso = "/x", .file = samples[i].file,
			       .line = samples[i].line },
		};

		cr_assert_eq(hist__add(h, &s), 0);
	}
	hist__sort(h);
	cr_assert_eq(h->nr_rows, 3);
	cr_expect_eq(h->rows[0].count, 9);
	cr_expect_str_eq(h->rows[0].file, "/src/a.c");
	cr_expect_eq(h->rows[1].count, 2);
	cr_expect_null(h->rows[2].file);
	f = open_memstream(&buf, &len);
	hist__print(h, p, OUT_TEXT, 0, f);
	fclose(f);
	cr_expect(strstr(buf, "Source file"), "%s", buf);
	cr_expect(strstr(buf, " /src/a.c\n"), "%s", buf);
	cr_expect(strstr(buf, " [unknown]\n"), "%s", buf);
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	hist__print(h, p, OUT_JSON, 0, f);
	fclose(f);
	cr_expect(strstr(buf, "\"sort\":[\"srcfile\"]"), "%s", buf);
	cr_expect(strstr(buf, "\"file\":\"/src/b.c\""), "%s", buf);
	cr_expect(strstr(buf, "\"file\":null"), "%s", buf);
	free(buf);
	profile__free(p);
	hist__free(h);
}

/* the target line says what is known of the recording: an imported perf.data has no
 * duration, host or kernel ("0.00 s on  ()" before) */
Test(hist, the_target_line_leaves_out_what_is_not_known)
{
	enum sort_key k[1] = { SORT_SYM };
	struct profile *p = profile__new();
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	for (int i = 0; i < 3; i++) {
		struct hist *h = hist__new(k, 1);

		add(h, 1, "main", "/bin/x", 10);
		hist__sort(h);
		if (i == 0)
			snprintf(p->meta.target, sizeof(p->meta.target), "imported: perf.data");
		if (i == 1)
			snprintf(p->meta.host, sizeof(p->meta.host), "vm");
		if (i == 2) {
			p->meta.duration_ns = 1500000000;
			snprintf(p->meta.kernel, sizeof(p->meta.kernel), "6.18.0");
		}
		f = open_memstream(&buf, &len);
		hist__print(h, p, OUT_TEXT, 0, f);
		fclose(f);
		cr_expect(strstr(buf, (const char *[]){ "# target imported: perf.data\n",
			"# target imported: perf.data, on vm\n",
			"# target imported: perf.data, 1.50 s on vm (6.18.0)\n" }[i]), "%d: %s", i, buf);
		free(buf);
		buf = NULL;
		hist__free(h);
	}
	profile__free(p);
}
