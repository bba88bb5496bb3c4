/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* A profile's stacks as `perf script` prints them, for the tools that read perf script's text
 * (FlameGraph's stackcollapse-perf.pl, speedscope): one block per
 * sample, a header line "COMM PID/TID TIME: PERIOD EVENT: ", one line per frame
 * "\tADDRESS SYM+0xOFF (DSO)", the sampled one first, then an empty line.
 *
 * The kernel aggregates samples, so there are no per-sample times: each thread's blocks are
 * made one mean period apart from the recording's start (in the order of their time buckets
 * when those were recorded), so that tools weighing a sample by the time to the next one
 * weigh each block as one period. */
#ifndef HSBPF_SCRIPT_OUT_H
#define HSBPF_SCRIPT_OUT_H

#include <stdio.h>
#include "report/callchain.h"
#include "symbols/symbolizer.h"

struct script_opts {
	/* one block per distinct stack with count x period in its period field, instead of the
	 * stack repeated count times (tools that count blocks read only the repeated form) */
	bool aggregate;
};

/* the time step between a thread's blocks, in ns: the mean period for clock events, else
 * the recording's duration over its samples; at least 1 us (the time field's resolution) */
u64 script_out__step(const struct profile *p);
/* every stack of cc (callchain__new or callchain__new_flat of cc->p, resolved by sy);
 * 0, -ENOMEM, or -EIO when out fails */
int script_out__print(const struct callchain *cc, struct symbolizer *sy,
		      const struct script_opts *o, FILE *out);

#endif /* HSBPF_SCRIPT_OUT_H */
