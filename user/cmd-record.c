// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* hsbpf record: parse options, set up the target, the sampler and the sideband, wait, and
 * write the profile. All the work is in the library modules. */
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cgroup.h"
#include "cmds.h"
#include "ksyms.h"
#include "profile.h"
#include "sampler.h"
#include "sideband.h"
#include "target.h"

#define DEFAULT_FREQ 999	/* odd, so as not to beat with millisecond timers */

static struct env {
	const char *event;
	u64 freq;
	u64 period;
	enum period_mode mode;
	bool all;
	const char *pids;
	const char *cgroup;
	const char *cpus;
	double duration;
	const char *output;
	u32 map_entries;
	u64 seed;
	bool branch_stack;
	char **argv;
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

enum { OPT_PERIOD_MODE = 256, OPT_MAP_ENTRIES, OPT_SEED };

static int parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "event", required_argument, NULL, 'e' },
		{ "freq", required_argument, NULL, 'F' },
		{ "count", required_argument, NULL, 'c' },
		{ "period-mode", required_argument, NULL, OPT_PERIOD_MODE },
		{ "all-cpus", no_argument, NULL, 'a' },
		{ "pid", required_argument, NULL, 'p' },
		{ "cgroup", required_argument, NULL, 'G' },
		{ "cpu", required_argument, NULL, 'C' },
		{ "duration", required_argument, NULL, 'd' },
		{ "output", required_argument, NULL, 'o' },
		{ "map-entries", required_argument, NULL, OPT_MAP_ENTRIES },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "branch-stack", no_argument, NULL, 'b' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	int c, targets;
	u64 v;
	char *end;

	memset(&env, 0, sizeof(env));
	env.event = "cpu-clock";
	env.output = "hsbpf.data";
	optind = 1;
	while ((c = getopt_long(argc, argv, "+e:F:c:ap:G:C:d:o:bvh", opts, NULL)) != -1) {
		switch (c) {
		case 'e':
			env.event = optarg;
			break;
		case 'F':
			if (parse_u64(optarg, &env.freq) || !env.freq)
				return fail(-EINVAL, "invalid frequency '%s'", optarg);
			break;
		case 'c':
			if (parse_u64(optarg, &env.period) || !env.period)
				return fail(-EINVAL, "invalid period '%s'", optarg);
			break;
		case OPT_PERIOD_MODE:
			if (period__parse_mode(optarg, &env.mode))
				return fail(-EINVAL, "invalid period mode '%s' (known: fixed, prime, random, "
					     "prime-random)", optarg);
			break;
		case 'a':
			env.all = true;
			break;
		case 'p':
			env.pids = optarg;
			break;
		case 'G':
			env.cgroup = optarg;
			break;
		case 'C':
			env.cpus = optarg;
			break;
		case 'd':
			env.duration = strtod(optarg, &end);
			if (*end || !(env.duration > 0))
				return fail(-EINVAL, "invalid duration '%s'", optarg);
			break;
		case 'o':
			env.output = optarg;
			break;
		case OPT_MAP_ENTRIES:
			if (parse_u64(optarg, &v) || v < 1 || v > (1u << 26))
				return fail(-EINVAL, "invalid --map-entries '%s' (1 to 67108864)", optarg);
			env.map_entries = v;
			break;
		case OPT_SEED:
			if (parse_u64(optarg, &env.seed))
				return fail(-EINVAL, "invalid seed '%s'", optarg);
			break;
		case 'b':
			env.branch_stack = true;
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
		env.argv = &argv[optind];
	targets = !!env.all + !!env.pids + !!env.cgroup + !!env.argv;
	if (targets == 0)
		return fail(-EINVAL, "nothing to record: give a command, -p, -a or --cgroup");
	if (targets > 1 && !(env.cgroup && env.all && targets == 2))
		return fail(-EINVAL, "choose one target: a command, -p, -a or --cgroup");
	if (env.freq && env.period)
		return fail(-EINVAL, "-F and -c exclude each other");
	return 0;
}

/* fail before recording, not after: a temporary file next to the output */
static int check_output(const char *path)
{
	char *tmp;
	int fd, err = 0;

	if (asprintf(&tmp, "%s.tmp.XXXXXX", path) < 0)
		return -ENOMEM;
	fd = mkstemp(tmp);
	if (fd < 0) {
		err = -errno;
		error("cannot create '%s': %s", path, strerror(-err));
	} else {
		close(fd);
		unlink(tmp);
	}
	free(tmp);
	return err;
}

static int max_sample_rate(u64 *rate)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "re");
	unsigned long long v;
	int n;

	if (!f)
		return -errno;
	n = fscanf(f, "%llu", &v);
	fclose(f);
	if (n != 1)
		return -EINVAL;
	*rate = v;
	return 0;
}

