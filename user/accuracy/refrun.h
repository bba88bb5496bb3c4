/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Running a program under the reference collector (qemu-x86_64 with ref/'s plugin). */
#ifndef HSBPF_REFRUN_H
#define HSBPF_REFRUN_H

#include "truth.h"

/* run argv under the collector and build its truth; a program that crashes still yields
 * its counts (meta.status says what happened). 0, or -errno after reporting */
struct vpmu_opts {
	const char *event;	/* "insns", "branches" or "cycles"; NULL: no virtual PMU */
	u64 period;
	int mode;		/* bit 0 prime, bit 1 random */
	int lbr;		/* branch records per sample, 0..32 */
	int skid;		/* instructions between an overflow and the sampled IP */
	/* on the timing model's clock (ref/timing.h): classic, precise, precise-fix or pdir;
	 * NULL: the clockless PMU with skid (cycles need a clock) */
	const char *sampling;
	const char *timing;	/* parameter overrides, "NAME=VALUE,...", or NULL */
	struct profile *out;	/* receives the samples */
	bool edges;		/* without event: count edges too */
	bool no_cct;		/* leave the calling-context tree out */
	bool stacks;		/* each virtual PMU sample with its exact call stack */
};

/* edges: count edges too; no calling-context tree (refrun__collect_vpmu for it) */
int refrun__collect(char *const argv[], const char *plugin, bool edges, struct truth **out);
int refrun__collect_vpmu(char *const argv[], const char *plugin, const struct vpmu_opts *v,
			 struct truth **out);
/* nv (at most TRUTH_MAX_PMUS) virtual PMUs sample one run, each into its v[k].out, each as it
 * would alone (its own counter and generator; one timing model, from v[0].timing); the
 * calling-context tree unless v[0].no_cct (experiments set it on every PMU), and stacks only
 * with one PMU */
int refrun__collect_vpmus(char *const argv[], const char *plugin, const struct vpmu_opts *v,
			  size_t nv, struct truth **out);

#endif /* HSBPF_REFRUN_H */
