// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* A counting run: the target resolved, counters opened (and the per-cgroup program loaded
 * on them), enabled at the command's exec or at once, read at ticks and intervals, and
 * read a last time once the target ends. */
#include <dirent.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "record/cgroup.h"
#include "stat/stat.h"
#include "record/target.h"

#define SCAN_NS 1000000000ull		/* cgroup names are looked for once a second */
#define KILL_AFTER_NS 5000000000ull	/* a command stopped early: SIGKILL after SIGTERM */

struct state {
	const struct stat_opts *o;
	struct stat_run *run;
	struct stat_counters *counters;
	struct stat_cgroup *bpf;
	int *cpus, nr_cpus;
	pid_t *tids;
	int nr_tids;
	u32 *pids;
	int nr_pids;
	struct pollfd *pfds;		/* the command's pidfd, or each -p process's */
	int nr_pfds, nr_alive;
	int *cgroup_fds;
	u64 *cgroup_ids;
	struct command cmd;
	bool have_cmd;
	struct cgroup_names names;
	int bpf_event[STAT_CGROUP_MAX_EVENTS];	/* BPF counter index -> event index */
	int nr_bpf_events;
	struct stat_reading *buf;
	u64 start;
};

static int pidfd_open(pid_t pid)
{
	return syscall(SYS_pidfd_open, pid, 0);
}

int stat_opts__check(const struct stat_opts *o)
{
	int scopes = !!o->all + !!o->pids + !!o->nr_cgroups + !!o->per_cgroup;

	if (scopes > 1)
		return fail(-EINVAL, "choose one target: a command, -a, -p, --cgroup or --per-cgroup");
	if (!scopes && !o->argv)
		return fail(-EINVAL, "nothing to count: give a command, -a, -p, --cgroup or --per-cgroup");
	if (o->cgroup_events && !o->nr_cgroups)
		return fail(-EINVAL, "--cgroup-events is for --cgroup");
	return 0;
}

/* -------- sets -------- */

static struct stat_set *set_add(struct state *st, enum stat_set_kind kind, u64 id)
{
	struct stat_run *run = st->run;
	struct stat_set *sets, *s;
	int n = run->nr_events ? run->nr_events : 1;

	sets = realloc(run->sets, (run->nr_sets + 1) * sizeof(*sets));
	if (!sets)
		return NULL;
	run->sets = sets;
	s = &sets[run->nr_sets];
	memset(s, 0, sizeof(*s));
	s->kind = kind;
	s->id = id;
	s->acc = calloc(n, sizeof(*s->acc));
	s->last = calloc(n, sizeof(*s->last));
	s->iv = calloc(n, sizeof(*s->iv));
	if (!s->acc || !s->last || !s->iv) {
		free(s->acc);
		free(s->last);
		free(s->iv);
		return NULL;
	}
	run->nr_sets++;
	return s;
}

static struct stat_set *set_find(struct state *st, enum stat_set_kind kind, u64 id)
{
	for (size_t i = 0; i < st->run->nr_sets; i++)
		if (st->run->sets[i].kind == kind && st->run->sets[i].id == id)
			return &st->run->sets[i];
	return NULL;
}

/* a new cumulative reading of one event of a set */
static void set_update(struct stat_set *s, int event, const struct stat_reading *cum)
{
	struct stat_reading *last = &s->last[event], d;

	/* cumulative counts only grow; a reading behind the last one (cannot happen) adds 0 */
	d.count = cum->count > last->count ? cum->count - last->count : 0;
	d.enabled = cum->enabled > last->enabled ? cum->enabled - last->enabled : 0;
	d.running = cum->running > last->running ? cum->running - last->running : 0;
	*last = *cum;
	stat_acc__add(&s->acc[event], &d);
	s->iv[event].count += d.count;
	s->iv[event].enabled += d.enabled;
	s->iv[event].running += d.running;
}

static const char *mount_relative(const char *abs)
{
	static char mnt[PATH_MAX];
	size_t n;

	if (!mnt[0] && cgroup__find_mount("/proc/self/mountinfo", mnt, sizeof(mnt)))
		return abs;
	n = strlen(mnt);
	if (strncmp(abs, mnt, n))
		return abs;
	return abs[n] ? abs + n : "/";
}

/* names for the sets of --per-cgroup that have none yet: a rescan when one is unknown */
static void name_sets(struct state *st)
{
	bool scanned = false;

	for (size_t i = 0; i < st->run->nr_sets; i++) {
		struct stat_set *s = &st->run->sets[i];
		const char *name;

		if (s->kind != STAT_SET_CGROUP || s->name)
			continue;
		name = cgroup_names__find(&st->names, s->id);
		if (!name && !scanned) {
			cgroup_names__scan(&st->names);
			scanned = true;
			name = cgroup_names__find(&st->names, s->id);
		}
		if (name)
			s->name = strdup(name);
	}
}

