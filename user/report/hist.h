/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The rows report and top show: samples grouped by sort keys, each row with its share and
 * its 95% confidence half-width. One set of keys (one object each, user/report/sort_key.c) and one column model, one
 * row model and one filter for both: report adds a profile's samples, top the keys it
 * follows with their (decayed) counts, and each places the rows' columns its own way
 * (user/report/hist_print.c, user/report/top_print.c). */
#ifndef HSBPF_HIST_H
#define HSBPF_HIST_H

#include <stdio.h>
#include "lib/hashidx.h"
#include "lib/output.h"
#include "profile/profile.h"
#include "symbols/symbolizer.h"

struct json_writer;

/* ---- the sort keys (user/report/sort_key.c), one object each (perf's sort_entry): its names, how
 * it groups rows (hash and compare), the columns it shows and its JSON fields; and the one
 * column model report's text/CSV/JSON, top's screen and diff's table lay rows out with. A
 * new key is an enum entry and a table entry in user/report/sort_key.c. ---- */

struct hist;
struct hist_row;
struct cells;		/* a row's columns being made (user/report/sort_key.c) */

enum sort_key {
	SORT_SYM,
	SORT_IP,
	SORT_DSO,
	SORT_LINE,
	SORT_PID,
	SORT_COMM,
	SORT_CGROUP,
	SORT_BB,
	SORT_TID,		/* thread: perf's TID:name */
	SORT_CPU,
	SORT_SRCFILE,		/* perf's: the source file of the sampled line */
	SORT_STATE,		/* off-CPU: the state a block was in (S, D, R, other), or on-CPU */
	SORT_WAKER,		/* off-CPU with --wakers: the thread that woke a block */
	SORT_NR,
};

/* one column of a row: its title, its text, and how views lay it out */
struct cell {
	const char *title;
	char text[256];
	const char *whole;	/* the whole value the text shortens (an object's path: CSV
				 * writes it), or says not (the object of an unknown line): diff
				 * matches rows by it; NULL: the text */
	int width;		/* 0: flexible (report: 24, or the rest when last; top: what the
				 * line leaves) */
	bool right;		/* top aligns it right */
	bool cut_left;		/* a path: cut from the left, keeping its file name */
	bool aside;		/* says where the cell before is (its object): diff brackets it */
	int drop;		/* top drops it when the line is narrow, highest first; 0: never */
};

/* at most, for HIST_MAX_KEYS keys and top's own columns (a block key has six) */
#define CELLS_MAX 32

/* how a view shows the keys' columns; 0: report's (and diff's) */
enum cell_style {
	/* top's: the row's name column is the flexible one, the kernel shows as its object
	 * "[kernel]" rather than "[k] " before the symbol, offsets only when not 0, no block
	 * estimates */
	CELLS_LIVE = 1 << 0,
	/* and after the keys, the process and the container of rows whose keys do not say
	 * them */
	CELLS_OWNER = 1 << 1,
};

struct cells_opts {
	unsigned style;		/* enum cell_style */
	double insns_per_sample;	/* block estimates (report): see struct hist */
	bool has_lbr;
};

struct sort_key_ops {
	const char *name;		/* "sym": --sort's */
	const char *title;		/* what rows grouped by it are: "functions" */
	const char *aliases[3];		/* more names it is known by, in any case */
	/* the key's fields of r hashed into x; a comparison as strcmp's (h: its flags) */
	u64 (*hash)(const struct hist *h, const struct hist_row *r, u64 x);
	int (*cmp)(const struct hist *h, const struct hist_row *a, const struct hist_row *b);
	/* the key's columns for r, added to b (see sort_key__cells) */
	void (*cells)(struct cells *b, const struct hist_row *r);
	/* the key's fields of a JSON row */
	void (*json)(const struct hist *h, const struct hist_row *r, struct json_writer *w);
	/* what top calls a row (sorting by name): NULL, its symbol */
	const char *(*row_name)(const struct hist_row *r);
	bool code;		/* a row is one function's: JSON gives its symbol and object */
	bool own_inlined;	/* a row is one address or line: its inlined chain is its own */
	bool lines;		/* needs source lines (DWARF line tables) */
	bool process;		/* says whose the row is (its process or thread) */
	bool container;		/* says the row's cgroup */
};

