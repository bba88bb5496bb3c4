/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The kernel's vDSO, the same image in every process of a kernel: ours, for the unwind table
 * and the symbols of code sampled in any process's [vdso] mapping. */
#ifndef HSBPF_VDSO_H
#define HSBPF_VDSO_H

#include "lib/util.h"

/* our own vDSO's ELF image and its size; -ENOENT without one */
int vdso__image(const u8 **image, size_t *size);
/* a file holding it (an in-memory file, "/proc/self/fd/N", open until exit), for readers that
 * take a path; 0 or -errno */
int vdso__path(char *buf, size_t size);

#endif /* HSBPF_VDSO_H */
