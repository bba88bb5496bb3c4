// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* top's model: map slots with their deltas and their cached symbols, each linked once to its
 * row of a view (hist's), the rows summed again through the links at each refresh. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include "report/callchain.h"
#include "record/cgroup.h"
#include "record/container_id.h"
#include "lib/hashidx.h"
#include "hsbpf.h"
#include "record/sampler.h"
#include "lib/strset.h"
#include "profile/procfs.h"
#include "symbols/symbolizer.h"
#include "report/pyself.h"
#include "report/sample_filter.h"
#include "report/top.h"
#include "report/top_pyself.h"

/* a slot left unresolved (its mmap record not read yet) is tried again this many times */
#define RESOLVE_TRIES 5

/* one key of the kernel's histogram, as top follows it. What each refresh reads of every
 * key (its count, its row, its process and cgroup) comes first, in one cache line */
struct entry {
	double decayed;
	u64 total;			/* samples since top started */
	u64 delta;			/* samples in the last interval */
	const char *comm;		/* interned */
	/* its row in the view's rows (NO_ROW: the filter refuses it), good while gen is top's:
	 * a key linked is resolved (or given up on) and labelled */
	u32 row, gen;
	struct profile_sample k;	/* the key (count and weight unused) */
	u32 tid;			/* ... and its thread (0 when not keyed by thread) */
	/* --memory: total and delta are bytes (a live set's: now), these objects in 1/1024ths;
	 * first the live set's at top's first interval */
	u64 obj_total, obj_delta;
	double first, first_obj;
	bool resolved, has_bb;
	u8 tries;
	const char *sym, *dso;		/* interned */
	u64 sym_off, addr;
	const struct bblock *bb;
	u32 nspid;
	const char *container, *cgroup;
};

#define NO_ROW UINT32_MAX

struct label {
	u64 id;
	const char *container, *cgroup;
};


struct top {
	struct profile *p;
	struct cgroup_names *cgroups;
	struct symbolizer *sy;
	bool blocks_on;
	size_t sorted[5];	/* mappings, comms, forks, ksyms, thread names the last sort saw */
	struct entry *entries;
	size_t nr_entries, cap_entries;
	struct hashidx index;	/* the entries by their keys */
	struct label *labels;
	size_t nr_labels, cap_labels;
	struct strset strs;
	/* The rows of the view, kept from refresh to refresh while its grouping and filter stay
	 * (shape): each key is linked to its row once (entry.row), and each refresh sums the
	 * rows again from the keys' counts through the links, in the keys' order, as a histogram
	 * made anew would, without hashing or comparing names */
	struct hist *view;
	struct view_shape {
		enum sort_key key;
		u32 zoom_pid;
		bool zoomed_cgroup;
		u64 zoom_cgroup;
		char filter[64];
	} shape;
	u32 gen;		/* the links' generation: 0 is no link */
	bool regroup;		/* keys forgotten: the rows made again at the next view */
	u32 stamp;		/* the refresh a row was last started at (seen) */
	u32 *seen;
	size_t cap_seen;
	u32 *made;		/* the rows of the last view, in the order a new histogram makes them */
	size_t nr_made, cap_made;
	u32 *picked;		/* ... the shown ones, as positions in made */
	size_t cap_picked;
	struct hist_row *shown;	/* what top__rows gives: the rows shown, in order */
	size_t cap_shown;
	struct sampler *sampler;	/* the last update's: the call stacks come from it */
	int (*stacks_fn)(void *ctx);	/* top__on_stacks' */
	void *stacks_ctx;
	/* top__callchain's last: when it was made (CLOCK_MONOTONIC), its CPU time, the view
	 * and the interval it is of */
	struct callchain *cc;
	u64 cc_at, cc_cost;
	enum memory_view cc_mview;
	u64 cc_intervals;
	struct top_pyself *py;	/* top__python_self's: NULL when off */
	struct top_status st;
	u64 interval_slots;
	bool deltas_zero;	/* every key's delta is 0 (end_interval's, without --memory) */
	size_t max_keys;
	/* --memory */
	bool memory;
	enum memory_view mview;	/* the last rows' view: call graphs weigh its amounts */
	u64 intervals;
	u32 *exited;		/* processes whose live set was dropped */
	size_t cap_exited;
	struct checked_pid {	/* the processes looked at in /proc this interval */
		u32 pid;
		bool alive;
	} *checked;
	size_t nr_checked, cap_checked;
};

/* interned strings: stable pointers, whatever the profile's string table does */
static const char *intern(struct top *t, const char *s)
{
	const char *c;

	if (!s)
		return NULL;
	c = strset__intern(&t->strs, s);
	return c ? c : "[no memory]";
}

/* ---- map slots ---- */

/* the key's fields, pid to map_ns, hashed as they lie */
#define KEY_SIZE (offsetof(struct profile_sample, map_ns) + sizeof(u64))

static u64 hash_key(const struct profile_sample *k, u32 tid)
{
	return hashidx__hash(k, KEY_SIZE, tid);
}

struct entry_key {
	const struct profile_sample *k;
	u32 tid;
};

static bool same_key(const void *key, u32 pos, void *ctx)
{
	const struct entry_key *ek = key;
	const struct entry *e = &((const struct top *)ctx)->entries[pos];
	const struct profile_sample *a = ek->k, *b = &e->k;

	return a->ip == b->ip && a->pid == b->pid && a->flags == b->flags &&
	       a->cgroup_id == b->cgroup_id && a->exec_ns == b->exec_ns && a->map_ns == b->map_ns && ek->tid == e->tid;
}

static struct entry *find_entry(struct top *t, const struct profile_sample *k, u32 tid, bool add)
{
	struct entry_key ek = { k, tid };
	u64 hash = hash_key(k, tid);
	s64 pos = hashidx__find(&t->index, hash, &ek, same_key, t);

	if (pos >= 0)
		return &t->entries[pos];
	if (!add || array__reserve((void **)&t->entries, &t->cap_entries, t->nr_entries + 1,
				   sizeof(*t->entries)) ||
	    hashidx__insert(&t->index, hash, t->nr_entries))
		return NULL;
	t->entries[t->nr_entries] = (struct entry){ .k = *k, .tid = tid };
	return &t->entries[t->nr_entries++];
}

void top__no_demangle(struct top *t)
{
	symbolizer__no_demangle(t->sy);
}

struct top *top__new(struct profile *p, struct cgroup_names *cgroups)
{
	struct top *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->p = p;
	t->cgroups = cgroups;
	t->sy = symbolizer__new(p);
	if (!t->sy) {
		free(t);
		return NULL;
	}
	symbolizer__skip_lines(t->sy);
	symbolizer__skip_call_files(t->sy);
	t->view = hist__new(top_keys, 1);
	if (!t->view) {
		symbolizer__free(t->sy);
		free(t);
		return NULL;
	}
	/* what top groups is interned: strings compare by pointer */
	t->view->interned = true;
	t->view->unknown_per_process = true;
	t->max_keys = TOP_MAX_KEYS;
	t->st.cpu = -1;
	t->st.bpf_cpu = -1;
	return t;
}

void top__free(struct top *t)
{
	if (!t)
		return;
	symbolizer__free(t->sy);
	strset__free(&t->strs);
	free(t->entries);
	hashidx__free(&t->index);
	free(t->labels);
	free(t->exited);
	free(t->checked);
	hist__free(t->view);
	free(t->seen);
	free(t->made);
	free(t->picked);
	free(t->shown);
	top_pyself__free(t->py);
	callchain__free(t->cc);
	free(t);
}

void top__memory(struct top *t, u64 alloc_period)
{
	t->memory = true;
	t->st.alloc_period = alloc_period;
}

/* a live set's slot (HSBPF_MEM_INUSE), not an amount that adds up */
static bool is_inuse(const struct entry *e)
{
	return (e->k.flags & HSBPF_KEY_MEMORY) && memory__is_inuse(e->k.flags);
}

void top__limit_keys(struct top *t, size_t max_keys)
{
	t->max_keys = max_keys;
}

struct top_status *top__status(struct top *t)
{
	return &t->st;
}

static int add_slot(struct top *t, const struct profile_sample *ps, u32 tid)
{
	struct entry *e = find_entry(t, ps, tid, true);

	if (!e)
		return fail(-ENOMEM, "cannot follow the sample map: %s", strerror(ENOMEM));
	if (ps->flags & HSBPF_KEY_MEMORY) {	/* objects in 1/1024ths, and bytes */
		e->delta += ps->weight;
		e->obj_delta += ps->count;
	} else {
		/* off-CPU time counts in microseconds, as report's view of it (offcpu__count_time) */
		e->delta += ps->flags & HSBPF_KEY_OFFCPU ? (ps->weight + 500) / 1000 : ps->count;
	}
	return 0;
}

/* a slot of the interval's map: what its key gained in the interval */
static int take_slot(void *ctx, const struct profile_sample *ps, const struct profile_sample_key *k)
{
	struct top *t = ctx;

	t->interval_slots++;
	return add_slot(t, ps, k ? k->tid : 0);
}

/* a process gone: its live set is dropped (it is not a leak of a running program), counted once */
static int drop_exited(struct top *t, u32 pid)
{
	t->st.exited_allocs++;
	for (size_t i = 0; i < t->st.exited_procs; i++)
		if (t->exited[i] == pid)
			return 1;
	if (array__reserve((void **)&t->exited, &t->cap_exited, t->st.exited_procs + 1, sizeof(*t->exited)))
		return fail(-ENOMEM, "cannot follow the live allocations: %s", strerror(ENOMEM));
	t->exited[t->st.exited_procs++] = pid;
	return 1;
}

/* whether pid is alive, from /proc once an interval (the live set holds up to 65,536
 * allocations, of a few processes mostly): 1, 0, or -ENOMEM */
static int alive(struct top *t, u32 pid)
{
	for (size_t i = t->nr_checked; i-- > 0; )
		if (t->checked[i].pid == pid)
			return t->checked[i].alive;
	if (array__reserve((void **)&t->checked, &t->cap_checked, t->nr_checked + 1, sizeof(*t->checked)))
		return fail(-ENOMEM, "cannot follow the live allocations: %s", strerror(ENOMEM));
	t->checked[t->nr_checked] = (struct checked_pid){ pid, procfs__alive(pid) };
	return t->checked[t->nr_checked++].alive;
}

/* a sampled allocation not freed yet: into its key's live set of now */
static int take_live(void *ctx, const struct mem_addr *a, const struct mem_live *v)
{
	struct top *t = ctx;
	struct profile_sample ps = {
		.pid = a->pid, .flags = HSBPF_KEY_MEMORY | HSBPF_MEM_INUSE << HSBPF_KEY_STATE_SHIFT,
		.ip = v->ip, .cgroup_id = v->key.cgroup_id, .exec_ns = v->key.exec_ns,
		.map_ns = v->key.map_ns, .count = v->objects, .weight = v->weight,
	};

	int live = alive(t, a->pid);

	if (live < 0)
		return live;
	if (!live)
		return drop_exited(t, a->pid);
	return add_slot(t, &ps, v->key.x.tid);
}

static void begin_interval(struct top *t)
{
	/* objects are counted for sampled allocations only (add_slot): a CPU profile's keys
	 * are read and written in their first cache line alone. Without --memory, end_interval
	 * left every delta at 0: no pass over the keys here (a third of a refresh's at 300,000) */
	for (size_t i = 0; (t->memory || !t->deltas_zero) && i < t->nr_entries; i++) {
		struct entry *e = &t->entries[i];

		e->delta = 0;
		if (e->k.flags & HSBPF_KEY_MEMORY)
			e->obj_delta = 0;
	}
	t->interval_slots = 0;
	t->nr_checked = 0;
	t->deltas_zero = false;	/* until end_interval has added them up */
}

/* the allocator probes' counters: sampled, and what was lost */
static int memory_counters(struct top *t, struct sampler *s)
{
	u64 c[HSBPF_MEM_STAT_NR];
	int err = sampler__read_memory_counters(s, c);

	if (err)
		return err;
	t->st.mem_sampled_interval = c[HSBPF_MEM_SAMPLED] - t->st.mem_sampled;
	t->st.mem_sampled = c[HSBPF_MEM_SAMPLED];
	t->st.mem_calls = c[HSBPF_MEM_CALLS];
	t->st.mem_lost = c[HSBPF_MEM_FULL] + c[HSBPF_MEM_LIVE_FULL] + c[HSBPF_MEM_NO_STORAGE];
	return 0;
}

/* a long run on a busy machine sees keys without end (processes come and go): past
 * max_keys, the keys whose decayed count has faded below 0.01 (idle for 35 intervals
 * or more) are forgotten, and their totals counted as aged out, which the header shows */
static void age_out(struct top *t)
{
	size_t o = 0;

	if (t->nr_entries <= t->max_keys)
		return;
	for (size_t i = 0; i < t->nr_entries; i++) {
		struct entry *e = &t->entries[i];
		u64 hash = hash_key(&e->k, e->tid);

		if (e->decayed < 0.01) {
			t->st.aged_out += e->total;
			hashidx__delete(&t->index, hash, i);
			continue;
		}
		/* kept in their order: rows take their first entry's details */
		if (o != i) {
			hashidx__move(&t->index, hash, i, o);
			t->entries[o] = *e;
		}
		o++;
	}
	/* rows of forgotten keys are not kept for ever: the rows are made again */
	t->regroup |= o != t->nr_entries;
	t->nr_entries = o;
}

static void end_interval(struct top *t)
{
	double live = 0;
	u64 new = 0;

	for (size_t i = 0; i < t->nr_entries; i++) {
		struct entry *e = &t->entries[i];

		if (is_inuse(e)) {	/* a level, now: not summed, not decayed */
			e->total = e->delta;
			e->obj_total = e->obj_delta;
			e->decayed = e->delta;
			if (!t->intervals) {
				e->first = e->delta;
				e->first_obj = e->obj_delta;
			}
			live += e->delta;
			continue;
		}
		if (e->k.flags & HSBPF_KEY_MEMORY)
			e->obj_total += e->obj_delta;
		e->total += e->delta;
		e->decayed = e->decayed * TOP_DECAY + e->delta;
		new += e->delta;
		/* read after this only by --memory's views (memory_amount), which begin_interval
		 * zeroes then */
		if (!t->memory)
			e->delta = 0;
	}
	t->deltas_zero = !t->memory;
	t->st.total += new;
	t->st.rate = t->st.interval_s > 0 ? new / t->st.interval_s : 0;
	t->st.live_bytes = live;
	t->intervals++;
	age_out(t);
	t->st.slots = t->interval_slots;
	t->st.keys = t->nr_entries;
}

static int python_self(struct top *t, struct sampler *s, const struct top_pyleaf *leaves, size_t n);

int top__update(struct top *t, struct sampler *s)
{
	struct profile_stats ks = {};
	int err;

	t->sampler = s;
	begin_interval(t);
	err = sampler__take_interval(s, take_slot, t);
	if (!err && t->memory)
		err = sampler__walk_live_allocs(s, take_live, t);
	if (!err)
		err = python_self(t, s, NULL, 0);
	if (err)
		return err;
	end_interval(t);
	err = sampler__read_counters(s, &ks);
	if (!err && t->memory)
		err = memory_counters(t, s);
	if (err)
		return err;
	t->st.dropped = ks.dropped_full;
	t->st.capacity = sampler__capacity(s);
	return 0;
}

int top__update_from(struct top *t, const struct profile_sample *slots, size_t nr)
{
	return top__update_from_stacks(t, slots, nr, NULL, 0);
}

int top__update_from_stacks(struct top *t, const struct profile_sample *slots, size_t nr,
			    const struct top_pyleaf *leaves, size_t nr_leaves)
{
	int err = 0;

	begin_interval(t);
	for (size_t i = 0; i < nr && !err; i++)
		err = take_slot(t, &slots[i], NULL);
	if (!err)
		err = python_self(t, NULL, leaves, nr_leaves);
	end_interval(t);
	return err;
}

/* ---- symbols and labels, each slot once ---- */

/* the symbolizer searches the profile's sideband sorted; top's grows while it runs */
static void sort_sideband(struct top *t)
{
	struct profile *p = t->p;

	if (t->sorted[0] == p->nr_mappings && t->sorted[1] == p->nr_comms &&
	    t->sorted[2] == p->nr_forks && t->sorted[3] == p->nr_ksyms &&
	    t->sorted[4] == p->nr_thread_comms)
		return;
	/* the kernel's symbols again only when they changed (a module loaded): sorting them
	 * each time a process started was a tenth of top's time on a busy machine */
	if (t->sorted[3] != p->nr_ksyms)
		profile__finish(p);
	else
		profile__finish_processes(p);
	t->sorted[0] = p->nr_mappings;
	t->sorted[1] = p->nr_comms;
	t->sorted[2] = p->nr_forks;
	t->sorted[3] = p->nr_ksyms;
	t->sorted[4] = p->nr_thread_comms;
}

static const struct label *cgroup_label(struct top *t, u64 id)
{
	struct container_id c;
	const char *path;
	char buf[256];
	size_t i;

	for (i = 0; i < t->nr_labels; i++)
		if (t->labels[i].id == id)
			return &t->labels[i];
	if (id == 0)
		path = "-";
	else
		path = t->cgroups ? cgroup_names__find(t->cgroups, id) : NULL;
	if (!path)
		return NULL;	/* not scanned yet: asked again next time */
	if (array__reserve((void **)&t->labels, &t->cap_labels, t->nr_labels + 1, sizeof(*t->labels)))
		return NULL;
	if (!strcmp(path, "/") || id == 0)
		snprintf(buf, sizeof(buf), "host");
	else if (!container_id__identify(path, &c))
		container_id__describe(&c, buf, sizeof(buf));
	else
		snprintf(buf, sizeof(buf), "%s", path);
	t->labels[i] = (struct label){ .id = id, .container = intern(t, buf), .cgroup = intern(t, path) };
	return &t->labels[t->nr_labels++];
}

static void resolve(struct top *t, struct entry *e, bool want_bb)
{
	struct sym_result r;
	bool unknown;

	sort_sideband(t);
	if (want_bb && !t->blocks_on) {
		symbolizer__want_blocks(t->sy);
		t->blocks_on = true;
	}
	symbolizer__resolve(t->sy, &e->k, &r);
	e->sym = intern(t, r.sym);
	e->dso = intern(t, r.dso);
	/* a thread's own name, as report's comm shows it */
	e->comm = intern(t, e->tid ? sample_filter__thread_comm(t->p, e->k.pid, e->tid, r.comm) : r.comm);
	e->sym_off = r.sym_off;
	e->addr = r.kernel ? e->k.ip : r.vaddr;
	e->bb = r.bb;
	e->has_bb = t->blocks_on;
	e->nspid = profile__nspid(t->p, e->k.pid);
	/* a Python frame's name comes when its code object has been read */
	unknown = (!r.kernel && !strcmp(r.dso, "[unknown]")) || !strcmp(r.comm, "[unknown]") ||
		  (HSBPF_PY_IS_FRAME(e->k.ip) && !strcmp(r.sym, "[unknown]"));
	e->resolved = !unknown || ++e->tries >= RESOLVE_TRIES;
	e->gen = 0;	/* its names may have changed: its row is looked for again */
}

static void label(struct top *t, struct entry *e)
{
	const struct label *l;

	if (e->container)
		return;
	l = cgroup_label(t, e->k.cgroup_id);
	if (l) {
		e->container = l->container;
		e->cgroup = l->cgroup;
		e->gen = 0;	/* the filter may find its container: its row is looked for again */
	}
}

/* ---- Python's Self (top_pyself.h) ---- */

int top__python_self(struct top *t, bool on)
{
	if (!on) {
		top_pyself__free(t->py);
		t->py = NULL;
		return 0;
	}
	if (!t->py)
		t->py = top_pyself__new();
	return t->py ? 0 : -ENOMEM;
}

/* the evaluation loop's samples of a group in the interval: as many as its stacks' Python
 * leaves grew, [first, first + nr) of the growth */
struct pypool {
	const struct top_pyleaf *g;	/* its first leaf: the group's bytes */
	size_t first, nr;
	u64 want, given;
};

static int cmp_pool(const void *key, const void *b)
{
	return memcmp(key, ((const struct pypool *)b)->g, TOP_PYLEAF_GROUP);
}

static struct pypool *make_pools(const struct top_pyleaf *v, size_t n, size_t *nr)
{
	struct pypool *pools = calloc(n + 1, sizeof(*pools));
	size_t np = 0;

	if (!pools)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (!np || memcmp(pools[np - 1].g, &v[i], TOP_PYLEAF_GROUP))
			pools[np++] = (struct pypool){ .g = &v[i], .first = i };
		pools[np - 1].nr++;
		pools[np - 1].want += v[i].count;
	}
	*nr = np;
	return pools;
}

