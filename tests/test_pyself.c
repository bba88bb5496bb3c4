// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Self for Python code (user/report/pyself.c): a profile made by hand whose evaluation loop
 * and native callee are JIT symbols of the process (so that names need no ELF file) and whose
 * Python frames are named in it; the flat rows report builds, with known answers: the
 * evaluation loop's own samples go to the innermost Python frame of their stacks, a native
 * callee and a kernel leaf keep theirs, interleaved or replaced stacks alike, the thread
 * keys keep samples apart, and no more moves than the flat histogram holds. */
#include <criterion/criterion.h>
#include <string.h>
#include "helpers.h"
#include "hsbpf.h"
#include "profile/profile.h"
#include "report/callchain.h"
#include "report/hist.h"
#include "report/pyself.h"
#include "symbols/symbolizer.h"

TestSuite(pyself);

#define PID	7
#define EVAL	0x10000ull	/* _PyEval_EvalFrameDefault, 0x1000 bytes */
#define CALLEE	0x20000ull	/* long_mul, a C function the Python code called */
#define MAIN	0x30000ull	/* main, the evaluation loop's caller */
#define KSTART	0xffffffff81000000ull

static const u64 seventy = HSBPF_PY_FRAME(0x7f0000001000ull, 4);
static const u64 thirty = HSBPF_PY_FRAME(0x7f0000002000ull, 6);
static const u64 module = HSBPF_PY_FRAME(0x7f0000003000ull, 8) | HSBPF_PY_ENTRY;

static struct profile *base_profile(void)
{
	struct profile *p = profile__new();

	cr_assert(p);
	cr_assert_eq(profile__add_comm(p, PID, 0, "python3", false), 0);
	cr_assert_eq(profile__add_jitsym(p, PID, EVAL, 0x1000, PYSELF_EVAL_LOOP, 1, 0), 0);
	cr_assert_eq(profile__add_jitsym(p, PID, CALLEE, 0x100, "long_mul", 2, 0), 0);
	cr_assert_eq(profile__add_jitsym(p, PID, MAIN, 0x100, "main", 3, 0), 0);
	cr_assert_eq(profile__add_ksym(p, KSTART, "k_fault"), 0);
	cr_assert_eq(profile__add_ksym(p, KSTART + 0x1000, ""), 0);
	cr_assert_eq(profile__add_pyframe(p, PID, seventy, "seventy", "/w/a.py", 20), 0);
	cr_assert_eq(profile__add_pyframe(p, PID, thirty, "thirty", "/w/a.py", 24), 0);
	cr_assert_eq(profile__add_pyframe(p, PID, module, "<module>", "/w/a.py", 30), 0);
	snprintf(p->meta.call_graph, sizeof(p->meta.call_graph), "dwarf");
	return p;
}

static void stack_sample(struct profile *p, u32 tid, const u64 *user, u32 nr, const u64 *kernel,
			 u32 knr, u64 count)
{
	s64 u = profile__add_stack(p, user, nr, HSBPF_STACK_COMPLETE, 0), k = -1;
	struct profile_stack_sample ss = { .pid = PID, .user = u + 1, .count = count, .weight = 10 * count };

	cr_assert(u >= 0);
	if (knr) {
		k = profile__add_stack(p, kernel, knr, 0, 0);
		cr_assert(k >= 0);
		ss.kernel = k + 1;
		ss.flags = HSBPF_KEY_KERNEL;
	}
	cr_assert_eq(profile__add_stack_sample_keyed(p, &ss, &(struct profile_sample_key){ .tid = tid }), 0);
}

static void flat_sample(struct profile *p, u32 tid, u64 ip, bool kernel, u64 count)
{
	struct profile_sample s = { .pid = PID, .ip = ip, .count = count, .weight = 10 * count,
				    .flags = kernel ? HSBPF_KEY_KERNEL : 0 };

	cr_assert_eq(profile__add_sample_keyed(p, &s, &(struct profile_sample_key){ .tid = tid }), 0);
}

/* interleaved stacks of thread 1: seventy's own time 7, thirty's 3 (the loop at two pcs),
 * long_mul called by thirty 2, a page fault in seventy's loop 1 */
static struct profile *split_profile(u64 eval_a, u64 eval_b)
{
	struct profile *p = base_profile();

