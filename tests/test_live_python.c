// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Live Python frames (docs/python.md): record -g of Debian's python3.11 running the workloads
 * of tests/fixtures/python/pywork.py, whose answers are known: two functions doing 70% and
 * 30% of identical work, recursion 50 deep, two threads, a callback from a C function
 * (sorted's key), a hot line, a leaf with three callers in the proportions of its calls
 * (counted by sys.setprofile in a reference run), two asyncio tasks and a generator
 * pipeline; the Python frames are read from each stack as the profile names them. A Python
 * process's samples must have complete Python stacks (reaching <module>, or a thread's run),
 * names that are the functions', the line of co_positions. Report's Self of pure Python code
 * is the Python function's, in report and in top -g's rows (one process, and -a); top -g
 * names Python frames while it runs. */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "helpers.h"
#include "profile/profile.h"
#include "record/cgroup.h"
#include "report/hist.h"
#include "report/pyself.h"
#include "symbols/symbolizer.h"

TestSuite(live_python, .fini = cleanup_tmpdir, .timeout = 240);

#define PY		"/usr/bin/python3.11"
#define WORK		"tests/fixtures/python/pywork.py"
#define MAX_PY		128

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
		int n = python_frames(p, ss, names, lines, MAX_PY);

		if (!n || python_importing(names, n))
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
	pywork_truth_begin();
	p = record_work("split", "");
	for (size_t i = 0; i < p->nr_stack_samples; i++) {
		const struct profile_stack_sample *ss = &p->stack_samples[i];
		int n = python_frames(p, ss, names, lines, MAX_PY);

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
	expect_share(seventy, seventy + thirty, pywork_truth_share("seventy", "thirty"),
		     "seventy()'s share of work()");
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
		int n = python_frames(p, ss, names, lines, MAX_PY), recs = 0;

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
		int n = python_frames(p, ss, names, lines, MAX_PY);

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
		int n = python_frames(p, ss, names, lines, MAX_PY), k;

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
		int n = python_frames(p, ss, names, lines, MAX_PY);

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
		if (python_frames(p, &p->stack_samples[i], names, lines, MAX_PY))
			py += p->stack_samples[i].count;
	cr_expect_eq(py, 0, "%llu samples with Python frames under --python-frames=off",
		     (unsigned long long)py);
	cr_expect_gt(samples_in_symbol(p, "_PyEval_EvalFrameDefault"), 0);
	profile__free(p);
}

/* the Python frame after frame `at` of names (the caller), or "" */
static const char *caller_of(const char *const *names, int n, int at)
{
	return at + 1 < n && names[at + 1] ? names[at + 1] : "";
}

static int index_of(const char *const *names, int n, const char *want)
{
	for (int i = 0; i < n; i++)
		if (names[i] && !strcmp(names[i], want))
			return i;
	return -1;
}

/* the Self of the rows in an object whose path has dso_part: sym's, or (but) every other's */
static double self_of(const struct hist *h, const char *sym, const char *dso_part, bool but)
{
	double n = 0;

	for (size_t i = 0; i < h->nr_rows; i++) {
		const struct hist_row *r = &h->rows[i];
		bool named = r->sym && !strcmp(r->sym, sym);

		if (r->dso && strstr(r->dso, dso_part) && (but ? !named : named))
			n += r->count;
	}
	return n;
}

/* own's Self under --python-frames=mode */
static void own_self(const char *mode)
{
	struct profile *p;
	struct symbolizer *sy;
	struct hist *h;
	double seventy, thirty, loop, native;

	need_python();
	pywork_truth_begin();
	p = record_work("own", mode);
	sy = symbolizer__new(p);
	cr_assert(sy);
	h = flat_hist(p, sy);
	seventy = self_of(h, "seventy_own", "[python]", false);
	thirty = self_of(h, "thirty_own", "[python]", false);
	loop = self_of(h, PYSELF_EVAL_LOOP, "python3", false);
	native = self_of(h, PYSELF_EVAL_LOOP, "python3", true);
	cr_assert_gt(seventy + thirty, 300, "Self: seventy_own %.0f, thirty_own %.0f, the loop %.0f",
		     seventy, thirty, loop);
	expect_share((u64)seventy, (u64)(seventy + thirty), pywork_truth_share("seventy_own", "thirty_own"),
		     "seventy_own()'s share of the Self");
	/* the loop keeps only samples whose stacks have no Python frames (a program's first
	 * milliseconds, unwound in user space) */
	cr_expect_leq(loop * 100, h->total, "the evaluation loop keeps %.0f of %.0f samples", loop, h->total);
	cr_expect_gt(native, 0, "the C functions Python called keep their own Self");
	hist__free(h);
	symbolizer__free(sy);
	profile__free(p);
}

