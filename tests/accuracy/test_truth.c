// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* truth: the reference collector against hand-computed counts, against callgrind (a second,
 * independent exact tool) on a fixture and on Debian's gzip, with threads, across a page
 * boundary, through a crash, and with bad input. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <gelf.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "symbols/bblock.h"
#include "callgrind.h"
#include "accuracy/eval.h"
#include "symbols/build_id.h"
#include "lib/disasm.h"
#include "symbols/elf_image.h"
#include "helpers.h"
#include "accuracy/truth.h"
#include "accuracy/truth_export.h"

TestSuite(truth, .fini = cleanup_tmpdir, .timeout = 300);

static const char *tpath(const char *name)
{
	static char buf[4][512];
	static int n;
	char *b = buf[n++ % 4];

	snprintf(b, 512, "%s/%s", tmpdir(), name);
	return b;
}

__attribute__((format(printf, 2, 3))) static struct truth *collect(const char *out, const char *fmt, ...)
{
	struct run_result r;
	struct truth *t;
	char cmd[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	run(&r, "%s truth -o %s -- %s", hsbpf_bin(), out, cmd);
	cr_assert_eq(r.status, 0, "truth %s: %d: %s", cmd, r.status, r.err);
	cr_assert_eq(truth__read(out, &t), 0);
	return t;
}

static u64 count_at(const struct truth *t, const char *obj, u64 vaddr)
{
	const struct truth_insn *in = truth__insn(t, truth__object(t, obj), vaddr);

	return in ? in->count : 0;
}

static const struct elf_func *func(const struct elf_image *img, const char *name)
{
	for (size_t i = 0; i < img->nr_funcs; i++)
		if (!strcmp(img->funcs[i].name, name))
			return &img->funcs[i];
	cr_assert_fail("no function %s in %s", name, img->path);
	return NULL;
}

Test(truth, hand_computed_counts)
{
	const char *bin = fixture("counts");
	struct truth *t = collect(tpath("c.truth"), "%s", bin);
	struct elf_image *img = elf_image__open(bin);
	struct disasm *d = disasm__new();
	const struct elf_func *inner, *copy;
	u64 maxc = 0, rep_addr = 0;

	cr_assert(img && d);
	inner = func(img, "inner");
	copy = func(img, "copy");
	cr_expect_eq(count_at(t, bin, inner->addr), 1000, "inner() entries");
	for (u64 a = inner->addr; a < inner->addr + inner->size; a++)
		if (count_at(t, bin, a) > maxc)
			maxc = count_at(t, bin, a);
	cr_expect_eq(maxc, 37000, "inner() loop body");
	for (u64 a = copy->addr; a < copy->addr + copy->size;) {
		struct insn_info ii;
		size_t avail;
		const u8 *code = elf_image__bytes(img, a, &avail);

		disasm__one(d, code, avail, a, &ii);
		if (ii.rep_string)
			rep_addr = a;
		a += ii.size;
	}
	cr_assert(rep_addr, "no rep movsb in copy()");
	/* hardware view: retired once per execution, not once per byte */
	cr_expect_eq(count_at(t, bin, rep_addr), 10);
	cr_expect_geq(t->meta.rep_iterations, 9990);
	cr_expect_eq(t->meta.exit_code, 0);
	cr_expect_eq(t->meta.signal, 0);
	{
		u64 sum = t->meta.anon_insns;

		for (size_t i = 0; i < t->nr_insns; i++)
			sum += t->insns[i].count;
		cr_expect_eq(sum, t->meta.total_insns, "total is the sum of the parts");
	}
	disasm__free(d);
	elf_image__close(img);
	truth__free(t);
}

/* valgrind loads a PIE main program at this address on amd64; callgrind reports the code of
 * its sections other than .text (.init, .plt, .plt.got, .fini) under object "???" at run-time
 * addresses, and everything in .text under the program at ELF addresses */
#define VALGRIND_PIE_BASE 0x108000ull

static u64 cg_ir(const struct callgrind *cg, const struct elf_image *img, u64 vaddr)
{
	u64 ir = callgrind__ir(cg, img->path, vaddr);

	return ir ? ir : callgrind__ir(cg, "???", vaddr + (img->type == ET_DYN ? VALGRIND_PIE_BASE : 0));
}

/* every instruction of the program's own code: callgrind's Ir equals the truth, except rep
 * string instructions, where callgrind counts one for the entry and one per iteration:
 * Ir = entries + iterations = 2 * truth + rep self-edges - (entries with a zero count) */
static void compare_with_callgrind(const char *bin, const char *args, const char *redirect,
				   u64 *compared)
{
	struct callgrind cg;
	struct run_result r;
	struct truth *t = collect(tpath("x.truth"), "%s %s %s", bin, args, redirect);
	struct elf_image *img = elf_image__open(bin);
	struct disasm *d = disasm__new();
	u32 obj = truth__object(t, bin);
	u64 mismatches = 0, reps = 0;

	cr_assert(img && d && obj != TRUTH_NO_OBJECT);
	run(&r, "valgrind --tool=callgrind --dump-instr=yes --collect-jumps=yes --skip-plt=no "
	    "--callgrind-out-file=%s %s %s %s", tpath("cg.out"), bin, args, redirect);
	cr_assert_eq(r.status, 0, "callgrind: %s", r.err);
	cr_assert_eq(callgrind__read(tpath("cg.out"), &cg), 0);
	*compared = 0;
	for (size_t i = 0; i < t->nr_insns; i++) {
		const struct truth_insn *in = &t->insns[i];
		u64 ir, self = 0;
		struct insn_info ii;
		size_t avail;
		const u8 *code;

		if (in->obj != obj)
			continue;
		ir = cg_ir(&cg, img, in->vaddr);
		code = elf_image__bytes(img, in->vaddr, &avail);
		cr_assert(code);
		disasm__one(d, code, avail, in->vaddr, &ii);
		if (ii.rep_string) {
			for (size_t e = 0; e < t->nr_edges; e++)
				if (t->edges[e].kind == EDGE_REP && t->edges[e].src_obj == obj &&
				    t->edges[e].src == in->vaddr)
					self += t->edges[e].count;
			reps++;
			if (ir > 2 * in->count + self || ir < in->count + self) {
				mismatches++;
				cr_expect_fail("rep at %#llx: callgrind %llu, truth %llu + %llu iterations",
					       (unsigned long long)in->vaddr, (unsigned long long)ir,
					       (unsigned long long)in->count, (unsigned long long)self);
			}
		} else if (ir != in->count && ++mismatches <= 10) {
			cr_expect_fail("%s %#llx: callgrind %llu, truth %llu", bin,
				       (unsigned long long)in->vaddr, (unsigned long long)ir,
				       (unsigned long long)in->count);
		}
		(*compared)++;
	}
	/* and nothing callgrind saw in the program is missing from the truth */
	for (size_t i = 0; i < cg.nr; i++)
		if (!strcmp(cg.costs[i].obj, bin) && cg.costs[i].ir &&
		    !truth__insn(t, obj, cg.costs[i].addr))
			cr_expect_fail("callgrind counted %#llx, the truth has nothing there",
				       (unsigned long long)cg.costs[i].addr);
	cr_expect_eq(mismatches, 0, "%llu of %llu instructions differ",
		     (unsigned long long)mismatches, (unsigned long long)*compared);
	callgrind__free(&cg);
	disasm__free(d);
	elf_image__close(img);
	truth__free(t);
}

Test(truth, identical_to_callgrind_on_a_fixture)
{
	u64 n;

	compare_with_callgrind(fixture("counts"), "", ">/dev/null", &n);
	cr_expect_gt(n, 50);
	compare_with_callgrind(fixture("pagecross"), "", ">/dev/null", &n);
}

Test(truth, identical_to_callgrind_on_gzip)
{
	struct run_result r;
	char args[600];
	u64 n;

	cr_assert_eq(run(&r, "%s 4 > %s", fixture("gen-input"), tpath("input.txt")), 0);
	snprintf(args, sizeof(args), "-6 -c %s", tpath("input.txt"));
	compare_with_callgrind("/usr/bin/gzip", args, ">/dev/null", &n);
	cr_expect_gt(n, 1000, "only %llu gzip instructions compared", (unsigned long long)n);
}

Test(truth, page_crossing_instruction_counted_once)
{
	const char *bin = fixture("pagecross");
	struct truth *t = collect(tpath("p.truth"), "%s", bin);
	struct elf_image *img = elf_image__open(bin);
	const struct elf_func *f = func(img, "straddle");

	/* 24 nops, mov, then the 10-byte movabs at page end - 3 */
	cr_expect_eq(count_at(t, bin, f->addr), 1000);
	cr_expect_eq(count_at(t, bin, f->addr + 24), 1000);
	cr_expect_eq(count_at(t, bin, f->addr + 29), 1000, "the straddling instruction");
	cr_expect_eq(count_at(t, bin, f->addr + 39), 1000, "ret");
	cr_expect_geq(t->meta.page_cross_dropped, 1000);
	elf_image__close(img);
	truth__free(t);
}

Test(truth, threads_are_counted_exactly)
{
	const char *bin = fixture("mtcount");
	struct truth *t = collect(tpath("m.truth"), "%s", bin);
	struct elf_image *img = elf_image__open(bin);

	cr_expect_eq(count_at(t, bin, func(img, "tick")->addr), 1000000);
	cr_expect_geq(t->meta.threads, 5);
	elf_image__close(img);
	truth__free(t);
}

Test(truth, a_crash_still_writes_its_counts)
{
	const char *bin = fixture("crasher");
	struct elf_image *img = elf_image__open(bin);
	struct run_result r;
	struct truth *t;

	run(&r, "%s truth -o %s -- %s", hsbpf_bin(), tpath("k.truth"), bin);
	cr_expect_eq(r.status, 1);
	cr_expect(strstr(r.err, "killed by signal 11"), "%s", r.err);
	cr_assert_eq(truth__read(tpath("k.truth"), &t), 0);
	cr_expect_eq(t->meta.signal, 11);
	cr_expect_eq(count_at(t, bin, func(img, "step")->addr), 1000);
	elf_image__close(img);
	truth__free(t);
}

/* executed blocks agree with the truth: equal counts throughout, unless an edge proves that
 * control entered or left in the middle */
static void blocks_agree(const char *bin, const char *args)
{
	struct truth *t = collect(tpath("b.truth"), "%s %s >/dev/null", bin, args);
	struct elf_image *img = elf_image__open(bin);
	struct bblock_table *bt = bblock_table__build(img);
	u32 obj = truth__object(t, bin);
	size_t executed = 0, mixed = 0, unexplained = 0;

	cr_assert(bt && obj != TRUTH_NO_OBJECT);
	for (size_t i = 0; i < bt->nr; i++) {
		const struct bblock *b = &bt->blocks[i];
		long k = bblock_table__insn_index(bt, b->start);
		u64 first = count_at(t, bin, b->start);
		bool differ = false, any = first;

		for (u32 j = 1; j < b->ninsns; j++) {
			u64 c = count_at(t, bin, bt->insns[k + j]);

			any |= c;
			differ |= c != first;
		}
		executed += any;
		if (!differ)
			continue;
		mixed++;
		bool explained = false;

		for (size_t e = 0; e < t->nr_edges && !explained; e++) {
			const struct truth_edge *ed = &t->edges[e];

			explained = (ed->dst_obj == obj && ed->dst > b->start && ed->dst <= b->last) ||
				    (ed->src_obj == obj && ed->src >= b->start && ed->src < b->last);
		}
		if (!explained && ++unexplained <= 5)
			cr_expect_fail("block %#llx-%#llx has mixed counts and no edge explains it",
				       (unsigned long long)b->start, (unsigned long long)b->last);
	}
	cr_expect_gt(executed, 10);
	cr_expect_eq(unexplained, 0, "%zu of %zu mixed blocks unexplained", unexplained, mixed);
	bblock_table__free(bt);
	elf_image__close(img);
	truth__free(t);
}

Test(truth, blocks_agree_with_the_truth)
{
	char args[600];
	struct run_result r;

	blocks_agree(fixture("counts"), "");
	cr_assert_eq(run(&r, "%s 1 > %s", fixture("gen-input"), tpath("in1.txt")), 0);
	snprintf(args, sizeof(args), "-6 -c %s", tpath("in1.txt"));
	blocks_agree("/usr/bin/gzip", args);
}

Test(truth, bad_input)
{
	static const struct {
		const char *args;
		const char *msg;
	} cases[] = {
		{ "-- /nonexistent/program", "cannot run '/nonexistent/program'" },
		{ "-- no-such-program-anywhere", "cannot run 'no-such-program-anywhere'" },
		{ "-- /etc/passwd", "is not an ELF program" },
		{ "", "nothing to run" },
	};
	struct run_result r;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		run(&r, "%s truth -o %s %s", hsbpf_bin(), tpath("bad.truth"), cases[i].args);
		cr_expect_neq(r.status, 0, "%s", cases[i].args);
		cr_expect(strstr(r.err, cases[i].msg), "'%s': %s", cases[i].args, r.err);
		cr_expect_neq(access(tpath("bad.truth"), F_OK), 0, "'%s' left a file", cases[i].args);
	}
	/* an ELF for another machine */
	run(&r, "cp %s %s && printf '\\x03\\x00' | dd of=%s bs=1 seek=18 conv=notrunc 2>/dev/null && "
	    "%s truth -o %s -- %s", fixture("counts"), tpath("i386"), tpath("i386"), hsbpf_bin(),
	    tpath("bad.truth"), tpath("i386"));
	cr_expect_eq(r.status, 1);
	cr_expect(strstr(r.err, "is not an x86-64 ELF program"), "%s", r.err);
	/* damaged truth files */
	run(&r, "printf 'HSBPFTRU' > %s; %s truth -i %s", tpath("d.truth"), hsbpf_bin(), tpath("d.truth"));
	cr_expect_eq(r.status, 1);
	cr_expect(strstr(r.err, "truncated"), "%s", r.err);
	run(&r, "%s truth -i %s", hsbpf_bin(), fixture("counts"));
	cr_expect_eq(r.status, 1);
	cr_expect(strstr(r.err, "is not an hsbpf truth file"), "%s", r.err);
}

