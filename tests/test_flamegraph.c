// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* flamegraph: the frame tree from stacks given by hand and from profiles (with stacks,
 * without), merging narrow frames with every sample kept, kinds, the page's data safe inside
 * <script>; hsbpf flamegraph and hsbpf diff on bad input; and the pages in a real browser
 * (tests/browser/flamegraph.test.mjs in Debian's headless chromium). */
#include <criterion/criterion.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report/flamegraph.h"
#include "helpers.h"
#include "hsbpf.h"

TestSuite(flamegraph, .fini = cleanup_tmpdir);

#define F(n) { .name = n, .kind = FLAME_USER }

static s64 find(const struct flame_tree *t, const char *const *path, int nr)
{
	u32 at = 0;

	for (int i = 0; i < nr; i++) {
		u32 c = t->nodes[at].first_child;

		while (c && strcmp(t->strs[t->nodes[c - 1].name], path[i]))
			c = t->nodes[c - 1].next;
		if (!c)
			return -1;
		at = c - 1;
	}
	return at;
}
#define FIND(t, ...) find(t, (const char *const[]){ __VA_ARGS__ }, \
			  sizeof((const char *const[]){ __VA_ARGS__ }) / sizeof(char *))

/* the sum of a frame's children never exceeds it; returns its frames */
static size_t check_sums(const struct flame_tree *t, u32 n, int side)
{
	u64 sum = 0;
	size_t nr = 1;

	for (u32 c = t->nodes[n].first_child; c; c = t->nodes[c - 1].next) {
		sum += t->nodes[c - 1].count[side];
		cr_assert_eq(t->nodes[c - 1].parent, n);
		cr_assert_eq(t->nodes[c - 1].depth, t->nodes[n].depth + 1);
		nr += check_sums(t, c - 1, side);
	}
	cr_assert(sum <= t->nodes[n].count[side], "children %llu > frame %llu",
		  (unsigned long long)sum, (unsigned long long)t->nodes[n].count[side]);
	return nr;
}

Test(flamegraph, tree_from_stacks)
{
	struct flame_tree *t = flame__new(false);
	const struct flame_frame a[] = { F("main"), F("compute"), F("hash") };
	const struct flame_frame b[] = { F("main"), F("compute"), F("sort") };
	const struct flame_frame c[] = { F("main"), F("idle") };
	/* the same name in another object or of another kind is another frame */
	const struct flame_frame d[] = { F("main"), { .name = "idle", .kind = FLAME_KERNEL } };

	cr_assert(t);
	cr_assert_eq(flame__add_stack(t, a, 3, 40, 0), 0);
	cr_assert_eq(flame__add_stack(t, b, 3, 20, 0), 0);
	cr_assert_eq(flame__add_stack(t, a, 3, 5, 0), 0);
	cr_assert_eq(flame__add_stack(t, c, 2, 10, 0), 0);
	cr_assert_eq(flame__add_stack(t, d, 2, 1, 0), 0);
	cr_expect_eq(t->nodes[0].count[0], 76);
	cr_expect_eq(t->nr, 7);
	cr_expect_eq(t->nodes[FIND(t, "main")].count[0], 76);
	cr_expect_eq(t->nodes[FIND(t, "main", "compute")].count[0], 65);
	cr_expect_eq(t->nodes[FIND(t, "main", "compute", "hash")].count[0], 45);
	cr_expect_eq(t->nodes[FIND(t, "main", "compute", "sort")].count[0], 20);
	cr_expect_eq(t->max_depth, 3);
	check_sums(t, 0, 0);
	flame__free(t);
}

