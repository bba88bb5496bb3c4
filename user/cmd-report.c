// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* hsbpf report: parse the options, then read a profile, group its samples and print them
 * (user/report.c). */
#include <errno.h>
#include <string.h>
#include "report/callchain.h"
#include "cmds.h"
#include "option_groups.h"
#include "report.h"

static struct report_opts o;
static bool stdio_flag;

static const struct options_cmd report_cmd = {
	.name = "hsbpf report",
	.usage =
	"usage: hsbpf report [-i FILE] [-o OUT] [--sort KEYS] [--limit N] [--per-cgroup]\n"
	"                    [--format text|json|csv|folded|pprof|speedscope] [--truth FILE]\n"
	"                    [-g [TYPE,THRESHOLD,ORDER] | --no-call-graph] [--[no-]children]\n"
	"                    [-n] [-F FIELDS] [--header | --header-only] [--stdio]\n"
	"                    [--percent-limit P] [--comm COMMS] [--pid PIDS] [--tid TIDS]\n"
	"                    [--dso OBJECTS] [--symbols SYMS] [--cpu CPUS] [--time START,END]\n"
	"                    [--no-demangle] [--no-inline] [--debuginfod URLS] [--buildid-dir DIR]\n",
	.no_args = true,
};

static int format(const struct option_spec *opt, const char *arg)
{
	(void)opt;
	return output_format__parse(arg, report__formats(), &o.fmt) ? -EINVAL : 0;
}

/* -g none: perf's keeps the Children column (its default with stacks) */
static bool graph_none;

/* -g [ARG], --call-graph ARG: perf's print type, threshold, order (callchain__parse_param) */
static int call_graph(const struct option_spec *opt, const char *arg)
{
	struct callchain_param cp;

	(void)opt;
	if (!arg) {
		o.graph = 1;
		return 0;
	}
	if (callchain__parse_param(arg, &cp))
		return -EINVAL;
	o.graph = cp.graph >= 0 ? cp.graph : 1;
	graph_none = !o.graph;
	if (cp.style >= 0)
		o.style = cp.style;
	if (cp.order >= 0)
		o.order = cp.order;
	if (cp.threshold >= 0)
		o.graph_limit = cp.threshold;
	return 0;
}

/* --tui, --gtk: perf's interactive browsers */
static int no_browser(const struct option_spec *opt, const char *arg)
{
	(void)arg;
	return fail(-EINVAL, "--%s: hsbpf report prints text (--stdio, the default); for a live "
		    "interactive view use hsbpf top", opt->long_name);
}

/* -F: perf's output fields; the metrics are report's fixed columns, the rest sort keys */
static char fields_sort[256];

static int fields(const struct option_spec *opt, const char *arg)
{
	static const char *const metrics[] = { "overhead", "overhead_children", "sample",
					       "period" };
	static const char *const keys[] = { "comm", "pid", "tid", "dso", "sym", "symbol",
					    "srcline", "srcfile", "cpu", "cgroup" };
	char buf[256], *save = NULL;
	size_t n = 0;

	(void)opt;
	fields_sort[0] = 0;
	snprintf(buf, sizeof(buf), "%s", arg);
	for (char *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		size_t i, k;

		for (i = 0; i < ARRAY_SIZE(metrics) && strcmp(w, metrics[i]); i++)
			;
		if (i < ARRAY_SIZE(metrics)) {
			o.show_nr |= !strcmp(w, "sample");
			continue;
		}
		for (k = 0; k < ARRAY_SIZE(keys) && strcmp(w, keys[k]); k++)
			;
		if (k == ARRAY_SIZE(keys))
			return fail(-EINVAL, "invalid -F field '%s' (known: overhead, sample, period "
				    "(always shown), comm, pid, tid, dso, sym, srcline, srcfile, cpu, "
				    "cgroup)", w);
		n += snprintf(fields_sort + n, sizeof(fields_sort) - n, "%s%s", n ? "," : "",
			      k == 5 ? "sym" : w);
	}
	if (n)
		o.sort = fields_sort;
	return 0;
}

static int limit(const struct option_spec *opt, const char *arg)
{
	(void)opt;
	if (parse_u64(arg, &o.limit))
		return fail(-EINVAL, "invalid --limit '%s'", arg);
	o.limit_set = true;
	return 0;
}

