// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* hsbpf experiment --methods: the paper's sampling methods on the virtual PMU's timing model,
 * each scored against the exact truth of its own run; a CSV and a gnuplot figure. */
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "lib/output.h"
#include "methods.h"
#include "refrun.h"

/* periods of about a million events for every IP method (prime where the paper's methods
 * ask for one), and the LBR's branches every 100,003 with the paper's 16 records */
const struct method methods_table[] = {
	{ "classic", "classic", "cycles", 1000000, 0, "classic", 0,
	  "cycles, a round period, the interrupt's IP (skid and shadow)" },
	{ "classic-insns", "cl-insns", "insns", 1000000, 0, "classic", 0,
	  "instructions, a round period, the interrupt's IP" },
	{ "precise-prime", "pr-prime", "insns", 1000000, 1, "precise", 0,
	  "PEBS on instructions, prime period: the instruction after the record's (IP+1)" },
	{ "precise-random", "pr-rand", "insns", 1000000, 2, "precise", 0,
	  "PEBS on instructions, randomized period" },
	{ "precise-lbrfix", "pr-fix", "insns", 1000000, 1, "precise-fix", 0,
	  "PEBS, prime period, IP+1 given back to a taken branch by the LBR" },
	{ "pdir", "pdir", "insns", 1000000, 1, "pdir", 0,
	  "precisely distributed instructions, prime period: the overflowing instruction" },
	{ "lbr", "lbr", "branches", 100003, 0, NULL, 16,
	  "taken branches with 16 branch records, the fall-through ranges" },
};
const size_t methods_nr = sizeof(methods_table) / sizeof(methods_table[0]);
_Static_assert(sizeof(methods_table) / sizeof(methods_table[0]) <= METHODS_MAX, "METHODS_MAX");

int methods__select(const char *list, bool *selected)
{
	char *copy, *tok, *save = NULL;
	int err = 0;

	for (size_t m = 0; m < methods_nr; m++)
		selected[m] = !list;
	if (!list)
		return 0;
	copy = strdup(list);
	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok && !err; tok = strtok_r(NULL, ",", &save)) {
		size_t m = 0;

		while (m < methods_nr && strcmp(methods_table[m].name, tok))
			m++;
		if (m == methods_nr)
			err = fail(-EINVAL, "unknown method '%s' (known: classic, classic-insns, "
				   "precise-prime, precise-random, precise-lbrfix, pdir, lbr)", tok);
		else
			selected[m] = true;
	}
	free(copy);
	return err;
}

static double seconds_since(u64 t0)
{
	return (now_ns(CLOCK_MONOTONIC) - t0) / 1e9;
}

/* one run of a workload under the collector with the PMUs of n methods (rows[k]->method),
 * each scored against the run's truth: several PMUs sample one emulation, each as it would
 * alone (its own counter and period generator, seeded alike), so a row is the same whether
 * its method ran alone or with others; seconds is the emulation's, shared by its rows */
static int run_pass(const struct workload *w, struct method_row **rows, size_t n)
{
	struct vpmu_opts v[METHODS_MAX] = {};
	int saved, null, err = 0;
	struct truth *t = NULL;
	u64 t0 = now_ns(CLOCK_MONOTONIC);
	double secs;
	u32 objs[4];
	size_t nobj;

	for (size_t k = 0; k < n && !err; k++) {
		const struct method *me = rows[k]->method;

		/* no calling-context tree: a method run costs what it did without it */
		v[k] = (struct vpmu_opts){ .no_cct = true, .event = me->event, .period = me->period,
					   .mode = me->mode, .lbr = me->lbr, .sampling = me->sampling };
		v[k].out = profile__new();
		if (!v[k].out)
			err = -ENOMEM;
	}
	if (err)
		goto out;
	/* the workload's own output is not the experiment's */
	fflush(stdout);
	saved = dup(1);
	null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (saved >= 0 && null >= 0)
		dup2(null, 1);
	err = refrun__collect_vpmus(w->argv, NULL, v, n, &t);
	secs = seconds_since(t0);
	if (saved >= 0) {
		dup2(saved, 1);
		close(saved);
	}
	if (null >= 0)
		close(null);
	if (!err && (t->meta.signal || t->meta.exit_code))
		err = fail(-EIO, "workload '%s' %s under the collector", w->name, t->meta.status);
	if (err)
		goto out;
	nobj = experiment__objects(w, t, objs);
	for (size_t k = 0; k < n; k++) {
		struct method_row *r = rows[k];
		const char *ipc = strstr(v[k].out->meta.target, "(IPC ");

		r->seconds = secs;
		r->ipc = ipc ? atof(ipc + 5) : 0;
		r->ok = !experiment__score(v[k].out, t, objs, nobj, &r->m);
		v[k].out = NULL;
	}
out:
	for (size_t k = 0; k < n; k++)
		profile__free(v[k].out);
	truth__free(t);
	return err;
}

