// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* hsbpf experiment --stacks: which stack collector is right, how often, and where it fails.
 * Every collection is what a user would run (hsbpf record, perf record, hsbpf import as
 * children); the scores are eval --stacks' (stack_eval.c), computed here. */
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "lib/output.h"
#include "refrun.h"
#include "stack_eval.h"
#include "stack_exp.h"

const char *const stack_collector_names[SC_NR] = {
	[SC_VPMU] = "vpmu-exact", [SC_HSBPF_FP] = "hsbpf-fp", [SC_HSBPF_DWARF] = "hsbpf-dwarf",
	[SC_PERF_FP] = "perf-fp", [SC_PERF_DWARF] = "perf-dwarf",
};

/* a few thousand samples per run: cpu-clock every 250 us natively (100 us with --quick, whose
 * kernels run 1/16 as long), and the virtual PMU every ~1M instructions (100K), prime and
 * randomized so that no loop's period locks onto it */
#define NATIVE_PERIOD_NS 250000
#define QUICK_PERIOD_NS 100000
#define VPMU_PERIOD 1000003
#define QUICK_VPMU_PERIOD 100003
#define VPMU_PRIME_RANDOM 3
#define MAX_ARGS (20 + EXP_MAX_ARGS)

static double seconds_since(u64 t0)
{
	return (now_ns(CLOCK_MONOTONIC) - t0) / 1e9;
}

/* append the workload's command to argv, after its fixed part (up to the first NULL) */
static void add_command(char **argv, size_t size, const struct workload *w)
{
	size_t a = 0;

	while (argv[a])
		a++;
	for (int i = 0; i < EXP_MAX_ARGS && w->argv[i] && a + 1 < size; i++)
		argv[a++] = w->argv[i];
}

/* does any stack sample carry a user frame? (perf's --call-graph dwarf records carry stack
 * copies, and an import that does not unwind them leaves the user stacks empty) */
static bool has_user_frames(const struct profile *p)
{
	for (size_t i = 0; i < p->nr_stack_samples; i++) {
		const struct profile_stack *st = profile__stack(p, p->stack_samples[i].user);

		if (st && st->nr && st->end != PROFILE_STACK_LOST)
			return true;
	}
	return false;
}

/* score a profile against the truth into r (status "ok", else why not); p is kept */
static void score(const struct profile *p, const struct truth *t, struct stack_row *r)
{
	struct stack_eval se;

	if (r->collector == SC_PERF_DWARF && !has_user_frames(p)) {
		r->status = "not unwound";
		for (size_t i = 0; i < p->nr_samples; i++)
			r->samples += p->samples[i].count;
		return;
	}
	if (stack_eval__profile(p, t, NULL, STACK_EXP_TOP, 0, &se)) {
		r->status = "failed";
		return;
	}
	r->status = "ok";
	r->samples = se.score.samples;
	r->with_stack = se.score.with_stack;
	r->complete = se.score.complete_share;
	/* the top functions that hold STACK_EXP_MIN_SHARE of the time: below it a function
	 * (the loader's, in a kernel) is sampled a few times or never, and its caller split
	 * (1 when never sampled) says how many samples there were, not how right the stacks are */
	for (size_t k = 0; k < se.score.nr_top; k++) {
		const struct se_func *fn = &se.score.top[k];
		double e = fabs(fn->sampled - fn->exact);

		if (fn->exact < STACK_EXP_MIN_SHARE)
			continue;
		r->incl_mae += e;
		r->incl_max = e > r->incl_max ? e : r->incl_max;
		r->caller_tv += fn->caller_tv;
		r->top++;
	}
	if (r->top) {
		r->incl_mae /= r->top;
		r->caller_tv /= r->top;
	}
	stack_eval__release(&se);
}

/* the truth with its calling-context tree, and the virtual PMU's exact stacks, from one run
 * under the collector (or an earlier run's files with --reuse-truth) */
static int truth_and_vpmu(const struct exp_opts *o, const struct workload *w, struct truth **t,
			  struct profile **vp)
{
	char *tpath = str__printf("%s/%s-stacks.truth", o->dir, w->name);
	char *ppath = str__printf("%s/%s-vpmu-exact.data", o->dir, w->name);
	struct vpmu_opts v = { .event = "insns", .period = o->quick ? QUICK_VPMU_PERIOD : VPMU_PERIOD,
			       .mode = VPMU_PRIME_RANDOM, .stacks = true };
	int saved, null, err;

