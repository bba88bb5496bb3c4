// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* callchain and the profile's stacks: a profile made by hand whose kernel stacks have names
 * (its own kernel symbols), so that every answer is known: how stacks ended, folded lines,
 * children, trees in both orders; the stacks written and read back; a profile of format 1.2,
 * committed, still read. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report/callchain.h"
#include "helpers.h"
#include "report/hist.h"
#include "hsbpf.h"
#include "profile/profile.h"
#include "symbols/symbolizer.h"

TestSuite(callchain, .fini = cleanup_tmpdir);

#define K 0xffffffff81000000ull
enum { K_LEAF = 0x100, K_MID_A = 0x1100, K_MID_B = 0x2100, K_ENTRY = 0x3100, K_END = 0x4000 };

static s64 kstack(struct profile *p, const u64 *rel, u32 nr)
{
	u64 ips[8];

	for (u32 i = 0; i < nr; i++)
		ips[i] = K + rel[i];
	return profile__add_stack(p, ips, nr, 0, 0);
}

/* leaf <- mid_a <- entry: 3 samples; leaf <- mid_b <- entry: 1; a user stack cut by depth:
 * 1; a lost user stack: 2 */
static struct profile *made_profile(void)
{
	struct profile *p = profile__new();
	s64 a, b, deep, lost;
	u64 user[3] = { 0x401000, 0x401100, 0x401200 };

