// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* BPF side of a recording: skeleton open/configure/load, per-CPU perf events, the re-arm
 * thread for randomized periods, and the map drain. Nothing else touches map fds. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/membarrier.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "hsbpf.h"
#include "profile.skel.h"
#include "empty.skel.h"
#include "lbr.skel.h"
#include "sampler.h"

_Static_assert(sizeof(struct sample_key) == 32, "sample_key layout is the seam");
_Static_assert(sizeof(struct sample_value) == 16, "sample_value layout is the seam");
_Static_assert(sizeof(struct rearm_token) == 32, "rearm_token layout is the seam");
_Static_assert(sizeof(struct proc_state) == 16, "proc_state layout is the seam");

struct sampler {
	struct sampler_opts opts;
	struct profile_bpf *skel;
	struct empty_bpf *empty;
	struct lbr_bpf *lbr;	/* branch stacks: this program on the events instead */
	struct bpf_program *prog;
	int *fds;			/* per CPU, indexed like opts.cpus */
	struct bpf_link **links;
	int nr_events;
	int *cpu_index;			/* CPU number -> index in fds, -1 if not sampled */
	int max_cpu;
	/* randomized periods */
	struct ring_buffer *rb;
	pthread_t thread;
	bool thread_running;
	volatile bool stop;
	u64 rng;
	u64 *last_interval;		/* per event index */
	u64 *target;			/* per event index: the interval asked for */
	double *bias;			/* per event index: how late re-arms land, averaged */
	struct profile_stats rs;	/* re-arm statistics, owned by the thread until joined */
	int rearm_err;
	u32 gen;			/* live reads: the histogram generation counting now */
};

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && verbose < 2)
		return 0;
	if (level != LIBBPF_WARN && !verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static void quiet_libbpf(void)
{
	libbpf_set_print(libbpf_print);
}

static long perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group,
			    unsigned long flags)
{
	return syscall(__NR_perf_event_open, attr, pid, cpu, group, flags);
}

static int load_error(const char *what, int err)
{
	error("cannot load BPF program %s: %s%s", what, strerror(-err),
	      err == -EPERM || err == -EACCES ? " (need root or CAP_BPF and CAP_PERFMON)" : "");
	return err;
}

/* NULL with errno ENOMEM, reported */
static struct sampler *sampler_alloc(const struct sampler_opts *opts)
{
	struct sampler *s = calloc(1, sizeof(*s));
	int max = 0;

	quiet_libbpf();
	if (!s)
		goto nomem;
	s->opts = *opts;
	s->rng = opts->seed ? opts->seed : now_ns(CLOCK_MONOTONIC);
	for (int i = 0; i < opts->nr_cpus; i++)
		if (opts->cpus[i] > max)
			max = opts->cpus[i];
	s->max_cpu = max;
	s->fds = calloc(opts->nr_cpus, sizeof(*s->fds));
	s->links = calloc(opts->nr_cpus, sizeof(*s->links));
	s->cpu_index = calloc(max + 1, sizeof(*s->cpu_index));
	s->last_interval = calloc(opts->nr_cpus, sizeof(*s->last_interval));
	s->target = calloc(opts->nr_cpus, sizeof(*s->target));
	s->bias = calloc(opts->nr_cpus, sizeof(*s->bias));
	if (!s->fds || !s->links || !s->cpu_index || !s->last_interval || !s->target || !s->bias) {
		sampler__destroy(s);
		goto nomem;
	}
	for (int i = 0; i <= max; i++)
		s->cpu_index[i] = -1;
	for (int i = 0; i < opts->nr_cpus; i++) {
		s->fds[i] = -1;
		s->cpu_index[opts->cpus[i]] = i;
	}
	s->rs.interval_min = UINT64_MAX;
	return s;
nomem:
	errno = ENOMEM;
	error("cannot set up sampler: %s", strerror(ENOMEM));
	return NULL;
}

