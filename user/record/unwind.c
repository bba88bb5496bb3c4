// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The kernel unwinder's view of the machine, kept current from the sideband. Objects are
 * known by build-id (by path without one) and get their table once; each process image's
 * executable mappings become address prefixes in the kernel's trie, keyed by pid and the
 * image's exec tag, and leave it when the image is replaced or the process exits. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "lib/hashidx.h"
#include "profile/profile.h"
#include "symbols/build_id.h"
#include "record/sampler.h"
#include "profile/procfs.h"
#include "record/unwind.h"
#include "unwind/table_worker.h"
#include "unwind/unwind_table.h"

struct uobj {
	char *path;
	u8 build_id[BUILD_ID_MAX];
	u8 build_id_size;
	u32 kobj;			/* in the kernel's arrays; HSBPF_UNWIND_NO_OBJ without a table */
	struct unwind_segment segs[UNWIND_MAX_SEGMENTS];
	int nr_segs;
	bool by_inode;			/* its table is in unwind_inodes under ikey */
	bool building;			/* its table is the worker's job now */
	u8 unmapped;			/* release_unmapped's calls in a row that found no mapping */
	struct unwind_inode_key ikey;
};

/* an object a sample landed in that has no table yet (lazy tables): built at the next poll */
struct wanted {
	u32 pid;
	u8 build_id_size;
	u8 build_id[BUILD_ID_MAX];
	u64 start, len;
	char *path;
};

struct umap {
	u64 start, end;
	struct unwind_mapping m;
};

struct uproc {
	u32 pid;
	u32 tag;			/* of the image whose mappings are below */
	u64 exec_time;			/* its exec record's time, 0 if not seen */
	struct umap *maps;
	size_t nr, cap;
};

/* a mapping made by an exec the kernel's tracepoint has not finished: its tag is not known */
struct pending_map {
	u32 pid;
	u8 build_id_size;
	u8 build_id[20];
	u64 start, len, pgoff, time_ns;
	char *path;
};

struct unwinder {
	struct sampler *s;
	struct pending_map *pending;
	size_t nr_pending, cap_pending;
	struct uobj *objs;
	size_t nr_objs, cap_objs;
	struct hashidx objs_idx;	/* objs by build-id (by path without one) */
	struct wanted *wanted;
	size_t nr_wanted, cap_wanted;
	struct uproc *procs;		/* sorted by pid */
	size_t nr_procs, cap_procs;
	/* the kernel finds mappings from the task's vma (sampler_params.mappings_by_vma): only
	 * the objects' tables are loaded, no process is followed */
	bool by_vma;
	/* lazy tables are built there, off the loop (made at the first) */
	struct table_worker *worker;
	const char *table_cache;	/* the build-id cache tables are read from and kept in */
	struct unwinder_stats st;
};

struct unwinder *unwinder__new(struct sampler *s)
{
	struct unwinder *u = calloc(1, sizeof(*u));

	if (u) {
		u->s = s;
		u->by_vma = sampler__maps_by_vma(s);
	}
	return u;
}

void unwinder__cache_tables(struct unwinder *u, const char *dir)
{
	u->table_cache = dir;
}

static void proc_free(struct uproc *p)
{
	free(p->maps);
}

void unwinder__free(struct unwinder *u)
{
	for (size_t i = 0; u && i < u->nr_pending; i++)
		free(u->pending[i].path);
	if (u)
		free(u->pending);
	if (!u)
		return;
	for (size_t i = 0; i < u->nr_objs; i++)
		free(u->objs[i].path);
	for (size_t i = 0; i < u->nr_wanted; i++)
		free(u->wanted[i].path);
	for (size_t i = 0; i < u->nr_procs; i++)
		proc_free(&u->procs[i]);
	hashidx__free(&u->objs_idx);
	table_worker__free(u->worker);
	free(u->wanted);
	free(u->objs);
	free(u->procs);
	free(u);
}

