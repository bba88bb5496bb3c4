// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* options: every form an option is given in, the arguments left, the usage errors (said as
 * getopt says them) and the help printed from the table, with known answers. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "lib/options.h"

TestSuite(options);

static struct {
	bool flag, neg;
	int set, count;
	const char *str, *opt;
	u64 num;
	u32 small;
	double secs;
	int opt_calls;
} v;

static int optarg_cb(const struct option_spec *opt, const char *arg)
{
	(void)opt;
	v.opt = arg ? arg : "(none)";
	v.opt_calls++;
	return 0;
}

static const struct option_spec opts[] = {
	OPT_FLAG('f', "flag", &v.flag, "a flag"),
	{ .kind = OPTION_FLAG, .long_name = "thread", .value = &v.neg, .flags = OPTF_NEG,
	  .help = "negatable" },
	OPT_SET('g', NULL, &v.set, 7, "short only"),
	OPT_GROUP("Group:"),
	OPT_STRING('s', "string", &v.str, "S", "a string"),
	OPT_U64('n', "number", &v.num, "N", "a number", 1, 100, NULL),
	OPT_U32(0, "small", &v.small, "N", "a u32", 0, 0, "bad small '%s'"),
	OPT_SECONDS('d', "delay", &v.secs, "SEC", "seconds", 0.5, 10, NULL),
	{ .kind = OPTION_CALLBACK, .long_name = "opt", .argh = "X", .flags = OPTF_OPTARG,
	  .cb = optarg_cb, .help = "optional argument" },
	{ .kind = OPTION_COUNT, .short_name = 'v', .long_name = "verbose", .value = &v.count,
	  .help = "more" },
	OPT_END(),
};

static const struct options_cmd permute = { .name = "hsbpf t", .usage = "usage: hsbpf t\n" };
static const struct options_cmd stop = { .name = "hsbpf t", .usage = "usage: hsbpf t\n",
					 .stop_at_arg = true };
static const struct options_cmd none = { .name = "hsbpf t", .usage = "usage: hsbpf t\n",
					 .no_args = true };

/* argv from a space-separated line; the strings live in buf */
static int split(char *buf, char **argv)
{
	int n = 0;

	for (char *t = strtok(buf, " "); t; t = strtok(NULL, " "))
		argv[n++] = t;
	argv[n] = NULL;
	return n;
}

static int parse(const struct options_cmd *cmd, const char *line, char **argv)
{
	static char buf[512];

	memset(&v, 0, sizeof(v));
	snprintf(buf, sizeof(buf), "t %s", line);
	return options__parse(cmd, opts, split(buf, argv), argv);
}

Test(options, every_form)
{
	char *argv[32];

	cr_expect_eq(parse(&permute, "-f -g -s a -n5 --small=9 --delay 2.5 -vv --verbose", argv), 0);
	cr_expect(v.flag);
	cr_expect_eq(v.set, 7);
	cr_expect_str_eq(v.str, "a");
	cr_expect_eq(v.num, 5);
	cr_expect_eq(v.small, 9);
	cr_expect_float_eq(v.secs, 2.5, 1e-9);
	cr_expect_eq(v.count, 3);
	cr_expect_eq(parse(&permute, "-fsVALUE --string=x=y", argv), 0);
	cr_expect(v.flag);
	cr_expect_str_eq(v.str, "x=y");
	cr_expect_eq(parse(&permute, "--string -dash", argv), 0);
	cr_expect_str_eq(v.str, "-dash");
	/* --no-NAME for a negatable flag; unique prefixes of long names */
	cr_expect_eq(parse(&permute, "--thread", argv), 0);
	cr_expect(v.neg);
	cr_expect_eq(parse(&permute, "--thread --no-thread", argv), 0);
	cr_expect(!v.neg);
	cr_expect_eq(parse(&permute, "--str s --num 4 --th", argv), 0);
	cr_expect_str_eq(v.str, "s");
	cr_expect_eq(v.num, 4);
	cr_expect(v.neg);
	/* an optional argument only after '=' */
	cr_expect_eq(parse(&permute, "--opt", argv), 0);
	cr_expect_str_eq(v.opt, "(none)");
	cr_expect_eq(parse(&permute, "--opt=3 x", argv), 1);
	cr_expect_str_eq(v.opt, "3");
	cr_expect_str_eq(argv[0], "x");
}

Test(options, arguments_left)
{
	char *argv[32];

	/* mixed with the options (getopt_long's permutation), and everything after -- */
	cr_assert_eq(parse(&permute, "a -f b -- -g c", argv), 4);
	cr_expect_str_eq(argv[0], "a");
	cr_expect_str_eq(argv[1], "b");
	cr_expect_str_eq(argv[2], "-g");
	cr_expect_str_eq(argv[3], "c");
	cr_expect_null(argv[4]);
	cr_expect(v.flag);
	cr_expect_eq(v.set, 0);
	/* a COMMAND ends the options: its own stay its own */
	cr_assert_eq(parse(&stop, "-f cmd -g -s x", argv), 4);
	cr_expect_str_eq(argv[0], "cmd");
	cr_expect_str_eq(argv[1], "-g");
	cr_expect_eq(v.set, 0);
	cr_expect_null(v.str);
	cr_assert_eq(parse(&stop, "-- cmd -f", argv), 2);
	cr_expect_str_eq(argv[1], "-f");
	cr_expect(!v.flag);
	cr_expect_eq(parse(&stop, "-", argv), 1);
}

