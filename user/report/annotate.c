// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* annotate: find the function in the profile's objects, gather its samples per instruction,
 * walk its blocks, print. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "report/annotate.h"
#include "symbols/bblock.h"
#include "symbols/demangle.h"
#include "lib/disasm.h"
#include "symbols/elf_image.h"
#include "hsbpf.h"
#include "lib/json_writer.h"
#include "report/lbr_estimate.h"
#include <linux/perf_event.h>

struct insn_samples {
	u64 vaddr;
	u64 count;
};

struct target {
	const char *name;	/* as asked, or for an address, as report names the function */
	char name_buf[NAME_MAX + 24];
	const char *dso;
	const struct bblock_table *bt;
	const struct bblock_func *func;
	struct insn_samples *s;
	size_t nr, cap;
	u64 total;		/* every sample of the profile */
	double *lbr;		/* per block of bt: executions from branch stacks, or NULL */
	double per_sample;	/* instructions one sample stands for, 0 if unknown */
	u32 truth_obj;
};

static u64 samples_at(const struct target *t, u64 vaddr)
{
	for (size_t i = 0; i < t->nr; i++)
		if (t->s[i].vaddr == vaddr)
			return t->s[i].count;
	return 0;
}

/* the function of a block table holding vaddr, or NULL */
static const struct bblock_func *func_at(const struct bblock_table *bt, u64 vaddr)
{
	for (size_t i = 0; bt && i < bt->nr_funcs; i++)
		if (vaddr >= bt->funcs[i].start && vaddr < bt->funcs[i].end)
			return &bt->funcs[i];
	return NULL;
}

/* a function by name: as the symbol table has it, demangled, or OBJECT+0xSTART */
static const struct bblock_func *find_func(const struct bblock_table *bt, const char *dso,
					   const char *name, bool raw_names)
{
	char pseudo[NAME_MAX + 24];

	for (size_t i = 0; bt && i < bt->nr_funcs; i++) {
		const struct bblock_func *f = &bt->funcs[i];
		char *dm = raw_names ? NULL : demangle__name(f->name);
		bool same = !strcmp(f->name, name) || (dm && !strcmp(dm, name));

		free(dm);
		snprintf(pseudo, sizeof(pseudo), "%s+0x%" PRIx64, path__base(dso), f->start);
		if (same || !strcmp(pseudo, name))
			return f;
	}
	return NULL;
}

/* the function's name as report shows it */
static const char *func_name(struct target *t, bool raw_names)
{
	char *dm = raw_names ? NULL : demangle__name(t->func->name);
	char eh[32];

	/* bblock names a function found by its exception frame only "func_<start>" */
	snprintf(eh, sizeof(eh), "func_%" PRIx64, t->func->start);
	if (!strcmp(t->func->name, eh))
		snprintf(t->name_buf, sizeof(t->name_buf), "%s+0x%" PRIx64, path__base(t->dso),
			 t->func->start);
	else
		snprintf(t->name_buf, sizeof(t->name_buf), "%s", dm ? dm : t->func->name);
	free(dm);
	return t->name_buf;
}

/* an object with a file to read: not [vdso], anonymous (JIT) or memfd code */
static bool is_file(const char *path)
{
	return path[0] == '/' && strncmp(path, "//anon", 6) && strncmp(path, "/memfd:", 7);
}

/* "0x..." alone: an address */
static bool parse_addr(const char *s, u64 *addr)
{
	char *end;

	if (strncmp(s, "0x", 2) && strncmp(s, "0X", 2))
		return false;
	errno = 0;
	*addr = strtoull(s, &end, 16);
	return !errno && end != s + 2 && !*end;
}

/* the object and function: where the samples named symbol (or holding the address) fell,
 * else any mapped object's function of that name; then the function's samples */
static int locate(const struct profile *p, struct symbolizer *sy, const struct annotate_opts *o,
		  struct target *t)
{
	const char *symbol = o->symbol;
	u64 addr = 0;
	bool by_addr = parse_addr(symbol, &addr);
	struct sym_result r;

