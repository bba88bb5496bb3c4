/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Per-sample correctness of unwound stacks: each sample's unwound stack against its exact one
 * (hsbpf truth --step), counted equal or by the kind of the first difference, and by where in
 * its function the sample was (definitions in docs/accuracy.md). Two layers: the kind and the
 * location from plain data (tested by hand), and the comparison of two profiles. */
#ifndef HSBPF_STACK_CHECK_H
#define HSBPF_STACK_CHECK_H

#include <stdio.h>
#include "profile/profile.h"
#include "unwind/unwind_table.h"

enum sc_kind {
	SC_EQUAL,
	SC_MISSING,		/* the unwound stack ends early or skips exact frames */
	SC_EXTRA,		/* it has a frame the exact one does not */
	SC_WRONG_CALLER,	/* otherwise */
	SC_NR_KINDS,
};

enum sc_loc {
	SC_PROLOGUE,
	SC_BODY,
	SC_EPILOGUE,
	SC_PLT,
	SC_UNKNOWN,		/* no unwind rows for the sampled pc's function */
	SC_NR_LOCS,
};

/* why an unwound stack differs: the unwind rows of the last frame it got right (the sampled
 * pc, or the call before a return address) */
enum sc_cause {
	SC_CAUSE_NO_INFO,	/* no row there: code without call-frame information */
	SC_CAUSE_LEAF_RULE,	/* a CFA rule the kernel follows in the sampled frame only */
	SC_CAUSE_OTHER,		/* a row the unwinder follows (for fp: no frame pointer kept) */
	SC_CAUSE_EH_INSTALL,	/* libgcc installing a handler's context: the walk ends there */
	SC_NR_CAUSES,
};

extern const char *const sc_kind_names[SC_NR_KINDS];
extern const char *const sc_cause_names[SC_NR_CAUSES];
extern const char *const sc_loc_names[SC_NR_LOCS];

/* the kind of got against exact (frames innermost first); *at: the first differing frame */
enum sc_kind stack_check__kind(const u64 *exact, u32 ne, const u64 *got, u32 ng, u32 *at);

/* where ELF address vaddr lies in the function [start, end) that table t's rows describe;
 * in_plt: vaddr is in .plt, .plt.sec or .plt.got; is_ret: the instruction there returns */
enum sc_loc stack_check__location(const struct unwind_table *t, u64 start, u64 end, u64 vaddr,
				  bool in_plt, bool is_ret);

struct stack_check {
	u64 compared;		/* samples in both profiles */
	u64 equal;
	u64 at_loc[SC_NR_LOCS];		/* samples per location */
	u64 n[SC_NR_KINDS][SC_NR_LOCS];	/* samples per kind and location (equal included) */
	u64 cause[SC_NR_CAUSES];	/* unequal samples by cause */
	u64 exact_cut;		/* exact stacks deeper than the unwinder's limit (compared on their
				 * first frames) */
	char mode[16];		/* the profile's call graph */
};

/* the profile's stacks against the exact profile's, sample by sample (the same keys, in the
 * same order); 0, or -errno after a clear message (no samples, no stacks, other samples) */
int stack_check__profiles(const struct profile *exact, const struct profile *got,
			  struct stack_check *out);
/* the same, printing the first show mismatches (both stacks, by address) to f */
int stack_check__profiles_show(const struct profile *exact, const struct profile *got,
			       struct stack_check *out, u32 show, FILE *f);
void stack_check__print(const struct stack_check *sc, bool json, FILE *f);

#endif
