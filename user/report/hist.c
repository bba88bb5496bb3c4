// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Histogram rows keyed by the chosen sort keys; a row's identity is the tuple of its key
 * fields, hashed; the filter; and the statistics behind each row's confidence interval. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "symbols/bblock.h"
#include "report/hist.h"
#include "symbols/inline.h"
#include "report/sample_filter.h"
#include "report/lbr_estimate.h"
#include "record/offcpu.h"
#include "report/pyself.h"
#include "report/lbr_estimate.h"

const char *hist__key_name(enum sort_key k)
{
	return k < SORT_NR ? sort_key__ops(k)->name : "?";
}

const char *hist__key_title(enum sort_key k)
{
	return k < SORT_NR ? sort_key__ops(k)->title : "?";
}

int hist__parse_key(const char *name, enum sort_key *k)
{
	for (int i = 0; i < SORT_NR; i++) {
		const struct sort_key_ops *ops = sort_key__ops(i);
		bool alias = false;

		for (size_t a = 0; a < ARRAY_SIZE(ops->aliases) && ops->aliases[a]; a++)
			alias |= !strcasecmp(name, ops->aliases[a]);
		if (alias || !strcasecmp(name, ops->name)) {
			*k = i;
			return 0;
		}
	}
	return -EINVAL;
}

int hist__parse_sort(const char *spec, enum sort_key *keys, int *nr_keys)
{
	char buf[128], *tok, *save = NULL;

	*nr_keys = 0;
	if (!spec || !*spec || strlen(spec) >= sizeof(buf))
		return fail(-EINVAL, "invalid --sort '%s'", spec ? spec : "");
	strcpy(buf, spec);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		enum sort_key k;

		if (hist__parse_key(tok, &k))
			return fail(-EINVAL, "unknown sort key '%s' (known: %s)", tok, sort_key__names());
		if (*nr_keys == HIST_MAX_KEYS)
			return fail(-EINVAL, "at most %d sort keys", HIST_MAX_KEYS);
		keys[(*nr_keys)++] = k;
	}
	if (!*nr_keys)
		return fail(-EINVAL, "invalid --sort '%s'", spec);
	return 0;
}

int hist__prepend_key(enum sort_key *keys, int *nr_keys, enum sort_key k)
{
	int i;

	for (i = 0; i < *nr_keys && keys[i] != k; i++)
		;
	if (i == *nr_keys) {
		if (*nr_keys == HIST_MAX_KEYS)
			return -E2BIG;
		(*nr_keys)++;
	}
	memmove(keys + 1, keys, i * sizeof(*keys));
	keys[0] = k;
	return 0;
}

struct hist *hist__new(const enum sort_key *keys, int nr_keys)
{
	struct hist *h = calloc(1, sizeof(*h));

	if (h)
		hist__reset(h, keys, nr_keys);
	return h;
}

void hist__reset(struct hist *h, const enum sort_key *keys, int nr_keys)
{
	memcpy(h->keys, keys, nr_keys * sizeof(*keys));
	h->nr_keys = nr_keys;
	h->nr_rows = 0;
	h->total = 0;
	h->total_weight = 0;
	h->has_lbr = false;
	hashidx__clear(&h->idx);
}

void hist__free(struct hist *h)
{
	if (!h)
		return;
	free(h->rows);
	hashidx__free(&h->idx);
	free(h);
}

bool hist_filter__wants(const struct hist_filter *f, const struct hist_sample *s)
{
	return (!f->pid || s->pid == f->pid) && (!f->by_cgroup || s->cgroup_id == f->cgroup_id);
}

/* the whole filter, on a resolved sample */
static bool hist_filter__match(const struct hist_filter *f, const struct hist_sample *s)
{
	const struct sym_result *r = &s->r;
	const char *t = f->text;

	if (!hist_filter__wants(f, s))
		return false;
	return !t || sym_result__name_has(r, t) || (r->comm && strcasestr(r->comm, t)) ||
	       (r->dso && strcasestr(path__base(r->dso), t)) ||
	       (s->container && strcasestr(s->container, t));
}

static int strcmp0(const char *a, const char *b)
{
	return a == b ? 0 : strcmp(a ? a : "", b ? b : "");
}

/* ordering of two rows by the sort keys alone */
static int key_cmp(const struct hist *h, const struct hist_row *a, const struct hist_row *b)
{
	int c = 0;

	for (int i = 0; i < h->nr_keys && !c; i++)
		c = sort_key__ops(h->keys[i])->cmp(h, a, b);
	return c;
}

static u64 key_hash(const struct hist *h, const struct hist_row *r)
{
	u64 x = 0;

	for (int i = 0; i < h->nr_keys; i++)
		x = sort_key__ops(h->keys[i])->hash(h, r, x);
	return x;
}

static bool same_keys(const void *key, u32 pos, void *ctx)
{
	const struct hist *h = ctx;

	return !key_cmp(h, &h->rows[pos], key);
}