	cr_assert(p);
	cr_assert_eq(profile__add_comm(p, 7, 0, "proc", false), 0);
	cr_assert_eq(profile__add_ksym(p, K, "k_start"), 0);
	cr_assert_eq(profile__add_ksym(p, K + 0x80, "k_leaf"), 0);
	cr_assert_eq(profile__add_ksym(p, K + 0x1000, "k_mid_a"), 0);
	cr_assert_eq(profile__add_ksym(p, K + 0x2000, "k_mid_b"), 0);
	cr_assert_eq(profile__add_ksym(p, K + 0x3000, "k_entry"), 0);
	cr_assert_eq(profile__add_ksym(p, K + K_END, ""), 0);
	a = kstack(p, (u64[]){ K_LEAF, K_MID_A + 5, K_ENTRY + 5 }, 3);
	b = kstack(p, (u64[]){ K_LEAF + 4, K_MID_B + 5, K_ENTRY + 5 }, 3);
	deep = profile__add_stack(p, user, 3, HSBPF_STACK_DEPTH, 0);
	lost = profile__add_stack(p, NULL, 0, PROFILE_STACK_LOST, 0);
	cr_assert(a >= 0 && b >= 0 && deep >= 0 && lost >= 0);
	struct profile_stack_sample ss[] = {
		{ .pid = 7, .flags = HSBPF_KEY_KERNEL, .kernel = a + 1, .count = 3, .weight = 30 },
		{ .pid = 7, .flags = HSBPF_KEY_KERNEL, .kernel = b + 1, .count = 1, .weight = 10 },
		{ .pid = 7, .user = deep + 1, .count = 1, .weight = 10 },
		{ .pid = 7, .user = lost + 1, .count = 2, .weight = 20 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(ss); i++)
		cr_assert_eq(profile__add_stack_sample(p, &ss[i]), 0);
	/* the flat histogram of the same samples */
	cr_assert_eq(profile__add_sample(p, &(struct profile_sample){ .pid = 7, .flags = HSBPF_KEY_KERNEL,
			.ip = K + K_LEAF, .count = 3, .weight = 30 }), 0);
	cr_assert_eq(profile__add_sample(p, &(struct profile_sample){ .pid = 7, .flags = HSBPF_KEY_KERNEL,
			.ip = K + K_LEAF + 4, .count = 1, .weight = 10 }), 0);
	cr_assert_eq(profile__add_sample(p, &(struct profile_sample){ .pid = 7, .ip = 0x401000,
			.count = 3, .weight = 30 }), 0);
	snprintf(p->meta.call_graph, sizeof(p->meta.call_graph), "dwarf");
	profile__finish(p);
	return p;
}

/* what fn prints, in a malloc'd string */
#define CAPTURE(buf, out, stmt)							\
	do {									\
		size_t _len;							\
		FILE *out = open_memstream(&(buf), &_len);			\
		cr_assert(out);							\
		stmt;								\
		fclose(out);							\
	} while (0)

Test(callchain, ends_are_counted_by_reason)
{
	struct profile *p = made_profile();
	struct callchain_ends e;
	char *text = NULL;

	callchain__ends(p, &e);
	cr_expect_eq(e.samples, 7);
	cr_expect_eq(e.by_end[HSBPF_STACK_NO_USER], 4);
	cr_expect_eq(e.by_end[HSBPF_STACK_DEPTH], 1);
	cr_expect_eq(e.lost, 2);
	CAPTURE(text, out, callchain__print_ends(p, "# ", out));
	cr_expect(strstr(text, "7 samples, 3 with a user stack: complete 0.0%; truncated: depth 33.3%, "
			 "stack map full 66.7%"), "%s", text);
	free(text);
	profile__free(p);
}

/* report's time view of off-CPU time counts microseconds: the line says time, not samples */
Test(callchain, ends_of_off_cpu_time_are_in_ms)
{
	struct profile *p = made_profile();
	char *text = NULL;

	snprintf(p->meta.offcpu, sizeof(p->meta.offcpu), "off");
	CAPTURE(text, out, callchain__print_ends(p, "# ", out));
	cr_expect(strstr(text, "# stacks (dwarf): 0.007 ms, 0.003 ms with a user stack: complete 0.0%"),
		  "%s", text);
	cr_expect(!strstr(text, "samples"), "%s", text);
	free(text);
	profile__free(p);
}

/* a memory view counts bytes or objects: the line says which, not samples */
Test(callchain, ends_of_sampled_allocations_are_in_bytes_or_objects)
{
	struct profile *p = made_profile();
	char *text = NULL;

	p->meta.alloc_period = 512 * 1024;
	snprintf(p->meta.memory_view, sizeof(p->meta.memory_view), "alloc_space");
	CAPTURE(text, out, callchain__print_ends(p, "# ", out));
	cr_expect(strstr(text, "# stacks (dwarf): 7 B, 3 B with a user stack"), "%s", text);
	cr_expect(!strstr(text, "samples"), "%s", text);
	free(text);
	snprintf(p->meta.memory_view, sizeof(p->meta.memory_view), "inuse_objects");
	CAPTURE(text, out, callchain__print_ends(p, "# ", out));
	cr_expect(strstr(text, "# stacks (dwarf): 7 objects, 3 objects with a user stack"), "%s", text);
	free(text);
	profile__free(p);
}

/* samples in an exec have no user stack yet: counted apart, not as truncated stacks */
Test(callchain, samples_in_exec_are_not_truncation)
{
	struct profile *p = made_profile();
	s64 ex = profile__add_stack(p, NULL, 0, HSBPF_STACK_IN_EXEC, 0);
	struct callchain_ends e;
	char *text = NULL;

	cr_assert_geq(ex, 0);
	cr_assert_eq(profile__add_stack_sample(p, &(struct profile_stack_sample){ .pid = 7, .user = ex + 1,
			.count = 5, .weight = 50 }), 0);
	callchain__ends(p, &e);
	cr_expect_eq(e.by_end[HSBPF_STACK_IN_EXEC], 5);
	CAPTURE(text, out, callchain__print_ends(p, "# ", out));
	cr_expect(strstr(text, "12 samples (5 in exec, no user stack yet), 3 with a user stack: complete 0.0%; "
			 "truncated: depth 33.3%, stack map full 66.7%"), "%s", text);
	free(text);
	profile__free(p);
}

Test(callchain, folded_stacks_are_root_first_and_merged)
{
	struct profile *p = made_profile();
	struct symbolizer *sy = symbolizer__new(p);
	struct callchain *cc = callchain__new(p, sy);
	char *text = NULL;

	cr_assert(cc);
	cr_expect_eq(cc->total, 7);
	CAPTURE(text, out, cr_assert_eq(callchain__print_folded(cc, out), 0));
	cr_expect(strstr(text, "proc;k_entry_[k];k_mid_a_[k];k_leaf_[k] 3\n"), "%s", text);
	cr_expect(strstr(text, "proc;k_entry_[k];k_mid_b_[k];k_leaf_[k] 1\n"), "%s", text);
	/* unknown user frames keep their object; the lost stack is the comm alone */
	cr_expect(strstr(text, "proc;[unknown] ([unknown]);[unknown] ([unknown]);[unknown] ([unknown]) 1\n"),
		  "%s", text);
	cr_expect(strstr(text, "proc 2\n"), "%s", text);
	free(text);
	callchain__free(cc);
	symbolizer__free(sy);
	profile__free(p);
}

/* record --wakers: a block of proc (pid 7) woken by thread 9 of waker (pid 8) from k_mid_b,
 * and one by an interrupt (pid 0, no user stack); a block with none stays as it was */
static struct profile *woken_profile(void)
{
	struct profile *p = made_profile();
	s64 wk = kstack(p, (u64[]){ K_MID_B + 5, K_ENTRY + 5 }, 2);
	struct profile_stack_sample ss = {
		.pid = 7, .flags = HSBPF_KEY_KERNEL | HSBPF_KEY_OFFCPU, .kernel = 1, .count = 5,
		.weight = 5000,
	};

