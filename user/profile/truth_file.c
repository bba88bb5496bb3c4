// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The truth file's model (objects, instructions, edges, the calling-context tree) and its
 * file form in the shared container, with every table's order and references checked on
 * reading. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "lib/file_format.h"
#include "profile/truth_file.h"

_Static_assert(sizeof(struct truth_object) == 32, "truth_object");
_Static_assert(sizeof(struct truth_insn) == 24, "truth_insn");
_Static_assert(sizeof(struct truth_edge) == 40, "truth_edge");

enum {
	TSEC_META = 1, TSEC_STRINGS = 2, TSEC_OBJECTS = 3, TSEC_INSNS = 4, TSEC_EDGES = 5,
	TSEC_CCT_NODES = 6, TSEC_CCT_BLOCKS = 7,
};

struct truth *truth__new(void)
{
	struct truth *t = calloc(1, sizeof(*t));

	if (t && array__reserve((void **)&t->strs, &t->strs_cap, 1, 1)) {
		free(t);
		return NULL;
	}
	if (t)
		t->strs_len = 1;	/* offset 0: "" */
	return t;
}

void truth__free(struct truth *t)
{
	if (!t)
		return;
	free(t->objects);
	free(t->insns);
	free(t->edges);
	free(t->cnodes);
	free(t->cblocks);
	free(t->strs);
	free(t);
}

const char *truth__str(const struct truth *t, u32 off)
{
	return off < t->strs_len ? t->strs + off : "";
}

s64 truth__add_str(struct truth *t, const char *s)
{
	size_t n = strlen(s) + 1, off = t->strs_len;

	if (array__reserve((void **)&t->strs, &t->strs_cap, t->strs_len + n, 1))
		return -ENOMEM;
	memcpy(t->strs + off, s, n);
	t->strs_len += n;
	return off;
}

u32 truth__object(const struct truth *t, const char *path)
{
	for (size_t i = 0; i < t->nr_objects; i++)
		if (!strcmp(truth__str(t, t->objects[i].path), path))
			return i;
	return TRUTH_NO_OBJECT;
}

const struct truth_insn *truth__insn(const struct truth *t, u32 obj, u64 vaddr)
{
	size_t lo = 0, hi = t->nr_insns;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct truth_insn *in = &t->insns[mid];

		if (in->obj < obj || (in->obj == obj && in->vaddr < vaddr))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < t->nr_insns && t->insns[lo].obj == obj && t->insns[lo].vaddr == vaddr)
		return &t->insns[lo];
	return NULL;
}

