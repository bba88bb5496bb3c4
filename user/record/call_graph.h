/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The call-graph modes (-g, --call-graph MODE[,DEPTH]) as one table: per mode its name (on the
 * command line and in a profile's meta.call_graph), the BPF programs' constant, and what the
 * session, the sampler and the readers of its stacks do for it. Options carry the mode as its
 * BPF constant (HSBPF_CALL_GRAPH_*, 0 for none); profiles carry its name. */
#ifndef HSBPF_CALL_GRAPH_H
#define HSBPF_CALL_GRAPH_H

#include "lib/util.h"

struct call_graph {
	const char *name;
	u32 bpf_mode;		/* HSBPF_CALL_GRAPH_*: profile.bpf.c's call_graph tunable */
	u32 max_frames;		/* user frames kept when no DEPTH is given */
	/* the kernel unwinds from tables user space builds (user/record/unwind.c): their maps are
	 * sized, mappings are followed from the sideband as soon as they are made, and forks
	 * (a child unwinds through its parent's mappings until it has its own); frames by frame
	 * pointer are a fallback, worth saying */
	bool unwind_tables;
	/* a recording sends the stacks the kernel cannot unwind yet to user space, as copies */
	bool late_unwind;
	/* the stacks come from the PMU's LBR in call-stack mode: a hardware event, not with -b */
	bool lbr_call_stack;
	/* the user frames after the first are return addresses: looked up at ip - 1, the call */
	bool return_addresses;
};

/* -g's mode */
#define CALL_GRAPH_DEFAULT "dwarf"

/* the mode of that name, NULL if there is none: "" (no call graphs, or an imported profile)
 * and "exact" (the accuracy harness's truth) are no mode */
const struct call_graph *call_graph__find(const char *name);
/* the mode of a BPF constant, NULL for HSBPF_CALL_GRAPH_NONE (and an unknown one) */
const struct call_graph *call_graph__get(u32 bpf_mode);
/* the i-th mode of the table, NULL past its end */
const struct call_graph *call_graph__at(size_t i);
/* perf's --call-graph dwarf,SIZE in bytes of stack: SIZE / this user frames (perf's default
 * 8192 bytes is hsbpf's default 256 frames) */
#define CALL_GRAPH_FRAME_BYTES 32

/* "dwarf", "fp,64", ...: 0, or -EINVAL after saying what is wrong; *max_frames is 0 without
 * a DEPTH. DEPTH up to HSBPF_MAX_FRAMES is frames; with dwarf, a larger multiple of 8 up
 * to 65528 is perf's bytes of stack (CALL_GRAPH_FRAME_BYTES a frame) */
int call_graph__parse(const char *arg, const struct call_graph **cg, u32 *max_frames);
/* the user frames a recording keeps: DEPTH if given, else the mode's; 0 without a mode */
u32 call_graph__max_frames(const struct call_graph *cg, u32 max_frames);

#endif /* HSBPF_CALL_GRAPH_H */
