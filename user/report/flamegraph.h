/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Flame graphs: a profile's stacks summed into a tree of frames (root, process, outermost
 * caller ... sampled function), the frames too narrow to see merged, and the tree written
 * as one self-contained interactive HTML page or an SVG; two profiles in one tree make a
 * differential flame graph whose frames are coloured only where the change is significant. */
#ifndef HSBPF_FLAMEGRAPH_H
#define HSBPF_FLAMEGRAPH_H

#include <stdio.h>
#include "profile/profile.h"
#include "report/profile_diff.h"
#include "symbols/symbolizer.h"

enum flame_kind {
	FLAME_ROOT,
	FLAME_USER,
	FLAME_KERNEL,
	FLAME_JIT,		/* code of no file: anonymous or memfd mappings, perf maps */
	FLAME_INLINED,		/* a function inlined into its caller (none yet: the symbolizer
				 * gives the outermost function of an address) */
	FLAME_PROCESS,		/* the command of the stacks above it */
	FLAME_OBJECT,		/* without stacks: the object file of the functions above it */
	FLAME_MERGED,		/* frames too narrow to draw, summed */
	FLAME_OFFCPU,		/* a frame of an off-CPU stack (time blocked): drawn apart from the
				 * same code on the CPU, in blues */
	FLAME_PYTHON,		/* a Python function (docs/python.md), in golds */
	FLAME_NR_KINDS,
};

struct flame_node {
	u32 name, dso;		/* in the tree's strings; dso 0 is none */
	u32 parent;		/* UINT32_MAX for the root */
	u32 first_child, next;	/* index + 1; 0 for none */
	u32 depth;
	u32 merged;		/* a merged frame: how many frames it stands for */
	u8 kind;
	u64 count[2];		/* samples of the stacks through this frame: [0] the profile's
				 * (BASE in a diff), [1] NEW's */
	/* a diff's, after flame__diff: the change (of rate or share) with its 95% interval, the adjusted
	 * p-value, and the sign of a significant change (0: not significant) */
	float delta, lo, hi, q;
	signed char change;
};

struct flame_tree {
	struct flame_node *nodes;	/* nodes[0] is the root */
	size_t nr, cap;
	char **strs;			/* strs[0] is "" */
	size_t nr_strs, cap_strs;
	struct hashidx str_idx, node_idx;
	bool diff;
	struct diff_basis basis;	/* a diff's question, after flame__diff */
	u32 max_depth;
	u64 merged_frames;		/* frames merged away by flame__merge_narrow */
	u64 merged_samples[2];		/* ... and the samples of the merged frames */
	u64 lost_stacks[2];		/* samples without frames, drawn as [no stack]; per side */
	bool time;			/* counts are microseconds of time (off-CPU profiles) */
};

struct flame_frame {
	const char *name, *dso;
	enum flame_kind kind;
};

/* an empty tree (diff: of two profiles); NULL with errno set */
struct flame_tree *flame__new(bool diff);
void flame__free(struct flame_tree *t);
/* add count samples of one stack, root side first (side 1: NEW's); 0 or -ENOMEM */
int flame__add_stack(struct flame_tree *t, const struct flame_frame *f, u32 nr, u64 count, int side);
/* add the samples of p: its stacks when it has some, kernel then user frames under the
 * process; else its flat samples as one-frame stacks under their object. 0 or -ENOMEM after
 * saying so. An off-CPU stack's frames are FLAME_OFFCPU (the caller weighs such a profile in
 * time, as report does: offcpu__count_time, and sets t->time) */
int flame__add_profile(struct flame_tree *t, const struct profile *p, struct symbolizer *sy, int side);
/* what a frame is: kernel, JIT (no file behind it) or user code */
enum flame_kind flame__kind(const char *dso, bool kernel);
const char *flame__kind_name(enum flame_kind k);
/* test every frame's change between the sides (of rate or share, as basis says: the
 * comparison hsbpf diff makes), corrected for their number */
int flame__diff(struct flame_tree *t, const struct diff_basis *basis);
/* the frames narrower than min_share of the drawn side's samples: summed, per parent, into
 * one "[N merged]" frame; the tree is rebuilt with children in name order. 0 or -ENOMEM */
int flame__merge_narrow(struct flame_tree *t, double min_share);
/* the share a frame must have to be drawn: min_px of width_px */
#define FLAME_WIDTH_PX 1200
#define FLAME_MIN_PX 0.1

struct flame_opts {
	const char *title;
	const char *subtitle;	/* the profiles, the event */
	bool inverted;		/* an icicle: root on top */
};
int flame__write_html(const struct flame_tree *t, const struct flame_opts *o, FILE *out);
int flame__write_svg(const struct flame_tree *t, const struct flame_opts *o, FILE *out);

#endif /* HSBPF_FLAMEGRAPH_H */