struct sampler *sampler__open(const struct sampler_opts *opts)
{
	struct sampler *s;
	int err = 0;

	s = sampler_alloc(opts);
	if (!s)
		return NULL;
	s->skel = profile_bpf__open();
	if (!s->skel) {
		err = -errno;
		load_error("profile", err);
		goto fail;
	}
	s->skel->rodata->filter_pids = opts->filter_pids;
	s->skel->rodata->random_periods = period__is_random(opts->mode);
	if (opts->max_entries)
		err = bpf_map__set_max_entries(s->skel->maps.samples, opts->max_entries);
	/* the second histogram map counts only when live reads turn the generation */
	if (!err)
		err = bpf_map__set_max_entries(s->skel->maps.samples_odd, !opts->live ? 1 :
					       opts->max_entries ? opts->max_entries : HSBPF_DEFAULT_ENTRIES);
	if (err) {
		load_error("profile (map size)", err);
		goto fail;
	}
	if (!opts->filter_pids) {
		/* nothing to follow: keep the tracepoints out of every fork and exec */
		bpf_program__set_autoload(s->skel->progs.hsbpf_fork, false);
	}
	err = profile_bpf__load(s->skel);
	if (err) {
		load_error("profile", err);
		goto fail;
	}
	/* exec and exit keep process images apart; they run whatever the target */
	err = profile_bpf__attach(s->skel);
	if (err) {
		error("cannot attach exec/exit tracepoints: %s", strerror(-err));
		goto fail;
	}
	s->prog = s->skel->progs.hsbpf_sample;
	if (opts->ev.branch_stack) {
		s->lbr = lbr_bpf__open();
		if (!s->lbr) {
			err = -errno;
			load_error("lbr", err);
			goto fail;
		}
		s->lbr->rodata->filter_pids = opts->filter_pids;
		s->lbr->rodata->precise = opts->ev.precise > 0;
		/* one process table and one IP histogram for both programs */
		err = bpf_map__reuse_fd(s->lbr->maps.procs, bpf_map__fd(s->skel->maps.procs));
		if (!err)
			err = bpf_map__reuse_fd(s->lbr->maps.samples, bpf_map__fd(s->skel->maps.samples));
		if (!err)
			err = bpf_map__reuse_fd(s->lbr->maps.samples_odd, bpf_map__fd(s->skel->maps.samples_odd));
		if (!err)
			err = bpf_map__reuse_fd(s->lbr->maps.live, bpf_map__fd(s->skel->maps.live));
		if (!err && opts->max_entries)
			err = bpf_map__set_max_entries(s->lbr->maps.lbr, opts->max_entries);
		if (!err)
			err = lbr_bpf__load(s->lbr);
		if (err) {
			load_error("lbr", err);
			goto fail;
		}
		s->prog = s->lbr->progs.hsbpf_lbr;
	}
	return s;
fail:
	sampler__destroy(s);
	errno = -err;
	return NULL;
}

struct sampler *sampler__open_empty(const struct sampler_opts *opts)
{
	struct sampler *s;
	int err;

	s = sampler_alloc(opts);
	if (!s)
		return NULL;
	s->empty = empty_bpf__open_and_load();
	if (!s->empty) {
		err = -errno;
		load_error("empty", err);
		sampler__destroy(s);
		errno = -err;
		return NULL;
	}
	s->prog = s->empty->progs.hsbpf_empty;
	return s;
}

