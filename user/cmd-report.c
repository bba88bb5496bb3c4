// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* hsbpf report: read a profile, group its samples, print them. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "callchain.h"
#include "cmds.h"
#include "disasm.h"
#include "file_format.h"
#include "debuginfod.h"
#include "hist.h"
#include "json_writer.h"
#include "hsbpf.h"
#include "lbr_report.h"
#include "pprof.h"
#include "profile.h"
#include "sample_filter.h"
#include "speedscope.h"
#include "symbolizer.h"
#include "truth_file.h"
#include <linux/perf_event.h>

static const char usage_text[] =
	"usage: hsbpf report [-i FILE] [-o OUT] [--sort KEYS] [--limit N] [--per-cgroup]\n"
	"                    [--format text|json|csv|folded|pprof|speedscope] [--truth FILE]\n"
	"                    [-g | --call-graph caller|callee | --no-call-graph] [--[no-]children]\n"
	"                    [--percent-limit P] [--comm COMMS] [--pid PIDS] [--tid TIDS]\n"
	"                    [--dso OBJECTS] [--symbols SYMS] [--cpu CPUS] [--time START,END]\n"
	"                    [--no-demangle] [--no-inline] [--debuginfod URLS] [--buildid-dir DIR]\n"
	"\n"
	"  -i, --input FILE     profile to read (default hsbpf.data)\n"
	"  -o, --output OUT     write there rather than to standard output\n"
	"  -s, --sort KEYS      comma-separated: sym (default), ip, dso, line, pid, tid (TID:name;\n"
	"                       recorded by default), comm (a thread's own name when it has one),\n"
	"                       cpu (record --per-cpu), cgroup, bb (basic blocks, with estimated\n"
	"                       executions); or alone: edge, range (taken branches, fall-through\n"
	"                       ranges from branch stacks)\n"
	"      --per-cgroup     break the rows down by cgroup (container): cgroup first in KEYS\n"
	"      --truth FILE     scale block estimates to instructions with this run's exact total\n"
	"      --format FMT     text (default, 100 columns), json, csv; folded: one line per\n"
	"                       distinct stack, comm;root;...;leaf count (flame graph input);\n"
	"                       pprof: gzipped profile.proto for go tool pprof, Pyroscope, Parca\n"
	"                       (binary: to a file or a pipe, not a terminal); speedscope: JSON\n"
	"                       for speedscope.app, one profile per process. Both export every\n"
	"                       sample with its stack (one frame without stacks) and ignore the\n"
	"                       sort, limit and call-graph options\n"
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
	"      --percent-limit P  rows and call-graph branches under P% of the samples are not\n"
	"                       shown (default: all rows, branches of 0.5% and more)\n"
	"  Filters (comma-separated lists; each sample is kept or dropped whole, in every view):\n"
	"      --comm COMMS     commands or thread names      --pid PIDS   processes\n"
	"      --tid TIDS       threads                        --cpu CPUS   e.g. 0-3,6 (--per-cpu)\n"
	"      --dso OBJECTS    the sampled object, by path or file name\n"
	"      --symbols SYMS   the sampled function\n"
	"      --time START,END seconds after the recording's start, either side may be empty;\n"
	"                       exact to the recording's --time-buckets\n"
	"      --limit N        at most N rows (default 50 for text, all for json and csv; 0: all)\n"
	"      --no-demangle    C++ and Rust symbols as mangled (demangled by default)\n"
	"      --no-inline      no inlined functions (shown by default, from DWARF, in --sort\n"
	"                       line, in call graphs and folded stacks as NAME (inlined) frames,\n"
	"                       and in json rows)\n"
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

/* -o: through an outfile (file_format.h), so that the file appears only once complete and a
 * failed report leaves what was there; never onto the input. 0, or -errno after reporting */
static int open_output(const char *path, const char *input, struct outfile *o, FILE **out)
{
	int err = outfile__check_input(path, input);

	if (!err)
		err = outfile__open(o, path, 0);
	if (err)
		return err;
	*out = outfile__stream(o);
	if (!*out) {
		outfile__discard(o);
		return fail(-ENOMEM, "cannot write '%s': %s", path, strerror(ENOMEM));
	}
	return 0;
}

/* commit what open_output opened, or discard it when err (the report's) is set or a write
 * failed (said there, with its errno); standard output is main's to check */
static int close_output(struct outfile *o, FILE *out, int err)
{
	if (out == stdout)
		return err;
	return outfile__finish(o, err);
}

enum export_format { EXPORT_NONE, EXPORT_PPROF, EXPORT_SPEEDSCOPE };

