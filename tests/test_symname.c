// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* symname: perf's choice among the names of one address, version-blind matching, and the
 * PLT entries of a fixture against objdump's names. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "helpers.h"
#include "symbols/symname.h"

Test(symname, perfs_choice_among_aliases)
{
	static const struct {
		const char *a; u64 size_a; int bind_a;
		const char *b; u64 size_b; int bind_b;
		int want;	/* <0: a, >0: b */
	} cases[] = {
		{ "sized", 10, STB_LOCAL, "sizeless", 0, STB_GLOBAL, -1 },
		{ "random", 131, STB_WEAK, "__random", 131, STB_LOCAL, 1 },
		{ "__libc_start_main_impl", 321, STB_LOCAL, "__libc_start_main@@GLIBC_2.34", 321, STB_GLOBAL, 1 },
		{ "__pthread_mutex_lock@GLIBC_2.2.5", 726, STB_GLOBAL, "pthread_mutex_lock@@GLIBC_2.2.5", 726, STB_GLOBAL, 1 },
		{ "__GI___pthread_mutex_unlock_usercnt", 246, STB_LOCAL, "__pthread_mutex_unlock_usercnt", 246, STB_LOCAL, -1 },
		{ "__GI___qsort_r", 9, STB_LOCAL, "__qsort_r", 9, STB_LOCAL, -1 },
		{ "same", 1, STB_LOCAL, "same", 1, STB_LOCAL, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int c = symname__cmp(cases[i].a, cases[i].size_a, cases[i].bind_a, cases[i].b,
				     cases[i].size_b, cases[i].bind_b);
		int r = symname__cmp(cases[i].b, cases[i].size_b, cases[i].bind_b, cases[i].a,
				     cases[i].size_a, cases[i].bind_a);

		cr_expect_eq(c < 0 ? -1 : c > 0, cases[i].want, "%s / %s: %d", cases[i].a, cases[i].b, c);
		cr_expect_eq(r < 0 ? -1 : r > 0, -cases[i].want, "%s / %s reversed: %d", cases[i].b,
			     cases[i].a, r);
	}
}

Test(symname, names_match_with_or_without_their_version)
{
	static const struct {
		const char *name, *want;
		bool eq;
	} cases[] = {
		{ "__pthread_mutex_lock@GLIBC_2.2.5", "__pthread_mutex_lock", true },
		{ "pthread_mutex_lock@@GLIBC_2.2.5", "pthread_mutex_lock", true },
		{ "pthread_mutex_lock@@GLIBC_2.2.5", "pthread_mutex_lock@@GLIBC_2.2.5", true },
		{ "pthread_mutex_lock@@GLIBC_2.2.5", "pthread_mutex_lock@GLIBC_2.2.5", false },
		{ "pthread_mutex_lock@@GLIBC_2.2.5", "pthread_mutex", false },
		{ "main", "main", true },
		{ "main", "mai", false },
		{ "mainly", "main", false },
		{ "memcpy@plt", "memcpy", true },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char list[256];

		cr_expect_eq(symname__eq(cases[i].name, cases[i].want), cases[i].eq, "%s / %s",
			     cases[i].name, cases[i].want);
		snprintf(list, sizeof(list), "x,%s,y", cases[i].want);
		cr_expect_eq(symname__in_list(list, cases[i].name), cases[i].eq, "%s in %s",
			     cases[i].name, list);
	}
	cr_expect(!symname__in_list("", "main"));
	cr_expect(symname__in_list("main", "main"));
}

/* the fixture's PLT (.plt, lazy binding): objdump's names at the same addresses */
Test(symname, plt_entries_of_a_fixture)
{
	const char *bin = fixture("threads");
	int fd = open(bin, O_RDONLY);
	Elf *elf;
	struct symname_plt *v;
	size_t nr, found = 0;
	char cmd[1024], line[512];
	FILE *f;

	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	cr_assert(elf, "%s", bin);
	cr_assert_eq(symname__plt(elf, &v, &nr), 0);
	cr_assert_eq(nr, 4);
	snprintf(cmd, sizeof(cmd), "objdump -d -j .plt '%s'", bin);
	f = popen(cmd, "r");
	cr_assert(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a;
		char name[256];

		if (sscanf(line, "%llx <%255[^>]>:", &a, name) != 2 || strchr(name, '-'))
			continue;
		for (size_t i = 0; i < nr; i++)
			if (v[i].addr == a) {
				cr_expect_str_eq(v[i].name, name);
				cr_expect_eq(v[i].size, 16);
				found++;
			}
	}
	pclose(f);
	cr_expect_eq(found, 4);
	cr_expect_str_eq(v[2].name, "pthread_create@plt");
	symname__free_plt(v, nr);
	elf_end(elf);
	close(fd);
}
