// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Counting perf events: open (per task with inheritance, per CPU, or per cgroup and CPU),
 * group leaders first, enable, disable, read and sum. */
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "stat/stat_counters.h"

struct stat_counters {
	struct stat_counters_opts o;
	int nr_events, nr_units, nr_scopes;
	int *fds;	/* [scope][event][unit], -1 when not open */
	enum stat_counter_status *status;
};

static int *fd_at(const struct stat_counters *c, int scope, int event, int unit)
{
	return &c->fds[((size_t)scope * c->nr_events + event) * c->nr_units + unit];
}

static bool per_task(const struct stat_counters *c)
{
	return c->o.nr_tids > 0;
}

/* what the kernel answers for an event it or its PMU does not have; EINVAL too for hardware
 * and raw events, which is how a PMU refuses a code it does not know */
static bool not_supported(int err, const struct event_spec *ev)
{
	return err == -ENOENT || err == -EOPNOTSUPP || err == -ENODEV ||
	       (err == -EINVAL && ev->type != PERF_TYPE_SOFTWARE);
}

static void counting_attr(const struct stat_counters *c, const struct stat_event *e,
			  struct perf_event_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = e->spec.type;
	attr->config = e->spec.config;
	attr->exclude_user = e->spec.exclude_user;
	attr->exclude_kernel = e->spec.exclude_kernel;
	attr->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	/* the leader holds its group back until enabled; the others follow it */
	attr->disabled = e->leader;
	attr->inherit = per_task(c);
	attr->enable_on_exec = e->leader && c->o.enable_on_exec;
}

static int leader_of(const struct stat_counters *c, int event)
{
	while (event > 0 && !c->o.events->v[event].leader)
		event--;
	return event;
}

static void mark_not_supported(struct stat_counters *c, int event, int err)
{
	const struct stat_events *evs = c->o.events;

	debug("event '%s' is not supported: %s", evs->v[event].spec.name, strerror(-err));
	c->status[event] = STAT_COUNTER_NOT_SUPPORTED;
	if (!evs->v[event].leader)
		return;
	/* a group without its leader cannot be scheduled */
	for (int e = event + 1; e < evs->n && !evs->v[e].leader; e++)
		c->status[e] = STAT_COUNTER_NOT_SUPPORTED;
}

static int open_one(struct stat_counters *c, int scope, int event, int unit)
{
	const struct stat_event *e = &c->o.events->v[event];
	unsigned long flags = PERF_FLAG_FD_CLOEXEC;
	struct perf_event_attr attr;
	int pid, cpu, group = -1, fd;

	counting_attr(c, e, &attr);
	if (per_task(c)) {
		pid = c->o.tids[unit];
		cpu = -1;
	} else {
		pid = c->o.nr_cgroups ? c->o.cgroup_fds[scope] : -1;
		cpu = c->o.cpus[unit];
		if (c->o.nr_cgroups)
			flags |= PERF_FLAG_PID_CGROUP;
	}
	if (!e->leader) {
		group = *fd_at(c, scope, leader_of(c, event), unit);
		if (group < 0)		/* its leader's thread was gone */
			return 0;
	}
	fd = syscall(__NR_perf_event_open, &attr, pid, cpu, group, flags);
	if (fd >= 0) {
		*fd_at(c, scope, event, unit) = fd;
		return 0;
	}
	if (errno == ESRCH && per_task(c)) {	/* a thread of -p that has exited since */
		debug("thread %d has exited: not counted", pid);
		return 0;
	}
	return -errno;
}

struct stat_counters *stat_counters__open(const struct stat_counters_opts *o)
{
	struct stat_counters *c = calloc(1, sizeof(*c));
	size_t nr;
	int err = 0;

