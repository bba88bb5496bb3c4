/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* A set of strings, each kept once: interned pointers stay valid until strset__free. */
#ifndef HSBPF_STRSET_H
#define HSBPF_STRSET_H

#include "lib/hashidx.h"

struct strset {
	char **strs;		/* each string once, in the order they came */
	size_t nr, cap;
	struct hashidx idx;
};

/* the set's copy of the first len bytes of s; NULL when out of memory */
const char *strset__intern_n(struct strset *set, const char *s, size_t len);
const char *strset__intern(struct strset *set, const char *s);
void strset__free(struct strset *set);

#endif
