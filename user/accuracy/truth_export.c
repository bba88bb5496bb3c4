// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Truth export: the run, then one line (or object) per instruction, per executed basic block
 * (blocks from the object's own code, with a note where the counts prove an entry into the
 * middle), and per edge. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "symbols/bblock.h"
#include "lib/json_writer.h"
#include "truth_export.h"

enum { W_SUMMARY = 1, W_INSNS = 2, W_BLOCKS = 4, W_EDGES = 8, W_TUNABLES = 16, W_CCT = 32 };

static int parse_what(const char *what, int *mask)
{
	char buf[128], *tok, *save = NULL;

	*mask = 0;
	if (!what) {
		*mask = W_SUMMARY | W_INSNS | W_BLOCKS | W_EDGES | W_CCT;
		return 0;
	}
	snprintf(buf, sizeof(buf), "%s", what);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "summary"))
			*mask |= W_SUMMARY;
		else if (!strcmp(tok, "insns"))
			*mask |= W_INSNS;
		else if (!strcmp(tok, "blocks"))
			*mask |= W_BLOCKS;
		else if (!strcmp(tok, "edges"))
			*mask |= W_EDGES;
		else if (!strcmp(tok, "cct"))
			*mask |= W_CCT;
		else if (!strcmp(tok, "tunables"))
			*mask |= W_TUNABLES;
		else
			return fail(-EINVAL, "unknown --what '%s' (known: summary, insns, blocks, edges, "
				    "cct, tunables)", tok);
	}
	return 0;
}

static const char *obj_path(const struct truth *t, u32 obj)
{
	return obj < t->nr_objects ? truth__str(t, t->objects[obj].path) : "[anon]";
}

/* text export: an object's path made harmless for a terminal (a ring of two, for the edge
 * lines that name two) */
static const char *obj_text(const struct truth *t, u32 obj)
{
	static char bufs[2][4 * 4096];
	static int next;

	return str__escape(obj_path(t, obj), bufs[next++ % 2], sizeof(bufs[0]));
}

/* one executed block: its count is its first instruction's; mixed counts mean control
 * entered (or left) in the middle */
struct block_row {
	const struct bblock *b;
	u64 count;
	bool mixed;
};

static void for_each_block(const struct truth *t, u32 obj, const struct bblock_table *bt,
			   void (*fn)(void *ctx, u32 obj, const struct block_row *r), void *ctx)
{
	for (size_t i = 0; i < bt->nr; i++) {
		const struct bblock *b = &bt->blocks[i];
		const struct truth_insn *first = truth__insn(t, obj, b->start);
		struct block_row r = { .b = b, .count = first ? first->count : 0 };
		long k = bblock_table__insn_index(bt, b->start);
		bool any = r.count;

		for (u32 j = 1; k >= 0 && j < b->ninsns; j++) {
			const struct truth_insn *in = truth__insn(t, obj, bt->insns[k + j]);
			u64 c = in ? in->count : 0;

			any |= c != 0;
			r.mixed |= c != r.count;
		}
		if (any)
			fn(ctx, obj, &r);
	}
}

struct out_ctx {
	const struct truth *t;
	json_writer_t *w;
	FILE *f;
};

static void block_text(void *ctx, u32 obj, const struct block_row *r)
{
	struct out_ctx *c = ctx;

	fprintf(c->f, "block %s %#" PRIx64 " %#" PRIx64 " %u %" PRIu64 "%s\n", obj_text(c->t, obj),
		r->b->start, r->b->last, r->b->ninsns, r->count, r->mixed ? " mid-entry" : "");
}

static void block_json(void *ctx, u32 obj, const struct block_row *r)
{
	struct out_ctx *c = ctx;
	char a[32], e[32];

	snprintf(a, sizeof(a), "%#" PRIx64, r->b->start);
	snprintf(e, sizeof(e), "%#" PRIx64, r->b->last);
	jsonw_start_object(c->w);
	jsonw_string_field(c->w, "object", obj_path(c->t, obj));
	jsonw_string_field(c->w, "start", a);
	jsonw_string_field(c->w, "end", e);
	jsonw_uint_field(c->w, "insns", r->b->ninsns);
	jsonw_uint_field(c->w, "count", r->count);
	jsonw_bool_field(c->w, "mid_entry", r->mixed);
	jsonw_end_object(c->w);
}

static void blocks(const struct truth *t, struct out_ctx *c, bool json)
{
	for (u32 o = 0; o < t->nr_objects; o++) {
		struct elf_image *img = elf_image__open(obj_path(t, o));
		struct bblock_table *bt = img ? bblock_table__build(img) : NULL;

		if (!bt) {
			warning("cannot read '%s': %s: its blocks are left out", obj_path(t, o),
				file__strerror(errno));
		} else {
			for_each_block(t, o, bt, json ? block_json : block_text, c);
		}
		bblock_table__free(bt);
		elf_image__close(img);
	}
}

