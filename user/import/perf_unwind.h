/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The user stacks of perf record --call-graph dwarf, unwound at import by the kernel's
 * unwinder in user space (unwind_walk) from each sample's copy of the registers and of the
 * stack, over the tables of the objects the process had mapped at the sample's time. */
#ifndef HSBPF_PERF_UNWIND_H
#define HSBPF_PERF_UNWIND_H

#include "record/perf_data.h"
#include "profile/profile.h"
#include "unwind/unwind_walk.h"

/* why a sample's user stack could not be unwound (it keeps perf's one frame) */
enum {
	PERF_UNWIND_OK = 0,
	PERF_UNWIND_NO_REGS,	/* no user registers (abi 0) */
	PERF_UNWIND_BAD_REGS,	/* not x86-64's, or without ip and sp */
	PERF_UNWIND_DAMAGED,	/* the registers or the stack copy run past the record, or its
				 * dyn_size past the copy */
	PERF_UNWIND_NR,
};

struct perf_unwind_stats {
	u64 unwound;		/* user stacks unwound */
	u64 empty_copy;		/* ... of them from an empty stack copy (the leaf frame only) */
	u64 failed[PERF_UNWIND_NR];	/* not unwound, by reason */
	u64 frames, fp_frames;
	u32 objects;		/* objects with a table */
	u32 objects_no_cfi;	/* ... without unwind information (frame pointers there) */
	u32 objects_failed;	/* ... that could not be read (frame pointers there) */
	u64 rows;
	u64 build_ns;		/* time spent building the tables */
};

struct perf_unwind;

/* p: the process history, sorted (profile__finish), recorded paths already made local */
struct perf_unwind *perf_unwind__new(const struct profile *p);
void perf_unwind__free(struct perf_unwind *u);
/* the user stack of sample s into ips (room for HSBPF_MAX_FRAMES): PERF_UNWIND_OK with res
 * filled, or why not (counted), or -ENOMEM */
int perf_unwind__sample(struct perf_unwind *u, const struct perf_sample *s, u64 *ips,
			struct unwind_walk_result *res);
const struct perf_unwind_stats *perf_unwind__stats(const struct perf_unwind *u);

#endif /* HSBPF_PERF_UNWIND_H */
