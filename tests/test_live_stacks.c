// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Live call stacks: record -g on the stack fixtures (built -O2 -fomit-frame-pointer, as Debian
 * builds), whose leaf is reached by known paths in known shares. Each path's share of the
 * leaf's samples is checked within binomial tolerance, at least 99% of them must be complete
 * (reaching _start, or the thread's start), frame pointers show their truncation, counted,
 * and perf's DWARF mode recordings, imported and unwound by hsbpf, find the same paths. */
#include <criterion/criterion.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "report/callchain.h"
#include "helpers.h"
#include "hsbpf.h"
#include "profile/profile.h"
#include "symbols/symbolizer.h"

TestSuite(live_stacks, .fini = cleanup_tmpdir, .timeout = 240);

/* the paths of tests/fixtures/stacks/callpaths.c and their units of leaf work per round */
enum path { PATH_A, PATH_B, PATH_SORT, PATH_LIB, PATH_SIGNAL, PATH_DEEP, THREAD_A, THREAD_B,
	    PATH_OTHER, PATH_NR };
static const char *const path_names[PATH_NR] = {
	"path_a", "path_b", "path_sort", "path_lib", "path_signal", "path_deep", "thread_a",
	"thread_b", "other",
};
static const double run_shares[] = { 0.4, 0.2, 0.1, 0.1, 0.1, 0.1 };

static bool has(const char *const *names, int n, const char *want)
{
	for (int i = 0; i < n; i++)
		if (names[i] && !strcmp(names[i], want))
			return true;
	return false;
}

/* libc's qsort_r is __GI___qsort_r to perf, which reads libc's debug file */
static bool has_part(const char *const *names, int n, const char *part)
{
	for (int i = 0; i < n; i++)
		if (names[i] && strstr(names[i], part))
			return true;
	return false;
}

static int count_of(const char *const *names, int n, const char *want)
{
	int c = 0;

	for (int i = 0; i < n; i++)
		c += names[i] && !strcmp(names[i], want);
	return c;
}

/* a leaf stack's path from its function names (leaf first), with every frame the path must
 * have between the leaf and main; PATH_OTHER for anything else */
static enum path classify(const char *const *names, int n)
{
	if (n < 2 || strcmp(names[0], "leaf"))
		return PATH_OTHER;
	if (has(names, n, "mid_a") && has(names, n, "path_a"))
		return PATH_A;
	if (!strcmp(names[1], "path_b"))
		return PATH_B;
	if (has(names, n, "by_value") && has_part(names, n, "qsort_r") && has(names, n, "path_sort"))
		return PATH_SORT;
	if (has(names, n, "lib_inner") && has(names, n, "lib_call") && has(names, n, "path_lib"))
		return PATH_LIB;
	if (has(names, n, "on_signal") && has(names, n, "path_signal"))
		return PATH_SIGNAL;
	if (count_of(names, n, "recurse") >= 200 && has(names, n, "path_deep"))
		return PATH_DEEP;
	if (has(names, n, "work_a") && has(names, n, "thread_a"))
		return THREAD_A;
	if (has(names, n, "work_b") && has(names, n, "thread_b"))
		return THREAD_B;
	return PATH_OTHER;
}

struct leaf_counts {
	u64 leaf;		/* samples in leaf with a user stack */
	u64 complete;		/* ... complete, from _start (or the thread's start) down */
	u64 path[PATH_NR];
	u64 user_stacks, ends[HSBPF_STACK_NR];
	u64 recursing, recursing_unreadable;	/* leaf stacks with recurse frames; ... ended unreadable */
};

static void count_leaf_stacks(const struct profile *p, struct leaf_counts *c, bool threads)
{
	struct symbolizer *sy = symbolizer__new(p);
	struct callchain *cc;
	const char **names;

	memset(c, 0, sizeof(*c));
	cr_assert(sy);
	symbolizer__skip_lines(sy);
	cc = callchain__new(p, sy);
	cr_assert(cc);
	names = calloc(cc->nr_frames + 1, sizeof(*names));
	cr_assert(names);
	for (size_t i = 0; i < cc->nr_stacks; i++) {
		const struct callchain_stack *st = &cc->stacks[i];
		const struct profile_stack_sample *ss = &p->stack_samples[st->sample];
		const struct profile_stack *u = profile__stack(p, ss->user);
		const struct callchain_frame *f = &cc->frames[st->first];
		int n = 0, k = 0;

		if (!u || u->end == PROFILE_STACK_LOST)
			continue;
		c->user_stacks += st->count;
		c->ends[u->end < HSBPF_STACK_NR ? u->end : 0] += st->count;
		/* the user frames only: a sample in the kernel's interrupt entry is still the leaf's */
		while (k < (int)st->nr && f[k].kernel)
			k++;
		for (; k < (int)st->nr; k++)
			names[n++] = f[k].sym;
		if (!n || strcmp(names[0], "leaf"))
			continue;
		c->leaf += st->count;
		if (u->end == HSBPF_STACK_COMPLETE && has(names, n, threads ? "start_thread" : "main") &&
		    !strcmp(names[n - 1], threads ? "clone3" : "_start"))
			c->complete += st->count;
		c->path[classify(names, n)] += st->count;
		if (has(names, n, "recurse")) {
			c->recursing += st->count;
			c->recursing_unreadable += u->end == HSBPF_STACK_UNREADABLE ? st->count : 0;
		}
	}
	free(names);
	callchain__free(cc);
	symbolizer__free(sy);
}

/* binomial tolerance: 4.5 standard deviations, and 2 points for what the machine adds */
static void expect_path_share(u64 k, u64 n, double want, const char *what)
{
	expect_share_within(k, n, want, 4.5 * binomial_sd(want, n) + 0.02, what);
}

Test(live_stacks, dwarf_paths_have_their_shares_and_complete_stacks)
{
	struct profile *p = record_profile("-g -F 1999 -- %s run 3", fixture("stacks/callpaths"));
	struct leaf_counts c;

	count_leaf_stacks(p, &c, false);
	cr_assert_str_eq(p->meta.call_graph, "dwarf");
	cr_assert_gt(c.leaf, 2000, "only %llu leaf samples with stacks", (unsigned long long)c.leaf);
	/* the flat histogram is still there, and every sample has its stack */
	cr_expect_eq(profile__total_samples(p), p->stats.stack_samples - p->stats.stack_keys_full,
		     "flat %llu, with stacks %llu", (unsigned long long)profile__total_samples(p),
		     (unsigned long long)p->stats.stack_samples);
	cr_expect_geq(c.complete, 0.99 * c.leaf, "complete stacks: %llu of %llu leaf samples "
		      "(no mapping %llu, no info %llu, unreadable %llu, depth %llu)",
		      (unsigned long long)c.complete, (unsigned long long)c.leaf,
		      (unsigned long long)c.ends[HSBPF_STACK_NO_MAPPING],
		      (unsigned long long)c.ends[HSBPF_STACK_NO_INFO],
		      (unsigned long long)c.ends[HSBPF_STACK_UNREADABLE],
		      (unsigned long long)c.ends[HSBPF_STACK_DEPTH]);
	for (int i = PATH_A; i <= PATH_DEEP; i++)
		expect_path_share(c.path[i], c.leaf, run_shares[i], path_names[i]);
	cr_expect_leq(c.path[PATH_OTHER], 0.01 * c.leaf, "%llu leaf samples on no known path",
		      (unsigned long long)c.path[PATH_OTHER]);
	/* the stack maps are preallocated: an allocation in the interrupt failed with ENOMEM for
	 * 1 sample in 300 when they were not */
	cr_expect_eq(p->stats.stacks_full, 0);
	profile__free(p);
}

/* the unwind tables kept in the build-id cache (user/unwind/table_cache.h): a second recording
 * of the program reads its table there instead of building it, and its stacks are as
 * complete and its paths' shares as right as the first's */
Test(live_stacks, a_table_read_from_the_build_id_cache_unwinds_as_the_one_built)
{
	char dir[PATH_MAX];
	struct leaf_counts c;
	struct profile *p;

	snprintf(dir, sizeof(dir), "%s/buildid", tmpdir());
	setenv("HSBPF_BUILDID_DIR", dir, 1);
	setenv("HSBPF_NO_BUILDID_CACHE", "0", 1);
	for (int run = 0; run < 2; run++) {
		const char *err, *at, *eol;

		p = record_profile("-v -g -F 1999 -- %s run 2", fixture("stacks/callpaths"));
		err = record_profile_err();
		at = strstr(err, "callpaths' has table");
		cr_assert(at, "no table for the program: %.3000s", err);
		eol = strchr(at, '\n');
		at = strstr(at, "read from the build-id cache");
		cr_expect(run ? at && (!eol || at < eol) : !at || (eol && at > eol),
			  "recording %d: its table %s: %.3000s", run + 1,
			  run ? "built again" : "read from an empty cache", err);
		count_leaf_stacks(p, &c, false);
		cr_assert_gt(c.leaf, 1000, "only %llu leaf samples with stacks", (unsigned long long)c.leaf);
		cr_expect_geq(c.complete, 0.99 * c.leaf, "recording %d: complete stacks: %llu of %llu",
			      run + 1, (unsigned long long)c.complete, (unsigned long long)c.leaf);
		for (int i = PATH_A; i <= PATH_DEEP; i++)
			expect_path_share(c.path[i], c.leaf, run_shares[i], path_names[i]);
		profile__free(p);
	}
}

/* a program started by a shell (not as the command, so its tables are not built before it runs):
 * its first milliseconds, before user space has its mappings and tables in the kernel, come to
 * user space as stack copies and are unwound there; its stacks are as complete as the
 * command's, and every copy is accounted for */
Test(live_stacks, a_program_exec_d_by_a_shell_has_complete_stacks_from_its_start)
{
	struct profile *p = record_profile("-g -F 1999 -- sh -c 'exec %s run 2'", fixture("stacks/callpaths"));
	struct leaf_counts c;

	count_leaf_stacks(p, &c, false);
	cr_assert_gt(c.leaf, 1000, "only %llu leaf samples with stacks", (unsigned long long)c.leaf);
	cr_expect_geq(c.complete, 0.99 * c.leaf, "complete stacks: %llu of %llu leaf samples "
		      "(no mapping %llu, no info %llu, unreadable %llu; %llu unwound from copies)",
		      (unsigned long long)c.complete, (unsigned long long)c.leaf,
		      (unsigned long long)c.ends[HSBPF_STACK_NO_MAPPING],
		      (unsigned long long)c.ends[HSBPF_STACK_NO_INFO],
		      (unsigned long long)c.ends[HSBPF_STACK_UNREADABLE],
		      (unsigned long long)p->stats.stack_late_unwound);
	cr_expect_eq(p->stats.stack_late, p->stats.stack_late_unwound + p->stats.stack_late_dropped,
		     "sent %llu, unwound %llu, dropped %llu", (unsigned long long)p->stats.stack_late,
		     (unsigned long long)p->stats.stack_late_unwound,
		     (unsigned long long)p->stats.stack_late_dropped);
	/* every sample is in the stacks: the kernel's and the copies */
	cr_expect_eq(profile__total_samples(p), p->stats.stack_samples - p->stats.stack_keys_full);
	profile__free(p);
}

/* code in the vDSO (clock_gettime) unwinds through its table, built from our own vDSO, and is
 * named from it */
Test(live_stacks, vdso_code_unwinds_and_is_named)
{
	struct profile *p = record_profile("-g -- %s 1", fixture("vdsoloop"));
	struct run_result r;
	struct leaf_counts c;

	count_leaf_stacks(p, &c, false);
	cr_expect_geq(c.ends[HSBPF_STACK_COMPLETE], 0.99 * c.user_stacks, "complete %llu of %llu "
		      "(no info %llu)", (unsigned long long)c.ends[HSBPF_STACK_COMPLETE],
		      (unsigned long long)c.user_stacks, (unsigned long long)c.ends[HSBPF_STACK_NO_INFO]);
	cr_assert_eq(run(&r, "%s report -i %s --no-children --format folded", hsbpf_bin(), profile_path()), 0,
		     "%s", r.err);
	cr_expect(strstr(r.out, "main;clock_gettime@@GLIBC_2.17;__vdso_clock_gettime"), "%.2000s", r.out);
	profile__free(p);
}

Test(live_stacks, threads_stop_at_their_start)
{
	struct profile *p = record_profile("-g -F 1999 -- %s threads 2", fixture("stacks/callpaths"));
	struct leaf_counts c;

	count_leaf_stacks(p, &c, true);
	cr_assert_gt(c.leaf, 1500);
	cr_expect_geq(c.complete, 0.99 * c.leaf, "complete thread stacks: %llu of %llu (no mapping "
		      "%llu)", (unsigned long long)c.complete, (unsigned long long)c.leaf,
		      (unsigned long long)c.ends[HSBPF_STACK_NO_MAPPING]);
	expect_path_share(c.path[THREAD_A], c.leaf, 0.5, "thread_a");
	expect_path_share(c.path[THREAD_B], c.leaf, 0.5, "thread_b");
	profile__free(p);
}

Test(live_stacks, frame_pointers_show_their_truncation_counted)
{
	struct profile *p = record_profile("--call-graph fp -- %s run 1", fixture("stacks/callpaths"));
	struct leaf_counts c;
	struct run_result r;

	count_leaf_stacks(p, &c, false);
	cr_assert_str_eq(p->meta.call_graph, "fp");
	cr_assert_gt(c.leaf, 500);
	/* -fomit-frame-pointer: the chain breaks at once, and says so */
	cr_expect_leq(c.complete, 0.05 * c.leaf, "%llu of %llu complete by frame pointers",
		      (unsigned long long)c.complete, (unsigned long long)c.leaf);
	cr_expect_geq(c.ends[HSBPF_STACK_FP_END], 0.9 * c.user_stacks, "frame-pointer ends: %llu of %llu",
		      (unsigned long long)c.ends[HSBPF_STACK_FP_END], (unsigned long long)c.user_stacks);
	run(&r, "%s report -i %s --no-children --limit 3", hsbpf_bin(), profile_path());
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "# stacks (fp): ") && strstr(r.out, "truncated: frame pointers"),
		  "%s", r.out);
	profile__free(p);
}

