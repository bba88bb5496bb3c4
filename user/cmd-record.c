// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* hsbpf record: parse options, run a session (user/record/session.c) until the command ends, -d
 * passes or a signal comes, and write the profile. */
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "symbols/buildid_cache.h"
#include "lib/caps.h"
#include "cmds.h"
#include "lib/file_format.h"
#include "record/offcpu.h"
#include "record/memory.h"
#include "record/memory_snapshot.h"
#include "option_groups.h"
#include "profile/profile.h"
#include "record/rearm.h"
#include "record/session.h"
#include "record/sideband.h"

static struct env {
	struct session_opts so;
	double duration;
	const char *output;
	bool no_buildid_cache;
	const char *buildid_dir;
	bool memory;		/* --memory */
	u64 alloc_period;	/* --alloc-period, 0 when not given */
	double snapshot_every;	/* --snapshot-every SECONDS, 0 when not given */
	u32 snapshots;		/* the snapshots taken while recording (the last is the end's) */
	u64 *snapshot_ns;	/* ... when each was taken (CLOCK_MONOTONIC) */
	size_t cap_snapshot_ns;
	int per_thread;		/* --[no-]per-thread: 1, 0; -1 when not said */
} env;

/* how long the messages after the recording may wait in all for a slow reader of stderr */
#define STDERR_GRACE_MS 500

/* -d: from a millisecond to a year, so that the deadline in ns cannot overflow */
#define DURATION_MIN 0.001
#define DURATION_MAX (365 * 86400.0)
/* --snapshot-every: a snapshot walks the live allocations (65,536 at most) */
#define SNAPSHOT_MIN 0.01
#define SNAPSHOT_MAX 86400.0
/* intervals are numbered in 16 bits (bpf/hsbpf.h sample_extra.snap) */
#define SNAPSHOTS_MAX 65534

/* how many ending signals came: the first ends the recording, the next one (while a command
 * that ignores SIGTERM is waited for) has it killed */
static volatile sig_atomic_t interrupts;

static void on_signal(int sig)
{
	(void)sig;
	interrupts++;
}

static const struct options_cmd record_cmd = {
	.name = "hsbpf record",
	.usage =
	"usage: hsbpf record [-e EVENT] [-F HZ | -c PERIOD] [--period-mode MODE] [-g]\n"
	"                    [-a | -p PID[,PID...] | --cgroup PATH] [-C CPUS] [-d SECONDS]\n"
	"                    [--off-cpu | --wall | --memory [--alloc-period BYTES]\n"
	"                    [--snapshot-every SECONDS]] [-o FILE] [-- COMMAND ARGS...]\n",
	.outro =
	"Ctrl-C, SIGTERM, SIGHUP (the terminal closed) and SIGQUIT (Ctrl-\\) end a recording as\n"
	"-d does: the profile is written, and a command still running is sent SIGTERM. One that\n"
	"has not exited 5 s later is sent SIGKILL, at once on a second Ctrl-C or SIGTERM;\n"
	"record says what it is waiting for.\n"
	"\n"
	"Exit status: with a COMMAND that ends by itself, the command's own (128 + N when signal N\n"
	"killed it), as perf record's; 0 when the recording ended it (-d, Ctrl-C) or with no\n"
	"command; 1 when the recording failed, 2 for a usage error.\n",
	.stop_at_arg = true,
};

#define TIME_BUCKET_DEFAULT_MS	100
#define TIMELINE_DEFAULT_MS	10	/* fine enough for a flame chart (docs/usage.md: its cost) */
#define TIME_BUCKET_MAX_MS	60000

