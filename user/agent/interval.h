/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The agent's intervals: at each interval's end the live session's kernel maps are read into
 * its profile as what that interval sampled, and the profile encoded as a gzipped pprof.
 * Flat samples come from the sampler's double-buffered interval maps (top's drain: the
 * kernel counts into the other map while this one is read, nothing is lost); stacks are
 * counted in one map for the whole session, so each interval is the difference from the
 * previous read of its cumulative counts, which loses nothing either. */
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
/* the start of the interval taken, wall-clock ns since the epoch */
u64 interval_reader__start_realtime(const struct interval_reader *r);
void interval_reader__free(struct interval_reader *r);

#endif /* HSBPF_AGENT_INTERVAL_H */
