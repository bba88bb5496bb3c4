/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* CPython's runtime layouts, per minor version (struct hsbpf_py_offsets in bpf/hsbpf.h), and
 * its line tables: what the BPF unwinder and the namer of Python frames need to know of the
 * interpreter they read. */
#ifndef HSBPF_PYOFFSETS_H
#define HSBPF_PYOFFSETS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "hsbpf.h"

/* the shipped layout of CPython major.minor: 0, or -ENOENT for a version hsbpf does not know */
int pyoffsets__lookup(int major, int minor, struct hsbpf_py_offsets *out);

enum pyoffsets_source {
	PYOFFSETS_TABLE,	/* the shipped row */
	PYOFFSETS_DWARF,	/* the interpreter's debug information */
	PYOFFSETS_RUNTIME,	/* a running 3.13's _Py_DebugOffsets */
};

struct pyoffsets_choice {
	enum pyoffsets_source source;
	const char *dwarf_differs;	/* the first field where the DWARF differs from the row */
	const char *runtime_differs;	/* ... where _Py_DebugOffsets differs from the DWARF (or
					 * the row, without DWARF); NULL: they agree, or absent */
};

/* the layout to read CPython major.minor with: the shipped row, or the interpreter's DWARF
 * (dwarf, NULL when it has none), or a running 3.13's _Py_DebugOffsets (runtime, NULL when
 * not read), the last at hand of these winning; a description of another version than
 * major.minor is ignored. 0 and *why filled, or -ENOENT for a version the table has no row
 * for (never read with a layout nothing checked) */
int pyoffsets__choose(int major, int minor, const struct hsbpf_py_offsets *dwarf,
		      const struct hsbpf_py_offsets *runtime, struct hsbpf_py_offsets *out,
		      struct pyoffsets_choice *why);
/* every field of struct hsbpf_py_offsets, by name, and field i's value in o */
struct pyoffsets_field {
	size_t off;
	const char *name;
};
extern const struct pyoffsets_field pyoffsets__fields[];
extern const size_t pyoffsets__nr_fields;
__u16 pyoffsets__field(const struct hsbpf_py_offsets *o, size_t i);
/* the name of the first field where a and b differ, or NULL when they are the same */
const char *pyoffsets__diff(const struct hsbpf_py_offsets *a, const struct hsbpf_py_offsets *b);

/* the layout read from the debug information of an interpreter (the ELF holding _PyRuntime,
 * or its separate debug file): 0, or -ENOENT/-errno where it has none */
int pyoffsets__from_dwarf(const char *path, struct hsbpf_py_offsets *out);

/* 3.13+: the layout the running interpreter describes in _PyRuntime's _Py_DebugOffsets, read
 * from process pid at runtime_addr: 0, or -errno */
int pyoffsets__from_debug_offsets(pid_t pid, uint64_t runtime_addr, struct hsbpf_py_offsets *out);

/* the source line of the instruction at offset instr (in code units, as the unwinder gives
 * it) of a code object of CPython major.minor, from its line table (co_linetable, or 3.10's
 * format) and co_firstlineno: 0 and *line set, -ENOENT when the table has no line there */
int pylinetable__line(int major, int minor, const uint8_t *table, size_t len, int firstlineno,
		      uint32_t instr, int *line);

/* 3.10's line table (PEP 626: (start delta, line delta) byte pairs, the start in bytes):
 * the line of the instruction at instr (in code units, 3.10's f_lasti), as pylinetable__line */
int pylinetable__line_310(const uint8_t *table, size_t len, int firstlineno, uint32_t instr,
			  int *line);

/* the layouts hsbpf ships (user/python/pyoffsets_table.c), one row per minor version, each
 * checked against the interpreter's debug information by tests/test_pyoffsets.c */
extern const struct hsbpf_py_offsets pyoffsets__known[];
extern const size_t pyoffsets__nr_known;

#endif /* HSBPF_PYOFFSETS_H */
