/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* CPython found in an ELF object (a python3.X executable or libpython3.X.so): where its
 * runtime state and evaluation loop are, and which version it is. */
#ifndef HSBPF_PYDETECT_H
#define HSBPF_PYDETECT_H

#include <stdbool.h>
#include "lib/util.h"

#define PYDETECT_LOADS	8

struct pyelf {
	u64 runtime;			/* _PyRuntime's ELF address */
	u64 eval, eval_size;		/* _PyEval_EvalFrameDefault's */
	u64 code_type;			/* PyCode_Type's (0: not found) */
	int major, minor;		/* from Py_Version (3.11+), else the file's name; 0 unknown */
	struct { u64 offset, vaddr, filesz; } loads[PYDETECT_LOADS];	/* PT_LOAD segments */
	int nr_loads;
};

/* whether a mapped file's name may be CPython's (python3.X, libpython3.X.so...): the files
 * worth opening */
bool pydetect__candidate(const char *path);
/* 0 and *out filled for an object that holds _PyRuntime; -ENOENT for one that does not;
 * -errno when it cannot be read */
int pydetect__elf(const char *path, struct pyelf *out);
/* the runtime address of an ELF address of e's, in a mapping of it at start from file offset
 * pgoff; 0 when the offset is in no segment */
u64 pydetect__bias(const struct pyelf *e, u64 start, u64 pgoff, bool *ok);

#endif /* HSBPF_PYDETECT_H */
