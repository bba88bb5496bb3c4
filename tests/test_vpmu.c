// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* vpmu: the virtual PMU on the timing model's clock, end to end under the reference collector:
 * the shadow of a real divide (tests/fixtures/divloop.c) for classic cycles and not for PDIR,
 * the options of truth --vpmu, and the paper's ranking of the sampling methods on the four
 * kernels at reduced size (hsbpf experiment --methods --quick). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "helpers.h"

TestSuite(vpmu, .fini = cleanup_tmpdir, .timeout = 900);

static const char *tpath(const char *name)
{
	static char buf[4][512];
	static int n;
	char *b = buf[n++ % 4];

	snprintf(b, 512, "%s/%s", tmpdir(), name);
	return b;
}

/* samples on each instruction of divloop() from annotate's JSON, in address order: the share
 * of the instruction after the divide, and of the loop's instructions (blocks of ten) */
static double share_after_div(const char *json, int *loop_insns)
{
	const char *p = json, *div = strstr(json, "\"text\":\"div rcx\"");
	double after = -1, total = 0;
	int seen_div = 0;

	*loop_insns = 0;
	cr_assert(div, "no div in %.400s", json);
	while ((p = strstr(p, "\"text\":\""))) {
		const char *s = strstr(p, "\"samples\":");
		double n = s ? atof(s + 10) : 0;

		total += n;
		if (seen_div == 1)
			after = n;
		if (seen_div)
			seen_div++;
		if (p == div)
			seen_div = 1;
		p += 8;
	}
	{
		/* the loop's block: the one holding the divide */
		const char *b = div;

		while (b > json && strncmp(b, "\"insns\":", 8))
			b--;
		*loop_insns = atoi(b + 8);
	}
	return total > 0 ? after / total : -1;
}

static double run_share(const char *opts, int *loop_insns)
{
	struct run_result r;

	cr_assert_eq(run(&r, "%s truth --vpmu %s -o %s --profile %s -- %s 300000", hsbpf_bin(), opts,
			 tpath("d.truth"), tpath("d.data"), fixture("divloop")), 0, "%s", r.err);
	cr_assert_eq(run(&r, "%s annotate divloop -i %s --truth %s --format json", hsbpf_bin(),
			 tpath("d.data"), tpath("d.truth")), 0, "%s", r.err);
	return share_after_div(r.out, loop_insns);
}

/* the loop retires its ten instructions in about 4 cycles once the divide (32-96 cycles)
 * is done: an interrupt nearly always arrives while the divide blocks retirement, is taken
 * when it retires alone (the next instruction needs the quotient) and reports that next
 * instruction, which gets far more than its 1/10 of the instructions; PDIR gives it 1/10 */
Test(vpmu, classic_cycles_land_after_a_divide_and_pdir_does_not)
{
	int insns = 0;
	double classic = run_share("cycles --period 20011", &insns);
	double pdir = run_share("insns --sampling pdir --period 1009 --period-mode prime", &insns);

	cr_expect_eq(insns, 10, "the loop is one block of ten instructions: %d", insns);
	cr_expect_gt(classic, 0.7, "classic cycles: %.3f of the samples after the divide", classic);
	cr_expect(pdir > 0.07 && pdir < 0.13, "pdir: %.3f after the divide", pdir);
}

/* the timing model decides when samples are taken and which address they report, nothing
 * else: the truth of a run is the same byte for byte whatever PMU samples it. (A run without
 * --vpmu differs by one branch in the crash catcher's atoi of its descriptor's number, which
 * is why the reference here is the clockless PMU.) */