Test(live_python, self_is_the_python_functions_whose_code_ran)
{
	own_self("--python-frames=interleave");
}

Test(live_python, self_is_the_python_functions_with_the_loop_replaced)
{
	own_self("--python-frames=replace");
}

Test(live_python, top_names_python_frames_while_it_runs)
{
	char cmd[PATH_MAX + 64];
	struct run_result *r = calloc(1, sizeof(*r));
	pid_t w;

	need_python();
	cr_assert(r);
	snprintf(cmd, sizeof(cmd), "exec %s %s line 60", PY, WORK);
	w = spawn(cmd);
	wait_descendant(w, "python3.11", 1);
	run(r, "%s top -g --stdio -z -d 1 -n 3 --rows 5 --width 120 -p %d", hsbpf_bin(), w);
	reap(w);
	cr_assert_eq(r->status, 0, "%s", r->err);
	/* the native functions hot() calls, with their callers: hot() and the module, named */
	cr_expect(strstr(r->out, "  hot\n"), "no hot() among the callers: %s", r->out);
	cr_expect(strstr(r->out, "  <module>\n"), "no <module> among the callers: %s", r->out);
	free(r);
}

/* the Self in rows of top's snapshots (text, accumulated): seventy_own's, thirty_own's, the
 * evaluation loop's, and the snapshot's total */
struct top_self {
	u64 seventy, thirty, loop, total;
};

#define MAX_SNAPSHOTS 256

/* the snapshots of text, at most max: how many */
static int top_snapshots(const char *text, struct top_self *t, int max)
{
	const char *at = text;
	int n = 0;

	while (n < max && (at = strstr(at, "| total "))) {
		const char *next = strstr(at + 1, "| total ");
		struct top_self *x = &t[n++];

		memset(x, 0, sizeof(*x));
		for (at += strlen("| total "); *at && *at != ' '; at++)
			if (*at >= '0' && *at <= '9')
				x->total = x->total * 10 + (*at - '0');
		for (const char *l = strchr(at, '\n'); l && *l && (!next || l < next); l = strchr(l + 1, '\n')) {
			const char *end = strchr(l + 1, '\n');
			char sym[256], dso[256];
			unsigned long long c;

			/* rows have a CI column; the callers under them do not */
			if (!end || !memmem(l, end - l, "+-", 2) ||
			    sscanf(l + 1, "%llu %*s %*s %255s %255s", &c, sym, dso) != 3)
				continue;
			if (!strcmp(sym, "seventy_own") && !strcmp(dso, "[python]"))
				x->seventy += c;
			else if (!strcmp(sym, "thirty_own") && !strcmp(dso, "[python]"))
				x->thirty += c;
			else if (!strcmp(sym, PYSELF_EVAL_LOOP))
				x->loop += c;
		}
	}
	return n;
}

/* top -g's rows (accumulated, every row, a snapshot a second; target: its option, %d the
 * pid) of pywork.py's own (6 s of CPU), run with the shell prefix given. The Self the rows
 * gained from the first snapshot with a Python function's row (before it, the unwinder did
 * not know the process yet: -a reads every process's mappings first, seconds on a loaded
 * machine) to the last complete one once the program has ended */
