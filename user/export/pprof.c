// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* pprof export: report's resolved stacks as profile.proto's samples, locations, functions and
 * mappings, packed by protobuf-c and gzipped by zlib. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "record/container_id.h"
#include "lib/hashidx.h"
#include "hsbpf.h"
#include "export/pprof.h"
#include "report/sample_filter.h"
#include "record/offcpu.h"
#include "record/memory.h"
#include "profile.pb-c.h"

typedef Perftools__Profiles__Profile PbProfile;
typedef Perftools__Profiles__Sample PbSample;
typedef Perftools__Profiles__Label PbLabel;
typedef Perftools__Profiles__Location PbLocation;
typedef Perftools__Profiles__Line PbLine;
typedef Perftools__Profiles__Function PbFunction;
typedef Perftools__Profiles__Mapping PbMapping;
typedef Perftools__Profiles__ValueType PbValueType;

/* labels a sample can have: pid, comm, tid and thread (profiles keyed by thread), cgroup,
 * container, an off-CPU block's state */
#define MAX_LABELS 10
/* values a sample can have: samples and CPU time; or off-CPU time (--off-cpu); or CPU time,
 * off-CPU time and their sum (--wall); or a heap profile's four (--memory) */
#define MAX_VALUES 4

struct builder {
	const struct callchain *cc;
	struct symbolizer *sy;
	/* the string table: index 0 is "" */
	char **strs;
	size_t nr_strs, cap_strs;
	struct hashidx str_idx;
	/* mappings; their key: what the process mapped (the same library in two processes at
	 * the same place is one mapping) */
	PbMapping *maps;
	const struct profile_mapping **map_src;	/* NULL: the kernel's */
	size_t nr_maps, cap_maps, cap_map_src;
	struct hashidx map_idx;
	/* locations, keyed by (mapping, address, looked up as a return address) */
	PbLocation *locs;
	u64 *loc_key;			/* per location: the address, then mapping and flag */
	u32 *loc_line;			/* per location: its first line */
	size_t nr_locs, cap_locs, cap_loc_key, cap_loc_line;
	struct hashidx loc_idx;
	PbLine *lines;			/* each location's, inlined functions first */
	size_t nr_lines, cap_lines;
	/* functions: the callchain's, id func + 1; then one for lost stacks (lost_func); then
	 * the inlined functions, indexed by name */
	PbFunction *funcs;
	size_t nr_funcs, cap_funcs;
	u64 lost_func;
	struct hashidx inline_idx;
	/* samples */
	PbSample *samples;
	u64 *loc_ids;			/* every sample's location ids, one array */
	int64_t *values;		/* nr_values per sample */
	size_t nr_values;
	bool offcpu, wall;		/* the profile's off-CPU time: report's time view */
	bool memory;			/* sampled allocations, the four views (memory__select_all) */
	PbLabel *labels;		/* MAX_LABELS per sample */
	PbLabel **label_ptrs;
};

/* ---- string table ---- */

struct str_key {
	const char *s;
};

static bool str_eq(const void *key, u32 pos, void *ctx)
{
	const struct builder *b = ctx;

	return !strcmp(((const struct str_key *)key)->s, b->strs[pos]);
}

/* the index of s in the string table, added if new; -ENOMEM */
static s64 str_index(struct builder *b, const char *s)
{
	struct str_key k = { s ? s : "" };
	u64 h = hashidx__hash_str(k.s, 0);
	s64 pos = hashidx__find(&b->str_idx, h, &k, str_eq, b);
	char *copy;

	if (pos >= 0)
		return pos;
	if (array__reserve((void **)&b->strs, &b->cap_strs, b->nr_strs + 1, sizeof(*b->strs)))
		return -ENOMEM;
	copy = strdup(k.s);
	if (!copy)
		return -ENOMEM;
	if (hashidx__insert(&b->str_idx, h, b->nr_strs)) {
		free(copy);
		return -ENOMEM;
	}
	b->strs[b->nr_strs] = copy;
	return b->nr_strs++;
}

/* ---- frames' names ---- */