	/* an address names a function of an object whose samples fall in it: of several such
	 * objects (a PIE's and ld.so's addresses overlap), the one with the most samples there */
	const char *seen[64];
	size_t nr_seen = 0;
	u64 best = 0;

	for (size_t i = 0; i < p->nr_samples && (by_addr || !t->func); i++) {
		const struct profile_sample *s = &p->samples[i];
		const struct bblock_table *bt;
		const struct bblock_func *f;
		u64 n = 0;

		if (s->flags & HSBPF_KEY_KERNEL)
			continue;
		symbolizer__resolve(sy, s, &r);
		if (!is_file(r.dso) || (!by_addr && strcmp(r.sym, symbol)))
			continue;
		if (by_addr) {	/* each object once */
			size_t k = 0;

			while (k < nr_seen && strcmp(seen[k], r.dso))
				k++;
			if (k < nr_seen)
				continue;
			if (nr_seen < sizeof(seen) / sizeof(seen[0]))
				seen[nr_seen++] = r.dso;
		}
		bt = symbolizer__blocks(sy, r.dso);
		f = func_at(bt, by_addr ? addr : r.vaddr);
		if (f && by_addr) {
			for (size_t j = 0; j < p->nr_samples; j++) {
				struct sym_result q;

				if (p->samples[j].flags & HSBPF_KEY_KERNEL)
					continue;
				symbolizer__resolve(sy, &p->samples[j], &q);
				if (!strcmp(q.dso, r.dso) && q.vaddr >= f->start && q.vaddr < f->end)
					n += p->samples[j].count;
			}
			if (!n || n <= best)
				continue;
			best = n;
		}
		if (f) {
			t->func = f;
			t->dso = r.dso;
			t->bt = bt;
			t->name = by_addr ? func_name(t, o->raw_names) : symbol;
		}
	}
	for (size_t i = 0; !t->func && !by_addr && i < p->nr_mappings; i++) {
		const char *path = profile__str(p, p->mappings[i].path);

		if (!is_file(path))
			continue;
		t->bt = symbolizer__blocks(sy, path);
		t->func = find_func(t->bt, path, symbol, o->raw_names);
		if (t->func) {
			t->dso = path;
			t->name = symbol;
		}
	}
	if (!t->func)
		return by_addr ? fail(-ENOENT, "no sampled function holds the address %s", symbol) :
				 fail(-ENOENT, "no function '%s' in the profile's objects", symbol);
	for (size_t i = 0; i < p->nr_samples; i++) {
		const struct profile_sample *s = &p->samples[i];

		t->total += s->count;
		if (s->flags & HSBPF_KEY_KERNEL)
			continue;
		symbolizer__resolve(sy, s, &r);
		if (strcmp(r.dso, t->dso) || r.vaddr < t->func->start || r.vaddr >= t->func->end)
			continue;
		if (array__reserve((void **)&t->s, &t->cap, t->nr + 1, sizeof(*t->s)))
			return -ENOMEM;
		t->s[t->nr++] = (struct insn_samples){ r.vaddr, s->count };
	}
	/* merge samples of one address from several processes */
	for (size_t i = 0; i < t->nr; i++)
		for (size_t j = i + 1; j < t->nr; j++)
			if (t->s[j].vaddr == t->s[i].vaddr) {
				t->s[i].count += t->s[j].count;
				t->s[j--] = t->s[--t->nr];
			}
	return 0;
}

static int check_truth(const struct truth *tr, const char *dso, u32 *obj)
{
	struct elf_image *img;
	const struct truth_object *o;
	int err = 0;

	*obj = truth__object(tr, dso);
	if (*obj == TRUTH_NO_OBJECT)
		return fail(-ENOENT, "the truth file has no counts for '%s'", dso);
	o = &tr->objects[*obj];
	img = elf_image__open(dso);
	if (img && o->build_id_size &&
	    (img->build_id_size != o->build_id_size || memcmp(img->build_id, o->build_id, o->build_id_size)))
		err = fail(-ESTALE, "the truth file is for another build of '%s' (build-ids differ)", dso);
	elf_image__close(img);
	return err;
}

