// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* output: the formats' one parser (each command's set, and what it says when a name is not in
 * it), and the sink: a regular file appears whole and only on success, a device or a FIFO is
 * written in place, standard output is left to main, a failed write is an error. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "helpers.h"
#include "lib/output.h"

TestSuite(output, .fini = cleanup_tmpdir);

static const char *tpath(const char *name)
{
	static char buf[4][600];
	static int n;
	char *b = buf[n++ % 4];

	snprintf(b, 600, "%s/%s", tmpdir(), name);
	return b;
}

static char *slurp(const char *path)
{
	static char buf[4096];
	FILE *f = fopen(path, "r");
	size_t n;

	cr_assert(f, "cannot read %s", path);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

static const struct {
	const char *name;
	unsigned int allowed;
	int err;
	enum output_format fmt;
} parse_cases[] = {
	{ "text", OUT_TEXT_JSON, 0, OUT_TEXT },
	{ "json", OUT_TEXT_JSON, 0, OUT_JSON },
	{ "csv", OUT_TABLES, 0, OUT_CSV },
	{ "folded", OUT_TABLES | OUT_SET(OUT_FOLDED), 0, OUT_FOLDED },
	{ "pprof", OUT_SET(OUT_PPROF), 0, OUT_PPROF },
	{ "speedscope", OUT_SET(OUT_SPEEDSCOPE), 0, OUT_SPEEDSCOPE },
	{ "csv", OUT_TEXT_JSON, -EINVAL },	/* a format, not this command's */
	{ "xml", OUT_TABLES, -EINVAL },
	{ "", OUT_TABLES, -EINVAL },
	{ "JSON", OUT_TABLES, -EINVAL },	/* names are exact */
	{ "text", 0, -EINVAL },
};

Test(output, formats_parse_within_the_command_s_set, .init = cr_redirect_stderr)
{
	for (size_t i = 0; i < sizeof(parse_cases) / sizeof(parse_cases[0]); i++) {
		enum output_format fmt = OUT_NR_FORMATS;
		int err = output_format__parse(parse_cases[i].name, parse_cases[i].allowed, &fmt);

		cr_expect_eq(err, parse_cases[i].err, "'%s': %d", parse_cases[i].name, err);
		if (!parse_cases[i].err)
			cr_expect_eq(fmt, parse_cases[i].fmt, "'%s'", parse_cases[i].name);
		else
			cr_expect_eq(fmt, OUT_NR_FORMATS, "'%s' left fmt alone", parse_cases[i].name);
	}
}

Test(output, an_unknown_format_names_the_command_s_formats, .init = cr_redirect_stderr)
{
	enum output_format fmt;

	output_format__parse("xml", OUT_TEXT_JSON, &fmt);
	output_format__parse("xml", OUT_TABLES, &fmt);
	output_format__parse("svg", (1u << OUT_NR_FORMATS) - 1, &fmt);
	fflush(stderr);
	cr_expect_stderr_eq_str("hsbpf: unknown format 'xml' (known: text, json)\n"
				"hsbpf: unknown format 'xml' (known: text, json, csv)\n"
				"hsbpf: unknown format 'svg' (known: text, json, csv, folded, pprof, "
				"speedscope)\n");
}

Test(output, names_are_what_parse_takes)
{
	for (int f = 0; f < OUT_NR_FORMATS; f++) {
		enum output_format back;

		cr_expect_eq(output_format__parse(output_format__name(f), OUT_SET(f), &back), 0);
		cr_expect_eq(back, f);
	}
	cr_expect_str_eq(output_format__name(OUT_NR_FORMATS), "?");
}

Test(output, a_regular_file_appears_once_committed)
{
	const char *path = tpath("out.txt");
	struct output o;
	struct stat st;
	mode_t mask = umask(022);

	cr_assert_eq(output__open(&o, path, NULL), 0);
	cr_expect_neq(o.f, stdout);
	fputs("one\n", o.f);
	cr_expect_neq(access(path, F_OK), 0, "not there before it is committed");
	cr_assert_eq(output__close(&o, 0), 0);
	cr_expect_str_eq(slurp(path), "one\n");
	cr_assert_eq(stat(path, &st), 0);
	cr_expect_eq(st.st_mode & 0777, 0644, "as fopen makes it: %o", st.st_mode & 0777);
	umask(mask);
}

Test(output, a_failed_writer_leaves_what_was_there, .init = cr_redirect_stderr)
{
	const char *path = tpath("kept.txt"), *fresh = tpath("fresh.txt");
	struct output o;

	write_bytes(path, "old\n", 4);
	cr_assert_eq(output__open(&o, path, NULL), 0);
	fputs("new\n", o.f);
	cr_expect_eq(output__close(&o, -EINVAL), -EINVAL, "the writer's error, as it was");
	cr_expect_str_eq(slurp(path), "old\n");

	cr_assert_eq(output__open(&o, fresh, NULL), 0);
	fputs("half\n", o.f);
	cr_expect_eq(output__close(&o, -ENOMEM), -ENOMEM);
	cr_expect_neq(access(fresh, F_OK), 0, "no file left behind");
}

Test(output, never_onto_the_input, .init = cr_redirect_stderr)
{
	const char *path = tpath("in.data"), *link = tpath("link");
	char want[2000];
	struct output o;

	write_bytes(path, "input\n", 6);
	cr_assert_eq(symlink(path, link), 0);
	cr_expect_eq(output__open(&o, path, path), -EEXIST);
	cr_expect_eq(output__open(&o, link, path), -EEXIST, "through a link too");
	cr_expect_str_eq(slurp(path), "input\n");
	snprintf(want, sizeof(want), "hsbpf: '%s' is the input '%s': not overwritten\n"
		 "hsbpf: '%s' is the input '%s': not overwritten\n", path, path, link, path);
	fflush(stderr);
	cr_expect_stderr_eq_str(want);
}

Test(output, devices_are_written_in_place)
{
	struct output o;
	struct stat st;

	cr_assert_eq(output__open(&o, "/dev/null", NULL), 0);
	fputs("gone\n", o.f);
	cr_expect_eq(output__close(&o, 0), 0);
	cr_assert_eq(stat("/dev/null", &st), 0);
	cr_expect(S_ISCHR(st.st_mode), "/dev/null stays a device");
}

Test(output, a_fifo_is_written_in_place)
{
	const char *path = tpath("fifo");
	struct output o;
	struct stat st;
	char buf[64] = "";
	int rd;
	ssize_t n;

	cr_assert_eq(mkfifo(path, 0600), 0);
	/* a reader first: the writer's open waits for one */
	rd = open(path, O_RDONLY | O_NONBLOCK);
	cr_assert(rd >= 0);
	cr_assert_eq(output__open(&o, path, NULL), 0);
	fputs("through\n", o.f);
	cr_expect_eq(output__close(&o, 0), 0);
	n = read(rd, buf, sizeof(buf) - 1);
	close(rd);
	cr_expect_eq(n, 8);
	cr_expect_str_eq(buf, "through\n");
	cr_assert_eq(lstat(path, &st), 0);
	cr_expect(S_ISFIFO(st.st_mode), "still a FIFO");
}

Test(output, a_full_device_is_an_error, .init = cr_redirect_stderr)
{
	struct output o;

	cr_assert_eq(output__open(&o, "/dev/full", NULL), 0);
	for (int i = 0; i < 1000; i++)
		fputs("more than a buffer holds\n", o.f);
	cr_expect_eq(output__close(&o, 0), -ENOSPC);
	fflush(stderr);
	cr_expect_stderr_eq_str("hsbpf: cannot write '/dev/full': No space left on device\n");
}

Test(output, a_full_device_is_an_error_at_the_last_flush, .init = cr_redirect_stderr)
{
	struct output o;

	cr_assert_eq(output__open(&o, "/dev/full", NULL), 0);
	fputs("one short line\n", o.f);	/* buffered: fails only when flushed */
	cr_expect_eq(output__close(&o, 0), -ENOSPC);
}

Test(output, standard_output_is_main_s)
{
	struct output o;

	cr_assert_eq(output__open(&o, NULL, NULL), 0);
	cr_expect_eq(o.f, stdout);
	cr_expect_eq(output__close(&o, 0), 0);
	cr_assert_eq(output__open(&o, NULL, NULL), 0);
	cr_expect_eq(output__close(&o, -EINVAL), -EINVAL, "a writer's own error is kept");
}

Test(output, a_live_output_keeps_what_was_written, .init = cr_redirect_stderr)
{
	const char *path = tpath("live.txt");
	struct output o;

	cr_assert_eq(output__open_live(&o, NULL), 0);
	cr_expect_eq(o.f, stderr, "no path: standard error");
	cr_expect_eq(output__close(&o, 0), 0);

	cr_assert_eq(output__open_live(&o, path), 0);
	fputs("row\n", o.f);
	fflush(o.f);
	cr_expect_str_eq(slurp(path), "row\n", "read while it is written");
	cr_expect_eq(output__close(&o, 0), 0);
	cr_expect_str_eq(slurp(path), "row\n");
}
