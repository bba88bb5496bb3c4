// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Live recordings under conditions a user meets and a quiet test never does: two sessions at
 * once, a storm of short-lived children, the profiled binary deleted or replaced while it
 * runs. Each kept the profile right when it was tried by hand; these keep it so. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "helpers.h"
#include "profile/profile.h"

TestSuite(live_robust, .fini = cleanup_tmpdir, .timeout = 120);

static struct profile *read_profile(const char *name)
{
	struct profile *p;
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", tmpdir(), name);
	cr_assert_eq(profile__read(path, &p), 0, "cannot read %s", path);
	return p;
}

/* work_70 and work_30 both named, in their 70:30 split (4 standard deviations, 3 points) */
static void expect_hot7030(const struct profile *p, const char *what)
{
	u64 a = samples_in_symbol(p, "work_70"), b = samples_in_symbol(p, "work_30");

	cr_assert_gt(a + b, 200, "%s: only %llu samples in work_70 and work_30", what,
		     (unsigned long long)(a + b));
	expect_share(a, a + b, 0.7, what);
}

/* two recordings at once, each of its own command: neither sees the other's samples, both
 * complete (each has its own maps and perf events) */
Test(live_robust, two_sessions_at_once)
{
	struct run_result *r = malloc(sizeof(*r));
	struct profile *a, *b;

	cr_assert(r);
	run(r, "cd %s && { %s record -o a.data -- %s 1 & %s record -o b.data -- %s 1 & "
	       "wait %%1; s1=$?; wait %%2; s2=$?; exit $((s1 | s2)); }",
	    tmpdir(), hsbpf_bin(), fixture("hot7030"), hsbpf_bin(), fixture("hot7030"));
	cr_assert_eq(r->status, 0, "%s", r->err);
	a = read_profile("a.data");
	b = read_profile("b.data");
	expect_hot7030(a, "first session");
	expect_hot7030(b, "second session");
	/* each followed its own command: the other's process is not in it */
	cr_assert(a->nr_samples && b->nr_samples);
	cr_expect_neq(a->samples[0].pid, b->samples[0].pid);
	cr_expect_eq(samples_in_pid(a, b->samples[0].pid), 0, "the second command's samples in the first profile");
	cr_expect_eq(samples_in_pid(b, a->samples[0].pid), 0, "the first command's samples in the second profile");
	profile__free(a);
	profile__free(b);
	free(r);
}

/* 10,000 forks of a shell (no exec), each running a moment: every sample is the shell's, in
 * a known object (the children start with their parent's image, from the fork records), and
 * nothing is dropped or lost */
Test(live_robust, a_storm_of_ten_thousand_children)
{
	struct profile *p = record_profile("-- sh -c 'i=0; while [ $i -lt 10000 ]; do : & i=$((i+1)); done; wait'");
	struct run_result *r = malloc(sizeof(*r));

	cr_assert(r);
	cr_expect_gt(p->nr_forks, 100, "only %zu forks kept", p->nr_forks);
	cr_expect_eq(p->stats.dropped_full + p->stats.sideband_lost + p->stats.pids_full, 0,
		     "dropped %llu, sideband lost %llu, pids not followed %llu",
		     (unsigned long long)p->stats.dropped_full, (unsigned long long)p->stats.sideband_lost,
		     (unsigned long long)p->stats.pids_full);
	run(r, "%s report -i %s --sort comm --format csv", hsbpf_bin(), profile_path());
	cr_assert_eq(r->status, 0, "%s", r->err);
	cr_expect(strstr(r->out, ",100.0000,") && strstr(r->out, ",sh\n"), "%s", r->out);
	run(r, "%s report -i %s --sort dso --limit 0", hsbpf_bin(), profile_path());
	cr_assert_eq(r->status, 0, "%s", r->err);
	cr_expect(!strstr(r->out, "[unknown]"), "%s", r->out);
	profile__free(p);
	free(r);
}

/* the binary is deleted, or its name given to another program, once it runs: its samples are
 * still named from the image that ran (the file was opened when its mapping was seen) */
static void record_then_remove(const char *how)
{
	struct run_result *r = malloc(sizeof(*r));
	struct profile *p;

	cr_assert(r);
	run(r, "cp %s %s/h && cp /bin/true %s/other", fixture("hot7030"), tmpdir(), tmpdir());
	cr_assert_eq(r->status, 0, "%s", r->err);
	free(r);
	p = record_profile("-- sh -c 'cd %s && ./h 1 & P=$!; "
			   "while [ \"$(readlink /proc/$P/exe)\" != %s/h ]; do :; done; %s; wait $P'",
			   tmpdir(), tmpdir(), how);
	expect_hot7030(p, how);
	profile__free(p);
}

Test(live_robust, binary_deleted_while_it_runs)
{
	record_then_remove("rm h");
}

Test(live_robust, binary_replaced_while_it_runs)
{
	record_then_remove("mv other h");
}