const struct unwinder_stats *unwinder__stats(const struct unwinder *u)
{
	return &u->st;
}

void unwind__blocks(u64 start, u64 end, void (*fn)(void *ctx, u64 addr, int bits), void *ctx)
{
	while (start < end) {
		/* the largest aligned block at start that stays below end */
		int bits = start ? __builtin_ctzll(start) : 63;

		while (bits > 0 && (bits >= 64 || end - start < (1ull << bits)))
			bits--;
		fn(ctx, start, bits);
		start += 1ull << bits;
	}
}

/* ---- objects ---- */

/* an object's identity: its build-id, else its path */
struct obj_key {
	const char *path;
	const u8 *bid;
	u8 bid_size;
};

static u64 obj_hash(const char *path, const u8 *bid, u8 bid_size)
{
	return bid_size ? hashidx__hash(bid, bid_size, 1) : hashidx__hash_str(path, 0);
}

static bool obj_eq(const void *key, u32 pos, void *ctx)
{
	const struct obj_key *k = key;
	const struct uobj *o = &((struct unwinder *)ctx)->objs[pos];

	return k->bid_size ? (o->build_id_size == k->bid_size && !memcmp(o->build_id, k->bid, k->bid_size))
			   : (!o->build_id_size && !strcmp(o->path, k->path));
}

static struct uobj *find_obj(struct unwinder *u, const char *path, const u8 *bid, u8 bid_size)
{
	struct obj_key k = { path, bid, bid_size };
	s64 pos = hashidx__find(&u->objs_idx, obj_hash(path, bid, bid_size), &k, obj_eq, u);

	return pos < 0 ? NULL : &u->objs[pos];
}

/* the table by the file's identity too: the kernel finds a mapping the sideband has not brought
 * yet from the task's vma (kernel dev_t: major << 20 | minor); the vDSO (open_path NULL),
 * which has no file, under (0, 0) */
static void by_inode(struct unwinder *u, const char *open_path, struct uobj *o)
{
	struct unwind_inode v = { .obj = o->kobj };
	struct unwind_inode_key k = {};
	struct stat sb;

	if (open_path) {
		if (stat(open_path, &sb))
			return;
		k.dev = (u64)major(sb.st_dev) << 20 | minor(sb.st_dev);
		k.ino = sb.st_ino;
	}
	for (int i = 0; i < o->nr_segs && i < HSBPF_INODE_SEGS; i++) {
		v.seg[i].offset = o->segs[i].offset;
		v.seg[i].vaddr = o->segs[i].vaddr;
		v.seg[i].filesz = o->segs[i].filesz;
		v.nr_segs++;
	}
	if (sampler__unwind_inode(u->s, &k, &v)) {
		debug("unwind: '%s' cannot be found by inode", open_path);
		return;
	}
	o->by_inode = true;
	o->ikey = k;
}

/* a new object, without a table yet; NULL for -ENOMEM */
static struct uobj *new_obj(struct unwinder *u, const char *path, const u8 *bid, u8 bid_size)
{
	struct uobj *o;

	if (array__reserve((void **)&u->objs, &u->cap_objs, u->nr_objs + 1, sizeof(*u->objs)))
		return NULL;
	o = &u->objs[u->nr_objs];
	memset(o, 0, sizeof(*o));
	o->path = strdup(path);
	if (!o->path)
		return NULL;
	if (hashidx__insert(&u->objs_idx, obj_hash(path, bid, bid_size), u->nr_objs)) {
		free(o->path);
		return NULL;
	}
	o->kobj = HSBPF_UNWIND_NO_OBJ;
	if (bid_size)	/* no build-id: no array either */
		memcpy(o->build_id, bid, bid_size);
	o->build_id_size = bid_size;
	u->nr_objs++;
	return o;
}

