/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The LBR estimator: block executions from a profile's fall-through ranges. */
#ifndef HSBPF_LBR_ESTIMATE_H
#define HSBPF_LBR_ESTIMATE_H

#include "symbols/bblock.h"
#include "profile/profile.h"
#include "symbols/symbolizer.h"

/* execs[i] += occurrences of ranges that run through block i of the object at path; a range
 * counts when both ends are in one function of that object. *used: ranges counted */
void lbr_estimate__block_execs(const struct profile *p, struct symbolizer *sy, const char *path,
			       const struct bblock_table *bt, double *execs, u64 *used);
/* executions one range occurrence stands for: the sampled period over the ranges seen (each
 * sample's period of taken branches is represented by its ranges); 1 without samples */
double lbr_estimate__scale(const struct profile *p);

#endif