static const struct option_spec report_opts[] = {
	OPT_INPUT(&o.input),
	OPT_STRING('o', "output", &o.output, "OUT", "write there rather than to standard output"),
	OPT_STRING(0, "sample-type", &o.sample_type, "TYPE", "record --memory's view: alloc_space "
		   "(default: bytes allocated), alloc_objects, inuse_space (live at the end), "
		   "inuse_objects"),
	OPT_STRING('s', "sort", &o.sort, "KEYS", "comma-separated: sym (default), ip, dso, line (or "
		   "srcline), srcfile (the line's file), pid, tid (TID:name; recorded by default), comm (a thread's own name when it has "
		   "one), cpu (record --per-cpu), cgroup, bb (basic blocks, with estimated "
		   "executions), state (off-CPU time: S, D, R, other, or on-CPU); or alone: edge, range (taken branches, fall-through ranges from "
		   "branch stacks)"),
	OPT_FLAG(0, "per-cgroup", &o.per_cgroup, "break the rows down by cgroup (container): cgroup "
		 "first in KEYS"),
	OPT_STRING(0, "truth", &o.truth_path, "FILE", "scale block estimates to instructions with "
		   "this run's exact total"),
	OPT_CALLBACK(0, "format", NULL, "FMT", "text (default, 100 columns), json, csv; folded: one "
		     "line per distinct stack, comm;root;...;leaf count (flame graph input); pprof: "
		     "gzipped profile.proto for go tool pprof, Pyroscope, Parca (binary: to a file "
		     "or a pipe, not a terminal); speedscope: JSON for speedscope.app, one profile "
		     "per process. Both export every sample with its stack (one frame without "
		     "stacks) and ignore the sort, limit and call-graph options", format),
	{ .kind = OPTION_CALLBACK, .short_name = 'g', .argh = "ARG", .cb = call_graph,
	  .flags = OPTF_OPTARG | OPTF_NEXTARG, .help = "call graphs under each row (the default "
	  "when the profile has stacks); ARG as --call-graph's" },
	OPT_CALLBACK(0, "call-graph", NULL, "ARG", "perf's TYPE,THRESHOLD,ORDER (any of them, "
		     "comma-separated). TYPE: graph (the tree, shares of all samples; the "
		     "default), fractal (shares of the parent), flat (each chain, a frame a "
		     "line), folded (each chain on one line), none (no graphs; Children kept). "
		     "ORDER: callee: from each row's function up to its callers (the default with "
		     "--no-children); caller: with --children, from the function down to what it "
		     "calls (the default), without, from the outermost caller down to the "
		     "function. THRESHOLD: branches under it (%) not shown (default: "
		     "--percent-limit's, else 0.5)", call_graph),
	{ .kind = OPTION_SET, .long_name = "no-call-graph", .value = &o.graph, .set = 0,
	  .help = "the flat table only" },
	{ .kind = OPTION_SET, .long_name = "children", .value = &o.children, .set = 1,
	  .flags = OPTF_NEG, .help = "rows for every function on the stacks: Children (the samples "
	  "of stacks it is in) and Self, sorted by Children (the default with call graphs); "
	  "--no-children: rows by the sampled function only, as without stacks" },
	OPT_SECONDS(0, "percent-limit", &o.percent_limit, "P", "rows and call-graph branches under "
		    "P% of the samples are not shown (default: all rows, branches of 0.5% and more)",
		    0, 100, "invalid --percent-limit '%s' (%g to %g)"),
	OPT_FLAG(0, "wakers", &o.wakers, "in the call graphs, a woken off-CPU block's chain goes on "
		 "with a \"--\" and its waker's frames, the wake-up first (record --wakers; as "
		 "offwaketime's stacks read)"),
	OPT_FLAG('n', "show-nr-samples", &o.show_nr, "a Samples column with --children too "
		 "(the flat table always has one)"),
	OPT_CALLBACK('F', "fields", NULL, "FIELDS", "perf's output fields: overhead, sample, "
		     "period (report's Samples and Percent columns), and comm, pid, tid, dso, "
		     "sym, srcline, srcfile, cpu, cgroup, taken as --sort keys", fields),
	OPT_FLAG(0, "header", &o.header, "the profile's header first: when, where, what and "
		 "how it was recorded (text output)"),
	OPT_FLAG(0, "header-only", &o.header_only, "the profile's header alone"),
	{ .kind = OPTION_FLAG, .long_name = "stdio", .value = &stdio_flag,
	  .help = "text output (the only kind: accepted for perf's command lines)" },
	{ .kind = OPTION_CALLBACK, .long_name = "tui", .cb = no_browser, .flags = OPTF_HIDDEN },
	{ .kind = OPTION_CALLBACK, .long_name = "gtk", .cb = no_browser, .flags = OPTF_HIDDEN },
	OPT_CALLBACK(0, "limit", NULL, "N", "at most N rows (default 50 for text, all for json and "
		     "csv; 0: all)", limit),
	OPT_NO_DEMANGLE(&o.raw_names),
	OPT_NO_INLINE(&o.inl, "no inlined functions (shown by default, from DWARF, in --sort line, "
		      "in call graphs and folded stacks as NAME (inlined) frames, and in json rows)"),
	OPTIONS_DEBUGINFOD(&o.debuginfod),
	OPT_VERBOSE("more messages"),
	OPTIONS_FILTERS(&o.sf),
	OPT_END(),
};

int cmd_report(int argc, char **argv)
{
	int nr;

	o = (struct report_opts){
		.input = "hsbpf.data", .sort = "sym", .fmt = OUT_TEXT, .inl = true,
		.graph = -1, .children = -1, .order = -1, .percent_limit = -1, .graph_limit = -1,
	};
	graph_none = false;
	nr = options__parse(&report_cmd, report_opts, argc, argv);
	if (nr < 0)
		return options__status(nr);
	if (graph_none && o.children < 0)
		o.children = 1;
	if (o.header && o.fmt != OUT_TEXT)
		return fail(2, "--header is for text output: --header-only writes it alone");
	return report__run(&o);
}