/* the job's table (built here or by the worker) into the kernel for o */
static void load_obj(struct unwinder *u, struct uobj *o, const struct table_job *j)
{
	struct unwind_table *t = j->table;
	u64 t0 = now_ns(CLOCK_MONOTONIC), load_ns;
	int err = j->err;

	if (err == -ESTALE) {
		u->st.objects_failed++;
		debug("unwind: '%s' is not the build that was mapped: frame pointers there", o->path);
	} else if (err == -ENODATA) {
		u->st.objects_no_cfi++;
	} else if (err) {
		u->st.objects_failed++;
		debug("unwind: cannot read '%s': %s", o->path, strerror(-err));
	} else {
		memcpy(o->segs, t->segs, sizeof(o->segs));
		o->nr_segs = t->nr_segs;
		err = sampler__unwind_add_object(u->s, t, &o->kobj);
		if (err == -ENOSPC) {
			u->st.objects_full++;
			debug("unwind: the table of '%s' (%zu rows) does not fit the kernel's arrays",
			      o->path, t->nr_rows);
		} else if (err) {
			u->st.objects_failed++;
			debug("unwind: cannot load the table of '%s': %s", o->path, strerror(-err));
		} else {
			if (verbose)
				debug("unwind: '%s' has table %u in map %u (%zu rows, %s in %" PRIu64
				      " ms, loaded in %" PRIu64 " ms)", o->path, o->kobj,
				      sampler__unwind_objs_map_id(u->s), t->nr_rows,
				      j->cached ? "read from the build-id cache" : "built",
				      j->build_ns / 1000000, (now_ns(CLOCK_MONOTONIC) - t0) / 1000000);
			u->st.objects_cached += j->cached;
			u->st.objects_kept += j->kept;
			by_inode(u, strcmp(o->path, "[vdso]") ? j->open_path : NULL, o);
			u->st.objects++;
			u->st.rows += t->nr_rows;
			u->st.table_bytes += t->nr_rows * sizeof(*t->rows) +
					     t->nr_pages * (sizeof(*t->pages) + sizeof(*t->subs));
		}
	}
	/* a stale file is not counted as a build (it was not built) */
	if (j->err != -ESTALE) {
		load_ns = now_ns(CLOCK_MONOTONIC) - t0;
		u->st.load_ns += load_ns;
		u->st.build_ns += j->build_ns + load_ns;
	}
}

/* build and load, here and now, the table of the file at open_path (known to the process as
 * path) */
static struct uobj *add_obj(struct unwinder *u, const char *path, const char *open_path,
			    const u8 *bid, u8 bid_size)
{
	struct table_job *j = table_job__new(path, open_path, bid, bid_size);
	struct uobj *o = j ? new_obj(u, path, bid, bid_size) : NULL;

	if (o) {
		j->cache = u->table_cache;
		table_job__run(j);
		load_obj(u, o, j);
	}
	table_job__free(j);
	return o;
}

/* where to read what pid maps at path: through its root (a container's files are in its
 * mount namespace), or its map_files entry when the file was deleted */
static void open_path(u32 pid, const char *path, u64 start, u64 end, char *buf, size_t size)
{
	size_t n = strlen(path);
	const char *deleted = " (deleted)";

	if (pid && n > strlen(deleted) && !strcmp(path + n - strlen(deleted), deleted)) {
		snprintf(buf, size, "/proc/%u/map_files/%llx-%llx", pid, (unsigned long long)start,
			 (unsigned long long)end);
		return;
	}
	snprintf(buf, size, "/proc/%u/root%s", pid, path);
	if (!pid || access(buf, R_OK))
		snprintf(buf, size, "%s", path);
}

/* ---- processes ---- */

static struct uproc *find_proc(struct unwinder *u, u32 pid, bool create)
{
	size_t i = 0, hi = u->nr_procs;