Test(truth, export_formats)
{
	struct truth *t = collect(tpath("e.truth"), "%s", fixture("counts"));
	struct run_result r;

	truth__free(t);
	cr_assert_eq(run(&r, "%s truth -i %s > %s; head -c 60000 %s", hsbpf_bin(), tpath("e.truth"),
			 tpath("all.txt"), tpath("all.txt")), 0);
	cr_expect(strstr(r.out, "\ntotal "));
	cr_expect(strstr(r.out, "\ninsn "));
	cr_assert_eq(run(&r, "%s truth -i %s --what blocks | grep -m3 fixtures/counts", hsbpf_bin(),
			 tpath("e.truth")), 0);
	cr_expect(strstr(r.out, "block "));
	cr_assert_eq(run(&r, "%s truth -i %s --what edges | grep fixtures/counts | head -c 60000",
			 hsbpf_bin(), tpath("e.truth")), 0);
	cr_expect(strstr(r.out, " taken "));
	cr_expect(strstr(r.out, " call "));
	cr_expect(strstr(r.out, " return "));
	cr_expect(strstr(r.out, " rep "));
	cr_assert_eq(run(&r, "%s truth -i %s --format json --what summary,edges", hsbpf_bin(),
			 tpath("e.truth")), 0);
	cr_expect(strstr(r.out, "\"edges\":[{\"src_object\":"));
	cr_expect(!strstr(r.out, "\"insns\""));
	run(&r, "%s truth -i %s --what nonsense", hsbpf_bin(), tpath("e.truth"));
	cr_expect_eq(r.status, 2);
}

