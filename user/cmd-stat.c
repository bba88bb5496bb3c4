// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* hsbpf stat: parse options, run the counting (user/stat/stat.c) once or -r times, and show the
 * counts with their intervals and metrics (user/stat/stat_report.c, user/stat/stat_print.c). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "lib/caps.h"
#include "lib/options.h"
#include "lib/output.h"
#include "cmds.h"
#include "stat/stat.h"
#include "stat/stat_print.h"
#include "stat/stat_report.h"
#include "record/target.h"

#define REPEAT_MAX 100000
#define INTERVAL_MAX_MS 86400000ull	/* a day */

static struct env {
	struct stat_opts so;
	struct stat_events events;
	const char **cgroups;
	u32 repeat;
	bool no_scale;
	bool default_events;	/* no -e: perf stat's set, whose <not supported> rows say enough */
	enum output_format format;
	const char *output;
} env;

static volatile sig_atomic_t interrupts;

static void on_signal(int sig)
{
	(void)sig;
	interrupts++;
}

static const struct options_cmd stat_cmd = {
	.name = "hsbpf stat",
	.usage =
	"usage: hsbpf stat [-e EVENTS] [-r N] [-I MS] [-a | -p PID | --cgroup PATH... |\n"
	"                  --per-cgroup] [--no-scale] [--format F] [-o FILE] [-- COMMAND...]\n",
	.intro =
	"Count events: a command's (from its exec), or those of processes, of the machine, of\n"
	"cgroups (with their descendants) or of every cgroup on its own, while a command runs\n"
	"or until Ctrl-C. The counts go to standard error, as perf stat's do, or to -o FILE.\n",
	.outro =
	"A multiplexed count (more hardware events than counters) is scaled by the time its\n"
	"counter was enabled over the time it ran, with a 95% interval from the spread of its\n"
	"rate between reads. ( +- ) is half a 95% interval (perf stat's: a standard error).\n"
	"Exit status: the command's (as perf stat), else 0 counted, 1 failed (nothing countable\n"
	"included), 2 usage.\n"
	"What the interval assumes, the output's fields: docs/stat.md.\n",
	.stop_at_arg = true,
};

static int events(const struct option_spec *opt, const char *arg)
{
	(void)opt;
	return stat_events__parse(&env.events, arg) ? -EINVAL : 0;
}

static int interval(const struct option_spec *opt, const char *arg)
{
	u64 v;

	(void)opt;
	if (parse_u64(arg, &v) || v < 1 || v > INTERVAL_MAX_MS)
		return fail(-EINVAL, "invalid interval '%s' (1 to %llu ms)", arg, INTERVAL_MAX_MS);
	env.so.interval_ns = v * 1000000ull;
	return 0;
}

static int cgroup(const struct option_spec *opt, const char *arg)
{
	const char **g = realloc(env.cgroups, (env.so.nr_cgroups + 1) * sizeof(*g));

	(void)opt;
	if (!g)
		return fail(-ENOMEM, "cannot parse options: %s", strerror(ENOMEM));
	g[env.so.nr_cgroups++] = arg;
	env.cgroups = g;
	return 0;
}

static int format(const struct option_spec *opt, const char *arg)
{
	(void)opt;
	return output_format__parse(arg, OUT_TABLES, &env.format) ? -EINVAL : 0;
}