/* --time-buckets[=MS], and --timeline[=MS]: the same keys, finer by default */
static int time_buckets(const struct option_spec *opt, const char *arg)
{
	bool timeline = !strcmp(opt->long_name, "timeline");
	u64 ms = timeline ? TIMELINE_DEFAULT_MS : TIME_BUCKET_DEFAULT_MS;

	if (arg && (parse_u64(arg, &ms) || !ms || ms > TIME_BUCKET_MAX_MS))
		return fail(-EINVAL, "invalid --%s '%s' (1 to %d ms)", opt->long_name, arg,
			    TIME_BUCKET_MAX_MS);
	env.so.time_bucket_ns = ms * 1000000;
	return 0;
}

/* --off-cpu, --wall (opt->set: OFFCPU_ONLY or OFFCPU_WALL) */
static int offcpu_mode(const struct option_spec *opt, const char *arg)
{
	(void)arg;
	if (env.so.offcpu && env.so.offcpu != (u32)opt->set)
		return fail(-EINVAL, "--off-cpu and --wall exclude each other");
	env.so.offcpu = opt->set;
	return 0;
}

static int min_block(const struct option_spec *opt, const char *arg)
{
	(void)opt;
	return offcpu__parse_us("--min-block", arg, &env.so.min_block_ns) ? -EINVAL : 0;
}

static int max_block(const struct option_spec *opt, const char *arg)
{
	(void)opt;
	if (offcpu__parse_us("--max-block", arg, &env.so.max_block_ns))
		return -EINVAL;
	if (!env.so.max_block_ns)
		return fail(-EINVAL, "invalid --max-block '%s': no block would be kept", arg);
	return 0;
}

static int switch_sample(const struct option_spec *opt, const char *arg)
{
	(void)opt;
	return offcpu__parse_sample(arg, &env.so.switch_sample);
}

static int alloc_period(const struct option_spec *opt, const char *arg)
{
	(void)opt;
	return memory__parse_period(arg, &env.alloc_period);
}