const char *pprof__frame_name(const struct callchain_frame *f, char *buf, size_t size)
{
	if (!f->sym)
		return PPROF_LOST_FRAME;
	if (strcmp(f->sym, "[unknown]"))
		return f->sym;	/* whole, however long */
	snprintf(buf, size, "[unknown in %s]", f->dso ? path__base(f->dso) : "?");
	return buf;
}

/* ---- mappings ---- */

struct map_key {
	const struct profile_mapping *m;	/* NULL: the kernel */
	const char *path;
};

static bool map_eq(const void *key, u32 pos, void *ctx)
{
	const struct map_key *k = key;
	const struct builder *b = ctx;
	const struct profile_mapping *o = b->map_src[pos];

	if (!k->m || !o)
		return k->m == o;
	return k->m->start == o->start && k->m->len == o->len && k->m->pgoff == o->pgoff &&
	       !strcmp(k->path, profile__str(b->cc->p, o->path));
}

static u64 map_hash(const struct map_key *k)
{
	if (!k->m)
		return hashidx__hash_u64(0, 1);
	return hashidx__hash_str(k->path, hashidx__hash_u64(k->m->start,
				 hashidx__hash_u64(k->m->len, k->m->pgoff)));
}

static void hex(const u8 *id, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", id[i]);
	out[2 * n] = 0;
}

/* the id of the frame's mapping (made if new), 0 for a user address in none; -ENOMEM */
static s64 mapping_id(struct builder *b, const struct callchain_stack *st,
		      const struct callchain_frame *f)
{
	const struct profile_mapping *m = NULL;
	struct map_key k = {};
	s64 pos, name, bid = 0;
	u64 h;

	if (!f->kernel) {
		m = profile__find_mapping(b->cc->p, st->pid, st->exec_ns, st->map_ns, f->ip);
		if (!m)
			return 0;
		k.m = m;
		k.path = profile__str(b->cc->p, m->path);
	}
	h = map_hash(&k);
	pos = hashidx__find(&b->map_idx, h, &k, map_eq, b);
	if (pos >= 0) {
		PbMapping *pm = &b->maps[pos];

		if (f->kernel && f->ip < pm->memory_start)
			pm->memory_start = f->ip;
		if (f->kernel && f->ip >= pm->memory_limit)
			pm->memory_limit = f->ip + 1;
		return pos + 1;
	}
	name = str_index(b, m ? k.path : "[kernel.kallsyms]");
	if (m && m->build_id_size) {
		char id[2 * BUILD_ID_MAX + 1];

		hex(m->build_id, m->build_id_size, id);
		bid = str_index(b, id);
	}
	if (name < 0 || bid < 0 ||
	    array__reserve((void **)&b->maps, &b->cap_maps, b->nr_maps + 1, sizeof(*b->maps)) ||
	    array__reserve((void **)&b->map_src, &b->cap_map_src, b->nr_maps + 1, sizeof(*b->map_src)) ||
	    hashidx__insert(&b->map_idx, h, b->nr_maps))
		return -ENOMEM;
	perftools__profiles__mapping__init(&b->maps[b->nr_maps]);
	b->maps[b->nr_maps] = (PbMapping){
		.base = b->maps[b->nr_maps].base,
		.id = b->nr_maps + 1,
		.memory_start = m ? m->start : f->ip,
		.memory_limit = m ? m->start + m->len : f->ip + 1,
		.file_offset = m ? m->pgoff : 0,
		.filename = name, .build_id = bid,
		/* hsbpf symbolized it, unknown code too: with false, pprof runs binutils over the
		 * mapping's file again (minutes for a few objects on a busy machine) */
		.has_functions = true, .has_filenames = m != NULL, .has_line_numbers = m != NULL,
	};
	b->map_src[b->nr_maps] = m;
	return ++b->nr_maps;
}

/* ---- locations ---- */

static bool loc_eq(const void *key, u32 pos, void *ctx)
{
	const u64 *k = key;
	const struct builder *b = ctx;

	return !memcmp(k, &b->loc_key[2 * pos], 2 * sizeof(*k));
}

