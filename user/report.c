// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* What report prints once its options are parsed: a profile read, filtered and grouped into
 * rows (with call graphs), branch records (--sort edge, range), or every sample exported
 * (pprof, speedscope); and the profile loading that script shares. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "report/callchain.h"
#include "symbols/debuginfod.h"
#include "lib/disasm.h"
#include "lib/file_format.h"
#include "lib/output.h"
#include "hsbpf.h"
#include "lib/json_writer.h"
#include "report/lbr_report.h"
#include "record/offcpu.h"
#include "export/pprof.h"
#include "record/memory.h"
#include "report.h"
#include "export/speedscope.h"
#include "symbols/symbolizer.h"
#include "profile/truth_file.h"
#include <linux/perf_event.h>

int report__load(const char *input, const struct sample_filter *sf, bool raw_names, bool inl,
		 const char *empty, struct profile **p, struct symbolizer **sy, bool *stacks)
{
	u64 filtered = 0;
	int err;

	*sy = NULL;
	err = profile__read(input, p);
	if (err)
		return err;
	if (!profile__total_samples(*p) && !(*p)->nr_stack_samples)
		return fail(-ENODATA, "'%s' has no samples%s", input, empty);
	*sy = symbolizer__new(*p);
	if (!*sy)
		return fail(-ENOMEM, "cannot read '%s': %s", input, strerror(ENOMEM));
	/* names as asked, before the filters resolve any (the symbolizer caches) */
	if (raw_names)
		symbolizer__no_demangle(*sy);
	if (inl)
		symbolizer__want_inline(*sy);
	symbolizer__skip_lines(*sy);
	/* whether it has stacks, before the filters leave none */
	if (stacks)
		*stacks = (*p)->nr_stack_samples > 0;
	err = sample_filter__apply(sf, *p, *sy, &filtered);
	if (err)
		return err;
	if (filtered)
		debug("the filters left out %" PRIu64 " samples", filtered);
	return 0;
}

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

/* what an output is made from; each output uses what it needs */
struct report_view {
	const struct profile *p;
	struct symbolizer *sy;
	const struct callchain *cc;	/* the stacks, when made */
	const struct hist *h;		/* the rows, sorted, for the row formats */
	const char *input;
	enum output_format fmt;
	u64 limit;
};

static int write_rows(const struct report_view *v, FILE *out)
{
	hist__print(v->h, v->p, v->fmt, v->limit, out);
	return 0;
}

static int write_folded(const struct report_view *v, FILE *out)
{
	return callchain__print_folded(v->cc, out);
}

static int write_pprof(const struct report_view *v, FILE *out)
{
	return pprof__write(v->cc, v->sy, out);
}

static int write_speedscope(const struct report_view *v, FILE *out)
{
	return speedscope__write(v->cc, v->sy, path__base(v->input), out);
}

/* report's outputs (--format): what each needs and what writes it */
static const struct report_output {
	enum output_format fmt;
	bool rows;		/* the histogram's rows: sort, limit, call graphs under them */
	bool needs_stacks;	/* a profile without call stacks is refused */
	bool whole;		/* every sample with its stack (one frame each without stacks),
				 * not rows: the sort, limit and call-graph options are ignored */
	bool binary;		/* to a file or a pipe, never a terminal */
	bool branches;		/* --sort edge|range has it */
	bool inlined;		/* shows inlined functions (DWARF scopes read) */
	bool call_lines;	/* shows where inlined functions were called from */
	int (*write)(const struct report_view *v, FILE *out);
} report_outputs[] = {
	{ OUT_TEXT, .rows = true, .branches = true, .write = write_rows },
	{ OUT_JSON, .rows = true, .branches = true, .inlined = true, .call_lines = true,
	  .write = write_rows },
	{ OUT_CSV, .rows = true, .write = write_rows },
	{ OUT_FOLDED, .needs_stacks = true, .inlined = true, .write = write_folded },
	{ OUT_PPROF, .whole = true, .binary = true, .write = write_pprof },
	{ OUT_SPEEDSCOPE, .whole = true, .inlined = true, .write = write_speedscope },
};

