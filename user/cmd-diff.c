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
	"usage: hsbpf diff BASE NEW [--sort KEYS] [--limit N] [--all] [--force]\n"
	"\n"
	"Each key's share of the samples in BASE and in NEW, the change in percentage points\n"
	"with its 95% interval (Newcombe's, from Wilson's), and its p-value adjusted for the\n"
	"number of keys (Benjamini-Hochberg); keys whose change is significant at a 5% false\n"
	"discovery rate are marked '*'. The test is the two-proportion z-test, or Fisher's\n"
	"exact test when an expected count is under 5.\n"
	"\n"
	"  -s, --sort KEYS      sym (default), ip, dso, line, pid, comm, cgroup, comma-separated\n"
	"      --all            also the keys that did not change significantly\n"
	"      --limit N        at most N rows (default 50; 0: all)\n"
	"      --force          compare profiles of different events or units anyway\n"
	"  -v, --verbose        more messages\n";

enum { OPT_ALL = 0x100, OPT_FORCE };

int cmd_diff(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "sort", required_argument, NULL, 's' },
		{ "limit", required_argument, NULL, 'l' },
		{ "all", no_argument, NULL, OPT_ALL },
		{ "force", no_argument, NULL, OPT_FORCE },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	const char *sort = "sym";
	enum sort_key keys[HIST_MAX_KEYS];
	struct profile *p[2] = {};
	struct diff_table t = {};
	bool all = false, force = false;
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
		err = profile_diff__table(&t, p[0], p[1], keys, nr_keys);
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
