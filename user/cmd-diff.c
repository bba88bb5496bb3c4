// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* hsbpf diff: what changed between two profiles, key by key, with the test of each change. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "cmds.h"
#include "hist.h"
#include "profile.h"
#include "profile_diff.h"

static const char usage_text[] =
	"usage: hsbpf diff BASE NEW [--compare rates|shares] [--work B,N] [--sort KEYS]\n"
	"                  [--limit N] [--all] [--force]\n"
	"\n"
	"Each key's rate in BASE and in NEW (samples per second of the recording, or per unit\n"
	"of work with --work), or with --compare shares its share of the samples, the change\n"
	"with its 95% interval, and its p-value adjusted for the number of keys\n"
	"(Benjamini-Hochberg); keys whose change is significant at a 5% false discovery rate\n"
	"are marked '*'. Rates: a key that did not change is not flagged when another grows;\n"
	"shares: every other key's share shrinks when one grows. flamegraph --diff answers the\n"
	"same question with the same test.\n"
	"\n"
	"      --compare WHAT   rates (default) or shares\n"
	"      --work B,N       the work BASE and NEW did (requests, iterations, runs: any unit):\n"
	"                       rates per unit of work instead of per second\n"
	"  -s, --sort KEYS      sym (default), ip, dso, line, pid, comm, cgroup, comma-separated\n"
	"      --all            also the keys that did not change significantly\n"
	"      --limit N        at most N rows (default 50; 0: all)\n"
	"      --force          compare profiles of different events or units anyway\n"
	"  -v, --verbose        more messages\n";

enum { OPT_ALL = 0x100, OPT_FORCE, OPT_COMPARE, OPT_WORK };

int cmd_diff(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "sort", required_argument, NULL, 's' },
		{ "limit", required_argument, NULL, 'l' },
		{ "all", no_argument, NULL, OPT_ALL },
		{ "force", no_argument, NULL, OPT_FORCE },
		{ "compare", required_argument, NULL, OPT_COMPARE },
		{ "work", required_argument, NULL, OPT_WORK },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	const char *sort = "sym";
	enum sort_key keys[HIST_MAX_KEYS];
	struct profile *p[2] = {};
	struct diff_table t = {};
	struct diff_basis basis;
	enum diff_compare compare = DIFF_RATES;
	double work[2];
	bool all = false, force = false, has_work = false;
	u64 limit = 50;
	int c, nr_keys, err;

	optind = 1;
	while ((c = getopt_long(argc, argv, "s:vh", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			sort = optarg;
			break;
		case 'l':
			if (parse_u64(optarg, &limit))
				return fail(2, "invalid --limit '%s'", optarg);
			break;
		case OPT_ALL:
			all = true;
			break;
		case OPT_FORCE:
			force = true;
			break;
		case OPT_COMPARE:
			if (profile_diff__parse_compare(optarg, &compare))
				return fail(2, "invalid --compare '%s' (rates or shares)", optarg);
			break;
		case OPT_WORK:
			if (profile_diff__parse_work(optarg, work))
				return fail(2, "invalid --work '%s' (two positive numbers: BASE,NEW)", optarg);
			has_work = true;
			break;
		case 'v':
			verbose++;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			return usage_hint("hsbpf diff");
		}
	}
	if (has_work && compare == DIFF_SHARES)
		return fail(2, "--work compares rates: not with --compare shares");
	if (argc - optind != 2) {
		error("need two profiles: hsbpf diff BASE NEW");
		return usage_hint("hsbpf diff");
	}
	if (hist__parse_sort(sort, keys, &nr_keys))
		return 2;
	err = profile__read(argv[optind], &p[0]);
	if (!err)
		err = profile__read(argv[optind + 1], &p[1]);
	if (!err)
		err = profile_diff__check(p[0], argv[optind], p[1], argv[optind + 1], force);
	for (int i = 0; i < 2 && !err; i++)
		if (!profile__total_samples(p[i]))
			err = fail(-EINVAL, "'%s' has no samples", argv[optind + i]);
	if (!err)
		err = profile_diff__basis(&basis, compare, p[0], argv[optind], p[1], argv[optind + 1],
					  has_work ? work : NULL);
	if (!err)
		err = profile_diff__table(&t, p[0], p[1], keys, nr_keys, &basis);
	if (!err) {
		profile_diff__sort(&t);
		profile_diff__print(&t, argv[optind], argv[optind + 1], limit, all, stdout);
		if (fflush(stdout) || ferror(stdout))
			err = fail(-EIO, "cannot write the table: %s", strerror(errno ? errno : EIO));
	}
	profile_diff__free(&t);
	profile__free(p[0]);
	profile__free(p[1]);
	return err ? 1 : 0;
}
