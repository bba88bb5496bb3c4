// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* experiment --stacks end to end on the quick call-chain kernel (-O2, so without frame
 * pointers): the CSV's columns, the exact row's near-zero error, DWARF's complete stacks
 * against frame pointers' truncated ones, and the usage errors. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "helpers.h"

TestSuite(stack_exp, .fini = cleanup_tmpdir, .timeout = 300);

#define HEADER "workload,kind,collector,status,samples,with_stack,complete_share,incl_error_mean," \
	       "incl_error_max,caller_tv_mean,top_functions,seconds\n"

struct csv_row {
	char collector[32], status[32];
	unsigned long samples;
	double complete, incl_mean, incl_max, tv;
	int top;
};

/* the row of a collector in the CSV at path; false if none */
static bool find_row(const char *path, const char *collector, struct csv_row *r)
{
	char line[512], want[64];
	FILE *f = fopen(path, "r");
	bool found = false;

	cr_assert(f, "no %s", path);
	snprintf(want, sizeof(want), "callchain,kernel,%s,", collector);
	while (!found && fgets(line, sizeof(line), f)) {
		char *p = line + strlen(want), *tok;
		int field = 0;

		if (strncmp(line, want, strlen(want)))
			continue;
		found = true;
		memset(r, 0, sizeof(*r));
		snprintf(r->collector, sizeof(r->collector), "%s", collector);
		/* status, samples, with_stack, complete, incl mean, incl max, tv, top, seconds */
		for (tok = strsep(&p, ","); tok; tok = strsep(&p, ","), field++) {
			if (field == 0)
				snprintf(r->status, sizeof(r->status), "%s", tok);
			else if (field == 1)
				r->samples = strtoul(tok, NULL, 10);
			else if (field == 3)
				r->complete = atof(tok);
			else if (field == 4)
				r->incl_mean = atof(tok);
			else if (field == 5)
				r->incl_max = atof(tok);
			else if (field == 6)
				r->tv = atof(tok);
			else if (field == 7)
				r->top = atoi(tok);
		}
	}
	fclose(f);
	return found;
}

Test(stack_exp, quick_callchain)
{
	struct run_result r;
	struct csv_row vpmu, fp, dwarf, pfp, pdw;
	char path[600], line[512];
	FILE *f;
	int rows = 0;

	cr_assert_eq(run(&r, "%s experiment --stacks --quick --only callchain -o %s/sx", hsbpf_bin(),
			 tmpdir()), 0, "%s", r.err);
	cr_expect(strstr(r.err, "5/5 callchain"), "no progress: %s", r.err);
	cr_expect(strstr(r.out, "hsbpf-dwarf"), "no table: %s", r.out);
	snprintf(path, sizeof(path), "%s/sx/stacks.csv", tmpdir());
	f = fopen(path, "r");
	cr_assert(f);
	cr_assert(fgets(line, sizeof(line), f));
	cr_expect_str_eq(line, HEADER);
	while (fgets(line, sizeof(line), f))
		rows++;
	fclose(f);
	cr_expect_eq(rows, 5, "a row per collector");
	cr_assert(find_row(path, "vpmu-exact", &vpmu) && find_row(path, "hsbpf-fp", &fp) &&
		  find_row(path, "hsbpf-dwarf", &dwarf) && find_row(path, "perf-fp", &pfp) &&
		  find_row(path, "perf-dwarf", &pdw));
	/* the exact stacks: complete, every caller split exact (each fN has main as its only
	 * caller: -O2 tail calls), inclusive shares within sampling noise: at ~4,000 samples a
	 * 10% share's standard error is 0.5 points, so 3 points is six of them */
	cr_expect_str_eq(vpmu.status, "ok");
	cr_expect_geq(vpmu.samples, 1000, "%lu", vpmu.samples);
	cr_expect_eq(vpmu.top, 10);
	cr_expect_geq(vpmu.complete, 0.999, "%f", vpmu.complete);
	cr_expect_leq(vpmu.incl_max, 0.03, "%f", vpmu.incl_max);
	cr_expect_leq(vpmu.tv, 0.01, "%f", vpmu.tv);
	/* -O2 keeps no frame pointers: their chains stop at once; the tables reach _start */
	cr_expect_str_eq(fp.status, "ok");
	cr_expect_str_eq(dwarf.status, "ok");
	cr_expect_gt(dwarf.complete, fp.complete, "dwarf %f, fp %f", dwarf.complete, fp.complete);
	cr_expect_geq(dwarf.complete, 0.9, "%f", dwarf.complete);
	cr_expect_leq(fp.complete, 0.5, "%f", fp.complete);
	cr_expect_lt(dwarf.tv, fp.tv, "dwarf %f, fp %f", dwarf.tv, fp.tv);
	cr_expect_str_eq(pfp.status, "ok");
	cr_expect_leq(pfp.complete, 0.5, "%f", pfp.complete);
	/* perf's stack copies, unwound by import: the kernel's stacks fit in its 8 KB */
	cr_expect_str_eq(pdw.status, "ok");
	cr_expect(pdw.samples > 0);
	cr_expect_geq(pdw.complete, 0.9, "%f", pdw.complete);
	cr_expect_gt(pdw.complete, pfp.complete, "dwarf %f, fp %f", pdw.complete, pfp.complete);
	snprintf(path, sizeof(path), "%s/sx/stacks-complete.png", tmpdir());
	cr_expect_eq(access(path, F_OK), 0, "no figure");
	snprintf(path, sizeof(path), "%s/sx/stacks-callertv.svg", tmpdir());
	cr_expect_eq(access(path, F_OK), 0, "no figure");
}

Test(stack_exp, usage_errors)
{
	struct run_result r;

	run(&r, "%s experiment --stacks --quick --only nope -o %s/sy", hsbpf_bin(), tmpdir());
	cr_expect_eq(r.status, 1);
	cr_expect(strstr(r.err, "no workload 'nope' in set 'kernels'"), "%s", r.err);
	run(&r, "%s experiment --stacks --methods -o %s/sy", hsbpf_bin(), tmpdir());
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "--stacks goes alone"), "%s", r.err);
}