Test(vpmu, the_timing_model_leaves_the_truth_unchanged)
{
	static const char *const pmus[] = {
		"insns --period 1009",
		"cycles --period 10007",
		"insns --sampling precise-fix --period 1009",
		"branches --sampling classic --period 101 --timing irq_latency=100",
		"insns --sampling pdir --period 1009 --period-mode random",
	};
	struct run_result r;

	for (size_t i = 0; i < sizeof(pmus) / sizeof(pmus[0]); i++) {
		cr_assert_eq(run(&r, "%s truth --vpmu %s -o %s --profile %s -- %s 20000 >/dev/null && "
				 "%s truth -i %s --what blocks,edges >%s/t%zu.txt", hsbpf_bin(), pmus[i],
				 tpath("t.truth"), tpath("t.data"), fixture("divloop"), hsbpf_bin(),
				 tpath("t.truth"), tmpdir(), i), 0, "%s: %s", pmus[i], r.err);
		if (i)
			cr_expect_eq(run(&r, "cmp %s/t0.txt %s/t%zu.txt", tmpdir(), tmpdir(), i), 0,
				     "--vpmu %s: the truth differs from the clockless PMU's: %s", pmus[i],
				     r.out);
	}
}

Test(vpmu, options)
{
	struct run_result r;
	const char *t = fixture("divloop");

	/* cycles are accepted, and sample with the classic interrupt by default */
	cr_assert_eq(run(&r, "%s truth -v --vpmu cycles --period 100003 -o %s --profile %s -- %s 1000",
			 hsbpf_bin(), tpath("a.truth"), tpath("a.data"), t), 0, "%s", r.err);
	cr_expect(strstr(r.err, "classic sampling"), "%s", r.err);
	cr_expect(strstr(r.err, "IPC "), "%s", r.err);
	cr_assert_eq(run(&r, "%s report -i %s --format json", hsbpf_bin(), tpath("a.data")), 0, "%s", r.err);
	cr_expect(strstr(r.out, "\"event\":\"cycles (virtual PMU)\""), "%.300s", r.out);
	/* parameters reach the model: a slower divide makes more cycles, so more samples */
	{
		long base, slow;

		run(&r, "%s truth --vpmu cycles --period 10007 -o %s --profile %s -- %s 20000 && "
		    "%s report -i %s --format json", hsbpf_bin(), tpath("b.truth"), tpath("b.data"), t,
		    hsbpf_bin(), tpath("b.data"));
		base = strstr(r.out, "\"total_samples\":") ? atol(strstr(r.out, "\"total_samples\":") + 16) : 0;
		run(&r, "%s truth --vpmu cycles --period 10007 --timing div64_min=200,div64_max=200 -o %s "
		    "--profile %s -- %s 20000 && %s report -i %s --format json", hsbpf_bin(), tpath("b.truth"),
		    tpath("b.data"), t, hsbpf_bin(), tpath("b.data"));
		slow = strstr(r.out, "\"total_samples\":") ? atol(strstr(r.out, "\"total_samples\":") + 16) : 0;
		cr_expect(base > 50 && slow > 2 * base, "samples: %ld by default, %ld with 200-cycle divides",
			  base, slow);
	}
	cr_assert_eq(run(&r, "%s truth --timing help", hsbpf_bin()), 0);
	cr_expect(strstr(r.out, "irq_latency") && strstr(r.out, "div64_max"), "%s", r.out);
	/* usage errors: exit status 2 and a message */
	static const struct {
		const char *args, *msg;
	} bad[] = {
		{ "--vpmu bogus", "unknown --vpmu" },
		{ "--vpmu insns --sampling bogus", "unknown --sampling" },
		{ "--vpmu insns --sampling classic --skid 3", "--skid is for exact sampling" },
		{ "--vpmu cycles --timing nosuch=1", "unknown timing parameter" },
		{ "--vpmu cycles --timing width=0", "invalid width" },
		{ "--vpmu branches --lbr 16 --sampling pdir", "--lbr goes with exact" },
		{ "--sampling pdir", "need --vpmu" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		run(&r, "%s truth %s -o %s --profile %s -- /bin/true", hsbpf_bin(), bad[i].args,
		    tpath("x.truth"), tpath("x.data"));
		cr_expect_eq(r.status, 2, "%s: %d", bad[i].args, r.status);
		cr_expect(strstr(r.err, bad[i].msg), "%s: %s", bad[i].args, r.err);
	}
	run(&r, "%s experiment --methods --method classic,bogus -o %s/e", hsbpf_bin(), tmpdir());
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "unknown method 'bogus'"), "%s", r.err);
	run(&r, "%s experiment --method classic -o %s/e", hsbpf_bin(), tmpdir());
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "--method goes with --methods"), "%s", r.err);
}

