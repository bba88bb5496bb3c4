// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* hsbpf flamegraph: a profile (or two, --diff) drawn as an interactive HTML page or an SVG. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cmds.h"
#include "lib/file_format.h"
#include "report/flamegraph.h"
#include "lib/output.h"
#include "record/offcpu.h"
#include "option_groups.h"
#include "profile/profile.h"
#include "record/memory.h"
#include "report/profile_diff.h"
#include "symbols/symbolizer.h"
#include "report/sample_filter.h"

static const struct options_cmd flamegraph_cmd = {
	.name = "hsbpf flamegraph",
	.usage =
	"usage: hsbpf flamegraph [-i FILE] [-o OUT.html|OUT.svg] [--inverted] [--title T]\n"
	"       hsbpf flamegraph --diff BASE NEW [-o OUT] [--compare rates|shares] [--work B,N]\n"
	"                        [--force]\n"
	"       (either with report's filters: --comm, --pid, --tid, --dso, --symbols, --cpu,\n"
	"        --time; a diff's apply to both profiles)\n",
	.outro = "Frames narrower than 0.1 px of a 1200 px graph are merged into \"[N merged]\" frames.\n",
};

static int load(const char *path, const struct sample_filter *sf, struct flame_tree *t, int side,
		struct profile **out)
{
	struct symbolizer *sy;
	int err = profile__read(path, out);

	if (err)
		return err;
	if (!profile__total_samples(*out) && !(*out)->nr_stack_samples)
		return fail(-EINVAL, "'%s' has no samples", path);
	/* off-CPU time: widths are time, as report's rows (microseconds), not blocks */
	if (offcpu__in_profile(*out)) {
		err = offcpu__count_time(*out);
		if (err)
			return err;
		t->time = true;
	}
	sy = symbolizer__new(*out);
	if (!sy)
		return fail(-ENOMEM, "cannot read '%s': %s", path, strerror(ENOMEM));
	/* functions inlined at a frame are frames of their own (coloured as such); no lines */
	symbolizer__want_inline(sy);
	symbolizer__skip_lines(sy);
	symbolizer__skip_call_files(sy);
	err = sample_filter__keep(sf, *out, sy, path);
	if (!err)
		err = flame__add_profile(t, *out, sy, side);
	symbolizer__free(sy);
	return err;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcasecmp(s + n - m, suffix);
}

int cmd_flamegraph(int argc, char **argv)
{
	const char *input = "hsbpf.data", *output = "flamegraph.html", *base = NULL, *new = NULL;
	const char *title = NULL;
	struct flame_opts fo = {};
	struct output out;
	struct diff_args d = { .compare = DIFF_RATES };
	struct sample_filter sf = {};
	const struct option_spec opts[] = {
		OPT_STRING('i', "input", &input, "FILE", "profile to draw (default hsbpf.data); with "
			   "stacks, one frame per function from the process down to the sampled one; "
			   "without, one-frame stacks grouped by object"),
		OPT_STRING('o', "output", &output, "OUT", "where to write (default flamegraph.html); "
			   ".svg: a static SVG, anything else: one self-contained interactive HTML page "
			   "(hover, click to zoom, search, colour by kind or object); -: HTML on stdout"),
		OPT_FLAG(0, "inverted", &fo.inverted, "an icicle graph: the root on top, callees below"),
		OPT_STRING(0, "diff", &base, "BASE NEW", "a differential graph: widths are NEW's, a "
			   "frame is red (grew) or blue (shrank) only when its change is significant, by "
			   "the test and correction of hsbpf diff, grey otherwise"),
		OPTIONS_DIFF(&d),
		OPT_STRING(0, "title", &title, "T", "the page's title"),
		OPT_VERBOSE("more messages"),
		OPTIONS_FILTERS(&sf),
		OPT_END(),
	};
	struct profile *p[2] = {};
	struct flame_tree *t = NULL;
	struct diff_basis basis;
	char subtitle[2 * PATH_MAX + 1200];	/* two paths, or a path, an event and a target */
	int nr, err;

	nr = options__parse(&flamegraph_cmd, opts, argc, argv);
	if (nr < 0)
		return options__status(nr);
	if (option_groups__check_diff(&d))
		return 2;
	if (base) {
		if (!nr) {
			error("--diff needs two profiles: --diff BASE NEW");
			return usage_hint(flamegraph_cmd.name);
		}
		new = argv[0];
	}
	if (nr > !!base) {
		error("unexpected argument '%s'", argv[!!base]);
		return usage_hint(flamegraph_cmd.name);
	}
	/* never onto a profile it reads (by inode: another name or a link too) */
	if (outfile__check_input(output, base ? base : input) ||
	    (base && outfile__check_input(output, new)))
		return 1;
	t = flame__new(base != NULL);
	if (!t) {
		err = fail(-ENOMEM, "cannot draw: %s", strerror(ENOMEM));
		goto cleanup;
	}
	if (base) {
		err = load(base, &sf, t, 0, &p[0]);
		if (!err)
			err = load(new, &sf, t, 1, &p[1]);
		/* a memory profile's slots are estimates (each sampled allocation stands for what
		 * it was sampled from): diff compares those, this graph compares sample counts */
		if (!err && (memory__in_profile(p[0]) || memory__in_profile(p[1])))
			err = fail(-EINVAL, "a differential flame graph of memory profiles is not drawn: "
				   "'hsbpf diff %s %s --sample-type TYPE' compares their estimates "
				   "(docs/memory.md)", base, new);
		if (!err)
			err = profile_diff__check(p[0], base, p[1], new, d.force);
		if (!err)
			err = profile_diff__basis(&basis, d.compare, p[0], base, p[1], new,
						  d.has_work ? d.work : NULL);
		if (!err && (err = flame__diff(t, &basis)))
			error("cannot compare: %s", strerror(-err));
		snprintf(subtitle, sizeof(subtitle), "%s (base) vs %s (new), %s", base, new, p[1] ?
			 p[1]->meta.event : "");
	} else {
		err = load(input, &sf, t, 0, &p[0]);
		snprintf(subtitle, sizeof(subtitle), "%s, %s, %s", input, p[0] ? p[0]->meta.event : "",
			 p[0] ? p[0]->meta.target : "");
	}
	if (err)
		goto cleanup;
	err = flame__merge_narrow(t, FLAME_MIN_PX / FLAME_WIDTH_PX);
	if (err) {
		error("cannot draw: %s", strerror(-err));
		goto cleanup;
	}
	fo.title = title ? title : base ? "Differential flame graph" : fo.inverted ? "Icicle graph" :
		   "Flame graph";
	fo.subtitle = subtitle;
	/* through the sink (output.h): the page appears whole or not at all, a link at the name
	 * is replaced rather than followed; "-": standard output, a page */
	err = output__open(&out, strcmp(output, "-") ? output : NULL, NULL);
	if (err)
		goto cleanup;
	err = ends_with(output, ".svg") ? flame__write_svg(t, &fo, out.f) :
	      flame__write_html(t, &fo, out.f);
	err = output__close(&out, err);	/* a failed write said there, or by main (stdout) */
	if (!err && strcmp(output, "-"))
		fprintf(stderr, "hsbpf: wrote %s: %zu frames, %llu narrow frames merged\n", output, t->nr,
			(unsigned long long)t->merged_frames);
cleanup:
	flame__free(t);
	profile__free(p[0]);
	profile__free(p[1]);
	return err ? 1 : 0;
}