static bool top_self_once(const char *target, const char *prefix, bool last_try)
{
	char cmd[5 * PATH_MAX], opt[PATH_MAX + 64], out[PATH_MAX];
	struct top_self *t = calloc(MAX_SNAPSHOTS, sizeof(*t)), d;
	int n = 0, at_end, status, tries, b;
	char *text = NULL;
	pid_t w, top;
	size_t len;
	FILE *f;

	need_python();
	cr_assert(t);
	pywork_truth_begin();
	snprintf(cmd, sizeof(cmd), "%sexec %s %s own 6", prefix, PY, WORK);
	w = wait_descendant(spawn(cmd), "python3.11", 1);
	snprintf(opt, sizeof(opt), target, w);
	snprintf(out, sizeof(out), "%s/top.txt", tmpdir());
	snprintf(cmd, sizeof(cmd), "exec %s top -g --stdio -z -d 1 --rows 0 --width 160 %s > %s "
		 "2> %s.err", hsbpf_bin(), opt, out, out);
	top = spawn(cmd);
	cr_assert_eq(waitpid(w, &status, 0), w);
	/* two more snapshots after the end (-a goes on), or top's own end (-p) */
	for (tries = 0, at_end = -1; tries < 1500; tries++) {
		bool ended = waitpid(top, &status, WNOHANG) == top;

		free(text);
		text = NULL;
		f = fopen(out, "r");
		if (f && getdelim(&text, &len, 0, f) < 0) {
			free(text);
			text = NULL;
		}
		if (f)
			fclose(f);
		n = text ? top_snapshots(text, t, MAX_SNAPSHOTS) : 0;
		if (at_end < 0)
			at_end = n;
		if (ended) {
			top = 0;
			break;
		}
		if (n >= at_end + 2) {
			n--;	/* the last may be cut by the kill */
			break;
		}
		usleep(10000);
	}
	if (top)
		reap(top);
	for (b = 0; b < n && !t[b].seventy; b++)
		;
	if (b + 1 >= n && !last_try) {
		cr_log_info("%d snapshots, none with seventy_own(): again", n);
		free(text);
		free(t);
		return false;
	}
	cr_assert_lt(b + 1, n, "%d snapshots, the first with seventy_own() %d; the last: %s", n, b,
		     text && strlen(text) > 4000 ? text + strlen(text) - 4000 : text ? text : "");
	free(text);
	d = (struct top_self){ t[n - 1].seventy - t[b].seventy, t[n - 1].thirty - t[b].thirty,
			       t[n - 1].loop - t[b].loop, t[n - 1].total - t[b].total };
	free(t);
	cr_assert_gt(d.seventy + d.thirty, 300, "Self: seventy_own %llu, thirty_own %llu, the loop %llu "
		     "of %llu", (unsigned long long)d.seventy, (unsigned long long)d.thirty,
		     (unsigned long long)d.loop, (unsigned long long)d.total);
	/* the truth is the whole run's, the Self a window of most of it: the same split */
	expect_share(d.seventy, d.seventy + d.thirty, pywork_truth_share("seventy_own", "thirty_own"),
		     "top: seventy_own()'s share of the Self");
	/* the loop keeps the samples whose stacks had no Python frame, and what a refresh's
	 * stacks asked of it in vain: 0.02-0.12% here (the last interval of a process that had
	 * exited kept the loop's Self until top read its stacks once more: 6-7% with -p before,
	 * 5.4% in a fresh-clone CI; docs/python.md, Limits). 2% bounds it */
	cr_expect_leq(d.loop * 100, d.total * 2, "top: the evaluation loop keeps %llu of %llu samples",
		      (unsigned long long)d.loop, (unsigned long long)d.total);
	return true;
}

/* top_self_once, again once when no snapshot had a Python row: on a loaded machine, about
 * one -a run in four had no Python frames in its stacks at all (docs/python.md, Limits) */
static void top_self(const char *target, const char *prefix)
{
	if (!top_self_once(target, prefix, false))
		top_self_once(target, prefix, true);
}

Test(live_python, top_self_is_the_python_functions)
{
	top_self("-p %d", "");
}

/* the whole machine's, the program in a cgroup of its own so that no other Python counts */
Test(live_python, top_self_is_the_python_functions_with_all_cpus)
{
	char mnt[PATH_MAX], dir[PATH_MAX + 64], target[PATH_MAX + 64], prefix[PATH_MAX + 128];

	cr_assert_eq(cgroup__find_mount("/proc/self/mountinfo", mnt, sizeof(mnt)), 0);
	snprintf(dir, sizeof(dir), "%s/hsbpf-pyself-%d", mnt, getpid());
	cr_assert(!mkdir(dir, 0755) || errno == EEXIST, "cannot create cgroup %s", dir);
	snprintf(target, sizeof(target), "-a --cgroup %s", strrchr(dir, '/') + 1);
	snprintf(prefix, sizeof(prefix), "echo $$ > %s/cgroup.procs && ", dir);
	top_self(target, prefix);
	remove_cgroup(dir);
}

