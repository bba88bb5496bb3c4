/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The seed papers' experiment: for each workload, one exact truth, then a recording per
 * sampling period and period mode, each scored; a CSV of every metric and gnuplot figures. */
#ifndef HSBPF_EXPERIMENT_H
#define HSBPF_EXPERIMENT_H

#include "metrics.h"
#include "profile/profile.h"
#include "truth.h"

#define EXP_MAX_ARGS 8

struct workload {
	const char *name;
	const char *kind;		/* "kernel" or "real" */
	char *argv[EXP_MAX_ARGS];	/* filled by experiment__workloads */
	const char *libs[2];		/* libraries doing the program's work: file name prefixes */
	char *owned[4];			/* strings of argv this table allocated */
};

void experiment__free_workloads(struct workload *w, int nr);

struct exp_row {
	const char *workload;
	const char *kind;
	const char *mode;
	u64 period_ns;
	struct metrics m;
	bool ok;
};

struct exp_opts {
	const char *dir;		/* outputs */
	const char *set;		/* kernels, real, all */
	u64 periods[16];
	int nr_periods;
	const char *modes[4];
	int nr_modes;
	const char *self;		/* this hsbpf binary */
	const char *workload_dir;	/* built kernels */
	const char *fixture_dir;	/* gen-input */
	bool reuse_truth;
	const char *only;		/* one workload by name, or NULL */
	bool quick;			/* kernels run 1/16 of their work (tests) */
	bool with_perf;			/* also perf record at each period, scored alike */
	bool methods;			/* the sampling methods' table (user/methods.c) instead */
	bool separate_runs;		/* with methods: one emulation per method, not per workload */
	bool python;			/* the real set has python3 too (the stacks experiment) */
	bool stacks;			/* the call-stack collectors' table (stack_exp.c) instead */
};

/* run argv (no shell: paths need no quoting) with stdout and stderr to the files out and
 * errs (NULL: this process's) and, if given, an extra environment entry; its exit status,
 * 128 + N for signal N, or -errno */
int experiment__run_cmd(char *const argv[], const char *env, const char *out, const char *errs);
/* "GLIBC_TUNABLES=..." for native runs to take the routines glibc chose under the collector
 * (malloc'ed), or NULL when the truth recorded none */
char *experiment__tunables_env(const struct truth *t);
/* fills the workload table for opts->set; inputs are generated into opts->dir */
int experiment__workloads(const struct exp_opts *o, struct workload **out, int *nr);
/* run everything, printing progress on stderr; rows in *out */
int experiment__run(const struct exp_opts *o, struct exp_row **out, size_t *nr);
int experiment__write_csv(const struct exp_row *rows, size_t nr, const char *path);
/* the objects a workload is scored on: the program's own code and the libraries that do its
 * work (at most 4); how many */
size_t experiment__objects(const struct workload *w, const struct truth *t, u32 *objs);
/* score a profile on those objects; p is consumed */
int experiment__score(struct profile *p, const struct truth *t, const u32 *objs, size_t nobj,
		      struct metrics *m);
/* gnuplot figures (PNG and SVG) per metric; -ENOENT if gnuplot is missing (reported) */
int experiment__plot(const struct exp_opts *o, const struct exp_row *rows, size_t nr);

#endif