/* the samples in the evaluation loop that the interval's stacks say were Python code's,
 * taken from the loop's entries of each group, never more than they gained */
static void take_from_loop(struct top *t, struct pypool *pools, size_t np)
{
	for (size_t i = 0; i < t->nr_entries; i++) {
		struct entry *e = &t->entries[i];
		struct top_pyleaf g = { .pid = e->k.pid, .flags = e->k.flags, .cgroup_id = e->k.cgroup_id,
					.exec_ns = e->k.exec_ns, .tid = e->tid };
		struct pypool *pl;
		u64 n;

		if (!e->delta || e->k.flags & HSBPF_KEY_KERNEL || HSBPF_PY_IS_FRAME(e->k.ip))
			continue;
		pl = bsearch(&g, pools, np, sizeof(*pools), cmp_pool);
		if (!pl || pl->given == pl->want)
			continue;
		if (!e->resolved)
			resolve(t, e, false);
		if (!e->sym || strcmp(e->sym, PYSELF_EVAL_LOOP))
			continue;
		n = pl->want - pl->given < e->delta ? pl->want - pl->given : e->delta;
		e->delta -= n;
		pl->given += n;
	}
}

/* the Python frames of new keys named now, as the session names a stack's (top__on_stacks):
 * the naming reads the profile's stack samples, which are, for the moment, one per frame */
