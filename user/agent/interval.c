// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The agent's interval reads: the sampler's interval maps and the stack-sample map's growth
 * into the live session's profile, then a pprof of it (interval.h). */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "agent/interval.h"
#include "export/pprof.h"
#include "report/callchain.h"
#include "symbols/symbolizer.h"

/* the interval's stack samples, as drained from the kernel */
struct stack_snap {
	struct stack_key *keys;
	struct sample_value *vals;
	size_t nr, cap_keys, cap_vals;
};

struct interval_reader {
	struct session *s;
	struct profile *p;
	struct symbolizer *sy;
	bool stacks;
	struct stack_snap cur;
	u64 *hashes;		/* the interval's stack hashes, sorted, and their profile stacks */
	u32 *refs;
	size_t nr_hashes, cap_hashes, cap_refs;
	struct stack_frames *frames;
	u64 start_mono, start_real;	/* the interval being sampled */
	u64 taken_real;			/* ... and the one taken */
	u64 dropped, keys_full;		/* the kernel's totals at the last read */
	u64 renew_at;			/* CLOCK_MONOTONIC when the symbolizer is made anew */
	u64 symbolize_ns, encode_ns, trim_ns;	/* the last pprof's */
};

/* the wall clock, which stamps the intervals (and names the folder's files). Tests only:
 * HSBPF_TEST_CLOCK_STEP_FILE=PATH moves it by the signed number of seconds in PATH, read at
 * every reading, so that a test steps the agent's clock while it runs and not the machine's */
static u64 wall_clock_ns(void)
{
	const char *path = getenv("HSBPF_TEST_CLOCK_STEP_FILE");
	u64 now = now_ns(CLOCK_REALTIME);
	long long step = 0;
	FILE *f;

	if (!path || !(f = fopen(path, "r")))
		return now;
	if (fscanf(f, "%lld", &step) != 1)
		step = 0;
	fclose(f);
	return now + (u64)step * 1000000000ull;
}

/* the symbolizer's objects and caches are made anew this often: the names and inline chains
 * it kept go (the objects no interval uses are closed at every interval), what still runs is
 * read again once */
#define SYMBOLIZER_RENEW_NS 60000000000ull

struct interval_reader *interval_reader__new(struct session *s, bool stacks)
{
	struct interval_reader *r = calloc(1, sizeof(*r));

	if (!r)
		goto nomem;
	r->s = s;
	r->p = session__profile(s);
	r->stacks = stacks;
	r->sy = symbolizer__new(r->p);
	r->frames = malloc(sizeof(*r->frames));
	if (!r->sy || !r->frames)
		goto nomem;
	r->start_mono = now_ns(CLOCK_MONOTONIC);
	r->start_real = wall_clock_ns();
	r->renew_at = r->start_mono + SYMBOLIZER_RENEW_NS;
	return r;
nomem:
	interval_reader__free(r);
	error("cannot start the agent's intervals: %s", strerror(ENOMEM));
	errno = ENOMEM;
	return NULL;
}

void interval_reader__free(struct interval_reader *r)
{
	if (!r)
		return;
	symbolizer__free(r->sy);
	free(r->cur.keys);
	free(r->cur.vals);
	free(r->hashes);
	free(r->refs);
	free(r->frames);
	free(r);
}

static int take_slot(void *ctx, const struct profile_sample *s, const struct profile_sample_key *k)
{
	return profile__add_sample_keyed(ctx, s, k) ? -ENOMEM : 0;
}