/* perf record --call-graph dwarf, imported: hsbpf unwinds perf's register and stack copies
 * with the kernel's rules, and finds the same paths in their shares. (perf script or report
 * would do perf's own unwinding, but perf 6.1 aborts while any hsbpf program is loaded.) */
/* perf's dwarf mode leaves the user part out of a kernel sample's callchain
 * (exclude_callchain_user) but copies its user stack all the same: import unwinds it, so a
 * syscall-bound program's kernel samples keep their callers */
Test(live_stacks, perf_dwarf_kernel_samples_keep_their_user_stacks)
{
	struct run_result *r = malloc(sizeof(*r));
	char path[600], *line = NULL;
	u64 kernel = 0, with_user = 0;
	size_t cap = 0;
	FILE *f;

	cr_assert(r);
	snprintf(path, sizeof(path), "%s/dd.folded", tmpdir());
	run(r, "cd %s && perf record -q -B --no-bpf-event --call-graph dwarf -o dd.perf -- dd if=/dev/zero "
	       "of=/dev/null bs=64 count=300000 2>/dev/null && %s import dd.perf -o dd.data && "
	       "%s report -i dd.data --format folded > %s", tmpdir(), hsbpf_bin(), hsbpf_bin(), path);
	cr_assert_eq(r->status, 0, "%s", r->err);
	f = fopen(path, "r");
	cr_assert(f);
	while (getline(&line, &cap, f) > 0) {
		char *sp = strrchr(line, ' '), *first = strchr(line, ';');
		u64 n = sp ? strtoull(sp + 1, NULL, 10) : 0;

		if (!strstr(line, "_[k]"))
			continue;
		kernel += n;
		/* after the comm, a user frame before the first kernel one */
		if (first && strncmp(first + 1, "[unknown] ([kernel", 18) && !strstr(strtok(first + 1, ";"), "_[k]"))
			with_user += n;
	}
	fclose(f);
	free(line);
	cr_assert_gt(kernel, 100, "only %llu samples in the kernel", (unsigned long long)kernel);
	cr_expect_geq(with_user, 0.9 * kernel, "%llu of %llu kernel samples have user frames",
		      (unsigned long long)with_user, (unsigned long long)kernel);
	free(r);
}