Test(truth, report_blocks_and_annotate)
{
	const char *bin = fixture("counts");
	struct run_result r;
	struct truth *t = collect(tpath("a.truth"), "%s", bin);

	truth__free(t);
	cr_assert_eq(run(&r, "%s record -o %s -- %s %s 0.5", hsbpf_bin(), tpath("a.data"),
			 fixture("hot7030"), ""), 0, "%s", r.err);
	cr_assert_eq(run(&r, "%s report -i %s --sort bb --limit 2", hsbpf_bin(), tpath("a.data")), 0);
	cr_expect(strstr(r.out, "work_70"), "%s", r.out);
	cr_expect(strstr(r.out, "Samp/insn"), "%s", r.out);
	cr_assert_eq(run(&r, "%s report -i %s --sort bb --format json", hsbpf_bin(), tpath("a.data")), 0);
	cr_expect(strstr(r.out, "\"est_execs_avg\":"));
	cr_expect(strstr(r.out, "\"block_start\":"));
	cr_assert_eq(run(&r, "%s annotate work_70 -i %s", hsbpf_bin(), tpath("a.data")), 0, "%s", r.err);
	cr_expect(strstr(r.out, "---- block"), "%s", r.out);
	cr_expect(strstr(r.out, "hot7030.c:"), "no source lines: %s", r.out);
	/* an unsampled function, with exact counts from a truth file of its program */
	cr_assert_eq(run(&r, "%s record -o %s -- %s", hsbpf_bin(), tpath("c.data"), bin), 0, "%s", r.err);
	cr_assert_eq(run(&r, "%s annotate inner -i %s --truth %s", hsbpf_bin(), tpath("c.data"),
			 tpath("a.truth")), 0, "%s", r.err);
	cr_expect(strstr(r.out, "exact 37000"), "%s", r.out);
	cr_expect(strstr(r.out, "exact 1000"), "%s", r.out);
	cr_assert_eq(run(&r, "%s annotate inner -i %s --truth %s --format json", hsbpf_bin(),
			 tpath("c.data"), tpath("a.truth")), 0);
	cr_expect(strstr(r.out, "\"exact\":37000"), "%s", r.out);
	run(&r, "%s annotate no_such_function -i %s", hsbpf_bin(), tpath("c.data"));
	cr_expect_eq(r.status, 1);
	cr_expect(strstr(r.err, "no function 'no_such_function'"), "%s", r.err);
}

