/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* A CPython code object read from a live process's memory: its qualified name, file, first
 * line and line table, and the fields that tell it from another code object at its address. */
#ifndef HSBPF_PYNAME_H
#define HSBPF_PYNAME_H

#include <sys/types.h>
#include "lib/util.h"
#include "hsbpf.h"

#define PYNAME_MAX_STR		1024	/* characters of a name or file read */
#define PYNAME_MAX_TABLE	(64 * 1024)	/* bytes of a line table read */

struct pycode {
	char *name;		/* co_qualname (co_name where the version has none), UTF-8 */
	char *file;		/* co_filename */
	int firstlineno;
	u8 *table;		/* co_linetable */
	size_t table_len;
	u64 ident[4];		/* qualname, filename and line table pointers, first line */
};

/* read the code object at code in pid: 0, -ESRCH when the process is gone, -EFAULT when
 * its memory does not hold a code object there, -ENOMEM */
int pyname__read(pid_t pid, const struct hsbpf_py_offsets *o, u64 code, struct pycode *out);
/* only the identity fields (struct pycode.ident) of the code object at code */
int pyname__ident(pid_t pid, const struct hsbpf_py_offsets *o, u64 code, u64 ident[4]);
void pycode__clear(struct pycode *c);
/* a string object's text as UTF-8 from its compact representation (kind 1, 2 or 4 bytes a
 * character): len characters of data into buf (size bytes, NUL-terminated) */
void pyname__utf8(const u8 *data, size_t len, int kind, char *buf, size_t size);

#endif /* HSBPF_PYNAME_H */