static bool inline_eq(const void *key, u32 pos, void *ctx)
{
	const struct builder *b = ctx;

	return b->funcs[pos].name == *(const s64 *)key;
}

/* the id of the inlined function of that name, made if new; -ENOMEM */
static s64 inline_func(struct builder *b, const char *name)
{
	s64 s = str_index(b, name), pos;
	u64 h = hashidx__hash_u64(s, 0);

	if (s < 0)
		return s;
	pos = hashidx__find(&b->inline_idx, h, &s, inline_eq, b);
	if (pos >= 0)
		return pos + 1;
	if (array__reserve((void **)&b->funcs, &b->cap_funcs, b->nr_funcs + 1, sizeof(*b->funcs)) ||
	    hashidx__insert(&b->inline_idx, h, b->nr_funcs))
		return -ENOMEM;
	perftools__profiles__function__init(&b->funcs[b->nr_funcs]);
	b->funcs[b->nr_funcs].id = b->nr_funcs + 1;
	b->funcs[b->nr_funcs].name = b->funcs[b->nr_funcs].system_name = s;
	return ++b->nr_funcs;
}

static PbLine *new_line(struct builder *b, u64 func, s64 lineno)
{
	PbLine *l;

	if (array__reserve((void **)&b->lines, &b->cap_lines, b->nr_lines + 1, sizeof(*b->lines)))
		return NULL;
	l = &b->lines[b->nr_lines++];
	perftools__profiles__line__init(l);
	l->function_id = func;
	l->line = lineno;
	return l;
}

/* the lines of a user location with DWARF: the functions inlined there, innermost first,
 * then the frame's own function; each at its line (an inlined function's caller at the line
 * it was inlined at); -ENOMEM */
static int add_lines(struct builder *b, PbLocation *l, const struct callchain_frame *f)
{
	struct sym_inline inl[32];
	const char *file;
	int lineno = 0, n;
	s64 s;

	if (symbolizer__line(b->sy, f->dso, f->vaddr, &file, &lineno))
		return 0;
	n = symbolizer__inlines(b->sy, f->dso, f->vaddr, inl, ARRAY_SIZE(inl));
	for (int i = 0; i < n; i++) {
		s64 fn = inline_func(b, inl[i].name ? inl[i].name : "[inlined]");

		if (fn < 0 || !new_line(b, fn, lineno))
			return -ENOMEM;
		/* the line's file is the innermost function's */
		if (!i && !b->funcs[fn - 1].filename) {
			s = str_index(b, file);
			if (s < 0)
				return s;
			b->funcs[fn - 1].filename = s;
		}
		lineno = inl[i].call_line;
	}
	if (!n && !b->funcs[f->func].filename) {
		s = str_index(b, file);
		if (s < 0)
			return s;
		b->funcs[f->func].filename = s;
	}
	/* the first line was made as the frame's function's: it goes last */
	if (n) {
		PbLine first = b->lines[b->nr_lines - n - 1];

		memmove(&b->lines[b->nr_lines - n - 1], &b->lines[b->nr_lines - n], n * sizeof(*b->lines));
		b->lines[b->nr_lines - 1] = first;
		b->lines[b->nr_lines - 1].line = lineno;
	} else {
		b->lines[b->nr_lines - 1].line = lineno;
	}
	l->n_line = n + 1;
	return 0;
}

/* a Python frame's file and line (docs/python.md), as the recording named it; -ENOMEM */
static int python_line(struct builder *b, const struct callchain_stack *st, const struct callchain_frame *f)
{
	const struct profile_pyframe *y = profile__find_pyframe(b->cc->p, st->pid, f->ip);
	s64 s;

	if (!y)
		return 0;
	if (!b->funcs[f->func].filename) {
		s = str_index(b, profile__str(b->cc->p, y->file));
		if (s < 0)
			return s;
		b->funcs[f->func].filename = s;
	}
	b->lines[b->nr_lines - 1].line = y->line;
	return 0;
}

