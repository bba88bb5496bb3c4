/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The file container hsbpf's files share (profiles, truth files): a header with a magic and a
 * version, a checksummed section table, checksummed sections; and key=value text sections.
 * Written atomically with mode 0600; read with every offset checked. */
#ifndef HSBPF_CONTAINER_H
#define HSBPF_CONTAINER_H

#include "util.h"

struct container_section {
	u32 type;
	const void *data;
	size_t size;
};

/* atomic write: temporary file in the same folder, mode 0600, fsync, rename; path must be
 * absent or a regular file (or a link to one, which stays a link) */
int container__write(const char *path, const char magic[8], u16 major, u16 minor,
		     const struct container_section *secs, size_t nr);
/* before a long run that ends in container__write: 0 when path can be written (what it is,
 * and a temporary file next to it); otherwise -errno after saying why */
int container__check_output(const char *path);

/* called once per section, in file order; a non-zero return stops the walk and is returned */
typedef int (*container_section_fn)(void *ctx, u32 type, const void *data, size_t size);

/* checks magic, version (a newer major is refused), sizes and checksums; what is wrong is
 * reported once, naming the file; kind names the expected file ("hsbpf profile") */
int container__parse(const void *buf, size_t size, const char *name, const char magic[8],
		     const char *kind, u16 major, u16 minor, container_section_fn fn, void *ctx);
/* the whole file, or -errno after reporting */
int container__read_file(const char *path, void **buf, size_t *size);
/* read a whole file and hand it to a parser; what the parser returns */
typedef int (*container_parse_fn)(const void *buf, size_t size, const char *name, void *out);
int container__load(const char *path, container_parse_fn parse, void *out);
/* report "'NAME' is corrupt: WHAT" and return -EINVAL */
int container__bad(const char *name, const char *what);

/* key=value sections over a struct */
enum kv_kind { KV_STR, KV_U64, KV_U32, KV_DBL };

struct kv_field {
	const char *key;
	enum kv_kind kind;
	size_t off;
	size_t size;
};

char *kv__format(const void *obj, const struct kv_field *f, size_t n, size_t *len);
/* unknown keys are skipped: a newer minor version may add some */
int kv__parse(void *obj, const struct kv_field *f, size_t n, const char *buf, size_t len);

/* copy a section holding an array of elem-sized records; -EINVAL if the size is not a multiple */
int container__take_array(void **dst, size_t *nr, size_t *cap, const void *src, size_t size,
			  size_t elem);

#endif /* HSBPF_CONTAINER_H */
