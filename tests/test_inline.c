// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* inline: the chain of inlined calls at an address, against binutils' addr2line -i (its own
 * DWARF reader), at addresses all over each object's code: the fixtures (every byte: C, C++,
 * a chain of two always_inline calls) and hsbpf itself (-O2 -g, thousands of inlined calls,
 * chains of three and more). Names may differ (addr2line prefers the symbol table's alias),
 * the depth may not. */
#include <criterion/criterion.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "helpers.h"
#include "symbols/inline.h"

static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

static bool text_of(const char *path, u64 *start, u64 *size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	bool found = false;

	if (e && !elf_getshdrstrndx(e, &shstrndx)) {
		while (!found && (scn = elf_nextscn(e, scn))) {
			GElf_Shdr sh;
			const char *name;

			if (!gelf_getshdr(scn, &sh))
				continue;
			name = elf_strptr(e, shstrndx, sh.sh_name);
			if (name && !strcmp(name, ".text")) {
				*start = sh.sh_addr;
				*size = sh.sh_size;
				found = true;
			}
		}
	}
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
	return found;
}

/* compare at every step-th byte of path's .text; returns how many addresses had a chain of
 * depth or more */
static size_t compare(const char *path, u64 step, int depth)
{
	char addrs[PATH_MAX], cmd[3 * PATH_MAX], line[4096];
	u64 start = 0, size = 0, n = 0, deep = 0, differ = 0, last = 0;
	struct strset names = {};
	Dwfl *dwfl = dwfl_begin(&callbacks);
	Dwfl_Module *mod;
	struct inlines *x;
	int ref = -1, *ours;
	FILE *f;

	elf_version(EV_CURRENT);
	cr_assert(text_of(path, &start, &size), "%s has no .text", path);
	dwfl_report_begin(dwfl);
	mod = dwfl_report_elf(dwfl, "object", path, -1, 0, true);
	dwfl_report_end(dwfl, NULL, NULL);
	cr_assert_not_null(mod, "%s: %s", path, dwfl_errmsg(-1));
	x = inlines__new(mod, &names, 0);
	cr_assert_not_null(x);
	ours = calloc(size / step + 1, sizeof(*ours));
	cr_assert_not_null(ours);
	snprintf(addrs, sizeof(addrs), "%s/addrs", tmpdir());
	f = fopen(addrs, "we");
	cr_assert_not_null(f);
	for (u64 a = start; a < start + size; a += step, n++) {
		struct inline_frame fr[INLINE_MAX_DEPTH];

		ours[n] = inlines__frames(x, a, fr, INLINE_MAX_DEPTH);
		fprintf(f, "%" PRIx64 "\n", a);
	}
	cr_assert_eq(fclose(f), 0);
	/* per address: "0x...", then a function and a file:line per level, innermost first */
	snprintf(cmd, sizeof(cmd), "addr2line -a -f -i -e '%s' < '%s'", path, addrs);
	f = popen(cmd, "r");
	cr_assert_not_null(f);
	for (u64 i = 0, lines = 0; fgets(line, sizeof(line), f); lines++) {
		if (!strncmp(line, "0x", 2)) {
			if (ref >= 0 && ref != ours[i - 1] && differ++ < 5)
				cr_log_error("%s at 0x%" PRIx64 ": addr2line -i %d inlined, ours %d", path,
					     last, ref, ours[i - 1]);
			if (ref >= depth)
				deep++;
			last = strtoull(line, NULL, 16);
			i++;
			ref = -1;
			lines = 0;
		} else if (lines % 2 == 1) {
			ref++;	/* a function name: the first is the outermost's caller chain's end */
		}
	}
	if (ref >= 0 && ref != ours[n - 1] && differ++ < 5)
		cr_log_error("%s at 0x%" PRIx64 ": addr2line -i %d inlined, ours %d", path, last, ref,
			     ours[n - 1]);
	if (ref >= depth)
		deep++;
	cr_assert_eq(pclose(f), 0, "addr2line failed on %s", path);
	cr_expect_eq(differ, 0, "%s: %" PRIu64 " of %" PRIu64 " addresses differ", path, differ, n);
	inlines__free(x);
	dwfl_end(dwfl);
	strset__free(&names);
	free(ours);
	return deep;
}

TestSuite(inline, .fini = cleanup_tmpdir, .timeout = 120);

Test(inline, chains_match_addr2line_on_the_fixtures)
{
	cr_expect_gt(compare(fixture("inline/inlined"), 1, 2), 10, "the chain of two in work_70");
	compare(fixture("cxx/cxxnames"), 1, 1);
	compare(fixture("stacks/callpaths"), 1, 1);
}

Test(inline, chains_match_addr2line_on_hsbpf)
{
	cr_expect_gt(compare(hsbpf_bin(), 13, 3), 100, "hsbpf has chains of three inlined calls");
}
