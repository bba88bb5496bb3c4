// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* stat_math: scaling, the extrapolation's interval, repeats and metrics, on readings whose
 * answers were worked out by hand (the working is in the comments). */
#include <criterion/criterion.h>
#include <linux/perf_event.h>
#include <math.h>
#include "stat/stat_math.h"

#define NEAR(a, b, tol, ...) cr_expect(fabs((double)(a) - (double)(b)) <= (tol), __VA_ARGS__)

/* three reads of 100 ms, the counter running half of each (multiplexed), counting 500, 600
 * and 400 events: rates 1.0e-5, 1.2e-5, 0.8e-5 per running ns */
static const struct stat_reading three[] = {
	{ 500, 100000000, 50000000 },
	{ 600, 100000000, 50000000 },
	{ 400, 100000000, 50000000 },
};

static struct stat_acc acc_of(const struct stat_reading *r, size_t n)
{
	struct stat_acc a = { 0 };

	for (size_t i = 0; i < n; i++)
		stat_acc__add(&a, &r[i]);
	return a;
}

Test(stat_math, accumulator_weighs_rates_by_running_time)
{
	/* unequal weights: rates 2e-6 (w 1e6), 4e-6 (w 3e6); mean (2*1 + 4*3) / 4 = 3.5e-6;
	 * m2 = 1e6 * 1.5e-6^2 + 3e6 * 0.5e-6^2 = 2.25e-6 + 0.75e-6 = 3e-6 */
	static const struct stat_reading r[] = { { 2, 2000000, 1000000 }, { 12, 3000000, 3000000 },
						  { 7, 1000000, 0 } };
	struct stat_acc a = acc_of(r, 3);

	cr_expect_eq(a.total.count, 21);
	cr_expect_eq(a.total.enabled, 6000000);
	cr_expect_eq(a.total.running, 4000000);
	cr_expect_eq(a.reads, 2, "a read that did not run has no rate");
	NEAR(a.rate, 3.5e-6, 1e-18, "mean rate %g", a.rate);
	NEAR(a.m2, 3e-6, 1e-18, "m2 %g", a.m2);
}

Test(stat_math, an_exact_count_is_not_scaled)
{
	struct stat_reading r = { 123456789, 2000000000, 2000000000 };
	struct stat_acc a = acc_of(&r, 1);
	struct stat_value v;

	stat__estimate(&r, &a, true, &v);
	cr_expect(v.counted);
	cr_expect_not(v.scaled);
	cr_expect_not(v.has_ci, "a counter that always ran needs no interval");
	cr_expect_eq(v.value, 123456789);
	cr_expect_eq(v.running_pct, 100);
}

Test(stat_math, never_enabled_and_never_running)
{
	struct stat_reading never = { 0, 0, 0 }, starved = { 0, 5000000, 0 };
	struct stat_value v;

	stat__estimate(&never, NULL, true, &v);
	cr_expect(v.counted, "never enabled (the command never ran): a plain zero");
	cr_expect_eq(v.value, 0);
	stat__estimate(&starved, NULL, true, &v);
	cr_expect_not(v.counted, "enabled but never on the PMU: not counted");
	cr_expect_eq(v.running_pct, 0);
}

Test(stat_math, scaled_count_and_its_interval)
{
	/* count 1500, enabled 300 ms, running 150 ms: f = 0.5, value 3000.
	 * s2 = m2 / 2 = 50e6 * (0 + (0.2e-5)^2 + (0.2e-5)^2) / 2 = 2e-4
	 * var = (300e6)^2 * (1 - 0.5) * 2e-4 / 150e6 = 6e4, sd 244.949
	 * half = t(0.975, 2) * sd = 4.3027 * 244.949 = 1053.94 */
	struct stat_acc a = acc_of(three, 3);
	struct stat_value v;

	stat__estimate(&a.total, &a, true, &v);
	cr_expect(v.scaled);
	cr_expect(v.has_ci);
	NEAR(v.value, 3000, 1e-9, "value %f", v.value);
	NEAR(v.running_pct, 50, 1e-9, "running %f%%", v.running_pct);
	NEAR(v.lo, 3000 - 1053.94, 0.01, "lo %f", v.lo);
	NEAR(v.hi, 3000 + 1053.94, 0.01, "hi %f", v.hi);
}

