// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The profile model and its file: a header, a section table and checksummed sections.
 * Readers reject a newer major version, skip unknown sections, and trust no offset. */
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include "hsbpf.h"
#include "lib/file_format.h"
#include "lib/section_pack.h"
#include "profile/profile.h"

_Static_assert(sizeof(struct profile_sample) == 56, "profile_sample");
_Static_assert(sizeof(struct profile_mapping) == 64, "profile_mapping");
_Static_assert(sizeof(struct profile_comm) == 24, "profile_comm");
_Static_assert(sizeof(struct profile_fork) == 16, "profile_fork");
_Static_assert(sizeof(struct profile_ksym) == 16, "profile_ksym");
_Static_assert(sizeof(struct profile_cgroup) == 16, "profile_cgroup");
_Static_assert(sizeof(struct profile_lbr) == 40, "profile_lbr");
_Static_assert(sizeof(struct profile_stack) == 16, "profile_stack");
_Static_assert(sizeof(struct profile_stack_sample) == 56, "profile_stack_sample");
_Static_assert(sizeof(struct profile_sample_key) == 16, "profile_sample_key");
_Static_assert(sizeof(struct profile_thread_comm) == 24, "profile_thread_comm");
_Static_assert(sizeof(struct profile_jitsym) == 32, "profile_jitsym");
_Static_assert(sizeof(struct profile_pyframe) == 24, "profile_pyframe");

#define sample_rec profile_sample_rec
#define stack_sample_rec profile_stack_sample_rec
_Static_assert(sizeof(struct sample_rec) == 48 && sizeof(struct stack_sample_rec) == 48, "records");

struct profile *profile__new(void)
{
	struct profile *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	/* offset 0 is the empty string, so a zeroed reference is always valid */
	if (profile__intern(p, "") < 0) {
		free(p);
		errno = ENOMEM;
		return NULL;
	}
	return p;
}

void profile__free(struct profile *p)
{
	if (!p)
		return;
	free(p->samples);
	free(p->offcpu_blocks);
	free(p->mappings);
	free(p->comms);
	free(p->forks);
	free(p->ksyms);
	free(p->cgroups);
	free(p->lbr);
	free(p->nspids);
	free(p->stacks);
	free(p->frames);
	free(p->stack_samples);
	free(p->sample_keys);
	free(p->stack_sample_keys);
	free(p->stack_sample_wakers);
	free(p->thread_comms);
	free(p->jitsyms);
	free(p->pyframes);
	free(p->strs.buf);
	hashidx__free(&p->strs.idx);
	free(p);
}

static bool str_at(const void *key, u32 off, void *ctx)
{
	const struct strtab *st = ctx;

	return !strcmp(st->buf + off, key);
}

/* index every string of the table, the first of equal ones (a table from a file that is not
 * terminated is refused later, by validate_refs: no string is read past its end) */
static int strtab_index(struct strtab *st)
{
	size_t off, len;

	hashidx__clear(&st->idx);
	for (off = 0; off < st->len; off += len + 1) {
		u64 hash;
		int err;

		len = strnlen(st->buf + off, st->len - off);
		if (off + len == st->len)
			break;
		hash = hashidx__hash_str(st->buf + off, 0);
		if (hashidx__find(&st->idx, hash, st->buf + off, str_at, st) >= 0)
			continue;
		err = hashidx__insert(&st->idx, hash, off);
		if (err)
			return err;
	}
	return 0;
}

static s64 strtab__intern(struct strtab *st, const char *s)
{
	size_t n = strlen(s) + 1, off;
	u64 hash = hashidx__hash_str(s, 0);
	s64 found = hashidx__find(&st->idx, hash, s, str_at, st);
	int err;

	if (found >= 0)
		return found;
	if (st->len + n > UINT32_MAX - 1)
		return -E2BIG;
	if (array__reserve((void **)&st->buf, &st->cap, st->len + n, 1))
		return -ENOMEM;
	off = st->len;
	err = hashidx__insert(&st->idx, hash, off);
	if (err)
		return err;
	memcpy(st->buf + off, s, n);
	st->len += n;
	return off;
}

s64 profile__intern(struct profile *p, const char *s)
{
	return strtab__intern(&p->strs, s);
}

/* every reference into the string table, handed to fn; stops at fn's first error */
static int for_each_str_ref(struct profile *p, int (*fn)(u32 *ref, void *ctx), void *ctx)
{
	int err = 0;

#define REFS(arr, n, field)							\
	for (size_t i = 0; !err && i < p->n; i++)				\
		err = fn(&p->arr[i].field, ctx)
	REFS(mappings, nr_mappings, path);
	REFS(comms, nr_comms, comm);
	REFS(ksyms, nr_ksyms, name);
	REFS(cgroups, nr_cgroups, path);
	REFS(jitsyms, nr_jitsyms, name);
	REFS(pyframes, nr_pyframes, name);
	REFS(pyframes, nr_pyframes, file);
	REFS(thread_comms, nr_thread_comms, comm);
#undef REFS
	return err;
}

struct compaction {
	const struct profile *p;
	struct strtab to;
};

static int intern_ref(u32 *ref, void *ctx)
{
	struct compaction *c = ctx;
	s64 off = strtab__intern(&c->to, profile__str(c->p, *ref));

	return off < 0 ? (int)off : 0;
}

static int move_ref(u32 *ref, void *ctx)
{
	struct compaction *c = ctx;
	const char *s = profile__str(c->p, *ref);

	*ref = hashidx__find(&c->to.idx, hashidx__hash_str(s, 0), s, str_at, &c->to);
	return 0;
}

int profile__compact_strings(struct profile *p)
{
	struct compaction c = { .p = p };
	int err = strtab__intern(&c.to, "") < 0 ? -ENOMEM : 0;

	/* every string interned first, so that a failure leaves the profile as it was */
	if (!err)
		err = for_each_str_ref(p, intern_ref, &c);
	if (err) {
		free(c.to.buf);
		hashidx__free(&c.to.idx);
		return err;
	}
	for_each_str_ref(p, move_ref, &c);
	free(p->strs.buf);
	hashidx__free(&p->strs.idx);
	p->strs = c.to;
	return 0;
}

const char *profile__str(const struct profile *p, u32 off)
{
	return off < p->strs.len ? p->strs.buf + off : "";
}

#define APPEND(p, arr, nr, cap, item)						\
	({									\
		int __err = array__reserve((void **)&(p)->arr, &(p)->cap,	\
					   (p)->nr + 1, sizeof(*(p)->arr));	\
		if (!__err)							\
			(p)->arr[(p)->nr++] = (item);				\
		__err;								\
	})

int profile__add_sample(struct profile *p, const struct profile_sample *s)
{
	return APPEND(p, samples, nr_samples, cap_samples, *s);
}

static const struct profile_sample_key no_key;

static bool key_set(const struct profile_sample_key *k)
{
	return k && (k->tid || k->cpu || k->time || k->waker);
}

/* keys[0 .. nr) parallel to a table of n records, the last of them keyed k: the keys stay
 * empty until one is set, then are filled with zeros up to it */
static int add_key(struct profile_sample_key **keys, size_t *nr, size_t *cap, size_t n,
		   const struct profile_sample_key *k)
{
	if ((!key_set(k) && !*nr) || !n) {
		*nr = n ? *nr : 0;
		return 0;
	}
	if (array__reserve((void **)keys, cap, n, sizeof(**keys)))
		return -ENOMEM;
	if (*nr < n - 1)
		memset(*keys + *nr, 0, (n - 1 - *nr) * sizeof(**keys));
	(*keys)[n - 1] = k ? *k : no_key;
	*nr = n;
	return 0;
}

