// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* hsbpf diff: what changed between two profiles, key by key, with the test of each change. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "cmds.h"
#include "report/hist.h"
#include "option_groups.h"
#include "profile/profile.h"
#include "report/profile_diff.h"
#include "report/sample_filter.h"

static const struct options_cmd diff_cmd = {
	.name = "hsbpf diff",
	.usage =
	"usage: hsbpf diff BASE NEW [--compare rates|shares] [--work B,N] [--sort KEYS]\n"
	"                  [--limit N] [--all] [--force] [report's filters: --comm, --pid, --tid,\n"
	"                  --dso, --symbols, --cpu, --time, applied to both profiles]\n",
	.intro =
	"Each key's rate in BASE and in NEW (samples per second of the recording, or per unit\n"
	"of work with --work), or with --compare shares its share of the samples, the change\n"
	"with its 95% interval, and its p-value adjusted for the number of keys\n"
	"(Benjamini-Hochberg); keys whose change is significant at a 5% false discovery rate\n"
	"are marked '*'. Rates: a key that did not change is not flagged when another grows;\n"
	"shares: every other key's share shrinks when one grows. flamegraph --diff answers the\n"
	"same question with the same test.\n",
};

int cmd_diff(int argc, char **argv)
{
	const char *sort = "sym";
	struct diff_args d = { .compare = DIFF_RATES };
	struct sample_filter sf = {};
	bool all = false;
	u64 limit = 50;
	const struct option_spec opts[] = {
		OPTIONS_DIFF(&d),
		OPT_STRING('s', "sort", &sort, "KEYS", "comma-separated, as report's: sym (default), ip, "
			   "dso, line (srcline), srcfile, pid, tid, comm, cpu, cgroup, state"),
		OPT_FLAG(0, "all", &all, "also the keys that did not change significantly"),
		OPT_U64(0, "limit", &limit, "N", "at most N rows (default 50; 0: all)", 0, 0, NULL),
		OPT_VERBOSE("more messages"),
		OPTIONS_FILTERS(&sf),
		OPT_END(),
	};
	enum sort_key keys[HIST_MAX_KEYS];
	struct profile *p[2] = {};
	struct diff_table t = {};
	struct diff_basis basis;
	int nr, nr_keys, err;

	nr = options__parse(&diff_cmd, opts, argc, argv);
	if (nr < 0)
		return options__status(nr);
	if (option_groups__check_diff(&d))
		return 2;
	if (nr != 2) {
		error("need two profiles: hsbpf diff BASE NEW");
		return usage_hint(diff_cmd.name);
	}
	if (hist__parse_sort(sort, keys, &nr_keys))
		return 2;
	err = profile__read(argv[0], &p[0]);
	if (!err)
		err = profile__read(argv[1], &p[1]);
	if (!err)
		err = profile_diff__check(p[0], argv[0], p[1], argv[1], d.force);
	for (int i = 0; i < 2 && !err; i++)
		if (!profile__total_samples(p[i]))
			err = fail(-EINVAL, "'%s' has no samples", argv[i]);
	/* the same filters on both sides: one process of two whole-machine profiles */
	for (int i = 0; i < 2 && !err; i++)
		err = sample_filter__keep(&sf, p[i], NULL, argv[i]);
	if (!err)
		err = profile_diff__basis(&basis, d.compare, p[0], argv[0], p[1], argv[1],
					  d.has_work ? d.work : NULL);
	if (!err)
		err = profile_diff__table(&t, p[0], p[1], keys, nr_keys, &basis);
	if (!err) {
		profile_diff__sort(&t);
		profile_diff__print(&t, argv[0], argv[1], limit, all, stdout);
		if (fflush(stdout) || ferror(stdout))
			err = fail(-EIO, "cannot write the table: %s", strerror(errno ? errno : EIO));
	}
	profile_diff__free(&t);
	profile__free(p[0]);
	profile__free(p[1]);
	return err ? 1 : 0;
}
