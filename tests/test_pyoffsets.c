// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* pyoffsets: the CPython layouts hsbpf ships (pyoffsets__known) equal, field by field, what
 * the debug information of every interpreter installed says (Debian's python3.11 through
 * python3.11-dbg, pyenv's 3.10-3.13; one not installed is skipped, saying so); files that are
 * no interpreter, or have no debug information, are refused; a running 3.13's
 * _Py_DebugOffsets gives the same layout, and memory that is no _PyRuntime is refused; the
 * layout chosen for a process (pyoffsets__choose) is the row's unless its DWARF or
 * _Py_DebugOffsets say otherwise, and none for a version without a row. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <gelf.h>
#include <glob.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "helpers.h"
#include "python/pyoffsets.h"

TestSuite(pyoffsets, .fini = cleanup_tmpdir);

#define PYENV "/root/.pyenv/versions"

static const struct hsbpf_py_offsets *known(int major, int minor)
{
	for (size_t i = 0; i < pyoffsets__nr_known; i++)
		if (pyoffsets__known[i].major == major && pyoffsets__known[i].minor == minor)
			return &pyoffsets__known[i];
	return NULL;
}

static void expect_same(const struct hsbpf_py_offsets *want, const struct hsbpf_py_offsets *got,
			const char *what)
{
	for (size_t i = 0; i < pyoffsets__nr_fields; i++)
		cr_expect_eq(pyoffsets__field(got, i), pyoffsets__field(want, i),
			     "%s: %s is %u, the table says %u", what, pyoffsets__fields[i].name,
			     pyoffsets__field(got, i), pyoffsets__field(want, i));
}

/* the first file matching pattern, or NULL */
static const char *first_match(const char *pattern, char *buf, size_t size)
{
	glob_t g;
	bool hit = !glob(pattern, 0, NULL, &g) && g.gl_pathc;

	if (hit)
		snprintf(buf, size, "%s", g.gl_pathv[0]);
	globfree(&g);
	return hit ? buf : NULL;
}

/* the table's row of minor equals the DWARF of the interpreter at path */
static void check_interpreter(const char *path, int minor)
{
	const struct hsbpf_py_offsets *want = known(3, minor);
	struct hsbpf_py_offsets got;
	int err;

	cr_assert(want, "the table has no row for 3.%d", minor);
	err = pyoffsets__from_dwarf(path, &got);
	cr_assert_eq(err, 0, "'%s': pyoffsets__from_dwarf: %s", path, strerror(-err));
	expect_same(want, &got, path);
}

static void check_pyenv(int minor)
{
	char pattern[128], path[PATH_MAX];

	snprintf(pattern, sizeof(pattern), PYENV "/3.%d.*/lib/libpython3.%d.so.1.0", minor, minor);
	if (!first_match(pattern, path, sizeof(path)))
		cr_skip_test("no pyenv build of 3.%d (%s): its row is not checked", minor, pattern);
	check_interpreter(path, minor);
}

Test(pyoffsets, debian_python311_matches_its_debug_package)
{
	if (access("/usr/bin/python3.11", R_OK))
		cr_skip_test("no /usr/bin/python3.11: Debian's 3.11 row is not checked");
	/* the DWARF is in python3.11-dbg's file under /usr/lib/debug/.build-id */
	if (!first_match("/usr/share/doc/python3.11-dbg", (char[PATH_MAX]){ 0 }, PATH_MAX))
		cr_skip_test("python3.11-dbg is not installed (scripts/install-deps.sh): Debian's "
			     "3.11 row is not checked");
	check_interpreter("/usr/bin/python3.11", 11);
}

Test(pyoffsets, pyenv_310_matches) { check_pyenv(10); }
Test(pyoffsets, pyenv_311_matches) { check_pyenv(11); }
Test(pyoffsets, pyenv_312_matches) { check_pyenv(12); }
Test(pyoffsets, pyenv_313_matches) { check_pyenv(13); }

Test(pyoffsets, one_row_per_version_and_absent_where_the_version_has_no_field)
{
	static const int minors[] = { 10, 11, 12, 13 };
	const struct hsbpf_py_offsets *o;

	cr_assert_eq(pyoffsets__nr_known, ARRAY_SIZE(minors));
	for (size_t i = 0; i < ARRAY_SIZE(minors); i++)
		cr_expect_eq(&pyoffsets__known[i], known(3, minors[i]), "3.%d: not one row in order",
			     minors[i]);
	/* each version reaches its current frame one way only; the state a thread runs is
	 * the GIL's holder's (3.10), its cframe's (3.11, 3.12) or the one attached (3.13) */
	o = known(3, 10);
	cr_expect_neq(o->tstate_current_frame, HSBPF_PY_ABSENT);
	cr_expect_neq(o->runtime_tstate_current, HSBPF_PY_ABSENT);
	cr_expect_eq(o->tstate_state, HSBPF_PY_ABSENT);
	cr_expect_eq(o->tstate_cframe, HSBPF_PY_ABSENT);
	cr_expect_eq(o->code_qualname, HSBPF_PY_ABSENT);
	cr_expect_neq(o->code_code, HSBPF_PY_ABSENT);
	o = known(3, 11);
	cr_expect_eq(o->tstate_current_frame, HSBPF_PY_ABSENT);
	cr_expect_neq(o->frame_is_entry, HSBPF_PY_ABSENT);
	cr_expect_eq(o->owned_by_cstack, HSBPF_PY_ABSENT);
	o = known(3, 12);
	cr_expect_neq(o->tstate_cframe, HSBPF_PY_ABSENT);
	/* the running thread's state is a thread-local variable from 3.12 on */
	cr_expect_eq(o->runtime_tstate_current, HSBPF_PY_ABSENT);
	cr_expect_eq(o->tstate_state, HSBPF_PY_ABSENT);
	cr_expect_eq(o->frame_is_entry, HSBPF_PY_ABSENT);
	cr_expect_eq(o->owned_by_cstack, 3);
	o = known(3, 13);
	cr_expect_eq(o->tstate_cframe, HSBPF_PY_ABSENT);
	cr_expect_neq(o->tstate_current_frame, HSBPF_PY_ABSENT);
	cr_expect_eq(o->code_code, HSBPF_PY_ABSENT);
	cr_expect_eq(o->runtime_tstate_current, HSBPF_PY_ABSENT);
	cr_expect_neq(o->tstate_state, HSBPF_PY_ABSENT);
}

Test(pyoffsets, what_is_no_interpreter_is_refused)
{
	struct hsbpf_py_offsets o;
	char path[PATH_MAX];

	cr_expect_eq(pyoffsets__from_dwarf("/nonexistent/libpython3.99.so", &o), -ENOENT);
	snprintf(path, sizeof(path), "%s/not-elf", tmpdir());
	write_bytes(path, "#!/bin/sh\n", 10);
	cr_expect_lt(pyoffsets__from_dwarf(path, &o), 0);
	/* an ELF file with debug information, but no CPython in it */
	cr_expect_eq(pyoffsets__from_dwarf(hsbpf_bin(), &o), -ENOENT);
}

/* the address of symbol sym of the object at path in process pid, from its mappings */
static u64 symbol_address(pid_t pid, const char *path, const char *sym)
{
	char maps[64], line[PATH_MAX + 128];
	u64 fileoff = 0, addr = 0;
	GElf_Sym s = { 0 };
	bool found = false;
	Elf_Scn *scn = NULL;
	size_t nph;
	FILE *f;
	Elf *e;
	int fd;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY);
	cr_assert_geq(fd, 0);
	e = elf_begin(fd, ELF_C_READ, NULL);
	cr_assert(e);
	while (!found && (scn = elf_nextscn(e, scn))) {
		Elf_Data *d = elf_getdata(scn, NULL);
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !d)
			continue;
		for (size_t i = 0; !found && i < sh.sh_size / sh.sh_entsize; i++) {
			const char *name;

			found = gelf_getsym(d, i, &s) && (name = elf_strptr(e, sh.sh_link, s.st_name)) &&
				!strcmp(name, sym);
		}
	}
	cr_assert(found, "'%s' has no %s", path, sym);
	cr_assert_eq(elf_getphdrnum(e, &nph), 0);
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e, i, &ph) && ph.p_type == PT_LOAD && s.st_value >= ph.p_vaddr &&
		    s.st_value < ph.p_vaddr + ph.p_memsz)
			fileoff = s.st_value - ph.p_vaddr + ph.p_offset;
	}
	elf_end(e);
	close(fd);
	snprintf(maps, sizeof(maps), "/proc/%d/maps", pid);
	f = fopen(maps, "r");
	cr_assert(f);
	while (!addr && fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, off;
		char file[PATH_MAX];

		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %4095s", &lo, &hi, &off, file) == 4 &&
		    !strcmp(file, path) && fileoff >= off && fileoff < off + (hi - lo))
			addr = lo + (fileoff - off);
	}
	fclose(f);
	cr_assert(addr, "'%s' is not mapped in process %d where %s is", path, pid, sym);
	return addr;
}