/* the key's object; NULL past SORT_NR */
const struct sort_key_ops *sort_key__ops(enum sort_key k);
/* "sym, ip, ...": every key's name, for messages */
const char *sort_key__names(void);
/* whether k is among keys */
bool sort_key__has(const enum sort_key *keys, int nr_keys, enum sort_key k);
/* what top calls r when grouped by k */
const char *sort_key__row_name(enum sort_key k, const struct hist_row *r);
/* THE columns of a row: each key's, in order (an object or a command another key shows is
 * shown once), then what o's style adds; how many (at most CELLS_MAX). r may be a zeroed
 * row, for the titles alone */
int sort_key__cells(const enum sort_key *keys, int nr_keys, const struct cells_opts *o,
		    const struct hist_row *r, struct cell *c);

/* ---- rows ---- */

#define HIST_MAX_KEYS 4

/* what rows are made of: one resolved sample (report), or one key with its count so far
 * (top) */
struct hist_sample {
	u32 pid;
	u32 nspid;		/* the PID inside its namespace, 0 in the host's */
	u64 cgroup_id;
	const char *cgroup;	/* the cgroup's path, or NULL when unknown */
	const char *container;	/* what the caller calls the cgroup (top's label), or NULL */
	double count;		/* samples */
	u64 weight;
	u64 blocks;		/* a --switch-sample profile's: the off-CPU blocks behind the count */
	u32 tid;		/* 0 when not recorded */
	u32 cpu;
	u32 state;		/* off-CPU time's HSBPF_OFFCPU_*, 0 for a sample on the CPU */
	u32 waker;		/* record --wakers: the thread that woke the block, 0 for none */
	const char *waker_comm;	/* ... its name, or NULL */
	struct sym_result r;	/* r.comm: the thread's name when it has one */
	/* top --memory: the count's variance as an estimate, and the count at top's first
	 * interval (a live set's growth is count - first) */
	double var, first;
};

/* which samples make rows; a zeroed filter takes every one */
struct hist_filter {
	u32 pid;		/* 0: every process */
	bool by_cgroup;		/* only cgroup_id's samples (0 is one: "no cgroup v2") */
	u64 cgroup_id;
	const char *text;	/* a substring, in any case, of the symbol, the object's file
				 * name, the command or the container; NULL: any */
};

struct hist_row {
	double count;		/* samples; fractional in top's decay mode */
	u64 weight;
	u64 blocks;		/* a --switch-sample profile's off-CPU blocks: the interval's */
	/* the key fields, and for the rest the row's first sample */
	const char *sym;
	u64 sym_off;
	const char *dso;
	u64 vaddr;		/* ELF address of user code, the address itself in the kernel */
	const char *file;
	int line;
	u32 pid;
	u32 nspid;
	u32 tid;
	u32 cpu;
	u32 state;
	u32 waker;
	const char *waker_comm;
	const char *comm;
	u64 cgroup_id;
	const char *cgroup;
	const char *container;
	bool kernel;
	const struct bblock *bb;
	const struct inline_frame *inl;	/* functions inlined at the row's first sample */
	int nr_inl;
	/* the row holds samples of several processes, commands, cgroups */
	bool many_pids, many_comms, many_cgroups;
	double var, first;	/* top --memory's (struct hist_sample), summed */
	double lbr_execs;	/* from branch stacks, when the profile has them */
	u64 children;		/* with call graphs: samples of the stacks this row is in */
	u32 id;			/* the order it was made in, which sorting does not change */
};

struct hist {
	enum sort_key keys[HIST_MAX_KEYS];
	int nr_keys;
	struct hist_filter filter;
	/* unresolved code ([unknown] symbol or object) makes a row per process under the sym
	 * and ip keys, rather than one for all (top shows the process beside it) */
	bool unknown_per_process;
	/* every string of the samples is interned (one pointer per text): keys hash by
	 * pointer (top, which groups every key it follows each refresh) */
	bool interned;
	struct hist_row *rows;
	size_t nr_rows, cap_rows;
	double total;		/* samples in all rows */
	u64 total_weight;
	struct hashidx idx;	/* the rows by their keys */
	/* block estimates: instructions one sample stands for (0: unknown, estimates in samples) */
	double insns_per_sample;
	const char *scale_source;	/* "period", "truth", or NULL */
	bool has_lbr;			/* block rows carry LBR estimates */
	bool children;			/* rows carry children and sort by them (report --children) */
	bool show_nr;			/* with children: a Samples column too (report -n) */
	/* report's call graphs: text under each row shown, and JSON fields after the rows */
	void (*print_row_extra)(void *ctx, const struct hist *h, size_t row, FILE *out);
	void (*print_json_extra)(void *ctx, struct json_writer *w);
	void *extra_ctx;
	double percent_limit;		/* rows under this share are not shown */
};