static void report(u64 t0, size_t done, size_t total, const struct method_row *r)
{
	fprintf(stderr, "[%6.1fs] %zu/%zu %-11s %-15s ", seconds_since(t0), done, total, r->workload,
		r->method->name);
	if (r->ok)
		fprintf(stderr, "%7" PRIu64 " samples  AE %.4f  OD %.4f  (%.1f s)\n", r->m.ns, r->m.ae,
			r->m.od, r->seconds);
	else
		fprintf(stderr, "not scored\n");
}

int methods__run(const struct exp_opts *o, const bool *selected, struct method_row **out, size_t *nr_out)
{
	struct workload *w = NULL;
	struct method_row *rows = NULL;
	size_t nr = 0, total = 0;
	u64 t0 = now_ns(CLOCK_MONOTONIC);
	int nw = 0, err;

	err = experiment__workloads(o, &w, &nw);
	if (err)
		return err;
	for (size_t m = 0; m < methods_nr; m++)
		total += selected[m] ? nw : 0;
	rows = calloc(total + 1, sizeof(*rows));
	if (!rows) {
		err = -ENOMEM;
		goto out;
	}
	for (int i = 0; i < nw; i++) {
		struct method_row *pass[METHODS_MAX];
		size_t first = nr, n = 0;

		for (size_t m = 0; m < methods_nr; m++) {
			if (!selected[m])
				continue;
			rows[nr] = (struct method_row){ .workload = w[i].name, .kind = w[i].kind,
						       .method = &methods_table[m] };
			pass[n++] = &rows[nr++];
		}
		/* one emulation for all the methods, or one each (--separate-runs) */
		for (size_t k = 0; k < n; k += o->separate_runs ? 1 : n) {
			size_t nk = o->separate_runs ? 1 : n;

			err = run_pass(&w[i], pass + k, nk);
			/* Ctrl-C or SIGTERM stopped the emulator: the user wants the whole
			 * experiment stopped, not the next run started */
			if (err == -EINTR)
				goto out;
			err = 0;
			for (size_t j = k; j < k + nk; j++)
				report(t0, first + j + 1, total, pass[j]);
		}
	}
	*out = rows;
	*nr_out = nr;
	rows = NULL;
out:
	free(rows);
	experiment__free_workloads(w, nw);
	return err;
}

int methods__write_csv(const struct method_row *rows, size_t nr, const char *path)
{
	struct output sink;
	FILE *f = output__create(&sink, path);

	if (!f)
		return -EIO;
	fprintf(f, "workload,kind,method,event,period,period_mode,sampling,lbr,samples,ae,od,nrmse,sc,"
		   "spearman,top10_functions,top20_blocks,ipc,seconds\n");
	for (size_t i = 0; i < nr; i++) {
		const struct method_row *r = &rows[i];
		const struct method *me = r->method;

		if (!r->ok)
			continue;
		fprintf(f, "%s,%s,%s,%s,%" PRIu64 ",%s,%s,%d,%" PRIu64 ",%.6f,%.6f,%.6f,%.6f,%.6f,%d,%d,"
			"%.3f,%.1f\n", r->workload, r->kind, me->name, me->event, me->period,
			(const char *[]){ "fixed", "prime", "random", "prime-random" }[me->mode & 3],
			me->sampling ? me->sampling : "exact", me->lbr, r->m.ns, r->m.ae, r->m.od,
			r->m.nrmse, r->m.sc, r->m.spearman, r->m.top_funcs, r->m.top_blocks, r->ipc,
			r->seconds);
	}
	return output__close(&sink, 0);
}

/* the row of a workload and method, or NULL */
static const struct method_row *find_row(const struct method_row *rows, size_t nr,
					 const char *workload, const struct method *me)
{
	for (size_t i = 0; i < nr; i++)
		if (rows[i].ok && rows[i].method == me && !strcmp(rows[i].workload, workload))
			return &rows[i];
	return NULL;
}

/* columns of 9 (AE to four places) and the workload's 12: seven methods in 75 columns,
 * names abbreviated in the header and spelled out under it */