static int rearm_one(void *ctx, void *data, size_t size)
{
	struct sampler *s = ctx;
	const struct rearm_token *t = data;
	struct profile_stats *rs = &s->rs;
	u64 next;
	int idx;

	if (size < sizeof(*t) || t->cpu > (u32)s->max_cpu || (idx = s->cpu_index[t->cpu]) < 0)
		return 0;
	next = period__draw(s->opts.mode, s->opts.period, &s->rng);
	/* the ioctl restarts the period from now: take off what has already elapsed since
	 * the sample and how late re-arms have landed on average, so that the interval is the
	 * drawn one (clock events count nanoseconds; other events cannot be corrected) */
	if (s->opts.ev.is_clock) {
		double late;

		/* learn only from intervals this thread armed */
		if (s->target[idx] && t->interval)
			s->bias[idx] += ((double)t->interval - s->target[idx] - s->bias[idx]) / 16;
		if (s->bias[idx] < 0 || s->bias[idx] > next / 4)
			s->bias[idx] = s->bias[idx] < 0 ? 0 : next / 4;
		late = now_ns(CLOCK_MONOTONIC) - t->time_ns + s->bias[idx];
		if (late >= next / 2) {
			/* the token waited too long: cutting the running interval short would
			 * bias it; keep the period in force and re-arm at the next sample */
			s->target[idx] = 0;
			goto account;
		}
		s->target[idx] = next;
		next -= (u64)late;
	}
	if (ioctl(s->fds[idx], PERF_EVENT_IOC_PERIOD, &next) && !s->rearm_err)
		s->rearm_err = -errno;
	else
		rs->rearms++;
account:
	/* the first interval on a CPU runs from enable; intervals outside the target (idle CPUs
	 * with no timer tick) say nothing about the target's sampling */
	if (t->counted && t->interval && t->counter != t->interval) {
		rs->intervals++;
		rs->interval_sum += t->interval;
		rs->interval_sumsq += (double)t->interval * t->interval;
		if (t->interval < rs->interval_min)
			rs->interval_min = t->interval;
		if (t->interval > rs->interval_max)
			rs->interval_max = t->interval;
		if (t->interval == s->last_interval[idx])
			rs->interval_repeats++;
		if (t->interval < s->opts.period / 50 * 49 || t->interval > s->opts.period / 4 * 5)
			rs->interval_outside++;
	}
	s->last_interval[idx] = t->interval;
	return 0;
}

static void *rearm_thread(void *arg)
{
	struct sampler *s = arg;

	while (!s->stop) {
		int n = ring_buffer__poll(s->rb, 100);

		if (n < 0 && n != -EINTR) {
			s->rearm_err = n;
			break;
		}
	}
	return NULL;
}

int sampler__attach(struct sampler *s)
{
	const struct sampler_opts *o = &s->opts;
	struct perf_event_attr attr;
	unsigned long flags = PERF_FLAG_FD_CLOEXEC;
	u64 period = o->freq ? 0 : period__initial(o->mode, o->period);
	int err;

	event__attr(&o->ev, period, o->freq, &attr);
	if (o->cgroup_fd >= 0)
		flags |= PERF_FLAG_PID_CGROUP;
	for (int i = 0; i < o->nr_cpus; i++) {
		int fd = perf_event_open(&attr, o->cgroup_fd >= 0 ? o->cgroup_fd : -1, o->cpus[i], -1, flags);

		if (fd < 0) {
			err = -errno;
			if (err == -EINVAL && o->freq)
				error("cannot open event '%s' at %llu Hz: invalid frequency (see "
				      "/proc/sys/kernel/perf_event_max_sample_rate)", o->ev.name,
				      (unsigned long long)o->freq);
			else
				event__explain_open_error(&o->ev, err);
			return err;
		}
		s->fds[i] = fd;
		s->nr_events++;
	}
	if (s->skel && period__is_random(o->mode)) {
		s->rb = ring_buffer__new(bpf_map__fd(s->skel->maps.rearm), rearm_one, s, NULL);
		if (!s->rb) {
			err = -errno;
			return fail(err, "cannot open the re-arm ring buffer: %s", strerror(-err));
		}
		err = pthread_create(&s->thread, NULL, rearm_thread, s);
		if (err)
			return fail(-err, "cannot start the re-arm thread: %s", strerror(err));
		s->thread_running = true;
	}
	/* libbpf enables each event once its program is attached */
	for (int i = 0; i < s->nr_events; i++) {
		s->links[i] = bpf_program__attach_perf_event(s->prog, s->fds[i]);
		if (!s->links[i]) {
			err = -errno;
			s->links[i] = NULL;
			return fail(err, "cannot attach BPF program to event '%s' on CPU %d: %s",
				     o->ev.name, o->cpus[i], strerror(-err));
		}
	}
	return 0;
}