Test(flamegraph, merge_keeps_samples)
{
	struct flame_tree *t = flame__new(false);
	char name[32], leaf[32];
	size_t before, after;

	cr_assert(t);
	/* 1000 frames of 1 sample under "many" (each with a callee), one of 100000 */
	for (int i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "f%04d", i);
		snprintf(leaf, sizeof(leaf), "g%04d", i);
		cr_assert_eq(flame__add_stack(t, (struct flame_frame[]){ F("many"), F(name), F(leaf) },
					      3, 1, 0), 0);
	}
	cr_assert_eq(flame__add_stack(t, (struct flame_frame[]){ F("big"), F("wide") }, 2, 100000, 0), 0);
	before = t->nr;
	/* 1/12000 of 101000 is 8.4 samples: every f, g merged; "many" (1000) stays */
	cr_assert_eq(flame__merge_narrow(t, FLAME_MIN_PX / FLAME_WIDTH_PX), 0);
	after = check_sums(t, 0, 0);
	cr_expect_eq(after, t->nr);
	cr_expect_eq(t->merged_frames, 2000);
	cr_expect_eq(t->merged_samples[0], 1000);
	cr_expect_eq(before - t->merged_frames + 1, t->nr, "one [N merged] frame replaces them");
	cr_assert(FIND(t, "many", "[1000 merged]") >= 0);
	cr_expect_eq(t->nodes[FIND(t, "many", "[1000 merged]")].count[0], 1000);
	cr_expect_eq(t->nodes[FIND(t, "many", "[1000 merged]")].kind, FLAME_MERGED);
	cr_expect_eq(t->nodes[FIND(t, "big", "wide")].count[0], 100000);
	cr_expect_eq(t->nodes[0].count[0], 101000);
	/* preorder: a frame's subtree follows it */
	for (size_t i = 1; i < t->nr; i++)
		cr_expect(t->nodes[i].parent < i);
	flame__free(t);
}

Test(flamegraph, kinds)
{
	cr_expect_eq(flame__kind("[kernel.kallsyms]", true), FLAME_KERNEL);
	cr_expect_eq(flame__kind("/usr/lib/libc.so.6", false), FLAME_USER);
	cr_expect_eq(flame__kind("//anon", false), FLAME_JIT);
	cr_expect_eq(flame__kind("/memfd:jit (deleted)", false), FLAME_JIT);
	cr_expect_eq(flame__kind("/tmp/perf-1234.map", false), FLAME_JIT);
	cr_expect_eq(flame__kind("[JIT] perf-1234.map", false), FLAME_JIT);
	cr_expect_eq(flame__kind(NULL, false), FLAME_USER);
	cr_expect_str_eq(flame__kind_name(FLAME_INLINED), "inlined");
}

static struct profile *kernel_profile(bool stacks)
{
	const u64 K = 0xffffffff81000000ull;
	struct profile *p = profile__new();

	cr_assert(p);
	cr_assert_eq(profile__add_comm(p, 7, 0, "proc", false), 0);
	cr_assert_eq(profile__add_ksym(p, K, "k_leaf"), 0);
	cr_assert_eq(profile__add_ksym(p, K + 0x1000, "k_mid"), 0);
	cr_assert_eq(profile__add_ksym(p, K + 0x2000, "k_entry"), 0);
	cr_assert_eq(profile__add_ksym(p, K + 0x3000, "k_end"), 0);
	if (stacks) {
		s64 a = profile__add_stack(p, (u64[]){ K + 0x10, K + 0x1010, K + 0x2010 }, 3, 0, 0);
		s64 b = profile__add_stack(p, (u64[]){ K + 0x1020, K + 0x2010 }, 2, 0, 0);
		s64 lost = profile__add_stack(p, NULL, 0, PROFILE_STACK_LOST, 0);

		cr_assert(a >= 0 && b >= 0 && lost >= 0);
		cr_assert_eq(profile__add_stack_sample(p, &(struct profile_stack_sample){
			.pid = 7, .flags = HSBPF_KEY_KERNEL, .kernel = a + 1, .count = 6 }), 0);
		cr_assert_eq(profile__add_stack_sample(p, &(struct profile_stack_sample){
			.pid = 7, .flags = HSBPF_KEY_KERNEL, .kernel = b + 1, .count = 3 }), 0);
		cr_assert_eq(profile__add_stack_sample(p, &(struct profile_stack_sample){
			.pid = 7, .user = lost + 1, .count = 1 }), 0);
	}
	cr_assert_eq(profile__add_sample(p, &(struct profile_sample){ .pid = 7,
		.flags = HSBPF_KEY_KERNEL, .ip = K + 0x10, .count = 6 }), 0);
	cr_assert_eq(profile__add_sample(p, &(struct profile_sample){ .pid = 7,
		.flags = HSBPF_KEY_KERNEL, .ip = K + 0x1020, .count = 4 }), 0);
	profile__finish(p);
	return p;
}