	while (i < hi) {
		size_t mid = (i + hi) / 2;

		if (u->procs[mid].pid < pid)
			i = mid + 1;
		else
			hi = mid;
	}
	if (i < u->nr_procs && u->procs[i].pid == pid)
		return &u->procs[i];
	if (!create || array__reserve((void **)&u->procs, &u->cap_procs, u->nr_procs + 1, sizeof(*u->procs)))
		return NULL;
	memmove(&u->procs[i + 1], &u->procs[i], (u->nr_procs - i) * sizeof(*u->procs));
	memset(&u->procs[i], 0, sizeof(u->procs[i]));
	u->procs[i].pid = pid;
	u->nr_procs++;
	return &u->procs[i];
}

struct trie_ctx {
	struct unwinder *u;
	u32 pid, tag;
	const struct unwind_mapping *m;	/* NULL: delete */
	int err;
};

static void trie_block(void *ctx, u64 addr, int bits)
{
	struct trie_ctx *c = ctx;
	struct unwind_map_key k = {
		.prefixlen = 64 + (64 - bits),
		.pid_be = __builtin_bswap32(c->pid),
		.tag_be = __builtin_bswap32(c->tag),
		.addr_hi_be = __builtin_bswap32(addr >> 32),
		.addr_lo_be = __builtin_bswap32((u32)addr),
	};
	int err;

	if (c->m) {
		err = sampler__unwind_map(c->u->s, &k, c->m);
		if (err == -ENOSPC || err == -E2BIG)
			c->u->st.map_full++;
		else if (!err)
			c->u->st.map_entries++;
	} else {
		err = sampler__unwind_unmap(c->u->s, &k);
	}
	if (err && !c->err)
		c->err = err;
}

static int trie_put(struct unwinder *u, u32 pid, u32 tag, const struct umap *um, bool add)
{
	struct trie_ctx c = { u, pid, tag, add ? &um->m : NULL, 0 };

	unwind__blocks(um->start, um->end, trie_block, &c);
	return c.err == -ENOSPC || c.err == -E2BIG ? 0 : c.err;
}

static void forget_maps(struct unwinder *u, struct uproc *p)
{
	for (size_t i = 0; i < p->nr; i++)
		trie_put(u, p->pid, p->tag, &p->maps[i], false);
	p->nr = 0;
}

static int add_map(struct unwinder *u, struct uproc *p, const struct umap *um)
{
	int err;

	for (size_t i = 0; i < p->nr; i++)	/* a mapping made again over an old one */
		if (p->maps[i].start < um->end && um->start < p->maps[i].end) {
			trie_put(u, p->pid, p->tag, &p->maps[i], false);
			p->maps[i--] = p->maps[--p->nr];
		}
	if (array__reserve((void **)&p->maps, &p->cap, p->nr + 1, sizeof(*p->maps)))
		return -ENOMEM;
	err = trie_put(u, p->pid, p->tag, um, true);
	if (err)
		return err;
	debug("unwind: pid %u tag %#x: %#llx-%#llx obj %d", p->pid, p->tag,
	      (unsigned long long)um->start, (unsigned long long)um->end, (int)um->m.obj);
	p->maps[p->nr++] = *um;
	u->st.mappings++;
	return 0;
}

