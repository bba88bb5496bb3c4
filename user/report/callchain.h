/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Call stacks as report shows them: each stack sample of a profile resolved once to its
 * functions (kernel frames, then user frames, the sampled one first), how its stacks ended,
 * folded stacks, and the call-graph trees printed under report's rows. */
#ifndef HSBPF_CALLCHAIN_H
#define HSBPF_CALLCHAIN_H

#include <stdio.h>
#include "hsbpf.h"
#include "profile/profile.h"
#include "symbols/symbolizer.h"

struct hist;

/* how the profile's user stacks ended, in samples: by HSBPF_STACK_*, and lost ones */
struct callchain_ends {
	u64 samples;			/* samples with a stack */
	u64 by_end[HSBPF_STACK_NR];
	u64 lost;			/* the kernel's stack map was full: no frames */
	u64 fp_frames, frames;		/* user frames, and how many by frame pointer */
};
void callchain__ends(const struct profile *p, struct callchain_ends *e);
/* "complete 99.6%; truncated: no unwind info 0.3%, depth 0.1%" and the drops, as comment
 * lines (prefix "# ") */
void callchain__print_ends(const struct profile *p, const char *prefix, FILE *out);
const char *callchain__end_name(u32 end);

/* one frame: the function (or [unknown] with its object) and the address */
struct callchain_frame {
	const char *sym;
	const char *dso;
	u64 ip;			/* as sampled: the pc, then return addresses */
	u64 vaddr;		/* user code: the (looked-up) address in dso's ELF terms */
	u32 func;		/* the same id for the same (sym, dso, kernel) */
	u32 row;		/* with callchain__attach: the id of the hist row this frame falls in */
	u32 res;		/* its address resolved: callchain.res[res] */
	u32 src;		/* the frame it is a copy of (frames of one address are resolved
				 * once), itself for the first */
	bool kernel;
	bool return_address;	/* looked up at ip - 1: the call, not what follows it */
	bool inlined;		/* a function inlined at ip, in the frame that follows */
};

struct callchain_stack {
	u32 sample;		/* in profile.stack_samples (in profile.samples: callchain__new_flat) */
	u32 first, nr;		/* frames, the sampled one first: kernel's, then user's */
	u32 self;		/* the frame whose own time the sample is (report's flat row):
				 * the sampled one (0), or the innermost Python frame when the
				 * leaf is the evaluation loop (user/report/pyself.h) */
	u64 count;
	u64 weight;		/* in the profile's unit (meta.unit) */
	u32 pid;		/* the sample's process image and cgroup */
	u64 exec_ns;
	u64 map_ns;		/* its mapping generation (profile_sample.map_ns) */
	u64 cgroup_id;
	u32 flags;		/* the sample's HSBPF_KEY_* (off-CPU time and its state) */
	/* record --wakers: the block's waker, its frames (kernel's then user's, the wake-up
	 * first) after the stack's own in frames, and its process image */
	bool woken;
	u32 waker_first, waker_nr;
	u32 waker_pid;
	u64 waker_exec_ns;
};

struct frame_memo;

struct callchain {
	const struct profile *p;
	struct callchain_frame *frames;
	size_t nr_frames, cap_frames;
	/* each distinct frame's address as the symbolizer resolved it (r.comm: its first
	 * process's), once */
	struct sym_result *res;
	size_t nr_res, cap_res;
	struct frame_memo *memo;	/* while frames are added: the frames of each address */
	bool stable_names;		/* callchain__new_live's */
	u32 nr_src;		/* frame.src is below this */
	struct callchain_stack *stacks;
	size_t nr_stacks;
	u64 total;		/* samples over all stacks */
	u32 nr_funcs;		/* functions: frame.func is below this */
	/* the stacks each hist row's frames are in, made by the first callchain__print_tree
	 * (after callchain__attach): row id r's are row_stacks[row_first[r], row_first[r + 1]) */
	u32 *row_first, *row_stacks;
	/* ... and for each, the row's frame in it nearest the leaf and nearest the root */
	u32 *row_leaf, *row_root;
	u32 *frame_funcs;	/* frames[i].func, packed for the trees' walks */
	u32 nr_row_ids;
	/* a frame of each function (and the wakers' separator), for names: made once by the
	 * first callchain__print_tree */
	const struct callchain_frame **func_frames;
};

/* resolve every stack sample of p; NULL with errno set (ENOMEM) */
struct callchain *callchain__new(const struct profile *p, struct symbolizer *sy);
/* the same, its frames' names copied into sy's strings: good while sy lives, as p's string
 * table grows and moves (top keeps its call graph from refresh to refresh) */
