// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* hsbpf experiment: the seed papers' sweep, run here: periods x modes x workloads, scored. */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cmds.h"
#include "experiment.h"
#include "methods.h"
#include "period.h"
#include "stack_exp.h"

static const char usage_text[] =
	"usage: hsbpf experiment [-o DIR] [--set kernels|real|all] [--periods NS,...]\n"
	"                        [--modes fixed,prime,random,prime-random] [--reuse-truth]\n"
	"       hsbpf experiment --methods [--method LIST] [--separate-runs] [...]\n"
	"       hsbpf experiment --stacks [-o DIR] [--set kernels|real|all] [--only NAME] [--quick]\n"
	"\n"
	"  -o, --output DIR   results.csv, figures (PNG, SVG) and truths (default experiment/)\n"
	"      --set SET      the seed kernels, the real programs, or all (default kernels)\n"
	"      --periods LIST cpu-clock periods in ns (default: 64K, 256K, 1M, 4M, 16M cycles at\n"
	"                     2.2 GHz: 29789,119156,476625,1906501,7626007)\n"
	"      --modes LIST   period modes (default fixed,prime,random,prime-random)\n"
	"      --reuse-truth  keep the truth files of an earlier run in DIR\n"
	"      --only NAME    just this workload of the set\n"
	"      --quick        kernels do 1/16 of their work (for tests)\n"
	"      --with-perf    also run perf record at each period and score it the same way\n"
	"      --methods      the paper's sampling methods on the virtual PMU and its timing model\n"
	"                     (docs/virtual-pmu.md): classic, classic-insns, precise-prime,\n"
	"                     precise-random, precise-lbrfix, pdir, lbr; methods.csv, methods-ae.png\n"
	"                     all sampled from one emulation per workload\n"
	"      --method LIST  with --methods: only these\n"
	"      --separate-runs  with --methods: one emulation per method (the same rows, slower)\n"
	"      --stacks       the call-stack collectors (docs/accuracy.md): per workload (the real\n"
	"                     set adds python3), the calling-context tree and the virtual PMU's\n"
	"                     exact stacks from one emulation, then hsbpf record --call-graph fp\n"
	"                     and dwarf, perf record -g and --call-graph dwarf (through hsbpf\n"
	"                     import), each scored as eval --stacks does: stacks.csv, a table,\n"
	"                     stacks-complete.png, stacks-callertv.png, stacks-incl.png\n";

static int run_stacks(const struct exp_opts *o)
{
	struct stack_row *rows = NULL;
	char csv[PATH_MAX + 32];
	size_t nr = 0;
	int err;

	err = stack_exp__run(o, &rows, &nr);
	if (!err) {
		snprintf(csv, sizeof(csv), "%s/stacks.csv", o->dir);
		err = stack_exp__write_csv(rows, nr, csv);
	}
	if (!err) {
		size_t failed = 0;

		stack_exp__plot(o->dir, rows, nr);
		stack_exp__print(stdout, rows, nr);
		for (size_t i = 0; i < nr; i++)
			failed += !strcmp(rows[i].status, "failed");
		fprintf(stderr, "hsbpf: %zu collections scored; wrote '%s' and figures in '%s'\n",
			nr - failed, csv, o->dir);
		/* the rows of the others are written: a failed collection is one row, not the run */
		if (failed)
			err = error("%zu of %zu collections failed (their rows say so)", failed, nr);
	}
	free(rows);
	return err ? 1 : 0;
}

static int run_methods(const struct exp_opts *o, const bool *selected)
{
	struct method_row *rows = NULL;
	char csv[PATH_MAX + 32];
	size_t nr = 0;
	int err;

	err = methods__run(o, selected, &rows, &nr);
	if (!err) {
		snprintf(csv, sizeof(csv), "%s/methods.csv", o->dir);
		err = methods__write_csv(rows, nr, csv);
	}
	if (!err) {
		methods__plot(o->dir, rows, nr, selected);
		methods__print(stdout, rows, nr, selected);
		fprintf(stderr, "hsbpf: %zu runs scored; wrote '%s' and figures in '%s'\n", nr, csv, o->dir);
	}
	free(rows);
	return err ? 1 : 0;
}