int unwinder__mmap(struct unwinder *u, u32 pid, u64 start, u64 len, u64 pgoff, bool exec,
		   const char *path, const u8 *build_id, u8 build_id_size, u64 time_ns)
{
	u64 exec_ns = sampler__image_exec_ns(u->s, pid);
	const struct unwind_segment *seg = NULL;
	struct umap um = { start, start + len };
	char where[PATH_MAX + 64];
	struct uproc *p;
	struct uobj *o;

	if (!exec || !path || (path[0] != '/' && strcmp(path, "[vdso]")) || !len)
		return 0;	/* data, anonymous memory, [vsyscall]: nothing to unwind by table */
	if (u->by_vma) {
		/* the table once per object (by build-id): the kernel finds the rest */
		if (!find_obj(u, path, build_id, build_id_size)) {
			open_path(pid, path, start, start + len, where, sizeof(where));
			if (!add_obj(u, path, where, build_id, build_id_size))
				return -ENOMEM;
		}
		return 0;
	}
	p = find_proc(u, pid, true);
	if (!p)
		return -ENOMEM;
	if (time_ns && time_ns < p->exec_time) {
		u->st.stale++;	/* the image it belonged to is gone */
		return 0;
	}
	/* where the kernel tags a new image at sched_process_exec, after the exec has mapped the
	 * program and its interpreter, the mapping waits until then; a tag taken at the exec's
	 * rename is in place before the exec's COMM record is written */
	if (p->exec_time && !sampler__exec_tags_before_comm(u->s) && exec_ns < p->exec_time) {
		struct pending_map *pm;

		if (array__reserve((void **)&u->pending, &u->cap_pending, u->nr_pending + 1, sizeof(*pm)))
			return -ENOMEM;
		pm = &u->pending[u->nr_pending];
		*pm = (struct pending_map){ .pid = pid, .start = start, .len = len, .pgoff = pgoff,
					    .time_ns = time_ns, .path = strdup(path),
					    .build_id_size = build_id_size < 20 ? build_id_size : 20 };
		if (!pm->path)
			return -ENOMEM;
		memcpy(pm->build_id, build_id, pm->build_id_size);
		u->nr_pending++;
		debug("unwind: pid %u: %s waits for its exec (%llu < %llu)", pid, path,
		      (unsigned long long)exec_ns, (unsigned long long)p->exec_time);
		return 0;
	}
	o = find_obj(u, path, build_id, build_id_size);
	if (!o) {
		open_path(pid, path, start, start + len, where, sizeof(where));
		o = add_obj(u, path, where, build_id, build_id_size);
		if (!o)
			return -ENOMEM;
	}
	for (int i = 0; i < o->nr_segs && !seg; i++) {
		const struct unwind_segment *sg = &o->segs[i];

		if (pgoff >= (sg->offset & ~0xfffull) && pgoff < sg->offset + sg->filesz)
			seg = sg;
	}
	um.m = (struct unwind_mapping){ .start = start, .end = start + len, .obj = HSBPF_UNWIND_NO_OBJ };
	if (seg && o->kobj != HSBPF_UNWIND_NO_OBJ) {
		um.m.obj = o->kobj;
		um.m.bias = start - pgoff + seg->offset - seg->vaddr;
	}
	p = find_proc(u, pid, true);	/* add_obj may have moved nothing, but be sure */
	if (!p)
		return -ENOMEM;
	if (p->nr && p->tag != (u32)exec_ns)
		forget_maps(u, p);	/* an exec we were not told of yet */
	p->tag = exec_ns;
	return add_map(u, p, &um);
}

int unwinder__fork(struct unwinder *u, u32 pid, u32 ppid)
{
	struct uproc *parent = find_proc(u, ppid, false), *child;
	int err = 0;

	if (u->by_vma)
		return 0;	/* nothing followed, nothing linked */

	if (parent && parent->nr) {
		child = find_proc(u, pid, true);
		parent = find_proc(u, ppid, false);	/* the array may have moved */
		if (!child || !parent)
			return -ENOMEM;
		forget_maps(u, child);
		child->tag = sampler__image_exec_ns(u->s, pid);
		for (size_t i = 0; i < parent->nr && !err; i++)
			err = add_map(u, child, &parent->maps[i]);
	}
	sampler__unwind_forget_parent(u->s, pid);
	return err;
}

int unwinder__exec(struct unwinder *u, u32 pid, u64 time_ns)
{
	struct uproc *p = find_proc(u, pid, true);

	if (!p)
		return -ENOMEM;
	forget_maps(u, p);
	p->exec_time = time_ns;
	return 0;
}