int sampler__add_pid(struct sampler *s, u32 pid, bool armed)
{
	struct proc_state st = { .state = armed ? HSBPF_PID_ARMED : HSBPF_PID_ACTIVE };
	int err = bpf_map__update_elem(s->skel->maps.procs, &pid, sizeof(pid), &st, sizeof(st),
				       BPF_ANY);

	if (err)
		return fail(err, "cannot add pid %u to the filter: %s", pid, strerror(-err));
	return 0;
}

void sampler__stop(struct sampler *s)
{
	for (int i = 0; i < s->nr_events; i++)
		ioctl(s->fds[i], PERF_EVENT_IOC_DISABLE, 0);
	if (s->thread_running) {
		s->stop = true;
		pthread_join(s->thread, NULL);
		s->thread_running = false;
		/* tokens still queued were for intervals that have ended: count them too */
		ring_buffer__consume(s->rb);
	}
}

int sampler__read_counters(struct sampler *s, struct profile_stats *st)
{
	int ncpu = libbpf_num_possible_cpus();
	u64 *vals, sum[HSBPF_STAT_NR] = {};
	int err = 0;

	if (ncpu <= 0)
		return fail(ncpu, "cannot count CPUs: %s", strerror(-ncpu));
	vals = calloc(ncpu, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	for (u32 k = 0; k < HSBPF_STAT_NR; k++) {
		err = bpf_map__lookup_elem(s->skel->maps.stats, &k, sizeof(k), vals,
					   ncpu * sizeof(*vals), 0);
		if (err) {
			error("cannot read counters: %s", strerror(-err));
			break;
		}
		for (int c = 0; c < ncpu; c++)
			sum[k] += vals[c];
	}
	free(vals);
	st->samples = sum[HSBPF_STAT_SAMPLES];
	st->filtered = sum[HSBPF_STAT_FILTERED];
	st->dropped_full = sum[HSBPF_STAT_DROPPED_FULL] + sum[HSBPF_STAT_DROPPED_RACE];
	st->rearm_lost = sum[HSBPF_STAT_REARM_LOST];
	st->exec_full = sum[HSBPF_STAT_EXEC_FULL];
	st->pids_full = sum[HSBPF_STAT_PIDS_FULL];
	return err;
}

static int collect_stats(struct sampler *s, struct profile *p)
{
	struct profile_stats st = {};
	int err = sampler__read_counters(s, &st);

	p->stats.samples += st.samples;
	p->stats.filtered += st.filtered;
	p->stats.dropped_full += st.dropped_full;
	p->stats.rearm_lost += st.rearm_lost;
	p->stats.exec_full += st.exec_full;
	p->stats.pids_full += st.pids_full;
	if (s->rs.intervals) {
		p->stats.rearms += s->rs.rearms;
		p->stats.intervals += s->rs.intervals;
		p->stats.interval_sum += s->rs.interval_sum;
		p->stats.interval_sumsq += s->rs.interval_sumsq;
		p->stats.interval_min = s->rs.interval_min;
		p->stats.interval_max = s->rs.interval_max;
		p->stats.interval_repeats += s->rs.interval_repeats;
		p->stats.interval_outside += s->rs.interval_outside;
	}
	if (s->rearm_err)
		warning("re-arming a randomized period failed: %s", strerror(-s->rearm_err));
	return err;
}

static int collect_lbr(struct sampler *s, struct profile *p)
{
	struct lbr_key k, next, *prev = NULL;
	int fd = bpf_map__fd(s->lbr->maps.lbr), ncpu = libbpf_num_possible_cpus(), err = 0;
	u32 slot = HSBPF_LBR_DROPPED;
	u64 *vals;

	if (ncpu <= 0)
		return ncpu;
	vals = calloc(ncpu, sizeof(u64));
	if (!vals)
		return -ENOMEM;
	while (!err && !bpf_map_get_next_key(fd, prev, &next)) {
		struct profile_lbr l = { .pid = next.pid, .kind = next.kind, .a = next.a, .b = next.b,
					 .exec_ns = next.exec_ns };

		if (!bpf_map_lookup_elem(fd, &next, &l.count))
			err = profile__add_lbr(p, &l);
		k = next;
		prev = &k;
	}
	/* edges and ranges the full map could not take are dropped samples' worth of data */
	if (!err && !bpf_map__lookup_elem(s->lbr->maps.lbr_stats, &slot, sizeof(slot), vals,
					  ncpu * sizeof(u64), 0))
		for (int c = 0; c < ncpu; c++)
			p->stats.dropped_full += vals[c];
	free(vals);
	return err;
}

/* every slot of one histogram map, in batches; with take, each batch leaves the map */
static int walk_samples(int fd, bool take, sampler_sample_fn fn, void *ctx)
{
	const u32 batch = 4096;
	struct sample_key *keys = calloc(batch, sizeof(*keys));
	struct sample_value *vals = calloc(batch, sizeof(*vals));
	struct sample_key in, out;
	bool first = true;
	int err = 0;

	if (!keys || !vals) {
		err = -ENOMEM;
		error("cannot read samples: %s", strerror(ENOMEM));
		goto cleanup;
	}
	for (;;) {
		u32 n = batch;

		if (take)
			err = bpf_map_lookup_and_delete_batch(fd, first ? NULL : &in, &out, keys, vals, &n, NULL);
		else
			err = bpf_map_lookup_batch(fd, first ? NULL : &in, &out, keys, vals, &n, NULL);
		if (err && errno != ENOENT) {
			err = -errno;
			error("cannot read the sample map: %s", strerror(-err));
			goto cleanup;
		}
		for (u32 i = 0; i < n; i++) {
			struct profile_sample ps = {
				.pid = keys[i].pid, .flags = keys[i].flags, .ip = keys[i].ip,
				.cgroup_id = keys[i].cgroup_id, .exec_ns = keys[i].exec_ns,
				.count = vals[i].count, .weight = vals[i].weight,
			};
			int ret = fn(ctx, &ps);

			if (ret) {
				err = ret;
				goto cleanup;
			}
		}
		if (err) {	/* ENOENT: that was the last batch */
			err = 0;
			break;
		}
		in = out;
		first = false;
	}
cleanup:
	free(keys);
	free(vals);
	return err;
}

int sampler__read_samples(struct sampler *s, sampler_sample_fn fn, void *ctx)
{
	int err = walk_samples(bpf_map__fd(s->skel->maps.samples), false, fn, ctx);

	if (!err)
		err = walk_samples(bpf_map__fd(s->skel->maps.samples_odd), false, fn, ctx);
	return err;
}

int sampler__take_interval(struct sampler *s, sampler_sample_fn fn, void *ctx)
{
	u32 zero = 0, next = s->gen + 1;
	int err, fd = bpf_map__fd(s->gen & 1 ? s->skel->maps.samples_odd : s->skel->maps.samples);

	if (!s->opts.live)
		return fail(-EINVAL, "the sampler was not opened for live reads");
	err = bpf_map__update_elem(s->skel->maps.live, &zero, sizeof(zero), &next, sizeof(next), 0);
	if (err)
		return fail(err, "cannot turn the sample map: %s", strerror(-err));
	s->gen = next;
	/* handlers run with interrupts off, inside RCU read-side sections: once a grace period
	 * has passed, none still holds a value of the map that was counting */
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0))
		usleep(10000);	/* nohz_full machines refuse it: handlers take well under 10 ms */
	return walk_samples(fd, true, fn, ctx);
}

