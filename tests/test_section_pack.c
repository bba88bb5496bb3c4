// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* section_pack: records packed in columns (as differences where asked) and zstd come back
 * byte for byte; a packed section cut short or damaged is refused with a reason, never read
 * outside its bytes. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include "helpers.h"
#include "lib/section_pack.h"

struct rec {
	u32 pid;
	u16 a, b;
	u64 time;
	u8 c, pad[7];
};
_Static_assert(sizeof(struct rec) == 24, "rec");


static const u8 rec_cols[] = { 4 | SECTION_PACK_DELTA, 2, 2, 8 | SECTION_PACK_DELTA, 1, 1, 2, 4, 0 };

static struct rec *records(size_t n)
{
	struct rec *r = calloc(n, sizeof(*r));

	cr_assert(r);
	for (size_t i = 0; i < n; i++) {
		/* pids grouped, times rising but one going back (a difference that wraps) */
		r[i].pid = 1000 + i / 7;
		r[i].a = i * 31;
		r[i].b = 0xffff - i;
		r[i].time = i == 5 ? 3 : 1000000000ull + i * 12345;
		r[i].c = i & 0xff;
	}
	return r;
}

static void round_trip(const void *src, size_t size, const u8 *cols, size_t *packed_size)
{
	void *packed, *back;
	size_t psize, bsize;
	const char *why = NULL;

	cr_assert_eq(pack_section(src, size, cols, &packed, &psize), 0);
	cr_assert_geq(psize, SECTION_PACK_HEAD);
	cr_expect_eq(*(const u64 *)packed, size, "the raw size leads");
	cr_assert_eq(section_pack__decode(packed, psize, &back, &bsize, &why), 0, "%s", why);
	cr_assert_eq(bsize, size);
	cr_expect_eq(memcmp(back, src, size), 0);
	if (packed_size)
		*packed_size = psize;
	free(packed);
	free(back);
}

Test(section_pack, records_come_back_byte_for_byte)
{
	size_t n = 5000, with, without;
	struct rec *r = records(n);

	round_trip(r, n * sizeof(*r), rec_cols, &with);
	round_trip(r, n * sizeof(*r), NULL, &without);
	/* the columns are what packs grouped fields small */
	cr_expect_lt(with, without, "columns %zu, bytes %zu", with, without);
	round_trip(r, 0, rec_cols, NULL);
	round_trip(r, sizeof(*r), rec_cols, NULL);
	free(r);
}

/* a size that is not whole records: packed as bytes (no columns in the head) */
Test(section_pack, partial_records_are_packed_as_bytes)
{
	struct rec *r = records(10);
	void *packed;
	size_t psize;

	cr_assert_eq(pack_section(r, 10 * sizeof(*r) - 3, rec_cols, &packed, &psize), 0);
	cr_expect_eq(((const u8 *)packed)[8], 0);
	free(packed);
	round_trip(r, 10 * sizeof(*r) - 3, rec_cols, NULL);
	free(r);
}

Test(section_pack, bad_columns_are_refused)
{
	static const u8 three[] = { 3, 0 };
	u8 many[SECTION_PACK_MAX_COLUMNS + 2];
	void *packed;
	size_t psize;
	u64 v = 1;

	memset(many, 1, sizeof(many) - 1);
	many[sizeof(many) - 1] = 0;
	cr_expect_eq(pack_section(&v, 8, three, &packed, &psize), -EINVAL);
	cr_expect_eq(pack_section(&v, 8, many, &packed, &psize), -EINVAL);
}

/* every cut and every flipped byte: refused with a reason, or (a flip zstd does not see,
 * in a header bit it ignores) the very bytes packed; never a crash or a read outside */
Test(section_pack, cut_or_damaged_is_refused)
{
	size_t n = 300, psize, bsize;
	struct rec *r = records(n);
	void *back;
	u8 *packed, *copy;
	const char *why;
	int refused = 0;

	cr_assert_eq(pack_section(r, n * sizeof(*r), rec_cols, (void **)&packed, &psize), 0);
	for (size_t cut = 0; cut < psize; cut++) {
		copy = malloc(cut + 1);	/* exactly cut bytes: ASan sees a read past them */
		memcpy(copy, packed, cut);
		why = NULL;
		cr_expect_eq(section_pack__decode(copy, cut, &back, &bsize, &why), -EINVAL,
			     "accepted at %zu of %zu bytes", cut, psize);
		cr_expect(why && *why);
		free(copy);
	}
	for (size_t at = 0; at < psize; at++) {
		packed[at] ^= 0x21;
		why = NULL;
		if (section_pack__decode(packed, psize, &back, &bsize, &why) == 0) {
			cr_expect(bsize == n * sizeof(*r) && !memcmp(back, r, bsize),
				  "flip at %zu read as other bytes", at);
			free(back);
		} else {
			cr_expect(why && *why);
			refused++;
		}
		packed[at] ^= 0x21;
	}
	cr_expect_gt(refused, (int)psize * 9 / 10, "%d of %zu flips refused", refused, psize);
	free(packed);
	free(r);
}

/* a raw size that is not what the frame holds, or absurd: refused before any allocation */
Test(section_pack, a_wrong_raw_size_is_refused)
{
	u64 v[4] = { 1, 2, 3, 4 };
	u8 *packed;
	size_t psize, bsize;
	void *back;
	const char *why;

	cr_assert_eq(pack_section(v, sizeof(v), NULL, (void **)&packed, &psize), 0);
	memcpy(packed, &(u64){ sizeof(v) + 1 }, 8);
	cr_expect_eq(section_pack__decode(packed, psize, &back, &bsize, &why), -EINVAL);
	cr_expect_str_eq(why, "packed section does not decompress");
	memcpy(packed, &(u64){ 1ull << 62 }, 8);
	cr_expect_eq(section_pack__decode(packed, psize, &back, &bsize, &why), -EINVAL);
	/* columns that do not divide the size */
	memcpy(packed, &(u64){ sizeof(v) }, 8);
	cr_expect_eq(section_pack__decode(packed, SECTION_PACK_HEAD - 1, &back, &bsize, &why), -EINVAL);
	cr_expect_str_eq(why, "packed section is truncated");
	free(packed);
	cr_assert_eq(pack_section(v, sizeof(v), (const u8[]){ 8, 0 }, (void **)&packed,
					  &psize), 0);
	cr_assert_eq(packed[8], 1);
	packed[9] = 3;
	cr_expect_eq(section_pack__decode(packed, psize, &back, &bsize, &why), -EINVAL);
	cr_expect_str_eq(why, "packed section has bad columns");
	free(packed);
}

/* one packer for many sections (a file's): each packs as a packer of its own would */
Test(section_pack, a_packer_is_reused)
{
	struct section_pack *pk = section_pack__new(3);
	struct rec *r = records(1000);
	void *a, *b, *c;
	size_t na, nb, nc;

	cr_assert(pk);
	cr_assert_eq(section_pack__encode(pk, r, 1000 * sizeof(*r), rec_cols, &a, &na), 0);
	cr_assert_eq(section_pack__encode(pk, r, 500 * sizeof(*r), NULL, &b, &nb), 0);
	cr_assert_eq(section_pack__encode(pk, r, 1000 * sizeof(*r), rec_cols, &c, &nc), 0);
	cr_expect(na == nc && !memcmp(a, c, na), "the same section packed differently");
	free(a);
	free(c);
	cr_assert_eq(pack_section(r, 500 * sizeof(*r), NULL, &a, &na), 0);
	cr_expect(na == nb && !memcmp(a, b, na));
	free(a);
	free(b);
	section_pack__free(pk);
	free(r);
}