Test(live_stacks, perf_dwarf_recordings_import_unwound)
{
	struct run_result *r = malloc(sizeof(*r));
	struct leaf_counts c;
	struct profile *p;
	char path[512];

	cr_assert(r);
	run(r, "cd %s && perf record -q -B --no-bpf-event --call-graph dwarf -o perf.data -- %s run 2 && "
	       "%s import perf.data -o p.data", tmpdir(), fixture("stacks/callpaths"), hsbpf_bin());
	cr_assert_eq(r->status, 0, "%s", r->err);
	snprintf(path, sizeof(path), "%s/p.data", tmpdir());
	cr_assert_eq(profile__read(path, &p), 0);
	cr_expect_str_eq(p->meta.call_graph, "dwarf");
	count_leaf_stacks(p, &c, false);
	cr_assert_gt(c.leaf, 2000, "only %llu leaf samples with stacks", (unsigned long long)c.leaf);
	/* seen: 99.8% (the rest end in code without unwind information); perf's 8 KB copy holds
	 * the 200 frames of path_deep, small as they are */
	cr_expect_geq(c.complete, 0.97 * c.leaf, "complete stacks: %llu of %llu leaf samples "
		      "(no mapping %llu, no info %llu, unreadable %llu, depth %llu)",
		      (unsigned long long)c.complete, (unsigned long long)c.leaf,
		      (unsigned long long)c.ends[HSBPF_STACK_NO_MAPPING],
		      (unsigned long long)c.ends[HSBPF_STACK_NO_INFO],
		      (unsigned long long)c.ends[HSBPF_STACK_UNREADABLE],
		      (unsigned long long)c.ends[HSBPF_STACK_DEPTH]);
	for (int i = PATH_A; i <= PATH_DEEP; i++)
		expect_path_share(c.path[i], c.leaf, run_shares[i], path_names[i]);
	cr_expect_leq(c.path[PATH_OTHER], 0.02 * c.leaf, "%llu leaf samples on no known path",
		      (unsigned long long)c.path[PATH_OTHER]);
	profile__free(p);
	/* report prints the ends as for hsbpf's own stacks */
	run(r, "%s report -i %s -g", hsbpf_bin(), path);
	cr_expect_eq(r->status, 0, "%s", r->err);
	{
		const char *c = strstr(r->out, "# stacks (dwarf): ");
		double pct = 0;

		c = c ? strstr(c, "complete ") : NULL;
		cr_expect(c && sscanf(c, "complete %lf%%", &pct) == 1 && pct >= 97.0, "%.2000s", r->out);
	}
	run(r, "%s report -i %s --format folded", hsbpf_bin(), path);
	cr_expect(strstr(r->out, ";main;round_of_paths;path_a;mid_a;leaf "), "%.2000s", r->out);
	free(r);
}

