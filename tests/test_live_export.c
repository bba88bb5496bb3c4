// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The exports of live recordings (root): record -g of the stack fixture (two threads) and a
 * recording without stacks, each exported to pprof and read by go tool pprof with numbers
 * equal to hsbpf report's, and to speedscope, valid against its schema. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "export_check.h"
#include "helpers.h"

TestSuite(live_export, .fini = cleanup_tmpdir, .timeout = 120);

static const char *record(const char *opts, const char *cmd)
{
	static char path[1100];
	struct run_result r;

	snprintf(path, sizeof(path), "%s/live.hsbpf", tmpdir());
	run(&r, "%s record %s -o %s -- %s", hsbpf_bin(), opts, path, cmd);
	cr_assert_eq(r.status, 0, "%s", r.err);
	return path;
}

Test(live_export, a_record_g_of_the_stack_fixture_reads_in_go_tool_pprof_and_speedscope)
{
	char cmd[1100], traces[1100], err[4096];
	const char *path;
	struct run_result r;
	FILE *f;
	char line[1024], prev[3][1024] = {};
	bool path_a = false;

	snprintf(cmd, sizeof(cmd), "%s threads 1", fixture("stacks/callpaths"));
	path = record("-g -F 999", cmd);
	cr_expect_geq(check_pprof_matches_report(path), 10);
	check_speedscope(path);
	/* the known path leaf <- mid_a <- path_a is one of the traces (a pprof sample: leaf first) */
	snprintf(cmd, sizeof(cmd), "%s run 1", fixture("stacks/callpaths"));
	path = record("-g -F 999", cmd);
	snprintf(traces, sizeof(traces), "%s/live.pb.gz", tmpdir());
	run(&r, "%s report -i %s --format pprof -o %s", hsbpf_bin(), path, traces);
	cr_assert_eq(r.status, 0, "%s", r.err);
	snprintf(cmd, sizeof(cmd), "%s/traces.txt", tmpdir());
	cr_assert_eq(go_pprof("-traces", traces, cmd, err, sizeof(err)), 0, "%s", err);
	f = fopen(cmd, "r");
	cr_assert(f);
	while (fgets(line, sizeof(line), f) && !path_a) {
		char name[256] = "";

		sscanf(line, "%*[ ]%*[0-9.a-z]%*[ ]%255s", name);
		if (!name[0])
			sscanf(line, " %255s", name);
		memmove(prev[0], prev[1], sizeof(prev[0]) * 2);
		snprintf(prev[2], sizeof(prev[2]), "%s", name);
		path_a = !strcmp(prev[0], "leaf") && !strcmp(prev[1], "mid_a") && !strcmp(prev[2], "path_a");
	}
	fclose(f);
	cr_expect(path_a, "no leaf <- mid_a <- path_a trace");
	check_speedscope(path);
}

Test(live_export, a_recording_without_stacks_reads_in_go_tool_pprof_and_speedscope)
{
	char cmd[1100];
	const char *path;

	snprintf(cmd, sizeof(cmd), "%s 1", fixture("hot7030"));
	path = record("-F 999", cmd);
	cr_expect_geq(check_pprof_matches_report(path), 2);
	check_speedscope(path);
}

/* go tool pprof's flat count of a function in -top's output (file at path), or -1 */
static long long top_flat(const char *path, const char *name)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	long long flat = -1;

	cr_assert(f);
	while (fgets(line, sizeof(line), f) && flat < 0) {
		long long v;
		int off = 0;

		line[strcspn(line, "\n")] = 0;
		if (sscanf(line, " %lld %*s %*s %*s %*s %n", &v, &off) == 1 && off &&
		    !strcmp(line + off, name))
			flat = v;
	}
	fclose(f);
	return flat;
}

/* inlined: spin_inline() is inlined into work_70(), where 70% of the samples land: pprof shows
 * it as an inlined frame (a second line of the location), not as work_70's own samples */
Test(live_export, inlined_functions_are_lines_of_their_callers_location)
{
	char cmd[1100], pb[1100], top[1100], err[4096];
	struct run_result r;
	const char *path;
	long long spin, outer;

	snprintf(cmd, sizeof(cmd), "%s 1", fixture("inline/inlined"));
	path = record("-F 999", cmd);
	cr_expect_geq(check_pprof_matches_report(path), 2);
	snprintf(pb, sizeof(pb), "%s/inl.pb.gz", tmpdir());
	snprintf(top, sizeof(top), "%s/inl-top.txt", tmpdir());
	run(&r, "%s report -i %s --format pprof -o %s", hsbpf_bin(), path, pb);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(go_pprof("-sample_index=samples -top -nodecount=1000 -nodefraction=0", pb, top,
			      err, sizeof(err)), 0, "%s", err);
	spin = top_flat(top, "spin_inline (inline)");
	outer = top_flat(top, "work_70");
	/* a 1 s loop at 999 Hz, 70% of it in spin_inline: hundreds of samples, whatever else the
	 * machine does */
	cr_expect_gt(spin, 100, "spin_inline (inline): %lld samples", spin);
	/* work_70's own code is a few instructions per 7,000 iterations of spin_inline's loop: a
	 * share of 5% would mean the lines are not split */
	cr_expect(outer >= 0 && outer * 20 < spin, "work_70's own samples are spin_inline's: work_70 %lld, "
		  "spin_inline %lld", outer, spin);
}
