/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* A file section's bytes packed (format 2.0 of profiles): its fixed-size records split into
 * columns, each field's values together and optionally as the difference from the previous
 * record's, then compressed with zstd. The packed bytes describe their own columns, so a
 * reader unpacks any section without knowing its records. */
#ifndef HSBPF_SECTION_PACK_H
#define HSBPF_SECTION_PACK_H

#include <stddef.h>
#include "lib/util.h"

/* a column: its field's size in bytes (1, 2, 4 or 8), or'ed with SECTION_PACK_DELTA to store
 * each value as the difference from the previous record's (modulo 2^bits): sorted or grouped
 * fields (pids, times) become small numbers that compress well */
#define SECTION_PACK_DELTA	0x80
#define SECTION_PACK_MAX_COLUMNS 16
/* what a packed section starts with: u64 raw size, u8 number of columns */
#define SECTION_PACK_HEAD	9

/* a packer: zstd's context at a level, kept for every section of a file (a context's
 * workspace is megabytes: made once, not once a section) */
struct section_pack;
/* NULL with errno set (ENOMEM) */
struct section_pack *section_pack__new(int level);
void section_pack__free(struct section_pack *pk);

/* src (size bytes) packed into a new buffer *out of *out_size bytes. columns: 0-terminated,
 * NULL for none (the bytes compressed as they are); a size that is not a whole number of
 * records is packed without columns. 0, or -ENOMEM / -EINVAL (a bad column) */
int section_pack__encode(struct section_pack *pk, const void *src, size_t size,
			 const u8 *columns, void **out, size_t *out_size);

/* the bytes src (size bytes) was packed from, into a new buffer: 0, -ENOMEM, or -EINVAL with
 * *why saying what is wrong (never reads outside src) */
int section_pack__decode(const void *src, size_t size, void **out, size_t *out_size,
			 const char **why);

#endif /* HSBPF_SECTION_PACK_H */