unsigned int report__formats(void)
{
	unsigned int set = 0;

	for (size_t i = 0; i < ARRAY_SIZE(report_outputs); i++)
		set |= OUT_SET(report_outputs[i].fmt);
	return set;
}

static const struct report_output *report_output(enum output_format fmt)
{
	for (size_t i = 0; i < ARRAY_SIZE(report_outputs); i++)
		if (report_outputs[i].fmt == fmt)
			return &report_outputs[i];
	return &report_outputs[0];	/* output_format__parse let only these through */
}

/* every sample with its stack, or one frame each when the profile has none: the exit status */
static int export_profile(const char *input, const struct report_output *ro, const char *output,
			  const struct sample_filter *sf, bool raw_names, bool inl, const char *sample_type)
{
	enum memory_view mview = MEMORY_ALLOC_SPACE;
	struct symbolizer *sy = NULL;
	struct callchain *cc = NULL;
	struct profile *p = NULL;
	struct output out;
	int err;

	/* frames without their lines: pprof looks up one per distinct location, itself (and
	 * the inlined functions there) */
	err = report__load(input, sf, raw_names, inl && ro->inlined,
			   ": nothing to export", &p, &sy, NULL);
	if (!err && sample_type && memory__parse_view(sample_type, &mview))
		err = -EINVAL;
	if (err)
		goto cleanup;
	/* sampled allocations: the view asked for; pprof has the four, as a Go heap profile,
	 * the one asked for shown first (else inuse_space, as Go's) */
	if (memory__in_profile(p) && ro->fmt == OUT_PPROF)
		memory__select_all(p, sample_type ? mview : MEMORY_INUSE_SPACE);
	else if (memory__in_profile(p))
		memory__select(p, mview);
	cc = p->nr_stack_samples ? callchain__new(p, sy) : callchain__new_flat(p, sy);
	if (!cc) {
		err = fail(-ENOMEM, "cannot export: %s", strerror(ENOMEM));
		goto cleanup;
	}
	if (p->nr_stack_samples && p->stats.stack_keys_full)
		warning("%" PRIu64 " samples are in the flat profile but not exported: the "
			"stack-sample map was full (raise --map-entries)", p->stats.stack_keys_full);
	err = output__open(&out, output, input);
	if (err)
		goto cleanup;
	err = ro->write(&(struct report_view){ .p = p, .sy = sy, .cc = cc, .input = input,
					      .fmt = ro->fmt }, out.f);
	/* write errors: said by output__close for a file, by main for standard output */
	err = output__close(&out, err);
cleanup:
	callchain__free(cc);
	symbolizer__free(sy);
	profile__free(p);
	return err ? 1 : 0;
}

static bool has_line_key(const enum sort_key *keys, int nr)
{
	for (int i = 0; i < nr; i++)
		if (sort_key__ops(keys[i])->lines)
			return true;
	return false;
}

/* --sort edge or range: the branch records, not the samples; the exit status */
static int print_branches(const struct report_opts *o, const struct report_output *ro)
{
	struct symbolizer *sy = NULL;
	struct profile *p = NULL;
	struct output out;
	int err;

	if (sample_filter__active(&o->sf))
		return fail(2, "--sort %s: the filters apply to samples, not to branch records",
			    o->sort);
	if (!ro->branches)
		return fail(2, "--sort %s has text and json output", o->sort);
	if (output__open(&out, o->output, o->input))
		return 1;
	err = profile__read(o->input, &p);
	sy = err ? NULL : symbolizer__new(p);
	if (!err && !sy)
		err = fail(-ENOMEM, "cannot report: %s", strerror(ENOMEM));
	if (sy && o->raw_names)
		symbolizer__no_demangle(sy);
	if (!err)
		err = lbr_report__print(p, sy, !strcmp(o->sort, "edge") ? HSBPF_LBR_EDGE : HSBPF_LBR_RANGE,
					o->fmt, o->limit_set ? o->limit : (o->fmt == OUT_TEXT ? 50 : 0),
					out.f);
	symbolizer__free(sy);
	profile__free(p);
	return output__close(&out, err) ? 1 : 0;
}

