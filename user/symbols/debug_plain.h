/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Separate debug files with their sections decompressed, once per build-id. Debian compresses
 * its debug packages' sections, and libdw inflates every one of them whenever it opens such a
 * file: libc's took two thirds of a short `report -g`. A copy with the sections stored plain
 * is kept in the build-id cache ("debug-plain"), and later reports open it instead. */
#ifndef HSBPF_DEBUG_PLAIN_H
#define HSBPF_DEBUG_PLAIN_H

#include "lib/util.h"

/* the plain copy of build-id id's debug file: an open descriptor, its path in *path (malloc'd,
 * the old *path freed); -ENOENT when there is none */
int debug_plain__open(const u8 *id, size_t len, char **path);
/* make it from the debug file open at fd, if some section there is compressed and the cache
 * takes it; fd's offset is left at 0. 0, or -errno (nothing made) */
int debug_plain__make(int fd, const u8 *id, size_t len);

#endif /* HSBPF_DEBUG_PLAIN_H */
