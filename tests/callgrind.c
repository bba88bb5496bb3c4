// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* callgrind format: "positions: instr line", name compression "(id) name", relative
 * positions (+n, -n, *), and call or jump lines whose next line carries no self cost. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "callgrind.h"

#define MAX_NAMES 65536

static int cmp_cost(const void *a, const void *b)
{
	const struct cg_cost *x = a, *y = b;
	int c = strcmp(x->obj, y->obj);

	return c ? c : x->addr < y->addr ? -1 : x->addr > y->addr;
}

static u64 position(const char *tok, u64 cur)
{
	if (!strcmp(tok, "*"))
		return cur;
	if (tok[0] == '+')
		return cur + strtoull(tok + 1, NULL, 0);
	if (tok[0] == '-')
		return cur - strtoull(tok + 1, NULL, 0);
	return strtoull(tok, NULL, 0);
}

/* "(id) name" defines, "(id)" refers */
static char *name_ref(char **names, const char *v)
{
	char *end;
	long id;

	if (v[0] != '(')
		return strdup(v);
	id = strtol(v + 1, &end, 10);
	if (id < 0 || id >= MAX_NAMES || *end != ')')
		return NULL;
	if (end[1] == ' ') {
		free(names[id]);
		names[id] = strdup(end + 2);
	}
	return names[id] ? strdup(names[id]) : NULL;
}

int callgrind__read(const char *path, struct callgrind *cg)
{
	char **names = calloc(MAX_NAMES, sizeof(*names));
	char *line = NULL, *obj = strdup("???");
	size_t cap = 0;
	u64 addr = 0, lineno = 0;
	bool skip_cost = false;
	FILE *f = fopen(path, "r");

	memset(cg, 0, sizeof(*cg));
	if (!f || !names)
		return -ENOENT;
	while (getline(&line, &cap, f) > 0) {
		char *tok, *save = NULL;

		line[strcspn(line, "\n")] = 0;
		if (!strncmp(line, "ob=", 3)) {
			char *o = name_ref(names, line + 3);

			if (o) {
				free(obj);
				obj = o;
			}
			continue;
		}
		if (!strncmp(line, "cob=", 4)) {
			free(name_ref(names, line + 4));	/* defines only */
			continue;
		}
		if (!strncmp(line, "calls=", 6) || !strncmp(line, "jump=", 5) || !strncmp(line, "jcnd=", 5)) {
			skip_cost = true;
			continue;
		}
		if (!strncmp(line, "summary:", 8)) {
			cg->total = strtoull(line + 8, NULL, 10);
			continue;
		}
		if (!(line[0] == '0' || line[0] == '+' || line[0] == '-' || line[0] == '*'))
			continue;
		tok = strtok_r(line, " ", &save);
		addr = position(tok, addr);
		tok = strtok_r(NULL, " ", &save);
		if (tok)
			lineno = position(tok, lineno);
		tok = strtok_r(NULL, " ", &save);
		if (skip_cost) {
			skip_cost = false;
			continue;
		}
		if (!tok)
			continue;
		if (array__reserve((void **)&cg->costs, &cg->cap, cg->nr + 1, sizeof(*cg->costs)))
			break;
		cg->costs[cg->nr].obj = strdup(obj);
		cg->costs[cg->nr].addr = addr;
		cg->costs[cg->nr++].ir = strtoull(tok, NULL, 10);
	}
	fclose(f);
	free(line);
	free(obj);
	for (int i = 0; i < MAX_NAMES; i++)
		free(names[i]);
	free(names);
	if (cg->nr > 1)
		qsort(cg->costs, cg->nr, sizeof(*cg->costs), cmp_cost);
	size_t o = 0;
	for (size_t i = 0; i < cg->nr; i++) {
		if (o && !cmp_cost(&cg->costs[o - 1], &cg->costs[i])) {
			cg->costs[o - 1].ir += cg->costs[i].ir;
			free(cg->costs[i].obj);
		} else {
			cg->costs[o++] = cg->costs[i];
		}
	}
	cg->nr = o;
	return 0;
}

void callgrind__free(struct callgrind *cg)
{
	for (size_t i = 0; i < cg->nr; i++)
		free(cg->costs[i].obj);
	free(cg->costs);
}

u64 callgrind__ir(const struct callgrind *cg, const char *obj, u64 addr)
{
	struct cg_cost key = { .obj = (char *)obj, .addr = addr };
	const struct cg_cost *c = bsearch(&key, cg->costs, cg->nr, sizeof(*cg->costs), cmp_cost);

	return c ? c->ir : 0;
}

/* ---- the call graph ---- */

