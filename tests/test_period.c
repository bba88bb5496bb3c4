// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* period: primes, jitter bounds and mean, mode names. */
#include <criterion/criterion.h>
#include <math.h>
#include "lib/period.h"

Test(period, next_prime_table)
{
	static const struct { u64 in, want; } cases[] = {
		{ 0, 2 }, { 2, 2 }, { 3, 3 }, { 4, 5 }, { 90, 97 }, { 1000000, 1000003 },
		{ 65536, 65537 }, { 16777216, 16777259 }, { 1000000007, 1000000007 },
		{ 18446744073709551557ull, 18446744073709551557ull },	/* largest u64 prime */
		{ 18446744073709551558ull, 0 },				/* none above it */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		cr_expect_eq(period__next_prime(cases[i].in), cases[i].want, "next_prime(%llu)",
			     (unsigned long long)cases[i].in);
}

Test(period, is_prime_pseudoprimes)
{
	/* strong pseudoprimes to small bases must not fool the test */
	cr_expect_not(period__is_prime(3215031751ull));
	cr_expect_not(period__is_prime(3825123056546413051ull));
	cr_expect_not(period__is_prime(561));
	cr_expect(period__is_prime(4294967291ull));
}

Test(period, random_draws_stay_in_window_and_average_right)
{
	const u64 base = 1000000;
	u64 rng = 42, lo = UINT64_MAX, hi = 0;
	double sum = 0;
	const int n = 200000;

	for (int i = 0; i < n; i++) {
		u64 p = period__draw(PERIOD_RANDOM, base, &rng);

		cr_assert(p >= base && p < base + base / 8);
		lo = p < lo ? p : lo;
		hi = p > hi ? p : hi;
		sum += p;
	}
	/* uniform on [base, base + base/8): mean base * 1.0625 */
	cr_expect(fabs(sum / n - base * 1.0625) < base * 0.001, "mean %f", sum / n);
	cr_expect(lo < base + base / 100 && hi > base + base / 8 - base / 100);
}

Test(period, prime_random_is_prime)
{
	u64 rng = 7;

	for (int i = 0; i < 1000; i++) {
		u64 p = period__draw(PERIOD_PRIME_RANDOM, 65536, &rng);

		cr_assert(period__is_prime(p));
		cr_assert(p >= 65536 && p < 65536 + 8192 + 100);
	}
	cr_expect_eq(period__draw(PERIOD_FIXED, 1000, &rng), 1000);
	cr_expect_eq(period__initial(PERIOD_PRIME, 1000000), 1000003);
}

Test(period, mode_names_round_trip)
{
	const char *names[] = { "fixed", "prime", "random", "prime-random", "phase" };
	enum period_mode m;

	for (int i = 0; i < 5; i++) {
		cr_assert_eq(period__parse_mode(names[i], &m), 0);
		cr_expect_str_eq(period__mode_name(m), names[i]);
	}
	cr_expect_eq(period__parse_mode("randomized", &m), -EINVAL);
}

/* phase: the period stays the base; the waits between restarts are uniform in [0, 2 mean):
 * mean within 4 standard errors (sd of U[0, 2g) is 2g / sqrt(12)), each quarter of the range
 * a quarter of the draws within 4 binomial sd */
Test(period, phase_gaps_uniform)
{
	const u64 mean = 250000000, n = 100000;
	u64 rng = 7, quarter[4] = {};
	double sum = 0, se = 2.0 * mean / sqrt(12) / sqrt(n), qsd = sqrt(n * 0.25 * 0.75);

	cr_expect(!period__is_random(PERIOD_PHASE), "phase sends no tokens");
	cr_expect_eq(period__initial(PERIOD_PHASE, 1001001), 1001001);
	cr_expect_eq(period__draw(PERIOD_PHASE, 1001001, &rng), 1001001);
	for (u64 i = 0; i < n; i++) {
		u64 g = period__phase_gap(mean, &rng);

		cr_assert_lt(g, 2 * mean);
		sum += g;
		quarter[g / (mean / 2)]++;
	}
	cr_expect_lt(fabs(sum / n - mean), 4 * se, "mean %g", sum / n);
	for (int q = 0; q < 4; q++)
		cr_expect_lt(fabs(quarter[q] - n / 4.0), 4 * qsd, "quarter %d: %llu", q,
			     (unsigned long long)quarter[q]);
}