/* keep only the process history the samples need: their pids and their fork ancestors, and
 * the targets themselves (annotate and eval look at a target's objects even without samples) */
static void prune_sideband(struct profile *p, const u32 *targets, int nr_targets)
{
	size_t cap = 0, nr = 0, j;
	u32 *keep = NULL;
	bool grew = true;

	for (int i = 0; i < nr_targets; i++) {
		if (array__reserve((void **)&keep, &cap, nr + 1, sizeof(*keep)))
			goto out;
		keep[nr++] = targets[i];
	}
	for (size_t i = 0; i < p->nr_samples; i++) {
		if (array__reserve((void **)&keep, &cap, nr + 1, sizeof(*keep)))
			goto out;
		keep[nr++] = p->samples[i].pid;
	}
	while (grew) {
		grew = false;
		for (size_t i = 0; i < p->nr_forks; i++) {
			bool child = false, parent = false;

			for (j = 0; j < nr; j++) {
				child |= keep[j] == p->forks[i].pid;
				parent |= keep[j] == p->forks[i].ppid;
			}
			if (child && !parent) {
				if (array__reserve((void **)&keep, &cap, nr + 1, sizeof(*keep)))
					goto out;
				keep[nr++] = p->forks[i].ppid;
				grew = true;
			}
		}
	}
#define PRUNE(arr, n)								\
	do {									\
		size_t o = 0;							\
		for (size_t i = 0; i < p->n; i++) {				\
			for (j = 0; j < nr && keep[j] != p->arr[i].pid; j++)	\
				;						\
			if (j < nr)						\
				p->arr[o++] = p->arr[i];			\
		}								\
		p->n = o;							\
	} while (0)
	PRUNE(mappings, nr_mappings);
	PRUNE(comms, nr_comms);
	PRUNE(forks, nr_forks);
#undef PRUNE
out:
	free(keep);
}

static void save_cgroups(struct profile *p, struct cgroup_names *names)
{
	cgroup_names__scan(names);	/* the cgroups made since the last scan */
	for (size_t i = 0; i < p->nr_samples; i++) {
		u64 id = p->samples[i].cgroup_id;
		char path[PATH_MAX];
		bool seen = false;

		for (size_t j = 0; j < p->nr_cgroups && !seen; j++)
			seen = p->cgroups[j].id == id;
		if (seen || !id)
			continue;
		if (cgroup_names__find(names, id))
			snprintf(path, sizeof(path), "%s", cgroup_names__find(names, id));
		else
			snprintf(path, sizeof(path), "[removed cgroup %" PRIu64 "]", id);
		if (profile__add_cgroup(p, id, path))
			return;
	}
}

static void fill_meta(struct profile *p, const struct event_spec *ev, u64 period, int nr_cpus)
{
	struct profile_meta *m = &p->meta;
	struct utsname u;

	snprintf(m->version, sizeof(m->version), "hsbpf %s", HSBPF_VERSION);
	snprintf(m->event, sizeof(m->event), "%s", ev->name);
	m->event_type = ev->type;
	m->event_config = ev->config;
	m->precise = ev->precise;
	m->period = period;
	m->freq = ev->is_clock ? 0 : env.freq;
	snprintf(m->period_mode, sizeof(m->period_mode), "%s", period__mode_name(env.mode));
	snprintf(m->unit, sizeof(m->unit), "%s", ev->is_clock ? "ns" : "events");
	if (env.argv) {
		size_t off = snprintf(m->target, sizeof(m->target), "command:");

		for (char **a = env.argv; *a && off < sizeof(m->target); a++)
			off += snprintf(m->target + off, sizeof(m->target) - off, " %s", *a);
	} else if (env.pids) {
		snprintf(m->target, sizeof(m->target), "pid: %s", env.pids);
	} else if (env.cgroup) {
		snprintf(m->target, sizeof(m->target), "cgroup: %s", env.cgroup);
	} else {
		snprintf(m->target, sizeof(m->target), "all");
	}
	if (!uname(&u)) {
		snprintf(m->host, sizeof(m->host), "%.63s", u.nodename);
		snprintf(m->kernel, sizeof(m->kernel), "%.63s", u.release);
	}
	m->nr_cpus = nr_cpus;
}

