/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Unwind tables kept in the build-id cache: a table built once for an object (a build-id) is
 * written beside the object's entry and read back the next time a process maps the same
 * build, by this run or a later one, instead of being built again from the object's
 * call-frame information (a compiler's takes hundreds of milliseconds; its file is read in a
 * few). The file is named after the hsbpf that built it (its own build-id), so that another
 * build of hsbpf, whose table builder may differ, builds its own; it carries a checksum and
 * its counts, checked before anything of it is used. The cache's root must be ours
 * (buildid_cache__find): rows read from a file go to the kernel's unwinder. */
#ifndef HSBPF_TABLE_CACHE_H
#define HSBPF_TABLE_CACHE_H

#include <stddef.h>
#include "lib/util.h"

struct unwind_table;

/* the table's bytes as the cache keeps them (malloc'd); 0 or -ENOMEM */
int table_cache__encode(const struct unwind_table *t, u8 **out, size_t *size);
/* a table from those bytes: 0, -EBADMSG when they are not a whole, consistent table of this
 * format, or -ENOMEM */
int table_cache__decode(const u8 *buf, size_t size, struct unwind_table **out);

/* the table of build id (len bytes) kept in the cache at dir: 0 and *out, -ENOENT when there
 * is none (or none of this hsbpf's), -EBADMSG for a damaged file (removed: the table built
 * instead takes its place), or another -errno */
int table_cache__load(const char *dir, const u8 *id, size_t len, struct unwind_table **out);
/* keep t as the table of build id in the cache at dir (unless one is there); 0 or -errno */
int table_cache__store(const char *dir, const u8 *id, size_t len, const struct unwind_table *t);

#endif /* HSBPF_TABLE_CACHE_H */
