// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The shared file container: header, section table, sections, each CRC-32 checked; and the
 * key=value text sections. Readers trust no offset and skip unknown sections. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include "lib/file_format.h"
#include "lib/section_pack.h"

struct file_header {
	char magic[8];
	u16 version_major;
	u16 version_minor;
	u32 header_size;
	u64 file_size;
	u64 section_table;	/* offset */
	u32 nr_sections;
	u32 header_crc;		/* crc32 of this header with header_crc 0 */
	u32 table_crc;		/* crc32 of the section table */
	u8 reserved[20];
};
_Static_assert(sizeof(struct file_header) == 64, "file_header");

struct section_desc {
	u32 type;
	u32 crc;
	u64 offset;
	u64 size;
};
_Static_assert(sizeof(struct section_desc) == 24, "section_desc");

#define MAX_SECTIONS 64
_Static_assert(FILE_FORMAT_HEAD_MAX == sizeof(struct file_header) +
	       MAX_SECTIONS * sizeof(struct section_desc), "FILE_FORMAT_HEAD_MAX");

/* ---- key=value sections ---- */

static void put_escaped(FILE *fp, const char *s, size_t max)
{
	for (size_t i = 0; i < max && s[i]; i++) {
		if (s[i] == '\\')
			fputs("\\\\", fp);
		else if (s[i] == '\n')
			fputs("\\n", fp);
		else
			fputc(s[i], fp);
	}
}

char *kv__format(const void *obj, const struct kv_field *f, size_t n, size_t *len)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *fp = open_memstream(&buf, &size);

	if (!fp)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		const char *field = (const char *)obj + f[i].off;

		switch (f[i].kind) {
		case KV_STR:
			fprintf(fp, "%s=", f[i].key);
			/* a full field has no NUL: never more than it holds */
			put_escaped(fp, field, f[i].size - 1);
			fputc('\n', fp);
			break;
		case KV_U64:
			fprintf(fp, "%s=%" PRIu64 "\n", f[i].key, *(const u64 *)field);
			break;
		case KV_U32:
			fprintf(fp, "%s=%u\n", f[i].key, *(const u32 *)field);
			break;
		case KV_DBL:
			fprintf(fp, "%s=%.17g\n", f[i].key, *(const double *)field);
			break;
		}
	}
	if (fclose(fp)) {
		free(buf);
		return NULL;
	}
	*len = size;
	return buf;
}

/* the value v (vlen bytes) into a field of size bytes, NUL-terminated; -EINVAL if too long
 * or (escaped) not a valid escape */
static int take_string(char *field, size_t size, const char *v, size_t vlen, bool escaped)
{
	size_t o = 0;

	for (size_t i = 0; i < vlen; i++) {
		char c = v[i];

		if (escaped && c == '\\') {
			if (++i == vlen)
				return -EINVAL;
			if (v[i] == '\\')
				c = '\\';
			else if (v[i] == 'n')
				c = '\n';
			else
				return -EINVAL;
		}
		if (o + 1 >= size)
			return -EINVAL;
		field[o++] = c;
	}
	field[o] = 0;
	return 0;
}

int kv__parse(void *obj, const struct kv_field *f, size_t n, const char *buf, size_t len,
	      bool escaped)
{
	const char *p = buf, *end = buf + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', end - p), *eq;
		size_t linelen;

		if (!nl)
			return -EINVAL;
		linelen = nl - p;
		eq = memchr(p, '=', linelen);
		if (!eq)
			return -EINVAL;
		for (size_t i = 0; i < n; i++) {
			char *field = (char *)obj + f[i].off;
			size_t klen = eq - p, vlen = nl - eq - 1;
			char num[64];

			if (strlen(f[i].key) != klen || memcmp(f[i].key, p, klen))
				continue;
			if (f[i].kind == KV_STR) {
				if (take_string(field, f[i].size, eq + 1, vlen, escaped))
					return -EINVAL;
				break;
			}
			if (vlen == 0 || vlen >= sizeof(num))
				return -EINVAL;
			memcpy(num, eq + 1, vlen);
			num[vlen] = 0;
			if (f[i].kind == KV_DBL) {
				char *e;

				*(double *)field = strtod(num, &e);
				if (*e)
					return -EINVAL;
			} else {
				u64 v;

				if (parse_u64(num, &v))
					return -EINVAL;
				if (f[i].kind == KV_U32) {
					if (v > UINT32_MAX)
						return -EINVAL;
					*(u32 *)field = v;
				} else {
					*(u64 *)field = v;
				}
			}
			break;
		}
		p = nl + 1;
	}
	return 0;
}