/* the id of a frame's location, made if new; -ENOMEM */
static s64 location_id(struct builder *b, const struct callchain_stack *st,
		       const struct callchain_frame *f)
{
	s64 map = f->sym ? mapping_id(b, st, f) : 0, pos;
	/* an address in no mapping is one location per process image: what it is depends on it */
	u64 key[2] = { f->ip, ((u64)map << 2) | (u64)f->return_address << 1 | !f->sym }, h;
	PbLocation *l;

	if (map < 0)
		return map;
	if (!map && f->sym && !f->kernel)
		key[1] ^= (u64)st->pid << 32;
	h = hashidx__hash(key, sizeof(key), 0);
	pos = hashidx__find(&b->loc_idx, h, key, loc_eq, b);
	if (pos >= 0)
		return pos + 1;
	if (array__reserve((void **)&b->locs, &b->cap_locs, b->nr_locs + 1, sizeof(*b->locs)) ||
	    array__reserve((void **)&b->loc_line, &b->cap_loc_line, b->nr_locs + 1, sizeof(*b->loc_line)) ||
	    array__reserve((void **)&b->loc_key, &b->cap_loc_key, 2 * b->nr_locs + 2, sizeof(*b->loc_key)) ||
	    hashidx__insert(&b->loc_idx, h, b->nr_locs))
		return -ENOMEM;
	memcpy(&b->loc_key[2 * b->nr_locs], key, sizeof(key));
	l = &b->locs[b->nr_locs];
	perftools__profiles__location__init(l);
	l->id = b->nr_locs + 1;
	l->mapping_id = map;
	l->address = f->ip;
	b->loc_line[b->nr_locs] = b->nr_lines;
	/* the frame's function, its line 0 until DWARF says */
	if (!new_line(b, f->sym ? f->func + 1 : b->lost_func, 0))
		return -ENOMEM;
	l->n_line = 1;
	if (!f->kernel && HSBPF_PY_IS_FRAME(f->ip)) {
		if (f->sym && python_line(b, st, f))
			return -ENOMEM;
	} else if (!f->kernel && f->sym && f->dso && strcmp(f->sym, "[unknown]") && add_lines(b, l, f)) {
		return -ENOMEM;
	}
	if (map && !b->lines[b->nr_lines - 1].line)
		b->maps[map - 1].has_line_numbers = b->maps[map - 1].has_filenames = false;
	return ++b->nr_locs;
}

/* ---- the whole message ---- */

static int add_functions(struct builder *b)
{
	const struct callchain *cc = b->cc;

	/* one more: the frame of a lost stack */
	b->nr_funcs = cc->nr_funcs + 1;
	b->lost_func = b->nr_funcs;
	if (array__reserve((void **)&b->funcs, &b->cap_funcs, b->nr_funcs, sizeof(*b->funcs)))
		return -ENOMEM;
	for (size_t i = 0; i < b->nr_funcs; i++) {
		perftools__profiles__function__init(&b->funcs[i]);
		b->funcs[i].id = i + 1;
	}
	for (size_t i = 0; i < cc->nr_frames; i++) {
		const struct callchain_frame *f = &cc->frames[i];
		PbFunction *fn = &b->funcs[f->func];
		char buf[NAME_MAX + 16];

		if (fn->name)
			continue;
		fn->name = fn->system_name = str_index(b, pprof__frame_name(f, buf, sizeof(buf)));
		if (fn->name < 0)
			return -ENOMEM;
	}
	b->funcs[cc->nr_funcs].name = b->funcs[cc->nr_funcs].system_name = str_index(b, PPROF_LOST_FRAME);
	return b->funcs[cc->nr_funcs].name < 0 ? -ENOMEM : 0;
}

static const char *cgroup_path(const struct profile *p, u64 id)
{
	for (size_t i = 0; i < p->nr_cgroups; i++)
		if (p->cgroups[i].id == id)
			return profile__str(p, p->cgroups[i].path);
	return NULL;
}

