/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* A hash index over an array the caller owns: it maps a key to the position of the element
 * that holds it, and never touches the elements themselves, so that tables stay plain arrays
 * (written to a file as they are, sorted, compacted). Open addressing with linear probing,
 * at most half full, backward-shift deletion; each slot keeps 32 bits of the hash, so that
 * growing never asks the caller for hashes again and most probes never compare a key. */
#ifndef HSBPF_HASHIDX_H
#define HSBPF_HASHIDX_H

#include <string.h>
#include "lib/util.h"

struct hashidx {
	struct hashidx_slot {
		u32 pos;	/* position + 1; 0 is empty */
		u32 hash;	/* the low 32 bits of the key's hash */
	} *slots;
	size_t nr_slots;	/* a power of two, or 0 */
	size_t nr;		/* positions indexed */
};

/* does the element at pos hold key? */
typedef bool (*hashidx_eq_fn)(const void *key, u32 pos, void *ctx);

/* the one hash of hsbpf's tables: 64 bits of len bytes; seed chains several fields
 * (h = hashidx__hash(&b, 8, hashidx__hash(a, strlen(a), 0))) */
u64 hashidx__hash(const void *data, size_t len, u64 seed);

/* a string (NULL as ""); the length is part of the hash, so "ab" + "c" and "a" + "bc" differ */
static inline u64 hashidx__hash_str(const char *s, u64 seed)
{
	return hashidx__hash(s ? s : "", s ? strlen(s) : 0, seed);
}

static inline u64 hashidx__hash_u64(u64 v, u64 seed)
{
	return hashidx__hash(&v, sizeof(v), seed);
}

/* the position of the element that holds key, or -1 */
s64 hashidx__find(const struct hashidx *h, u64 hash, const void *key, hashidx_eq_fn eq, void *ctx);
/* index pos under hash (its key is not indexed yet: hashidx__find first); 0 or -ENOMEM */
int hashidx__insert(struct hashidx *h, u64 hash, u32 pos);
/* forget pos, indexed under hash; 0 or -ENOENT */
int hashidx__delete(struct hashidx *h, u64 hash, u32 pos);
/* the element at from, indexed under hash, has moved to to (a compaction); 0 or -ENOENT */
int hashidx__move(struct hashidx *h, u64 hash, u32 from, u32 to);
/* forget every position, keeping the slots for the next inserts */
void hashidx__clear(struct hashidx *h);
void hashidx__free(struct hashidx *h);

#endif /* HSBPF_HASHIDX_H */
