/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What changed between two profiles: a rate (samples of a key or frame per second of the
 * recording, or per unit of work), a share (over all samples), or for sampled allocations an
 * estimate (bytes or objects, docs/memory.md) in BASE and in NEW, the
 * change with its 95% interval, the test of "no change", and the correction for testing many
 * keys at once; one comparison for hsbpf diff's table and flamegraph --diff's colours. */
#ifndef HSBPF_PROFILE_DIFF_H
#define HSBPF_PROFILE_DIFF_H

#include <stdio.h>
#include "report/hist.h"
#include "profile/profile.h"
#include "symbols/symbolizer.h"

/* the false discovery rate the table and the flame graph's colours allow */
#define DIFF_FDR 0.05

enum diff_test { DIFF_TEST_NONE, DIFF_TEST_Z, DIFF_TEST_FISHER, DIFF_TEST_BINOMIAL };

/* what is compared: rates answer "did this key take more time (per second, or per unit of
 * work)"; shares "did it take a larger part of the samples", which moves for every key when
 * one grows */
enum diff_compare { DIFF_RATES, DIFF_SHARES, DIFF_ESTIMATES };

/* how two profiles are compared: the question, and each side's exposure for rates (seconds
 * of recording, or the units of work the user gave, scaled by the periods so that counts are
 * in BASE's samples) */
struct diff_basis {
	enum diff_compare compare;
	bool work;		/* exposure in units of work, not seconds */
	double exposure[2];
	/* estimates: of sampled allocations, in the view (alloc_space...) both sides show */
	char view[16];
};

struct diff_stat {
	u64 a, na;		/* BASE: samples of the key, of the profile */
	u64 b, nb;		/* NEW */
	double pa, pb;		/* shares, or rates: samples per unit of exposure */
	double delta, lo, hi;	/* pb - pa with its 95% interval (shares: Newcombe's, from
				 * Wilson's; rates: the Poisson difference's normal interval) */
	double p;		/* two-sided p-value of "the share (rate) did not change" */
	double q;		/* p adjusted (Benjamini-Hochberg) */
	enum diff_test test;
	bool significant;	/* q < DIFF_FDR */
};

/* Two shares compared: the two-proportion z-test (pooled), or Fisher's exact test when an
 * expected count of the 2x2 table is under 5, where the normal approximation is poor */
void profile_diff__test(u64 a, u64 na, u64 b, u64 nb, struct diff_stat *s);
/* Two Poisson rates compared, a samples in exposure ea against b in eb: given a + b, b is
 * binomial with p = eb / (ea + eb) when the rates are equal; the z-test of that binomial, or
 * the exact binomial test when an expected count is under 5 */
void profile_diff__test_rates(u64 a, double ea, u64 b, double eb, struct diff_stat *s);
/* Two estimates compared, a with variance va against b with vb (sampled allocations: each
 * sampled allocation weighs what it stands for, and a key's estimate is near normal): the
 * difference b - a, its 95% interval b - a +- 1.96 sqrt(va + vb), and the z-test of "no
 * change" */
void profile_diff__test_estimates(u64 a, double va, u64 b, double vb, struct diff_stat *s);
/* THE comparison, for diff and flamegraph --diff alike: a of na samples in BASE against b of
 * nb in NEW, by the basis' question */
void profile_diff__compare(const struct diff_basis *basis, u64 a, u64 na, u64 b, u64 nb,
			   struct diff_stat *s);
/* the basis of comparing base with new: work NULL, rates per second of their durations; else
 * per work[0] and work[1] units of work; estimates, none (the caller names basis->view). 0,
 * or -EINVAL after saying why (no duration) */
int profile_diff__basis(struct diff_basis *basis, enum diff_compare c, const struct profile *base,
			const char *base_name, const struct profile *new, const char *new_name,
			const double *work);
/* "rates" or "shares" into c; 0 or -EINVAL */
int profile_diff__parse_compare(const char *s, enum diff_compare *c);
/* --work's "B,N": two positive numbers into work[0], work[1]; 0 or -EINVAL */
int profile_diff__parse_work(const char *s, double *work);
/* one line saying what was compared, for headers and legends */
const char *profile_diff__question(const struct diff_basis *basis);
/* Benjamini-Hochberg: each p[i] adjusted into q[i] (q may be p); 0 or -ENOMEM */
int profile_diff__adjust(const double *p, double *q, size_t n);
/* adjust the stats' p-values together and mark the significant ones; 0 or -ENOMEM */
int profile_diff__correct(struct diff_stat *s, size_t n);
const char *profile_diff__test_name(enum diff_test t);
/* the legend's words: which tests, which correction */
const char *profile_diff__method(const struct diff_basis *basis);

/* two profiles can be compared when they count the same event in the same unit; else 0
 * with a warning under force, or -EINVAL after saying why */
int profile_diff__check(const struct profile *base, const char *base_name,
			const struct profile *new, const char *new_name, bool force);

/* hsbpf diff's rows: the keys of both profiles (their flat samples), each with its stat */
struct diff_row {
	char *key;		/* the keys' fields, for matching */
	char *label;		/* what the table shows */
	struct diff_stat st;
	double var[2];		/* estimates: the variance of each side's (BASE, NEW) */
};
struct diff_table {
	struct diff_row *rows;
	size_t nr, cap;
	u64 total[2];
	struct diff_basis basis;
};
/* group both profiles by keys and test each row by basis (estimates: the profiles' counts are
 * the view's estimates and their weights the estimates' variances, memory__select_variance);
 * 0 or -errno after saying so */
int profile_diff__table(struct diff_table *t, const struct profile *base, const struct profile *new,
			const enum sort_key *keys, int nr_keys, const struct diff_basis *basis);
/* most significant first: by q, then by |delta| */
void profile_diff__sort(struct diff_table *t);
/* limit 0: every row; all: also the rows that did not change significantly */
void profile_diff__print(const struct diff_table *t, const char *base_name, const char *new_name,
			 size_t limit, bool all, FILE *out);
void profile_diff__free(struct diff_table *t);

#endif /* HSBPF_PROFILE_DIFF_H */