/* pyenv's python3.minor, running until killed, and its libpython's path in lib */
static pid_t start_pyenv(int minor, char *lib, size_t size)
{
	char pattern[128], bin[PATH_MAX], cmd[2 * PATH_MAX + 256], ready[PATH_MAX];
	pid_t pid;

	snprintf(pattern, sizeof(pattern), PYENV "/3.%d.*/lib/libpython3.%d.so.1.0", minor, minor);
	if (!first_match(pattern, lib, size))
		return -1;
	snprintf(pattern, sizeof(pattern), PYENV "/3.%d.*/bin/python3.%d", minor, minor);
	if (!first_match(pattern, bin, sizeof(bin)))
		return -1;
	snprintf(ready, sizeof(ready), "%s/ready-3.%d", tmpdir(), minor);
	snprintf(cmd, sizeof(cmd), "exec %s -c 'import signal; open(\"%s\", \"w\").write(\"ready\"); "
		 "signal.pause()'", bin, ready);
	pid = spawn(cmd);
	cr_assert(wait_file_contains(ready, "ready", 15000), "python3.%d did not start", minor);
	return pid;
}

Test(pyoffsets, running_313_describes_the_same_layout)
{
	struct hsbpf_py_offsets got, dwarf;
	char lib[PATH_MAX];
	pid_t pid = start_pyenv(13, lib, sizeof(lib));
	u64 runtime;
	int err;

	if (pid < 0)
		cr_skip_test("no pyenv build of 3.13: its _Py_DebugOffsets are not checked");
	runtime = symbol_address(pid, lib, "_PyRuntime");
	err = pyoffsets__from_debug_offsets(pid, runtime, &got);
	cr_expect_eq(err, 0, "pyoffsets__from_debug_offsets: %s", strerror(-err));
	if (!err) {
		expect_same(known(3, 13), &got, "3.13's _Py_DebugOffsets");
		cr_assert_eq(pyoffsets__from_dwarf(lib, &dwarf), 0);
		expect_same(&dwarf, &got, "3.13's _Py_DebugOffsets beside its DWARF");
	}
	/* 8 bytes on, no cookie: not _PyRuntime */
	cr_expect_eq(pyoffsets__from_debug_offsets(pid, runtime + 8, &got), -ENOENT);
	reap(pid);
	/* gone: nothing read */
	cr_expect_lt(pyoffsets__from_debug_offsets(pid, runtime, &got), 0);
}

