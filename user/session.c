// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* A sampling session: the set-up, the wait and the gathering that record and top share. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cgroup.h"
#include "ksyms.h"
#include "sampler.h"
#include "session.h"
#include "procfs.h"
#include "sideband.h"
#include "target.h"

#define DEFAULT_FREQ 999	/* odd, so as not to beat with millisecond timers */

struct session {
	struct session_opts opts;
	struct event_spec ev;
	u64 period;
	struct sampler_opts so;
	struct sampler *sampler;
	struct sideband *sb;
	struct profile *p;
	struct command cmd;
	u32 command_pid;
	int child_status;
	bool command_killed;
	u32 *pids;
	int nr_pids;
	int *cpus, nr_cpus;
	struct cgroup_names cgroups;
	u64 start, next_scan;
	size_t seen_comms, seen_forks;
};

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

static void fill_meta(struct session *s)
{
	const struct session_opts *o = &s->opts;
	const struct event_spec *ev = &s->ev;
	struct profile_meta *m = &s->p->meta;
	struct utsname u;

	snprintf(m->version, sizeof(m->version), "hsbpf %s", HSBPF_VERSION);
	snprintf(m->event, sizeof(m->event), "%s", ev->name);
	m->event_type = ev->type;
	m->event_config = ev->config;
	m->precise = ev->precise;
	m->period = s->period;
	m->freq = ev->is_clock ? 0 : o->freq;
	snprintf(m->period_mode, sizeof(m->period_mode), "%s", period__mode_name(o->mode));
	snprintf(m->unit, sizeof(m->unit), "%s", ev->is_clock ? "ns" : "events");
	if (o->argv) {
		size_t off = snprintf(m->target, sizeof(m->target), "command:");

		for (char **a = o->argv; *a && off < sizeof(m->target); a++)
			off += snprintf(m->target + off, sizeof(m->target) - off, " %s", *a);
	} else if (o->pids) {
		snprintf(m->target, sizeof(m->target), "pid: %s", o->pids);
	} else if (o->cgroup) {
		snprintf(m->target, sizeof(m->target), "cgroup: %s", o->cgroup);
	} else {
		snprintf(m->target, sizeof(m->target), "all");
	}
	if (!uname(&u)) {
		snprintf(m->host, sizeof(m->host), "%.63s", u.nodename);
		snprintf(m->kernel, sizeof(m->kernel), "%.63s", u.release);
	}
	m->nr_cpus = s->nr_cpus;
}