/* -------- reading -------- */

static int take_bpf(void *ctx, u64 cgroup_id, int event, const struct stat_reading *r)
{
	struct state *st = ctx;
	enum stat_set_kind kind = STAT_SET_CGROUP;
	struct stat_set *s;

	if (event < 0 || event >= st->nr_bpf_events)
		return 0;
	if (cgroup_id == STAT_CGROUP_UNATTRIBUTED)
		kind = STAT_SET_UNATTRIBUTED;
	else if (st->o->per_cgroup && cgroup_id == STAT_CGROUP_IDLE)
		kind = STAT_SET_IDLE;
	s = set_find(st, kind, cgroup_id);
	if (!s && !(s = set_add(st, kind, cgroup_id)))
		return fail(-ENOMEM, "cannot count per cgroup: %s", strerror(ENOMEM));
	set_update(s, st->bpf_event[event], r);
	return 0;
}

static int read_counters_into(struct state *st, int scope, struct stat_set *s)
{
	int err = stat_counters__read(st->counters, scope, st->buf);

	for (int e = 0; !err && e < st->run->nr_events; e++)
		if (st->run->status[e] == STAT_COUNTER_OK)
			set_update(s, e, &st->buf[e]);
	return err;
}

static int read_all(struct state *st)
{
	const struct stat_opts *o = st->o;
	int err = 0;

	if (st->bpf) {
		err = stat_cgroup__flush(st->bpf);
		if (!err)
			err = stat_cgroup__read(st->bpf, take_bpf, st);
		/* the same counters read whole: what -a counts */
		if (!err && o->per_cgroup)
			err = read_counters_into(st, 0, set_find(st, STAT_SET_TOTAL, 0));
		return err;
	}
	if (o->cgroup_events) {
		for (int i = 0; !err && i < o->nr_cgroups; i++)
			err = read_counters_into(st, i, set_find(st, STAT_SET_CGROUP, st->cgroup_ids[i]));
		return err;
	}
	return read_counters_into(st, 0, set_find(st, STAT_SET_TARGET, 0));
}

/* -------- the target -------- */

static int process_of(u32 pid, u32 *tgid)
{
	char path[64], line[128];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	*tgid = pid;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %u", tgid) == 1)
			break;
	fclose(f);
	return 0;
}

/* every thread of the processes of -p, and a pidfd each to see them end */
static int resolve_pids(struct state *st)
{
	size_t cap = 0;
	int err;

	if (target__parse_pids(st->o->pids, &st->pids, &st->nr_pids))
		return -EINVAL;
	err = target__check_pids(st->pids, st->nr_pids);
	if (err)
		return err;
	st->pfds = calloc(st->nr_pids, sizeof(*st->pfds));
	if (!st->pfds)
		return -ENOMEM;
	for (int i = 0; i < st->nr_pids; i++) {
		char path[64];
		struct dirent *de;
		u32 tgid;
		DIR *d;

		if (process_of(st->pids[i], &tgid))
			return fail(-ESRCH, "no process with pid %u", st->pids[i]);
		snprintf(path, sizeof(path), "/proc/%u/task", tgid);
		d = opendir(path);
		if (!d)
			return fail(-ESRCH, "no process with pid %u", st->pids[i]);
		while ((de = readdir(d))) {
			long tid = strtol(de->d_name, NULL, 10);

			if (tid <= 0)
				continue;
			if (array__reserve((void **)&st->tids, &cap, st->nr_tids + 1, sizeof(*st->tids))) {
				closedir(d);
				return -ENOMEM;
			}
			st->tids[st->nr_tids++] = tid;
		}
		closedir(d);
		st->pfds[st->nr_pfds].fd = pidfd_open(tgid);
		st->pfds[st->nr_pfds].events = POLLIN;
		if (st->pfds[st->nr_pfds].fd < 0)
			return fail(-errno, "cannot watch pid %u: %s", tgid, strerror(errno));
		st->nr_pfds++;
	}
	st->nr_alive = st->nr_pfds;
	return 0;
}

