// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* stat_report: the hardware paths this machine cannot run (no PMU), on recorded readings of a
 * multiplexed run: three groups of two on four counters, read every 100 ms as read(2)
 * returns them (cumulative count, time enabled, time running). Scaling, groups, metrics and
 * repeats against answers worked out by hand. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>
#include "stat/stat_report.h"

#define NEAR(a, b, tol, ...) cr_expect(fabs((double)(a) - (double)(b)) <= (tol), __VA_ARGS__)

enum { CYC, INSN, BR, BRMISS, CREF, CMISS, RAW, TASK, STALL, NR };

static const char events[] = "{cycles,instructions},{branches,branch-misses},"
			     "{cache-references,cache-misses},r01c4,task-clock,"
			     "stalled-cycles-frontend";

/* cumulative readings at the 4 reads, per event; a group's events share their times. The
 * cycles group ran 60, 70, 70, 60 ms of each 100; branches 70, 60, 60, 70; caches 60 each;
 * r01c4 never got a counter; task-clock is software (always running); stalled-cycles was
 * not supported (its readings are never looked at) */
static const struct stat_reading recorded[4][NR] = {
	{ { 120000000, 100000000, 60000000 }, { 240000000, 100000000, 60000000 },
	  { 70000000, 100000000, 70000000 }, { 1400000, 100000000, 70000000 },
	  { 6000000, 100000000, 60000000 }, { 600000, 100000000, 60000000 },
	  { 0, 100000000, 0 }, { 100000000, 100000000, 100000000 } },
	{ { 260000000, 200000000, 130000000 }, { 450000000, 200000000, 130000000 },
	  { 130000000, 200000000, 130000000 }, { 2600000, 200000000, 130000000 },
	  { 12000000, 200000000, 120000000 }, { 1500000, 200000000, 120000000 },
	  { 0, 200000000, 0 }, { 200000000, 200000000, 200000000 } },
	{ { 400000000, 300000000, 200000000 }, { 730000000, 300000000, 200000000 },
	  { 190000000, 300000000, 190000000 }, { 3800000, 300000000, 190000000 },
	  { 18000000, 300000000, 180000000 }, { 1800000, 300000000, 180000000 },
	  { 0, 300000000, 0 }, { 300000000, 300000000, 300000000 } },
	{ { 520000000, 400000000, 260000000 }, { 910000000, 400000000, 260000000 },
	  { 260000000, 400000000, 260000000 }, { 5200000, 400000000, 260000000 },
	  { 24000000, 400000000, 240000000 }, { 2400000, 400000000, 240000000 },
	  { 0, 400000000, 0 }, { 400000000, 400000000, 400000000 } },
};

static struct stat_events evs;
static enum stat_counter_status status[NR];
static struct stat_acc acc[NR];
static struct stat_reading totals[NR];

static void setup(void)
{
	memset(&evs, 0, sizeof(evs));
	memset(acc, 0, sizeof(acc));
	cr_assert_eq(stat_events__parse(&evs, events), 0);
	cr_assert_eq(evs.n, NR);
	for (int e = 0; e < NR; e++)
		status[e] = e == STALL ? STAT_COUNTER_NOT_SUPPORTED : STAT_COUNTER_OK;
	/* the deltas between reads, as stat.c takes them */
	for (int k = 0; k < 4; k++)
		for (int e = 0; e < STALL; e++) {
			const struct stat_reading *now = &recorded[k][e];
			struct stat_reading d = *now;

			if (k) {
				d.count -= recorded[k - 1][e].count;
				d.enabled -= recorded[k - 1][e].enabled;
				d.running -= recorded[k - 1][e].running;
			}
			stat_acc__add(&acc[e], &d);
		}
	for (int e = 0; e < NR; e++)
		totals[e] = acc[e].total;
}

static void teardown(void)
{
	stat_events__free(&evs);
}

TestSuite(stat_report, .init = setup, .fini = teardown);

