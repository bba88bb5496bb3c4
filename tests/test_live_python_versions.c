// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Live Python frames of each CPython version hsbpf knows (docs/python.md, Versions): pyenv's
 * 3.10, 3.11, 3.12 and 3.13, each where installed (one that is not is skipped, naming it),
 * recorded with -g running tests/fixtures/python/pywork.py: two functions doing 70% and 30%
 * of identical work have their shares, the samples with Python frames have complete Python
 * stacks (every frame named, the outermost the program's), and hot()'s samples are on the
 * line the interpreter itself maps its in-place add to (tests/fixtures/python/hotline.py:
 * co_positions, or 3.10's co_lines). Beside perf, the one reference it has: 3.12 run with
 * -X perf and recorded by perf, 3.12 run without a flag and recorded by hsbpf, the same
 * Python functions with the same shares. A version hsbpf does not know (3.9) has native frames
 * only, and one line saying so; 3.13 is read with its own _Py_DebugOffsets. A code object
 * freed and its address given to another (tests/fixtures/python/pyreuse.py) has its own
 * generation, and both are named, in Debian's python3.11 and each pyenv version; pyenv's 3.11
 * runs pywork.py without -S (site's module code object's address goes to seventy()). A
 * subinterpreter's work (tests/fixtures/python/subinterp.py) has its own Python frames in each
 * version (Debian's 3.11 too), each interpreter's function its share of the CPU time. Debian's
 * python3.11's other tests are tests/test_live_python.c's. */
#include <criterion/criterion.h>
#include <glob.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "helpers.h"
#include "hsbpf.h"
#include "profile/profile.h"

TestSuite(live_python_versions, .fini = cleanup_tmpdir, .timeout = 240);

#define PYENV		"/root/.pyenv/versions"
#define WORK		"tests/fixtures/python/pywork.py"
#define HOTLINE		"tests/fixtures/python/hotline.py"
#define LEAFSPLIT	"tests/fixtures/python/leafsplit.py"
#define REUSE		"tests/fixtures/python/pyreuse.py"
#define SUBINTERP	"tests/fixtures/python/subinterp.py"
#define MAX_PY		128

/* pyenv's python3.minor into bin, else the test is skipped naming the version */
static void need_pyenv(int minor, char *bin, size_t size)
{
	char pattern[128];
	glob_t g;
	bool hit;

	snprintf(pattern, sizeof(pattern), PYENV "/3.%d.*/bin/python3.%d", minor, minor);
	hit = !glob(pattern, 0, NULL, &g) && g.gl_pathc;
	if (hit)
		snprintf(bin, size, "%s", g.gl_pathv[0]);
	globfree(&g);
	if (!hit)
		cr_skip_test("CPython 3.%d is not installed (no %s): its Python frames are not tested "
			     "live", minor, pattern);
}

/* complete: every frame named, and the script's work (under work()) reaches the script's
 * <module>. The interpreter's start runs Python code from C too (importlib's _find_and_load
 * for site and the codecs), whose stacks rightly begin elsewhere */
static bool complete(const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (!names[i])
			return false;
	return n && (strcmp(names[0], "work") || !strcmp(names[n - 1], "<module>"));
}


/* seventy() and thirty() share work() as pywork.py measured (about 70/30); the samples with
 * Python frames are complete */
static void check_split(const char *py, const char *flags)
{
	const char *names[MAX_PY];
	u32 lines[MAX_PY];
	u64 seventy = 0, thirty = 0, other = 0, with = 0, whole = 0;
	struct profile *p;

	pywork_truth_begin();
	p = record_profile("-g -F 999 -- %s %s %s split 3", py, flags, WORK);

	for (size_t i = 0; i < p->nr_stack_samples; i++) {
		const struct profile_stack_sample *ss = &p->stack_samples[i];
		int n = python_frames(p, ss, names, lines, MAX_PY);

		if (!n || python_importing(names, n))
			continue;
		with += ss->count;
		whole += complete(names, n) ? ss->count : 0;
		if (n < 3 || !names[0] || strcmp(names[0], "work"))
			continue;
		if (names[1] && !strcmp(names[1], "seventy"))
			seventy += ss->count;
		else if (names[1] && !strcmp(names[1], "thirty"))
			thirty += ss->count;
		else
			other += ss->count;	/* work() under another name, or none */
	}
	cr_assert_gt(seventy + thirty, 300, "%s: %llu samples in work() under its callers", py,
		     (unsigned long long)(seventy + thirty));
	expect_share(seventy, seventy + thirty, pywork_truth_share("seventy", "thirty"),
		     "seventy()'s share of work()");
	cr_expect_leq(other * 100, seventy + thirty, "%s: %llu samples in work() under a caller "
		      "named neither seventy nor thirty, %llu under them", py, (unsigned long long)other,
		      (unsigned long long)(seventy + thirty));
	cr_expect_geq(whole * 100, with * 99, "%s: %llu of %llu samples with Python frames complete",
		      py, (unsigned long long)whole, (unsigned long long)with);
	/* a chain cut at unreadable memory or a loop would have no frames at all */
	cr_expect_leq(p->stats.py_bad * 100, p->stats.py_samples, "%s: %llu of %llu Python stacks cut",
		      py, (unsigned long long)p->stats.py_bad, (unsigned long long)p->stats.py_samples);
	profile__free(p);
}

/* hot()'s samples on the line the interpreter maps its in-place add to */
static void check_hot_line(const char *py)
{
	struct run_result *r = calloc(1, sizeof(*r));
	const char *names[MAX_PY];
	u32 lines[MAX_PY];
	u64 hot = 0, at = 0;
	unsigned want = 0;
	struct profile *p;

	cr_assert(r);
	cr_assert_eq(run(r, "%s %s %s", py, HOTLINE, WORK), 0, "%s", r->err);
	cr_assert_eq(sscanf(r->out, "%u", &want), 1, "%s: %s", HOTLINE, r->out);
	free(r);
	p = record_profile("-g -F 999 -- %s %s line 3", py, WORK);
	for (size_t i = 0; i < p->nr_stack_samples; i++) {
		const struct profile_stack_sample *ss = &p->stack_samples[i];
		int n = python_frames(p, ss, names, lines, MAX_PY);

		if (!n || !names[0] || strcmp(names[0], "hot"))
			continue;
		hot += ss->count;
		at += lines[0] == want ? ss->count : 0;
	}
	cr_assert_gt(hot, 300, "%s: %llu samples in hot()", py, (unsigned long long)hot);
	cr_expect_geq(at * 100, hot * 95, "%s: %llu of %llu samples in hot() on line %u", py,
		      (unsigned long long)at, (unsigned long long)hot, want);
	profile__free(p);
}

static void check_version(int minor, const char *flags)
{
	char py[PATH_MAX];

	need_pyenv(minor, py, sizeof(py));
	check_split(py, flags);
	check_hot_line(py);
}

Test(live_python_versions, python310) { check_version(10, ""); }
/* -S: pyenv's 3.11 frees site's module code object after its import and gives its address
 * to seventy() (docs/python.md, Limits: Reused addresses): the split as it was measured
 * first; without -S, python311_with_site_reused_address */
Test(live_python_versions, python311) { check_version(11, "-S"); }
Test(live_python_versions, python312) { check_version(12, ""); }
Test(live_python_versions, python313) { check_version(13, ""); }

/* pywork.py without -S in pyenv's 3.11: site's module code object, sampled at the start and
 * freed, gives its address to seventy(), which is named all the same (its own generation) */
Test(live_python_versions, python311_with_site_reused_address)
{
	char py[PATH_MAX];

	need_pyenv(11, py, sizeof(py));
	check_split(py, "");
}

/* a stack sample's innermost Python frame: its value, and its name (NULL: unnamed) */
static const struct profile_pyframe *innermost_python(const struct profile *p,
						       const struct profile_stack_sample *ss, u64 *frame)
{
	const struct profile_stack *st = profile__stack(p, ss->user);
	const u64 *f = st ? profile__frames(p, st) : NULL;

	for (u32 j = 0; st && j < st->nr; j++) {
		if (HSBPF_PY_IS_FRAME(f[j])) {
			*frame = f[j];
			return profile__find_pyframe(p, ss->pid, f[j]);
		}
	}
	*frame = 0;
	return NULL;
}

/* one of pyreuse.py's two functions: its samples, and its code object's address and
 * generation */
struct reuse_fn {
	const char *file, *name;
	u64 samples, code;
	int gen;
};

/* alpha() runs, is freed, and bravo()'s code object takes its address (the fixture fails
 * when it does not): both named, at that address in two generations, their shares those of
 * their CPU times, few samples unnamed. same: both are named work(), their files differ */
static void check_reuse(const char *py, bool same)
{
	struct reuse_fn fn[2] = {
		{ "<pyreuse-alpha>", same ? "work" : "alpha", 0, 0, -1 },
		{ "<pyreuse-bravo>", same ? "work" : "bravo", 0, 0, -1 },
	};
	char out[PATH_MAX];
	unsigned long long addr = 0, a_ns = 0, b_ns = 0;
	u64 unnamed = 0, with = 0;
	struct profile *p;
	FILE *f;

	snprintf(out, sizeof(out), "%s/pyreuse.out", tmpdir());
	unlink(out);
	p = record_profile("-g -F 999 -- %s %s %s 1.2 0.8%s", py, REUSE, out, same ? " same-name" : "");
	f = fopen(out, "r");
	cr_assert(f, "%s: %s wrote nothing", py, REUSE);
	cr_assert_eq(fscanf(f, "%llx %llu %llu", &addr, &a_ns, &b_ns), 3);
	fclose(f);
	for (size_t i = 0; i < p->nr_stack_samples; i++) {
		const struct profile_stack_sample *ss = &p->stack_samples[i];
		u64 frame;
		const struct profile_pyframe *y = innermost_python(p, ss, &frame);

		if (!frame)
			continue;
		with += ss->count;
		if (!y) {
			unnamed += ss->count;
			continue;
		}
		for (int k = 0; k < 2; k++) {
			if (strcmp(profile__str(p, y->file), fn[k].file))
				continue;
			/* the body of the source each build compiles and execs has that file too,
			 * named <module>, rightly: it runs microseconds a build (a fresh-clone CI
			 * caught a sample there once) */
			if (!strcmp(profile__str(p, y->name), "<module>"))
				continue;
			cr_expect_str_eq(profile__str(p, y->name), fn[k].name);
			fn[k].samples += ss->count;
			fn[k].code = HSBPF_PY_CODE(frame);
			fn[k].gen = HSBPF_PY_GEN(frame);
		}
	}
	cr_assert_gt(fn[0].samples + fn[1].samples, 300, "%s: %llu samples in alpha() and bravo(), %llu "
		     "unnamed of %llu", py, (unsigned long long)(fn[0].samples + fn[1].samples),
		     (unsigned long long)unnamed, (unsigned long long)with);
	for (int k = 0; k < 2; k++)
		cr_expect_eq(fn[k].code, addr, "%s: %s at %#llx, the address reused was %#llx", py, fn[k].file,
			     (unsigned long long)fn[k].code, addr);
	cr_expect_neq(fn[0].gen, fn[1].gen, "%s: alpha() and bravo() in one generation (%d)", py, fn[0].gen);
	expect_share(fn[0].samples, fn[0].samples + fn[1].samples, (double)a_ns / (a_ns + b_ns),
		     "alpha()'s share of the two");
	/* the interpreter's start and the module's end: a few frames of code objects freed
	 * before they were read */
	cr_expect_leq(unnamed * 50, with, "%s: %llu of %llu samples with Python frames unnamed", py,
		      (unsigned long long)unnamed, (unsigned long long)with);
	cr_expect_geq(p->stats.py_gens, 1, "%s: no code object said to be named apart", py);
	profile__free(p);
}

Test(live_python_versions, reused_address_debian_python311) { check_reuse("/usr/bin/python3.11", false); }
/* one name object, two files: the kernel compares both */
Test(live_python_versions, reused_address_same_name_debian_python311)
{
	check_reuse("/usr/bin/python3.11", true);
}

static void check_reuse_version(int minor)
{
	char py[PATH_MAX];

	need_pyenv(minor, py, sizeof(py));
	check_reuse(py, false);
}

Test(live_python_versions, reused_address_python310) { check_reuse_version(10); }
Test(live_python_versions, reused_address_python311) { check_reuse_version(11); }
Test(live_python_versions, reused_address_python312) { check_reuse_version(12); }
Test(live_python_versions, reused_address_python313) { check_reuse_version(13); }

/* in_main() in the main interpreter, then in_sub() in a subinterpreter, each for the CPU time
 * it prints: each its share of the samples in either (the thread's state running is told from
 * its others by its cframe in 3.11 and 3.12, the GIL's holder in 3.10, its attached state in
 * 3.13), never both in one stack */
static void check_subinterpreter(const char *py)
{
	struct run_result *r = calloc(1, sizeof(*r));
	const char *names[MAX_PY];
	u32 lines[MAX_PY];
	double cpu_main = 0, cpu_sub = 0;
	u64 in_main = 0, in_sub = 0, all = 0;
	const char *at;
	struct profile *p;

	cr_assert(r);
	unlink(profile_path());
	run(r, "%s record -g -F 999 -o %s -- %s %s 3", hsbpf_bin(), profile_path(), py, SUBINTERP);
	cr_assert_eq(r->status, 0, "%s", r->err);
	at = strstr(r->out, "in_main ");
	cr_assert(at && sscanf(at, "in_main %lf", &cpu_main) == 1, "%s", r->out);
	at = strstr(r->out, "in_sub ");
	cr_assert(at && sscanf(at, "in_sub %lf", &cpu_sub) == 1, "%s", r->out);
	free(r);
	cr_assert_eq(profile__read(profile_path(), &p), 0);
	for (size_t i = 0; i < p->nr_stack_samples; i++) {
		const struct profile_stack_sample *ss = &p->stack_samples[i];
		int n = python_frames(p, ss, names, lines, MAX_PY);
		bool m = false, s = false;

		for (int j = 0; j < n; j++) {
			m |= names[j] && !strcmp(names[j], "in_main");
			s |= names[j] && !strcmp(names[j], "in_sub");
		}
		cr_expect(!(m && s), "%s: one stack, both interpreters' functions", py);
		in_main += m ? ss->count : 0;
		in_sub += s ? ss->count : 0;
		all += ss->count;
	}
	profile__free(p);
	cr_assert_gt(in_main, 300, "%s: %llu samples in in_main()", py, (unsigned long long)in_main);
	cr_assert_gt(in_sub, 100, "%s: %llu samples in in_sub()", py, (unsigned long long)in_sub);
	/* a sample read in another state than the one running is in neither (<module>'s Self) */
	cr_expect_geq((in_main + in_sub) * 100, all * 90, "%s: %llu of %llu samples in in_main() "
		      "or in_sub()", py, (unsigned long long)(in_main + in_sub), (unsigned long long)all);
	expect_share(in_main, in_main + in_sub, cpu_main / (cpu_main + cpu_sub),
		     "in_main()'s share of the two interpreters' functions");
	cr_log_info("%s: in_main() %llu, in_sub() %llu of %llu samples: %.1f%% (CPU %.1f%%)", py,
		    (unsigned long long)in_main, (unsigned long long)in_sub, (unsigned long long)all,
		    100.0 * in_main / (in_main + in_sub), 100 * cpu_main / (cpu_main + cpu_sub));
}

Test(live_python_versions, subinterpreter_debian_python311)
{
	if (access("/usr/bin/python3.11", X_OK))
		cr_skip_test("/usr/bin/python3.11 is not installed (scripts/install-deps.sh installs it)");
	check_subinterpreter("/usr/bin/python3.11");
}

static void check_subinterpreter_pyenv(int minor)
{
	char py[PATH_MAX];

	need_pyenv(minor, py, sizeof(py));
	check_subinterpreter(py);
}

Test(live_python_versions, subinterpreter_python310) { check_subinterpreter_pyenv(10); }
Test(live_python_versions, subinterpreter_python311) { check_subinterpreter_pyenv(11); }
Test(live_python_versions, subinterpreter_python312) { check_subinterpreter_pyenv(12); }
Test(live_python_versions, subinterpreter_python313) { check_subinterpreter_pyenv(13); }

/* the innermost Python function's samples, by name, of one profiler */
struct leaf_counts {
	u64 seventy, thirty, other, total;
};

static void count_leaf(struct leaf_counts *c, const char *name, u64 n)
{
	if (!strcmp(name, "seventy"))
		c->seventy += n;
	else if (!strcmp(name, "thirty"))
		c->thirty += n;
	else
		c->other += n;
	c->total += n;
}

/* perf's: each sample's innermost -X perf trampoline (py::NAME:FILE in /tmp/perf-PID.map),
 * counted by perf script; the map the interpreter wrote is removed */
static void perf_leaf(const char *py, struct leaf_counts *c)
{
	struct run_result *r = calloc(1, sizeof(*r));
	char data[PATH_MAX], name[256], *line, *save = NULL;
	unsigned long long n;
	unsigned pid = 0;

	cr_assert(r);
	snprintf(data, sizeof(data), "%s/perf.data", tmpdir());
	cr_assert_eq(run(r, "perf record -q --call-graph dwarf -F 999 -o %s -- %s -X perf %s 3",
			 data, py, LEAFSPLIT), 0, "perf record: %s", r->err);
	cr_assert_eq(run(r, "perf script -i %s 2>/dev/null | awk 'BEGIN { RS = \"\" } "
			 "NR == 1 { print $2, \"pid\" } "
			 "match($0, /py::[^:]*:/) { print 1, substr($0, RSTART + 4, RLENGTH - 5) }' | "
			 "sort | uniq -c", data), 0, "perf script: %s", r->err);
	for (line = strtok_r(r->out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned v;

		if (sscanf(line, "%*u %u pid", &v) == 1 && strstr(line, " pid"))
			pid = v;
		else if (sscanf(line, "%llu 1 %255s", &n, name) == 2)
			count_leaf(c, name, n);
	}
	if (pid) {
		snprintf(data, sizeof(data), "/tmp/perf-%u.map", pid);
		unlink(data);
	}
	free(r);
}

/* hsbpf's: each stack sample's innermost Python frame */
static void hsbpf_leaf(const char *py, struct leaf_counts *c)
{
	const char *names[MAX_PY];
	u32 lines[MAX_PY];
	struct profile *p = record_profile("-g -F 999 -- %s %s 3", py, LEAFSPLIT);

	for (size_t i = 0; i < p->nr_stack_samples; i++) {
		const struct profile_stack_sample *ss = &p->stack_samples[i];

		if (python_frames(p, ss, names, lines, MAX_PY) && names[0])
			count_leaf(c, names[0], ss->count);
	}
	profile__free(p);
}

/* perf reaches Python functions only through 3.12's -X perf trampolines, and, in an
 * interpreter built without frame pointers, only the innermost: the leaf's shares are what
 * the two can be compared on. Two samplings of the same split: their shares differ by their
 * two binomial noises at most (4 sd of the difference) */
Test(live_python_versions, python312_beside_perf_with_x_perf)
{
	struct leaf_counts perf = { 0 }, ours = { 0 };
	char py[PATH_MAX];
	double a, b, sd;

	need_pyenv(12, py, sizeof(py));
	if (access("/usr/bin/perf", X_OK))
		cr_skip_test("perf is not installed: hsbpf is not compared with perf on 3.12");
	perf_leaf(py, &perf);
	hsbpf_leaf(py, &ours);
	cr_assert_gt(perf.seventy + perf.thirty, 300, "perf: %llu samples in seventy() and thirty()",
		     (unsigned long long)(perf.seventy + perf.thirty));
	cr_assert_gt(ours.seventy + ours.thirty, 300, "hsbpf: %llu samples in seventy() and thirty()",
		     (unsigned long long)(ours.seventy + ours.thirty));
	/* the same Python functions: the others (main's loop, startup) are a few percent in both */
	cr_expect_leq(perf.other * 20, perf.total, "perf: %llu of %llu samples in other functions",
		      (unsigned long long)perf.other, (unsigned long long)perf.total);
	cr_expect_leq(ours.other * 20, ours.total, "hsbpf: %llu of %llu samples in other functions",
		      (unsigned long long)ours.other, (unsigned long long)ours.total);
	a = (double)perf.seventy / (perf.seventy + perf.thirty);
	b = (double)ours.seventy / (ours.seventy + ours.thirty);
	sd = sqrt(0.7 * 0.3 * (1.0 / (perf.seventy + perf.thirty) + 1.0 / (ours.seventy + ours.thirty)));
	cr_expect_leq(fabs(a - b), fmax(4 * sd, 0.03), "seventy()'s share: perf %.1f%%, hsbpf %.1f%% "
		      "(4 sd of their difference: %.1f%%)", 100 * a, 100 * b, 400 * sd);
	expect_share(ours.seventy, ours.seventy + ours.thirty, 0.7, "hsbpf: seventy()'s share");
	expect_share(perf.seventy, perf.seventy + perf.thirty, 0.7, "perf: seventy()'s share");
}

/* a version hsbpf has no layout for (pyenv's 3.9): native frames, and one line saying so */
Test(live_python_versions, an_unknown_version_has_native_frames_and_one_line)
{
	struct run_result *r = calloc(1, sizeof(*r));
	const char *names[MAX_PY], *said;
	u32 lines[MAX_PY];
	char py[PATH_MAX];
	struct profile *p;
	u64 py_samples = 0;

	cr_assert(r);
	need_pyenv(9, py, sizeof(py));
	unlink(profile_path());
	run(r, "%s record -g -o %s -- %s %s split 1", hsbpf_bin(), profile_path(), py, WORK);
	cr_assert_eq(r->status, 0, "%s", r->err);
	said = strstr(r->err, "is CPython 3.9, which hsbpf does not know");
	cr_expect(said, "no line says 3.9 is not known: %s", r->err);
	cr_expect(!said || !strstr(said + 1, "is CPython 3.9, which"), "said twice: %s", r->err);
	free(r);
	cr_assert_eq(profile__read(profile_path(), &p), 0);
	for (size_t i = 0; i < p->nr_stack_samples; i++)
		if (python_frames(p, &p->stack_samples[i], names, lines, MAX_PY))
			py_samples += p->stack_samples[i].count;
	cr_expect_eq(py_samples, 0, "%llu samples with Python frames", (unsigned long long)py_samples);
	cr_expect_gt(samples_in_symbol(p, "_PyEval_EvalFrameDefault"), 0);
	profile__free(p);
}

/* 3.13 is read with the layout it describes itself (_Py_DebugOffsets), which agrees with
 * hsbpf's table and its DWARF: no line says otherwise */
Test(live_python_versions, python313_is_read_with_its_own_debug_offsets)
{
	struct run_result *r = calloc(1, sizeof(*r));
	char py[PATH_MAX];

	cr_assert(r);
	need_pyenv(13, py, sizeof(py));
	run(r, "%s record -v -g -o %s -- %s %s split 1", hsbpf_bin(), profile_path(), py, WORK);
	cr_assert_eq(r->status, 0, "%s", r->err);
	cr_expect(strstr(r->err, "3.13's layout from its _Py_DebugOffsets"), "%s", r->err);
	cr_expect(!strstr(r->err, " say another ") && !strstr(r->err, " says another "), "%s", r->err);
	free(r);
}