/* a truth file is for one build: a profile of a rebuilt binary at the same path is refused */
Test(truth, truth_for_another_build_is_refused)
{
	struct run_result r;
	char prog[512];

	snprintf(prog, sizeof(prog), "%s/prog", tmpdir());
	cr_assert_eq(run(&r, "cp %s %s", fixture("counts"), prog), 0);
	truth__free(collect(tpath("o.truth"), "%s", prog));
	cr_assert_eq(run(&r, "cp %s %s", fixture("hot7030"), prog), 0);
	cr_assert_eq(run(&r, "%s record -o %s -- %s 0.2", hsbpf_bin(), tpath("o.data"), prog), 0);
	run(&r, "%s annotate main -i %s --truth %s", hsbpf_bin(), tpath("o.data"), tpath("o.truth"));
	cr_expect_eq(r.status, 1);
	cr_expect(strstr(r.err, "another build"), "%s", r.err);
}

/* eval: a kernel scored against its own truth; another build refused; nothing to score */
Test(truth, eval_scores_a_kernel)
{
	char wl[512], args[600];
	struct run_result r;

	snprintf(wl, sizeof(wl), "%s", fixture("../workloads/callchain"));
	snprintf(args, sizeof(args), "%s 400000", wl);
	truth__free(collect(tpath("w.truth"), "%s", args));
	cr_assert_eq(run(&r, "%s record -F 4999 -o %s -- %s >/dev/null", hsbpf_bin(), tpath("w.data"), args), 0,
		     "%s", r.err);
	cr_assert_eq(run(&r, "%s eval -i %s --truth %s --format json", hsbpf_bin(), tpath("w.data"),
			 tpath("w.truth")), 0, "%s", r.err);
	cr_expect(strstr(r.out, "\"top10_functions\":"), "%s", r.out);
	/* equal work in ten functions: the profile finds at least eight of the true top ten */
	{
		const char *p = strstr(r.out, "\"top10_functions\":");
		int top = p ? atoi(p + 18) : -1;
		const char *a = strstr(r.out, "\"ae\":");
		double ae = a ? atof(a + 5) : 9;

		cr_expect_geq(top, 8, "%s", r.out);
		cr_expect(ae >= 0 && ae < 0.5, "accuracy error %f", ae);
	}
	cr_assert_eq(run(&r, "%s eval -i %s --truth %s --per-object", hsbpf_bin(), tpath("w.data"),
			 tpath("w.truth")), 0);
	cr_expect(strstr(r.out, "callchain"));
	/* a truth of another program's build at the same path */
	truth__free(collect(tpath("x.truth"), "%s 1000", wl));
	run(&r, "cp %s %s/cc && %s record -o %s -- %s/cc 400000 >/dev/null && cp %s %s/cc && "
	    "%s truth -o %s -- %s/cc 1 >/dev/null 2>&1; %s eval -i %s --truth %s", wl, tmpdir(), hsbpf_bin(),
	    tpath("y.data"), tmpdir(), fixture("counts"), tmpdir(), hsbpf_bin(), tpath("y.truth"), tmpdir(),
	    hsbpf_bin(), tpath("y.data"), tpath("y.truth"));
	cr_expect_eq(r.status, 1);
	cr_expect(strstr(r.err, "another build"), "%s", r.err);
	/* no sample in the program */
	run(&r, "%s record -o %s -- /bin/true && %s eval -i %s --truth %s", hsbpf_bin(), tpath("z.data"),
	    hsbpf_bin(), tpath("z.data"), tpath("w.truth"));
	cr_expect_eq(r.status, 1);
	cr_expect(strstr(r.err, "nothing to score"), "%s", r.err);
}

