// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Experiment driver: workloads and their inputs, truths, recordings (hsbpf record as a child,
 * so that each recording is exactly what a user would run), scores, CSV, gnuplot. */
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "lib/output.h"
#include "eval.h"
#include "experiment.h"
#include "import/perf_script.h"
#include "refrun.h"

/* the clock the figures and the CSV convert periods (ns) to cycles at: the seed paper's
 * machine, so that the periods read as its cycle counts */
#define PAPER_GHZ 2.2
/* the real programs experiment__workloads adds after the kernels: gzip, bzip2, xz, sqlite3,
 * and python3 for the stacks experiment */
#define NR_REAL_WORKLOADS 5
/* a command line of record or perf record, with the workload's command after it */
#define MAX_CMD_ARGS (16 + EXP_MAX_ARGS)

/* in the child: fd (1 or 2) to the file at path, created or truncated; NULL keeps it */
static void redirect(int fd, const char *path)
{
	int f;

	if (!path)
		return;
	f = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (f < 0 || dup2(f, fd) < 0)
		_exit(127);
}

int experiment__run_cmd(char *const argv[], const char *env, const char *out, const char *errs)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		redirect(1, out);
		redirect(2, errs);
		if (env)
			putenv((char *)env);
		execvp(argv[0], argv);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int run(char *const argv[], const char *env, const char *out, const char *errs)
{
	return experiment__run_cmd(argv, env, out, errs);
}