/* ---- writing ---- */

/* zstd's level: 3 (its default) packs a profile at a few hundred MB/s; 9 saves another 8% of
 * a busy machine's off-CPU profile at five times the time */
#define PACK_LEVEL 3

static bool packs(const struct file_format *f)
{
	return f->packed_since && f->major >= f->packed_since;
}

/* the sections as written: packed where that makes them smaller (packed[i] set, to free) */
static int pack_sections(const struct file_format *f, const struct file_section *secs,
			 size_t nr, struct file_section *out, void **packed)
{
	struct section_pack *pk = NULL;
	int err = 0;

	for (size_t i = 0; i < nr; i++)
		packed[i] = NULL;
	if (packs(f) && !(pk = section_pack__new(PACK_LEVEL)))
		return -ENOMEM;
	for (size_t i = 0; i < nr && !err; i++) {
		size_t size;

		out[i] = secs[i];
		if (!pk || !secs[i].size)
			continue;
		err = section_pack__encode(pk, secs[i].data, secs[i].size, secs[i].columns,
					   &packed[i], &size);
		if (err)
			break;
		if (size >= secs[i].size) {
			free(packed[i]);
			packed[i] = NULL;
			continue;
		}
		out[i].type |= FILE_SECTION_PACKED;
		out[i].data = packed[i];
		out[i].size = size;
	}
	section_pack__free(pk);
	return err;
}

int file_format__write_out(struct outfile *o, const struct file_format *f,
			 const struct file_section *in, size_t nr)
{
	struct section_desc descs[MAX_SECTIONS];
	struct file_section secs[MAX_SECTIONS];
	void *packed[MAX_SECTIONS] = {};
	struct file_header hdr = {};
	u64 off;
	int err;

	if (nr > MAX_SECTIONS) {
		err = -E2BIG;
		goto cleanup;
	}
	err = pack_sections(f, in, nr, secs, packed);
	if (err)
		goto cleanup;
	off = sizeof(hdr) + nr * sizeof(struct section_desc);
	for (size_t i = 0; i < nr; i++) {
		descs[i].type = secs[i].type;
		descs[i].offset = off;
		descs[i].size = secs[i].size;
		descs[i].crc = crc32(0, secs[i].data, secs[i].size);
		off += secs[i].size;
	}
	memcpy(hdr.magic, f->magic, 8);
	hdr.version_major = f->major;
	hdr.version_minor = f->minor;
	hdr.header_size = sizeof(hdr);
	hdr.file_size = off;
	hdr.section_table = sizeof(hdr);
	hdr.nr_sections = nr;
	hdr.table_crc = crc32(0, (const void *)descs, nr * sizeof(descs[0]));
	hdr.header_crc = crc32(0, (const void *)&hdr, sizeof(hdr));

	err = outfile__write(o, &hdr, sizeof(hdr));
	if (!err)
		err = outfile__write(o, descs, nr * sizeof(descs[0]));
	for (size_t i = 0; !err && i < nr; i++)
		err = outfile__write(o, secs[i].data, secs[i].size);
	/* the reservation may have made it longer */
	if (!err && !o->in_place && ftruncate(o->fd, off))
		err = -errno;
cleanup:
	for (size_t i = 0; i < nr && i < MAX_SECTIONS; i++)
		free(packed[i]);
	if (err) {
		error("cannot write '%s': %s", o->path, strerror(-err));
		outfile__discard(o);
		return err;
	}
	return outfile__commit(o);
}

/* ---- reading ---- */

int file_format__bad(const char *name, const char *what)
{
	error("'%s' is corrupt: %s", name, what);
	return -EINVAL;
}