Test(truth, experiment_end_to_end)
{
	struct run_result r;
	char csv[600];
	FILE *f;
	int rows = 0;

	cr_assert_eq(run(&r, "%s experiment --quick --only callchain --periods 119156 --modes fixed,random "
			 "-o %s/exp", hsbpf_bin(), tmpdir()), 0, "%s", r.err);
	cr_expect(strstr(r.err, "2/2 callchain"), "no progress: %s", r.err);
	snprintf(csv, sizeof(csv), "%s/exp/results.csv", tmpdir());
	f = fopen(csv, "r");
	cr_assert(f);
	while (fgets(csv, sizeof(csv), f))
		rows += !!strstr(csv, "callchain,kernel,cpu-clock,119156,");
	fclose(f);
	cr_expect_eq(rows, 2);
	snprintf(csv, sizeof(csv), "%s/exp/od-by-period.png", tmpdir());
	cr_expect_eq(access(csv, F_OK), 0, "no figure");
	snprintf(csv, sizeof(csv), "%s/exp/ae-by-mode.svg", tmpdir());
	cr_expect_eq(access(csv, F_OK), 0, "no figure");
}

/* the LBR estimator: ranges that cover each executed block once per execution give the exact
 * block counts back, so the accuracy error is 0 where IP samples alone cannot do that */
Test(truth, lbr_estimator_recovers_exact_counts)
{
	const char *bin = fixture("counts");
	struct truth *t = collect(tpath("l.truth"), "%s", bin);
	struct elf_image *img = elf_image__open(bin);
	struct bblock_table *bt = bblock_table__build(img);
	struct profile *p = profile__new();
	const u64 base = 0x555555554000ull;
	struct profile_sample s = { .pid = 7, .ip = base + func(img, "inner")->addr, .count = 1, .weight = 1 };
	struct symbolizer *sy;
	struct eval_result res;
	u32 obj = truth__object(t, bin);
	u8 id[20];
	size_t len;

	cr_assert(bt && obj != TRUTH_NO_OBJECT);
	cr_assert_eq(build_id__read(bin, id, sizeof(id), &len), 0);
	profile__add_mapping(p, 7, 0, base, 0x6000, 0, bin, id, len);
	profile__add_sample(p, &s);
	for (size_t i = 0; i < bt->nr; i++) {
		const struct truth_insn *in = truth__insn(t, obj, bt->blocks[i].start);
		struct profile_lbr l = { .pid = 7, .kind = 2, .a = base + bt->blocks[i].start,
					 .b = base + bt->blocks[i].last };

		if (!in || !in->count)
			continue;
		l.count = in->count;
		profile__add_lbr(p, &l);
	}
	profile__finish(p);
	sy = symbolizer__new(p);
	cr_assert_eq(eval__object(p, sy, t, obj, &res), 0);
	cr_expect(strstr(res.estimator, "lbr ranges"), "%s", res.estimator);
	cr_expect(res.m.ae < 0.01, "accuracy error %f", res.m.ae);
	cr_expect_eq(res.m.top_blocks, 20);
	symbolizer__free(sy);
	profile__free(p);
	bblock_table__free(bt);
	elf_image__close(img);
	truth__free(t);
}