static const struct option_spec record_opts[] = {
	OPTIONS_SESSION_EVENT(&env.so, "cpu-clock (default), task-clock, cycles, instructions, "
			      "branches, branch-misses, rNNNN; modifiers :p :pp :ppp :u :k; lbr: "
			      "taken branches with their last-branch-record stacks"),
	OPT_FLAG('b', "branch-stack", &env.so.branch_stack,
		 "also record branch stacks (LBR) with a hardware event"),
	OPTIONS_SESSION_TARGET(&env.so, "the whole machine"),
	OPT_SECONDS('d', "duration", &env.duration, "SEC", "stop after SEC seconds, 0.001 to "
		    "31536000 (a year); a command still running is sent SIGTERM", DURATION_MIN,
		    DURATION_MAX, "invalid duration '%s' (%g to %.0f seconds)"),
	OPT_STRING('o', "output", &env.output, "FILE", "profile to write (default hsbpf.data)"),
	OPT_FLAG(0, "no-kill-with-parent", &env.so.no_kill_with_parent, "let the command outlive "
		 "hsbpf if hsbpf is killed (by default it gets SIGKILL when hsbpf dies, even of "
		 "SIGKILL)"),
	OPTIONS_SESSION_MAPS(&env.so, "sample map slots (default 262144)"),
	{ .kind = OPTION_SET, .long_name = "per-thread", .value = &env.per_thread, .set = 1,
	  .flags = OPTF_NEG, .help = "samples keyed by thread too (the default but for -a "
	  "--off-cpu/--wall, keyed by process), or by process only: then no report --sort tid, "
	  "--tid (the thread key costs the handler nothing measurable; threads sharing code take "
	  "more slots)" },
	OPT_FLAG(0, "per-cpu", &env.so.key_cpu, "samples keyed by CPU too (report --sort cpu, --cpu)"),
	{ .kind = OPTION_CALLBACK, .long_name = "time-buckets", .argh = "MS", .flags = OPTF_OPTARG,
	  .cb = time_buckets, .help = "samples keyed by time too, in buckets of MS milliseconds "
	  "(1 to 60000, 100 when MS is omitted: report --time)" },
	{ .kind = OPTION_CALLBACK, .long_name = "timeline", .argh = "MS", .flags = OPTF_OPTARG,
	  .cb = time_buckets, .help = "a time line: --time-buckets of MS ms, 10 when omitted "
	  "(report --time; --format speedscope adds a flame chart per thread)" },
	OPT_FLAG(0, "no-buildid-cache", &env.no_buildid_cache, "don't copy the sampled objects "
		 "into the build-id cache nor read or keep unwind tables there (also "
		 "HSBPF_NO_BUILDID_CACHE=1)"),
	OPT_STRING(0, "buildid-dir", &env.buildid_dir, "DIR", "the build-id cache (default "
		   "$HSBPF_BUILDID_DIR, else ~/.cache/hsbpf/buildid): report finds deleted or "
		   "changed objects there"),
	OPTIONS_CALL_GRAPH(&env.so),
	{ .kind = OPTION_CALLBACK, .long_name = "off-cpu", .set = OFFCPU_ONLY, .cb = offcpu_mode,
	  .help = "time off the CPU instead of samples: each block (sleep, I/O, lock, preemption) "
	  "with its stacks and state, in time units (docs/off-cpu.md); call stacks dwarf unless "
	  "--call-graph fp" },
	{ .kind = OPTION_CALLBACK, .long_name = "wall", .set = OFFCPU_WALL, .cb = offcpu_mode,
	  .help = "on-CPU samples (a clock event) and off-CPU time in one profile: each thread's "
	  "total is its elapsed time" },
	OPT_FLAG(0, "wakers", &env.so.wakers, "with --off-cpu or --wall, each block joined to the "
		 "stacks of the thread that woke it (bcc's wakeuptime, offwaketime): report --sort "
		 "waker, folded stacks \"blocked;--;waker\""),
	OPT_CALLBACK(0, "min-block", NULL, "US", "off-CPU blocks shorter than US microseconds are "
		     "left out", min_block),
	OPT_CALLBACK(0, "max-block", NULL, "US", "... and longer ones (bcc offcputime's -m, -M)",
		     max_block),
	OPT_CALLBACK(0, "switch-sample", NULL, "P", "with --off-cpu or --wall, each block followed "
		     "with probability P (0.0001 to 1, or 1/N; as OpenTelemetry's off-CPU threshold), "
		     "its time weighed 1/P: a cheaper switch on busy machines, report's intervals "
		     "say the cost in accuracy", switch_sample),
	OPT_FLAG(0, "no-inherit", &env.so.no_inherit, "the command's (or -p's processes') main "
		 "threads only: no other thread, no child process (perf's --no-inherit)"),
	OPT_FLAG(0, "memory", &env.memory, "sampled allocations instead of samples: glibc's malloc "
		 "family followed by uprobes, allocated and live bytes by stack (docs/memory.md; "
		 "report --sample-type); call stacks dwarf unless --call-graph fp"),
	OPT_CALLBACK(0, "alloc-period", NULL, "BYTES", "with --memory, an allocation sampled every "
		     "BYTES on average (K, M, G: KiB...; default 512K)", alloc_period),
	OPT_SECONDS(0, "snapshot-every", &env.snapshot_every, "SEC", "with --memory, a snapshot "
		    "every SEC seconds (0.01 to 86400): FILE.1, FILE.2... beside FILE, each the live "
		    "allocations at its end and the interval's allocations; the last is the end's",
		    SNAPSHOT_MIN, SNAPSHOT_MAX, "invalid --snapshot-every '%s' (%g to %.0f seconds)"),
	OPT_VERBOSE("more messages (twice: libbpf debug output)"),
	OPT_END(),
};