	stack_sample(p, 1, (u64[]){ seventy, module, EVAL + 0x10, MAIN + 4 }, 4, NULL, 0, 7);
	stack_sample(p, 1, (u64[]){ thirty, module, EVAL + 0x20, MAIN + 4 }, 4, NULL, 0, 3);
	stack_sample(p, 1, (u64[]){ CALLEE + 8, thirty, module, EVAL + 0x30, MAIN + 4 }, 5, NULL, 0, 2);
	stack_sample(p, 1, (u64[]){ seventy, module, EVAL + 0x10, MAIN + 4 }, 4, (u64[]){ KSTART + 8 }, 1, 1);
	flat_sample(p, 1, EVAL + 0x10, false, eval_a);
	flat_sample(p, 1, EVAL + 0x20, false, eval_b);
	flat_sample(p, 1, CALLEE + 8, false, 2);
	flat_sample(p, 1, KSTART + 8, true, 1);
	profile__finish(p);
	return p;
}

/* the flat rows by function: each row's samples, by name (0 for no row) */
static double row_count(const struct hist *h, const char *sym)
{
	for (size_t i = 0; i < h->nr_rows; i++)
		if (h->rows[i].sym && !strcmp(h->rows[i].sym, sym))
			return h->rows[i].count;
	return 0;
}

Test(pyself, the_loops_own_time_is_the_innermost_python_frames)
{
	struct profile *p = split_profile(6, 4);
	struct symbolizer *sy = symbolizer__new(p);
	struct hist *h = flat_hist(p, sy);

	cr_expect_eq(row_count(h, "seventy"), 7);
	cr_expect_eq(row_count(h, "thirty"), 3);
	cr_expect_eq(row_count(h, PYSELF_EVAL_LOOP), 0, "the loop keeps %g",
		     row_count(h, PYSELF_EVAL_LOOP));
	cr_expect_eq(row_count(h, "long_mul"), 2, "a C function called from Python keeps its own");
	cr_expect_eq(row_count(h, "k_fault"), 1, "a kernel leaf keeps its own");
	cr_expect_eq(row_count(h, "<module>"), 0, "only the innermost frame has Self");
	cr_expect_eq(h->total, 13);
	cr_expect_eq(h->total_weight, 130);
	hist__free(h);
	symbolizer__free(sy);
	profile__free(p);
}

Test(pyself, replace_mode_stacks_move_the_same_way)
{
	struct profile *p = base_profile();
	struct symbolizer *sy;
	struct hist *h;

	/* --python-frames=replace: the loop's frame is gone, the Python frames in its place */
	stack_sample(p, 1, (u64[]){ seventy, module, MAIN + 4 }, 3, NULL, 0, 7);
	stack_sample(p, 1, (u64[]){ thirty, module, MAIN + 4 }, 3, NULL, 0, 3);
	flat_sample(p, 1, EVAL + 0x10, false, 10);
	profile__finish(p);
	sy = symbolizer__new(p);
	h = flat_hist(p, sy);
	cr_expect_eq(row_count(h, "seventy"), 7);
	cr_expect_eq(row_count(h, "thirty"), 3);
	cr_expect_eq(row_count(h, PYSELF_EVAL_LOOP), 0);
	hist__free(h);
	symbolizer__free(sy);
	profile__free(p);
}

Test(pyself, no_more_moves_than_the_flat_samples_hold)
{
	/* the flat histogram has 8 samples in the loop, the stacks say 10 */
	struct profile *p = split_profile(5, 3);
	struct symbolizer *sy = symbolizer__new(p);
	struct hist *h = flat_hist(p, sy);

	cr_expect_eq(row_count(h, "seventy") + row_count(h, "thirty"), 8);
	cr_expect_eq(row_count(h, PYSELF_EVAL_LOOP), 0);
	cr_expect_eq(h->total, 11);
	hist__free(h);
	symbolizer__free(sy);
	profile__free(p);
}

Test(pyself, another_thread_keeps_its_loop_samples)
{
	struct profile *p = base_profile();
	struct symbolizer *sy;
	struct hist *h;

	/* thread 1's stacks are in Python; thread 2's loop samples have no stacks (a stack
	 * copy unwound in user space, say): they stay the loop's */
	stack_sample(p, 1, (u64[]){ seventy, module, EVAL + 0x10, MAIN + 4 }, 4, NULL, 0, 5);
	stack_sample(p, 2, (u64[]){ EVAL + 0x10, MAIN + 4 }, 2, NULL, 0, 4);
	flat_sample(p, 1, EVAL + 0x10, false, 5);
	flat_sample(p, 2, EVAL + 0x10, false, 4);
	profile__finish(p);
	sy = symbolizer__new(p);
	h = flat_hist(p, sy);
	cr_expect_eq(row_count(h, "seventy"), 5);
	cr_expect_eq(row_count(h, PYSELF_EVAL_LOOP), 4);
	hist__free(h);
	symbolizer__free(sy);
	profile__free(p);
}

