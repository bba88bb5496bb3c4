// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* metrics: the literature's definitions on small hand-worked examples. */
#include <criterion/criterion.h>
#include <math.h>
#include "accuracy/metrics.h"

#define NEAR(a, b) (fabs((a) - (b)) < 1e-9)

/* Three blocks (NI = 100 instructions):
 *   B0: 10 executions x 5 insns = 50;  B1: 5 x 6 = 30;  B2: 20 x 1 = 20.
 * Samples (NS = 10): IP a in B0: 5; IP b in B1: 3; IP d outside every block: 2.
 *   s = .5 .3 .2, r/NI = .1 .05 0
 *   NRMSE = sqrt(.5*.4^2 + .3*.25^2 + .2*.2^2) / (.5 - 0) = sqrt(.10675) / .5
 *   SC = (10 + 5 + 0) / 100 = .15
 *   sampled levels 1 2 3; block levels among {20, 10, 5} and 0 for "no block": 20->1 10->2
 *   5->3 0->4, so a->2 b->3 d->4; OD = sqrt(.5*1 + .3*1 + .2*1) / 3 = 1/3
 *   estimates at NI/NS = 10 insns per sample: B0 50 (exact 50), B1 30 (30), B2 0 (20):
 *   AE = 20 / 100 = .2 */
Test(metrics, hand_worked_example)
{
	const struct metric_ip ips[] = { { 5, 10, 0 }, { 3, 5, 1 }, { 2, 0, -1 } };
	const struct metric_block blocks[] = { { 10, 5, 50 }, { 5, 6, 30 }, { 20, 1, 0 } };
	struct metrics m;

	cr_assert_eq(metrics__compute(ips, 3, blocks, 3, 100, &m), 0);
	cr_expect_eq(m.ns, 10);
	cr_expect_eq(m.m, 3);
	cr_expect(NEAR(m.nrmse, sqrt(0.10675) / 0.5), "nrmse %.12f", m.nrmse);
	cr_expect(NEAR(m.sc, 0.15), "sc %.12f", m.sc);
	cr_expect(NEAR(m.od, 1.0 / 3), "od %.12f", m.od);
	cr_expect(NEAR(m.ae, 0.2), "ae %.12f", m.ae);
	cr_expect_eq(m.top_blocks, 2, "B0 and B1 of the exact top are in the estimated top");
}

/* equal counts share a level: two IPs with 4 samples are both level 1; blocks with equal
 * counts share a level too */
Test(metrics, ties_share_levels)
{
	const struct metric_ip ips[] = { { 4, 7, 0 }, { 4, 7, 1 }, { 2, 3, 2 } };
	const struct metric_block blocks[] = { { 7, 1, 40 }, { 7, 1, 40 }, { 3, 2, 20 } };
	struct metrics m;

	/* NI = 7 + 7 + 6 = 20; sampled levels 1 1 2; exact levels 7->1 7->1 3->2: OD = 0 */
	cr_assert_eq(metrics__compute(ips, 3, blocks, 3, 20, &m), 0);
	cr_expect(NEAR(m.od, 0), "od %.12f", m.od);
	cr_expect(NEAR(m.sc, 17.0 / 20), "sc %.12f", m.sc);
}

Test(metrics, perfect_profile)
{
	/* samples exactly proportional to instructions, one IP per block */
	const struct metric_ip ips[] = { { 6, 3, 0 }, { 4, 4, 1 } };
	const struct metric_block blocks[] = { { 3, 2, 6 }, { 4, 1, 4 } };
	struct metrics m;

	cr_assert_eq(metrics__compute(ips, 2, blocks, 2, 10, &m), 0);
	cr_expect(NEAR(m.ae, 0));
	cr_expect(NEAR(m.spearman, 1));
	cr_expect_eq(metrics__compute(ips, 0, blocks, 2, 10, &m), -EINVAL, "no samples");
}

Test(metrics, spearman_and_overlap)
{
	const double x[] = { 1, 2, 3, 4 }, up[] = { 10, 20, 30, 40 }, down[] = { 4, 3, 2, 1 };
	const double tx[] = { 1, 1, 2 }, ty[] = { 1, 2, 3 };

	cr_expect(NEAR(metrics__spearman(x, up, 4), 1));
	cr_expect(NEAR(metrics__spearman(x, down, 4), -1));
	/* average ranks: x -> 2.5 2.5 1, y -> 3 2 1: rho = 1.5 / sqrt(1.5 * 2) */
	cr_expect(NEAR(metrics__spearman(tx, ty, 3), 1.5 / sqrt(3)), "%f", metrics__spearman(tx, ty, 3));
	cr_expect_eq(metrics__top_overlap(x, up, 4, 2), 2);
	cr_expect_eq(metrics__top_overlap(x, down, 4, 2), 0);
	cr_expect_eq(metrics__top_overlap(x, up, 4, 10), 4, "fewer items than n");
}