/* what the options say together: 0, or -EINVAL after saying what is wrong */
static int check_args(void)
{
	int targets;

	targets = !!env.so.all + !!env.so.pids + !!env.so.cgroup + !!env.so.argv;
	if (targets == 0)
		return fail(-EINVAL, "nothing to record: give a command, -p, -a or --cgroup");
	if (targets > 1 && !(env.so.cgroup && env.so.all && targets == 2))
		return fail(-EINVAL, "choose one target: a command, -p, -a or --cgroup");
	if (env.so.freq && env.so.period)
		return fail(-EINVAL, "-F and -c exclude each other");
	if (env.so.no_inherit && !env.so.argv && !env.so.pids)
		return fail(-EINVAL, "--no-inherit is for a command or -p: -a and --cgroup sample "
			    "every task there");
	if (env.alloc_period && !env.memory)
		return fail(-EINVAL, "--alloc-period is for --memory");
	if (env.snapshot_every && !env.memory)
		return fail(-EINVAL, "--snapshot-every is for --memory");
	env.so.mem_intervals = env.snapshot_every > 0;
	/* a whole machine's blocks by process: its threads' keys were most of a minute's profile
	 * (docs/off-cpu.md); by thread when asked */
	env.so.key_tid = env.per_thread >= 0 ? env.per_thread : !(env.so.all && env.so.offcpu);
	if (env.memory)
		env.so.alloc_period = env.alloc_period ? env.alloc_period : MEMORY_DEFAULT_PERIOD;
	if (env.so.no_kill_with_parent && !env.so.argv)
		return fail(-EINVAL, "--no-kill-with-parent is for a command that record starts");
	if (!env.buildid_dir)
		env.buildid_dir = buildid_cache__default_dir();
	if (getenv("HSBPF_NO_BUILDID_CACHE") && !strcmp(getenv("HSBPF_NO_BUILDID_CACHE"), "1"))
		env.no_buildid_cache = true;
	env.so.keep_objects = !env.no_buildid_cache && env.buildid_dir;
	env.so.table_cache = env.no_buildid_cache ? NULL : env.buildid_dir;
	return 0;
}

/* 0, -ECANCELED after --help, or -EINVAL after saying what is wrong */
static int parse_args(int argc, char **argv)
{
	int nr;

	memset(&env, 0, sizeof(env));
	env.so.event = "cpu-clock";
	env.output = "hsbpf.data";
	env.per_thread = -1;	/* by thread (docs/benchmarks.md: no measurable cost per sample) */
	nr = options__parse(&record_cmd, record_opts, argc, argv);
	if (nr < 0)
		return nr;
	if (nr)
		env.so.argv = argv;
	if (check_args()) {
		usage_hint(record_cmd.name);
		return -EINVAL;
	}
	return 0;
}

/* randomized periods take one wake-up and one write per sample on the sampled CPU: say what
 * that cost, and warn when it is a share of the CPU that disturbs what is measured */
static void report_rearm_cost(const struct profile *p, int nr_cpus)
{
	const struct profile_stats *st = &p->stats;
	double share;

	if (!st->rearms || !p->meta.duration_ns || nr_cpus <= 0)
		return;
	share = (double)st->rearm_cpu_ns / ((double)p->meta.duration_ns * nr_cpus);
	debug("randomized periods: %" PRIu64 " re-arms, %.1f us of CPU each, %.2f%% of the sampled "
	      "CPUs; %" PRIu64 " too late for their draw", st->rearms,
	      st->rearm_cpu_ns / 1e3 / st->rearms, 100 * share, st->rearm_late);
	if (share > REARM_COST_WARN)
		warning("re-arming randomized periods took %.0f%% of the sampled CPUs (%.1f us a "
			"sample): a longer period disturbs the program less", 100 * share,
			st->rearm_cpu_ns / 1e3 / st->rearms);
}

/* the sampled objects into the build-id cache, then the cache within its size: a failure
 * there costs the profile nothing */
