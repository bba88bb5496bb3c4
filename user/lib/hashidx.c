// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The hash index: linear probing in a table kept at most half full and doubled when it would
 * be fuller, deletion by shifting the rest of the probe run back (no tombstones: a table that
 * forgets as much as it learns, as top's, would otherwise fill with them and need rebuilding
 * anyway). The hash is a multiply-fold over 8-byte words, as wyhash does. */
#include <stdlib.h>
#include "lib/hashidx.h"

#define MIN_SLOTS 16

static const u64 K0 = 0xa0761d6478bd642full, K1 = 0xe7037ed1a0b428dbull,
		 K2 = 0x8ebc6af09c88c6e3ull;

/* the 128-bit product folded to 64 bits */
static inline u64 mum(u64 a, u64 b)
{
	__uint128_t r = (__uint128_t)a * b;

	return (u64)r ^ (u64)(r >> 64);
}

u64 hashidx__hash(const void *data, size_t len, u64 seed)
{
	const u8 *p = data;
	u64 h = mum(seed ^ K0, len ^ K1);

	for (; len >= 8; p += 8, len -= 8) {
		u64 v;

		memcpy(&v, p, 8);
		h = mum(h ^ v, K1);
	}
	if (len) {
		u64 v = 0;

		memcpy(&v, p, len);
		h = mum(h ^ v, K1);
	}
	return mum(h ^ K2, K0);
}

/* what a slot keeps: every bit of the hash has a say in the home slot */
static u32 short_hash(u64 hash)
{
	return (u32)(hash ^ (hash >> 32));
}

static int grow(struct hashidx *h, size_t want)
{
	size_t n = h->nr_slots ? h->nr_slots : MIN_SLOTS, mask;
	struct hashidx_slot *slots;

	while (n < 2 * want)
		n *= 2;
	if (n == h->nr_slots)
		return 0;
	if (n > ((size_t)1 << 32))	/* homes come from 32 bits of hash */
		return -E2BIG;
	slots = calloc(n, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	mask = n - 1;
	for (size_t j = 0; j < h->nr_slots; j++) {
		size_t i;

		if (!h->slots[j].pos)
			continue;
		for (i = h->slots[j].hash & mask; slots[i].pos; i = (i + 1) & mask)
			;
		slots[i] = h->slots[j];
	}
	free(h->slots);
	h->slots = slots;
	h->nr_slots = n;
	return 0;
}

s64 hashidx__find(const struct hashidx *h, u64 hash, const void *key, hashidx_eq_fn eq, void *ctx)
{
	u32 sh = short_hash(hash);
	size_t mask = h->nr_slots - 1;

	if (!h->nr_slots)
		return -1;
	for (size_t i = sh & mask; h->slots[i].pos; i = (i + 1) & mask)
		if (h->slots[i].hash == sh && eq(key, h->slots[i].pos - 1, ctx))
			return h->slots[i].pos - 1;
	return -1;
}

int hashidx__insert(struct hashidx *h, u64 hash, u32 pos)
{
	u32 sh = short_hash(hash);
	size_t i, mask;
	int err;

	if (pos == UINT32_MAX)
		return -E2BIG;
	err = grow(h, h->nr + 1);
	if (err)
		return err;
	mask = h->nr_slots - 1;
	for (i = sh & mask; h->slots[i].pos; i = (i + 1) & mask)
		;
	h->slots[i] = (struct hashidx_slot){ .pos = pos + 1, .hash = sh };
	h->nr++;
	return 0;
}

/* the slot that indexes pos, or nr_slots */
static size_t slot_of(const struct hashidx *h, u64 hash, u32 pos)
{
	u32 sh = short_hash(hash);
	size_t mask = h->nr_slots - 1;

	if (!h->nr_slots)
		return 0;
	for (size_t i = sh & mask; h->slots[i].pos; i = (i + 1) & mask)
		if (h->slots[i].pos == pos + 1)
			return i;
	return h->nr_slots;
}

int hashidx__delete(struct hashidx *h, u64 hash, u32 pos)
{
	size_t i = slot_of(h, hash, pos), mask = h->nr_slots - 1;

	if (i == h->nr_slots)
		return -ENOENT;
	/* pull back every later slot of the run that may live at i: its home is not within
	 * (i, j], cyclically, so a probe from its home passes i */
	for (size_t j = (i + 1) & mask; h->slots[j].pos; j = (j + 1) & mask) {
		size_t home = h->slots[j].hash & mask;
		bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);

		if (stays)
			continue;
		h->slots[i] = h->slots[j];
		i = j;
	}
	h->slots[i] = (struct hashidx_slot){ 0 };
	h->nr--;
	return 0;
}

int hashidx__move(struct hashidx *h, u64 hash, u32 from, u32 to)
{
	size_t i = slot_of(h, hash, from);

	if (i == h->nr_slots)
		return -ENOENT;
	h->slots[i].pos = to + 1;
	return 0;
}

void hashidx__clear(struct hashidx *h)
{
	if (h->slots)
		memset(h->slots, 0, h->nr_slots * sizeof(*h->slots));
	h->nr = 0;
}

void hashidx__free(struct hashidx *h)
{
	free(h->slots);
	memset(h, 0, sizeof(*h));
}
