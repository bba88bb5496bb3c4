// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* User frames as (object, offset) rather than process addresses (format 1.11): with ASLR the
 * same call path in two processes of one program is two stacks of addresses, but one stack of
 * file offsets. A whole machine's minute runs thousands of short processes (compilers): their
 * stacks, shared, are what keeps its profile small (docs/profile-format.md, "Objects"); and
 * their records sorted by process, which packs them small (format 2.0). */
#include <stdlib.h>
#include <string.h>
#include "hsbpf.h"
#include "lib/hashidx.h"
#include "profile/profile.h"

struct relocator {
	struct profile *p;
	/* the objects: one mapping of PROFILE_OBJ_PID each, start PROFILE_OBJ_FRAME(i, 0) */
	struct profile_mapping *objs;
	size_t nr_objs, cap_objs;
	struct hashidx obj_idx;
	/* the new stack table, each distinct stack once */
	struct profile_stack *stacks;
	size_t nr_stacks, cap_stacks;
	u64 *frames;
	size_t nr_frames, cap_frames;
	struct hashidx stack_idx;
	u32 *kernel_ref;	/* an old kernel stack's new reference, 0: not copied yet */
	u64 *buf;		/* one stack's relocated frames */
	size_t cap_buf;
	bool raw_left;		/* a file-backed address could not be relocated */
};

struct frames_key {
	const u64 *frames;
	u32 nr;
	u16 end, nr_fp;
};

/* code whose offsets name it in any process: a file's (not anonymous, memfd), and the
 * kernel's vDSO (the same image in every process; the symbolizer reads it by name) */
static bool file_backed(const char *path)
{
	return (path[0] == '/' && strncmp(path, "//anon", 6) && strncmp(path, "/memfd:", 7)) ||
	       !strcmp(path, "[vdso]");
}

static bool obj_eq(const void *key, u32 pos, void *ctx)
{
	const struct profile_mapping *m = key, *o = &((struct relocator *)ctx)->objs[pos];

	return m->path == o->path && m->build_id_size == o->build_id_size &&
	       !memcmp(m->build_id, o->build_id, m->build_id_size);
}

static u64 obj_hash(const struct profile_mapping *m)
{
	return hashidx__hash(m->build_id, m->build_id_size, hashidx__hash_u64(m->path, 0));
}

/* the object index of m's file, made if new; -ENOSPC past PROFILE_OBJ_MAX, -ENOMEM */
static s64 object_of(struct relocator *r, const struct profile_mapping *m)
{
	u64 h = obj_hash(m);
	s64 pos = hashidx__find(&r->obj_idx, h, m, obj_eq, r);

	if (pos >= 0)
		return pos;
	if (r->nr_objs >= PROFILE_OBJ_MAX)
		return -ENOSPC;
	if (array__reserve((void **)&r->objs, &r->cap_objs, r->nr_objs + 1, sizeof(*r->objs)) ||
	    hashidx__insert(&r->obj_idx, h, r->nr_objs))
		return -ENOMEM;
	r->objs[r->nr_objs] = (struct profile_mapping){
		.pid = PROFILE_OBJ_PID, .path = m->path, .start = PROFILE_OBJ_FRAME(r->nr_objs, 0),
		.len = 1ULL << PROFILE_OBJ_OFF_BITS, .build_id_size = m->build_id_size,
	};
	if (m->build_id_size)
		memcpy(r->objs[r->nr_objs].build_id, m->build_id, m->build_id_size);
	return r->nr_objs++;
}

/* ip of (pid, exec_ns, map_ns) as (object, offset), or as it was when it is no file's;
 * ret: a return address, which may be just past its mapping's end (a call that ends it) */
static int relocate(struct relocator *r, u32 pid, u64 exec_ns, u64 map_ns, u64 ip, bool ret,
		    u64 *out)
{
	const struct profile_mapping *m;
	u64 off;
	s64 obj;

	*out = ip;
	if (HSBPF_PY_IS_FRAME(ip) || PROFILE_IS_OBJ_FRAME(ip))
		return 0;
	m = profile__find_mapping(r->p, pid, exec_ns, map_ns, ip);
	if (!m && ret && ip)
		m = profile__find_mapping(r->p, pid, exec_ns, map_ns, ip - 1);
	if (!m || !file_backed(profile__str(r->p, m->path)))
		return 0;
	off = ip - m->start + m->pgoff;
	obj = off >> PROFILE_OBJ_OFF_BITS ? -ENOSPC : object_of(r, m);
	if (obj == -ENOMEM)
		return -ENOMEM;
	if (obj < 0) {
		r->raw_left = true;
		return 0;
	}
	*out = PROFILE_OBJ_FRAME(obj, off);
	return 0;
}