static void save_objects(struct session *sess, const struct profile *p)
{
	/* what this recording keeps or uses stays (file times lag the clock by a tick) */
	u64 since = now_ns(CLOCK_REALTIME) - 1000000000, max, freed;
	struct buildid_save_stats st;
	unsigned removed;
	int err;

	if (buildid_keeper__save(session__keeper(sess), p, env.buildid_dir, &st))
		return;
	note("build-id cache '%s': %u objects, %u added (%.1f MB), %u there already",
	     env.buildid_dir, st.objects, st.added, st.bytes / 1e6, st.present);
	if (st.failed)
		warning("%u sampled objects could not be kept in the build-id cache (-v says which)",
			st.failed);
	if (!st.added)
		return;
	max = buildid_cache__max_size(env.buildid_dir);
	err = buildid_cache__trim(env.buildid_dir, max, since, &removed, &freed);
	if (err)
		warning("cannot keep the build-id cache '%s' within %.1f MB: %s", env.buildid_dir,
			max / 1e6, strerror(-err));
	else if (removed)
		note("build-id cache over %.1f MB: %u least recently used entries removed (%.1f MB; "
		     "hsbpf buildid-cache --max-size sets the limit)", max / 1e6, removed, freed / 1e6);
}

/* --snapshot-every: the live allocations now, when the time for one has come; 0 or -errno */
static int take_snapshot(struct session *sess, u64 now, u64 *next)
{
	u32 snap;
	int err;

	if (now < *next)
		return 0;
	/* the next from now: a late poll does not make a burst of them */
	*next = now + (u64)(env.snapshot_every * 1e9);
	if (env.snapshots >= SNAPSHOTS_MAX) {
		if (env.snapshots++ == SNAPSHOTS_MAX)
			warning("%d snapshots taken: no more until the end (the last holds the rest)",
				SNAPSHOTS_MAX);
		return 0;
	}
	if (array__reserve((void **)&env.snapshot_ns, &env.cap_snapshot_ns, env.snapshots + 1,
			   sizeof(*env.snapshot_ns)))
		return fail(-ENOMEM, "cannot take a snapshot: %s", strerror(ENOMEM));
	err = session__memory_snapshot(sess, &snap);
	if (!err) {
		env.snapshot_ns[env.snapshots++] = now_ns(CLOCK_MONOTONIC);
		debug("memory: snapshot %u taken", snap);
	}
	return err;
}

/* sample until the command ends, -d passes or a signal comes: 0, or -errno */
static int record_until_done(struct session *sess)
{
	u64 deadline = env.duration > 0 ? now_ns(CLOCK_MONOTONIC) + (u64)(env.duration * 1e9) :
			UINT64_MAX;
	u64 next_snap = env.snapshot_every > 0 ? now_ns(CLOCK_MONOTONIC) + (u64)(env.snapshot_every * 1e9) :
			UINT64_MAX;
	int err;

	if (verbose || isatty(STDERR_FILENO))
		note("recording %s on %d CPUs%s", session__event_name(sess), session__nr_cpus(sess),
		     env.so.argv ? "" : " (Ctrl-C to stop)");
	for (u64 now; !interrupts && (now = now_ns(CLOCK_MONOTONIC)) < deadline;) {
		/* wake at the deadline rather than up to 100 ms after it */
		u64 left_ms = ((deadline < next_snap ? deadline : next_snap) - now + 999999) / 1000000;

		err = session__poll(sess, left_ms < 100 ? (int)left_ms : 100);
		if (err < 0)
			return err;
		if (err > 0)
			break;
		err = env.snapshot_every > 0 ? take_snapshot(sess, now_ns(CLOCK_MONOTONIC), &next_snap) : 0;
		if (err)
			return err;
	}
	return 0;
}

/* --snapshot-every: the intervals, the last the end's */
static u32 last_interval(void)
{
	return (env.snapshots < SNAPSHOTS_MAX ? env.snapshots : SNAPSHOTS_MAX) + 1;
}

