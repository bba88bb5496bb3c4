// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* hsbpf report: read a profile, group its samples, print them. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "callchain.h"
#include "cmds.h"
#include "debuginfod.h"
#include "hist.h"
#include "json_writer.h"
#include "hsbpf.h"
#include "lbr_report.h"
#include "profile.h"
#include "symbolizer.h"
#include "accuracy/truth.h"
#include <linux/perf_event.h>

static const char usage_text[] =
	"usage: hsbpf report [-i FILE] [--sort KEYS] [--format text|json|csv|folded] [--limit N]\n"
	"                    [--per-cgroup] [--truth FILE]\n"
	"                    [-g | --call-graph caller|callee | --no-call-graph] [--[no-]children]\n"
	"                    [--percent-limit P]\n"
	"\n"
	"  -i, --input FILE     profile to read (default hsbpf.data)\n"
	"  -s, --sort KEYS      comma-separated: sym (default), ip, dso, line, pid, comm, cgroup,\n"
	"                       bb (basic blocks, with estimated executions); or alone: edge,\n"
	"                       range (taken branches, fall-through ranges from branch stacks)\n"
	"      --per-cgroup     break the rows down by cgroup (container): cgroup first in KEYS\n"
	"      --truth FILE     scale block estimates to instructions with this run's exact total\n"
	"      --format FMT     text (default, 100 columns), json, csv; folded: one line per\n"
	"                       distinct stack, comm;root;...;leaf count (flame graph input)\n"
	"  -g                   call graphs under each row (the default when the profile has stacks)\n"
	"      --call-graph ORDER  callee: from each row's function up to its callers (the\n"
	"                       default with --no-children); caller: with --children, from the\n"
	"                       function down to what it calls (the default), without, from\n"
	"                       the outermost caller down to the function\n"
	"      --no-call-graph  the flat table only\n"
	"      --children       rows for every function on the stacks: Children (the samples\n"
	"                       of stacks it is in) and Self, sorted by Children (the default\n"
	"                       with call graphs)\n"
	"      --no-children    rows by the sampled function only, as without stacks\n"
	"      --percent-limit P  rows and call-graph branches under P%% of the samples are not\n"
	"                       shown (default: all rows, branches of 0.5%% and more)\n"
	"      --limit N        at most N rows (default 50 for text, all for json and csv; 0: all)\n"
	"      --debuginfod URLS  fetch missing debug files and objects by build-id from these\n"
	"                       servers (default $DEBUGINFOD_URLS; each transfer gives up after\n"
	"                       $DEBUGINFOD_TIMEOUT s of no progress, default 5); what is fetched\n"
	"                       is said, and kept in the build-id cache\n"
	"      --buildid-dir DIR  the build-id cache, where objects deleted or changed since the\n"
	"                       recording are read from (default $HSBPF_BUILDID_DIR, else\n"
	"                       ~/.cache/hsbpf/buildid)\n"
	"  -v, --verbose        more messages\n";

/* what one sample stands for in instructions: the period when the event counts
 * instructions, or the exact total over the samples when a truth file is given */
struct graph_ctx {
	struct callchain *cc;
	struct symbolizer *sy;
	struct callchain_print_opts po;
};

static void print_graph(void *ctx, const struct hist *h, size_t row, FILE *out)
{
	struct graph_ctx *g = ctx;

	callchain__print_tree(g->cc, h, row, &g->po, out);
}

static void print_stacks_json(void *ctx, json_writer_t *w)
{
	struct graph_ctx *g = ctx;

	callchain__print_json(g->cc, g->sy, w);
}

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

enum { OPT_CALL_GRAPH = 0x100, OPT_NO_CALL_GRAPH, OPT_CHILDREN, OPT_NO_CHILDREN, OPT_PERCENT_LIMIT,
       OPT_DEBUGINFOD, OPT_BUILDID_DIR };

static int parse_percent(const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	return errno || end == s || *end || !(*v >= 0 && *v <= 100) ? -EINVAL : 0;
}