u32 sampler__capacity(const struct sampler *s)
{
	return bpf_map__max_entries(s->skel->maps.samples);
}

static int add_to_profile(void *ctx, const struct profile_sample *ps)
{
	if (profile__add_sample(ctx, ps))
		return fail(-ENOMEM, "cannot store samples: %s", strerror(ENOMEM));
	return 0;
}

int sampler__collect(struct sampler *s, struct profile *p)
{
	int err = sampler__read_samples(s, add_to_profile, p);

	if (!err)
		err = collect_stats(s, p);
	if (!err && s->lbr)
		err = collect_lbr(s, p);
	sampler__prog_stats(s, &p->stats.bpf_run_ns, &p->stats.bpf_run_cnt);
	return err;
}

void sampler__destroy(struct sampler *s)
{
	if (!s)
		return;
	if (s->thread_running) {
		s->stop = true;
		pthread_join(s->thread, NULL);
	}
	for (int i = 0; s->links && i < s->opts.nr_cpus; i++)
		bpf_link__destroy(s->links[i]);
	for (int i = 0; s->fds && i < s->nr_events; i++)
		close(s->fds[i]);
	ring_buffer__free(s->rb);
	profile_bpf__destroy(s->skel);
	empty_bpf__destroy(s->empty);
	lbr_bpf__destroy(s->lbr);
	free(s->fds);
	free(s->links);
	free(s->cpu_index);
	free(s->last_interval);
	free(s->target);
	free(s->bias);
	free(s);
}

