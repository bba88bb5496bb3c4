/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The live model behind `hsbpf top`: each interval it takes the kernel's sample map of that
 * interval (in batches; its slots are the deltas), decays or accumulates them per key,
 * symbolizes new slots once (cached), and groups them into the rows report shows too
 * (user/report/hist.h), by one key (functions, IPs, basic blocks, processes or containers), zoomed
 * and filtered: each key is grouped once per view, its row's count updated at each refresh. It also lays the rows out as text lines of a given width, dropping columns
 * that do not fit, which the ncurses screen and --stdio both print.
 * The kernel side counts each interval into a map of its own (bpf/samples.bpf.h), so an
 * interval costs what it sampled, however many keys came before. */
#ifndef HSBPF_TOP_H
#define HSBPF_TOP_H

#include <stdio.h>
#include "record/memory.h"
#include "report/hist.h"

struct sampler;
struct cgroup_names;

/* the keys top groups by, in the order Tab and 1-5 go through them */
#define TOP_NR_KEYS 5
extern const enum sort_key top_keys[TOP_NR_KEYS];

enum top_order { TOP_BY_SAMPLES, TOP_BY_NAME, TOP_BY_PROCESS, TOP_BY_CONTAINER, TOP_NR_ORDERS };

/* decay mode: each interval keeps this share of what came before (a window of ~8 intervals) */
#define TOP_DECAY 0.875
/* keys followed before the faded ones are forgotten (152 bytes each) */
#define TOP_MAX_KEYS 1000000

struct top_view {
	enum sort_key key;	/* one of top_keys */
	enum top_order order;
	bool decay;		/* exponentially decayed counts instead of totals since the start */
	u32 zoom_pid;		/* 0: every process */
	u64 zoom_cgroup;	/* 0: every cgroup */
	bool zoomed_cgroup;	/* zoom_cgroup is set (cgroup id 0 is a valid "no cgroup v2") */
	char filter[64];	/* substring of a symbol, object, command or container; "" none */
	bool off_cpu;		/* top --off-cpu: counts are microseconds off the CPU, measured */
	/* top --memory: sampled allocations (docs/memory.md), in one of four views. The alloc
	 * views count what the last interval allocated, per second (decay), or since the start
	 * (accumulate); the inuse views what is live now, whatever decay says */
	bool memory;
	enum memory_view mview;
};

struct top_status {
	const char *event;
	const char *target;
	u64 freq;		/* samples per second per CPU asked for, 0 when -c */
	u64 period;
	double interval_s;	/* the last interval's length */
	double rate;		/* samples per second in the last interval */
	u64 total;		/* samples read since top started */
	u64 dropped;		/* the kernel map was full */
	u64 sideband_lost;
	u64 keys;		/* distinct (process image, IP, cgroup) keys followed */
	u64 aged_out;		/* samples of keys forgotten past TOP_MAX_KEYS (accumulate lacks them) */
	u64 slots;		/* map slots the last interval filled, of capacity (drops beyond) */
	u32 capacity;
	double cpu;		/* hsbpf's own CPU use, percent of one core, -1 unknown */
	double bpf_cpu;		/* the sample handler's, percent of one core, -1 unknown */
	bool paused, ended;
	/* top --memory (total and rate are then bytes allocated) */
	u64 alloc_period;
	double live_bytes;	/* estimated live now, of the processes still running */
	u64 mem_sampled;	/* sampled allocations of the run */
	u64 mem_sampled_interval;	/* ... of the last interval */
	u64 mem_calls;		/* allocation calls of the run */
	u64 mem_lost;		/* sampled allocations the maps could not take, calls without
				 * task storage */
	u64 exited_procs;	/* processes whose live set was dropped at their exit */
	u64 exited_allocs;	/* ... their sampled allocations live then */
};

struct top;

/* p is the session's live profile: its sideband (maps, comms, forks) grows while top runs */
struct top *top__new(struct profile *p, struct cgroup_names *cgroups);
/* C++ and Rust symbols as mangled (--no-demangle) */
void top__no_demangle(struct top *t);
void top__free(struct top *t);
/* sampled allocations at alloc_period bytes (top --memory): the interval's map holds the
 * allocations made (HSBPF_MEM_ALLOC) and each update reads the live ones (HSBPF_MEM_INUSE) */
void top__memory(struct top *t, u64 alloc_period);
/* forget faded keys past max_keys instead of TOP_MAX_KEYS */
void top__limit_keys(struct top *t, size_t max_keys);
/* take the interval's map (its slots are the interval's deltas), then decay; 0 or -errno */
int top__update(struct top *t, struct sampler *s);
/* the callers and callees of a functions-view row, from the call stacks so far (top -g):
 * -ENOENT without them */
