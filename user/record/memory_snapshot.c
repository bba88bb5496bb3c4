// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* record --memory --snapshot-every: the snapshot files and the final profile as views of the one
 * profile the recording collected, every sample keyed by its interval (memory_snapshot.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "record/memory.h"
#include "record/memory_snapshot.h"

static const struct profile_sample_key no_key;

/* a sample of flags with key k is in view snap */
static bool in_view(u32 flags, const struct profile_sample_key *k, u32 snap, u32 last)
{
	if (!(flags & HSBPF_KEY_MEMORY))
		return !snap;	/* not an allocation: the final profile's */
	if (memory__is_inuse(flags))
		return k->snap == (snap ? snap : last);
	return !snap || k->snap == snap;
}

int memory_snapshot__view(struct profile *p, u32 snap, u32 last, struct memory_view_saved *saved)
{
	size_t ns = 0, nss = 0;
	bool keys = p->nr_sample_keys, stack_keys = p->nr_stack_sample_keys;
	struct profile_sample *s = malloc((p->nr_samples + 1) * sizeof(*s));
	struct profile_sample_key *sk = malloc((p->nr_samples + 1) * sizeof(*sk));
	struct profile_stack_sample *ss = malloc((p->nr_stack_samples + 1) * sizeof(*ss));
	struct profile_sample_key *ssk = malloc((p->nr_stack_samples + 1) * sizeof(*ssk));

	if (!s || !sk || !ss || !ssk) {
		free(s);
		free(sk);
		free(ss);
		free(ssk);
		return -ENOMEM;
	}
	for (size_t i = 0; i < p->nr_samples; i++) {
		struct profile_sample_key k = keys ? p->sample_keys[i] : no_key;

		if (!in_view(p->samples[i].flags, &k, snap, last))
			continue;
		k.snap = 0;
		s[ns] = p->samples[i];
		sk[ns++] = k;
	}
	for (size_t i = 0; i < p->nr_stack_samples; i++) {
		struct profile_sample_key k = stack_keys ? p->stack_sample_keys[i] : no_key;

		if (!in_view(p->stack_samples[i].flags, &k, snap, last))
			continue;
		k.snap = 0;
		ss[nss] = p->stack_samples[i];
		ssk[nss++] = k;
	}
	*saved = (struct memory_view_saved){
		.samples = p->samples, .sample_keys = p->sample_keys, .nr_samples = p->nr_samples,
		.cap_samples = p->cap_samples, .nr_sample_keys = p->nr_sample_keys,
		.cap_sample_keys = p->cap_sample_keys, .stack_samples = p->stack_samples,
		.stack_sample_keys = p->stack_sample_keys, .nr_stack_samples = p->nr_stack_samples,
		.cap_stack_samples = p->cap_stack_samples,
		.nr_stack_sample_keys = p->nr_stack_sample_keys,
		.cap_stack_sample_keys = p->cap_stack_sample_keys,
	};
	p->samples = s;
	p->nr_samples = p->cap_samples = ns;
	p->sample_keys = sk;
	p->nr_sample_keys = p->cap_sample_keys = keys ? ns : 0;
	p->stack_samples = ss;
	p->nr_stack_samples = p->cap_stack_samples = nss;
	p->stack_sample_keys = ssk;
	p->nr_stack_sample_keys = p->cap_stack_sample_keys = stack_keys ? nss : 0;
	return 0;
}

void memory_snapshot__restore(struct profile *p, struct memory_view_saved *saved)
{
	free(p->samples);
	free(p->sample_keys);
	free(p->stack_samples);
	free(p->stack_sample_keys);
	p->samples = saved->samples;
	p->sample_keys = saved->sample_keys;
	p->nr_samples = saved->nr_samples;
	p->cap_samples = saved->cap_samples;
	p->nr_sample_keys = saved->nr_sample_keys;
	p->cap_sample_keys = saved->cap_sample_keys;
	p->stack_samples = saved->stack_samples;
	p->stack_sample_keys = saved->stack_sample_keys;
	p->nr_stack_samples = saved->nr_stack_samples;
	p->cap_stack_samples = saved->cap_stack_samples;
	p->nr_stack_sample_keys = saved->nr_stack_sample_keys;
	p->cap_stack_sample_keys = saved->cap_stack_sample_keys;
}