static const char *const cct_kinds[] = { "root", "call", "signal", "tail" };

/* the calling-context tree: one line (object) per node, with its function's name where the
 * object's symbols tell it, and one per block executed in a node */
static int cct_export(const struct truth *t, struct out_ctx *c, bool json)
{
	struct elf_image **imgs = calloc(t->nr_objects + 1, sizeof(*imgs));
	u64 *incl = calloc(t->nr_cnodes + 1, sizeof(*incl));
	char a[32];

	if (!imgs || !incl) {
		free(imgs);
		free(incl);
		return -ENOMEM;
	}
	for (u32 o = 0; o < t->nr_objects; o++)
		imgs[o] = elf_image__open(obj_path(t, o));
	truth__cct_inclusive(t, incl);
	for (size_t i = 0; i < t->nr_cnodes; i++) {
		const struct truth_cnode *n = &t->cnodes[i];
		const struct elf_func *f = n->obj < t->nr_objects && imgs[n->obj] ?
					   elf_image__func_at(imgs[n->obj], n->func) : NULL;
		const char *name = f && f->addr == n->func ? f->name : "?";

		if (!json) {
			fprintf(c->f, "cct %u %zu ", n->thread, i);
			if (n->parent == TRUTH_NO_NODE)
				fputs("-", c->f);
			else
				fprintf(c->f, "%u", n->parent);
			fprintf(c->f, " %s %" PRIu64 " %" PRIu64 " %" PRIu64 " %s %#" PRIx64 " ",
				cct_kinds[n->kind], n->calls, n->self, incl[i], obj_text(t, n->obj), n->func);
			str__fputs_escaped(name, c->f);
			fputc('\n', c->f);
			continue;
		}
		snprintf(a, sizeof(a), "%#" PRIx64, n->func);
		jsonw_start_object(c->w);
		jsonw_uint_field(c->w, "thread", n->thread);
		jsonw_uint_field(c->w, "node", i);
		jsonw_name(c->w, "parent");
		if (n->parent == TRUTH_NO_NODE)
			jsonw_null(c->w);
		else
			jsonw_uint(c->w, n->parent);
		jsonw_string_field(c->w, "kind", cct_kinds[n->kind]);
		jsonw_uint_field(c->w, "calls", n->calls);
		jsonw_uint_field(c->w, "self", n->self);
		jsonw_uint_field(c->w, "inclusive", incl[i]);
		jsonw_string_field(c->w, "object", obj_path(t, n->obj));
		jsonw_string_field(c->w, "func", a);
		jsonw_string_field(c->w, "name", name);
		jsonw_end_object(c->w);
	}
	for (size_t i = 0; !json && i < t->nr_cblocks; i++)
		fprintf(c->f, "cctblock %u %s %#" PRIx64 " %" PRIu64 "\n", t->cblocks[i].node,
			obj_text(t, t->cblocks[i].obj), t->cblocks[i].vaddr, t->cblocks[i].insns);
	for (u32 o = 0; o < t->nr_objects; o++)
		elf_image__close(imgs[o]);
	free(imgs);
	free(incl);
	return 0;
}