static u64 exact(const struct annotate_opts *o, const struct target *t, u64 vaddr)
{
	const struct truth_insn *in = o->truth ? truth__insn(o->truth, t->truth_obj, vaddr) : NULL;

	return in ? in->count : 0;
}

static void print(const struct annotate_opts *o, const struct target *t, struct symbolizer *sy,
		  const struct elf_image *img, FILE *out)
{
	const struct bblock_func *f = t->func;
	struct disasm *d = disasm__new();
	json_writer_t *w = o->format == OUT_JSON ? jsonw_new(out) : NULL;
	const char *last_file = NULL;
	int last_line = -1;
	char buf[64];

	if (!d || (o->format == OUT_JSON && !w))
		goto out;
	if (w) {
		jsonw_start_object(w);
		jsonw_string_field(w, "symbol", t->name);
		jsonw_string_field(w, "object", t->dso);
		jsonw_float_field(w, "insns_per_sample", t->per_sample);
		jsonw_name(w, "blocks");
		jsonw_start_array(w);
	} else {
		fputs("# ", out);
		str__fputs_escaped(t->name, out);
		fputs(" in ", out);
		str__fputs_escaped(t->dso, out);
		fprintf(out, "%s\n", o->truth ? ", exact counts from the truth file" : "");
		fprintf(out, "# Est.execs: block samples x %.4g insns per sample / block insns%s\n",
			t->per_sample ? t->per_sample : 1.0, t->per_sample ? "" : " (unscaled)");
		fprintf(out, "%9s %12s  %10s  %s\n", "Samples", o->truth ? "Exact" : "", "Address",
			"Instruction");
	}
	for (size_t b = 0; b < t->bt->nr; b++) {
		const struct bblock *bb = &t->bt->blocks[b];
		long k = bblock_table__insn_index(t->bt, bb->start);
		u64 bs = 0, first = exact(o, t, bb->start);
		bool mixed = false;

		if (bb->start < f->start || bb->start >= f->end || k < 0)
			continue;
		for (u32 j = 0; j < bb->ninsns; j++) {
			bs += samples_at(t, t->bt->insns[k + j]);
			mixed |= exact(o, t, t->bt->insns[k + j]) != first;
		}
		double est = bs * (t->per_sample ? t->per_sample : 1.0) / bb->ninsns;

		if (w) {
			jsonw_start_object(w);
			snprintf(buf, sizeof(buf), "%#" PRIx64, bb->start);
			jsonw_string_field(w, "start", buf);
			snprintf(buf, sizeof(buf), "%#" PRIx64, bb->last);
			jsonw_string_field(w, "end", buf);
			jsonw_uint_field(w, "insns", bb->ninsns);
			jsonw_uint_field(w, "samples", bs);
			jsonw_float_field(w, "est_execs", est);
			if (t->lbr)
				jsonw_float_field(w, "lbr_execs", t->lbr[bb - t->bt->blocks]);
			if (o->truth) {
				jsonw_uint_field(w, "exact", first);
				jsonw_bool_field(w, "mid_entry", mixed);
			}
			jsonw_name(w, "instructions");
			jsonw_start_array(w);
		} else {
			fprintf(out, "---- block %#" PRIx64 "-%#" PRIx64 ", %u insns, %" PRIu64
				" samples, est %.4g execs", bb->start, bb->last, bb->ninsns, bs, est);
			if (t->lbr)
				fprintf(out, ", LBR %.4g", t->lbr[bb - t->bt->blocks]);
			if (o->truth)
				fprintf(out, ", exact %" PRIu64 "%s", first, mixed ? " (entered mid-block)" : "");
			fputc('\n', out);
		}
		for (u32 j = 0; j < bb->ninsns; j++) {
			u64 a = t->bt->insns[k + j];
			struct insn_info ii;
			const char *file = NULL;
			int line = 0;
			size_t avail;
			const u8 *code = elf_image__bytes(img, a, &avail);

			disasm__one(d, code ? code : (const u8 *)"", code ? avail : 0, a, &ii);
			symbolizer__line(sy, t->dso, a, &file, &line);
			if (w) {
				jsonw_start_object(w);
				snprintf(buf, sizeof(buf), "%#" PRIx64, a);
				jsonw_string_field(w, "addr", buf);
				jsonw_string_field(w, "text", ii.text);
				jsonw_uint_field(w, "samples", samples_at(t, a));
				if (o->truth)
					jsonw_uint_field(w, "exact", exact(o, t, a));
				jsonw_string_field(w, "file", file);
				jsonw_uint_field(w, "line", line);
				jsonw_end_object(w);
				continue;
			}
			if (file && (line != last_line || !last_file || strcmp(file, last_file))) {
				fprintf(out, "%36s", "");
				str__fputs_escaped(path__base(file), out);
				fprintf(out, ":%d\n", line);
				last_file = file;
				last_line = line;
			}
			snprintf(buf, sizeof(buf), "%" PRIu64, exact(o, t, a));
			fprintf(out, "%9" PRIu64 " %12s  %10" PRIx64 ":  %.62s\n", samples_at(t, a),
				o->truth ? buf : "", a, ii.text);
		}
		if (w) {
			jsonw_end_array(w);
			jsonw_end_object(w);
		}
	}
	if (w) {
		jsonw_end_array(w);
		jsonw_end_object(w);
		jsonw_destroy(&w);
	}
out:
	disasm__free(d);
}

