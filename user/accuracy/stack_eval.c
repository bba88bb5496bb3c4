// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Stack profiles against the calling-context tree (stack_eval.h, docs/accuracy.md). */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "symbols/elf_image.h"
#include "lib/hashidx.h"
#include "lib/json_writer.h"
#include "stack_eval.h"
#include "symbols/symbolizer.h"

/* ---- the metrics ---- */

struct rank {
	u32 func;
	double share;
};

static int cmp_rank(const void *a, const void *b)
{
	const struct rank *x = a, *y = b;

	if (x->share != y->share)
		return x->share > y->share ? -1 : 1;
	return x->func < y->func ? -1 : x->func > y->func;
}

/* the nearest ancestor of n with n's function, or SE_NO_PARENT */
static u32 same_ancestor(const struct se_node *nodes, u32 n)
{
	for (u32 a = nodes[n].parent; a != SE_NO_PARENT; a = nodes[a].parent)
		if (nodes[a].func == nodes[n].func)
			return a;
	return SE_NO_PARENT;
}

int stack_eval__score(const struct se_node *nodes, size_t nr_nodes, const struct se_sample *s,
		      size_t nr_samples, u32 nr_funcs, size_t top_n, struct stack_score *out)
{
	u64 *incl = calloc(nr_nodes + 1, sizeof(*incl)), *w = calloc(nr_nodes + 1, sizeof(*w));
	u32 *up = calloc(nr_nodes + 1, sizeof(*up)), *slot = calloc(nr_funcs + 1, sizeof(*slot));
	double *exact = calloc(nr_funcs + 1, sizeof(*exact)), *sampled = calloc(nr_funcs + 1, sizeof(*sampled));
	bool *root = calloc(nr_funcs + 1, 1), *seen = calloc(nr_funcs + 1, 1);
	struct rank *rk = calloc(nr_funcs + 1, sizeof(*rk));
	double *csplit = NULL, *ssplit = NULL;	/* [top][caller] */
	u64 total = 0;
	size_t ntop;
	int err = -ENOMEM;

	memset(out, 0, sizeof(*out));
	if (!incl || !w || !up || !slot || !exact || !sampled || !root || !seen || !rk)
		goto cleanup;
	/* the exact tree: inclusive per node; per function, the nodes with no ancestor of it */
	for (size_t i = 0; i < nr_nodes; i++) {
		incl[i] = nodes[i].self;
		total += nodes[i].self;
	}
	for (size_t i = nr_nodes; i-- > 0;)
		if (nodes[i].parent != SE_NO_PARENT)
			incl[nodes[i].parent] += incl[i];
	for (size_t i = 0; i < nr_nodes; i++) {
		up[i] = same_ancestor(nodes, i);
		if (up[i] == SE_NO_PARENT)
			exact[nodes[i].func] += incl[i];
		if (nodes[i].parent == SE_NO_PARENT && incl[i])
			root[nodes[i].func] = true;
	}
	/* the sampled stacks */
	for (size_t i = 0; i < nr_samples; i++) {
		out->samples += s[i].weight;
		if (!s[i].nr)
			continue;
		out->with_stack += s[i].weight;
		if (root[s[i].funcs[s[i].nr - 1]])
			out->complete += s[i].weight;
		for (u32 k = 0; k < s[i].nr; k++)
			if (!seen[s[i].funcs[k]]) {
				seen[s[i].funcs[k]] = true;
				sampled[s[i].funcs[k]] += s[i].weight;
			}
		for (u32 k = 0; k < s[i].nr; k++)
			seen[s[i].funcs[k]] = false;
	}
	if (!out->with_stack) {
		err = -ENODATA;
		goto cleanup;
	}
	out->complete_share = (double)out->complete / out->with_stack;
	/* the top functions by exact inclusive share */
	for (u32 f = 0; f < nr_funcs; f++)
		rk[f] = (struct rank){ f, total ? exact[f] / total : 0 };
	qsort(rk, nr_funcs, sizeof(*rk), cmp_rank);
	ntop = top_n < nr_funcs ? top_n : nr_funcs;
	while (ntop && rk[ntop - 1].share <= 0)
		ntop--;
	out->top = calloc(ntop + 1, sizeof(*out->top));
	csplit = calloc((ntop + 1) * (nr_funcs + 1), sizeof(*csplit));
	ssplit = calloc((ntop + 1) * (nr_funcs + 1), sizeof(*ssplit));
	if (!out->top || !csplit || !ssplit)
		goto cleanup;
	for (size_t k = 0; k < ntop; k++)
		slot[rk[k].func] = k + 1;
	/* the exact caller split: each node's time not under a deeper node of its function, to
	 * its caller (nr_funcs for a root) */
	for (size_t i = 0; i < nr_nodes; i++)
		w[i] = incl[i];
	for (size_t i = 0; i < nr_nodes; i++)
		if (up[i] != SE_NO_PARENT)
			w[up[i]] -= incl[i];
	for (size_t i = 0; i < nr_nodes; i++) {
		u32 sl = slot[nodes[i].func];

		if (sl)
			csplit[(sl - 1) * (nr_funcs + 1) +
			       (nodes[i].parent == SE_NO_PARENT ? nr_funcs : nodes[nodes[i].parent].func)] += w[i];
	}
	/* the sampled split: the caller of the innermost frame of the function */
	for (size_t i = 0; i < nr_samples; i++)
		for (u32 k = 0; k < s[i].nr; k++) {
			u32 sl = slot[s[i].funcs[k]];
			bool inner = true;

			for (u32 j = 0; j < k && inner; j++)
				inner = s[i].funcs[j] != s[i].funcs[k];
			if (sl && inner)
				ssplit[(sl - 1) * (nr_funcs + 1) + (k + 1 < s[i].nr ? s[i].funcs[k + 1] : nr_funcs)] +=
					s[i].weight;
		}
	for (size_t k = 0; k < ntop; k++) {
		struct se_func *tf = &out->top[k];
		u32 f = rk[k].func;
		double tv = 0;

		tf->func = f;
		tf->exact = rk[k].share;
		tf->sampled = sampled[f] / out->with_stack;
		if (!sampled[f]) {
			tv = 1;	/* never sampled: no split to compare */
		} else {
			for (u32 g = 0; g <= nr_funcs; g++)
				tv += fabs(ssplit[k * (nr_funcs + 1) + g] / sampled[f] -
					   csplit[k * (nr_funcs + 1) + g] / exact[f]);
			tv /= 2;
		}
		tf->caller_tv = tv;
		out->incl_mae += fabs(tf->sampled - tf->exact);
		if (fabs(tf->sampled - tf->exact) > out->incl_max)
			out->incl_max = fabs(tf->sampled - tf->exact);
		out->caller_tv_mean += tv;
	}
	out->nr_top = ntop;
	if (ntop) {
		out->incl_mae /= ntop;
		out->caller_tv_mean /= ntop;
	}
	err = 0;
cleanup:
	if (err)
		stack_eval__free(out);
	free(incl);
	free(w);
	free(up);
	free(slot);
	free(exact);
	free(sampled);
	free(root);
	free(seen);
	free(rk);
	free(csplit);
	free(ssplit);
	return err;
}