Test(live_python, three_callers_have_the_shares_of_their_exact_calls)
{
	static const char *const who[] = { "by_five", "by_three", "by_sorted" };
	struct run_result *r = calloc(1, sizeof(*r));
	const char *names[MAX_PY];
	u32 lines[MAX_PY];
	u64 calls[3] = {}, got[3] = {}, all_calls = 0, in_shared = 0, whole = 0;
	struct profile *p;

	need_python();
	cr_assert(r);
	/* the calls of shared() by caller, from the interpreter itself */
	cr_assert_eq(run(r, "%s %s calls 100", PY, WORK), 0, "%s", r->err);
	for (const char *l = r->out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		char name[64];
		unsigned long long n;

		if (sscanf(l, "%63s %llu", name, &n) != 2)
			continue;
		for (int k = 0; k < 3; k++)
			if (!strcmp(name, who[k]))
				calls[k] = n;
	}
	for (int k = 0; k < 3; k++) {
		cr_assert_gt(calls[k], 0, "no calls from %s: %s", who[k], r->out);
		all_calls += calls[k];
	}
	p = record_work("callers", "");
	for (size_t i = 0; i < p->nr_stack_samples; i++) {
		const struct profile_stack_sample *ss = &p->stack_samples[i];
		int n = python_frames(p, ss, names, lines, MAX_PY), at = index_of(names, n, "shared");

		if (at < 0)
			continue;
		in_shared += ss->count;
		whole += complete(names, n) ? ss->count : 0;
		for (int k = 0; k < 3; k++)
			if (!strcmp(caller_of(names, n, at), who[k]))
				got[k] += ss->count;
	}
	cr_assert_gt(in_shared, 300, "%llu samples in shared()", (unsigned long long)in_shared);
	cr_expect_geq((got[0] + got[1] + got[2]) * 100, in_shared * 99,
		      "%llu of %llu samples in shared() under one of its three callers",
		      (unsigned long long)(got[0] + got[1] + got[2]), (unsigned long long)in_shared);
	cr_expect_geq(whole * 100, in_shared * 99, "%llu of %llu samples in shared() complete",
		      (unsigned long long)whole, (unsigned long long)in_shared);
	for (int k = 0; k < 3; k++) {
		char what[64];

		snprintf(what, sizeof(what), "%s()'s share of shared()", who[k]);
		expect_share(got[k], got[0] + got[1] + got[2], (double)calls[k] / all_calls, what);
	}
	profile__free(p);
	free(r);
}

Test(live_python, asyncio_tasks_show_their_coroutines)
{
	const char *names[MAX_PY];
	u32 lines[MAX_PY];
	u64 big = 0, small = 0, in_work = 0, whole = 0;
	struct profile *p;

	need_python();
	p = record_work("tasks", "");
	for (size_t i = 0; i < p->nr_stack_samples; i++) {
		const struct profile_stack_sample *ss = &p->stack_samples[i];
		int n = python_frames(p, ss, names, lines, MAX_PY);

		if (!n || !names[0] || strcmp(names[0], "work"))
			continue;
		cr_expect(!(has(names, n, "big") && has(names, n, "small")), "one stack, both tasks");
		in_work += ss->count;
		whole += complete(names, n) ? ss->count : 0;
		big += !strcmp(caller_of(names, n, 0), "big") ? ss->count : 0;
		small += !strcmp(caller_of(names, n, 0), "small") ? ss->count : 0;
	}
	cr_assert_gt(big + small, 300, "%llu samples in work() under the coroutines",
		     (unsigned long long)(big + small));
	expect_share(big, big + small, 0.7, "big()'s share of work()");
	/* in the tasks' code (asyncio's import at the start runs module code once: some of it
	 * freed before it is named) */
	cr_expect_geq(whole * 100, in_work * 99, "%llu of %llu samples in work() complete",
		      (unsigned long long)whole, (unsigned long long)in_work);
	cr_expect_geq((big + small) * 100, in_work * 99, "%llu of %llu samples in work() under a task",
		      (unsigned long long)(big + small), (unsigned long long)in_work);
	profile__free(p);
}

Test(live_python, a_generators_frames_are_under_their_consumer)
{
	const char *names[MAX_PY];
	u32 lines[MAX_PY];
	u64 numbers = 0, squares = 0, in_work = 0;
	struct profile *p;

	need_python();
	p = record_work("pipeline", "");
	for (size_t i = 0; i < p->nr_stack_samples; i++) {
		const struct profile_stack_sample *ss = &p->stack_samples[i];
		int n = python_frames(p, ss, names, lines, MAX_PY);
		const char *by = caller_of(names, n, 0);

		if (!n || !names[0] || strcmp(names[0], "work"))
			continue;
		in_work += ss->count;
		/* numbers() is resumed by squares(), squares() by consume(), each a frame out */
		if (!strcmp(by, "numbers") && !strcmp(caller_of(names, n, 1), "squares") &&
		    !strcmp(caller_of(names, n, 2), "consume") && complete(names, n))
			numbers += ss->count;
		else if (!strcmp(by, "squares") && !strcmp(caller_of(names, n, 1), "consume") &&
			 complete(names, n))
			squares += ss->count;
	}
	cr_assert_gt(in_work, 300, "%llu samples in work()", (unsigned long long)in_work);
	cr_expect_geq((numbers + squares) * 100, in_work * 99,
		      "%llu of %llu samples in work() under the generators under consume()",
		      (unsigned long long)(numbers + squares), (unsigned long long)in_work);
	expect_share(squares, numbers + squares, 0.7, "squares()'s share of work()");
	profile__free(p);
}