static int add_labels(struct builder *b, const struct callchain_stack *st, PbSample *s, PbLabel *lab,
		      PbLabel **ptrs)
{
	const struct profile *p = b->cc->p;
	const char *comm = symbolizer__comm(b->sy, st->pid, st->exec_ns);
	const char *cg = cgroup_path(p, st->cgroup_id);
	/* the sample's thread, when the recording keyed samples by thread */
	u32 tid = (p->nr_stack_samples ? profile__stack_sample_key(p, st->sample) :
				     profile__sample_key(p, st->sample))->tid;
	struct container_id ci;
	size_t n = 0;

	for (int i = 0; i < MAX_LABELS; i++) {
		perftools__profiles__label__init(&lab[i]);
		ptrs[i] = &lab[i];
	}
	lab[n].key = str_index(b, "pid");
	lab[n++].num = st->pid;
	if (comm && *comm) {
		lab[n].key = str_index(b, "comm");
		lab[n++].str = str_index(b, comm);
	}
	if (tid) {
		const char *thread = sample_filter__thread_comm(p, st->pid, tid, comm);

		lab[n].key = str_index(b, "tid");
		lab[n++].num = tid;
		if (thread && *thread) {
			lab[n].key = str_index(b, "thread");
			lab[n++].str = str_index(b, thread);
		}
	}
	if (offcpu__state(st->flags)) {
		lab[n].key = str_index(b, "state");
		lab[n++].str = str_index(b, offcpu__state_name(offcpu__state(st->flags)));
	}
	/* record --wakers: who woke the block, and from where (go tool pprof -tags) */
	if (st->woken) {
		u32 waker = profile__stack_sample_key(p, st->sample)->waker;
		char *frames = callchain__waker_folded(b->cc, st);

		if (!frames)
			return -ENOMEM;
		lab[n].key = str_index(b, "waker");
		lab[n++].str = str_index(b, callchain__waker_comm(st, b->sy));
		if (waker) {
			lab[n].key = str_index(b, "waker_tid");
			lab[n++].num = waker;
		}
		lab[n].key = str_index(b, "waker_stack");
		lab[n++].str = str_index(b, frames);
		free(frames);
	}
	if (cg) {
		lab[n].key = str_index(b, "cgroup");
		lab[n++].str = str_index(b, *cg ? cg : "/");
		if (!container_id__identify(cg, &ci)) {
			char text[256];

			container_id__describe(&ci, text, sizeof(text));
			lab[n].key = str_index(b, "container");
			lab[n++].str = str_index(b, text);
		}
	}
	for (size_t i = 0; i < n; i++)
		if (lab[i].key < 0 || lab[i].str < 0)
			return -ENOMEM;
	s->n_label = n;
	s->label = ptrs;
	return 0;
}

/* a sample's values, as set_value_types names them: an off-CPU profile's counts are
 * microseconds (report's time view), its weights ns; an allocation's are its objects and
 * bytes, made or in use at the end */
static void set_values(const struct builder *b, const struct callchain_stack *st, int64_t *v)
{
	bool off = st->flags & HSBPF_KEY_OFFCPU;

	if (b->memory) {
		bool inuse = memory__is_inuse(st->flags);

		v[0] = inuse ? 0 : st->count;
		v[1] = inuse ? 0 : st->weight;
		v[2] = inuse ? st->count : 0;
		v[3] = inuse ? st->weight : 0;
	} else if (b->wall) {
		v[0] = off ? 0 : st->weight;
		v[1] = off ? st->weight : 0;
		v[2] = st->weight;
	} else if (b->offcpu) {
		v[0] = st->weight;
	} else {
		v[0] = st->count;
		v[1] = st->weight;
	}
}