int profile__add_sample_keyed(struct profile *p, const struct profile_sample *s,
			      const struct profile_sample_key *k)
{
	int err = profile__add_sample(p, s);

	if (err)
		return err;
	err = add_key(&p->sample_keys, &p->nr_sample_keys, &p->cap_sample_keys, p->nr_samples, k);
	if (err)
		p->nr_samples--;	/* the sample just added: without its key it is not kept */
	return err;
}

int profile__add_stack_sample_keyed(struct profile *p, const struct profile_stack_sample *s,
				    const struct profile_sample_key *k)
{
	int err = profile__add_stack_sample(p, s);

	if (err)
		return err;
	err = add_key(&p->stack_sample_keys, &p->nr_stack_sample_keys, &p->cap_stack_sample_keys,
		      p->nr_stack_samples, k);
	if (err)
		p->nr_stack_samples--;	/* the sample just added */
	return err;
}

/* the wakers parallel to the first n stack samples, the last of them w: filled with none up
 * to it (empty until one is set) */
static int add_waker(struct profile *p, size_t n, const struct profile_waker *w)
{
	if (!w && !p->nr_stack_sample_wakers)
		return 0;
	if (array__reserve((void **)&p->stack_sample_wakers, &p->cap_stack_sample_wakers, n,
			   sizeof(*p->stack_sample_wakers)))
		return -ENOMEM;
	if (p->nr_stack_sample_wakers < n)
		memset(p->stack_sample_wakers + p->nr_stack_sample_wakers, 0,
		       (n - p->nr_stack_sample_wakers) * sizeof(*p->stack_sample_wakers));
	if (w)
		p->stack_sample_wakers[n - 1] = *w;
	p->nr_stack_sample_wakers = n;
	return 0;
}

int profile__add_stack_sample_waker(struct profile *p, const struct profile_stack_sample *s,
				    const struct profile_sample_key *k, const struct profile_waker *w)
{
	int err = profile__add_stack_sample_keyed(p, s, k);

	if (err)
		return err;
	err = add_waker(p, p->nr_stack_samples, w);
	if (err)
		p->nr_stack_samples--;	/* the sample just added (its key is cut at writing) */
	return err;
}

const struct profile_waker *profile__stack_sample_waker(const struct profile *p, size_t i)
{
	const struct profile_waker *w = i < p->nr_stack_sample_wakers ? &p->stack_sample_wakers[i] : NULL;

	return w && (w->pid || w->user || w->kernel) ? w : NULL;
}

const struct profile_sample_key *profile__sample_key(const struct profile *p, size_t i)
{
	return i < p->nr_sample_keys ? &p->sample_keys[i] : &no_key;
}

const struct profile_sample_key *profile__stack_sample_key(const struct profile *p, size_t i)
{
	return i < p->nr_stack_sample_keys ? &p->stack_sample_keys[i] : &no_key;
}

int profile__add_thread_comm(struct profile *p, u32 pid, u32 tid, u64 time_ns, const char *comm)
{
	struct profile_thread_comm c = { .pid = pid, .tid = tid, .time_ns = time_ns };
	s64 off = profile__intern(p, comm);

	if (off < 0)
		return (int)off;
	c.comm = (u32)off;
	return APPEND(p, thread_comms, nr_thread_comms, cap_thread_comms, c);
}

const char *profile__thread_name(const struct profile *p, u32 pid, u32 tid, u64 time_ns)
{
	size_t lo = 0, hi = p->nr_thread_comms;
	const struct profile_thread_comm *best = NULL;

	/* sorted by pid, tid, time: the first record of (pid, tid) */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct profile_thread_comm *c = &p->thread_comms[mid];

		if (c->pid < pid || (c->pid == pid && c->tid < tid))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < p->nr_thread_comms; i++) {
		const struct profile_thread_comm *c = &p->thread_comms[i];

		if (c->pid != pid || c->tid != tid)
			break;
		if (!best || c->time_ns <= time_ns)
			best = c;
		else
			break;
	}
	return best ? profile__str(p, best->comm) : NULL;
}

const char *profile__tid_name(const struct profile *p, u32 tid)
{
	const struct profile_thread_comm *best = NULL;

	for (size_t i = 0; i < p->nr_thread_comms; i++) {
		const struct profile_thread_comm *c = &p->thread_comms[i];

		if (c->tid == tid && (!best || c->time_ns >= best->time_ns))
			best = c;
	}
	if (best)
		return profile__str(p, best->comm);
	/* a thread never renamed: its process's name, from a block it woke */
	for (size_t i = 0; tid && i < p->nr_stack_sample_wakers && i < p->nr_stack_sample_keys; i++) {
		const struct profile_waker *w = profile__stack_sample_waker(p, i);

		if (w && w->pid && p->stack_sample_keys[i].waker == tid)
			return profile__comm(p, w->pid, w->exec_ns);
	}
	return NULL;
}

bool profile__has_key(const struct profile *p, const char *key)
{
	size_t n = strlen(key);

	for (const char *s = p->meta.sample_keys; *s;) {
		const char *e = strchrnul(s, ',');

		if ((size_t)(e - s) == n && !strncmp(s, key, n))
			return true;
		s = *e ? e + 1 : e;
	}
	return false;
}

int profile__add_mapping(struct profile *p, u32 pid, u64 time_ns, u64 start, u64 len,
			 u64 pgoff, const char *path, const u8 *build_id, u8 build_id_size)
{
	struct profile_mapping m = {
		.pid = pid, .time_ns = time_ns, .start = start, .len = len, .pgoff = pgoff,
	};
	s64 off = profile__intern(p, path);

	if (off < 0)
		return off;
	m.path = off;
	if (build_id_size > BUILD_ID_MAX)
		build_id_size = BUILD_ID_MAX;
	if (build_id && build_id_size) {
		memcpy(m.build_id, build_id, build_id_size);
		m.build_id_size = build_id_size;
	}
	return APPEND(p, mappings, nr_mappings, cap_mappings, m);
}

int profile__add_comm(struct profile *p, u32 pid, u64 time_ns, const char *comm, bool exec)
{
	struct profile_comm c = { .pid = pid, .time_ns = time_ns, .exec = exec };
	s64 off = profile__intern(p, comm);

	if (off < 0)
		return off;
	c.comm = off;
	return APPEND(p, comms, nr_comms, cap_comms, c);
}

int profile__add_fork(struct profile *p, u32 pid, u32 ppid, u64 time_ns)
{
	struct profile_fork f = { .pid = pid, .ppid = ppid, .time_ns = time_ns };

	return APPEND(p, forks, nr_forks, cap_forks, f);
}

int profile__add_ksym(struct profile *p, u64 addr, const char *name)
{
	struct profile_ksym k = { .addr = addr };
	s64 off = profile__intern(p, name);

	if (off < 0)
		return off;
	k.name = off;
	return APPEND(p, ksyms, nr_ksyms, cap_ksyms, k);
}

int profile__add_cgroup(struct profile *p, u64 id, const char *path)
{
	struct profile_cgroup c = { .id = id };
	s64 off = profile__intern(p, path);

	if (off < 0)
		return off;
	c.path = off;
	return APPEND(p, cgroups, nr_cgroups, cap_cgroups, c);
}