Test(pyself, a_profile_without_python_frames_is_untouched)
{
	struct profile *p = base_profile();
	struct pyself_sample *out = (void *)1;
	struct symbolizer *sy;
	size_t nr = 1;

	stack_sample(p, 1, (u64[]){ EVAL + 0x10, MAIN + 4 }, 2, NULL, 0, 4);
	flat_sample(p, 1, EVAL + 0x10, false, 4);
	profile__finish(p);
	sy = symbolizer__new(p);
	cr_assert_eq(pyself__samples(p, sy, &out, &nr), 0);
	cr_expect_null(out);
	cr_expect_eq(nr, 0);
	symbolizer__free(sy);
	profile__free(p);
}

Test(pyself, the_call_graph_of_a_python_row_starts_at_its_frame)
{
	struct profile *p = split_profile(6, 4);
	struct symbolizer *sy = symbolizer__new(p);
	struct hist *h = flat_hist(p, sy);
	struct callchain *cc = callchain__new(p, sy);
	u64 under[2] = {};

	cr_assert(cc);
	cr_assert_eq(callchain__attach(cc, h, sy, false), 0);
	for (size_t i = 0; i < cc->nr_stacks; i++) {
		const struct callchain_stack *st = &cc->stacks[i];
		const struct callchain_frame *f = &cc->frames[st->first + st->self];

		for (size_t r = 0; r < h->nr_rows; r++)
			if (h->rows[r].id == f->row && !strcmp(h->rows[r].sym, "seventy"))
				under[0] += st->count;
			else if (h->rows[r].id == f->row && !strcmp(h->rows[r].sym, "thirty"))
				under[1] += st->count;
	}
	cr_expect_eq(under[0], 7, "stacks under seventy's row: %llu", (unsigned long long)under[0]);
	cr_expect_eq(under[1], 3, "stacks under thirty's row: %llu", (unsigned long long)under[1]);
	callchain__free(cc);
	hist__free(h);
	symbolizer__free(sy);
	profile__free(p);
}

/* a code object's address reused (HSBPF_PY_GEN): each generation's Self goes to its own
 * function, and one function's two generations (two addresses of one function, as it were)
 * are one row */
Test(pyself, generations_of_one_address_are_their_own_functions)
{
	const u64 at = 0x7f0000005000ull, g0 = HSBPF_PY_FRAME_GEN(at, 4, 0), g1 = HSBPF_PY_FRAME_GEN(at, 4, 1),
		  g2 = HSBPF_PY_FRAME_GEN(at, 4, 2);
	struct profile *p = base_profile();
	struct symbolizer *sy;
	struct hist *h;

	cr_assert_eq(profile__add_pyframe(p, PID, g0, "alpha", "/w/a.py", 3), 0);
	cr_assert_eq(profile__add_pyframe(p, PID, g1, "bravo", "/w/a.py", 3), 0);
	cr_assert_eq(profile__add_pyframe(p, PID, g2, "alpha", "/w/a.py", 3), 0);
	stack_sample(p, 1, (u64[]){ g0, module, EVAL + 0x10, MAIN + 4 }, 4, NULL, 0, 5);
	stack_sample(p, 1, (u64[]){ g1, module, EVAL + 0x10, MAIN + 4 }, 4, NULL, 0, 3);
	stack_sample(p, 1, (u64[]){ g2, module, EVAL + 0x10, MAIN + 4 }, 4, NULL, 0, 2);
	flat_sample(p, 1, EVAL + 0x10, false, 10);
	profile__finish(p);
	sy = symbolizer__new(p);
	h = flat_hist(p, sy);
	cr_expect_eq(row_count(h, "alpha"), 7);
	cr_expect_eq(row_count(h, "bravo"), 3);
	cr_expect_eq(row_count(h, PYSELF_EVAL_LOOP), 0);
	cr_expect_eq(h->total, 10);
	hist__free(h);
	symbolizer__free(sy);
	profile__free(p);
}