static int name_frames(struct top *t, const struct profile_sample *v, size_t n)
{
	struct profile *p = t->p;
	struct profile_stack_sample *ss = calloc(n, sizeof(*ss)), *ss0 = p->stack_samples;
	struct profile_stack *st = calloc(n, sizeof(*st)), *st0 = p->stacks;
	u64 *f = calloc(n, sizeof(*f)), *f0 = p->frames;
	size_t nss = p->nr_stack_samples, nst = p->nr_stacks, nf = p->nr_frames;
	int err = -ENOMEM;

	if (!ss || !st || !f)
		goto out;
	for (size_t i = 0; i < n; i++) {
		f[i] = v[i].ip;
		st[i] = (struct profile_stack){ .first = i, .nr = 1 };
		ss[i] = (struct profile_stack_sample){ .pid = v[i].pid, .user = i + 1, .count = 1 };
	}
	p->stack_samples = ss;
	p->stacks = st;
	p->frames = f;
	p->nr_stack_samples = p->nr_stacks = p->nr_frames = n;
	err = t->stacks_fn(t->stacks_ctx);
	p->stack_samples = ss0;
	p->stacks = st0;
	p->frames = f0;
	p->nr_stack_samples = nss;
	p->nr_stacks = nst;
	p->nr_frames = nf;
out:
	free(ss);
	free(st);
	free(f);
	return err;
}