void stack_eval__free(struct stack_score *sc)
{
	free(sc->top);
	sc->top = NULL;
	sc->nr_top = 0;
}

/* ---- from a profile and a truth ---- */

struct fkey {
	u32 obj, pad;
	u64 addr;		/* the symbol's, or the frame entry's for code without one */
};

struct resolver {
	const struct truth *t;
	struct elf_image **imgs;
	struct fkey *keys;
	size_t nr, cap;
	struct hashidx idx;
	/* blocks of nodes without a symbol: where a frame in stripped code belongs */
	struct anon_block {
		u32 obj, func;
		u64 vaddr, insns;
	} *ab;
	size_t nr_ab;
};

static bool fkey_eq(const void *key, u32 pos, void *ctx)
{
	const struct fkey *k = key, *e = &((struct resolver *)ctx)->keys[pos];

	return k->obj == e->obj && k->addr == e->addr;
}

static s64 func_id(struct resolver *rs, u32 obj, u64 addr)
{
	struct fkey k = { obj, 0, addr };
	u64 h = hashidx__hash(&k, sizeof(k), 0x5e);
	s64 pos = hashidx__find(&rs->idx, h, &k, fkey_eq, rs);

	if (pos >= 0)
		return pos;
	if (array__reserve((void **)&rs->keys, &rs->cap, rs->nr + 1, sizeof(*rs->keys)) ||
	    hashidx__insert(&rs->idx, h, rs->nr))
		return -ENOMEM;
	rs->keys[rs->nr] = k;
	return rs->nr++;
}