void methods__print(FILE *f, const struct method_row *rows, size_t nr, const bool *selected)
{
	const char *last = NULL;

	fprintf(f, "accuracy error (AE) by method\n%-12s", "workload");
	for (size_t m = 0; m < methods_nr; m++)
		if (selected[m])
			fprintf(f, " %8s", methods_table[m].abbrev);
	fputc('\n', f);
	for (size_t i = 0; i < nr; i++) {
		if (last && !strcmp(last, rows[i].workload))
			continue;
		last = rows[i].workload;
		fprintf(f, "%-12s", last);
		for (size_t m = 0; m < methods_nr; m++) {
			const struct method_row *r;

			if (!selected[m])
				continue;
			r = find_row(rows, nr, last, &methods_table[m]);
			if (r)
				fprintf(f, " %8.4f", r->m.ae);
			else
				fprintf(f, " %8s", "-");
		}
		fputc('\n', f);
	}
	fprintf(f, "cl-: classic-, pr-: precise-, rand: random, fix: lbrfix; '-': not scored\n");
}

/* gnuplot reads the script on its standard input; no shell */
static int gnuplot(const char *script, const char *log)
{
	int in = open(script, O_RDONLY | O_CLOEXEC), st;
	int lg = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	pid_t pid;

	if (in < 0 || lg < 0) {
		if (in >= 0)
			close(in);
		if (lg >= 0)
			close(lg);
		return -EIO;
	}
	pid = fork();
	if (pid == 0) {
		dup2(in, 0);
		dup2(lg, 1);
		dup2(lg, 2);
		execlp("gnuplot", "gnuplot", (char *)NULL);
		_exit(127);
	}
	close(in);
	close(lg);
	if (pid < 0)
		return -errno;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : -ENOENT;
}

int methods__plot(const char *dir, const struct method_row *rows, size_t nr, const bool *selected)
{
	char *dat = NULL, *gp = NULL, *log = NULL;
	const char *last = NULL;
	int ncols = 0, err = 0;
	struct output sink;
	FILE *f;

	if (asprintf(&dat, "%s/methods-ae.dat", dir) < 0 || asprintf(&gp, "%s/methods.gp", dir) < 0 ||
	    asprintf(&log, "%s/gnuplot.log", dir) < 0) {
		err = -ENOMEM;
		goto out;
	}
	/* rows: workloads; columns: methods; AE floored at 1e-4 for the log scale */
	err = output__open(&sink, dat, NULL);
	if (err)
		goto out;
	f = sink.f;
	fprintf(f, "workload");
	for (size_t m = 0; m < methods_nr; m++)
		if (selected[m]) {
			fprintf(f, " %s", methods_table[m].name);
			ncols++;
		}
	fputc('\n', f);
	for (size_t i = 0; i < nr; i++) {
		if (last && !strcmp(last, rows[i].workload))
			continue;
		last = rows[i].workload;
		fprintf(f, "%s", last);
		for (size_t m = 0; m < methods_nr; m++) {
			const struct method_row *r;
			double v = NAN;

			if (!selected[m])
				continue;
			r = find_row(rows, nr, last, &methods_table[m]);
			if (r)
				v = r->m.ae < 1e-4 ? 1e-4 : r->m.ae;
			if (isnan(v))
				fprintf(f, " NaN");
			else
				fprintf(f, " %.6f", v);
		}
		fputc('\n', f);
	}
	err = output__close(&sink, 0);
	if (!err)
		err = output__open(&sink, gp, NULL);
	if (err)
		goto out;
	f = sink.f;
	fprintf(f, "set style data histogram\nset style histogram cluster gap 1\n"
		   "set style fill solid border -1\nset key outside right top\nset xtics rotate by -30\n"
		   "set grid ytics\nset logscale y\nset yrange [5e-5:2]\nset ylabel 'accuracy error'\n");
	for (int svg = 0; svg <= 1; svg++)
		fprintf(f, "set terminal %s size 1000,480\nset output '%s/methods-ae.%s'\n"
			   "set title 'Accuracy error by sampling method on the virtual PMU (Haswell timing "
			   "model; log scale, floor 1e-4)'\n"
			   "plot for [c=2:%d] '%s' using c:xtic(1) title columnheader\n",
			svg ? "svg" : "pngcairo", dir, svg ? "svg" : "png", ncols + 1, dat);
	err = output__close(&sink, 0);
	if (err)
		goto out;
	if (gnuplot(gp, log))
		err = fail(-ENOENT, "gnuplot failed or is missing (see %s): the CSV is complete, the "
			   "figure is not", log);
out:
	free(dat);
	free(gp);
	free(log);
	return err;
}