	*t = NULL;
	*vp = NULL;
	if (!tpath || !ppath) {
		err = -ENOMEM;
		goto out;
	}
	if (o->reuse_truth && !access(tpath, R_OK) && !access(ppath, R_OK) && !truth__read(tpath, t)) {
		err = profile__read(ppath, vp);
		goto out;
	}
	v.out = profile__new();
	if (!v.out) {
		err = -ENOMEM;
		goto out;
	}
	/* the workload's own output is not the experiment's */
	fflush(stdout);
	saved = dup(1);
	null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (saved >= 0 && null >= 0)
		dup2(null, 1);
	err = refrun__collect_vpmu(w->argv, NULL, &v, t);
	if (saved >= 0) {
		dup2(saved, 1);
		close(saved);
	}
	if (null >= 0)
		close(null);
	if (!err && ((*t)->meta.signal || (*t)->meta.exit_code))
		err = fail(-EIO, "workload '%s' %s under the collector", w->name, (*t)->meta.status);
	if (!err)
		err = truth__write(*t, tpath);
	if (!err)
		err = profile__write(v.out, ppath);
	if (!err) {
		*vp = v.out;
		v.out = NULL;
	}
out:
	profile__free(v.out);
	if (err) {
		truth__free(*t);
		*t = NULL;
	}
	free(tpath);
	free(ppath);
	return err;
}

/* one native collection of the workload into the profile at prof: hsbpf record, or perf
 * record then hsbpf import; stderr of each step to log. 0, or the failing step's status */
static int collect(const struct exp_opts *o, const struct workload *w, enum stack_collector c,
		   const char *env, const char *prof, const char *log)
{
	char pstr[32], *perf_data = str__printf("%s/perf.data", o->dir);
	bool dwarf = c == SC_HSBPF_DWARF || c == SC_PERF_DWARF;
	char *argv[MAX_ARGS] = { 0 };
	int err;

	if (!perf_data)
		return -ENOMEM;
	snprintf(pstr, sizeof(pstr), "%d", o->quick ? QUICK_PERIOD_NS : NATIVE_PERIOD_NS);
	if (c == SC_HSBPF_FP || c == SC_HSBPF_DWARF) {
		char *rec[] = { (char *)o->self, "record", "-c", pstr, "--call-graph", dwarf ? "dwarf" : "fp",
				"-o", (char *)prof, "--", NULL };

		memcpy(argv, rec, sizeof(rec));
		add_command(argv, ARRAY_SIZE(argv), w);
		err = experiment__run_cmd(argv, env, "/dev/null", log);
		goto out;
	}
	/* perf 6.1 on this kernel: -B (no build-id pass at the end, which aborts after a
	 * per-task recording) and --no-bpf-event */
	{
		char *rec[] = { "perf", "record", "-q", "-B", "--no-bpf-event", "-e", "cpu-clock", "-c", pstr,
				"--call-graph", dwarf ? "dwarf" : "fp", "-o", perf_data, "--", NULL };
		char *imp[] = { (char *)o->self, "import", perf_data, "-o", (char *)prof, NULL };
		char *ilog = str__printf("%s.import", log);

		memcpy(argv, rec, sizeof(rec));
		add_command(argv, ARRAY_SIZE(argv), w);
		err = experiment__run_cmd(argv, env, "/dev/null", log);
		if (!err)
			err = ilog ? experiment__run_cmd(imp, NULL, "/dev/null", ilog) : -ENOMEM;
		free(ilog);
		unlink(perf_data);	/* large with stack copies; the imported profile stays */
	}
out:
	free(perf_data);
	return err;
}

static void progress(u64 t0, size_t done, size_t total, const struct stack_row *r)
{
	fprintf(stderr, "[%6.1fs] %zu/%zu %-11s %-12s ", seconds_since(t0), done, total, r->workload,
		stack_collector_names[r->collector]);
	if (!strcmp(r->status, "ok"))
		fprintf(stderr, "%6" PRIu64 " samples  complete %5.1f%%  incl err %5.2f (max %5.2f)  "
			"caller TV %.3f\n", r->samples, 100 * r->complete, 100 * r->incl_mae,
			100 * r->incl_max, r->caller_tv);
	else
		fprintf(stderr, "%6" PRIu64 " samples  %s\n", r->samples, r->status);
}