int truth_insn__cmp(const void *a, const void *b)
{
	const struct truth_insn *x = a, *y = b;

	if (x->obj != y->obj)
		return x->obj < y->obj ? -1 : 1;
	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

int truth_edge__cmp(const void *a, const void *b)
{
	const struct truth_edge *x = a, *y = b;

	if (x->src_obj != y->src_obj)
		return x->src_obj < y->src_obj ? -1 : 1;
	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	if (x->dst_obj != y->dst_obj)
		return x->dst_obj < y->dst_obj ? -1 : 1;
	if (x->dst != y->dst)
		return x->dst < y->dst ? -1 : 1;
	return x->kind < y->kind ? -1 : x->kind > y->kind;
}

int truth_cblock__cmp(const void *a, const void *b)
{
	const struct truth_cblock *x = a, *y = b;

	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	if (x->obj != y->obj)
		return x->obj < y->obj ? -1 : 1;
	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

/* ---- the file ---- */

#define T_STR(f) { #f, KV_STR, offsetof(struct truth_meta, f), sizeof(((struct truth_meta *)0)->f) }
#define T_U64(f) { #f, KV_U64, offsetof(struct truth_meta, f), 8 }
#define T_U32(f) { #f, KV_U32, offsetof(struct truth_meta, f), 4 }
static const struct kv_field meta_fields[] = {
	T_STR(command), T_STR(program), T_STR(status), T_U32(exit_code), T_U32(signal), T_U32(threads),
	T_STR(emulator), T_STR(glibc_tunables), T_U64(total_insns), T_U64(anon_insns),
	T_U64(rep_iterations), T_U64(page_cross_dropped), T_U64(start_realtime_ns),
	T_U64(duration_ns), T_U32(edges_off), T_U32(cct), T_U64(cct_unmatched_rets), T_U64(cct_longjmps),
	T_U64(cct_unwinds), T_U64(cct_signals), T_U64(cct_sigreturns),
};

static const struct file_format truth_format = {
	TRUTH_MAGIC, "hsbpf truth file", TRUTH_VERSION_MAJOR, TRUTH_VERSION_MINOR,
};

int truth__write(struct truth *t, const char *path)
{
	struct outfile o;
	int err = outfile__open(&o, path, 0);

	return err ? err : truth__write_out(t, &o);
}

int truth__write_out(struct truth *t, struct outfile *o)
{
	struct file_section secs[7];
	size_t meta_len;
	char *meta = kv__format(&t->meta, meta_fields, ARRAY_SIZE(meta_fields), &meta_len);
	int err;

	if (!meta) {
		err = fail(-ENOMEM, "cannot write '%s': %s", o->path, strerror(ENOMEM));
		outfile__discard(o);
		return err;
	}
	secs[0] = (struct file_section){ TSEC_META, meta, meta_len };
	secs[1] = (struct file_section){ TSEC_STRINGS, t->strs, t->strs_len };
	secs[2] = (struct file_section){ TSEC_OBJECTS, t->objects, t->nr_objects * sizeof(*t->objects) };
	secs[3] = (struct file_section){ TSEC_INSNS, t->insns, t->nr_insns * sizeof(*t->insns) };
	secs[4] = (struct file_section){ TSEC_EDGES, t->edges, t->nr_edges * sizeof(*t->edges) };
	secs[5] = (struct file_section){ TSEC_CCT_NODES, t->cnodes, t->nr_cnodes * sizeof(*t->cnodes) };
	secs[6] = (struct file_section){ TSEC_CCT_BLOCKS, t->cblocks, t->nr_cblocks * sizeof(*t->cblocks) };
	err = file_format__write_out(o, &truth_format, secs, t->meta.cct ? 7 : 5);
	free(meta);
	return err;
}

struct tparse {
	struct truth *t;
	const char *name;
	struct file_version ver;	/* the file's */
};

static int take(void **dst, size_t *nr, size_t *cap, const void *src, size_t size, size_t elem,
		const char *name)
{
	int err = file_format__take_array(dst, nr, cap, src, size, elem);

	return err == -EINVAL ? file_format__bad(name, "table size") : err;
}

static int tparse_section(void *ctx, u32 type, const void *data, size_t size)
{
	struct tparse *c = ctx;
	struct truth *t = c->t;

	switch (type) {
	case TSEC_META:
		return kv__parse(&t->meta, meta_fields, ARRAY_SIZE(meta_fields), data, size,
				 c->ver.minor >= TRUTH_MINOR_ESCAPES) ?
			file_format__bad(c->name, "bad metadata") : 0;
	case TSEC_STRINGS:
		if (!size || ((const char *)data)[size - 1])
			return file_format__bad(c->name, "string table is not terminated");
		free(t->strs);
		t->strs = NULL;
		t->strs_len = t->strs_cap = 0;
		return take((void **)&t->strs, &t->strs_len, &t->strs_cap, data, size, 1, c->name);
	case TSEC_OBJECTS:
		return take((void **)&t->objects, &t->nr_objects, &t->cap_objects, data, size,
			    sizeof(*t->objects), c->name);
	case TSEC_INSNS:
		return take((void **)&t->insns, &t->nr_insns, &t->cap_insns, data, size,
			    sizeof(*t->insns), c->name);
	case TSEC_EDGES:
		return take((void **)&t->edges, &t->nr_edges, &t->cap_edges, data, size,
			    sizeof(*t->edges), c->name);
	case TSEC_CCT_NODES:
		return take((void **)&t->cnodes, &t->nr_cnodes, &t->cap_cnodes, data, size,
			    sizeof(*t->cnodes), c->name);
	case TSEC_CCT_BLOCKS:
		return take((void **)&t->cblocks, &t->nr_cblocks, &t->cap_cblocks, data, size,
			    sizeof(*t->cblocks), c->name);
	default:
		return 0;
	}
}

int truth__parse(const void *buf, size_t size, const char *name, struct truth **out)
{
	struct tparse c = { .name = name };
	u64 sum = 0;
	int err;

	*out = NULL;
	c.t = truth__new();
	if (!c.t)
		return -ENOMEM;
	err = file_format__parse(buf, size, name, &truth_format, &c.ver, tparse_section, &c);
	for (size_t i = 0; !err && i < c.t->nr_objects; i++)
		if (c.t->objects[i].path >= c.t->strs_len || c.t->objects[i].build_id_size > 20)
			err = file_format__bad(name, "object refers outside the string table");
	for (size_t i = 0; !err && i < c.t->nr_insns; i++)
		if (c.t->insns[i].obj >= c.t->nr_objects ||
		    (i && truth_insn__cmp(&c.t->insns[i - 1], &c.t->insns[i]) >= 0))
			err = file_format__bad(name, "instruction table out of order");
	for (size_t i = 0; !err && i < c.t->nr_edges; i++)
		if (c.t->edges[i].src_obj >= c.t->nr_objects || c.t->edges[i].dst_obj >= c.t->nr_objects ||
		    c.t->edges[i].kind >= EDGE_NR)
			err = file_format__bad(name, "edge refers to no object");
	for (size_t i = 0; !err && i < c.t->nr_cnodes; i++) {
		const struct truth_cnode *n = &c.t->cnodes[i];

		if ((n->parent != TRUTH_NO_NODE && (n->parent >= i || c.t->cnodes[n->parent].thread != n->thread)) ||
		    (n->obj != TRUTH_NO_OBJECT && n->obj >= c.t->nr_objects) || n->kind >= CCT_KIND_NR)
			err = file_format__bad(name, "calling-context node out of order");
	}
	for (size_t i = 0; !err && i < c.t->nr_cblocks; i++) {
		const struct truth_cblock *b = &c.t->cblocks[i];

		if (b->node >= c.t->nr_cnodes || (b->obj != TRUTH_NO_OBJECT && b->obj >= c.t->nr_objects) ||
		    (i && truth_cblock__cmp(&c.t->cblocks[i - 1], b) >= 0))
			err = file_format__bad(name, "calling-context block out of order");
	}
	sum = 0;
	for (size_t i = 0; !err && i < c.t->nr_cnodes; i++)
		if (__builtin_add_overflow(sum, c.t->cnodes[i].self, &sum))
			err = file_format__bad(name, "calling-context counts overflow");
	sum = 0;
	/* readers sum counts (per object, per function, per block): no sum may wrap */
	for (size_t i = 0; !err && i < c.t->nr_insns; i++)
		if (__builtin_add_overflow(sum, c.t->insns[i].count, &sum))
			err = file_format__bad(name, "instruction counts overflow");
	sum = 0;
	for (size_t i = 0; !err && i < c.t->nr_edges; i++)
		if (__builtin_add_overflow(sum, c.t->edges[i].count, &sum))
			err = file_format__bad(name, "edge counts overflow");
	if (err) {
		truth__free(c.t);
		return err;
	}
	*out = c.t;
	return 0;
}

static int parse_any(const void *buf, size_t size, const char *name, void *out)
{
	return truth__parse(buf, size, name, out);
}

int truth__read(const char *path, struct truth **out)
{
	*out = NULL;
	return file_format__load(path, &truth_format, parse_any, out);
}
