// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* report's sample filters: each sample (flat or with its stacks) kept or taken out whole. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hsbpf.h"
#include "report/sample_filter.h"
#include "record/target.h"

static int parse_secs(const char *s, size_t n, u64 *ns)
{
	char buf[64], *end;
	double v;

	if (n >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, n);
	buf[n] = 0;
	errno = 0;
	v = strtod(buf, &end);
	if (errno || end == buf || *end || !(v >= 0 && v < 1e9))
		return -EINVAL;
	*ns = (u64)(v * 1e9 + 0.5);
	return 0;
}

int sample_filter__parse_time(struct sample_filter *f, const char *arg)
{
	const char *comma = strchr(arg, ',');

	f->time_start = 0;
	f->time_end = UINT64_MAX;
	if (!comma || strchr(comma + 1, ',') ||
	    (comma > arg && parse_secs(arg, comma - arg, &f->time_start)) ||
	    (comma[1] && parse_secs(comma + 1, strlen(comma + 1), &f->time_end)) ||
	    f->time_end <= f->time_start)
		return fail(-EINVAL, "invalid --time '%s' (START,END in seconds after the start, "
			    "START < END, either may be empty)", arg);
	f->by_time = true;
	return 0;
}

/* the item of list at *t (up to a comma) as a number: 0, or -EINVAL; *t moves past it */
static int next_id(const char **t, u64 *v)
{
	const char *e = strchrnul(*t, ',');
	char buf[24];
	size_t n = e - *t;
	int err = -EINVAL;

	if (n && n < sizeof(buf)) {
		memcpy(buf, *t, n);
		buf[n] = 0;
		err = parse_u64(buf, v);
		if (!err && *v > UINT32_MAX)
			err = -EINVAL;
	}
	*t = *e ? e + 1 : e;
	return err;
}

int sample_filter__parse_ids(const char *arg, const char *opt)
{
	const char *t = arg;
	u64 v;

	/* as record's -p: numbers, comma-separated, none empty (0 is allowed: the idle task's
	 * samples in a whole-machine profile) */
	if (!*arg || arg[strlen(arg) - 1] == ',')
		return fail(-EINVAL, "invalid %s '%s' (a comma-separated list of numbers)", opt, arg);
	while (*t)
		if (next_id(&t, &v))
			return fail(-EINVAL, "invalid %s '%s' (a comma-separated list of numbers)", opt,
				    arg);
	return 0;
}

bool sample_filter__active(const struct sample_filter *f)
{
	return f->comms || f->pids || f->tids || f->dsos || f->syms || f->cpus || f->by_time;
}

/* s is one of list's comma-separated items */
static bool in_list(const char *list, const char *s)
{
	size_t n = strlen(s);

	for (const char *t = list; *t;) {
		const char *e = strchrnul(t, ',');

		if ((size_t)(e - t) == n && !strncmp(t, s, n))
			return true;
		t = *e ? e + 1 : e;
	}
	return false;
}

/* by value: "007" is 7 (the list was checked by sample_filter__parse_ids) */
static bool num_in_list(const char *list, u64 v)
{
	for (const char *t = list; *t;) {
		u64 x;

		if (!next_id(&t, &x) && x == v)
			return true;
	}
	return false;
}

const char *sample_filter__thread_comm(const struct profile *p, u32 pid, u32 tid, const char *comm)
{
	const char *t = tid && tid != pid ? profile__thread_name(p, pid, tid, UINT64_MAX) : NULL;

	return t ? t : comm;
}

struct ctx {
	const struct sample_filter *f;
	const struct profile *p;
	struct symbolizer *sy;
	int *cpus, nr_cpus;
};

/* one sample: its process, key, and the location it was taken at */
static bool keep(struct ctx *c, const struct profile_sample *ps, const struct profile_sample_key *k)
{
	const struct sample_filter *f = c->f;
	const struct profile *p = c->p;
	struct sym_result r;

	if (f->pids && !num_in_list(f->pids, ps->pid))
		return false;
	if (f->tids && !num_in_list(f->tids, k->tid))
		return false;
	if (f->cpus) {
		bool in = false;

		for (int i = 0; i < c->nr_cpus && !in; i++)
			in = c->cpus[i] == k->cpu;
		if (!in)
			return false;
	}
	if (f->by_time) {
		/* a bucket is in the slice when its middle is */
		double mid = (double)p->meta.time_origin_ns - (double)p->meta.start_mono_ns +
			     ((double)k->time + 0.5) * p->meta.time_bucket_ns;

		/* an open start takes the buckets that began before the recording did */
		if ((f->time_start && mid < (double)f->time_start) || mid >= (double)f->time_end)
			return false;
	}
	if (!f->comms && !f->dsos && !f->syms)
		return true;
	symbolizer__resolve(c->sy, ps, &r);
	if (f->comms && !in_list(f->comms, sample_filter__thread_comm(p, ps->pid, k->tid,
								       r.comm ? r.comm : "")))
		return false;
	if (f->dsos && !(r.dso && (in_list(f->dsos, r.dso) || in_list(f->dsos, path__base(r.dso)))))
		return false;
	if (f->syms && !sym_result__named(&r, f->syms))
		return false;
	return true;
}

