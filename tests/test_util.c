// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* util: the parsers every command's options go through, and the escaping of text bound for a
 * terminal. */
#include <criterion/criterion.h>
#include <unistd.h>
#include <fcntl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/util.h"

/* record -d's bounds: whatever passes becomes a deadline in ns without overflowing */
Test(util, parse_seconds)
{
	static const struct {
		const char *s;
		int err;
		double v;
	} cases[] = {
		{ "1", 0, 1 },
		{ "0.5", 0, 0.5 },
		{ "2e3", 0, 2000 },
		{ "+3", 0, 3 },
		{ "0.001", 0, 0.001 },
		{ "31536000", 0, 31536000 },
		{ "0", -EINVAL },
		{ "-1", -EINVAL },
		{ "-0", -EINVAL },
		{ "0.0001", -EINVAL },	/* below the minimum */
		{ "31536001", -EINVAL },	/* above the maximum */
		{ "1e10", -EINVAL },
		{ "1.8e10", -EINVAL },	/* where the ns deadline used to overflow */
		{ "1e400", -EINVAL },	/* ERANGE: inf */
		{ "1e-400", -EINVAL },	/* ERANGE: 0 */
		{ "inf", -EINVAL },
		{ "infinity", -EINVAL },
		{ "-inf", -EINVAL },
		{ "nan", -EINVAL },
		{ "0x10", -EINVAL },
		{ "0x1p4", -EINVAL },
		{ " 2", -EINVAL },
		{ "2 ", -EINVAL },
		{ "2s", -EINVAL },
		{ "", -EINVAL },
		{ ".", -EINVAL },
		{ "e", -EINVAL },
		{ "1..2", -EINVAL },
	};
	double v;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		v = -42;
		cr_expect_eq(parse_seconds(cases[i].s, 0.001, 365 * 86400.0, &v), cases[i].err, "'%s'",
			     cases[i].s);
		if (!cases[i].err)
			cr_expect_eq(v, cases[i].v, "'%s': %g", cases[i].s, v);
		else
			cr_expect_eq(v, -42, "'%s': written on failure", cases[i].s);
	}
	cr_expect_eq(parse_seconds(NULL, 0, 1, &v), -EINVAL);
}

/* what reaches a terminal: controls and non-UTF-8 escaped, text (any script) kept */
Test(util, escape)
{
	static const struct {
		const char *in;
		const char *out;
	} cases[] = {
		{ "hot7030", "hot7030" },
		{ "", "" },
		{ "\033[2J\033]0;X\007", "\\x1b[2J\\x1b]0;X\\x07" },	/* clear, set the title */
		{ "a\tb\nc\r", "a\\x09b\\x0ac\\x0d" },
		{ "\x01\x1f\x7f", "\\x01\\x1f\\x7f" },
		{ "caf\xc3\xa9", "caf\xc3\xa9" },			/* é */
		{ "\xe2\x82\xac 5", "\xe2\x82\xac 5" },		/* € */
		{ "\xf0\x9f\x94\xa5", "\xf0\x9f\x94\xa5" },		/* U+1F525 */
		{ "\xc2\xa0", "\xc2\xa0" },				/* U+00A0, the first after C1 */
		{ "\xc2\x9b" "2J", "\\xc2\\x9b" "2J" },		/* U+009B: CSI, a C1 control */
		{ "\xc2\x80", "\\xc2\\x80" },
		{ "\x9b" "2J", "\\x9b" "2J" },			/* raw CSI: an 8-bit terminal's */
		{ "\xc3", "\\xc3" },					/* cut short at the end */
		{ "\xe2\x82" "x", "\\xe2\\x82" "x" },		/* cut short inside */
		{ "\xc0\xaf", "\\xc0\\xaf" },				/* overlong '/' */
		{ "\xe0\x80\xaf", "\\xe0\\x80\\xaf" },		/* overlong '/' */
		{ "\xed\xa0\x80", "\\xed\\xa0\\x80" },		/* a surrogate */
		{ "\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80" },	/* beyond U+10FFFF */
		{ "\xf8\x88\x80\x80\x80", "\\xf8\\x88\\x80\\x80\\x80" },
		{ "\xff", "\\xff" },
		{ "system-systemd\\x2dfsck.slice", "system-systemd\\x2dfsck.slice" },	/* kept */
	};
	char buf[256], *mem;
	size_t len;
	FILE *f;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		cr_expect_str_eq(str__escape(cases[i].in, buf, sizeof(buf)), cases[i].out, "case %zu", i);
		f = open_memstream(&mem, &len);
		cr_assert_not_null(f);
		str__fputs_escaped(cases[i].in, f);
		fclose(f);
		cr_expect_str_eq(mem, cases[i].out, "case %zu (fputs)", i);
		free(mem);
	}
	cr_expect_str_eq(str__escape(NULL, buf, sizeof(buf)), "");
}