int unwinder__retry(struct unwinder *u)
{
	size_t kept = 0;
	int err = 0;

	for (size_t i = 0; i < u->nr_pending; i++) {
		struct pending_map *pm = &u->pending[i];
		struct uproc *p = find_proc(u, pm->pid, false);
		u64 exec_ns = sampler__image_exec_ns(u->s, pm->pid);

		if (p && p->exec_time && exec_ns < p->exec_time && procfs__alive(pm->pid)) {
			u->pending[kept++] = *pm;	/* still exec'ing */
			continue;
		}
		if (p && exec_ns >= p->exec_time) {
			struct pending_map m = *pm;
			u64 exec_time = p->exec_time;

			/* not queued again: the tag is known now */
			p->exec_time = 0;
			err = unwinder__mmap(u, m.pid, m.start, m.len, m.pgoff, true, m.path, m.build_id,
					     m.build_id_size, m.time_ns);
			p = find_proc(u, m.pid, false);	/* the array may have moved */
			if (p)
				p->exec_time = exec_time;
		}
		free(pm->path);
	}
	u->nr_pending = kept;
	return err;
}

int unwinder__exit(struct unwinder *u, u32 pid)
{
	struct uproc *p = find_proc(u, pid, false);
	size_t i;

	if (u->by_vma)
		return 0;	/* nothing followed, nothing linked */

	sampler__unwind_forget_parent(u->s, pid);
	if (!p)
		return 0;
	forget_maps(u, p);
	proc_free(p);
	i = p - u->procs;
	memmove(p, p + 1, (u->nr_procs - i - 1) * sizeof(*p));
	u->nr_procs--;
	return 0;
}

static int cmp_pid(const void *a, const void *b)
{
	u32 x = *(const u32 *)a, y = *(const u32 *)b;

	return x < y ? -1 : x > y;
}

int unwinder__keep(struct unwinder *u, const u32 *pids, size_t nr)
{
	for (size_t i = u->nr_procs; i-- > 0;)
		if (!bsearch(&u->procs[i].pid, pids, nr, sizeof(*pids), cmp_pid))
			unwinder__exit(u, u->procs[i].pid);
	return 0;
}

/* ---- tables for what is sampled, and freed when nothing maps them ---- */

int unwinder__want(struct unwinder *u, u32 pid, u64 start, u64 len, const char *path,
		   const u8 *build_id, u8 build_id_size)
{
	struct wanted *w;

	if (!u->by_vma || !path || (path[0] != '/' && strcmp(path, "[vdso]")) || !len ||
	    find_obj(u, path, build_id, build_id_size))
		return 0;
	for (size_t i = 0; i < u->nr_wanted; i++) {
		w = &u->wanted[i];
		if (build_id_size ? (w->build_id_size == build_id_size &&
				     !memcmp(w->build_id, build_id, build_id_size))
				  : (!w->build_id_size && !strcmp(w->path, path)))
			return 0;
	}
	if (array__reserve((void **)&u->wanted, &u->cap_wanted, u->nr_wanted + 1, sizeof(*w)))
		return -ENOMEM;
	w = &u->wanted[u->nr_wanted];
	*w = (struct wanted){ .pid = pid, .start = start, .len = len, .path = strdup(path),
			      .build_id_size = build_id_size < BUILD_ID_MAX ? build_id_size : BUILD_ID_MAX };
	if (!w->path)
		return -ENOMEM;
	memcpy(w->build_id, build_id, w->build_id_size);
	u->nr_wanted++;
	u->st.wanted++;
	return 0;
}

static void drop_obj(struct unwinder *u, size_t i);

/* the worker's finished tables into the kernel, for at most budget_ns (at least one): a
 * table whose object was forgotten meanwhile (nothing maps it any more) is dropped */