/* ... given to the Python frames of the group's leaves, each its growth (the last of a group
 * less when the loop gained fewer, the rest asked again next time); the frames not named yet
 * named */
static int give_to_frames(struct top *t, const struct pypool *pools, size_t np,
			  const struct top_pyleaf *v)
{
	struct profile_sample *unnamed = NULL;
	size_t nu = 0, cap = 0;
	int err = 0;

	for (size_t i = 0; i < np && !err; i++) {
		u64 left = pools[i].given;

		for (size_t j = pools[i].first; j < pools[i].first + pools[i].nr && !err; j++) {
			const struct top_pyleaf *l = &v[j];
			struct profile_sample k = { .pid = l->pid, .flags = l->flags, .ip = l->frame,
						    .cgroup_id = l->cgroup_id, .exec_ns = l->exec_ns,
						    .map_ns = l->map_ns };
			u64 n = l->count < left ? l->count : left;
			struct entry *e;

			/* what the loop did not have is asked again at the next refresh */
			top_pyself__taken(t->py, l, n);
			if (!n)
				continue;
			e = find_entry(t, &k, l->tid, true);
			if (!e) {
				err = -ENOMEM;
				break;
			}
			e->delta += n;
			left -= n;
			if (e->resolved || profile__find_pyframe(t->p, k.pid, k.ip))
				continue;
			if (array__reserve((void **)&unnamed, &cap, nu + 1, sizeof(*unnamed)))
				err = -ENOMEM;
			else
				unnamed[nu++] = k;
		}
	}
	if (!err && nu && t->stacks_fn)
		err = name_frames(t, unnamed, nu);
	free(unnamed);
	return err;
}