static int cmp_ab(const void *a, const void *b)
{
	const struct anon_block *x = a, *y = b;

	if (x->obj != y->obj)
		return x->obj < y->obj ? -1 : 1;
	if (x->vaddr != y->vaddr)
		return x->vaddr < y->vaddr ? -1 : 1;
	return x->insns > y->insns ? -1 : x->insns < y->insns;	/* the busiest first */
}

/* the function id of an ELF address of object obj; -ENOENT if it is in none */
static s64 addr_func(struct resolver *rs, u32 obj, u64 vaddr)
{
	const struct elf_func *f = rs->imgs[obj] ? elf_image__func_at(rs->imgs[obj], vaddr) : NULL;
	size_t lo = 0, hi = rs->nr_ab;

	if (f)
		return func_id(rs, obj, f->addr);
	/* the last block of a symbol-less node that starts at or before it */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (rs->ab[mid].obj < obj || (rs->ab[mid].obj == obj && rs->ab[mid].vaddr <= vaddr))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && rs->ab[lo - 1].obj == obj) {
		size_t i = lo - 1;

		/* several nodes ran that block: the busiest, first of its address */
		while (i > 0 && rs->ab[i - 1].obj == obj && rs->ab[i - 1].vaddr == rs->ab[i].vaddr)
			i--;
		return rs->ab[i].func;
	}
	return func_id(rs, obj, 0);
}

/* The code a new thread starts in, before its first function: glibc's clone3 wrapper
 * natively, its clone fallback under QEMU 7.2 (which has no clone3). Both sides are rooted
 * at the function it calls (start_thread), so the two launchers compare equal. */
static bool thread_launcher(const char *name)
{
	static const char *const names[] = { "__clone3", "__clone", "clone3", "clone", "__thread_start" };

	for (size_t i = 0; name && i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i]))
			return true;
	return false;
}

/* whether cnode n is a thread's root in a launcher */
static bool launcher_root(struct resolver *rs, const struct truth_cnode *n)
{
	const struct elf_func *f;

	if (n->parent != TRUTH_NO_NODE || n->obj >= rs->t->nr_objects || !rs->imgs[n->obj])
		return false;
	f = elf_image__func_at(rs->imgs[n->obj], n->func);
	return f && f->addr == n->func && thread_launcher(f->name);
}

/* the length of the name of the function that name is a part of (X of X.cold, X.part.2,
 * X.part.2.cold), or 0 when it is none */
static size_t part_base(const char *name)
{
	const char *c = name ? strstr(name, ".cold") : NULL, *p = name ? strstr(name, ".part.") : NULL;
	const char *cut = c && (!p || c < p) ? c : p;

	return cut && cut > name ? (size_t)(cut - name) : 0;
}

/* per function id, the function it is a part of (itself when none); ids of whole functions
 * not seen yet are added */
static int fold_parts(struct resolver *rs, u32 **out)
{
	size_t nr = rs->nr;
	u32 *fold = calloc(nr + 1, sizeof(*fold));

	if (!fold)
		return -ENOMEM;
	for (u32 f = 0; f < nr; f++) {
		const struct fkey *k = &rs->keys[f];
		const struct elf_image *img = k->obj < rs->t->nr_objects ? rs->imgs[k->obj] : NULL;
		const struct elf_func *ef = img && k->addr ? elf_image__func_at(img, k->addr) : NULL;
		size_t len = ef && ef->addr == k->addr ? part_base(ef->name) : 0;

		fold[f] = f;
		for (size_t i = 0; len && i < img->nr_funcs; i++) {
			const struct elf_func *w = &img->funcs[i];
			s64 id;

			if (strncmp(w->name, ef->name, len) || w->name[len])
				continue;
			id = func_id(rs, k->obj, w->addr);
			if (id < 0) {
				free(fold);
				return -ENOMEM;
			}
			fold[f] = id;
			break;
		}
	}
	*out = fold;
	return 0;
}

