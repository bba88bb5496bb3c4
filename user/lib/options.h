/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Command-line options from one table per command, as perf's parse-options: the table that
 * parses (-x, -xVALUE, -x VALUE, -xy, --long, --long=VALUE, --long VALUE, --no-long, unique
 * prefixes of long names, --) also prints the help, so that the two cannot disagree. Errors
 * are said as getopt says them, by the command's name, with a pointer to --help. */
#ifndef HSBPF_OPTIONS_H
#define HSBPF_OPTIONS_H

#include <stdio.h>
#include "lib/util.h"

enum option_kind {
	OPTION_END,
	OPTION_GROUP,		/* a heading in the help: .help */
	OPTION_FLAG,		/* bool *: true, false with --no-NAME or OPTF_CLEAR */
	OPTION_SET,		/* int *: .set, 0 with --no-NAME */
	OPTION_COUNT,		/* int *: one more each time (-v -v) */
	OPTION_STRING,		/* const char **: the argument */
	OPTION_U64,		/* u64 *: decimal, or hex after 0x, within [.min, .max] */
	OPTION_U32,		/* u32 *: the same */
	OPTION_SECONDS,		/* double *: parse_seconds() within [.dmin, .dmax] */
	OPTION_CALLBACK,	/* .cb(opt, arg): takes an argument when .argh is set */
};

/* .flags */
#define OPTF_NEG	0x1	/* --no-NAME too: shown as --[no-]NAME */
#define OPTF_OPTARG	0x2	/* the argument may be left out (--NAME[=ARG], -xARG): cb gets NULL */
#define OPTF_HIDDEN	0x4	/* parsed, not shown */
#define OPTF_CLEAR	0x8	/* OPTION_FLAG: stores false */
/* with OPTF_OPTARG: the next word is the argument when none is attached and it is not an
 * option (perf report's -g caller), for commands that take no other arguments */
#define OPTF_NEXTARG	0x10

struct option_spec;
/* 0, or -EINVAL after saying what is wrong with arg */
typedef int (*option_cb)(const struct option_spec *opt, const char *arg);

struct option_spec {
	enum option_kind kind;
	char short_name;	/* 0: none */
	const char *long_name;	/* NULL: none */
	const char *argh;	/* the argument's name in the help ("FILE") */
	/* its help, wrapped to 80 columns; '\n' starts a new line */
	const char *help;
	void *value;
	int flags;
	option_cb cb;
	int set;		/* OPTION_SET */
	u64 min, max;		/* OPTION_U64, OPTION_U32; max 0: none */
	double dmin, dmax;	/* OPTION_SECONDS */
	/* a bad argument's message, a printf format of (arg, min, max); NULL: "invalid --NAME
	 * '%s'" with the range when there is one */
	const char *invalid;
};

#define OPT_END()			{ .kind = OPTION_END }
#define OPT_GROUP(h)			{ .kind = OPTION_GROUP, .help = (h) }
#define OPT_FLAG(s, l, v, h)		{ .kind = OPTION_FLAG, .short_name = (s), .long_name = (l), \
					  .value = (v), .help = (h) }
#define OPT_SET(s, l, v, n, h)		{ .kind = OPTION_SET, .short_name = (s), .long_name = (l), \
					  .value = (v), .set = (n), .help = (h) }
#define OPT_STRING(s, l, v, a, h)	{ .kind = OPTION_STRING, .short_name = (s), .long_name = (l), \
					  .value = (v), .argh = (a), .help = (h) }
#define OPT_U64(s, l, v, a, h, mn, mx, inv) \
	{ .kind = OPTION_U64, .short_name = (s), .long_name = (l), .value = (v), .argh = (a), \
	  .help = (h), .min = (mn), .max = (mx), .invalid = (inv) }
#define OPT_U32(s, l, v, a, h, mn, mx, inv) \
	{ .kind = OPTION_U32, .short_name = (s), .long_name = (l), .value = (v), .argh = (a), \
	  .help = (h), .min = (mn), .max = (mx), .invalid = (inv) }
#define OPT_SECONDS(s, l, v, a, h, mn, mx, inv) \
	{ .kind = OPTION_SECONDS, .short_name = (s), .long_name = (l), .value = (v), .argh = (a), \
	  .help = (h), .dmin = (mn), .dmax = (mx), .invalid = (inv) }
#define OPT_CALLBACK(s, l, v, a, h, f)	{ .kind = OPTION_CALLBACK, .short_name = (s), .long_name = (l), \
					  .value = (v), .argh = (a), .help = (h), .cb = (f) }
#define OPT_VERBOSE(h)			{ .kind = OPTION_COUNT, .short_name = 'v', .long_name = "verbose", \
					  .value = &verbose, .help = (h) }

/* a command: what its help says around the options, and how it takes arguments */
struct options_cmd {
	const char *name;	/* "hsbpf record": errors and the pointer to --help */
	const char *usage;	/* "usage: hsbpf record [...]", lines ended by '\n' */
	const char *intro;	/* between the usage and the options, or NULL */
	const char *outro;	/* after the options, or NULL */
	/* the first argument that is not an option ends the options (a COMMAND follows); else
	 * options and arguments mix, as getopt_long permutes them */
	bool stop_at_arg;
	bool no_args;		/* an argument that is not an option is a usage error */
};

/* parse argv[1..argc) (argv[0] is the command's name): the arguments that are not options
 * are moved to argv[0..n), argv[n] = NULL, and n is returned. -h and --help print the help
 * on stdout and return -ECANCELED; a usage error is said (with a pointer to --help) and
 * returns -EINVAL */
int options__parse(const struct options_cmd *cmd, const struct option_spec *opts, int argc,
		   char **argv);
/* the exit status of a failed options__parse: 0 after --help, 2 else */
int options__status(int err);
void options__usage(const struct options_cmd *cmd, const struct option_spec *opts, FILE *f);

#endif /* HSBPF_OPTIONS_H */