/* Self of pure Python code is the Python function's (docs/python.md "Self"): the stacks'
 * leaves since the last refresh (read from s, or given), then what the loop's entries gained
 * of them moved to the frames' entries; totals stay the flat histogram's */
static int python_self(struct top *t, struct sampler *s, const struct top_pyleaf *leaves, size_t n)
{
	u64 cnt[HSBPF_STACK_STAT_NR];
	const struct top_pyleaf *v;
	struct pypool *pools;
	size_t nv, np;
	int err = 0;

	if (!t->py)
		return 0;
	top_pyself__begin(t->py);
	/* no Python process yet: the stack map is not read */
	if (s && !sampler__read_stack_counters(s, cnt) && cnt[HSBPF_STACK_STAT_PY_SAMPLES]) {
		u64 start = now_ns(CLOCK_MONOTONIC), cpu = now_ns(CLOCK_THREAD_CPUTIME_ID);

		err = top_pyself__read(t->py, s);
		debug("Python's Self: the stack samples read in %.2f ms (%.2f ms of CPU)",
		      (now_ns(CLOCK_MONOTONIC) - start) / 1e6,
		      (now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu) / 1e6);
	}
	for (size_t i = 0; i < n && !err; i++)
		err = top_pyself__add(t->py, &leaves[i]);
	if (err)
		return err;
	v = top_pyself__growth(t->py, &nv);
	if (!nv)
		return 0;
	pools = make_pools(v, nv, &np);
	if (!pools)
		return fail(-ENOMEM, "cannot follow Python's Self: %s", strerror(ENOMEM));
	take_from_loop(t, pools, np);
	err = give_to_frames(t, pools, np, v);
	free(pools);
	if (err == -ENOMEM)
		error("cannot follow Python's Self: %s", strerror(ENOMEM));
	return err;
}

