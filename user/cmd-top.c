// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* hsbpf top: run a session (user/record/session.c) with no end, and every interval read the kernel
 * map into the live model (user/report/top.c) and show it: full screen (user/report/top_tui.c), or a text
 * snapshot per interval with --stdio or when stdout is not a terminal. */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include "lib/caps.h"
#include "cmds.h"
#include "symbols/ksyms.h"
#include "option_groups.h"
#include "record/memory.h"
#include "record/sampler.h"
#include "record/session.h"
#include "symbols/buildid_cache.h"
#include "report/top.h"
#include "report/top_tui.h"

static struct env {
	struct session_opts so;
	double delay;
	struct top_view view;
	bool stdio;
	u64 iterations;
	u64 rows;
	u64 width;
	bool raw_names;		/* --no-demangle */
	u64 alloc_period;	/* --alloc-period, 0 when not given */
	const char *sample_type;	/* --sample-type */
} env;

/* rows of a --stdio snapshot with -g that show their callers under them */
#define TOP_STDIO_GRAPHS 5

static volatile sig_atomic_t exiting;

static void on_signal(int sig)
{
	(void)sig;
	exiting = 1;
}

static const struct options_cmd top_cmd = {
	.name = "hsbpf top",
	.usage =
	"usage: hsbpf top [-e EVENT] [-F HZ | -c PERIOD] [-a | -p PID[,PID...] | --cgroup PATH]\n"
	"                 [-C CPUS] [-d SECONDS] [--sort GROUP] [--accumulate] [--stdio]\n"
	"                 [--off-cpu | --memory [--alloc-period BYTES] [--sample-type TYPE]]\n",
	.outro =
	"keys: h help, q quit, Tab/1-5 grouping, s sort, d decay, / filter, p pause,\n"
	"      Enter zoom into a process or container, Backspace zoom out, m memory view\n",
};

static int sort_key(const struct option_spec *opt, const char *arg)
{
	(void)opt;
	return top__parse_key(arg, &env.view.key) ? -EINVAL : 0;
}

static int order(const struct option_spec *opt, const char *arg)
{
	(void)opt;
	return top__parse_order(arg, &env.view.order) ? -EINVAL : 0;
}

static int filter(const struct option_spec *opt, const char *arg)
{
	(void)opt;
	snprintf(env.view.filter, sizeof(env.view.filter), "%s", arg);
	return 0;
}

static int alloc_period(const struct option_spec *opt, const char *arg)
{
	(void)opt;
	return memory__parse_period(arg, &env.alloc_period);
}

static int sample_type(const struct option_spec *opt, const char *arg)
{
	(void)opt;
	env.sample_type = arg;
	return memory__parse_view(arg, &env.view.mview);
}

