/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The agent's intervals: at each interval's end the live session's kernel maps are read into
 * its profile as what that interval sampled, and the profile encoded as a gzipped pprof.
 * Flat samples, stack samples and the stacks themselves are counted by the kernel into two
 * sets of maps in turn (double buffering: the kernel switches to the other set at an
 * interval's end, the agent drains and empties the idle one once no handler still counts
 * into it), so nothing sampled during the drain is lost and the maps hold one interval. */
#ifndef HSBPF_AGENT_INTERVAL_H
#define HSBPF_AGENT_INTERVAL_H

#include "record/session.h"

struct interval_reader;

/* for a live session (session_opts.live), with call stacks when it takes them; NULL with
 * errno set, after saying why */
struct interval_reader *interval_reader__new(struct session *s, bool stacks);
/* read what was sampled since the last call (or the start) into the session's profile,
 * replacing the previous interval's samples; its metadata says when the interval started
 * and how long it was. *nr: the interval's samples (those with stacks with -g). 0 or -errno
 * (said) */
int interval_reader__take(struct interval_reader *r, u64 *nr);
/* the interval taken, as a gzipped pprof in a malloc'd buffer; 0 or -errno (said) */
int interval_reader__pprof(struct interval_reader *r, u8 **buf, size_t *len);
/* how long the last interval_reader__pprof took to name the stacks (the symbolizer, opening
 * the objects it had not seen), to encode them and to give the freed memory back */
void interval_reader__times(const struct interval_reader *r, u64 *symbolize_ns, u64 *encode_ns,
			    u64 *trim_ns);
/* the start of the interval taken, wall-clock ns since the epoch */
u64 interval_reader__start_realtime(const struct interval_reader *r);
/* the entries in the kernel's stack maps now (both generations) */
u64 interval_reader__occupancy(struct interval_reader *r);
void interval_reader__free(struct interval_reader *r);

#endif /* HSBPF_AGENT_INTERVAL_H */
