// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* CPython found in ELF objects (user/python/pydetect.c): which files are looked at, the
 * version and symbols of Debian's python3.11, none in a program that is not Python, the bias
 * of a mapping; and a code object's name as UTF-8 from each string kind (pyname__utf8). */
#include <criterion/criterion.h>
#include <errno.h>
#include <unistd.h>
#include "python/pydetect.h"
#include "python/pyname.h"

Test(pydetect, the_files_looked_at_are_pythons)
{
	cr_expect(pydetect__candidate("/usr/bin/python3.11"));
	cr_expect(pydetect__candidate("/root/.pyenv/versions/3.11.7/lib/libpython3.11.so.1.0"));
	cr_expect(!pydetect__candidate("/usr/lib/x86_64-linux-gnu/libc.so.6"));
	cr_expect(!pydetect__candidate("/usr/bin/perl"));
}

Test(pydetect, debians_python311_is_found_with_its_version)
{
	struct pyelf e;

	if (access("/usr/bin/python3.11", R_OK))
		cr_skip_test("/usr/bin/python3.11 is not installed");
	cr_assert_eq(pydetect__elf("/usr/bin/python3.11", &e), 0);
	cr_expect_eq(e.major, 3);
	cr_expect_eq(e.minor, 11);
	cr_expect_neq(e.runtime, 0);
	cr_expect_gt(e.eval_size, 1000, "_PyEval_EvalFrameDefault is %llu bytes",
		     (unsigned long long)e.eval_size);
	cr_expect_gt(e.nr_loads, 1);
	cr_expect_neq(e.code_type, 0, "no PyCode_Type");
}

/* pyenv's libpython3.10 has no Py_Version: its name says the version */
Test(pydetect, pyenvs_python310_is_found_by_its_name)
{
	static const char lib[] = "/root/.pyenv/versions/3.10.13/lib/libpython3.10.so.1.0";
	struct pyelf e;

	if (access(lib, R_OK))
		cr_skip_test("no pyenv 3.10.13 (%s)", lib);
	cr_assert_eq(pydetect__elf(lib, &e), 0);
	cr_expect_eq(e.major, 3);
	cr_expect_eq(e.minor, 10);
	cr_expect_neq(e.runtime, 0);
	cr_expect_neq(e.code_type, 0);
}

Test(pydetect, a_program_that_is_not_python_has_no_runtime)
{
	struct pyelf e;

	cr_expect_eq(pydetect__elf("/bin/sh", &e), -ENOENT);
	cr_expect_eq(pydetect__elf("/nonexistent/python3.11", &e), -ENOENT);
}

Test(pydetect, a_mapping_gives_its_bias)
{
	struct pyelf e = { .nr_loads = 2, .loads = { { 0, 0, 0x1000 }, { 0x1000, 0x401000, 0x5000 } } };
	bool ok;

	cr_expect_eq(pydetect__bias(&e, 0x7f0000001000, 0x1000, &ok), 0x7f0000001000 - 0x401000);
	cr_expect(ok);
	pydetect__bias(&e, 0x7f0000001000, 0x9000, &ok);
	cr_expect(!ok);
}

Test(pydetect, names_of_each_string_kind_are_utf8)
{
	static const u8 latin1[] = { 'c', 0xe9 };
	static const u16 ucs2[] = { 0x3b1, 0x3b2 };
	static const u32 ucs4[] = { 0x1f40d };
	char buf[32];

	pyname__utf8(latin1, 2, 1, buf, sizeof(buf));
	cr_expect_str_eq(buf, "c\xc3\xa9");
	pyname__utf8((const u8 *)ucs2, 2, 2, buf, sizeof(buf));
	cr_expect_str_eq(buf, "\xce\xb1\xce\xb2");
	pyname__utf8((const u8 *)ucs4, 1, 4, buf, sizeof(buf));
	cr_expect_str_eq(buf, "\xf0\x9f\x90\x8d");
	pyname__utf8(latin1, 2, 1, buf, 3);	/* no room for the second whole: cut, terminated */
	cr_expect_str_eq(buf, "c");
}