int truth__export(const struct truth *t, const char *what, bool json, FILE *f)
{
	const struct truth_meta *m = &t->meta;
	struct out_ctx c = { .t = t, .f = f };
	char a[32], b[32];
	int mask, err;

	err = parse_what(what, &mask);
	if (err)
		return err;
	if (mask == W_TUNABLES) {
		/* just the value, for GLIBC_TUNABLES="$(hsbpf truth -i T --what tunables)" */
		char value[sizeof(m->glibc_tunables)];

		snprintf(value, sizeof(value), "%.*s", (int)strcspn(m->glibc_tunables, " "),
			 m->glibc_tunables);
		str__fputs_escaped(value, f);
		fputc('\n', f);
		return ferror(f) ? -EIO : 0;
	}
	if (!json) {
		if (mask & W_SUMMARY) {
			fputs("# command ", f);
			str__fputs_escaped(m->command, f);
			fputs("\n# ", f);
			str__fputs_escaped(m->status, f);
			fprintf(f, ", %u threads, ", m->threads);
			str__fputs_escaped(m->emulator, f);
			fprintf(f, "%s\n# glibc tunables for native runs: ",
				m->edges_off ? ", blocks only (rep iterations not folded)" : "");
			str__fputs_escaped(m->glibc_tunables[0] ? m->glibc_tunables : "(none)", f);
			fprintf(f, "\ntotal %" PRIu64 "\nanonymous %" PRIu64 "\nrep_iterations_folded %"
				PRIu64 "\n", m->total_insns, m->anon_insns, m->rep_iterations);
		}
		for (size_t i = 0; (mask & W_INSNS) && i < t->nr_insns; i++)
			fprintf(f, "insn %s %#" PRIx64 " %" PRIu64 "\n", obj_text(t, t->insns[i].obj),
				t->insns[i].vaddr, t->insns[i].count);
		if (mask & W_BLOCKS)
			blocks(t, &c, false);
		for (size_t i = 0; (mask & W_EDGES) && i < t->nr_edges; i++) {
			const struct truth_edge *e = &t->edges[i];

			fprintf(f, "edge %s %#" PRIx64 " %s %#" PRIx64 " %s %" PRIu64 "\n",
				obj_text(t, e->src_obj), e->src, obj_text(t, e->dst_obj), e->dst,
				edge__kind_name(e->kind), e->count);
		}
		if ((mask & W_CCT) && t->meta.cct) {
			if (mask & W_SUMMARY)
				fprintf(f, "cct_unmatched_returns %" PRIu64 "\ncct_longjmps %" PRIu64
					"\ncct_unwinds %" PRIu64 "\ncct_signals %" PRIu64 "\ncct_sigreturns %"
					PRIu64 "\n", m->cct_unmatched_rets, m->cct_longjmps, m->cct_unwinds,
					m->cct_signals, m->cct_sigreturns);
			err = cct_export(t, &c, false);
		}
		return err ? err : ferror(f) ? -EIO : 0;
	}
	c.w = jsonw_new(f);
	if (!c.w)
		return -ENOMEM;
	jsonw_start_object(c.w);
	if (mask & W_SUMMARY) {
		jsonw_string_field(c.w, "command", m->command);
		jsonw_string_field(c.w, "program", m->program);
		jsonw_string_field(c.w, "status", m->status);
		jsonw_uint_field(c.w, "threads", m->threads);
		jsonw_string_field(c.w, "emulator", m->emulator);
		jsonw_string_field(c.w, "glibc_tunables", m->glibc_tunables);
		jsonw_uint_field(c.w, "total", m->total_insns);
		jsonw_uint_field(c.w, "anonymous", m->anon_insns);
		jsonw_uint_field(c.w, "rep_iterations_folded", m->rep_iterations);
		jsonw_name(c.w, "objects");
		jsonw_start_array(c.w);
		for (u32 o = 0; o < t->nr_objects; o++)
			jsonw_string(c.w, obj_path(t, o));
		jsonw_end_array(c.w);
	}
	if (mask & W_INSNS) {
		jsonw_name(c.w, "insns");
		jsonw_start_array(c.w);
		for (size_t i = 0; i < t->nr_insns; i++) {
			snprintf(a, sizeof(a), "%#" PRIx64, t->insns[i].vaddr);
			jsonw_start_object(c.w);
			jsonw_string_field(c.w, "object", obj_path(t, t->insns[i].obj));
			jsonw_string_field(c.w, "addr", a);
			jsonw_uint_field(c.w, "count", t->insns[i].count);
			jsonw_end_object(c.w);
		}
		jsonw_end_array(c.w);
	}
	if (mask & W_BLOCKS) {
		jsonw_name(c.w, "blocks");
		jsonw_start_array(c.w);
		blocks(t, &c, true);
		jsonw_end_array(c.w);
	}
	if (mask & W_EDGES) {
		jsonw_name(c.w, "edges");
		jsonw_start_array(c.w);
		for (size_t i = 0; i < t->nr_edges; i++) {
			const struct truth_edge *e = &t->edges[i];

			snprintf(a, sizeof(a), "%#" PRIx64, e->src);
			snprintf(b, sizeof(b), "%#" PRIx64, e->dst);
			jsonw_start_object(c.w);
			jsonw_string_field(c.w, "src_object", obj_path(t, e->src_obj));
			jsonw_string_field(c.w, "src", a);
			jsonw_string_field(c.w, "dst_object", obj_path(t, e->dst_obj));
			jsonw_string_field(c.w, "dst", b);
			jsonw_string_field(c.w, "kind", edge__kind_name(e->kind));
			jsonw_uint_field(c.w, "count", e->count);
			jsonw_end_object(c.w);
		}
		jsonw_end_array(c.w);
	}
	if ((mask & W_CCT) && t->meta.cct) {
		jsonw_name(c.w, "cct");
		jsonw_start_array(c.w);
		err = cct_export(t, &c, true);
		jsonw_end_array(c.w);
	}
	jsonw_end_object(c.w);
	jsonw_destroy(&c.w);
	if (err)
		return err;
	return ferror(f) ? -EIO : 0;
}
