// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Per-sample correctness of unwound stacks (stack_check.h): kinds of the first difference,
 * locations from the sampled function's unwind rows, and the sample-by-sample comparison of
 * an unwound profile with the exact one. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "symbols/elf_image.h"
#include "lib/json_writer.h"
#include "stack_check.h"
#include "symbols/symbolizer.h"

const char *const sc_kind_names[SC_NR_KINDS] = { "equal", "missing", "extra", "wrong-caller" };
const char *const sc_cause_names[SC_NR_CAUSES] = { "no-unwind-info", "leaf-only-rule", "other",
							     "exception-dispatch" };
const char *const sc_loc_names[SC_NR_LOCS] = { "prologue", "body", "epilogue", "plt", "unknown" };

enum sc_kind stack_check__kind(const u64 *exact, u32 ne, const u64 *got, u32 ng, u32 *at)
{
	u32 i = 0;

	while (i < ne && i < ng && exact[i] == got[i])
		i++;
	*at = i;
	if (i == ne && i == ng)
		return SC_EQUAL;
	if (i == ng)
		return SC_MISSING;	/* ended early */
	if (i == ne)
		return SC_EXTRA;	/* went on past the outermost frame */
	for (u32 k = 1; i + k < ne; k++)
		if (got[i] == exact[i + k])
			return SC_MISSING;	/* skipped k exact frames */
	for (u32 k = 1; i + k < ng; k++)
		if (got[i + k] == exact[i])
			return SC_EXTRA;	/* k frames too many before the right one */
	return SC_WRONG_CALLER;
}

struct rule {
	u8 cfa, reg, deref;
	s32 off;
};

static struct rule rule_of(const struct unwind_row *r)
{
	return (struct rule){ r->cfa, r->cfa == HSBPF_CFA_REG ? r->cfa_reg : 0, !!(r->flags & HSBPF_ROW_DEREF),
			      r->cfa == HSBPF_CFA_REG ? r->cfa_off : 0 };
}

static bool same_rule(struct rule a, struct rule b)
{
	return a.cfa == b.cfa && a.reg == b.reg && a.deref == b.deref && a.off == b.off;
}

/* the index of the row in force at rel (relative to the table's base) */
static size_t row_at(const struct unwind_table *t, u64 rel)
{
	size_t lo = 0, hi = t->nr_rows;

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->rows[mid].pc <= rel)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

enum sc_loc stack_check__location(const struct unwind_table *t, u64 start, u64 end, u64 vaddr,
				  bool in_plt, bool is_ret)
{
	struct rule rules[64], body = { 0 }, here;
	u64 bytes[64] = { 0 }, body_from = 0, best = 0;
	size_t nr = 0, i;

	if (in_plt)
		return SC_PLT;
	if (!t || !t->nr_rows || vaddr < start || vaddr >= end || start < t->base || end > t->end)
		return SC_UNKNOWN;
	here = rule_of(&t->rows[row_at(t, vaddr - t->base)]);
	if (here.cfa != HSBPF_CFA_REG)
		return SC_UNKNOWN;
	if (is_ret)
		return SC_EPILOGUE;
	/* the body rule: the rule in force over most of the function's bytes */
	for (i = row_at(t, start - t->base); i < t->nr_rows && t->base + t->rows[i].pc < end; i++) {
		u64 from = t->base + t->rows[i].pc, to = i + 1 < t->nr_rows ? t->base + t->rows[i + 1].pc : t->end;
		struct rule r = rule_of(&t->rows[i]);
		size_t k;

		if (from < start)
			from = start;
		if (to > end)
			to = end;
		if (r.cfa != HSBPF_CFA_REG || to <= from)
			continue;
		for (k = 0; k < nr && !same_rule(rules[k], r); k++)
			;
		if (k == nr) {
			if (nr == ARRAY_SIZE(rules))
				continue;
			rules[nr++] = r;
		}
		bytes[k] += to - from;
	}
	for (size_t k = 0; k < nr; k++) {
		if (bytes[k] > best) {
			best = bytes[k];
			body = rules[k];
		}
	}
	if (!best)
		return SC_UNKNOWN;
	/* the body starts where its rule is first in force */
	for (i = row_at(t, start - t->base); i < t->nr_rows && t->base + t->rows[i].pc < end; i++) {
		if (same_rule(rule_of(&t->rows[i]), body)) {
			body_from = t->base + t->rows[i].pc;
			if (body_from < start)
				body_from = start;
			break;
		}
	}
	if (vaddr < body_from)
		return SC_PROLOGUE;
	if (same_rule(here, body))
		return SC_BODY;
	/* past the body's start under another rule: the frame being taken down (rsp-based and
	 * nearer the entry's rsp + 8), or a push inside the body (deeper) */
	if (here.reg == HSBPF_DWARF_RSP && !here.deref &&
	    (body.reg != HSBPF_DWARF_RSP || here.off < body.off))
		return SC_EPILOGUE;
	return SC_BODY;
}