static bool stack_eq(const void *key, u32 pos, void *ctx)
{
	const struct frames_key *k = key;
	const struct relocator *r = ctx;
	const struct profile_stack *s = &r->stacks[pos];

	return s->nr == k->nr && s->end == k->end && s->nr_fp == k->nr_fp &&
	       !memcmp(r->frames + s->first, k->frames, k->nr * sizeof(*k->frames));
}

/* the new table's reference (index + 1) of this stack, added if new; -ENOMEM */
static s64 intern_stack(struct relocator *r, const struct frames_key *k)
{
	u64 h = hashidx__hash(k->frames, k->nr * sizeof(*k->frames),
			      hashidx__hash_u64((u64)k->nr << 32 | (u32)k->end << 16 | k->nr_fp, 0));
	s64 pos = hashidx__find(&r->stack_idx, h, k, stack_eq, r);

	if (pos >= 0)
		return pos + 1;
	if (r->nr_frames + k->nr >= UINT32_MAX || r->nr_stacks >= UINT32_MAX - 1 ||
	    array__reserve((void **)&r->frames, &r->cap_frames, r->nr_frames + k->nr + 1,
			   sizeof(*r->frames)) ||
	    array__reserve((void **)&r->stacks, &r->cap_stacks, r->nr_stacks + 1, sizeof(*r->stacks)) ||
	    hashidx__insert(&r->stack_idx, h, r->nr_stacks))
		return -ENOMEM;
	if (k->nr)
		memcpy(r->frames + r->nr_frames, k->frames, k->nr * sizeof(*k->frames));
	r->stacks[r->nr_stacks] = (struct profile_stack){ .first = r->nr_frames, .nr = k->nr,
							   .end = k->end, .nr_fp = k->nr_fp };
	r->nr_frames += k->nr;
	return ++r->nr_stacks;
}

/* an old kernel stack's new reference (its frames are the same in every process) */
static int kernel_stack(struct relocator *r, u32 *ref)
{
	const struct profile_stack *st = profile__stack(r->p, *ref);
	s64 n;

	if (!st) {
		*ref = 0;
		return 0;
	}
	if (!r->kernel_ref[*ref - 1]) {
		n = intern_stack(r, &(struct frames_key){ profile__frames(r->p, st), st->nr, st->end,
							 st->nr_fp });
		if (n < 0)
			return n;
		r->kernel_ref[*ref - 1] = n;
	}
	*ref = r->kernel_ref[*ref - 1];
	return 0;
}

/* an old user stack of (pid, exec_ns, map_ns), relocated, as a new reference */
static int user_stack(struct relocator *r, u32 pid, u64 exec_ns, u64 map_ns, u32 *ref)
{
	const struct profile_stack *st = profile__stack(r->p, *ref);
	const u64 *f;
	s64 n;

	if (!st) {
		*ref = 0;
		return 0;
	}
	if (array__reserve((void **)&r->buf, &r->cap_buf, st->nr + 1, sizeof(*r->buf)))
		return -ENOMEM;
	f = profile__frames(r->p, st);
	for (u32 j = 0; j < st->nr; j++)
		if (relocate(r, pid, exec_ns, map_ns, f[j], j > 0, &r->buf[j]))
			return -ENOMEM;
	n = intern_stack(r, &(struct frames_key){ r->buf, st->nr, st->end, st->nr_fp });
	if (n < 0)
		return n;
	*ref = n;
	return 0;
}

/* the file-backed mappings of the processes: every address in them is an object's now */
static void drop_process_files(struct profile *p)
{
	size_t o = 0;

	for (size_t i = 0; i < p->nr_mappings; i++)
		if (!file_backed(profile__str(p, p->mappings[i].path)))
			p->mappings[o++] = p->mappings[i];
	p->nr_mappings = o;
}

static void relocator__free(struct relocator *r)
{
	free(r->objs);
	hashidx__free(&r->obj_idx);
	free(r->stacks);
	free(r->frames);
	hashidx__free(&r->stack_idx);
	free(r->kernel_ref);
	free(r->buf);
}

/* a user stack whose every frame is an object's (or Python's): the same in any of its
 * process's mapping generations */
static bool independent(const struct profile *p, u32 ref)
{
	const struct profile_stack *st = profile__stack(p, ref);

	for (u32 j = 0; st && j < st->nr; j++)
		if (!PROFILE_IS_OBJ_FRAME(profile__frames(p, st)[j]) &&
		    !HSBPF_PY_IS_FRAME(profile__frames(p, st)[j]))
			return false;
	return true;
}