int top__unresolved_pids(struct top *t, u32 **pids, size_t *nr)
{
	size_t cap = 0;

	*pids = NULL;
	*nr = 0;
	for (size_t i = 0; i < t->nr_entries; i++) {
		if (t->entries[i].resolved)
			continue;
		if (array__reserve((void **)pids, &cap, *nr + 1, sizeof(**pids))) {
			free(*pids);
			*pids = NULL;
			*nr = 0;
			return -ENOMEM;
		}
		(*pids)[(*nr)++] = t->entries[i].k.pid;
	}
	return 0;
}

/* ---- rows ---- */

static const char *row_name(const struct top_view *v, const struct hist_row *r)
{
	return sort_key__row_name(v->key, r);
}

static int cmp_rows(const void *x, const void *y, void *view)
{
	const struct hist_row *a = x, *b = y;
	const struct top_view *v = view;
	int c = 0;

	switch (v->order) {
	case TOP_BY_NAME:
		c = strcmp(row_name(v, a), row_name(v, b));
		break;
	case TOP_BY_PROCESS:
		c = strcmp(a->comm, b->comm);
		if (!c)
			c = a->pid < b->pid ? -1 : a->pid > b->pid;
		break;
	case TOP_BY_CONTAINER:
		c = strcmp(a->container, b->container);
		break;
	default:
		break;
	}
	if (c)
		return c;
	if (a->count != b->count)
		return a->count < b->count ? 1 : -1;
	/* stable on ties: the names, then the address */
	c = strcmp(row_name(v, a), row_name(v, b));
	if (c)
		return c;
	return a->vaddr < b->vaddr ? -1 : a->vaddr > b->vaddr;
}

/* --memory: a key's amount in v (0 when of the other kind), with its variance as an estimate
 * and, for a live set, its amount at the first interval. n objects of s bytes are sampled with
 * p = 1 - exp(-s/period) each and weigh s/p: the bytes' variance is B s (1 - p)/p, the objects'
 * N (1 - p)/p, s taken as the key's mean size (one call site: one size, mostly) */
static double memory_amount(const struct top *t, const struct top_view *v, const struct entry *e,
			    double *var, double *first)
{
	bool objects = v->mview == MEMORY_ALLOC_OBJECTS || v->mview == MEMORY_INUSE_OBJECTS;
	bool inuse = v->mview == MEMORY_INUSE_SPACE || v->mview == MEMORY_INUSE_OBJECTS;
	bool rate = !inuse && v->decay;
	double secs = rate && t->st.interval_s > 0 ? t->st.interval_s : 1;
	double b = inuse || rate ? e->delta : e->total;
	double o = (inuse || rate ? e->obj_delta : e->obj_total) / (double)(1 << HSBPF_MEM_OBJ_SHIFT);
	double size = o > 0 ? b / o : 0, p;

	*var = *first = 0;
	if (!(e->k.flags & HSBPF_KEY_MEMORY) || is_inuse(e) != inuse || !t->st.alloc_period)
		return 0;
	p = -expm1(-size / (double)t->st.alloc_period);
	if (p > 0)
		*var = (objects ? o : b * size) * (1 - p) / p / (secs * secs);
	if (inuse)
		*first = objects ? e->first_obj / (1 << HSBPF_MEM_OBJ_SHIFT) : e->first;
	return (objects ? o : b) / secs;
}

/* what a key followed is, for hist; its count the view's (decayed or accumulated) */
static void entry_sample(const struct entry *e, double count, struct hist_sample *s)
{
	*s = (struct hist_sample){
		.pid = e->k.pid, .nspid = e->nspid, .cgroup_id = e->k.cgroup_id,
		.cgroup = e->cgroup, .container = e->container, .count = count,
		.r = { .sym = e->sym, .sym_off = e->sym_off, .dso = e->dso, .vaddr = e->addr,
		       .kernel = e->k.flags & HSBPF_KEY_KERNEL, .comm = e->comm, .bb = e->bb },
	};
}

static bool same_shape(const struct view_shape *a, const struct view_shape *b)
{
	return a->key == b->key && a->zoom_pid == b->zoom_pid && a->zoomed_cgroup == b->zoomed_cgroup &&
	       a->zoom_cgroup == b->zoom_cgroup && !strcmp(a->filter, b->filter);
}

/* the grouping and the filter the links are good for: another, and the rows are made again.
 * So are they when keys were forgotten, or when most rows have no key left in the view
 * (faded, or of exited processes) */
static void reshape(struct top *t, const struct top_view *v)
{
	/* a process that execs is two rows, one per program */
	const enum sort_key keys[] = { v->key, SORT_COMM };
	struct view_shape sh = {
		.key = v->key, .zoom_pid = v->zoom_pid, .zoomed_cgroup = v->zoomed_cgroup,
		.zoom_cgroup = v->zoom_cgroup,
	};
	struct hist *h = t->view;

	snprintf(sh.filter, sizeof(sh.filter), "%s", v->filter);
	if (t->gen && !t->regroup && same_shape(&sh, &t->shape) &&
	    (h->nr_rows < 4096 || h->nr_rows < 4 * t->nr_made))
		return;
	t->shape = sh;
	t->regroup = false;
	if (++t->gen == 0) {	/* 0 is no link: after 2^32 regroupings, every link undone */
		for (size_t i = 0; i < t->nr_entries; i++)
			t->entries[i].gen = 0;
		t->gen = 1;
	}
	hist__reset(h, keys, v->key == SORT_PID ? 2 : 1);
	h->filter = (struct hist_filter){
		.pid = sh.zoom_pid, .by_cgroup = sh.zoomed_cgroup, .cgroup_id = sh.zoom_cgroup,
		.text = t->shape.filter[0] ? t->shape.filter : NULL,
	};
	if (t->seen)	/* memset wants a non-NULL pointer even for no bytes */
		memset(t->seen, 0, t->cap_seen * sizeof(*t->seen));
	t->stamp = 0;
}

