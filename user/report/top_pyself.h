/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* top's Self of Python code (docs/python.md "Self"): the kernel's flat histogram of each
 * interval keys a sample by its native pc, which for pure Python code is CPython's evaluation
 * loop; the stack samples say which Python function ran. This module follows, from one
 * refresh to the next, the stack samples whose own time is a Python frame's (no kernel
 * frames, a Python frame first in the user stack, as report's user/report/pyself.h): the
 * kernel's stack-sample map holds totals since the start, and each interval's growth is what
 * top moves from the loop's row to the Python function's (user/report/top.c). */
#ifndef HSBPF_TOP_PYSELF_H
#define HSBPF_TOP_PYSELF_H

#include <stddef.h>
#include "lib/util.h"

struct sampler;

/* a stack sample whose own time is a Python frame's */
struct top_pyleaf {
	/* the group a flat sample of the evaluation loop must share to be the same samples
	 * (TOP_PYLEAF_GROUP bytes, compared as bytes) */
	u32 pid, flags;		/* flags without HSBPF_KEY_KERNEL */
	u64 cgroup_id, exec_ns;
	u32 tid, pad;		/* pad 0 */
	u64 map_ns;
	u64 stack;		/* the user stack's hash: one leaf per stack sample */
	u64 frame;		/* the stack's first frame, a Python frame */
	u64 count;		/* samples: since the start (top_pyself__add), or an interval's growth */
};
#define TOP_PYLEAF_GROUP offsetof(struct top_pyleaf, map_ns)

struct top_pyself;

/* NULL with errno ENOMEM */
struct top_pyself *top_pyself__new(void);
void top_pyself__free(struct top_pyself *y);
/* a new interval: the last one's growth forgotten */
void top_pyself__begin(struct top_pyself *y);
/* a leaf with its count since the start: its growth since it was last added kept (all of it
 * the first time, or when the count went down: the kernel's entry was made again); 0 or
 * -ENOMEM */
int top_pyself__add(struct top_pyself *y, const struct top_pyleaf *l);
/* the kernel's stack samples so far, each whose own time is a Python frame's added (a stack's
 * first frame read once per stack hash): 0 or -errno (said) */
int top_pyself__read(struct top_pyself *y, struct sampler *s);
/* the interval's growth, leaves with a count, sorted by group (then by stack) */
const struct top_pyleaf *top_pyself__growth(struct top_pyself *y, size_t *nr);
/* of growth leaf l (top_pyself__growth's), n samples were found in the interval's flat
 * samples: the rest is grown again at the next add, at up to TOP_PYSELF_TRIES refreshes in a
 * row (the stacks are read a moment after the flat samples: their last samples are the next
 * interval's flat ones, or a later one's when top waits for a CPU) */
#define TOP_PYSELF_TRIES 3
void top_pyself__taken(struct top_pyself *y, const struct top_pyleaf *l, u64 n);

#endif /* HSBPF_TOP_PYSELF_H */
