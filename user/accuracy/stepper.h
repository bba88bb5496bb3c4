/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The ptrace single-stepper: runs a command one instruction at a time from its exec, keeps
 * each thread's exact call stack from the instructions it steps, and every N instructions
 * takes a sample: the registers, the exact stack, and the stacks the kernel's unwinder
 * (user/unwind/unwind_walk.h) finds from those registers in DWARF and in frame-pointer mode. */
#ifndef HSBPF_STEPPER_H
#define HSBPF_STEPPER_H

#include "profile/profile.h"
#include "unwind/unwind_walk.h"

struct stepper_opts {
	u64 period;		/* instructions between samples (all threads together) */
	bool random;		/* each period drawn uniformly from [1, 2 period - 1] */
	u64 seed;		/* of the random periods */
	u64 max_insns;		/* 0: no limit; else the program is killed after that many */
	/* run freely up to the program's main and step from there: the frames above main are
	 * taken from the DWARF unwinder at main's first instruction (where every function's rule
	 * is CFA = rsp + 8), which must reach the outermost frame */
	bool from_main;
};

struct stepper_sample {
	u32 pid, tid;
	u64 seq;		/* 0, 1, ...: the sample's number */
	u64 insns;		/* instructions stepped before it (all threads) */
	const struct unwind_walk_regs *regs;
	const u64 *exact;	/* the pc, then the return addresses, innermost first */
	u32 nr_exact;
	bool exact_cut;		/* deeper than HSBPF_MAX_FRAMES: its first frames only */
	const u64 *dwarf, *fp;
	struct unwind_walk_result dwarf_res, fp_res;
};

/* called for each sample; a non-zero return stops the run with that error */
typedef int (*stepper_sample_fn)(void *ctx, const struct stepper_sample *s);
/* called when the set of executable file mappings changed (the exec, a dlopen) */
typedef int (*stepper_maps_fn)(void *ctx, u32 pid, u64 start, u64 len, u64 pgoff, const char *path);

struct stepper_result {
	u64 insns;		/* instructions stepped */
	u64 samples;
	u64 threads;		/* threads seen, the first included */
	u64 signals;		/* signal handlers entered */
	u64 objects, objects_no_table;	/* objects mapped, of them without an unwind table */
	int status;		/* the program's wait status */
	bool killed;		/* stopped at max_insns */
};

/* run argv under single-stepping; 0 (whatever the program's own exit), or -errno after a
 * clear message (the program could not be started, ptrace refused, a callback failed) */
int stepper__run(char *const argv[], const struct stepper_opts *o, stepper_sample_fn on_sample,
		 stepper_maps_fn on_map, void *ctx, struct stepper_result *res);

/* the same, with each sample written as a stack sample of three profiles: the exact stack,
 * DWARF's and fp's, under the same keys (the thread, and the sample's number as its time) */
int stepper__profiles(char *const argv[], const struct stepper_opts *o, struct profile *exact,
		      struct profile *dwarf, struct profile *fp, struct stepper_result *res);

#endif