int stack_exp__run(const struct exp_opts *o, struct stack_row **out, size_t *nr_out)
{
	struct workload *w = NULL;
	struct stack_row *rows = NULL;
	size_t nr = 0, total;
	u64 t0 = now_ns(CLOCK_MONOTONIC);
	int nw = 0, err;

	/* python3's dicts and sets the same in every run, the collector's included */
	setenv("PYTHONHASHSEED", "0", 1);
	err = experiment__workloads(o, &w, &nw);
	if (err)
		return err;
	total = (size_t)nw * SC_NR;
	rows = calloc(total + 1, sizeof(*rows));
	if (!rows) {
		err = -ENOMEM;
		goto out;
	}
	for (int i = 0; i < nw; i++) {
		struct truth *t = NULL;
		struct profile *vp = NULL;
		char *env;
		u64 t1 = now_ns(CLOCK_MONOTONIC);

		fprintf(stderr, "[%6.1fs] %s: calling-context tree and exact stacks under the collector...\n",
			seconds_since(t0), w[i].name);
		err = truth_and_vpmu(o, &w[i], &t, &vp);
		if (err)
			goto out;
		env = experiment__tunables_env(t);
		for (int c = 0; c < SC_NR; c++) {
			struct stack_row *r = &rows[nr++];
			char *prof = str__printf("%s/%s-%s.data", o->dir, w[i].name, stack_collector_names[c]);
			char *log = str__printf("%s/%s-%s.log", o->dir, w[i].name, stack_collector_names[c]);
			struct profile *p = NULL;
			int st;

			*r = (struct stack_row){ .workload = w[i].name, .kind = w[i].kind, .collector = c,
						 .status = "failed" };
			if (c == SC_VPMU) {
				r->seconds = seconds_since(t1);
				score(vp, t, r);
			} else if (prof && log) {
				u64 t2 = now_ns(CLOCK_MONOTONIC);

				st = collect(o, &w[i], c, env, prof, log);
				r->seconds = seconds_since(t2);
				if (st)
					error("%s of '%s' failed (status %d): see '%s'", stack_collector_names[c],
					      w[i].name, st, log);
				else if (!profile__read(prof, &p))
					score(p, t, r);
				profile__free(p);
			}
			free(prof);
			free(log);
			progress(t0, nr, total, r);
		}
		free(env);
		profile__free(vp);
		truth__free(t);
	}
	*out = rows;
	*nr_out = nr;
	rows = NULL;
out:
	free(rows);
	experiment__free_workloads(w, nw);
	return err;
}

int stack_exp__write_csv(const struct stack_row *rows, size_t nr, const char *path)
{
	struct output sink;
	FILE *f = output__create(&sink, path);

	if (!f)
		return -EIO;
	fprintf(f, "workload,kind,collector,status,samples,with_stack,complete_share,incl_error_mean,"
		   "incl_error_max,caller_tv_mean,top_functions,seconds\n");
	for (size_t i = 0; i < nr; i++) {
		const struct stack_row *r = &rows[i];

		if (strcmp(r->status, "ok"))
			fprintf(f, "%s,%s,%s,%s,%" PRIu64 ",,,,,,,%.1f\n", r->workload, r->kind,
				stack_collector_names[r->collector], r->status, r->samples, r->seconds);
		else
			fprintf(f, "%s,%s,%s,ok,%" PRIu64 ",%" PRIu64 ",%.6f,%.6f,%.6f,%.6f,%zu,%.1f\n",
				r->workload, r->kind, stack_collector_names[r->collector], r->samples,
				r->with_stack, r->complete, r->incl_mae, r->incl_max, r->caller_tv, r->top,
				r->seconds);
	}
	return output__close(&sink, 0);
}

void stack_exp__print(FILE *f, const struct stack_row *rows, size_t nr)
{
	fprintf(f, "%-11s %-12s %8s %9s %9s %9s %9s\n", "workload", "collector", "samples", "complete",
		"incl err", "incl max", "caller TV");
	for (size_t i = 0; i < nr; i++) {
		const struct stack_row *r = &rows[i];

		fprintf(f, "%-11s %-12s %8" PRIu64, r->workload, stack_collector_names[r->collector],
			r->samples);
		if (strcmp(r->status, "ok"))
			fprintf(f, "  %s\n", r->status);
		else
			fprintf(f, " %8.1f%% %9.2f %9.2f %9.3f\n", 100 * r->complete, 100 * r->incl_mae,
				100 * r->incl_max, r->caller_tv);
	}
	fprintf(f, "complete: stacks reaching the thread's first function; incl err: mean |sampled - "
		   "exact| inclusive share of the top %d functions with %.0f%% of the time or more, in "
		   "points (max: the worst); caller TV: their caller split's mean total variation "
		   "distance (0 exact, 1 disjoint)\n", STACK_EXP_TOP, 100 * STACK_EXP_MIN_SHARE);
}