/* a 1 KB copy (perf record --call-graph dwarf,1024) cannot hold path_deep's 200 frames: its
 * stacks end "unreadable memory", where the copy ends, and the short paths stay complete */
Test(live_stacks, perf_dwarf_short_copies_end_unreadable)
{
	struct run_result *r = malloc(sizeof(*r));
	struct leaf_counts c;
	struct profile *p;
	char path[512];

	cr_assert(r);
	run(r, "cd %s && perf record -q -B --no-bpf-event --call-graph dwarf,1024 -o perf.data -- %s run 1 && "
	       "%s import perf.data -o p.data", tmpdir(), fixture("stacks/callpaths"), hsbpf_bin());
	cr_assert_eq(r->status, 0, "%s", r->err);
	snprintf(path, sizeof(path), "%s/p.data", tmpdir());
	cr_assert_eq(profile__read(path, &p), 0);
	count_leaf_stacks(p, &c, false);
	cr_assert_gt(c.leaf, 1000, "only %llu leaf samples with stacks", (unsigned long long)c.leaf);
	expect_path_share(c.recursing, c.leaf, run_shares[PATH_DEEP], "recursing");
	cr_expect_eq(c.recursing_unreadable, c.recursing, "%llu of %llu recursing stacks unreadable",
		     (unsigned long long)c.recursing_unreadable, (unsigned long long)c.recursing);
	cr_expect_eq(c.path[PATH_DEEP], 0);
	expect_path_share(c.path[PATH_A], c.leaf, run_shares[PATH_A], "path_a");
	profile__free(p);
	free(r);
}