/* a node's function: its symbol, or its entry */
static s64 node_func(struct resolver *rs, const struct truth_cnode *n)
{
	const struct elf_func *f;

	if (n->obj >= rs->t->nr_objects)
		return func_id(rs, UINT32_MAX, 0);
	f = rs->imgs[n->obj] ? elf_image__func_at(rs->imgs[n->obj], n->func) : NULL;
	return func_id(rs, n->obj, f && f->addr == n->func ? f->addr : n->func);
}

/* a profile's samples as function ids from the sampled frame out, plus one stackless
 * sample for the flat histogram's samples without a stack sample */
struct se_stacks {
	struct se_sample *ss;
	size_t nss;
	u32 *funcs;
};

static void se_stacks__free(struct se_stacks *st)
{
	free(st->ss);
	free(st->funcs);
}

static int profile_stacks(struct resolver *rs, const struct profile *p, struct symbolizer *sy,
			  struct stack_eval *out, struct se_stacks *res)
{
	struct se_sample *ss = calloc(p->nr_stack_samples + 2, sizeof(*ss));
	u32 *funcs = NULL;
	size_t nfuncs = 0, cap_funcs = 0, nss = 0;
	u64 nsamples = 0, with = 0;

	if (!ss)
		return -ENOMEM;
	for (size_t i = 0; i < p->nr_samples; i++)
		nsamples += p->samples[i].count;
	for (size_t i = 0; i < p->nr_stack_samples; i++) {
		const struct profile_stack_sample *sm = &p->stack_samples[i];
		const struct profile_stack *st = sm->user && sm->user <= p->nr_stacks ? &p->stacks[sm->user - 1] : NULL;
		size_t first = nfuncs;

		if (st && st->end != PROFILE_STACK_LOST)
			for (u32 k = 0; k < st->nr; k++) {
				struct profile_sample fs = { .pid = sm->pid, .exec_ns = sm->exec_ns,
							     .ip = p->frames[st->first + k] - (k > 0) };
				struct sym_result r;
				u32 obj;
				s64 f;

				symbolizer__resolve(sy, &fs, &r);
				/* the launcher under a thread's first function (see launcher_root) */
				if (k + 1 == st->nr && nfuncs > first && !r.kernel && thread_launcher(r.sym)) {
					if (out)
						out->launchers += sm->count;
					continue;
				}
				obj = r.kernel ? TRUTH_NO_OBJECT : truth__object(rs->t, r.dso);
				if (obj == TRUTH_NO_OBJECT) {
					if (out)
						out->frames_outside++;
					continue;
				}
				f = addr_func(rs, obj, r.vaddr);
				if (f < 0 || array__reserve((void **)&funcs, &cap_funcs, nfuncs + 1, sizeof(*funcs))) {
					free(ss);
					free(funcs);
					return -ENOMEM;
				}
				funcs[nfuncs++] = f;
			}
		ss[nss].nr = nfuncs - first;
		ss[nss].funcs = (const u32 *)(uintptr_t)first;	/* an index until funcs stops moving */
		ss[nss++].weight = sm->count;
	}
	for (size_t i = 0; i < nss; i++) {
		ss[i].funcs = funcs + (uintptr_t)ss[i].funcs;
		with += ss[i].weight;
	}
	/* samples of the flat histogram that have no stack sample count as stackless */
	if (nsamples > with)
		ss[nss++] = (struct se_sample){ NULL, 0, nsamples - with };
	*res = (struct se_stacks){ ss, nss, funcs };
	return 0;
}

/* in each sample, function ids as the function they are a part of; a part's frame right
 * outside its own function's frame goes */
static void fold_samples(struct se_sample *ss, size_t nss, const u32 *fold, u32 nfold)
{
	for (size_t i = 0; i < nss; i++) {
		u32 *fs = (u32 *)ss[i].funcs, n = 0, prev = UINT32_MAX;

		for (u32 k = 0; k < ss[i].nr; k++) {
			u32 g = fs[k] < nfold ? fold[fs[k]] : fs[k];

			if (!n || fs[n - 1] != g || prev == fs[k])
				fs[n++] = g;
			prev = fs[k];
		}
		ss[i].nr = n;
	}
}