/* every sample with its stack, or one frame each when the profile has none: the exit status */
static int export_profile(const char *input, enum export_format export, const char *output,
			  const struct sample_filter *sf, bool raw_names, bool inl)
{
	struct symbolizer *sy = NULL;
	u64 filtered = 0;
	struct callchain *cc = NULL;
	struct profile *p = NULL;
	struct outfile o;
	FILE *out = stdout;
	int err;

	err = profile__read(input, &p);
	if (err)
		return 1;
	if (!profile__total_samples(p) && !p->nr_stack_samples) {
		err = fail(-ENODATA, "'%s' has no samples: nothing to export", input);
		goto cleanup;
	}
	sy = symbolizer__new(p);
	if (!sy) {
		err = fail(-ENOMEM, "cannot export: %s", strerror(ENOMEM));
		goto cleanup;
	}
	/* names as asked, before the filters resolve any; frames without their lines: pprof
	 * looks up one per distinct location, itself (and the inlined functions there) */
	if (raw_names)
		symbolizer__no_demangle(sy);
	if (inl && export == EXPORT_SPEEDSCOPE)
		symbolizer__want_inline(sy);
	symbolizer__skip_lines(sy);
	err = sample_filter__apply(sf, p, sy, &filtered);
	if (err)
		goto cleanup;
	if (filtered)
		debug("the filters left out %" PRIu64 " samples", filtered);
	cc = p->nr_stack_samples ? callchain__new(p, sy) : callchain__new_flat(p, sy);
	if (!cc) {
		err = fail(-ENOMEM, "cannot export: %s", strerror(ENOMEM));
		goto cleanup;
	}
	if (p->nr_stack_samples && p->stats.stack_keys_full)
		warning("%" PRIu64 " samples are in the flat profile but not exported: the "
			"stack-sample map was full (raise --map-entries)", p->stats.stack_keys_full);
	if (output && (err = open_output(output, input, &o, &out)))
		goto cleanup;
	err = export == EXPORT_PPROF ? pprof__write(cc, sy, out) :
	      speedscope__write(cc, sy, path__base(input), out);
	/* write errors: said by outfile__finish for a file, by main for standard output */
	if (err && err != -ENOMEM && out == stdout)
		err = 0;
	err = close_output(&o, out, err);
cleanup:
	callchain__free(cc);
	symbolizer__free(sy);
	profile__free(p);
	return err ? 1 : 0;
}

