// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* A sampling session: the set-up, the wait and the gathering that record and top share. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
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
#include "symbols/buildid_cache.h"
#include "record/call_graph.h"
#include "record/cgroup.h"
#include "symbols/ksyms.h"
#include "record/offcpu.h"
#include "record/sampler.h"
#include "record/late_stacks.h"
#include "python/pydetect.h"
#include "python/pytrack.h"
#include "record/session.h"
#include "profile/procfs.h"
#include "symbols/jitmap.h"
#include "symbols/jvm_perfmap.h"
#include "record/sideband.h"
#include "record/target.h"
#include "record/unwind.h"
#include "record/memory.h"

#define DEFAULT_FREQ 999	/* odd, so as not to beat with millisecond timers */

/* a sideband record for the unwinder, in time order */
struct unw_event {
	u64 time_ns;
	u32 kind;		/* 0 fork, 1 exec, 2 mapping: the order of equal times */
	u32 idx;
	/* a copy: the profile's tables are pruned (session__forget_exited) while it waits */
	union {
		struct profile_fork f;
		struct profile_comm c;
		struct profile_mapping m;
	};
};

/* record --wakers, -p or a command: a process outside the target that woke one of its
 * blocks, announced by the kernel the first time it woke one in its image */
struct outside_waker {
	u32 pid;
	u64 tag;	/* its image's tag (waker_id.exec_ns): the moment it was first seen */
	u64 image;	/* ... the profile's: that image's exec record (0: before the first seen) */
	char comm[16];	/* its name then */
};

/* per poll: the outside wakers whose mappings are read at most (a few hundred us each) */
#define WAKERS_PER_ROUND 32

/* per poll: the unwinder's backlog (tables built) takes at most this, then the sideband */
#define FEED_BUDGET_NS 50000000ull

struct session {
	struct session_opts opts;
	const struct call_graph *cg;	/* opts.call_graph's mode, NULL for none */
	struct event_spec ev;
	u64 period;
	struct sampler_opts so;
	struct sampler *sampler;
	struct sideband *sb;
	struct jitmaps *jit;	/* perf map files of JIT code, read while their processes live */
	int jit_err;		/* a perf map file that could not be read as its process exited */
	struct profile *p;
	struct command cmd;
	u32 command_pid;
	int child_status;
	bool command_killed;
	bool command_stopped;	/* record ended it (-d, a signal), it did not end by itself */
	u32 *pids;
	int nr_pids;
	int *cpus, nr_cpus;
	struct cgroup_names cgroups;
	char cgroup_path[PATH_MAX];	/* --cgroup: the one opened, absolute */
	u64 start, next_scan;
	size_t seen_comms, seen_forks;
	size_t mem_forks;	/* --memory: the forks whose child has the allocator's probes */
	size_t mem_maps;	/* ... the mappings looked at for a libc without them */
	struct mem_libc *mem_libcs;	/* ... the libcs probed, for which processes */
	size_t nr_mem_libcs, cap_mem_libcs;
	/* call stacks: the unwinder follows the sideband's records from these on */
	struct unwinder *unw;
	struct pytrack *py;	/* Python processes: their frames unwound in the kernel */
	size_t unw_maps, unw_comms, unw_forks;
	struct unw_event *unw_ev;	/* taken from the profile, not yet given to the unwinder */
	size_t nr_unw_ev, unw_ev_at;
	u32 *followed;		/* with a command or -p: the processes and their descendants */
	size_t nr_followed, cap_followed;
	struct buildid_keeper *keeper;	/* with keep_objects */
	u32 kept_at_trim;	/* the unwinder's objects_kept at the last session__trim_table_cache */
	u64 trimmed_ns;		/* ... and when (CLOCK_MONOTONIC) */
	struct late_stacks *late;	/* dwarf: samples to unwind here, from their stack copies */
	/* sideband records the kernel lost: /proc read again for them */
	u64 lost_synced, next_resync;
	u32 resyncs, unrecovered;
	struct session_times times;	/* session__poll's rounds, for the agent's -v */
	u64 built_ns;			/* the unwinder's building time at the last take */
	struct sideband_id_stats ids;	/* the sideband's build-id reads at the last take */
	/* outside wakers announced, read up to next_waker; what their reading took */
	struct outside_waker *wakers;
	size_t nr_wakers, cap_wakers, next_waker;
	u64 waker_delay_sum_ns, waker_delay_max_ns;	/* first wake-up to read */
	u64 waker_read_ns, waker_round_max_ns;		/* reading, all and a round's most */
};

int session__max_sample_rate(u64 *rate)
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

		/* quoted as a shell would take it back; what does not fit ends in " ..." */
		for (char **a = o->argv; *a; a++) {
			size_t before = off;

			if (off + 1 < sizeof(m->target) - 4)
				m->target[off++] = ' ';
			if (off + 1 >= sizeof(m->target) - 4 ||
			    !str__shell_quote(*a, m->target, sizeof(m->target) - 4, &off)) {
				snprintf(m->target + before, sizeof(m->target) - before, " ...");
				break;
			}
		}
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
	snprintf(m->call_graph, sizeof(m->call_graph), "%s", s->cg ? s->cg->name : "");
	m->max_frames = call_graph__max_frames(s->cg, o->max_frames);
	offcpu__fill_meta(m, &o->params);
	memory__fill_meta(m, o);
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