static const struct {
	const char *name, *title, *ylabel, *yrange;
} figures[] = {
	{ "complete", "Complete stacks (reaching the thread's first function), by collector",
	  "complete share (%)", "[0:105]" },
	{ "callertv", "Caller-split error of the top 10 functions with 1% or more (mean total variation)",
	  "caller TV (0 exact, 1 disjoint)", "[0:1.05]" },
	{ "incl", "Inclusive-time error of the top 10 functions with 1% or more (mean, points)",
	  "inclusive error (points)", "[0:*]" },
};

static double figure_value(const struct stack_row *r, size_t fig)
{
	if (strcmp(r->status, "ok"))
		return NAN;
	return fig == 0 ? 100 * r->complete : fig == 1 ? r->caller_tv : 100 * r->incl_mae;
}

/* one data file per figure: rows workloads, columns the collectors with a score anywhere
 * (gnuplot refuses a histogram column without a point), "NaN" where a workload has none;
 * how many columns in *ncols */
static int write_table(const char *path, const struct stack_row *rows, size_t nr, size_t fig,
		       int *ncols)
{
	const char *last = NULL;
	bool any[SC_NR] = { 0 };
	struct output sink;
	FILE *f = output__create(&sink, path);

	if (!f)
		return -EIO;
	for (size_t i = 0; i < nr; i++)
		if (!isnan(figure_value(&rows[i], fig)))
			any[rows[i].collector] = true;
	fprintf(f, "workload");
	*ncols = 0;
	for (int c = 0; c < SC_NR; c++)
		if (any[c]) {
			fprintf(f, " %s", stack_collector_names[c]);
			++*ncols;
		}
	fputc('\n', f);
	for (size_t i = 0; i < nr; i++) {
		if (last && !strcmp(last, rows[i].workload))
			continue;
		last = rows[i].workload;
		fprintf(f, "%s", last);
		for (int c = 0; c < SC_NR; c++) {
			double v = NAN;

			if (!any[c])
				continue;
			for (size_t j = i; j < nr && !strcmp(rows[j].workload, last); j++)
				if ((int)rows[j].collector == c)
					v = figure_value(&rows[j], fig);
			if (isnan(v))
				fprintf(f, " NaN");
			else
				fprintf(f, " %.6f", v);
		}
		fputc('\n', f);
	}
	return output__close(&sink, 0);
}

int stack_exp__plot(const char *dir, const struct stack_row *rows, size_t nr)
{
	char *gp = str__printf("%s/stacks.gp", dir), *log = str__printf("%s/gnuplot.log", dir);
	struct output sink;
	FILE *f;
	int err = 0;

	if (!gp || !log) {
		err = fail(-ENOMEM, "cannot write the plot script in '%s': %s", dir, strerror(ENOMEM));
		goto out;
	}
	err = output__open(&sink, gp, NULL);
	if (err)
		goto out;
	f = sink.f;
	fprintf(f, "set style data histogram\nset style histogram cluster gap 1\n"
		   "set style fill solid border -1\nset key outside right top\nset xtics rotate by -30\n"
		   "set grid ytics\n");
	for (size_t i = 0; i < ARRAY_SIZE(figures) && !err; i++) {
		char *dat = str__printf("%s/stacks-%s.dat", dir, figures[i].name);
		int ncols = 0;

		if (!dat || write_table(dat, rows, nr, i, &ncols))
			err = fail(-EIO, "cannot write the figure data in '%s'", dir);
		for (int svg = 0; svg <= 1 && !err && ncols; svg++)
			fprintf(f, "set terminal %s size 1000,480\nset output '%s/stacks-%s.%s'\n"
				   "set title \"%s\"\nset ylabel '%s'\nset yrange %s\n"
				   "plot for [c=2:%d] '%s' using c:xtic(1) title columnheader\n",
				svg ? "svg" : "pngcairo", dir, figures[i].name, svg ? "svg" : "png",
				figures[i].title, figures[i].ylabel, figures[i].yrange, ncols + 1, dat);
		free(dat);
	}
	if (output__close(&sink, 0) && !err)
		err = -EIO;
	if (!err && experiment__run_cmd((char *[]){ "gnuplot", gp, NULL }, NULL, "/dev/null", log))
		err = fail(-ENOENT, "gnuplot failed or is missing (see %s): the CSV is complete, the "
			   "figures are not", log);
out:
	free(gp);
	free(log);
	return err;
}