/* the inclusive share of each top function in the reference samples, and the profile's
 * error against it */
static int cycles_shares(const struct se_stacks *cy, u32 nr_funcs, struct stack_eval *out)
{
	struct stack_score *sc = &out->score;
	double *share = calloc(nr_funcs + 1, sizeof(*share));
	bool *seen = calloc(nr_funcs + 1, 1);
	u64 with = 0;

	out->cycles = calloc(sc->nr_top + 1, sizeof(*out->cycles));
	if (!share || !seen || !out->cycles) {
		free(share);
		free(seen);
		return -ENOMEM;
	}
	for (size_t i = 0; i < cy->nss; i++) {
		out->cycles_samples += cy->ss[i].weight;
		if (!cy->ss[i].nr)
			continue;
		with += cy->ss[i].weight;
		for (u32 k = 0; k < cy->ss[i].nr; k++)
			if (!seen[cy->ss[i].funcs[k]]) {
				seen[cy->ss[i].funcs[k]] = true;
				share[cy->ss[i].funcs[k]] += cy->ss[i].weight;
			}
		for (u32 k = 0; k < cy->ss[i].nr; k++)
			seen[cy->ss[i].funcs[k]] = false;
	}
	for (size_t k = 0; k < sc->nr_top; k++) {
		double e;

		out->cycles[k] = with ? share[sc->top[k].func] / with : 0;
		e = fabs(sc->top[k].sampled - out->cycles[k]);
		out->cycles_mae += e / sc->nr_top;
		if (e > out->cycles_max)
			out->cycles_max = e;
	}
	free(share);
	free(seen);
	return with ? 0 : -ENODATA;
}