/* a virtual PMU whose period is never reached: an empty profile that still says what it is,
 * and a warning, not a profile without its event */
Test(truth, virtual_pmu_without_samples)
{
	struct run_result r;

	cr_assert_eq(run(&r, "%s truth --vpmu insns --period 1000000000 -o %s --profile %s -- /bin/true",
			 hsbpf_bin(), tpath("v0.truth"), tpath("v0.data")), 0, "%s", r.err);
	cr_expect(strstr(r.err, "took no samples"), "%s", r.err);
	cr_assert_eq(run(&r, "%s report -i %s", hsbpf_bin(), tpath("v0.data")), 0, "%s", r.err);
	cr_expect(strstr(r.out, "virtual PMU"), "%s", r.out);
}

/* the exact virtual PMU: instructions sampled with a skid, and taken branches with a 16-entry
 * LBR, from the same run as the truth; on the short-blocks kernel the LBR estimate's accuracy
 * error is at most a third of classic sampling's, as the paper measured on hardware */
Test(truth, virtual_pmu_lbr_beats_classic)
{
	char wl[600];
	struct run_result r;
	double ae[2];

	snprintf(wl, sizeof(wl), "%s 2000000", fixture("../workloads/shortblocks"));
	cr_assert_eq(run(&r, "%s truth --vpmu insns --period 1000000 --skid 3 -o %s --profile %s -- %s",
			 hsbpf_bin(), tpath("vc.truth"), tpath("vc.data"), wl), 0, "%s", r.err);
	cr_expect(strstr(r.err, "virtual PMU:"), "%s", r.err);
	cr_assert_eq(run(&r, "%s truth --vpmu branches --period 100003 --lbr 16 -o %s --profile %s -- %s",
			 hsbpf_bin(), tpath("vl.truth"), tpath("vl.data"), wl), 0, "%s", r.err);
	for (int i = 0; i < 2; i++) {
		const char *a;

		cr_assert_eq(run(&r, "%s eval -i %s --truth %s --format json", hsbpf_bin(),
				 tpath(i ? "vl.data" : "vc.data"), tpath(i ? "vl.truth" : "vc.truth")), 0, "%s", r.err);
		a = strstr(r.out, "\"ae\":");
		cr_assert(a, "%s", r.out);
		ae[i] = atof(a + 5);
		if (i)
			cr_expect(strstr(r.out, "lbr ranges"), "%s", r.out);
	}
	cr_expect(ae[1] * 3 <= ae[0], "LBR %f against classic %f", ae[1], ae[0]);
	/* report --sort bb and annotate show the LBR estimate beside the others */
	cr_assert_eq(run(&r, "%s report -i %s --sort bb --limit 3", hsbpf_bin(), tpath("vl.data")), 0);
	cr_expect(strstr(r.out, "LBR execs"), "%s", r.out);
	cr_assert_eq(run(&r, "%s annotate inside_box -i %s --truth %s --format json", hsbpf_bin(),
			 tpath("vl.data"), tpath("vl.truth")), 0, "%s", r.err);
	{
		/* the first block runs once per call: the LBR estimate, weighted by the sampled
		 * period alone (no truth), within 5% of the exact count */
		const char *l = strstr(r.out, "\"lbr_execs\":"), *e = strstr(r.out, "\"exact\":");
		double lbr = l ? atof(l + 12) : 0, exact = e ? atof(e + 8) : 1;

		cr_expect(exact > 0 && fabs(lbr - exact) <= exact * 0.05, "LBR %f, exact %f", lbr, exact);
	}
	run(&r, "%s truth --vpmu bogus -o %s -- /bin/true", hsbpf_bin(), tpath("x.truth"));
	cr_expect_eq(r.status, 2);
}

/* text exports of a truth file and of a score: a command line or a path with terminal
 * controls in it (the file may come from anyone) reaches the terminal escaped */
Test(truth, text_output_escapes_terminal_controls)
{
	struct eval_result res = {};
	struct truth *t = truth__new();
	char *text;
	size_t len;
	FILE *f;

	cr_assert_not_null(t);
	snprintf(t->meta.command, sizeof(t->meta.command), "prog \033]0;X\007 arg");
	snprintf(t->meta.status, sizeof(t->meta.status), "exited with status 0");
	f = open_memstream(&text, &len);
	cr_assert_eq(truth__export(t, "summary", false, f), 0);
	fclose(f);
	cr_expect(!strchr(text, '\033') && !strchr(text, '\007'), "controls in the export");
	cr_expect(strstr(text, "# command prog \\x1b]0;X\\x07 arg\n"), "%s", text);
	free(text);
	truth__free(t);

	snprintf(res.object, sizeof(res.object), "/tmp/\033[2Jevil");
	snprintf(res.estimator, sizeof(res.estimator), "ip samples x period (instructions)");
	f = open_memstream(&text, &len);
	eval__print(&res, 1, false, f);
	fclose(f);
	cr_expect(!strchr(text, '\033'), "controls in the score");
	cr_expect(strstr(text, "/tmp/\\x1b[2Jevil\n"), "%s", text);
	free(text);
}

