// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* perf_import's decision on a recording's kernel (is it the running one, so that kallsyms
 * may name its frames?) and the kernel notes' build-id, as known-answer tables. */
#include <criterion/criterion.h>
#include <string.h>
#include "symbols/build_id.h"
#include "import/perf_import.h"

TestSuite(perf_import);

#define ID_A { 0x4a, 0x5a, 0x9b, 0x0a }
#define ID_B { 0x4a, 0x5a, 0x9b, 0x0b }

Test(perf_import, same_kernel_by_build_id_then_release_then_text)
{
	static const struct {
		struct perf_import_kernel rec, run;
		bool same;
		const char *why;
	} cases[] = {
		{ { ID_A, 4, "6.1", 0 }, { ID_A, 4, "6.18", 0 }, true, "build-id (4a5a9b0a) is the running" },
		{ { ID_A, 4, "6.18", 0 }, { ID_B, 4, "6.18", 0 }, false, "(build-id 4a5a9b0a) is not the running one (build-id 4a5a9b0b)" },
		{ { {0}, 0, "6.18", 0 }, { ID_B, 4, "6.18", 0 }, true, "release (6.18) is the running kernel's (no build-id" },
		{ { ID_A, 4, "6.18", 0 }, { {0}, 0, "6.18", 0 }, true, "release (6.18)" },
		{ { {0}, 0, "6.1", 0 }, { ID_B, 4, "6.18", 0 }, false, "kernel (6.1) is not the running one (6.18)" },
		{ { {0}, 0, "", 0 }, { ID_B, 4, "6.18", 0 }, false, "says nothing of its kernel" },
		{ { ID_A, 4, "", 0xffffffff81000000 }, { ID_A, 4, "", 0xffffffff9a000000 }, false,
		  "at 0xffffffff81000000 when recorded and is at 0xffffffff9a000000 now" },
		{ { ID_A, 4, "", 0xffffffff81000000 }, { ID_A, 4, "", 0 }, true, "is the running" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char why[256] = "";
		bool same = perf_import__same_kernel(&cases[i].rec, &cases[i].run, why, sizeof(why));

		cr_expect_eq(same, cases[i].same, "case %zu: %s", i, why);
		cr_expect(strstr(why, cases[i].why), "case %zu: '%s' lacks '%s'", i, why, cases[i].why);
	}
}

/* /sys/kernel/notes: raw notes, the GNU build-id among others (Xen's, Linux's) */
Test(perf_import, build_id_from_raw_kernel_notes)
{
	u8 notes[] = {
		6, 0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 'L', 'i', 'n', 'u', 'x', 0, 0, 0, 1, 2, 3, 4,
		4, 0, 0, 0, 5, 0, 0, 0, 3, 0, 0, 0, 'G', 'N', 'U', 0, 0xde, 0xad, 0xbe, 0xef, 0x42, 0, 0, 0,
	};
	u8 id[20];
	size_t len = 0;

	cr_assert_eq(build_id__from_notes(notes, sizeof(notes), id, sizeof(id), &len), 0);
	cr_expect_eq(len, 5);
	cr_expect_eq(memcmp(id, "\xde\xad\xbe\xef\x42", 5), 0);
	cr_expect_eq(build_id__from_notes(notes, 24, id, sizeof(id), &len), -ENODATA);
	notes[28] = 200;	/* a desc size past the end */
	cr_expect_eq(build_id__from_notes(notes, sizeof(notes), id, sizeof(id), &len), -EINVAL);
}