Test(stat_math, an_interval_row_borrows_the_runs_spread)
{
	/* the first read alone: value 1000; var = (1e8)^2 * 0.5 * 2e-4 / 5e7 = 2e4, sd 141.421,
	 * half 4.3027 * 141.421 = 608.49 */
	struct stat_acc a = acc_of(three, 3);
	struct stat_value v;

	stat__estimate(&three[0], &a, true, &v);
	NEAR(v.value, 1000, 1e-9, "value %f", v.value);
	NEAR(v.hi - v.value, 608.49, 0.01, "half %f", v.hi - v.value);
}

Test(stat_math, steady_rate_gives_a_zero_width_interval)
{
	static const struct stat_reading r[] = { { 100, 10, 5 }, { 200, 20, 10 }, { 300, 30, 15 } };
	struct stat_acc a = acc_of(r, 3);
	struct stat_value v;

	stat__estimate(&a.total, &a, true, &v);
	cr_expect(v.has_ci);
	NEAR(v.value, 1200, 1e-9, "value %f", v.value);
	NEAR(v.hi - v.lo, 0, 1e-6, "width %g", v.hi - v.lo);
}

Test(stat_math, one_read_has_no_interval_and_no_scale_has_none)
{
	struct stat_acc one = acc_of(three, 1), all = acc_of(three, 3);
	struct stat_value v;

	stat__estimate(&one.total, &one, true, &v);
	cr_expect(v.scaled);
	cr_expect_not(v.has_ci, "one read says nothing of the spread");
	NEAR(v.value, 1000, 1e-9, "value %f", v.value);
	stat__estimate(&all.total, &all, false, &v);
	cr_expect_not(v.scaled);
	cr_expect_not(v.has_ci);
	cr_expect_eq(v.value, 1500, "--no-scale: the raw count");
	NEAR(v.running_pct, 50, 1e-9, "the share still shown");
}

Test(stat_math, the_interval_covers_at_the_stated_rate)
{
	/* simulated multiplexing under the model: 40 reads, each of 25 slices with rates drawn
	 * around a mean, the counter running in a random half of them; 2000 trials, and the 95%
	 * interval must cover the true count in 95% of them (binomial sd 0.49%: 93.5..96.5) */
	unsigned seed = 12345;
	int covered = 0, trials = 2000;

	for (int t = 0; t < trials; t++) {
		struct stat_acc a = { 0 };
		double truth = 0;
		struct stat_value v;

		for (int k = 0; k < 40; k++) {
			struct stat_reading r = { 0, 0, 0 };

			for (int s = 0; s < 25; s++) {
				double u1 = (rand_r(&seed) + 1.0) / (RAND_MAX + 2.0);
				double u2 = (rand_r(&seed) + 1.0) / (RAND_MAX + 2.0);
				double z = sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
				double n = fmax(0, 1000 + 300 * z);	/* events in a 1 ms slice */

				truth += n;
				r.enabled += 1000000;
				if (rand_r(&seed) & 1) {
					r.running += 1000000;
					r.count += (u64)llround(n);
				}
			}
			stat_acc__add(&a, &r);
		}
		stat__estimate(&a.total, &a, true, &v);
		covered += v.lo <= truth && truth <= v.hi;
	}
	cr_expect(covered >= trials * 0.935 && covered <= trials * 0.965,
		  "covered %d of %d", covered, trials);
}

/* what the interval does not cover, said in docs/stat.md: a program whose phases keep step with
 * the rotation (here the counter runs exactly in the busy half of each read) is extrapolated
 * with a bias that no spread between reads reveals */
Test(stat_math, phases_in_step_with_the_rotation_escape_the_interval)
{
	int covered = 0, trials = 200;
	unsigned seed = 7;

	for (int t = 0; t < trials; t++) {
		struct stat_acc a = { 0 };
		double truth = 0;
		struct stat_value v;

		for (int k = 0; k < 40; k++) {
			struct stat_reading r = { 0, 0, 0 };

			for (int s = 0; s < 25; s++) {
				bool busy = s % 2 == 0;
				double n = (busy ? 1500 : 500) + rand_r(&seed) % 100;

				truth += n;
				r.enabled += 1000000;
				if (busy) {
					r.running += 1000000;
					r.count += (u64)n;
				}
			}
			stat_acc__add(&a, &r);
		}
		stat__estimate(&a.total, &a, true, &v);
		covered += v.lo <= truth && truth <= v.hi;
	}
	cr_expect_eq(covered, 0, "covered %d of %d", covered, trials);
}