/* what a key needs recorded */
static int check_keys(const struct sample_filter *f, const struct profile *p)
{
	static const struct {
		size_t off;
		const char *key, *opt, *rec;
	} need[] = {
		{ offsetof(struct sample_filter, tids), "tid", "--tid", "--per-thread, the default" },
		{ offsetof(struct sample_filter, cpus), "cpu", "--cpu", "--per-cpu" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(need); i++)
		if (*(const char **)((const char *)f + need[i].off) && !profile__has_key(p, need[i].key))
			return fail(-EINVAL, "%s: the profile has no %s keys (record with %s)",
				    need[i].opt, need[i].key, need[i].rec);
	if (f->by_time && (!profile__has_key(p, "time") || !p->meta.time_bucket_ns))
		return fail(-EINVAL, "--time: the profile has no time buckets (record with "
			    "--time-buckets)");
	return 0;
}

int sample_filter__apply(const struct sample_filter *f, struct profile *p, struct symbolizer *sy,
			 u64 *dropped)
{
	struct ctx c = { .f = f, .p = p, .sy = sy };
	size_t o = 0;
	int err;

	*dropped = 0;
	if (!sample_filter__active(f))
		return 0;
	err = check_keys(f, p);
	if (err)
		return err;
	if (f->cpus && cpus__parse(f->cpus, &c.cpus, &c.nr_cpus))
		return -EINVAL;
	for (size_t i = 0; i < p->nr_samples; i++) {
		struct profile_sample_key k = *profile__sample_key(p, i);

		if (!keep(&c, &p->samples[i], &k)) {
			*dropped += p->samples[i].count;
			continue;
		}
		if (i < p->nr_sample_keys)
			p->sample_keys[o] = k;
		p->samples[o++] = p->samples[i];
	}
	p->nr_samples = o;
	if (p->nr_sample_keys)
		p->nr_sample_keys = o;
	o = 0;
	for (size_t i = 0; i < p->nr_stack_samples; i++) {
		const struct profile_stack_sample *ss = &p->stack_samples[i];
		struct profile_sample_key k = *profile__stack_sample_key(p, i);
		/* the sampled location: the kernel stack's first frame, else the user stack's */
		const struct profile_stack *st = profile__stack(p, ss->flags & HSBPF_KEY_KERNEL ?
								ss->kernel : ss->user);
		struct profile_sample ps = {
			.pid = ss->pid, .flags = ss->flags, .cgroup_id = ss->cgroup_id,
			.exec_ns = ss->exec_ns, .map_ns = ss->map_ns, .ip = st && st->nr ? profile__frames(p, st)[0] : 0,
		};

		if (!keep(&c, &ps, &k))
			continue;	/* counted with its flat sample: the same sample in two views */
		if (i < p->nr_stack_sample_keys)
			p->stack_sample_keys[o] = k;
		if (i < p->nr_stack_sample_wakers)
			p->stack_sample_wakers[o] = p->stack_sample_wakers[i];
		p->stack_samples[o++] = *ss;
	}
	p->nr_stack_samples = o;
	if (p->nr_stack_sample_keys)
		p->nr_stack_sample_keys = o;
	if (p->nr_stack_sample_wakers)
		p->nr_stack_sample_wakers = o;
	p->filtered = true;
	p->filtered_out += *dropped;
	free(c.cpus);
	return 0;
}

int sample_filter__keep(const struct sample_filter *f, struct profile *p, struct symbolizer *sy,
			const char *name)
{
	struct symbolizer *own = NULL;
	u64 dropped = 0;
	int err;

	if (!sample_filter__active(f))
		return 0;
	if (!sy && !(sy = own = symbolizer__new(p)))
		return fail(-ENOMEM, "cannot read '%s': %s", name, strerror(ENOMEM));
	err = sample_filter__apply(f, p, sy, &dropped);
	symbolizer__free(own);
	if (err)
		return err;
	if (dropped)
		debug("the filters left out %" PRIu64 " samples of '%s'", dropped, name);
	if (!profile__total_samples(p) && !p->nr_stack_samples)
		return fail(-ENODATA, "the filters leave no samples of '%s'", name);
	return 0;
}
