/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The histogram report and top share: samples grouped by sort keys, with each row's share
 * and its 95% confidence half-width. */
#ifndef HSBPF_HIST_H
#define HSBPF_HIST_H

#include <stdio.h>
#include "profile.h"
#include "symbolizer.h"

struct json_writer;

enum sort_key {
	SORT_SYM,
	SORT_IP,
	SORT_DSO,
	SORT_LINE,
	SORT_PID,
	SORT_COMM,
	SORT_CGROUP,
	SORT_BB,
	SORT_NR,
};

#define HIST_MAX_KEYS 4

struct hist_row {
	u64 count;
	u64 weight;
	const char *sym;
	u64 sym_off;
	const char *dso;
	u64 vaddr;
	const char *file;
	int line;
	u32 pid;
	const char *comm;
	u64 cgroup_id;
	const char *cgroup;
	bool kernel;
	const struct bblock *bb;
	double lbr_execs;	/* from branch stacks, when the profile has them */
	u32 nspid;		/* the PID inside its namespace, 0 in the host's */
	u64 children;		/* with call graphs: samples of the stacks this row is in */
	u32 id;			/* the order it was made in, which sorting does not change */
};

struct hist {
	enum sort_key keys[HIST_MAX_KEYS];
	int nr_keys;
	struct hist_row *rows;
	size_t nr_rows, cap_rows;
	u64 total;		/* samples in all rows */
	u64 total_weight;
	u32 *index;		/* open addressing: row + 1 */
	size_t nr_slots;
	/* block estimates: instructions one sample stands for (0: unknown, estimates in samples) */
	double insns_per_sample;
	const char *scale_source;	/* "period", "truth", or NULL */
	bool has_lbr;			/* block rows carry LBR estimates */
	u32 nspid_of_next;		/* hist__add_profile tells hist__add the namespace PID */
	bool children;			/* rows carry children and sort by them (report --children) */
	/* report's call graphs: text under each row shown, and JSON fields after the rows */
	void (*print_row_extra)(void *ctx, const struct hist *h, size_t row, FILE *out);
	void (*print_json_extra)(void *ctx, struct json_writer *w);
	void *extra_ctx;
	double percent_limit;		/* rows under this share are not shown */
};

/* "sym", "comm,dso", ...: 0, or -EINVAL after saying what is wrong */
int hist__parse_sort(const char *spec, enum sort_key *keys, int *nr_keys);
const char *hist__key_name(enum sort_key k);
/* put k first (moving it there if it is already a key): 0, or -E2BIG when the keys are full */
int hist__prepend_key(enum sort_key *keys, int *nr_keys, enum sort_key k);

struct hist *hist__new(const enum sort_key *keys, int nr_keys);
void hist__free(struct hist *h);
/* cgroup: the sample's cgroup path or NULL */
int hist__add(struct hist *h, const struct profile_sample *s, const struct sym_result *r,
	      const char *cgroup);
/* the same, returning the row's index (made if new), or -ENOMEM */
s64 hist__add_row(struct hist *h, const struct profile_sample *s, const struct sym_result *r,
		  const char *cgroup);
/* the path of a cgroup id in p, or NULL */
const char *hist__cgroup_path(const struct profile *p, u64 id);
/* resolve and add every sample of p */
int hist__add_profile(struct hist *h, const struct profile *p, struct symbolizer *sy);
/* block rows: their executions estimated from the profile's branch stacks */
int hist__add_lbr(struct hist *h, const struct profile *p, struct symbolizer *sy);
/* most samples first; ties in key order, so output is stable */
void hist__sort(struct hist *h);

/* Wilson score interval for count of total at 95%: the half-width, as a fraction */
double hist__ci95(u64 count, u64 total);
/* a row too small to rank: its share is uncertain by half of itself or more */
bool hist__low_confidence(u64 count, u64 total);

enum hist_format { HIST_TEXT, HIST_JSON, HIST_CSV };
int hist__parse_format(const char *s, enum hist_format *fmt);
/* limit 0: all rows */
void hist__print(const struct hist *h, const struct profile *p, enum hist_format fmt,
		 size_t limit, FILE *out);

#endif /* HSBPF_HIST_H */
