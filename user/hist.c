// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Histogram rows keyed by the chosen sort keys; a row's identity is the tuple of its key
 * fields, hashed; and the statistics behind each row's confidence interval. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "bblock.h"
#include "hist.h"
#include "lbr_estimate.h"

static const char *const key_names[SORT_NR] = {
	[SORT_SYM] = "sym", [SORT_IP] = "ip", [SORT_DSO] = "dso", [SORT_LINE] = "line",
	[SORT_PID] = "pid", [SORT_COMM] = "comm", [SORT_CGROUP] = "cgroup", [SORT_BB] = "bb",
};

const char *hist__key_name(enum sort_key k)
{
	return k < SORT_NR ? key_names[k] : "?";
}

int hist__parse_sort(const char *spec, enum sort_key *keys, int *nr_keys)
{
	char buf[128], *tok, *save = NULL;

	*nr_keys = 0;
	if (!spec || !*spec || strlen(spec) >= sizeof(buf))
		return fail(-EINVAL, "invalid --sort '%s'", spec ? spec : "");
	strcpy(buf, spec);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int k;

		for (k = 0; k < SORT_NR; k++)
			if (!strcmp(tok, key_names[k]))
				break;
		if (k == SORT_NR)
			return fail(-EINVAL, "unknown sort key '%s' (known: sym, ip, dso, line, pid, comm, cgroup, bb)",
				     tok);
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

	if (!h)
		return NULL;
	memcpy(h->keys, keys, nr_keys * sizeof(*keys));
	h->nr_keys = nr_keys;
	h->nr_slots = 1024;
	h->index = calloc(h->nr_slots, sizeof(*h->index));
	if (!h->index) {
		free(h);
		return NULL;
	}
	return h;
}

void hist__free(struct hist *h)
{
	if (!h)
		return;
	free(h->rows);
	free(h->index);
	free(h);
}