/* experiment --methods samples every method from one emulation per workload, each PMU with
 * its own counter and generator seeded as alone: its rows are those of one emulation per
 * method (--separate-runs) to the last digit, but for the seconds column. The methods cover
 * cycles and instructions, classic, PEBS with a random period and with the LBR fix, PDIR
 * without the core, and the clockless LBR */
Test(vpmu, one_pass_gives_the_rows_of_one_run_per_method)
{
	const char *methods = "classic,precise-random,precise-lbrfix,pdir,lbr";
	struct run_result r, one;
	int lines = 0;
	FILE *f;
	char line[512];

	cr_assert_eq(run(&one, "%s experiment --methods --quick --only latency --method %s -o %s/one",
			 hsbpf_bin(), methods, tmpdir()), 0, "%s", one.err);
	cr_assert_eq(run(&r, "%s experiment --methods --quick --only latency --method %s --separate-runs "
			 "-o %s/sep", hsbpf_bin(), methods, tmpdir()), 0, "%s", r.err);
	cr_expect_str_eq(one.out, r.out, "the AE tables differ");
	cr_assert_eq(run(&r, "cd %s && cut -d, -f1-17 one/methods.csv >one.txt && "
			 "cut -d, -f1-17 sep/methods.csv >sep.txt && diff one.txt sep.txt", tmpdir()), 0,
		     "one pass and one run per method differ:\n%s", r.out);
	f = fopen(tpath("one.txt"), "r");
	cr_assert(f);
	while (fgets(line, sizeof(line), f))
		lines++;
	fclose(f);
	cr_expect_eq(lines, 6, "a header and five rows: %d lines", lines);
	run(&r, "%s experiment --separate-runs -o %s/e", hsbpf_bin(), tmpdir());
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "--separate-runs goes with --methods"), "%s", r.err);
}

static double ae_of(const char *csv, const char *workload, const char *method)
{
	char key[128];
	const char *l;

	snprintf(key, sizeof(key), "\n%s,kernel,%s,", workload, method);
	l = strstr(csv, key);
	cr_assert(l, "no row %s,%s in\n%s", workload, method, csv);
	/* workload,kind,method,event,period,period_mode,sampling,lbr,samples,ae */
	for (int f = 0; f < 9; f++)
		l = strchr(l + 1, ',');
	return atof(l + 1);
}

/* the paper's qualitative ranking, at 1/16 of the kernels' work: on latency, classic
 * sampling's error (latency bias) is larger than PDIR's, and the LBR's error is at most a
 * third of classic's on every kernel */
Test(vpmu, methods_rank_as_in_the_paper)
{
	static const char *const kernels[] = { "latency", "callchain", "shortblocks", "fragmented" };
	struct run_result r;
	FILE *f;
	static char csv[65536];
	size_t n;

	cr_assert_eq(run(&r, "%s experiment --methods --quick --method classic,pdir,lbr -o %s/m",
			 hsbpf_bin(), tmpdir()), 0, "%s", r.err);
	/* the table on standard output, a row per kernel and a column per method */
	cr_expect(strstr(r.out, "accuracy error (AE) by method\nworkload      classic     pdir      lbr\n"
			 "latency "), "%s", r.out);
	f = fopen(tpath("m/methods.csv"), "r");
	cr_assert(f);
	csv[0] = '\n';
	n = fread(csv + 1, 1, sizeof(csv) - 2, f);
	csv[n + 1] = 0;
	fclose(f);
	cr_expect_gt(ae_of(csv, "latency", "classic"), ae_of(csv, "latency", "pdir"), "%s", csv);
	for (size_t k = 0; k < sizeof(kernels) / sizeof(kernels[0]); k++) {
		double c = ae_of(csv, kernels[k], "classic"), l = ae_of(csv, kernels[k], "lbr");

		cr_expect(l * 3 <= c, "%s: LBR %f against classic %f", kernels[k], l, c);
	}
}