static const struct option_spec stat_opts[] = {
	OPT_CALLBACK('e', "event", NULL, "EVENTS", "comma-separated events; {a,b} is a group the "
		     "PMU schedules together, {a,b}:u gives its events a modifier. Software: "
		     "task-clock, cpu-clock, context-switches, cpu-migrations, page-faults, "
		     "minor-faults, major-faults; hardware: cycles, instructions, branches, "
		     "branch-misses, cache-references, cache-misses, ref-cycles, ..., rNNNN; "
		     "modifiers :u :k. Default: perf stat's set. What the machine lacks is shown as "
		     "<not supported>, and the others are counted", events),
	OPT_U32('r', "repeat", &env.repeat, "N", "run the command N times (1 to 100000): mean, "
		"standard deviation and 95% interval of each figure", 1, REPEAT_MAX,
		"invalid repeat count '%s' (%llu to %llu)"),
	OPT_CALLBACK('I', "interval-print", NULL, "MS", "a row per event every MS ms (1 to "
		     "86400000), with its time", interval),
	OPT_FLAG('a', "all-cpus", &env.so.all, "the whole machine"),
	OPT_STRING('p', "pid", &env.so.pids, "PIDS", "running processes and all their threads "
		   "(and later children)"),
	OPT_CALLBACK('G', "cgroup", NULL, "PATH", "a cgroup v2 with its descendants, counted in the "
		     "kernel at each context switch; give it once per cgroup", cgroup),
	OPT_FLAG(0, "per-cgroup", &env.so.per_cgroup, "the machine, every cgroup on its own (and "
		 "the idle tasks), counted in the kernel, with the machine's total"),
	OPT_FLAG(0, "cgroup-events", &env.so.cgroup_events, "count --cgroup with one perf event per "
		 "cgroup and CPU, as perf stat -G does, instead of in the kernel (to compare)"),
	OPT_FLAG(0, "no-scale", &env.no_scale, "raw counts: multiplexed counts are not extrapolated"),
	OPT_CALLBACK(0, "format", NULL, "F", "text (default), json or csv; json and csv rows have "
		     "the same fields", format),
	OPT_STRING('o', "output", &env.output, "FILE", "write the counts to FILE rather than "
		   "standard error"),
	OPT_U32(0, "map-entries", &env.so.map_entries, "N", "(cgroup, event) slots for counting in "
		"the kernel (default 65536)", 1, 1u << 24, NULL),
	OPT_VERBOSE("more messages (twice: libbpf debug output)"),
	OPT_END(),
};

/* what the options say together: 0, or -EINVAL after saying what is wrong */
static int check_args(void)
{
	int nr_bpf = 0;

	env.so.cgroups = env.cgroups;
	env.default_events = !env.events.n;
	if (!env.events.n && stat_events__add_default(&env.events))
		return -EINVAL;
	env.so.events = &env.events;
	if (stat_opts__check(&env.so))
		return -EINVAL;
	if (env.so.pids) {
		u32 *pids;
		int nr;

		if (target__parse_pids(env.so.pids, &pids, &nr))
			return -EINVAL;
		free(pids);
	}
	if (env.repeat > 1 && !env.so.argv)
		return fail(-EINVAL, "-r needs a command to repeat");
	if (env.repeat > 1 && env.so.interval_ns)
		return fail(-EINVAL, "-r and -I exclude each other");
	if (env.so.per_cgroup || (env.so.nr_cgroups && !env.so.cgroup_events)) {
		for (int e = 0; e < env.events.n; e++)
			nr_bpf++;
		if (nr_bpf > STAT_CGROUP_MAX_EVENTS)
			return fail(-EINVAL, "counting per cgroup takes at most %d events, not %d",
				    STAT_CGROUP_MAX_EVENTS, nr_bpf);
	}
	return 0;
}

/* 0, -ECANCELED after --help, or -EINVAL after saying what is wrong */
static int parse_args(int argc, char **argv)
{
	int nr;

	env.repeat = 1;
	nr = options__parse(&stat_cmd, stat_opts, argc, argv);
	if (nr < 0)
		return nr;
	if (nr)
		env.so.argv = argv;
	if (check_args()) {
		usage_hint(stat_cmd.name);
		return -EINVAL;
	}
	return 0;
}

static void describe_target(char *buf, size_t size)
{
	const struct stat_opts *o = &env.so;
	size_t off = 0;

	if (o->per_cgroup) {
		snprintf(buf, size, "'system wide', per cgroup");
	} else if (o->nr_cgroups) {
		off = snprintf(buf, size, "cgroup%s", o->nr_cgroups > 1 ? "s" : "");
		for (int i = 0; i < o->nr_cgroups && off < size; i++)
			off += snprintf(buf + off, size - off, "%s '%s'", i ? "," : "", o->cgroups[i]);
	} else if (o->all) {
		snprintf(buf, size, "'system wide'");
	} else if (o->pids) {
		snprintf(buf, size, "process id '%s'", o->pids);
	} else {
		off = snprintf(buf, size, "'");
		for (char **a = o->argv; *a && off < size; a++)
			off += snprintf(buf + off, size - off, "%s%s", a == o->argv ? "" : " ", *a);
		if (off < size)
			snprintf(buf + off, size - off, "'");
	}
}

