// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* hsbpf experiment: the seed papers' sweep, run here: periods x modes x workloads, scored. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cmds.h"
#include "experiment.h"
#include "methods.h"
#include "lib/options.h"
#include "lib/period.h"
#include "stack_exp.h"

static const struct options_cmd experiment_cmd = {
	.name = "hsbpf experiment",
	.usage =
	"usage: hsbpf experiment [-o DIR] [--set kernels|real|all] [--periods NS,...]\n"
	"                        [--modes fixed,prime,random,prime-random] [--reuse-truth]\n"
	"       hsbpf experiment --methods [--method LIST] [--separate-runs] [...]\n"
	"       hsbpf experiment --stacks [-o DIR] [--set kernels|real|all] [--only NAME] [--quick]\n",
};

static int set(const struct option_spec *opt, const char *arg)
{
	struct exp_opts *o = opt->value;

	if (strcmp(arg, "kernels") && strcmp(arg, "real") && strcmp(arg, "all"))
		return fail(-EINVAL, "unknown --set '%s' (known: kernels, real, all)", arg);
	o->set = arg;
	return 0;
}

/* --periods and --modes replace the default lists; what was given is the caller's to know */
static bool periods_given, modes_given;

static int periods(const struct option_spec *opt, const char *arg)
{
	struct exp_opts *o = opt->value;
	char *tok, *save, *list = (char *)arg;

	periods_given = true;
	o->nr_periods = 0;
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		u64 v;

		if (parse_u64(tok, &v) || v < 10000 || v > PERIOD_MAX || o->nr_periods == 16)
			return fail(-EINVAL, "invalid period '%s' (ns, 10000 to %llu)", tok, PERIOD_MAX);
		o->periods[o->nr_periods++] = v;
	}
	return 0;
}

static int modes(const struct option_spec *opt, const char *arg)
{
	struct exp_opts *o = opt->value;
	char *tok, *save, *list = (char *)arg;

	modes_given = true;
	o->nr_modes = 0;
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		enum period_mode m;

		if (period__parse_mode(tok, &m) || o->nr_modes == 4)
			return fail(-EINVAL, "invalid period mode '%s'", tok);
		o->modes[o->nr_modes++] = period__mode_name(m);
	}
	return 0;
}

static int stacks(const struct option_spec *opt, const char *arg)
{
	struct exp_opts *o = opt->value;

	(void)arg;
	o->stacks = o->python = true;
	return 0;
}

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
	struct exp_opts o = {
		.dir = "experiment", .set = "kernels",
		.periods = { 29789, 119156, 476625, 1906501, 7626007 }, .nr_periods = 5,
		.modes = { "fixed", "prime", "random", "prime-random" }, .nr_modes = 4,
	};
	char self[PATH_MAX], wdir[PATH_MAX + 32], fdir[PATH_MAX + 32], csv[PATH_MAX + 32];
	struct exp_row *rows = NULL;
	const char *method_list = NULL;
	bool selected[METHODS_MAX];
	size_t nr = 0;
	ssize_t n;
	int err;

	const struct option_spec opts[] = {
		OPT_STRING('o', "output", &o.dir, "DIR", "results.csv, figures (PNG, SVG) and truths "
			   "(default experiment/)"),
		OPT_CALLBACK(0, "set", &o, "SET", "the seed kernels, the real programs, or all "
			     "(default kernels)", set),
		OPT_CALLBACK(0, "periods", &o, "LIST", "cpu-clock periods in ns (default: 64K, 256K, "
			     "1M, 4M, 16M cycles at 2.2 GHz: 29789,119156,476625,1906501,7626007)",
			     periods),
		OPT_CALLBACK(0, "modes", &o, "LIST", "period modes (default "
			     "fixed,prime,random,prime-random)", modes),
		OPT_FLAG(0, "reuse-truth", &o.reuse_truth, "keep the truth files of an earlier run in DIR"),
		OPT_STRING(0, "only", &o.only, "NAME", "just this workload of the set"),
		OPT_FLAG(0, "quick", &o.quick, "kernels do 1/16 of their work (for tests)"),
		OPT_FLAG(0, "with-perf", &o.with_perf, "also run perf record at each period and score "
			 "it the same way"),
		OPT_FLAG(0, "methods", &o.methods, "the paper's sampling methods on the virtual PMU and "
			 "its timing model (docs/virtual-pmu.md): classic, classic-insns, precise-prime, "
			 "precise-random, precise-lbrfix, pdir, lbr; methods.csv, methods-ae.png all "
			 "sampled from one emulation per workload"),
		OPT_STRING(0, "method", &method_list, "LIST", "with --methods: only these"),
		OPT_FLAG(0, "separate-runs", &o.separate_runs, "with --methods: one emulation per method "
			 "(the same rows, slower)"),
		OPT_CALLBACK(0, "stacks", &o, NULL, "the call-stack collectors (docs/accuracy.md): per "
			     "workload (the real set adds python3), the calling-context tree and the "
			     "virtual PMU's exact stacks from one emulation, then hsbpf record "
			     "--call-graph fp and dwarf, perf record -g and --call-graph dwarf (through "
			     "hsbpf import), each scored as eval --stacks does: stacks.csv, a table, "
			     "stacks-complete.png, stacks-callertv.png, stacks-incl.png", stacks),
		OPT_END(),
	};
	int nr_args;

	periods_given = modes_given = false;
	nr_args = options__parse(&experiment_cmd, opts, argc, argv);
	if (nr_args < 0)
		return options__status(nr_args);
	if (nr_args || !o.nr_periods || !o.nr_modes) {
		options__usage(&experiment_cmd, opts, stderr);
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