	cr_assert(wk >= 0);
	cr_assert_eq(profile__add_comm(p, 8, 0, "waker", false), 0);
	cr_assert_eq(profile__add_stack_sample_waker(p, &ss, &(struct profile_sample_key){ .waker = 9 },
						     &(struct profile_waker){ .pid = 8, .kernel = wk + 1 }), 0);
	ss.count = 2;
	cr_assert_eq(profile__add_stack_sample_waker(p, &ss, &(struct profile_sample_key){},
						     &(struct profile_waker){ .kernel = wk + 1 }), 0);
	profile__finish(p);
	return p;
}

Test(callchain, a_waker_is_folded_above_the_block_as_offwaketime)
{
	struct profile *p = woken_profile(), *q;
	struct symbolizer *sy = symbolizer__new(p);
	struct callchain *cc = callchain__new(p, sy);
	char *text = NULL, path[512];

	cr_assert(cc);
	CAPTURE(text, out, cr_assert_eq(callchain__print_folded(cc, out), 0));
	cr_expect(strstr(text, "proc;k_entry_[k];k_mid_a_[k];k_leaf_[k];--;k_mid_b_[k];k_entry_[k];waker 5\n"),
		  "%s", text);
	cr_expect(strstr(text, "proc;k_entry_[k];k_mid_a_[k];k_leaf_[k];--;k_mid_b_[k];k_entry_[k];[irq] 2\n"),
		  "%s", text);
	cr_expect(strstr(text, "proc;k_entry_[k];k_mid_a_[k];k_leaf_[k] 3\n"), "no waker: as before: %s", text);
	cr_expect_eq(profile__stack_sample_waker(p, 0), NULL);
	free(text);
	callchain__free(cc);
	symbolizer__free(sy);
	/* written and read back; a waker's stack past the table is refused */
	snprintf(path, sizeof(path), "%s/w.data", tmpdir());
	cr_assert_eq(profile__write(p, path), 0);
	cr_assert_eq(profile__read(path, &q), 0);
	cr_assert_eq(q->nr_stack_sample_wakers, q->nr_stack_samples);
	cr_expect_eq(memcmp(q->stack_sample_wakers, p->stack_sample_wakers,
			    p->nr_stack_samples * sizeof(*p->stack_sample_wakers)), 0);
	cr_expect_eq(profile__stack_sample_key(q, 4)->waker, 9);
	cr_expect_str_eq(profile__tid_name(q, 9), "waker", "a thread never renamed: its process's name");
	profile__free(q);
	p->stack_sample_wakers[4].kernel = 99;
	cr_assert_eq(profile__write(p, path), 0);
	cr_expect_eq(profile__read(path, &q), -EINVAL);
	profile__free(p);
}

Test(callchain, children_count_each_stack_once_and_trees_branch_by_share)
{
	struct profile *p = made_profile();
	struct symbolizer *sy = symbolizer__new(p);
	struct callchain *cc = callchain__new(p, sy);
	struct hist *h = hist__new((enum sort_key[]){ SORT_SYM }, 1);
	struct callchain_print_opts o = { .order = CALLCHAIN_CALLEE, .children = true, .indent = 2 };
	size_t leaf = SIZE_MAX, entry = SIZE_MAX;
	char *text = NULL;

	cr_assert(cc && h);
	cr_assert_eq(hist__add_profile(h, p, sy), 0);
	h->children = true;
	cr_assert_eq(callchain__attach(cc, h, sy, true), 0);
	hist__sort(h);
	for (size_t i = 0; i < h->nr_rows; i++) {
		if (!strcmp(h->rows[i].sym, "k_leaf"))
			leaf = i;
		if (!strcmp(h->rows[i].sym, "k_entry"))
			entry = i;
	}
	cr_assert(leaf != SIZE_MAX && entry != SIZE_MAX);
	cr_expect_eq(h->rows[leaf].children, 4);
	cr_expect_eq(h->rows[leaf].count, 4, "self from the flat histogram");
	cr_expect_eq(h->rows[entry].children, 4);
	cr_expect_eq(h->rows[entry].count, 0);
	/* callee order: from the row up to its callers, branching 3:1 */
	CAPTURE(text, out, callchain__print_tree(cc, h, leaf, &o, out));
	cr_expect(strstr(text, "  ---k_leaf\n     |--42.86%--k_mid_a\n     |          k_entry\n     |\n"
			 "      --14.29%--k_mid_b\n                k_entry\n"), "%s", text);
	free(text);
	/* caller order with children: from the row down to what it calls */
	o.order = CALLCHAIN_CALLER;
	CAPTURE(text, out, callchain__print_tree(cc, h, entry, &o, out));
	cr_expect(strstr(text, "  ---k_entry\n     |--42.86%--k_mid_a\n     |          k_leaf\n"), "%s", text);
	free(text);
	/* a branch under the limit is not shown */
	o.percent_limit = 20;
	CAPTURE(text, out, callchain__print_tree(cc, h, entry, &o, out));
	cr_expect(!strstr(text, "k_mid_b"), "%s", text);
	free(text);
	hist__free(h);
	callchain__free(cc);
	symbolizer__free(sy);
	profile__free(p);
}

/* an address's frames are resolved once (k_entry's return address is in both kernel stacks)
 * and fall in one row: the rows a symbol key finds through that (hist__keyed_by_frame) are
 * those a key of the process and the symbol finds frame by frame */
Test(callchain, an_address_is_resolved_once_and_its_copies_share_its_row)
{
	struct profile *p = made_profile();
	struct symbolizer *sy = symbolizer__new(p);
	struct callchain *cc = callchain__new(p, sy);
	struct hist *by_sym = hist__new((enum sort_key[]){ SORT_SYM }, 1);
	struct hist *by_pid = hist__new((enum sort_key[]){ SORT_PID, SORT_SYM }, 2);
	const struct callchain_frame *f;

	cr_assert(cc && by_sym && by_pid);
	/* 5 kernel addresses of 6 frames, 3 user ones */
	cr_expect_eq(cc->nr_frames, 9);
	cr_expect_eq(cc->nr_src, 8);
	cr_expect_eq(cc->nr_res, 8);
	f = cc->frames;
	cr_expect_eq(f[2].src, f[5].src, "k_entry+5 in both kernel stacks: one frame");
	cr_expect_eq(f[2].res, f[5].res);
	cr_expect_str_eq(cc->res[f[5].res].sym, "k_entry");
	cr_expect_neq(f[0].src, f[3].src, "k_leaf and k_leaf+4: two addresses");
	cr_expect(hist__keyed_by_frame(by_sym));
	cr_expect(!hist__keyed_by_frame(by_pid));
	cr_assert_eq(callchain__attach(cc, by_sym, sy, true), 0);
	cr_assert_eq(callchain__attach(cc, by_pid, sy, true), 0);
	cr_assert_eq(by_sym->nr_rows, by_pid->nr_rows, "one process: the same rows");
	for (size_t i = 0; i < by_sym->nr_rows; i++) {
		const struct hist_row *a = &by_sym->rows[i], *b = &by_pid->rows[i];

		cr_expect_str_eq(a->sym, b->sym);
		cr_expect_eq(a->children, b->children, "%s", a->sym);
		cr_expect_eq(a->many_pids, b->many_pids, "%s", a->sym);
	}
	for (size_t i = 0; i < cc->nr_frames; i++)
		cr_expect_str_eq(by_sym->rows[cc->frames[i].row].sym, cc->frames[i].sym);
	hist__free(by_sym);
	hist__free(by_pid);
	callchain__free(cc);
	symbolizer__free(sy);
	profile__free(p);
}

/* perf report -g's other print types on the same rows: fractal shares of the parent, flat
 * and folded chains, most samples first */
Test(callchain, styles_fractal_flat_and_folded)
{
	struct profile *p = made_profile();
	struct symbolizer *sy = symbolizer__new(p);
	struct callchain *cc = callchain__new(p, sy);
	struct hist *h = hist__new((enum sort_key[]){ SORT_SYM }, 1);
	struct callchain_print_opts o = { .order = CALLCHAIN_CALLEE, .children = true, .indent = 2 };
	size_t leaf = SIZE_MAX;
	char *text = NULL;

	cr_assert(cc && h);
	cr_assert_eq(hist__add_profile(h, p, sy), 0);
	h->children = true;
	cr_assert_eq(callchain__attach(cc, h, sy, true), 0);
	hist__sort(h);
	for (size_t i = 0; i < h->nr_rows; i++)
		if (!strcmp(h->rows[i].sym, "k_leaf"))
			leaf = i;
	cr_assert(leaf != SIZE_MAX);
	o.style = CALLCHAIN_FRACTAL;
	CAPTURE(text, out, callchain__print_tree(cc, h, leaf, &o, out));
	cr_expect(strstr(text, "  ---k_leaf\n     |--75.00%--k_mid_a\n     |          k_entry\n     |\n"
			 "      --25.00%--k_mid_b\n                k_entry\n"), "%s", text);
	free(text);
	o.style = CALLCHAIN_FOLDED;
	CAPTURE(text, out, callchain__print_tree(cc, h, leaf, &o, out));
	cr_expect_str_eq(text, "  42.86% k_leaf;k_mid_a;k_entry\n  14.29% k_leaf;k_mid_b;k_entry\n\n");
	free(text);
	o.style = CALLCHAIN_FLAT;
	o.percent_limit = 20;
	CAPTURE(text, out, callchain__print_tree(cc, h, leaf, &o, out));
	cr_expect_str_eq(text, "  42.86%\n      k_leaf\n      k_mid_a\n      k_entry\n\n");
	free(text);
	hist__free(h);
	callchain__free(cc);
	symbolizer__free(sy);
	profile__free(p);
}

/* perf report -g's argument: print type, threshold, order, key and value in any order */
Test(callchain, perf_report_g_arguments)
{
	static const struct {
		const char *arg;
		int err, graph, style, order;
		double threshold;
	} cases[] = {
		{ "none", 0, 0, -1, -1, -1 },
		{ "graph", 0, 1, CALLCHAIN_GRAPH, -1, -1 },
		{ "fractal,0.5,callee", 0, 1, CALLCHAIN_FRACTAL, CALLCHAIN_CALLEE, 0.5 },
		{ "flat", 0, 1, CALLCHAIN_FLAT, -1, -1 },
		{ "folded,caller", 0, 1, CALLCHAIN_FOLDED, CALLCHAIN_CALLER, -1 },
		{ "caller", 0, -1, -1, CALLCHAIN_CALLER, -1 },
		{ "graph,2,10,caller,function,percent", 0, 1, CALLCHAIN_GRAPH, CALLCHAIN_CALLER, 2 },
		{ "graph,address", -EINVAL, 0, 0, 0, 0 },
		{ "period", -EINVAL, 0, 0, 0, 0 },
		{ "tree", -EINVAL, 0, 0, 0, 0 },
		{ "graph,101", -EINVAL, 0, 0, 0, 0 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct callchain_param cp;
		int err = callchain__parse_param(cases[i].arg, &cp);

		cr_expect_eq(err, cases[i].err, "%s: %d", cases[i].arg, err);
		if (err)
			continue;
		cr_expect_eq(cp.graph, cases[i].graph, "%s", cases[i].arg);
		cr_expect_eq(cp.style, cases[i].style, "%s", cases[i].arg);
		cr_expect_eq(cp.order, cases[i].order, "%s", cases[i].arg);
		cr_expect_eq(cp.threshold, cases[i].threshold, "%s", cases[i].arg);
	}
}

Test(callchain, links_are_callers_and_callees_with_their_samples)
{
	struct profile *p = made_profile();
	struct symbolizer *sy = symbolizer__new(p);
	struct callchain *cc = callchain__new(p, sy);
	struct callchain_links l;

	cr_assert(cc);
	cr_assert_eq(callchain__links(cc, "k_leaf", NULL, &l), 0);
	cr_expect_eq(l.total, 4);
	cr_assert_eq(l.nr_callers, 2);
	cr_expect_str_eq(l.callers[0].sym, "k_mid_a");
	cr_expect_eq(l.callers[0].count, 3);
	cr_expect_str_eq(l.callers[1].sym, "k_mid_b");
	cr_expect_eq(l.callers[1].count, 1);
	cr_expect_eq(l.nr_callees, 0);
	callchain__links_free(&l);
	cr_assert_eq(callchain__links(cc, "k_mid_a", NULL, &l), 0);
	cr_expect_eq(l.total, 3);
	cr_assert_eq(l.nr_callers, 1);
	cr_expect_str_eq(l.callers[0].sym, "k_entry");
	cr_assert_eq(l.nr_callees, 1);
	cr_expect_str_eq(l.callees[0].sym, "k_leaf");
	cr_expect_eq(l.callees[0].count, 3);
	callchain__links_free(&l);
	callchain__free(cc);
	symbolizer__free(sy);
	profile__free(p);
}

Test(callchain, stacks_are_written_and_read_back)
{
	struct profile *p = made_profile(), *q;
	char path[512];

	snprintf(path, sizeof(path), "%s/s.data", tmpdir());
	cr_assert_eq(profile__write(p, path), 0);
	cr_assert_eq(profile__read(path, &q), 0);
	cr_assert_eq(q->nr_stacks, p->nr_stacks);
	cr_assert_eq(q->nr_frames, p->nr_frames);
	cr_assert_eq(q->nr_stack_samples, p->nr_stack_samples);
	cr_expect_eq(memcmp(q->frames, p->frames, p->nr_frames * sizeof(*p->frames)), 0);
	cr_expect_eq(memcmp(q->stacks, p->stacks, p->nr_stacks * sizeof(*p->stacks)), 0);
	cr_expect_eq(memcmp(q->stack_samples, p->stack_samples,
			    p->nr_stack_samples * sizeof(*p->stack_samples)), 0);
	cr_expect_str_eq(q->meta.call_graph, "dwarf");
	profile__free(q);
	/* a stack that points past the frames, or a sample past the stacks, is refused */
	p->stacks[0].nr = 1000;
	cr_assert_eq(profile__write(p, path), 0);
	cr_expect_eq(profile__read(path, &q), -EINVAL);
	p->stacks[0].nr = 3;
	p->stack_samples[0].kernel = 99;
	cr_assert_eq(profile__write(p, path), 0);
	cr_expect_eq(profile__read(path, &q), -EINVAL);
	profile__free(p);
}

/* written by hsbpf before stacks (format 1.2): hot7030 at 199 Hz, 209 samples */
Test(callchain, a_profile_of_format_1_2_still_reads)
{
	const char *path = env_path("OUTPUT", ".output", "../tests/fixtures/profiles/v1.2-hot7030.hsbpf");
	struct run_result r;
	struct profile *p;

	cr_assert_eq(profile__read(path, &p), 0);
	cr_expect_eq(profile__total_samples(p), 209);
	cr_expect_eq(p->nr_stack_samples, 0);
	cr_expect_str_eq(p->meta.call_graph, "");
	cr_expect_str_eq(p->meta.event, "cpu-clock");
	profile__free(p);
	/* its binary is not on this machine: the rows are [unknown], the counts the same */
	run(&r, "%s report -i %s", hsbpf_bin(), path);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "(fixed), 209 samples, 0 dropped") && !strstr(r.out, "stacks"), "%s", r.out);
	run(&r, "%s report -i %s --format folded", hsbpf_bin(), path);
	cr_expect_eq(r.status, 1);
	cr_expect(strstr(r.err, "has no call stacks (record with -g)"), "%s", r.err);
}

/* a C++ name of over 1,000 characters comes out whole in folded stacks */
Test(callchain, long_names_are_folded_whole)
{
	char *want, *text = NULL, line[2048];
	struct profile *p = long_name_profile(&want);
	struct symbolizer *sy = symbolizer__new(p);
	struct callchain *cc = callchain__new_flat(p, sy);

	cr_assert(cc);
	CAPTURE(text, out, cr_assert_eq(callchain__print_folded(cc, out), 0));
	snprintf(line, sizeof(line), "jit;%s 3\n", want);
	cr_expect_str_eq(text, line);
	free(text);
	free(want);
	callchain__free(cc);
	symbolizer__free(sy);
	profile__free(p);
}
