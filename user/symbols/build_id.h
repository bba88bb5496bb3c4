/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* ELF build-ids: read from a file's GNU note, shown in hex; the recorder and the symbolizer
 * both need them. */
#ifndef HSBPF_BUILD_ID_H
#define HSBPF_BUILD_ID_H

#include "lib/util.h"

/* the GNU build-id note of an ELF file (a regular file: file__open_regular): 0 and *len
 * set, -ENODATA if it has none, -EINVAL if it is no ELF file, or -errno */
int build_id__read(const char *path, u8 *buf, size_t size, size_t *len);
/* the same on an open file */
int build_id__read_fd(int fd, u8 *buf, size_t size, size_t *len);
/* the GNU build-id among raw ELF notes (as /sys/kernel/notes has them): 0 and *len set,
 * -ENODATA without one, -EINVAL if they are malformed */
int build_id__from_notes(const u8 *notes, size_t size, u8 *buf, size_t bufsize, size_t *len);
/* the running kernel's build-id, from notes_path (/sys/kernel/notes); 0 or -errno */
int build_id__kernel(const char *notes_path, u8 *buf, size_t size, size_t *len);
/* lowercase hex of a build-id */
void build_id__hex(const u8 *id, size_t len, char *out, size_t size);

#endif /* HSBPF_BUILD_ID_H */