/* a parallel array (keys, wakers) as long as its records, zeros added; -ENOMEM */
static int pad(void **arr, size_t *nr, size_t *cap, size_t want, size_t elem)
{
	if (!*nr || *nr >= want)
		return 0;
	if (array__reserve(arr, cap, want, elem))
		return -ENOMEM;
	memset((char *)*arr + *nr * elem, 0, (want - *nr) * elem);
	*nr = want;
	return 0;
}

struct merge_ctx {
	const struct profile *p;
	bool stacks;		/* stack samples, else samples */
};

static bool sample_eq(const void *key, u32 pos, void *ctx)
{
	const struct merge_ctx *c = ctx;
	const struct profile *p = c->p;
	size_t i = *(const size_t *)key;

	if (c->stacks) {
		const struct profile_stack_sample *a = &p->stack_samples[i], *b = &p->stack_samples[pos];
		const struct profile_waker *wa = profile__stack_sample_waker(p, i);
		const struct profile_waker *wb = profile__stack_sample_waker(p, pos);

		return a->pid == b->pid && a->flags == b->flags && a->cgroup_id == b->cgroup_id &&
		       a->exec_ns == b->exec_ns && a->map_ns == b->map_ns && a->user == b->user &&
		       a->kernel == b->kernel &&
		       !memcmp(profile__stack_sample_key(p, i), profile__stack_sample_key(p, pos),
			       sizeof(struct profile_sample_key)) &&
		       (wa && wb ? !memcmp(wa, wb, sizeof(*wa)) : wa == wb);
	}
	const struct profile_sample *a = &p->samples[i], *b = &p->samples[pos];

	return a->pid == b->pid && a->flags == b->flags && a->ip == b->ip &&
	       a->cgroup_id == b->cgroup_id && a->exec_ns == b->exec_ns && a->map_ns == b->map_ns &&
	       !memcmp(profile__sample_key(p, i), profile__sample_key(p, pos),
		       sizeof(struct profile_sample_key));
}

static u64 sample_hash(const struct profile *p, bool stacks, size_t i)
{
	const struct profile_sample_key *k;
	u64 h;

	if (stacks) {
		const struct profile_stack_sample *s = &p->stack_samples[i];
		const struct profile_waker *w = profile__stack_sample_waker(p, i);

		h = hashidx__hash_u64((u64)s->pid << 32 | s->flags, s->exec_ns ^ s->map_ns ^ s->cgroup_id);
		h = hashidx__hash_u64((u64)s->user << 32 | s->kernel, h);
		if (w)
			h = hashidx__hash(w, sizeof(*w), h);
		k = profile__stack_sample_key(p, i);
	} else {
		const struct profile_sample *s = &p->samples[i];

		h = hashidx__hash_u64((u64)s->pid << 32 | s->flags, s->exec_ns ^ s->map_ns ^ s->cgroup_id);
		h = hashidx__hash_u64(s->ip, h);
		k = profile__sample_key(p, i);
	}
	return hashidx__hash(k, sizeof(*k), h);
}

/* records that have become one (their stacks or ips and generations now the same) summed into
 * the first; the parallel keys and wakers follow. 0 or -ENOMEM (nothing merged); out of memory
 * midway, the rest is kept unmerged */
static int merge(struct profile *p, bool stacks)
{
	struct merge_ctx c = { p, stacks };
	struct hashidx idx = {};
	size_t nr = stacks ? p->nr_stack_samples : p->nr_samples, o = 0;
	bool indexed = true;

	if (stacks ? pad((void **)&p->stack_sample_keys, &p->nr_stack_sample_keys,
			 &p->cap_stack_sample_keys, nr, sizeof(*p->stack_sample_keys)) ||
		     pad((void **)&p->stack_sample_wakers, &p->nr_stack_sample_wakers,
			 &p->cap_stack_sample_wakers, nr, sizeof(*p->stack_sample_wakers))
		   : pad((void **)&p->sample_keys, &p->nr_sample_keys, &p->cap_sample_keys, nr,
			 sizeof(*p->sample_keys)))
		return -ENOMEM;
	for (size_t i = 0; i < nr; i++) {
		u64 h = sample_hash(p, stacks, i);
		s64 pos = hashidx__find(&idx, h, &i, sample_eq, &c);

		if (pos >= 0) {
			if (stacks) {
				p->stack_samples[pos].count += p->stack_samples[i].count;
				p->stack_samples[pos].weight += p->stack_samples[i].weight;
			} else {
				p->samples[pos].count += p->samples[i].count;
				p->samples[pos].weight += p->samples[i].weight;
			}
			continue;
		}
		/* o <= i: the kept records are moved down as the walk goes */
		if (stacks) {
			p->stack_samples[o] = p->stack_samples[i];
			if (p->nr_stack_sample_keys)
				p->stack_sample_keys[o] = p->stack_sample_keys[i];
			if (p->nr_stack_sample_wakers)
				p->stack_sample_wakers[o] = p->stack_sample_wakers[i];
		} else {
			p->samples[o] = p->samples[i];
			if (p->nr_sample_keys)
				p->sample_keys[o] = p->sample_keys[i];
		}
		if (indexed && hashidx__insert(&idx, h, o))
			indexed = false;	/* merged no further */
		o++;
	}
	if (stacks) {
		p->nr_stack_samples = o;
		p->nr_stack_sample_keys = p->nr_stack_sample_keys ? o : 0;
		p->nr_stack_sample_wakers = p->nr_stack_sample_wakers ? o : 0;
	} else {
		p->nr_samples = o;
		p->nr_sample_keys = p->nr_sample_keys ? o : 0;
	}
	hashidx__free(&idx);
	return 0;
}