Test(flamegraph, tree_from_profile)
{
	struct profile *p = kernel_profile(true);
	struct symbolizer *sy = symbolizer__new(p);
	struct flame_tree *t = flame__new(false);
	s64 n;

	cr_assert(sy && t);
	cr_assert_eq(flame__add_profile(t, p, sy, 0), 0);
	cr_expect_eq(t->nodes[0].count[0], 10);
	n = FIND(t, "proc", "k_entry", "k_mid", "k_leaf");
	cr_assert(n >= 0);
	cr_expect_eq(t->nodes[n].count[0], 6);
	cr_expect_eq(t->nodes[n].kind, FLAME_KERNEL);
	cr_expect_eq(t->nodes[FIND(t, "proc", "k_entry", "k_mid")].count[0], 9);
	cr_expect_eq(t->nodes[FIND(t, "proc", "[no stack]")].count[0], 1);
	cr_expect_eq(t->lost_stacks[0], 1);
	cr_expect_eq(t->lost_stacks[1], 0);
	flame__free(t);
	symbolizer__free(sy);
	profile__free(p);
}

/* an off-CPU stack's frames are drawn apart from the same code on the CPU (--wall), in their
 * own colours; the page says its widths are time */
Test(flamegraph, off_cpu_frames_are_their_own_kind)
{
	struct profile *p = kernel_profile(true);
	struct symbolizer *sy = symbolizer__new(p);
	struct flame_tree *t = flame__new(false);
	struct flame_opts o = { .title = "wall" };
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	s64 on, off;

	cr_assert(sy && t);
	/* the second stack (k_mid under k_entry, 3 samples) was blocked */
	for (size_t i = 0; i < p->nr_stack_samples; i++)
		if (p->stack_samples[i].count == 3)
			p->stack_samples[i].flags |= HSBPF_KEY_OFFCPU | HSBPF_OFFCPU_S << HSBPF_KEY_STATE_SHIFT;
	cr_assert_eq(flame__add_profile(t, p, sy, 0), 0);
	cr_expect_eq(t->nodes[0].count[0], 10);
	/* k_mid twice, of each kind: the off-CPU one a tower of its own */
	on = off = -1;
	for (size_t i = 0; i < t->nr; i++) {
		if (strcmp(t->strs[t->nodes[i].name], "k_mid"))
			continue;
		if (t->nodes[i].kind == FLAME_OFFCPU)
			off = i;
		else if (t->nodes[i].kind == FLAME_KERNEL)
			on = i;
	}
	cr_assert(on >= 0 && off >= 0, "k_mid on and off the CPU");
	cr_expect_eq(t->nodes[on].count[0], 6, "the on-CPU k_mid alone");
	cr_expect_eq(t->nodes[off].count[0], 3);
	cr_expect_str_eq(flame__kind_name(FLAME_OFFCPU), "offcpu");
	t->time = true;
	f = open_memstream(&buf, &len);
	cr_assert(f);
	cr_assert_eq(flame__write_svg(t, &o, f), 0);
	fclose(f);
	cr_expect(strstr(buf, "off-CPU (indigo); widths are microseconds of time"), "%s", buf);
	free(buf);
	flame__free(t);
	symbolizer__free(sy);
	profile__free(p);
}

Test(flamegraph, tree_without_stacks)
{
	struct profile *p = kernel_profile(false);
	struct symbolizer *sy = symbolizer__new(p);
	struct flame_tree *t = flame__new(false);

	cr_assert(sy && t);
	cr_assert_eq(flame__add_profile(t, p, sy, 0), 0);
	cr_expect_eq(t->nodes[0].count[0], 10);
	cr_expect_eq(t->nodes[FIND(t, "[kernel.kallsyms]")].kind, FLAME_OBJECT);
	cr_expect_eq(t->nodes[FIND(t, "[kernel.kallsyms]", "k_leaf")].count[0], 6);
	cr_expect_eq(t->nodes[FIND(t, "[kernel.kallsyms]", "k_mid")].count[0], 4);
	flame__free(t);
	symbolizer__free(sy);
	profile__free(p);
}

