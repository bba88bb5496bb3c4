// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Evaluation: samples of one object aggregated per address, blocks from the object's code with
 * their exact counts, estimates scaled to instructions, then the metrics. */
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include "symbols/bblock.h"
#include "symbols/elf_image.h"
#include "eval.h"
#include "hsbpf.h"
#include "lib/json_writer.h"
#include "report/lbr_estimate.h"

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

/* one object's share of the inputs, appended to the arrays */
struct eval_acc {
	struct metric_ip *ips;
	size_t nr_ips, cap_ips;
	struct metric_block *blocks;
	size_t nr_blocks, cap_blocks;
	double *fx, *fe;
	size_t nr_funcs, cap_fx, cap_fe;
	u64 ni, ns;
};

static int add_object(const struct profile *p, struct symbolizer *sy, const struct truth *t, u32 obj,
		      double k, bool scale_to_exact, struct eval_acc *acc, struct addr_count *s, size_t nr)
{
	const char *path = truth__str(t, t->objects[obj].path);
	const struct bblock_table *bt = symbolizer__blocks(sy, path);
	size_t base_b = acc->nr_blocks, base_f = acc->nr_funcs;

	(void)p;
	(void)scale_to_exact;
	if (!bt)
		return fail(-ENOENT, "cannot read the blocks of '%s'", path);
	if (array__reserve((void **)&acc->blocks, &acc->cap_blocks, base_b + bt->nr + 1, sizeof(*acc->blocks)) ||
	    array__reserve((void **)&acc->fx, &acc->cap_fx, base_f + bt->nr_funcs + 1, sizeof(double)) ||
	    array__reserve((void **)&acc->fe, &acc->cap_fe, base_f + bt->nr_funcs + 1, sizeof(double)) ||
	    array__reserve((void **)&acc->ips, &acc->cap_ips, acc->nr_ips + nr + 1, sizeof(*acc->ips)))
		return -ENOMEM;
	for (size_t b = 0; b < bt->nr; b++) {
		struct metric_block *mb = &acc->blocks[base_b + b];

		mb->count = exact_at(t, obj, bt->blocks[b].start);
		mb->ninsns = bt->blocks[b].ninsns;
		mb->est_insns = 0;
		acc->fx[base_f + bt->blocks[b].func] += (double)mb->count * mb->ninsns;
	}
	for (size_t i = 0; i < nr; i++) {
		const struct bblock *b = bblock_table__find(bt, s[i].vaddr);
		struct metric_ip *ip = &acc->ips[acc->nr_ips++];

		ip->c = s[i].count;
		ip->block = b ? (long)(base_b + (b - bt->blocks)) : -1;
		ip->r = b ? acc->blocks[ip->block].count : 0;
		if (b) {
			acc->blocks[ip->block].est_insns += s[i].count * k;
			acc->fe[base_f + b->func] += s[i].count * k;
		}
	}
	acc->nr_blocks += bt->nr;
	acc->nr_funcs += bt->nr_funcs;
	return 0;
}

/* samples of one object, one entry per address */
static int object_samples(const struct profile *p, struct symbolizer *sy, const char *path,
			  struct addr_count **out, size_t *nr_out, u64 *ns)
{
	struct addr_count *s = NULL;
	size_t nr = 0, cap = 0, o = 0;

	for (size_t i = 0; i < p->nr_samples; i++) {
		struct sym_result r;

		if (p->samples[i].flags & HSBPF_KEY_KERNEL)
			continue;
		symbolizer__resolve(sy, &p->samples[i], &r);
		if (strcmp(r.dso, path))
			continue;
		if (array__reserve((void **)&s, &cap, nr + 1, sizeof(*s))) {
			free(s);
			return -ENOMEM;
		}
		s[nr++] = (struct addr_count){ r.vaddr, p->samples[i].count };
		*ns += p->samples[i].count;
	}
	if (nr > 1)
		qsort(s, nr, sizeof(*s), cmp_addr);
	for (size_t i = 0; i < nr; i++) {
		if (o && s[o - 1].vaddr == s[i].vaddr)
			s[o - 1].count += s[i].count;
		else
			s[o++] = s[i];
	}
	*out = s;
	*nr_out = o;
	return 0;
}

