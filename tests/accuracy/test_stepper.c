// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* stepper: the exact stacks of single-stepped fixtures against their known calling contexts
 * (tests/fixtures/cct.c, cct_exc.cc: recursion, a tail call, longjmp out of three frames, a
 * signal handler, threads, an exception through two frames; the stack fixture built -O2
 * -fomit-frame-pointer), and the unwinder's stacks against the exact ones: DWARF's equal but
 * where the code has no unwind information or a rule the kernel follows in the sampled frame
 * only (and libgcc's throw, see docs/accuracy.md), fp's wrong in the fixture's bodies. */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "helpers.h"
#include "symbols/symbolizer.h"
#include "accuracy/stack_check.h"
#include "accuracy/stepper.h"

TestSuite(stepper, .timeout = 300);

struct run {
	struct profile *p[3];	/* exact, dwarf, fp */
	struct stepper_result res;
	struct symbolizer *sy;
	struct stack_check sc[2];	/* dwarf, fp */
};

static void step(struct run *r, const char *prog, const char *arg, u64 period, bool feed_stdin)
{
	char *argv[] = { (char *)fixture(prog), (char *)arg, NULL };
	/* from main: the dynamic linker's start-up would take most of the test's time */
	struct stepper_opts o = { .period = period, .from_main = true };
	int saved = -1, pfd[2];

	for (int i = 0; i < 3; i++)
		cr_assert((r->p[i] = profile__new()));
	if (feed_stdin) {
		/* the fixture waits for a byte on stdin */
		cr_assert_eq(pipe(pfd), 0);
		cr_assert_eq(write(pfd[1], "x", 1), 1);
		close(pfd[1]);
		saved = dup(0);
		dup2(pfd[0], 0);
		close(pfd[0]);
	}
	cr_assert_eq(stepper__profiles(argv, &o, r->p[0], r->p[1], r->p[2], &r->res), 0, "%s %s", prog,
		     arg ? arg : "");
	if (saved >= 0) {
		dup2(saved, 0);
		close(saved);
	}
	cr_assert(WIFEXITED(r->res.status) && !WEXITSTATUS(r->res.status), "%s %s: status %#x", prog,
		  arg ? arg : "", r->res.status);
	cr_assert_gt(r->res.samples, 100);
	cr_assert_eq(r->res.samples, r->p[0]->nr_stack_samples);
	r->sy = symbolizer__new(r->p[0]);
	cr_assert(r->sy);
	for (int i = 0; i < 2; i++)
		cr_assert_eq(stack_check__profiles(r->p[0], r->p[1 + i], &r->sc[i]), 0);
}

static void run_free(struct run *r)
{
	symbolizer__free(r->sy);
	for (int i = 0; i < 3; i++)
		profile__free(r->p[i]);
}

/* the exact stack of sample i as function names (return addresses looked up at ra - 1) */
static u32 names(struct run *r, size_t i, const char **out, u32 max)
{
	const struct profile_stack *st = profile__stack(r->p[0], r->p[0]->stack_samples[i].user);
	const u64 *f = profile__frames(r->p[0], st);
	u32 n = 0;

	for (; n < st->nr && n < max; n++) {
		struct profile_sample ps = { .pid = r->p[0]->stack_samples[i].pid, .ip = f[n] - (n > 0) };
		struct sym_result res;

		symbolizer__resolve(r->sy, &ps, &res);
		out[n] = res.sym;
	}
	return n;
}

/* "a b c": the exact stacks of the samples in function a go on with b, c (the next frames) */
static size_t expect_callers(struct run *r, const char *chain)
{
	char buf[256], *save = NULL, *want[16];
	size_t nw = 0, hits = 0;

	snprintf(buf, sizeof(buf), "%s", chain);
	for (char *t = strtok_r(buf, " ", &save); t && nw < 16; t = strtok_r(NULL, " ", &save))
		want[nw++] = t;
	for (size_t i = 0; i < r->p[0]->nr_stack_samples; i++) {
		const char *got[HSBPF_MAX_FRAMES];
		u32 n = names(r, i, got, HSBPF_MAX_FRAMES);

		if (!n || strcmp(got[0], want[0]))
			continue;
		hits++;
		for (size_t k = 1; k < nw; k++) {
			cr_assert(k < n && !strcmp(got[k], want[k]), "sample %zu in %s: frame %zu is %s, "
				  "expected %s (%s)", i, want[0], k, k < n ? got[k] : "none", want[k], chain);
		}
	}
	cr_expect_gt(hits, 0, "no sample in %s", want[0]);
	return hits;
}

/* DWARF's stacks equal the exact ones but where the cause is known; fp's are not */
static void expect_unwinders(struct run *r, u64 other_allowed)
{
	const struct stack_check *d = &r->sc[0], *fp = &r->sc[1];

	/* lazy binding's trampoline (_dl_runtime_resolve_xsavec: CFA = rbx + 8, a leaf-only rule)
	 * is under many of the first calls after main */
	cr_expect_gt(d->equal, d->compared / 3, "dwarf: %llu of %llu equal",
		     (unsigned long long)d->equal, (unsigned long long)d->compared);
	cr_expect_leq(d->cause[SC_CAUSE_OTHER], other_allowed, "dwarf: %llu unexplained differences",
		      (unsigned long long)d->cause[SC_CAUSE_OTHER]);
	cr_expect_eq(d->compared - d->equal, d->cause[SC_CAUSE_NO_INFO] + d->cause[SC_CAUSE_LEAF_RULE] +
		     d->cause[SC_CAUSE_OTHER] + d->cause[SC_CAUSE_EH_INSTALL]);
	cr_expect_gt(fp->compared - fp->equal, 0, "fp is never wrong?");
}

Test(stepper, recursion)
{
	struct run r = {};
	size_t deepest = 0;

	step(&r, "cct", "rec", 3, false);
	for (size_t i = 0; i < r.p[0]->nr_stack_samples; i++) {
		const char *got[HSBPF_MAX_FRAMES];
		u32 n = names(&r, i, got, HSBPF_MAX_FRAMES), d = 0;

		while (d < n && !strcmp(got[d], "rec"))
			d++;
		if (!d)
			continue;
		cr_assert(d < n && !strcmp(got[d], "main"), "sample %zu: rec x %u then %s", i, d,
			  d < n ? got[d] : "nothing");
		deepest = d > deepest ? d : deepest;
	}
	cr_expect_eq(deepest, 6, "rec(5) .. rec(0) are 6 frames, the deepest sample had %zu", deepest);
	expect_unwinders(&r, 0);
	run_free(&r);
}

Test(stepper, tail_call)
{
	struct run r = {};

	step(&r, "cct", "tail", 3, false);
	/* tailer jumped to leaf3: its frame is gone */
	expect_callers(&r, "leaf3 main __libc_start_call_main");
	expect_unwinders(&r, 0);
	run_free(&r);
}

Test(stepper, longjmp_out_of_three_frames)
{
	struct run r = {};

	step(&r, "cct", "longjmp", 2, false);
	expect_callers(&r, "l3 l2 l1 lj_top main");
	expect_callers(&r, "after_jump lj_top main");
	expect_unwinders(&r, 0);
	run_free(&r);
}

Test(stepper, signal_handler)
{
	struct run r = {};
	size_t through = 0;

	step(&r, "cct", "signal", 2, false);
	cr_expect_eq(r.res.signals, 1);
	/* hleaf, handler, the restorer (__restore_rt, at its own address), the interrupted pc,
	 * ... raise, main */
	for (size_t i = 0; i < r.p[0]->nr_stack_samples; i++) {
		const struct profile_stack *st = profile__stack(r.p[0], r.p[0]->stack_samples[i].user);
		struct profile_sample ps = { .pid = r.p[0]->stack_samples[i].pid };
		const char *got[HSBPF_MAX_FRAMES];
		u32 n = names(&r, i, got, HSBPF_MAX_FRAMES);
		struct sym_result res;
		bool raise_seen = false;

		if (strcmp(got[0], "hleaf"))
			continue;
		cr_assert(n > 4 && !strcmp(got[1], "handler"), "sample %zu: %s under hleaf", i, got[1]);
		ps.ip = profile__frames(r.p[0], st)[2];
		symbolizer__resolve(r.sy, &ps, &res);
		cr_assert_str_eq(res.sym, "__restore_rt");
		for (u32 k = 3; k < n; k++) {
			raise_seen |= !strcmp(got[k], "raise");
			if (!strcmp(got[k], "main"))
				break;
		}
		cr_expect(raise_seen, "sample %zu: no raise between the signal frame and main", i);
		through++;
	}
	cr_expect_gt(through, 0, "no sample in hleaf");
	expect_unwinders(&r, 0);
	run_free(&r);
}

/* the program's own SIGTRAP is not the stepper's: its handler runs (the fixture exits 3 if
 * not), entered like any other */
Test(stepper, sigtrap_goes_to_the_program)
{
	struct run r = {};
	size_t in_handler = 0;

	step(&r, "cct", "sigtrap", 2, false);
	cr_expect_eq(r.res.signals, 1);
	for (size_t i = 0; i < r.p[0]->nr_stack_samples; i++) {
		const char *got[HSBPF_MAX_FRAMES];
		u32 n = names(&r, i, got, HSBPF_MAX_FRAMES);

		if (n > 1 && !strcmp(got[0], "hleaf") && !strcmp(got[1], "handler"))
			in_handler++;
	}
	cr_expect_gt(in_handler, 0, "no sample in hleaf under the handler");
	expect_unwinders(&r, 0);
	run_free(&r);
}

Test(stepper, threads)
{
	struct run r = {};

	step(&r, "cct", "threads", 1, false);	/* the threads interleave: every instruction */
	cr_expect_eq(r.res.threads, 3);
	expect_callers(&r, "path_a ta start_thread clone3");
	expect_callers(&r, "path_b tb start_thread clone3");
	expect_unwinders(&r, 0);
	run_free(&r);
}

Test(stepper, exception_through_two_frames)
{
	struct run r = {};

	step(&r, "cct_exc", NULL, 3, false);
	expect_callers(&r, "thrower mid top main");
	expect_callers(&r, "caught top main");
	expect_callers(&r, "after_exc main");
	expect_callers(&r, "__cxa_throw thrower mid top main");
	/* libgcc rewrites _Unwind_RaiseException's saved registers with the landing pad's before
	 * it jumps there (docs/accuracy.md): the unexplained differences are all in stacks that go
	 * through it, and none of them ends complete (the table marks that range: they end
	 * "exception dispatch") */
	{
		u64 through = 0, complete_but_wrong = 0, dispatch = 0;

		for (size_t i = 0; i < r.p[0]->nr_stack_samples; i++) {
			const struct profile_stack *se = profile__stack(r.p[0], r.p[0]->stack_samples[i].user);
			const struct profile_stack *sd = profile__stack(r.p[1], r.p[1]->stack_samples[i].user);
			const char *got[HSBPF_MAX_FRAMES];
			u32 n = names(&r, i, got, HSBPF_MAX_FRAMES), at;
			bool in_raise = false;

			dispatch += sd->end == HSBPF_STACK_EH_INSTALL;
			if (stack_check__kind(profile__frames(r.p[0], se), se->nr, profile__frames(r.p[1], sd),
					      sd->nr, &at) == SC_EQUAL)
				continue;

			for (u32 k = 0; k < n && k < at; k++)
				in_raise |= !strcmp(got[k], "_Unwind_RaiseException");
			through += in_raise;
			complete_but_wrong += in_raise && sd->end == HSBPF_STACK_COMPLETE;
		}
		expect_unwinders(&r, through);
		cr_expect_lt(r.sc[0].cause[SC_CAUSE_OTHER], r.sc[0].compared / 100);
		cr_expect_gt(r.sc[0].cause[SC_CAUSE_EH_INSTALL], 0);
		cr_expect_eq(complete_but_wrong, 0, "%" PRIu64 " stacks through _Unwind_RaiseException end complete but differ from the exact ones",
			     complete_but_wrong);
		cr_expect_gt(dispatch, 0, "no sample in the context install (it was 18 of 11,485)");
	}
	run_free(&r);
}

/* -O2 -fomit-frame-pointer, a library, qsort, a signal, 200 frames deep, a thread */
Test(stepper, stack_fixture)
{
	struct run r = {};
	const struct stack_check *fp = &r.sc[1], *d = &r.sc[0];

	step(&r, "stacks/callpaths", "once", 1, true);	/* a thread too: every instruction */
	expect_callers(&r, "mid_a path_a round_of_paths main");
	expect_callers(&r, "lib_inner lib_call path_lib round_of_paths main");
	expect_callers(&r, "work_b thread_once start_thread clone3");
	expect_unwinders(&r, 0);
	/* where the program's frame pointer is a general register, fp goes wrong in bodies */
	cr_expect_gt(fp->n[SC_MISSING][SC_BODY] + fp->n[SC_WRONG_CALLER][SC_BODY], 0);
	cr_expect_gt(fp->at_loc[SC_PLT], 0, "no sample in a PLT stub");
	cr_expect_gt(fp->at_loc[SC_PROLOGUE], 0);
	cr_expect_gt(fp->at_loc[SC_EPILOGUE], 0);
	/* DWARF in the fixture's own code: prologues, epilogues and PLT stubs included */
	cr_expect_eq(d->n[SC_EQUAL][SC_PLT], d->at_loc[SC_PLT]);
	run_free(&r);
}