/* the metadata fields as truth.c lists them: every string with every byte it can hold, filled
 * to its maximum length, and numbers at their extremes, come back as written (a command with
 * a newline in an argument broke the key=value section) */
#define TS(f) { #f, 's', offsetof(struct truth_meta, f), sizeof(((struct truth_meta *)0)->f) }
#define TN(f) { #f, 'n', offsetof(struct truth_meta, f), sizeof(((struct truth_meta *)0)->f) }
static const struct {
	const char *key;
	char kind;
	size_t off, size;
} truth_meta_fields[] = {
	TS(command), TS(program), TS(status), TN(exit_code), TN(signal), TN(threads), TS(emulator),
	TS(glibc_tunables), TN(total_insns), TN(anon_insns), TN(rep_iterations),
	TN(page_cross_dropped), TN(start_realtime_ns), TN(duration_ns), TN(edges_off), TN(cct),
	TN(cct_unmatched_rets), TN(cct_longjmps), TN(cct_unwinds), TN(cct_signals), TN(cct_sigreturns),
};

Test(truth, metadata_round_trips_every_byte)
{
	const char *path = tpath("m.truth");

	/* status[64] needs 5 rounds of 63 bytes to see all 255 */
	for (size_t r = 0; r < 5; r++) {
		struct truth *t = truth__new(), *q;

		cr_assert(t);
		for (size_t i = 0; i < sizeof(truth_meta_fields) / sizeof(truth_meta_fields[0]); i++) {
			char *f = (char *)&t->meta + truth_meta_fields[i].off;
			size_t n = truth_meta_fields[i].size;

			if (truth_meta_fields[i].kind == 's') {
				for (size_t k = 0; k + 1 < n; k++)
					f[k] = 1 + (r * (n - 1) + k) % 255;
				f[n - 1] = 0;
			} else if (n == 8) {
				*(u64 *)f = r & 1 ? UINT64_MAX - r : r;
			} else {
				*(u32 *)f = r & 1 ? UINT32_MAX - r : r;
			}
		}
		cr_assert_eq(truth__write(t, path), 0, "round %zu", r);
		cr_assert_eq(truth__read(path, &q), 0, "round %zu: the written truth does not read back", r);
		for (size_t i = 0; i < sizeof(truth_meta_fields) / sizeof(truth_meta_fields[0]); i++)
			cr_expect_eq(memcmp((char *)&t->meta + truth_meta_fields[i].off,
					    (char *)&q->meta + truth_meta_fields[i].off, truth_meta_fields[i].size),
				     0, "round %zu: %s differs", r, truth_meta_fields[i].key);
		truth__free(t);
		truth__free(q);
	}
	/* the list above is truth.c's: a field added there and not here fails */
	{
		struct truth *t = truth__new();
		struct run_result r;

		cr_assert_eq(truth__write(t, path), 0);
		truth__free(t);
		run(&r, "tail -c +$((64 + 5 * 24 + 1)) %s | tr -cd '\\n' | wc -c", path);
		cr_expect_eq(atoi(r.out), (int)(sizeof(truth_meta_fields) / sizeof(truth_meta_fields[0])),
			     "%s keys", r.out);
	}
}

/* hand-built hostile truth files: a section twice; counts whose sums wrap (an eval of one
 * printed AE 18446744073709551616) */
Test(truth, hostile_files_are_refused)
{
	struct truth_object obj = { .path = 1 };
	struct truth_insn in[2] = {
		{ .obj = 0, .size = 1, .vaddr = 0x1000, .count = 1ull << 63 },
		{ .obj = 0, .size = 1, .vaddr = 0x1001, .count = 1ull << 63 },
	};
	struct truth_edge ed[2] = {
		{ .src = 0x1000, .dst = 0x1001, .count = UINT64_MAX },
		{ .src = 0x1001, .dst = 0x1000, .count = 1 },
	};
	static const char strs[] = "\0/bin/x";
	struct test_section secs[5] = {
		{ 2, strs, sizeof(strs) }, { 3, &obj, sizeof(obj) }, { 4, in, sizeof(in) },
		{ 5, ed, sizeof(ed) }, { 3, &obj, sizeof(obj) },
	};
	static const char *const msgs[] = {
		"section 3 appears twice", "instruction counts overflow", "edge counts overflow",
	};
	struct run_result r;
	struct truth *t;
	size_t size;
	void *buf;

	for (int i = 0; i < 3; i++) {
		/* 0: fine counts, a section twice; 1: instructions wrap; 2: edges wrap */
		in[1].count = i == 1 ? 1ull << 63 : 1;
		ed[0].count = i == 0 ? 1 : UINT64_MAX;
		buf = build_container(TRUTH_MAGIC, 1, 1, secs, i == 0 ? 5 : 4, &size);
		write_bytes(tpath("h.truth"), buf, size);
		free(buf);
		run(&r, "%s truth -i %s", hsbpf_bin(), tpath("h.truth"));
		cr_expect_eq(r.status, 1, "%d: %s", i, r.err);
		cr_expect(strstr(r.err, msgs[i]), "%d: %s", i, r.err);
	}
	/* the largest sums that fit: 2^63 + 1 instructions, 2^64 - 1 edges */
	ed[0].count = UINT64_MAX - 1;
	buf = build_container(TRUTH_MAGIC, 1, 1, secs, 4, &size);
	cr_expect_eq(truth__parse(buf, size, "fits", &t), 0);
	truth__free(t);
	free(buf);
}