/* the output, opened at the first rows: a run that fails prints no header */
static struct {
	struct output out;	/* -o, or standard error */
	struct stat_print_info info;
	struct stat_printer *p;
} output;

static struct stat_printer *printer(void)
{
	if (!output.p)
		output.p = stat_printer__new(output.out.f, env.format, &output.info);
	if (!output.p)
		error("cannot print: %s", strerror(ENOMEM));
	return output.p;
}

/* the rows of each set of a run's interval, those that counted something in it */
static int print_interval(void *ctx, const struct stat_run *run, u64 t_ns, u64 len_ns)
{
	struct stat_row rows[STAT_MAX_EVENTS];
	size_t *order = calloc(run->nr_sets ? run->nr_sets : 1, sizeof(*order));
	struct stat_printer *p = printer();

	(void)ctx;
	if (!order || !p) {
		free(order);
		return -ENOMEM;
	}
	stat_report__order(run, env.so.per_cgroup, order);
	for (size_t k = 0; k < run->nr_sets; k++) {
		const struct stat_set *s = &run->sets[order[k]];
		bool any = !env.so.per_cgroup;

		for (int e = 0; e < run->nr_events && !any; e++)
			any = s->iv[e].enabled || s->iv[e].count;
		if (!any)
			continue;
		stat_report__rows(&env.events, run->status, s->iv, s->acc, len_ns, env.no_scale, rows);
		for (int e = 0; e < run->nr_events; e++) {
			rows[e].time_s = t_ns / 1e9;
			rows[e].kind = s->kind;
			rows[e].cgroup = s->name;
			rows[e].cgroup_id = s->id;
			stat_printer__row(p, &rows[e]);
		}
	}
	stat_printer__interval_end(p);
	free(order);
	return 0;
}

/* the command's status is stat's, as perf stat passes it on, unless stat ended it */
static int command_status(const struct stat_run *run)
{
	int st = run->child_status;

	if (st <= 0 || run->command_stopped)
		return 0;
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 0;
}

static void report_run(const struct stat_run *run)
{
	int st = run->child_status;

	if (st > 0 && WIFEXITED(st) && WEXITSTATUS(st))
		warning("'%s' exited with status %d", env.so.argv[0], WEXITSTATUS(st));
	else if (st > 0 && WIFSIGNALED(st) && !run->command_killed && WTERMSIG(st) != SIGTERM &&
		 WTERMSIG(st) != SIGINT)
		warning("'%s' was killed by signal %d", env.so.argv[0], WTERMSIG(st));
	if (run->has_bpf_stats) {
		const struct stat_cgroup_stats *b = &run->bpf;

		debug("counting per cgroup: %llu context switches, %llu changed cgroup and read the "
		      "counters (%llu of them after a switch the kernel did not show: unattributed), "
		      "%llu flushes", (unsigned long long)b->switches, (unsigned long long)b->reads,
		      (unsigned long long)b->unsure, (unsigned long long)b->flushes);
		if (run->bpf_run_cnt)
			debug("the switch program ran %llu times, %.0f ns each (kernel.bpf_stats_enabled)",
			      (unsigned long long)run->bpf_run_cnt,
			      (double)run->bpf_run_ns / run->bpf_run_cnt);
		if (b->map_full)
			warning("%llu counts were lost: the cgroup map was full (raise --map-entries)",
				(unsigned long long)b->map_full);
		if (b->read_errors)
			warning("%llu counter reads failed in the kernel: some counts went to the next "
				"task", (unsigned long long)b->read_errors);
	}
}

/* the <not supported> rows say which; this says why, once. Nothing counted at all is an
 * error: a script reading the counts must not take an empty table for zeros */