struct jit_sample {
	const struct profile_jitsym *j;
	u64 ip, count;
};

static int cmp_jit_sample(const void *a, const void *b)
{
	const struct jit_sample *x = a, *y = b;

	if (x->j != y->j)
		return x->j < y->j ? -1 : 1;
	return x->ip < y->ip ? -1 : x->ip > y->ip;
}

/* JIT code (a perf map file's functions): its code is not kept, so its samples are shown by
 * address, for each range the name had (a function compiled again lands elsewhere); 1 when
 * symbol names no sampled JIT function, 0 when shown, or -errno */
static int annotate_jit(const struct profile *p, struct symbolizer *sy, const struct annotate_opts *o,
			FILE *out)
{
	struct jit_sample *s = NULL;
	size_t nr = 0, cap = 0;
	u64 addr = 0, total = 0;
	bool by_addr = parse_addr(o->symbol, &addr);
	json_writer_t *w = NULL;

	for (size_t i = 0; i < p->nr_samples; i++) {
		const struct profile_sample *ps = &p->samples[i];
		const struct profile_jitsym *js;
		struct sym_result r;

		total += ps->count;
		if (ps->flags & HSBPF_KEY_KERNEL)
			continue;
		js = profile__find_jitsym(p, ps->pid, ps->ip);
		if (!js)
			continue;
		symbolizer__resolve(sy, ps, &r);
		if ((by_addr ? addr - js->start >= js->size : strcmp(r.sym, o->symbol)) ||
		    strncmp(r.dso, "[JIT]", 5))	/* not it, or an object's code took the address */
			continue;
		if (array__reserve((void **)&s, &cap, nr + 1, sizeof(*s)))
			return -ENOMEM;
		s[nr++] = (struct jit_sample){ js, ps->ip, ps->count };
	}
	if (!nr)
		return 1;
	qsort(s, nr, sizeof(*s), cmp_jit_sample);
	if (o->format == OUT_JSON) {
		w = jsonw_new(out);
		if (!w) {
			free(s);
			return -ENOMEM;
		}
		jsonw_start_object(w);
		jsonw_string_field(w, "symbol", profile__str(p, s[0].j->name));
		jsonw_string_field(w, "object", "[JIT]");
		jsonw_uint_field(w, "total_samples", total);
		jsonw_name(w, "ranges");
		jsonw_start_array(w);
	}
	for (size_t i = 0; i < nr; i++) {
		const struct profile_jitsym *j = s[i].j;
		u64 in = 0;

		for (size_t k = i; k < nr && s[k].j == j; k++)
			in += s[k].count;
		if (w) {
			jsonw_start_object(w);
			jsonw_uint_field(w, "pid", j->pid);
			jsonw_uint_field(w, "start", j->start);
			jsonw_uint_field(w, "size", j->size);
			jsonw_uint_field(w, "samples", in);
			jsonw_name(w, "addresses");
			jsonw_start_array(w);
		} else {
			fputs("# ", out);
			str__fputs_escaped(profile__str(p, j->name), out);
			fprintf(out, " in [JIT] perf-%u.map, %#" PRIx64 "-%#" PRIx64 ", %" PRIu64 " of %"
				PRIu64 " samples (the profile keeps JIT code's names and ranges, not "
				"its instructions)\n  Samples                  Address   Offset\n",
				j->pid, j->start, j->start + j->size, in, total);
		}
		for (; i < nr && s[i].j == j; i++) {
			u64 n = s[i].count;

			while (i + 1 < nr && s[i + 1].j == j && s[i + 1].ip == s[i].ip)
				n += s[++i].count;	/* one address in several slots */
			if (w) {
				jsonw_start_object(w);
				jsonw_uint_field(w, "address", s[i].ip);
				jsonw_uint_field(w, "samples", n);
				jsonw_end_object(w);
			} else {
				fprintf(out, "%9" PRIu64 " %24" PRIx64 "  +%#" PRIx64 "\n", n, s[i].ip,
					s[i].ip - j->start);
			}
		}
		i--;
		if (w) {
			jsonw_end_array(w);
			jsonw_end_object(w);
		}
	}
	if (w) {
		jsonw_end_array(w);
		jsonw_end_object(w);
		jsonw_destroy(&w);
	}
	free(s);
	return 0;
}

