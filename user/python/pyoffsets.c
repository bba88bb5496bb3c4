/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Which CPython layout the unwinder reads a process with: the shipped table's row of its
 * minor version (pyoffsets_table.c), unless the interpreter says better: its own debug
 * information, or what a running 3.13 describes in _Py_DebugOffsets. Each is cross-checked
 * against the table; a version the table has no row for is not read at all, whatever else
 * describes it (3.14's frames hold tagged references a 3.13-like layout would misread). */
#include <errno.h>
#include <stddef.h>
#include "lib/util.h"
#include "python/pyoffsets.h"

const struct pyoffsets_field pyoffsets__fields[] = {
#define F(f) { offsetof(struct hsbpf_py_offsets, f), #f }
	F(major), F(minor), F(runtime_interp_head), F(runtime_tstate_current), F(interp_next),
	F(interp_threads_head), F(tstate_next), F(tstate_thread_id), F(tstate_native_thread_id),
	F(tstate_state), F(tstate_cframe),
	F(cframe_current_frame), F(tstate_current_frame), F(frame_code), F(frame_previous),
	F(frame_instr), F(frame_is_entry), F(frame_owner), F(owned_by_cstack), F(code_adaptive),
	F(code_code), F(code_qualname), F(code_name), F(code_filename), F(code_firstlineno),
	F(code_linetable), F(unicode_state), F(unicode_ascii_data), F(unicode_compact_data),
	F(bytes_size), F(bytes_data), F(code_firsttraceable),
#undef F
};

_Static_assert(ARRAY_SIZE(pyoffsets__fields) * sizeof(u16) == sizeof(struct hsbpf_py_offsets),
	       "every field of struct hsbpf_py_offsets is compared");

const size_t pyoffsets__nr_fields = ARRAY_SIZE(pyoffsets__fields);

u16 pyoffsets__field(const struct hsbpf_py_offsets *o, size_t i)
{
	return *(const u16 *)((const char *)o + pyoffsets__fields[i].off);
}

int pyoffsets__lookup(int major, int minor, struct hsbpf_py_offsets *out)
{
	for (size_t i = 0; i < pyoffsets__nr_known; i++) {
		if (pyoffsets__known[i].major == major && pyoffsets__known[i].minor == minor) {
			*out = pyoffsets__known[i];
			return 0;
		}
	}
	return -ENOENT;
}

const char *pyoffsets__diff(const struct hsbpf_py_offsets *a, const struct hsbpf_py_offsets *b)
{
	for (size_t i = 0; i < pyoffsets__nr_fields; i++)
		if (pyoffsets__field(a, i) != pyoffsets__field(b, i))
			return pyoffsets__fields[i].name;
	return NULL;
}

int pyoffsets__choose(int major, int minor, const struct hsbpf_py_offsets *dwarf,
		      const struct hsbpf_py_offsets *runtime, struct hsbpf_py_offsets *out,
		      struct pyoffsets_choice *why)
{
	struct hsbpf_py_offsets row;

	why->source = PYOFFSETS_TABLE;
	why->dwarf_differs = why->runtime_differs = NULL;
	if (pyoffsets__lookup(major, minor, &row))
		return -ENOENT;
	*out = row;
	/* a description of another version is of another object: not this one's */
	if (dwarf && dwarf->major == major && dwarf->minor == minor) {
		why->dwarf_differs = pyoffsets__diff(dwarf, &row);
		*out = *dwarf;
		why->source = PYOFFSETS_DWARF;
	}
	if (runtime && runtime->major == major && runtime->minor == minor) {
		why->runtime_differs = pyoffsets__diff(runtime, out);
		*out = *runtime;
		why->source = PYOFFSETS_RUNTIME;
	}
	return 0;
}
