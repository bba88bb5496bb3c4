// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* BPF side of counting per cgroup: skeleton open/configure/load, the counters and watched
 * cgroups put in its maps, the flush on every CPU, and the map read. Nothing else touches
 * these maps. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <stdlib.h>
#include <string.h>
#include "hsbpf.h"
#include "stat_cgroup.skel.h"
#include "stat/stat_cgroup.h"

_Static_assert(sizeof(struct cgroup_count_key) == 16, "cgroup_count_key layout is the seam");
_Static_assert(sizeof(struct count_value) == 24, "count_value layout is the seam");
_Static_assert(STAT_CGROUP_MAX_EVENTS == HSBPF_COUNT_MAX_EVENTS, "one limit on both sides");
_Static_assert(STAT_CGROUP_IDLE == HSBPF_COUNT_IDLE, "one idle id on both sides");
_Static_assert(STAT_CGROUP_UNATTRIBUTED == HSBPF_COUNT_UNATTRIBUTED, "one unknown id on both sides");

#define DEFAULT_ENTRIES 65536

struct stat_cgroup {
	struct stat_cgroup_bpf *skel;
	struct bpf_link *link;		/* context switches */
	struct bpf_link *attach_link;	/* cgroup moves */
	int *cpus;
	int nr_cpus;
	int ncpu_possible;
};

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && verbose < 2)
		return 0;
	if (level != LIBBPF_WARN && !verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static int load_error(int err)
{
	error("cannot load BPF program stat_cgroup: %s%s", strerror(-err),
	      err == -EPERM || err == -EACCES ? " (need root or CAP_BPF and CAP_PERFMON)" : "");
	return err;
}

/* open and size the maps; not loaded */
static struct stat_cgroup_bpf *open_skel(int nr_events, int stride, int nr_watched, u32 entries,
					 u32 switch_events)
{
	struct stat_cgroup_bpf *skel;
	int err;

	libbpf_set_print(libbpf_print);
	skel = stat_cgroup_bpf__open();
	if (!skel)
		return NULL;
	skel->rodata->nr_events = nr_events;
	skel->rodata->cpu_stride = stride;
	skel->rodata->hierarchy = nr_watched > 0;
	skel->rodata->switch_events = switch_events;
	err = bpf_map__set_max_entries(skel->maps.counters, (nr_events ? nr_events : 1) * stride);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.watched, nr_watched ? nr_watched : 1);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.counts, entries ? entries : DEFAULT_ENTRIES);
	/* the flush is run by hand on each CPU, never attached */
	bpf_program__set_autoattach(skel->progs.hsbpf_count_flush, false);
	if (err) {
		stat_cgroup_bpf__destroy(skel);
		errno = -err;
		return NULL;
	}
	return skel;
}

struct stat_cgroup *stat_cgroup__open(const struct stat_cgroup_opts *o)
{
	struct stat_cgroup *s = calloc(1, sizeof(*s));
	u32 one = 1;
	int err = 0;

	if (!s || !(s->cpus = calloc(o->nr_cpus ? o->nr_cpus : 1, sizeof(*s->cpus)))) {
		err = -ENOMEM;
		error("cannot count per cgroup: %s", strerror(ENOMEM));
		goto fail;
	}
	if (o->nr_events > STAT_CGROUP_MAX_EVENTS) {
		err = fail(-EINVAL, "counting per cgroup takes at most %d events, not %d",
			   STAT_CGROUP_MAX_EVENTS, o->nr_events);
		goto fail;
	}
	memcpy(s->cpus, o->cpus, o->nr_cpus * sizeof(*s->cpus));
	s->nr_cpus = o->nr_cpus;
	s->ncpu_possible = libbpf_num_possible_cpus();
	if (s->ncpu_possible <= 0) {
		err = fail(s->ncpu_possible ? s->ncpu_possible : -EINVAL, "cannot count CPUs: %s",
			   strerror(s->ncpu_possible ? -s->ncpu_possible : EINVAL));
		goto fail;
	}
	s->skel = open_skel(o->nr_events, s->ncpu_possible, o->nr_watched, o->max_entries,
			    o->switch_events);
	if (!s->skel) {
		err = load_error(-errno);
		goto fail;
	}
	err = stat_cgroup_bpf__load(s->skel);
	if (err) {
		load_error(err);
		goto fail;
	}
	for (int e = 0; e < o->nr_events; e++)
		for (int i = 0; i < o->nr_cpus; i++) {
			u32 key = e * s->ncpu_possible + o->cpus[i];
			int fd = o->fds[e * o->nr_cpus + i];

			err = bpf_map__update_elem(s->skel->maps.counters, &key, sizeof(key), &fd,
						   sizeof(fd), BPF_ANY);
			if (err) {
				error("cannot hand counter %d of CPU %d to the BPF program: %s", e,
				      o->cpus[i], strerror(-err));
				goto fail;
			}
		}
	for (int w = 0; w < o->nr_watched; w++) {
		err = bpf_map__update_elem(s->skel->maps.watched, &o->watched[w], sizeof(u64), &one,
					   sizeof(one), BPF_ANY);
		if (err) {
			error("cannot watch cgroup %llu: %s", (unsigned long long)o->watched[w],
			      strerror(-err));
			goto fail;
		}
	}
	return s;
fail:
	stat_cgroup__destroy(s);
	errno = -err;
	return NULL;
}

