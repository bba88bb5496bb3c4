// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* hsbpf record: parse options, run a session (user/session.c) until the command ends, -d
 * passes or a signal comes, and write the profile. */
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cmds.h"
#include "container.h"
#include "profile.h"
#include "session.h"

static struct env {
	struct session_opts so;
	double duration;
	const char *output;
} env;

static volatile sig_atomic_t exiting;

static void on_signal(int sig)
{
	(void)sig;
	exiting = 1;
}

static const char usage_text[] =
	"usage: hsbpf record [-e EVENT] [-F HZ | -c PERIOD] [--period-mode MODE]\n"
	"                    [-a | -p PID[,PID...] | --cgroup PATH] [-C CPUS] [-d SECONDS]\n"
	"                    [-o FILE] [-- COMMAND ARGS...]\n"
	"\n"
	"  -e, --event EVENT      cpu-clock (default), task-clock, cycles, instructions,\n"
	"                         branches, branch-misses, rNNNN; modifiers :p :pp :ppp :u :k;\n"
	"                         lbr: taken branches with their last-branch-record stacks\n"
	"  -b, --branch-stack     also record branch stacks (LBR) with a hardware event\n"
	"  -F, --freq HZ          samples per second per CPU (default 999)\n"
	"  -c, --count PERIOD     fixed period: ns for clock events, events otherwise\n"
	"      --period-mode M    fixed, prime, random (+ up to 1/8 jitter), prime-random\n"
	"  -a, --all-cpus         the whole machine\n"
	"  -p, --pid PIDS         running processes, all their threads and later children\n"
	"  -G, --cgroup PATH      one cgroup v2 (and its descendants), filtered in the kernel\n"
	"  -C, --cpu CPUS         only these CPUs, e.g. 0-3,6\n"
	"  -d, --duration SEC     stop after SEC seconds (a command still running is sent SIGTERM)\n"
	"  -o, --output FILE      profile to write (default hsbpf.data)\n"
	"      --map-entries N    sample map slots (default 262144)\n"
	"      --seed N           seed for randomized periods\n"
	"  -v, --verbose          more messages (twice: libbpf debug output)\n";

static int usage(const char *msg)
{
	if (msg)
		error("%s", msg);
	fputs(usage_text, stderr);
	return 2;
}

static int parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
		SESSION_LONG_OPTIONS,
		{ "duration", required_argument, NULL, 'd' },
		{ "output", required_argument, NULL, 'o' },
		{ "branch-stack", no_argument, NULL, 'b' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	int c, targets, err;
	char *end;

	memset(&env, 0, sizeof(env));
	env.so.event = "cpu-clock";
	env.output = "hsbpf.data";
	optind = 1;
	while ((c = getopt_long(argc, argv, "+" SESSION_SHORT_OPTIONS "d:o:bvh", opts, NULL)) != -1) {
		err = session_opts__parse(&env.so, c, optarg);
		if (err < 0)
			return err;
		if (err)
			continue;
		switch (c) {
		case 'd':
			env.duration = strtod(optarg, &end);
			if (*end || !(env.duration > 0))
				return fail(-EINVAL, "invalid duration '%s'", optarg);
			break;
		case 'o':
			env.output = optarg;
			break;
		case 'b':
			env.so.branch_stack = true;
			break;
		case 'v':
			verbose++;
			break;
		case 'h':
			fputs(usage_text, stdout);
			exit(0);
		default:
			return -EINVAL;
		}
	}
	if (optind < argc)
		env.so.argv = &argv[optind];
	targets = !!env.so.all + !!env.so.pids + !!env.so.cgroup + !!env.so.argv;
	if (targets == 0)
		return fail(-EINVAL, "nothing to record: give a command, -p, -a or --cgroup");
	if (targets > 1 && !(env.so.cgroup && env.so.all && targets == 2))
		return fail(-EINVAL, "choose one target: a command, -p, -a or --cgroup");
	if (env.so.freq && env.so.period)
		return fail(-EINVAL, "-F and -c exclude each other");
	return 0;
}

int cmd_record(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct outfile out = { .fd = -1 };
	struct session *sess = NULL;
	struct profile *p;
	u64 deadline;
	int err, child_status;

	err = parse_args(argc, argv);
	if (err)
		return usage(NULL);
	err = session__new(&env.so, &sess);
	if (err) {
		session__close(sess);
		return err == -EINVAL ? 2 : 1;
	}
	/* fail before recording, not after: the output is opened now, with room for its head
	 * (a full disk is told in a moment, not at the end; a FIFO waits for its reader here) */
	err = outfile__open(&out, env.output, CONTAINER_HEAD_MAX);
	if (err)
		goto cleanup;

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	err = session__open(sess);
	if (err)
		goto cleanup;
	err = session__start(sess);
	if (err)
		goto cleanup;
	deadline = env.duration > 0 ? now_ns(CLOCK_MONOTONIC) + (u64)(env.duration * 1e9) : UINT64_MAX;
	if (verbose || isatty(STDERR_FILENO))
		fprintf(stderr, "hsbpf: recording %s on %d CPUs%s\n", session__event_name(sess),
			session__nr_cpus(sess), env.so.argv ? "" : " (Ctrl-C to stop)");
	while (!exiting && now_ns(CLOCK_MONOTONIC) < deadline) {
		err = session__poll(sess, 100);
		if (err < 0)
			goto cleanup;
		if (err > 0)
			break;
	}
	err = session__finish(sess);
	if (err)
		goto cleanup;
	p = session__profile(sess);
	err = profile__write_out(p, &out);	/* commits or discards out */
	if (err)
		goto cleanup;

	fprintf(stderr, "hsbpf: %" PRIu64 " samples in %zu slots, %" PRIu64 " dropped; wrote '%s'\n",
		profile__total_samples(p), p->nr_samples, p->stats.dropped_full, env.output);
	if (p->stats.dropped_full)
		warning("%" PRIu64 " samples were dropped: the sample map was full (raise --map-entries)",
			p->stats.dropped_full);
	if (p->stats.sideband_lost)
		warning("the kernel lost %" PRIu64 " mmap/comm records: some samples may be [unknown]",
			p->stats.sideband_lost);
	if (p->stats.rearm_lost)
		warning("%" PRIu64 " randomized re-arms were lost", p->stats.rearm_lost);
	if (p->stats.pids_full || p->stats.exec_full)
		warning("process tables were full: %" PRIu64 " forks not followed, %" PRIu64
			" execs not told apart", p->stats.pids_full, p->stats.exec_full);
	child_status = session__child_status(sess);
	if (child_status > 0 && WIFEXITED(child_status) && WEXITSTATUS(child_status))
		warning("'%s' exited with status %d", env.so.argv[0], WEXITSTATUS(child_status));
	else if (child_status > 0 && WIFSIGNALED(child_status) && WTERMSIG(child_status) != SIGTERM)
		warning("'%s' was killed by signal %d", env.so.argv[0], WTERMSIG(child_status));
cleanup:
	outfile__discard(&out);	/* nothing left behind by a failed recording */
	session__close(sess);
	return err ? 1 : 0;
}
