/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The file format hsbpf's files share (profiles, truth files): a header with a magic and a
 * version, a checksummed section table, checksummed sections (packed: columns and zstd, from
 * a format's packed major version on); and key=value text sections.
 * Written atomically with mode 0600; read with every offset checked. */
#ifndef HSBPF_FILE_FORMAT_H
#define HSBPF_FILE_FORMAT_H

#include "lib/output.h"
#include "lib/util.h"

/* the file header and the largest section table: what an output reserves when opened */
#define FILE_FORMAT_HEAD_MAX (64 + 64 * 24)

struct file_format {
	const char *magic;	/* 8 bytes */
	const char *kind;	/* "hsbpf profile": what the messages call it */
	u16 major, minor;	/* what this hsbpf writes; a newer major is refused */
	/* from this major version on, a section may be packed (lib/section_pack.h); 0: never.
	 * Older files are read as they were */
	u16 packed_since;
};

/* a section table entry's type with this bit: the section is packed (section_pack__encode);
 * a reader hands it over unpacked, under its type without the bit */
#define FILE_SECTION_PACKED	(1u << 31)

struct file_section {
	u32 type;
	const void *data;
	size_t size;
	/* packed: its records' columns (section_pack__encode's), NULL to compress the bytes */
	const u8 *columns;
};

/* the version of a file read */
struct file_version {
	u16 major, minor;
};

/* write the container to an open outfile and commit it (discard it on failure) */
int file_format__write_out(struct outfile *o, const struct file_format *f,
			 const struct file_section *secs, size_t nr);

/* called once per section, in file order; a non-zero return stops the walk and is returned */
typedef int (*file_section_fn)(void *ctx, u32 type, const void *data, size_t size);

/* checks magic, version (a newer major is refused), sizes, checksums, and that no section
 * type appears twice; what is wrong is reported once, naming the file. *ver (if given)
 * receives the file's version before the first section is handed over. Packed sections are
 * handed over unpacked */
int file_format__parse(const void *buf, size_t size, const char *name,
		     const struct file_format *f, struct file_version *ver, file_section_fn fn,
		     void *ctx);

/* a check of a file's first bytes before it is read whole: 0 to read on, or -errno after
 * reporting. fd is the open file (pread it), size its size */
typedef int (*file_head_fn)(int fd, u64 size, const char *name, const void *arg);
/* a regular file (file__open_regular), whole, once head (if given) accepted it; -errno after
 * reporting */
int file_format__read_file(const char *path, file_head_fn head, const void *arg, void **buf,
			 size_t *size);
/* read a whole container file (header and table checked first) and hand it to a parser;
 * what the parser returns */
typedef int (*file_format_parse_fn)(const void *buf, size_t size, const char *name, void *out);
int file_format__load(const char *path, const struct file_format *f,
		    file_format_parse_fn parse, void *out);
/* report "'NAME' is corrupt: WHAT" and return -EINVAL */
int file_format__bad(const char *name, const char *what);

/* key=value sections over a struct. Strings are written escaped (a backslash as \\, a
 * newline as \n), so that any byte but NUL survives; kv__parse unescapes them when the file
 * is of a version that escapes (older files hold strings as they are) */
enum kv_kind { KV_STR, KV_U64, KV_U32, KV_DBL };

struct kv_field {
	const char *key;
	enum kv_kind kind;
	size_t off;
	size_t size;
};

char *kv__format(const void *obj, const struct kv_field *f, size_t n, size_t *len);
/* unknown keys are skipped: a newer minor version may add some */
int kv__parse(void *obj, const struct kv_field *f, size_t n, const char *buf, size_t len,
	      bool escaped);

/* copy a section holding an array of elem-sized records; -EINVAL if the size is not a multiple */
int file_format__take_array(void **dst, size_t *nr, size_t *cap, const void *src, size_t size,
			  size_t elem);

#endif /* HSBPF_FILE_FORMAT_H */