/* the new references, ips and tables into p (nothing can fail from here) */
static void commit(struct profile *p, struct relocator *r, const u32 *refs, const u64 *ips)
{
	size_t nss = p->nr_stack_samples, nw = p->nr_stack_sample_wakers;

	for (size_t i = 0; i < nss; i++) {
		p->stack_samples[i].user = refs[2 * i];
		p->stack_samples[i].kernel = refs[2 * i + 1];
	}
	for (size_t i = 0; i < nw; i++) {
		p->stack_sample_wakers[i].user = refs[2 * (nss + i)];
		p->stack_sample_wakers[i].kernel = refs[2 * (nss + i) + 1];
	}
	for (size_t i = 0; i < p->nr_samples; i++)
		p->samples[i].ip = ips[i];
	/* in the new tables from here */
	free(p->stacks);
	free(p->frames);
	p->stacks = r->stacks;
	p->nr_stacks = r->nr_stacks;
	p->cap_stacks = r->cap_stacks;
	p->frames = r->frames;
	p->nr_frames = r->nr_frames;
	p->cap_frames = r->cap_frames;
	r->stacks = NULL;
	r->frames = NULL;
	/* a generation only chose among the process's mappings: a record without a process
	 * address left needs none, and its slots split by generation become one */
	for (size_t i = 0; i < nss; i++) {
		struct profile_stack_sample *ss = &p->stack_samples[i];

		if (independent(p, ss->user))
			ss->map_ns = 0;
	}
	for (size_t i = 0; i < nw; i++)
		if (independent(p, p->stack_sample_wakers[i].user))
			p->stack_sample_wakers[i].map_ns = 0;
	for (size_t i = 0; i < p->nr_samples; i++)
		if ((p->samples[i].flags & HSBPF_KEY_KERNEL) || PROFILE_IS_OBJ_FRAME(p->samples[i].ip))
			p->samples[i].map_ns = 0;
}

struct order_ctx {
	const struct profile *p;
	bool stacks;
};

static int cmp_by_process(const void *a, const void *b, void *arg)
{
	const struct order_ctx *c = arg;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	u32 pi, pj;
	u64 ei, ej;

	if (c->stacks) {
		pi = c->p->stack_samples[i].pid, pj = c->p->stack_samples[j].pid;
		ei = c->p->stack_samples[i].exec_ns, ej = c->p->stack_samples[j].exec_ns;
	} else {
		pi = c->p->samples[i].pid, pj = c->p->samples[j].pid;
		ei = c->p->samples[i].exec_ns, ej = c->p->samples[j].exec_ns;
	}
	if (pi != pj)
		return pi < pj ? -1 : 1;
	if (ei != ej)
		return ei < ej ? -1 : 1;
	return i < j ? -1 : i > j;	/* as they were */
}

/* arr's n records of elem bytes in the order idx gives; -ENOMEM (arr as it was) */
static int permute(void *arr, size_t n, size_t elem, const size_t *idx)
{
	char *tmp;

	if (!n)
		return 0;
	tmp = malloc(n * elem);
	if (!tmp)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		memcpy(tmp + i * elem, (const char *)arr + idx[i] * elem, elem);
	memcpy(arr, tmp, n * elem);
	free(tmp);
	return 0;
}