Test(stat_report, multiplexed_counts_are_scaled_with_intervals)
{
	struct stat_row rows[NR];

	stat_report__rows(&evs, status, totals, acc, 400000000, false, rows);
	/* cycles: 520e6 over f = 260/400 = 0.65 -> 800e6; its rate was steady (2 per ns): an
	 * interval of zero width */
	cr_expect_eq(rows[CYC].status, STAT_ROW_COUNTED);
	cr_expect(rows[CYC].v.scaled);
	NEAR(rows[CYC].v.value, 800e6, 1e-3, "cycles %f", rows[CYC].v.value);
	NEAR(rows[CYC].v.running_pct, 65, 1e-9, "cycles ran 65%%");
	NEAR(rows[CYC].v.hi - rows[CYC].v.lo, 0, 1, "steady rate");
	/* instructions: 910e6 / 0.65 = 1400e6. Rates 4, 3, 4, 3 per ns around 3.5:
	 * m2 = 260e6 * 0.25 = 65e6, s2 = 65e6 / 3; var = (400e6)^2 * 0.35 * s2 / 260e6
	 * = 4.66667e15, sd 6.83130e7, half = t(3) 3.1824 * sd = 2.17400e8 */
	NEAR(rows[INSN].v.value, 1400e6, 1e-3, "instructions %f", rows[INSN].v.value);
	NEAR(rows[INSN].v.hi - rows[INSN].v.value, 2.17400e8, 2e4, "half %f",
	     rows[INSN].v.hi - rows[INSN].v.value);
	/* branches: 260e6 / 0.65 = 400e6; misses 5.2e6 / 0.65 = 8e6 */
	NEAR(rows[BR].v.value, 400e6, 1e-3, "branches");
	NEAR(rows[BRMISS].v.value, 8e6, 1e-6, "branch-misses");
	/* caches: f = 0.6; 24e6 -> 40e6, 2.4e6 -> 4e6 */
	NEAR(rows[CREF].v.value, 40e6, 1e-6, "cache-references");
	NEAR(rows[CMISS].v.value, 4e6, 1e-6, "cache-misses");
	cr_expect_eq(rows[RAW].status, STAT_ROW_NOT_COUNTED, "r01c4 never got a counter");
	cr_expect_eq(rows[STALL].status, STAT_ROW_NOT_SUPPORTED);
	/* software: never multiplexed */
	cr_expect_not(rows[TASK].v.scaled);
	cr_expect_not(rows[TASK].v.has_ci);
	NEAR(rows[TASK].v.value, 400e6, 1e-6, "task-clock");
}

Test(stat_report, derived_metrics)
{
	struct stat_row rows[NR];

	stat_report__rows(&evs, status, totals, acc, 400000000, false, rows);
	/* one group, one scale: the IPC is the raw ratio 910 / 520 = 1.75; its interval is the
	 * instructions' (relative 2.174e8 / 1.4e9 = 0.155286), cycles having none */
	cr_assert(rows[INSN].metric.def);
	cr_expect_str_eq(rows[INSN].metric.def->name, "insn per cycle");
	NEAR(rows[INSN].metric.value, 1.75, 1e-12, "ipc %f", rows[INSN].metric.value);
	NEAR(rows[INSN].metric.hi, 1.75 * 1.155286, 1e-4, "ipc hi %f", rows[INSN].metric.hi);
	cr_expect_str_eq(rows[BRMISS].metric.def->name, "of all branches");
	NEAR(rows[BRMISS].metric.value, 2.0, 1e-12, "branch-miss rate %f", rows[BRMISS].metric.value);
	cr_expect_str_eq(rows[CMISS].metric.def->name, "of all cache refs");
	NEAR(rows[CMISS].metric.value, 10.0, 1e-12, "cache-miss rate %f", rows[CMISS].metric.value);
	/* 800e6 cycles in 400e6 ns of task-clock: 2 GHz; 400 ms of CPU in 400 ms: 1 CPU */
	cr_expect_str_eq(rows[CYC].metric.def->name, "GHz");
	NEAR(rows[CYC].metric.value, 2.0, 1e-12, "GHz %f", rows[CYC].metric.value);
	cr_expect_str_eq(rows[TASK].metric.def->name, "CPUs utilized");
	NEAR(rows[TASK].metric.value, 1.0, 1e-12, "CPUs %f", rows[TASK].metric.value);
	cr_expect_null(rows[RAW].metric.def);
	cr_expect_null(rows[CREF].metric.def, "cache-references has no metric of its own");
}

Test(stat_report, no_scale_gives_raw_counts)
{
	struct stat_row rows[NR];

	stat_report__rows(&evs, status, totals, acc, 400000000, true, rows);
	cr_expect_eq(rows[CYC].v.value, 520e6);
	cr_expect_not(rows[CYC].v.scaled);
	cr_expect_not(rows[INSN].v.has_ci);
	NEAR(rows[INSN].v.running_pct, 65, 1e-9, "the share is still told");
	/* a group's ratio does not depend on scaling */
	NEAR(rows[INSN].metric.value, 1.75, 1e-12, "ipc");
	/* but across groups it does: misses 5.2e6 / 260e6 = 2% either way here, as both
	 * groups ran 65% */
	NEAR(rows[BRMISS].metric.value, 2.0, 1e-12, "branch-miss rate");
}

Test(stat_report, an_interval_row)
{
	struct stat_reading third[NR];
	struct stat_row rows[NR];

	/* the third read alone: cycles 140e6 in 70 of 100 ms -> 200e6; instructions 280e6 ->
	 * 400e6, its interval from the run's spread: var = (1e8)^2 * 0.3 * s2 / 7e7, s2 =
	 * 65e6 / 3 -> 9.28571e14, half 3.1824 * 3.04725e7 = 9.69756e7 */
	for (int e = 0; e < NR; e++) {
		third[e] = recorded[2][e];
		third[e].count -= recorded[1][e].count;
		third[e].enabled -= recorded[1][e].enabled;
		third[e].running -= recorded[1][e].running;
	}
	stat_report__rows(&evs, status, third, acc, 100000000, false, rows);
	NEAR(rows[CYC].v.value, 200e6, 1e-3, "cycles");
	NEAR(rows[INSN].v.value, 400e6, 1e-3, "instructions");
	NEAR(rows[INSN].v.hi - rows[INSN].v.value, 9.69756e7, 1e4, "half %f",
	     rows[INSN].v.hi - rows[INSN].v.value);
	NEAR(rows[INSN].metric.value, 2.0, 1e-12, "ipc of the interval");
	NEAR(rows[TASK].metric.value, 1.0, 1e-12, "100 ms of CPU in 100 ms");
}