/* an object of the exact profile's mappings, opened once */
struct object {
	char *path;
	struct elf_image *img;
	struct unwind_table *t;
	struct unwind_fde *fdes;
	size_t nr_fdes;
	u64 plt[4][2];		/* .plt, .plt.sec, .plt.got */
	int nr_plt;
};

static void object_open(struct object *o, const char *path)
{
	GElf_Ehdr eh;
	Elf_Scn *scn = NULL;
	size_t shstr;
	Elf *elf;
	int fd;

	o->path = strdup(path);
	o->img = elf_image__open(path);
	if (unwind_table__build_path(path, &o->t))
		o->t = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && gelf_getehdr(elf, &eh) && !elf_getshdrstrndx(elf, &shstr)) {
		while ((scn = elf_nextscn(elf, scn)) && o->nr_plt < 4) {
			GElf_Shdr sh;
			const char *name;

			if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstr, sh.sh_name)))
				continue;
			if (!strcmp(name, ".plt") || !strcmp(name, ".plt.sec") || !strcmp(name, ".plt.got")) {
				o->plt[o->nr_plt][0] = sh.sh_addr;
				o->plt[o->nr_plt++][1] = sh.sh_addr + sh.sh_size;
			}
		}
		if (unwind_table__fdes(elf, &o->fdes, &o->nr_fdes))
			o->fdes = NULL, o->nr_fdes = 0;
	}
	if (elf)
		elf_end(elf);
	close(fd);
}

static void object_close(struct object *o)
{
	free(o->path);
	elf_image__close(o->img);
	unwind_table__free(o->t);
	free(o->fdes);
}

static enum sc_loc locate(struct object *o, u64 vaddr)
{
	const struct unwind_fde *f = NULL;
	size_t lo = 0, hi = o->nr_fdes, avail = 0;
	const u8 *b;
	bool ret;

