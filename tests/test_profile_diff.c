// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* profile_diff: the tests of a change of share and of rate on cases computed by hand (and by
 * Python's exact arithmetic for Fisher's), Newcombe's published interval, Benjamini-Hochberg's
 * adjustment, the event check, hsbpf diff's table on two profiles made by hand, and the case
 * of the issue: one of three functions slows, the others keep their counts; rates flag only
 * it, shares all three, and flamegraph --diff colours what diff flags. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>
#include "report/flamegraph.h"
#include "helpers.h"
#include "hsbpf.h"
#include "report/profile_diff.h"

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

static struct profile *flat_for(const char *event, const u64 *counts, size_t nr, double seconds)
{
	struct profile *p = profile__new();

	cr_assert(p);
	p->meta.duration_ns = seconds * 1e9;
	p->meta.period = 1000000;
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

static struct profile *flat(const char *event, const u64 *counts, size_t nr)
{
	return flat_for(event, counts, nr, 1);
}

static const struct diff_basis shares = { .compare = DIFF_SHARES };

Test(profile_diff, table)
{
	struct profile *a = flat("cpu-clock", (u64[]){ 400, 600, 0 }, 3);
	struct profile *b = flat("cpu-clock", (u64[]){ 250, 742, 8 }, 3);
	enum sort_key keys[] = { SORT_SYM };
	struct diff_table t = {};
	int seen = 0;

	cr_assert_eq(profile_diff__table(&t, a, b, keys, 1, &shares), 0);
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

/* rates: given a + b samples, b is binomial at eb / (ea + eb) when the rates are equal */
Test(profile_diff, rates_by_hand)
{
	struct diff_stat s;

	/* 750 against 500 in equal exposures: z = 125 / sqrt(1250 / 4) = 7.071 */
	profile_diff__test_rates(500, 1, 750, 1, &s);
	cr_expect_eq(s.test, DIFF_TEST_Z);
	cr_expect(fabs(s.p - 1.53746e-12) < 1e-16, "p %g", s.p);
	cr_expect(fabs(s.delta - 250) < 1e-9 && s.pa == 500 && s.pb == 750);
	/* the score bounds combined: [180.871, 319.673] */
	cr_expect(fabs(s.lo - 180.871) < 1e-3 && fabs(s.hi - 319.673) < 1e-3, "[%g, %g]", s.lo, s.hi);
	/* equal counts, equal exposures: nothing to reject; interval -27.983 (by symmetry) */
	profile_diff__test_rates(100, 1, 100, 1, &s);
	cr_expect(s.p == 1 && fabs(s.lo + 27.983) < 1e-3 && fabs(s.hi - 27.983) < 1e-3);
	/* unequal exposures: 10 in 1 s against 40 in 2 s, z = (40 - 100/3) / sqrt(100/9) = 2 */
	profile_diff__test_rates(10, 1, 40, 2, &s);
	cr_expect(fabs(s.p - 0.0455003) < 1e-6, "p %g", s.p);
	/* an expected count under 5: the exact test, 1 of 8 at 1/2: 18/256 two-sided */
	profile_diff__test_rates(1, 1, 7, 1, &s);
	cr_expect_eq(s.test, DIFF_TEST_BINOMIAL);
	cr_expect(fabs(s.p - 18.0 / 256) < 1e-12, "p %g", s.p);
	/* no samples on either side */
	profile_diff__test_rates(0, 1, 0, 1, &s);
	cr_expect(s.test == DIFF_TEST_NONE && s.p == 1);
}

/* the pair: three equal functions, the third made 1.5x slower; the others' counts
 * do not change (504 to 502, 507 to 514) */
static void one_slows(double seconds_new, const double *work, bool flagged[2][3])
{
	struct profile *a = flat_for("cpu-clock", (u64[]){ 504, 507, 500 }, 3, 1);
	struct profile *b = flat_for("cpu-clock", (u64[]){ 502, 514, 750 }, 3, seconds_new);
	const enum diff_compare cmp[2] = { DIFF_RATES, DIFF_SHARES };
	enum sort_key keys[] = { SORT_SYM };

	for (int c = 0; c < 2; c++) {
		struct diff_table t = {};
		struct diff_basis basis;

		cr_assert_eq(profile_diff__basis(&basis, cmp[c], a, "a", b, "b", work), 0);
		cr_assert_eq(profile_diff__table(&t, a, b, keys, 1, &basis), 0);
		cr_assert_eq(t.nr, 3);
		for (size_t i = 0; i < t.nr; i++) {
			int k = strstr(t.rows[i].label, "k_a") ? 0 : strstr(t.rows[i].label, "k_b") ? 1 : 2;

			flagged[c][k] = t.rows[i].st.significant;
		}
		profile_diff__free(&t);
	}
	profile__free(a);
	profile__free(b);
}

Test(profile_diff, one_slows_rates_flag_only_it)
{
	bool f[2][3];

	/* a recording of fixed length (a server under steady load) */
	one_slows(1, NULL, f);
	cr_expect(!f[0][0] && !f[0][1] && f[0][2], "rates: only the slowed one");
	cr_expect(f[1][0] && f[1][1] && f[1][2], "shares: all three");
	/* a run of a fixed job, longer when slower: per unit of work it is the same */
	one_slows(1.17, (double[]){ 1, 1 }, f);
	cr_expect(!f[0][0] && !f[0][1] && f[0][2], "rates per run: only the slowed one");
}

/* flamegraph --diff makes the same comparison: a frame is coloured where diff flags its key */
Test(profile_diff, flamegraph_agrees)
{
	static const char *const names[] = { "k_a", "k_b", "k_c" };
	const u64 counts[2][3] = { { 504, 507, 500 }, { 502, 514, 750 } };
	const struct diff_basis bases[2] = { { .compare = DIFF_RATES, .exposure = { 1, 1 } }, shares };

	for (int c = 0; c < 2; c++) {
		struct flame_tree *t = flame__new(true);
		bool flagged[2][3];

		cr_assert(t);
		for (int side = 0; side < 2; side++)
			for (int k = 0; k < 3; k++) {
				struct flame_frame f[] = { { .name = "app" }, { .name = names[k] } };

				cr_assert_eq(flame__add_stack(t, f, 2, counts[side][k], side), 0);
			}
		cr_assert_eq(flame__diff(t, &bases[c]), 0);
		one_slows(1, NULL, flagged);
		for (size_t i = 0; i < t->nr; i++) {
			const char *n = t->strs[t->nodes[i].name];

			for (int k = 0; k < 3; k++)
				if (!strcmp(n, names[k]))
					cr_expect_eq(t->nodes[i].change != 0, flagged[c][k], "%s %s", c ? "shares" :
						     "rates", n);
		}
		flame__free(t);
	}
}

Test(profile_diff, basis_needs_a_duration)
{
	struct profile *a = flat_for("cpu-clock", (u64[]){ 1 }, 1, 0), *b = flat("cpu-clock", (u64[]){ 1 }, 1);
	struct diff_basis basis;
	double w[2];

	cr_expect_eq(profile_diff__basis(&basis, DIFF_RATES, a, "a", b, "b", NULL), -EINVAL);
	cr_expect_eq(profile_diff__basis(&basis, DIFF_SHARES, a, "a", b, "b", NULL), 0);
	cr_expect_eq(profile_diff__basis(&basis, DIFF_RATES, a, "a", b, "b", (double[]){ 2, 3 }), 0);
	cr_expect(basis.work && basis.exposure[0] == 2 && basis.exposure[1] == 3);
	/* a period twice as long: each of NEW's samples is two of BASE's */
	b->meta.period *= 2;
	cr_expect_eq(profile_diff__basis(&basis, DIFF_RATES, b, "b", b, "b", NULL), 0);
	a->meta.duration_ns = 1e9;
	cr_expect_eq(profile_diff__basis(&basis, DIFF_RATES, a, "a", b, "b", NULL), 0);
	cr_expect(fabs(basis.exposure[1] - 0.5) < 1e-12, "%g", basis.exposure[1]);
	cr_expect_eq(profile_diff__parse_work("1.5,2", w), 0);
	cr_expect(w[0] == 1.5 && w[1] == 2);
	cr_expect_eq(profile_diff__parse_work("1,", w), -EINVAL);
	cr_expect_eq(profile_diff__parse_work("0,1", w), -EINVAL);
	profile__free(a);
	profile__free(b);
}

/* estimates of sampled allocations: b - a, b - a +- 1.96 sqrt(va + vb), z = delta / sd */
Test(profile_diff, estimates_by_hand)
{
	struct diff_stat st;

	/* sd 500, z 1: p = erfc(1/sqrt 2) = 0.3173105 */
	profile_diff__test_estimates(1000, 90000, 1500, 160000, &st);
	cr_expect_float_eq(st.delta, 500, 1e-9);
	cr_expect_float_eq(st.lo, 500 - 1.959963984540054 * 500, 1e-6);
	cr_expect_float_eq(st.hi, 500 + 1.959963984540054 * 500, 1e-6);
	cr_expect_float_eq(st.p, 0.3173105, 1e-6);
	cr_expect_eq(st.test, DIFF_TEST_Z);
	/* a leak: 16 MiB grown, sd 0.8 MiB */
	profile_diff__test_estimates(0, 0, 16 << 20, 838861.0 * 838861.0, &st);
	cr_expect_lt(st.p, 1e-10);
	cr_expect_gt(st.lo, 14 << 20);
	/* nothing on either side: not tested */
	profile_diff__test_estimates(0, 0, 0, 0, &st);
	cr_expect_eq(st.test, DIFF_TEST_NONE);
	cr_expect_eq(st.p, 1);
	/* no variance (allocations far above the period): any change is certain */
	profile_diff__test_estimates(100, 0, 200, 0, &st);
	cr_expect_eq(st.p, 0);
}