int eval__objects(const struct profile *p, struct symbolizer *sy, const struct truth *t,
		  const u32 *objs, size_t nr_objs, struct eval_result *res)
{
	struct addr_count *s[16] = {};
	size_t nr[16] = {}, off = 0;
	struct eval_acc acc = {};
	bool by_period;
	double k;
	int err = 0;

	memset(res, 0, sizeof(*res));
	if (nr_objs > 16)
		return -E2BIG;
	for (size_t i = 0; i < nr_objs && !err; i++) {
		const char *path = truth__str(t, t->objects[objs[i]].path);

		off += snprintf(res->object + off, off < sizeof(res->object) ? sizeof(res->object) - off : 0,
				"%s%s", i ? "," : "", path);
		err = check_build(p, t, objs[i], path);
		for (size_t j = 0; !err && j < t->nr_insns; j++)
			if (t->insns[j].obj == objs[i])
				acc.ni += t->insns[j].count;
		if (!err)
			err = object_samples(p, sy, path, &s[i], &nr[i], &acc.ns);
	}
	if (err)
		goto out;
	if (!acc.ns || !acc.ni) {
		err = -ENODATA;
		goto out;
	}
	/* what one sample stands for: the period when it counts instructions, else the exact
	 * total spread over the samples (time and other events) */
	by_period = p->meta.event_type == PERF_TYPE_HARDWARE &&
		    p->meta.event_config == PERF_COUNT_HW_INSTRUCTIONS;
	if (by_period) {
		k = (double)profile__total_weight(p) / profile__total_samples(p);
		snprintf(res->estimator, sizeof(res->estimator), "ip samples x period (instructions)");
	} else {
		k = (double)acc.ni / acc.ns;
		snprintf(res->estimator, sizeof(res->estimator), "ip samples scaled to the exact total (%s)",
			 p->meta.event);
	}
	res->insns_per_sample = k;
	for (size_t i = 0; i < nr_objs && !err; i++)
		err = add_object(p, sy, t, objs[i], k, !by_period, &acc, s[i], nr[i]);
	/* with branch stacks, block estimates come from the ranges instead */
	if (!err && p->nr_lbr) {
		double *est = calloc(acc.nr_blocks + 1, sizeof(double)), total = 0;
		size_t base = 0;
		u64 used = 0, n;

		for (size_t i = 0; est && i < nr_objs; i++) {
			const char *path = truth__str(t, t->objects[objs[i]].path);
			const struct bblock_table *bt = symbolizer__blocks(sy, path);

			lbr_estimate__block_execs(p, sy, path, bt, est + base, &n);
			used += n;
			for (size_t b = 0; b < bt->nr; b++) {
				est[base + b] *= bt->blocks[b].ninsns;
				total += est[base + b];
			}
			base += bt->nr;
		}
		if (!est) {
			err = -ENOMEM;
		} else if (used && total > 0) {
			size_t bb = 0, bf = 0;

			for (size_t i = 0; i < nr_objs; i++) {
				const struct bblock_table *bt =
					symbolizer__blocks(sy, truth__str(t, t->objects[objs[i]].path));

				for (size_t f = 0; f < bt->nr_funcs; f++)
					acc.fe[bf + f] = 0;
				for (size_t b = 0; b < bt->nr; b++) {
					acc.blocks[bb + b].est_insns = est[bb + b] * acc.ni / total;
					acc.fe[bf + bt->blocks[b].func] += acc.blocks[bb + b].est_insns;
				}
				bb += bt->nr;
				bf += bt->nr_funcs;
			}
			snprintf(res->estimator, sizeof(res->estimator),
				 "lbr ranges (%" PRIu64 " distinct), scaled to the exact total", used);
		}
		/* no range fell in these objects: the IP estimates stand */
		free(est);
	}
	if (!err)
		err = metrics__compute(acc.ips, acc.nr_ips, acc.blocks, acc.nr_blocks, acc.ni, &res->m);
	if (!err)
		res->m.top_funcs = metrics__top_overlap(acc.fx, acc.fe, acc.nr_funcs, 10);
out:
	for (size_t i = 0; i < nr_objs && i < 16; i++)
		free(s[i]);
	free(acc.ips);
	free(acc.blocks);
	free(acc.fx);
	free(acc.fe);
	return err;
}

int eval__object(const struct profile *p, struct symbolizer *sy, const struct truth *t, u32 obj,
		 struct eval_result *res)
{
	return eval__objects(p, sy, t, &obj, 1, res);
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
			char obj[4 * sizeof(res[i].object)], est[4 * sizeof(res[i].estimator)];

			fprintf(out, "%s\n  %" PRIu64 " samples at %zu addresses, %" PRIu64 " instructions executed\n"
				"  estimator: %s, %.4g instructions per sample\n"
				"  NRMSE %.4f  SC %.4f  OD %.4f  AE %.4f\n"
				"  top-10 functions %d/10  top-20 blocks %d/20  rank correlation %.4f\n",
				str__escape(res[i].object, obj, sizeof(obj)), m->ns, m->m, m->ni,
				str__escape(res[i].estimator, est, sizeof(est)), res[i].insns_per_sample,
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