	for (int i = 0; i < o->nr_plt; i++)
		if (vaddr >= o->plt[i][0] && vaddr < o->plt[i][1])
			return stack_check__location(NULL, 0, 0, vaddr, true, false);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (o->fdes[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && vaddr < o->fdes[lo - 1].end)
		f = &o->fdes[lo - 1];
	if (!f || !o->img)
		return SC_UNKNOWN;
	b = elf_image__bytes(o->img, vaddr, &avail);
	ret = b && avail && (b[0] == 0xc3 || b[0] == 0xc2 || (avail > 1 && b[0] == 0xf3 && b[1] == 0xc3));
	return stack_check__location(o->t, f->start, f->end, vaddr, false, ret);
}

/* the object holding ip in pid (opened on first use), and ip's ELF address; NULL when in no
 * mapping or not an ELF file */
static struct object *object_of(const struct profile *p, u32 pid, struct object *objs, size_t *nr_objs,
				u64 ip, u64 *vaddr, int *err)
{
	for (size_t m = 0; m < p->nr_mappings; m++) {
		const struct profile_mapping *pm = &p->mappings[m];
		const char *path = profile__str(p, pm->path);
		struct object *o = NULL;

		if (pm->pid != pid || ip < pm->start || ip - pm->start >= pm->len)
			continue;
		for (size_t k = 0; k < *nr_objs && !o; k++)
			if (!strcmp(objs[k].path, path))
				o = &objs[k];
		if (!o) {
			o = &objs[(*nr_objs)++];
			object_open(o, path);
			if (!o->path) {
				*err = -ENOMEM;
				return NULL;
			}
		}
		if (!o->img || elf_image__off_to_vaddr(o->img, ip - pm->start + pm->pgoff, vaddr))
			return NULL;
		return o;
	}
	return NULL;
}

static enum sc_cause cause_at(const struct profile *p, u32 pid, struct object *objs, size_t *nr_objs,
			      const u64 *fe, u32 at, int *err)
{
	u32 j = at ? at - 1 : 0;
	u64 vaddr;
	struct object *o = object_of(p, pid, objs, nr_objs, j ? fe[j] - 1 : fe[0], &vaddr, err);
	const struct unwind_row *r = o && o->t ? unwind_table__find(o->t, vaddr) : NULL;

	if (!r || r->cfa == HSBPF_CFA_NONE)
		return SC_CAUSE_NO_INFO;
	if (r->cfa == HSBPF_CFA_STALE)
		return SC_CAUSE_EH_INSTALL;
	if (j && r->cfa == HSBPF_CFA_REG && r->cfa_reg != HSBPF_DWARF_RSP && r->cfa_reg != HSBPF_DWARF_RBP)
		return SC_CAUSE_LEAF_RULE;
	return SC_CAUSE_OTHER;
}

static bool same_key(const struct profile *a, size_t i, const struct profile *b)
{
	const struct profile_sample_key *ka = profile__stack_sample_key(a, i), *kb = profile__stack_sample_key(b, i);

	return a->stack_samples[i].pid == b->stack_samples[i].pid && ka->tid == kb->tid && ka->time == kb->time;
}

static void show_stack(FILE *f, struct symbolizer *sy, u32 pid, const char *what, const u64 *ips, u32 nr)
{
	fprintf(f, "  %-6s", what);
	for (u32 i = 0; i < nr; i++) {
		struct profile_sample ps = { .pid = pid, .ip = ips[i] };
		struct sym_result r;

		if (sy) {
			symbolizer__resolve(sy, &ps, &r);
			fprintf(f, " %s+%#" PRIx64, r.sym, r.sym_off);
		} else {
			fprintf(f, " %#" PRIx64, ips[i]);
		}
	}
	fputc('\n', f);
}

int stack_check__profiles(const struct profile *exact, const struct profile *got,
			  struct stack_check *out)
{
	return stack_check__profiles_show(exact, got, out, 0, NULL);
}

int stack_check__profiles_show(const struct profile *exact, const struct profile *got,
			       struct stack_check *out, u32 show, FILE *f)
{
	struct symbolizer *sy = NULL;
	struct object *objs = NULL;
	size_t nr_objs = 0;
	int err = 0;

