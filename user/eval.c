// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Evaluation: samples of one object aggregated per address, blocks from the object's code with
 * their exact counts, estimates scaled to instructions, then the metrics. */
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include "bblock.h"
#include "elf_image.h"
#include "eval.h"
#include "hsbpf.h"
#include "json_writer.h"

u32 eval__program_object(const struct truth *t)
{
	return truth__object(t, t->meta.program);
}

struct addr_count {
	u64 vaddr, count;
};

static int cmp_addr(const void *a, const void *b)
{
	const struct addr_count *x = a, *y = b;

	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

/* a profile of another build: the mapping's recorded build-id differs from the truth's */
static int check_build(const struct profile *p, const struct truth *t, u32 obj, const char *path)
{
	const struct truth_object *o = &t->objects[obj];

	for (size_t i = 0; i < p->nr_mappings; i++) {
		const struct profile_mapping *m = &p->mappings[i];

		if (strcmp(profile__str(p, m->path), path) || !m->build_id_size || !o->build_id_size)
			continue;
		if (m->build_id_size != o->build_id_size || memcmp(m->build_id, o->build_id, o->build_id_size))
			return fail(-ESTALE, "the truth file belongs to another build of '%s' "
				    "(build-ids differ)", path);
	}
	return 0;
}

static u64 exact_at(const struct truth *t, u32 obj, u64 vaddr)
{
	const struct truth_insn *in = truth__insn(t, obj, vaddr);

	return in ? in->count : 0;
}

int eval__object(const struct profile *p, struct symbolizer *sy, const struct truth *t, u32 obj,
		 struct eval_result *res)
{
	const char *path = truth__str(t, t->objects[obj].path);
	struct addr_count *s = NULL;
	struct metric_ip *ips = NULL;
	struct metric_block *blocks = NULL;
	const struct bblock_table *bt;
	double *fx = NULL, *fe = NULL, k;
	size_t nr = 0, cap = 0, o = 0;
	u64 ni = 0, ns = 0;
	int err;

	memset(res, 0, sizeof(*res));
	snprintf(res->object, sizeof(res->object), "%s", path);
	err = check_build(p, t, obj, path);
	if (err)
		return err;
	for (size_t i = 0; i < t->nr_insns; i++)
		if (t->insns[i].obj == obj)
			ni += t->insns[i].count;
	for (size_t i = 0; i < p->nr_samples; i++) {
		struct sym_result r;

		if (p->samples[i].flags & HSBPF_KEY_KERNEL)
			continue;
		symbolizer__resolve(sy, &p->samples[i], &r);
		if (strcmp(r.dso, path))
			continue;
		if (array__reserve((void **)&s, &cap, nr + 1, sizeof(*s))) {
			err = -ENOMEM;
			goto out;
		}
		s[nr++] = (struct addr_count){ r.vaddr, p->samples[i].count };
		ns += p->samples[i].count;
	}
	if (!ns || !ni) {
		err = -ENODATA;
		goto out;
	}
	if (nr > 1)
		qsort(s, nr, sizeof(*s), cmp_addr);
	for (size_t i = 0; i < nr; i++) {	/* one entry per address */
		if (o && s[o - 1].vaddr == s[i].vaddr)
			s[o - 1].count += s[i].count;
		else
			s[o++] = s[i];
	}
	nr = o;
	bt = symbolizer__blocks(sy, path);
	if (!bt) {
		err = fail(-ENOENT, "cannot read the blocks of '%s'", path);
		goto out;
	}
	/* what one sample stands for: the period when it counts instructions, else the exact
	 * total spread over the samples (time and other events) */
	if (p->meta.event_type == PERF_TYPE_HARDWARE && p->meta.event_config == PERF_COUNT_HW_INSTRUCTIONS) {
		k = (double)profile__total_weight(p) / profile__total_samples(p);
		snprintf(res->estimator, sizeof(res->estimator), "ip samples x period (instructions)");
	} else {
		k = (double)ni / ns;
		snprintf(res->estimator, sizeof(res->estimator), "ip samples scaled to the exact total (%s)",
			 p->meta.event);
	}
	res->insns_per_sample = k;
	ips = calloc(nr, sizeof(*ips));
	blocks = calloc(bt->nr + 1, sizeof(*blocks));
	fx = calloc(bt->nr_funcs + 1, sizeof(*fx));
	fe = calloc(bt->nr_funcs + 1, sizeof(*fe));
	if (!ips || !blocks || !fx || !fe) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t b = 0; b < bt->nr; b++) {
		blocks[b].count = exact_at(t, obj, bt->blocks[b].start);
		blocks[b].ninsns = bt->blocks[b].ninsns;
		fx[bt->blocks[b].func] += (double)blocks[b].count * blocks[b].ninsns;
	}
	for (size_t i = 0; i < nr; i++) {
		const struct bblock *b = bblock_table__find(bt, s[i].vaddr);

		ips[i].c = s[i].count;
		ips[i].block = b ? b - bt->blocks : -1;
		ips[i].r = b ? blocks[ips[i].block].count : 0;
		if (b) {
			blocks[ips[i].block].est_insns += s[i].count * k;
			fe[b->func] += s[i].count * k;
		}
	}
	err = metrics__compute(ips, nr, blocks, bt->nr, ni, &res->m);
	if (!err)
		res->m.top_funcs = metrics__top_overlap(fx, fe, bt->nr_funcs, 10);
out:
	free(s);
	free(ips);
	free(blocks);
	free(fx);
	free(fe);
	return err;
}

void eval__print(const struct eval_result *res, size_t nr, bool json, FILE *out)
{
	json_writer_t *w = json ? jsonw_new(out) : NULL;

	if (w) {
		jsonw_start_object(w);
		jsonw_name(w, "objects");
		jsonw_start_array(w);
	}
	for (size_t i = 0; i < nr; i++) {
		const struct metrics *m = &res[i].m;

		if (!w) {
			fprintf(out, "%s\n  %" PRIu64 " samples at %zu addresses, %" PRIu64 " instructions executed\n"
				"  estimator: %s, %.4g instructions per sample\n"
				"  NRMSE %.4f  SC %.4f  OD %.4f  AE %.4f\n"
				"  top-10 functions %d/10  top-20 blocks %d/20  rank correlation %.4f\n",
				res[i].object, m->ns, m->m, m->ni, res[i].estimator, res[i].insns_per_sample,
				m->nrmse, m->sc, m->od, m->ae, m->top_funcs, m->top_blocks, m->spearman);
			continue;
		}
		jsonw_start_object(w);
		jsonw_string_field(w, "object", res[i].object);
		jsonw_uint_field(w, "samples", m->ns);
		jsonw_uint_field(w, "addresses", m->m);
		jsonw_uint_field(w, "instructions", m->ni);
		jsonw_string_field(w, "estimator", res[i].estimator);
		jsonw_float_field(w, "insns_per_sample", res[i].insns_per_sample);
		jsonw_float_field(w, "nrmse", m->nrmse);
		jsonw_float_field(w, "sc", m->sc);
		jsonw_float_field(w, "od", m->od);
		jsonw_float_field(w, "ae", m->ae);
		jsonw_uint_field(w, "top10_functions", m->top_funcs);
		jsonw_uint_field(w, "top20_blocks", m->top_blocks);
		jsonw_float_field(w, "spearman", m->spearman);
		jsonw_end_object(w);
	}
	if (w) {
		jsonw_end_array(w);
		jsonw_end_object(w);
		jsonw_destroy(&w);
	}
}