int stack_eval__profile(const struct profile *p, const struct truth *t, const struct profile *cycles,
			size_t top_n, unsigned flags, struct stack_eval *out)
{
	struct resolver rs = { .t = t };
	struct symbolizer *sy = NULL, *cy_sy = NULL;
	struct se_stacks st_main = {}, st_cyc = {};
	struct se_node *nodes = NULL;
	struct se_sample *ss;
	u32 *fnode = NULL, *fold = NULL;
	size_t nss;
	u64 nsamples = 0;
	int err = -ENOMEM;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < p->nr_samples; i++)
		nsamples += p->samples[i].count;
	if (!nsamples && !p->nr_stack_samples)
		return fail(-ENODATA, "the profile has no samples");
	if (!p->nr_stack_samples)
		return fail(-ENODATA, "the profile has no call stacks: record with -g (hsbpf record -g, "
			    "perf record -g or --call-graph dwarf, then hsbpf import)");
	if (!t->meta.cct || !t->nr_cnodes)
		return fail(-ENODATA, "the truth has no calling-context tree (written before version 1.2 or "
			    "with --no-cct): run hsbpf truth again");
	rs.imgs = calloc(t->nr_objects + 1, sizeof(*rs.imgs));
	nodes = calloc(t->nr_cnodes + 1, sizeof(*nodes));
	fnode = calloc(t->nr_cnodes + 1, sizeof(*fnode));
	sy = symbolizer__new(p);
	if (!rs.imgs || !nodes || !fnode || !sy)
		goto cleanup;
	symbolizer__skip_lines(sy);
	for (u32 o = 0; o < t->nr_objects; o++)
		rs.imgs[o] = elf_image__open(truth__str(t, t->objects[o].path));
	for (size_t i = 0; i < t->nr_cnodes; i++) {
		const struct truth_cnode *n = &t->cnodes[i];
		s64 f = node_func(&rs, n);

		if (f < 0)
			goto cleanup;
		fnode[i] = f;
		/* a thread's launcher keeps its own instructions; what it calls is a root */
		nodes[i] = (struct se_node){ n->parent == TRUTH_NO_NODE ||
					     launcher_root(&rs, &t->cnodes[n->parent]) ? SE_NO_PARENT :
					     n->parent, f, n->self };
	}
	/* the blocks of nodes without a symbol, for frames in stripped code */
	rs.ab = calloc(t->nr_cblocks + 1, sizeof(*rs.ab));
	if (!rs.ab)
		goto cleanup;
	for (size_t i = 0; i < t->nr_cblocks; i++) {
		const struct truth_cblock *b = &t->cblocks[i];
		const struct truth_cnode *n = &t->cnodes[b->node];

		if (b->obj >= t->nr_objects || (rs.imgs[b->obj] && elf_image__func_at(rs.imgs[b->obj], b->vaddr)))
			continue;
		(void)n;
		rs.ab[rs.nr_ab++] = (struct anon_block){ b->obj, fnode[b->node], b->vaddr, b->insns };
	}
	if (rs.nr_ab > 1)
		qsort(rs.ab, rs.nr_ab, sizeof(*rs.ab), cmp_ab);
	/* the sampled stacks, as function ids from the sampled frame out */
	err = profile_stacks(&rs, p, sy, out, &st_main);
	if (err)
		goto cleanup;
	ss = st_main.ss;
	nss = st_main.nss;
	if (cycles) {
		cy_sy = symbolizer__new(cycles);
		if (!cy_sy) {
			err = -ENOMEM;
			goto cleanup;
		}
		symbolizer__skip_lines(cy_sy);
		err = profile_stacks(&rs, cycles, cy_sy, NULL, &st_cyc);
		if (err)
			goto cleanup;
	}
	if (flags & STACK_EVAL_FOLD_PARTS) {
		u32 nfold = rs.nr;

		err = fold_parts(&rs, &fold);
		if (err)
			goto cleanup;
		/* a part directly under its own function (X -> X.part.0) is that function's
		 * frame: the node's instructions go to its parent, its children under it */
		for (size_t i = 0; i < t->nr_cnodes; i++) {
			struct se_node *n = &nodes[i];

			n->func = n->func < nfold ? fold[n->func] : n->func;
			if (n->parent == SE_NO_PARENT)
				continue;
			n->parent = fnode[n->parent] == UINT32_MAX ? nodes[n->parent].parent : n->parent;
			if (nodes[n->parent].func == n->func && fnode[n->parent] != fnode[i]) {
				nodes[n->parent].self += n->self;
				n->self = 0;
				fnode[i] = UINT32_MAX;	/* merged: its children go to its parent */
			}
		}
		fold_samples(ss, nss, fold, nfold);
		fold_samples(st_cyc.ss, st_cyc.nss, fold, nfold);
	}
	err = stack_eval__score(nodes, t->nr_cnodes, ss, nss, rs.nr, top_n, &out->score);
	if (err == -ENODATA) {
		err = fail(err, "no sampled stack has a frame in the truth's objects: is it the same program?");
		goto cleanup;
	}
	if (!err && cycles) {
		err = cycles_shares(&st_cyc, rs.nr, out);
		if (err == -ENODATA) {
			err = fail(err, "the cycles profile has no stack in the truth's objects: record it with "
				   "hsbpf truth --vpmu cycles -g of the same program");
			goto cleanup;
		}
	}
	if (err)
		goto cleanup;
	out->nr_funcs = rs.nr;
	out->names = calloc(rs.nr + 1, sizeof(*out->names));
	if (!out->names) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (u32 f = 0; f < rs.nr; f++) {
		const struct fkey *k = &rs.keys[f];
		const struct elf_func *ef = k->obj < t->nr_objects && rs.imgs[k->obj] && k->addr ?
					    elf_image__func_at(rs.imgs[k->obj], k->addr) : NULL;
		const char *path = k->obj < t->nr_objects ? truth__str(t, t->objects[k->obj].path) : "[anon]";
		const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
		int n = ef && ef->addr == k->addr ? asprintf(&out->names[f], "%s", ef->name) :
			asprintf(&out->names[f], "%s+%#" PRIx64, base, k->addr);

		if (n < 0) {
			out->names[f] = NULL;
			err = -ENOMEM;
			goto cleanup;
		}
	}
cleanup:
	if (err)
		stack_eval__release(out);
	for (u32 o = 0; rs.imgs && o < t->nr_objects; o++)
		elf_image__close(rs.imgs[o]);
	free(rs.imgs);
	free(rs.keys);
	free(rs.ab);
	hashidx__free(&rs.idx);
	symbolizer__free(sy);
	symbolizer__free(cy_sy);
	se_stacks__free(&st_main);
	se_stacks__free(&st_cyc);
	free(nodes);
	free(fnode);
	free(fold);
	return err == -ENOMEM ? fail(err, "out of memory") : err;
}

