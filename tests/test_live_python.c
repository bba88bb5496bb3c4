// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Live Python frames (docs/python.md): record -g of Debian's python3.11 running the workloads
 * of tests/fixtures/python/pywork.py, whose answers are known: two functions doing 70% and
 * 30% of identical work, recursion 50 deep, two threads, a callback from a C function
 * (sorted's key) and a hot line; the Python frames are read from each stack as the profile
 * names them. A Python process's samples must have complete Python stacks (reaching
 * <module>, or a thread's run), names that are the functions', the line of co_positions. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "helpers.h"
#include "hsbpf.h"
#include "profile/profile.h"

TestSuite(live_python, .fini = cleanup_tmpdir, .timeout = 240);

#define PY		"/usr/bin/python3.11"
#define WORK		"tests/fixtures/python/pywork.py"
#define MAX_PY		128

/* the Python frames of a stack sample's user stack, innermost first: names (NULL when
 * unnamed) and lines; how many */
static int py_frames(const struct profile *p, const struct profile_stack_sample *ss, const char **names,
		     u32 *lines)
{
	const struct profile_stack *st = profile__stack(p, ss->user);
	const u64 *f = st ? profile__frames(p, st) : NULL;
	int n = 0;

	for (u32 j = 0; st && j < st->nr && n < MAX_PY; j++) {
		const struct profile_pyframe *y;

		if (!HSBPF_PY_IS_FRAME(f[j]))
			continue;
		y = profile__find_pyframe(p, ss->pid, f[j]);
		names[n] = y ? profile__str(p, y->name) : NULL;
		lines[n] = y ? y->line : 0;
		n++;
	}
	return n;
}

static bool has(const char *const *names, int n, const char *want)
{
	for (int i = 0; i < n; i++)
		if (names[i] && !strcmp(names[i], want))
			return true;
	return false;
}

static void need_python(void)
{
	if (access(PY, X_OK))
		cr_skip_test("%s is not installed (scripts/install-deps.sh installs it)", PY);
}

static struct profile *record_work(const char *mode, const char *extra)
{
	return record_profile("-g -F 999 %s -- %s %s %s 3", extra, PY, WORK, mode);
}

/* complete: the outermost Python frame is the program's or a thread's, every frame named */
static bool complete(const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (!names[i])
			return false;
	return n && (!strcmp(names[n - 1], "<module>") || !strcmp(names[n - 1], "Thread._bootstrap"));
}

/* the samples of p with Python frames: how many, and how many complete */
static void count_complete(const struct profile *p, u64 *with, u64 *whole)
{
	const char *names[MAX_PY];
	u32 lines[MAX_PY];

	*with = *whole = 0;
	for (size_t i = 0; i < p->nr_stack_samples; i++) {
		const struct profile_stack_sample *ss = &p->stack_samples[i];
		int n = py_frames(p, ss, names, lines);

		if (!n)
			continue;
		*with += ss->count;
		if (complete(names, n))
			*whole += ss->count;
	}
}

Test(live_python, two_functions_have_their_shares_of_identical_work_and_complete_stacks)
{
	const char *names[MAX_PY];
	u32 lines[MAX_PY];
	u64 seventy = 0, thirty = 0, with, whole;
	struct profile *p;

	need_python();
	p = record_work("split", "");
	for (size_t i = 0; i < p->nr_stack_samples; i++) {
		const struct profile_stack_sample *ss = &p->stack_samples[i];
		int n = py_frames(p, ss, names, lines);

		if (n < 3 || !names[0] || strcmp(names[0], "work"))
			continue;
		cr_expect(!(has(names, n, "seventy") && has(names, n, "thirty")), "one stack, both callers");
		if (names[1] && !strcmp(names[1], "seventy"))
			seventy += ss->count;
		else if (names[1] && !strcmp(names[1], "thirty"))
			thirty += ss->count;
	}
	cr_assert_gt(seventy + thirty, 300, "%llu samples in work() under its callers",
		     (unsigned long long)(seventy + thirty));
	expect_share(seventy, seventy + thirty, 0.7, "seventy()'s share of work()");
	count_complete(p, &with, &whole);
	cr_expect_geq(whole * 100, with * 99, "%llu of %llu samples with Python frames complete",
		      (unsigned long long)whole, (unsigned long long)with);
	cr_expect_gt(p->stats.py_samples, 0);
	profile__free(p);
}

Test(live_python, recursion_fifty_deep_is_whole)
{
	const char *names[MAX_PY];
	u32 lines[MAX_PY];
	u64 leaf = 0, deep = 0;
	struct profile *p;

	need_python();
	p = record_work("recurse", "");
	for (size_t i = 0; i < p->nr_stack_samples; i++) {
		const struct profile_stack_sample *ss = &p->stack_samples[i];
		int n = py_frames(p, ss, names, lines), recs = 0;

		if (!has(names, n, "leaf"))
			continue;
		for (int j = 0; j < n; j++)
			recs += names[j] && !strcmp(names[j], "rec");
		leaf += ss->count;
		if (recs == 50 && complete(names, n))
			deep += ss->count;
	}
	cr_assert_gt(leaf, 300);
	cr_expect_geq(deep * 100, leaf * 99, "%llu of %llu samples in leaf() under 50 rec() frames",
		      (unsigned long long)deep, (unsigned long long)leaf);
	profile__free(p);
}

Test(live_python, two_threads_have_their_own_python_stacks)
{
	const char *names[MAX_PY];
	u32 lines[MAX_PY];
	u64 alpha = 0, beta = 0, with, whole;
	struct profile *p;

	need_python();
	p = record_work("threads", "");
	for (size_t i = 0; i < p->nr_stack_samples; i++) {
		const struct profile_stack_sample *ss = &p->stack_samples[i];
		int n = py_frames(p, ss, names, lines);

		cr_expect(!(has(names, n, "alpha") && has(names, n, "beta")), "one stack, both threads");
		alpha += has(names, n, "alpha") ? ss->count : 0;
		beta += has(names, n, "beta") ? ss->count : 0;
	}
	/* the GIL takes turns: each thread has a share, not a known one */
	cr_expect_gt(alpha, (alpha + beta) / 10, "alpha %llu, beta %llu", (unsigned long long)alpha,
		     (unsigned long long)beta);
	cr_expect_gt(beta, (alpha + beta) / 10, "alpha %llu, beta %llu", (unsigned long long)alpha,
		     (unsigned long long)beta);
	count_complete(p, &with, &whole);
	cr_expect_geq(whole * 100, with * 99, "%llu of %llu samples with Python frames complete",
		      (unsigned long long)whole, (unsigned long long)with);
	profile__free(p);
}

Test(live_python, a_callback_from_c_is_under_its_python_caller)
{
	const char *names[MAX_PY];
	u32 lines[MAX_PY];
	u64 key = 0, under = 0;
	struct profile *p;

	need_python();
	p = record_work("sorted", "");
	for (size_t i = 0; i < p->nr_stack_samples; i++) {
		const struct profile_stack_sample *ss = &p->stack_samples[i];
		int n = py_frames(p, ss, names, lines), k;

		for (k = 0; k < n && (!names[k] || strcmp(names[k], "keyfn")); k++)
			;
		if (k == n)
			continue;
		key += ss->count;
		/* sorted() is C: the next Python frame out is the one that called it */
		if (k + 2 < n && names[k + 1] && !strcmp(names[k + 1], "via_sorted") && complete(names, n))
			under += ss->count;
	}
	cr_assert_gt(key, 200);
	cr_expect_geq(under * 100, key * 99, "%llu of %llu samples in keyfn() under via_sorted()",
		      (unsigned long long)under, (unsigned long long)key);
	profile__free(p);
}

/* the line of hot()'s in-place add (x += i * i), from the interpreter's own co_positions */
static u32 hot_line(void)
{
	struct run_result *r = calloc(1, sizeof(*r));
	unsigned line = 0;

	cr_assert(r);
	cr_assert_eq(run(r, "%s -c 'import sys; sys.argv = [\"x\"]; import runpy; "
			 "m = runpy.run_path(\"%s\"); import dis; "
			 "print([i.positions.lineno for i in dis.get_instructions(m[\"hot\"]) "
			 "if i.opname == \"BINARY_OP\" and i.argrepr == \"+=\"][0])'",
			 PY, WORK), 0, "%s", r->err);
	cr_assert_eq(sscanf(r->out, "%u", &line), 1);
	free(r);
	return line;
}

Test(live_python, the_hot_line_is_the_one_co_positions_gives)
{
	const char *names[MAX_PY];
	u32 lines[MAX_PY], want;
	u64 hot = 0, at = 0;
	struct profile *p;

	need_python();
	want = hot_line();
	p = record_work("line", "");
	for (size_t i = 0; i < p->nr_stack_samples; i++) {
		const struct profile_stack_sample *ss = &p->stack_samples[i];
		int n = py_frames(p, ss, names, lines);

		if (!n || !names[0] || strcmp(names[0], "hot"))
			continue;
		hot += ss->count;
		at += lines[0] == want ? ss->count : 0;
	}
	cr_assert_gt(hot, 300);
	cr_expect_geq(at * 100, hot * 95, "%llu of %llu samples in hot() on line %u",
		      (unsigned long long)at, (unsigned long long)hot, want);
	profile__free(p);
}

Test(live_python, replace_drops_the_evaluation_loop_and_off_keeps_native_frames)
{
	const char *names[MAX_PY];
	u32 lines[MAX_PY];
	u64 py = 0;
	struct profile *p;

	need_python();
	p = record_profile("-g --python-frames=off -- %s %s split 1", PY, WORK);
	for (size_t i = 0; i < p->nr_stack_samples; i++)
		py += py_frames(p, &p->stack_samples[i], names, lines) ? p->stack_samples[i].count : 0;
	cr_expect_eq(py, 0, "%llu samples with Python frames under --python-frames=off",
		     (unsigned long long)py);
	cr_expect_gt(samples_in_symbol(p, "_PyEval_EvalFrameDefault"), 0);
	profile__free(p);
}