/* the keys the profile must have, and what they need: 0, or -errno after saying why */
static int check_keys(const struct profile *p, const char *input, const enum sort_key *keys,
		      int nr_keys)
{
	int err;

	for (int k = 0; k < nr_keys; k++) {
		if (keys[k] == SORT_TID && !profile__has_key(p, "tid"))
			return fail(-EINVAL, "--sort tid: '%s' has no thread keys (recorded with "
				    "--no-per-thread, or -a with --off-cpu or --wall: record "
				    "--per-thread)", input);
		if (keys[k] == SORT_WAKER && !profile__has_key(p, "waker"))
			return fail(-EINVAL, "--sort waker: '%s' has no wakers (record with --off-cpu "
				    "--wakers)", input);
		if (keys[k] == SORT_CPU && !profile__has_key(p, "cpu"))
			return fail(-EINVAL, "--sort cpu: '%s' has no CPU keys (record with --per-cpu)",
				    input);
		/* blocks are capstone's: without it, no row would have one */
		if (keys[k] == SORT_BB && (err = disasm__load()))
			return err;
	}
	return 0;
}

/* whether the stacks are read: for the output, the call graphs, or the Children column
 * (--children -g none, as perf's) */
static bool wants_stacks(const struct report_opts *o, const struct report_output *ro)
{
	return ro->needs_stacks || o->graph != 0 || o->children == 1;
}

/* how names are resolved, set before the filters resolve any (the symbolizer caches) */
static void set_symbolizer(struct symbolizer *sy, const struct report_opts *o,
			   const struct report_output *ro, const struct profile *p,
			   const enum sort_key *keys, int nr_keys)
{
	bool lines = has_line_key(keys, nr_keys);

	if (o->raw_names)
		symbolizer__no_demangle(sy);
	/* inline scopes cost DWARF: only for what shows them */
	if (o->inl && (lines || ro->inlined || (p->nr_stack_samples && wants_stacks(o, ro))))
		symbolizer__want_inline(sy);
	/* source lines are DWARF line tables, often in compressed sections: read only when a
	 * column shows them */
	if (!lines)
		symbolizer__skip_lines(sy);
	if (!lines && !ro->call_lines)
		symbolizer__skip_call_files(sy);
}

/* call graphs under the rows: 0, or -errno after saying why */
static int attach_graphs(struct hist *h, struct graph_ctx *g, struct symbolizer *sy,
			 const struct report_opts *o)
{
	int err;

	h->children = o->children != 0;
	err = callchain__attach(g->cc, h, sy, h->children);
	if (err)
		return err;
	g->sy = sy;
	g->po = (struct callchain_print_opts){
		.order = o->order >= 0 ? (enum callchain_order)o->order :
			 h->children ? CALLCHAIN_CALLER : CALLCHAIN_CALLEE,
		.children = h->children,
		.style = o->style,
		.percent_limit = o->graph_limit >= 0 ? o->graph_limit :
				 o->percent_limit >= 0 ? o->percent_limit : 0.5,
		.indent = 12,
		.wakers = o->wakers,
	};
	h->show_nr = o->show_nr;
	if (!o->graph)		/* -g none: the Children column without the graphs */
		return 0;
	h->print_row_extra = print_graph;
	h->print_json_extra = print_stacks_json;
	h->extra_ctx = g;
	return 0;
}