static int cmp_call(const void *a, const void *b)
{
	const struct cg_call *x = a, *y = b;
	int c = strcmp(x->caller_obj, y->caller_obj);

	if (!c)
		c = strcmp(x->caller, y->caller);
	if (!c)
		c = strcmp(x->callee_obj, y->callee_obj);
	return c ? c : strcmp(x->callee, y->callee);
}

/* "(id) name" defines in its own table, "(id)" refers; a name without its recursion suffix */
static char *cg_name(char **names, const char *v, bool fn)
{
	char *s = name_ref(names, v), *q;

	if (s && fn && (q = strrchr(s, '\'')) && q[1] >= '0' && q[1] <= '9')
		*q = 0;
	return s;
}

static void set(char **dst, char *v)
{
	if (v) {
		free(*dst);
		*dst = v;
	}
}

int callgrind__read_calls(const char *path, struct cg_calls *cc)
{
	char **obs = calloc(MAX_NAMES, sizeof(*obs)), **fns = calloc(MAX_NAMES, sizeof(*fns));
	char *line = NULL, *ob = strdup("???"), *fn = strdup("???"), *cob = NULL, *cfn = NULL;
	size_t cap = 0;
	u64 ncalls = 0;
	bool want_cost = false;
	FILE *f = fopen(path, "r");

	memset(cc, 0, sizeof(*cc));
	if (!f || !obs || !fns)
		return -ENOENT;
	while (getline(&line, &cap, f) > 0) {
		line[strcspn(line, "\n")] = 0;
		if (want_cost) {
			/* "position line inclusive": the call's cost */
			char *tok, *save = NULL;
			struct cg_call *c;

			want_cost = false;
			strtok_r(line, " ", &save);
			strtok_r(NULL, " ", &save);
			tok = strtok_r(NULL, " ", &save);
			if (!tok || !cfn ||
			    array__reserve((void **)&cc->pairs, &cc->cap, cc->nr + 1, sizeof(*cc->pairs)))
				continue;
			c = &cc->pairs[cc->nr++];
			c->caller_obj = strdup(ob);
			c->caller = strdup(fn);
			c->callee_obj = strdup(cob ? cob : ob);
			c->callee = strdup(cfn);
			c->calls = ncalls;
			c->incl = strtoull(tok, NULL, 10);
			free(cob);
			cob = NULL;
			continue;
		}
		if (!strncmp(line, "ob=", 3))
			set(&ob, cg_name(obs, line + 3, false));
		else if (!strncmp(line, "cob=", 4))
			set(&cob, cg_name(obs, line + 4, false));
		else if (!strncmp(line, "fn=", 3))
			set(&fn, cg_name(fns, line + 3, true));
		else if (!strncmp(line, "cfn=", 4))
			set(&cfn, cg_name(fns, line + 4, true));
		else if (!strncmp(line, "calls=", 6)) {
			ncalls = strtoull(line + 6, NULL, 10);
			want_cost = true;
		}
	}
	fclose(f);
	free(line);
	free(ob);
	free(fn);
	free(cob);
	free(cfn);
	for (int i = 0; i < MAX_NAMES; i++) {
		free(obs[i]);
		free(fns[i]);
	}
	free(obs);
	free(fns);
	if (cc->nr > 1)
		qsort(cc->pairs, cc->nr, sizeof(*cc->pairs), cmp_call);
	size_t o = 0;
	for (size_t i = 0; i < cc->nr; i++) {
		struct cg_call *c = &cc->pairs[i];

		if (o && !cmp_call(&cc->pairs[o - 1], c)) {
			cc->pairs[o - 1].calls += c->calls;
			cc->pairs[o - 1].incl += c->incl;
			free(c->caller_obj);
			free(c->caller);
			free(c->callee_obj);
			free(c->callee);
		} else {
			cc->pairs[o++] = *c;
		}
	}
	cc->nr = o;
	return 0;
}

void callgrind__free_calls(struct cg_calls *cc)
{
	for (size_t i = 0; i < cc->nr; i++) {
		free(cc->pairs[i].caller_obj);
		free(cc->pairs[i].caller);
		free(cc->pairs[i].callee_obj);
		free(cc->pairs[i].callee);
	}
	free(cc->pairs);
}

const struct cg_call *callgrind__pair(const struct cg_calls *cc, const char *caller_obj,
				      const char *caller, const char *callee_obj, const char *callee)
{
	struct cg_call key = { (char *)caller_obj, (char *)caller, (char *)callee_obj, (char *)callee };

	return bsearch(&key, cc->pairs, cc->nr, sizeof(*cc->pairs), cmp_call);
}