int session__parse_call_graph(const char *arg, u32 *mode, u32 *max_frames)
{
	const struct call_graph *cg;
	int err = call_graph__parse(arg, &cg, max_frames);

	*mode = cg ? cg->bpf_mode : HSBPF_CALL_GRAPH_NONE;
	return err;
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
	if (s->cg && s->cg->lbr_call_stack) {
		if (s->ev.type == PERF_TYPE_SOFTWARE)
			return fail(-EINVAL, "--call-graph %s needs a hardware event (-e cycles, ...): the "
				    "call stacks come from the PMU's LBR", s->cg->name);
		if (s->ev.branch_stack)
			return fail(-EINVAL, "--call-graph %s and -b both need the LBR: choose one", s->cg->name);
		s->ev.lbr_call_stack = true;
	}
	if (offcpu__settle_opts(&o->params, &s->ev) || memory__settle_opts(o))
		return -EINVAL;
	s->cg = call_graph__get(o->call_graph);	/* off-CPU time has stacks by default */
	if (s->ev.is_clock) {
		s->period = o->period ? o->period : 1000000000ull / (o->freq ? o->freq : DEFAULT_FREQ);
		if (!o->mode_given)
			o->mode = PERIOD_PHASE;	/* unbiased by default: docs/how-it-works.md */
		if (o->freq > 1000000000ull)
			return fail(-EINVAL, "invalid frequency %" PRIu64 " Hz", o->freq);
		if (s->period < 10000)
			return fail(-EINVAL, "period %" PRIu64 " ns is below the kernel's 10 us minimum "
				    "for clock events", s->period);
	} else {
		s->period = o->period;
		if (!s->period && !o->freq)
			o->freq = DEFAULT_FREQ;
		if (!o->mode_given)
			o->mode = o->freq ? PERIOD_FIXED : PERIOD_PHASE;
		if (o->freq && o->mode != PERIOD_FIXED)
			return fail(-EINVAL, "--period-mode %s needs a fixed period (-c) with hardware "
				    "events", period__mode_name(o->mode));
	}
	if (!session__max_sample_rate(&max_rate)) {
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

int session__new(const struct session_opts *opts, struct session **out)
{
	struct session *s = calloc(1, sizeof(*s));

	*out = s;
	if (!s)
		return fail(-ENOMEM, "cannot start a session: %s", strerror(ENOMEM));
	s->opts = *opts;
	s->cg = call_graph__get(opts->call_graph);
	s->cmd = (struct command){ .pid = -1, .gate = -1, .status = -1 };
	s->child_status = -1;
	s->so.cgroup_fd = -1;
	return check_event(s);
}

static bool followed(const struct session *s, u32 pid)
{
	for (size_t i = 0; i < s->nr_followed; i++)
		if (s->followed[i] == pid)
			return true;
	return false;
}

static int follow(struct session *s, u32 pid)
{
	if (followed(s, pid))
		return 0;
	if (array__reserve((void **)&s->followed, &s->cap_followed, s->nr_followed + 1, sizeof(pid)))
		return -ENOMEM;
	s->followed[s->nr_followed++] = pid;
	return 0;
}


static int cmp_unw_event(const void *a, const void *b)
{
	const struct unw_event *x = a, *y = b;

	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* a fork, exec (kind 1) or mapping for the Python tracker: -ENOMEM */
static int python_event(struct session *s, u32 kind, u32 pid, u32 ppid, const struct profile_mapping *m)
{
	const char *path = m ? profile__str(s->p, m->path) : NULL;
	u32 tag;

	if (kind == 1) {
		pytrack__forget(s->py, pid);
		return 0;
	}
	/* the image's tag is a map lookup: not for the mappings of other programs (most) */
	if (kind == 2 && !pydetect__candidate(path))
		return 0;
	tag = (u32)sampler__image_exec_ns(s->sampler, pid);
	if (kind == 0)
		return pytrack__fork(s->py, pid, tag, ppid);
	return pytrack__mmap(s->py, pid, tag, path, m->start, m->len, m->pgoff) == -ENOMEM ? -ENOMEM : 0;
}

/* the sideband's new records to the unwinder and the Python tracker, in time order (each CPU's ring is drained in
 * turn, so the profile's tables are not): forks, execs and executable mappings (those read
 * from /proc have time 0 and come first). With a budget, what is left when it is spent waits
 * in s->unw_ev for the next call: a machine's tables (seconds of work under load) are built
 * while it is sampled, not before, and the sideband is drained meanwhile */
static int feed_unwinder(struct session *s, u64 budget_ns)
{
	struct profile *p = s->p;
	u64 deadline = budget_ns ? now_ns(CLOCK_MONOTONIC) + budget_ns : 0;
	size_t n, k = 0;
	struct unw_event *ev;

	if (s->unw)
		unwinder__retry(s->unw);
	if (s->unw_ev_at == s->nr_unw_ev) {
		n = (p->nr_forks - s->unw_forks) + (p->nr_comms - s->unw_comms) +
		    (p->nr_mappings - s->unw_maps);
		if (!n)
			return 0;
		ev = realloc(s->unw_ev, n * sizeof(*ev));
		if (!ev)
			return fail(-ENOMEM, "cannot follow mappings for the unwinder: %s", strerror(ENOMEM));
		s->unw_ev = ev;
		for (size_t i = s->unw_forks; i < p->nr_forks; i++)
			ev[k++] = (struct unw_event){ p->forks[i].time_ns, 0, i, .f = p->forks[i] };
		for (size_t i = s->unw_comms; i < p->nr_comms; i++)
			if (p->comms[i].exec)
				ev[k++] = (struct unw_event){ p->comms[i].time_ns, 1, i, .c = p->comms[i] };
		for (size_t i = s->unw_maps; i < p->nr_mappings; i++)
			ev[k++] = (struct unw_event){ p->mappings[i].time_ns, 2, i, .m = p->mappings[i] };
		qsort(ev, k, sizeof(*ev), cmp_unw_event);
		s->nr_unw_ev = k;
		s->unw_ev_at = 0;
		s->unw_forks = p->nr_forks;
		s->unw_comms = p->nr_comms;
		s->unw_maps = p->nr_mappings;
	}
	ev = s->unw_ev;
	for (; s->unw_ev_at < s->nr_unw_ev; s->unw_ev_at++) {
		size_t i = s->unw_ev_at;
		const struct profile_fork *f = &ev[i].f;
		const struct profile_comm *c = &ev[i].c;
		const struct profile_mapping *m = &ev[i].m;
		u32 pid = ev[i].kind == 0 ? f->pid : ev[i].kind == 1 ? c->pid : m->pid;

		if (deadline && now_ns(CLOCK_MONOTONIC) >= deadline)
			break;
		/* the sideband sees the whole machine: tables only for what is sampled */
		if (s->so.filter_pids) {
			if (ev[i].kind == 0 && followed(s, f->ppid) && follow(s, f->pid))
				return fail(-ENOMEM, "cannot follow processes: %s", strerror(ENOMEM));
			if (!followed(s, pid))
				continue;
		}
		if (s->py && python_event(s, ev[i].kind, pid, ev[i].kind == 0 ? f->ppid : 0,
					  ev[i].kind == 2 ? m : NULL))
			return fail(-ENOMEM, "cannot follow Python processes: %s", strerror(ENOMEM));
		if (!s->unw || s->opts.lazy_tables)
			continue;	/* lazy: the tables of what samples land in (want_tables) */
		if (ev[i].kind == 0)
			unwinder__fork(s->unw, f->pid, f->ppid);
		else if (ev[i].kind == 1)
			unwinder__exec(s->unw, c->pid, c->time_ns);
		else
			unwinder__mmap(s->unw, m->pid, m->start, m->len, m->pgoff, true,
				       profile__str(p, m->path), m->build_id, m->build_id_size, m->time_ns);
	}
	return 0;
}

/* stacks: CPython found in the processes followed, whenever they started (their mappings
 * from /proc, then the sideband's), its frames unwound by the kernel (docs/python.md) */
static int open_python(struct session *s)
{
	int err = 0;

	s->py = pytrack__new(s->sampler);
	if (!s->py)
		return fail(-ENOMEM, "cannot follow Python processes: %s", strerror(ENOMEM));
	for (int i = 0; i < s->nr_pids && !err; i++)
		err = follow(s, s->pids[i]);
	if (!err && s->opts.argv)
		err = follow(s, s->cmd.pid);
	return err ? fail(err, "cannot follow Python processes: %s", strerror(-err)) : 0;
}

/* --call-graph dwarf: tables for what runs already (-p, -a: read from /proc), and for a
 * command, before it runs, the program's and its libraries' */
static int open_unwinder(struct session *s)
{
	int err = 0;

	s->unw = unwinder__new(s->sampler);
	if (!s->unw)
		return fail(-ENOMEM, "cannot set up the unwinder: %s", strerror(ENOMEM));
	unwinder__cache_tables(s->unw, s->opts.table_cache);
	/* a recording unwinds at its end what the kernel could not yet (top does not) */
	if (!s->opts.live) {
		s->late = late_stacks__new();
		if (!s->late)
			return fail(-ENOMEM, "cannot set up the unwinder: %s", strerror(ENOMEM));
	}
	for (int i = 0; i < s->nr_pids && !err; i++)
		err = follow(s, s->pids[i]);
	if (!err && s->opts.argv)
		err = follow(s, s->cmd.pid);
	if (err)
		return fail(err, "cannot set up the unwinder: %s", strerror(-err));
	if (s->opts.argv)
		unwinder__prepare(s->unw, s->opts.argv[0]);
	/* the whole machine's programs: their tables are built once sampling has started
	 * (session__poll), the samples before them unwound late (a recording) */
	if (s->opts.all || s->opts.cgroup)
		return 0;
	return feed_unwinder(s, 0);
}

/* what the profile says of the finer keys it has */
static void set_sample_keys(struct profile_meta *m, const struct sampler_opts *so)
{
	char *k = m->sample_keys;
	size_t n = sizeof(m->sample_keys);

	snprintf(k, n, "%s%s%s%s", so->key_tid ? "tid," : "", so->key_cpu ? "cpu," : "",
		 so->time_bucket_ns ? "time," : "", so->offcpu && so->wakers ? "waker," : "");
	if (*k)
		k[strlen(k) - 1] = 0;
	m->time_bucket_ns = so->time_bucket_ns;
	m->time_origin_ns = so->time_origin_ns;
}

/* tests only: with HSBPF_TEST_HOOK_BEFORE_ATTACH=FIFO, wait between reading /proc and
 * following the targets for the test to open FIFO, act, and close it (docs/testing.md) */
static void test_hook_before_attach(void)
{
	const char *path = getenv("HSBPF_TEST_HOOK_BEFORE_ATTACH");
	ssize_t n;
	char c;
	int fd;

	if (!path || !*path)
		return;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		warning("cannot open test hook '%s': %s", path, strerror(errno));
		return;
	}
	do
		n = read(fd, &c, 1);
	while (n > 0 || (n < 0 && errno == EINTR));
	close(fd);
}

/* -p: a child the targets forked before their pids were in the filter (while hsbpf started)
 * was not seen by the fork hook; those forked since are. The filter holds the targets now,
 * so /proc has every child the hook missed: followed as the hook would have, with their
 * mappings and comms, and theirs in turn */
static int follow_descendants(struct session *s)
{
	size_t nr = 0, cap = 0;
	u32 *todo = NULL;
	int err = 0;

	for (int i = 0; i < s->nr_pids && !err; i++) {
		err = follow(s, s->pids[i]);
		if (!err)
			err = procfs__children(s->pids[i], &todo, &nr, &cap);
		if (err == -ENOENT || err == -ESRCH)
			err = 0;	/* a target gone meanwhile */
	}
	while (nr && !err) {
		u32 pid = todo[--nr];

		if (followed(s, pid))
			continue;
		err = follow(s, pid);
		if (err)
			break;
		err = sampler__add_pid(s->sampler, pid, false);
		if (err) {
			free(todo);
			return err;	/* said */
		}
		debug("pid %u, a child of the targets, followed", pid);
		err = procfs__synthesize(s->p, pid);
		if (err != -ENOMEM)
			err = procfs__children(pid, &todo, &nr, &cap);
		if (err && err != -ENOMEM)
			err = 0;	/* exited meanwhile: its fork record, if any, says the rest */
	}
	free(todo);
	if (err == -ENOMEM)
		return fail(err, "cannot follow the targets' children: %s", strerror(ENOMEM));
	return err;
}

/* a process's perf map file may go with it: read it as it exits */
static void process_exited(void *ctx, u32 pid, u64 time_ns)
{
	struct session *s = ctx;

	/* the sideband's callback cannot fail: the next poll, or the finish, says so */
	if (jitmaps__exit(s->jit, s->p, pid, time_ns) == -ENOMEM && !s->jit_err)
		s->jit_err = -ENOMEM;
	/* the code objects it announced last are named first, while they may still be read */
	if (s->py) {
		if (pytrack__poll(s->py) == -ENOMEM && !s->jit_err)
			s->jit_err = -ENOMEM;
		pytrack__forget(s->py, pid);
	}
}

int session__open(struct session *s)
{
	struct session_opts *o = &s->opts;
	u32 cmd_pid;
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
		return fail(-ENOMEM, "cannot start a session: %s", strerror(ENOMEM));
	s->so.params = o->params;
	s->so.ev = s->ev;
	s->so.period = s->ev.is_clock || o->period ? s->period : 0;
	s->so.freq = s->ev.is_clock ? 0 : o->freq;
	s->so.cpus = s->cpus;
	s->so.nr_cpus = s->nr_cpus;
	/* read every interval, each sample a clock tick on a CPU sampled: an interval holds at
	 * most this many (sampler.c sizes the maps for it; off-CPU blocks, allocations and a
	 * whole run's stacks have no such bound) */
	if (o->live && o->live_interval_s > 0 && s->ev.is_clock && o->offcpu == OFFCPU_NONE &&
	    !o->alloc_period && (!o->call_graph || o->stack_intervals))
		s->so.live_samples = (u64)ceil(o->live_interval_s * 1e9 / s->period) * s->nr_cpus;
	s->so.filter_pids = o->pids || o->argv;
	/* bucket 0 starts now, a moment before sampling does */
	s->so.time_origin_ns = o->time_bucket_ns ? now_ns(CLOCK_MONOTONIC) : 0;
	set_sample_keys(&s->p->meta, &s->so);
	if (o->cgroup) {
		err = cgroup__open(o->cgroup, s->cgroup_path, sizeof(s->cgroup_path), &cgid,
				   &s->so.cgroup_fd);
		if (err)
			return err;
		s->so.cgroup_id = cgid;
	}
	if (o->argv) {
		err = command__spawn(o->argv, !o->no_kill_with_parent, &s->cmd);
		if (err) {
			error("cannot start '%s': %s", o->argv[0], strerror(-err));
			return err;
		}
	}
	/* a slow reader of stderr (2>&1 | less) must not hold a recording up: what hsbpf says
	 * from now on does not wait for it (the command, spawned now, keeps its blocking
	 * stderr; top has its screen) */
	if (!o->live) {
		err = stderr__set_nonblocking();
		if (err)
			debug("stderr stays blocking: %s", strerror(-err));
	}
	/* the unwinder wants a mapping as soon as it is made: the samples after it need it */
	s->sb = sideband__open(s->cpus, s->nr_cpus, s->p,
			       o->all || o->cgroup ? sideband__pages_for_all(s->nr_cpus) : 0);
	if (!s->sb)
		return -errno;
	s->jit = jitmaps__new(JITMAP_DIR);
	/* the maps read are the command's tree's, the -p processes' trees', or all processes' */
	cmd_pid = s->cmd.pid;
	if (!s->jit || jitmaps__target(s->jit, o->argv ? &cmd_pid : s->pids,
				       o->argv ? 1 : o->pids ? s->nr_pids : 0))
		return -ENOMEM;
	sideband__on_exit(s->sb, process_exited, s);
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
	if (o->keep_objects) {
		u32 cmd_pid = s->cmd.pid;

		s->keeper = o->argv ? buildid_keeper__new(&cmd_pid, 1) :
			    buildid_keeper__new(s->pids, o->pids ? s->nr_pids : 0);
		if (!s->keeper)
			return fail(-ENOMEM, "cannot start a session: %s", strerror(ENOMEM));
		buildid_keeper__scan(s->keeper, s->p);
	}
	s->sampler = sampler__open(&s->so);
	if (!s->sampler)
		return -errno;
	/* known from the start: top symbolizes while it runs */
	snprintf(s->p->meta.exec_tags, sizeof(s->p->meta.exec_tags), "%s",
		 sampler__exec_tags_before_comm(s->sampler) ? "rename" : "");
	test_hook_before_attach();
	for (int i = 0; i < s->nr_pids && !err; i++)
		err = sampler__add_pid(s->sampler, s->pids[i], false);
	if (!err && o->pids)
		err = follow_descendants(s);
	if (!err && o->argv)
		err = sampler__add_pid(s->sampler, s->cmd.pid, true);
	if (!err && s->cg && s->so.python_frames != HSBPF_PY_OFF_MODE && s->cg->bpf_mode != HSBPF_CALL_GRAPH_LBR)
		err = open_python(s);
	if (!err && s->cg && s->cg->unwind_tables)
		err = open_unwinder(s);
	else if (!err && s->py)
		err = feed_unwinder(s, 0);
	return err;
}

/* --memory: a libc file with the allocator's probes for a process (-1: every process) */
struct mem_libc {
	int pid;
	dev_t dev;
	ino_t ino;
};

static bool mem_probed(const struct session *s, int pid, const struct stat *st)
{
	for (size_t i = 0; i < s->nr_mem_libcs; i++) {
		const struct mem_libc *l = &s->mem_libcs[i];

		if ((l->pid == pid || l->pid == -1) && l->dev == st->st_dev && l->ino == st->st_ino)
			return true;
	}
	return false;
}

/* the allocator's probes on libc for process pid (-1: any): 0 or -errno (said) */
static int probe_libc(struct session *s, const char *libc, int pid)
{
	struct stat st;
	int err = sampler__attach_memory(s->sampler, libc, pid);

	if (err || stat(libc, &st))
		return err;
	if (array__reserve((void **)&s->mem_libcs, &s->cap_mem_libcs, s->nr_mem_libcs + 1,
			   sizeof(*s->mem_libcs)))
		return fail(-ENOMEM, "cannot follow processes: %s", strerror(ENOMEM));
	s->mem_libcs[s->nr_mem_libcs++] = (struct mem_libc){ pid, st.st_dev, st.st_ino };
	return 0;
}

/* the libc.so.6 process pid maps, by its root (a container's own): 0, or -ENOENT */
static int mapped_libc(u32 pid, char *libc, size_t size)
{
	char path[64], line[PATH_MAX + 128];
	int err = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -ENOENT;
	while (err && fgets(line, sizeof(line), f)) {
		char *file = strchr(line, '/');

		if (!file)
			continue;
		file[strcspn(file, "\n")] = 0;
		if (!strcmp(path__base(file), "libc.so.6")) {
			snprintf(libc, size, "/proc/%u/root%s", pid, file);
			err = 0;
		}
	}
	fclose(f);
	return err;
}

/* --memory --cgroup: besides hsbpf's own libc, every other one the cgroup's processes map now
 * (a container's), probed in every process as -a's: the kernel counts the cgroup's tasks
 * alone, those that join it later too. A libc that cannot be probed is said, and skipped */
static void probe_cgroup_libcs(struct session *s)
{
	int fd = openat(s->so.cgroup_fd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
	FILE *f = fd >= 0 ? fdopen(fd, "re") : NULL;
	char libc[PATH_MAX];
	struct stat st;
	unsigned pid;

	if (!f) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while (fscanf(f, "%u", &pid) == 1) {
		if (mapped_libc(pid, libc, sizeof(libc)) || stat(libc, &st) || mem_probed(s, -1, &st))
			continue;
		if (!memory__check_libc(libc) && !probe_libc(s, libc, -1))
			debug("memory: probes on %s (process %u's)", libc, pid);
	}
	fclose(f);
}

/* --memory: the allocator's probes on the target's glibc */
static int attach_memory(struct session *s)
{
	char libc[PATH_MAX];
	int err = 0;

	if (!s->opts.alloc_period)
		return 0;
	if (s->opts.argv || s->opts.all || s->opts.cgroup) {
		err = memory__find_libc(s->opts.argv ? s->opts.argv : (char *[]){ "/bin/sh", NULL }, -1, libc,
					sizeof(libc));
		if (!err)
			err = probe_libc(s, libc, s->opts.argv ? (int)s->cmd.pid : -1);
	}
	if (!err && s->opts.cgroup)
		probe_cgroup_libcs(s);
	for (int i = 0; i < s->nr_pids && !err; i++) {
		err = memory__find_libc(NULL, s->pids[i], libc, sizeof(libc));
		if (!err)
			err = probe_libc(s, libc, s->pids[i]);
	}
	/* the targets, whose children get probes (the unwinder follows them too) */
	if (!err && s->opts.argv)
		err = follow(s, s->cmd.pid);
	for (int i = 0; i < s->nr_pids && !err; i++)
		err = follow(s, s->pids[i]);
	if (err == -ENOMEM)
		return fail(err, "cannot follow processes: %s", strerror(ENOMEM));
	if (!err)
		debug("memory: probes on %s", libc);
	s->mem_forks = s->p->nr_forks;
	s->mem_maps = s->p->nr_mappings;
	return err;
}

/* --memory: a followed process that maps a libc without probes (it exec'd a program that
 * loads another, by its own LD_LIBRARY_PATH: `env LD_LIBRARY_PATH=... prog`) gets them as
 * user space hears of it, and the loss before then is said */
static void attach_memory_libcs(struct session *s)
{
	char libc[PATH_MAX + 32];
	struct stat st;

	for (; s->mem_maps < s->p->nr_mappings; s->mem_maps++) {
		const struct profile_mapping *m = &s->p->mappings[s->mem_maps];
		const char *path = profile__str(s->p, m->path);

		if (strcmp(path__base(path), "libc.so.6") || !followed(s, m->pid))
			continue;
		snprintf(libc, sizeof(libc), "/proc/%u/root%s", m->pid, path);
		if (stat(libc, &st) || mem_probed(s, m->pid, &st))
			continue;	/* gone already, or probed */
		/* said when it cannot be probed (a 32-bit program's): its allocations are not seen */
		if (!memory__check_libc(libc) && !probe_libc(s, libc, m->pid))
			warning("memory: process %u loaded another libc than the one probed ('%s'): "
				"probed from now on; what it allocated before is not counted (run hsbpf "
				"with its LD_LIBRARY_PATH, or its loader with --library-path)", m->pid, path);
	}
}

/* --memory with a command or -p: the probes are per process (a system-wide probe would trap
 * in every program on the machine), so each child forked since gets its own as user space
 * hears of it; what a child allocates before then is not seen (docs/memory.md) */
static void attach_memory_children(struct session *s)
{
	char libc[PATH_MAX], maps[64];

	for (; s->mem_forks < s->p->nr_forks; s->mem_forks++) {
		const struct profile_fork *f = &s->p->forks[s->mem_forks];
		u32 pid = f->pid;

		/* the sideband sees the whole machine's forks: the targets' children only */
		if (!followed(s, f->ppid) || follow(s, pid))
			continue;
		snprintf(maps, sizeof(maps), "/proc/%u/maps", pid);
		if (access(maps, R_OK))
			continue;	/* gone already */
		if (memory__find_libc(NULL, pid, libc, sizeof(libc)))
			continue;	/* said: not glibc's */
		/* a failure is said, and the recording goes on without this child */
		if (!probe_libc(s, libc, pid))
			debug("memory: child %u followed", pid);
	}
	attach_memory_libcs(s);
}

int session__memory_snapshot(struct session *s, u32 *snap)
{
	return sampler__memory_snapshot(s->sampler, snap);
}

int session__start(struct session *s)
{
	int err;

	if (s->opts.alloc_period && s->opts.mem_intervals)
		sampler__memory_intervals(s->sampler);
	err = attach_memory(s);

	if (!err)
		err = sampler__attach(s->sampler);

	if (err)
		return err;
	/* an outside waker announced ends the wait: its mappings are read within milliseconds */
	if (sampler__waker_news_fd(s->sampler) >= 0) {
		err = sideband__watch(s->sb, sampler__waker_news_fd(s->sampler));
		if (err)
			return fail(err, "cannot wait for the wakers outside the target: %s", strerror(-err));
	}
	/* off-CPU time began before its start iterator ran: the recording with it */
	s->start = sampler__offcpu_start(s->sampler);
	if (!s->start)
		s->start = now_ns(CLOCK_MONOTONIC);
	s->p->meta.start_mono_ns = s->start;
	s->p->meta.start_realtime_ns = now_ns(CLOCK_REALTIME);
	s->command_pid = s->cmd.pid;
	if (s->opts.argv)
		err = command__start(&s->cmd, s->opts.argv[0]);
	return err;
}

static int keep_late(void *ctx, const struct late_stack *l, const struct late_block *b)
{
	struct session *s = ctx;

	return l ? late_stacks__add(s->late, s->p, l) : late_stacks__add_block(s->late, s->p, b);
}

/* the samples the kernel sent to be unwound here, kept until the end */
static int take_late(struct session *s)
{
	int err = sampler__consume_late(s->sampler, keep_late, s);

	if (err)
		error("cannot take the stacks to unwind: %s", strerror(-err));
	return err;
}

static int note_waker(void *ctx, const struct waker_news *n)
{
	struct session *s = ctx;
	struct outside_waker *w;

	if (array__reserve((void **)&s->wakers, &s->cap_wakers, s->nr_wakers + 1, sizeof(*s->wakers)))
		return -ENOMEM;
	w = &s->wakers[s->nr_wakers++];
	w->pid = n->pid;
	w->tag = n->tag;
	memcpy(w->comm, n->comm, sizeof(w->comm));
	w->comm[sizeof(w->comm) - 1] = 0;
	return 0;
}

/* an outside waker's name and mappings, read now as records of now; kept when the kernel
 * still has the image it tagged after the read (an exec meanwhile: another program's
 * mappings; a new process with its pid: another process's); one gone keeps the name the
 * kernel sent. 0 or -ENOMEM */
static int read_waker(struct session *s, const struct outside_waker *w)
{
	struct profile *p = s->p;
	size_t comms = p->nr_comms, threads = p->nr_thread_comms, maps = p->nr_mappings;
	u64 t = now_ns(CLOCK_MONOTONIC), tag = 0;
	int err = procfs__synthesize_at(p, w->pid, t);

	if (err == -ENOMEM)
		return err;
	/* an error is a process gone (a zombie's maps are empty) */
	if (err || p->nr_mappings == maps || sampler__waker_tag(s->sampler, w->pid, &tag) ||
	    tag != w->tag) {
		p->nr_comms = comms;
		p->nr_thread_comms = threads;
		p->nr_mappings = maps;
		p->stats.offcpu_wakers_gone++;
		/* its name as the kernel saw it, at its first wake-up */
		return w->comm[0] ? profile__add_comm(p, w->pid, w->tag, w->comm, false) : 0;
	}
	p->stats.offcpu_wakers_read++;
	s->waker_delay_sum_ns += t - w->tag;
	if (t - w->tag > s->waker_delay_max_ns)
		s->waker_delay_max_ns = t - w->tag;
	return 0;
}

/* the outside wakers the kernel announced: their mappings read while they run, so that their
 * user frames are named even when they exit (or exec) before the end; up to WAKERS_PER_ROUND
 * a call (all at the end), the rest at the next */
static int read_outside_wakers(struct session *s, bool all)
{
	u64 t0 = now_ns(CLOCK_MONOTONIC), d;
	size_t n = 0;
	int err = sampler__consume_waker_news(s->sampler, note_waker, s);

	if (err)
		return fail(err, "cannot take the wakers outside the target: %s", strerror(-err));
	for (; s->next_waker < s->nr_wakers && (all || n < WAKERS_PER_ROUND); s->next_waker++, n++)
		if (read_waker(s, &s->wakers[s->next_waker]))
			return fail(-ENOMEM, "cannot read a waker's mappings: %s", strerror(ENOMEM));
	if (n) {
		d = now_ns(CLOCK_MONOTONIC) - t0;
		s->waker_read_ns += d;
		if (d > s->waker_round_max_ns)
			s->waker_round_max_ns = d;
	}
	return 0;
}

static int cmp_waker(const void *a, const void *b)
{
	const struct outside_waker *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tag < y->tag ? -1 : x->tag > y->tag;
}

/* an outside waker's tag is a moment inside its image (its first wake-up), not its start as a
 * target's is: each becomes its image's exec record (the last of its process at or before it),
 * or 0 for the image the process had before the recording's first exec record of it, which
 * is how the profile finds an image's mappings and name */
static void settle_waker_tags(struct session *s)
{
	struct profile *p = s->p;

	if (!s->nr_wakers)
		return;
	qsort(s->wakers, s->nr_wakers, sizeof(*s->wakers), cmp_waker);
	for (size_t j = 0; j < p->nr_comms; j++) {
		const struct profile_comm *c = &p->comms[j];
		size_t lo = 0, hi = s->nr_wakers;

		if (!c->exec)
			continue;
		while (lo < hi) {	/* the first of its pid */
			size_t mid = lo + (hi - lo) / 2;

			if (s->wakers[mid].pid < c->pid)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (struct outside_waker *w = s->wakers + lo; w < s->wakers + s->nr_wakers && w->pid == c->pid; w++)
			if (c->time_ns <= w->tag && c->time_ns > w->image)
				w->image = c->time_ns;
	}
	for (size_t i = 0; i < p->nr_stack_sample_wakers; i++) {
		struct profile_waker *w = &p->stack_sample_wakers[i];
		struct outside_waker key = { .pid = w->pid, .tag = w->exec_ns }, *o;

		o = w->pid && w->exec_ns ? bsearch(&key, s->wakers, s->nr_wakers, sizeof(*s->wakers),
						   cmp_waker) : NULL;
		if (o)
			w->exec_ns = o->image;
	}
	debug("wakers outside the target: %" PRIu64 " read while they ran, %.3f ms after their first "
	      "wake-up on average, %.3f ms at most; %" PRIu64 " gone before; reading took %.3f ms in "
	      "all, %.3f ms in a round at most", p->stats.offcpu_wakers_read,
	      p->stats.offcpu_wakers_read ? s->waker_delay_sum_ns / 1e6 / p->stats.offcpu_wakers_read : 0,
	      s->waker_delay_max_ns / 1e6, p->stats.offcpu_wakers_gone, s->waker_read_ns / 1e6,
	      s->waker_round_max_ns / 1e6);
}

#define RESYNC_EVERY_NS 1000000000ull	/* /proc read again once a second at most */

/* the kernel lost sideband records (a ring was full under a storm of execs): the mappings
 * and comms of the processes alive now are read again from /proc as records of now, which
 * names the images they run now; at once while recording (not more than once a second), and
 * at the end. What ran only between the loss and the reading cannot be recovered */
static int resync_lost(struct session *s, bool at_end)
{
	u64 lost = sideband__lost(s->sb), now = now_ns(CLOCK_MONOTONIC);
	int err;

	if (lost == s->lost_synced || (!at_end && now < s->next_resync))
		return 0;
	s->lost_synced = lost;
	s->next_resync = now + RESYNC_EVERY_NS;
	s->resyncs++;
	debug("the kernel lost %" PRIu64 " sideband records: reading /proc again", lost);
	err = procfs__synthesize_all_at(s->p, now, NULL);
	if (err)
		return fail(err, "cannot read the processes again after lost records: %s",
			    strerror(-err));
	return 0;
}

static int cmp_u32(const void *a, const void *b);
static int poll_rest(struct session *s);

/* after a loss: the processes with user samples that no record names (neither a comm of
 * theirs nor a fork), those that had exited before /proc was read again */
static int count_unrecovered(struct session *s)
{
	const struct profile *p = s->p;
	size_t nr = 0;
	u32 *known = malloc((p->nr_comms + p->nr_forks + 1) * sizeof(*known));

	if (!known)
		return fail(-ENOMEM, "cannot check the processes' records: %s", strerror(ENOMEM));
	for (size_t i = 0; i < p->nr_comms; i++)
		known[nr++] = p->comms[i].pid;
	for (size_t i = 0; i < p->nr_forks; i++)
		known[nr++] = p->forks[i].pid;
	qsort(known, nr, sizeof(*known), cmp_u32);
	s->unrecovered = 0;
	for (size_t i = 0; i < p->nr_samples; i++) {
		u32 pid = p->samples[i].pid;
		bool seen = false;

		if (!pid || (p->samples[i].flags & HSBPF_KEY_KERNEL) ||
		    bsearch(&pid, known, nr, sizeof(*known), cmp_u32))
			continue;
		for (size_t j = 0; j < i && !seen; j++)
			seen = p->samples[j].pid == pid;
		if (!seen)
			s->unrecovered++;
	}
	free(known);
	return 0;
}

/* the time since *t0 added to *sum; *t0 moved to now */
static u64 lap(u64 *t0, u64 *sum)
{
	u64 now = now_ns(CLOCK_MONOTONIC), d = now - *t0;

	*sum += d;
	*t0 = now;
	return d;
}

void session__take_times(struct session *s, struct session_times *t)
{
	struct sideband_id_stats ids;

	*t = s->times;
	memset(&s->times, 0, sizeof(s->times));
	sideband__id_stats(s->sb, &ids);
	t->ids = ids.read - s->ids.read;
	t->ids_ns = ids.read_ns - s->ids.read_ns;
	s->ids = ids;
	if (s->unw) {
		const struct unwinder_stats *us = unwinder__stats(s->unw);

		t->built_ns = us->build_ns - us->load_ns - s->built_ns;
		s->built_ns = us->build_ns - us->load_ns;
	}
}

int session__poll(struct session *s, int timeout_ms)
{
	struct session_times *tm = &s->times;
	struct epoll_event e;
	u64 t0, start;
	int err;

	t0 = now_ns(CLOCK_MONOTONIC);
	epoll_wait(sideband__fd(s->sb), &e, 1, timeout_ms);
	start = now_ns(CLOCK_MONOTONIC);
	tm->wait_ns += start - t0;
	if (timeout_ms >= 0 && start - t0 > (u64)timeout_ms * 1000000 + tm->oversleep_max_ns)
		tm->oversleep_max_ns = start - t0 - (u64)timeout_ms * 1000000;
	t0 = start;
	tm->rounds++;
	if (sideband__drain(s->sb))
		return -EIO;
	lap(&t0, &tm->sideband_ns);
	if (resync_lost(s, false))
		return -EIO;
	lap(&t0, &tm->resync_ns);
	if (s->jit_err)
		return error("cannot read perf map files: %s", strerror(-s->jit_err));
	if (s->late && take_late(s))
		return -ENOMEM;
	if ((s->unw || s->py) && feed_unwinder(s, FEED_BUDGET_NS))
		return -ENOMEM;
	lap(&t0, &tm->feed_ns);
	if (s->unw && unwinder__nr_wanted(s->unw)) {
		size_t before = unwinder__nr_wanted(s->unw);
		u64 d;

		if (unwinder__build_wanted(s->unw, FEED_BUDGET_NS))
			return error("cannot build unwind tables: %s", strerror(ENOMEM));
		tm->tables += before - unwinder__nr_wanted(s->unw);
		d = lap(&t0, &tm->tables_ns);
		if (d > tm->tables_max_ns)
			tm->tables_max_ns = d;
	}
	err = poll_rest(s);
	lap(&t0, &tm->other_ns);
	if (t0 - start > tm->round_max_ns)
		tm->round_max_ns = t0 - start;
	return err;
}

/* session__poll's other work: Python, namespace pids, cgroup names, perf maps, the target's
 * end */
static int poll_rest(struct session *s)
{
	int err = read_outside_wakers(s, false);

	if (err)
		return err;
	if (s->opts.alloc_period && !s->opts.all)
		attach_memory_children(s);
	if (s->py && pytrack__poll(s->py))
		return error("cannot name Python frames: %s", strerror(ENOMEM));
	buildid_keeper__scan(s->keeper, s->p);
	/* processes in their own PID namespace: read while they are alive */
	procfs__fill_nspids(s->p, s->seen_comms, s->seen_forks);
	s->seen_comms = s->p->nr_comms;
	s->seen_forks = s->p->nr_forks;
	/* cgroup names, once a second: a container gone by the end keeps its name */
	if (now_ns(CLOCK_MONOTONIC) >= s->next_scan) {
		cgroup_names__scan(&s->cgroups);
		/* the followed processes' perf map files, what was appended: what top shows, and
		 * what a runtime that deletes its file at exit leaves */
		if (jitmaps__scan(s->jit, s->p, now_ns(CLOCK_MONOTONIC)) == -ENOMEM)
			return -ENOMEM;
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

	s->command_stopped = true;
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
			note("waiting for '%s' (pid %d) to exit after SIGTERM; SIGKILL in %d s, or at once "
			     "on Ctrl-C", s->opts.argv[0], pid, SESSION_KILL_AFTER);
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

/* a process without a perf map: if it is a JVM, asked for one once (-p, -a, --cgroup: it still
 * runs); true when it now has one */
static bool ask_jvm(u32 pid, u32 **asked, size_t *nr, size_t *cap)
{
	for (size_t i = 0; i < *nr; i++)
		if ((*asked)[i] == pid)
			return false;
	if (!array__reserve((void **)asked, cap, *nr + 1, sizeof(**asked)))
		(*asked)[(*nr)++] = pid;
	return !jvm_perfmap__ask(pid, JVM_JCMD, JVM_PERFMAP_TIMEOUT_MS);
}

/* the perf map files of the processes with user samples, as they are at the end */
static int read_jit_maps(struct session *s)
{
	const struct profile *p = s->p;
	u64 t = now_ns(CLOCK_MONOTONIC);
	u32 *asked = NULL, last = 0;
	size_t nr_asked = 0, cap = 0;
	bool have_last = false;
	int err;

	for (size_t i = 0; i < p->nr_samples; i++) {
		u32 pid = p->samples[i].pid;

		/* the last user sample's process, not the last sample's: a process whose first
		 * sample was in the kernel was never read (nor its JVM asked) when the rest of
		 * its samples followed it (a fresh-clone CI's JVM test, once) */
		if ((p->samples[i].flags & HSBPF_KEY_KERNEL) || (have_last && pid == last))
			continue;
		have_last = true;
		last = pid;
		err = jitmaps__read(s->jit, s->p, pid, t);
		if (err == -ENOENT && ask_jvm(pid, &asked, &nr_asked, &cap))
			err = jitmaps__read(s->jit, s->p, pid, t);
		if (err == -ENOMEM) {
			free(asked);
			return error("cannot read perf map files: %s", strerror(ENOMEM));
		}
	}
	free(asked);
	if (p->stats.jit_malformed)
		warning("%llu malformed lines in perf map files skipped",
			(unsigned long long)p->stats.jit_malformed);
	if (p->stats.jit_capped)
		warning("%llu perf map files were read only up to %llu MB each, %llu MB in all",
			(unsigned long long)p->stats.jit_capped, JITMAP_MAX_SIZE >> 20,
			JITMAP_MAX_TOTAL >> 20);
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	u32 x = *(const u32 *)a, y = *(const u32 *)b;

	return x < y ? -1 : x > y;
}

/* keep the target's processes, and with --wakers those outside it that woke its blocks (a
 * daemon, another program): the mappings of those whose mappings nothing recorded (not read
 * while they ran: not announced, or gone meanwhile) are read now from /proc if they still
 * run, so that their frames are named. One gone by now stays [unknown] */
static void keep_with_wakers(struct profile *p, const u32 *pids, size_t nr_pids)
{
	size_t nr = 0;
	u32 *keep = malloc((nr_pids + p->nr_stack_sample_wakers + 1) * sizeof(*keep));

	if (!keep) {
		profile__keep_pids(p, pids, nr_pids);	/* the wakers' frames stay unnamed */
		return;
	}
	for (size_t i = 0; i < p->nr_stack_sample_wakers; i++)
		if (p->stack_sample_wakers[i].pid)
			keep[nr++] = p->stack_sample_wakers[i].pid;
	if (nr)
		qsort(keep, nr, sizeof(*keep), cmp_u32);
	for (size_t i = 0; i < nr; i++) {
		bool known = false;

		if (i && keep[i] == keep[i - 1])
			continue;
		/* mappings recorded (the sideband's since an exec, or read while it ran); a name
		 * alone (a gone waker's, from the kernel) is no reason not to read it */
		for (size_t j = 0; j < p->nr_mappings && !known; j++)
			known = p->mappings[j].pid == keep[i];
		if (!known && procfs__alive(keep[i]))
			procfs__synthesize(p, keep[i]);	/* best effort: unnamed if it fails */
	}
	if (nr_pids)
		memcpy(keep + nr, pids, nr_pids * sizeof(*keep));
	profile__keep_pids(p, keep, nr + nr_pids);
	free(keep);
}

int session__finish(struct session *s)
{
	struct session_opts *o = &s->opts;
	struct profile *p = s->p;
	int err;

	sampler__stop(s->sampler);
	p->meta.duration_ns = now_ns(CLOCK_MONOTONIC) - s->start;
	/* a command that is a JVM and still runs (-d, Ctrl-C) is asked for its perf map before
	 * it is stopped; its exit reads it */
	if (o->argv && s->cmd.pid > 0) {
		jvm_perfmap__ask(s->cmd.pid, JVM_JCMD, JVM_PERFMAP_TIMEOUT_MS);
		stop_command(s);
	}
	sideband__drain(s->sb);
	err = resync_lost(s, true);
	if (err)
		return err;
	procfs__fill_nspids(p, s->seen_comms, s->seen_forks);
	p->stats.sideband_lost = sideband__lost(s->sb);

	if (s->late && take_late(s))
		return -ENOMEM;
	/* the outside wakers announced but not read yet, those still running */
	err = read_outside_wakers(s, true);
	if (err)
		return err;
	err = sampler__collect(s->sampler, p);
	if (err)
		return err;
	settle_waker_tags(s);
	/* the handler's cost, for bench/period_cost.sh */
	debug("recorded for %.3f s; the handler ran %" PRIu64 " times, %" PRIu64 " ns in all "
	      "(0 without kernel.bpf_stats_enabled)", p->meta.duration_ns / 1e9,
	      p->stats.bpf_run_cnt, p->stats.bpf_run_ns);
	/* the times of the off-CPU blocks still open, which collecting closed */
	if (s->late && take_late(s))
		return -ENOMEM;
	if (p->stats.sideband_lost) {
		err = count_unrecovered(s);
		if (err)
			return err;
	}
	if (s->late && late_stacks__resolve(s->late, p))
		return fail(-ENOMEM, "cannot unwind stacks: %s", strerror(ENOMEM));
	if (s->py) {
		err = pytrack__finish(s->py, p);
		if (err)
			return err;
	}
	err = s->jit_err ? error("cannot read perf map files: %s", strerror(-s->jit_err)) : read_jit_maps(s);
	if (err)
		return err;
	fill_meta(s);
	if (s->unw) {
		const struct unwinder_stats *us = unwinder__stats(s->unw);

		p->stats.unwind_objects = us->objects;
		p->stats.unwind_objects_no_cfi = us->objects_no_cfi;
		p->stats.unwind_objects_failed = us->objects_failed;
		p->stats.unwind_objects_full = us->objects_full;
		p->stats.unwind_rows = us->rows;
		p->stats.unwind_table_bytes = us->table_bytes;
		p->stats.unwind_build_ns = us->build_ns;
		p->stats.unwind_map_full = us->map_full;
	}
	if (o->argv || (!o->all && !o->cgroup)) {
		if (o->argv)
			keep_with_wakers(p, &s->command_pid, 1);
		else
			keep_with_wakers(p, s->pids, s->nr_pids);
		/* the perf map files of the processes kept (jitsyms is sorted by pid) */
		p->stats.jit_maps = 0;
		for (size_t i = 0; i < p->nr_jitsyms; i++)
			if (!i || p->jitsyms[i].pid != p->jitsyms[i - 1].pid)
				p->stats.jit_maps++;
	}
	p->stats.jit_syms = p->nr_jitsyms;
	buildid_keeper__scan(s->keeper, p);
	sideband__fill_build_ids(p);
	/* a machine's or a cgroup's processes: a program's stacks shared by all of its processes
	 * (a minute of a busy machine's compilers was 71,000 stacks of addresses, 27,000 of code) */
	if (o->all || o->cgroup) {
		err = profile__share_stacks(p);
		if (!err)	/* a process's records side by side: their pids and images pack to little */
			err = profile__sort_by_process(p);
		if (err)
			return fail(err, "cannot store the stacks by object: %s", strerror(-err));
	}
	ksyms__save_for_samples(p, "/proc/kallsyms");
	save_cgroups(p, &s->cgroups);
	/* the names of what was not kept (other processes' perf maps, exited children's paths)
	 * go: a 1 s recording's 55 samples carried 84 KB of a dead node's JIT symbol names */
	err = profile__compact_strings(p);
	if (err)
		return fail(err, "cannot finish the profile's string table: %s", strerror(-err));
	return 0;
}

#define TABLE_CACHE_TRIM_NS (600 * 1000000000ull)

int session__trim_table_cache(struct session *s, bool now)
{
	const struct unwinder_stats *us = s->unw ? unwinder__stats(s->unw) : NULL;
	const char *dir = s->opts.table_cache;
	u64 mono = now_ns(CLOCK_MONOTONIC), real = now_ns(CLOCK_REALTIME), freed, max;
	unsigned removed;
	int err;

	if (!dir || !us || us->objects_kept == s->kept_at_trim ||
	    (!now && mono < s->trimmed_ns + TABLE_CACHE_TRIM_NS))
		return 0;
	s->kept_at_trim = us->objects_kept;
	s->trimmed_ns = mono;
	max = buildid_cache__max_size(dir);
	err = buildid_cache__trim(dir, max, real > TABLE_CACHE_TRIM_NS ? real - TABLE_CACHE_TRIM_NS : 0,
				  &removed, &freed);
	if (err)
		return fail(err, "cannot keep the build-id cache '%s' within %.1f MB: %s", dir,
			    max / 1e6, strerror(-err));
	if (removed)
		note("build-id cache over %.1f MB: %u least recently used entries removed (%.1f MB)",
		     max / 1e6, removed, freed / 1e6);
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
			if (!err && s->unw) {
				qsort(keep, nr + nr_also, sizeof(*keep), cmp_u32);
				unwinder__keep(s->unw, keep, nr + nr_also);
				/* what the processes kept map: the other objects' tables go */
				if (s->opts.lazy_tables)
					unwinder__release_unmapped(s->unw, s->p);
			}
		} else {
			err = fail(-ENOMEM, "cannot forget exited processes: %s", strerror(ENOMEM));
		}
	}
	free(keep);
	/* what the namespace-pid pass has not seen yet stays after what it has */
	s->seen_comms = s->p->nr_comms;
	s->seen_forks = s->p->nr_forks;
	s->unw_maps = s->p->nr_mappings;
	s->unw_comms = s->p->nr_comms;
	s->unw_forks = s->p->nr_forks;
	return err;
}

static int cmp_ptr(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(const void *const *)a, y = (uintptr_t)*(const void *const *)b;

	return x < y ? -1 : x > y;
}

/* the mappings of a user stack's frames: every frame of a stack that needed frame pointers
 * or did not end where the process began (a table may be missing there) */
static int stack_mappings(struct session *s, const struct profile_stack_sample *ss,
			  const struct profile_mapping ***out, size_t *nr, size_t *cap)
{
	const struct profile_stack *st = profile__stack(s->p, ss->user);
	const u64 *ip;

	if (!st || (st->end == HSBPF_STACK_COMPLETE && !st->nr_fp) || st->end == PROFILE_STACK_LOST)
		return 0;
	ip = profile__frames(s->p, st);
	for (u32 f = 0; f < st->nr; f++) {
		const struct profile_mapping *m = profile__find_mapping(s->p, ss->pid, ss->exec_ns,
									 ss->map_ns, ip[f]);

		if (!m || (*nr && (*out)[*nr - 1] == m))
			continue;
		if (array__reserve((void **)out, cap, *nr + 1, sizeof(**out)))
			return -ENOMEM;
		(*out)[(*nr)++] = m;
	}
	return 0;
}

int session__want_tables(struct session *s)
{
	const struct profile_mapping **maps = NULL;
	size_t nr = 0, cap = 0;
	int err = 0;

	if (!s->unw || !s->opts.lazy_tables)
		return 0;
	for (size_t i = 0; i < s->p->nr_stack_samples && !err; i++)
		err = stack_mappings(s, &s->p->stack_samples[i], &maps, &nr, &cap);
	if (!err && nr)
		qsort(maps, nr, sizeof(*maps), cmp_ptr);
	for (size_t i = 0; i < nr && !err; i++) {
		const struct profile_mapping *m = maps[i];

		if (i && maps[i - 1] == m)
			continue;
		err = unwinder__want(s->unw, m->pid, m->start, m->len, profile__str(s->p, m->path),
				     m->build_id, m->build_id_size);
	}
	free(maps);
	return err ? fail(err, "cannot queue unwind tables: %s", strerror(-err)) : 0;
}

int session__build_tables(struct session *s)
{
	return s->unw || s->py ? feed_unwinder(s, 0) : 0;
}

int session__name_python(struct session *s)
{
	if (s->py && pytrack__name(s->py, s->p))
		return fail(-ENOMEM, "cannot name Python frames: %s", strerror(ENOMEM));
	return 0;
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

void session__sideband_recovery(const struct session *s, u32 *resyncs, u32 *unrecovered)
{
	*resyncs = s->resyncs;
	*unrecovered = s->unrecovered;
}

void session__sideband_ids(const struct session *s, struct sideband_id_stats *st)
{
	sideband__id_stats(s->sb, st);
}

bool session__command_stopped(const struct session *s)
{
	return s->command_stopped;
}

const char *session__event_name(const struct session *s)
{
	return s->ev.name;
}

bool session__cgroup_removed(const struct session *s, const char **path, u64 *id)
{
	struct stat st;

	if (s->so.cgroup_fd < 0)
		return false;
	*path = s->cgroup_path;
	*id = s->so.cgroup_id;
	/* the directory held open since the start: a removed cgroup's has lost its files, even
	 * when a new cgroup took its path */
	return fstatat(s->so.cgroup_fd, "cgroup.procs", &st, 0) && errno == ENOENT;
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

void session__fill_meta(struct session *s)
{
	fill_meta(s);
}

void session__close(struct session *s)
{
	if (!s)
		return;
	if (s->cmd.pid > 0)
		command__abort(&s->cmd);
	unwinder__free(s->unw);
	free(s->unw_ev);
	pytrack__free(s->py);
	late_stacks__free(s->late);
	jitmaps__free(s->jit);
	buildid_keeper__free(s->keeper);
	sampler__destroy(s->sampler);
	sideband__close(s->sb);
	cgroup_names__free(&s->cgroups);
	if (s->so.cgroup_fd >= 0)
		close(s->so.cgroup_fd);
	profile__free(s->p);
	free(s->pids);
	free(s->cpus);
	free(s->followed);
	free(s->mem_libcs);
	free(s->wakers);
	free(s);
}

struct buildid_keeper *session__keeper(struct session *s)
{
	return s->keeper;
}