static bool pids_alive(const u32 *pids, int nr)
{
	for (int i = 0; i < nr; i++)
		if (!kill(pids[i], 0) || errno != ESRCH)
			return true;
	return false;
}

/* -p may name a thread: the filter works on processes */
static void pids_to_tgids(u32 *pids, int nr)
{
	for (int i = 0; i < nr; i++) {
		char path[64], line[128];
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%u/status", pids[i]);
		f = fopen(path, "re");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			unsigned tgid;

			if (sscanf(line, "Tgid: %u", &tgid) == 1) {
				if (tgid != pids[i])
					debug("pid %u is a thread of %u: recording the process", pids[i], tgid);
				pids[i] = tgid;
				break;
			}
		}
		fclose(f);
	}
}

int cmd_record(int argc, char **argv)
{
	struct sampler_opts so = { .cgroup_fd = -1 };
	struct command cmd = { .pid = -1, .gate = -1, .status = -1 };
	struct sigaction sa = { .sa_handler = on_signal };
	struct sampler *sampler = NULL;
	struct sideband *sb = NULL;
	struct profile *p = NULL;
	struct event_spec ev;
	u32 *pids = NULL;
	int nr_pids = 0, *cpus = NULL, nr_cpus = 0, err, child_status = -1;
	char cgpath[PATH_MAX];
	u64 cgid, period, start, deadline, max_rate = 0;
	u32 command_pid = 0;
	size_t seen_comms = 0, seen_forks = 0;
	struct cgroup_names cgroups = {};
	u64 next_scan = 0;
	struct stat st;

	err = parse_args(argc, argv);
	if (err)
		return usage(NULL);
	if (event__parse(env.event, &ev))
		return 2;
	if (env.branch_stack) {
		if (ev.type == PERF_TYPE_SOFTWARE)
			return fail(2, "-b needs a hardware event: branch stacks come from the PMU's LBR");
		ev.branch_stack = true;
	}
	if (ev.is_clock) {
		period = env.period ? env.period : 1000000000ull / (env.freq ? env.freq : DEFAULT_FREQ);
		if (env.freq > 1000000000ull)
			return fail(2, "invalid frequency %" PRIu64 " Hz", env.freq);
		if (period < 10000)
			return fail(2, "period %" PRIu64 " ns is below the kernel's 10 us minimum for "
				     "clock events", period);
	} else {
		period = env.period;
		if (!period && !env.freq)
			env.freq = DEFAULT_FREQ;
		if (env.freq && env.mode != PERIOD_FIXED)
			return fail(2, "--period-mode %s needs a fixed period (-c) with hardware events",
				     period__mode_name(env.mode));
	}
	if (!max_sample_rate(&max_rate)) {
		u64 rate = ev.is_clock ? 1000000000ull / period : env.freq;

		if (rate > max_rate)
			return fail(2, "%" PRIu64 " samples per second exceeds the kernel's limit of %"
				     PRIu64 " (kernel.perf_event_max_sample_rate)", rate, max_rate);
	}
	if (env.pids) {
		if (target__parse_pids(env.pids, &pids, &nr_pids))
			return 2;
		err = target__check_pids(pids, nr_pids);
		if (err)
			goto cleanup;
		pids_to_tgids(pids, nr_pids);
	}
	if (!stat(env.output, &st) && S_ISDIR(st.st_mode)) {
		err = -EISDIR;
		error("cannot write '%s': it is a directory", env.output);
		goto cleanup;
	}
	err = check_output(env.output);
	if (err)
		goto cleanup;
	err = env.cpus ? cpus__parse(env.cpus, &cpus, &nr_cpus) : cpus__online(&cpus, &nr_cpus);
	if (err) {
		error("invalid CPU list '%s'", env.cpus ? env.cpus : "(online)");
		goto cleanup;
	}

	p = profile__new();
	if (!p) {
		err = -ENOMEM;
		goto cleanup;
	}
	so.ev = ev;
	so.period = ev.is_clock || env.period ? period : 0;
	so.freq = ev.is_clock ? 0 : env.freq;
	so.mode = env.mode;
	so.cpus = cpus;
	so.nr_cpus = nr_cpus;
	so.filter_pids = env.pids || env.argv;
	so.max_entries = env.map_entries;
	so.seed = env.seed;
	if (env.cgroup) {
		err = cgroup__open(env.cgroup, cgpath, sizeof(cgpath), &cgid, &so.cgroup_fd);
		if (err)
			goto cleanup;
	}

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (env.argv) {
		err = command__spawn(env.argv, &cmd);
		if (err) {
			error("cannot start '%s': %s", env.argv[0], strerror(-err));
			goto cleanup;
		}
	}

	sb = sideband__open(cpus, nr_cpus, p);
	if (!sb) {
		err = -errno;
		goto cleanup;
	}
	err = sideband__enable(sb);
	if (err)
		goto cleanup;
	if (env.pids) {
		for (int i = 0; i < nr_pids; i++)
			procfs__synthesize(p, pids[i]);
	} else if (!env.argv) {
		err = procfs__synthesize_all(p);
		if (err)
			goto cleanup;
	}

	sampler = sampler__open(&so);
	if (!sampler) {
		err = -errno;
		goto cleanup;
	}
	for (int i = 0; i < nr_pids && !err; i++)
		err = sampler__add_pid(sampler, pids[i], false);
	if (!err && env.argv)
		err = sampler__add_pid(sampler, cmd.pid, true);
	if (err)
		goto cleanup;
	err = sampler__attach(sampler);
	if (err)
		goto cleanup;

	start = now_ns(CLOCK_MONOTONIC);
	p->meta.start_mono_ns = start;
	p->meta.start_realtime_ns = now_ns(CLOCK_REALTIME);
	deadline = env.duration > 0 ? start + (u64)(env.duration * 1e9) : UINT64_MAX;
	command_pid = cmd.pid;
	if (env.argv) {
		err = command__start(&cmd, env.argv[0]);
		if (err)
			goto cleanup;
	}
	if (verbose || isatty(STDERR_FILENO))
		fprintf(stderr, "hsbpf: recording %s on %d CPUs%s\n", ev.name, nr_cpus,
			env.argv ? "" : " (Ctrl-C to stop)");

	while (!exiting && now_ns(CLOCK_MONOTONIC) < deadline) {
		struct epoll_event e;

		epoll_wait(sideband__fd(sb), &e, 1, 100);
		if (sideband__drain(sb)) {
			err = -EIO;
			goto cleanup;
		}
		/* processes in their own PID namespace: read while they are alive */
		profile__fill_nspids(p, seen_comms, seen_forks);
		seen_comms = p->nr_comms;
		seen_forks = p->nr_forks;
		/* cgroup names, once a second: a container gone by the end keeps its name */
		if (now_ns(CLOCK_MONOTONIC) >= next_scan) {
			cgroup_names__scan(&cgroups);
			next_scan = now_ns(CLOCK_MONOTONIC) + 1000000000ull;
		}
		if (env.argv && waitpid(cmd.pid, &child_status, WNOHANG) == cmd.pid) {
			cmd.pid = -1;
			break;
		}
		if (env.pids && !pids_alive(pids, nr_pids)) {
			debug("every target process has exited");
			break;
		}
	}
	sampler__stop(sampler);
	p->meta.duration_ns = now_ns(CLOCK_MONOTONIC) - start;
	if (env.argv && cmd.pid > 0) {
		/* stopped by -d or a signal: the command goes too, as with perf */
		kill(cmd.pid, SIGTERM);
		waitpid(cmd.pid, &child_status, 0);
		cmd.pid = -1;
	}
	sideband__drain(sb);
	profile__fill_nspids(p, seen_comms, seen_forks);
	p->stats.sideband_lost = sideband__lost(sb);

	err = sampler__collect(sampler, p);
	if (err)
		goto cleanup;
	fill_meta(p, &ev, period, nr_cpus);
	if (env.argv)
		prune_sideband(p, &command_pid, 1);
	else if (!env.all && !env.cgroup)
		prune_sideband(p, pids, nr_pids);
	profile__fill_build_ids(p);
	ksyms__save_for_samples(p, "/proc/kallsyms");
	save_cgroups(p, &cgroups);
	err = profile__write(p, env.output);
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
	if (child_status > 0 && WIFEXITED(child_status) && WEXITSTATUS(child_status))
		warning("'%s' exited with status %d", env.argv[0], WEXITSTATUS(child_status));
	else if (child_status > 0 && WIFSIGNALED(child_status) && WTERMSIG(child_status) != SIGTERM)
		warning("'%s' was killed by signal %d", env.argv[0], WTERMSIG(child_status));
cleanup:
	if (cmd.pid > 0)
		command__abort(&cmd);
	sampler__destroy(sampler);
	sideband__close(sb);
	cgroup_names__free(&cgroups);
	if (so.cgroup_fd >= 0)
		close(so.cgroup_fd);
	profile__free(p);
	free(pids);
	free(cpus);
	return err ? 1 : 0;
}