/* e's row, found (made if new) when e has no link of this generation; 0 or -ENOMEM */
static int link_row(struct top *t, struct entry *e, const struct hist_sample *s)
{
	struct hist *h = t->view;
	s64 pos = hist__find_row(h, s);

	if (pos == -ENOMEM ||
	    array__reserve((void **)&t->seen, &t->cap_seen, h->nr_rows, sizeof(*t->seen)))
		return -ENOMEM;
	e->row = pos < 0 ? NO_ROW : (u32)pos;
	e->gen = t->gen;
	return 0;
}

static int strcmp0(const char *a, const char *b)
{
	return a == b ? 0 : strcmp(a ? a : "", b ? b : "");
}

/* The rows' amounts from the keys', summed again through the links in the keys' order:
 * each row, its first key's fields and the sums of the rest, as hist__add makes them. Keys
 * without a link (new, named again, or a new view) are resolved (when shown) and linked;
 * the others cost a few loads and adds: every key's count changes when it decays */
static int group(struct top *t, const struct top_view *v)
{
	struct hist *h = t->view;
	double total = 0;
	bool zoomed;

	reshape(t, v);
	zoomed = h->filter.pid || h->filter.by_cgroup;
	t->mview = v->mview;
	if (++t->stamp == 0) {	/* wrapped: no row seen */
		if (t->seen)
			memset(t->seen, 0, t->cap_seen * sizeof(*t->seen));
		t->stamp = 1;
	}
	t->nr_made = 0;
	if (array__reserve((void **)&t->made, &t->cap_made, h->nr_rows, sizeof(*t->made)))
		return -ENOMEM;
	for (size_t i = 0; i < t->nr_entries; i++) {
		struct entry *e = &t->entries[i];
		double val = v->decay ? e->decayed : (double)e->total, var = 0, first = 0;
		struct hist_sample s;	/* made for a key without a link, or a row's first */
		struct hist_row *r;

		if (v->memory)
			val = memory_amount(t, v, e, &var, &first);
		if (val < 0.01 && first < 0.01)
			continue;
		/* resolved only when the view shows it */
		if (zoomed && !hist_filter__wants(&h->filter, &(struct hist_sample){
				.pid = e->k.pid, .cgroup_id = e->k.cgroup_id }))
			continue;
		if (e->gen != t->gen) {
			if (!e->resolved || (v->key == SORT_BB && !e->has_bb))
				resolve(t, e, v->key == SORT_BB);
			label(t, e);
			entry_sample(e, val, &s);
			if (link_row(t, e, &s) ||
			    array__reserve((void **)&t->made, &t->cap_made, h->nr_rows, sizeof(*t->made)))
				return -ENOMEM;
			/* tried again at the next view, its row looked for again then */
			if (!e->resolved || !e->container)
				e->gen = 0;
		}
		if (e->row == NO_ROW)
			continue;
		total += val;
		r = &h->rows[e->row];
		if (t->seen[e->row] != t->stamp) {
			t->seen[e->row] = t->stamp;
			t->made[t->nr_made++] = e->row;
			entry_sample(e, val, &s);
			s.var = var;
			s.first = first;
			hist__row_start(r, &s);
			continue;
		}
		/* hist__add_row's sums, of what top's keys carry */
		r->count += val;
		r->var += var;
		r->first += first;
		r->many_pids |= r->pid != e->k.pid;
		r->many_comms |= strcmp0(r->comm, e->comm) != 0;
		r->many_cgroups |= r->cgroup_id != e->k.cgroup_id;
	}
	h->total = total;
	return 0;
}

struct pick {
	const struct hist_row *rows;
	const u32 *made;
	const struct top_view *v;
};

/* two rows as positions in made: in v's order, ties in the order they were made, which is
 * where a stable sort of a new histogram's rows leaves them */
static int cmp_made(const void *x, const void *y, void *arg)
{
	const struct pick *pk = arg;
	u32 a = *(const u32 *)x, b = *(const u32 *)y;
	int c = cmp_rows(&pk->rows[pk->made[a]], &pk->rows[pk->made[b]], (void *)pk->v);

	return c ? c : (a > b) - (a < b);
}

/* heap[0..n), the worst of them first: heap[i] moved down to its place */
static void sift_down(u32 *heap, size_t n, size_t i, const struct pick *pk)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, worst = i;
		u32 tmp;

		if (l < n && cmp_made(&heap[l], &heap[worst], (void *)pk) > 0)
			worst = l;
		if (r < n && cmp_made(&heap[r], &heap[worst], (void *)pk) > 0)
			worst = r;
		if (worst == i)
			return;
		tmp = heap[i];
		heap[i] = heap[worst];
		heap[worst] = tmp;
		i = worst;
	}
}

/* the first n of the rows made, in order, into picked: when n is fewer, only they are
 * sorted, picked from the rest through a heap of the n best so far */
static void pick_rows(struct top *t, const struct top_view *v, size_t n)
{
	const struct pick pk = { t->view->rows, t->made, v };
	u32 *heap = t->picked;

	if (n < t->nr_made) {
		for (size_t i = 0; i < n; i++)
			heap[i] = i;
		for (size_t i = n / 2; i-- > 0; )
			sift_down(heap, n, i, &pk);
		for (u32 i = n; i < t->nr_made; i++) {
			if (cmp_made(&i, &heap[0], (void *)&pk) >= 0)
				continue;
			heap[0] = i;
			sift_down(heap, n, 0, &pk);
		}
	} else {
		for (size_t i = 0; i < n; i++)
			heap[i] = i;
	}
	qsort_r(heap, n, sizeof(*heap), cmp_made, (void *)&pk);
}