/* perf report --header's: what was recorded, how, and what the file holds, as comment lines */
static void print_header(const struct profile *p, const char *input, FILE *out)
{
	const struct profile_meta *m = &p->meta;
	time_t t = m->start_realtime_ns / 1000000000ull;
	char when[64] = "?", esc[4 * sizeof(m->target)], esc2[4 * sizeof(m->period_mode)];
	struct tm tm;

	if (m->start_realtime_ns && localtime_r(&t, &tm))
		strftime(when, sizeof(when), "%a %b %e %H:%M:%S %Y", &tm);
	fprintf(out, "# ========\n");
	fprintf(out, "# profile         : %s\n", str__escape(input, esc, sizeof(esc)));
	fprintf(out, "# captured on     : %s\n", when);
	fprintf(out, "# hostname        : %s\n", str__escape(m->host, esc, sizeof(esc)));
	fprintf(out, "# os release      : %s\n", str__escape(m->kernel, esc, sizeof(esc)));
	fprintf(out, "# hsbpf version   : %s\n", str__escape(m->version, esc, sizeof(esc)));
	fprintf(out, "# nrcpus          : %u\n", m->nr_cpus);
	fprintf(out, "# target          : %s\n", str__escape(m->target, esc, sizeof(esc)));
	fprintf(out, "# duration        : %.3f s\n", m->duration_ns / 1e9);
	fprintf(out, "# event           : %s (type %u, config %#" PRIx64 ", precise %u)\n",
		str__escape(m->event, esc, sizeof(esc)), m->event_type, m->event_config, m->precise);
	fprintf(out, "# sampling        : ");
	if (m->freq)
		fprintf(out, "%" PRIu64 " Hz, ", m->freq);
	fprintf(out, "period %" PRIu64 " %s, period mode %s\n", m->period,
		str__escape(m->unit, esc, sizeof(esc)),
		str__escape(m->period_mode, esc2, sizeof(esc2)));
	fprintf(out, "# call graph      : %s", m->call_graph[0] ?
		str__escape(m->call_graph, esc, sizeof(esc)) : "none");
	if (m->call_graph[0])
		fprintf(out, ", up to %u user frames", m->max_frames);
	fprintf(out, "\n# sample keys     : pid%s%s\n", m->sample_keys[0] ? "," : "",
		str__escape(m->sample_keys, esc, sizeof(esc)));
	fprintf(out, "# samples         : %" PRIu64 " (%" PRIu64 " with stacks), %" PRIu64
		" dropped, %" PRIu64 " outside the target\n", profile__total_samples(p),
		(u64)p->stats.stack_samples, p->stats.dropped_full, p->stats.filtered);
	fprintf(out, "# process history : %zu mappings, %zu comms, %zu forks, %zu kernel symbols, "
		"%zu cgroups\n", p->nr_mappings, p->nr_comms, p->nr_forks, p->nr_ksyms, p->nr_cgroups);
	fprintf(out, "# ========\n#\n");
}

/* --header-only: the exit status */
static int print_header_only(const struct report_opts *o)
{
	struct profile *p = NULL;
	struct output out;
	int err;

	if (output__open(&out, o->output, o->input))
		return 1;
	err = profile__read(o->input, &p);
	if (!err)
		print_header(p, o->input, out.f);
	profile__free(p);
	return output__close(&out, err) ? 1 : 0;
}