Test(flamegraph, diff_colours_only_significant)
{
	struct flame_tree *t = flame__new(true);
	s64 h, s;

	cr_assert(t);
	cr_assert_eq(flame__add_stack(t, (struct flame_frame[]){ F("main"), F("hash") }, 2, 100, 0), 0);
	cr_assert_eq(flame__add_stack(t, (struct flame_frame[]){ F("main"), F("sort") }, 2, 10, 0), 0);
	cr_assert_eq(flame__add_stack(t, (struct flame_frame[]){ F("main"), F("rest") }, 2, 890, 0), 0);
	cr_assert_eq(flame__add_stack(t, (struct flame_frame[]){ F("main"), F("hash") }, 2, 150, 1), 0);
	cr_assert_eq(flame__add_stack(t, (struct flame_frame[]){ F("main"), F("sort") }, 2, 12, 1), 0);
	cr_assert_eq(flame__add_stack(t, (struct flame_frame[]){ F("main"), F("rest") }, 2, 838, 1), 0);
	cr_assert_eq(flame__diff(t, &(struct diff_basis){ .compare = DIFF_SHARES }), 0);
	h = FIND(t, "main", "hash");
	s = FIND(t, "main", "sort");
	cr_expect(t->nodes[h].change > 0 && t->nodes[h].delta > 0);
	cr_expect(!t->nodes[s].change);
	cr_expect(!t->nodes[FIND(t, "main")].change, "100% in both");
	flame__free(t);
}

Test(flamegraph, page_data_cannot_close_the_script)
{
	struct flame_tree *t = flame__new(false);
	struct flame_opts o = { .title = "</script><script>alert(1)</script>" };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	cr_assert(t && f);
	cr_assert_eq(flame__add_stack(t, (struct flame_frame[]){ F("a</script>b\"\\") }, 1, 3, 0), 0);
	cr_assert_eq(flame__write_html(t, &o, f), 0);
	fclose(f);
	/* the page's own two scripts close, nothing else */
	size_t closes = 0;
	for (const char *s = buf; (s = strstr(s, "</script>")); s++)
		closes++;
	cr_expect_eq(closes, 2);
	cr_expect(strstr(buf, "a\\u003c/script\\u003eb\\\"\\\\"));
	cr_expect(!strstr(buf, "@@DATA@@"));
	cr_expect(!strstr(buf, "http://") && !strstr(buf, "https://"), "nothing from the network");
	free(buf);
	flame__free(t);
}

/* ---- the command on bad input ---- */

static const char *fixtures_dir(void)
{
	static char dir[4096];
	struct run_result r;

	snprintf(dir, sizeof(dir), "%s", tmpdir());
	cr_assert_eq(run(&r, "%s %s", env_path("OUTPUT", ".output", "tests/flame-fixtures"), dir), 0);
	cr_assert_eq(r.status, 0, "%s", r.err);
	return dir;
}

Test(flamegraph, bad_input)
{
	const char *d = fixtures_dir(), *h = hsbpf_bin();
	struct run_result r;

	run(&r, "%s flamegraph -i %s/missing.data -o %s/x.html", h, d, d);
	cr_expect_eq(r.status, 1);
	cr_expect(strstr(r.err, "cannot open"), "%s", r.err);
	run(&r, "head -c 700 %s/base.data > %s/cut.data; %s flamegraph -i %s/cut.data -o %s/x.html",
	    d, d, h, d, d);
	cr_expect_eq(r.status, 1);
	cr_expect(r.err[0] && !strstr(r.err, "Sanitizer"), "%s", r.err);
	run(&r, "%s flamegraph -i %s/empty.data -o %s/x.html", h, d, d);
	cr_expect_eq(r.status, 1);
	cr_expect(strstr(r.err, "has no samples"), "%s", r.err);
	run(&r, "%s flamegraph -i %s/base.data -o %s/no/such/dir/x.html", h, d, d);
	cr_expect_eq(r.status, 1);
	cr_expect(strstr(r.err, "cannot create") && strstr(r.err, "No such file or directory"), "%s", r.err);
	run(&r, "ls %s/x.html %s/*.tmp", d, d);
	cr_expect_neq(r.status, 0, "no output left by the failures: %s", r.out);
	run(&r, "%s flamegraph --diff %s/base.data %s/other-event.data -o %s/x.html", h, d, d, d);
	cr_expect_eq(r.status, 1);
	cr_expect(strstr(r.err, "different events"), "%s", r.err);
	run(&r, "%s flamegraph --diff %s/base.data %s/other-event.data --force -o %s/x.html", h, d, d, d);
	cr_expect_eq(r.status, 0, "%s", r.err);
	run(&r, "%s flamegraph --diff %s/base.data", h, d);
	cr_expect_eq(r.status, 2);
	run(&r, "%s diff %s/base.data %s/other-event.data", h, d, d);
	cr_expect_eq(r.status, 1);
	cr_expect(strstr(r.err, "different events"), "%s", r.err);
	run(&r, "%s diff %s/base.data %s/empty.data", h, d, d);
	cr_expect_eq(r.status, 1);
	cr_expect(strstr(r.err, "has no samples"), "%s", r.err);
	run(&r, "%s diff %s/base.data", h, d);
	cr_expect_eq(r.status, 2);
}