static void load_built(struct unwinder *u, u64 budget_ns)
{
	u64 deadline = now_ns(CLOCK_MONOTONIC) + budget_ns;
	struct table_job *j;

	while ((j = table_worker__take(u->worker))) {
		struct uobj *o = find_obj(u, j->path, j->build_id, j->build_id_size);

		if (o && o->building && (j->err == -ENOENT || j->err == -ESRCH)) {
			/* nothing to open any more (a deleted file whose processes ended): known
			 * no longer, so that a process mapping it again wants it again */
			debug("unwind: '%s' could not be opened (%s): wanted again if sampled again",
			      o->path, strerror(-j->err));
			drop_obj(u, o - u->objs);
		} else if (o && o->building) {
			o->building = false;
			load_obj(u, o, j);
		}
		table_job__free(j);
		if (now_ns(CLOCK_MONOTONIC) >= deadline)
			break;
	}
}

int unwinder__build_wanted(struct unwinder *u, u64 budget_ns)
{
	char where[PATH_MAX + 64];
	int err = 0;

	if (!u->worker && u->nr_wanted) {
		u->worker = table_worker__new();
		if (!u->worker)
			return -errno;
	}
	for (size_t i = 0; i < u->nr_wanted; i++) {
		struct wanted *w = &u->wanted[i];
		struct table_job *j;
		struct uobj *o;

		if (!err && !find_obj(u, w->path, w->build_id, w->build_id_size)) {
			/* known from now on (not queued again), without a table until it is built */
			open_path(w->pid, w->path, w->start, w->start + w->len, where, sizeof(where));
			j = table_job__new(w->path, where, w->build_id, w->build_id_size);
			o = j ? new_obj(u, w->path, w->build_id, w->build_id_size) : NULL;
			if (o) {
				o->building = true;
				j->cache = u->table_cache;
				table_worker__submit(u->worker, j);
			} else {
				table_job__free(j);
				err = -ENOMEM;
			}
		}
		free(w->path);
	}
	u->nr_wanted = 0;
	if (u->worker)
		load_built(u, budget_ns);
	return err;
}

size_t unwinder__nr_wanted(const struct unwinder *u)
{
	return u->nr_wanted + (u->worker ? table_worker__busy(u->worker) : 0);
}

/* an object no process mapped at this many release_unmapped calls in a row is freed */
#define UNMAPPED_CALLS 3

/* objs[i] gone: its kernel table unloaded (the inode entry first, so that no new walk finds
 * it), the last object moved into its place */
static void drop_obj(struct unwinder *u, size_t i)
{
	struct uobj *o = &u->objs[i];
	size_t last = u->nr_objs - 1;

	if (o->by_inode)
		sampler__unwind_forget_inode(u->s, &o->ikey);
	if (o->kobj != HSBPF_UNWIND_NO_OBJ && !sampler__unwind_remove_object(u->s, o->kobj))
		u->st.objects--;
	hashidx__delete(&u->objs_idx, obj_hash(o->path, o->build_id, o->build_id_size), i);
	free(o->path);
	if (i != last) {
		struct uobj *l = &u->objs[last];

		hashidx__move(&u->objs_idx, obj_hash(l->path, l->build_id, l->build_id_size), last, i);
		*o = *l;
	}
	u->nr_objs--;
}

/* ... counted as freed: nothing maps it any more */
static void free_obj(struct unwinder *u, size_t i)
{
	drop_obj(u, i);
	u->st.objects_freed++;
}

size_t unwinder__release_unmapped(struct unwinder *u, const struct profile *p)
{
	size_t freed = 0;

	if (!u->by_vma)
		return 0;	/* the trie's mappings name the objects: they go with their processes */
	for (size_t i = 0; i < u->nr_objs; i++)
		u->objs[i].unmapped++;
	for (size_t i = 0; i < p->nr_mappings; i++) {
		const struct profile_mapping *m = &p->mappings[i];
		struct uobj *o = find_obj(u, profile__str(p, m->path), m->build_id, m->build_id_size);

		if (o)
			o->unmapped = 0;
	}
	for (size_t i = u->nr_objs; i-- > 0;) {
		/* the vDSO is every process's; a program run again and again (a compiler) keeps
		 * its table across the moments when no copy of it runs */
		if (u->objs[i].unmapped < UNMAPPED_CALLS || !strcmp(u->objs[i].path, "[vdso]"))
			continue;
		debug("unwind: '%s' is mapped no more: table %d unloaded", u->objs[i].path,
		      (int)u->objs[i].kobj);
		free_obj(u, i);
		freed++;
	}
	return freed;
}

