// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The rows pyoffsets__lookup gives (user/python/pyoffsets.c) against the interpreters' own debug
 * information: each field's offset as gdb reads it from Debian's python3.11 (python3.11-dbg)
 * and pyenv's 3.11 build; a machine without them skips that check and says so. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "helpers.h"
#include "python/pyoffsets.h"

Test(pyoffsets, a_known_version_has_its_row_and_an_unknown_one_none)
{
	struct hsbpf_py_offsets o;

	cr_assert_eq(pyoffsets__lookup(3, 11, &o), 0);
	cr_expect_eq(o.major, 3);
	cr_expect_eq(o.minor, 11);
	cr_expect_eq(o.tstate_current_frame, HSBPF_PY_ABSENT);
	cr_expect_eq(pyoffsets__lookup(3, 99, &o), -ENOENT);
	cr_expect_eq(pyoffsets__lookup(2, 7, &o), -ENOENT);
}

/* each field and the expression gdb evaluates for it */
static const struct {
	size_t field;
	const char *expr;
} fields311[] = {
#define F(f, e) { offsetof(struct hsbpf_py_offsets, f), e }
	F(runtime_interp_head, "&((struct pyruntimestate*)0)->interpreters.head"),
	F(runtime_tstate_current, "&((struct pyruntimestate*)0)->gilstate.tstate_current._value"),
	F(interp_next, "&((struct _is*)0)->next"),
	F(interp_threads_head, "&((struct _is*)0)->threads.head"),
	F(tstate_next, "&((struct _ts*)0)->next"),
	F(tstate_thread_id, "&((struct _ts*)0)->thread_id"),
	F(tstate_native_thread_id, "&((struct _ts*)0)->native_thread_id"),
	F(tstate_cframe, "&((struct _ts*)0)->cframe"),
	F(cframe_current_frame, "&((_PyCFrame*)0)->current_frame"),
	F(frame_code, "&((struct _PyInterpreterFrame*)0)->f_code"),
	F(frame_previous, "&((struct _PyInterpreterFrame*)0)->previous"),
	F(frame_instr, "&((struct _PyInterpreterFrame*)0)->prev_instr"),
	F(frame_is_entry, "&((struct _PyInterpreterFrame*)0)->is_entry"),
	F(frame_owner, "&((struct _PyInterpreterFrame*)0)->owner"),
	F(code_adaptive, "&((PyCodeObject*)0)->co_code_adaptive"),
	F(code_qualname, "&((PyCodeObject*)0)->co_qualname"),
	F(code_name, "&((PyCodeObject*)0)->co_name"),
	F(code_filename, "&((PyCodeObject*)0)->co_filename"),
	F(code_firstlineno, "&((PyCodeObject*)0)->co_firstlineno"),
	F(code_linetable, "&((PyCodeObject*)0)->co_linetable"),
	F(code_firsttraceable, "&((PyCodeObject*)0)->_co_firsttraceable"),
	F(unicode_state, "&((PyASCIIObject*)0)->state"),
	F(unicode_ascii_data, "sizeof(PyASCIIObject)"),
	F(unicode_compact_data, "sizeof(PyCompactUnicodeObject)"),
	F(bytes_size, "&((PyBytesObject*)0)->ob_base.ob_size"),
	F(bytes_data, "&((PyBytesObject*)0)->ob_sval"),
#undef F
};

static void check_with_gdb(const char *object)
{
	struct run_result *r = calloc(1, sizeof(*r));
	struct hsbpf_py_offsets o;
	char cmds[4096] = "";
	size_t n = 0;
	const char *p;

	cr_assert(r);
	if (access("/usr/bin/gdb", X_OK) || access(object, R_OK)) {
		free(r);
		cr_skip_test("no gdb or no %s: scripts/install-deps.sh installs gdb and python3.11-dbg", object);
	}
	for (size_t i = 0; i < sizeof(fields311) / sizeof(fields311[0]); i++)
		n += snprintf(cmds + n, sizeof(cmds) - n, " -ex 'p (int)%s'", fields311[i].expr);
	cr_assert_eq(run(r, "gdb -nx -batch%s %s 2>&1", cmds, object), 0);
	if (strstr(r->out, "No symbol table") || strstr(r->out, "No struct type")) {
		free(r);
		cr_skip_test("%s has no debug information here (python3.11-dbg)", object);
	}
	cr_assert_eq(pyoffsets__lookup(3, 11, &o), 0);
	p = r->out;
	for (size_t i = 0; i < sizeof(fields311) / sizeof(fields311[0]); i++) {
		unsigned k, v;
		u16 have;

		p = strchr(p, '$');
		cr_assert(p && sscanf(p, "$%u = %u", &k, &v) == 2, "gdb: %s", r->out);
		p++;
		memcpy(&have, (const char *)&o + fields311[i].field, sizeof(have));
		cr_expect_eq(have, v, "%s: the table says %u, %s's debug information %u", fields311[i].expr,
			     have, object, v);
	}
	free(r);
}

Test(pyoffsets, the_311_row_is_debians_python311_layout)
{
	check_with_gdb("/usr/bin/python3.11");
}

Test(pyoffsets, the_311_row_is_pyenvs_311_layout)
{
	check_with_gdb("/root/.pyenv/versions/3.11.7/lib/libpython3.11.so.1.0");
}
