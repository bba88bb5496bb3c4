/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Scoring a profile's call stacks against the truth's calling-context tree: the share of
 * complete stacks, the inclusive-time error per function and the error of the caller split
 * of the top functions (formulas in docs/accuracy.md). Two layers: the metrics over
 * functions given as small integers (stack_eval__score, tested on hand-made trees), and their
 * resolution from a profile and a truth (stack_eval__profile). */
#ifndef HSBPF_STACK_EVAL_H
#define HSBPF_STACK_EVAL_H

#include <stdio.h>
#include "profile/profile.h"
#include "truth.h"

#define SE_NO_PARENT UINT32_MAX

/* a node of the exact tree: its function (0 .. nr_funcs - 1) and its own instructions */
struct se_node {
	u32 parent;		/* an earlier node, or SE_NO_PARENT for a root */
	u32 func;
	u64 self;
};

/* a sampled stack: functions from the sampled one outwards, and the sample's weight */
struct se_sample {
	const u32 *funcs;
	u32 nr;			/* 0: the sample has no stack */
	u64 weight;
};

struct se_func {
	u32 func;
	double exact;		/* exact inclusive share, 0..1 */
	double sampled;		/* sampled inclusive share */
	double caller_tv;	/* total variation distance of the caller split, 0..1 */
};

struct stack_score {
	u64 samples, with_stack, complete;	/* weights */
	double complete_share;	/* complete / with_stack */
	double incl_mae;	/* mean |sampled - exact| over the top functions */
	double incl_max;
	double caller_tv_mean;	/* mean caller_tv over the top functions */
	struct se_func *top;	/* the top functions by exact inclusive share */
	size_t nr_top;
};

/* score samples against the tree; caller ids in the split are functions, or nr_funcs for
 * "no caller" (the outermost frame). 0, -ENODATA (no sample with a stack), -ENOMEM */
int stack_eval__score(const struct se_node *nodes, size_t nr_nodes, const struct se_sample *s,
		      size_t nr_samples, u32 nr_funcs, size_t top_n, struct stack_score *out);
void stack_eval__free(struct stack_score *sc);

/* the profile's stacks against the truth's tree, functions named for printing; 0, or -errno
 * after a clear message (no samples, no stacks, a truth without a tree) */
struct stack_eval {
	struct stack_score score;
	char **names;		/* per function id */
	u32 nr_funcs;
	u64 frames_outside;	/* frames in no object of the truth (kernel, vdso, JIT) */
	u64 launchers;		/* samples whose outermost frame, a thread launcher (__clone3,
				 * __clone), was left out: threads are rooted at their first
				 * function on both sides */
	double *cycles;		/* with a cycles reference: per top function, its inclusive
				 * share of cycles; else NULL */
	u64 cycles_samples;
	double cycles_mae, cycles_max;	/* |sampled - cycles| over the top functions */
};

/* flags: STACK_EVAL_FOLD_PARTS counts a function's parts that GCC split off (X.cold,
 * X.part.N, X.part.N.cold) as X, which a tree entering X.cold by a jump has in X's place */
#define STACK_EVAL_FOLD_PARTS	1u

/* cycles (or NULL): a reference for time, the virtual PMU's samples on the timing model's
 * clock with exact stacks (hsbpf truth --vpmu cycles -g) of the same run; each top function
 * then also has its inclusive share of cycles, and the profile its error against those */
int stack_eval__profile(const struct profile *p, const struct truth *t, const struct profile *cycles,
			size_t top_n, unsigned flags, struct stack_eval *out);
void stack_eval__print(const struct stack_eval *se, bool json, FILE *f);
void stack_eval__release(struct stack_eval *se);

#endif