int cmd_experiment(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "set", required_argument, NULL, 's' },
		{ "periods", required_argument, NULL, 'p' },
		{ "modes", required_argument, NULL, 'm' },
		{ "reuse-truth", no_argument, NULL, 'r' },
		{ "only", required_argument, NULL, 'O' },
		{ "quick", no_argument, NULL, 'Q' },
		{ "with-perf", no_argument, NULL, 'P' },
		{ "methods", no_argument, NULL, 'T' },
		{ "method", required_argument, NULL, 'W' },
		{ "separate-runs", no_argument, NULL, 'S' },
		{ "stacks", no_argument, NULL, 'K' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	struct exp_opts o = {
		.dir = "experiment", .set = "kernels",
		.periods = { 29789, 119156, 476625, 1906501, 7626007 }, .nr_periods = 5,
		.modes = { "fixed", "prime", "random", "prime-random" }, .nr_modes = 4,
	};
	char self[PATH_MAX], wdir[PATH_MAX + 32], fdir[PATH_MAX + 32], csv[PATH_MAX + 32], *tok, *save;
	struct exp_row *rows = NULL;
	const char *method_list = NULL;
	bool selected[METHODS_MAX];
	bool periods_given = false, modes_given = false;
	size_t nr = 0;
	ssize_t n;
	int c, err;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o.dir = optarg;
			break;
		case 's':
			if (strcmp(optarg, "kernels") && strcmp(optarg, "real") && strcmp(optarg, "all"))
				return fail(2, "unknown --set '%s' (known: kernels, real, all)", optarg);
			o.set = optarg;
			break;
		case 'p':
			periods_given = true;
			o.nr_periods = 0;
			for (tok = strtok_r(optarg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
				u64 v;

				if (parse_u64(tok, &v) || v < 10000 || v > PERIOD_MAX || o.nr_periods == 16)
					return fail(2, "invalid period '%s' (ns, 10000 to %llu)", tok, PERIOD_MAX);
				o.periods[o.nr_periods++] = v;
			}
			break;
		case 'm':
			modes_given = true;
			o.nr_modes = 0;
			for (tok = strtok_r(optarg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
				enum period_mode m;

				if (period__parse_mode(tok, &m) || o.nr_modes == 4)
					return fail(2, "invalid period mode '%s'", tok);
				o.modes[o.nr_modes++] = period__mode_name(m);
			}
			break;
		case 'r':
			o.reuse_truth = true;
			break;
		case 'O':
			o.only = optarg;
			break;
		case 'Q':
			o.quick = true;
			break;
		case 'P':
			o.with_perf = true;
			break;
		case 'T':
			o.methods = true;
			break;
		case 'W':
			method_list = optarg;
			break;
		case 'S':
			o.separate_runs = true;
			break;
		case 'K':
			o.stacks = o.python = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:	/* getopt said what is wrong */
			return usage_hint("hsbpf experiment");
		}
	}
	if (optind < argc || !o.nr_periods || !o.nr_modes) {
		fputs(usage_text, stderr);
		return 2;
	}
	/* usage errors before anything is created */
	if (method_list && !o.methods)
		return fail(2, "--method goes with --methods");
	if (o.separate_runs && !o.methods)
		return fail(2, "--separate-runs goes with --methods");
	if (o.stacks && (o.methods || o.with_perf || periods_given || modes_given))
		return fail(2, "--stacks goes alone with -o, --set, --only, --quick and --reuse-truth");
	if (o.methods && methods__select(method_list, selected))
		return 2;
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return fail(1, "cannot find the hsbpf binary: %s", strerror(errno));
	self[n] = 0;
	o.self = self;
	*strrchr(self, '/') = 0;
	snprintf(wdir, sizeof(wdir), "%s/.output/workloads", self);
	snprintf(fdir, sizeof(fdir), "%s/.output/fixtures", self);
	if (access(wdir, F_OK)) {	/* hsbpf inside an output folder */
		snprintf(wdir, sizeof(wdir), "%s/workloads", self);
		snprintf(fdir, sizeof(fdir), "%s/fixtures", self);
	}
	self[strlen(self)] = '/';
	o.workload_dir = wdir;
	o.fixture_dir = fdir;
	if (mkdir(o.dir, 0755) && errno != EEXIST)
		return fail(1, "cannot create '%s': %s", o.dir, strerror(errno));
	if (o.methods)
		return run_methods(&o, selected);
	if (o.stacks)
		return run_stacks(&o);
	err = experiment__run(&o, &rows, &nr);
	if (err)
		goto out;
	snprintf(csv, sizeof(csv), "%s/results.csv", o.dir);
	err = experiment__write_csv(rows, nr, csv);
	if (!err)
		experiment__plot(&o, rows, nr);
	if (!err)
		fprintf(stderr, "hsbpf: %zu recordings scored; wrote '%s' and figures in '%s'\n", nr, csv,
			o.dir);
out:
	free(rows);
	return err ? 1 : 0;
}
