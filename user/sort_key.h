/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The sort keys, one object each (perf's sort_entry): its names, how it groups rows (hash and
 * compare), the columns it shows and its JSON fields; and the one column model report's
 * text/CSV/JSON, top's screen and diff's table lay rows out with. A new key is an enum entry
 * and a table entry in user/sort_key.c. */
#ifndef HSBPF_SORT_KEY_H
#define HSBPF_SORT_KEY_H

#include <stdbool.h>
#include "util.h"

struct hist;
struct hist_row;
struct json_writer;
struct cells;		/* a row's columns being made (user/sort_key.c) */

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

#endif /* HSBPF_SORT_KEY_H */