Test(live_stacks, bad_call_graph_options_are_refused)
{
	struct run_result r;

	run(&r, "%s record --call-graph frames -- true", hsbpf_bin());
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "invalid --call-graph 'frames'"), "%s", r.err);
	run(&r, "%s record --call-graph dwarf,0 -- true", hsbpf_bin());
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "invalid call-graph depth '0'"), "%s", r.err);
	run(&r, "%s record --call-graph fp,257 -- true", hsbpf_bin());
	cr_expect_eq(r.status, 2);
	run(&r, "%s top --call-graph dwarf,x -d 1", hsbpf_bin());
	cr_expect_eq(r.status, 2);
	run(&r, "%s record --call-graph lbr -- true", hsbpf_bin());
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "needs a hardware event"), "%s", r.err);
	/* the LBR's call-stack mode on a machine without it: a clear refusal, nothing written */
	run(&r, "cd %s && %s record -e cycles --call-graph lbr -- true", tmpdir(), hsbpf_bin());
	cr_expect_eq(r.status, 1);
	cr_expect(strstr(r.err, "--call-graph lbr") && (strstr(r.err, "no LBR") || strstr(r.err, "PMU")),
		  "%s", r.err);
	{
		char path[512];

		snprintf(path, sizeof(path), "%s/hsbpf.data", tmpdir());
		cr_expect_neq(access(path, F_OK), 0, "the refused recording left %s", path);
	}
}

