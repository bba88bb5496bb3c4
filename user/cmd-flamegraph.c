// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* hsbpf flamegraph: a profile (or two, --diff) drawn as an interactive HTML page or an SVG. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cmds.h"
#include "flamegraph.h"
#include "output.h"
#include "profile.h"
#include "profile_diff.h"
#include "symbolizer.h"

static const char usage_text[] =
	"usage: hsbpf flamegraph [-i FILE] [-o OUT.html|OUT.svg] [--inverted] [--title T]\n"
	"       hsbpf flamegraph --diff BASE NEW [-o OUT] [--compare rates|shares] [--work B,N]\n"
	"                        [--force]\n"
	"\n"
	"  -i, --input FILE     profile to draw (default hsbpf.data); with stacks, one frame per\n"
	"                       function from the process down to the sampled one; without,\n"
	"                       one-frame stacks grouped by object\n"
	"  -o, --output OUT     where to write (default flamegraph.html); .svg: a static SVG,\n"
	"                       anything else: one self-contained interactive HTML page (hover,\n"
	"                       click to zoom, search, colour by kind or object); -: HTML on stdout\n"
	"      --inverted       an icicle graph: the root on top, callees below\n"
	"      --diff BASE NEW  a differential graph: widths are NEW's, a frame is red (grew) or\n"
	"                       blue (shrank) only when its change is significant, by the test\n"
	"                       and correction of hsbpf diff, grey otherwise\n"
	"      --compare WHAT   rates (default: samples per second, or per unit of --work) or\n"
	"                       shares (of all samples), as hsbpf diff\n"
	"      --work B,N       the work BASE and NEW did: rates per unit of work\n"
	"      --force          compare profiles of different events or units anyway\n"
	"      --title T        the page's title\n"
	"  -v, --verbose        more messages\n"
	"\n"
	"Frames narrower than 0.1 px of a 1200 px graph are merged into \"[N merged]\" frames.\n";

static int load(const char *path, struct flame_tree *t, int side, struct profile **out)
{
	struct symbolizer *sy;
	int err = profile__read(path, out);

	if (err)
		return err;
	if (!profile__total_samples(*out) && !(*out)->nr_stack_samples)
		return fail(-EINVAL, "'%s' has no samples", path);
	sy = symbolizer__new(*out);
	if (!sy)
		return fail(-ENOMEM, "cannot read '%s': %s", path, strerror(ENOMEM));
	/* functions inlined at a frame are frames of their own (coloured as such); no lines */
	symbolizer__want_inline(sy);
	symbolizer__skip_lines(sy);
	symbolizer__skip_call_files(sy);
	err = flame__add_profile(t, *out, sy, side);
	symbolizer__free(sy);
	return err;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcasecmp(s + n - m, suffix);
}

enum { OPT_INVERTED = 0x100, OPT_DIFF, OPT_FORCE, OPT_TITLE, OPT_COMPARE, OPT_WORK };

int cmd_flamegraph(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "output", required_argument, NULL, 'o' },
		{ "inverted", no_argument, NULL, OPT_INVERTED },
		{ "diff", required_argument, NULL, OPT_DIFF },
		{ "force", no_argument, NULL, OPT_FORCE },
		{ "title", required_argument, NULL, OPT_TITLE },
		{ "compare", required_argument, NULL, OPT_COMPARE },
		{ "work", required_argument, NULL, OPT_WORK },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	const char *input = "hsbpf.data", *output = "flamegraph.html", *base = NULL, *new = NULL;
	const char *title = NULL;
	struct profile *p[2] = {};
	struct flame_tree *t = NULL;
	struct flame_opts fo = {};
	struct diff_basis basis;
	struct output out;
	enum diff_compare compare = DIFF_RATES;
	double work[2];
	bool force = false, has_work = false;
	char subtitle[2 * PATH_MAX + 1200];	/* two paths, or a path, an event and a target */
	int c, err;

	optind = 1;
	while ((c = getopt_long(argc, argv, "i:o:vh", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			input = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case OPT_INVERTED:
			fo.inverted = true;
			break;
		case OPT_DIFF:
			base = optarg;
			break;
		case OPT_FORCE:
			force = true;
			break;
		case OPT_TITLE:
			title = optarg;
			break;
		case OPT_COMPARE:
			if (profile_diff__parse_compare(optarg, &compare))
				return fail(2, "invalid --compare '%s' (rates or shares)", optarg);
			break;
		case OPT_WORK:
			if (profile_diff__parse_work(optarg, work))
				return fail(2, "invalid --work '%s' (two positive numbers: BASE,NEW)", optarg);
			has_work = true;
			break;
		case 'v':
			verbose++;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			return usage_hint("hsbpf flamegraph");
		}
	}
	if (has_work && compare == DIFF_SHARES)
		return fail(2, "--work compares rates: not with --compare shares");
	if (base) {
		if (optind >= argc) {
			error("--diff needs two profiles: --diff BASE NEW");
			return usage_hint("hsbpf flamegraph");
		}
		new = argv[optind++];
	}
	if (optind < argc) {
		error("unexpected argument '%s'", argv[optind]);
		return usage_hint("hsbpf flamegraph");
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
		err = load(base, t, 0, &p[0]);
		if (!err)
			err = load(new, t, 1, &p[1]);
		if (!err)
			err = profile_diff__check(p[0], base, p[1], new, force);
		if (!err)
			err = profile_diff__basis(&basis, compare, p[0], base, p[1], new,
						  has_work ? work : NULL);
		if (!err && (err = flame__diff(t, &basis)))
			error("cannot compare: %s", strerror(-err));
		snprintf(subtitle, sizeof(subtitle), "%s (base) vs %s (new), %s", base, new, p[1] ?
			 p[1]->meta.event : "");
	} else {
		err = load(input, t, 0, &p[0]);
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