static int resolve_cgroups(struct state *st)
{
	const struct stat_opts *o = st->o;

	st->cgroup_fds = calloc(o->nr_cgroups, sizeof(*st->cgroup_fds));
	st->cgroup_ids = calloc(o->nr_cgroups, sizeof(*st->cgroup_ids));
	if (!st->cgroup_fds || !st->cgroup_ids)
		return -ENOMEM;
	for (int i = 0; i < o->nr_cgroups; i++)
		st->cgroup_fds[i] = -1;
	for (int i = 0; i < o->nr_cgroups; i++) {
		char abs[PATH_MAX];
		struct stat_set *s;
		int err = cgroup__open(o->cgroups[i], abs, sizeof(abs), &st->cgroup_ids[i],
				       &st->cgroup_fds[i]);

		if (err)
			return err;
		if (set_find(st, STAT_SET_CGROUP, st->cgroup_ids[i]))
			return fail(-EINVAL, "cgroup '%s' is given twice", o->cgroups[i]);
		s = set_add(st, STAT_SET_CGROUP, st->cgroup_ids[i]);
		if (!s || !(s->name = strdup(mount_relative(abs))))
			return -ENOMEM;
	}
	return 0;
}

/* a command counted on its own (rather than timing a count of something else) */
static bool command_is_target(const struct stat_opts *o)
{
	return o->argv && !o->all && !o->pids && !o->nr_cgroups && !o->per_cgroup;
}

static int open_counters(struct state *st)
{
	const struct stat_opts *o = st->o;
	struct stat_counters_opts co = { .events = o->events };

	if (o->pids) {
		co.tids = st->tids;
		co.nr_tids = st->nr_tids;
	} else if (command_is_target(o)) {
		co.tids = &st->cmd.pid;
		co.nr_tids = 1;
		co.enable_on_exec = true;
	} else {
		co.cpus = st->cpus;
		co.nr_cpus = st->nr_cpus;
		if (o->cgroup_events) {
			co.cgroup_fds = st->cgroup_fds;
			co.nr_cgroups = o->nr_cgroups;
		}
	}
	st->counters = stat_counters__open(&co);
	if (!st->counters)
		return -errno;
	for (int e = 0; e < o->events->n; e++)
		st->run->status[e] = stat_counters__status(st->counters, e);
	return 0;
}

static int open_bpf(struct state *st)
{
	const struct stat_opts *o = st->o;
	struct stat_cgroup_opts bo = {
		.cpus = st->cpus, .nr_cpus = st->nr_cpus, .max_entries = o->map_entries,
	};
	int *fds, err = 0;

	fds = calloc((size_t)STAT_CGROUP_MAX_EVENTS * st->nr_cpus, sizeof(*fds));
	if (!fds)
		return -ENOMEM;
	for (int e = 0; e < o->events->n; e++) {
		const struct event_spec *ev = &o->events->v[e].spec;

		if (st->run->status[e] != STAT_COUNTER_OK)
			continue;
		if (bo.nr_events == STAT_CGROUP_MAX_EVENTS) {
			err = fail(-EINVAL, "counting per cgroup takes at most %d events",
				   STAT_CGROUP_MAX_EVENTS);
			goto out;
		}
		if (ev->type == PERF_TYPE_SOFTWARE && ev->config == PERF_COUNT_SW_CONTEXT_SWITCHES &&
		    !ev->exclude_kernel)
			bo.switch_events |= 1u << bo.nr_events;
		for (int i = 0; i < st->nr_cpus; i++)
			fds[bo.nr_events * st->nr_cpus + i] = stat_counters__cpu_fd(st->counters, e, i);
		st->bpf_event[bo.nr_events++] = e;
	}
	st->nr_bpf_events = bo.nr_events;
	bo.fds = fds;
	if (!o->per_cgroup) {
		bo.watched = st->cgroup_ids;
		bo.nr_watched = o->nr_cgroups;
	}
	st->bpf = stat_cgroup__open(&bo);
	if (!st->bpf)
		err = -errno;
out:
	free(fds);
	return err;
}

