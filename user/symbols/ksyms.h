/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* /proc/kallsyms, read at the end of a recording so that the profile carries the kernel
 * symbols its samples hit and reports need no access to this kernel. */
#ifndef HSBPF_KSYMS_H
#define HSBPF_KSYMS_H

#include "profile/profile.h"

/* add to p the kallsyms entry that covers each kernel IP sampled; path for tests */
int ksyms__save_for_samples(struct profile *p, const char *kallsyms_path);
/* add every text symbol (top: read once, then every new kernel IP resolves without I/O) */
int ksyms__save_all(struct profile *p, const char *kallsyms_path);

#endif /* HSBPF_KSYMS_H */