/* --snapshot-every: FILE.1... beside FILE, each interval's allocations and the live set at its
 * end (the last, the end's); 0 or -errno (said) */
static int write_snapshots(struct profile *p)
{
	u32 last = last_interval();
	struct profile_meta m = p->meta;
	u64 end = m.start_mono_ns + m.duration_ns;
	struct memory_view_saved view;
	char path[PATH_MAX];
	int err = 0;

	for (u32 k = 1; k <= last && !err; k++) {
		/* each file's time is its interval's */
		u64 from = k > 1 ? env.snapshot_ns[k - 2] : m.start_mono_ns;
		u64 to = k < last ? env.snapshot_ns[k - 1] : end;

		if (snprintf(path, sizeof(path), "%s.%u", env.output, k) >= (int)sizeof(path)) {
			err = fail(-ENAMETOOLONG, "cannot write snapshot %u: '%s.%u' is too long", k,
				   env.output, k);
			break;
		}
		err = memory_snapshot__view(p, k, last, &view);
		if (err) {
			err = fail(err, "cannot write '%s': %s", path, strerror(-err));
			break;
		}
		p->meta.start_mono_ns = from;
		p->meta.start_realtime_ns = m.start_realtime_ns + (from - m.start_mono_ns);
		p->meta.duration_ns = to > from ? to - from : 0;
		err = profile__write(p, path);
		memory_snapshot__restore(p, &view);
	}
	p->meta = m;
	if (!err)
		note("%u snapshot%s written: '%s.1' to '%s.%u'", last, last > 1 ? "s" : "", env.output,
		     env.output, last);
	return err;
}

/* what the written profile holds, and every loss, said */
static void say_recorded(struct session *sess, const struct profile *p)
{
	struct sideband_id_stats ids;

	if (p->meta.alloc_period) {
		char b[32];

		note("%" PRIu64 " sampled allocations (%s asked) in %zu slots, %" PRIu64 " dropped; "
		     "wrote '%s'", p->stats.mem_sampled, memory__bytes(p->stats.mem_bytes, b, sizeof(b)),
		     p->nr_samples, p->stats.mem_full + p->stats.mem_live_full, env.output);
	} else {
		note("%" PRIu64 " samples in %zu slots, %" PRIu64 " dropped (period mode %s); wrote '%s'",
		     profile__total_samples(p), p->nr_samples, p->stats.dropped_full, p->meta.period_mode,
		     env.output);
	}
	if (p->stats.dropped_full)
		warning("%" PRIu64 " samples were dropped: the sample map was full (raise --map-entries)",
			p->stats.dropped_full);
	if (p->stats.sideband_lost) {
		u32 resyncs, unrecovered;

		session__sideband_recovery(sess, &resyncs, &unrecovered);
		warning("the kernel lost %" PRIu64 " mmap/comm records: the live processes were read "
			"again from /proc (%u times); %u sampled processes had exited before and may "
			"be [unknown]", p->stats.sideband_lost, resyncs, unrecovered);
	}
	session__sideband_ids(sess, &ids);
	debug("build-ids: %" PRIu64 " objects read in %.1f ms", ids.read, ids.read_ns / 1e6);
	if (ids.missed)
		note("%" PRIu64 " mapped objects have no build-id: their processes had "
			"exited and the files were deleted or replaced before they were read (-v says "
			"which)", ids.missed);
	if (p->stats.rearm_lost)
		warning("%" PRIu64 " randomized re-arms were lost", p->stats.rearm_lost);
	report_rearm_cost(p, session__nr_cpus(sess));
	if (p->stats.pids_full || p->stats.exec_full)
		warning("process tables were full: %" PRIu64 " forks not followed, %" PRIu64
			" execs not told apart", p->stats.pids_full, p->stats.exec_full);
}

/* the command's exit status, record's as perf passes it on unless record ended it; what
 * went wrong with it said */
