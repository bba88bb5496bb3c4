/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* perf's samples, read through `perf script -F pid,ip --show-mmap-events`, as an hsbpf profile,
 * so that hsbpf eval scores perf record's profiles the same way as its own. */
#ifndef HSBPF_PERF_SCRIPT_H
#define HSBPF_PERF_SCRIPT_H

#include "profile/profile.h"

/* parse the script text; mappings keep their order as times so later ones win */
int perf_script__parse(const char *path, u64 period, struct profile *p);

#endif
