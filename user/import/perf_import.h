/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* hsbpf import: a perf.data recording (perf record, perf record -b) as an hsbpf profile. */
#ifndef HSBPF_PERF_IMPORT_H
#define HSBPF_PERF_IMPORT_H

#include "profile/profile.h"

struct perf_import_opts {
	const char *symfs;	/* recorded paths looked up under this folder first */
	const char *binary;	/* this file is the recorded object with its build-id (or name) */
	u8 binary_id[20];
	size_t binary_id_len;
};

/* 0, or -errno after reporting (damaged file, no memory) */
int perf_import__run(const char *path, const struct perf_import_opts *o, struct profile *p);

#endif
