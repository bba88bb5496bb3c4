// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Interned strings: an array of copies and a hash index over it. */
#include <stdlib.h>
#include <string.h>
#include "lib/strset.h"

struct lookup {
	const char *s;
	size_t len;
};

static bool same(const void *key, u32 pos, void *ctx)
{
	const struct lookup *k = key;
	const struct strset *set = ctx;

	return !strncmp(set->strs[pos], k->s, k->len) && !set->strs[pos][k->len];
}

const char *strset__intern_n(struct strset *set, const char *s, size_t len)
{
	struct lookup k = { s, len };
	u64 hash = hashidx__hash(s, len, 0);
	s64 pos = hashidx__find(&set->idx, hash, &k, same, set);
	char *copy;

	if (pos >= 0)
		return set->strs[pos];
	if (array__reserve((void **)&set->strs, &set->cap, set->nr + 1, sizeof(*set->strs)))
		return NULL;
	copy = strndup(s, len);
	if (!copy)
		return NULL;
	if (hashidx__insert(&set->idx, hash, set->nr)) {
		free(copy);
		return NULL;
	}
	set->strs[set->nr++] = copy;
	return copy;
}

const char *strset__intern(struct strset *set, const char *s)
{
	return strset__intern_n(set, s, strlen(s));
}

void strset__free(struct strset *set)
{
	for (size_t i = 0; i < set->nr; i++)
		free(set->strs[i]);
	free(set->strs);
	hashidx__free(&set->idx);
	memset(set, 0, sizeof(*set));
}