int stat_cgroup__attach(struct stat_cgroup *s)
{
	int err;

	s->link = bpf_program__attach(s->skel->progs.hsbpf_count_switch);
	if (!s->link) {
		err = -errno;
		s->link = NULL;
		return fail(err, "cannot attach to the context switches: %s", strerror(-err));
	}
	s->attach_link = bpf_program__attach(s->skel->progs.hsbpf_count_attach);
	if (!s->attach_link) {
		err = -errno;
		s->attach_link = NULL;
		return fail(err, "cannot attach to the cgroup moves: %s", strerror(-err));
	}
	/* each CPU learns whose counts it holds: the task running there now */
	s->skel->bss->counting = true;
	return stat_cgroup__flush(s);
}

void stat_cgroup__stop(struct stat_cgroup *s)
{
	/* before the counters stop: a switch between this and their stop is counted by the
	 * kernel and goes to the next read (the task switched in), the sum stays exact */
	__atomic_store_n(&s->skel->bss->counting, false, __ATOMIC_SEQ_CST);
}

int stat_cgroup__flush(struct stat_cgroup *s)
{
	int fd = bpf_program__fd(s->skel->progs.hsbpf_count_flush);

	for (int i = 0; i < s->nr_cpus; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, opts, .flags = BPF_F_TEST_RUN_ON_CPU,
			    .cpu = s->cpus[i]);
		int err = bpf_prog_test_run_opts(fd, &opts);

		if (err)
			return fail(-errno, "cannot read the counters of CPU %d: %s", s->cpus[i],
				    strerror(errno));
	}
	return 0;
}

int stat_cgroup__read(struct stat_cgroup *s, stat_cgroup_fn fn, void *ctx)
{
	int fd = bpf_map__fd(s->skel->maps.counts), err = 0;
	struct cgroup_count_key key, next, *prev = NULL;
	struct count_value *vals = calloc(s->ncpu_possible, sizeof(*vals));

	if (!vals)
		return fail(-ENOMEM, "cannot read the cgroup counts: %s", strerror(ENOMEM));
	while (!err && !bpf_map_get_next_key(fd, prev, &next)) {
		struct stat_reading r = { 0 };

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, vals))
			continue;	/* gone since: cannot happen, nothing deletes */
		for (int c = 0; c < s->ncpu_possible; c++) {
			r.count += vals[c].counter;
			r.enabled += vals[c].enabled;
			r.running += vals[c].running;
		}
		err = fn(ctx, key.cgroup_id, key.event, &r);
	}
	free(vals);
	return err;
}

int stat_cgroup__stats(struct stat_cgroup *s, struct stat_cgroup_stats *st)
{
	u64 *vals = calloc(s->ncpu_possible, sizeof(*vals)), sum[HSBPF_COUNT_STAT_NR] = { 0 };
	int err = 0;

	if (!vals)
		return -ENOMEM;
	for (u32 k = 0; k < HSBPF_COUNT_STAT_NR && !err; k++) {
		err = bpf_map__lookup_elem(s->skel->maps.count_stats, &k, sizeof(k), vals,
					   s->ncpu_possible * sizeof(*vals), 0);
		for (int c = 0; !err && c < s->ncpu_possible; c++)
			sum[k] += vals[c];
	}
	free(vals);
	if (err)
		return fail(err, "cannot read the counting statistics: %s", strerror(-err));
	st->switches = sum[HSBPF_COUNT_SWITCHES];
	st->reads = sum[HSBPF_COUNT_READS];
	st->unsure = sum[HSBPF_COUNT_UNSURE];
	st->flushes = sum[HSBPF_COUNT_FLUSHES];
	st->read_errors = sum[HSBPF_COUNT_READ_ERRORS];
	st->map_full = sum[HSBPF_COUNT_MAP_FULL];
	return 0;
}

int stat_cgroup__prog_stats(struct stat_cgroup *s, u64 *run_ns, u64 *run_cnt)
{
	struct bpf_prog_info info = { 0 };
	u32 len = sizeof(info);
	int err = bpf_obj_get_info_by_fd(bpf_program__fd(s->skel->progs.hsbpf_count_switch), &info,
					 &len);

	if (err)
		return -errno;
	if (!info.run_cnt)
		return -ENODATA;
	*run_ns = info.run_time_ns;
	*run_cnt = info.run_cnt;
	return 0;
}

void stat_cgroup__destroy(struct stat_cgroup *s)
{
	if (!s)
		return;
	bpf_link__destroy(s->link);
	bpf_link__destroy(s->attach_link);
	stat_cgroup_bpf__destroy(s->skel);
	free(s->cpus);
	free(s);
}

int stat_cgroup__verify(void)
{
	int stride = libbpf_num_possible_cpus(), failed = 0;

	for (int hierarchy = 0; hierarchy <= 1; hierarchy++) {
		struct stat_cgroup_bpf *skel = open_skel(STAT_CGROUP_MAX_EVENTS, stride > 0 ? stride : 1,
							 hierarchy, 0, 1);
		int err = skel ? stat_cgroup_bpf__load(skel) : -errno;

		if (err) {
			error("verifier rejected stat_cgroup.bpf.c (hierarchy=%d): %s", hierarchy,
			      strerror(-err));
			failed++;
		}
		stat_cgroup_bpf__destroy(skel);
	}
	return failed ? -EINVAL : 0;
}