Test(live_stacks, depth_cap_is_counted)
{
	struct profile *p = record_profile("--call-graph dwarf,16 -- %s run 1", fixture("stacks/callpaths"));
	struct leaf_counts c;

	count_leaf_stacks(p, &c, false);
	cr_assert_eq(p->meta.max_frames, 16);
	/* the deep path, a tenth of the work, cannot be complete in 16 frames */
	cr_expect_geq(c.ends[HSBPF_STACK_DEPTH], 0.05 * c.user_stacks, "depth ends %llu of %llu",
		      (unsigned long long)c.ends[HSBPF_STACK_DEPTH], (unsigned long long)c.user_stacks);
	for (size_t i = 0; i < p->nr_stacks; i++)
		cr_expect_leq(p->stacks[i].nr, 16 + 127, "a stack of %u frames", p->stacks[i].nr);
	profile__free(p);
}

Test(live_stacks, report_formats_carry_the_stacks)
{
	struct profile *p = record_profile("-g -- %s run 1", fixture("stacks/callpaths"));
	struct run_result *r = malloc(sizeof(*r));
	u64 folded = 0;
	char *line = NULL, path[600];
	size_t cap = 0;
	bool path_a = false;
	FILE *f;

	cr_assert(r);
	/* through a file: 200-frame stacks make more than run()'s 64 KB of output */
	snprintf(path, sizeof(path), "%s/out.folded", tmpdir());
	run(r, "%s report -i %s --format folded > %s", hsbpf_bin(), profile_path(), path);
	cr_assert_eq(r->status, 0, "%s", r->err);
	f = fopen(path, "r");
	cr_assert(f);
	while (getline(&line, &cap, f) > 0) {
		char *sp = strrchr(line, ' ');

		cr_assert(sp, "no count in '%s'", line);
		folded += strtoull(sp + 1, NULL, 10);
		path_a |= !!strstr(line, "callpaths;_start;") && !!strstr(line, ";main;round_of_paths;path_a;mid_a;leaf ");
	}
	fclose(f);
	free(line);
	cr_expect(path_a, "no root-first folded stack of path_a");
	cr_expect_eq(folded, p->stats.stack_samples - p->stats.stack_keys_full);
	run(r, "%s report -i %s --limit 5", hsbpf_bin(), profile_path());
	cr_assert_eq(r->status, 0, "%s", r->err);
	cr_expect(strstr(r->out, "Children") && strstr(r->out, "---") && strstr(r->out, "path_a"),
		  "%s", r->out);
	run(r, "%s report -i %s --no-children --call-graph callee --limit 1", hsbpf_bin(), profile_path());
	cr_expect(strstr(r->out, "---leaf") && strstr(r->out, "--mid_a"), "%s", r->out);
	/* the json holds every stack: more than run()'s 64 KB of output on a busy machine */
	run(r, "%s report -i %s --format json --limit 3 > %s/out.json && for k in '\"stacks\":\\[' "
	       "'\"stack_ends\"' '\"symbol\":\"mid_a\"'; do grep -c \"$k\" %s/out.json; done",
	    hsbpf_bin(), profile_path(), tmpdir(), tmpdir());
	cr_assert_eq(r->status, 0, "%s %s", r->out, r->err);
	{
		int stacks = 0, ends = 0, mid_a = 0;

		cr_assert_eq(sscanf(r->out, "%d %d %d", &stacks, &ends, &mid_a), 3, "%s", r->out);
		cr_expect(stacks > 0 && ends > 0 && mid_a > 0, "stacks %d, stack_ends %d, mid_a %d", stacks,
			  ends, mid_a);
	}
	free(r);
	profile__free(p);
}

/* perf record -g's callchains fill the stacks of an imported profile: each sample's, with the
 * frame-pointer ends they had */
