// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Packing of a file section (format 2.0): records into columns, fields as differences where
 * asked, then zstd; and back, trusting nothing the packed bytes say. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#include "lib/section_pack.h"

/* a decoded section is at most this large: a damaged size must not ask for terabytes */
#define RAW_MAX (1ull << 40)

struct layout {
	size_t nr, rec;			/* columns, record size */
	u8 size[SECTION_PACK_MAX_COLUMNS];
	bool delta[SECTION_PACK_MAX_COLUMNS];
};

static int layout_of(const u8 *columns, size_t nr, struct layout *l)
{
	l->nr = nr;
	l->rec = 0;
	if (nr > SECTION_PACK_MAX_COLUMNS)
		return -EINVAL;
	for (size_t i = 0; i < nr; i++) {
		u8 s = columns[i] & ~SECTION_PACK_DELTA;

		if (s != 1 && s != 2 && s != 4 && s != 8)
			return -EINVAL;
		l->size[i] = s;
		l->delta[i] = columns[i] & SECTION_PACK_DELTA;
		l->rec += s;
	}
	return 0;
}

static u64 get_le(const u8 *p, size_t s)
{
	u64 v = 0;

	memcpy(&v, p, s);	/* little-endian, as the file */
	return v;
}

static void put_le(u8 *p, size_t s, u64 v)
{
	memcpy(p, &v, s);
}

/* one column of n values of S bytes: from records (stride rec) into the column, or back; as
 * differences where asked. A function per size, so that each value is one load and store */
#define COLUMN_FN(name, T)							\
static void name(const u8 *src, u8 *dst, size_t n, size_t rec, bool delta, bool back) \
{										\
	T prev = 0, v;								\
										\
	for (size_t i = 0; i < n; i++) {					\
		if (back) {							\
			memcpy(&v, src + i * sizeof(T), sizeof(T));		\
			if (delta)						\
				v = prev = (T)(prev + v);			\
			memcpy(dst + i * rec, &v, sizeof(T));			\
		} else {							\
			memcpy(&v, src + i * rec, sizeof(T));			\
			if (delta) {						\
				T d = (T)(v - prev);				\
									\
				prev = v;					\
				v = d;						\
			}							\
			memcpy(dst + i * sizeof(T), &v, sizeof(T));		\
		}								\
	}									\
}
COLUMN_FN(column8, u8)
COLUMN_FN(column16, u16)
COLUMN_FN(column32, u32)
COLUMN_FN(column64, u64)
#undef COLUMN_FN

/* records (n of l->rec bytes) into columns, or (back) columns into records (little-endian
 * values, as the file's) */
static void transpose(const struct layout *l, const u8 *src, u8 *dst, size_t n, bool back)
{
	size_t off = 0, col = 0;

	for (size_t c = 0; c < l->nr; c++) {
		const u8 *from = back ? src + col : src + off;
		u8 *to = back ? dst + off : dst + col;

		switch (l->size[c]) {
		case 1:
			column8(from, to, n, l->rec, l->delta[c], back);
			break;
		case 2:
			column16(from, to, n, l->rec, l->delta[c], back);
			break;
		case 4:
			column32(from, to, n, l->rec, l->delta[c], back);
			break;
		default:
			column64(from, to, n, l->rec, l->delta[c], back);
			break;
		}
		off += l->size[c];
		col += n * l->size[c];
	}
}

struct section_pack {
	ZSTD_CCtx *cctx;
};

struct section_pack *section_pack__new(int level)
{
	struct section_pack *pk = calloc(1, sizeof(*pk));

	if (!pk)
		return NULL;
	/* with the frame's checksum: a damaged section is found by its own unpacking too, not
	 * only by the file's CRC (a section copied whole into another file has the right one) */
	pk->cctx = ZSTD_createCCtx();
	if (!pk->cctx || ZSTD_isError(ZSTD_CCtx_setParameter(pk->cctx, ZSTD_c_compressionLevel, level)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(pk->cctx, ZSTD_c_checksumFlag, 1))) {
		section_pack__free(pk);
		errno = ENOMEM;
		return NULL;
	}
	return pk;
}

void section_pack__free(struct section_pack *pk)
{
	if (!pk)
		return;
	ZSTD_freeCCtx(pk->cctx);
	free(pk);
}

int section_pack__encode(struct section_pack *pk, const void *src, size_t size,
			 const u8 *columns, void **out, size_t *out_size)
{
	struct layout l = {};
	size_t nr = 0, bound, got;
	u8 *buf = NULL, *cols = NULL;
	const void *in = src;
	int err;

	while (columns && columns[nr])
		nr++;
	err = layout_of(columns, nr, &l);
	if (err)
		return err;
	if (!l.rec || size % l.rec)
		l.nr = nr = 0;
	if (l.nr && size) {
		cols = malloc(size);
		if (!cols)
			return -ENOMEM;
		transpose(&l, src, cols, size / l.rec, false);
		in = cols;
	}
	bound = ZSTD_compressBound(size);
	buf = malloc(SECTION_PACK_HEAD + nr + bound);
	if (!buf) {
		err = -ENOMEM;
		goto cleanup;
	}
	put_le(buf, 8, size);
	buf[8] = nr;
	if (nr)
		memcpy(buf + SECTION_PACK_HEAD, columns, nr);
	got = ZSTD_compress2(pk->cctx, buf + SECTION_PACK_HEAD + nr, bound, in, size);
	if (ZSTD_isError(got)) {
		err = -ENOMEM;	/* zstd fails only for want of memory */
		goto cleanup;
	}
	*out = buf;
	*out_size = SECTION_PACK_HEAD + nr + got;
	buf = NULL;
cleanup:
	free(cols);
	free(buf);
	return err;
}

int section_pack__decode(const void *src, size_t size, void **out, size_t *out_size,
			 const char **why)
{
	const u8 *p = src;
	struct layout l;
	u8 *raw = NULL, *cols = NULL;
	unsigned long long want;
	size_t nr, got;
	u64 raw_size;
	int err = -EINVAL;

	*why = "packed section is truncated";
	if (size < SECTION_PACK_HEAD || size - SECTION_PACK_HEAD < p[8])
		return -EINVAL;
	raw_size = get_le(p, 8);
	nr = p[8];
	*why = "packed section has bad columns";
	if (layout_of(p + SECTION_PACK_HEAD, nr, &l) || (nr && !l.rec) || (nr && raw_size % l.rec))
		return -EINVAL;
	*why = "packed section does not decompress";
	p += SECTION_PACK_HEAD + nr;
	size -= SECTION_PACK_HEAD + nr;
	want = ZSTD_getFrameContentSize(p, size);
	if (want == ZSTD_CONTENTSIZE_ERROR || want == ZSTD_CONTENTSIZE_UNKNOWN || want != raw_size ||
	    raw_size > RAW_MAX)
		return -EINVAL;
	raw = malloc(raw_size ? raw_size : 1);
	cols = nr ? malloc(raw_size ? raw_size : 1) : NULL;
	if (!raw || (nr && !cols)) {
		err = -ENOMEM;
		goto cleanup;
	}
	got = ZSTD_decompress(nr ? cols : raw, raw_size, p, size);
	if (ZSTD_isError(got) || got != raw_size)
		goto cleanup;
	if (nr)
		transpose(&l, cols, raw, raw_size / l.rec, true);
	*out = raw;
	*out_size = raw_size;
	raw = NULL;
	err = 0;
cleanup:
	free(raw);
	free(cols);
	return err;
}