/* the message of each error, exactly as getopt words it, then the pointer to --help */
Test(options, usage_errors, .init = cr_redirect_stderr)
{
	static const struct {
		const struct options_cmd *cmd;
		const char *line;
	} cases[] = {
		{ &permute, "--no-such-option" },
		{ &permute, "-Z" },
		{ &permute, "-s" },
		{ &permute, "--string" },
		{ &permute, "--flag=1" },
		{ &permute, "--no-flag" },
		{ &permute, "--s" },
		{ &permute, "-n 0" },
		{ &permute, "--number 101" },
		{ &permute, "--number 0x" },
		{ &permute, "--small x" },
		{ &permute, "-d inf" },
		{ &none, "extra" },
	};
	char *argv[32];

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		cr_expect_eq(parse(cases[i].cmd, cases[i].line, argv), -EINVAL, "%s", cases[i].line);
	fflush(stderr);
	cr_expect_stderr_eq_str(
		"hsbpf t: unrecognized option '--no-such-option'\n"
		"try 'hsbpf t --help' for more information\n"
		"hsbpf t: invalid option -- 'Z'\n"
		"try 'hsbpf t --help' for more information\n"
		"hsbpf t: option requires an argument -- 's'\n"
		"try 'hsbpf t --help' for more information\n"
		"hsbpf t: option '--string' requires an argument\n"
		"try 'hsbpf t --help' for more information\n"
		"hsbpf t: option '--flag' doesn't allow an argument\n"
		"try 'hsbpf t --help' for more information\n"
		"hsbpf t: unrecognized option '--no-flag'\n"
		"try 'hsbpf t --help' for more information\n"
		"hsbpf t: option '--s' is ambiguous; possibilities: '--string' '--small'\n"
		"try 'hsbpf t --help' for more information\n"
		"hsbpf: invalid --number '0' (1 to 100)\n"
		"try 'hsbpf t --help' for more information\n"
		"hsbpf: invalid --number '101' (1 to 100)\n"
		"try 'hsbpf t --help' for more information\n"
		"hsbpf: invalid --number '0x' (1 to 100)\n"
		"try 'hsbpf t --help' for more information\n"
		"hsbpf: bad small 'x'\n"
		"try 'hsbpf t --help' for more information\n"
		"hsbpf: invalid --delay 'inf' (0.5 to 10 seconds)\n"
		"try 'hsbpf t --help' for more information\n"
		"hsbpf: unexpected argument 'extra'\n"
		"try 'hsbpf t --help' for more information\n");
}

Test(options, help_from_the_table, .init = cr_redirect_stdout)
{
	static const struct options_cmd cmd = {
		.name = "hsbpf t", .usage = "usage: hsbpf t [-f]\n", .intro = "Intro.\n",
		.outro = "Outro.\n",
	};
	static const struct option_spec help[] = {
		OPT_FLAG('f', "flag", &v.flag, "a flag"),
		{ .kind = OPTION_FLAG, .long_name = "per-thread", .value = &v.neg, .flags = OPTF_NEG,
		  .help = "by thread" },
		OPT_GROUP("  Group:"),
		OPT_STRING(0, "a-rather-long-option", &v.str, "ARG", "the help goes on the next line"),
		{ .kind = OPTION_FLAG, .long_name = "hidden", .value = &v.flag, .flags = OPTF_HIDDEN },
		{ .kind = OPTION_CALLBACK, .long_name = "opt", .argh = "X", .flags = OPTF_OPTARG,
		  .cb = optarg_cb, .help = "one two three four five six seven eight nine ten eleven "
		  "twelve thirteen\nnew line" },
		OPT_END(),
	};
	char buf[64] = "t -h", *argv[4];

	cr_assert_eq(options__parse(&cmd, help, split(buf, argv), argv), -ECANCELED);
	cr_expect_eq(options__status(-ECANCELED), 0);
	cr_expect_eq(options__status(-EINVAL), 2);
	fflush(stdout);
	cr_expect_stdout_eq_str(
		"usage: hsbpf t [-f]\n"
		"\n"
		"Intro.\n"
		"\n"
		"  -f, --flag             a flag\n"
		"      --[no-]per-thread  by thread\n"
		"  Group:\n"
		"      --a-rather-long-option ARG\n"
		"                         the help goes on the next line\n"
		"      --opt[=X]          one two three four five six seven eight nine ten eleven\n"
		"                         twelve thirteen\n"
		"                         new line\n"
		"\n"
		"Outro.\n");
}

/* OPTF_NEXTARG (perf report's -g caller): the next word is the argument unless it is an
 * option; an attached one, --name=ARG and nothing at all work as with OPTF_OPTARG */
Test(options, next_word_argument)
{
	static const struct option_spec next[] = {
		{ .kind = OPTION_CALLBACK, .short_name = 'g', .long_name = "graph", .argh = "X",
		  .flags = OPTF_OPTARG | OPTF_NEXTARG, .cb = optarg_cb },
		OPT_FLAG('f', "flag", &v.flag, "a flag"),
		OPT_END(),
	};
	static const struct {
		const char *line;
		const char *want;
		bool flag;
	} cases[] = {
		{ "-g caller", "caller", false },
		{ "-gcallee", "callee", false },
		{ "-g -f", "(none)", true },
		{ "-g", "(none)", false },
		{ "--graph fractal", "fractal", false },
		{ "--graph=flat -f", "flat", true },
		{ "--graph --flag", "(none)", true },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[64], *argv[8];

		memset(&v, 0, sizeof(v));
		snprintf(buf, sizeof(buf), "t %s", cases[i].line);
		cr_expect_eq(options__parse(&none, next, split(buf, argv), argv), 0, "%s", cases[i].line);
		cr_expect_str_eq(v.opt, cases[i].want, "%s", cases[i].line);
		cr_expect_eq(v.flag, cases[i].flag, "%s", cases[i].line);
	}
}
