/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* record --memory --snapshot-every: one recording's profile holds every interval's sampled
 * allocations and every snapshot's live set, each sample keyed by its interval
 * (profile_sample_key.snap, bpf/memory.bpf.h); these views of it are the files written, the
 * snapshots FILE.1, FILE.2... and the final FILE (docs/memory.md). */
#ifndef HSBPF_MEMORY_SNAPSHOT_H
#define HSBPF_MEMORY_SNAPSHOT_H

#include "profile/profile.h"

/* a profile's samples put aside while it shows a view */
struct memory_view_saved {
	struct profile_sample *samples;
	struct profile_sample_key *sample_keys;
	size_t nr_samples, cap_samples, nr_sample_keys, cap_sample_keys;
	struct profile_stack_sample *stack_samples;
	struct profile_sample_key *stack_sample_keys;
	size_t nr_stack_samples, cap_stack_samples, nr_stack_sample_keys, cap_stack_sample_keys;
};

/* p shows one view (of a recording of allocations: no off-CPU wakers to keep in step) until memory_snapshot__restore: snap N (1...), interval N's allocations
 * and the live set at its end; snap 0, the final profile: every interval's allocations and
 * the live set at the end (the last interval's, last). The views' keys have snap 0, as a
 * recording without snapshots. 0, or -ENOMEM (p unchanged) */
int memory_snapshot__view(struct profile *p, u32 snap, u32 last, struct memory_view_saved *saved);
/* p's own samples back */
void memory_snapshot__restore(struct profile *p, struct memory_view_saved *saved);

#endif /* HSBPF_MEMORY_SNAPSHOT_H */