/* the header, from the file's first head_len (at most 64) bytes, against the file's size */
static int check_header(const u8 *head, size_t head_len, u64 size, const char *name,
			const struct file_format *f, struct file_header *hdr)
{
	u32 want_crc;

	/* perf's muscle memory: report -i perf.data */
	if (head_len >= 8 && !memcmp(head, "PERFILE2", 8)) {
		error("'%s' is a perf.data file, not an %s: run 'hsbpf import %s' first", name,
		      f->kind, name);
		return -EINVAL;
	}
	if (head_len < 8 || memcmp(head, f->magic, 8)) {
		error("'%s' is not an %s", name, f->kind);
		return -EINVAL;
	}
	if (head_len < sizeof(*hdr)) {
		error("'%s' is truncated: %" PRIu64 " bytes, shorter than the header", name, size);
		return -EINVAL;
	}
	memcpy(hdr, head, sizeof(*hdr));
	if (hdr->version_major > f->major) {
		error("'%s' has format version %u.%u, newer than this hsbpf reads (%u.%u): upgrade hsbpf",
		      name, hdr->version_major, hdr->version_minor, f->major, f->minor);
		return -EPROTO;
	}
	want_crc = hdr->header_crc;
	hdr->header_crc = 0;
	if (crc32(0, (const void *)hdr, sizeof(*hdr)) != want_crc)
		return file_format__bad(name, "header checksum mismatch");
	hdr->header_crc = want_crc;
	if (hdr->file_size != size) {
		if (size < hdr->file_size)
			error("'%s' is truncated: %" PRIu64 " of %" PRIu64 " bytes", name, size,
			      (u64)hdr->file_size);
		else
			error("'%s' is corrupt: %" PRIu64 " bytes where the header says %" PRIu64, name,
			      size, (u64)hdr->file_size);
		return -EINVAL;
	}
	if (hdr->header_size < sizeof(*hdr) || hdr->nr_sections > MAX_SECTIONS ||
	    hdr->section_table > size ||
	    hdr->nr_sections * sizeof(struct section_desc) > size - hdr->section_table)
		return file_format__bad(name, "section table out of bounds");
	return 0;
}

/* a section's type as its reader knows it: in a file of a packed version, without the bit
 * that says it is packed */
static u32 type_of(const struct file_format *f, const struct file_header *hdr, u32 type)
{
	return f->packed_since && hdr->version_major >= f->packed_since ?
		type & ~FILE_SECTION_PACKED : type;
}

/* the section table: its checksum, every section within the file, no type twice */
static int check_table(const void *table, const struct file_header *hdr, u64 size,
		       const char *name, const struct file_format *f)
{
	struct section_desc d[MAX_SECTIONS];

	memcpy(d, table, hdr->nr_sections * sizeof(d[0]));
	if (crc32(0, (const void *)d, hdr->nr_sections * sizeof(d[0])) != hdr->table_crc)
		return file_format__bad(name, "section table checksum mismatch");
	for (u32 i = 0; i < hdr->nr_sections; i++) {
		if (d[i].offset > size || d[i].size > size - d[i].offset)
			return file_format__bad(name, "section out of bounds");
		/* a second copy would replace the first: which one is meant? */
		for (u32 j = 0; j < i; j++)
			if (type_of(f, hdr, d[j].type) == type_of(f, hdr, d[i].type)) {
				error("'%s' is corrupt: section %u appears twice", name,
				      type_of(f, hdr, d[i].type));
				return -EINVAL;
			}
	}
	return 0;
}

/* one section handed over, unpacked first if it is packed */
static int hand_over(const struct file_format *f, const struct file_header *hdr,
		     const struct section_desc *d, const u8 *base, const char *name,
		     file_section_fn fn, void *ctx)
{
	u32 type = type_of(f, hdr, d->type);
	const char *why;
	size_t size;
	void *raw;
	int err;

	if (type == d->type)
		return fn(ctx, type, base + d->offset, d->size);
	err = section_pack__decode(base + d->offset, d->size, &raw, &size, &why);
	if (err == -ENOMEM)
		return err;	/* the parser's caller says it */
	if (err) {
		error("'%s' is corrupt: section %u: %s", name, type, why);
		return err;
	}
	err = fn(ctx, type, raw, size);
	free(raw);
	return err;
}

