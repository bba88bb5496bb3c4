// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* profile_diff: the tests of a change of share on cases computed by hand (and by Python's
 * exact arithmetic for Fisher's), Newcombe's published interval, Benjamini-Hochberg's
 * adjustment, the event check, and hsbpf diff's table on two profiles made by hand. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>
#include "helpers.h"
#include "hsbpf.h"
#include "profile_diff.h"

TestSuite(profile_diff, .fini = cleanup_tmpdir);

struct test_case {
	u64 a, na, b, nb;
	enum diff_test test;
	double p;		/* two-sided */
	double tol;
};

Test(profile_diff, tests_by_hand)
{
	static const struct test_case cases[] = {
		/* pooled 0.125, se 0.01479, z 3.381 */
		{ 100, 1000, 150, 1000, DIFF_TEST_Z, 7.232e-4, 1e-6 },
		/* pooled 0.11, se 0.04425, z 0.452 */
		{ 10, 100, 12, 100, DIFF_TEST_Z, 0.6513, 1e-4 },
		/* expected 4 in each: Fisher's exact test, sum of C(1000,x)C(1000,8-x)/C(2000,8)
		 * over the tables no likelier than x = 1 */
		{ 1, 1000, 7, 1000, DIFF_TEST_FISHER, 0.069766, 1e-6 },
		/* expected 5 exactly: the z-test */
		{ 1, 1000, 9, 1000, DIFF_TEST_Z, 0.011207, 1e-5 },
		/* the same share: nothing to reject */
		{ 50, 500, 100, 1000, DIFF_TEST_Z, 1.0, 1e-12 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct test_case *c = &cases[i];
		struct diff_stat s;

		profile_diff__test(c->a, c->na, c->b, c->nb, &s);
		cr_expect_eq(s.test, c->test, "case %zu: test %d", i, s.test);
		cr_expect(fabs(s.p - c->p) < c->tol, "case %zu: p %g, want %g", i, s.p, c->p);
	}
}

Test(profile_diff, significance_after_correction)
{
	struct diff_stat s[2];

	profile_diff__test(100, 1000, 150, 1000, &s[0]);
	profile_diff__test(10, 100, 12, 100, &s[1]);
	cr_assert_eq(profile_diff__correct(s, 2), 0);
	cr_expect(s[0].significant, "100/1000 vs 150/1000: q %g", s[0].q);
	cr_expect(!s[1].significant, "10/100 vs 12/100: q %g", s[1].q);
	cr_expect(fabs(s[0].q - 2 * 7.232e-4) < 1e-6, "q %g", s[0].q);
}

/* Newcombe (1998), Statistics in Medicine 17:873, table II: 56/70 - 48/80, method 10 */
Test(profile_diff, newcombe_interval)
{
	struct diff_stat s;

	profile_diff__test(48, 80, 56, 70, &s);
	cr_expect(fabs(s.delta - 0.2) < 1e-12);
	cr_expect(fabs(s.lo - 0.0524) < 5e-4, "lo %g", s.lo);
	cr_expect(fabs(s.hi - 0.3339) < 5e-4, "hi %g", s.hi);
}

Test(profile_diff, benjamini_hochberg)
{
	const double p[] = { 0.01, 0.04, 0.03, 0.005 }, want[] = { 0.02, 0.04, 0.04, 0.02 };
	double q[4];

	cr_assert_eq(profile_diff__adjust(p, q, 4), 0);
	for (int i = 0; i < 4; i++)
		cr_expect(fabs(q[i] - want[i]) < 1e-12, "q[%d] %g, want %g", i, q[i], want[i]);
	cr_assert_eq(profile_diff__adjust(p, q, 0), 0);	/* nothing to adjust */
}

Test(profile_diff, empty_profiles)
{
	struct diff_stat s;

	profile_diff__test(0, 0, 5, 10, &s);
	cr_expect_eq(s.test, DIFF_TEST_NONE);
	cr_expect_eq(s.p, 1);
	cr_expect(!s.significant);
}

static struct profile *flat(const char *event, const u64 *counts, size_t nr)
{
	struct profile *p = profile__new();

	cr_assert(p);
	snprintf(p->meta.event, sizeof(p->meta.event), "%s", event);
	snprintf(p->meta.unit, sizeof(p->meta.unit), "ns");
	cr_assert_eq(profile__add_comm(p, 7, 0, "app", false), 0);
	cr_assert_eq(profile__add_ksym(p, 0xffffffff81000000ull, "k_a"), 0);
	cr_assert_eq(profile__add_ksym(p, 0xffffffff81001000ull, "k_b"), 0);
	cr_assert_eq(profile__add_ksym(p, 0xffffffff81002000ull, "k_c"), 0);
	cr_assert_eq(profile__add_ksym(p, 0xffffffff81003000ull, "k_end"), 0);
	for (size_t i = 0; i < nr; i++)
		if (counts[i])
			cr_assert_eq(profile__add_sample(p, &(struct profile_sample){ .pid = 7,
				.flags = HSBPF_KEY_KERNEL, .ip = 0xffffffff81000010ull + i * 0x1000,
				.count = counts[i] }), 0);
	profile__finish(p);
	return p;
}

Test(profile_diff, table)
{
	struct profile *a = flat("cpu-clock", (u64[]){ 400, 600, 0 }, 3);
	struct profile *b = flat("cpu-clock", (u64[]){ 250, 742, 8 }, 3);
	enum sort_key keys[] = { SORT_SYM };
	struct diff_table t = {};
	int seen = 0;

	cr_assert_eq(profile_diff__table(&t, a, b, keys, 1), 0);
	cr_assert_eq(t.nr, 3);
	cr_expect_eq(t.total[0], 1000);
	cr_expect_eq(t.total[1], 1000);
	for (size_t i = 0; i < t.nr; i++) {
		const struct diff_stat *s = &t.rows[i].st;

		if (strstr(t.rows[i].label, "k_a")) {
			cr_expect(s->a == 400 && s->b == 250 && s->significant && s->delta < 0);
			seen++;
		} else if (strstr(t.rows[i].label, "k_b")) {
			cr_expect(s->a == 600 && s->b == 742 && s->significant && s->delta > 0);
			seen++;
		} else if (strstr(t.rows[i].label, "k_c")) {
			/* only in NEW: 0 against 8 of 1000, expected 4: Fisher's */
			cr_expect(s->a == 0 && s->b == 8 && s->test == DIFF_TEST_FISHER);
			cr_expect(fabs(s->p - 0.0077035) < 1e-6, "p %g", s->p);
			seen++;
		}
	}
	cr_expect_eq(seen, 3);
	profile_diff__sort(&t);
	cr_expect(t.rows[0].st.significant && t.rows[2].st.test == DIFF_TEST_FISHER);
	profile_diff__free(&t);
	profile__free(a);
	profile__free(b);
}

Test(profile_diff, different_events)
{
	struct profile *a = flat("cpu-clock", (u64[]){ 1 }, 1), *b = flat("page-faults", (u64[]){ 1 }, 1);

	cr_expect_eq(profile_diff__check(a, "a", a, "a", false), 0);
	cr_expect_eq(profile_diff__check(a, "a", b, "b", false), -EINVAL);
	cr_expect_eq(profile_diff__check(a, "a", b, "b", true), 0);
	profile__free(a);
	profile__free(b);
}