static bool pids_alive(const u32 *pids, int nr)
{
	for (int i = 0; i < nr; i++)
		if (procfs__alive(pids[i]))
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

/* the event, its period, the pid and CPU lists: usage errors (-EINVAL), and CPUs that are
 * not online (-ENODEV) */
static int check_event(struct session *s)
{
	struct session_opts *o = &s->opts;
	u64 max_rate = 0;

	if (event__parse(o->event ? o->event : "cpu-clock", &s->ev))
		return -EINVAL;
	if (o->branch_stack) {
		if (s->ev.type == PERF_TYPE_SOFTWARE)
			return fail(-EINVAL, "-b needs a hardware event: branch stacks come from the PMU's LBR");
		s->ev.branch_stack = true;
	}
	if (s->ev.is_clock) {
		s->period = o->period ? o->period : 1000000000ull / (o->freq ? o->freq : DEFAULT_FREQ);
		if (o->freq > 1000000000ull)
			return fail(-EINVAL, "invalid frequency %" PRIu64 " Hz", o->freq);
		if (s->period < 10000)
			return fail(-EINVAL, "period %" PRIu64 " ns is below the kernel's 10 us minimum "
				    "for clock events", s->period);
	} else {
		s->period = o->period;
		if (!s->period && !o->freq)
			o->freq = DEFAULT_FREQ;
		if (o->freq && o->mode != PERIOD_FIXED)
			return fail(-EINVAL, "--period-mode %s needs a fixed period (-c) with hardware "
				    "events", period__mode_name(o->mode));
	}
	if (!max_sample_rate(&max_rate)) {
		u64 rate = s->ev.is_clock ? 1000000000ull / s->period : o->freq;

		if (rate > max_rate)
			return fail(-EINVAL, "%" PRIu64 " samples per second exceeds the kernel's limit "
				    "of %" PRIu64 " (kernel.perf_event_max_sample_rate)", rate, max_rate);
	}
	if (o->pids && target__parse_pids(o->pids, &s->pids, &s->nr_pids))
		return -EINVAL;
	/* -C before anything opens: a CPU that is not there is said as such */
	if (o->cpus) {
		if (cpus__parse(o->cpus, &s->cpus, &s->nr_cpus))
			return -EINVAL;
		return cpus__check_machine(s->cpus, s->nr_cpus);
	}
	return 0;
}

int session_opts__parse(struct session_opts *o, int c, const char *arg)
{
	u64 v;

	switch (c) {
	case 'e':
		o->event = arg;
		break;
	case 'F':
		if (parse_u64(arg, &o->freq) || !o->freq)
			return fail(-EINVAL, "invalid frequency '%s'", arg);
		break;
	case 'c':
		if (parse_u64(arg, &o->period) || !o->period || o->period > PERIOD_MAX)
			return fail(-EINVAL, "invalid period '%s' (1 to %llu)", arg, PERIOD_MAX);
		break;
	case SESSION_OPT_PERIOD_MODE:
		if (period__parse_mode(arg, &o->mode))
			return fail(-EINVAL, "invalid period mode '%s' (known: fixed, prime, random, "
				    "prime-random)", arg);
		break;
	case 'a':
		o->all = true;
		break;
	case 'p':
		o->pids = arg;
		break;
	case 'G':
		o->cgroup = arg;
		break;
	case 'C':
		o->cpus = arg;
		break;
	case SESSION_OPT_MAP_ENTRIES:
		if (parse_u64(arg, &v) || v < 1 || v > (1u << 26))
			return fail(-EINVAL, "invalid --map-entries '%s' (1 to 67108864)", arg);
		o->map_entries = v;
		break;
	case SESSION_OPT_SEED:
		if (parse_u64(arg, &o->seed))
			return fail(-EINVAL, "invalid seed '%s'", arg);
		break;
	default:
		return 0;
	}
	return 1;
}

int session__new(const struct session_opts *opts, struct session **out)
{
	struct session *s = calloc(1, sizeof(*s));

	*out = s;
	if (!s)
		return -ENOMEM;
	s->opts = *opts;
	s->cmd = (struct command){ .pid = -1, .gate = -1, .status = -1 };
	s->child_status = -1;
	s->so.cgroup_fd = -1;
	return check_event(s);
}

int session__open(struct session *s)
{
	struct session_opts *o = &s->opts;
	char cgpath[PATH_MAX];
	u64 cgid;
	int err;

	if (o->pids) {
		err = target__check_pids(s->pids, s->nr_pids);
		if (err)
			return err;
		pids_to_tgids(s->pids, s->nr_pids);
	}
	if (!o->cpus) {
		err = cpus__online(&s->cpus, &s->nr_cpus);
		if (err)
			return fail(err, "cannot read the online CPUs: %s", strerror(-err));
	}
	s->p = profile__new();
	if (!s->p)
		return -ENOMEM;
	s->so.ev = s->ev;
	s->so.period = s->ev.is_clock || o->period ? s->period : 0;
	s->so.freq = s->ev.is_clock ? 0 : o->freq;
	s->so.mode = o->mode;
	s->so.cpus = s->cpus;
	s->so.nr_cpus = s->nr_cpus;
	s->so.filter_pids = o->pids || o->argv;
	s->so.max_entries = o->map_entries;
	s->so.seed = o->seed;
	s->so.live = o->live;
	if (o->cgroup) {
		err = cgroup__open(o->cgroup, cgpath, sizeof(cgpath), &cgid, &s->so.cgroup_fd);
		if (err)
			return err;
	}
	if (o->argv) {
		err = command__spawn(o->argv, !o->no_kill_with_parent, &s->cmd);
		if (err) {
			error("cannot start '%s': %s", o->argv[0], strerror(-err));
			return err;
		}
	}
	s->sb = sideband__open(s->cpus, s->nr_cpus, s->p);
	if (!s->sb)
		return -errno;
	err = sideband__enable(s->sb);
	if (err)
		return err;
	if (o->pids) {
		for (int i = 0; i < s->nr_pids; i++)
			procfs__synthesize(s->p, s->pids[i]);
	} else if (!o->argv) {
		err = procfs__synthesize_all(s->p);
		if (err)
			return err;
	}
	s->sampler = sampler__open(&s->so);
	if (!s->sampler)
		return -errno;
	for (int i = 0; i < s->nr_pids && !err; i++)
		err = sampler__add_pid(s->sampler, s->pids[i], false);
	if (!err && o->argv)
		err = sampler__add_pid(s->sampler, s->cmd.pid, true);
	return err;
}

int session__start(struct session *s)
{
	int err = sampler__attach(s->sampler);

	if (err)
		return err;
	s->start = now_ns(CLOCK_MONOTONIC);
	s->p->meta.start_mono_ns = s->start;
	s->p->meta.start_realtime_ns = now_ns(CLOCK_REALTIME);
	s->command_pid = s->cmd.pid;
	if (s->opts.argv)
		err = command__start(&s->cmd, s->opts.argv[0]);
	return err;
}

int session__poll(struct session *s, int timeout_ms)
{
	struct epoll_event e;

	epoll_wait(sideband__fd(s->sb), &e, 1, timeout_ms);
	if (sideband__drain(s->sb))
		return -EIO;
	/* processes in their own PID namespace: read while they are alive */
	procfs__fill_nspids(s->p, s->seen_comms, s->seen_forks);
	s->seen_comms = s->p->nr_comms;
	s->seen_forks = s->p->nr_forks;
	/* cgroup names, once a second: a container gone by the end keeps its name */
	if (now_ns(CLOCK_MONOTONIC) >= s->next_scan) {
		cgroup_names__scan(&s->cgroups);
		s->next_scan = now_ns(CLOCK_MONOTONIC) + 1000000000ull;
	}
	if (s->opts.argv && waitpid(s->cmd.pid, &s->child_status, WNOHANG) == s->cmd.pid) {
		s->cmd.pid = -1;
		return 1;
	}
	if (s->opts.pids && !pids_alive(s->pids, s->nr_pids)) {
		debug("every target process has exited");
		return 1;
	}
	return 0;
}

#define SAY_AFTER_NS 500000000ull	/* a command that takes longer to exit is waited for aloud */

/* stopped by -d or a signal: the command goes too, as with perf; SIGKILL if it will not go,
 * and never left running behind */
static void stop_command(struct session *s)
{
	sig_atomic_t seen = s->opts.interrupts ? *s->opts.interrupts : 0;
	u64 start = now_ns(CLOCK_MONOTONIC), waited;
	pid_t pid = s->cmd.pid;
	bool said = false, asked = false;

	kill(pid, SIGTERM);
	for (;;) {
		pid_t r = waitpid(pid, &s->child_status, WNOHANG);

		if (r == pid || (r < 0 && errno != EINTR))
			goto out;
		waited = now_ns(CLOCK_MONOTONIC) - start;
		asked = s->opts.interrupts && *s->opts.interrupts != seen;
		if (asked || waited >= SESSION_KILL_AFTER * 1000000000ull)
			break;
		if (!said && waited >= SAY_AFTER_NS) {
			fprintf(stderr, "hsbpf: waiting for '%s' (pid %d) to exit after SIGTERM; SIGKILL in "
				"%d s, or at once on Ctrl-C\n", s->opts.argv[0], pid, SESSION_KILL_AFTER);
			said = true;
		}
		nanosleep(&(struct timespec){ .tv_nsec = 20000000 }, NULL);
	}
	if (asked)
		warning("'%s' (pid %d) had not exited on SIGTERM: killed it with SIGKILL",
			s->opts.argv[0], pid);
	else
		warning("'%s' (pid %d) did not exit within %d s of SIGTERM: killed it with SIGKILL",
			s->opts.argv[0], pid, SESSION_KILL_AFTER);
	s->command_killed = true;
	kill(pid, SIGKILL);
	while (waitpid(pid, &s->child_status, 0) < 0 && errno == EINTR)
		;
out:
	s->cmd.pid = -1;
}

int session__finish(struct session *s)
{
	struct session_opts *o = &s->opts;
	struct profile *p = s->p;
	int err;

	sampler__stop(s->sampler);
	p->meta.duration_ns = now_ns(CLOCK_MONOTONIC) - s->start;
	if (o->argv && s->cmd.pid > 0)
		stop_command(s);
	sideband__drain(s->sb);
	procfs__fill_nspids(p, s->seen_comms, s->seen_forks);
	p->stats.sideband_lost = sideband__lost(s->sb);

	err = sampler__collect(s->sampler, p);
	if (err)
		return err;
	fill_meta(s);
	if (o->argv)
		profile__keep_pids(p, &s->command_pid, 1);
	else if (!o->all && !o->cgroup)
		profile__keep_pids(p, s->pids, s->nr_pids);
	sideband__fill_build_ids(p);
	ksyms__save_for_samples(p, "/proc/kallsyms");
	save_cgroups(p, &s->cgroups);
	return 0;
}

int session__forget_exited(struct session *s, const u32 *also, size_t nr_also)
{
	size_t nr;
	u32 *keep, *all;
	int err = procfs__pids(&keep, &nr);

	if (!err) {
		all = realloc(keep, (nr + nr_also + 1) * sizeof(*keep));
		if (all) {
			keep = all;
			if (nr_also)
				memcpy(keep + nr, also, nr_also * sizeof(*keep));
			err = profile__keep_pids(s->p, keep, nr + nr_also);
		} else {
			err = -ENOMEM;
		}
	}
	free(keep);
	/* what the namespace-pid pass has not seen yet stays after what it has */
	s->seen_comms = s->p->nr_comms;
	s->seen_forks = s->p->nr_forks;
	return err;
}

struct profile *session__profile(struct session *s)
{
	return s->p;
}

int session__child_status(const struct session *s)
{
	return s->child_status;
}

bool session__command_killed(const struct session *s)
{
	return s->command_killed;
}

const char *session__event_name(const struct session *s)
{
	return s->ev.name;
}

int session__nr_cpus(const struct session *s)
{
	return s->nr_cpus;
}

u64 session__freq(const struct session *s)
{
	return s->opts.period ? 0 : s->opts.freq ? s->opts.freq : DEFAULT_FREQ;
}

u64 session__period(const struct session *s)
{
	return s->period;
}

struct sampler *session__sampler(struct session *s)
{
	return s->sampler;
}

struct cgroup_names *session__cgroup_names(struct session *s)
{
	return &s->cgroups;
}

void session__close(struct session *s)
{
	if (!s)
		return;
	if (s->cmd.pid > 0)
		command__abort(&s->cmd);
	sampler__destroy(s->sampler);
	sideband__close(s->sb);
	cgroup_names__free(&s->cgroups);
	if (s->so.cgroup_fd >= 0)
		close(s->so.cgroup_fd);
	profile__free(s->p);
	free(s->pids);
	free(s->cpus);
	free(s);
}
