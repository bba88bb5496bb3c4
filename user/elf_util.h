/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* ELF facts the recorder and the symbolizer both need. */
#ifndef HSBPF_ELF_UTIL_H
#define HSBPF_ELF_UTIL_H

#include "util.h"

/* the GNU build-id note of an ELF file (a regular file: file__open_regular): 0 and *len
 * set, -ENODATA if it has none, -EINVAL if it is no ELF file, or -errno */
int elf__build_id(const char *path, u8 *buf, size_t size, size_t *len);
/* the same on an open file */
int elf__build_id_fd(int fd, u8 *buf, size_t size, size_t *len);
/* lowercase hex of a build-id */
void build_id__hex(const u8 *id, size_t len, char *out, size_t size);

#endif /* HSBPF_ELF_UTIL_H */