int top__rows_first(struct top *t, const struct top_view *v, size_t limit,
		    const struct hist_row **rows, size_t *nr, double *view_total)
{
	size_t n;
	int err = group(t, v);

	if (err)
		return err;
	n = limit && limit < t->nr_made ? limit : t->nr_made;
	if (array__reserve((void **)&t->picked, &t->cap_picked, n, sizeof(*t->picked)) ||
	    array__reserve((void **)&t->shown, &t->cap_shown, n, sizeof(*t->shown)))
		return -ENOMEM;
	pick_rows(t, v, n);
	for (size_t i = 0; i < n; i++) {
		struct hist_row *r = &t->shown[i];

		*r = t->view->rows[t->made[t->picked[i]]];
		/* cgroups not named yet */
		if (!r->container)
			r->container = "?";
		if (!r->cgroup)
			r->cgroup = "?";
	}
	*rows = t->shown;
	*nr = n;
	*view_total = t->view->total;
	return 0;
}

int top__rows(struct top *t, const struct top_view *v, const struct hist_row **rows, size_t *nr,
	      double *view_total)
{
	return top__rows_first(t, v, 0, rows, nr, view_total);
}

/* ---- names ---- */

const enum sort_key top_keys[TOP_NR_KEYS] = { SORT_SYM, SORT_IP, SORT_BB, SORT_PID, SORT_CGROUP };

static const char *const order_names[TOP_NR_ORDERS] = {
	"samples", "name", "process", "container",
};

const char *top__order_name(enum top_order o)
{
	return o < TOP_NR_ORDERS ? order_names[o] : "?";
}

int top__parse_order(const char *s, enum top_order *o)
{
	for (int i = 0; i < TOP_NR_ORDERS; i++) {
		if (!strcmp(s, order_names[i])) {
			*o = i;
			return 0;
		}
	}
	return fail(-EINVAL, "unknown order '%s' (known: samples, name, process, container)", s);
}

int top__parse_key(const char *s, enum sort_key *k)
{
	if (!hist__parse_key(s, k)) {
		if (*k == SORT_COMM)
			*k = SORT_PID;
		for (size_t i = 0; i < TOP_NR_KEYS; i++)
			if (top_keys[i] == *k)
				return 0;
	}
	return fail(-EINVAL, "unknown grouping '%s' (known: sym, ip, bb, pid, cgroup)", s);
}

enum sort_key top__next_key(enum sort_key k)
{
	for (size_t i = 0; i < TOP_NR_KEYS; i++)
		if (top_keys[i] == k)
			return top_keys[(i + 1) % TOP_NR_KEYS];
	return top_keys[0];
}

static u64 clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (u64)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* Every stack so far is read from the kernel and resolved again for a new call graph: on a
 * busy machine, after a while, a fifth of a core at each refresh (its stacks grow with the
 * processes it has run). The last graph is kept until its own CPU time has passed
 * TOP_GRAPH_SHARE times over, so that top -g's graphs cost at most 1/TOP_GRAPH_SHARE of a
 * core; one that took under TOP_GRAPH_FREE_NS is made again at every refresh */
#define TOP_GRAPH_SHARE		20
#define TOP_GRAPH_FREE_NS	10000000ull

struct callchain *top__callchain(struct top *t)
{
	u64 now = clock_ns(CLOCK_MONOTONIC), cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	struct callchain *cc;
	int err;

	if (!t->sampler) {
		errno = ENOENT;
		return NULL;
	}
	if (t->cc && t->cc_mview == t->mview &&
	    (t->cc_intervals == t->intervals ||
	     (t->cc_cost >= TOP_GRAPH_FREE_NS && now - t->cc_at < TOP_GRAPH_SHARE * t->cc_cost)))
		return t->cc;
	err = sampler__collect_stacks(t->sampler, t->p);
	if (!err && t->stacks_fn)
		err = t->stacks_fn(t->stacks_ctx);
	/* the stacks of the view's kind, weighing its bytes or objects */
	if (!err && t->memory)
		memory__select(t->p, t->mview);
	if (err) {
		errno = -err;
		return NULL;
	}
	cc = callchain__new_live(t->p, t->sy);
	if (!cc) {
		errno = ENOMEM;
		return NULL;
	}
	callchain__free(t->cc);
	t->cc = cc;
	t->cc_at = now;
	t->cc_cost = clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu;
	t->cc_mview = t->mview;
	t->cc_intervals = t->intervals;
	return cc;
}

double top__callchain_age(const struct top *t)
{
	if (!t->cc || t->cc_intervals == t->intervals)
		return 0;
	return (clock_ns(CLOCK_MONOTONIC) - t->cc_at) / 1e9;
}

void top__on_stacks(struct top *t, int (*fn)(void *ctx), void *ctx)
{
	t->stacks_fn = fn;
	t->stacks_ctx = ctx;
}

int top__links(struct top *t, const struct hist_row *r, struct callchain_links *out)
{
	struct callchain *cc;

	memset(out, 0, sizeof(*out));
	cc = top__callchain(t);
	if (!cc)
		return -errno;
	return callchain__links(cc, r->sym, r->dso, out);
}