int profile__add_lbr(struct profile *p, const struct profile_lbr *l)
{
	return APPEND(p, lbr, nr_lbr, cap_lbr, *l);
}

s64 profile__add_stack(struct profile *p, const u64 *ips, u32 nr, u16 end, u16 nr_fp)
{
	if (p->nr_frames + nr >= UINT32_MAX || p->nr_stacks >= UINT32_MAX - 1)
		return -ENOMEM;
	if (array__reserve((void **)&p->frames, &p->cap_frames, p->nr_frames + nr, sizeof(*ips)) ||
	    array__reserve((void **)&p->stacks, &p->cap_stacks, p->nr_stacks + 1, sizeof(*p->stacks)))
		return -ENOMEM;
	if (nr)		/* a lost stack has no frames, and may have no array */
		memcpy(p->frames + p->nr_frames, ips, nr * sizeof(*ips));
	p->stacks[p->nr_stacks] = (struct profile_stack){ .first = p->nr_frames, .nr = nr,
							   .end = end, .nr_fp = nr_fp };
	p->nr_frames += nr;
	return p->nr_stacks++;
}

int profile__add_stack_sample(struct profile *p, const struct profile_stack_sample *s)
{
	if (array__reserve((void **)&p->stack_samples, &p->cap_stack_samples,
			   p->nr_stack_samples + 1, sizeof(*s)))
		return -ENOMEM;
	p->stack_samples[p->nr_stack_samples++] = *s;
	return 0;
}

const struct profile_stack *profile__stack(const struct profile *p, u32 ref)
{
	return ref && ref <= p->nr_stacks ? &p->stacks[ref - 1] : NULL;
}

int profile__add_nspid(struct profile *p, u32 pid, u32 nspid)
{
	struct profile_nspid n = { pid, nspid };

	if (profile__nspid(p, pid))
		return 0;
	return APPEND(p, nspids, nr_nspids, cap_nspids, n);
}

int profile__add_jitsym(struct profile *p, u32 pid, u64 start, u32 size, const char *name,
			u32 line, u64 time_ns)
{
	s64 off = profile__intern(p, name);
	struct profile_jitsym j = { .pid = pid, .start = start, .size = size, .line = line,
				    .time_ns = time_ns };

	if (off < 0)
		return off;
	j.name = off;
	return APPEND(p, jitsyms, nr_jitsyms, cap_jitsyms, j);
}

int profile__add_pyframe(struct profile *p, u32 pid, u64 frame, const char *name, const char *file,
			 u32 line)
{
	s64 n = profile__intern(p, name), f = profile__intern(p, file);
	struct profile_pyframe y = { .pid = pid, .line = line, .frame = HSBPF_PY_KEY(frame) };

	if (n < 0 || f < 0)
		return -ENOMEM;
	y.name = n;
	y.file = f;
	return APPEND(p, pyframes, nr_pyframes, cap_pyframes, y);
}

const struct profile_pyframe *profile__find_pyframe(const struct profile *p, u32 pid, u64 frame)
{
	size_t lo = 0, hi = p->nr_pyframes;

	frame = HSBPF_PY_KEY(frame);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct profile_pyframe *y = &p->pyframes[mid];

		if (y->pid < pid || (y->pid == pid && y->frame < frame))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < p->nr_pyframes && p->pyframes[lo].pid == pid && p->pyframes[lo].frame == frame)
		return &p->pyframes[lo];
	return NULL;
}

void profile__drop_jitsyms(struct profile *p, u32 pid)
{
	size_t o = 0;

	for (size_t i = 0; i < p->nr_jitsyms; i++)
		if (p->jitsyms[i].pid != pid)
			p->jitsyms[o++] = p->jitsyms[i];
	p->nr_jitsyms = o;
}

/* how far back from the last start at or before ip an enclosing symbol is looked for */
#define JIT_OVERLAP_STEPS	64

const struct profile_jitsym *profile__find_jitsym(const struct profile *p, u32 pid, u64 ip)
{
	size_t lo = 0, hi = p->nr_jitsyms;
	const struct profile_jitsym *best = NULL;

	/* the first entry after (pid, ip) */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct profile_jitsym *j = &p->jitsyms[mid];

		if (j->pid < pid || (j->pid == pid && j->start <= ip))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t steps = 0; lo > 0 && steps < JIT_OVERLAP_STEPS; lo--, steps++) {
		const struct profile_jitsym *j = &p->jitsyms[lo - 1];

		if (j->pid != pid)
			break;
		if (ip - j->start < j->size && (!best || j->line > best->line))
			best = j;
	}
	return best;
}

u32 profile__nspid(const struct profile *p, u32 pid)
{
	for (size_t i = 0; i < p->nr_nspids; i++)
		if (p->nspids[i].pid == pid)
			return p->nspids[i].nspid;
	return 0;
}

/* ---- process images ---- */

#define MAX_FORK_DEPTH 32

/* the index of pid's first element in a table sorted by (pid, time) */
static size_t first_of_pid(const void *table, size_t nr, size_t size, u32 pid)
{
	return array__count_lt_u32(table, nr, size, 0, pid);
}

_Static_assert(offsetof(struct profile_mapping, pid) == 0 && offsetof(struct profile_comm, pid) == 0 &&
	       offsetof(struct profile_fork, pid) == 0, "first_of_pid: pid first");

/* the start of the image pid had at time t: its last exec at or before t, 0 if none */
static u64 image_start(const struct profile *p, u32 pid, u64 t, bool *execd)
{
	size_t i = first_of_pid(p->comms, p->nr_comms, sizeof(*p->comms), pid);
	u64 start = 0;

	*execd = false;
	for (; i < p->nr_comms && p->comms[i].pid == pid && p->comms[i].time_ns <= t; i++) {
		if (p->comms[i].exec) {
			start = p->comms[i].time_ns;
			*execd = true;
		}
	}
	return start;
}

/* The last moment of the image that the BPF side tagged with exec_ns. A tag taken at the
 * exec's rename (meta exec_tags "rename") comes a moment before the COMM record that starts
 * its image: the first exec record at most EXEC_TAG_SLACK after the tag is the image's own
 * start, not its end. Other tags were taken at or after their image's record. */
#define EXEC_TAG_SLACK	100000000ull	/* 100 ms: microseconds apart, unless the VM stalls */
static u64 image_end(const struct profile *p, u32 pid, u64 exec_ns)
{
	size_t i = first_of_pid(p->comms, p->nr_comms, sizeof(*p->comms), pid);
	bool before = exec_ns && !strcmp(p->meta.exec_tags, "rename");

	for (; i < p->nr_comms && p->comms[i].pid == pid; i++) {
		const struct profile_comm *c = &p->comms[i];

		if (!c->exec || c->time_ns < exec_ns || (c->time_ns == exec_ns && !before))
			continue;
		if (before && c->time_ns - exec_ns <= EXEC_TAG_SLACK) {
			before = false;	/* the tag's own image starts here */
			continue;
		}
		return c->time_ns - 1;
	}
	return UINT64_MAX;
}

static const struct profile_fork *find_fork(const struct profile *p, u32 pid, u64 t)
{
	size_t i = first_of_pid(p->forks, p->nr_forks, sizeof(*p->forks), pid);
	const struct profile_fork *f = NULL;

	for (; i < p->nr_forks && p->forks[i].pid == pid && p->forks[i].time_ns <= t; i++)
		f = &p->forks[i];
	return f;
}