/* every row again, at its position (after a sort) */
static int index_rows(struct hist *h)
{
	hashidx__clear(&h->idx);
	for (size_t r = 0; r < h->nr_rows; r++) {
		int err = hashidx__insert(&h->idx, key_hash(h, &h->rows[r]), r);

		if (err)
			return err;
	}
	return 0;
}

int hist__add(struct hist *h, const struct hist_sample *s)
{
	s64 row = hist__add_row(h, s);

	return row == -ENOMEM ? -ENOMEM : 0;
}

/* s's counts into the row its keys found, and what the row's sample fields no longer say */
static void add_to(struct hist_row *old, const struct hist_sample *s)
{
	old->count += s->count;
	old->weight += s->weight;
	old->blocks += s->blocks;
	old->var += s->var;
	old->first += s->first;
	old->many_pids |= old->pid != s->pid;
	old->many_comms |= strcmp0(old->comm, s->r.comm) != 0;
	old->many_cgroups |= old->cgroup_id != s->cgroup_id;
}

/* the row a sample starts: its amounts, its key fields, and the rest shown from it */
static struct hist_row sample_row(const struct hist_sample *s)
{
	const struct sym_result *r = &s->r;

	return (struct hist_row){
		.count = s->count, .weight = s->weight, .blocks = s->blocks, .sym = r->sym, .sym_off = r->sym_off,
		.dso = r->dso, .vaddr = r->vaddr, .file = r->file, .line = r->line, .pid = s->pid,
		.nspid = s->nspid, .tid = s->tid, .cpu = s->cpu, .state = s->state, .comm = r->comm,
		.waker = s->waker, .waker_comm = s->waker_comm,
		.cgroup_id = s->cgroup_id, .cgroup = s->cgroup,
		.container = s->container, .kernel = r->kernel, .bb = r->bb,
		.inl = r->inl, .nr_inl = r->nr_inl, .var = s->var, .first = s->first,
	};
}

void hist__row_start(struct hist_row *row, const struct hist_sample *s)
{
	u32 id = row->id;

	*row = sample_row(s);
	row->id = id;
}

/* row's position, or a new row made of it: *made then */
static s64 find_or_make(struct hist *h, const struct hist_row *row, bool *made)
{
	u64 hash = key_hash(h, row);
	s64 pos = hashidx__find(&h->idx, hash, row, same_keys, h);

	*made = pos < 0;
	if (pos >= 0)
		return pos;
	if (array__reserve((void **)&h->rows, &h->cap_rows, h->nr_rows + 1, sizeof(*h->rows)) ||
	    hashidx__insert(&h->idx, hash, h->nr_rows))
		return -ENOMEM;
	h->rows[h->nr_rows] = *row;
	h->rows[h->nr_rows].id = h->nr_rows;
	return h->nr_rows++;
}

s64 hist__find_row(struct hist *h, const struct hist_sample *s)
{
	struct hist_row row = sample_row(s);
	bool made;

	if (!hist_filter__match(&h->filter, s))
		return -ENOENT;
	return find_or_make(h, &row, &made);
}

s64 hist__add_row(struct hist *h, const struct hist_sample *s)
{
	struct hist_row row = sample_row(s);
	bool made;
	s64 pos;

	if (!hist_filter__match(&h->filter, s))
		return -ENOENT;
	h->total += s->count;
	h->total_weight += s->weight;
	pos = find_or_make(h, &row, &made);
	if (pos < 0 || made)
		return pos;
	add_to(&h->rows[pos], s);
	return pos;
}

bool hist__keyed_by_frame(const struct hist *h)
{
	const struct hist_filter *f = &h->filter;

	if (f->pid || f->by_cgroup || f->text || h->unknown_per_process)
		return false;
	for (int i = 0; i < h->nr_keys; i++) {
		switch (h->keys[i]) {
		case SORT_SYM: case SORT_IP: case SORT_DSO: case SORT_LINE: case SORT_BB:
		case SORT_SRCFILE:
			break;
		default:
			return false;
		}
	}
	return true;
}

s64 hist__add_to_row(struct hist *h, s64 pos, const struct hist_sample *s)
{
	h->total += s->count;
	h->total_weight += s->weight;
	add_to(&h->rows[pos], s);
	return pos;
}

static const char *cgroup_path(const struct profile *p, u64 id)
{
	for (size_t i = 0; i < p->nr_cgroups; i++)
		if (p->cgroups[i].id == id)
			return profile__str(p, p->cgroups[i].path);
	return NULL;
}

static void sample_fields(struct hist_sample *s, const struct profile *p,
			  const struct profile_sample *ps)
{
	*s = (struct hist_sample){
		.pid = ps->pid, .nspid = profile__nspid(p, ps->pid), .cgroup_id = ps->cgroup_id,
		.cgroup = cgroup_path(p, ps->cgroup_id), .count = ps->count, .weight = ps->weight,
		.state = offcpu__state(ps->flags),
	};
	/* a sample of the profile's own (not top's copy): its blocks, when report kept them */
	if (p->offcpu_blocks && ps >= p->samples && ps < p->samples + p->nr_samples)
		s->blocks = p->offcpu_blocks[ps - p->samples];
}