Test(flamegraph, diff_table)
{
	const char *d = fixtures_dir();
	struct run_result r;

	run(&r, "%s diff --compare shares %s/base.data %s/new.data", hsbpf_bin(), d, d);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "40.00%    25.00%   -15.00%"), "%s", r.out);
	cr_expect(strstr(r.out, "30.00%    44.00%   +14.00%"), "%s", r.out);
	cr_expect(strstr(r.out, "* fg_hash"), "%s", r.out);
	cr_expect(!strstr(r.out, "fg_sort"), "not significant: hidden without --all\n%s", r.out);
	cr_expect(strstr(r.out, "Benjamini-Hochberg"), "%s", r.out);
	run(&r, "%s diff --compare shares --all %s/base.data %s/new.data", hsbpf_bin(), d, d);
	cr_expect(strstr(r.out, "20.00%    21.00%    +1.00%") && !strstr(r.out, "* fg_sort"), "%s", r.out);
}

Test(flamegraph, svg)
{
	const char *d = fixtures_dir();
	struct run_result r;

	run(&r, "%s flamegraph -i %s/base.data -o %s/g.svg && grep -c '<rect' %s/g.svg && "
	    "grep -A1 '<title>fg_hash ' %s/g.svg", hsbpf_bin(), d, d, d, d);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "12\n"), "11 frames and the background: %s", r.out);
	cr_expect(strstr(r.out, "400 samples, 40.00% (95% CI \u00b13.03%)"), "%s", r.out);
}

/* the pages in a real browser: every kind, through the page's own controls */
Test(flamegraph, browser, .timeout = 300)
{
	char root[4096], cmd[8192];
	struct run_result r;

	snprintf(root, sizeof(root), "%s", env_path("OUTPUT", ".output", ""));
	snprintf(cmd, sizeof(cmd), "%s", dirname(root));	/* the checkout holds OUTPUT */
	run(&r, "cd %s/tests/browser && node flamegraph.test.mjs %s %s %s/work %s", cmd, hsbpf_bin(),
	    env_path("OUTPUT", ".output", "tests/flame-fixtures"), tmpdir(),
	    env_path("OUTPUT", ".output", "flamegraph-shots"));
	cr_expect_eq(r.status, 0, "%s\n%s", r.out, r.err);
}

/* two processes, each with kernel stacks of its own functions: proc_a (pid 7) a_leaf under
 * a_entry, a samples; proc_b (pid 8) b_leaf (b samples) and b_other (10) under b_entry */