static const struct profile_mapping *lookup_at(const struct profile *p, u32 pid, u64 t,
					       u64 ip, int depth)
{
	size_t lo = first_of_pid(p->mappings, p->nr_mappings, sizeof(*p->mappings), pid), hi = lo;
	const struct profile_fork *f;
	bool execd;
	u64 start = image_start(p, pid, t, &execd);

	while (hi < p->nr_mappings && p->mappings[hi].pid == pid)
		hi++;
	/* latest first: a later mmap over the same range replaces the earlier one */
	for (size_t i = hi; i-- > lo;) {
		const struct profile_mapping *m = &p->mappings[i];

		if (m->time_ns > t || m->time_ns < start)
			continue;
		if (ip >= m->start && ip - m->start < m->len)
			return m;
	}
	if (execd || depth >= MAX_FORK_DEPTH)
		return NULL;
	f = find_fork(p, pid, t);
	if (!f)
		return NULL;
	return lookup_at(p, f->ppid, f->time_ns, ip, depth + 1);
}

/* A sample with a mapping generation (map_ns) was taken after the MMAP2 record of its
 * image's last executable file mmap and before the next: the mapping in force then is the
 * newest at or before map_ns. Without one, the image's latest (no such mmap while recording,
 * or a profile older than 1.6). */
/* the object of a frame stored as (object, offset): objects are sorted by start, one per index */
static const struct profile_mapping *find_object(const struct profile *p, u64 ip)
{
	size_t i = first_of_pid(p->mappings, p->nr_mappings, sizeof(*p->mappings), PROFILE_OBJ_PID) +
		   PROFILE_OBJ_INDEX(ip);
	const struct profile_mapping *m = i < p->nr_mappings ? &p->mappings[i] : NULL;

	return m && m->pid == PROFILE_OBJ_PID && ip - m->start < m->len ? m : NULL;
}

const struct profile_mapping *profile__find_mapping(const struct profile *p, u32 pid, u64 exec_ns,
						 u64 map_ns, u64 ip)
{
	u64 end;

	if (PROFILE_IS_OBJ_FRAME(ip))
		return find_object(p, ip);
	end = image_end(p, pid, exec_ns);

	return lookup_at(p, pid, map_ns && map_ns < end ? map_ns : end, ip, 0);
}

const struct profile_mapping *profile__mapping_at(const struct profile *p, u32 pid, u64 t, u64 ip)
{
	return lookup_at(p, pid, t, ip, 0);
}

static const char *comm_at(const struct profile *p, u32 pid, u64 t, int depth)
{
	size_t i = first_of_pid(p->comms, p->nr_comms, sizeof(*p->comms), pid);
	const char *comm = NULL;
	const struct profile_fork *f;

	for (; i < p->nr_comms && p->comms[i].pid == pid && p->comms[i].time_ns <= t; i++)
		comm = profile__str(p, p->comms[i].comm);
	if (comm || depth >= MAX_FORK_DEPTH)
		return comm;
	f = find_fork(p, pid, t);
	return f ? comm_at(p, f->ppid, f->time_ns, depth + 1) : NULL;
}

const char *profile__comm(const struct profile *p, u32 pid, u64 exec_ns)
{
	const char *c;

	if (pid == 0)
		return "swapper";
	c = comm_at(p, pid, image_end(p, pid, exec_ns), 0);
	return c ? c : "[unknown]";
}

static int cmp_ksym(const void *a, const void *b)
{
	const struct profile_ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* at one address a bound ("", offset 0) goes before a name: lookups take the last */
	return (x->name != 0) - (y->name != 0);
}

static int cmp_mapping(const void *a, const void *b)
{
	const struct profile_mapping *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->pid == PROFILE_OBJ_PID)	/* objects: by index (find_object) */
		return x->start < y->start ? -1 : x->start > y->start;
	return x->time_ns < y->time_ns ? -1 : x->time_ns > y->time_ns;
}

static int cmp_comm(const void *a, const void *b)
{
	const struct profile_comm *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->time_ns < y->time_ns ? -1 : x->time_ns > y->time_ns;
}

static int cmp_thread_comm(const void *a, const void *b)
{
	const struct profile_thread_comm *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->time_ns < y->time_ns ? -1 : x->time_ns > y->time_ns;
}

static int cmp_fork(const void *a, const void *b)
{
	const struct profile_fork *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->time_ns < y->time_ns ? -1 : x->time_ns > y->time_ns;
}

/* qsort's order (a stable sort's), in linear time when a sorted table only had some rows
 * appended since (a live session's, at each new process or BPF program): the sorted run at
 * its start is kept, the rest sorted and merged into it from the end. qsort wants a
 * non-NULL base even for zero elements */
static void sort(void *base, size_t nr, size_t size, int (*cmp)(const void *, const void *))
{
	char *b = base, *tail;
	size_t m = 1, i, j;

	if (nr < 2)
		return;
	while (m < nr && cmp(b + (m - 1) * size, b + m * size) <= 0)
		m++;
	if (m == nr)
		return;
	tail = m >= nr / 2 ? malloc((nr - m) * size) : NULL;
	if (!tail) {	/* mostly out of order, or no memory */
		qsort(base, nr, size, cmp);
		return;
	}
	memcpy(tail, b + m * size, (nr - m) * size);
	qsort(tail, nr - m, size, cmp);
	/* the largest last; on a tie the appended row goes after, as a stable sort leaves it */
	for (i = m, j = nr - m; j > 0; ) {
		char *out = b + (i + j - 1) * size;

		if (i > 0 && cmp(b + (i - 1) * size, tail + (j - 1) * size) > 0) {
			memmove(out, b + (i - 1) * size, size);
			i--;
		} else {
			memcpy(out, tail + (j - 1) * size, size);
			j--;
		}
	}
	free(tail);
}

