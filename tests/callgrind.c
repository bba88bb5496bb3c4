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
