// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* hashidx: growth, deletion (backward shift, across the table's end too), moves, and many
 * collisions under a deliberately bad hash, all checked against the array it indexes. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include "lib/hashidx.h"

/* the array indexed: keys, with a position's key at keys[pos] */
struct table {
	u64 *keys;
	size_t nr;
	u64 (*hash)(u64 key);
};

static bool eq_key(const void *key, u32 pos, void *ctx)
{
	const struct table *t = ctx;

	return t->keys[pos] == *(const u64 *)key;
}

static u64 good_hash(u64 key)
{
	return hashidx__hash_u64(key, 0);
}

/* every key in one of four probe runs */
static u64 bad_hash(u64 key)
{
	return key & 3;
}

static s64 find(const struct hashidx *h, struct table *t, u64 key)
{
	return hashidx__find(h, t->hash(key), &key, eq_key, t);
}

static void check_all(const struct hashidx *h, struct table *t, const bool *present)
{
	for (size_t pos = 0; pos < t->nr; pos++) {
		s64 got = find(h, t, t->keys[pos]);

		if (present[pos])
			cr_assert_eq(got, (s64)pos, "key %lu: at %ld", (unsigned long)t->keys[pos], (long)got);
		else
			cr_assert_eq(got, -1, "deleted key %lu still found", (unsigned long)t->keys[pos]);
	}
}

Test(hashidx, grows_and_finds_everything)
{
	const size_t n = 100000;
	struct table t = { .keys = calloc(n, sizeof(u64)), .hash = good_hash };
	bool *present = calloc(n, 1);
	struct hashidx h = {};

	cr_assert(t.keys && present);
	cr_expect_eq(find(&h, &t, 1), -1, "an empty index finds nothing");
	for (size_t i = 0; i < n; i++) {
		t.keys[i] = i * 0x10001 + 7;	/* regular keys, as addresses are */
		cr_assert_eq(hashidx__insert(&h, good_hash(t.keys[i]), i), 0);
		present[i] = true;
		t.nr++;
		cr_assert_leq(2 * h.nr, h.nr_slots, "at most half full");
	}
	cr_expect_eq(h.nr, n);
	cr_expect_eq(h.nr_slots & (h.nr_slots - 1), 0, "a power of two: %zu", h.nr_slots);
	check_all(&h, &t, present);
	cr_expect_eq(find(&h, &t, 3), -1, "a key never inserted");
	hashidx__clear(&h);
	cr_expect_eq(h.nr, 0);
	cr_expect_eq(find(&h, &t, t.keys[0]), -1, "cleared");
	hashidx__free(&h);
	free(t.keys);
	free(present);
}

/* random inserts and deletes against the truth of which keys are in */
static void churn(u64 (*hash)(u64), size_t n, unsigned rounds)
{
	struct table t = { .keys = calloc(n, sizeof(u64)), .nr = n, .hash = hash };
	bool *present = calloc(n, 1);
	struct hashidx h = {};
	u64 rng = 42;

	cr_assert(t.keys && present);
	for (size_t i = 0; i < n; i++)
		t.keys[i] = i * 2654435761u;
	for (unsigned r = 0; r < rounds; r++) {
		size_t pos;

		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		pos = (rng >> 33) % n;
		if (present[pos]) {
			cr_assert_eq(hashidx__delete(&h, hash(t.keys[pos]), pos), 0);
			cr_assert_eq(hashidx__delete(&h, hash(t.keys[pos]), pos), -ENOENT, "twice");
		} else {
			cr_assert_eq(hashidx__insert(&h, hash(t.keys[pos]), pos), 0);
		}
		present[pos] = !present[pos];
		if (r % 97 == 0)
			check_all(&h, &t, present);
	}
	check_all(&h, &t, present);
	hashidx__free(&h);
	free(t.keys);
	free(present);
}

Test(hashidx, deletion_keeps_every_other_key_reachable)
{
	churn(good_hash, 5000, 40000);
}

/* a table that never grows past 16 slots: probe runs wrap around its end, and deletions
 * shift slots back across it */
Test(hashidx, deletion_across_the_end_of_the_table)
{
	churn(good_hash, 7, 5000);
}

Test(hashidx, many_collisions)
{
	churn(bad_hash, 600, 6000);
}

/* a compaction: the odd positions deleted, the even ones moved down, found where they went */
Test(hashidx, moves_follow_a_compaction)
{
	const size_t n = 3000;
	struct table t = { .keys = calloc(n, sizeof(u64)), .nr = n, .hash = bad_hash };
	bool *present = calloc(n, 1);
	struct hashidx h = {};
	size_t o = 0;

	cr_assert(t.keys && present);
	for (size_t i = 0; i < n; i++) {
		t.keys[i] = 1000 + i;
		cr_assert_eq(hashidx__insert(&h, bad_hash(t.keys[i]), i), 0);
	}
	for (size_t i = 0; i < n; i++) {
		if (i % 2) {
			cr_assert_eq(hashidx__delete(&h, bad_hash(t.keys[i]), i), 0);
			continue;
		}
		cr_assert_eq(hashidx__move(&h, bad_hash(t.keys[i]), i, o), 0);
		t.keys[o++] = t.keys[i];
	}
	t.nr = o;
	for (size_t i = 0; i < o; i++)
		present[i] = true;
	cr_expect_eq(h.nr, o);
	check_all(&h, &t, present);
	cr_expect_eq(hashidx__move(&h, bad_hash(5), o, o + 1), -ENOENT, "a position not indexed");
	hashidx__free(&h);
	free(t.keys);
	free(present);
}

Test(hashidx, hash)
{
	u64 a = hashidx__hash_str("c", hashidx__hash_str("ab", 0));
	u64 b = hashidx__hash_str("bc", hashidx__hash_str("a", 0));
	size_t buckets[1024] = { 0 }, most = 0;

	cr_expect_neq(a, b, "the fields' lengths count");
	cr_expect_eq(hashidx__hash("abcdefghij", 10, 7), hashidx__hash("abcdefghij", 10, 7));
	cr_expect_neq(hashidx__hash("abcdefghij", 10, 7), hashidx__hash("abcdefghij", 10, 8));
	cr_expect_neq(hashidx__hash_str("", 0), hashidx__hash("\0", 1, 0));
	cr_expect_eq(hashidx__hash_str(NULL, 0), hashidx__hash_str("", 0));
	/* sequential keys spread over the low bits, which pick the home slot */
	for (u64 k = 0; k < 1024 * 64; k++)
		buckets[hashidx__hash_u64(k << 12, 0) & 1023]++;
	for (size_t i = 0; i < 1024; i++)
		most = buckets[i] > most ? buckets[i] : most;
	cr_expect_lt(most, 64 * 2, "the fullest of 1024 buckets holds %zu of 65536", most);
}
