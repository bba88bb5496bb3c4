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
	/* where JIT maps, kallsyms and the running kernel's notes are read (NULL: /tmp,
	 * /proc/kallsyms, /sys/kernel/notes; tests set them) */
	const char *jit_dir, *kallsyms, *kernel_notes;
};

/* a kernel as a recording or this machine knows it */
struct perf_import_kernel {
	u8 id[20];
	size_t id_len;		/* 0: no build-id */
	char release[65];	/* "": not known */
	u64 text;		/* where its text starts; 0: not known */
};

/* may the running kernel's (run's) kallsyms name the frames of a recording of rec? By
 * build-id, else by release, and at the same text address (KASLR: the same boot); why
 * says why, or why not */
bool perf_import__same_kernel(const struct perf_import_kernel *rec,
			      const struct perf_import_kernel *run, char *why, size_t size);

/* 0, or -errno after reporting (damaged file, no memory) */
int perf_import__run(const char *path, const struct perf_import_opts *o, struct profile *p);

#endif
