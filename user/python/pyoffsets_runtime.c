// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* CPython 3.13's layout as a running interpreter describes it: _PyRuntime opens with
 * _Py_DebugOffsets (Include/internal/pycore_runtime.h), the cookie "xdebugpy", PY_VERSION_HEX,
 * then the offsets of the fields debuggers and profilers read, each a uint64_t. Where that
 * struct's own layout changes (3.14's differs), another table is needed: a version without
 * one is refused, never read with 3.13's. */
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include "lib/util.h"
#include "python/pyoffsets.h"

#define DEBUG_COOKIE		"xdebugpy"
#define DEBUG_OFFSETS_SIZE_313	584	/* sizeof(struct _Py_DebugOffsets) in 3.13 */

/* where each field is in 3.13's _Py_DebugOffsets (read from pyenv's 3.13.0 DWARF:
 * gdb -batch -ex 'ptype /o struct _Py_DebugOffsets' libpython3.13.so.1.0) */
enum {
	DO_COOKIE = 0,
	DO_VERSION = 8,
	DO_RUNTIME_INTERP_HEAD = 40,
	DO_INTERP_NEXT = 64,
	DO_INTERP_THREADS_HEAD = 72,
	DO_TSTATE_NEXT = 168,
	DO_TSTATE_CURRENT_FRAME = 184,
	DO_TSTATE_THREAD_ID = 192,
	DO_TSTATE_NATIVE_THREAD_ID = 200,
	DO_TSTATE_STATUS = 216,
	DO_FRAME_PREVIOUS = 232,
	DO_FRAME_EXECUTABLE = 240,
	DO_FRAME_INSTR_PTR = 248,
	DO_FRAME_OWNER = 264,
	DO_CODE_FILENAME = 280,
	DO_CODE_NAME = 288,
	DO_CODE_QUALNAME = 296,
	DO_CODE_LINETABLE = 304,
	DO_CODE_FIRSTLINENO = 312,
	DO_CODE_ADAPTIVE = 344,
	DO_BYTES_SIZE = 520,
	DO_BYTES_SVAL = 528,
	DO_UNICODE_STATE = 544,
	DO_UNICODE_ASCII_SIZE = 560,
};

/* what 3.13's _Py_DebugOffsets does not say, constant in 3.13: FRAME_OWNED_BY_CSTACK's value,
 * PyCompactUnicodeObject's tail after PyASCIIObject (utf8_length, utf8), where
 * _co_firsttraceable is before co_code_adaptive (then a hole and co_extra), and where the
 * thread state's state is after its _status (a 4-byte bit field, then _whence) */
#define OWNED_BY_CSTACK_313	3
#define COMPACT_TAIL_313	16
#define FIRSTTRACEABLE_BEFORE_ADAPTIVE_313	16
#define STATE_AFTER_STATUS_313	8

static u64 get(const u8 *buf, size_t at)
{
	u64 v;

	memcpy(&v, buf + at, sizeof(v));
	return v;
}

int pyoffsets__from_debug_offsets(pid_t pid, uint64_t runtime_addr, struct hsbpf_py_offsets *out)
{
	static const struct {
		size_t off;
		size_t at;
	} fields[] = {
#define F(f, at) { offsetof(struct hsbpf_py_offsets, f), at }
		F(runtime_interp_head, DO_RUNTIME_INTERP_HEAD),
		F(interp_next, DO_INTERP_NEXT),
		F(interp_threads_head, DO_INTERP_THREADS_HEAD),
		F(tstate_next, DO_TSTATE_NEXT),
		F(tstate_thread_id, DO_TSTATE_THREAD_ID),
		F(tstate_native_thread_id, DO_TSTATE_NATIVE_THREAD_ID),
		F(tstate_current_frame, DO_TSTATE_CURRENT_FRAME),
		F(frame_code, DO_FRAME_EXECUTABLE),
		F(frame_previous, DO_FRAME_PREVIOUS),
		F(frame_instr, DO_FRAME_INSTR_PTR),
		F(frame_owner, DO_FRAME_OWNER),
		F(code_adaptive, DO_CODE_ADAPTIVE),
		F(code_qualname, DO_CODE_QUALNAME),
		F(code_name, DO_CODE_NAME),
		F(code_filename, DO_CODE_FILENAME),
		F(code_firstlineno, DO_CODE_FIRSTLINENO),
		F(code_linetable, DO_CODE_LINETABLE),
		F(unicode_state, DO_UNICODE_STATE),
		F(unicode_ascii_data, DO_UNICODE_ASCII_SIZE),
		F(bytes_size, DO_BYTES_SIZE),
		F(bytes_data, DO_BYTES_SVAL),
#undef F
	};
	u8 buf[DEBUG_OFFSETS_SIZE_313];
	struct iovec local = { buf, sizeof(buf) }, remote = { (void *)runtime_addr, sizeof(buf) };
	struct hsbpf_py_offsets o;
	ssize_t n;
	u64 hex, status;

	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n < 0)
		return -errno;
	if (n != (ssize_t)sizeof(buf) || memcmp(buf + DO_COOKIE, DEBUG_COOKIE, 8))
		return -ENOENT;		/* not _PyRuntime, or no _Py_DebugOffsets (before 3.13) */
	hex = get(buf, DO_VERSION);
	if ((hex >> 24 & 0xff) != 3 || (hex >> 16 & 0xff) != 13)
		return -EPROTONOSUPPORT;	/* a _Py_DebugOffsets laid out otherwise */
	memset(&o, 0xff, sizeof(o));	/* HSBPF_PY_ABSENT unless said */
	o.major = 3;
	o.minor = 13;
	for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
		u64 v = get(buf, fields[i].at);

		if (v >= HSBPF_PY_ABSENT)
			return -ERANGE;	/* garbage, or a layout no u16 holds */
		*(u16 *)((char *)&o + fields[i].off) = v;
	}
	o.owned_by_cstack = OWNED_BY_CSTACK_313;
	o.unicode_compact_data = o.unicode_ascii_data + COMPACT_TAIL_313;
	o.code_firsttraceable = o.code_adaptive - FIRSTTRACEABLE_BEFORE_ADAPTIVE_313;
	status = get(buf, DO_TSTATE_STATUS);
	if (status >= HSBPF_PY_ABSENT - STATE_AFTER_STATUS_313)
		return -ERANGE;
	o.tstate_state = status + STATE_AFTER_STATUS_313;
	*out = o;
	return 0;
}