static int strcmp0(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

static u64 hash_mix(u64 h, u64 v)
{
	return (h ^ v) * 0x100000001b3ull;
}

static u64 hash_s(u64 h, const char *s)
{
	for (; s && *s; s++)
		h = hash_mix(h, (u8)*s);
	return hash_mix(h, 0xff);
}

/* ordering of two rows by the sort keys alone */
static int key_cmp(const struct hist *h, const struct hist_row *a, const struct hist_row *b)
{
	int c = 0;

	for (int i = 0; i < h->nr_keys && !c; i++) {
		switch (h->keys[i]) {
		case SORT_SYM:
			c = strcmp0(a->sym, b->sym);
			if (!c)
				c = strcmp0(a->dso, b->dso);
			break;
		case SORT_IP:
			c = strcmp0(a->dso, b->dso);
			if (!c)
				c = a->vaddr < b->vaddr ? -1 : a->vaddr > b->vaddr;
			break;
		case SORT_DSO:
			c = strcmp0(a->dso, b->dso);
			break;
		case SORT_LINE:
			c = strcmp0(a->file, b->file);
			if (!c)
				c = a->line - b->line;
			if (!c && !a->file)	/* no line info: keep symbols apart */
				c = strcmp0(a->sym, b->sym);
			if (!c)
				c = strcmp0(a->dso, b->dso);
			break;
		case SORT_PID:
			c = a->pid < b->pid ? -1 : a->pid > b->pid;
			break;
		case SORT_COMM:
			c = strcmp0(a->comm, b->comm);
			break;
		case SORT_CGROUP:
			c = a->cgroup_id < b->cgroup_id ? -1 : a->cgroup_id > b->cgroup_id;
			break;
		case SORT_BB:
			c = strcmp0(a->dso, b->dso);
			if (!c && (!a->bb || !b->bb))	/* no block: one row per symbol */
				c = a->bb ? 1 : b->bb ? -1 : strcmp0(a->sym, b->sym);
			else if (!c)
				c = a->bb->start < b->bb->start ? -1 : a->bb->start > b->bb->start;
			break;
		default:
			break;
		}
	}
	return c;
}

static u64 key_hash(const struct hist *h, const struct hist_row *r)
{
	u64 x = 0xcbf29ce484222325ull;

	for (int i = 0; i < h->nr_keys; i++) {
		switch (h->keys[i]) {
		case SORT_SYM:
			x = hash_s(hash_s(x, r->sym), r->dso);
			break;
		case SORT_IP:
			x = hash_mix(hash_s(x, r->dso), r->vaddr);
			break;
		case SORT_DSO:
			x = hash_s(x, r->dso);
			break;
		case SORT_LINE:
			x = hash_mix(hash_s(x, r->file), r->line);
			x = hash_s(hash_s(x, r->file ? NULL : r->sym), r->dso);
			break;
		case SORT_PID:
			x = hash_mix(x, r->pid);
			break;
		case SORT_COMM:
			x = hash_s(x, r->comm);
			break;
		case SORT_CGROUP:
			x = hash_mix(x, r->cgroup_id);
			break;
		case SORT_BB:
			x = hash_s(x, r->dso);
			x = r->bb ? hash_mix(x, r->bb->start) : hash_s(x, r->sym);
			break;
		default:
			break;
		}
	}
	return x;
}

static int grow_index(struct hist *h)
{
	size_t n = h->nr_slots * 2;
	u32 *idx = calloc(n, sizeof(*idx));

	if (!idx)
		return -ENOMEM;
	for (size_t r = 0; r < h->nr_rows; r++) {
		size_t i = key_hash(h, &h->rows[r]) & (n - 1);

		while (idx[i])
			i = (i + 1) & (n - 1);
		idx[i] = r + 1;
	}
	free(h->index);
	h->index = idx;
	h->nr_slots = n;
	return 0;
}

int hist__add(struct hist *h, const struct profile_sample *s, const struct sym_result *r,
	      const char *cgroup)
{
	return hist__add_row(h, s, r, cgroup) < 0 ? -ENOMEM : 0;
}

s64 hist__add_row(struct hist *h, const struct profile_sample *s, const struct sym_result *r,
		  const char *cgroup)
{
	struct hist_row row = {
		.count = s->count, .weight = s->weight, .sym = r->sym, .sym_off = r->sym_off,
		.dso = r->dso, .vaddr = r->vaddr, .file = r->file, .line = r->line, .pid = s->pid,
		.comm = r->comm, .cgroup_id = s->cgroup_id, .cgroup = cgroup, .kernel = r->kernel,
		.bb = r->bb, .nspid = h->nspid_of_next,
	};
	size_t i;

	if (h->nr_rows * 2 >= h->nr_slots && grow_index(h))
		return -ENOMEM;
	h->total += s->count;
	h->total_weight += s->weight;
	for (i = key_hash(h, &row) & (h->nr_slots - 1); h->index[i]; i = (i + 1) & (h->nr_slots - 1)) {
		struct hist_row *old = &h->rows[h->index[i] - 1];

		if (!key_cmp(h, old, &row)) {
			old->count += row.count;
			old->weight += row.weight;
			return h->index[i] - 1;
		}
	}
	if (array__reserve((void **)&h->rows, &h->cap_rows, h->nr_rows + 1, sizeof(*h->rows)))
		return -ENOMEM;
	row.id = h->nr_rows;
	h->rows[h->nr_rows++] = row;
	h->index[i] = h->nr_rows;
	return h->nr_rows - 1;
}

const char *hist__cgroup_path(const struct profile *p, u64 id)
{
	for (size_t i = 0; i < p->nr_cgroups; i++)
		if (p->cgroups[i].id == id)
			return profile__str(p, p->cgroups[i].path);
	return NULL;
}

int hist__add_profile(struct hist *h, const struct profile *p, struct symbolizer *sy)
{
	for (int k = 0; k < h->nr_keys; k++)
		if (h->keys[k] == SORT_BB)
			symbolizer__want_blocks(sy);
	for (size_t i = 0; i < p->nr_samples; i++) {
		const struct profile_sample *s = &p->samples[i];
		struct sym_result r;

		symbolizer__resolve(sy, s, &r);
		h->nspid_of_next = profile__nspid(p, s->pid);
		if (hist__add(h, s, &r, hist__cgroup_path(p, s->cgroup_id)))
			return fail(-ENOMEM, "cannot build histogram: %s", strerror(ENOMEM));
	}
	return 0;
}

int hist__add_lbr(struct hist *h, const struct profile *p, struct symbolizer *sy)
{
	double scale = lbr__scale(p);

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
			return -ENOMEM;
		lbr__block_execs(p, sy, dso, bt, execs, &used);
		for (size_t j = i; j < h->nr_rows; j++)
			if (h->rows[j].bb && h->rows[j].dso == dso)
				h->rows[j].lbr_execs = execs[h->rows[j].bb - bt->blocks] * scale;
		free(execs);
	}
	h->has_lbr = true;
	return 0;
}

static const struct hist *sort_ctx;

static int row_cmp(const void *a, const void *b)
{
	const struct hist_row *x = a, *y = b;
	int c = sort_ctx->children ? cmp_u64_desc(x->children, y->children) : 0;

	if (!c)
		c = cmp_u64_desc(x->count, y->count);
	return c ? c : key_cmp(sort_ctx, x, y);
}

void hist__sort(struct hist *h)
{
	sort_ctx = h;
	if (h->nr_rows > 1)
		qsort(h->rows, h->nr_rows, sizeof(*h->rows), row_cmp);
	sort_ctx = NULL;
	/* the index points at old positions: rebuild it for later adds */
	memset(h->index, 0, h->nr_slots * sizeof(*h->index));
	for (size_t r = 0; r < h->nr_rows; r++) {
		size_t i = key_hash(h, &h->rows[r]) & (h->nr_slots - 1);

		while (h->index[i])
			i = (i + 1) & (h->nr_slots - 1);
		h->index[i] = r + 1;
	}
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