/* one table's records by process, with their parallel keys and wakers */
static int sort_table(struct profile *p, bool stacks)
{
	struct order_ctx c = { p, stacks };
	size_t n = stacks ? p->nr_stack_samples : p->nr_samples;
	size_t *idx = malloc((n + 1) * sizeof(*idx));
	int err = -ENOMEM;

	if (!idx)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		idx[i] = i;
	qsort_r(idx, n, sizeof(*idx), cmp_by_process, &c);
	if (stacks) {
		if (pad((void **)&p->stack_sample_keys, &p->nr_stack_sample_keys,
			&p->cap_stack_sample_keys, n, sizeof(*p->stack_sample_keys)) ||
		    pad((void **)&p->stack_sample_wakers, &p->nr_stack_sample_wakers,
			&p->cap_stack_sample_wakers, n, sizeof(*p->stack_sample_wakers)))
			goto out;
		/* the keys and wakers first: a failure there leaves the records as they were */
		if (permute(p->stack_sample_keys, p->nr_stack_sample_keys,
			    sizeof(*p->stack_sample_keys), idx) ||
		    permute(p->stack_sample_wakers, p->nr_stack_sample_wakers,
			    sizeof(*p->stack_sample_wakers), idx))
			goto out;
		err = permute(p->stack_samples, n, sizeof(*p->stack_samples), idx);
	} else {
		if (pad((void **)&p->sample_keys, &p->nr_sample_keys, &p->cap_sample_keys, n,
			sizeof(*p->sample_keys)) ||
		    permute(p->sample_keys, p->nr_sample_keys, sizeof(*p->sample_keys), idx))
			goto out;
		err = permute(p->samples, n, sizeof(*p->samples), idx);
	}
out:
	free(idx);
	return err;
}

int profile__sort_by_process(struct profile *p)
{
	int err = sort_table(p, false);

	return err ? err : sort_table(p, true);
}

int profile__share_stacks(struct profile *p)
{
	size_t nss = p->nr_stack_samples, nw = p->nr_stack_sample_wakers;
	struct relocator r = { .p = p };
	u32 *refs = NULL;	/* the new references: user and kernel of each sample, then wakers' */
	u64 *ips = NULL;
	int err = -ENOMEM;

	profile__finish(p);	/* the process images' lookups search sorted tables */
	for (size_t i = 0; i < p->nr_mappings; i++)
		if (p->mappings[i].pid == PROFILE_OBJ_PID)
			return 0;	/* shared already */
	r.kernel_ref = calloc(p->nr_stacks + 1, sizeof(*r.kernel_ref));
	refs = malloc((2 * (nss + nw) + 1) * sizeof(*refs));
	ips = malloc((p->nr_samples + 1) * sizeof(*ips));
	if (!r.kernel_ref || !refs || !ips)
		goto out;
	/* into the new tables first: the profile is left as it was if memory runs out */
	for (size_t i = 0; i < nss; i++) {
		const struct profile_stack_sample *ss = &p->stack_samples[i];

		refs[2 * i] = ss->user;
		refs[2 * i + 1] = ss->kernel;
		if (user_stack(&r, ss->pid, ss->exec_ns, ss->map_ns, &refs[2 * i]) ||
		    kernel_stack(&r, &refs[2 * i + 1]))
			goto out;
	}
	for (size_t i = 0; i < nw; i++) {
		const struct profile_waker *w = &p->stack_sample_wakers[i];
		u32 *ref = &refs[2 * (nss + i)];

		ref[0] = w->user;
		ref[1] = w->kernel;
		if (user_stack(&r, w->pid, w->exec_ns, w->map_ns, &ref[0]) || kernel_stack(&r, &ref[1]))
			goto out;
	}
	for (size_t i = 0; i < p->nr_samples; i++) {
		const struct profile_sample *s = &p->samples[i];

		ips[i] = s->ip;
		if (!(s->flags & HSBPF_KEY_KERNEL) &&
		    relocate(&r, s->pid, s->exec_ns, s->map_ns, s->ip, false, &ips[i]))
			goto out;
	}
	if (array__reserve((void **)&p->mappings, &p->cap_mappings, p->nr_mappings + r.nr_objs + 1,
			   sizeof(*p->mappings)))
		goto out;
	commit(p, &r, refs, ips);
	/* the branch records (LBR) keep process addresses: their mappings stay */
	if (!r.raw_left && !p->nr_lbr)
		drop_process_files(p);
	if (r.nr_objs)
		memcpy(p->mappings + p->nr_mappings, r.objs, r.nr_objs * sizeof(*r.objs));
	p->nr_mappings += r.nr_objs;
	profile__finish(p);
	/* out of memory there, the records stay apart: a profile as good, only larger */
	if (!merge(p, true))
		merge(p, false);
	err = 0;
out:
	relocator__free(&r);
	free(refs);
	free(ips);
	return err;
}
