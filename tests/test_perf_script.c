// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* perf_script: perf's text output as a profile (mappings and aggregated samples). */
#include <criterion/criterion.h>
#include <stdio.h>
#include "helpers.h"
#include "hsbpf.h"
#include "import/perf_script.h"

TestSuite(perf_script, .fini = cleanup_tmpdir);

Test(perf_script, mappings_and_samples)
{
	char path[512];
	struct profile *p = profile__new();
	FILE *f;

	snprintf(path, sizeof(path), "%s/script.txt", tmpdir());
	f = fopen(path, "w");
	cr_assert(f);
	fputs("    0 PERF_RECORD_MMAP -1/0: [0xffffffff81000000(0x1276508) @ 0xffffffff81000000]: x [kernel.kallsyms]_text\n"
	      "29853 PERF_RECORD_MMAP2 29853/29853: [0x55b499906000(0x1000) @ 0x1000 fe:00 5309324 580032739]: r-xp /w/callchain\n"
	      "29853 PERF_RECORD_MMAP2 29853/29853: [0x55b499a00000(0x1000) @ 0 fe:00 1 2]: r--p /w/data\n"
	      "29853      55b499906010\n"
	      "29853      55b499906010\n"
	      "29853      55b499906020\n"
	      "29853  ffffffff81649520\n"
	      "garbage line\n", f);
	fclose(f);
	cr_assert_eq(perf_script__parse(path, 1000, p), 0);
	cr_assert_eq(p->nr_mappings, 1, "only executable mappings");
	cr_expect_eq(p->mappings[0].start, 0x55b499906000);
	cr_expect_eq(p->mappings[0].pgoff, 0x1000);
	cr_expect_str_eq(profile__str(p, p->mappings[0].path), "/w/callchain");
	cr_assert_eq(p->nr_samples, 3);
	cr_expect_eq(profile__total_samples(p), 4);
	cr_expect_eq(profile__total_weight(p), 4000);
	for (size_t i = 0; i < p->nr_samples; i++)
		if (p->samples[i].ip == 0x55b499906010)
			cr_expect_eq(p->samples[i].count, 2);
		else if (p->samples[i].ip == 0xffffffff81649520)
			cr_expect(p->samples[i].flags & HSBPF_KEY_KERNEL);
	profile__free(p);
	p = profile__new();
	cr_expect_neq(perf_script__parse("/nonexistent", 1, p), 0);
	profile__free(p);
}