Test(pyoffsets, running_312_has_no_debug_offsets)
{
	struct hsbpf_py_offsets got;
	char lib[PATH_MAX];
	pid_t pid = start_pyenv(12, lib, sizeof(lib));

	if (pid < 0)
		cr_skip_test("no pyenv build of 3.12: not checked that its _PyRuntime is refused");
	cr_expect_eq(pyoffsets__from_debug_offsets(pid, symbol_address(pid, lib, "_PyRuntime"),
						   &got), -ENOENT);
	reap(pid);
}

Test(pyoffsets, every_known_version_is_looked_up_and_no_other)
{
	static const int minors[] = { 10, 11, 12, 13 };
	struct hsbpf_py_offsets o;

	for (size_t i = 0; i < ARRAY_SIZE(minors); i++) {
		cr_assert_eq(pyoffsets__lookup(3, minors[i], &o), 0, "3.%d", minors[i]);
		cr_expect_null(pyoffsets__diff(&o, known(3, minors[i])), "3.%d", minors[i]);
	}
	cr_expect_eq(pyoffsets__lookup(3, 9, &o), -ENOENT);
	cr_expect_eq(pyoffsets__lookup(3, 14, &o), -ENOENT);
}

Test(pyoffsets, the_table_row_unless_debug_information_or_debug_offsets_say_better)
{
	struct hsbpf_py_offsets dwarf = *known(3, 13), rt = *known(3, 13), out;
	struct pyoffsets_choice why;

	/* the table alone */
	cr_assert_eq(pyoffsets__choose(3, 13, NULL, NULL, &out, &why), 0);
	cr_expect_eq(why.source, PYOFFSETS_TABLE);
	cr_expect_null(pyoffsets__diff(&out, known(3, 13)));
	cr_expect_null(why.dwarf_differs);
	cr_expect_null(why.runtime_differs);
	/* DWARF that agrees, then one that does not: the DWARF's, and the field named */
	cr_assert_eq(pyoffsets__choose(3, 13, &dwarf, NULL, &out, &why), 0);
	cr_expect_eq(why.source, PYOFFSETS_DWARF);
	cr_expect_null(why.dwarf_differs);
	dwarf.frame_instr = 64;
	cr_assert_eq(pyoffsets__choose(3, 13, &dwarf, NULL, &out, &why), 0);
	cr_expect_eq(out.frame_instr, 64);
	cr_expect_str_eq(why.dwarf_differs, "frame_instr");
	/* a running 3.13's description wins, checked against the DWARF */
	cr_assert_eq(pyoffsets__choose(3, 13, &dwarf, &rt, &out, &why), 0);
	cr_expect_eq(why.source, PYOFFSETS_RUNTIME);
	cr_expect_eq(out.frame_instr, 56);
	cr_expect_str_eq(why.runtime_differs, "frame_instr");
	/* a description of another version is not this interpreter's */
	cr_assert_eq(pyoffsets__choose(3, 12, &dwarf, &rt, &out, &why), 0);
	cr_expect_eq(why.source, PYOFFSETS_TABLE);
	cr_expect_null(pyoffsets__diff(&out, known(3, 12)));
	/* a version with no row is not read, whatever describes it */
	dwarf.minor = rt.minor = 14;
	cr_expect_eq(pyoffsets__choose(3, 14, &dwarf, &rt, &out, &why), -ENOENT);
	cr_expect_eq(pyoffsets__choose(3, 9, NULL, NULL, &out, &why), -ENOENT);
}