/* one key by its name ("sym") or by what a view of it shows ("functions", "processes"), in
 * any case: 0, or -EINVAL without a word (the caller knows the option) */
int hist__parse_key(const char *name, enum sort_key *k);
/* "sym", "comm,dso", ...: 0, or -EINVAL after saying what is wrong */
int hist__parse_sort(const char *spec, enum sort_key *keys, int *nr_keys);
/* "sym" */
const char *hist__key_name(enum sort_key k);
/* what rows grouped by the key are: "functions" */
const char *hist__key_title(enum sort_key k);
/* put k first (moving it there if it is already a key): 0, or -E2BIG when the keys are full */
int hist__prepend_key(enum sort_key *keys, int *nr_keys, enum sort_key k);

struct hist *hist__new(const enum sort_key *keys, int nr_keys);
/* no rows, grouped by other keys from now on; the memory, the filter and the flags stay */
void hist__reset(struct hist *h, const enum sort_key *keys, int nr_keys);
void hist__free(struct hist *h);

/* what the filter decides before the sample is resolved (its process, its cgroup): a caller
 * that resolves lazily (top) asks first */
bool hist_filter__wants(const struct hist_filter *f, const struct hist_sample *s);

/* add s to its row, unless the filter refuses it; 0 or -ENOMEM */
int hist__add(struct hist *h, const struct hist_sample *s);
/* the same, returning the row's index (made if new): -ENOENT when the filter refuses s,
 * -ENOMEM */
s64 hist__add_row(struct hist *h, const struct hist_sample *s);
/* s's counts into row pos (found by the caller for s's keys) as hist__add_row adds them:
 * pos */
s64 hist__add_to_row(struct hist *h, s64 pos, const struct hist_sample *s);
/* whether a sample's row follows from its frame alone (keys of the symbol, address, object,
 * line, block or source file; no filter; no row per process): a frame falls in the same row
 * in every sample */
bool hist__keyed_by_frame(const struct hist *h);
/* Without adding s: the row s goes to (made from s if new, its amounts s's), -ENOENT when
 * the filter refuses s, -ENOMEM. For a caller that keeps each sample's row and sums the rows
 * itself (top, each refresh, with hist__row_start and then its own sums) */
s64 hist__find_row(struct hist *h, const struct hist_sample *s);
/* row as hist__add_row makes it from s, its first sample (its id kept) */
void hist__row_start(struct hist_row *row, const struct hist_sample *s);
/* a profile's sample as hist__add takes it, resolved by sy (ip as given) */
void hist__sample(struct hist_sample *s, const struct profile *p, const struct profile_sample *ps,
		  struct symbolizer *sy);
/* the same with the sample's thread and CPU: the thread's name becomes its comm */
void hist__sample_keyed(struct hist_sample *s, const struct profile *p,
			const struct profile_sample *ps, const struct profile_sample_key *k,
			struct symbolizer *sy);
/* hist__sample_keyed's fields of the sample alone, its symbol not resolved (r zeroed but
 * for r.comm): one context for the frames of a stack */
void hist__sample_context(struct hist_sample *s, const struct profile *p,
			  const struct profile_sample *ps, const struct profile_sample_key *k,
			  struct symbolizer *sy);
/* ctx's sample at a frame resolved as r (symbolizer__resolve's result): what
 * hist__sample_keyed gives for the frame's address */
void hist__sample_frame(struct hist_sample *s, const struct hist_sample *ctx,
			const struct sym_result *r);
/* resolve and add every sample of p; 0, or -ENOMEM after saying so */
int hist__add_profile(struct hist *h, const struct profile *p, struct symbolizer *sy);
/* block rows: their executions estimated from the profile's branch stacks; 0, or -ENOMEM
 * after saying so */
int hist__add_lbr(struct hist *h, const struct profile *p, struct symbolizer *sy);
/* most samples first; ties in key order, so output is stable */
void hist__sort(struct hist *h);
/* in another order (top's): cmp as for qsort_r, on two struct hist_row, with arg */
void hist__sort_by(struct hist *h, int (*cmp)(const void *, const void *, void *), void *arg);

/* Wilson score interval for count of total at 95%: the half-width, as a fraction */
double hist__ci95(u64 count, u64 total);
/* a row too small to rank: its share is uncertain by half of itself or more */
bool hist__low_confidence(u64 count, u64 total);

/* limit 0: all rows; fmt text, json or csv (output.h) */
void hist__print(const struct hist *h, const struct profile *p, enum output_format fmt,
		 size_t limit, FILE *out);

#endif /* HSBPF_HIST_H */