/* the processes (other than skip) whose command line holds marker: how many; with kill_them,
 * each is sent SIGKILL (by its pid: a test's leftovers, never anything else) */
static int procs_with(const char *marker, pid_t skip, bool kill_them)
{
	struct dirent *de;
	DIR *d = opendir("/proc");
	int n = 0;

	cr_assert(d);
	while ((de = readdir(d))) {
		char path[300], buf[8192];
		pid_t pid = atoi(de->d_name);
		ssize_t len;
		int fd;

		if (pid <= 0 || pid == skip)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
		fd = open(path, O_RDONLY);
		if (fd < 0)
			continue;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		for (ssize_t i = 0; i < len; i++)
			buf[i] = buf[i] ? buf[i] : ' ';
		buf[len > 0 ? len : 0] = 0;
		if (!strstr(buf, marker))
			continue;
		n++;
		if (kill_them)
			kill(pid, SIGKILL);
	}
	closedir(d);
	return n;
}

/* hsbpf truth ended by SIGINT, SIGTERM, SIGHUP, SIGQUIT or SIGKILL while the program runs: the
 * emulator goes with it, and nothing is left in the temporary folder or beside the output */
Test(truth, signals_leave_nothing_behind)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGKILL };

	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		char dir[600], marker[700], out[700], errf[800];
		int st = -1, n = -1;
		pid_t pid, w = 0;

		snprintf(dir, sizeof(dir), "%s/sig%d", tmpdir(), sigs[i]);
		cr_assert_eq(mkdir(dir, 0700), 0);
		/* a name only this run's processes carry: the program, through a symlink */
		snprintf(marker, sizeof(marker), "%s/hsbpf-marker-%d-%d", tmpdir(), getpid(), sigs[i]);
		cr_assert_eq(symlink(fixture("hot7030"), marker), 0);
		snprintf(out, sizeof(out), "%s/t.truth", dir);
		snprintf(errf, sizeof(errf), "%s.err", dir);
		pid = fork();
		cr_assert_geq(pid, 0);
		if (pid == 0) {
			int fd = open(errf, O_WRONLY | O_CREAT | O_TRUNC, 0600);

			dup2(fd, 2);
			fd = open("/dev/null", O_WRONLY);
			dup2(fd, 1);
			setenv("TMPDIR", dir, 1);
			execl(hsbpf_bin(), "hsbpf", "truth", "-o", out, "--", marker, "60", (char *)NULL);
			_exit(127);
		}
		/* the emulator is up: a process other than hsbpf with the marker */
		for (int k = 0; k < 400 && (n = procs_with(marker, pid, false)) == 0; k++)
			usleep(50000);
		cr_assert_gt(n, 0, "%s: no emulator started", strsignal(sigs[i]));
		usleep(200000);
		kill(pid, sigs[i]);
		for (int k = 0; k < 200 && (w = waitpid(pid, &st, WNOHANG)) == 0; k++)
			usleep(50000);
		if (w == 0) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
		}
		cr_expect_eq(w, pid, "%s: hsbpf did not end", strsignal(sigs[i]));
		if (sigs[i] == SIGKILL) {
			cr_expect(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
		} else {
			struct run_result r;

			cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 1, "%s: status %#x", strsignal(sigs[i]), st);
			run(&r, "cat %s", errf);
			cr_expect(strstr(r.out, "interrupted"), "%s: %s", strsignal(sigs[i]), r.out);
		}
		for (int k = 0; k < 100 && (n = procs_with(marker, 0, false)) > 0; k++)
			usleep(50000);
		cr_expect_eq(n, 0, "%s: %d emulator processes left running", strsignal(sigs[i]), n);
		procs_with(marker, 0, true);
		/* nothing in TMPDIR (the collector's output), no output and no temporary beside it */
		{
			struct run_result r;

			run(&r, "ls -A %s", dir);
			cr_expect_str_eq(r.out, "", "%s: left behind: %s", strsignal(sigs[i]), r.out);
		}
	}
}