	memset(out, 0, sizeof(*out));
	snprintf(out->mode, sizeof(out->mode), "%s", got->meta.call_graph[0] ? got->meta.call_graph : "?");
	if (!exact->nr_stack_samples || !got->nr_stack_samples)
		return fail(-ENODATA, "the %s profile has no stack samples: nothing to compare (record with "
			    "hsbpf truth --step)", !exact->nr_stack_samples ? "exact" : "unwound");
	if (strcmp(exact->meta.call_graph, "exact"))
		return fail(-EINVAL, "the exact profile is not one (call graph '%s', not 'exact' from "
			    "hsbpf truth --step)", exact->meta.call_graph);
	if (exact->nr_stack_samples != got->nr_stack_samples)
		return fail(-EINVAL, "the profiles hold different samples (%zu and %zu): not from the same "
			    "hsbpf truth --step run", exact->nr_stack_samples, got->nr_stack_samples);
	objs = calloc(exact->nr_mappings + 1, sizeof(*objs));
	if (!objs)
		return -ENOMEM;
	for (size_t i = 0; i < exact->nr_stack_samples; i++) {
		const struct profile_stack *se = profile__stack(exact, exact->stack_samples[i].user);
		const struct profile_stack *sg = profile__stack(got, got->stack_samples[i].user);
		const u64 *fe, *fg;
		enum sc_loc loc = SC_UNKNOWN;
		enum sc_kind kind;
		u32 at, ng;

		if (!same_key(exact, i, got)) {
			err = fail(-EINVAL, "sample %zu differs in its thread or number between the profiles: "
				   "not from the same hsbpf truth --step run", i);
			goto cleanup;
		}
		if (!se || !se->nr || se->end == PROFILE_STACK_LOST) {
			err = fail(-EINVAL, "sample %zu of the exact profile has no stack", i);
			goto cleanup;
		}
		fe = profile__frames(exact, se);
		fg = sg && sg->end != PROFILE_STACK_LOST ? profile__frames(got, sg) : NULL;
		ng = fg ? sg->nr : 0;
		/* an exact stack cut at the unwinder's limit is compared on as many frames */
		if (se->end == HSBPF_STACK_DEPTH) {
			out->exact_cut++;
			if (ng > se->nr)
				ng = se->nr;
		}
		kind = stack_check__kind(fe, se->nr, fg, ng, &at);
		{
			u64 vaddr;
			struct object *o = object_of(exact, exact->stack_samples[i].pid, objs, &nr_objs, fe[0],
						     &vaddr, &err);

			if (err)
				goto cleanup;
			if (o)
				loc = locate(o, vaddr);
		}
		if (kind != SC_EQUAL) {
			out->cause[cause_at(exact, exact->stack_samples[i].pid, objs, &nr_objs, fe, at, &err)]++;
			if (err)
				goto cleanup;
		}
		if (kind != SC_EQUAL && show) {
			show--;
			fprintf(f, "sample %zu (tid %u): %s at frame %u, %s\n", i,
				profile__stack_sample_key(exact, i)->tid, sc_kind_names[kind], at, sc_loc_names[loc]);
			if (!sy)
				sy = symbolizer__new(exact);
			show_stack(f, sy, exact->stack_samples[i].pid, "exact", fe, se->nr);
			show_stack(f, sy, exact->stack_samples[i].pid, out->mode, fg, ng);
			if (sg)
				fprintf(f, "  (the %s stack ended with reason %u)\n", out->mode, sg->end);
		}
		out->compared++;
		out->equal += kind == SC_EQUAL;
		out->at_loc[loc]++;
		out->n[kind][loc]++;
	}
cleanup:
	for (size_t k = 0; k < nr_objs; k++)
		object_close(&objs[k]);
	free(objs);
	symbolizer__free(sy);
	return err;
}

void stack_check__print(const struct stack_check *sc, bool json, FILE *f)
{
	json_writer_t *w;

	if (!json) {
		fprintf(f, "%s stacks against the exact ones: %" PRIu64 " samples, %" PRIu64 " equal (%.2f%%)\n",
			sc->mode, sc->compared, sc->equal, sc->compared ? 100.0 * sc->equal / sc->compared : 0);
		fprintf(f, "%-10s %9s", "location", "samples");
		for (int k = 0; k < SC_NR_KINDS; k++)
			fprintf(f, " %12s", sc_kind_names[k]);
		fputc('\n', f);
		for (int l = 0; l < SC_NR_LOCS; l++) {
			if (!sc->at_loc[l])
				continue;
			fprintf(f, "%-10s %9" PRIu64, sc_loc_names[l], sc->at_loc[l]);
			for (int k = 0; k < SC_NR_KINDS; k++)
				fprintf(f, " %12" PRIu64, sc->n[k][l]);
			fputc('\n', f);
		}
		if (sc->compared > sc->equal) {
			fprintf(f, "unequal by cause:");
			for (int c = 0; c < SC_NR_CAUSES; c++)
				fprintf(f, " %s %" PRIu64, sc_cause_names[c], sc->cause[c]);
			fputc('\n', f);
		}
		if (sc->exact_cut)
			fprintf(f, "(%" PRIu64 " exact stacks deeper than %d frames compared on their first %d)\n",
				sc->exact_cut, HSBPF_MAX_FRAMES, HSBPF_MAX_FRAMES);
		return;
	}
	w = jsonw_new(f);
	if (!w)
		return;
	jsonw_start_object(w);
	jsonw_string_field(w, "call_graph", sc->mode);
	jsonw_uint_field(w, "samples", sc->compared);
	jsonw_uint_field(w, "equal", sc->equal);
	jsonw_float_field(w, "equal_share", sc->compared ? (double)sc->equal / sc->compared : 0);
	jsonw_uint_field(w, "exact_cut", sc->exact_cut);
	jsonw_name(w, "unequal_by_cause");
	jsonw_start_object(w);
	for (int c = 0; c < SC_NR_CAUSES; c++)
		jsonw_uint_field(w, sc_cause_names[c], sc->cause[c]);
	jsonw_end_object(w);
	jsonw_name(w, "by_location");
	jsonw_start_object(w);
	for (int l = 0; l < SC_NR_LOCS; l++) {
		jsonw_name(w, sc_loc_names[l]);
		jsonw_start_object(w);
		jsonw_uint_field(w, "samples", sc->at_loc[l]);
		for (int k = 0; k < SC_NR_KINDS; k++)
			jsonw_uint_field(w, sc_kind_names[k], sc->n[k][l]);
		jsonw_end_object(w);
	}
	jsonw_end_object(w);
	jsonw_end_object(w);
	jsonw_destroy(&w);
}