static int add_samples(struct builder *b)
{
	const struct callchain *cc = b->cc;
	size_t nr_ids = 0;

	for (size_t i = 0; i < cc->nr_stacks; i++)
		nr_ids += cc->stacks[i].nr ? cc->stacks[i].nr : 1;
	b->samples = calloc(cc->nr_stacks + 1, sizeof(*b->samples));
	b->loc_ids = calloc(nr_ids + 1, sizeof(*b->loc_ids));
	b->values = calloc(MAX_VALUES * cc->nr_stacks + 1, sizeof(*b->values));
	b->labels = calloc(MAX_LABELS * cc->nr_stacks + 1, sizeof(*b->labels));
	b->label_ptrs = calloc(MAX_LABELS * cc->nr_stacks + 1, sizeof(*b->label_ptrs));
	if (!b->samples || !b->loc_ids || !b->values || !b->labels || !b->label_ptrs)
		return -ENOMEM;
	/* pprof takes the first mapping for the program's: the outermost user frame's first */
	for (size_t i = 0; i < cc->nr_stacks; i++) {
		const struct callchain_stack *st = &cc->stacks[i];
		const struct callchain_frame *f = st->nr ? &cc->frames[st->first + st->nr - 1] : NULL;

		if (f && !f->kernel && f->sym) {
			if (mapping_id(b, st, f) < 0)
				return -ENOMEM;
			break;
		}
	}
	nr_ids = 0;
	for (size_t i = 0; i < cc->nr_stacks; i++) {
		const struct callchain_stack *st = &cc->stacks[i];
		PbSample *s = &b->samples[i];
		u64 *ids = &b->loc_ids[nr_ids];
		static const struct callchain_frame lost = {};

		perftools__profiles__sample__init(s);
		/* the callchain's order is pprof's: the sampled frame first */
		for (u32 j = 0; j < st->nr; j++) {
			s64 id = location_id(b, st, &cc->frames[st->first + j]);

			if (id < 0)
				return id;
			ids[j] = id;
		}
		if (!st->nr) {
			s64 id = location_id(b, st, &lost);

			if (id < 0)
				return id;
			ids[0] = id;
		}
		s->n_location_id = st->nr ? st->nr : 1;
		s->location_id = ids;
		nr_ids += s->n_location_id;
		s->n_value = b->nr_values;
		s->value = &b->values[b->nr_values * i];
		set_values(b, st, s->value);
		if (add_labels(b, st, s, &b->labels[MAX_LABELS * i], &b->label_ptrs[MAX_LABELS * i]))
			return -ENOMEM;
	}
	return 0;
}

static int gzip(const u8 *in, size_t len, u8 **out, size_t *out_len)
{
	z_stream z = {};
	size_t cap;
	u8 *buf;
	int ret;

	/* 15 + 16: a window of 32 KB with the gzip header and trailer */
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	cap = deflateBound(&z, len) + 64;	/* + the gzip header's */
	buf = malloc(cap);
	if (!buf) {
		deflateEnd(&z);
		return -ENOMEM;
	}
	z.next_in = (u8 *)in;
	z.avail_in = len;
	z.next_out = buf;
	z.avail_out = cap;
	ret = deflate(&z, Z_FINISH);
	*out_len = z.total_out;
	deflateEnd(&z);
	if (ret != Z_STREAM_END) {
		free(buf);
		return -ENOMEM;
	}
	*out = buf;
	return 0;
}

static void builder__free(struct builder *b)
{
	for (size_t i = 0; i < b->nr_strs; i++)
		free(b->strs[i]);
	free(b->strs);
	hashidx__free(&b->str_idx);
	free(b->maps);
	free(b->map_src);
	hashidx__free(&b->map_idx);
	free(b->locs);
	free(b->lines);
	free(b->loc_line);
	free(b->loc_key);
	hashidx__free(&b->inline_idx);
	hashidx__free(&b->loc_idx);
	free(b->funcs);
	free(b->samples);
	free(b->loc_ids);
	free(b->values);
	free(b->labels);
	free(b->label_ptrs);
}

/* the values' types: samples/count and cpu/nanoseconds (or the event's count); off_cpu/
 * nanoseconds (--off-cpu, as Go's and bcc's off-CPU profiles name it); cpu, off_cpu and wall
 * in nanoseconds (--wall: pprof shows the last, wall, unless -sample_index says another); a Go
 * heap profile's alloc_objects, alloc_space, inuse_objects and inuse_space, its period
 * space/bytes, shown first report's --sample-type (inuse_space without) */