/* the rows (or folded stacks) of the samples: the exit status */
static int print_rows(const struct report_opts *o, const struct report_output *ro)
{
	enum sort_key keys[HIST_MAX_KEYS];
	struct symbolizer *sy = NULL;
	struct profile *p = NULL;
	struct hist *h = NULL;
	struct graph_ctx g = {};
	struct report_view v;
	struct output out;
	u64 limit = o->limit, filtered = 0;
	int nr_keys, err;

	enum memory_view mview = MEMORY_ALLOC_SPACE;

	if (hist__parse_sort(o->sort, keys, &nr_keys))
		return 2;
	if (o->sample_type && memory__parse_view(o->sample_type, &mview))
		return 2;
	if (o->per_cgroup && hist__prepend_key(keys, &nr_keys, SORT_CGROUP))
		return fail(2, "--per-cgroup: at most %d sort keys", HIST_MAX_KEYS);
	if (!o->limit_set)
		limit = o->fmt == OUT_TEXT ? 50 : 0;
	if (output__open(&out, o->output, o->input))
		return 1;

	err = profile__read(o->input, &p);
	if (err)
		goto cleanup;
	/* off-CPU time: rows, call graphs and folded stacks weigh microseconds */
	if (offcpu__in_profile(p)) {
		err = offcpu__count_time(p);
		if (err)
			goto cleanup;
	}
	/* sampled allocations: one view's bytes or objects */
	if (memory__in_profile(p)) {
		memory__select(p, mview);
	} else if (o->sample_type) {
		err = fail(-EINVAL, "'%s' has no sampled allocations (record --memory)", o->input);
		goto cleanup;
	}
	if (o->header)
		print_header(p, o->input, out.f);
	if ((ro->needs_stacks || o->graph == 1) && !p->nr_stack_samples) {
		/* a memory profile always has stacks: a view without any is empty (nothing in
		 * use at the end is a leak-free program's answer), not an error */
		if (!memory__in_profile(p)) {
			err = fail(-EINVAL, "'%s' has no call stacks (record with -g)", o->input);
			goto cleanup;
		}
		fprintf(stderr, "hsbpf: '%s': no sampled allocations in this view\n", o->input);
	}
	sy = symbolizer__new(p);
	h = hist__new(keys, nr_keys);
	if (!sy || !h) {
		err = -ENOMEM;
		error("cannot report: %s", strerror(ENOMEM));
		goto cleanup;
	}
	err = check_keys(p, o->input, keys, nr_keys);
	if (err)
		goto cleanup;
	set_symbolizer(sy, o, ro, p, keys, nr_keys);
	err = sample_filter__apply(&o->sf, p, sy, &filtered);
	if (err)
		goto cleanup;
	if (filtered)
		debug("the filters left out %" PRIu64 " samples", filtered);
	/* built even when the filters (or an empty memory view) left no stacks: an empty view */
	if ((p->nr_stack_samples || memory__in_profile(p) || filtered) && wants_stacks(o, ro)) {
		g.cc = callchain__new(p, sy);
		if (!g.cc) {
			err = fail(-ENOMEM, "cannot report: %s", strerror(ENOMEM));
			goto cleanup;
		}
	}
	v = (struct report_view){ .p = p, .sy = sy, .cc = g.cc, .h = h, .input = o->input,
				  .fmt = o->fmt, .limit = limit };
	if (!ro->rows) {	/* the stacks alone */
		err = ro->write(&v, out.f);
		goto cleanup;
	}
	err = hist__add_profile(h, p, sy);
	if (!err && g.cc)
		err = attach_graphs(h, &g, sy, o);
	if (err)
		goto cleanup;
	if (o->percent_limit > 0)
		h->percent_limit = o->percent_limit;
	err = set_scale(h, p, o->truth_path);
	if (!err && nr_keys == 1 && keys[0] == SORT_BB)
		err = hist__add_lbr(h, p, sy);
	if (err)
		goto cleanup;
	hist__sort(h);
	err = ro->write(&v, out.f);	/* write errors: said by output__close, or main (stdout) */
cleanup:
	callchain__free(g.cc);
	hist__free(h);
	symbolizer__free(sy);
	profile__free(p);
	return output__close(&out, err) ? 1 : 0;
}

int report__run(const struct report_opts *o)
{
	const struct report_output *ro = report_output(o->fmt);
	int status;

	/* a binary file on a terminal shows nothing useful and can upset it (as gzip and perf
	 * refuse): to a file or a pipe only */
	if (ro->binary && !o->output && isatty(STDOUT_FILENO))
		return fail(2, "%s output is binary: write it with -o FILE or redirect it",
			    output_format__name(o->fmt));
	/* the profile is checked where the output is opened; the truth file is read too */
	if (outfile__check_input(o->output, o->truth_path))
		return 1;
	if (debuginfod__setup(o->debuginfod))
		return fail(1, "cannot report: %s", strerror(ENOMEM));
	if (o->header_only)
		status = print_header_only(o);
	else if (ro->whole)
		status = export_profile(o->input, ro, o->output, &o->sf, o->raw_names, o->inl, o->sample_type);
	else if (!strcmp(o->sort, "edge") || !strcmp(o->sort, "range"))
		status = print_branches(o, ro);
	else
		status = print_rows(o, ro);
	debuginfod__end();
	return status;
}