/* ---- before a command runs ---- */

static void prepare_one(struct unwinder *u, const char *path)
{
	u8 bid[BUILD_ID_MAX];
	size_t n = 0;

	if (build_id__read(path, bid, sizeof(bid), &n) && n == 0)
		n = 0;
	if (!find_obj(u, path, bid, n) && !add_obj(u, path, path, bid, n))
		debug("unwind: cannot prepare '%s'", path);
}

/* the interpreter a program names (PT_INTERP), "" for none */
static void interpreter(const char *program, char *buf, size_t size)
{
	Elf *elf = NULL;
	size_t n, len;
	int fd;

	buf[0] = 0;
	fd = open(program, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && !elf_getphdrnum(elf, &n)) {
		for (size_t i = 0; i < n; i++) {
			GElf_Phdr ph;
			char *raw;

			if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_INTERP)
				continue;
			raw = elf_rawfile(elf, &len);
			if (raw && ph.p_offset < len && ph.p_filesz < size && ph.p_filesz <= len - ph.p_offset) {
				memcpy(buf, raw + ph.p_offset, ph.p_filesz);
				buf[ph.p_filesz] = 0;
			}
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
}

/* the file execvp would run for name */
static bool which(const char *name, char *buf, size_t size)
{
	const char *path = getenv("PATH");
	char *copy, *dir, *save = NULL;
	bool found = false;

	if (strchr(name, '/')) {
		snprintf(buf, size, "%s", name);
		return true;
	}
	copy = strdup(path ? path : "/usr/local/bin:/usr/bin:/bin");
	if (!copy)
		return false;
	for (dir = strtok_r(copy, ":", &save); dir && !found; dir = strtok_r(NULL, ":", &save)) {
		snprintf(buf, size, "%s/%s", *dir ? dir : ".", name);
		found = !access(buf, X_OK);
	}
	free(copy);
	return found;
}

int unwinder__prepare(struct unwinder *u, const char *name)
{
	char program[PATH_MAX], interp[PATH_MAX], line[PATH_MAX + 128];
	int pipefd[2], st;
	pid_t child;
	FILE *f;

	if (!which(name, program, sizeof(program)))
		return 0;	/* the exec will fail and say so */
	interpreter(program, interp, sizeof(interp));
	prepare_one(u, program);
	if (!interp[0])
		return 0;	/* static, or not ELF (a script): its mappings bring the tables */
	prepare_one(u, interp);
	/* ld.so --list maps the libraries the program needs and prints where, running none of
	 * the program's code */
	if (pipe2(pipefd, O_CLOEXEC))
		return -errno;
	child = fork();
	if (child < 0) {
		close(pipefd[0]);
		close(pipefd[1]);
		return -errno;
	}
	if (!child) {
		int null = open("/dev/null", O_RDWR);

		dup2(pipefd[1], STDOUT_FILENO);
		if (null >= 0) {
			dup2(null, STDIN_FILENO);
			dup2(null, STDERR_FILENO);
		}
		execl(interp, interp, "--list", program, (char *)NULL);
		_exit(127);
	}
	close(pipefd[1]);
	f = fdopen(pipefd[0], "r");
	while (f && fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "=> "), *end;

		p = p ? p + 3 : line + strspn(line, " \t");
		if (*p != '/')
			continue;
		end = strstr(p, " (0x");
		if (end)
			*end = 0;
		p[strcspn(p, "\n")] = 0;
		prepare_one(u, p);
	}
	if (f)
		fclose(f);
	else
		close(pipefd[0]);
	waitpid(child, &st, 0);
	return 0;
}
