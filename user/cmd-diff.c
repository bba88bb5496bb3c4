// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* hsbpf diff: what changed between two profiles, key by key, with the test of each change. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "cmds.h"
#include "report/hist.h"
#include "option_groups.h"
#include "profile/profile.h"
#include "record/memory.h"
#include "report/profile_diff.h"
#include "report/sample_filter.h"

static const struct options_cmd diff_cmd = {
	.name = "hsbpf diff",
	.usage =
	"usage: hsbpf diff BASE NEW [--compare rates|shares] [--work B,N] [--sort KEYS]\n"
	"                  [--limit N] [--all] [--force] [report's filters: --comm, --pid, --tid,\n"
	"                  --dso, --symbols, --cpu, --time, applied to both profiles]\n"
	"       hsbpf diff BASE NEW --sample-type TYPE ...   (two record --memory profiles)\n",
	.intro =
	"Each key's rate in BASE and in NEW (samples per second of the recording, or per unit\n"
	"of work with --work), or with --compare shares its share of the samples, the change\n"
	"with its 95% interval, and its p-value adjusted for the number of keys\n"
	"(Benjamini-Hochberg); keys whose change is significant at a 5% false discovery rate\n"
	"are marked '*'. Rates: a key that did not change is not flagged when another grows;\n"
	"shares: every other key's share shrinks when one grows. flamegraph --diff answers the\n"
	"same question with the same test.\n"
	"\n"
	"Profiles of sampled allocations (record --memory) are compared by their estimates, in\n"
	"the --sample-type's unit (alloc_space by default, as report's; inuse_space between two\n"
	"snapshots, record --snapshot-every, shows a leak's growth): each key's bytes or objects\n"
	"in BASE and NEW, the change with its 95% interval from the sampling variance of both,\n"
	"and the z-test of no change (docs/memory.md).\n",
};

/* two profiles of sampled allocations: both in view type, each sample's weight the variance of
 * its estimate; 0 when neither is one, else -EINVAL after saying why */
static int memory_views(struct profile **p, char **names, const char *type, const struct diff_args *d,
			struct diff_basis *basis)
{
	bool mem[2] = { memory__in_profile(p[0]), memory__in_profile(p[1]) };
	enum memory_view view = MEMORY_ALLOC_SPACE;

	if (!mem[0] && !mem[1])
		return type ? fail(-EINVAL, "--sample-type is for profiles of sampled allocations "
				   "(record --memory)") : 0;
	if (!mem[0] || !mem[1])
		return fail(-EINVAL, "cannot compare '%s' with '%s': one holds sampled allocations "
			    "(record --memory), the other not", names[0], names[1]);
	if (d->compare == DIFF_SHARES || d->has_work)
		return fail(-EINVAL, "profiles of sampled allocations are compared by their estimates: "
			    "not --compare shares or --work");
	if (type && memory__parse_view(type, &view))
		return -EINVAL;
	for (int i = 0; i < 2; i++)
		memory__select_variance(p[i], view);
	*basis = (struct diff_basis){ .compare = DIFF_ESTIMATES };
	snprintf(basis->view, sizeof(basis->view), "%s", memory__view_name(view));
	return 1;
}

int cmd_diff(int argc, char **argv)
{
	const char *sort = "sym", *sample_type = NULL;
	struct diff_args d = { .compare = DIFF_RATES };
	struct sample_filter sf = {};
	bool all = false;
	u64 limit = 50;
	const struct option_spec opts[] = {
		OPTIONS_DIFF(&d),
		OPT_STRING('s', "sort", &sort, "KEYS", "comma-separated, as report's: sym (default), ip, "
			   "dso, line (srcline), srcfile, pid, tid, comm, cpu, cgroup, state"),
		OPT_STRING(0, "sample-type", &sample_type, "TYPE", "of two record --memory profiles: "
			   "alloc_space (default), alloc_objects, inuse_space or inuse_objects"),
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
	int nr, nr_keys, err, memory = 0;

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
	/* a snapshot of no live allocation is a live set of 0 bytes */
	for (int i = 0; i < 2 && !err; i++)
		if (!profile__total_samples(p[i]) && !memory__in_profile(p[i]))
			err = fail(-EINVAL, "'%s' has no samples", argv[i]);
	/* the same filters on both sides: one process of two whole-machine profiles */
	for (int i = 0; i < 2 && !err; i++)
		err = sample_filter__keep(&sf, p[i], NULL, argv[i]);
	if (!err) {
		memory = memory_views(p, argv, sample_type, &d, &basis);
		err = memory < 0 ? memory : 0;
	}
	if (!err && !memory)
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
