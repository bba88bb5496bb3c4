/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The code objects a recording read, by (pid, address, generation) (pycodes.h): an array
 * indexed by a hash of the key, the newest generation of each address marked. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "lib/util.h"
#include "python/pycodes.h"

struct code_key {
	u32 pid, gen;
	u64 code;
};

static u64 code_hash(u32 pid, u64 code, u32 gen)
{
	return hashidx__hash_u64(code ^ (u64)gen << 60, pid);
}

static bool code_eq(const void *key, u32 pos, void *ctx)
{
	const struct code_key *k = key;
	const struct pycodes *c = ctx;

	return c->v[pos].pid == k->pid && c->v[pos].code == k->code && c->v[pos].gen == k->gen;
}

void pycodes__free(struct pycodes *c)
{
	for (size_t i = 0; i < c->nr; i++)
		pycode__clear(&c->v[i].c);
	free(c->v);
	hashidx__free(&c->idx);
	memset(c, 0, sizeof(*c));
}

struct pycode_ent *pycodes__find(struct pycodes *c, u32 pid, u64 code, u32 gen)
{
	struct code_key k = { pid, gen, code };
	s64 pos = hashidx__find(&c->idx, code_hash(pid, code, gen), &k, code_eq, c);

	return pos < 0 ? NULL : &c->v[pos];
}

struct pycode_ent *pycodes__newest(struct pycodes *c, u32 pid, u64 code)
{
	for (u32 g = 0; g < HSBPF_PY_GENS; g++) {
		struct pycode_ent *e = pycodes__find(c, pid, code, g);

		if (e && e->newest)
			return e;
	}
	return NULL;
}

struct pycode_ent *pycodes__add(struct pycodes *c, u32 pid, u64 code, u32 gen)
{
	struct pycode_ent *e, *old;

	if (array__reserve((void **)&c->v, &c->cap, c->nr + 1, sizeof(*c->v)))
		return NULL;
	old = pycodes__newest(c, pid, code);	/* before the new one is indexed */
	if (hashidx__insert(&c->idx, code_hash(pid, code, gen), c->nr))
		return NULL;
	if (old)
		old->newest = false;
	e = &c->v[c->nr++];
	memset(e, 0, sizeof(*e));
	e->pid = pid;
	e->code = code;
	e->gen = gen;
	e->newest = true;
	return e;
}

bool pycodes__readable(struct pycodes *c, u32 pid, u64 code, u32 gen, u32 highest)
{
	return gen == highest && !pycodes__newest(c, pid, code);
}