enum { OPT_CALL_GRAPH = 0x100, OPT_NO_CALL_GRAPH, OPT_CHILDREN, OPT_NO_CHILDREN, OPT_PERCENT_LIMIT,
       OPT_COMM, OPT_PID, OPT_TID, OPT_DSO, OPT_SYMBOLS, OPT_CPU, OPT_TIME, OPT_NO_DEMANGLE,
       OPT_NO_INLINE, OPT_DEBUGINFOD, OPT_BUILDID_DIR };

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
		{ "output", required_argument, NULL, 'o' },
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
		{ "comm", required_argument, NULL, OPT_COMM },
		{ "pid", required_argument, NULL, OPT_PID },
		{ "tid", required_argument, NULL, OPT_TID },
		{ "dso", required_argument, NULL, OPT_DSO },
		{ "symbols", required_argument, NULL, OPT_SYMBOLS },
		{ "cpu", required_argument, NULL, OPT_CPU },
		{ "time", required_argument, NULL, OPT_TIME },
		{ "no-demangle", no_argument, NULL, OPT_NO_DEMANGLE },
		{ "no-inline", no_argument, NULL, OPT_NO_INLINE },
		{ "debuginfod", required_argument, NULL, OPT_DEBUGINFOD },
		{ "buildid-dir", required_argument, NULL, OPT_BUILDID_DIR },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	const char *input = "hsbpf.data", *sort = "sym", *truth_path = NULL, *output = NULL,
		   *debuginfod = NULL;
	enum hist_format fmt = HIST_TEXT;
	enum sort_key keys[HIST_MAX_KEYS];
	struct symbolizer *sy = NULL;
	struct profile *p = NULL;
	struct hist *h = NULL;
	bool limit_set = false, per_cgroup = false, folded = false, raw_names = false, inl = true;
	enum export_format export = EXPORT_NONE;
	struct outfile o;
	FILE *out = stdout;
	/* -1: as the profile has stacks or not */
	int graph = -1, children = -1, order = -1;
	double percent_limit = -1;
	struct graph_ctx g = {};
	struct sample_filter sf = {};
	u64 limit = 0, filtered = 0;
	int c, nr_keys, err;

	optind = 1;
	while ((c = getopt_long(argc, argv, "i:o:s:gvh", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			input = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case 's':
			sort = optarg;
			break;
		case 'f':
			folded = !strcmp(optarg, "folded");
			export = !strcmp(optarg, "pprof") ? EXPORT_PPROF :
				 !strcmp(optarg, "speedscope") ? EXPORT_SPEEDSCOPE : EXPORT_NONE;
			if (folded || export)
				break;
			if (strcmp(optarg, "text") && strcmp(optarg, "json") && strcmp(optarg, "csv"))
				return fail(2, "unknown format '%s' (known: text, json, csv, folded, pprof, "
					    "speedscope)", optarg);
			if (hist__parse_format(optarg, &fmt))
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
		case OPT_COMM:
			sf.comms = optarg;
			break;
		case OPT_PID:
		case OPT_TID:
			if (sample_filter__parse_ids(optarg, c == OPT_PID ? "--pid" : "--tid"))
				return usage_hint("hsbpf report");
			*(c == OPT_PID ? &sf.pids : &sf.tids) = optarg;
			break;
		case OPT_DSO:
			sf.dsos = optarg;
			break;
		case OPT_SYMBOLS:
			sf.syms = optarg;
			break;
		case OPT_CPU:
			sf.cpus = optarg;
			break;
		case OPT_TIME:
			if (sample_filter__parse_time(&sf, optarg))
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
		case OPT_NO_DEMANGLE:
			raw_names = true;
			break;
		case OPT_NO_INLINE:
			inl = false;
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
	/* a binary file on a terminal shows nothing useful and can upset it (as gzip and perf
	 * refuse): to a file or a pipe only */
	if (export == EXPORT_PPROF && !output && isatty(STDOUT_FILENO))
		return fail(2, "pprof output is binary: write it with -o FILE or redirect it");
	/* the profile is checked where the output is opened; the truth file is read too */
	if (outfile__check_input(output, truth_path))
		return 1;
	if (debuginfod__setup(debuginfod))
		return fail(1, "cannot report: %s", strerror(ENOMEM));
	if (export) {
		err = export_profile(input, export, output, &sf, raw_names, inl);
		debuginfod__end();
		return err;
	}
	if (!strcmp(sort, "edge") || !strcmp(sort, "range")) {
		if (sample_filter__active(&sf)) {
			debuginfod__end();
			return fail(2, "--sort %s: the filters apply to samples, not to branch records",
				    sort);
		}
		if (fmt == HIST_CSV)
			return fail(2, "--sort %s has text and json output", sort);
		if (output && open_output(output, input, &o, &out))
			return 1;
		err = profile__read(input, &p);
		sy = err ? NULL : symbolizer__new(p);
		if (!err && !sy)
			err = fail(-ENOMEM, "cannot report: %s", strerror(ENOMEM));
		if (sy && raw_names)
			symbolizer__no_demangle(sy);
		if (!err)
			err = lbr_report__print(p, sy, !strcmp(sort, "edge") ? HSBPF_LBR_EDGE : HSBPF_LBR_RANGE,
						fmt == HIST_JSON, limit_set ? limit : (fmt == HIST_TEXT ? 50 : 0),
						out);
		symbolizer__free(sy);
		profile__free(p);
		debuginfod__end();
		return close_output(&o, out, err) ? 1 : 0;
	}
	if (hist__parse_sort(sort, keys, &nr_keys))
		return 2;
	if (per_cgroup && hist__prepend_key(keys, &nr_keys, SORT_CGROUP))
		return fail(2, "--per-cgroup: at most %d sort keys", HIST_MAX_KEYS);
	if (!limit_set)
		limit = fmt == HIST_TEXT ? 50 : 0;
	if (output && open_output(output, input, &o, &out))
		return 1;

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
	for (int k = 0; k < nr_keys; k++) {
		if (keys[k] == SORT_TID && !profile__has_key(p, "tid")) {
			err = fail(-EINVAL, "--sort tid: '%s' has no thread keys (recorded with --no-per-thread)",
				   input);
			goto cleanup;
		}
		if (keys[k] == SORT_CPU && !profile__has_key(p, "cpu")) {
			err = fail(-EINVAL, "--sort cpu: '%s' has no CPU keys (record with --per-cpu)",
				   input);
			goto cleanup;
		}
		/* blocks are capstone's: without it, no row would have one */
		if (keys[k] == SORT_BB && (err = disasm__load()))
			goto cleanup;
	}
	/* how names are resolved is set before the filters resolve any (the symbolizer caches) */
	if (raw_names)
		symbolizer__no_demangle(sy);
	/* inline scopes cost DWARF: only for what shows them */
	if (inl && (has_line_key(keys, nr_keys) || fmt == HIST_JSON || folded ||
		    (p->nr_stack_samples && graph != 0)))
		symbolizer__want_inline(sy);
	/* source lines are DWARF line tables, often in compressed sections: read only when a
	 * column shows them */
	if (!has_line_key(keys, nr_keys))
		symbolizer__skip_lines(sy);
	if (!has_line_key(keys, nr_keys) && fmt != HIST_JSON)
		symbolizer__skip_call_files(sy);
	err = sample_filter__apply(&sf, p, sy, &filtered);
	if (err)
		goto cleanup;
	if (filtered)
		debug("the filters left out %" PRIu64 " samples", filtered);
	if (p->nr_stack_samples && (folded || graph != 0)) {
		g.cc = callchain__new(p, sy);
		if (!g.cc) {
			err = fail(-ENOMEM, "cannot report: %s", strerror(ENOMEM));
			goto cleanup;
		}
	}
	if (folded) {
		err = callchain__print_folded(g.cc, out);
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
	hist__print(h, p, fmt, limit, out);	/* write errors: reported by main (stdout) */
cleanup:
	callchain__free(g.cc);
	hist__free(h);
	symbolizer__free(sy);
	profile__free(p);
	debuginfod__end();
	return close_output(&o, out, err) ? 1 : 0;
}
