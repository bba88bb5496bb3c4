/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What changed between two profiles: a share (samples of a key or frame over all samples)
 * in BASE and in NEW, the change with its 95% interval, the test of "no change", and the
 * correction for testing many keys at once; and hsbpf diff's table. */
#ifndef HSBPF_PROFILE_DIFF_H
#define HSBPF_PROFILE_DIFF_H

#include <stdio.h>
#include "hist.h"
#include "profile.h"
#include "symbolizer.h"

/* the false discovery rate the table and the flame graph's colours allow */
#define DIFF_FDR 0.05

enum diff_test { DIFF_TEST_NONE, DIFF_TEST_Z, DIFF_TEST_FISHER };

struct diff_stat {
	u64 a, na;		/* BASE: samples of the key, of the profile */
	u64 b, nb;		/* NEW */
	double pa, pb;		/* shares */
	double delta, lo, hi;	/* pb - pa with its 95% interval (Newcombe's, from Wilson's) */
	double p;		/* two-sided p-value of "the share did not change" */
	double q;		/* p adjusted (Benjamini-Hochberg) */
	enum diff_test test;
	bool significant;	/* q < DIFF_FDR */
};

/* Two shares compared: the two-proportion z-test (pooled), or Fisher's exact test when an
 * expected count of the 2x2 table is under 5, where the normal approximation is poor */
void profile_diff__test(u64 a, u64 na, u64 b, u64 nb, struct diff_stat *s);
/* Benjamini-Hochberg: each p[i] adjusted into q[i] (q may be p); 0 or -ENOMEM */
int profile_diff__adjust(const double *p, double *q, size_t n);
/* adjust the stats' p-values together and mark the significant ones; 0 or -ENOMEM */
int profile_diff__correct(struct diff_stat *s, size_t n);
const char *profile_diff__test_name(enum diff_test t);
/* the legend's words: which tests, which correction */
extern const char profile_diff__method[];

/* two profiles can be compared when they count the same event in the same unit; else 0
 * with a warning under force, or -EINVAL after saying why */
int profile_diff__check(const struct profile *base, const char *base_name,
			const struct profile *new, const char *new_name, bool force);

/* hsbpf diff's rows: the keys of both profiles (their flat samples), each with its stat */
struct diff_row {
	char *key;		/* the keys' fields, for matching */
	char *label;		/* what the table shows */
	struct diff_stat st;
};
struct diff_table {
	struct diff_row *rows;
	size_t nr, cap;
	u64 total[2];
};
/* group both profiles by keys and test each row; 0 or -errno after saying so */
int profile_diff__table(struct diff_table *t, const struct profile *base, const struct profile *new,
			const enum sort_key *keys, int nr_keys);
/* most significant first: by q, then by |delta| */
void profile_diff__sort(struct diff_table *t);
/* limit 0: every row; all: also the rows that did not change significantly */
void profile_diff__print(const struct diff_table *t, const char *base_name, const char *new_name,
			 size_t limit, bool all, FILE *out);
void profile_diff__free(struct diff_table *t);

#endif /* HSBPF_PROFILE_DIFF_H */