void stack_eval__release(struct stack_eval *se)
{
	for (u32 f = 0; se->names && f < se->nr_funcs; f++)
		free(se->names[f]);
	free(se->names);
	se->names = NULL;
	free(se->cycles);
	se->cycles = NULL;
	stack_eval__free(&se->score);
}

void stack_eval__print(const struct stack_eval *se, bool json, FILE *f)
{
	const struct stack_score *sc = &se->score;

	if (!json) {
		fprintf(f, "stacks: %" PRIu64 " of %" PRIu64 " samples have one; %.1f%% of them complete "
			"(down to a thread's first function)\n", sc->with_stack, sc->samples,
			100 * sc->complete_share);
		fprintf(f, "top %zu functions by exact inclusive time: inclusive error mean %.2f, max %.2f "
			"points; caller split total variation mean %.3f\n", sc->nr_top, 100 * sc->incl_mae,
			100 * sc->incl_max, sc->caller_tv_mean);
		if (se->cycles)
			fprintf(f, "against the timing model's cycles (%" PRIu64 " samples): inclusive error mean "
				"%.2f, max %.2f points\n", se->cycles_samples, 100 * se->cycles_mae,
				100 * se->cycles_max);
		fprintf(f, "%8s %8s %8s %8s  ", "exact%", "sampled%", "error", "callerTV");
		if (se->cycles)
			fprintf(f, "%8s %8s  ", "cycles%", "error");
		fprintf(f, "function\n");
		for (size_t i = 0; i < sc->nr_top; i++) {
			const struct se_func *tf = &sc->top[i];

			fprintf(f, "%8.2f %8.2f %+8.2f %8.3f  ", 100 * tf->exact, 100 * tf->sampled,
				100 * (tf->sampled - tf->exact), tf->caller_tv);
			if (se->cycles)
				fprintf(f, "%8.2f %+8.2f  ", 100 * se->cycles[i], 100 * (tf->sampled - se->cycles[i]));
			str__fputs_escaped(se->names[tf->func], f);
			fputc('\n', f);
		}
		if (se->frames_outside)
			fprintf(f, "(%" PRIu64 " frames in no object of the truth were left out)\n",
				se->frames_outside);
		if (se->launchers)
			fprintf(f, "(%" PRIu64 " samples rooted at their thread's first function, below "
				"__clone3/__clone)\n", se->launchers);
		return;
	}
	json_writer_t *w = jsonw_new(f);

	if (!w)
		return;
	jsonw_start_object(w);
	jsonw_uint_field(w, "samples", sc->samples);
	jsonw_uint_field(w, "with_stack", sc->with_stack);
	jsonw_uint_field(w, "complete", sc->complete);
	jsonw_float_field(w, "complete_share", sc->complete_share);
	jsonw_float_field(w, "inclusive_error_mean", sc->incl_mae);
	jsonw_float_field(w, "inclusive_error_max", sc->incl_max);
	jsonw_float_field(w, "caller_tv_mean", sc->caller_tv_mean);
	jsonw_uint_field(w, "frames_outside", se->frames_outside);
	jsonw_uint_field(w, "thread_launchers", se->launchers);
	if (se->cycles) {
		jsonw_uint_field(w, "cycles_samples", se->cycles_samples);
		jsonw_float_field(w, "cycles_inclusive_error_mean", se->cycles_mae);
		jsonw_float_field(w, "cycles_inclusive_error_max", se->cycles_max);
	}
	jsonw_name(w, "functions");
	jsonw_start_array(w);
	for (size_t i = 0; i < sc->nr_top; i++) {
		jsonw_start_object(w);
		jsonw_string_field(w, "function", se->names[sc->top[i].func]);
		jsonw_float_field(w, "exact", sc->top[i].exact);
		jsonw_float_field(w, "sampled", sc->top[i].sampled);
		jsonw_float_field(w, "caller_tv", sc->top[i].caller_tv);
		if (se->cycles)
			jsonw_float_field(w, "cycles", se->cycles[i]);
		jsonw_end_object(w);
	}
	jsonw_end_array(w);
	jsonw_end_object(w);
	jsonw_destroy(&w);
}