/* run argv with stdout to /dev/null (stderr too if quiet_err) */
static int spawn(char *const argv[], const char *env, bool quiet_err)
{
	return run(argv, env, "/dev/null", quiet_err ? "/dev/null" : NULL);
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

static int gen_input(const struct exp_opts *o, const char *name, int mb, char **path)
{
	char *gen, mbstr[16];
	struct stat st;
	int err;

	*path = str__printf("%s/%s", o->dir, name);
	if (!*path)
		return -ENOMEM;
	if (!stat(*path, &st) && st.st_size > 0)
		return 0;
	gen = str__printf("%s/gen-input", o->fixture_dir);
	snprintf(mbstr, sizeof(mbstr), "%d", mb);
	err = gen && run((char *[]){ gen, mbstr, NULL }, NULL, *path, NULL) == 0 ? 0 :
	      fail(-EIO, "cannot generate '%s'", *path);
	free(gen);
	return err;
}

static int sql_script(const struct exp_opts *o, char **path)
{
	struct output sink;
	FILE *f;

	*path = str__printf("%s/workload.sql", o->dir);
	if (!*path)
		return fail(-ENOMEM, "cannot write the SQL script in '%s'", o->dir);
	if (output__open(&sink, *path, NULL))
		return -EIO;
	f = sink.f;
	/* a control-dominated run: parsing, planning, B-tree inserts, index lookups, joins */
	fputs("CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c INTEGER);\n"
	      "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 400000)\n"
	      "INSERT INTO t SELECT i, printf('row%08d-%d', (i * 7919) % 100003, i % 97), (i * 31) % 1009 FROM s;\n"
	      "CREATE INDEX tb ON t(b);\nCREATE INDEX tc ON t(c);\n"
	      "SELECT c, count(*), max(b) FROM t GROUP BY c ORDER BY 2 DESC LIMIT 5;\n"
	      "SELECT count(*) FROM t x JOIN t y ON x.c = y.a WHERE x.b LIKE 'row0001%';\n"
	      "UPDATE t SET b = upper(b) WHERE c % 3 = 0;\n"
	      "SELECT sum(length(b)) FROM t WHERE b > 'ROW0005';\n", f);
	return output__close(&sink, 0);
}

/* python3's workload for the stacks experiment: recursion, a generator of words, a dict, a
 * sort with a key function, JSON both ways and a regular expression: deterministic (the hash
 * seed is fixed by the caller), about 0.7 s here, a minute under the collector */
static int python_script(const struct exp_opts *o, char **path)
{
	struct output sink;
	FILE *f;

	*path = str__printf("%s/workload.py", o->dir);
	if (!*path)
		return fail(-ENOMEM, "cannot write the python script in '%s'", o->dir);
	if (output__open(&sink, *path, NULL))
		return -EIO;
	f = sink.f;
	fputs("import json, re, sys\n\n"
	      "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n\n"
	      "def words(n, seed):\n    out, x = [], seed\n    for _ in range(n):\n"
	      "        x = (x * 1103515245 + 12345) & 0x7fffffff\n        out.append('w%d' % (x % 5000))\n"
	      "    return out\n\n"
	      "def count(ws):\n    d = {}\n    for w in ws:\n        d[w] = d.get(w, 0) + 1\n"
	      "    return sorted(d.items(), key=lambda kv: (-kv[1], kv[0]))\n\n"
	      "def encode(rows):\n    return json.dumps(rows)\n\n"
	      "def scan(s):\n    return len(re.findall(r'w\\d+', s))\n\n"
	      "def main(rounds):\n    total = 0\n    for r in range(rounds):\n"
	      "        total += fib(18)\n        c = count(words(40000, r + 1))\n        s = encode(c)\n"
	      "        total += len(json.loads(s)) + scan(s)\n    print(total)\n\n"
	      "main(int(sys.argv[1]))\n", f);
	return output__close(&sink, 0);
}

void experiment__free_workloads(struct workload *w, int nr)
{
	for (int i = 0; w && i < nr; i++)
		for (size_t k = 0; k < ARRAY_SIZE(w[i].owned); k++)
			free(w[i].owned[k]);
	free(w);
}

int experiment__workloads(const struct exp_opts *o, struct workload **out, int *nr)
{
	static const struct {
		const char *name;
		long n;		/* about a second of work here */
	} kernels[] = {
		{ "latency", 500000000 }, { "callchain", 3200000 }, { "shortblocks", 80000000 },
		{ "fragmented", 45000000 },
	};
	bool want_k = strcmp(o->set, "real"), want_r = strcmp(o->set, "kernels");
	struct workload *w = calloc(ARRAY_SIZE(kernels) + NR_REAL_WORKLOADS, sizeof(*w));
	char *gz = NULL, *bz = NULL, *xz = NULL, *sql = NULL;
	int n = 0, err;

	if (!w)
		return -ENOMEM;
	for (size_t i = 0; want_k && i < ARRAY_SIZE(kernels); i++) {
		w[n].name = kernels[i].name;
		w[n].kind = "kernel";
		w[n].argv[0] = w[n].owned[0] = str__printf("%s/%s", o->workload_dir, kernels[i].name);
		w[n].argv[1] = w[n].owned[1] = str__printf("%ld", o->quick ? kernels[i].n / 16 : kernels[i].n);
		if (access(w[n].argv[0], X_OK)) {
			err = fail(-ENOENT, "cannot find workload '%s' (build it with make)", w[n].argv[0]);
			goto fail;
		}
		n++;
	}
	if (want_r) {
		/* about a second of work each, natively */
		err = gen_input(o, "input-32.txt", 32, &gz);
		if (!err)
			err = gen_input(o, "input-16.txt", 16, &bz);
		if (!err)
			err = gen_input(o, "input-2.txt", 2, &xz);
		if (!err)
			err = sql_script(o, &sql);
		if (err) {
			free(gz);
			free(bz);
			free(xz);
			free(sql);
			goto fail;
		}
		w[n++] = (struct workload){ "gzip", "real", { "/usr/bin/gzip", "-6", "-c", gz }, {}, { gz } };
		w[n++] = (struct workload){ "bzip2", "real", { "/usr/bin/bzip2", "-9", "-c", bz },
					    { "libbz2.so" }, { bz } };
		w[n++] = (struct workload){ "xz", "real", { "/usr/bin/xz", "-6", "-c", xz },
					    { "liblzma.so" }, { xz } };
		w[n].name = "sqlite3";
		w[n].kind = "real";
		w[n].argv[0] = "/usr/bin/sqlite3";
		w[n].argv[1] = ":memory:";
		w[n].argv[2] = w[n].owned[0] = str__printf(".read %s", sql);
		w[n].owned[1] = sql;
		w[n].libs[0] = "libsqlite3.so";
		n++;
		if (o->python) {
			char *py = NULL, *prog = realpath("/usr/bin/python3", NULL);

			/* the interpreter's own name (python3.11), as the profiles map it */
			err = prog ? python_script(o, &py) : fail(-ENOENT, "cannot find '/usr/bin/python3' "
								 "(scripts/install-deps.sh installs it)");
			if (err) {
				free(prog);
				free(py);
				goto fail;
			}
			w[n] = (struct workload){ "python3", "real", { prog, py, o->quick ? "2" : "20" },
						  { "libpython3" }, { prog, py } };
			n++;
		}
		for (int i = 0; i < n; i++)
			if (!strcmp(w[i].kind, "real") && access(w[i].argv[0], X_OK)) {
				err = fail(-ENOENT, "cannot find '%s' (scripts/install-deps.sh installs it)",
					   w[i].argv[0]);
				goto fail;
			}
	}
	if (o->only) {
		int k = 0;

		for (int i = 0; i < n; i++) {
			if (!strcmp(w[i].name, o->only)) {
				w[k++] = w[i];
				continue;
			}
			for (size_t j = 0; j < ARRAY_SIZE(w[i].owned); j++)
				free(w[i].owned[j]);
		}
		if (!k) {
			err = fail(-ENOENT, "no workload '%s' in set '%s'", o->only, o->set);
			n = 0;	/* every entry's strings are freed already */
			goto fail;
		}
		n = k;
	}
	*out = w;
	*nr = n;
	return 0;
fail:
	experiment__free_workloads(w, n);
	return err;
}

static double seconds_since(u64 t0)
{
	return (now_ns(CLOCK_MONOTONIC) - t0) / 1e9;
}

static int truth_for(const struct exp_opts *o, struct workload *w, struct truth **t)
{
	char *path = str__printf("%s/%s.truth", o->dir, w->name);
	struct stat st;
	int err;

	if (!path)
		return -ENOMEM;
	if (o->reuse_truth && !stat(path, &st) && !truth__read(path, t)) {
		free(path);
		return 0;
	}
	/* the workload's own output is not the experiment's */
	fflush(stdout);
	int saved = dup(1), null = open("/dev/null", O_WRONLY);

	if (saved >= 0 && null >= 0)
		dup2(null, 1);
	err = refrun__collect(w->argv, NULL, true, t);
	if (saved >= 0) {
		dup2(saved, 1);
		close(saved);
	}
	if (null >= 0)
		close(null);
	if (!err && ((*t)->meta.signal || (*t)->meta.exit_code))
		err = fail(-EIO, "workload '%s' %s under the collector", w->name, (*t)->meta.status);
	if (!err)
		err = truth__write(*t, path);
	free(path);
	return err;
}


char *experiment__tunables_env(const struct truth *t)
{
	if (!t->meta.glibc_tunables[0])
		return NULL;
	return str__printf("GLIBC_TUNABLES=%.*s", (int)strcspn(t->meta.glibc_tunables, " "),
		       t->meta.glibc_tunables);
}

int experiment__score(struct profile *p, const struct truth *t, const u32 *objs, size_t nobj,
		 struct metrics *m)
{
	struct symbolizer *sy = symbolizer__new(p);
	struct eval_result res;
	int err = sy ? eval__objects(p, sy, t, objs, nobj, &res) : -ENOMEM;

	if (!err)
		*m = res.m;
	symbolizer__free(sy);
	profile__free(p);
	return err;
}

static int record_and_score(const struct exp_opts *o, struct workload *w, const struct truth *t,
			    const char *mode, u64 period, struct metrics *m)
{
	char *prof = str__printf("%s/last.data", o->dir), *env = NULL, pstr[32];
	char *argv[MAX_CMD_ARGS] = { (char *)o->self, "record", "-c", pstr, "--period-mode",
				     (char *)mode, "-o", prof, "--" };
	struct profile *p = NULL;
	u32 objs[4];
	size_t nobj;
	int err;

	/* the program's own code, and the library that does its work */
	nobj = experiment__objects(w, t, objs);

	snprintf(pstr, sizeof(pstr), "%" PRIu64, period);
	add_command(argv, ARRAY_SIZE(argv), w);
	env = experiment__tunables_env(t);
	err = spawn(argv, env, true);
	if (err) {
		err = fail(-EIO, "recording '%s' (%s, %" PRIu64 " ns) failed with status %d", w->name,
			   mode, period, err);
		goto out;
	}
	err = profile__read(prof, &p);
	if (!err)
		err = experiment__score(p, t, objs, nobj, m);
out:
	free(prof);
	free(env);
	return err;
}

/* perf record at the same period, system-wide (Debian's perf 6.1 aborts collecting build-ids
 * after a per-task recording on this kernel; -a -B does not), read back through perf script */
static int perf_and_score(const struct exp_opts *o, struct workload *w, const struct truth *t,
			  u64 period, const u32 *objs, size_t nobj, struct metrics *m)
{
	char *data = str__printf("%s/perf.data", o->dir), *txt = str__printf("%s/perf.txt", o->dir);
	char *env = NULL, pstr[32];
	char *argv[MAX_CMD_ARGS] = { "perf", "record", "-B", "-q", "-a", "-e", "cpu-clock", "-c", pstr,
				     "-o", data, "--" };
	char *script[] = { "perf", "script", "-i", data, "-F", "pid,ip", "--show-mmap-events", NULL };
	struct profile *p = profile__new();
	int err;

	snprintf(pstr, sizeof(pstr), "%" PRIu64, period);
	add_command(argv, ARRAY_SIZE(argv), w);
	env = experiment__tunables_env(t);
	err = p ? spawn(argv, env, true) : -ENOMEM;
	if (err) {
		err = fail(-EIO, "perf record of '%s' failed (%d)", w->name, err);
		goto out;
	}
	if (!data || !txt || run(script, NULL, txt, "/dev/null")) {
		err = fail(-EIO, "perf script failed on '%s'", data);
		goto out;
	}
	snprintf(p->meta.event, sizeof(p->meta.event), "cpu-clock");
	p->meta.event_type = 1;	/* PERF_TYPE_SOFTWARE */
	p->meta.period = period;
	err = perf_script__parse(txt, period, p);
	if (!err)
		err = experiment__score(p, t, objs, nobj, m);
	p = NULL;
out:
	profile__free(p);
	free(data);
	free(txt);
	free(env);
	return err;
}

size_t experiment__objects(const struct workload *w, const struct truth *t, u32 *objs)
{
	size_t nobj = 0;

	objs[nobj++] = eval__program_object(t);
	for (u32 i = 0; i < t->nr_objects && nobj < 4; i++) {
		const char *base = path__base(truth__str(t, t->objects[i].path));

		for (int l = 0; l < 2 && w->libs[l]; l++)
			if (!strncmp(base, w->libs[l], strlen(w->libs[l])))
				objs[nobj++] = i;
	}
	return nobj;
}

static struct exp_row *row_init(struct exp_row *r, const struct workload *w, const char *mode,
				u64 period)
{
	r->workload = w->name;
	r->kind = w->kind;
	r->mode = mode;
	r->period_ns = period;
	return r;
}

static void print_progress(const struct exp_row *r, size_t nr, size_t total, u64 t0)
{
	fprintf(stderr, "[%6.1fs] %zu/%zu %-11s %-12s %8.1f us: ", seconds_since(t0), nr, total,
		r->workload, r->mode, r->period_ns / 1e3);
	if (r->ok)
		fprintf(stderr, "%6" PRIu64 " samples  OD %.4f  AE %.4f  NRMSE %.4f\n", r->m.ns,
			r->m.od, r->m.ae, r->m.nrmse);
	else
		fprintf(stderr, "not scored\n");
}

int experiment__run(const struct exp_opts *o, struct exp_row **out, size_t *nr_out)
{
	struct workload *w = NULL;
	struct exp_row *rows = NULL;
	size_t nr = 0, total;
	u64 t0 = now_ns(CLOCK_MONOTONIC);
	int nw = 0, err;

	err = experiment__workloads(o, &w, &nw);
	if (err)
		return err;
	total = (size_t)nw * o->nr_periods * (o->nr_modes + o->with_perf);
	rows = calloc(total + 1, sizeof(*rows));
	if (!rows) {
		err = -ENOMEM;
		goto out;
	}
	for (int i = 0; i < nw; i++) {
		struct truth *t = NULL;

		fprintf(stderr, "[%6.1fs] %s: exact counts under the collector...\n", seconds_since(t0),
			w[i].name);
		err = truth_for(o, &w[i], &t);
		if (err)
			goto out;
		for (int pi = 0; pi < o->nr_periods; pi++) {
			for (int mi = 0; mi < o->nr_modes; mi++) {
				struct exp_row *r = row_init(&rows[nr++], &w[i], o->modes[mi], o->periods[pi]);

				r->ok = !record_and_score(o, &w[i], t, r->mode, r->period_ns, &r->m);
				print_progress(r, nr, total, t0);
			}
			if (o->with_perf) {
				struct exp_row *r = row_init(&rows[nr++], &w[i], "perf-record", o->periods[pi]);
				u32 objs[4];
				size_t nobj = experiment__objects(&w[i], t, objs);

				r->ok = !perf_and_score(o, &w[i], t, r->period_ns, objs, nobj, &r->m);
				print_progress(r, nr, total, t0);
			}
		}
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

int experiment__write_csv(const struct exp_row *rows, size_t nr, const char *path)
{
	struct output sink;
	FILE *f = output__create(&sink, path);

	if (!f)
		return -EIO;
	fprintf(f, "workload,kind,event,period_ns,period_cycles_%.1fghz,mode,samples,nrmse,sc,od,ae,"
		   "spearman,top10_functions,top20_blocks\n", PAPER_GHZ);
	for (size_t i = 0; i < nr; i++) {
		const struct exp_row *r = &rows[i];

		if (!r->ok)
			continue;
		fprintf(f, "%s,%s,cpu-clock,%" PRIu64 ",%.0f,%s,%" PRIu64 ",%.6f,%.6f,%.6f,%.6f,%.6f,%d,%d\n",
			r->workload, r->kind, r->period_ns, r->period_ns * PAPER_GHZ, r->mode, r->m.ns,
			r->m.nrmse, r->m.sc, r->m.od, r->m.ae, r->m.spearman, r->m.top_funcs,
			r->m.top_blocks);
	}
	return output__close(&sink, 0);
}

static const struct {
	const char *col, *title;
} plot_metrics[] = {
	{ "nrmse", "NRMSE" }, { "sc", "Sample coverage" }, { "od", "Order deviation" },
	{ "ae", "Accuracy error" },
};

/* one data file per figure: rows = workloads, columns = periods (or modes) */
static int write_table(const struct exp_opts *o, const struct exp_row *rows, size_t nr,
		       const char *metric, bool by_mode, const char *path)
{
	const char *last = NULL;
	struct output sink;
	FILE *f = output__create(&sink, path);

	if (!f)
		return -EIO;
	fprintf(f, "workload");
	if (by_mode)
		for (int m = 0; m < o->nr_modes; m++)
			fprintf(f, " %s", o->modes[m]);
	else
		for (int p = 0; p < o->nr_periods; p++)
			fprintf(f, " %.0fK", o->periods[p] * PAPER_GHZ / 1024);
	fputc('\n', f);
	for (size_t i = 0; i < nr; i++) {
		if (last && !strcmp(last, rows[i].workload))
			continue;
		last = rows[i].workload;
		fprintf(f, "%s", last);
		for (int c = 0; c < (by_mode ? o->nr_modes : o->nr_periods); c++) {
			double v = NAN;

			for (size_t j = 0; j < nr; j++) {
				const struct exp_row *r = &rows[j];
				u64 want_p = by_mode ? o->periods[o->nr_periods / 2] : o->periods[c];
				const char *want_m = by_mode ? o->modes[c] : o->modes[0];

				if (!r->ok || strcmp(r->workload, last) ||
				    r->period_ns != want_p || strcmp(r->mode, want_m))
					continue;
				v = !strcmp(metric, "nrmse") ? r->m.nrmse : !strcmp(metric, "sc") ? r->m.sc :
				    !strcmp(metric, "od") ? r->m.od : r->m.ae;
			}
			if (isnan(v))
				fprintf(f, " NaN");
			else
				fprintf(f, " %.6f", v);
		}
		fputc('\n', f);
	}
	return output__close(&sink, 0);
}

int experiment__plot(const struct exp_opts *o, const struct exp_row *rows, size_t nr)
{
	char *gp = str__printf("%s/plots.gp", o->dir), *log_path = NULL;
	struct output sink;
	FILE *f;
	int err = 0;

	if (!gp)
		return fail(-ENOMEM, "cannot write the plot script in '%s': %s", o->dir,
			    strerror(ENOMEM));
	if (output__open(&sink, gp, NULL)) {
		free(gp);
		return -EIO;
	}
	f = sink.f;
	fprintf(f, "set style data histogram\nset style histogram cluster gap 1\n"
		   "set style fill solid border -1\nset key outside right top\nset xtics rotate by -30\n"
		   "set grid ytics\n");
	for (size_t i = 0; i < ARRAY_SIZE(plot_metrics); i++) {
		for (int by_mode = 0; by_mode <= 1; by_mode++) {
			char *dat = str__printf("%s/%s-by-%s.dat", o->dir, plot_metrics[i].col,
					    by_mode ? "mode" : "period");
			int ncols = by_mode ? o->nr_modes : o->nr_periods;

			if (!dat || write_table(o, rows, nr, plot_metrics[i].col, by_mode, dat)) {
				free(dat);
				err = -EIO;
				continue;
			}
			for (int svg = 0; svg <= 1; svg++) {
				fprintf(f, "set terminal %s size 1000,480\nset output '%s/%s-by-%s.%s'\n",
					svg ? "svg" : "pngcairo", o->dir, plot_metrics[i].col,
					by_mode ? "mode" : "period", svg ? "svg" : "png");
				if (by_mode)
					fprintf(f, "set title '%s by period mode, cpu-clock, period %.0f us (%.0fK cycles at %.1f GHz)'\n",
						plot_metrics[i].title, o->periods[o->nr_periods / 2] / 1e3,
						o->periods[o->nr_periods / 2] * PAPER_GHZ / 1024, PAPER_GHZ);
				else
					fprintf(f, "set title '%s by sampling period (cycles at %.1f GHz), cpu-clock, %s periods'\n",
						plot_metrics[i].title, PAPER_GHZ, o->modes[0]);
				fprintf(f, "plot for [c=2:%d] '%s' using c:xtic(1) title columnheader\n",
					ncols + 1, dat);
			}
			free(dat);
		}
	}
	if (output__close(&sink, 0)) {
		free(gp);
		return -EIO;
	}
	log_path = str__printf("%s/gnuplot.log", o->dir);
	if (!log_path || run((char *[]){ "gnuplot", gp, NULL }, NULL, NULL, log_path)) {
		err = fail(-ENOENT, "gnuplot failed or is missing (see %s/gnuplot.log): the CSV is "
			   "complete, the figures are not", o->dir);
	}
	free(log_path);
	free(gp);
	return err;
}
