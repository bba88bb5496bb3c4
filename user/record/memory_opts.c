// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* record --memory against the session's other options, and what the profile's meta says of
 * it (apart from user/record/memory.c, which the sampler uses: no include cycle). */
#include <errno.h>
#include "record/memory.h"
#include "record/session.h"

int memory__settle_opts(struct session_opts *o)
{
	if (!o->alloc_period)
		return 0;
	if (o->offcpu)
		return fail(-EINVAL, "--memory and off-CPU time are recorded apart");
	if (o->branch_stack || o->call_graph == HSBPF_CALL_GRAPH_LBR)
		return fail(-EINVAL, "allocation stacks are unwound at the call: --call-graph dwarf or "
			    "fp, not the LBR");
	if (o->call_graph == HSBPF_CALL_GRAPH_NONE)
		o->call_graph = HSBPF_CALL_GRAPH_DWARF;
	return 0;
}

void memory__fill_meta(struct profile_meta *m, const struct session_opts *o)
{
	m->alloc_period = o->alloc_period;
}
