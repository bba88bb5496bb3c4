/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Off-CPU time in profiles (record --off-cpu and --wall, bpf/offcpu.bpf.h, docs/off-cpu.md):
 * the options' checks, the recording's metadata, and for report the time view, in which every
 * sample counts its time in microseconds, so that rows, call graphs and folded stacks weigh
 * time (on-CPU samples their periods, blocks the time they lasted), and the header's summary
 * by state and of what was lost. */
#ifndef HSBPF_OFFCPU_H
#define HSBPF_OFFCPU_H

#include <stdio.h>
#include "hsbpf.h"
#include "profile/profile.h"

/* the options' side only (record/sampler.h: OFFCPU_*, record/event.h): hist and its keys
 * include this header too */
struct event_spec;
struct sampler_params;

/* --min-block/--max-block US (microseconds, as bcc's offcputime -m/-M) into ns; -EINVAL after
 * saying what is wrong with it */
int offcpu__parse_us(const char *opt, const char *arg, u64 *ns);
/* --switch-sample P: a probability in (0, 1], as a decimal or as 1/N; -EINVAL after saying
 * what is wrong with it */
int offcpu__parse_sample(const char *arg, double *p);
/* the switch program's threshold for probability p (a 32-bit draw below it is followed), 0 for
 * every block (p 0 or 1) */
u32 offcpu__sample_below(double p);
/* the off-CPU options against the rest, once the event is known: -EINVAL after saying what is
 * wrong (bounds without --off-cpu or --wall, min above max, --wall with an event that is not
 * a clock, LBR); call graphs default to dwarf */
int offcpu__settle_opts(struct sampler_params *o, const struct event_spec *ev);
/* META's offcpu, min_block_ns, max_block_ns */
void offcpu__fill_meta(struct profile_meta *m, const struct sampler_params *o);

/* the profile holds off-CPU time (META offcpu "off" or "wall") */
bool offcpu__in_profile(const struct profile *p);
/* the profile holds off-CPU time only (--off-cpu): no event was sampled */
bool offcpu__only(const struct profile *p);
/* report's first header line for such a profile, in place of the event's: total_us of time */
void offcpu__print_event(const struct profile *p, u64 total_us, const char *prefix, FILE *out);
/* the profile's blocks were followed with a probability (--switch-sample), their time scaled */
bool offcpu__sampled(const struct profile *p);
/* the 95% quantile report's intervals use */
#define OFFCPU_Z95	1.959963984540054
/* a --switch-sample estimate est made of blocks followed blocks: the interval [lo, hi] at the
 * normal quantile z (OFFCPU_Z95), the score interval of the count of blocks it stands for,
 * scaled to time (est itself when every block was followed, or none) */
void offcpu__interval(const struct profile *p, u64 blocks, double est, double z, double *lo, double *hi);
/* ... its half-width, as a fraction of est (what report's CI95 column shows of a share) */
double offcpu__ci95(const struct profile *p, u64 blocks);
/* a sample's state from its flags (HSBPF_OFFCPU_*), 0 for an on-CPU sample */
u32 offcpu__state(u32 flags);
/* "S", "D", "R", "other" for HSBPF_OFFCPU_*, "on-CPU" for 0 */
const char *offcpu__state_name(u32 state);

/* the flat samples' time, in ns: on the CPU (wall) and off it, by state */
struct offcpu_totals {
	u64 on_ns;
	u64 off_ns;
	u64 blocks;
	u64 by_state[HSBPF_OFFCPU_NR];	/* [0] unused */
};
void offcpu__totals(const struct profile *p, struct offcpu_totals *t);
/* report's time view: each sample's and stack sample's count becomes its weight in
 * microseconds, rounded (a profile with off-CPU time only: its weights are ns); a sampled
 * profile's blocks are kept in p->offcpu_blocks, for the intervals. -ENOMEM, said */
int offcpu__count_time(struct profile *p);
/* the header's lines: the time by state, and what was lost or left out */
void offcpu__print_header(const struct profile *p, const char *prefix, FILE *out);

#endif /* HSBPF_OFFCPU_H */