void hist__sample(struct hist_sample *s, const struct profile *p, const struct profile_sample *ps,
		  struct symbolizer *sy)
{
	sample_fields(s, p, ps);
	symbolizer__resolve(sy, ps, &s->r);
}

static void key_fields(struct hist_sample *s, const struct profile *p,
		       const struct profile_sample *ps, const struct profile_sample_key *k)
{
	s->tid = k->tid;
	s->cpu = k->cpu;
	s->waker = k->waker;
	if (k->waker)
		s->waker_comm = profile__tid_name(p, k->waker);
	if (k->tid)
		s->r.comm = sample_filter__thread_comm(p, ps->pid, k->tid, s->r.comm);
}

void hist__sample_keyed(struct hist_sample *s, const struct profile *p,
			const struct profile_sample *ps, const struct profile_sample_key *k,
			struct symbolizer *sy)
{
	hist__sample(s, p, ps, sy);
	key_fields(s, p, ps, k);
}

void hist__sample_context(struct hist_sample *s, const struct profile *p,
			  const struct profile_sample *ps, const struct profile_sample_key *k,
			  struct symbolizer *sy)
{
	sample_fields(s, p, ps);
	s->r.comm = symbolizer__comm(sy, ps->pid, ps->exec_ns);
	key_fields(s, p, ps, k);
}

void hist__sample_frame(struct hist_sample *s, const struct hist_sample *ctx,
			const struct sym_result *r)
{
	*s = *ctx;
	s->r = *r;
	s->r.comm = ctx->r.comm;
}

int hist__add_profile(struct hist *h, const struct profile *p, struct symbolizer *sy)
{
	struct pyself_sample *py = NULL;
	size_t nr = p->nr_samples;
	int err = 0;

	for (int k = 0; k < h->nr_keys; k++)
		if (h->keys[k] == SORT_BB)
			symbolizer__want_blocks(sy);
	/* pure Python code's own time is its Python function's, not the evaluation loop's */
	if (pyself__samples(p, sy, &py, &nr))
		return fail(-ENOMEM, "cannot build histogram: %s", strerror(ENOMEM));
	if (!py)
		nr = p->nr_samples;
	for (size_t i = 0; i < nr && !err; i++) {
		struct hist_sample s;

		if (py)
			hist__sample_keyed(&s, p, &py[i].s, &py[i].k, sy);
		else
			hist__sample_keyed(&s, p, &p->samples[i], profile__sample_key(p, i), sy);
		err = hist__add(h, &s);
	}
	free(py);
	if (err)
		return fail(-ENOMEM, "cannot build histogram: %s", strerror(ENOMEM));
	return 0;
}

int hist__add_lbr(struct hist *h, const struct profile *p, struct symbolizer *sy)
{
	double scale = lbr_estimate__scale(p);

	if (!p->nr_lbr)
		return 0;
	for (size_t i = 0; i < h->nr_rows; i++) {
		const char *dso = h->rows[i].dso;
		const struct bblock_table *bt;
		double *execs;
		u64 used;
		bool done = false;

		if (!h->rows[i].bb)
			continue;
		for (size_t j = 0; j < i && !done; j++)	/* each object once */
			done = h->rows[j].bb && h->rows[j].dso == dso;
		if (done || !(bt = symbolizer__blocks(sy, dso)))
			continue;
		execs = calloc(bt->nr + 1, sizeof(*execs));
		if (!execs)
			return fail(-ENOMEM, "cannot estimate block executions: %s", strerror(ENOMEM));
		lbr_estimate__block_execs(p, sy, dso, bt, execs, &used);
		for (size_t j = i; j < h->nr_rows; j++)
			if (h->rows[j].bb && h->rows[j].dso == dso)
				h->rows[j].lbr_execs = execs[h->rows[j].bb - bt->blocks] * scale;
		free(execs);
	}
	h->has_lbr = true;
	return 0;
}

static int row_cmp(const void *a, const void *b, void *h)
{
	const struct hist_row *x = a, *y = b;
	const struct hist *hh = h;

	if (hh->children && x->children != y->children)
		return x->children < y->children ? 1 : -1;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return key_cmp(h, x, y);
}

void hist__sort_by(struct hist *h, int (*cmp)(const void *, const void *, void *), void *arg)
{
	if (h->nr_rows > 1)
		qsort_r(h->rows, h->nr_rows, sizeof(*h->rows), cmp, arg);
	/* the index points at old positions: again, for later adds (into as many slots as
	 * before, so it cannot fail) */
	index_rows(h);
}

void hist__sort(struct hist *h)
{
	hist__sort_by(h, row_cmp, h);
}

double hist__ci95(u64 count, u64 total)
{
	const double z = 1.959963984540054;
	double n = total, p, denom, half;

	if (!total)
		return 0;
	p = (double)count / n;
	denom = 1 + z * z / n;
	half = z * sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom;
	return half;
}

bool hist__low_confidence(u64 count, u64 total)
{
	return total && hist__ci95(count, total) * 2 >= (double)count / total;
}