static const struct option_spec top_opts[] = {
	OPTIONS_SESSION_EVENT(&env.so, "cpu-clock (default) or any event record takes"),
	OPTIONS_SESSION_TARGET(&env.so, "the whole machine (the default)"),
	OPT_SECONDS('d', "delay", &env.delay, "SECONDS", "between refreshes (default 2)", 0.1, 3600,
		    "invalid delay '%s' (%g to %g seconds)"),
	OPT_CALLBACK('s', "sort", NULL, "GROUP", "rows by sym (default), ip, bb, pid or cgroup",
		     sort_key),
	OPT_CALLBACK(0, "order", NULL, "ORDER", "samples (default), name, process, container", order),
	{ .kind = OPTION_FLAG, .short_name = 'z', .long_name = "accumulate", .value = &env.view.decay,
	  .flags = OPTF_CLEAR, .help = "totals since the start instead of decaying counts" },
	OPT_CALLBACK(0, "filter", NULL, "TEXT", "only rows whose symbol, object, command or "
		     "container has TEXT", filter),
	OPT_FLAG(0, "stdio", &env.stdio, "a text snapshot per refresh (also when stdout or stdin is "
		 "not a terminal)"),
	OPT_U64('n', "iterations", &env.iterations, "N", "stop after N refreshes", 1, 0,
		"invalid iterations '%s'"),
	OPT_U64(0, "rows", &env.rows, "N", "rows per --stdio snapshot (default 25, 0: all)", 0, 0,
		"invalid rows '%s'"),
	OPT_U64(0, "width", &env.width, "N", "columns of a --stdio snapshot (default: the "
		"terminal's or 100)\n(with -g, the first 5 functions' callers under them)", 40, 500,
		"invalid width '%s' (%llu to %llu)"),
	OPTIONS_SESSION_MAPS(&env.so, "sample map slots per interval (default: twice what 10 s "
			     "or a refresh can sample, at most 262144)"),
	OPT_NO_DEMANGLE(&env.raw_names),
	OPTIONS_CALL_GRAPH(&env.so),
	OPT_FLAG(0, "off-cpu", &env.view.off_cpu, "time off the CPU (sleeps, I/O, locks, waits for a "
		 "CPU) instead of samples, in ms, measured at every context switch (docs/off-cpu.md)"),
	OPT_FLAG(0, "memory", &env.view.memory, "sampled allocations instead of samples: glibc's malloc "
		 "family followed by uprobes, bytes allocated per second by function (docs/memory.md)"),
	OPT_CALLBACK(0, "alloc-period", NULL, "BYTES", "with --memory, an allocation sampled every "
		     "BYTES on average (K, M, G: KiB...; default 512K)", alloc_period),
	OPT_CALLBACK(0, "sample-type", NULL, "TYPE", "with --memory: alloc_space (default), "
		     "alloc_objects, inuse_space (live now, with its growth), inuse_objects", sample_type),
	OPT_VERBOSE("more messages"),
	OPT_END(),
};

/* what the options say together: 0, or -EINVAL after saying what is wrong */
static int check_args(int nr)
{
	int targets;

	if (nr)
		return fail(-EINVAL, "top watches running processes: use record to run a command");
	targets = !!env.so.all + !!env.so.pids + !!env.so.cgroup;
	if (targets > 1 && !(env.so.cgroup && env.so.all && targets == 2))
		return fail(-EINVAL, "choose one target: -a, -p or --cgroup");
	if (!targets)
		env.so.all = true;
	if (env.so.freq && env.so.period)
		return fail(-EINVAL, "-F and -c exclude each other");
	if (env.view.off_cpu)
		env.so.offcpu = OFFCPU_ONLY;
	if (env.alloc_period && !env.view.memory)
		return fail(-EINVAL, "--alloc-period is for --memory");
	if (env.sample_type && !env.view.memory)
		return fail(-EINVAL, "--sample-type is for --memory");
	if (env.view.memory)
		env.so.alloc_period = env.alloc_period ? env.alloc_period : MEMORY_DEFAULT_PERIOD;
	/* a machine or a container: every process it starts would be followed, its mappings
	 * put in the kernel one by one; the kernel finds them from the sampled task's vma
	 * instead, as the agent's (docs/call-stacks.md) */
	if (!env.so.pids)
		env.so.mappings_by_vma = true;
	/* the kernel's maps hold the samples of a refresh, or of 10 s for one held up */
	env.so.live_interval_s = env.delay > 10 ? env.delay : 10;
	return 0;
}

/* 0, -ECANCELED after --help, or -EINVAL after saying what is wrong */
static int parse_args(int argc, char **argv)
{
	int nr;

	memset(&env, 0, sizeof(env));
	env.so.event = "cpu-clock";
	env.so.table_cache = buildid_cache__dir_in_use();
	env.delay = 2;
	env.rows = 25;
	env.view.decay = true;
	env.so.live = true;
	env.so.key_tid = true;	/* threads by their own names, as record keys them */
	nr = options__parse(&top_cmd, top_opts, argc, argv);
	if (nr < 0)
		return nr;
	if (check_args(nr)) {
		usage_hint(top_cmd.name);
		return -EINVAL;
	}
	return 0;
}