struct callchain *callchain__new_live(const struct profile *p, struct symbolizer *sy);
/* the same for a profile without stacks: one stack of one frame per flat sample (for the
 * exports; not for callchain__attach or callchain__print_json); NULL with errno set */
struct callchain *callchain__new_flat(const struct profile *p, struct symbolizer *sy);
void callchain__free(struct callchain *cc);

/* a waker's name in folded stacks and labels: its command, "[irq]" for an interrupt's */
const char *callchain__waker_comm(const struct callchain_stack *st, struct symbolizer *sy);
/* the waker's frames, the wake-up first, as folded names joined by ';' (malloc'd), or NULL
 * with errno set */
char *callchain__waker_folded(const struct callchain *cc, const struct callchain_stack *st);

/* Brendan Gregg's folded stacks: "comm;root;...;leaf count", one line per distinct stack,
 * kernel frames suffixed _[k], unknown ones "[unknown] (object)"; a block with a waker
 * (record --wakers) as bcc's offwaketime -f: "comm;root;...;leaf;--;waker's wake-up;...;
 * waker's root;waker's comm" */
int callchain__print_folded(const struct callchain *cc, FILE *out);

/* Report's call graphs. Each frame is put in the hist row its keys give (rows made here
 * when the stack's frames are not in the flat profile); with children, every row gets
 * the samples of the stacks it is in, once per stack (hist_row.children). Before
 * hist__sort, which keeps rows' ids. */
int callchain__attach(struct callchain *cc, struct hist *h, struct symbolizer *sy, bool children);

struct json_writer;
/* "stacks": each stack sample with its frames (symbol, object, address, kernel), the
 * sampled one first; and "stack_ends": how the user stacks ended */
void callchain__print_json(const struct callchain *cc, struct symbolizer *sy, struct json_writer *w);

enum callchain_order {
	CALLCHAIN_CALLEE,	/* from the row's function up to its callers (perf's default without children) */
	CALLCHAIN_CALLER,	/* toward the callees: with children, from the row's function down to the
				 * sampled leaves; without, from the outermost caller down to the row */
};
/* how a row's stacks are printed under it (perf report -g's print type) */
enum callchain_style {
	CALLCHAIN_GRAPH,	/* the tree, shares of all samples */
	CALLCHAIN_FRACTAL,	/* the tree, each branch's share of its parent's */
	CALLCHAIN_FLAT,		/* each distinct chain, a share then one frame a line */
	CALLCHAIN_FOLDED,	/* each distinct chain on one line: "share a;b;c" */
};
/* what perf report's -g (--call-graph) says, each part -1 when not said */
struct callchain_param {
	int graph;		/* 0: none (no graphs), 1: graphs */
	int style;		/* enum callchain_style */
	int order;		/* enum callchain_order */
	double threshold;	/* branches under this share (%) are not shown */
};
/* "graph,0.5,caller,function,percent", "none", "callee", ...: perf's
 * print_type,threshold[,print_limit],order,sort_key,value in any order, print_limit
 * ignored, the sort key function and the value percent only (hsbpf's). 0, or -EINVAL after
 * saying what is wrong */
int callchain__parse_param(const char *arg, struct callchain_param *cp);

struct callchain_print_opts {
	enum callchain_order order;
	enum callchain_style style;
	bool children;
	double percent_limit;	/* branches under this share of all samples are not shown */
	int indent;		/* columns before the graph */
	/* report --wakers: a woken block's chain goes on, at its end, with a "--" and its
	 * waker's frames, the wake-up first (offwaketime's layout) */
	bool wakers;
};
/* the stacks under hist row `row` in o's style: perf's graph layout (shares of all samples,
 * or of the parent's for fractal), its flat chains or its folded lines. cc is not changed but
 * for its index of each row's stacks, made on the first call (the rows are attached by then) */
void callchain__print_tree(struct callchain *cc, const struct hist *h, size_t row,
			   const struct callchain_print_opts *o, FILE *out);

/* top's view of one function: its callers and its callees, each with the samples of the
 * stacks where it calls (or is called by) the function, once per stack; most first */
struct callchain_link {
	const char *sym, *dso;
	bool kernel;
	u64 count;
};
struct callchain_links {
	u64 total;		/* samples of the stacks the function is in */
	struct callchain_link *callers, *callees;
	size_t nr_callers, nr_callees;
};
/* dso NULL: the function of that name in any object; 0 or -ENOMEM */
int callchain__links(const struct callchain *cc, const char *sym, const char *dso,
		     struct callchain_links *out);
void callchain__links_free(struct callchain_links *l);

#endif /* HSBPF_CALLCHAIN_H */