static void two_process_profile(const char *name, u64 a, u64 b)
{
	char path[600];
	const u64 K = 0xffffffff81000000ull;
	struct profile *p = profile__new();
	const char *names[] = { "a_leaf", "a_entry", "b_leaf", "b_other", "b_entry", "k_end" };
	const struct { u32 pid; u64 leaf, count; } st[] = {
		{ 7, K, a }, { 8, K + 0x2000, b }, { 8, K + 0x3000, 10 },
	};

	cr_assert(p);
	snprintf(path, sizeof(path), "%s/%s", tmpdir(), name);
	strcpy(p->meta.event, "cpu-clock");
	strcpy(p->meta.unit, "ns");
	p->meta.duration_ns = 1000000000;
	cr_assert_eq(profile__add_comm(p, 7, 0, "proc_a", false), 0);
	cr_assert_eq(profile__add_comm(p, 8, 0, "proc_b", false), 0);
	for (int i = 0; i < 6; i++)
		cr_assert_eq(profile__add_ksym(p, K + 0x1000 * i, names[i]), 0);
	for (int i = 0; i < 3; i++) {
		u64 entry = st[i].pid == 7 ? K + 0x1010 : K + 0x4010;
		s64 s = profile__add_stack(p, (u64[]){ st[i].leaf + 0x10, entry }, 2, 0, 0);

		cr_assert_geq(s, 0);
		cr_assert_eq(profile__add_stack_sample(p, &(struct profile_stack_sample){
			.pid = st[i].pid, .flags = HSBPF_KEY_KERNEL, .kernel = s + 1,
			.count = st[i].count, .weight = st[i].count }), 0);
		cr_assert_eq(profile__add_sample(p, &(struct profile_sample){ .pid = st[i].pid,
			.flags = HSBPF_KEY_KERNEL, .ip = st[i].leaf + 0x10, .count = st[i].count,
			.weight = st[i].count }), 0);
	}
	profile__finish(p);
	cr_assert_eq(profile__write(p, path), 0);
	profile__free(p);
}

/* report's filters on flamegraph: one process of a whole-machine profile drawn, only its
 * frames, with its samples; a filter that leaves nothing is said */
Test(flamegraph, filters_draw_one_process)
{
	const char *h = hsbpf_bin(), *d = tmpdir();
	struct run_result r;

	two_process_profile("two.data", 30, 10);
	for (int i = 0; i < 2; i++) {
		run(&r, "%s flamegraph -i %s/two.data -o %s/one.svg %s && cat %s/one.svg", h, d, d,
		    i ? "--comm proc_b" : "--pid 8", d);
		cr_assert_eq(r.status, 0, "%s", r.err);
		cr_expect(strstr(r.out, "<title>b_leaf "), "%s", r.out);
		cr_expect(strstr(r.out, "<title>b_entry ([kernel.kallsyms])\n20 samples, 100.00%"), "%s", r.out);
		cr_expect_null(strstr(r.out, "a_leaf"), "%s", r.out);
		cr_expect_null(strstr(r.out, "a_entry"), "%s", r.out);
	}
	run(&r, "%s flamegraph -i %s/two.data -o %s/one.svg --symbols a_leaf && cat %s/one.svg",
	    h, d, d, d);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "<title>a_entry ([kernel.kallsyms])\n30 samples, 100.00%"), "%s", r.out);
	cr_expect_null(strstr(r.out, "b_leaf"), "%s", r.out);
	run(&r, "%s flamegraph -i %s/two.data -o %s/none.svg --pid 9", h, d, d);
	cr_expect_eq(r.status, 1);
	cr_expect(strstr(r.err, "the filters leave no samples of"), "%s", r.err);
}

/* and on diff, applied to both profiles: pid 8's b_leaf goes from 50% to 75% of its process
 * (30 -> 10 of proc_a's samples would hide it in the whole) */
Test(flamegraph, diff_filters_apply_to_both_profiles)
{
	const char *h = hsbpf_bin(), *d = tmpdir();
	struct run_result r;

	two_process_profile("base.data", 30, 10);
	two_process_profile("new.data", 10, 30);
	run(&r, "%s diff --compare shares --all --pid 8 %s/base.data %s/new.data", h, d, d);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "50.00%    75.00%   +25.00%"), "%s", r.out);
	cr_expect(strstr(r.out, "b_leaf"), "%s", r.out);
	cr_expect(strstr(r.out, "50.00%    25.00%   -25.00%"), "%s", r.out);
	cr_expect_null(strstr(r.out, "a_leaf"), "%s", r.out);
	run(&r, "%s diff --compare shares --all %s/base.data %s/new.data", h, d, d);
	cr_expect(strstr(r.out, "a_leaf"), "%s", r.out);
	run(&r, "%s flamegraph --diff %s/base.data %s/new.data -o %s/d.svg --comm proc_b && "
	    "cat %s/d.svg", h, d, d, d, d);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "b_leaf"), "%s", r.out);
	cr_expect_null(strstr(r.out, "a_leaf"), "%s", r.out);
}