static int set_value_types(struct builder *b, PbValueType *vt, PbValueType **vtp, PbProfile *pb)
{
	const struct profile_meta *m = &b->cc->p->meta;
	bool ns = !strcmp(m->unit, "ns");
	const char *names[2 * MAX_VALUES] = {
		"samples", "count",
		/* a clock's samples stand for CPU time; other events for their count */
		ns ? "cpu" : m->event[0] ? m->event : "events", ns ? "nanoseconds" : "events",
	};
	const char *off_names[] = { "off_cpu", "nanoseconds" };
	const char *wall_names[] = { "cpu", "nanoseconds", "off_cpu", "nanoseconds", "wall", "nanoseconds" };
	const char *heap_names[] = { "alloc_objects", "count", "alloc_space", "bytes",
				     "inuse_objects", "count", "inuse_space", "bytes" };

	if (b->memory)
		memcpy(names, heap_names, sizeof(heap_names));
	else if (b->wall)
		memcpy(names, wall_names, sizeof(wall_names));
	else if (b->offcpu)
		memcpy(names, off_names, sizeof(off_names));
	for (size_t i = 0; i < b->nr_values; i++) {
		s64 type = str_index(b, names[2 * i]), unit = str_index(b, names[2 * i + 1]);

		if (type < 0 || unit < 0)
			return -ENOMEM;
		perftools__profiles__value_type__init(&vt[i]);
		vt[i].type = type;
		vt[i].unit = unit;
		vtp[i] = &vt[i];
	}
	/* the period: the sampled event's; off-CPU time has none, each block its own; a heap
	 * profile's is bytes of space */
	vt[MAX_VALUES] = b->offcpu ? vt[0] : vt[1];
	if (b->memory) {
		s64 space = str_index(b, "space"), first = str_index(b, m->memory_first[0] ?
								  m->memory_first : "inuse_space");

		if (space < 0 || first < 0)
			return -ENOMEM;
		vt[MAX_VALUES].type = space;
		pb->default_sample_type = first;
	}
	pb->n_sample_type = b->nr_values;
	pb->sample_type = vtp;
	pb->period_type = &vt[MAX_VALUES];
	pb->period = m->alloc_period ? m->alloc_period : b->offcpu && !b->wall ? 0 : m->period;
	pb->time_nanos = m->start_realtime_ns;
	pb->duration_nanos = m->duration_ns;
	return 0;
}

/* what the reader should know: who wrote it, what was sampled, what is missing */
static int add_comments(struct builder *b, int64_t *c, PbProfile *pb)
{
	const struct profile *p = b->cc->p;
	char text[sizeof(((struct profile_meta *)0)->target) + 512];
	size_t n = 0;

	if (b->offcpu && !b->wall)	/* no event was sampled */
		snprintf(text, sizeof(text), "%s; off-CPU time, measured at every context switch; "
			 "target %s", p->meta.version, p->meta.target);
	else if (b->memory)		/* nor is one here: allocations are, by bytes */
		snprintf(text, sizeof(text), "%s; allocations sampled by bytes, one per %" PRIu64
			 " bytes on average (record --memory); target %s", p->meta.version,
			 p->meta.alloc_period, p->meta.target);
	else
		snprintf(text, sizeof(text), "%s; event %s, %s period %" PRIu64 "%s; target %s",
			 p->meta.version, p->meta.event, p->meta.period_mode, p->meta.period,
			 b->wall ? ", and off-CPU time" : "", p->meta.target);
	c[n++] = str_index(b, text);
	if (p->nr_stack_samples && p->stats.stack_keys_full) {
		snprintf(text, sizeof(text), "%" PRIu64 " samples are not here: the stack-sample map "
			 "was full (they are in hsbpf report's flat profile)", p->stats.stack_keys_full);
		c[n++] = str_index(b, text);
	}
	if (p->stats.dropped_full) {
		snprintf(text, sizeof(text), "%" PRIu64 " samples dropped: the sample map was full",
			 p->stats.dropped_full);
		c[n++] = str_index(b, text);
	}
	for (size_t i = 0; i < n; i++)
		if (c[i] < 0)
			return -ENOMEM;
	pb->n_comment = n;
	pb->comment = c;
	return 0;
}