/* a short buffer: cut before an escape or a character that does not fit whole */
Test(util, escape_into_a_short_buffer)
{
	static const struct {
		const char *in;
		size_t size;
		const char *out;
	} cases[] = {
		{ "abc\033", 4, "abc" },
		{ "abc\033", 7, "abc" },
		{ "abc\033", 8, "abc\\x1b" },
		{ "ab\xc3\xa9", 4, "ab" },
		{ "ab\xc3\xa9", 5, "ab\xc3\xa9" },
		{ "\xf0\x9f\x94\xa5", 4, "" },
		{ "abc", 1, "" },
	};
	char buf[16];

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		memset(buf, 'Z', sizeof(buf));
		cr_expect_str_eq(str__escape(cases[i].in, buf, cases[i].size), cases[i].out, "case %zu", i);
		cr_expect_eq(buf[cases[i].size], 'Z', "case %zu: wrote past size", i);
	}
}

/* option numbers are decimal, or hex after 0x: '-p 0123' is pid 123, not 83 */
Test(util, parse_u64)
{
	static const struct {
		const char *s;
		int err;
		u64 v;
	} cases[] = {
		{ "0", 0, 0 },
		{ "12", 0, 12 },
		{ "010", 0, 10 },
		{ "0123", 0, 123 },
		{ "18446744073709551615", 0, UINT64_MAX },
		{ "18446744073709551616", -EINVAL },
		{ "0x10", 0, 16 },
		{ "0X1c4", 0, 0x1c4 },
		{ "0x", -EINVAL },
		{ "0x-1", -EINVAL },
		{ "0x 1", -EINVAL },
		{ " 1", -EINVAL },
		{ "1 ", -EINVAL },
		{ "+1", -EINVAL },
		{ "-1", -EINVAL },
		{ "1e3", -EINVAL },
		{ "", -EINVAL },
	};
	u64 v;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		v = 42;
		cr_expect_eq(parse_u64(cases[i].s, &v), cases[i].err, "'%s'", cases[i].s);
		cr_expect_eq(v, cases[i].err ? 42 : cases[i].v, "'%s': %llu", cases[i].s,
			     (unsigned long long)v);
	}
	cr_expect_eq(parse_u64(NULL, &v), -EINVAL);
	cr_expect_eq(parse_hex_u64("20c4", &v), 0);
	cr_expect_eq(v, 0x20c4);
	cr_expect_eq(parse_hex_u64("01C4", &v), 0);
	cr_expect_eq(v, 0x1c4);
	cr_expect_eq(parse_hex_u64("0x1c4", &v), -EINVAL);
	cr_expect_eq(parse_hex_u64("1g", &v), -EINVAL);
	cr_expect_eq(parse_hex_u64("", &v), -EINVAL);
}

/* a shell reads each quoted word back as it was: checked by sh itself */
Test(util, shell_quote)
{
	static const char *const words[] = { "plain", "a b", "it's", "", "$HOME", "a\"b", "x=1,y",
					     "tab\there", "'", "\\n" };
	char buf[1024], cmd[1200];
	size_t off = 0;

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		if (i)
			buf[off++] = ' ';
		cr_assert(str__shell_quote(words[i], buf, sizeof(buf), &off));
	}
	cr_expect_str_eq(buf, "plain 'a b' 'it'\\''s' '' '$HOME' 'a\"b' x=1,y 'tab\there' ''\\''' '\\n'");
	snprintf(cmd, sizeof(cmd), "for w in %s; do printf '[%%s]' \"$w\"; done", buf);
	{
		char out[512] = "";
		FILE *f = popen(cmd, "r");

		cr_assert(f);
		cr_assert(fgets(out, sizeof(out), f));
		pclose(f);
		cr_expect_str_eq(out, "[plain][a b][it's][][$HOME][a\"b][x=1,y][tab\there]['][\\n]");
	}
	off = 0;
	cr_expect(!str__shell_quote("too long", buf, 5, &off));
	cr_expect_eq(off, 0);
}

/* stderr a pipe that is full: a message is dropped and counted at once, the pipe's other
 * writers keep a blocking description, and once there is room messages are written whole */
Test(util, stderr_on_a_full_pipe_drops_and_counts)
{
	int fds[2], filler, flags;
	char buf[65536], want[] = "hsbpf: warning: second 'x'\n";
	ssize_t n;

	cr_assert_eq(pipe(fds), 0);
	cr_assert_geq(dup2(fds[1], STDERR_FILENO), 0);
	snprintf(buf, sizeof(buf), "/proc/self/fd/%d", fds[1]);
	filler = open(buf, O_WRONLY | O_NONBLOCK);
	cr_assert_geq(filler, 0);
	memset(buf, 'f', sizeof(buf));
	while (write(filler, buf, sizeof(buf)) > 0)
		;
	cr_assert_eq(errno, EAGAIN);
	cr_assert_eq(stderr__set_nonblocking(), 0);
	warning("first");	/* would block for ever on a blocking stderr */
	cr_expect_eq(stderr__lost(), 1);
	flags = fcntl(fds[1], F_GETFL);
	cr_expect_eq(flags & O_NONBLOCK, 0, "the pipe's other writers were made non-blocking");
	cr_assert_eq(fcntl(fds[0], F_SETFL, O_NONBLOCK), 0);
	while (read(fds[0], buf, sizeof(buf)) > 0)
		;
	warning("second '%s'", "x");
	cr_expect_eq(stderr__lost(), 1);
	n = read(fds[0], buf, sizeof(buf));
	cr_assert_eq(n, (ssize_t)strlen(want));
	cr_expect_eq(memcmp(buf, want, n), 0, "%.*s", (int)n, buf);
	close(filler);
}