	if (!c)
		goto nomem;
	c->o = *o;
	c->nr_events = o->events->n;
	c->nr_units = o->nr_tids ? o->nr_tids : o->nr_cpus;
	c->nr_scopes = o->nr_cgroups ? o->nr_cgroups : 1;
	nr = (size_t)c->nr_scopes * c->nr_events * c->nr_units;
	c->fds = malloc((nr ? nr : 1) * sizeof(*c->fds));
	c->status = calloc(c->nr_events ? c->nr_events : 1, sizeof(*c->status));
	if (!c->fds || !c->status)
		goto nomem;
	for (size_t i = 0; i < nr; i++)
		c->fds[i] = -1;
	for (int s = 0; s < c->nr_scopes; s++) {
		for (int u = 0; u < c->nr_units; u++) {
			for (int e = 0; e < c->nr_events; e++) {
				const struct event_spec *ev = &o->events->v[e].spec;

				if (c->status[e] != STAT_COUNTER_OK)
					continue;
				err = open_one(c, s, e, u);
				if (!err)
					continue;
				/* the first unit decides; a later refusal is a real error */
				if (s == 0 && u == 0 && not_supported(err, ev)) {
					mark_not_supported(c, e, err);
					err = 0;
					continue;
				}
				if (per_task(c))
					event__explain_open_error(ev, err);
				else
					error("cannot open event '%s' on CPU %d: %s%s", ev->name, o->cpus[u],
					      strerror(-err), err == -EMFILE ?
					      " (too many open files: raise the limit with ulimit -n)" : "");
				goto fail;
			}
		}
	}
	return c;
nomem:
	err = -ENOMEM;
	error("cannot open counters: %s", strerror(ENOMEM));
fail:
	stat_counters__close(c);
	errno = -err;
	return NULL;
}

enum stat_counter_status stat_counters__status(const struct stat_counters *c, int event)
{
	return c->status[event];
}

int stat_counters__nr_ok(const struct stat_counters *c)
{
	int n = 0;

	for (int e = 0; e < c->nr_events; e++)
		n += c->status[e] == STAT_COUNTER_OK;
	return n;
}

/* ioctl every open leader */
static int each_leader(struct stat_counters *c, unsigned long req, const char *what)
{
	for (int s = 0; s < c->nr_scopes; s++)
		for (int e = 0; e < c->nr_events; e++) {
			if (!c->o.events->v[e].leader || c->status[e] != STAT_COUNTER_OK)
				continue;
			for (int u = 0; u < c->nr_units; u++) {
				int fd = *fd_at(c, s, e, u);

				if (fd >= 0 && ioctl(fd, req, 0))
					return fail(-errno, "cannot %s event '%s': %s", what,
						    c->o.events->v[e].spec.name, strerror(errno));
			}
		}
	return 0;
}

int stat_counters__enable(struct stat_counters *c)
{
	return each_leader(c, PERF_EVENT_IOC_ENABLE, "enable");
}

int stat_counters__disable(struct stat_counters *c)
{
	return each_leader(c, PERF_EVENT_IOC_DISABLE, "disable");
}

int stat_counters__read(struct stat_counters *c, int cgroup, struct stat_reading *out)
{
	for (int e = 0; e < c->nr_events; e++) {
		out[e] = (struct stat_reading){ 0 };
		for (int u = 0; u < c->nr_units; u++) {
			int fd = *fd_at(c, cgroup, e, u);
			u64 v[3];
			ssize_t n;

			if (fd < 0)
				continue;
			n = read(fd, v, sizeof(v));
			if (n != sizeof(v))
				return fail(n < 0 ? -errno : -EIO, "cannot read event '%s': %s",
					    c->o.events->v[e].spec.name, n < 0 ? strerror(errno) :
					    "short read");
			out[e].count += v[0];
			out[e].enabled += v[1];
			out[e].running += v[2];
		}
	}
	return 0;
}

int stat_counters__cpu_fd(const struct stat_counters *c, int event, int i)
{
	if (per_task(c) || c->o.nr_cgroups || i < 0 || i >= c->nr_units)
		return -1;
	return *fd_at(c, 0, event, i);
}

void stat_counters__close(struct stat_counters *c)
{
	size_t nr;

	if (!c)
		return;
	nr = (size_t)c->nr_scopes * c->nr_events * c->nr_units;
	for (size_t i = 0; c->fds && i < nr; i++)
		if (c->fds[i] >= 0)
			close(c->fds[i]);
	free(c->fds);
	free(c->status);
	free(c);
}