static int keep_stack(void *ctx, const struct stack_key *k, const struct sample_value *v)
{
	struct stack_snap *sn = ctx;

	if (array__reserve((void **)&sn->keys, &sn->cap_keys, sn->nr + 1, sizeof(*k)) ||
	    array__reserve((void **)&sn->vals, &sn->cap_vals, sn->nr + 1, sizeof(*v)))
		return -ENOMEM;
	sn->keys[sn->nr] = *k;
	sn->vals[sn->nr++] = *v;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/* the profile stack (index + 1) of a hash, added on first use; 0 for none, -ENOMEM */
static s64 stack_ref(struct interval_reader *r, u64 hash)
{
	u64 *at;
	s64 idx;

	if (!hash)
		return 0;
	at = bsearch(&hash, r->hashes, r->nr_hashes, sizeof(hash), cmp_u64);
	if (!at)
		return 0;
	if (r->refs[at - r->hashes])
		return r->refs[at - r->hashes];
	if (sampler__interval_stack(session__sampler(r->s), hash, r->frames))
		idx = profile__add_stack(r->p, NULL, 0, PROFILE_STACK_LOST, 0);
	else
		idx = profile__add_stack(r->p, (const u64 *)r->frames->ip,
					 r->frames->nr < HSBPF_MAX_FRAMES ? r->frames->nr : HSBPF_MAX_FRAMES,
					 r->frames->end, r->frames->nr_fp);
	if (idx < 0)
		return -ENOMEM;
	r->refs[at - r->hashes] = (u32)idx + 1;
	return idx + 1;
}

/* the hashes of the stacks the interval's samples name, sorted and unique */
static int interval_hashes(struct interval_reader *r)
{
	size_t n = 0;

	if (array__reserve((void **)&r->hashes, &r->cap_hashes, 2 * r->cur.nr + 1, sizeof(u64)) ||
	    array__reserve((void **)&r->refs, &r->cap_refs, 2 * r->cur.nr + 1, sizeof(u32)))
		return -ENOMEM;
	for (size_t i = 0; i < r->cur.nr; i++) {
		if (r->cur.keys[i].user)
			r->hashes[n++] = r->cur.keys[i].user;
		if (r->cur.keys[i].kernel)
			r->hashes[n++] = r->cur.keys[i].kernel;
	}
	qsort(r->hashes, n, sizeof(u64), cmp_u64);
	r->nr_hashes = 0;
	for (size_t i = 0; i < n; i++)
		if (!r->nr_hashes || r->hashes[r->nr_hashes - 1] != r->hashes[i])
			r->hashes[r->nr_hashes++] = r->hashes[i];
	memset(r->refs, 0, r->nr_hashes * sizeof(u32));
	return 0;
}

/* the stack samples of the interval, drained from the kernel's idle generation with their
 * stacks, whose maps are then emptied: the kernel's stack maps hold one interval at most */
static int take_stacks(struct interval_reader *r, u64 *nr)
{
	struct sampler *smp = session__sampler(r->s);
	int err;

	r->cur.nr = 0;
	err = sampler__take_stacks(smp, keep_stack, &r->cur);
	if (!err)
		err = interval_hashes(r);
	for (size_t i = 0; i < r->cur.nr && !err; i++) {
		const struct stack_key *k = &r->cur.keys[i];
		struct profile_sample_key sk = { .tid = k->x.tid, .cpu = k->x.cpu, .time = k->x.time,
					   .waker = k->x.waker };
		struct profile_stack_sample ss = {
			.pid = k->pid, .flags = k->flags, .cgroup_id = k->cgroup_id,
			.exec_ns = k->exec_ns, .map_ns = k->map_ns,
			.count = r->cur.vals[i].count, .weight = r->cur.vals[i].weight,
		};
		s64 user, kernel;

		user = stack_ref(r, k->user);
		kernel = stack_ref(r, k->kernel);
		if (user < 0 || kernel < 0 || profile__add_stack_sample_keyed(r->p, &ss, &sk)) {
			err = -ENOMEM;
			break;
		}
		r->p->stack_samples[r->p->nr_stack_samples - 1].user = (u32)user;
		r->p->stack_samples[r->p->nr_stack_samples - 1].kernel = (u32)kernel;
		*nr += ss.count;
	}
	/* emptied even after an error: the next interval must not meet this one's stacks */
	if (sampler__end_stacks(smp) && !err)
		err = -EIO;
	return err;
}

/* what the kernel could not count this interval (its totals' growth), for the pprof's
 * comments */
static void take_drops(struct interval_reader *r)
{
	struct sampler *smp = session__sampler(r->s);
	struct profile_stats ks = {};
	u64 cnt[HSBPF_STACK_STAT_NR];

	if (!sampler__read_counters(smp, &ks)) {
		r->p->stats.dropped_full = ks.dropped_full - r->dropped;
		r->dropped = ks.dropped_full;
	}
	if (r->stacks && !sampler__read_stack_counters(smp, cnt)) {
		r->p->stats.stack_keys_full = cnt[HSBPF_STACK_STAT_KEYS_FULL] - r->keys_full;
		if (r->p->stats.stack_keys_full && !r->keys_full)
			warning("the stack-sample map is full: some samples of this interval are left "
				"out (raise --map-entries, or shorten --interval)");
		r->keys_full = cnt[HSBPF_STACK_STAT_KEYS_FULL];
	}
}

int interval_reader__take(struct interval_reader *r, u64 *nr)
{
	struct profile *p = r->p;
	u64 mono = now_ns(CLOCK_MONOTONIC), real = wall_clock_ns();
	int err;

	/* the previous interval's samples, stacks and late stacks go: the sideband stays */
	p->nr_samples = p->nr_sample_keys = 0;
	p->nr_stacks = p->nr_frames = p->nr_stack_samples = p->nr_stack_sample_keys =
		p->nr_stack_sample_wakers = 0;
	*nr = 0;
	err = sampler__take_interval(session__sampler(r->s), take_slot, p);
	if (!err && r->stacks)
		err = take_stacks(r, nr);
	if (err) {
		if (err == -ENOMEM)
			error("cannot read the interval's samples: %s", strerror(ENOMEM));
		return err;
	}
	if (!r->stacks)
		for (size_t i = 0; i < p->nr_samples; i++)
			*nr += p->samples[i].count;
	take_drops(r);
	session__fill_meta(r->s);
	p->meta.start_realtime_ns = r->start_real;
	p->meta.start_mono_ns = r->start_mono;
	p->meta.duration_ns = mono - r->start_mono;
	r->taken_real = r->start_real;
	r->start_mono = mono;
	r->start_real = real;
	/* the symbolizer searches the sideband sorted; it grew since */
	profile__finish(p);
	return 0;
}

u64 interval_reader__start_realtime(const struct interval_reader *r)
{
	return r->taken_real;
}

/* an object's symbols are kept while a sample landed in it within this long (at least the
 * last interval): a program sampled now and then is not read again at every interval */
#define SYMBOLS_IDLE_NS 10000000000ull

static u32 idle_intervals(const struct interval_reader *r)
{
	u64 d = r->p->meta.duration_ns;

	return d >= SYMBOLS_IDLE_NS || !d ? 1 : (u32)((SYMBOLS_IDLE_NS + d - 1) / d);
}

int interval_reader__pprof(struct interval_reader *r, u8 **buf, size_t *len)
{
	struct callchain *cc;
	u64 t0, t1;
	int err;

	if (now_ns(CLOCK_MONOTONIC) >= r->renew_at) {
		struct symbolizer *sy = symbolizer__new(r->p);

		/* without memory for a new one, the old one goes on */
		if (sy) {
			symbolizer__free(r->sy);
			r->sy = sy;
		}
		r->renew_at = now_ns(CLOCK_MONOTONIC) + SYMBOLIZER_RENEW_NS;
	} else {
		/* the objects no sample landed in for a while: their symbol tables are the
		 * agent's largest memory, and most belong to programs gone by now */
		symbolizer__evict_unused(r->sy, idle_intervals(r));
	}

	t0 = now_ns(CLOCK_MONOTONIC);
	cc = r->stacks ? callchain__new(r->p, r->sy) : callchain__new_flat(r->p, r->sy);
	if (!cc)
		return fail(-ENOMEM, "cannot resolve the interval's stacks: %s", strerror(ENOMEM));
	t1 = now_ns(CLOCK_MONOTONIC);
	r->symbolize_ns = t1 - t0;
	err = pprof__encode(cc, r->sy, buf, len);
	callchain__free(cc);
	r->encode_ns = now_ns(CLOCK_MONOTONIC) - t1;
	/* what the interval freed (symbol tables, the encoder's tables) back to the system:
	 * freed blocks amid the heap are otherwise kept, and the RSS is their peak */
	t1 = now_ns(CLOCK_MONOTONIC);
	malloc_trim(0);
	r->trim_ns = now_ns(CLOCK_MONOTONIC) - t1;
	return err;
}

u64 interval_reader__occupancy(struct interval_reader *r)
{
	return r->stacks ? sampler__stack_occupancy(session__sampler(r->s)) : 0;
}

void interval_reader__times(const struct interval_reader *r, u64 *symbolize_ns, u64 *encode_ns,
			    u64 *trim_ns)
{
	*symbolize_ns = r->symbolize_ns;
	*encode_ns = r->encode_ns;
	*trim_ns = r->trim_ns;
}
