/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* glibc chooses its string and memory routines from the CPU it sees; under QEMU it sees no
 * AVX-512 and other cache sizes. This finds the GLIBC_TUNABLES that make a native run take the
 * same routines as the emulated (truth) run, and checks that they do. */
#ifndef HSBPF_GLIBC_ENV_H
#define HSBPF_GLIBC_ENV_H

#include "lib/util.h"

/* fills buf with "glibc.cpu.hwcaps=...:glibc.cpu.x86_...=..." (empty if nothing differs);
 * a trailing " (unmatched: N)" says how many glibc decisions still differ. 0 or -errno */
int glibc_env__native_tunables(const char *unused, char *buf, size_t size);

#endif