int annotate__function(const struct profile *p, struct symbolizer *sy,
		       const struct annotate_opts *o, FILE *out)
{
	struct target t = { .truth_obj = TRUTH_NO_OBJECT };
	struct elf_image *img = NULL;
	int err;

	if (p->nr_jitsyms) {
		err = annotate_jit(p, sy, o, out);
		if (err <= 0)
			return err;
	}
	err = locate(p, sy, o, &t);
	if (err)
		goto cleanup;
	if (o->truth) {
		err = check_truth(o->truth, t.dso, &t.truth_obj);
		if (err)
			goto cleanup;
		if (t.total)
			t.per_sample = (double)o->truth->meta.total_insns / t.total;
	} else if (p->meta.event_type == PERF_TYPE_HARDWARE &&
		   p->meta.event_config == PERF_COUNT_HW_INSTRUCTIONS && t.total) {
		t.per_sample = (double)profile__total_weight(p) / t.total;
	}
	if (p->nr_lbr) {
		double scale = lbr_estimate__scale(p);
		u64 used;

		t.lbr = calloc(t.bt->nr + 1, sizeof(*t.lbr));
		if (!t.lbr) {
			err = -ENOMEM;
			goto cleanup;
		}
		lbr_estimate__block_execs(p, sy, t.dso, t.bt, t.lbr, &used);
		for (size_t b = 0; b < t.bt->nr; b++)
			t.lbr[b] *= scale;
	}
	img = elf_image__open(symbolizer__file(sy, t.dso));
	if (!img) {
		err = fail(-errno, "cannot open '%s': %s", t.dso, file__strerror(errno));
		goto cleanup;
	}
	print(o, &t, sy, img, out);
cleanup:
	elf_image__close(img);
	free(t.lbr);
	free(t.s);
	return err;
}
