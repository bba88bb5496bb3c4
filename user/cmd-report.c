// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* hsbpf report: read a profile, group its samples, print them. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmds.h"
#include "hist.h"
#include "hsbpf.h"
#include "lbr_report.h"
#include "profile.h"
#include "symbolizer.h"
#include "truth.h"
#include <linux/perf_event.h>

static const char usage_text[] =
	"usage: hsbpf report [-i FILE] [--sort KEYS] [--format text|json|csv] [--limit N]\n"
	"                    [--per-cgroup] [--truth FILE]\n"
	"\n"
	"  -i, --input FILE     profile to read (default hsbpf.data)\n"
	"  -s, --sort KEYS      comma-separated: sym (default), ip, dso, line, pid, comm, cgroup,\n"
	"                       bb (basic blocks, with estimated executions); or alone: edge,\n"
	"                       range (taken branches, fall-through ranges from branch stacks)\n"
	"      --per-cgroup     break the rows down by cgroup (container): cgroup first in KEYS\n"
	"      --truth FILE     scale block estimates to instructions with this run's exact total\n"
	"      --format FMT     text (default, 100 columns), json, csv\n"
	"      --limit N        at most N rows (default 50 for text, all for json and csv; 0: all)\n"
	"  -v, --verbose        more messages\n";

/* what one sample stands for in instructions: the period when the event counts
 * instructions, or the exact total over the samples when a truth file is given */
static int set_scale(struct hist *h, const struct profile *p, const char *truth_path)
{
	struct truth *t;
	int err;

	if (truth_path) {
		err = truth__read(truth_path, &t);
		if (err)
			return err;
		if (h->total)
			h->insns_per_sample = (double)t->meta.total_insns / h->total;
		h->scale_source = "truth";
		truth__free(t);
	} else if (p->meta.event_type == PERF_TYPE_HARDWARE &&
		   p->meta.event_config == PERF_COUNT_HW_INSTRUCTIONS && h->total) {
		h->insns_per_sample = (double)h->total_weight / h->total;
		h->scale_source = "period";
	}
	return 0;
}

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "sort", required_argument, NULL, 's' },
		{ "format", required_argument, NULL, 'f' },
		{ "limit", required_argument, NULL, 'l' },
		{ "truth", required_argument, NULL, 't' },
		{ "per-cgroup", no_argument, NULL, 'G' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	const char *input = "hsbpf.data", *sort = "sym", *truth_path = NULL;
	enum hist_format fmt = HIST_TEXT;
	enum sort_key keys[HIST_MAX_KEYS];
	struct symbolizer *sy = NULL;
	struct profile *p = NULL;
	struct hist *h = NULL;
	bool limit_set = false, per_cgroup = false;
	u64 limit = 0;
	int c, nr_keys, err;

	optind = 1;
	while ((c = getopt_long(argc, argv, "i:s:vh", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			input = optarg;
			break;
		case 's':
			sort = optarg;
			break;
		case 'f':
			if (hist__parse_format(optarg, &fmt))
				return 2;
			break;
		case 'l':
			if (parse_u64(optarg, &limit))
				return fail(2, "invalid --limit '%s'", optarg);
			limit_set = true;
			break;
		case 't':
			truth_path = optarg;
			break;
		case 'G':
			per_cgroup = true;
			break;
		case 'v':
			verbose++;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:	/* getopt said what is wrong */
			return usage_hint("hsbpf report");
		}
	}
	if (optind < argc) {
		error("unexpected argument '%s'", argv[optind]);
		return usage_hint("hsbpf report");
	}
	if (!strcmp(sort, "edge") || !strcmp(sort, "range")) {
		if (fmt == HIST_CSV)
			return fail(2, "--sort %s has text and json output", sort);
		err = profile__read(input, &p);
		sy = err ? NULL : symbolizer__new(p);
		if (!err && !sy)
			err = -ENOMEM;
		if (!err)
			err = lbr_report__print(p, sy, !strcmp(sort, "edge") ? HSBPF_LBR_EDGE : HSBPF_LBR_RANGE,
						fmt == HIST_JSON, limit_set ? limit : (fmt == HIST_TEXT ? 50 : 0),
						stdout);
		symbolizer__free(sy);
		profile__free(p);
		return err ? 1 : 0;
	}
	if (hist__parse_sort(sort, keys, &nr_keys))
		return 2;
	if (per_cgroup && hist__prepend_key(keys, &nr_keys, SORT_CGROUP))
		return fail(2, "--per-cgroup: at most %d sort keys", HIST_MAX_KEYS);
	if (!limit_set)
		limit = fmt == HIST_TEXT ? 50 : 0;

	err = profile__read(input, &p);
	if (err)
		goto cleanup;
	sy = symbolizer__new(p);
	h = hist__new(keys, nr_keys);
	if (!sy || !h) {
		err = -ENOMEM;
		error("cannot report: %s", strerror(ENOMEM));
		goto cleanup;
	}
	err = hist__add_profile(h, p, sy);
	if (err)
		goto cleanup;
	err = set_scale(h, p, truth_path);
	if (!err && nr_keys == 1 && keys[0] == SORT_BB)
		err = hist__add_lbr(h, p, sy);
	if (err)
		goto cleanup;
	hist__sort(h);
	hist__print(h, p, fmt, limit, stdout);	/* write errors: reported by main */
cleanup:
	hist__free(h);
	symbolizer__free(sy);
	profile__free(p);
	return err ? 1 : 0;
}