int sampler__prog_stats(struct sampler *s, u64 *run_ns, u64 *run_cnt)
{
	struct bpf_prog_info info = {};
	u32 len = sizeof(info);
	int err = bpf_obj_get_info_by_fd(bpf_program__fd(s->prog), &info, &len);

	if (err)
		return err;
	if (!info.run_cnt)
		return -ENODATA;
	*run_ns = info.run_time_ns;
	*run_cnt = info.run_cnt;
	return 0;
}

int sampler__enable_run_stats(void)
{
	int fd = bpf_enable_stats(BPF_STATS_RUN_TIME);

	return fd < 0 ? -errno : fd;
}

int sampler__verify_all(void)
{
	int failed = 0;

	quiet_libbpf();
	for (int filter = 0; filter <= 1; filter++) {
		for (int random = 0; random <= 1; random++) {
			struct profile_bpf *skel = profile_bpf__open();
			int err;

			if (!skel) {
				failed++;
				continue;
			}
			skel->rodata->filter_pids = filter;
			skel->rodata->random_periods = random;
			err = profile_bpf__load(skel);
			if (err) {
				error("verifier rejected profile.bpf.c (filter_pids=%d random=%d): %s",
				      filter, random, strerror(-err));
				failed++;
			}
			profile_bpf__destroy(skel);
		}
	}
	{
		struct empty_bpf *e = empty_bpf__open_and_load();

		if (!e) {
			error("verifier rejected empty.bpf.c: %s", strerror(errno));
			failed++;
		}
		empty_bpf__destroy(e);
	}
	for (int variant = 0; variant < 4; variant++) {
		struct lbr_bpf *l = lbr_bpf__open();
		int filter = variant & 1, err;

		if (!l) {
			failed++;
			continue;
		}
		l->rodata->filter_pids = filter;
		l->rodata->precise = variant >> 1;
		err = lbr_bpf__load(l);
		if (err) {
			error("verifier rejected lbr.bpf.c (filter_pids=%d): %s", filter, strerror(-err));
			failed++;
		}
		lbr_bpf__destroy(l);
	}
	return failed ? -EINVAL : 0;
}