static bool has_line_key(const enum sort_key *keys, int nr)
{
	for (int i = 0; i < nr; i++)
		if (keys[i] == SORT_LINE)
			return true;
	return false;
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
		{ "call-graph", required_argument, NULL, OPT_CALL_GRAPH },
		{ "no-call-graph", no_argument, NULL, OPT_NO_CALL_GRAPH },
		{ "children", no_argument, NULL, OPT_CHILDREN },
		{ "no-children", no_argument, NULL, OPT_NO_CHILDREN },
		{ "percent-limit", required_argument, NULL, OPT_PERCENT_LIMIT },
		{ "debuginfod", required_argument, NULL, OPT_DEBUGINFOD },
		{ "buildid-dir", required_argument, NULL, OPT_BUILDID_DIR },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	const char *input = "hsbpf.data", *sort = "sym", *truth_path = NULL, *debuginfod = NULL;
	enum hist_format fmt = HIST_TEXT;
	enum sort_key keys[HIST_MAX_KEYS];
	struct symbolizer *sy = NULL;
	struct profile *p = NULL;
	struct hist *h = NULL;
	bool limit_set = false, per_cgroup = false, folded = false;
	/* -1: as the profile has stacks or not */
	int graph = -1, children = -1, order = -1;
	double percent_limit = -1;
	struct graph_ctx g = {};
	u64 limit = 0;
	int c, nr_keys, err;

	optind = 1;
	while ((c = getopt_long(argc, argv, "i:s:gvh", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			input = optarg;
			break;
		case 's':
			sort = optarg;
			break;
		case 'f':
			folded = !strcmp(optarg, "folded");
			if (!folded && hist__parse_format(optarg, &fmt))
				return 2;
			break;
		case 'g':
			graph = 1;
			break;
		case OPT_CALL_GRAPH:
			graph = 1;
			if (!strcmp(optarg, "caller"))
				order = CALLCHAIN_CALLER;
			else if (!strcmp(optarg, "callee"))
				order = CALLCHAIN_CALLEE;
			else
				return fail(2, "invalid --call-graph '%s' (caller or callee)", optarg);
			break;
		case OPT_NO_CALL_GRAPH:
			graph = 0;
			break;
		case OPT_CHILDREN:
			children = 1;
			break;
		case OPT_NO_CHILDREN:
			children = 0;
			break;
		case OPT_PERCENT_LIMIT:
			if (parse_percent(optarg, &percent_limit))
				return fail(2, "invalid --percent-limit '%s' (0 to 100)", optarg);
			break;
		case 'l':
			if (parse_u64(optarg, &limit))
				return fail(2, "invalid --limit '%s'", optarg);
			limit_set = true;
			break;
		case 't':
			truth_path = optarg;
			break;
		case OPT_DEBUGINFOD:
			debuginfod = optarg;
			break;
		case OPT_BUILDID_DIR:
			/* where the symbolizer and debuginfod look: the variable says it to both */
			setenv("HSBPF_BUILDID_DIR", optarg, 1);
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
	if (debuginfod__setup(debuginfod))
		return fail(1, "cannot report: %s", strerror(ENOMEM));
	if (!strcmp(sort, "edge") || !strcmp(sort, "range")) {
		if (fmt == HIST_CSV)
			return fail(2, "--sort %s has text and json output", sort);
		err = profile__read(input, &p);
		sy = err ? NULL : symbolizer__new(p);
		if (!err && !sy)
			err = fail(-ENOMEM, "cannot report: %s", strerror(ENOMEM));
		if (!err)
			err = lbr_report__print(p, sy, !strcmp(sort, "edge") ? HSBPF_LBR_EDGE : HSBPF_LBR_RANGE,
						fmt == HIST_JSON, limit_set ? limit : (fmt == HIST_TEXT ? 50 : 0),
						stdout);
		symbolizer__free(sy);
		profile__free(p);
		debuginfod__end();
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
	if ((folded || graph == 1) && !p->nr_stack_samples) {
		err = fail(-EINVAL, "'%s' has no call stacks (record with -g)", input);
		goto cleanup;
	}
	sy = symbolizer__new(p);
	h = hist__new(keys, nr_keys);
	if (!sy || !h) {
		err = -ENOMEM;
		error("cannot report: %s", strerror(ENOMEM));
		goto cleanup;
	}
	/* source lines are DWARF line tables, often in compressed sections: read only when a
	 * column shows them */
	if (!has_line_key(keys, nr_keys))
		symbolizer__skip_lines(sy);
	if (p->nr_stack_samples && (folded || graph != 0)) {
		g.cc = callchain__new(p, sy);
		if (!g.cc) {
			err = fail(-ENOMEM, "cannot report: %s", strerror(ENOMEM));
			goto cleanup;
		}
	}
	if (folded) {
		err = callchain__print_folded(g.cc, stdout);
		goto cleanup;
	}
	err = hist__add_profile(h, p, sy);
	if (err)
		goto cleanup;
	if (g.cc) {
		h->children = children != 0;
		err = callchain__attach(g.cc, h, sy, h->children);
		if (err)
			goto cleanup;
		g.sy = sy;
		g.po = (struct callchain_print_opts){
			.order = order >= 0 ? (enum callchain_order)order :
				 h->children ? CALLCHAIN_CALLER : CALLCHAIN_CALLEE,
			.children = h->children,
			.percent_limit = percent_limit >= 0 ? percent_limit : 0.5,
			.indent = 12,
		};
		h->print_row_extra = print_graph;
		h->print_json_extra = print_stacks_json;
		h->extra_ctx = &g;
	}
	if (percent_limit > 0)
		h->percent_limit = percent_limit;
	err = set_scale(h, p, truth_path);
	if (!err && nr_keys == 1 && keys[0] == SORT_BB)
		err = hist__add_lbr(h, p, sy);
	if (err)
		goto cleanup;
	hist__sort(h);
	hist__print(h, p, fmt, limit, stdout);	/* write errors: reported by main */
cleanup:
	callchain__free(g.cc);
	hist__free(h);
	symbolizer__free(sy);
	profile__free(p);
	debuginfod__end();
	return err ? 1 : 0;
}