static int check_supported(const struct stat_run *run)
{
	char names[512] = "";
	size_t len = 0;
	int nr = 0;

	for (int e = 0; e < run->nr_events; e++) {
		if (run->status[e] != STAT_COUNTER_NOT_SUPPORTED)
			continue;
		if (len < sizeof(names))
			len += snprintf(names + len, sizeof(names) - len, "%s'%s'", nr ? ", " : "",
					env.events.v[e].spec.name);
		nr++;
	}
	if (!nr)
		return 0;
	if (len >= sizeof(names))
		snprintf(names + sizeof(names) - 4, 4, "...");
	if (nr == run->nr_events)
		return fail(-EOPNOTSUPP, "nothing to count: %s not supported%s", names,
			    event__have_pmu() ? " by this machine's PMU" :
			    ": no hardware PMU on this machine, only software events such as "
			    "task-clock can be counted");
	if (!env.default_events)
		warning("%s not supported%s; the others are counted", names,
			event__have_pmu() ? " by this machine's PMU" :
			": no hardware PMU on this machine, only software events");
	return 0;
}

static void print_totals(struct stat_printer *p, const struct stat_repeats *rp,
			 const struct rusage *ru)
{
	size_t n = stat_repeats__nr_sets(rp), *order = calloc(n ? n : 1, sizeof(*order));
	struct stat_row rows[STAT_MAX_EVENTS], elapsed;

	if (!order)
		return;
	if (!env.so.interval_ns) {
		stat_repeats__order(rp, env.so.per_cgroup, order);
		for (size_t k = 0; k < n; k++) {
			stat_repeats__rows(rp, order[k], rows);
			for (int e = 0; e < env.events.n; e++)
				stat_printer__row(p, &rows[e]);
		}
	}
	stat_repeats__elapsed(rp, &elapsed);
	stat_printer__footer(p, &elapsed, ru);
	free(order);
}

int cmd_stat(int argc, char **argv)
{
	struct stat_repeats *rp = NULL;
	struct stat_run run = { 0 };
	struct rusage ru;
	bool have_ru = false;
	char target[4096];
	int err, werr, status = 0;

	memset(&env, 0, sizeof(env));
	memset(&output, 0, sizeof(output));
	output.out.f = stderr;
	err = parse_args(argc, argv);
	if (err) {
		stat_events__free(&env.events);
		free(env.cgroups);
		return options__status(err);
	}
	env.so.interrupts = &interrupts;
	err = caps__check("hsbpf stat");
	if (err)
		goto cleanup;
	/* -o as it goes (-I rows are read while it runs), never through a link */
	err = output__open_live(&output.out, env.output);
	if (err)
		goto cleanup;
	rp = stat_repeats__new(&env.events, env.no_scale);
	if (!rp) {
		err = fail(-ENOMEM, "cannot count: %s", strerror(ENOMEM));
		goto cleanup;
	}
	signals__on_end(on_signal);
	describe_target(target, sizeof(target));
	output.info = (struct stat_print_info){
		.target = target, .runs = 1, .interval_ns = env.so.interval_ns,
		.cgroups = env.so.per_cgroup || env.so.nr_cgroups, .no_scale = env.no_scale,
	};
	/* a signal ends the run under way, which counts, and the repeats */
	for (u32 i = 0; i < env.repeat && !(i && interrupts); i++) {
		err = stat__run(&env.so, env.so.interval_ns ? print_interval : NULL, NULL, &run);
		if (err)
			goto cleanup;
		report_run(&run);
		status = command_status(&run);	/* the last run's, as perf stat -r gives */
		if (!i) {
			err = check_supported(&run);
			if (err)
				goto cleanup;
		}
		err = stat_repeats__add(rp, &run);
		if (err) {
			error("cannot count: %s", strerror(-err));
			goto cleanup;
		}
		have_ru = run.has_rusage && env.repeat == 1;
		if (have_ru)
			ru = run.rusage;
		stat_run__free(&run);
	}
	output.info.runs = stat_repeats__runs(rp);
	if (!printer()) {
		err = -ENOMEM;
		goto cleanup;
	}
	print_totals(output.p, rp, have_ru ? &ru : NULL);
cleanup:
	stat_run__free(&run);
	stat_printer__free(output.p);
	stat_repeats__free(rp);
	/* what was written is kept, failed run or not; a failed write is said there */
	if ((werr = output__close(&output.out, 0)) && !err)
		err = werr;
	stat_events__free(&env.events);
	free(env.cgroups);
	return err ? 1 : status;
}