static int setup(struct state *st)
{
	const struct stat_opts *o = st->o;
	int err;

	st->buf = calloc(o->events->n ? o->events->n : 1, sizeof(*st->buf));
	if (!st->buf)
		return -ENOMEM;
	if (o->pids) {
		err = resolve_pids(st);
		if (err)
			return err;
	}
	if (o->all || o->nr_cgroups || o->per_cgroup) {
		err = cpus__online(&st->cpus, &st->nr_cpus);
		if (err)
			return fail(err, "cannot read the online CPUs: %s", strerror(-err));
	}
	if (o->nr_cgroups) {
		err = resolve_cgroups(st);
		if (err)
			return err;
	} else if (o->per_cgroup) {
		if (!set_add(st, STAT_SET_TOTAL, 0))
			return -ENOMEM;
		cgroup_names__scan(&st->names);
	} else if (!set_add(st, STAT_SET_TARGET, 0)) {
		return -ENOMEM;
	}
	if (o->argv) {
		err = command__spawn(o->argv, true, &st->cmd);
		if (err)
			return fail(err, "cannot start '%s': %s", o->argv[0], strerror(-err));
		st->have_cmd = true;
		/* with -p too, the command's end is the run's */
		for (int i = 0; i < st->nr_pfds; i++)
			close(st->pfds[i].fd);
		free(st->pfds);
		st->pfds = calloc(1, sizeof(*st->pfds));
		if (!st->pfds)
			return -ENOMEM;
		st->pfds[0].fd = pidfd_open(st->cmd.pid);
		st->pfds[0].events = POLLIN;
		if (st->pfds[0].fd < 0)
			return fail(-errno, "cannot watch '%s': %s", o->argv[0], strerror(errno));
		st->nr_pfds = st->nr_alive = 1;
	}
	err = open_counters(st);
	if (!err && (o->per_cgroup || (o->nr_cgroups && !o->cgroup_events)))
		err = open_bpf(st);
	return err;
}

/* -------- the run -------- */

static bool interrupted(const struct state *st)
{
	return st->o->interrupts && *st->o->interrupts;
}

/* wait until deadline (CLOCK_MONOTONIC ns) or the target's end: 1 when it has ended */
static int wait_until(struct state *st, u64 deadline)
{
	u64 now = now_ns(CLOCK_MONOTONIC);
	struct timespec ts;
	int n;

	if (deadline != UINT64_MAX) {
		u64 left = deadline > now ? deadline - now : 0;

		ts.tv_sec = left / 1000000000ull;
		ts.tv_nsec = left % 1000000000ull;
	}
	n = ppoll(st->pfds, st->nr_pfds, deadline == UINT64_MAX ? NULL : &ts, NULL);
	if (n <= 0)
		return 0;	/* the deadline, or a signal */
	for (int i = 0; i < st->nr_pfds; i++) {
		if (st->pfds[i].fd < 0 || !st->pfds[i].revents)
			continue;
		if (st->have_cmd) {
			int status;

			if (wait4(st->cmd.pid, &status, WNOHANG, &st->run->rusage) != st->cmd.pid)
				continue;
			st->run->child_status = status;
			st->run->has_rusage = true;
			st->cmd.pid = -1;
		}
		close(st->pfds[i].fd);
		st->pfds[i].fd = -1;	/* ppoll skips it from now on */
		st->nr_alive--;
	}
	if (!st->nr_alive && st->o->pids && !st->have_cmd)
		debug("every target process has exited");
	return !st->nr_alive && st->nr_pfds;
}

/* stopped by a signal: the command goes too, with SIGKILL if it will not go on SIGTERM */
static void stop_command(struct state *st)
{
	sig_atomic_t seen = st->o->interrupts ? *st->o->interrupts : 0;
	u64 start = now_ns(CLOCK_MONOTONIC);
	pid_t pid = st->cmd.pid;
	int status;

	st->run->command_stopped = true;
	kill(pid, SIGTERM);
	for (;;) {
		pid_t r = wait4(pid, &status, WNOHANG, &st->run->rusage);

		if (r == pid) {
			st->run->child_status = status;
			st->run->has_rusage = true;
			break;
		}
		if ((r < 0 && errno != EINTR) || now_ns(CLOCK_MONOTONIC) - start >= KILL_AFTER_NS ||
		    (st->o->interrupts && *st->o->interrupts != seen)) {
			warning("'%s' (pid %d) had not exited on SIGTERM: killed it with SIGKILL",
				st->o->argv[0], pid);
			kill(pid, SIGKILL);
			while (waitpid(pid, &st->run->child_status, 0) < 0 && errno == EINTR)
				;
			st->run->command_killed = true;
			break;
		}
		nanosleep(&(struct timespec){ .tv_nsec = 20000000 }, NULL);
	}
	st->cmd.pid = -1;
}

static void clear_intervals(struct stat_run *run)
{
	for (size_t i = 0; i < run->nr_sets; i++)
		memset(run->sets[i].iv, 0, run->nr_events * sizeof(*run->sets[i].iv));
}

static bool multiplexable(const struct state *st)
{
	for (int e = 0; e < st->o->events->n; e++)
		if (st->run->status[e] == STAT_COUNTER_OK &&
		    st->o->events->v[e].spec.type != PERF_TYPE_SOFTWARE)
			return true;
	return false;
}