static int command_status(struct session *sess)
{
	int child_status = session__child_status(sess);

	/* Ctrl-C at a terminal reaches the command too: it died of the signal that ended the
	 * recording, which is record ending it */
	if (child_status > 0 && interrupts && WIFSIGNALED(child_status) &&
	    (WTERMSIG(child_status) == SIGINT || WTERMSIG(child_status) == SIGTERM ||
	     WTERMSIG(child_status) == SIGHUP || WTERMSIG(child_status) == SIGQUIT))
		child_status = 0;
	if (child_status > 0 && WIFEXITED(child_status) && WEXITSTATUS(child_status))
		warning("'%s' exited with status %d", env.so.argv[0], WEXITSTATUS(child_status));
	else if (child_status > 0 && WIFSIGNALED(child_status) && WTERMSIG(child_status) != SIGTERM &&
		 !session__command_killed(sess))
		warning("'%s' was killed by signal %d", env.so.argv[0], WTERMSIG(child_status));
	if (child_status > 0 && !session__command_stopped(sess)) {
		if (WIFEXITED(child_status))
			return WEXITSTATUS(child_status);
		if (WIFSIGNALED(child_status))
			return 128 + WTERMSIG(child_status);
	}
	return 0;
}

int cmd_record(int argc, char **argv)
{
	struct outfile out = { .fd = -1 };
	struct session *sess = NULL;
	struct memory_view_saved view;
	bool viewing = false;
	struct profile *p = NULL;
	int err, status = 0;

	err = parse_args(argc, argv);
	if (err)
		return options__status(err);
	env.so.interrupts = &interrupts;
	err = session__new(&env.so, &sess);
	if (err) {
		session__close(sess);
		return err == -EINVAL ? 2 : 1;
	}
	err = caps__check("hsbpf record");
	if (err)
		goto cleanup;
	/* fail before recording, not after: the output is opened now, with room for its head
	 * (a full disk is told in a moment, not at the end; a FIFO waits for its reader here) */
	err = outfile__open(&out, env.output, FILE_FORMAT_HEAD_MAX);
	if (err)
		goto cleanup;

	/* a closed terminal (SIGHUP) or Ctrl-\ (SIGQUIT) ends the recording as Ctrl-C does: the
	 * profile is written */
	signals__on_end(on_signal);
	err = session__open(sess);
	if (!err)
		err = session__start(sess);
	/* when sampling began: make bench-agent measures the time to it */
	if (!err)
		debug("sampling started");
	if (!err)
		err = record_until_done(sess);
	if (err)
		goto cleanup;
	/* the recording is over: what is said now may wait a moment for a slow reader */
	stderr__grace(STDERR_GRACE_MS);
	err = session__finish(sess);
	if (err)
		goto cleanup;
	p = session__profile(sess);
	/* with snapshots, the final profile is a view of what was collected */
	if (env.snapshot_every > 0) {
		err = memory_snapshot__view(p, 0, last_interval(), &view);
		if (err) {
			error("cannot write the profile: %s", strerror(-err));
			goto cleanup;
		}
		viewing = true;
	}
	err = profile__write_out(p, &out);	/* commits or discards out */
	if (err)
		goto cleanup;
	say_recorded(sess, p);
	if (viewing) {
		memory_snapshot__restore(p, &view);
		viewing = false;
		/* the profile is written: a snapshot that cannot be is said, and fails record */
		err = write_snapshots(p);
		if (err)
			goto cleanup;
	}
	if (env.so.keep_objects)
		save_objects(sess, p);
	status = command_status(sess);
cleanup:
	if (stderr__lost())
		warning("%" PRIu64 " messages could not be written: stderr's reader was too slow",
			stderr__lost());
	outfile__discard(&out);	/* nothing left behind by a failed recording */
	free(env.snapshot_ns);
	if (viewing)
		memory_snapshot__restore(p, &view);
	session__close(sess);
	return err ? 1 : status;
}