int pprof__encode(const struct callchain *cc, struct symbolizer *sy, u8 **out, size_t *out_len)
{
	struct builder b = { .cc = cc, .sy = sy };
	PbProfile pb = PERFTOOLS__PROFILES__PROFILE__INIT;
	PbValueType vt[MAX_VALUES + 1], *vtp[MAX_VALUES];
	int64_t comments[3];
	PbLine **line_ptrs = NULL;
	void **ptrs = NULL;
	u8 *packed = NULL;
	size_t len, n = 0;
	int err = -ENOMEM;

	b.offcpu = cc->p->meta.offcpu[0] != 0;
	b.wall = !strcmp(cc->p->meta.offcpu, "wall");
	b.memory = cc->p->meta.alloc_period != 0;
	b.nr_values = b.memory ? 4 : b.wall ? 3 : b.offcpu ? 1 : 2;
	if (str_index(&b, "") != 0 || add_functions(&b) || add_samples(&b) ||
	    set_value_types(&b, vt, vtp, &pb) || add_comments(&b, comments, &pb))
		goto cleanup;
	/* protobuf-c takes arrays of pointers to the repeated messages */
	ptrs = calloc(cc->nr_stacks + b.nr_maps + b.nr_locs + b.nr_funcs + 1, sizeof(*ptrs));
	if (!ptrs)
		goto cleanup;
	pb.sample = (PbSample **)&ptrs[n];
	for (size_t i = 0; i < cc->nr_stacks; i++)
		ptrs[n++] = &b.samples[i];
	pb.n_sample = cc->nr_stacks;
	pb.mapping = (PbMapping **)&ptrs[n];
	for (size_t i = 0; i < b.nr_maps; i++)
		ptrs[n++] = &b.maps[i];
	pb.n_mapping = b.nr_maps;
	pb.location = (PbLocation **)&ptrs[n];
	for (size_t i = 0; i < b.nr_locs; i++)
		ptrs[n++] = &b.locs[i];
	pb.n_location = b.nr_locs;
	line_ptrs = calloc(b.nr_lines + 1, sizeof(*line_ptrs));
	if (!line_ptrs)
		goto cleanup;
	for (size_t i = 0; i < b.nr_lines; i++)
		line_ptrs[i] = &b.lines[i];
	for (size_t i = 0; i < b.nr_locs; i++)
		b.locs[i].line = &line_ptrs[b.loc_line[i]];
	/* where hsbpf looked for inlined functions: the objects it found lines in */
	for (size_t i = 0; i < b.nr_maps; i++)
		b.maps[i].has_inline_frames = b.maps[i].has_line_numbers;
	pb.function = (PbFunction **)&ptrs[n];
	for (size_t i = 0; i < b.nr_funcs; i++)
		ptrs[n++] = &b.funcs[i];
	pb.n_function = b.nr_funcs;
	pb.string_table = b.strs;
	pb.n_string_table = b.nr_strs;
	len = perftools__profiles__profile__get_packed_size(&pb);
	packed = malloc(len + 1);
	if (!packed)
		goto cleanup;
	perftools__profiles__profile__pack(&pb, packed);
	err = gzip(packed, len, out, out_len);
cleanup:
	free(packed);
	free(line_ptrs);
	free(ptrs);
	builder__free(&b);
	if (err)
		error("cannot write pprof: %s", strerror(-err));
	return err;
}

int pprof__write(const struct callchain *cc, struct symbolizer *sy, FILE *out)
{
	size_t len;
	u8 *buf;
	int err = pprof__encode(cc, sy, &buf, &len);

	if (err)
		return err;
	/* a write error is not said here: out's owner knows what out is */
	errno = 0;
	if (fwrite(buf, 1, len, out) != len)
		err = -(errno ? errno : EIO);
	free(buf);
	return err;
}