/* a run whose sets hold these per-run totals of task-clock (ns, never multiplexed) */
static void fake_run(struct stat_run *run, struct stat_set *sets, struct stat_acc (*accs)[NR],
		     const u64 *ns, const u64 *ids, size_t nr_sets)
{
	memset(run, 0, sizeof(*run));
	run->nr_events = NR;
	memcpy(run->status, status, sizeof(status));
	run->elapsed_ns = 1000000000;
	run->sets = sets;
	run->nr_sets = nr_sets;
	for (size_t i = 0; i < nr_sets; i++) {
		memset(accs[i], 0, sizeof(accs[i]));
		sets[i] = (struct stat_set){ .kind = ids[i] ? STAT_SET_CGROUP : STAT_SET_TARGET,
					     .id = ids[i], .name = ids[i] ? "/box" : NULL,
					     .acc = accs[i] };
		stat_acc__add(&accs[i][TASK], &(struct stat_reading){ ns[i], ns[i], ns[i] });
	}
}

Test(stat_report, repeats_give_mean_deviation_and_interval)
{
	/* task-clock 400, 410, 390 ms: mean 400, sd 10, half 4.3027 * 10 / sqrt(3) = 24.8417;
	 * the cgroup /box only in the first two runs, 100 and 200 ms: with the third's zero,
	 * mean 100, sd 100 */
	static const u64 ns[3][2] = { { 400000000, 100000000 }, { 410000000, 200000000 },
				      { 390000000, 0 } };
	static const u64 ids[2] = { 0, 42 };
	struct stat_repeats *rp = stat_repeats__new(&evs, false);
	struct stat_acc accs[2][NR];
	struct stat_set sets[2];
	struct stat_row rows[NR], elapsed;
	struct stat_run run;
	size_t order[2];

	cr_assert(rp);
	for (int r = 0; r < 3; r++) {
		fake_run(&run, sets, accs, ns[r], ids, r < 2 ? 2 : 1);
		cr_assert_eq(stat_repeats__add(rp, &run), 0);
	}
	cr_assert_eq(stat_repeats__runs(rp), 3);
	cr_assert_eq(stat_repeats__nr_sets(rp), 2);
	stat_repeats__order(rp, true, order);
	cr_expect_eq(order[0], 1, "cgroups first, the target after");
	stat_repeats__rows(rp, 0, rows);
	NEAR(rows[TASK].v.value, 400e6, 1e-3, "mean %f", rows[TASK].v.value);
	NEAR(rows[TASK].stddev, 10e6, 1e-3, "sd %f", rows[TASK].stddev);
	NEAR(rows[TASK].v.hi - rows[TASK].v.value, 24.8417e6, 100, "half %f",
	     rows[TASK].v.hi - rows[TASK].v.value);
	cr_expect_eq(rows[TASK].runs, 3);
	cr_expect_eq(rows[STALL].status, STAT_ROW_NOT_SUPPORTED);
	NEAR(rows[TASK].metric.value, 0.4, 1e-12, "CPUs utilized, mean of the runs'");
	stat_repeats__rows(rp, 1, rows);
	cr_expect_str_eq(rows[TASK].cgroup, "/box");
	NEAR(rows[TASK].v.value, 100e6, 1e-3, "absent run counted as zero: %f", rows[TASK].v.value);
	NEAR(rows[TASK].stddev, 100e6, 1e-3, "sd %f", rows[TASK].stddev);
	stat_repeats__elapsed(rp, &elapsed);
	NEAR(elapsed.v.value, 1.0, 1e-12, "elapsed");
	cr_expect_eq(elapsed.runs, 3);
	stat_repeats__free(rp);
}

Test(stat_report, one_run_is_shown_as_it_is)
{
	static const u64 ns[1] = { 400000000 }, ids[1] = { 0 };
	struct stat_repeats *rp = stat_repeats__new(&evs, false);
	struct stat_acc accs[1][NR];
	struct stat_set sets[1];
	struct stat_row rows[NR];
	struct stat_run run;

	fake_run(&run, sets, accs, ns, ids, 1);
	cr_assert_eq(stat_repeats__add(rp, &run), 0);
	stat_repeats__rows(rp, 0, rows);
	cr_expect_eq(rows[TASK].runs, 1);
	cr_expect_not(rows[TASK].v.has_ci);
	cr_expect_eq(rows[TASK].stddev, 0);
	cr_expect_eq(rows[CYC].status, STAT_ROW_COUNTED, "never enabled: a zero");
	stat_repeats__free(rp);
}
