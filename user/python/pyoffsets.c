/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The CPython layouts hsbpf ships, one row per minor version (struct hsbpf_py_offsets): the
 * byte offsets the BPF unwinder and the namer read when the interpreter's own debug
 * information is not at hand. Each row is checked against that debug information in
 * tests/test_pyoffsets.c. */
#include <errno.h>
#include "python/pyoffsets.h"

#define A HSBPF_PY_ABSENT

/* 3.11: Debian 12's python3.11 (3.11.2) and pyenv's 3.11.7 agree (gdb ptype/o of both) */
static const struct hsbpf_py_offsets py311 = {
	.major = 3, .minor = 11,
	.runtime_interp_head = 40,
	.interp_next = 0, .interp_threads_head = 16,
	.tstate_next = 8, .tstate_thread_id = 152, .tstate_native_thread_id = 160,
	.tstate_cframe = 56, .cframe_current_frame = 8, .tstate_current_frame = A,
	.frame_code = 32, .frame_previous = 48, .frame_instr = 56,
	.frame_is_entry = 68, .frame_owner = 69, .owned_by_cstack = A,
	.code_adaptive = 184, .code_code = A, .code_qualname = 128, .code_name = 120,
	.code_filename = 112, .code_firstlineno = 72, .code_linetable = 136,
	.unicode_state = 32, .unicode_ascii_data = 48, .unicode_compact_data = 72,
	.bytes_size = 16, .bytes_data = 32,
	.code_firsttraceable = 168,
};

static const struct hsbpf_py_offsets *const rows[] = {
	&py311,
};

int pyoffsets__lookup(int major, int minor, struct hsbpf_py_offsets *out)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		if (rows[i]->major == major && rows[i]->minor == minor) {
			*out = *rows[i];
			return 0;
		}
	}
	return -ENOENT;
}