Test(live_stacks, import_takes_perf_callchains)
{
	struct run_result r;
	struct profile *p;
	char path[512];
	u64 leaf_first = 0, total = 0;

	run(&r, "cd %s && perf record -q -B --no-bpf-event -g -o perf.data -- %s run 1 && %s import perf.data -o p.data",
	    tmpdir(), fixture("stacks/callpaths"), hsbpf_bin());
	cr_assert_eq(r.status, 0, "%s", r.err);
	snprintf(path, sizeof(path), "%s/p.data", tmpdir());
	cr_assert_eq(profile__read(path, &p), 0);
	cr_assert_gt(p->nr_stack_samples, 0);
	cr_expect_str_eq(p->meta.call_graph, "fp");
	for (size_t i = 0; i < p->nr_stack_samples; i++) {
		const struct profile_stack_sample *ss = &p->stack_samples[i];
		const struct profile_stack *u = profile__stack(p, ss->user);

		total += ss->count;
		if (u && u->nr && u->end == HSBPF_STACK_FP_END)
			leaf_first += ss->count;
	}
	/* every sample has its stack, and the flat profile the same samples */
	cr_expect_eq(total, profile__total_samples(p));
	cr_expect_geq(leaf_first, 0.9 * total, "%llu of %llu with a user stack",
		      (unsigned long long)leaf_first, (unsigned long long)total);
	profile__free(p);
	run(&r, "%s report -i %s/p.data --format folded", hsbpf_bin(), tmpdir());
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "callpaths;leaf "), "%.1000s", r.out);
}

/* strip keeps .eh_frame: a stripped program's stacks are as complete, only unnamed */
Test(live_stacks, stripped_programs_unwind_as_well)
{
	struct run_result r;
	struct profile *p;
	struct leaf_counts c;
	u64 user = 0, complete = 0;

	/* with its library, which it finds beside itself */
	run(&r, "cp %s %s/stripped && cp %s %s/ && strip %s/stripped", fixture("stacks/callpaths"),
	    tmpdir(), fixture("stacks/libstacks.so"), tmpdir(), tmpdir());
	cr_assert_eq(r.status, 0, "%s", r.err);
	/* 3 s: a process's first milliseconds (before its mappings are read) are a fixed cost */
	p = record_profile("-g -- %s/stripped run 3", tmpdir());
	count_leaf_stacks(p, &c, false);
	cr_expect_eq(c.leaf, 0, "a stripped program has no 'leaf' to name");
	for (size_t i = 0; i < p->nr_stack_samples; i++) {
		const struct profile_stack *u = profile__stack(p, p->stack_samples[i].user);

		/* the exec that starts it has no user stack yet */
		if (!u || u->end == PROFILE_STACK_LOST || u->end == HSBPF_STACK_IN_EXEC)
			continue;
		user += p->stack_samples[i].count;
		complete += u->end == HSBPF_STACK_COMPLETE ? p->stack_samples[i].count : 0;
	}
	cr_assert_gt(user, 1500);
	cr_expect_geq(complete, 0.99 * user, "%llu of %llu complete", (unsigned long long)complete,
		      (unsigned long long)user);
	profile__free(p);
}

/* what a sample's kernel stack says of its moment in an exec */
enum exec_phase { PHASE_NONE, PHASE_BEFORE, PHASE_OLD_MM_GONE, PHASE_LOADING };

static enum exec_phase exec_phase(const struct callchain_frame *f, u32 nr)
{
	bool begin = false, exit_mmap = false;

	for (u32 k = 0; k < nr && f[k].kernel; k++) {
		const char *s = f[k].sym ? f[k].sym : "";

		/* load_elf_binary calls these only after begin_new_exec, which renames the task */
		if (!strcmp(s, "elf_load") || !strcmp(s, "setup_arg_pages") || !strcmp(s, "setup_new_exec"))
			return PHASE_LOADING;
		/* before the point of no return: the file opened, the arguments copied */
		if (!strcmp(s, "do_open_execat") || !strncmp(s, "copy_strings", 12) || !strcmp(s, "alloc_bprm"))
			return PHASE_BEFORE;
		begin |= !strcmp(s, "begin_new_exec");
		exit_mmap |= !strcmp(s, "exit_mmap");
	}
	/* past the point of no return, before the rename: the old memory torn down */
	return begin && exit_mmap ? PHASE_OLD_MM_GONE : PHASE_NONE;
}