struct callchain_links;
int top__links(struct top *t, const struct hist_row *r, struct callchain_links *out);
/* the call stacks so far, resolved (top -g): NULL with errno ENOENT without them, or ENOMEM
 * (or fn's error, see top__on_stacks). t's, good until the next call; made again only when
 * its cost allows (top.c: at most a twentieth of a core), else the last one */
struct callchain;
struct callchain *top__callchain(struct top *t);
/* how old the call stacks top__callchain gave are, in seconds, when samples came since: 0
 * when they are of the last interval */
double top__callchain_age(const struct top *t);
/* fn(ctx) runs each time the call stacks so far are in the profile, before they are resolved
 * (the session names their Python frames): 0, or -errno after saying why */
void top__on_stacks(struct top *t, int (*fn)(void *ctx), void *ctx);
/* Where a function is called from: its callers in cc's stacks as a tree from the function up
 * toward the roots, at most depth levels, each with its share of the samples of the stacks
 * the function is in; branches under min_share (0-1) of them are left out. Lines `width`
 * columns at most, after `indent` spaces. Nothing for a function in no stack; -EIO if out
 * has failed, -ENOMEM */
int top__print_callers(const struct callchain *cc, const char *sym, const char *dso, int depth,
		       double min_share, int indent, int width, FILE *out);
/* the same from a list of an interval's slots, for tests (with top__memory: the allocations
 * made, and the live set now as slots of kind HSBPF_MEM_INUSE, count objects in 1/1024ths and
 * weight bytes, as the kernel's) */
int top__update_from(struct top *t, const struct profile_sample *slots, size_t nr);
/* Self of pure Python code given to the innermost Python function, not the evaluation loop
 * (docs/python.md "Self"), from the call stacks (top -g with Python frames): each update
 * reads the stack samples so far and moves, per process image, cgroup and thread, as many of
 * the interval's samples in the loop as its stacks with a Python frame first grew to those
 * frames' keys (user/report/top_pyself.h). 0 or -ENOMEM */
int top__python_self(struct top *t, bool on);
/* top__update_from with the stacks' Python leaves so far (counts since the start), for tests */
struct top_pyleaf;
int top__update_from_stacks(struct top *t, const struct profile_sample *slots, size_t nr,
			    const struct top_pyleaf *leaves, size_t nr_leaves);
/* group, filter and sort for v; the rows stay valid until the next call. A row of several
 * processes or programs shows as "name +" or "[several]"; its container is top's label
 * ("docker 3f2a9c1d7e4b", "unit foo.service", "host", a cgroup path) */
int top__rows(struct top *t, const struct top_view *v, const struct hist_row **rows, size_t *nr,
	      double *view_total);
/* the same, only the first `limit` rows (0: all) sorted and given: *nr is then at most limit.
 * Each key is grouped once and its row's amount updated at each call, only the rows shown
 * sorted */
int top__rows_first(struct top *t, const struct top_view *v, size_t limit,
		    const struct hist_row **rows, size_t *nr, double *view_total);
struct top_status *top__status(struct top *t);
/* the pids of keys not symbolized yet (their process history must stay); *pids to free */
int top__unresolved_pids(struct top *t, u32 **pids, size_t *nr);

const char *top__order_name(enum top_order o);
/* a key of top_keys by any of its names (hist__parse_key; "comm" is shown by process): 0 or
 * -EINVAL after saying so */
int top__parse_key(const char *s, enum sort_key *k);
/* the key after k in top_keys, round */
enum sort_key top__next_key(enum sort_key k);
/* "samples", "name", "process", "container": 0 or -EINVAL after saying so */
int top__parse_order(const char *s, enum top_order *o);

/* text lines `width` columns wide at most: the header (two lines), the column titles, a row */
void top__format_header(const struct top_status *st, const struct top_view *v, double view_total,
			int width, char *line1, char *line2, size_t size);
void top__format_titles(const struct top_view *v, int width, char *buf, size_t size);
void top__format_row(const struct top_view *v, const struct hist_row *r, double view_total,
		     int width, char *buf, size_t size);
/* a whole snapshot for --stdio: header, titles and at most limit rows, the first `graphs`
 * of them (functions view, with call stacks) with their callers under them
 * (top__print_callers, 4 levels, branches of 5% and more); -EIO if out has failed (the
 * caller flushes) */
#define TOP_GRAPH_DEPTH 4
#define TOP_GRAPH_MIN_SHARE 0.05
int top__print(struct top *t, const struct top_view *v, size_t limit, size_t graphs, int width,
	       FILE *out);

#endif /* HSBPF_TOP_H */