static int interval_done(struct state *st, stat_interval_fn fn, void *ctx, u64 now, u64 *iv_start)
{
	int err = 0;

	if (st->o->per_cgroup)
		name_sets(st);
	if (fn)
		err = fn(ctx, st->run, now - st->start, now - *iv_start);
	clear_intervals(st->run);
	*iv_start = now;
	return err;
}

static int count(struct state *st, stat_interval_fn fn, void *ctx)
{
	const struct stat_opts *o = st->o;
	u64 iv = o->interval_ns, now, iv_start, next_tick, next_iv, next_scan;
	bool ticks = multiplexable(st);
	int err;

	if (st->bpf) {
		err = stat_cgroup__attach(st->bpf);
		if (err)
			return err;
	}
	st->start = now_ns(CLOCK_MONOTONIC);
	if (!command_is_target(o)) {	/* a command's counters start at its exec */
		err = stat_counters__enable(st->counters);
		if (err)
			return err;
	}
	if (st->have_cmd) {
		err = command__start(&st->cmd, o->argv[0]);
		if (err) {
			close(st->pfds[0].fd);
			st->pfds[0].fd = -1;
			return err;
		}
	}
	now = iv_start = st->start;
	next_tick = ticks ? st->start + STAT_TICK_NS : UINT64_MAX;
	next_iv = iv ? st->start + iv : UINT64_MAX;
	next_scan = o->per_cgroup ? st->start + SCAN_NS : UINT64_MAX;
	while (!interrupted(st)) {
		u64 deadline = next_tick < next_iv ? next_tick : next_iv;
		int ended;

		if (next_scan < deadline)
			deadline = next_scan;
		ended = wait_until(st, deadline);
		now = now_ns(CLOCK_MONOTONIC);
		if (ended)
			break;
		if (now >= next_tick || now >= next_iv) {
			err = read_all(st);
			if (err)
				return err;
		}
		if (now >= next_tick)
			next_tick = now + STAT_TICK_NS;
		if (now >= next_iv) {
			err = interval_done(st, fn, ctx, now, &iv_start);
			if (err)
				return err;
			while (next_iv <= now)
				next_iv += iv;
		}
		if (now >= next_scan) {
			cgroup_names__scan(&st->names);
			next_scan = now + SCAN_NS;
		}
	}
	st->run->elapsed_ns = now - st->start;
	if (st->bpf)
		stat_cgroup__stop(st->bpf);
	err = stat_counters__disable(st->counters);
	if (!err)
		err = read_all(st);
	if (!err && iv && now > iv_start)	/* the last interval, cut short */
		err = interval_done(st, fn, ctx, now, &iv_start);
	if (st->have_cmd && st->cmd.pid > 0)
		stop_command(st);
	if (st->bpf && !stat_cgroup__stats(st->bpf, &st->run->bpf))
		st->run->has_bpf_stats = true;
	if (st->bpf)
		stat_cgroup__prog_stats(st->bpf, &st->run->bpf_run_ns, &st->run->bpf_run_cnt);
	if (o->per_cgroup)
		name_sets(st);
	return err;
}

int stat__run(const struct stat_opts *o, stat_interval_fn fn, void *ctx, struct stat_run *run)
{
	struct state st = { .o = o, .run = run, .cmd = { .pid = -1, .gate = -1, .status = -1 } };
	int err;

	memset(run, 0, sizeof(*run));
	run->child_status = -1;
	run->nr_events = o->events->n;
	err = setup(&st);
	if (!err)
		err = count(&st, fn, ctx);
	if (err == -ENOMEM)
		error("cannot count: %s", strerror(ENOMEM));
	if (st.cmd.pid > 0)
		command__abort(&st.cmd);
	stat_cgroup__destroy(st.bpf);
	stat_counters__close(st.counters);
	for (int i = 0; i < st.nr_pfds; i++)
		if (st.pfds[i].fd >= 0)
			close(st.pfds[i].fd);
	for (int i = 0; st.cgroup_fds && i < o->nr_cgroups; i++)
		if (st.cgroup_fds[i] >= 0)
			close(st.cgroup_fds[i]);
	cgroup_names__free(&st.names);
	free(st.pfds);
	free(st.cgroup_fds);
	free(st.cgroup_ids);
	free(st.cpus);
	free(st.tids);
	free(st.pids);
	free(st.buf);
	return err;
}

void stat_run__free(struct stat_run *run)
{
	for (size_t i = 0; i < run->nr_sets; i++) {
		free(run->sets[i].name);
		free(run->sets[i].acc);
		free(run->sets[i].last);
		free(run->sets[i].iv);
	}
	free(run->sets);
	memset(run, 0, sizeof(*run));
}