/* Exec attribution, as perf counts by comm: the kernel's loading of the new program (after
 * the exec renamed the task) is the new image's; what comes before the rename (opening the
 * file, copying the arguments, tearing down the old memory) is the old one's. And once the old
 * memory is gone, a sample has no user stack until the new program runs: "in exec". sh forks
 * and execs /bin/true 1,000 times (100 gave only 7-26 loading samples with the other core
 * busy: loading is a few hundred microseconds of CPU per exec); each phase is identified
 * by its kernel frames, whose place relative to the rename is fixed by the kernel's code, so
 * the right image is expected for every sample (tagged at sched_process_exec, as before, the loading went to sh: 0%). The only
 * loading that is sh's own is sh's exec, 1 of 1,001: 10% leaves room for far more than 15
 * standard deviations of that, and still fails on the old boundary. */
Test(live_stacks, exec_work_goes_to_the_new_image)
{
	/* a fork or comm record lost names a child by its later comm (2 of 55 at load 12) */
	struct profile *p = record_profile_whole("-g -F 1999 -- sh -c 'i=0; while [ $i -lt 1000 ]; do "
						 "/bin/true; i=$((i+1)); done'");
	struct symbolizer *sy;
	u64 n[4] = { 0 }, right[4] = { 0 }, in_exec[4] = { 0 };
	struct callchain *cc;

	sy = symbolizer__new(p);
	cr_assert(sy);
	symbolizer__skip_lines(sy);
	cc = callchain__new(p, sy);
	cr_assert(cc);
	for (size_t i = 0; i < cc->nr_stacks; i++) {
		const struct callchain_stack *st = &cc->stacks[i];
		const struct profile_stack_sample *ss = &p->stack_samples[st->sample];
		const struct profile_stack *u = profile__stack(p, ss->user);
		enum exec_phase ph = exec_phase(&cc->frames[st->first], st->nr);
		const char *comm = symbolizer__comm(sy, ss->pid, ss->exec_ns);

		if (ph == PHASE_NONE)
			continue;
		n[ph] += st->count;
		right[ph] += !strcmp(comm, ph == PHASE_LOADING ? "true" : "sh") ? st->count : 0;
		in_exec[ph] += u && u->end == HSBPF_STACK_IN_EXEC ? st->count : 0;
	}
	cr_log_info("exec phases: before %llu (%llu sh), old mm %llu (%llu sh), loading %llu (%llu true)",
		    (unsigned long long)n[PHASE_BEFORE], (unsigned long long)right[PHASE_BEFORE],
		    (unsigned long long)n[PHASE_OLD_MM_GONE], (unsigned long long)right[PHASE_OLD_MM_GONE],
		    (unsigned long long)n[PHASE_LOADING], (unsigned long long)right[PHASE_LOADING]);
	cr_assert_geq(n[PHASE_LOADING], 30, "only %llu samples in the exec's loading",
		      (unsigned long long)n[PHASE_LOADING]);
	cr_expect_geq(right[PHASE_LOADING], 0.9 * n[PHASE_LOADING], "loading: %llu of %llu samples are true's",
		      (unsigned long long)right[PHASE_LOADING], (unsigned long long)n[PHASE_LOADING]);
	cr_expect_geq(in_exec[PHASE_LOADING], 0.9 * n[PHASE_LOADING], "loading: %llu of %llu samples in exec",
		      (unsigned long long)in_exec[PHASE_LOADING], (unsigned long long)n[PHASE_LOADING]);
	/* sh's own exec has no old image in the recording: every one of these is the loop's */
	cr_expect_eq(right[PHASE_OLD_MM_GONE], n[PHASE_OLD_MM_GONE], "old memory: %llu of %llu samples are sh's",
		     (unsigned long long)right[PHASE_OLD_MM_GONE], (unsigned long long)n[PHASE_OLD_MM_GONE]);
	cr_expect_eq(in_exec[PHASE_OLD_MM_GONE], n[PHASE_OLD_MM_GONE], "old memory: %llu of %llu in exec",
		     (unsigned long long)in_exec[PHASE_OLD_MM_GONE], (unsigned long long)n[PHASE_OLD_MM_GONE]);
	cr_expect_eq(right[PHASE_BEFORE], n[PHASE_BEFORE], "before: %llu of %llu samples are sh's",
		     (unsigned long long)right[PHASE_BEFORE], (unsigned long long)n[PHASE_BEFORE]);
	cr_expect_eq(in_exec[PHASE_BEFORE], 0, "before the point of no return: %llu samples in exec",
		     (unsigned long long)in_exec[PHASE_BEFORE]);
	callchain__free(cc);
	symbolizer__free(sy);
	profile__free(p);
}