static int cmp_jitsym(const void *a, const void *b)
{
	const struct profile_jitsym *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

void profile__sort_jitsyms(struct profile *p)
{
	sort(p->jitsyms, p->nr_jitsyms, sizeof(*p->jitsyms), cmp_jitsym);
}

static int cmp_pyframe(const void *a, const void *b)
{
	const struct profile_pyframe *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->frame < y->frame ? -1 : x->frame > y->frame;
}

void profile__sort_pyframes(struct profile *p)
{
	sort(p->pyframes, p->nr_pyframes, sizeof(*p->pyframes), cmp_pyframe);
}

void profile__finish(struct profile *p)
{
	sort(p->ksyms, p->nr_ksyms, sizeof(*p->ksyms), cmp_ksym);
	profile__finish_processes(p);
}

void profile__finish_processes(struct profile *p)
{
	profile__sort_jitsyms(p);
	profile__sort_pyframes(p);
	sort(p->mappings, p->nr_mappings, sizeof(*p->mappings), cmp_mapping);
	sort(p->comms, p->nr_comms, sizeof(*p->comms), cmp_comm);
	sort(p->forks, p->nr_forks, sizeof(*p->forks), cmp_fork);
	sort(p->thread_comms, p->nr_thread_comms, sizeof(*p->thread_comms), cmp_thread_comm);
}

static int cmp_u32(const void *a, const void *b)
{
	u32 x = *(const u32 *)a, y = *(const u32 *)b;

	return x < y ? -1 : x > y;
}

static bool in_set(const u32 *set, size_t n, u32 pid)
{
	return bsearch(&pid, set, n, sizeof(*set), cmp_u32) != NULL;
}

/* sort and deduplicate */
static size_t make_set(u32 *v, size_t n)
{
	size_t o = 0;

	qsort(v, n, sizeof(*v), cmp_u32);
	for (size_t i = 0; i < n; i++)
		if (!o || v[o - 1] != v[i])
			v[o++] = v[i];
	return o;
}

int profile__keep_pids(struct profile *p, const u32 *pids, size_t nr_pids)
{
	size_t cap = 0, nr = 0;
	u32 *keep = NULL;
	bool grew = true;
	int err = -ENOMEM;

	if (array__reserve((void **)&keep, &cap, nr_pids + p->nr_samples + 2, sizeof(*keep)))
		return err;
	for (size_t i = 0; i < nr_pids; i++)
		keep[nr++] = pids[i];
	keep[nr++] = PROFILE_OBJ_PID;	/* the objects of shared stacks */
	for (size_t i = 0; i < p->nr_samples; i++)
		keep[nr++] = p->samples[i].pid;
	nr = make_set(keep, nr);
	/* a forked child that never exec'd runs in its parent's image: keep the ancestors */
	while (grew) {
		size_t before = nr;

		for (size_t i = 0; i < p->nr_forks; i++) {
			if (!in_set(keep, before, p->forks[i].pid) || in_set(keep, before, p->forks[i].ppid))
				continue;
			if (array__reserve((void **)&keep, &cap, nr + 1, sizeof(*keep)))
				goto out;
			keep[nr++] = p->forks[i].ppid;
		}
		grew = nr > before;
		nr = make_set(keep, nr);
	}
#define KEEP(arr, n)								\
	do {									\
		size_t o = 0;							\
		for (size_t i = 0; i < p->n; i++)				\
			if (in_set(keep, nr, p->arr[i].pid))			\
				p->arr[o++] = p->arr[i];			\
		p->n = o;							\
	} while (0)
	KEEP(mappings, nr_mappings);
	KEEP(comms, nr_comms);
	KEEP(forks, nr_forks);
	KEEP(thread_comms, nr_thread_comms);
	KEEP(jitsyms, nr_jitsyms);
	KEEP(pyframes, nr_pyframes);
#undef KEEP
	/* sorted as readers want them: a reader that re-sorts when a table's size changes
	 * (top) would otherwise miss a tail added before a prune of the same size */
	profile__finish(p);
	err = 0;
out:
	free(keep);
	return err;
}

u64 profile__total_samples(const struct profile *p)
{
	u64 n = 0;

	for (size_t i = 0; i < p->nr_samples; i++)
		n += p->samples[i].count;
	return n;
}

u64 profile__total_weight(const struct profile *p)
{
	u64 n = 0;

	for (size_t i = 0; i < p->nr_samples; i++)
		n += p->samples[i].weight;
	return n;
}

/* ---- key=value sections ---- */

#define M_STR(f) { #f, KV_STR, offsetof(struct profile_meta, f), sizeof(((struct profile_meta *)0)->f) }
#define M_U64(f) { #f, KV_U64, offsetof(struct profile_meta, f), 8 }
#define M_U32(f) { #f, KV_U32, offsetof(struct profile_meta, f), 4 }
static const struct kv_field meta_fields[] = {
	M_STR(version), M_STR(event), M_U32(event_type), M_U64(event_config), M_U32(precise),
	M_U64(period), M_U64(freq), M_STR(period_mode), M_STR(unit), M_STR(target),
	M_STR(host), M_STR(kernel), M_U64(start_realtime_ns), M_U64(start_mono_ns),
	M_U64(duration_ns), M_U32(nr_cpus), M_STR(call_graph), M_U32(max_frames),
	M_STR(sample_keys), M_U64(time_bucket_ns), M_U64(time_origin_ns),
	M_STR(exec_tags), M_STR(offcpu), M_U64(min_block_ns), M_U64(max_block_ns),
	M_U64(alloc_period),
	{ "offcpu_sample", KV_DBL, offsetof(struct profile_meta, offcpu_sample), 8 },
};

#define S_U64(f) { #f, KV_U64, offsetof(struct profile_stats, f), 8 }
static const struct kv_field stats_fields[] = {
	S_U64(samples), S_U64(filtered), S_U64(dropped_full), S_U64(rearm_lost),
	S_U64(exec_full), S_U64(pids_full), S_U64(sideband_lost), S_U64(rearms),
	S_U64(intervals), S_U64(interval_sum), S_U64(interval_min), S_U64(interval_max),
	{ "interval_sumsq", KV_DBL, offsetof(struct profile_stats, interval_sumsq), 8 },
	S_U64(interval_repeats), S_U64(interval_outside), S_U64(bpf_run_ns), S_U64(bpf_run_cnt),
	S_U64(rearm_late), S_U64(rearm_failed), S_U64(intervals_armed), S_U64(interval_err_sum),
	S_U64(interval_err_max), S_U64(rearm_cpu_ns),
	S_U64(stack_samples), S_U64(stack_frames), S_U64(stack_fp_frames), S_U64(stacks_full),
	S_U64(stack_keys_full), S_U64(kernel_stack_err), S_U64(stack_ns), S_U64(unwind_objects),
	S_U64(unwind_objects_no_cfi), S_U64(unwind_objects_failed), S_U64(unwind_objects_full),
	S_U64(unwind_rows), S_U64(unwind_table_bytes), S_U64(unwind_build_ns), S_U64(unwind_map_full),
	S_U64(jit_maps), S_U64(jit_syms), S_U64(jit_malformed),
	S_U64(stack_late), S_U64(stack_late_full), S_U64(stack_late_unwound), S_U64(stack_late_dropped),
	S_U64(jit_ignored), S_U64(jit_capped),
	S_U64(offcpu_switches), S_U64(offcpu_blocks), S_U64(offcpu_short), S_U64(offcpu_long),
	S_U64(offcpu_no_storage), S_U64(offcpu_full), S_U64(offcpu_full_ns), S_U64(offcpu_open),
	S_U64(offcpu_underway), S_U64(offcpu_underway_ns), S_U64(offcpu_asleep),
	S_U64(offcpu_wakeups), S_U64(offcpu_waker_lost), S_U64(offcpu_unwoken),
	S_U64(offcpu_unsampled), S_U64(offcpu_underway_early), S_U64(offcpu_wakers_read),
	S_U64(offcpu_wakers_gone), S_U64(offcpu_wakers_unannounced),
	S_U64(mem_calls), S_U64(mem_bytes), S_U64(mem_sampled), S_U64(mem_freed), S_U64(mem_failed),
	S_U64(mem_live_full), S_U64(mem_full), S_U64(mem_no_storage), S_U64(mem_inuse_end),
	S_U64(mem_inuse_exited),
	S_U64(py_samples), S_U64(py_frames), S_U64(py_cut), S_U64(py_bad), S_U64(py_no_thread),
	S_U64(py_codes_lost), S_U64(py_unnamed), S_U64(py_reused),
	S_U64(py_gens),
};

static const struct file_format profile_format = {
	PROFILE_MAGIC, "hsbpf profile", PROFILE_VERSION_MAJOR, PROFILE_VERSION_MINOR,
	PROFILE_MAJOR_PACKED,
};

/* the columns each section's records are packed in (2.0): a field whose records are sorted
 * or grouped by it (pids, exec times, the first frame of each stack) as differences */
#define D(n) ((n) | SECTION_PACK_DELTA)
static const u8 cols_samples[] = { D(4), 4, 8, 8, D(8), 8, 8, 0 };
static const u8 cols_stack_samples[] = { D(4), 4, 8, D(8), 4, 4, 8, 8, 0 };
static const u8 cols_comms[] = { D(4), 4, D(8), 4, 4, 0 };
static const u8 cols_forks[] = { D(4), D(4), D(8), 0 };
static const u8 cols_stacks[] = { D(4), 4, 2, 2, 4, 0 };
static const u8 cols_keys[] = { 4, 2, 2, 4, 4, 0 };
static const u8 cols_wakers[] = { 4, 4, 8, 8, 4, 4, 0 };
#undef D
_Static_assert(sizeof(struct sample_rec) == 48 && sizeof(struct stack_sample_rec) == 48 &&
	       sizeof(struct profile_comm) == 24 && sizeof(struct profile_fork) == 16 &&
	       sizeof(struct profile_stack) == 16 && sizeof(struct profile_sample_key) == 16 &&
	       sizeof(struct profile_waker) == 32, "the packed columns follow the records");

int profile__write(struct profile *p, const char *path)
{
	struct outfile o;
	int err = outfile__open(&o, path, 0);

	return err ? err : profile__write_out(p, &o);
}

/* the file's records of the samples, and their map_ns when any is set (else NULL) */
static int sample_records(const struct profile *p, struct sample_rec **srec, u64 **smaps,
			  struct stack_sample_rec **ssrec, u64 **ssmaps)
{
	bool any = false, any_stack = false;

	*srec = calloc(p->nr_samples + 1, sizeof(**srec));
	*ssrec = calloc(p->nr_stack_samples + 1, sizeof(**ssrec));
	*smaps = calloc(p->nr_samples + 1, sizeof(**smaps));
	*ssmaps = calloc(p->nr_stack_samples + 1, sizeof(**ssmaps));
	if (!*srec || !*ssrec || !*smaps || !*ssmaps)
		return -ENOMEM;
	for (size_t i = 0; i < p->nr_samples; i++) {
		const struct profile_sample *s = &p->samples[i];

		(*srec)[i] = (struct sample_rec){ s->pid, s->flags, s->ip, s->cgroup_id, s->exec_ns,
						  s->count, s->weight };
		(*smaps)[i] = s->map_ns;
		any |= s->map_ns != 0;
	}
	for (size_t i = 0; i < p->nr_stack_samples; i++) {
		const struct profile_stack_sample *s = &p->stack_samples[i];

		(*ssrec)[i] = (struct stack_sample_rec){ s->pid, s->flags, s->cgroup_id, s->exec_ns,
							 s->user, s->kernel, s->count, s->weight };
		(*ssmaps)[i] = s->map_ns;
		any_stack |= s->map_ns != 0;
	}
	if (!any) {
		free(*smaps);
		*smaps = NULL;
	}
	if (!any_stack) {
		free(*ssmaps);
		*ssmaps = NULL;
	}
	return 0;
}

int profile__write_out(struct profile *p, struct outfile *o)
{
	struct file_section secs[24];
	char *meta = NULL, *stats = NULL;
	struct sample_rec *srec = NULL;
	struct stack_sample_rec *ssrec = NULL;
	u64 *smaps = NULL, *ssmaps = NULL;
	size_t meta_len = 0, stats_len = 0, nsec = 0;
	int err;

	profile__finish(p);
	err = sample_records(p, &srec, &smaps, &ssrec, &ssmaps);
	if (err) {
		error("cannot format profile: %s", strerror(-err));
		outfile__discard(o);
		goto cleanup;
	}
	meta = kv__format(&p->meta, meta_fields, ARRAY_SIZE(meta_fields), &meta_len);
	stats = kv__format(&p->stats, stats_fields, ARRAY_SIZE(stats_fields), &stats_len);
	if (!meta || !stats) {
		err = -ENOMEM;
		error("cannot format profile: %s", strerror(-err));
		outfile__discard(o);
		goto cleanup;
	}
	secs[nsec++] = (struct file_section){ SEC_META, meta, meta_len };
	secs[nsec++] = (struct file_section){ SEC_STATS, stats, stats_len };
	secs[nsec++] = (struct file_section){ SEC_STRINGS, p->strs.buf, p->strs.len };
	secs[nsec++] = (struct file_section){ SEC_SAMPLES, srec, p->nr_samples * sizeof(*srec), cols_samples };
	secs[nsec++] = (struct file_section){ SEC_MAPPINGS, p->mappings, p->nr_mappings * sizeof(*p->mappings) };
	secs[nsec++] = (struct file_section){ SEC_COMMS, p->comms, p->nr_comms * sizeof(*p->comms), cols_comms };
	secs[nsec++] = (struct file_section){ SEC_FORKS, p->forks, p->nr_forks * sizeof(*p->forks), cols_forks };
	secs[nsec++] = (struct file_section){ SEC_KSYMS, p->ksyms, p->nr_ksyms * sizeof(*p->ksyms) };
	secs[nsec++] = (struct file_section){ SEC_CGROUPS, p->cgroups, p->nr_cgroups * sizeof(*p->cgroups) };
	secs[nsec++] = (struct file_section){ SEC_LBR, p->lbr, p->nr_lbr * sizeof(*p->lbr) };
	secs[nsec++] = (struct file_section){ SEC_NSPIDS, p->nspids, p->nr_nspids * sizeof(*p->nspids) };
	if (p->nr_stack_samples) {
		secs[nsec++] = (struct file_section){ SEC_STACKS, p->stacks, p->nr_stacks * sizeof(*p->stacks), cols_stacks };
		secs[nsec++] = (struct file_section){ SEC_FRAMES, p->frames, p->nr_frames * sizeof(*p->frames) };
		secs[nsec++] = (struct file_section){ SEC_STACK_SAMPLES, ssrec,
							   p->nr_stack_samples * sizeof(*ssrec),
							   cols_stack_samples };
	}
	/* 1.4: older readers skip these and see every sample, without its thread, CPU, time */
	if (p->nr_thread_comms)
		secs[nsec++] = (struct file_section){ SEC_THREAD_COMMS, p->thread_comms,
						       p->nr_thread_comms * sizeof(*p->thread_comms) };
	/* parallel to their tables: filled to their length */
	err = -ENOMEM;
	if (p->nr_sample_keys) {
		if (add_key(&p->sample_keys, &p->nr_sample_keys, &p->cap_sample_keys, p->nr_samples,
			    profile__sample_key(p, p->nr_samples - 1)))
			goto fail;
		secs[nsec++] = (struct file_section){ SEC_SAMPLE_KEYS, p->sample_keys,
						       p->nr_sample_keys * sizeof(*p->sample_keys), cols_keys };
	}
	if (p->nr_stack_sample_keys) {
		if (add_key(&p->stack_sample_keys, &p->nr_stack_sample_keys, &p->cap_stack_sample_keys,
			    p->nr_stack_samples, profile__stack_sample_key(p, p->nr_stack_samples - 1)))
			goto fail;
		secs[nsec++] = (struct file_section){ SEC_STACK_SAMPLE_KEYS, p->stack_sample_keys,
						       p->nr_stack_sample_keys * sizeof(*p->stack_sample_keys),
						       cols_keys };
	}
	if (p->nr_stack_sample_wakers && p->nr_stack_samples) {
		if (add_waker(p, p->nr_stack_samples, NULL))
			goto fail;
		secs[nsec++] = (struct file_section){ SEC_STACK_SAMPLE_WAKERS, p->stack_sample_wakers,
						       p->nr_stack_samples * sizeof(*p->stack_sample_wakers),
						       cols_wakers };
	}
	if (p->nr_jitsyms)
		secs[nsec++] = (struct file_section){ SEC_JITSYMS, p->jitsyms,
						      p->nr_jitsyms * sizeof(*p->jitsyms) };
	if (p->nr_pyframes)
		secs[nsec++] = (struct file_section){ SEC_PYFRAMES, p->pyframes,
						      p->nr_pyframes * sizeof(*p->pyframes) };
	/* 1.6: older readers skip these and name every sample by its image's latest mapping */
	if (smaps)
		secs[nsec++] = (struct file_section){ SEC_SAMPLE_MAPS, smaps, p->nr_samples * sizeof(u64) };
	if (ssmaps && p->nr_stack_samples)
		secs[nsec++] = (struct file_section){ SEC_STACK_SAMPLE_MAPS, ssmaps,
						      p->nr_stack_samples * sizeof(u64) };
	err = file_format__write_out(o, &profile_format, secs, nsec);
	goto cleanup;
fail:
	error("cannot format profile: %s", strerror(-err));
	outfile__discard(o);
cleanup:
	free(meta);
	free(stats);
	free(srec);
	free(ssrec);
	free(smaps);
	free(ssmaps);
	return err;
}

/* ---- reading ---- */

#define bad file_format__bad

static bool str_ok(const struct profile *p, u32 off)
{
	return off < p->strs.len;
}

static int validate_refs(struct profile *p, const char *name)
{
	if (p->strs.len && p->strs.buf[p->strs.len - 1] != 0)
		return bad(name, "string table is not terminated");
	for (size_t i = 0; i < p->nr_mappings; i++)
		if (!str_ok(p, p->mappings[i].path) || p->mappings[i].build_id_size > BUILD_ID_MAX)
			return bad(name, "mapping refers outside the string table");
	for (size_t i = 0; i < p->nr_comms; i++)
		if (!str_ok(p, p->comms[i].comm))
			return bad(name, "comm refers outside the string table");
	for (size_t i = 0; i < p->nr_ksyms; i++)
		if (!str_ok(p, p->ksyms[i].name))
			return bad(name, "kernel symbol refers outside the string table");
	for (size_t i = 0; i < p->nr_cgroups; i++)
		if (!str_ok(p, p->cgroups[i].path))
			return bad(name, "cgroup refers outside the string table");
	for (size_t i = 0; i < p->nr_jitsyms; i++)
		if (!str_ok(p, p->jitsyms[i].name))
			return bad(name, "JIT symbol refers outside the string table");
	for (size_t i = 0; i < p->nr_pyframes; i++)
		if (!str_ok(p, p->pyframes[i].name) || !str_ok(p, p->pyframes[i].file))
			return bad(name, "Python frame refers outside the string table");
	for (size_t i = 0; i < p->nr_stacks; i++)
		if (p->stacks[i].first > p->nr_frames || p->stacks[i].nr > p->nr_frames - p->stacks[i].first)
			return bad(name, "stack refers outside the frame table");
	for (size_t i = 0; i < p->nr_stack_samples; i++)
		if (p->stack_samples[i].user > p->nr_stacks || p->stack_samples[i].kernel > p->nr_stacks)
			return bad(name, "stack sample refers outside the stack table");
	for (size_t i = 0; i < p->nr_thread_comms; i++)
		if (!str_ok(p, p->thread_comms[i].comm))
			return bad(name, "thread name refers outside the string table");
	if (p->nr_sample_keys && p->nr_sample_keys != p->nr_samples)
		return bad(name, "sample keys do not match the samples");
	if (p->nr_stack_sample_keys && p->nr_stack_sample_keys != p->nr_stack_samples)
		return bad(name, "stack sample keys do not match the stack samples");
	if (p->nr_stack_sample_wakers && p->nr_stack_sample_wakers != p->nr_stack_samples)
		return bad(name, "stack sample wakers do not match the stack samples");
	for (size_t i = 0; i < p->nr_stack_sample_wakers; i++)
		if (p->stack_sample_wakers[i].user > p->nr_stacks || p->stack_sample_wakers[i].kernel > p->nr_stacks)
			return bad(name, "waker refers outside the stack table");
	return 0;
}

/* every total a reader forms (samples, weights, branch records) must fit: a wrapped sum
 * would print as a share of 0, or as nonsense */
static int check_sums(const struct profile *p, const char *name)
{
	u64 n = 0, w = 0, l = 0;

	for (size_t i = 0; i < p->nr_samples; i++)
		if (__builtin_add_overflow(n, p->samples[i].count, &n) ||
		    __builtin_add_overflow(w, p->samples[i].weight, &w))
			return bad(name, "sample counts overflow");
	for (size_t i = 0; i < p->nr_lbr; i++)
		if (__builtin_add_overflow(l, p->lbr[i].count, &l))
			return bad(name, "branch record counts overflow");
	n = w = 0;
	for (size_t i = 0; i < p->nr_stack_samples; i++)
		if (__builtin_add_overflow(n, p->stack_samples[i].count, &n) ||
		    __builtin_add_overflow(w, p->stack_samples[i].weight, &w))
			return bad(name, "stack sample counts overflow");
	return 0;
}

struct parse_ctx {
	struct profile *p;
	const char *name;
	struct file_version ver;	/* the file's */
	u64 *maps, *stack_maps;	/* SAMPLE_MAPS, STACK_SAMPLE_MAPS: set once every section is read */
	size_t nr_maps, nr_stack_maps, cap_maps, cap_stack_maps;
};

/* the file has what 1.minor added: a 1.x file of that minor or later, or any later major */
static bool since(const struct parse_ctx *c, u16 minor)
{
	return c->ver.major > 1 || c->ver.minor >= minor;
}

static int take(void **dst, size_t *nr, size_t *cap, const void *src, size_t size, size_t elem,
		const char *name, const char *what)
{
	int err = file_format__take_array(dst, nr, cap, src, size, elem);

	return err == -EINVAL ? bad(name, what) : err;
}

static int parse_section(void *ctx, u32 type, const void *data, size_t size)
{
	struct parse_ctx *c = ctx;
	struct profile *p = c->p;
	int err = 0;

	switch (type) {
	case SEC_META:
		if (kv__parse(&p->meta, meta_fields, ARRAY_SIZE(meta_fields), data, size,
			      since(c, PROFILE_MINOR_ESCAPES)))
			err = bad(c->name, "bad metadata");
		break;
	case SEC_STATS:
		if (kv__parse(&p->stats, stats_fields, ARRAY_SIZE(stats_fields), data, size,
			      since(c, PROFILE_MINOR_ESCAPES)))
			err = bad(c->name, "bad counters");
		break;
	case SEC_STRINGS:
		if (size >= UINT32_MAX)
			return bad(c->name, "string table too large");
		err = array__reserve((void **)&p->strs.buf, &p->strs.cap, size ? size : 1, 1);
		if (err)
			break;
		memcpy(p->strs.buf, data, size);
		p->strs.len = size;
		err = strtab_index(&p->strs);
		break;
	case SEC_SAMPLES: {
		struct sample_rec r;	/* sections are unaligned */

		if (size % sizeof(r))
			return bad(c->name, "sample table size");
		if (array__reserve((void **)&p->samples, &p->cap_samples, size / sizeof(r),
				   sizeof(*p->samples)))
			return -ENOMEM;
		for (size_t i = 0; i < size / sizeof(r); i++) {
			memcpy(&r, (const char *)data + i * sizeof(r), sizeof(r));
			p->samples[i] = (struct profile_sample){
				.pid = r.pid, .flags = r.flags, .ip = r.ip, .cgroup_id = r.cgroup_id,
				.exec_ns = r.exec_ns, .count = r.count, .weight = r.weight,
			};
		}
		p->nr_samples = size / sizeof(r);
		break;
	}
	case SEC_MAPPINGS:
		err = take((void **)&p->mappings, &p->nr_mappings, &p->cap_mappings, data, size,
			   sizeof(*p->mappings), c->name, "mapping table size");
		break;
	case SEC_COMMS:
		err = take((void **)&p->comms, &p->nr_comms, &p->cap_comms, data, size,
			   sizeof(*p->comms), c->name, "comm table size");
		break;
	case SEC_FORKS:
		err = take((void **)&p->forks, &p->nr_forks, &p->cap_forks, data, size,
			   sizeof(*p->forks), c->name, "fork table size");
		break;
	case SEC_KSYMS:
		err = take((void **)&p->ksyms, &p->nr_ksyms, &p->cap_ksyms, data, size,
			   sizeof(*p->ksyms), c->name, "kernel symbol table size");
		break;
	case SEC_CGROUPS:
		err = take((void **)&p->cgroups, &p->nr_cgroups, &p->cap_cgroups, data, size,
			   sizeof(*p->cgroups), c->name, "cgroup table size");
		break;
	case SEC_NSPIDS:
		err = take((void **)&p->nspids, &p->nr_nspids, &p->cap_nspids, data, size,
			   sizeof(*p->nspids), c->name, "namespace pid table size");
		break;
	case SEC_LBR:
		err = take((void **)&p->lbr, &p->nr_lbr, &p->cap_lbr, data, size, sizeof(*p->lbr),
			   c->name, "branch record table size");
		break;
	case SEC_STACKS:
		err = take((void **)&p->stacks, &p->nr_stacks, &p->cap_stacks, data, size,
			   sizeof(*p->stacks), c->name, "stack table size");
		break;
	case SEC_FRAMES:
		err = take((void **)&p->frames, &p->nr_frames, &p->cap_frames, data, size,
			   sizeof(*p->frames), c->name, "frame table size");
		break;
	case SEC_STACK_SAMPLES: {
		struct stack_sample_rec r;

		if (size % sizeof(r))
			return bad(c->name, "stack sample table size");
		if (array__reserve((void **)&p->stack_samples, &p->cap_stack_samples,
				   size / sizeof(r), sizeof(*p->stack_samples)))
			return -ENOMEM;
		for (size_t i = 0; i < size / sizeof(r); i++) {
			memcpy(&r, (const char *)data + i * sizeof(r), sizeof(r));
			p->stack_samples[i] = (struct profile_stack_sample){
				.pid = r.pid, .flags = r.flags, .cgroup_id = r.cgroup_id,
				.exec_ns = r.exec_ns, .user = r.user, .kernel = r.kernel,
				.count = r.count, .weight = r.weight,
			};
		}
		p->nr_stack_samples = size / sizeof(r);
		break;
	}
	case SEC_SAMPLE_MAPS:
		err = take((void **)&c->maps, &c->nr_maps, &c->cap_maps, data, size, sizeof(u64),
			   c->name, "sample mapping generation table size");
		break;
	case SEC_STACK_SAMPLE_MAPS:
		err = take((void **)&c->stack_maps, &c->nr_stack_maps, &c->cap_stack_maps, data, size,
			   sizeof(u64), c->name, "stack sample mapping generation table size");
		break;
	case SEC_THREAD_COMMS:
		err = take((void **)&p->thread_comms, &p->nr_thread_comms, &p->cap_thread_comms, data,
			   size, sizeof(*p->thread_comms), c->name, "thread name table size");
		break;
	case SEC_SAMPLE_KEYS:
		err = take((void **)&p->sample_keys, &p->nr_sample_keys, &p->cap_sample_keys, data,
			   size, sizeof(*p->sample_keys), c->name, "sample key table size");
		break;
	case SEC_STACK_SAMPLE_KEYS:
		err = take((void **)&p->stack_sample_keys, &p->nr_stack_sample_keys,
			   &p->cap_stack_sample_keys, data, size, sizeof(*p->stack_sample_keys),
			   c->name, "stack sample key table size");
		break;
	case SEC_STACK_SAMPLE_WAKERS:
		err = take((void **)&p->stack_sample_wakers, &p->nr_stack_sample_wakers,
			   &p->cap_stack_sample_wakers, data, size, sizeof(*p->stack_sample_wakers),
			   c->name, "stack sample waker table size");
		break;
	case SEC_JITSYMS:
		err = take((void **)&p->jitsyms, &p->nr_jitsyms, &p->cap_jitsyms, data, size,
			   sizeof(*p->jitsyms), c->name, "JIT symbol table size");
		break;
	case SEC_PYFRAMES:
		err = take((void **)&p->pyframes, &p->nr_pyframes, &p->cap_pyframes, data, size,
			   sizeof(*p->pyframes), c->name, "Python frame table size");
		break;
	default:
		break;	/* a newer minor version's section */
	}
	return err;
}

/* the mapping generations read beside SAMPLES and STACK_SAMPLES (1.6), into their records */
static int apply_maps(const struct parse_ctx *c)
{
	struct profile *p = c->p;

	if (c->nr_maps && c->nr_maps != p->nr_samples)
		return bad(c->name, "sample mapping generations do not match the samples");
	if (c->nr_stack_maps && c->nr_stack_maps != p->nr_stack_samples)
		return bad(c->name, "stack sample mapping generations do not match the stack samples");
	for (size_t i = 0; i < c->nr_maps; i++)
		p->samples[i].map_ns = c->maps[i];
	for (size_t i = 0; i < c->nr_stack_maps; i++)
		p->stack_samples[i].map_ns = c->stack_maps[i];
	return 0;
}

int profile__parse(const void *buf, size_t size, const char *name, struct profile **out)
{
	struct parse_ctx c = { .name = name };
	int err;

	*out = NULL;
	c.p = profile__new();
	if (!c.p)
		return -ENOMEM;
	/* drop the "" that profile__new interned; the file's table replaces it */
	c.p->strs.len = 0;
	hashidx__clear(&c.p->strs.idx);
	err = file_format__parse(buf, size, name, &profile_format, &c.ver, parse_section, &c);
	if (!err && c.p->strs.len == 0 && profile__intern(c.p, "") < 0)
		err = -ENOMEM;
	if (!err)
		err = validate_refs(c.p, name);
	if (!err)
		err = apply_maps(&c);
	if (!err)
		err = check_sums(c.p, name);
	free(c.maps);
	free(c.stack_maps);
	if (err) {
		if (err == -ENOMEM)
			error("cannot read '%s': %s", name, strerror(ENOMEM));
		profile__free(c.p);
		return err;
	}
	profile__finish(c.p);
	*out = c.p;
	return 0;
}

static int parse_any(const void *buf, size_t size, const char *name, void *out)
{
	return profile__parse(buf, size, name, out);
}

int profile__read(const char *path, struct profile **out)
{
	*out = NULL;
	return file_format__load(path, &profile_format, parse_any, out);
}
