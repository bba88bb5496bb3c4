// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Interned strings: FNV-1a, linear probing, the table doubled at half full. */
#include <stdlib.h>
#include <string.h>
#include "strset.h"

static u64 hash(const char *s, size_t len)
{
	u64 h = 1469598103934665603ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (u8)s[i]) * 1099511628211ull;
	return h;
}

static int grow(struct strset *set)
{
	size_t n = set->nr_slots ? set->nr_slots * 2 : 1024;
	char **slots = calloc(n, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t j = 0; j < set->nr_slots; j++) {
		size_t i;

		if (!set->slots[j])
			continue;
		for (i = hash(set->slots[j], strlen(set->slots[j])) & (n - 1); slots[i]; i = (i + 1) & (n - 1))
			;
		slots[i] = set->slots[j];
	}
	free(set->slots);
	set->slots = slots;
	set->nr_slots = n;
	return 0;
}

const char *strset__intern_n(struct strset *set, const char *s, size_t len)
{
	size_t i, mask;

	if ((set->nr + 1) * 2 > set->nr_slots && grow(set))
		return NULL;
	mask = set->nr_slots - 1;
	for (i = hash(s, len) & mask; set->slots[i]; i = (i + 1) & mask)
		if (!strncmp(set->slots[i], s, len) && !set->slots[i][len])
			return set->slots[i];
	set->slots[i] = strndup(s, len);
	if (!set->slots[i])
		return NULL;
	set->nr++;
	return set->slots[i];
}

const char *strset__intern(struct strset *set, const char *s)
{
	return strset__intern_n(set, s, strlen(s));
}

void strset__free(struct strset *set)
{
	for (size_t i = 0; i < set->nr_slots; i++)
		free(set->slots[i]);
	free(set->slots);
	memset(set, 0, sizeof(*set));
}