static double cpu_seconds(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return -1;
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* what this interval cost: hsbpf's process, and the sample handler in the kernel */
struct cost {
	u64 wall;
	double cpu;
	u64 bpf_ns;
};

static void measure(struct session *sess, struct top_status *st, struct cost *last)
{
	struct cost now = { .wall = now_ns(CLOCK_MONOTONIC), .cpu = cpu_seconds() };
	double wall = (now.wall - last->wall) / 1e9;
	u64 cnt;

	if (wall <= 0)
		return;
	st->interval_s = wall;
	st->cpu = now.cpu >= 0 && last->cpu >= 0 ? 100.0 * (now.cpu - last->cpu) / wall : -1;
	if (!sampler__prog_stats(session__sampler(sess), &now.bpf_ns, &cnt))
		st->bpf_cpu = 100.0 * (now.bpf_ns - last->bpf_ns) / 1e9 / wall;
	*last = now;
}

/* the process history of exited processes goes once it has grown by this many records, or
 * once a minute: what is symbolized stays symbolized */
#define FORGET_RECORDS 20000
#define FORGET_NS (60 * 1000000000ull)

static size_t history(const struct profile *p)
{
	return p->nr_mappings + p->nr_comms + p->nr_forks;
}

static int forget_exited(struct session *sess, struct top *t, size_t *last_size, u64 *last_time)
{
	struct profile *p = session__profile(sess);
	u64 now = now_ns(CLOCK_MONOTONIC);
	size_t nr, before = history(p);
	u32 *pids;
	int err;

	if (history(p) < *last_size + FORGET_RECORDS && now < *last_time + FORGET_NS)
		return 0;
	err = top__unresolved_pids(t, &pids, &nr);
	if (!err)
		err = session__forget_exited(sess, pids, nr);
	free(pids);
	/* the tables it kept in the build-id cache: within its size (said) */
	session__trim_table_cache(sess, false);
	debug("forgot the history of exited processes: %zu records, %zu kept", before - history(p),
	      history(p));
	*last_size = history(p);
	*last_time = now;
	return err;
}

/* the interval read into t, and shown unless show is false (paused: the view holds, but the
 * kernel's maps, sized for an interval, are drained all the same) */
static int refresh(struct session *sess, struct top *t, struct cost *cost, struct top_tui *tui,
		   bool show)
{
	struct top_status *st = top__status(t);
	int err;

	measure(sess, st, cost);
	err = top__update(t, session__sampler(sess));
	if (err)
		return err;
	st->sideband_lost = session__profile(sess)->stats.sideband_lost;
	if (!show)
		return 0;
	if (tui)
		return top_tui__refresh(tui, t, &env.view);
	/* each snapshot goes out now (a log follows top); one that cannot be written ends top,
	 * and main says why */
	err = top__print(t, &env.view, env.rows, env.so.call_graph ? TOP_STDIO_GRAPHS : 0, env.width,
			 stdout);
	return stdout__flush() ? -EIO : err;
}

/* the stacks' Python frames named as top shows them, not at an end top does not have */
static int name_python(void *sess)
{
	return session__name_python(sess);
}

/* the model top fills, with its status line's fixed parts: 0, or -errno after saying why */
static int top_model(struct session *sess, struct top **out)
{
	struct top_status *st;
	struct top *t;
	int err;

	/* every kernel symbol once: later kernel IPs resolve without reading kallsyms again */
	err = ksyms__save_all(session__profile(sess), "/proc/kallsyms");
	if (err)
		return err;
	t = top__new(session__profile(sess), session__cgroup_names(sess));
	if (!t)
		return fail(-ENOMEM, "cannot start top: %s", strerror(ENOMEM));
	if (env.raw_names)
		top__no_demangle(t);
	top__on_stacks(t, name_python, sess);
	/* the rows' Self of Python code is the Python function's, from the stacks */
	if (env.so.call_graph && env.so.python_frames != HSBPF_PY_OFF_MODE &&
	    top__python_self(t, true)) {
		top__free(t);
		return fail(-ENOMEM, "cannot start top: %s", strerror(ENOMEM));
	}
	st = top__status(t);
	st->event = session__event_name(sess);
	st->target = env.so.pids ? env.so.pids : env.so.cgroup ? env.so.cgroup : "all CPUs";
	st->freq = session__freq(sess);
	st->period = session__period(sess);
	if (env.view.memory)
		top__memory(t, env.so.alloc_period);
	*out = t;
	return 0;
}

/* refresh every -d seconds until q, a signal, -n refreshes, or (without a screen) the
 * targets' end; *ended: every target exited. 0, or -errno */
static int top_loop(struct session *sess, struct top *t, struct top_tui *tui, bool *ended)
{
	struct top_status *st = top__status(t);
	struct cost cost = { .wall = now_ns(CLOCK_MONOTONIC), .cpu = cpu_seconds() };
	u64 next = cost.wall + (u64)(env.delay * 1e9), done = 0, forgot_at = cost.wall;
	size_t forgot_size = 0;
	int err;

	while (!exiting) {
		u64 now = now_ns(CLOCK_MONOTONIC);
		int wait = now >= next ? 0 : (int)((next - now) / 1000000);

		if (wait > 100)
			wait = 100;
		if (!*ended) {
			err = session__poll(sess, tui ? 0 : wait);
			if (err < 0)
				return err;
			if (err > 0) {
				/* one last look at what the targets left */
				*ended = st->ended = true;
				next = 0;
			}
			err = forget_exited(sess, t, &forgot_size, &forgot_at);
			if (err)
				return err;
		}
		if (tui && top_tui__key(tui, t, &env.view, *ended ? 100 : wait) == TUI_QUIT)
			break;
		now = now_ns(CLOCK_MONOTONIC);
		if (now < next || (*ended && next == UINT64_MAX))
			continue;
		err = refresh(sess, t, &cost, tui, !st->paused);
		if (err)
			return err;
		next = *ended ? UINT64_MAX : next + (u64)(env.delay * 1e9);
		if (next < now)
			next = now + (u64)(env.delay * 1e9);
		if (st->paused)
			continue;
		if (env.iterations && ++done >= env.iterations)
			break;
		if (*ended && !tui)
			break;
	}
	return 0;
}

int cmd_top(int argc, char **argv)
{
	struct session *sess = NULL;
	struct top_tui *tui = NULL;
	struct top *t = NULL;
	int err, stats_fd = -1;
	bool ended = false;

	err = parse_args(argc, argv);
	if (err)
		return options__status(err);
	/* the screen needs keys too: with stdin not a terminal, ncurses' reads return at once
	 * and the loop spun a core at 100% */
	if (!isatty(STDOUT_FILENO) || !isatty(STDIN_FILENO))
		env.stdio = true;
	if (!env.width) {
		const char *cols = getenv("COLUMNS");

		env.width = cols && atoi(cols) >= 40 ? (u64)atoi(cols) : 100;
	}
	err = session__new(&env.so, &sess);
	if (err) {
		session__close(sess);
		return err == -EINVAL ? 2 : 1;
	}
	err = caps__check("hsbpf top");
	if (err)
		goto cleanup;
	/* Ctrl-\ (SIGQUIT) too: its default action would leave the terminal in curses mode */
	signals__on_end(on_signal);
	err = session__open(sess);
	if (!err)
		err = top_model(sess, &t);
	if (err)
		goto cleanup;
	stats_fd = sampler__enable_run_stats();
	err = session__start(sess);
	if (err)
		goto cleanup;
	if (!env.stdio) {
		tui = top_tui__open();
		if (!tui) {
			err = -ENOTTY;
			goto cleanup;
		}
	}
	err = top_loop(sess, t, tui, &ended);
cleanup:
	top_tui__close(tui);
	if (t && top__status(t)->dropped)
		warning("%" PRIu64 " samples were dropped: the sample map was full (raise --map-entries)",
			top__status(t)->dropped);
	if (t && top__status(t)->mem_lost)
		warning("%" PRIu64 " sampled allocations or calls were lost: a full map, or no task storage",
			top__status(t)->mem_lost);
	if (ended)
		fprintf(stderr, "hsbpf: every target process has exited\n");
	if (stats_fd >= 0)
		close(stats_fd);
	top__free(t);
	session__close(sess);
	return err ? 1 : 0;
}