int file_format__parse(const void *buf, size_t size, const char *name,
		     const struct file_format *f, struct file_version *ver, file_section_fn fn,
		     void *ctx)
{
	const u8 *base = buf;
	const struct section_desc *descs;
	struct file_header hdr;
	int err;

	err = check_header(base, size < sizeof(hdr) ? size : sizeof(hdr), size, name, f, &hdr);
	if (err)
		return err;
	descs = (const void *)(base + hdr.section_table);
	err = check_table(descs, &hdr, size, name, f);
	if (err)
		return err;
	for (u32 i = 0; i < hdr.nr_sections; i++) {
		struct section_desc d;

		memcpy(&d, &descs[i], sizeof(d));
		if (crc32(0, base + d.offset, d.size) != d.crc)
			return file_format__bad(name, "section checksum mismatch");
	}
	if (ver)
		*ver = (struct file_version){ hdr.version_major, hdr.version_minor };
	for (u32 i = 0; i < hdr.nr_sections; i++) {
		struct section_desc d;

		memcpy(&d, &descs[i], sizeof(d));
		err = hand_over(f, &hdr, &d, base, name, fn, ctx);
		if (err)
			return err;
	}
	return 0;
}

/* len bytes at off, or -errno / -EIO (the file shrank) */
static int pread_all(int fd, void *buf, size_t len, u64 off)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = pread(fd, (char *)buf + got, len - got, off + got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		got += n;
	}
	return 0;
}

/* the head check of the container format f (a struct file_format): header, section
 * table and section bounds, without reading the sections */
static int file_format__check_head(int fd, u64 size, const char *name, const void *arg)
{
	const struct file_format *f = arg;
	u8 head[sizeof(struct file_header)];
	u8 table[MAX_SECTIONS * sizeof(struct section_desc)];
	size_t head_len = size < sizeof(head) ? size : sizeof(head);
	struct file_header hdr;
	int err;

	err = pread_all(fd, head, head_len, 0);
	if (err)
		return fail(err, "cannot read '%s': %s", name, strerror(-err));
	err = check_header(head, head_len, size, name, f, &hdr);
	if (err)
		return err;
	err = pread_all(fd, table, hdr.nr_sections * sizeof(struct section_desc), hdr.section_table);
	if (err)
		return fail(err, "cannot read '%s': %s", name, strerror(-err));
	return check_table(table, &hdr, size, name, f);
}

int file_format__read_file(const char *path, file_head_fn head, const void *arg, void **out,
			 size_t *size)
{
	struct stat st;
	void *buf = NULL;
	int fd, err = 0;

	fd = file__open_regular(path);
	if (fd < 0)
		return file__open_error(path, fd);
	if (fstat(fd, &st)) {
		err = -errno;
		error("cannot stat '%s': %s", path, strerror(-err));
		goto cleanup;
	}
	/* what the first bytes say before the rest is read: a huge file that is not what it
	 * claims to be is refused without reading it */
	if (head) {
		err = head(fd, st.st_size, path, arg);
		if (err)
			goto cleanup;
	}
	buf = malloc(st.st_size ? st.st_size : 1);
	if (!buf) {
		err = -ENOMEM;
		error("cannot read '%s': %s", path, strerror(-err));
		goto cleanup;
	}
	err = pread_all(fd, buf, st.st_size, 0);
	if (err)
		error("cannot read '%s': %s", path, strerror(-err));
cleanup:
	close(fd);
	if (err) {
		free(buf);
		return err;
	}
	*out = buf;
	*size = st.st_size;
	return 0;
}

int file_format__load(const char *path, const struct file_format *f,
		    file_format_parse_fn parse, void *out)
{
	size_t size;
	void *buf;
	int err = file_format__read_file(path, file_format__check_head, f, &buf, &size);

	if (err)
		return err;
	err = parse(buf, size, path, out);
	free(buf);
	return err;
}

int file_format__take_array(void **dst, size_t *nr, size_t *cap, const void *src, size_t size,
			  size_t elem)
{
	if (size % elem)
		return -EINVAL;
	if (!size)
		return 0;
	*dst = malloc(size);
	if (!*dst)
		return -ENOMEM;
	memcpy(*dst, src, size);
	*nr = *cap = size / elem;
	return 0;
}