Test(stat_math, t_quantiles)
{
	NEAR(stat__t95(1), 12.7062, 1e-4, "df 1");
	NEAR(stat__t95(4), 2.7764, 1e-4, "df 4");
	NEAR(stat__t95(30), 2.0423, 1e-4, "df 30");
	NEAR(stat__t95(40), 2.0211, 2e-4, "df 40: %f", stat__t95(40));
	NEAR(stat__t95(120), 1.9799, 2e-4, "df 120: %f", stat__t95(120));
	NEAR(stat__t95(1000000), 1.96, 1e-3, "df large");
	cr_expect(isinf(stat__t95(0)));
}

Test(stat_math, repeats)
{
	/* 10, 12, 14: mean 12, sd 2, half 4.3027 * 2 / sqrt(3) = 4.96833 */
	struct stat_runs s = { 0 }, big = { 0 }, one = { 0 };

	stat_runs__add(&s, 10);
	stat_runs__add(&s, 12);
	stat_runs__add(&s, 14);
	NEAR(s.mean, 12, 1e-12, "mean");
	NEAR(stat_runs__stddev(&s), 2, 1e-12, "sd");
	NEAR(stat_runs__ci95(&s), 4.96833, 1e-5, "half %f", stat_runs__ci95(&s));
	/* large counts: a sum of squares would lose the spread entirely */
	stat_runs__add(&big, 1e15 + 1);
	stat_runs__add(&big, 1e15 + 2);
	stat_runs__add(&big, 1e15 + 3);
	NEAR(stat_runs__stddev(&big), 1, 1e-6, "sd of large counts %f", stat_runs__stddev(&big));
	stat_runs__add(&one, 5);
	cr_expect_eq(stat_runs__stddev(&one), 0);
	cr_expect_eq(stat_runs__ci95(&one), 0);
}

Test(stat_math, metrics_and_their_intervals)
{
	const struct stat_metric_def *ipc = stat_metric__find(PERF_TYPE_HARDWARE,
							      PERF_COUNT_HW_INSTRUCTIONS);
	const struct stat_metric_def *miss = stat_metric__find(PERF_TYPE_HARDWARE,
							       PERF_COUNT_HW_BRANCH_MISSES);
	struct stat_value insn = { .counted = true, .value = 3000, .scaled = true, .has_ci = true,
				   .lo = 1946.06, .hi = 4053.94 };
	struct stat_value cyc = { .counted = true, .value = 1000 };
	struct stat_value cyc_ci = { .counted = true, .value = 1000, .has_ci = true, .lo = 900,
				     .hi = 1100 };
	struct stat_value zero = { .counted = true, .value = 0 };
	struct stat_metric m;

	cr_assert(ipc && miss);
	cr_expect_str_eq(ipc->name, "insn per cycle");
	cr_expect_eq(ipc->base, STAT_BASE_EVENT);
	cr_expect_eq(ipc->base_config, PERF_COUNT_HW_CPU_CYCLES);
	cr_expect_str_eq(miss->unit, "%");
	cr_expect_null(stat_metric__find(PERF_TYPE_RAW, 0x1c4), "a raw event has no metric");
	/* 3000 / 1000 = 3; relative half 1053.94 / 3000 = 0.351313 */
	stat_metric__ratio(ipc, &insn, &cyc, &m);
	cr_expect_eq(m.def, ipc);
	NEAR(m.value, 3, 1e-12, "ipc");
	cr_expect(m.has_ci);
	NEAR(m.hi, 3 * 1.351313, 1e-5, "hi %f", m.hi);
	/* both uncertain: sqrt(0.351313^2 + 0.1^2) = 0.365268 */
	stat_metric__ratio(ipc, &insn, &cyc_ci, &m);
	NEAR(m.hi, 3 * 1.365268, 1e-5, "hi %f", m.hi);
	/* branch-miss rate in % */
	stat_metric__ratio(miss, &cyc, &(struct stat_value){ .counted = true, .value = 50000 }, &m);
	NEAR(m.value, 2.0, 1e-12, "miss rate %f", m.value);
	cr_expect_not(m.has_ci);
	stat_metric__ratio(ipc, &insn, &zero, &m);
	cr_expect_null(m.def, "no cycles: no IPC");
}
