// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* hsbpf report: parse the options, then read a profile, group its samples and print them
 * (user/report.c). */
#include <errno.h>
#include <string.h>
#include "callchain.h"
#include "cmds.h"
#include "option_groups.h"
#include "report.h"

static struct report_opts o;

static const struct options_cmd report_cmd = {
	.name = "hsbpf report",
	.usage =
	"usage: hsbpf report [-i FILE] [-o OUT] [--sort KEYS] [--limit N] [--per-cgroup]\n"
	"                    [--format text|json|csv|folded|pprof|speedscope] [--truth FILE]\n"
	"                    [-g | --call-graph caller|callee | --no-call-graph] [--[no-]children]\n"
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

static int call_graph(const struct option_spec *opt, const char *arg)
{
	(void)opt;
	o.graph = 1;
	if (!strcmp(arg, "caller"))
		o.order = CALLCHAIN_CALLER;
	else if (!strcmp(arg, "callee"))
		o.order = CALLCHAIN_CALLEE;
	else
		return fail(-EINVAL, "invalid --call-graph '%s' (caller or callee)", arg);
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
		   "executions); or alone: edge, range (taken branches, fall-through ranges from "
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
	OPT_SET('g', NULL, &o.graph, 1, "call graphs under each row (the default when the profile "
		"has stacks)"),
	OPT_CALLBACK(0, "call-graph", NULL, "ORDER", "callee: from each row's function up to its "
		     "callers (the default with --no-children); caller: with --children, from the "
		     "function down to what it calls (the default), without, from the outermost "
		     "caller down to the function", call_graph),
	{ .kind = OPTION_SET, .long_name = "no-call-graph", .value = &o.graph, .set = 0,
	  .help = "the flat table only" },
	{ .kind = OPTION_SET, .long_name = "children", .value = &o.children, .set = 1,
	  .flags = OPTF_NEG, .help = "rows for every function on the stacks: Children (the samples "
	  "of stacks it is in) and Self, sorted by Children (the default with call graphs); "
	  "--no-children: rows by the sampled function only, as without stacks" },
	OPT_SECONDS(0, "percent-limit", &o.percent_limit, "P", "rows and call-graph branches under "
		    "P% of the samples are not shown (default: all rows, branches of 0.5% and more)",
		    0, 100, "invalid --percent-limit '%s' (%g to %g)"),
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
		.graph = -1, .children = -1, .order = -1, .percent_limit = -1,
	};
	nr = options__parse(&report_cmd, report_opts, argc, argv);
	if (nr < 0)
		return options__status(nr);
	return report__run(&o);
}
