/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Scoring a profile against the exact truth of the same program: the metrics per object. */
#ifndef HSBPF_EVAL_H
#define HSBPF_EVAL_H

#include <stdio.h>
#include "metrics.h"
#include "profile/profile.h"
#include "symbols/symbolizer.h"
#include "truth.h"

struct eval_result {
	char object[1024];
	char estimator[128];
	double insns_per_sample;
	struct metrics m;
};

/* score the samples that fell in one object of the truth; -ESTALE (reported) when the
 * profile and the truth saw different builds of it, -ENODATA when no sample fell in it */
int eval__object(const struct profile *p, struct symbolizer *sy, const struct truth *t, u32 obj,
		 struct eval_result *res);
/* the same over several objects taken together (a program and the library doing its work) */
int eval__objects(const struct profile *p, struct symbolizer *sy, const struct truth *t,
		  const u32 *objs, size_t nr_objs, struct eval_result *res);
/* the truth's object for the program itself */
u32 eval__program_object(const struct truth *t);

void eval__print(const struct eval_result *res, size_t nr, bool json, FILE *out);

#endif
